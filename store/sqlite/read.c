/* read.c: reading sessions, tags, host facts and samples back, and the
 * database-wide info and check behind 'tlstore info' and 'tlstore check'. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sqlite_internal.h"

static char *dup_col(sqlite3_stmt *st, int i) {
  const unsigned char *t = sqlite3_column_text(st, i);
  return strdup(t ? (const char *)t : "");
}

/* SQLite's SQL of the session filter (query.c). */
static const tl__sql_dialect dialect = {
    .param = '?',
    .running_cols = "s.pid, s.heartbeat_ns",
    .facts = "session_facts",
    .order = "s.id",
};

/* The previous row's strings by column: a listing repeats its labels,
 * probes, statuses and versions row after row, and one equal to the
 * previous row's needs no look-up in the pool. */
enum { SESSION_TEXT_COLS = TL__SQ_LIBUV_VERSION + 1 }; /* up to the last text column */
typedef struct {
  const char *s[SESSION_TEXT_COLS];
  size_t len[SESSION_TEXT_COLS];
  tl_strpool_odds commands; /* of the command lines (tl_strpool_get_maybe) */
} previous_row;

/* Text column i of st and its length ("" for NULL). */
static const char *col_text(sqlite3_stmt *st, int i, size_t *len) {
  const unsigned char *t = sqlite3_column_text(st, i);
  *len = t ? (size_t)sqlite3_column_bytes(st, i) : 0;
  return t ? (const char *)t : "";
}

/* Column i's text, in the pool (through odds, when given); NULL when out of
 * memory. */
static char *pool_col(tl_strpool *pool, sqlite3_stmt *st, int i, previous_row *prev,
                      tl_strpool_odds *odds) {
  size_t len;
  const char *text = col_text(st, i, &len);
  if (prev->s[i] && prev->len[i] == len && memcmp(prev->s[i], text, len) == 0)
    return (char *)prev->s[i];
  char *kept =
      odds ? tl_strpool_get_maybe(pool, odds, text, len) : tl_strpool_get_len(pool, text, len);
  prev->s[i] = kept;
  prev->len[i] = len;
  return kept;
}

/* Column i's UUID as text (uuid.c), copied into the pool: each session's
 * own, so not looked up there. NULL when out of memory. */
static char *pool_uuid(tl_strpool *pool, sqlite3_stmt *st, int i) {
  char buf[37];
  const char *t = tl__column_uuid(st, i, buf);
  return tl_strpool_add(pool, t, t == buf ? 36 : strlen(t));
}

/* The session of the row at st on host h, its strings in pool; 0 when out
 * of memory. */
static int read_session(sqlite3_stmt *st, tl_strpool *pool, previous_row *prev,
                        const tl__host_name *h, tl_session *x) {
  x->id = sqlite3_column_int64(st, TL__SQ_ID);
  x->uuid = pool_uuid(pool, st, TL__SQ_UUID);
  x->run_uuid = pool_uuid(pool, st, TL__SQ_RUN_UUID);
  x->label = pool_col(pool, st, TL__SQ_LABEL, prev, NULL);
  x->probe = pool_col(pool, st, TL__SQ_PROBE, prev, NULL);
  x->hostname = h->hostname;
  x->host_fingerprint = h->fingerprint;
  x->status = pool_col(pool, st, TL__SQ_STATUS, prev, NULL);
  x->command_line = pool_col(pool, st, TL__SQ_COMMAND_LINE, prev, &prev->commands);
  x->tl_version = pool_col(pool, st, TL__SQ_TL_VERSION, prev, NULL);
  x->libuv_version = pool_col(pool, st, TL__SQ_LIBUV_VERSION, prev, NULL);
  x->delay_ns = sqlite3_column_int64(st, TL__SQ_DELAY_NS);
  x->warmup = sqlite3_column_int64(st, TL__SQ_WARMUP);
  x->started_ns = sqlite3_column_int64(st, TL__SQ_STARTED_NS);
  x->ended_ns = sqlite3_column_int64(st, TL__SQ_ENDED_NS);
  x->sample_count = sqlite3_column_int64(st, TL__SQ_SAMPLE_COUNT);
  x->missed_periods = sqlite3_column_int64(st, TL__SQ_MISSED_PERIODS);
  return x->uuid && x->run_uuid && x->label && x->probe && x->status && x->command_line &&
         x->tl_version && x->libuv_version;
}

