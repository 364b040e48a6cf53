/* pg_batch.c: what a server gives for many sessions at once, set-based,
 * thousands of sessions a statement: the samples, the summaries, the
 * causes, the facts and the tags of the sessions a report reads. A query a
 * session cost a fleet's report from a server a second per thousand
 * sessions. Batches held whole are asked one ahead, the server finding
 * the next while the client reads one: a fleet's page 7.45 -> 6.92 s
 * (medians of 10 alternating runs). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg_internal.h"

/* Sessions a statement: results held whole, and streamed samples, whose
 * memory stays a row's however many sessions a statement reads (1,000 a
 * statement cost a fleet's page 0.25 s more, medians of 5). */
enum { BATCH = 1000, SAMPLES_BATCH = 10000 };

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

/* How a batch's ids are asked of the server. By their span, from the least
 * to the greatest, when they fill at least half of it, as a report's
 * sessions mostly do (ids follow the pushes): one index range scan, the rows
 * of an id not asked passed over here. Else as an array (= ANY): an index
 * look-up each, in one scan. Joined as a table (unnest WITH ORDINALITY),
 * which keeps their order and repeats, they cost the server three to five
 * times as much, a nested loop's look-up a session. */
typedef struct {
  tl_pg_params p; /* $1 and $2, the span's ends; or $1, the array; then any of the query's own */
  char *list;
  int by_span;
} asked;

static int ask(tl_store *s, asked *a, const int64_t *ids, size_t m, const char *doing) {
  int64_t lo = ids[0], hi = ids[0];
  for (size_t i = 1; i < m; i++) {
    lo = ids[i] < lo ? ids[i] : lo;
    hi = ids[i] > hi ? ids[i] : hi;
  }
  a->p.n = 0;
  a->list = NULL;
  a->by_span = (uint64_t)hi - (uint64_t)lo < 2 * (uint64_t)m;
  if (a->by_span) {
    tl__pg_param_i64(&a->p, lo);
    tl__pg_param_i64(&a->p, hi);
  } else if ((a->list = tl__pg_id_array(ids, m))) {
    tl__pg_param_text(&a->p, a->list);
  } else {
    return tl__store_fail(s, TL_ENOMEM, "out of memory %s", doing);
  }
  return TL_OK;
}

/* sql into text, each @COLUMN in it the condition on that column that
 * selects the batch's rows, each # the query's own parameter after them. */
static void ask_sql(const asked *a, const char *sql, char *text, size_t len) {
  size_t at = 0;
  for (const char *c = sql; *c && at + 64 < len;) {
    if (*c == '#') {
      at += (size_t)snprintf(text + at, len - at, "$%d", a->by_span ? 3 : 2);
      c++;
      continue;
    }
    if (*c != '@') {
      text[at++] = *c++;
      continue;
    }
    const char *col = ++c;
    while (isalnum((unsigned char)*c) || *c == '.' || *c == '_')
      c++;
    at += (size_t)snprintf(text + at, len - at,
                           a->by_span ? "%.*s BETWEEN $1 AND $2" : "%.*s = ANY($1::bigint[])",
                           (int)(c - col), col);
  }
  text[at] = '\0';
}

/* The row of each session of a result ordered by its id (column 0). */
typedef struct {
  int64_t *id;
  size_t n;
} id_index;

static int id_index_read(tl_store *s, const PGresult *r, id_index *x, const char *what) {
  int rows = PQntuples(r);
  x->n = rows > 0 ? (size_t)rows : 0;
  x->id = malloc((x->n ? x->n : 1) * sizeof *x->id);
  if (!x->id)
    return tl__store_fail(s, TL_ENOMEM, "out of memory reading %s", what);
  for (size_t i = 0; i < x->n; i++) {
    x->id[i] = tl__pg_i64(r, (int)i, 0);
    if (i && x->id[i] < x->id[i - 1]) /* the look-up below needs the order */
      return tl__store_fail(s, TL_ECORRUPT, "%s: the server sent %s out of order", s->path, what);
  }
  return TL_OK;
}

