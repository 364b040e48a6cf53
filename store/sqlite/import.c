/* import.c: an import (store/import.c reads the input) stored in a SQLite
 * file: the new session, its encoded blocks as the rows come, its summary
 * and its end, all in a single transaction, which is rolled back when the
 * input is refused (a bad row without --skip-bad, no samples at all). */
#include <stdlib.h>
#include <string.h>

#include "sqlite_internal.h"

/* Where the samples read go: blocks of the new session. */
typedef struct {
  tl_store *s;
  sqlite3_stmt *ins;
  tl__summarizer *z; /* every sample stored, for the session's summary */
  int64_t session_id, seq, stored;
  uint8_t enc[TL_BLOCK_HEADER + TL_BLOCK_MAX * 10];
} block_out;

static int store_block(void *ctx, const int64_t *v, size_t n) {
  block_out *b = ctx;
  int64_t lo, hi;
  size_t len = tl_block_encode_as(b->s->codec, v, n, b->seq, b->enc, &lo, &hi);
  sqlite3_bind_int64(b->ins, 1, b->session_id);
  sqlite3_bind_int64(b->ins, 2, b->seq++);
  sqlite3_bind_int64(b->ins, 3, (sqlite3_int64)n);
  sqlite3_bind_int64(b->ins, 4, lo);
  sqlite3_bind_int64(b->ins, 5, hi);
  sqlite3_bind_int(b->ins, 6, b->enc[1]);
  sqlite3_bind_blob(b->ins, 7, b->enc, (int)len, SQLITE_STATIC);
  int rc = sqlite3_step(b->ins);
  sqlite3_reset(b->ins);
  if (rc != SQLITE_DONE)
    return tl__store_sqlfail(b->s, rc, "storing imported samples");
  /* The import is one transaction: a sample stored is summarised now, while
   * its block is in the cache, and all goes if the import is rolled back. */
  tl__summary_add(b->z, v, n);
  b->stored += (int64_t)n;
  return TL_OK;
}

static int exec(tl_store *s, const char *sql, const char *doing) {
  int rc = sqlite3_exec(tl__sqlite_db(s), sql, NULL, NULL, NULL);
  return rc == SQLITE_OK ? TL_OK : tl__store_sqlfail(s, rc, doing);
}

/* Inside the import's transaction: the new session, and the statement its
 * blocks go in by. */
static int start_session(block_out *b, const tl__import_plan *p, char uuid[37]) {
  int err = tl__session_insert(b->s, &p->spec, "complete", uuid, &b->session_id);
  sqlite3 *db = tl__sqlite_db(b->s);
  if (!err && sqlite3_prepare_v2(db,
                                 "INSERT INTO sample_blocks (session_id, seq, count, min_ns, "
                                 "max_ns, codec, data) VALUES (?, ?, ?, ?, ?, ?, ?)",
                                 -1, &b->ins, NULL) != SQLITE_OK)
    err = tl__store_sqlfail(b->s, sqlite3_errcode(db), "storing imported samples");
  return err;
}

/* The session made complete, with its sample count and summary. */
static int finish_session(block_out *b) {
  tl_store *s = b->s;
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(tl__sqlite_db(s),
                              "UPDATE sessions SET status = 'complete', sample_count = ?, "
                              "ended_ns = started_ns, heartbeat_ns = started_ns WHERE id = ?",
                              -1, &st, NULL);
  if (rc == SQLITE_OK) {
    sqlite3_bind_int64(st, 1, b->stored);
    sqlite3_bind_int64(st, 2, b->session_id);
    rc = sqlite3_step(st);
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE)
    return tl__store_sqlfail(s, rc, "finishing the import");
  const tl_summary *m;
  int err = tl__summary_finish(s, b->z, b->session_id, &m);
  return err ? err : tl__summary_write(s, b->session_id, m);
}

int tl__sqlite_import(tl_store *s, FILE *in, const tl_import_opts *o, tl_bad_row_cb on_bad,
                      void *ctx, char uuid_out[37], int64_t *imported, int64_t *bad_rows) {
  if (s->readonly)
    return tl__store_fail(s, TL_EREADONLY, "%s is open read-only", s->path);
  tl__import_plan *p = malloc(sizeof *p);
  block_out *b = calloc(1, sizeof *b);
  int err = p && b ? tl__import_plan_make(s, o, p)
                   : tl__store_fail(s, TL_ENOMEM, "out of memory importing");
  if (!err && !(b->z = tl__summarizer_new()))
    err = tl__store_fail(s, TL_ENOMEM, "out of memory importing");
  char uuid[37];
  int64_t nbad = 0;
  int in_txn = 0;
  if (!err) {
    b->s = s;
    tl__summary_begin(b->z);
    err = exec(s, "BEGIN IMMEDIATE", "starting the import");
    in_txn = err == TL_OK;
  }
  if (!err)
    err = start_session(b, p, uuid);
  if (!err)
    err = tl__import_read(s, in, o, on_bad, ctx, store_block, b, &nbad);
  if (!err)
    err = finish_session(b);
  if (b) {
    sqlite3_finalize(b->ins);
    tl__summarizer_free(b->z);
  }
  if (!err)
    err = exec(s, "COMMIT", "committing the import");
  if (err && in_txn)
    sqlite3_exec(tl__sqlite_db(s), "ROLLBACK", NULL, NULL, NULL);
  if (!err && uuid_out)
    memcpy(uuid_out, uuid, 37);
  if (imported)
    *imported = err || !b ? 0 : b->stored;
  if (bad_rows)
    *bad_rows = nbad;
  if (p)
    tl__import_plan_free(p);
  free(p);
  free(b);
  return err;
}