/* Every host's names into h, their strings in pool. */
static int read_host_names(tl_store *s, tl_strpool *pool, tl__host_names *h) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(tl__sqlite_db(s), TL__HOST_NAMES_SQL, -1, &st, NULL), err = TL_OK;
  if (rc == SQLITE_OK)
    while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
      size_t name_len, fp_len;
      const char *name = col_text(st, 1, &name_len), *fp = col_text(st, 2, &fp_len);
      if (tl__host_names_add(h, pool, sqlite3_column_int64(st, 0), name, name_len, fp, fp_len))
        err = tl__store_fail(s, TL_ENOMEM, "out of memory listing sessions");
    }
  if (!err && rc != SQLITE_DONE)
    err = tl__store_sqlfail(s, rc, "listing sessions");
  sqlite3_finalize(st);
  tl__host_names_ready(h);
  return err;
}

/* How many sessions a listing may hold, at most: ids are the table's
 * rowids, so the largest bounds the count, found in one b-tree descent.
 * Room a filter leaves unused is never touched and fit gives it back. 0
 * when unknown or beyond any store's (ids left sparse by deletions). */
static size_t sessions_bound(tl_store *s) {
  enum { BOUND_MAX = 1 << 22 };
  sqlite3_stmt *st = NULL;
  size_t n = 0;
  if (sqlite3_prepare_v2(tl__sqlite_db(s), "SELECT max(id) FROM sessions", -1, &st, NULL) ==
          SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    int64_t max = sqlite3_column_int64(st, 0);
    n = max > 0 && max <= BOUND_MAX ? (size_t)max : 0;
  }
  sqlite3_finalize(st);
  return n;
}

int tl__sqlite_sessions(tl_store *s, const tl_filter *f, tl_session_list *out) {
  tl__session_query *q = malloc(sizeof *q);
  if (!q || !(out->strings = tl_strpool_new())) {
    free(q);
    return tl__store_fail(s, TL_ENOMEM, "out of memory listing sessions");
  }
  /* The hosts and the rows in one snapshot: every row's host is then
   * among those read. A file too damaged to begin one is read without. */
  int ours = sqlite3_get_autocommit(tl__sqlite_db(s));
  if (ours && tl__sqlite_read_begin(s) != TL_OK)
    s->errmsg[0] = '\0';
  tl__host_names hosts = {NULL, 0, 0};
  int err = read_host_names(s, out->strings, &hosts);
  if (!err)
    err = tl__session_query_build(s, &dialect, f, q);
  sqlite3_stmt *st = NULL;
  int rc = err ? SQLITE_OK : sqlite3_prepare_v2(tl__sqlite_db(s), q->sql, -1, &st, NULL);
  if (rc != SQLITE_OK)
    err = tl__store_sqlfail(s, rc, "listing sessions");
  for (int i = 0; !err && i < q->n; i++)
    if (q->params[i].text)
      sqlite3_bind_text(st, i + 1, q->params[i].text, -1, SQLITE_STATIC);
    else
      sqlite3_bind_int64(st, i + 1, q->params[i].num);
  size_t cap = 0;
  if (!err)
    tl__session_list_reserve(out, &cap, sessions_bound(s));
  previous_row prev = {{NULL}, {0}, {0, 0, 0}};
  while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    const tl__host_name *h = tl__host_names_find(&hosts, sqlite3_column_int64(st, TL__SQ_HOST_ID));
    tl_session *x;
    if (!h)
      continue;
    if (tl__session_list_add(out, &cap, &x) || !read_session(st, out->strings, &prev, h, x))
      err = tl__store_fail(s, TL_ENOMEM, "out of memory listing sessions");
    else
      err = tl__session_settle(s, out->strings, x, sqlite3_column_int64(st, TL__SQ_PID),
                               sqlite3_column_int64(st, TL__SQ_HEARTBEAT_NS));
  }
  if (err == TL_OK && rc != SQLITE_DONE)
    err = tl__store_sqlfail(s, rc, "listing sessions");
  sqlite3_finalize(st);
  if (ours)
    tl__sqlite_read_end(s);
  tl__host_names_free(&hosts);
  free(q);
  if (err || !out->count) /* an empty list holds nothing, as before any row */
    tl_session_list_free(out);
  else
    tl__session_list_fit(out);
  return err;
}