/* Sends sql (@ and # as ask_sql reads them, # being *extra) for the batch
 * ids[0..m); TL_OK, or an error with its message on s. */
static int send_batch(tl_store *s, const int64_t *ids, size_t m, const char *sql,
                      const int64_t *extra, int binary, const char *doing) {
  char text[1024];
  asked a;
  int err = ask(s, &a, ids, m, doing);
  if (err)
    return err;
  if (extra)
    tl__pg_param_i64(&a.p, *extra);
  ask_sql(&a, sql, text, sizeof text);
  err = tl__pg_send(s, text, &a.p, binary, doing);
  free(a.list);
  return err;
}

/* The batches of sessions of a read, BATCH a statement (or a few
 * statements, sql[0..nsql), each its own result), read one ahead: the
 * first statement of the next batch is sent before this one's rows are
 * handed on, so that the server finds them while the client works. Use:
 * batches_next until it gives 0, then batches_end. */
enum { BATCH_SQL_MAX = 2 };
typedef struct batches {
  tl_store *s;
  const int64_t *ids;
  size_t n;
  const char *const *sql;
  int nsql, binary;
  const int64_t *extra;
  const char *what;
  /* May be NULL: whether the batch in hand's rows may be handed on with
   * the next statement on its way; not when the caller's work on them
   * reads the store (on this connection, which is then kept free). */
  int (*may_ask_ahead)(const struct batches *b);
  size_t from, m;             /* the batch in hand: ids[from..from + m) */
  PGresult *r[BATCH_SQL_MAX]; /* its results, by statement */
  id_index x[BATCH_SQL_MAX];  /* and the index of their rows */
  int ahead;                  /* the next batch's first statement is sent */
} batches;

static void batches_clear(batches *b) {
  for (int k = 0; k < b->nsql; k++) {
    PQclear(b->r[k]);
    free(b->x[k].id);
    b->r[k] = NULL;
    b->x[k] = (id_index){NULL, 0};
  }
}

/* The next batch into b: 1, or 0 at the end or on an error (*err). */
static int batches_next(batches *b, int *err) {
  char doing[64];
  snprintf(doing, sizeof doing, "reading %s", b->what);
  batches_clear(b);
  b->from += b->m;
  b->m = b->n - b->from < BATCH ? b->n - b->from : BATCH;
  *err = TL_OK;
  if (!b->m)
    return 0;
  for (int k = 0; k < b->nsql && !*err; k++) {
    if (!(k == 0 && b->ahead))
      *err = send_batch(b->s, b->ids + b->from, b->m, b->sql[k], b->extra, b->binary, doing);
    b->ahead = 0;
    if (!*err && (b->r[k] = tl__pg_receive(b->s, doing, err)))
      *err = id_index_read(b->s, b->r[k], &b->x[k], b->what);
  }
  size_t next = b->from + b->m;
  if (!*err && next < b->n && (!b->may_ask_ahead || b->may_ask_ahead(b)))
    b->ahead = (*err = send_batch(b->s, b->ids + next, b->n - next < BATCH ? b->n - next : BATCH,
                                  b->sql[0], b->extra, b->binary, doing)) == TL_OK;
  return *err == TL_OK;
}

/* The end of a read, whole or not: a statement sent ahead is dropped, so
 * that the connection is ready for the next. */
static void batches_end(batches *b) {
  batches_clear(b);
  if (b->ahead)
    tl__pg_drain(b->s);
  b->ahead = 0;
}

size_t tl__pg_rows_of(const int64_t *session, size_t n, int64_t id, size_t *count) {
  size_t from = 0, to = n;
  while (from < to) {
    size_t mid = from + (to - from) / 2;
    if (session[mid] < id)
      from = mid + 1;
    else
      to = mid;
  }
  size_t k = 0;
  while (from + k < n && session[from + k] == id)
    k++;
  *count = k;
  return from;
}

