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

/* The rows of up to 1,000 sessions a statement, by their place in ids. */
int tl__pg_cause_rows(tl_store *s, const int64_t *ids, size_t n, int64_t kinds, tl__cause_row_cb fn,
                      void *ctx) {
  enum { BATCH = 1000 };
  /* A server older than the causes has no table; asking it would abort the
   * read snapshot's transaction, so its existence is asked first. */
  int err;
  PGresult *r = tl__pg_query(s, "SELECT to_regclass('session_causes') IS NOT NULL", NULL, 0,
                             "reading causes", &err);
  if (!r)
    return err;
  int have = PQgetvalue(r, 0, 0)[0] == 't';
  PQclear(r);
  for (size_t from = 0; have && from < n && err == TL_OK; from += BATCH) {
    size_t m = n - from < BATCH ? n - from : BATCH;
    char *list = tl__pg_id_array(ids + from, m);
    if (!list)
      return tl__store_fail(s, TL_ENOMEM, "out of memory reading causes");
    tl_pg_params p = {0};
    tl__pg_param_text(&p, list);
    tl__pg_param_i64(&p, kinds);
    r = tl__pg_query(s,
                     "SELECT u.ord, c.kind::bigint, c.first_index, c.count, c.data FROM "
                     "unnest($1::bigint[]) WITH ORDINALITY AS u(id, ord) JOIN session_causes c "
                     "ON c.session_id = u.id WHERE $2::bigint = -1 OR (c.kind BETWEEN 0 AND 62 "
                     "AND ($2::bigint >> c.kind) & 1 = 1) ORDER BY u.ord, c.kind, c.first_index",
                     &p, 1, "reading causes", &err);
    free(list);
    if (!r)
      return err;
    for (int i = 0; i < PQntuples(r) && err == TL_OK; i++) {
      int64_t ord = tl__pg_i64(r, i, 0);
      if (ord < 1 || (size_t)ord > m) {
        err = tl__store_fail(s, TL_ECORRUPT, "%s: the server sent a cause of no session asked",
                             s->path);
        break;
      }
      err = fn(ctx, from + (size_t)ord - 1, (int)tl__pg_i64(r, i, 1), tl__pg_i64(r, i, 2),
               tl__pg_i64(r, i, 3), (const uint8_t *)PQgetvalue(r, i, 4),
               (size_t)PQgetlength(r, i, 4));
    }
    PQclear(r);
  }
  return err;
}

/* The summaries of ids[0..n), up to 1,000 sessions a statement, in order. */
int tl__pg_summary_blobs(tl_store *s, const int64_t *ids, size_t n, tl__summary_blob_cb fn,
                         void *ctx) {
  enum { BATCH = 1000 };
  int err = TL_OK;
  for (size_t from = 0; from < n && err == TL_OK; from += BATCH) {
    size_t m = n - from < BATCH ? n - from : BATCH;
    char *list = tl__pg_id_array(ids + from, m);
    if (!list)
      return tl__store_fail(s, TL_ENOMEM, "out of memory reading summaries");
    tl_pg_params p = {0};
    tl__pg_param_text(&p, list);
    PGresult *r = tl__pg_query(s,
                               "SELECT s.id IS NOT NULL, s.uuid, s.sample_count, m.data FROM "
                               "unnest($1::bigint[]) WITH ORDINALITY AS u(id, ord) LEFT JOIN "
                               "sessions s ON s.id = u.id LEFT JOIN session_summaries m ON "
                               "m.session_id = s.id ORDER BY u.ord",
                               &p, 1, "reading summaries", &err);
    free(list);
    if (!r)
      break;
    for (size_t k = 0; k < m && k < (size_t)PQntuples(r) && err == TL_OK; k++) {
      int row = (int)k;
      if (!*PQgetvalue(r, row, 0)) /* a binary bool: 0, no such session */
        err = fn(ctx, from + k, "?", -1, NULL, 0);
      else
        err = fn(ctx, from + k, PQgetvalue(r, row, 1), tl__pg_i64(r, row, 2),
                 PQgetisnull(r, row, 3) ? NULL : (const uint8_t *)PQgetvalue(r, row, 3),
                 (size_t)PQgetlength(r, row, 3));
    }
    PQclear(r);
  }
  return err;
}