int tl__sqlite_labels(tl_store *s, char ***labels, size_t *count) {
  *labels = NULL;
  *count = 0;
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(tl__sqlite_db(s),
                              "SELECT DISTINCT label FROM sessions ORDER BY label", -1, &st, NULL);
  if (rc != SQLITE_OK)
    return tl__store_sqlfail(s, rc, "listing labels");
  size_t cap = 0;
  int err = TL_OK;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (*count == cap) {
      cap = cap ? cap * 2 : 8;
      char **p = realloc(*labels, cap * sizeof *p);
      if (!p) {
        err = TL_ENOMEM;
        break;
      }
      *labels = p;
    }
    if (!((*labels)[*count] = dup_col(st, 0))) {
      err = TL_ENOMEM;
      break;
    }
    (*count)++;
  }
  if (err == TL_OK && rc != SQLITE_DONE)
    err = tl__store_sqlfail(s, rc, "listing labels");
  else if (err)
    tl__store_fail(s, err, "out of memory listing labels");
  sqlite3_finalize(st);
  if (err) {
    tl_strings_free(*labels, *count);
    *labels = NULL;
    *count = 0;
  }
  return err;
}

int tl__sqlite_label_delays(tl_store *s, tl__label_delay_cb cb, void *ctx) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(tl__sqlite_db(s), TL__LABEL_DELAYS_SQL(""), -1, &st, NULL);
  if (rc != SQLITE_OK)
    return tl__store_sqlfail(s, rc, "summing up the labels");
  int err = TL_OK;
  while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW)
    err = cb(ctx, (const char *)sqlite3_column_text(st, 0), sqlite3_column_int64(st, 1),
             sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3));
  if (!err && rc != SQLITE_DONE)
    err = tl__store_sqlfail(s, rc, "summing up the labels");
  sqlite3_finalize(st);
  return err;
}

/* A session the sessions table lacks: its id came from that table, so the
 * table is damaged, never the session without samples. */
static int missing_session(tl_store *s, int64_t id) {
  s->damaged_id = id;
  return tl__store_fail(s, TL_ECORRUPT,
                        "%s: session %lld is missing from the sessions table (run 'tlstore check')",
                        s->path, (long long)id);
}

/* The block whose seq, count, min_ns, max_ns, codec and data are the row's
 * columns from `at` on, checked in its session's run and handed to fn
 * unless filter refuses it. */
static int row_block(tl_store *s, sqlite3_stmt *st, int at, tl__block_run *run,
                     tl_block_filter_cb filter, tl_block_cb fn, void *ctx) {
  tl_block b = {.session_id = run->id,
                .seq = sqlite3_column_int64(st, at),
                .count = sqlite3_column_int64(st, at + 1),
                .min_ns = sqlite3_column_int64(st, at + 2),
                .max_ns = sqlite3_column_int64(st, at + 3),
                .codec = sqlite3_column_int(st, at + 4)};
  int err = tl__block_run_next(s, run, &b);
  if (err || (filter && !filter(ctx, &b)))
    return err;
  b.data = sqlite3_column_blob(st, at + 5);
  b.len = (size_t)sqlite3_column_bytes(st, at + 5);
  return fn(ctx, &b);
}

/* The run of the session at the row (its uuid at column `at`, its
 * sample_count after it) begins. */
static void run_begin(sqlite3_stmt *st, int at, int64_t id, char *uuid, tl__block_run *run) {
  char buf[37];
  const char *u = tl__column_uuid(st, at, buf);
  snprintf(uuid, 40, "%s", *u ? u : "?");
  *run = (tl__block_run){.id = id, .uuid = uuid, .recorded = sqlite3_column_int64(st, at + 1)};
}

