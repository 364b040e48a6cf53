/* summary.c: a session's summary (store/summary.c makes it) as a SQLite
 * file stores it, in session_summaries beside the session, and read back
 * for many sessions at once. */
#include <stdlib.h>

#include "sqlite_internal.h"

int tl__summary_put(tl_store *s, tl__summarizer *z, int64_t session_id) {
  const tl_summary *m;
  int err = tl__summary_compute(s, z, session_id, &m);
  return err ? err : tl__summary_write(s, session_id, m);
}

int tl__summary_write(tl_store *s, int64_t session_id, const tl_summary *m) {
  uint8_t *blob = malloc(tl__summary_bound(m));
  if (!blob)
    return tl__store_fail(s, TL_ENOMEM, "out of memory summarising a session");
  int err = tl__summary_write_blob(s, session_id, blob, tl__summary_encode(m, blob));
  free(blob);
  return err;
}

int tl__summary_write_blob(tl_store *s, int64_t session_id, const uint8_t *blob, size_t len) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(tl__sqlite_db(s),
                              "INSERT OR REPLACE INTO session_summaries (session_id, data) "
                              "VALUES (?, ?)",
                              -1, &st, NULL);
  if (rc == SQLITE_OK) {
    sqlite3_bind_int64(st, 1, session_id);
    sqlite3_bind_blob(st, 2, blob, (int)len, SQLITE_STATIC);
    rc = sqlite3_step(st);
  }
  sqlite3_finalize(st);
  return rc == SQLITE_DONE || rc == SQLITE_OK ? TL_OK
                                              : tl__store_sqlfail(s, rc, "storing a summary");
}

int tl__summary_put_ended(tl_store *s, int64_t session_id, tl__summarizer *fed) {
  tl__summarizer *z = fed ? fed : tl__summarizer_new();
  if (!z)
    return tl__store_fail(s, TL_ENOMEM, "out of memory summarising a session");
  int rc = sqlite3_exec(tl__sqlite_db(s), "SAVEPOINT summary", NULL, NULL, NULL);
  int err = TL_OK;
  if (rc != SQLITE_OK) {
    err = tl__store_sqlfail(s, rc, "storing a summary");
  } else if (fed) {
    const tl_summary *m;
    err = tl__summary_finish(s, z, session_id, &m);
    if (!err)
      err = tl__summary_write(s, session_id, m);
  } else {
    err = tl__summary_put(s, z, session_id);
  }
  if (rc == SQLITE_OK) {
    if (err)
      sqlite3_exec(tl__sqlite_db(s), "ROLLBACK TO summary", NULL, NULL, NULL);
    sqlite3_exec(tl__sqlite_db(s), "RELEASE summary", NULL, NULL, NULL);
  }
  if (!fed)
    tl__summarizer_free(z);
  return err;
}

int tl__sqlite_summary_blobs(tl_store *s, const int64_t *ids, size_t n, tl__summary_blob_cb fn,
                             void *ctx) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(tl__sqlite_db(s),
                              "SELECT s.uuid, s.sample_count, m.data FROM sessions s LEFT JOIN "
                              "session_summaries m ON m.session_id = s.id WHERE s.id = ?",
                              -1, &st, NULL);
  int err = rc == SQLITE_OK ? TL_OK : tl__store_sqlfail(s, rc, "reading summaries");
  for (size_t i = 0; i < n && !err; i++) {
    sqlite3_bind_int64(st, 1, ids[i]);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
      char buf[37];
      const char *u = tl__column_uuid(st, 0, buf);
      err = fn(ctx, i, *u ? u : "?", sqlite3_column_int64(st, 1), sqlite3_column_blob(st, 2),
               (size_t)sqlite3_column_bytes(st, 2));
    } else if (rc == SQLITE_DONE) {
      err = fn(ctx, i, "?", -1, NULL, 0);
    } else {
      err = tl__store_sqlfail(s, rc, "reading summaries");
    }
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  return err;
}