/* The blocks of the sessions ids[0..m) in that order, streamed a row at a
 * time in one statement, with the checks every backend makes
 * (tl__block_run_next and _end) session by session; each session's count
 * comes in the same statement, so in the same snapshot. An id that names no
 * session is passed over. Ids in ascending order, as a report's mostly
 * are, are asked as above, each row's first column its session's id, and
 * the rows of a session not asked are passed over; others are joined as a
 * table, which keeps their order and repeats, the first column a place. */
static int scan_batch(tl_store *s, const int64_t *ids, size_t m, tl_block_filter_cb filter,
                      tl_block_cb fn, void *ctx) {
  const char *doing = "reading samples";
  int ascending = 1;
  for (size_t i = 1; i < m && ascending; i++)
    ascending = ids[i] > ids[i - 1];
  asked a = {.by_span = 0};
  char sql[1024];
  int err = TL_OK;
  if (ascending) {
    err = ask(s, &a, ids, m, doing);
    if (!err)
      ask_sql(&a,
              "SELECT s.id, s.id, s.uuid, s.sample_count, b.seq, b.count, b.min_ns, b.max_ns, "
              "b.codec, b.data FROM sessions s LEFT JOIN sample_blocks b ON b.session_id = s.id "
              "AND @b.session_id WHERE @s.id ORDER BY s.id, b.seq",
              sql, sizeof sql);
  } else if ((a.list = tl__pg_id_array(ids, m))) {
    tl__pg_param_text(&a.p, a.list);
    snprintf(sql, sizeof sql, "%s",
             "SELECT u.ord, s.id, s.uuid, s.sample_count, b.seq, b.count, b.min_ns, b.max_ns, "
             "b.codec, b.data FROM unnest($1::bigint[]) WITH ORDINALITY AS u(id, ord) JOIN "
             "sessions s ON s.id = u.id LEFT JOIN sample_blocks b ON b.session_id = s.id ORDER BY "
             "u.ord, b.seq");
  } else {
    err = tl__store_fail(s, TL_ENOMEM, "out of memory %s", doing);
  }
  if (err)
    return err;
  PGconn *c = tl__pg_conn(s);
  int sent = PQsendQueryParams(c, sql, a.p.n, NULL, a.p.v, NULL, NULL, 1);
  free(a.list);
  if (!sent || !PQsetSingleRowMode(c))
    return tl__pg_fail(s, NULL, doing);
  char uuid[40] = "";
  tl__block_run run = {.uuid = uuid, .recorded = -1};
  int64_t key = INT64_MIN; /* of the session being read: a place, or an id */
  size_t next = 0;         /* in ids, by span: the first not yet passed */
  int wanted = 0;          /* the session being read was asked */
  PGresult *r;
  while ((r = PQgetResult(c))) {
    ExecStatusType st = PQresultStatus(r);
    if (st == PGRES_SINGLE_TUPLE && err == TL_OK) {
      int64_t id = tl__pg_i64(r, 0, 1);
      if (tl__pg_i64(r, 0, 0) != key) { /* the next session */
        if (run.recorded >= 0)
          err = tl__block_run_end(s, &run);
        run.recorded = -1;
        key = tl__pg_i64(r, 0, 0);
        wanted = 1;
        if (a.by_span) {
          while (next < m && ids[next] < id)
            next++;
          wanted = next < m && ids[next] == id;
        }
        if (wanted) {
          run = (tl__block_run){.id = id, .uuid = uuid, .recorded = tl__pg_i64(r, 0, 3)};
          snprintf(uuid, sizeof uuid, "%.36s", PQgetvalue(r, 0, 2));
        }
      }
      if (err == TL_OK && wanted && !PQgetisnull(r, 0, 4)) { /* else no blocks */
        tl_block b = {.session_id = id,
                      .seq = tl__pg_i64(r, 0, 4),
                      .count = tl__pg_i64(r, 0, 5),
                      .min_ns = tl__pg_i64(r, 0, 6),
                      .max_ns = tl__pg_i64(r, 0, 7),
                      .codec = (int)tl__pg_i64(r, 0, 8)};
        err = tl__block_run_next(s, &run, &b);
        if (err == TL_OK && (!filter || filter(ctx, &b))) {
          b.data = (const uint8_t *)PQgetvalue(r, 0, 9);
          b.len = (size_t)PQgetlength(r, 0, 9);
          err = fn(ctx, &b);
        }
      }
    } else if (st != PGRES_SINGLE_TUPLE && st != PGRES_TUPLES_OK && err == TL_OK) {
      err = tl__pg_fail(s, r, doing);
    }
    PQclear(r); /* after an error, the rest of the rows are read and dropped */
  }
  if (err == TL_OK && run.recorded >= 0)
    err = tl__block_run_end(s, &run);
  return err;
}