static const char each_blocks_sql[] =
    "SELECT s.uuid, s.sample_count, b.seq, b.count, b.min_ns, b.max_ns, b.codec, b.data FROM "
    "sessions s LEFT JOIN sample_blocks b ON b.session_id = s.id WHERE s.id = ? ORDER BY b.seq";
static const char span_blocks_sql[] =
    "SELECT s.id, s.uuid, s.sample_count, b.seq, b.count, b.min_ns, b.max_ns, b.codec, b.data "
    "FROM sessions s LEFT JOIN sample_blocks b ON b.session_id = s.id WHERE s.id BETWEEN ?1 AND "
    "?2 ORDER BY s.id, b.seq";

/* Sessions ids[0..n), one statement each. */
static int scan_each(tl_store *s, sqlite3_stmt *st, const int64_t *ids, size_t n,
                     tl_block_filter_cb filter, tl_block_cb fn, void *ctx) {
  int err = TL_OK, rc = SQLITE_DONE;
  for (size_t i = 0; i < n && err == TL_OK; i++) {
    sqlite3_bind_int64(st, 1, ids[i]);
    char uuid[40] = "";
    tl__block_run run = {.id = ids[i], .uuid = uuid, .recorded = -1};
    while (err == TL_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
      if (run.recorded < 0)
        run_begin(st, 0, ids[i], uuid, &run);
      if (sqlite3_column_type(st, 2) == SQLITE_NULL)
        break; /* a session without blocks */
      err = row_block(s, st, 2, &run, filter, fn, ctx);
    }
    if (err == TL_OK && rc != SQLITE_DONE && rc != SQLITE_ROW)
      err = tl__store_sqlfail(s, rc, "reading samples");
    if (err == TL_OK)
      err = run.recorded < 0 ? missing_session(s, ids[i]) : tl__block_run_end(s, &run);
    sqlite3_reset(st);
  }
  return err;
}

/* Sessions ids[0..n), in ascending order, in one statement over the span
 * of their ids: the rows of a session not asked are passed over. */
static int scan_span(tl_store *s, sqlite3_stmt *st, const int64_t *ids, size_t n,
                     tl_block_filter_cb filter, tl_block_cb fn, void *ctx) {
  sqlite3_bind_int64(st, 1, ids[0]);
  sqlite3_bind_int64(st, 2, ids[n - 1]);
  char uuid[40] = "";
  tl__block_run run = {.uuid = uuid, .recorded = -1};
  size_t next = 0; /* in ids: the first not yet reached */
  int64_t at = INT64_MIN;
  int err = TL_OK, rc = SQLITE_DONE, wanted = 0;
  while (err == TL_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    int64_t id = sqlite3_column_int64(st, 0);
    if (id != at) { /* the next session */
      if (wanted)
        err = tl__block_run_end(s, &run);
      at = id;
      for (; err == TL_OK && next < n && ids[next] < id; next++)
        err = missing_session(s, ids[next]);
      wanted = err == TL_OK && next < n && ids[next] == id;
      if (wanted) {
        run_begin(st, 1, id, uuid, &run);
        next++;
      }
    }
    if (err == TL_OK && wanted && sqlite3_column_type(st, 3) != SQLITE_NULL)
      err = row_block(s, st, 3, &run, filter, fn, ctx);
  }
  if (err == TL_OK && rc != SQLITE_DONE)
    err = tl__store_sqlfail(s, rc, "reading samples");
  if (err == TL_OK && wanted)
    err = tl__block_run_end(s, &run);
  if (err == TL_OK && next < n)
    err = missing_session(s, ids[next]);
  sqlite3_reset(st);
  return err;
}

size_t tl__sqlite_dense_run(const int64_t *ids, size_t n) {
  size_t m = 1;
  while (m < n && m < TL__SPAN_MAX && ids[m] > ids[m - 1] &&
         (uint64_t)ids[m] - (uint64_t)ids[0] < 2 * (uint64_t)(m + 1))
    m++;
  return m > 1 ? m : 0;
}

