/* details.c: the facts and tags of many sessions at once, as a SQLite file
 * stores them (facts.c says how). A report reads every session's; one
 * query of the session_facts view and one of its tags a session cost a
 * fleet's page most of a second. Read here instead in four statements:
 * every fact set, every tag, the sessions with facts of their own in
 * host_facts, and each session's host and fact set. A session whose facts
 * are its set's, with none of its own (a fleet's imports), takes the set's
 * rows as they are; one with facts of its own (a collected session's load
 * at its end) is read through the view, which says how the two mix. A few
 * sessions of a large file are read one by one, which costs less than
 * reading the whole file. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sqlite_internal.h"

enum { SCHEMA_FACT_SETS = 6 }; /* schema/0006_fact_sets.sql */

/* Rows of one table, ordered by owner (a session, or a host's fact set)
 * and key; strings in the pool. */
typedef struct {
  int64_t *owner, *set; /* set: the fact set's number, 0 for tags */
  tl_fact_row *rows;
  size_t n, cap;
} row_table;

/* One session, in 16 bytes (a fleet has hundreds of thousands): its host,
 * and its fact set and whether host_facts holds facts of its own, as
 * (set + 1) * 2 + own; set -1: none. */
typedef struct {
  int64_t id;
  uint32_t host, set_own;
} session_row;

enum { SET_MAX = (int64_t)(UINT32_MAX / 2) - 2 };
enum { TOO_LARGE = 1 }; /* read_sessions: numbers that do not fit, never a tl_err */

typedef struct {
  tl_strpool *pool;
  row_table sets, tags;
  session_row *sessions;
  size_t nsessions;
} details;

static int table_add(row_table *t, tl_strpool *pool, sqlite3_stmt *st, int has_set) {
  if (t->n == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 256;
    int64_t *owner = realloc(t->owner, cap * sizeof *owner);
    if (owner)
      t->owner = owner;
    int64_t *set = realloc(t->set, cap * sizeof *set);
    if (set)
      t->set = set;
    tl_fact_row *rows = realloc(t->rows, cap * sizeof *rows);
    if (rows)
      t->rows = rows;
    if (!owner || !set || !rows)
      return TL_ENOMEM;
    t->cap = cap;
  }
  int at = has_set ? 2 : 1;
  tl_fact_row *r = &t->rows[t->n];
  t->owner[t->n] = sqlite3_column_int64(st, 0);
  t->set[t->n] = has_set ? sqlite3_column_int64(st, 1) : 0;
  char *text[3];
  for (int k = 0; k < 3; k++) {
    const unsigned char *v = sqlite3_column_text(st, at + k);
    text[k] = tl_strpool_get_len(pool, v ? (const char *)v : "",
                                 v ? (size_t)sqlite3_column_bytes(st, at + k) : 0);
    if (!text[k])
      return TL_ENOMEM;
  }
  *r = (tl_fact_row){text[0], text[1], text[2]};
  t->n++;
  return TL_OK;
}

static int read_table(tl_store *s, const char *sql, row_table *t, tl_strpool *pool, int has_set) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(tl__sqlite_db(s), sql, -1, &st, NULL);
  int err = TL_OK;
  while (st && !err && (rc = sqlite3_step(st)) == SQLITE_ROW)
    err = table_add(t, pool, st, has_set);
  sqlite3_finalize(st);
  if (err)
    return tl__store_fail(s, err, "out of memory reading session details");
  return rc == SQLITE_DONE ? TL_OK : tl__store_sqlfail(s, rc, "reading session details");
}

/* The sessions with facts of their own in host_facts, ascending, into
 * *ids (malloc'd, NULL when none). */
static int read_own_facts(tl_store *s, int64_t **ids, size_t *n) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(tl__sqlite_db(s),
                              "SELECT DISTINCT session_id FROM host_facts ORDER BY session_id", -1,
                              &st, NULL);
  size_t cap = 0;
  int err = TL_OK;
  while (st && !err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (*n == cap) {
      cap = cap ? cap * 2 : 256;
      int64_t *p = realloc(*ids, cap * sizeof *p);
      if (!p) {
        err = tl__store_fail(s, TL_ENOMEM, "out of memory reading session details");
        break;
      }
      *ids = p;
    }
    (*ids)[(*n)++] = sqlite3_column_int64(st, 0);
  }
  sqlite3_finalize(st);
  return err                 ? err
         : rc == SQLITE_DONE ? TL_OK
                             : tl__store_sqlfail(s, rc, "reading session details");
}

/* Every session's host and fact set, and whether it has facts of its own:
 * those sessions read apart and matched by id, as both lists ascend (a
 * look-up in host_facts a session took a fleet's month 0.1 s, for none). */
