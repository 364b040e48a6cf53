/* pg_batch.c: what a server gives for many sessions at once, set-based
 * (an array of ids unnested WITH ORDINALITY, 1,000 sessions a statement):
 * the causes and the summaries of the sessions a report reads. A query a
 * session cost a fleet's report from a server a second per thousand
 * sessions. */
#include <stdio.h>
#include <stdlib.h>

#include "pg_internal.h"

/* ids[0..n) as a PostgreSQL array literal, "{1,2,3}"; malloc'ed, or NULL. */
char *tl__pg_id_array(const int64_t *ids, size_t n) {
  char *list = malloc(n * 21 + 3);
  size_t at = 0;
  if (!list)
    return NULL;
  list[at++] = '{';
  for (size_t i = 0; i < n; i++)
    at += (size_t)sprintf(list + at, "%s%lld", i ? "," : "", (long long)ids[i]);
  list[at++] = '}';
  list[at] = '\0';
  return list;
}

/* What one batch's result is handed to: the rows answer ids[from..from+m). */
typedef int (*batch_rows_fn)(tl_store *s, PGresult *r, size_t from, size_t m, void *ctx);

/* Runs sql for ids[0..n), 1,000 ids a statement: $1 is the batch as an array,
 * $2 is `extra` where the query takes one. Stops at the first error. */
static int query_batches(tl_store *s, const int64_t *ids, size_t n, const char *sql,
                         const int64_t *extra, const char *doing, batch_rows_fn rows, void *ctx) {
  enum { BATCH = 1000 };
  int err = TL_OK;
  for (size_t from = 0; from < n && err == TL_OK; from += BATCH) {
    size_t m = n - from < BATCH ? n - from : BATCH;
    char *list = tl__pg_id_array(ids + from, m);
    if (!list)
      return tl__store_fail(s, TL_ENOMEM, "out of memory %s", doing);
    tl_pg_params p = {0};
    tl__pg_param_text(&p, list);
    if (extra)
      tl__pg_param_i64(&p, *extra);
    PGresult *r = tl__pg_query(s, sql, &p, 1, doing, &err);
    free(list);
    if (!r)
      return err;
    err = rows(s, r, from, m, ctx);
    PQclear(r);
  }
  return err;
}

typedef struct {
  tl__cause_row_cb fn;
  void *ctx;
} cause_batch;

static int cause_rows_of_batch(tl_store *s, PGresult *r, size_t from, size_t m, void *ctx) {
  const cause_batch *b = ctx;
  int err = TL_OK;
  for (int i = 0; i < PQntuples(r) && err == TL_OK; i++) {
    int64_t ord = tl__pg_i64(r, i, 0);
    if (ord < 1 || (size_t)ord > m)
      return tl__store_fail(s, TL_ECORRUPT, "%s: the server sent a cause of no session asked",
                            s->path);
    err = b->fn(b->ctx, from + (size_t)ord - 1, (int)tl__pg_i64(r, i, 1), tl__pg_i64(r, i, 2),
                tl__pg_i64(r, i, 3), (const uint8_t *)PQgetvalue(r, i, 4),
                (size_t)PQgetlength(r, i, 4));
  }
  return err;
}

/* The rows of up to 1,000 sessions a statement, by their place in ids. */
int tl__pg_cause_rows(tl_store *s, const int64_t *ids, size_t n, int64_t kinds, tl__cause_row_cb fn,
                      void *ctx) {
  /* A server older than the causes has no table; asking it would abort the
   * read snapshot's transaction, so its existence is asked first. */
  int err;
  PGresult *r = tl__pg_query(s, "SELECT to_regclass('session_causes') IS NOT NULL", NULL, 0,
                             "reading causes", &err);
  if (!r)
    return err;
  int have = PQgetvalue(r, 0, 0)[0] == 't';
  PQclear(r);
  if (!have)
    return TL_OK;
  cause_batch b = {fn, ctx};
  return query_batches(s, ids, n,
                       "SELECT u.ord, c.kind::bigint, c.first_index, c.count, c.data FROM "
                       "unnest($1::bigint[]) WITH ORDINALITY AS u(id, ord) JOIN session_causes c "
                       "ON c.session_id = u.id WHERE $2::bigint = -1 OR (c.kind BETWEEN 0 AND 62 "
                       "AND ($2::bigint >> c.kind) & 1 = 1) ORDER BY u.ord, c.kind, c.first_index",
                       &kinds, "reading causes", cause_rows_of_batch, &b);
}

typedef struct {
  tl__summary_blob_cb fn;
  void *ctx;
} summary_batch;

static int summaries_of_batch(tl_store *s, PGresult *r, size_t from, size_t m, void *ctx) {
  const summary_batch *b = ctx;
  /* One row a session asked, in order: a short answer would drop sessions. */
  if ((size_t)PQntuples(r) != m)
    return tl__store_fail(s, TL_ECORRUPT, "%s: the server sent %d summaries for %zu sessions",
                          s->path, PQntuples(r), m);
  int err = TL_OK;
  for (int row = 0; row < (int)m && err == TL_OK; row++) {
    if (!*PQgetvalue(r, row, 0)) /* a binary bool: 0, no such session */
      err = b->fn(b->ctx, from + (size_t)row, "?", -1, NULL, 0);
    else
      err = b->fn(b->ctx, from + (size_t)row, PQgetvalue(r, row, 1), tl__pg_i64(r, row, 2),
                  PQgetisnull(r, row, 3) ? NULL : (const uint8_t *)PQgetvalue(r, row, 3),
                  (size_t)PQgetlength(r, row, 3));
  }
  return err;
}

/* The summaries of ids[0..n), up to 1,000 sessions a statement, in order. */
int tl__pg_summary_blobs(tl_store *s, const int64_t *ids, size_t n, tl__summary_blob_cb fn,
                         void *ctx) {
  summary_batch b = {fn, ctx};
  return query_batches(s, ids, n,
                       "SELECT s.id IS NOT NULL, s.uuid, s.sample_count, m.data FROM "
                       "unnest($1::bigint[]) WITH ORDINALITY AS u(id, ord) LEFT JOIN "
                       "sessions s ON s.id = u.id LEFT JOIN session_summaries m ON "
                       "m.session_id = s.id ORDER BY u.ord",
                       NULL, "reading summaries", summaries_of_batch, &b);
}