/* Each statement reads its sessions' blocks and sample_counts in one
 * snapshot, even while a collector commits. Sessions that ascend densely
 * are read a span of ids a statement, the rest one statement each: a
 * descent of the sessions' and the blocks' b-trees a session cost a
 * fleet's blocks 0.75 s against 0.37 s in spans (288,000 sessions). */
int tl__sqlite_scan_blocks(tl_store *s, const int64_t *ids, size_t n, tl_block_filter_cb filter,
                           tl_block_cb fn, void *ctx) {
  /* Each statement is prepared when first needed: many callers read one
   * session a call. */
  sqlite3_stmt *each = NULL, *span = NULL;
  int err = TL_OK;
  for (size_t i = 0; i < n && err == TL_OK;) {
    size_t m = tl__sqlite_dense_run(ids + i, n - i);
    sqlite3_stmt **st = m ? &span : &each;
    int rc = *st ? SQLITE_OK
                 : sqlite3_prepare_v2(tl__sqlite_db(s), m ? span_blocks_sql : each_blocks_sql, -1,
                                      st, NULL);
    if (rc != SQLITE_OK)
      err = tl__store_sqlfail(s, rc, "reading samples");
    else if (m)
      err = scan_span(s, span, ids + i, m, filter, fn, ctx);
    else
      err = scan_each(s, each, ids + i, 1, filter, fn, ctx);
    i += m ? m : 1;
  }
  sqlite3_finalize(each);
  sqlite3_finalize(span);
  return err;
}

int tl__sqlite_read_begin(tl_store *s) {
  /* A deferred transaction takes its snapshot at the first read; read once
   * now so that the snapshot is the moment of this call. */
  int rc = sqlite3_exec(tl__sqlite_db(s), "BEGIN DEFERRED; SELECT 1 FROM sessions LIMIT 1", NULL,
                        NULL, NULL);
  return rc == SQLITE_OK ? TL_OK : tl__store_sqlfail(s, rc, "starting a read");
}

void tl__sqlite_read_end(tl_store *s) {
  if (!sqlite3_get_autocommit(tl__sqlite_db(s)))
    sqlite3_exec(tl__sqlite_db(s), "COMMIT", NULL, NULL, NULL);
}

/* The rows of sql (prepared once into *cached) for the session. */
static int read_rows(tl_store *s, sqlite3_stmt **cached, const char *sql, int64_t session_id,
                     tl_fact_row **rows, size_t *count) {
  *rows = NULL;
  *count = 0;
  int rc = *cached ? SQLITE_OK : sqlite3_prepare_v2(tl__sqlite_db(s), sql, -1, cached, NULL);
  if (rc != SQLITE_OK)
    return tl__store_sqlfail(s, rc, "reading session details");
  sqlite3_stmt *st = *cached;
  sqlite3_bind_int64(st, 1, session_id);
  size_t cap = 0;
  int err = TL_OK;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (*count == cap) {
      cap = cap ? cap * 2 : 16;
      tl_fact_row *p = realloc(*rows, cap * sizeof *p);
      if (!p) {
        err = TL_ENOMEM;
        break;
      }
      *rows = p;
    }
    tl_fact_row *r = &(*rows)[(*count)++];
    r->key = dup_col(st, 0);
    r->value = dup_col(st, 1);
    r->evidence = dup_col(st, 2);
    if (!r->key || !r->value || !r->evidence) {
      err = TL_ENOMEM;
      break;
    }
  }
  if (err == TL_OK && rc != SQLITE_DONE)
    err = tl__store_sqlfail(s, rc, "reading session details");
  else if (err)
    tl__store_fail(s, err, "out of memory reading session details");
  sqlite3_reset(st);
  if (err) {
    tl_fact_rows_free(*rows, *count);
    *rows = NULL;
    *count = 0;
  }
  return err;
}

