/* test_store.c: the database: creation, migration, refusals, the sample
 * codec, the writer's batching and the recovery of stale sessions. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <cmocka.h>
#include <sqlite3.h>

#include "sqlite_internal.h"
#include "support.h"
#include "support_store.h"

typedef tl_test_fixture fixture;

static tl_session_spec spec_for(const char *label, int64_t delay_ns) {
  static const char *keys[] = {"load"}, *values[] = {"idle"};
  static const tl_fact facts[] = {{"cpu.model", "Test CPU", "/proc/cpuinfo"},
                                  {"vm", "none", "cpuid"}};
  tl_session_spec s = {
      .run_uuid = "run-1",
      .label = label,
      .probe = "settimeout",
      .delay_ns = delay_ns,
      .warmup = 3,
      .command_line = "tlcollect --label x",
      .host_fingerprint = "0123456789abcdef",
      .hostname = "testhost",
      .libuv_version = "1.44.2",
      .tag_keys = keys,
      .tag_values = values,
      .tag_count = 1,
      .facts = facts,
      .fact_count = 2,
  };
  return s;
}

typedef struct {
  int64_t *v;
  size_t n;
} collected;

static int collect(void *ctx, const int64_t *v, size_t n) {
  collected *c = ctx;
  memcpy(c->v + c->n, v, n * sizeof *v);
  c->n += n;
  return 0;
}

/* A read cache of the size asked, in KiB as SQLite counts it, and back to
 * SQLite's own 2,000 KiB at 0. */
