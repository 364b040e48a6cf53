/* admin.c: keeping a long-running database in shape: deleting one session,
 * pruning old ones, and vacuuming the file. Deleting a session removes its
 * samples, tags and facts with it (ON DELETE CASCADE), and the fact sets
 * no session refers to any more; hosts stay, since they are the identity
 * other sessions and later merges refer to. */
#include <string.h>

#include "sqlite_internal.h"

static int begin(tl_store *s, const char *doing) {
  if (s->readonly)
    return tl__store_fail(s, TL_EREADONLY, "%s is open read-only", s->path);
  int rc = sqlite3_exec(tl__sqlite_db(s), "BEGIN IMMEDIATE", NULL, NULL, NULL);
  return rc == SQLITE_OK ? TL_OK : tl__store_sqlfail(s, rc, doing);
}

/* Commits, after dropping the fact sets the deleted sessions left unused. */
static int finish(tl_store *s, int err, const char *doing) {
  if (err == TL_OK) {
    int rc = sqlite3_exec(tl__sqlite_db(s),
                          "DELETE FROM fact_sets WHERE (host_id, id) NOT IN (SELECT host_id, "
                          "fact_set_id FROM sessions WHERE fact_set_id IS NOT NULL)",
                          NULL, NULL, NULL);
    if (rc == SQLITE_OK)
      rc = sqlite3_exec(tl__sqlite_db(s), "COMMIT", NULL, NULL, NULL);
    if (rc == SQLITE_OK)
      return TL_OK;
    err = tl__store_sqlfail(s, rc, doing);
  }
  sqlite3_exec(tl__sqlite_db(s), "ROLLBACK", NULL, NULL, NULL);
  return err;
}

int tl__sqlite_delete(tl_store *s, const char *uuid) {
  const char *doing = "deleting a session";
  int err = begin(s, doing);
  if (err)
    return err;
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(tl__sqlite_db(s), "SELECT id, status FROM sessions WHERE uuid = ?",
                              -1, &st, NULL);
  int64_t id = -1;
  if (rc != SQLITE_OK) {
    err = tl__store_sqlfail(s, rc, doing);
  } else {
    tl__bind_uuid(st, 1, uuid);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
      id = sqlite3_column_int64(st, 0);
      if (strcmp((const char *)sqlite3_column_text(st, 1), "running") == 0)
        err = tl__store_fail(s, TL_EINVAL,
                             "session %.36s is still running (stop its collector first)", uuid);
    } else if (rc == SQLITE_DONE) {
      err = tl__store_fail(s, TL_ENOTFOUND,
                           "no session %.36s in the database (see tlstore sessions)", uuid);
    } else {
      err = tl__store_sqlfail(s, rc, doing);
    }
    sqlite3_finalize(st);
  }
  if (err == TL_OK) {
    rc = sqlite3_prepare_v2(tl__sqlite_db(s), "DELETE FROM sessions WHERE id = ?", -1, &st, NULL);
    if (rc == SQLITE_OK) {
      sqlite3_bind_int64(st, 1, id);
      rc = sqlite3_step(st);
      sqlite3_finalize(st);
    }
    if (rc != SQLITE_DONE && rc != SQLITE_OK)
      err = tl__store_sqlfail(s, rc, doing);
  }
  return finish(s, err, doing);
}

int tl__sqlite_prune(tl_store *s, int64_t before_ns, const char *label, int64_t *sessions,
                     int64_t *samples) {
  const char *doing = "pruning sessions";
  int err = begin(s, doing);
  if (err)
    return err;
  static const char *const sql[2] = {
      "SELECT count(*), coalesce(sum(sample_count), 0) FROM sessions WHERE started_ns < ?1 "
      "AND status <> 'running' AND (?2 IS NULL OR label = ?2)",
      "DELETE FROM sessions WHERE started_ns < ?1 AND status <> 'running' "
      "AND (?2 IS NULL OR label = ?2)"};
  for (int i = 0; i < 2 && err == TL_OK; i++) {
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(tl__sqlite_db(s), sql[i], -1, &st, NULL);
    if (rc == SQLITE_OK) {
      sqlite3_bind_int64(st, 1, before_ns);
      if (label)
        sqlite3_bind_text(st, 2, label, -1, SQLITE_STATIC);
      rc = sqlite3_step(st);
      if (rc == SQLITE_ROW) {
        if (sessions)
          *sessions = sqlite3_column_int64(st, 0);
        if (samples)
          *samples = sqlite3_column_int64(st, 1);
      }
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
      err = tl__store_sqlfail(s, rc, doing);
    sqlite3_finalize(st);
  }
  return finish(s, err, doing);
}

int tl__sqlite_vacuum(tl_store *s) {
  if (s->readonly)
    return tl__store_fail(s, TL_EREADONLY, "%s is open read-only", s->path);
  /* A file from before tl used 64 KiB pages is rebuilt with them. The page
   * size of a WAL database cannot change, so the rebuild leaves WAL for its
   * duration; that needs the file to itself, else it stays as it is. */
  sqlite3_stmt *st = NULL;
  int page = 0;
  if (sqlite3_prepare_v2(tl__sqlite_db(s), "PRAGMA page_size", -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    page = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  int rc;
  if (page && page < 65536 &&
      sqlite3_exec(tl__sqlite_db(s), "PRAGMA journal_mode=DELETE", NULL, NULL, NULL) == SQLITE_OK) {
    rc = sqlite3_exec(tl__sqlite_db(s), "PRAGMA page_size=65536; VACUUM", NULL, NULL, NULL);
    int back = sqlite3_exec(tl__sqlite_db(s), "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
    if (rc == SQLITE_OK)
      rc = back;
  } else {
    rc = sqlite3_exec(tl__sqlite_db(s), "VACUUM", NULL, NULL, NULL);
  }
  if (rc == SQLITE_OK)
    rc = sqlite3_exec(tl__sqlite_db(s), "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
  return rc == SQLITE_OK ? TL_OK : tl__store_sqlfail(s, rc, "vacuuming");
}