int tl__sqlite_facts(tl_store *s, int64_t session_id, tl_fact_row **rows, size_t *count) {
  return read_rows(
      s, &tl__sqlite(s)->facts_st,
      "SELECT key, value, evidence FROM session_facts WHERE session_id = ? ORDER BY key",
      session_id, rows, count);
}

int tl__sqlite_tags(tl_store *s, int64_t session_id, tl_fact_row **rows, size_t *count) {
  return read_rows(s, &tl__sqlite(s)->tags_st,
                   "SELECT key, value, '' FROM session_tags WHERE session_id = ? ORDER BY key",
                   session_id, rows, count);
}

int tl__sqlite_hosts(tl_store *s, tl_host_row **rows, size_t *count) {
  *rows = NULL;
  *count = 0;
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(
      tl__sqlite_db(s),
      "SELECT h.fingerprint, h.hostname, h.first_seen, h.last_seen, "
      "(SELECT count(*) FROM sessions x WHERE x.host_id = h.id), "
      "(SELECT x.id FROM sessions x WHERE x.host_id = h.id ORDER BY x.started_ns DESC, x.id DESC "
      "LIMIT 1) FROM hosts h ORDER BY h.last_seen DESC, h.fingerprint",
      -1, &st, NULL);
  if (rc != SQLITE_OK)
    return tl__store_sqlfail(s, rc, "listing hosts");
  size_t cap = 0;
  int err = TL_OK;
  while (err == TL_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (*count == cap) {
      cap = cap ? cap * 2 : 8;
      tl_host_row *p = realloc(*rows, cap * sizeof *p);
      if (!p) {
        err = tl__store_fail(s, TL_ENOMEM, "out of memory listing hosts");
        break;
      }
      *rows = p;
    }
    tl_host_row *r = &(*rows)[(*count)++];
    memset(r, 0, sizeof *r);
    r->fingerprint = dup_col(st, 0);
    r->hostname = dup_col(st, 1);
    r->first_seen_ns = sqlite3_column_int64(st, 2);
    r->last_seen_ns = sqlite3_column_int64(st, 3);
    r->sessions = sqlite3_column_int64(st, 4);
    r->latest_session_id = sqlite3_column_int64(st, 5);
    if (!r->fingerprint || !r->hostname)
      err = tl__store_fail(s, TL_ENOMEM, "out of memory listing hosts");
  }
  if (err == TL_OK && rc != SQLITE_DONE)
    err = tl__store_sqlfail(s, rc, "listing hosts");
  sqlite3_finalize(st);
  for (size_t i = 0; i < *count && err == TL_OK; i++)
    if ((*rows)[i].latest_session_id)
      err = tl__sqlite_facts(s, (*rows)[i].latest_session_id, &(*rows)[i].facts,
                             &(*rows)[i].fact_count);
  if (err) {
    tl_host_rows_free(*rows, *count);
    *rows = NULL;
    *count = 0;
  }
  return err;
}

/* ======================================================================== */
/* Info and check                                                            */

static int query_i64(tl_store *s, const char *sql, int64_t *out) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(tl__sqlite_db(s), sql, -1, &st, NULL);
  if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    *out = sqlite3_column_int64(st, 0);
    rc = SQLITE_OK;
  }
  sqlite3_finalize(st);
  return rc == SQLITE_OK ? TL_OK : tl__store_sqlfail(s, rc, "reading statistics");
}

int tl__sqlite_info(tl_store *s, tl_store_stats *x) {
  x->schema_version = tl__sqlite_schema_version(s);
  x->schema_latest = tl_schema_latest();
  int err =
      query_i64(s, "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()",
                &x->file_bytes);
  if (!err)
    err = query_i64(s, "SELECT count(*) FROM hosts", &x->hosts);
  if (!err)
    err = query_i64(s, "SELECT count(*) FROM sessions", &x->sessions);
  if (!err)
    err = query_i64(s, "SELECT coalesce(sum(sample_count), 0) FROM sessions", &x->samples);
  if (!err)
    err = query_i64(s, "SELECT count(*) FROM sample_blocks", &x->blocks);
  if (!err)
    err =
        query_i64(s, "SELECT coalesce(sum(length(data)), 0) FROM sample_blocks", &x->sample_bytes);
  return err;
}

