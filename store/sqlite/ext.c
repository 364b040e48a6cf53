/* ext.c: a loadable SQLite extension that opens raw samples to plain
 * SQL. It adds the table-valued function tl_samples(session_id), which
 * decodes the session's stored blocks on the fly:
 *
 *   .load /usr/local/lib/tl/tl_sqlite
 *   SELECT seq, latency_ns FROM tl_samples(1);
 *   SELECT s.label, x.latency_ns FROM sessions s, tl_samples(s.id) x;
 *
 * Without an argument it yields the samples of every session. seq counts
 * each session's samples from 0 in the order measured. Built as its own
 * shared library (tl_sqlite.so); it shares only the block codec with tl. */
#include <sqlite3ext.h>
#include <string.h>

#include "codec_internal.h"
#include "tl_store.h"

SQLITE_EXTENSION_INIT1

enum { COL_SEQ, COL_LATENCY, COL_SESSION };

typedef struct {
  sqlite3_vtab base;
  sqlite3 *db;
} samples_vtab;

typedef struct {
  sqlite3_vtab_cursor base;
  sqlite3_stmt *st; /* the blocks, in session and sample order */
  int eof;
  int64_t session_id; /* of the current block */
  int64_t seq;        /* index of the current sample in its session */
  size_t at, n;       /* position in, and size of, the decoded block */
  int64_t values[TL_BLOCK_MAX];
} samples_cursor;

static int x_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out,
                     char **err) {
  (void)aux;
  (void)argc;
  (void)argv;
  (void)err;
  int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(seq INTEGER, latency_ns INTEGER, "
                                    "session_id HIDDEN)");
  if (rc != SQLITE_OK)
    return rc;
  samples_vtab *v = sqlite3_malloc(sizeof *v);
  if (!v)
    return SQLITE_NOMEM;
  memset(v, 0, sizeof *v);
  v->db = db;
  *out = &v->base;
  return SQLITE_OK;
}

static int x_disconnect(sqlite3_vtab *v) {
  sqlite3_free(v);
  return SQLITE_OK;
}

/* With session_id = ? the scan reads one session through the primary key;
 * without, every block. */
static int x_best_index(sqlite3_vtab *v, sqlite3_index_info *info) {
  (void)v;
  for (int i = 0; i < info->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &info->aConstraint[i];
    if (c->usable && c->iColumn == COL_SESSION && c->op == SQLITE_INDEX_CONSTRAINT_EQ) {
      info->aConstraintUsage[i].argvIndex = 1;
      info->aConstraintUsage[i].omit = 1;
      info->idxNum = 1;
      info->estimatedCost = 1000;
      info->estimatedRows = 100000;
      return SQLITE_OK;
    }
  }
  info->idxNum = 0;
  info->estimatedCost = 1e9;
  info->estimatedRows = 1000000000;
  return SQLITE_OK;
}

static int x_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out) {
  (void)v;
  samples_cursor *c = sqlite3_malloc(sizeof *c);
  if (!c)
    return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  *out = &c->base;
  return SQLITE_OK;
}

static int x_close(sqlite3_vtab_cursor *cur) {
  samples_cursor *c = (samples_cursor *)cur;
  sqlite3_finalize(c->st);
  sqlite3_free(c);
  return SQLITE_OK;
}

static int fail(samples_cursor *c, const char *msg) {
  sqlite3_free(c->base.pVtab->zErrMsg);
  c->base.pVtab->zErrMsg = sqlite3_mprintf("tl_samples: %s", msg);
  return SQLITE_ERROR;
}

