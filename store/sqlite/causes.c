/* sqlite_causes.c: the rows of session_causes in a SQLite file (causes.c
 * says what they hold): written in a transaction of their own that never
 * takes the room kept for ending the sessions, read by kind. */
#include <stdlib.h>

#include "sqlite_internal.h"

int tl__sqlite_write_begin(tl_store *s, size_t bytes, const char *doing) {
  if (s->readonly)
    return tl__store_fail(s, TL_EREADONLY, "%s is open read-only", s->path);
  if (!tl__sqlite_room_for(s, bytes))
    return tl__store_fail(s, TL_EFULL, "no room left for %s", doing);
  sqlite3 *db = tl__sqlite_db(s);
  int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
  return rc == SQLITE_OK ? TL_OK : tl__store_sqlfail(s, sqlite3_errcode(db), doing);
}

int tl__sqlite_write_end(tl_store *s, int err, const char *doing) {
  sqlite3 *db = tl__sqlite_db(s);
  if (!db || sqlite3_get_autocommit(db))
    return err; /* no transaction was begun */
  if (err == TL_OK && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
    err = tl__store_sqlfail(s, sqlite3_errcode(db), doing);
  if (err)
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
  return err;
}

int tl__sqlite_put_cause_row(tl_store *s, int64_t session_id, int kind, int64_t first,
                             int64_t count, const uint8_t *data, size_t len, const char *doing) {
  sqlite3_stmt *st;
  int rc = sqlite3_prepare_v2(tl__sqlite_db(s),
                              "INSERT OR REPLACE INTO session_causes (session_id, kind, "
                              "first_index, count, data) VALUES (?, ?, ?, ?, ?)",
                              -1, &st, NULL);
  if (rc != SQLITE_OK)
    return tl__store_sqlfail(s, rc, doing);
  sqlite3_bind_int64(st, 1, session_id);
  sqlite3_bind_int(st, 2, kind);
  sqlite3_bind_int64(st, 3, first);
  sqlite3_bind_int64(st, 4, count);
  sqlite3_bind_blob(st, 5, data, (int)len, SQLITE_STATIC);
  rc = sqlite3_step(st);
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? TL_OK : tl__store_sqlfail(s, rc, doing);
}

/* A file older than the table has no rows. */
int tl__sqlite_cause_rows(tl_store *s, int64_t session_id, int kind, tl__cause_row_cb fn,
                          void *ctx) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(tl__sqlite_db(s),
                         "SELECT kind, first_index, count, data FROM session_causes WHERE "
                         "session_id = ?1 AND (?2 < 0 OR kind = ?2) ORDER BY kind, first_index",
                         -1, &st, NULL) != SQLITE_OK) {
    sqlite3_finalize(st);
    return TL_OK;
  }
  sqlite3_bind_int64(st, 1, session_id);
  sqlite3_bind_int(st, 2, kind);
  int err = TL_OK;
  while (err == TL_OK && sqlite3_step(st) == SQLITE_ROW)
    err =
        fn(ctx, sqlite3_column_int(st, 0), sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
           sqlite3_column_blob(st, 3), (size_t)sqlite3_column_bytes(st, 3));
  sqlite3_finalize(st);
  return err;
}