int tl__pg_scan_blocks(tl_store *s, const int64_t *ids, size_t n, tl_block_filter_cb filter,
                       tl_block_cb fn, void *ctx) {
  int err = TL_OK;
  for (size_t i = 0; i < n && err == TL_OK; i += SAMPLES_BATCH)
    err = scan_batch(s, ids + i, n - i < SAMPLES_BATCH ? n - i : SAMPLES_BATCH, filter, fn, ctx);
  return err;
}

/* The rows of each of ids[0..n), by its place in ids, of the kinds asked:
 * a batch of sessions a statement, each found in the rows by its id. */
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
  static const char *const sql =
      "SELECT c.session_id, c.kind::bigint, c.first_index, c.count, c.data FROM session_causes c "
      "WHERE @c.session_id AND (#::bigint = -1 OR (c.kind BETWEEN 0 AND 62 AND (#::bigint >> "
      "c.kind) & 1 = 1)) ORDER BY c.session_id, c.kind, c.first_index";
  batches b = {.s = s,
               .ids = ids,
               .n = have ? n : 0,
               .sql = &sql,
               .nsql = 1,
               .binary = 1,
               .extra = &kinds,
               .what = "causes"};
  while (batches_next(&b, &err)) {
    r = b.r[0];
    for (size_t i = 0; i < b.m && err == TL_OK; i++) {
      size_t count, row = tl__pg_rows_of(b.x[0].id, b.x[0].n, ids[b.from + i], &count);
      for (int k = (int)row; k < (int)(row + count) && err == TL_OK; k++)
        err =
            fn(ctx, b.from + i, (int)tl__pg_i64(r, k, 1), tl__pg_i64(r, k, 2), tl__pg_i64(r, k, 3),
               (const uint8_t *)PQgetvalue(r, k, 4), (size_t)PQgetlength(r, k, 4));
    }
    if (err)
      break;
  }
  batches_end(&b);
  return err;
}

/* Whether every session of the batch in hand has its summary stored: the
 * caller makes one that has none from its blocks, read from the server. */
static int all_stored(const batches *b) {
  for (size_t i = 0; i < b->x[0].n; i++)
    if (PQgetisnull(b->r[0], (int)i, 3))
      return 0;
  for (size_t i = 0; i < b->m; i++) {
    size_t count;
    tl__pg_rows_of(b->x[0].id, b->x[0].n, b->ids[b->from + i], &count);
    if (!count)
      return 0;
  }
  return 1;
}

/* The summaries of ids[0..n), in order: a row for each session the server
 * has, found by its id; "?" and no summary for an id of no session. */