/* What the check finds while SQLite's integrity check runs beside it,
 * held to be said after that check's findings. */
typedef struct {
  tl_problem_cb report;
  void *ctx;
  char **lines;
  size_t n, cap;
  int oom;
} held;

static void hold(void *arg, const char *problem) {
  held *h = arg;
  if (h->n == h->cap) {
    size_t cap = h->cap ? 2 * h->cap : 64;
    char **more = realloc(h->lines, cap * sizeof *more);
    if (!more) {
      h->oom = 1;
      return;
    }
    h->lines = more;
    h->cap = cap;
  }
  if (!(h->lines[h->n] = strdup(problem)))
    h->oom = 1;
  else
    h->n++;
}

/* Says the integrity check's findings, then (unless it failed) what was held
 * meanwhile; err: how the rest of the check went. */
static int integrity_then_held(tl_store *s, tl__integrity *in, held *h, int *problems, int err) {
  int ierr = tl__integrity_end(s, in, h->report, h->ctx, problems);
  for (size_t i = 0; i < h->n; i++) {
    if (!ierr && h->report)
      h->report(h->ctx, h->lines[i]);
    free(h->lines[i]);
  }
  free(h->lines);
  if (ierr)
    return ierr;
  if (h->oom && !err)
    return tl__store_fail(s, TL_ENOMEM, "out of memory checking the file");
  return err;
}

