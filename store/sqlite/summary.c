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

static const char each_blob_sql[] =
    "SELECT s.uuid, s.sample_count, m.data FROM sessions s LEFT JOIN session_summaries m ON "
    "m.session_id = s.id WHERE s.id = ?";
static const char span_blobs_sql[] =
    "SELECT s.id, s.uuid, s.sample_count, m.data FROM sessions s LEFT JOIN session_summaries m "
    "ON m.session_id = s.id WHERE s.id BETWEEN ?1 AND ?2 ORDER BY s.id";

/* The row's session to fn as the summary of ids' place i, its uuid at
 * column `at`, its sample_count and summary after it. */
static int hand_row(sqlite3_stmt *st, int at, size_t i, tl__summary_blob_cb fn, void *ctx) {
  char buf[37];
  const char *u = tl__column_uuid(st, at, buf);
  return fn(ctx, i, *u ? u : "?", sqlite3_column_int64(st, at + 1), sqlite3_column_blob(st, at + 2),
            (size_t)sqlite3_column_bytes(st, at + 2));
}

/* ids[from..to), ascending, in one statement over their span: a session
 * not asked is passed over, an id of no session handed "?" in its turn. */
static int blobs_span(tl_store *s, sqlite3_stmt *st, const int64_t *ids, size_t from, size_t to,
                      tl__summary_blob_cb fn, void *ctx) {
  sqlite3_bind_int64(st, 1, ids[from]);
  sqlite3_bind_int64(st, 2, ids[to - 1]);
  size_t next = from;
  int err = TL_OK, rc = SQLITE_DONE;
  while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    int64_t id = sqlite3_column_int64(st, 0);
    for (; !err && next < to && ids[next] < id; next++)
      err = fn(ctx, next, "?", -1, NULL, 0);
    if (!err && next < to && ids[next] == id)
      err = hand_row(st, 1, next++, fn, ctx);
  }
  if (!err && rc != SQLITE_DONE && rc != SQLITE_ROW)
    err = tl__store_sqlfail(s, rc, "reading summaries");
  for (; !err && next < to; next++)
    err = fn(ctx, next, "?", -1, NULL, 0);
  sqlite3_reset(st);
  return err;
}

/* Sessions that ascend densely a span of ids a statement, the rest one
 * statement each: a search down two b-trees a session took SQLite 0.27 s
 * over a fleet's 288,000 summaries, against 0.06 s in spans. */
int tl__sqlite_summary_blobs(tl_store *s, const int64_t *ids, size_t n, tl__summary_blob_cb fn,
                             void *ctx) {
  /* Each statement is prepared when first needed: many callers read one
   * session a call. */
  sqlite3_stmt *each = NULL, *span = NULL;
  int err = TL_OK;
  for (size_t i = 0; i < n && !err;) {
    size_t m = tl__sqlite_dense_run(ids + i, n - i);
    sqlite3_stmt **st = m ? &span : &each;
    int rc = *st ? SQLITE_OK
                 : sqlite3_prepare_v2(tl__sqlite_db(s), m ? span_blobs_sql : each_blob_sql, -1, st,
                                      NULL);
    if (rc != SQLITE_OK) {
      err = tl__store_sqlfail(s, rc, "reading summaries");
      break;
    }
    if (m) {
      err = blobs_span(s, span, ids, i, i + m, fn, ctx);
      i += m;
      continue;
    }
    sqlite3_bind_int64(each, 1, ids[i]);
    rc = sqlite3_step(each);
    if (rc == SQLITE_ROW)
      err = hand_row(each, 0, i, fn, ctx);
    else if (rc == SQLITE_DONE)
      err = fn(ctx, i, "?", -1, NULL, 0);
    else
      err = tl__store_sqlfail(s, rc, "reading summaries");
    sqlite3_reset(each);
    i++;
  }
  sqlite3_finalize(each);
  sqlite3_finalize(span);
  return err;
}