static int read_sessions(tl_store *s, details *d) {
  int64_t *own = NULL;
  size_t nown = 0, at = 0;
  int err = read_own_facts(s, &own, &nown);
  if (err) {
    free(own);
    return err;
  }
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(tl__sqlite_db(s),
                              "SELECT id, host_id, coalesce(fact_set_id, -1) FROM sessions "
                              "ORDER BY id",
                              -1, &st, NULL);
  size_t cap = 0;
  while (st && !err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (d->nsessions == cap) {
      cap = cap ? cap * 2 : 1024;
      session_row *p = realloc(d->sessions, cap * sizeof *p);
      if (!p) {
        err = TL_ENOMEM;
        break;
      }
      d->sessions = p;
    }
    int64_t id = sqlite3_column_int64(st, 0), host = sqlite3_column_int64(st, 1),
            set = sqlite3_column_int64(st, 2);
    if (host < 0 || host > (int64_t)UINT32_MAX || set < -1 || set > SET_MAX) {
      err = TOO_LARGE;
      break;
    }
    while (at < nown && own[at] < id)
      at++;
    d->sessions[d->nsessions++] =
        (session_row){id, (uint32_t)host, (uint32_t)(set + 1) * 2 + (at < nown && own[at] == id)};
  }
  sqlite3_finalize(st);
  free(own);
  if (err == TOO_LARGE)
    return err; /* numbers too large to keep in 16 bytes: read one by one */
  if (err)
    return tl__store_fail(s, err, "out of memory reading session details");
  return rc == SQLITE_DONE ? TL_OK : tl__store_sqlfail(s, rc, "reading session details");
}

/* The rows of (owner, set) in t: [*from, return). */
static size_t rows_of(const row_table *t, int64_t owner, int64_t set, size_t *from) {
  size_t lo = 0, hi = t->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (t->owner[mid] < owner || (t->owner[mid] == owner && t->set[mid] < set))
      lo = mid + 1;
    else
      hi = mid;
  }
  *from = lo;
  while (hi < t->n && t->owner[hi] == owner && t->set[hi] == set)
    hi++;
  return hi;
}

static const session_row *session_of(const details *d, int64_t id) {
  size_t lo = 0, hi = d->nsessions;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (d->sessions[mid].id < id)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < d->nsessions && d->sessions[lo].id == id ? &d->sessions[lo] : NULL;
}

/* Session ids[i] handed to fn. */
static int hand_over(tl_store *s, const details *d, int64_t id, size_t i, tl_details_cb fn,
                     void *ctx) {
  const session_row *x = session_of(d, id);
  size_t tf = 0, tt = 0, sf = 0, st = 0;
  int own = x && x->set_own % 2;
  int64_t set = x ? (int64_t)(x->set_own / 2) - 1 : -1;
  if (x)
    tt = rows_of(&d->tags, id, 0, &tf);
  if (x && !own && set >= 0)
    st = rows_of(&d->sets, x->host, set, &sf);
  if (!own)
    return fn(ctx, i, d->sets.rows + sf, st - sf, d->tags.rows + tf, tt - tf);
  tl_fact_row *facts;
  size_t nf;
  int err = tl__sqlite_facts(s, id, &facts, &nf);
  if (!err)
    err = fn(ctx, i, facts, nf, d->tags.rows + tf, tt - tf);
  tl_fact_rows_free(facts, nf);
  return err;
}

static int count_sessions(tl_store *s, int64_t *count) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(tl__sqlite_db(s), "SELECT count(*) FROM sessions", -1, &st, NULL);
  if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
    *count = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return rc == SQLITE_ROW ? TL_OK : tl__store_sqlfail(s, rc, "counting sessions");
}

int tl__sqlite_details_of(tl_store *s, const int64_t *ids, size_t n, tl_details_cb fn, void *ctx) {
  int64_t total = 0;
  int err = count_sessions(s, &total);
  /* Reading every row costs about what reading one session in eight by
   * itself does. */
  if (!err && (tl__sqlite_schema_version(s) < SCHEMA_FACT_SETS || (int64_t)n * 8 < total))
    return tl__details_one_by_one(s, ids, n, fn, ctx);
  details d = {.pool = err ? NULL : tl_strpool_new()};
  if (!err && !d.pool)
    err = tl__store_fail(s, TL_ENOMEM, "out of memory reading session details");
  if (!err)
    err = read_table(s,
                     "SELECT host_id, id, key, value, evidence FROM fact_sets "
                     "ORDER BY host_id, id, key",
                     &d.sets, d.pool, 1);
  if (!err)
    err = read_table(s,
                     "SELECT session_id, key, value, '' FROM session_tags ORDER BY session_id, key",
                     &d.tags, d.pool, 0);
  if (!err)
    err = read_sessions(s, &d);
  if (err == TOO_LARGE)
    err = tl__details_one_by_one(s, ids, n, fn, ctx);
  else
    for (size_t i = 0; i < n && !err; i++)
      err = hand_over(s, &d, ids[i], i, fn, ctx);
  row_table *t[] = {&d.sets, &d.tags};
  for (int k = 0; k < 2; k++) {
    free(t[k]->owner);
    free(t[k]->set);
    free(t[k]->rows);
  }
  free(d.sessions);
  tl_strpool_free(d.pool);
  return err;
}