static long long cache_kib(tl_store *s) {
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_prepare_v2(tl__sqlite_db(s), "PRAGMA cache_size", -1, &st, NULL),
                   SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  long long v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

static void read_cache(void **state) {
  fixture *f = *state;
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  assert_int_equal(cache_kib(s), -2000);
  assert_int_equal(tl_store_read_cache(s, 160 << 20), TL_OK);
  assert_int_equal(cache_kib(s), -(160 << 10));
  assert_int_equal(tl_store_read_cache(s, 0), TL_OK);
  assert_int_equal(cache_kib(s), -2000);
  tl_store_close(s);
}

static void round_trip(void **state) {
  fixture *f = *state;
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  assert_int_equal(tl_store_schema_version(s), tl_schema_latest());
  tl_session_spec spec = spec_for("droplet", 50000000);
  tl_writer *w;
  char uuid[37];
  assert_int_equal(tl_writer_begin(s, &spec, &w, uuid), TL_OK);
  assert_int_equal(strlen(uuid), 36);
  /* 10,000 samples in uneven batches, so blocks fill, split and get
   * rewritten while partly full. */
  const size_t n = 10000;
  int64_t *v = malloc(n * sizeof *v);
  for (size_t i = 0; i < n; i++)
    v[i] = 50000000 + (int64_t)((i * 7919) % 100000) + (i == 5000 ? 2000000000LL : 0);
  size_t at = 0, batch = 1;
  while (at < n) {
    size_t k = batch < n - at ? batch : n - at;
    assert_int_equal(tl_writer_add(w, v + at, k), TL_OK);
    assert_int_equal(tl_writer_flush(w), TL_OK);
    at += k;
    batch = batch * 3 + 1;
  }
  assert_int_equal(tl_writer_count(w), (int64_t)n);
  tl_writer_add_missed(w, 4);
  assert_int_equal(tl_writer_end(w, "complete"), TL_OK);
  tl_store_close(s);

  assert_int_equal(tl_store_open(&s, f->db, TL_STORE_READONLY), TL_OK);
  tl_filter filter;
  tl_filter_init(&filter);
  tl_session_list list;
  assert_int_equal(tl_store_sessions(s, &filter, &list), TL_OK);
  assert_int_equal(list.count, 1);
  tl_session *x = &list.items[0];
  assert_string_equal(x->uuid, uuid);
  assert_string_equal(x->label, "droplet");
  assert_string_equal(x->status, "complete");
  assert_string_equal(x->hostname, "testhost");
  assert_int_equal(x->delay_ns, 50000000);
  assert_int_equal(x->warmup, 3);
  assert_int_equal(x->sample_count, (int64_t)n);
  assert_int_equal(x->missed_periods, 4);
  assert_true(x->ended_ns >= x->started_ns);
  collected c = {malloc(n * sizeof(int64_t)), 0};
  assert_int_equal(tl_store_scan(s, x->id, collect, &c), TL_OK);
  assert_int_equal(c.n, n);
  assert_memory_equal(c.v, v, n * sizeof *v);
  tl_fact_row *rows;
  size_t nrows;
  assert_int_equal(tl_store_tags(s, x->id, &rows, &nrows), TL_OK);
  assert_int_equal(nrows, 1);
  assert_string_equal(rows[0].key, "load");
  assert_string_equal(rows[0].value, "idle");
  tl_fact_rows_free(rows, nrows);
  assert_int_equal(tl_store_facts(s, x->id, &rows, &nrows), TL_OK);
  assert_int_equal(nrows, 2);
  assert_string_equal(rows[0].key, "cpu.model");
  assert_string_equal(rows[0].evidence, "/proc/cpuinfo");
  tl_fact_rows_free(rows, nrows);
  tl_store_stats st;
  assert_int_equal(tl_store_info(s, &st), TL_OK);
  assert_int_equal(st.samples, (int64_t)n);
  assert_int_equal(st.blocks, 3); /* 4096 + 4096 + 1808 */
  assert_true(st.sample_bytes < 4 * (int64_t)n);
  assert_int_equal(tl_store_check(s, NULL, NULL), TL_OK);
  tl_session_list_free(&list);
  free(c.v);
  free(v);
  tl_store_close(s);
}

static void filters(void **state) {
  fixture *f = *state;
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  const char *labels[] = {"vbox", "macos", "droplet"};
  for (int i = 0; i < 3; i++)
    for (int d = 0; d < 2; d++) {
      tl_session_spec spec = spec_for(labels[i], d * 50000000LL);
      tl_writer *w;
      char uuid[37];
      int64_t v[3] = {1, 2, 3};
      assert_int_equal(tl_writer_begin(s, &spec, &w, uuid), TL_OK);
      assert_int_equal(tl_writer_add(w, v, 3), TL_OK);
      assert_int_equal(tl_writer_end(w, "complete"), TL_OK);
    }
  tl_filter flt;
  tl_filter_init(&flt);
  const char *want[] = {"macos", "vbox"};
  flt.labels = want;
  flt.label_count = 2;
  flt.delay_ns = 50000000;
  tl_session_list list;
  assert_int_equal(tl_store_sessions(s, &flt, &list), TL_OK);
  assert_int_equal(list.count, 2);
  tl_session_list_free(&list);
  /* Tag filters bind their values: a quote is just a character. */
  const char *k[] = {"load"}, *v[] = {"idle' OR '1'='1"};
  tl_filter_init(&flt);
  flt.tag_keys = k;
  flt.tag_values = v;
  flt.tag_count = 1;
  assert_int_equal(tl_store_sessions(s, &flt, &list), TL_OK);
  assert_int_equal(list.count, 0);
  assert_null(list.items); /* the room reserved for every session is given back */
  v[0] = "idle";
  assert_int_equal(tl_store_sessions(s, &flt, &list), TL_OK);
  assert_int_equal(list.count, 6);
  tl_session_list_free(&list);
  tl_filter_init(&flt);
  flt.host = "0123";
  assert_int_equal(tl_store_sessions(s, &flt, &list), TL_OK);
  assert_int_equal(list.count, 6);
  tl_session_list_free(&list);
  flt.host = "otherhost";
  assert_int_equal(tl_store_sessions(s, &flt, &list), TL_OK);
  assert_int_equal(list.count, 0);
  char **names;
  size_t n;
  assert_int_equal(tl_store_labels(s, &names, &n), TL_OK);
  assert_int_equal(n, 3);
  assert_string_equal(names[0], "droplet");
  tl_strings_free(names, n);
  tl_store_close(s);
}

/* Sessions that record a fact or a tag, found without listing the others:
 * exactly those whose own facts (a fact added later winning) and tags hold
 * a value; with a limit, that many of them. test_pg asks a server the same. */
static void recorded_fact_filter(void **state) {
  fixture *f = *state;
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  tl_test_add_recording_sessions(s);
  tl_test_assert_recorded_filter(s);
  tl_store_close(s);
}

/* A listing names each session's own host from the hosts read once (its
 * rows carry the host's id), in one snapshot with the rows that it opens
 * and closes itself, leaving a caller's read open. A session whose host
 * row is gone (a file written with its foreign keys off) is left out, as a
 * join leaves it. test_pg asks a server the same. */
static void sessions_name_their_hosts(void **state) {
  fixture *f = *state;
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  tl_test_add_host_sessions(s);
  tl_test_assert_host_names(s);
  assert_true(sqlite3_get_autocommit(tl__sqlite_db(s))); /* its own snapshot, closed */
  assert_int_equal(tl_store_read_begin(s), TL_OK);
  tl_test_assert_host_names(s);
  assert_false(sqlite3_get_autocommit(tl__sqlite_db(s))); /* the caller's, still open */
  tl_store_read_end(s);
  tl_store_close(s);
  tl_test_exec_sql(f->db, "PRAGMA foreign_keys = OFF; DELETE FROM hosts WHERE hostname = 'db'");
  assert_int_equal(tl_store_open(&s, f->db, TL_STORE_READONLY), TL_OK);
  tl_filter flt;
  tl_filter_init(&flt);
  tl_session_list list;
  assert_int_equal(tl_store_sessions(s, &flt, &list), TL_OK);
  assert_int_equal(list.count, 8);
  for (size_t i = 0; i < list.count; i++)
    assert_string_not_equal(list.items[i].hostname, "db");
  tl_session_list_free(&list);
  tl_store_close(s);
}

/* The hosts' names are found by id however the rows came, and a name
 * the pool already holds is the pool's. */
static void host_names_by_id(void **state) {
  (void)state;
  tl_strpool *pool = tl_strpool_new();
  tl__host_names h = {NULL, 0, 0};
  static const int64_t ids[] = {9, 2, 40, 5};
  static const char *const names[] = {"nine", "two", "forty", "five"};
  for (int i = 0; i < 4; i++)
    assert_int_equal(tl__host_names_add(&h, pool, ids[i], names[i], strlen(names[i]), "fp", 2),
                     TL_OK);
  tl__host_names_ready(&h);
  for (int i = 0; i < 4; i++) {
    const tl__host_name *x = tl__host_names_find(&h, ids[i]);
    assert_non_null(x);
    assert_string_equal(x->hostname, names[i]);
    assert_ptr_equal(x->fingerprint, tl_strpool_get(pool, "fp"));
  }
  assert_null(tl__host_names_find(&h, 3));
  assert_null(tl__host_names_find(&h, 41));
  tl__host_names_free(&h);
  assert_null(tl__host_names_find(&h, 9));
  tl_strpool_free(pool);
}

/* One builder makes the session filter's SQL for both backends: the two
 * dialects' queries differ only in how a parameter is marked and in the
 * columns that judge a running session, and bind the same values in the
 * same order (the host once, however often the query names it). */
static void one_filter_builder_for_both_dialects(void **state) {
  fixture *f = *state;
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  const char *labels[] = {"a", "b"}, *k[] = {"load"}, *v[] = {"idle"};
  tl_filter flt;
  tl_filter_init(&flt);
  flt.labels = labels;
  flt.label_count = 2;
  flt.probe = "uv";
  flt.delay_ns = 5;
  flt.since_ns = 6;
  flt.until_ns = 7;
  flt.host = "h";
  flt.tag_keys = k;
  flt.tag_values = v;
  flt.tag_count = 1;
  flt.status = "interrupted";
  const char *facts[] = {"mem.total_bytes"};
  flt.fact_keys = facts;
  flt.fact_key_count = 1;
  flt.has_tag = "zone";
  flt.limit = 3;
  static const tl__sql_dialect question = {'?', "s.pid, s.heartbeat_ns", "session_facts", "s.id"},
                               dollar = {'$', "0, 0", "session_facts", "s.id"};
  tl__session_query *a = malloc(sizeof *a), *b = malloc(sizeof *b);
  assert_int_equal(tl__session_query_build(s, &question, &flt, a), TL_OK);
  assert_int_equal(tl__session_query_build(s, &dollar, &flt, b), TL_OK);
  assert_int_equal(a->n, 13);
  assert_int_equal(b->n, a->n);
  for (int i = 0; i < a->n; i++) {
    assert_true((a->params[i].text == NULL) == (b->params[i].text == NULL));
    if (a->params[i].text)
      assert_string_equal(a->params[i].text, b->params[i].text);
    else
      assert_int_equal(a->params[i].num, b->params[i].num);
  }
  assert_string_equal(a->params[0].text, "a");
  assert_int_equal(a->params[3].num, 5);
  assert_string_equal(a->params[6].text, "h");
  assert_string_equal(a->params[9].text, "mem.total_bytes");
  assert_string_equal(a->params[10].text, "zone");
  assert_string_equal(a->params[11].text, "interrupted");
  assert_int_equal(a->params[12].num, 3);
  /* The same text once the marks and the running columns agree. */
  char *t = strstr(b->sql, "0, 0");
  assert_non_null(t);
  char *same = malloc(sizeof b->sql + 32);
  snprintf(same, sizeof b->sql + 32, "%.*ss.pid, s.heartbeat_ns%s", (int)(t - b->sql), b->sql,
           t + 4);
  for (char *c = same; *c; c++)
    if (*c == '$')
      *c = '?';
  assert_string_equal(same, a->sql);
  assert_non_null(strstr(a->sql, "s.host_id IN (SELECT h.id FROM hosts h WHERE h.hostname = ?7 OR "
                                 "substr(h.fingerprint, 1, length(?7)) = ?7)"));
  assert_non_null(strstr(a->sql, "(s.status = ?12 OR s.status = 'running')"));
  assert_non_null(
      strstr(a->sql, "FROM session_facts x WHERE x.session_id = s.id AND x.key IN (?10)"));
  assert_non_null(strstr(a->sql, "t.key = ?11 AND t.value NOT IN ('', 'unknown')"));
  assert_non_null(strstr(a->sql, " LIMIT ?13"));
  assert_null(strstr(a->sql, "ORDER BY"));
  /* More than fit is refused, with the filter's own message. */
  const char *many[TL__SQL_PARAMS_MAX + 1];
  for (size_t i = 0; i <= TL__SQL_PARAMS_MAX; i++)
    many[i] = "x";
  tl_filter_init(&flt);
  flt.labels = many;
  flt.label_count = TL__SQL_PARAMS_MAX + 1;
  assert_int_equal(tl__session_query_build(s, &question, &flt, a), TL_EINVAL);
  assert_string_equal(tl_store_errmsg(s), "filter is too large");
  free(same);
  free(a);
  free(b);
  tl_store_close(s);
}

/* The label summary of tlstore info comes from one query: with many
 * sessions per label, started in another order than they were written and
 * of two statuses, it holds exactly what counting the session list (oldest
 * first) by hand gives: sessions, samples, and each label's delays in the
 * order of their first sessions. */
static void label_summaries(void **state) {
  fixture *f = *state;
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  tl_label_summary *rows;
  size_t n;
  assert_int_equal(tl_store_label_summaries(s, &rows, &n), TL_OK);
  assert_int_equal(n, 0);
  tl_label_summaries_free(rows, n);
  static const char *labels[] = {"zeta", "alpha", "mid-1"};
  static const int64_t delays[] = {50000000, 0, 1000000, 250000};
  enum { PER_LABEL = 60, SESSIONS = 3 * PER_LABEL };
  int64_t samples_of[3] = {0}, interrupted = 0;
  for (int i = 0; i < SESSIONS; i++) {
    tl_session_spec spec = spec_for(labels[i % 3], delays[(i * 7 / 3) % 4]);
    /* 37 is prime to 180: every start once, in a shuffled order. */
    spec.started_ns = 1700000000000000000LL + (int64_t)((i * 37) % SESSIONS) * 1000000000LL;
    tl_writer *w;
    char uuid[37];
    assert_int_equal(tl_writer_begin(s, &spec, &w, uuid), TL_OK);
    int64_t v[8];
    size_t nv = (size_t)(i % 8) + 1;
    for (size_t k = 0; k < nv; k++)
      v[k] = 1000000 + (int64_t)k;
    assert_int_equal(tl_writer_add(w, v, nv), TL_OK);
    interrupted += i % 5 == 0;
    assert_int_equal(tl_writer_end(w, i % 5 == 0 ? "interrupted" : "complete"), TL_OK);
    samples_of[i % 3] += (int64_t)nv;
  }
  assert_true(interrupted > 0);
  tl_filter all;
  tl_filter_init(&all);
  tl_session_list list;
  assert_int_equal(tl_store_sessions(s, &all, &list), TL_OK);
  assert_int_equal(list.count, SESSIONS);
  assert_int_equal(tl_store_label_summaries(s, &rows, &n), TL_OK);
  assert_int_equal(n, 3);
  const char *sorted[] = {"alpha", "mid-1", "zeta"};
  const int64_t *samples_sorted[] = {&samples_of[1], &samples_of[2], &samples_of[0]};
  for (size_t k = 0; k < n; k++) {
    assert_string_equal(rows[k].label, sorted[k]);
    assert_int_equal(rows[k].sessions, PER_LABEL);
    assert_int_equal(rows[k].samples, *samples_sorted[k]);
    int64_t first[4];
    size_t nd = 0;
    for (size_t i = 0; i < list.count; i++) {
      if (strcmp(list.items[i].label, sorted[k]) != 0)
        continue;
      size_t j = 0;
      while (j < nd && first[j] != list.items[i].delay_ns)
        j++;
      if (j == nd)
        first[nd++] = list.items[i].delay_ns;
    }
    assert_int_equal(rows[k].delay_count, nd);
    for (size_t j = 0; j < nd; j++)
      assert_int_equal(rows[k].delays_ns[j], first[j]);
  }
  tl_label_summaries_free(rows, n);
  tl_session_list_free(&list);
  tl_store_close(s);
}

static void bad_session_specs(void **state) {
  fixture *f = *state;
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  tl_writer *w;
  char uuid[37];
  tl_session_spec spec = spec_for("bad label", 0);
  assert_int_equal(tl_writer_begin(s, &spec, &w, uuid), TL_EINVAL);
  spec = spec_for("ok", -1);
  assert_int_equal(tl_writer_begin(s, &spec, &w, uuid), TL_EINVAL);
  const char *keys[] = {"k"}, *values[] = {"a\nb"};
  spec = spec_for("ok", 0);
  spec.tag_keys = keys;
  spec.tag_values = values;
  assert_int_equal(tl_writer_begin(s, &spec, &w, uuid), TL_EINVAL);
  spec = spec_for("ok", 0);
  assert_int_equal(tl_writer_begin(s, &spec, &w, uuid), TL_OK);
  /* Nothing to add, before anything was added: no buffer, no samples (the
   * sanitizer build fails on a copy from NULL here). */
  assert_int_equal(tl_writer_add(w, NULL, 0), TL_OK);
  int64_t neg = -5;
  assert_int_equal(tl_writer_add(w, &neg, 1), TL_EINVAL);
  assert_int_equal(tl_writer_end(w, "complete"), TL_OK);
  tl_store_stats st;
  assert_int_equal(tl_store_info(s, &st), TL_OK);
  assert_int_equal(st.sessions, 1);
  assert_int_equal(st.samples, 0);
  tl_store_close(s);
}

static void refusals(void **state) {
  fixture *f = *state;
  tl_store *s;
  /* Missing file, read-only: not found, nothing created. */
  assert_int_equal(tl_store_open(&s, f->db, TL_STORE_READONLY), TL_ENOTFOUND);
  assert_non_null(strstr(tl_store_errmsg(s), "does not exist"));
  tl_store_close(s);
  assert_int_not_equal(access(f->db, F_OK), 0);
  /* A text file. */
  const char *text = "hello, this is not a database at all, just some words.\n";
  assert_int_equal(tl_test_write_file(f->db, text, strlen(text)), 0);
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_ENOTDB);
  assert_non_null(strstr(tl_store_errmsg(s), "not a tl database"));
  tl_store_close(s);
  /* Another program's SQLite database. */
  unlink(f->db);
  sqlite3 *db;
  assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
  assert_int_equal(sqlite3_exec(db, "CREATE TABLE t(x)", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(db);
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_ENOTDB);
  assert_non_null(strstr(tl_store_errmsg(s), "another program"));
  tl_store_close(s);
  /* A database from a newer tl. */
  unlink(f->db);
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  tl_store_close(s);
  assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
  char sql[64];
  snprintf(sql, sizeof sql, "PRAGMA user_version = %d", tl_schema_latest() + 1);
  assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(db);
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_ENEWER);
  assert_non_null(strstr(tl_store_errmsg(s), "newer"));
  tl_store_close(s);
  /* A folder. */
  assert_int_equal(tl_store_open(&s, f->dir, 0), TL_EINVAL);
  tl_store_close(s);
}

