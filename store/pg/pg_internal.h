/* pg_internal.h: what the PostgreSQL backend's files (pg.c, conn.c, pg_push.c)
 * share. */
#ifndef TL_PG_INTERNAL_H
#define TL_PG_INTERNAL_H

#include "pq.h"
#include "store_internal.h"

/* The facts or the tags of a window of sessions, read in one statement:
 * a report asks them of every session in turn. */
typedef struct {
  int64_t lo, hi; /* session ids [lo, hi) held; empty when lo == hi */
  size_t n;
  int64_t *session;  /* n session ids, ascending */
  tl_fact_row *rows; /* n rows, by session then key */
} tl_pg_rows;

/* A server's handle: the common one first, so that the tl_store * the
 * callers hold is this. */
typedef struct {
  tl_store base;
  PGconn *conn;           /* NULL until connected (libpq may not be loaded) */
  tl_pg_rows facts, tags; /* emptied by every write and every read transaction */
} tl_pg;

/* The entries of tl__pg_ops that pg_push.c holds. */
int tl__pg_push(tl_store *server, tl_store *local, const tl_push_opts *opts, tl_push_stats *out);

/* The server migrations compiled in from schema/pg/ (tl_pg_schema.c). */
extern const char *const tl__pg_migrations[];
extern const size_t tl__pg_migration_count;

static inline tl_pg *tl__pg(tl_store *s) { return (tl_pg *)s; }
static inline PGconn *tl__pg_conn(tl_store *s) { return ((tl_pg *)s)->conn; }

/* Text parameters of one statement; numbers are formatted into num. A NULL
 * text is SQL NULL. */
enum { TL_PG_PARAMS_MAX = 400 };
typedef struct {
  const char *v[TL_PG_PARAMS_MAX];
  char num[TL_PG_PARAMS_MAX][24];
  int n;
} tl_pg_params;
void tl__pg_param_text(tl_pg_params *p, const char *v);
void tl__pg_param_i64(tl_pg_params *p, int64_t v);

/* Runs sql with p (may be NULL), results in text or (binary) binary form.
 * The result, or NULL with *err set and the message on s. */
PGresult *tl__pg_query(tl_store *s, const char *sql, const tl_pg_params *p, int binary,
                       const char *doing, int *err);
/* The same in two halves, so that the client works while the server does:
 * tl__pg_send sends the statement (TL_OK, or an error with its message on
 * s), tl__pg_receive waits for its result as tl__pg_query gives it. One
 * statement at a time: one sent is received, or dropped by tl__pg_drain,
 * before the next. */
int tl__pg_send(tl_store *s, const char *sql, const tl_pg_params *p, int binary, const char *doing);
PGresult *tl__pg_receive(tl_store *s, const char *doing, int *err);
void tl__pg_drain(tl_store *s);
/* The same for a statement whose result is not needed. */
int tl__pg_exec(tl_store *s, const char *sql, const tl_pg_params *p, const char *doing);
/* An integer column, text or binary; NULL is 0. */
int64_t tl__pg_i64(const PGresult *r, int row, int col);
/* Maps the failure in r (NULL: the connection's) to a tl error and leaves a
 * one-line message, with what was being done, on s. */
int tl__pg_fail(tl_store *s, const PGresult *r, const char *doing);
/* Rolls back the transaction s is in, if any. */
void tl__pg_rollback(tl_store *s);
/* msg made one line: newlines and tabs become spaces, runs of spaces one,
 * no space at either end. */
void tl__pg_one_line(char *msg);
/* Empties a window of rows; forgets both of a handle's (after a write
 * they may be stale). */
void tl__pg_rows_clear(tl_pg_rows *w);
void tl__pg_forget_windows(tl_store *s);

/* pg_batch.c: ids[0..n) as a PostgreSQL array literal, "{1,2,3}";
 * malloc'ed, or NULL. And the entries of tl__pg_ops that read many
 * sessions at once. */
char *tl__pg_id_array(const int64_t *ids, size_t n);
/* The first of the n ascending session ids equal to id, and (count) how
 * many are: where a session's rows start in rows read in order of id. */
size_t tl__pg_rows_of(const int64_t *session, size_t n, int64_t id, size_t *count);
int tl__pg_cause_rows(tl_store *s, const int64_t *ids, size_t n, int64_t kinds, tl__cause_row_cb fn,
                      void *ctx);
int tl__pg_summary_blobs(tl_store *s, const int64_t *ids, size_t n, tl__summary_blob_cb fn,
                         void *ctx);
int tl__pg_details_of(tl_store *s, const int64_t *ids, size_t n, tl_details_cb fn, void *ctx);
int tl__pg_scan_blocks(tl_store *s, const int64_t *ids, size_t n, tl_block_filter_cb filter,
                       tl_block_cb fn, void *ctx);

#endif