/* Steps to the next block and decodes it; eof when there is none. */
static int next_block(samples_cursor *c) {
  int rc = sqlite3_step(c->st);
  if (rc == SQLITE_DONE) {
    c->eof = 1;
    return SQLITE_OK;
  }
  if (rc != SQLITE_ROW)
    return rc;
  int64_t sid = sqlite3_column_int64(c->st, 0);
  tl_block b = {.session_id = sid,
                .count = sqlite3_column_int64(c->st, 1),
                .min_ns = sqlite3_column_int64(c->st, 2),
                .max_ns = sqlite3_column_int64(c->st, 3),
                .codec = sqlite3_column_int(c->st, 4),
                .data = sqlite3_column_blob(c->st, 5),
                .len = (size_t)sqlite3_column_bytes(c->st, 5),
                .seq = sqlite3_column_int64(c->st, 6)};
  const char *why;
  if (tl_block_decode(&b, c->values, &why)) {
    char msg[200];
    sqlite3_snprintf((int)sizeof msg, msg, "session %lld, block %lld: %s (run tlstore check)",
                     (long long)sid, (long long)b.seq, why);
    return fail(c, msg);
  }
  int64_t n = b.count;
  c->seq = sid == c->session_id ? c->seq + 1 : 0; /* each session counts from 0 */
  c->session_id = sid;
  c->at = 0;
  c->n = (size_t)n;
  return SQLITE_OK;
}

static int x_filter(sqlite3_vtab_cursor *cur, int idx, const char *idxstr, int argc,
                    sqlite3_value **argv) {
  (void)idxstr;
  samples_cursor *c = (samples_cursor *)cur;
  samples_vtab *v = (samples_vtab *)cur->pVtab;
  sqlite3_finalize(c->st);
  c->st = NULL;
  c->eof = 0;
  c->seq = 0;
  c->session_id = -1;
  const char *sql = idx == 1 && argc == 1
                        ? "SELECT session_id, count, min_ns, max_ns, codec, data, seq FROM "
                          "sample_blocks WHERE session_id = ? ORDER BY seq"
                        : "SELECT session_id, count, min_ns, max_ns, codec, data, seq FROM "
                          "sample_blocks ORDER BY session_id, seq";
  int rc = sqlite3_prepare_v2(v->db, sql, -1, &c->st, NULL);
  if (rc != SQLITE_OK)
    return rc;
  if (idx == 1 && argc == 1)
    sqlite3_bind_value(c->st, 1, argv[0]);
  return next_block(c);
}

static int x_next(sqlite3_vtab_cursor *cur) {
  samples_cursor *c = (samples_cursor *)cur;
  if (++c->at < c->n) {
    c->seq++;
    return SQLITE_OK;
  }
  return next_block(c);
}

static int x_eof(sqlite3_vtab_cursor *cur) { return ((samples_cursor *)cur)->eof; }

static int x_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  samples_cursor *c = (samples_cursor *)cur;
  switch (col) {
  case COL_SEQ:
    sqlite3_result_int64(ctx, c->seq);
    break;
  case COL_LATENCY:
    sqlite3_result_int64(ctx, c->values[c->at]);
    break;
  default:
    sqlite3_result_int64(ctx, c->session_id);
  }
  return SQLITE_OK;
}

static int x_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid) {
  samples_cursor *c = (samples_cursor *)cur;
  *rowid = c->session_id * ((sqlite3_int64)1 << 32) + c->seq;
  return SQLITE_OK;
}

static sqlite3_module samples_module = {
    .iVersion = 0,
    .xConnect = x_connect,
    .xBestIndex = x_best_index,
    .xDisconnect = x_disconnect,
    .xOpen = x_open,
    .xClose = x_close,
    .xFilter = x_filter,
    .xNext = x_next,
    .xEof = x_eof,
    .xColumn = x_column,
    .xRowid = x_rowid,
};

/* The entry point SQLite derives from the file name tl_sqlite.so. */
__attribute__((visibility("default"))) int sqlite3_tlsqlite_init(sqlite3 *db, char **err,
                                                                 const sqlite3_api_routines *api);
int sqlite3_tlsqlite_init(sqlite3 *db, char **err, const sqlite3_api_routines *api) {
  (void)err;
  SQLITE_EXTENSION_INIT2(api);
  return sqlite3_create_module(db, "tl_samples", &samples_module, NULL);
}