int tl__pg_summary_blobs(tl_store *s, const int64_t *ids, size_t n, tl__summary_blob_cb fn,
                         void *ctx) {
  static const char *const sql =
      "SELECT s.id, s.uuid, s.sample_count, m.data FROM sessions s LEFT JOIN session_summaries m "
      "ON m.session_id = s.id AND @m.session_id WHERE @s.id ORDER BY s.id";
  batches b = {.s = s,
               .ids = ids,
               .n = n,
               .sql = &sql,
               .nsql = 1,
               .binary = 1,
               .what = "summaries",
               .may_ask_ahead = all_stored};
  int err;
  while (batches_next(&b, &err)) {
    const PGresult *r = b.r[0];
    for (size_t i = 0; i < b.m && err == TL_OK; i++) {
      size_t count;
      int row = (int)tl__pg_rows_of(b.x[0].id, b.x[0].n, ids[b.from + i], &count);
      if (!count)
        err = fn(ctx, b.from + i, "?", -1, NULL, 0);
      else
        err = fn(ctx, b.from + i, PQgetvalue(r, row, 1), tl__pg_i64(r, row, 2),
                 PQgetisnull(r, row, 3) ? NULL : (const uint8_t *)PQgetvalue(r, row, 3),
                 (size_t)PQgetlength(r, row, 3));
    }
    if (err)
      break;
  }
  batches_end(&b);
  return err;
}

/* Puts each session's rows (a run of equal ids in x) in the order of their
 * keys' bytes, COLLATE "C": the server sends them in its index's order,
 * by its own collation, which may differ in places (case, punctuation). */
static void runs_by_key(tl_fact_row *rows, const id_index *x) {
  for (size_t from = 0, to; from < x->n; from = to) {
    for (to = from + 1; to < x->n && x->id[to] == x->id[from]; to++) {
      tl_fact_row r = rows[to];
      size_t at = to;
      for (; at > from && strcmp(rows[at - 1].key, r.key) > 0; at--)
        rows[at] = rows[at - 1];
      rows[at] = r;
    }
  }
}

/* Each session's facts and tags as pg_facts and pg_tags give them (rows by
 * key), two statements a batch, the rows handed on where libpq holds them.
 * A window of ids a statement, and a copy of every row, cost a fleet's page
 * 0.9 s (the facts of 288,000 sessions). The rows come in the index's
 * order and are put in the keys' here (runs_by_key): the server's sort of
 * them was half of its time on the statement. */
int tl__pg_details_of(tl_store *s, const int64_t *ids, size_t n, tl_details_cb fn, void *ctx) {
  static const char *const sql[2] = {
      "SELECT session_id, key, value, evidence FROM host_facts WHERE @session_id ORDER BY "
      "session_id, key",
      "SELECT session_id, key, value, '' FROM session_tags WHERE @session_id ORDER BY "
      "session_id, key"};
  batches b = {.s = s, .ids = ids, .n = n, .sql = sql, .nsql = 2, .what = "session details"};
  tl_fact_row *rows[2] = {NULL, NULL};
  int err;
  while (batches_next(&b, &err)) {
    for (int k = 0; k < 2 && err == TL_OK; k++) {
      free(rows[k]);
      if (!(rows[k] = malloc((b.x[k].n ? b.x[k].n : 1) * sizeof *rows[k])))
        err = tl__store_fail(s, TL_ENOMEM, "out of memory reading session details");
      for (int i = 0; i < (int)b.x[k].n && err == TL_OK; i++)
        rows[k][i] = (tl_fact_row){PQgetvalue(b.r[k], i, 1), PQgetvalue(b.r[k], i, 2),
                                   PQgetvalue(b.r[k], i, 3)};
      if (err == TL_OK)
        runs_by_key(rows[k], &b.x[k]);
    }
    for (size_t i = 0; i < b.m && err == TL_OK; i++) {
      size_t nfacts, ntags;
      size_t f = tl__pg_rows_of(b.x[0].id, b.x[0].n, ids[b.from + i], &nfacts);
      size_t t = tl__pg_rows_of(b.x[1].id, b.x[1].n, ids[b.from + i], &ntags);
      err = fn(ctx, b.from + i, rows[0] + f, nfacts, rows[1] + t, ntags);
    }
    if (err)
      break;
  }
  batches_end(&b);
  free(rows[0]);
  free(rows[1]);
  return err;
}