static void migrates_empty_file(void **state) {
  fixture *f = *state;
  assert_int_equal(tl_test_write_file(f->db, "", 0), 0);
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  assert_int_equal(tl_store_schema_version(s), tl_schema_latest());
  assert_int_equal(tl_store_check(s, NULL, NULL), TL_OK);
  tl_store_close(s);
  /* Opening again applies nothing and keeps the version. */
  assert_int_equal(tl_store_open(&s, f->db, TL_STORE_READONLY), TL_OK);
  assert_int_equal(tl_store_schema_version(s), tl_schema_latest());
  tl_store_close(s);
}

/* A database of one session of 10000 samples (3 blocks) at path; its UUID
 * in uuid. */
/* A session of 10,000 samples in three blocks of the given codec. */
static void three_blocks(const char *path, int codec, char uuid[37]) {
  tl_store *s;
  assert_int_equal(tl_store_open(&s, path, 0), TL_OK);
  assert_int_equal(tl_store_set_codec(s, codec), TL_OK);
  tl_session_spec spec = spec_for("x", 0);
  tl_writer *w;
  int64_t v[10000];
  for (int i = 0; i < 10000; i++)
    v[i] = 1000000 + (i * 7919) % 300000;
  assert_int_equal(tl_writer_begin(s, &spec, &w, uuid), TL_OK);
  assert_int_equal(tl_writer_add(w, v, 10000), TL_OK);
  assert_int_equal(tl_writer_end(w, "complete"), TL_OK);
  tl_store_close(s);
}

typedef struct {
  char text[2048];
} problems;

static void gather(void *ctx, const char *problem) {
  problems *p = ctx;
  size_t len = strlen(p->text);
  snprintf(p->text + len, sizeof p->text - len, "%s\n", problem);
}

static int count_only(void *ctx, const int64_t *v, size_t n) {
  (void)v;
  *(int64_t *)ctx += (int64_t)n;
  return 0;
}

/* A damage done to a database by SQL, and what check and readers say of it. */
typedef struct {
  const char *sql, *said;
} damage;

/* Does damage k (d) to the database at path, whose session uuid it hits:
 * check must name the session and the damage. Returns the database opened
 * read-only, for the caller to see what readers say. */
static tl_store *damage_and_check(const char *path, const damage *d, size_t k, const char *uuid) {
  tl_test_exec_sql(path, d->sql);
  tl_store *s;
  assert_int_equal(tl_store_open(&s, path, TL_STORE_READONLY), TL_OK);
  problems p = {""};
  assert_int_equal(tl_store_check(s, gather, &p), TL_ECORRUPT);
  if (!strstr(p.text, uuid) || !strstr(p.text, d->said))
    fail_msg("damage %zu: check said '%s', want '%s'", k, p.text, d->said);
  return s;
}

/* A reader's failure on s names the session and the damage as check did. */
static void assert_reader_said(tl_store *s, const damage *d, const char *uuid) {
  assert_non_null(strstr(tl_store_errmsg(s), uuid));
  assert_non_null(strstr(tl_store_errmsg(s), d->said));
}

/* Each damage the issue tracker saw give wrong numbers silently: check names
 * the session and the block, and reading the samples (what a report, an
 * export and a merge do) fails with the same, never a different number. */
static void check_finds_damage(void **state) {
  fixture *f = *state;
  static const damage damages[] = {
      /* one bit flipped inside block 1 */
      {"UPDATE sample_blocks SET data = substr(data, 1, 99) || CASE WHEN substr(data, 100, 1) = "
       "x'01' THEN x'03' ELSE x'01' END || substr(data, 101) WHERE seq = 1",
       "block 1: checksum mismatch"},
      /* half of block 0 set to its max: the payload of another block, the old header */
      {"UPDATE sample_blocks SET data = substr(data, 1, 8) || (SELECT substr(b.data, 9) FROM "
       "sample_blocks b WHERE b.seq = 2) WHERE seq = 0",
       "block 0: checksum mismatch"},
      /* a block deleted */
      {"DELETE FROM sample_blocks WHERE seq = 1", "block 1: missing"},
      /* the last block deleted: the count says so */
      {"DELETE FROM sample_blocks WHERE seq = 2", "a block was lost"},
      /* an absurd min_ns */
      {"UPDATE sample_blocks SET min_ns = 9223372036854000000, max_ns = 9223372036854775807 "
       "WHERE seq = 0",
       "block 0: checksum mismatch"},
      {"UPDATE sample_blocks SET min_ns = 9223372036854000000 WHERE seq = 0",
       "block 0: impossible count, min or max"},
      /* an unknown codec, and a block that is not one at all */
      {"UPDATE sample_blocks SET codec = 7 WHERE seq = 2", "block 2: unknown codec"},
      {"UPDATE sample_blocks SET data = x'ff' WHERE seq = 2", "block 2: no valid block header"},
      /* a session that claims more than its blocks hold */
      {"UPDATE sessions SET sample_count = 10001", "a block was lost"},
  };
  for (size_t run = 0; run < 2 * (sizeof damages / sizeof *damages); run++) {
    size_t k = run / 2; /* each damage to blocks of either codec */
    char uuid[37];
    unlink(f->db);
    three_blocks(f->db, run % 2 ? TL_CODEC_PACKED : TL_CODEC_VARINT, uuid);
    tl_store *s = damage_and_check(f->db, &damages[k], k, uuid);
    int64_t n = 0;
    assert_int_equal(tl_store_scan(s, 1, count_only, &n), TL_ECORRUPT);
    assert_reader_said(s, &damages[k], uuid);
    tl_store_close(s);
  }
}

/* A database of schema version 1 (blocks without a header) migrates: every
 * block that decodes gets its header and reads back the same; one that
 * does not stays as it was and fails its checksum, as it failed to decode
 * before. */
static void migrates_v1_blocks(void **state) {
  fixture *f = *state;
  char uuid[37];
  three_blocks(f->db, TL_CODEC_VARINT, uuid);
  tl_store *s;
  collected before = {malloc(10000 * sizeof(int64_t)), 0};
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  assert_int_equal(tl_store_scan(s, 1, collect, &before), TL_OK);
  tl_store_close(s);
  /* Back to version 1: the payload alone, codec 1, and a second session
   * whose only block is damaged. */
  tl_test_exec_sql(f->db,
                   "UPDATE sample_blocks SET data = substr(data, 9);"
                   "DROP TABLE session_summaries;"
                   "INSERT INTO sessions (uuid, run_uuid, host_id, label, probe, delay_ns, warmup, "
                   "started_ns, heartbeat_ns, pid, status, sample_count, tl_version, "
                   "libuv_version, command_line) SELECT 'damaged', run_uuid, host_id, label, "
                   "probe, delay_ns, warmup, started_ns, heartbeat_ns, pid, status, 2, "
                   "tl_version, libuv_version, command_line FROM sessions;"
                   "INSERT INTO sample_blocks VALUES (2, 0, 2, 0, 10, 1, x'0b01');"
                   "PRAGMA user_version = 1");
  /* A reader cannot upgrade it and says how. */
  assert_int_equal(tl_store_open(&s, f->db, TL_STORE_READONLY), TL_EREADONLY);
  assert_non_null(strstr(tl_store_errmsg(s), "needs an upgrade"));
  tl_store_close(s);
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  assert_int_equal(tl_store_schema_version(s), tl_schema_latest());
  collected after = {malloc(10000 * sizeof(int64_t)), 0};
  assert_int_equal(tl_store_scan(s, 1, collect, &after), TL_OK);
  assert_int_equal(after.n, 10000);
  assert_memory_equal(before.v, after.v, 10000 * sizeof(int64_t));
  problems p = {""};
  assert_int_equal(tl_store_check(s, gather, &p), TL_ECORRUPT);
  assert_non_null(strstr(p.text, "session damaged, block 0"));
  assert_null(strstr(p.text, uuid));
  tl_store_close(s);
  free(before.v);
  free(after.v);
}

/* ======================================================================== */
/* Session summaries                                                         */