int tl__sqlite_check(tl_store *s, tl_problem_cb report, void *ctx) {
  int problems = 0;
  char msg[600];
#define PROBLEM(...)                                                                               \
  do {                                                                                             \
    snprintf(msg, sizeof msg, __VA_ARGS__);                                                        \
    if (report)                                                                                    \
      report(ctx, msg);                                                                            \
    problems++;                                                                                    \
  } while (0)

  /* SQLite's integrity check beside the rest (what the rest finds held
   * meanwhile), or first, alone, when it cannot have a connection and a
   * thread of its own. */
  held h = {report, ctx, NULL, 0, 0, 0};
  tl__integrity *in = tl__integrity_start(s);
  int err = in ? TL_OK : tl__integrity_now(s, report, ctx, &problems);
  if (err)
    return err;
  report = in ? hold : report;
  ctx = in ? (void *)&h : ctx;
  sqlite3_stmt *st = NULL;
  int rc;

  /* SQLite reads a page cut short as zeros, so a file that lost its last
   * bytes can pass the integrity check. A database file is always a whole
   * number of pages. */
  int page = 0;
  struct stat fst;
  rc = sqlite3_prepare_v2(tl__sqlite_db(s), "PRAGMA page_size", -1, &st, NULL);
  if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    page = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  if (page > 0 && stat(s->path, &fst) == 0 && fst.st_size % page != 0)
    PROBLEM("the file is %lld bytes, not a whole number of %d-byte pages: it was cut short",
            (long long)fst.st_size, page);

  rc = sqlite3_prepare_v2(tl__sqlite_db(s), "PRAGMA foreign_key_check", -1, &st, NULL);
  if (rc == SQLITE_OK) {
    while (sqlite3_step(st) == SQLITE_ROW)
      PROBLEM("table %s row %lld refers to a missing %s row", sqlite3_column_text(st, 0),
              (long long)sqlite3_column_int64(st, 1), sqlite3_column_text(st, 2));
    sqlite3_finalize(st);
  }
  /* A fact set is named by host and number, which no foreign key checks. */
  rc = sqlite3_prepare_v2(tl__sqlite_db(s),
                          "SELECT uuid, fact_set_id FROM sessions s WHERE fact_set_id IS NOT NULL "
                          "AND NOT EXISTS (SELECT 1 FROM fact_sets f WHERE f.host_id = s.host_id "
                          "AND f.id = s.fact_set_id)",
                          -1, &st, NULL);
  char uuid[37];
  if (rc == SQLITE_OK) {
    while (sqlite3_step(st) == SQLITE_ROW)
      PROBLEM("session %.36s: its host facts (fact set %lld of its host) are missing",
              tl__column_uuid(st, 0, uuid), (long long)sqlite3_column_int64(st, 1));
    sqlite3_finalize(st);
  }

  /* A damaged schema text can turn "id INTEGER PRIMARY KEY" into a plain
   * column: the integrity check still passes, but every id reads as NULL and
   * no session finds its samples. */
  static const char *const keyed[] = {"hosts", "sessions"};
  for (size_t k = 0; k < sizeof keyed / sizeof keyed[0]; k++) {
    char sql[128];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM %s WHERE typeof(id) <> 'integer' OR id <> rowid", keyed[k]);
    int64_t bad = 0;
    rc = sqlite3_prepare_v2(tl__sqlite_db(s), sql, -1, &st, NULL);
    if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
      bad = sqlite3_column_int64(st, 0);
    else
      PROBLEM("table %s cannot be read: %s", keyed[k], sqlite3_errmsg(tl__sqlite_db(s)));
    sqlite3_finalize(st);
    if (bad)
      PROBLEM("table %s: %lld rows have lost their id (its definition is damaged)", keyed[k],
              (long long)bad);
  }

  int version = tl__sqlite_schema_version(s);
  if (version != tl_schema_latest())
    PROBLEM("schema version is %d, this tl expects %d", version, tl_schema_latest());

  /* Sessions whose collector is gone are marked 'interrupted' here; where
   * that cannot be written (a full disk), each is a problem saying why. */
  if (!s->readonly && tl__sqlite_recover_stale(s, tl__stale_ns(), NULL) != TL_OK) {
    char why[sizeof s->errmsg];
    snprintf(why, sizeof why, "%s", s->errmsg);
    rc = sqlite3_prepare_v2(tl__sqlite_db(s),
                            "SELECT s.uuid, s.pid, s.heartbeat_ns, h.hostname, s.started_ns "
                            "FROM sessions s "
                            "JOIN hosts h ON h.id = s.host_id WHERE s.status = 'running' "
                            "ORDER BY s.id",
                            -1, &st, NULL);
    while (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
      if (tl__session_gone((const char *)sqlite3_column_text(st, 3), sqlite3_column_int64(st, 1),
                           sqlite3_column_int64(st, 4), sqlite3_column_int64(st, 2),
                           tl__stale_ns()))
        PROBLEM("session %s: its collector is gone, but it could not be marked 'interrupted': %s",
                tl__column_uuid(st, 0, uuid), why);
    sqlite3_finalize(st);
    s->errmsg[0] = '\0';
  }

  /* One snapshot for the pass over the sessions: without it each of the
   * pass's statements takes and drops the file's read lock, a session at a
   * time. A file too damaged to begin one is read without. */
  int ours = sqlite3_get_autocommit(tl__sqlite_db(s));
  if (ours && tl__sqlite_read_begin(s) != TL_OK)
    s->errmsg[0] = '\0';
  err = tl__check_sessions(s, TL__CHECK_SAMPLES | (version >= 3 ? TL__CHECK_SUMMARIES : 0), report,
                           ctx, &problems);
  if (ours)
    tl__sqlite_read_end(s);
  if (in)
    err = integrity_then_held(s, in, &h, &problems, err);
  if (err)
    return err;
#undef PROBLEM
  return problems ? TL_ECORRUPT : TL_OK;
}

int tl__sqlite_has_session(tl_store *s, const char *uuid, int *has) {
  *has = 0;
  sqlite3_stmt *st = NULL;
  int rc =
      sqlite3_prepare_v2(tl__sqlite_db(s), "SELECT 1 FROM sessions WHERE uuid = ?", -1, &st, NULL);
  if (rc == SQLITE_OK) {
    tl__bind_uuid(st, 1, uuid);
    rc = sqlite3_step(st);
    *has = rc == SQLITE_ROW;
  }
  sqlite3_finalize(st);
  return rc == SQLITE_ROW || rc == SQLITE_DONE ? TL_OK
                                               : tl__store_sqlfail(s, rc, "finding a session");
}