static int by_value(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* The summary of v[0..n) by brute force: sorted, summed, bucketed. */
static void brute_summary(const int64_t *v, size_t n, tl_summary *out, int64_t *hist) {
  memset(out, 0, sizeof *out);
  int64_t *sorted = malloc(n * sizeof *sorted + 1);
  memcpy(sorted, v, n * sizeof *v);
  qsort(sorted, n, sizeof *sorted, by_value);
  memset(hist, 0, TL_SUMMARY_BUCKETS * sizeof *hist);
  out->count = (int64_t)n;
  for (size_t i = 0; i < n; i++) {
    out->sum += (uint64_t)v[i];
    out->sumsq += (unsigned __int128)(uint64_t)v[i] * (uint64_t)v[i];
    hist[tl_summary_bucket(v[i])]++;
  }
  if (n) {
    out->min_ns = sorted[0];
    out->max_ns = sorted[n - 1];
    for (size_t k = 0; k < TL_SUMMARY_PCTS; k++)
      out->pct_ns[k] = sorted[tl_rank(tl_summary_pcts[k], (int64_t)n) - 1];
    out->hist_first = tl_summary_bucket(out->min_ns);
    out->hist_len = tl_summary_bucket(out->max_ns) - out->hist_first + 1;
  }
  out->hist = hist + out->hist_first;
  free(sorted);
}

typedef struct {
  tl_summary s;
  int64_t *hist;
  size_t calls;
} summary_copy;

static int copy_summary(void *ctx, size_t index, const tl_summary *m) {
  summary_copy *c = ctx;
  assert_int_equal(index, c->calls);
  c->calls++;
  c->s = *m;
  memcpy(c->hist, m->hist, m->hist_len * sizeof *m->hist);
  c->s.hist = c->hist;
  return 0;
}

static void assert_summary_of(tl_store *s, int64_t id, const int64_t *v, size_t n) {
  static int64_t want_hist[TL_SUMMARY_BUCKETS], got_hist[TL_SUMMARY_BUCKETS];
  tl_summary want;
  brute_summary(v, n, &want, want_hist);
  summary_copy got = {.hist = got_hist};
  assert_int_equal(tl_store_summaries(s, &id, 1, copy_summary, &got), TL_OK);
  assert_int_equal(got.calls, 1);
  assert_int_equal(got.s.count, want.count);
  assert_int_equal(got.s.min_ns, want.min_ns);
  assert_int_equal(got.s.max_ns, want.max_ns);
  for (size_t k = 0; k < TL_SUMMARY_PCTS; k++)
    assert_int_equal(got.s.pct_ns[k], want.pct_ns[k]);
  assert_true(tl__summary_equal(&got.s, &want));
}

/* Data shaped to take every path: exact buckets below 2^11 ns, ties, a far
 * outlier, more than a million samples in the bucket of a rank (counted
 * value by value), and in a bucket too wide to count (cut into parts). */
enum { SHAPES = 6 };
static size_t shape(int k, int64_t **out) {
  size_t n = k == 4 || k == 5 ? 1200000 : k == 3 ? 0 : 20000;
  int64_t *v = malloc(n * sizeof *v + 8);
  for (size_t i = 0; i < n; i++) {
    uint64_t r = (uint64_t)i * 2654435761u % 1000003;
    switch (k) {
    case 0:
      v[i] = (int64_t)(r % 2048);
      break; /* exact */
    case 1:
      v[i] = 1000000 + (int64_t)(r % 50000) + (i == 77 ? 4000000000LL : 0);
      break;
    case 2:
      v[i] = 5000;
      break; /* one value */
    case 4:
      v[i] = (1LL << 25) + (int64_t)(r % 16384);
      break; /* counted */
    default:
      v[i] = (1LL << 40) + (int64_t)(r * 500);
      break; /* cut */
    }
  }
  *out = v;
  return n;
}

static int64_t write_session(tl_store *s, const int64_t *v, size_t n, const char *status) {
  tl_session_spec spec = spec_for("sum", 0);
  tl_writer *w;
  char uuid[37];
  assert_int_equal(tl_writer_begin(s, &spec, &w, uuid), TL_OK);
  int64_t id = tl_writer_session_id(w);
  /* Uneven batches, each committed: the open block is rewritten as it
   * fills, and the summary must count each sample once. */
  for (size_t at = 0, batch = 1; at < n; at += batch, batch = batch * 5 + 3) {
    size_t k = batch < n - at ? batch : n - at;
    assert_int_equal(tl_writer_add(w, v + at, k), TL_OK);
    assert_int_equal(tl_writer_flush(w), TL_OK);
  }
  assert_int_equal(tl_writer_end(w, status), TL_OK);
  return id;
}

static int64_t stored_summaries(const char *path) {
  sqlite3 *db;
  sqlite3_stmt *st;
  int64_t n = -1;
  assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
  if (sqlite3_prepare_v2(db, "SELECT count(*) FROM session_summaries", -1, &st, NULL) ==
          SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return n;
}

/* Every session's stored summary (and a running one's, computed when read)
 * equals the brute-force one; a database of schema version 2 migrates to
 * the same summaries; a merge and an import carry them. */
/* The summarizer fed sample by sample, as the writer feeds it, then
 * finished against a session the store does not have: the percentiles come
 * from the held samples or the watched windows, or the finish would read
 * blocks that are not there (TL_ECORRUPT). The answer, when there is one,
 * is the sort's. */
static int fed_summary(tl_store *s, tl__summarizer *z, const int64_t *v, size_t n) {
  tl__summary_begin(z);
  for (size_t at = 0, batch = 1; at < n; at += batch, batch = batch * 3 + 1)
    tl__summary_add(z, v + at, batch < n - at ? batch : n - at);
  const tl_summary *got;
  int err = tl__summary_finish(s, z, 999999, &got);
  if (err == TL_OK) {
    static int64_t want_hist[TL_SUMMARY_BUCKETS];
    tl_summary want;
    brute_summary(v, n, &want, want_hist);
    assert_int_equal(got->count, want.count);
    for (size_t k = 0; k < TL_SUMMARY_PCTS; k++)
      assert_int_equal(got->pct_ns[k], want.pct_ns[k]);
  }
  return err;
}

static void summary_watch_windows(void **state) {
  fixture *f = *state;
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  tl__summarizer *z = tl__summarizer_new();
  assert_non_null(z);
  enum { N = 1500000 };
  int64_t *v = malloc(N * sizeof *v);
  uint64_t r = 1;
  for (size_t i = 0; i < N; i++) {
    r = r * 6364136223846793005ULL + 1442695040888963407ULL;
    uint64_t u = r >> 33;
    /* Timer-like: a body of 50 us above 1 ms, a slow one in 500 up to 4 ms,
     * one in 50,000 beyond. */
    v[i] = 1000000 + (int64_t)(u % 50000) + (u % 500 == 0 ? (int64_t)(u % 3000000) : 0) +
           (u % 50000 == 7 ? 40000000 : 0);
  }
  /* Held whole: up to the first windows, and just past them. */
  size_t held[] = {1, 2, 100, 8191, 8192, 8193, 20000};
  for (size_t k = 0; k < sizeof held / sizeof *held; k++)
    assert_int_equal(fed_summary(s, z, v, held[k]), TL_OK);
  /* Steady data, the summarizer used again: every rank from the windows. */
  assert_int_equal(fed_summary(s, z, v, N), TL_OK);
  assert_int_equal(fed_summary(s, z, v, 300000), TL_OK);
  /* Data that moves after the windows are placed: the blocks must be read. */
  for (size_t i = 10000; i < N; i++)
    v[i] += 3000000;
  assert_int_equal(fed_summary(s, z, v, N), TL_ECORRUPT);
  int64_t moved = write_session(s, v, N, "complete");
  assert_summary_of(s, moved, v, N);
  /* One value: each rank's bucket, cut to the extremes, is that value. */
  for (size_t i = 0; i < N; i++)
    v[i] = 5000;
  assert_int_equal(fed_summary(s, z, v, N), TL_OK);
  /* Buckets too wide to count, whose windows collect instead, until they
   * are full (these hold every sample): up to that the ranks come from
   * them, past it from the blocks. */
  for (size_t i = 0; i < N; i++)
    v[i] = (1LL << 40) + (int64_t)((uint64_t)i * 2654435761u % 1000003) * 500;
  assert_int_equal(fed_summary(s, z, v, 60000), TL_OK);
  assert_int_equal(fed_summary(s, z, v, N), TL_ECORRUPT);
  tl__summarizer_free(z);
  free(v);
  tl_store_close(s);
}

static void summaries_are_exact(void **state) {
  fixture *f = *state;
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  int64_t *v[SHAPES], ids[SHAPES];
  size_t n[SHAPES];
  for (int k = 0; k < SHAPES; k++) {
    n[k] = shape(k, &v[k]);
    ids[k] = write_session(s, v[k], n[k], k == 1 ? "interrupted" : "complete");
  }
  for (int k = 0; k < SHAPES; k++)
    assert_summary_of(s, ids[k], v[k], n[k]);
  assert_int_equal(stored_summaries(f->db), SHAPES);
  assert_int_equal(tl_store_check(s, NULL, NULL), TL_OK);
  tl_store_close(s);

  /* Back to version 2: no summaries. Migration 3 makes the same ones. */
  tl_test_exec_sql(f->db, "CREATE TABLE old AS SELECT * FROM session_summaries;"
                          "DROP TABLE session_summaries; PRAGMA user_version = 2");
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  assert_int_equal(tl_store_schema_version(s), tl_schema_latest());
  for (int k = 0; k < SHAPES; k++)
    assert_summary_of(s, ids[k], v[k], n[k]);
  tl_store_close(s);
  sqlite3 *db;
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
  assert_int_equal(sqlite3_prepare_v2(db,
                                      "SELECT count(*), sum(o.data = m.data) FROM old o JOIN "
                                      "session_summaries m USING (session_id)",
                                      -1, &st, NULL),
                   SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  assert_int_equal(sqlite3_column_int64(st, 0), SHAPES);
  assert_int_equal(sqlite3_column_int64(st, 1), SHAPES);
  sqlite3_finalize(st);
  sqlite3_exec(db, "DROP TABLE old", NULL, NULL, NULL);
  sqlite3_close(db);

  /* Merged into another file. */
  char *other = tl_test_path(f->dir, "merged.db");
  assert_int_equal(tl_store_open(&s, other, 0), TL_OK);
  const char *from[] = {f->db};
  assert_int_equal(tl_store_merge(s, from, 1, NULL), TL_OK);
  assert_int_equal(stored_summaries(other), SHAPES);
  /* Each copied as it is, byte for byte. */
  assert_int_equal(sqlite3_open(other, &db), SQLITE_OK);
  char *attach = sqlite3_mprintf("ATTACH %Q AS src", f->db);
  assert_int_equal(sqlite3_exec(db, attach, NULL, NULL, NULL), SQLITE_OK);
  sqlite3_free(attach);
  assert_int_equal(sqlite3_prepare_v2(db,
                                      "SELECT count(*) FROM sessions d JOIN session_summaries dm "
                                      "ON dm.session_id = d.id JOIN src.sessions s USING (uuid) "
                                      "JOIN src.session_summaries sm ON sm.session_id = s.id "
                                      "WHERE dm.data = sm.data",
                                      -1, &st, NULL),
                   SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  assert_int_equal(sqlite3_column_int64(st, 0), SHAPES);
  sqlite3_finalize(st);
  sqlite3_close(db);
  tl_filter flt;
  tl_filter_init(&flt);
  tl_session_list list;
  assert_int_equal(tl_store_sessions(s, &flt, &list), TL_OK);
  assert_int_equal(list.count, SHAPES);
  for (int k = 0; k < SHAPES; k++)
    assert_summary_of(s, list.items[k].id, v[k], n[k]);
  tl_session_list_free(&list);

  /* Imported. */
  char *csv = tl_test_path(f->dir, "in.csv");
  FILE *out = fopen(csv, "w");
  fputs("latency_ns\n", out);
  for (size_t i = 0; i < n[1]; i++)
    fprintf(out, "%lld\n", (long long)v[1][i]);
  fclose(out);
  FILE *in = fopen(csv, "r");
  tl_import_opts o;
  tl_import_opts_init(&o);
  o.format = TL_SAMPLES_CSV;
  o.label = "imported";
  o.probe = "settimeout";
  assert_int_equal(tl_store_import(s, in, &o, NULL, NULL, NULL, NULL, NULL), TL_OK);
  fclose(in);
  assert_int_equal(stored_summaries(other), SHAPES + 1);
  assert_summary_of(s, SHAPES + 1, v[1], n[1]);
  assert_int_equal(tl_store_check(s, NULL, NULL), TL_OK);
  tl_store_close(s);
  free(csv);
  free(other);
  for (int k = 0; k < SHAPES; k++)
    free(v[k]);
}

/* A batch that is not committed leaves the summary as it was, wherever it
 * failed: at its fourth block (after the first ones were summarised), and
 * after every block, when the session's row is updated. The samples stay
 * buffered, the next flush commits them, and the session's summary is that
 * of its samples, each counted once. */
static void failed_batches_leave_the_summary_exact(void **state) {
  fixture *f = *state;
  int64_t *v;
  size_t n = shape(1, &v);
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  tl_session_spec spec = spec_for("sum", 0);
  tl_writer *w;
  char uuid[37];
  assert_int_equal(tl_writer_begin(s, &spec, &w, uuid), TL_OK);
  int64_t id = tl_writer_session_id(w);
  static const char *const fail[] = {
      "CREATE TEMP TRIGGER fail BEFORE INSERT ON sample_blocks WHEN NEW.seq = 3 "
      "BEGIN SELECT RAISE(ABORT, 'refused'); END",
      "CREATE TEMP TRIGGER fail BEFORE UPDATE OF sample_count ON sessions "
      "BEGIN SELECT RAISE(ABORT, 'refused'); END"};
  assert_int_equal(tl_writer_add(w, v, 1000), TL_OK);
  assert_int_equal(tl_writer_flush(w), TL_OK); /* the open block holds 1000 */
  static const size_t from[] = {1000, 13000, 18000};
  for (size_t k = 0; k < 2; k++) {
    assert_int_equal(sqlite3_exec(tl__sqlite_db(s), fail[k], NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(tl_writer_add(w, v + from[k], from[k + 1] - from[k]), TL_OK);
    assert_int_not_equal(tl_writer_flush(w), TL_OK);
    assert_int_equal(sqlite3_exec(tl__sqlite_db(s), "DROP TRIGGER temp.fail", NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(tl_writer_flush(w), TL_OK);
  }
  assert_int_equal(tl_writer_add(w, v + from[2], n - from[2]), TL_OK);
  assert_int_equal(tl_writer_end(w, "complete"), TL_OK);
  assert_int_equal(stored_summaries(f->db), 1);
  assert_summary_of(s, id, v, n);
  assert_int_equal(tl_store_check(s, NULL, NULL), TL_OK);
  tl_store_close(s);
  free(v);
}

/* A running session has no stored summary and is summarised when read; a
 * collector found dead gets one when it is marked interrupted. */
static void summary_of_running_and_stale(void **state) {
  fixture *f = *state;
  int64_t *v;
  size_t n = shape(1, &v);
  assert_int_equal(tl_test_die_mid_session(f->db, spec_for("x", 0), v, n), 0);
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, TL_STORE_READONLY), TL_OK);
  assert_int_equal(stored_summaries(f->db), 0);
  assert_summary_of(s, 1, v, n);
  tl_store_close(s);
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  assert_int_equal(stored_summaries(f->db), 1);
  assert_summary_of(s, 1, v, n);
  tl_store_close(s);
  free(v);
}

static int count_calls(void *ctx, size_t index, const tl_summary *m) {
  (void)index;
  (void)m;
  ++*(int *)ctx;
  return 0;
}

/* A damaged summary is found when read and by check, naming the session:
 * a flipped bit (checksum), another session's summary (a valid checksum,
 * but not this session's count or samples). */
static void damaged_summary(void **state) {
  fixture *f = *state;
  static const damage damages[] = {
      {"UPDATE session_summaries SET data = substr(data, 1, 70) || CASE WHEN substr(data, 71, 1) "
       "= x'01' THEN x'03' ELSE x'01' END || substr(data, 72) WHERE session_id = 1",
       "summary: checksum mismatch"},
      {"UPDATE session_summaries SET data = x'0102' WHERE session_id = 1", "summary: too short"},
      {"UPDATE session_summaries SET data = (SELECT data FROM session_summaries WHERE "
       "session_id = 2) WHERE session_id = 1",
       "summary: its count differs"},
      {"UPDATE session_summaries SET data = (SELECT data FROM session_summaries WHERE "
       "session_id = 3) WHERE session_id = 1",
       "summary: it differs from the session's samples"},
  };
  for (size_t k = 0; k < sizeof damages / sizeof *damages; k++) {
    char uuid[37];
    unlink(f->db);
    three_blocks(f->db, TL_CODEC_DEFAULT, uuid);
    tl_store *s;
    assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
    int64_t other[10000];
    for (int i = 0; i < 10000; i++)
      other[i] = 1000000 + (i * 7919) % 300000 + (i == 5 ? 1 : 0); /* one sample apart */
    write_session(s, other, 5000, "complete");
    write_session(s, other, 10000, "complete");
    tl_store_close(s);
    s = damage_and_check(f->db, &damages[k], k, uuid);
    int64_t id = 1;
    int calls = 0;
    if (k < 3) {
      assert_int_equal(tl_store_summaries(s, &id, 1, count_calls, &calls), TL_ECORRUPT);
      assert_int_equal(calls, 0);
      assert_reader_said(s, &damages[k], uuid);
    }
    tl_store_close(s);
    /* A merge copies a source's summaries only where they agree with its
     * samples (the last damage differs from them only in its sum): the
     * damaged one is made again, and the merged file passes check. */
    char *merged = tl_test_path(f->dir, "merged.db");
    unlink(merged);
    assert_int_equal(tl_store_open(&s, merged, 0), TL_OK);
    const char *from[] = {f->db};
    assert_int_equal(tl_store_merge(s, from, 1, NULL), TL_OK);
    assert_int_equal(stored_summaries(merged), 3);
    problems p = {""};
    if (tl_store_check(s, gather, &p) != TL_OK)
      fail_msg("damage %zu: the merged file's check said '%s'", k, p.text);
    tl_store_close(s);
    free(merged);
  }
}

static void stale_sessions(void **state) {
  fixture *f = *state;
  int64_t two[2] = {1, 2};
  assert_int_equal(tl_test_die_mid_session(f->db, spec_for("x", 0), two, 2), 0);

  /* Read-only opens do not touch it, but show the truth: 'interrupted',
   * ended at its last commit, while the file still says 'running'. */
  tl_store *s;
  tl_filter flt;
  tl_filter_init(&flt);
  tl_session_list list;
  assert_int_equal(tl_store_open(&s, f->db, TL_STORE_READONLY), TL_OK);
  assert_int_equal(tl_store_sessions(s, &flt, &list), TL_OK);
  assert_string_equal(list.items[0].status, "interrupted");
  assert_true(list.items[0].ended_ns > 0);
  tl_session_list_free(&list);
  flt.status = "running";
  assert_int_equal(tl_store_sessions(s, &flt, &list), TL_OK);
  assert_int_equal(list.count, 0);
  tl_session_list_free(&list);
  flt.status = "interrupted";
  assert_int_equal(tl_store_sessions(s, &flt, &list), TL_OK);
  assert_int_equal(list.count, 1);
  tl_session_list_free(&list);
  flt.status = NULL;
  sqlite3_stmt *raw;
  assert_int_equal(
      sqlite3_prepare_v2(tl__sqlite_db(s), "SELECT status FROM sessions", -1, &raw, NULL),
      SQLITE_OK);
  assert_int_equal(sqlite3_step(raw), SQLITE_ROW);
  assert_string_equal((const char *)sqlite3_column_text(raw, 0), "running");
  sqlite3_finalize(raw);
  tl_store_close(s);

  /* A writable open sees that the process is gone and recovers it. */
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  assert_int_equal(tl_store_sessions(s, &flt, &list), TL_OK);
  assert_int_equal(list.count, 1);
  assert_string_equal(list.items[0].status, "interrupted");
  assert_int_equal(list.items[0].sample_count, 2);
  tl_session_list_free(&list);
  assert_int_equal(tl_store_check(s, NULL, NULL), TL_OK);
  tl_store_close(s);
}

static void stale_by_heartbeat(void **state) {
  fixture *f = *state;
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  tl_session_spec spec = spec_for("x", 0);
  spec.hostname = "some-other-host"; /* its pid means nothing here */
  tl_writer *w;
  char uuid[37];
  assert_int_equal(tl_writer_begin(s, &spec, &w, uuid), TL_OK);
  int n = -1;
  assert_int_equal(tl_store_recover_stale(s, 3600LL * 1000000000LL, &n), TL_OK);
  assert_int_equal(n, 0);
  assert_int_equal(tl_store_recover_stale(s, -1, &n), TL_OK); /* any heartbeat is too old */
  assert_int_equal(n, 1);
  assert_int_equal(tl_writer_end(w, "complete"), TL_OK);
  tl_store_close(s);
}

static int count_steps(void *ctx) {
  ++*(int64_t *)ctx;
  return 0;
}

/* The SQLite instructions tl_store_recover_stale runs on s. */
static int64_t recover_steps(tl_store *s) {
  int64_t steps = 0;
  sqlite3_progress_handler(tl__sqlite_db(s), 1, count_steps, &steps);
  assert_int_equal(tl_store_recover_stale(s, 3600LL * 1000000000LL, NULL), TL_OK);
  sqlite3_progress_handler(tl__sqlite_db(s), 0, NULL, NULL);
  return steps;
}

/* Every open for writing looks for stale sessions: its work must follow the
 * running sessions, not every session the file holds. */
static void stale_search_reads_only_running(void **state) {
  fixture *f = *state;
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  tl_session_spec spec = spec_for("x", 0);
  tl_writer *w;
  char uuid[37];
  assert_int_equal(tl_writer_begin(s, &spec, &w, uuid), TL_OK);
  assert_int_equal(tl_writer_end(w, "complete"), TL_OK);
  int64_t few = recover_steps(s);
  /* 20,000 more finished sessions of the same host, written directly. */
  assert_int_equal(sqlite3_exec(tl__sqlite_db(s),
                                "WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k "
                                "WHERE i < 20000) INSERT INTO sessions (uuid, run_uuid, host_id, "
                                "label, probe, delay_ns, warmup, started_ns, ended_ns, "
                                "heartbeat_ns, pid, status, tl_version, libuv_version, "
                                "command_line) SELECT 'u' || i, 'r', host_id, label, probe, "
                                "delay_ns, 0, started_ns, ended_ns, heartbeat_ns, pid, "
                                "'complete', tl_version, libuv_version, command_line FROM k, "
                                "sessions WHERE sessions.id = 1",
                                NULL, NULL, NULL),
                   SQLITE_OK);
  int64_t many = recover_steps(s);
  assert_true(many < 2 * few + 100);
  tl_store_close(s);
}

/* The status every reader sees for the file's only session. */
static void expect_status(const char *db, const char *status) {
  tl_session_list list;
  tl_store *s = tl_test_sessions(db, 1, &list);
  assert_string_equal(list.items[0].status, status);
  tl_session_list_free(&list);
  tl_store_close(s);
}

/* A collector on this host, in a child process: it commits 2 samples to db
 * and waits. Told to go on (live_writer_finish) it commits 3 more and ends
 * its session 'complete'; when the test closes its end of the pipe instead,
 * it exits without ending it. */
typedef struct {
  pid_t pid;
  int go; /* write a byte to finish */
} live_writer;

static live_writer live_writer_start(const char *db) {
  int ready[2], hold[2];
  assert_int_equal(pipe(ready), 0);
  assert_int_equal(pipe(hold), 0);
  pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    close(hold[1]);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    tl_session_spec spec = spec_for("alive", 0);
    spec.hostname = host;
    tl_store *s;
    tl_writer *w;
    char uuid[37], c;
    int64_t v[5] = {1, 2, 3, 4, 5};
    int ok = tl_store_open(&s, db, 0) == TL_OK && tl_writer_begin(s, &spec, &w, uuid) == TL_OK &&
             tl_writer_add(w, v, 2) == TL_OK && tl_writer_flush(w) == TL_OK;
    if (write(ready[1], ok ? "y" : "n", 1) != 1 || read(hold[0], &c, 1) != 1)
      _exit(1); /* alive, committing nothing, until then */
    ok = tl_writer_add(w, v + 2, 3) == TL_OK && tl_writer_end(w, "complete") == TL_OK;
    tl_store_close(s);
    _exit(ok ? 0 : 1);
  }
  close(ready[1]);
  close(hold[0]);
  char said = 0;
  assert_int_equal(read(ready[0], &said, 1), 1);
  close(ready[0]);
  assert_int_equal(said, 'y');
  return (live_writer){child, hold[1]};
}

/* Lets the writer end its session; returns its exit status. */
static int live_writer_finish(live_writer *l) {
  int st = -1;
  assert_int_equal(write(l->go, "g", 1), 1);
  close(l->go);
  assert_int_equal(waitpid(l->pid, &st, 0), l->pid);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A collector on this host that is alive but has not committed for an
 * hour (another program held the write lock) is still running: no reader,
 * no writable open, no stale limit however short says otherwise. Only once
 * its pid names a process younger than the session (reused), or none, is
 * it gone. */
static void live_collector_is_never_stale(void **state) {
  fixture *f = *state;
  live_writer l = live_writer_start(f->db);
  tl_test_exec_sql(f->db, "UPDATE sessions SET heartbeat_ns = heartbeat_ns - 3600000000000");

  expect_status(f->db, "running");
  tl_store *s;
  int n = -1;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  assert_int_equal(tl_store_recover_stale(s, -1, &n), TL_OK); /* any heartbeat is too old */
  assert_int_equal(n, 0);
  tl_store_close(s);
  setenv("TL_STALE_SECONDS", "1", 1);
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  tl_store_close(s);
  expect_status(f->db, "running");

  /* The same pid, now a process that started an hour after the session:
   * a reused pid, so the collector is gone. */
  tl_test_exec_sql(f->db, "UPDATE sessions SET started_ns = started_ns - 3600000000000");
  expect_status(f->db, "interrupted");
  unsetenv("TL_STALE_SECONDS");
  close(l.go);
  assert_int_equal(waitpid(l.pid, NULL, 0), l.pid);
}

/* Merges the file at from into the file at to; returns the stats. */
static tl_merge_stats merge_into(const char *to, const char *from) {
  tl_store *s;
  tl_merge_stats st;
  assert_int_equal(tl_store_open(&s, to, 0), TL_OK);
  const char *paths[] = {from};
  if (tl_store_merge(s, paths, 1, &st) != TL_OK)
    fail_msg("merging %s: %s", from, tl_store_errmsg(s));
  tl_store_close(s);
  return st;
}

/* The samples of the file's only session, which must be 'complete'. */
static void expect_complete(const char *db, const int64_t *want, size_t n) {
  tl_session_list list;
  tl_store *s = tl_test_sessions(db, 1, &list);
  assert_string_equal(list.items[0].status, "complete");
  assert_int_equal(list.items[0].sample_count, (int64_t)n);
  collected got = {malloc(16 * sizeof(int64_t)), 0};
  assert_int_equal(tl_store_scan(s, list.items[0].id, collect, &got), TL_OK);
  assert_int_equal(got.n, n);
  assert_memory_equal(got.v, want, n * sizeof *want);
  free(got.v);
  tl_session_list_free(&list);
  assert_int_equal(tl_store_check(s, NULL, NULL), TL_OK);
  tl_store_close(s);
}

/* A merge leaves a session whose collector still runs for a later merge;
 * a copy taken early (by a tl that copied running sessions, or a copy of
 * the file) is completed by the next merge once the session has ended,
 * rather than wedging every later merge with a conflict. */
static void merge_waits_for_running_sessions(void **state) {
  fixture *f = *state;
  char *early = tl_test_path(f->dir, "early.db"), *later = tl_test_path(f->dir, "later.db");
  live_writer l = live_writer_start(f->db);
  char sql[512];
  snprintf(sql, sizeof sql, "VACUUM INTO '%s'", early); /* the file as it is now */
  tl_test_exec_sql(f->db, sql);
  tl_merge_stats st = merge_into(later, f->db);
  assert_int_equal(st.sessions_added, 0);
  assert_int_equal(st.sessions_running, 1);
  assert_int_equal(tl_test_stats(later).sessions, 0);

  assert_int_equal(live_writer_finish(&l), 0);
  const int64_t all[5] = {1, 2, 3, 4, 5};
  st = merge_into(later, f->db);
  assert_int_equal(st.sessions_added, 1);
  assert_int_equal(st.sessions_running, 0);
  expect_complete(later, all, 5);

  /* The early copy: 'interrupted' with 2 samples once its writable open
   * finds the collector gone; the merge completes it. */
  st = merge_into(early, f->db);
  assert_int_equal(st.sessions_completed, 1);
  assert_int_equal(st.sessions_present, 0);
  expect_complete(early, all, 5);
  st = merge_into(early, f->db);
  assert_int_equal(st.sessions_present, 1);
  assert_int_equal(st.sessions_completed, 0);
  free(early);
  free(later);
}

/* Decodes len bytes of codec-1 payload as a block sealed with a correct
 * header, so that only the payload decides. */
static int decode_payload(const uint8_t *payload, size_t len, int64_t min, int64_t max,
                          int64_t *out, size_t n) {
  static uint8_t buf[TL_BLOCK_HEADER + TL_BLOCK_MAX * 10 + 16];
  memcpy(buf + TL_BLOCK_HEADER, payload, len);
  size_t blen = tl__block_seal(buf, TL_CODEC_VARINT, n, 0, min, max, len);
  tl_block b = {.count = (int64_t)n,
                .min_ns = min,
                .max_ns = max,
                .codec = TL_CODEC_VARINT,
                .data = buf,
                .len = blen};
  return tl_block_decode(&b, out, NULL);
}

static void codec(void **state) {
  (void)state;
  int64_t v[TL_BLOCK_MAX], back[TL_BLOCK_MAX], lo, hi;
  uint8_t buf[TL_BLOCK_HEADER + TL_BLOCK_MAX * 10];
  for (size_t i = 0; i < TL_BLOCK_MAX; i++)
    v[i] = (i % 3 == 0) ? INT64_MAX - (int64_t)i : (int64_t)i;
  size_t len = tl_block_encode_as(TL_CODEC_VARINT, v, TL_BLOCK_MAX, 7, buf, &lo, &hi);
  assert_true(len <= tl_block_bound(TL_BLOCK_MAX));
  assert_int_equal(lo, 1);
  assert_int_equal(hi, INT64_MAX);
  tl_block b = {.seq = 7,
                .count = TL_BLOCK_MAX,
                .min_ns = lo,
                .max_ns = hi,
                .codec = TL_CODEC_VARINT,
                .data = buf,
                .len = len};
  assert_int_equal(tl_block_decode(&b, back, NULL), TL_OK);
  assert_memory_equal(v, back, sizeof v);
  /* Truncated, trailing bytes, values outside [min, max]: corrupt. */
  const uint8_t *p = buf + TL_BLOCK_HEADER;
  size_t plen = len - TL_BLOCK_HEADER;
  assert_int_equal(decode_payload(p, plen - 1, lo, hi, back, TL_BLOCK_MAX), TL_ECORRUPT);
  assert_int_equal(decode_payload(p, plen, lo, hi, back, TL_BLOCK_MAX - 1), TL_ECORRUPT);
  assert_int_equal(decode_payload(p, plen, lo, hi - 1, back, TL_BLOCK_MAX), TL_ECORRUPT);
  assert_int_equal(decode_payload(p, plen, hi, lo, back, TL_BLOCK_MAX), TL_ECORRUPT);
  const uint8_t endless[12] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                               0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
  assert_int_equal(decode_payload(endless, sizeof endless, 0, INT64_MAX, back, 1), TL_ECORRUPT);
  /* Only the shortest form: 1 written as 0x81 0x00, or a tenth byte with
   * bits past 64, is not what tl wrote (found by fuzz_block). */
  const uint8_t overlong[] = {0x81, 0x00};
  assert_int_equal(decode_payload(overlong, 2, 0, 10, back, 1), TL_ECORRUPT);
  const uint8_t wide[10] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
  assert_int_equal(decode_payload(wide, 10, 0, INT64_MAX, back, 1), TL_ECORRUPT);
  const uint8_t one[] = {0x01}, top[10] = {0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f};
  assert_int_equal(decode_payload(one, 1, 0, 10, back, 1), TL_OK);
  assert_int_equal(decode_payload(top, 9, 0, INT64_MAX, back, 1), TL_OK);
  assert_int_equal(back[0], INT64_MAX - 1);
}

/* CRC32C: the check value of the standard ("123456789" gives 0xe3069283),
 * the same in pieces, and RFC 3720's 32 zero bytes. */
static void crc32c(void **state) {
  (void)state;
  assert_int_equal(tl_crc32c(0, "123456789", 9), 0xe3069283u);
  assert_int_equal(tl_crc32c(tl_crc32c(0, "1234", 4), "56789", 5), 0xe3069283u);
  assert_int_equal(tl_crc32c(0, "", 0), 0);
  uint8_t zeros[32] = {0};
  assert_int_equal(tl_crc32c(0, zeros, 32), 0x8a9136aau);
}

/* CRC32C of long inputs, read in stripes of lanes joined by tables: the
 * same as a bit at a time, at every length up to past several stripes, from
 * every alignment and starting CRC, whole or cut anywhere. */
static uint32_t crc32c_bitwise(uint32_t crc, const uint8_t *p, size_t n) {
  crc = ~crc;
  while (n--) {
    crc ^= *p++;
    for (int k = 0; k < 8; k++)
      crc = crc & 1 ? (crc >> 1) ^ 0x82f63b78u : crc >> 1;
  }
  return ~crc;
}

static void crc32c_long_as(void) {
  enum { MAX = 3000 };
  uint8_t *buf = malloc(MAX + 8);
  assert_non_null(buf);
  uint64_t x = 0x9e3779b97f4a7c15u;
  for (size_t i = 0; i < MAX + 8; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    buf[i] = (uint8_t)x;
  }
  for (size_t n = 0; n <= MAX; n += n < 800 ? 1 : 37) {
    size_t off = n % 8;
    uint32_t start = (uint32_t)(n * 2654435761u);
    uint32_t want = crc32c_bitwise(start, buf + off, n);
    assert_int_equal(tl_crc32c(start, buf + off, n), want);
    size_t cut = n * 7 / 13;
    assert_int_equal(tl_crc32c(tl_crc32c(start, buf + off, cut), buf + off + cut, n - cut), want);
  }
  free(buf);
}

/* ... by the CPU's instruction where it has one (cpu.c), and by the tables any CPU runs. */
static void crc32c_long(void **state) {
  (void)state;
  crc32c_long_as();
  tl__cpu_features_allow(0);
  crc32c_long_as();
  tl__cpu_features_allow(~0u);
}

/* Every field the checksum covers is checked: one flipped bit anywhere in
 * the block, another seq, min or max, count or codec is refused, and says
 * why. */
static void block_checksum_of(int codec) {
  int64_t v[100], back[TL_BLOCK_MAX], lo, hi;
  uint8_t buf[TL_BLOCK_HEADER + 100 * 10];
  for (int i = 0; i < 100; i++)
    v[i] = 1000000 + i * 37 + (i % 10 == 0) * 5000000; /* exceptions in codec 2 */
  size_t len = tl_block_encode_as(codec, v, 100, 3, buf, &lo, &hi);
  tl_block b = {
      .seq = 3, .count = 100, .min_ns = lo, .max_ns = hi, .codec = codec, .data = buf, .len = len};
  const char *why = NULL;
  assert_int_equal(tl_block_decode(&b, back, &why), TL_OK);
  for (size_t bit = 0; bit < len * 8; bit++) {
    buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    assert_int_equal(tl_block_decode(&b, back, &why), TL_ECORRUPT);
    assert_non_null(why);
    buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
  }
  tl_block x = b;
  x.seq = 4;
  assert_int_equal(tl_block_verify(&x, &why), TL_ECORRUPT);
  assert_string_equal(why, "checksum mismatch");
  x = b;
  x.min_ns = 9223372036854000000LL;
  assert_int_equal(tl_block_verify(&x, &why), TL_ECORRUPT);
  x = b;
  x.max_ns = hi + 1;
  assert_int_equal(tl_block_verify(&x, &why), TL_ECORRUPT);
  assert_string_equal(why, "checksum mismatch");
  x = b;
  x.count = 99;
  assert_int_equal(tl_block_verify(&x, &why), TL_ECORRUPT);
  x = b;
  x.codec = 9;
  assert_int_equal(tl_block_verify(&x, &why), TL_ECORRUPT);
  assert_string_equal(why, "unknown codec");
  x = b;
  x.len = TL_BLOCK_HEADER - 1;
  assert_int_equal(tl_block_verify(&x, &why), TL_ECORRUPT);
  assert_int_equal(tl_block_verify(&b, &why), TL_OK);
}

static void block_checksum(void **state) {
  (void)state;
  for (int codec = TL_CODEC_VARINT; codec <= TL_CODEC_PACKED; codec++)
    block_checksum_of(codec);
}

static void default_path(void **state) {
  (void)state;
  char buf[4096];
  setenv("TL_DB", "/x/y.db", 1);
  assert_int_equal(tl_default_db_path(buf, sizeof buf), TL_OK);
  assert_string_equal(buf, "/x/y.db");
  unsetenv("TL_DB");
  setenv("XDG_DATA_HOME", "/data", 1);
  assert_int_equal(tl_default_db_path(buf, sizeof buf), TL_OK);
  assert_string_equal(buf, "/data/tl/tl.db");
  setenv("XDG_DATA_HOME", "relative", 1); /* ignored, as the XDG spec says */
  setenv("HOME", "/home/u", 1);
  assert_int_equal(tl_default_db_path(buf, sizeof buf), TL_OK);
  assert_string_equal(buf, "/home/u/.local/share/tl/tl.db");
}

/* What tlstore merge, import, push and prune check of their arguments before
 * the database is opened (tlstore.c calls these; test_cli.c runs them). */
static void merge_sources(void **state) {
  fixture *f = *state;
  FILE *fp = fopen(f->db, "w");
  assert_non_null(fp);
  fclose(fp);
  char *missing = tl_test_path(f->dir, "missing.db");
  const char *good[] = {f->db, f->db}, *empty[] = {""}, *option[] = {"--db"};
  const char *absent[] = {f->db, missing}, *option_after_absent[] = {missing, "-x"};
  assert_int_equal(tl_store_check_merge_sources(good, 2), TL_EXIT_OK);
  assert_int_equal(tl_store_check_merge_sources(good, 0), TL_EXIT_USAGE);
  assert_int_equal(tl_store_check_merge_sources(empty, 1), TL_EXIT_USAGE);
  assert_int_equal(tl_store_check_merge_sources(option, 1), TL_EXIT_USAGE);
  assert_int_equal(tl_store_check_merge_sources(absent, 2), TL_EXIT_FAILURE);
  /* every name is checked to be no option before any is read */
  assert_int_equal(tl_store_check_merge_sources(option_after_absent, 2), TL_EXIT_USAGE);
  free(missing);
}

static void import_source(void **state) {
  fixture *f = *state;
  assert_ptr_equal(tl_store_open_import_source("-"), stdin);
  assert_null(tl_store_open_import_source(f->db)); /* not made yet */
  FILE *fp = fopen(f->db, "w");
  assert_non_null(fp);
  fputs("1\n", fp);
  fclose(fp);
  FILE *in = tl_store_open_import_source(f->db);
  assert_non_null(in);
  assert_ptr_not_equal(in, stdin);
  assert_int_equal(fgetc(in), '1');
  fclose(in);
}

static void push_ends(void **state) {
  fixture *f = *state;
  tl_store *local = (tl_store *)1, *server = (tl_store *)1;
  unsetenv("TL_PUSH_URL");
  assert_int_equal(tl_store_open_push_ends(f->db, NULL, 0, &local, &server), TL_EXIT_USAGE);
  assert_null(local);
  assert_null(server);
  setenv("TL_PUSH_URL", "", 1);
  assert_int_equal(tl_store_open_push_ends(f->db, NULL, 0, &local, &server), TL_EXIT_USAGE);
  const char *url = "postgresql://tl@127.0.0.1:1/none";
  assert_int_equal(tl_store_open_push_ends(url, url, 0, &local, &server), TL_EXIT_USAGE);
  /* the file must exist: push neither creates it nor, with remove_pushed, makes it */
  assert_int_equal(tl_store_open_push_ends(f->db, url, 1, &local, &server), TL_EXIT_FAILURE);
  assert_int_equal(access(f->db, F_OK), -1);
  tl_store *s = NULL;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  tl_store_close(s);
  /* a server that does not answer ($TL_PUSH_URL): the file is closed again */
  setenv("TL_PUSH_URL", url, 1);
  assert_int_equal(tl_store_open_push_ends(f->db, NULL, 0, &local, &server), TL_EXIT_FAILURE);
  assert_null(local);
  assert_null(server);
  unsetenv("TL_PUSH_URL");
}

/* Whether a libpq is mapped into this process (Linux's /proc; -1 where
 * there is none to read). */
static int libpq_mapped(void) {
  FILE *f = fopen("/proc/self/maps", "r");
  if (!f)
    return -1;
  char line[4096];
  int found = 0;
  while (!found && fgets(line, sizeof line, f))
    found = strstr(line, "/libpq.") != NULL;
  fclose(f);
  return found;
}

/* What libpq_loaded_on_demand checks, in a new run of this program (the
 * tests before it may have loaded libpq): 0 when all holds, 77 when there is no
 * /proc or no PostgreSQL support, else the number of the failed step. */
static int libpq_steps(const char *db) {
  if (libpq_mapped() < 0)
    return 77;
  tl_store *s = NULL;
  if (tl_store_open(&s, db, 0) != TL_OK)
    return 1;
  tl_store_close(s);
  if (libpq_mapped() != 0)
    return 2;
  /* A library that is not there: one line naming it and how to install one. */
  setenv("TL_LIBPQ", "/nonexistent/libpq.so.5", 1);
  const char *url = "postgresql://tl@/none?host=/nonexistent";
  int err = tl_store_open(&s, url, 0),
      unsupported = strstr(tl_store_errmsg(s), "built without") != NULL;
  const char *msg = tl_store_errmsg(s);
  int named = strstr(msg, "/nonexistent/libpq.so.5 cannot be loaded") && !strchr(msg, '\n');
  tl_store_close(s);
  if (err == TL_EUNAVAIL && unsupported)
    return 77;
  if (err != TL_EUNAVAIL || !named)
    return 3;
  if (libpq_mapped() != 0)
    return 4;
  /* The real one: loaded by the open, whether or not a server answers. */
  unsetenv("TL_LIBPQ");
  err = tl_store_open(&s, url, 0);
  tl_store_close(s);
  if (err == TL_OK || err == TL_EUNAVAIL)
    return 5;
  return libpq_mapped() == 1 ? 0 : 6;
}

/* Runs this program again with steps (and arg) for a check that needs a
 * process of its own: fails unless it exits 0 or 77; 1 for its 77 (could
 * not run here: the caller skips, saying why), else 0. */
static int in_new_process(const char *steps, const char *arg) {
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    execl("/proc/self/exe", "test_store", steps, arg, (char *)NULL);
    _exit(77); /* no /proc */
  }
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) /* the child's steps, or the exec (no /proc) */
    return 1;
  assert_int_equal(WEXITSTATUS(status), 0);
  return 0;
}

/* libpq is loaded when a server address is opened, never for a file: the
 * programs start without it (and run where it is not installed). */
static void libpq_loaded_on_demand(void **state) {
  fixture *f = *state;
  if (in_new_process("--libpq-steps", f->db))
    tl_test_skip("no /proc/self/exe to run the steps in a child");
}

/* The number after key at the start of a line of file, or -1. */
static long long proc_count(const char *file, const char *key) {
  FILE *f = fopen(file, "r");
  long long v = -1;
  char line[256];
  size_t k = strlen(key);
  while (f && v < 0 && fgets(line, sizeof line, f))
    if (strncmp(line, key, k) == 0)
      v = strtoll(line + k, NULL, 10);
  if (f)
    fclose(f);
  return v;
}

/* A sanitizer's malloc in place of the C library's (AddressSanitizer's,
 * as gcc and clang each say it), and glibc's when it is not replaced. */
#if defined(__SANITIZE_ADDRESS__)
#define MALLOC_REPLACED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MALLOC_REPLACED 1
#endif
#endif
#if defined(__GLIBC__) && !defined(MALLOC_REPLACED)
#define GLIBC_MALLOC 1
#endif

/* What heap_in_huge_pages checks, in a new run of this program (the
 * setting is for a whole process): 0 when fresh blocks of the heap lie in
 * huge pages, 160 MiB of them where the machine has 1 GiB, 77 where the system offers none on
 * request (or a sanitizer replaces malloc), else the number of the failed step. */
static int heap_steps(void) {
  char mode[128] = "";
  FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  if (f) {
    if (!fgets(mode, sizeof mode, f))
      mode[0] = '\0';
    fclose(f);
  }
#ifdef MALLOC_REPLACED
  mode[0] = '\0';
#endif
  if (!strstr(mode, "[always]") && !strstr(mode, "[madvise]"))
    return 77;
  if (!tl_heap_huge_pages())
    return 1;
  long long fell_back = proc_count("/proc/vmstat", "thp_fault_fallback ");
  /* Blocks well past the first 64 MiB where the machine has the memory
   * (a fleet's report holds hundreds of MiB), one otherwise. */
  enum { SIZE = 16 << 20, BLOCKS = 10 };
  long long ram_mb = (long long)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE) >> 20;
  int blocks = ram_mb >= 1024 ? BLOCKS : 1;
  char *p[BLOCKS];
  for (int k = 0; k < blocks; k++) {
    if (!(p[k] = malloc(SIZE)))
      return 2;
    memset(p[k], 1, SIZE);
  }
  long long huge_kb = proc_count("/proc/self/smaps_rollup", "AnonHugePages:");
  for (int k = 0; k < blocks; k++)
    free(p[k]);
  /* All but a few of the blocks' 2 MiB pages (at least two of one's). */
  if (huge_kb >= (blocks == 1 ? 4096 : (long long)blocks * SIZE / 1024 * 8 / 10))
    return 0;
  /* A kernel that wanted to but found no free 2 MiB page says so. */
  return proc_count("/proc/vmstat", "thp_fault_fallback ") > fell_back ? 77 : 3;
}

/* The heap of a program that reads a database and exits faults in 2 MiB
 * pages where the system offers them (exe_linux.c says why). */
static void heap_in_huge_pages(void **state) {
  (void)state;
  if (in_new_process("--heap-steps", NULL))
    tl_test_skip("no huge pages on request here, or a sanitizer's malloc (or no /proc)");
}

#ifdef GLIBC_MALLOC
static void *thread_block(void *arg) {
  (void)arg;
  return malloc(4096);
}
#endif

/* What threads_share_one_heap checks, in a new run of this program: after
 * tl_heap_huge_pages, a block a new thread allocates comes from the one
 * heap, not from an arena of the thread's own (glibc's malloc_info lists
 * each arena as a heap). 0 when it does, 77 where malloc is not glibc's,
 * else the number of the failed step. */
static int arena_steps(void) {
#ifdef GLIBC_MALLOC
  tl_heap_huge_pages();
  pthread_t th;
  void *block = NULL;
  if (pthread_create(&th, NULL, thread_block, NULL) != 0 || pthread_join(th, &block) != 0 || !block)
    return 1;
  char *xml = NULL;
  size_t len = 0, heaps = 0;
  FILE *f = open_memstream(&xml, &len);
  int listed = f && malloc_info(0, f) == 0;
  if ((f && fclose(f) != 0) || !xml)
    listed = 0;
  for (const char *at = xml; listed && (at = strstr(at, "<heap nr=")); at++)
    heaps++;
  free(xml);
  free(block);
  return !listed ? 2 : heaps == 1 ? 0 : 3;
#else
  return 77;
#endif
}

/* A report's threads share one heap: an arena of a thread's own is a second
 * heap whose freed blocks no other thread reuses (exe_linux.c). */
static void threads_share_one_heap(void **state) {
  (void)state;
  if (in_new_process("--arena-steps", NULL))
    tl_test_skip("malloc is not glibc's here (or no /proc)");
}

static void prune_options(void **state) {
  (void)state;
  tl_prune_args p = {0, 0, NULL};
  char why[TL_WHY_MAX] = "";
  int64_t ns;
  assert_int_equal(tl_date_parse("2020-01-02", &ns, NULL, 0), TL_OK);
  assert_int_equal(tl_prune_option(&p, "before", "2020-01-02", why, sizeof why), 1);
  assert_true(p.have_before);
  assert_true(p.before_ns == ns);
  assert_int_equal(tl_prune_option(&p, "label", "web", why, sizeof why), 1);
  assert_string_equal(p.label, "web");
  assert_int_equal(tl_prune_option(&p, "before", "yesterday", why, sizeof why), TL_EINVAL);
  assert_true(why[0] != '\0');
  why[0] = '\0';
  assert_int_equal(tl_prune_option(&p, "label", "", why, sizeof why), TL_EINVAL);
  assert_true(why[0] != '\0');
  assert_string_equal(p.label, "web");
  assert_int_equal(tl_prune_option(&p, "format", "csv", why, sizeof why), 0);
}

/* Sessions are listed in order of start, then id, whatever order they were
 * written in: the file reads them by id and orders them only where that
 * differs; a limit takes the first that match, in no promised order. */
static void sessions_listed_by_start(void **state) {
  fixture *f = *state;
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  static const int64_t starts[] = {30, 10, 20, 10, 30, 40};
  static const int64_t order[] = {2, 4, 3, 1, 5, 6}; /* ids, by start then id */
  enum { N = sizeof starts / sizeof *starts };
  tl_filter all;
  tl_filter_init(&all);
  tl_session_list list;
  for (int i = 0; i < N; i++) {
    tl_session_spec spec = spec_for("x", 0);
    spec.started_ns = 1700000000000000000LL + starts[i] * 1000000000LL;
    int64_t v = 1000;
    tl_test_write_session(s, &spec, &v, 1, 0);
  }
  for (int round = 0; round < 2; round++) {
    /* The second round: already in order by id, kept as it is. */
    if (round == 1)
      tl_test_exec_sql(f->db, "UPDATE sessions SET started_ns = 1700000000000000000 + id");
    assert_int_equal(tl_store_sessions(s, &all, &list), TL_OK);
    assert_int_equal(list.count, N);
    for (size_t i = 0; i < N; i++)
      assert_int_equal(list.items[i].id, round == 0 ? order[i] : (int64_t)i + 1);
    tl_session_list_free(&list);
  }
  all.limit = 2;
  assert_int_equal(tl_store_sessions(s, &all, &list), TL_OK);
  assert_int_equal(list.count, 2);
  tl_session_list_free(&list);
  tl_store_close(s);
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--libpq-steps") == 0)
    return libpq_steps(argv[2]);
  if (argc == 2 && strcmp(argv[1], "--heap-steps") == 0)
    return heap_steps();
  if (argc == 2 && strcmp(argv[1], "--arena-steps") == 0)
    return arena_steps();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(round_trip, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(read_cache, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(filters, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(recorded_fact_filter, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(sessions_name_their_hosts, tl_test_setup, tl_test_teardown),
      cmocka_unit_test(host_names_by_id),
      cmocka_unit_test_setup_teardown(one_filter_builder_for_both_dialects, tl_test_setup,
                                      tl_test_teardown),
      cmocka_unit_test_setup_teardown(sessions_listed_by_start, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(label_summaries, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(bad_session_specs, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(refusals, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(migrates_empty_file, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(check_finds_damage, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(migrates_v1_blocks, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(summaries_are_exact, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(summary_watch_windows, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(failed_batches_leave_the_summary_exact, tl_test_setup,
                                      tl_test_teardown),
      cmocka_unit_test_setup_teardown(summary_of_running_and_stale, tl_test_setup,
                                      tl_test_teardown),
      cmocka_unit_test_setup_teardown(damaged_summary, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(stale_sessions, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(stale_search_reads_only_running, tl_test_setup,
                                      tl_test_teardown),
      cmocka_unit_test_setup_teardown(stale_by_heartbeat, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(live_collector_is_never_stale, tl_test_setup,
                                      tl_test_teardown),
      cmocka_unit_test_setup_teardown(merge_waits_for_running_sessions, tl_test_setup,
                                      tl_test_teardown),
      cmocka_unit_test(codec),
      cmocka_unit_test(crc32c),
      cmocka_unit_test(crc32c_long),
      cmocka_unit_test(block_checksum),
      cmocka_unit_test(default_path),
      cmocka_unit_test_setup_teardown(merge_sources, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(import_source, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(push_ends, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(libpq_loaded_on_demand, tl_test_setup, tl_test_teardown),
      cmocka_unit_test(heap_in_huge_pages),
      cmocka_unit_test(threads_share_one_heap),
      cmocka_unit_test(prune_options),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
