/* test_batch_reads.c: the reads a report makes of many sessions at once
 * (tl_store_causes_of, tl_store_counters_of, tl_store_details_of,
 * tl_store_sessions' pooled strings) give for every session what a read of that session alone
 * gives, in the order asked, with ids repeated, missing or out of order; a damaged row fails its
 * session and no other; a read that fails is an error, never fewer rows. The sessions' summaries
 * read on two threads (tl__store_summaries_threaded) come as from one, to the bit, through
 * every batch and at every kind of damage, whichever thread decodes them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "store_internal.h"
#include "support.h"
#include "support_store.h"
#include "tl_store.h"

enum { SESSIONS = 40 };

static uint64_t next_random(uint64_t *x) {
  *x ^= *x << 13;
  *x ^= *x >> 7;
  *x ^= *x << 17;
  return *x;
}

/* SESSIONS sessions, each with a random number of cause rows (0 to 3),
 * counters or none; their ids in ids. */
static void make_sessions(tl_store *s, int64_t *ids) {
  uint64_t x = 88172645463325252u;
  for (int k = 0; k < SESSIONS; k++) {
    char label[16];
    snprintf(label, sizeof label, "l%d", k % 3);
    tl_session_spec spec = {.run_uuid = "00000000-0000-4000-8000-000000000031",
                            .label = label,
                            .probe = "nanosleep",
                            .delay_ns = 1000000,
                            .command_line = "t",
                            .host_fingerprint = "ab",
                            .hostname = "h"};
    tl_writer *w;
    char uuid[37];
    assert_int_equal(tl_writer_begin(s, &spec, &w, uuid), TL_OK);
    ids[k] = tl_writer_session_id(w);
    int rows = (int)(next_random(&x) % 4);
    if (k % 10 == 1 && !rows)
      rows = 1; /* some the tests below damage */
    for (int r = 0; r < rows; r++) {
      tl_cause c[3];
      size_t n = 1 + next_random(&x) % 3;
      for (size_t i = 0; i < n; i++)
        c[i] =
            (tl_cause){(int64_t)(r * 100 + i * 7), (int64_t)(1000 + next_random(&x) % 9000) * 1000,
                       (int64_t)(next_random(&x) % 5000) * 1000, (int32_t)(i % 3), (int32_t)r % 2};
      tl_cause_sums sums;
      memset(&sums, 0, sizeof sums);
      sums.samples = 100 + k;
      sums.runq_wait_ns = k * 1000;
      sums.band_samples[k % TL_CAUSE_BANDS] = r + 1;
      sums.band_wait_ns[k % TL_CAUSE_BANDS] = (r + 1) * 1000;
      assert_int_equal(tl_store_add_causes(s, ids[k], c, n, &sums), TL_OK);
    }
    if (next_random(&x) % 3) {
      tl_counter_row cr[4];
      size_t n = 1 + next_random(&x) % 4;
      for (size_t i = 0; i < n; i++)
        cr[i] = (tl_counter_row){(int64_t)(i + 1) * 1000,
                                 1000,
                                 k,
                                 -1,
                                 5,
                                 100 + (int64_t)i,
                                 3,
                                 -1,
                                 10,
                                 k % 2,
                                 7,
                                 2400000};
      assert_int_equal(tl_store_set_counters(s, ids[k], cr, n), TL_OK);
    }
    assert_int_equal(tl_writer_end(w, "complete"), TL_OK);
  }
}

/* What a batched read handed over: for each place, the calls, the error
 * and a copy of what came. */
typedef struct {
  const int64_t *ids;
  tl_store *s;
  size_t n, calls, last;
  int errs[SESSIONS * 2 + 4];
} seen;

static int check_causes(void *ctx, size_t index, int err, const tl_cause *c, size_t n,
                        const tl_cause_sums *sums) {
  seen *v = ctx;
  assert_true(index < v->n);
  assert_true(v->calls == 0 || index == v->last + 1); /* each once, in order */
  v->calls++;
  v->last = index;
  v->errs[index] = err;
  if (err)
    return TL_OK;
  tl_cause *one;
  size_t none;
  tl_cause_sums alone;
  assert_int_equal(tl_store_causes(v->s, v->ids[index], &one, &none, &alone), TL_OK);
  assert_int_equal(n, none);
  if (n)
    assert_memory_equal(c, one, n * sizeof *c);
  assert_memory_equal(sums, &alone, sizeof alone);
  free(one);
  return TL_OK;
}

static int check_counters(void *ctx, size_t index, int err, const tl_counter_row *r, size_t n) {
  seen *v = ctx;
  assert_true(index < v->n);
  assert_true(v->calls == 0 || index == v->last + 1);
  v->calls++;
  v->last = index;
  v->errs[index] = err;
  if (err)
    return TL_OK;
  tl_counter_row *one;
  size_t none;
  assert_int_equal(tl_store_counters(v->s, v->ids[index], &one, &none), TL_OK);
  assert_int_equal(n, none);
  if (n)
    assert_memory_equal(r, one, n * sizeof *r);
  free(one);
  return TL_OK;
}

/* The ids shuffled, the first ones twice, and one no session has; the even
 * ones ascend densely, so a store reads them as a span of ids, the odd ones'
 * rows in it passed over. */
static size_t asked_ids(const int64_t *ids, int64_t *asked) {
  size_t n = 0;
  for (int k = SESSIONS - 1; k >= 0; k -= 2)
    asked[n++] = ids[k];
  for (int k = 0; k < SESSIONS; k += 2)
    asked[n++] = ids[k];
  asked[n++] = ids[SESSIONS - 1] + 1000;
  asked[n++] = ids[0];
  asked[n++] = ids[1];
  return n;
}

static void batches_equal_one_by_one(void **state) {
  tl_test_fixture *f = *state;
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  int64_t ids[SESSIONS], asked[SESSIONS * 2 + 4];
  make_sessions(s, ids);
  size_t n = asked_ids(ids, asked);
  seen v = {asked, s, n, 0, 0, {0}};
  assert_int_equal(tl_store_causes_of(s, asked, n, check_causes, &v), TL_OK);
  assert_int_equal(v.calls, n);
  seen u = {asked, s, n, 0, 0, {0}};
  assert_int_equal(tl_store_counters_of(s, asked, n, check_counters, &u), TL_OK);
  assert_int_equal(u.calls, n);
  for (size_t i = 0; i < n; i++)
    assert_int_equal(v.errs[i] + u.errs[i], TL_OK);
  /* Nothing asked: no call. */
  assert_int_equal(tl_store_causes_of(s, asked, 0, check_causes, &v), TL_OK);
  assert_int_equal(v.calls, n);
  tl_store_close(s);
}

/* Sessions on a few hosts, each with facts that repeat (one fact set for
 * many sessions) or change, some with facts added later (their own, which
 * win over the set's), some with tags, one with neither. */
static void make_detailed_sessions(tl_store *s, int64_t *ids) {
  for (int k = 0; k < SESSIONS; k++) {
    char host[8], fp[8], kernel[16], tagv[8];
    snprintf(host, sizeof host, "h%d", k % 4);
    snprintf(fp, sizeof fp, "f%d", k % 4);
    snprintf(kernel, sizeof kernel, "6.%d", k / 10);
    snprintf(tagv, sizeof tagv, "%d", k % 3);
    tl_fact facts[] = {{"kernel.release", kernel, "uname"},
                       {"cpu.logical", k % 4 ? "2" : "8", ""},
                       {"arch", "x86_64", "uname"}};
    const char *tag_keys[] = {"load", "interval"}, *tag_values[] = {tagv, "10"};
    tl_session_spec spec = {.run_uuid = "00000000-0000-4000-8000-000000000032",
                            .label = k % 2 ? "a" : "b",
                            .probe = "nanosleep",
                            .delay_ns = 1000000,
                            .command_line = "t",
                            .host_fingerprint = fp,
                            .hostname = host,
                            .facts = k == 7 ? NULL : facts,
                            .fact_count = k == 7 ? 0 : 3,
                            .tag_keys = tag_keys,
                            .tag_values = tag_values,
                            .tag_count = k == 7 ? 0 : (size_t)(k % 3)};
    tl_writer *w;
    char uuid[37];
    assert_int_equal(tl_writer_begin(s, &spec, &w, uuid), TL_OK);
    ids[k] = tl_writer_session_id(w);
    if (k % 5 == 2) {
      tl_fact later[] = {{"load.end", "0.5", "/proc/loadavg"}, {"arch", "arm64", "later"}};
      assert_int_equal(tl_writer_add_facts(w, later, 2), TL_OK);
    }
    assert_int_equal(tl_writer_end(w, "complete"), TL_OK);
  }
}

static int check_details(void *ctx, size_t index, const tl_fact_row *facts, size_t nfacts,
                         const tl_fact_row *tags, size_t ntags) {
  seen *v = ctx;
  assert_true(index < v->n);
  assert_true(v->calls == 0 || index == v->last + 1);
  v->calls++;
  v->last = index;
  tl_fact_row *one;
  size_t none;
  assert_int_equal(tl_store_facts(v->s, v->ids[index], &one, &none), TL_OK);
  tl_test_assert_same_rows(facts, nfacts, one, none);
  v->errs[index] = (int)nfacts; /* how many came, for the caller */
  tl_fact_rows_free(one, none);
  assert_int_equal(tl_store_tags(v->s, v->ids[index], &one, &none), TL_OK);
  tl_test_assert_same_rows(tags, ntags, one, none);
  tl_fact_rows_free(one, none);
  return TL_OK;
}

static int stop_at_third(void *ctx, size_t index, const tl_fact_row *facts, size_t nfacts,
                         const tl_fact_row *tags, size_t ntags) {
  (void)facts, (void)nfacts, (void)tags, (void)ntags;
  *(size_t *)ctx = index;
  return index == 2 ? TL_ECORRUPT : TL_OK;
}

/* Every session's facts and tags, read together, are what a read of that
 * session alone gives: its fact set's, its own added later winning, none
 * for an id no session has; asked for all the sessions (read at once) or
 * for a few (read one by one). */
static void details_equal_one_by_one(void **state) {
  tl_test_fixture *f = *state;
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  int64_t ids[SESSIONS], asked[SESSIONS * 2 + 4];
  make_detailed_sessions(s, ids);
  size_t n = asked_ids(ids, asked);
  seen v = {asked, s, n, 0, 0, {0}};
  assert_int_equal(tl_store_details_of(s, asked, n, check_details, &v), TL_OK);
  assert_int_equal(v.calls, n);
  size_t with_facts = 0;
  for (size_t i = 0; i < n; i++)
    with_facts += v.errs[i] > 0;
  assert_true(with_facts > n / 2);       /* the check compared facts, not only empty lists */
  assert_int_equal(v.errs[SESSIONS], 0); /* the id no session has */
  seen few = {asked, s, 2, 0, 0, {0}};
  assert_int_equal(tl_store_details_of(s, asked, 2, check_details, &few), TL_OK);
  assert_int_equal(few.calls, 2);
  size_t last = 0;
  assert_int_equal(tl_store_details_of(s, asked, n, stop_at_third, &last), TL_ECORRUPT);
  assert_int_equal(last, 2);
  tl_store_close(s);
}

static void damaged_row_fails_its_session_only(void **state) {
  tl_test_fixture *f = *state;
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  int64_t ids[SESSIONS];
  make_sessions(s, ids);
  tl_store_close(s);
  char sql[300];
  int64_t bad = ids[SESSIONS / 2];
  snprintf(sql, sizeof sql,
           "INSERT OR REPLACE INTO session_causes VALUES (%lld, 1, 0, 1, x'01020304050607');"
           "INSERT OR REPLACE INTO session_causes VALUES (%lld, 2, 0, 1, x'0102030405');",
           (long long)bad, (long long)bad);
  tl_test_exec_sql(f->db, sql);
  assert_int_equal(tl_store_open(&s, f->db, TL_STORE_READONLY), TL_OK);
  seen v = {ids, s, SESSIONS, 0, 0, {0}};
  assert_int_equal(tl_store_causes_of(s, ids, SESSIONS, check_causes, &v), TL_OK);
  assert_int_equal(v.calls, SESSIONS);
  seen u = {ids, s, SESSIONS, 0, 0, {0}};
  assert_int_equal(tl_store_counters_of(s, ids, SESSIONS, check_counters, &u), TL_OK);
  assert_int_equal(u.calls, SESSIONS);
  for (int k = 0; k < SESSIONS; k++) {
    assert_int_equal(v.errs[k], ids[k] == bad ? TL_ECORRUPT : TL_OK);
    assert_int_equal(u.errs[k], ids[k] == bad ? TL_ECORRUPT : TL_OK);
  }
  char want[64];
  snprintf(want, sizeof want, "causes of session %lld are damaged", (long long)bad);
  assert_non_null(strstr(tl_store_errmsg(s), want));
  /* Alone, the damaged session fails as before. */
  tl_cause *c;
  size_t n;
  tl_cause_sums sums;
  assert_int_equal(tl_store_causes(s, bad, &c, &n, &sums), TL_ECORRUPT);
  assert_null(c);
  assert_int_equal(n + (size_t)sums.samples, 0);
  tl_store_close(s);
}

static int count_calls(void *ctx, size_t index, int err, const tl_cause *c, size_t n,
                       const tl_cause_sums *sums) {
  (void)index;
  (void)err;
  (void)c;
  (void)n;
  (void)sums;
  return ++*(int *)ctx == 3 ? 42 : TL_OK;
}

/* A row that fails as it is read (a view whose value overflows for one
 * session) makes the read fail: it never passes for a session without
 * causes. A non-zero return of the callback stops the read. */
static void failed_step_is_an_error(void **state) {
  tl_test_fixture *f = *state;
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  int64_t ids[SESSIONS];
  make_sessions(s, ids);
  int calls = 0;
  assert_int_equal(tl_store_causes_of(s, ids, SESSIONS, count_calls, &calls), 42);
  assert_int_equal(calls, 3);
  tl_store_close(s);
  char sql[600];
  snprintf(sql, sizeof sql,
           "ALTER TABLE session_causes RENAME TO held; CREATE VIEW session_causes AS SELECT "
           "session_id, kind, first_index, count, CASE WHEN session_id = %lld THEN "
           "abs(-9223372036854775807 - 1) ELSE data END AS data FROM held;",
           (long long)ids[1]);
  tl_test_exec_sql(f->db, sql);
  assert_int_equal(tl_store_open(&s, f->db, TL_STORE_READONLY), TL_OK);
  calls = 0;
  int err = tl_store_causes_of(s, ids, SESSIONS, count_calls, &calls);
  assert_int_not_equal(err, TL_OK);
  assert_int_not_equal(err, 42);
  assert_true(calls <= 1); /* the first session, at most */
  assert_non_null(strstr(tl_store_errmsg(s), "reading causes"));
  tl_cause *c;
  size_t n;
  tl_cause_sums sums;
  assert_int_not_equal(tl_store_causes(s, ids[1], &c, &n, &sums), TL_OK);
  assert_int_equal(tl_store_causes(s, ids[0], &c, &n, &sums), TL_OK);
  free(c);
  tl_store_close(s);
}

/* The list's strings are pooled: one copy of each distinct one, and the
 * same text as the rows hold. */
static void session_strings_are_pooled(void **state) {
  tl_test_fixture *f = *state;
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  int64_t ids[SESSIONS];
  make_sessions(s, ids);
  tl_filter flt;
  tl_filter_init(&flt);
  tl_session_list l;
  assert_int_equal(tl_store_sessions(s, &flt, &l), TL_OK);
  assert_int_equal(l.count, SESSIONS);
  assert_non_null(l.strings);
  for (size_t i = 0; i < l.count; i++) {
    char want[16];
    snprintf(want, sizeof want, "l%d", (int)(i % 3));
    assert_string_equal(l.items[i].label, want);
    assert_string_equal(l.items[i].probe, "nanosleep");
    assert_ptr_equal(l.items[i].probe, l.items[0].probe);
    assert_ptr_equal(l.items[i].label, l.items[i % 3].label);
    assert_string_equal(l.items[i].status, "complete");
    for (size_t k = 0; k < i; k++)
      assert_string_not_equal(l.items[i].uuid, l.items[k].uuid);
  }
  char *keep = calloc(l.count, 1);
  keep[3] = keep[7] = 1;
  int64_t want3 = l.items[3].id, want7 = l.items[7].id;
  tl_session_list_keep(&l, keep);
  free(keep);
  assert_int_equal(l.count, 2);
  assert_int_equal(l.items[0].id, want3);
  assert_int_equal(l.items[1].id, want7);
  assert_string_equal(l.items[1].label, "l1");
  char none[2] = {0, 0};
  tl_session_list_keep(&l, none); /* nothing kept: nothing held */
  assert_int_equal(l.count, 0);
  assert_null(l.items);
  assert_null(l.strings);
  tl_session_list_free(&l);
  flt.label_count = 1;
  const char *no_label[] = {"none"};
  flt.labels = no_label;
  assert_int_equal(tl_store_sessions(s, &flt, &l), TL_OK);
  assert_int_equal(l.count, 0);
  assert_null(l.strings);
  tl_store_close(s);
}

static void pool_keeps_one_copy(void **state) {
  (void)state;
  tl_strpool *p = tl_strpool_new();
  assert_non_null(p);
  char *first[3000];
  for (int i = 0; i < 3000; i++) {
    char buf[32];
    snprintf(buf, sizeof buf, "value %d", i);
    first[i] = tl_strpool_get(p, buf);
    assert_string_equal(first[i], buf);
  }
  for (int i = 0; i < 3000; i++) {
    char buf[32];
    snprintf(buf, sizeof buf, "value %d", i);
    assert_ptr_equal(tl_strpool_get(p, buf), first[i]);
    assert_ptr_equal(tl_strpool_get_len(p, buf, strlen(buf)), first[i]);
  }
  assert_string_equal(tl_strpool_get_len(p, "value 12", 7), "value 1");
  assert_ptr_equal(tl_strpool_get_len(p, "value 12", 7), first[1]);
  assert_string_equal(tl_strpool_get(p, ""), "");
  char big[100000];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  char *kept = tl_strpool_get(p, big);
  assert_string_equal(kept, big);
  assert_ptr_equal(tl_strpool_get(p, big), kept);
  big[50000] = 'y'; /* the same length and hash prefix, another string */
  char *other = tl_strpool_get(p, big);
  assert_string_equal(other, big);
  assert_ptr_not_equal(other, kept);
  tl_strpool_free(p);
  tl_strpool_free(NULL);
}

/* Strings that differ only past the first eight bytes, or only in their
 * last byte, or only in length, are each kept apart; many of them grow the
 * table without losing one. */
static void pool_tells_near_strings_apart(void **state) {
  (void)state;
  tl_strpool *p = tl_strpool_new();
  assert_non_null(p);
  enum { N = 50000 };
  char **first = malloc(N * sizeof *first);
  assert_non_null(first);
  for (int round = 0; round < 2; round++)
    for (int i = 0; i < N; i++) {
      char buf[48];
      snprintf(buf, sizeof buf, "0123456789abcdef-%d", i);
      char *got = tl_strpool_get_len(p, buf, strlen(buf) - (size_t)(i % 3 == 0));
      if (round)
        assert_ptr_equal(got, first[i]);
      else
        first[i] = got;
      assert_int_equal(strlen(got), strlen(buf) - (size_t)(i % 3 == 0));
      assert_int_equal(strncmp(got, buf, strlen(got)), 0);
    }
  char *a = tl_strpool_get(p, "abcdefgh"), *b = tl_strpool_get(p, "abcdefgh\x01");
  assert_ptr_not_equal(a, b);
  assert_string_equal(a, "abcdefgh");
  assert_ptr_equal(tl_strpool_get_len(p, "abcdefghZ", 8), a);
  assert_ptr_equal(tl_strpool_get(p, ""), tl_strpool_get_len(p, "x", 0));
  free(first);
  tl_strpool_free(p);
}

/* An added string is a copy of its own: neither shared with an equal one
 * nor found by a later get. */
static void pool_add_copies_apart(void **state) {
  (void)state;
  tl_strpool *p = tl_strpool_new();
  assert_non_null(p);
  const char *uuid = "0b6c3d1e-7f4a-4b8c-9d2e-3f4a5b6c7d8e";
  char *got = tl_strpool_get(p, uuid);
  char *added = tl_strpool_add(p, uuid, strlen(uuid));
  assert_string_equal(added, uuid);
  assert_ptr_not_equal(added, got);
  assert_ptr_not_equal(tl_strpool_add(p, uuid, strlen(uuid)), added);
  assert_ptr_equal(tl_strpool_get(p, uuid), got);
  char *fresh = tl_strpool_add(p, "only added", 4);
  assert_string_equal(fresh, "only");
  assert_ptr_not_equal(tl_strpool_get(p, "only"), fresh);
  assert_string_equal(tl_strpool_add(p, "", 0), "");
  /* Past a chunk, and many: each stays as it was written. */
  static char big[200000];
  memset(big, 'u', sizeof big - 1);
  assert_string_equal(tl_strpool_add(p, big, sizeof big - 1), big);
  char *many[20000];
  for (int i = 0; i < 20000; i++) {
    char buf[40];
    snprintf(buf, sizeof buf, "%036d", i);
    many[i] = tl_strpool_add(p, buf, 36);
  }
  for (int i = 0; i < 20000; i++) {
    char buf[40];
    snprintf(buf, sizeof buf, "%036d", i);
    assert_string_equal(many[i], buf);
  }
  tl_strpool_free(p);
}

/* Strings that repeat stay shared through get_maybe; a long run of new
 * ones is copied apart (not found by a later get), every 16th still looked
 * up and kept; whichever way, each comes back as it was given. */
static void pool_maybe_copies_new_strings(void **state) {
  (void)state;
  tl_strpool *p = tl_strpool_new();
  assert_non_null(p);
  tl_strpool_odds odds = {0, 0, 0};
  char buf[64], *first[8];
  for (int i = 0; i < 4000; i++) { /* eight strings, over and over */
    snprintf(buf, sizeof buf, "tlcollect --label l%d", i % 8);
    char *got = tl_strpool_get_maybe(p, &odds, buf, strlen(buf));
    assert_string_equal(got, buf);
    if (i < 8)
      first[i] = got;
    else
      assert_ptr_equal(got, first[i % 8]);
  }
  tl_strpool_odds fresh = {0, 0, 0};
  enum { N = 5000 };
  char **kept = malloc(N * sizeof *kept);
  assert_non_null(kept);
  for (int i = 0; i < N; i++) { /* each new: an import's own file */
    snprintf(buf, sizeof buf, "tlstore import --start %d f.csv", i);
    kept[i] = tl_strpool_get_maybe(p, &fresh, buf, strlen(buf));
    assert_string_equal(kept[i], buf);
  }
  size_t shared = 0;
  for (int i = 0; i < N; i++) {
    snprintf(buf, sizeof buf, "tlstore import --start %d f.csv", i);
    shared += tl_strpool_get(p, buf) == kept[i];
    if (i < 1024) /* the trial's, all looked up */
      assert_ptr_equal(tl_strpool_get(p, buf), kept[i]);
  }
  /* The trial's 1,024, then every 16th of the rest. */
  assert_int_equal(shared, 1024 + (N - 1024) / 16);
  assert_int_equal(fresh.looked, shared);
  assert_int_equal(fresh.found, 0);
  /* The first odds, which kept finding, still share. */
  assert_ptr_equal(tl_strpool_get_maybe(p, &odds, "tlcollect --label l3", 20), first[3]);
  free(kept);
  tl_strpool_free(p);
}

/* The strings' hash: every byte counts, wherever it lies, and so does the
 * length, so that a key's parts chained through the seed cannot run into
 * one another. */
static void hash_reads_every_byte_and_the_length(void **state) {
  (void)state;
  char a[] = "tlcollect --label vbox", b[sizeof a];
  memcpy(b, a, sizeof a);
  assert_true(tl_hash_bytes(0, a, strlen(a)) == tl_hash_bytes(0, b, strlen(b)));
  assert_true(tl_hash_bytes(0, a, strlen(a)) != tl_hash_bytes(1, a, strlen(a)));
  assert_true(tl_hash_bytes(0, "a", 1) != tl_hash_bytes(0, "a\0", 2));
  assert_true(tl_hash_bytes(tl_hash_bytes(0, "ab", 2), "c", 1) !=
              tl_hash_bytes(tl_hash_bytes(0, "a", 1), "bc", 2));
  for (size_t i = 0; i < strlen(a); i++) { /* one byte changed, at each place */
    b[i] ^= 1;
    assert_true(tl_hash_bytes(0, a, strlen(a)) != tl_hash_bytes(0, b, strlen(b)));
    b[i] ^= 1;
  }
  /* Run UUIDs that differ only in their last characters spread over a
   * table's low bits as random values would: of 100,000 in 2^20 slots, about
   * 95,400 distinct. */
  enum { N = 100000, SLOTS = 1 << 20 };
  uint8_t *hit = calloc(SLOTS, 1);
  assert_non_null(hit);
  size_t distinct = 0;
  char uuid[40];
  for (int i = 0; i < N; i++) {
    snprintf(uuid, sizeof uuid, "6f1c2a9e-0b7d-4c3e-9a51-%012x", (unsigned)i);
    uint64_t h = tl_hash_bytes(0, uuid, strlen(uuid));
    distinct += !hit[h & (SLOTS - 1)];
    hit[h & (SLOTS - 1)] = 1;
  }
  assert_in_range(distinct, 94000, 96800);
  free(hit);
}

/* ------------------------------------------------------------------------ */
/* Summaries read on two threads                                            */

/* Enough small sessions to fill more than one batch of rows (2,048), and
 * wide ones whose blobs fill more than one batch of bytes (256 KiB). */
enum { SMALL_SESSIONS = 2300, WIDE_SESSIONS = 48, ALL_SUMMARIES = SMALL_SESSIONS + WIDE_SESSIONS };

typedef struct {
  size_t index;
  int64_t count, min_ns, max_ns;
  unsigned __int128 sum, sumsq;
  int64_t pct_ns[TL_SUMMARY_PCTS];
  size_t hist_first, hist_len;
  uint64_t hist_hash;
} summary_call;

typedef struct {
  summary_call *call;
  size_t calls;
} summary_log;

static int log_summary(void *ctx, size_t index, const tl_summary *m) {
  summary_log *g = ctx;
  assert_true(g->calls < ALL_SUMMARIES + 8);
  summary_call *c = &g->call[g->calls++];
  *c = (summary_call){index,    m->count, m->min_ns,     m->max_ns,   m->sum,
                      m->sumsq, {0},      m->hist_first, m->hist_len, 1469598103934665603ULL};
  memcpy(c->pct_ns, m->pct_ns, sizeof c->pct_ns);
  size_t nonzero = 0;
  for (size_t b = 0; b < m->hist_len; b++) {
    c->hist_hash = (c->hist_hash ^ (uint64_t)m->hist[b] ^ b << 40) * 1099511628211ULL;
    /* The buckets listed, when they are, are the non-empty ones in order. */
    if (m->nz_at && m->hist[b]) {
      assert_true(nonzero < m->nz);
      assert_int_equal(m->nz_at[nonzero++], b);
    }
  }
  if (m->nz_at)
    assert_int_equal(nonzero, m->nz);
  return TL_OK;
}

/* The small sessions, then the wide ones among them every 50th, into ids
 * in the order written. */
static void make_summarized_sessions(tl_store *s, int64_t *ids) {
  uint64_t x = 0x9e3779b97f4a7c15u;
  int64_t *v = malloc(20000 * sizeof *v);
  assert_non_null(v);
  for (int k = 0; k < ALL_SUMMARIES; k++) {
    int wide = k % 50 == 7 && k / 50 < WIDE_SESSIONS;
    size_t n = wide ? 20000 : 1 + next_random(&x) % 6;
    for (size_t i = 0; i < n; i++) {
      unsigned bits = wide ? 8 + (unsigned)(next_random(&x) % 32) : 20;
      v[i] = 1000 + (int64_t)(next_random(&x) & (((uint64_t)1 << bits) - 1));
    }
    tl_session_spec spec = tl_test_spec(wide ? "wide" : "small");
    ids[k] = tl_test_write_session(s, &spec, v, n, 0);
  }
  free(v);
}

/* Reads the summaries of ids[0..n) on one thread and on two into a and b:
 * the same error, message, damaged session and calls, whichever thread
 * decodes them (the reading thread none, some, all, or as paced). Returns
 * the error. */
static int summaries_both_ways(tl_store *s, const int64_t *ids, size_t n, summary_log *a,
                               summary_log *b) {
  a->calls = 0;
  s->damaged_id = 0;
  int one = tl_store_summaries(s, ids, n, log_summary, a);
  char said[512];
  snprintf(said, sizeof said, "%s", one ? tl_store_errmsg(s) : "");
  int64_t damaged = s->damaged_id;
  static const int shares[] = {TL__SHARE_PACED, 0, 1, 3, 4, 7, 8};
  for (size_t k = 0; k < sizeof shares / sizeof *shares; k++) {
    b->calls = 0;
    s->damaged_id = 0;
    int two = tl__store_summaries_threaded(s, ids, n, log_summary, b, shares[k]);
    assert_int_equal(two, one);
    if (one)
      assert_string_equal(tl_store_errmsg(s), said);
    assert_int_equal(s->damaged_id, damaged);
    assert_int_equal(b->calls, a->calls);
    for (size_t i = 0; i < a->calls; i++)
      if (memcmp(&a->call[i], &b->call[i], sizeof a->call[i]) != 0)
        fail_msg("call %zu (session %zu) differs on two threads (share %d)", i, a->call[i].index,
                 shares[k]);
  }
  return one;
}

static void summaries_on_two_threads_as_on_one(void **state) {
  tl_test_fixture *f = *state;
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  int64_t *ids = malloc(ALL_SUMMARIES * sizeof *ids),
          *asked = malloc((ALL_SUMMARIES + 8) * sizeof *asked);
  summary_log a = {calloc(ALL_SUMMARIES + 8, sizeof *a.call), 0};
  summary_log b = {calloc(ALL_SUMMARIES + 8, sizeof *b.call), 0};
  assert_true(ids && asked && a.call && b.call);
  make_summarized_sessions(s, ids);
  tl_store_close(s);
  /* Three sessions without a summary (computed, on the reading thread, in
   * their turn, the worker drained first): the first asked, one a few
   * hundred in, one near the end that is asked again among the repeats. */
  tl_test_exec_sql(f->db, "DELETE FROM session_summaries WHERE session_id IN (3, 2051, 2348)");
  /* Backwards, then the first ones again: another order than the file's. */
  size_t n = 0;
  for (int k = ALL_SUMMARIES - 1; k >= 0; k--)
    asked[n++] = ids[k];
  for (int k = 0; k < 8; k++)
    asked[n++] = ids[k];
  assert_int_equal(tl_store_open(&s, f->db, TL_STORE_READONLY), TL_OK);
  assert_int_equal(summaries_both_ways(s, asked, n, &a, &b), TL_OK);
  assert_int_equal(a.calls, n);
  for (size_t i = 0; i < n; i++)
    assert_int_equal(a.call[i].index, i);
  /* Nothing asked, one asked. */
  assert_int_equal(summaries_both_ways(s, asked, 0, &a, &b), TL_OK);
  assert_int_equal(a.calls, 0);
  assert_int_equal(summaries_both_ways(s, asked, 1, &a, &b), TL_OK);
  assert_int_equal(a.calls, 1);
  tl_store_close(s);

  /* A damaged summary deep in the reading: the sessions before it, then
   * the error that names it; the same for a blob too large for a batch,
   * and for a damaged summary after a session read without one. */
  static const struct {
    const char *sql;
    size_t reached; /* the calls before the damaged one */
  } damages[] = {
      {"UPDATE session_summaries SET data = substr(data, 1, 12) || x'00' || substr(data, 14) "
       "WHERE session_id = 700",
       ALL_SUMMARIES - 700},
      {"UPDATE session_summaries SET data = zeroblob(300000) WHERE session_id = 1200",
       ALL_SUMMARIES - 1200},
      {"UPDATE session_summaries SET data = x'0102' WHERE session_id = 2", ALL_SUMMARIES - 2},
      /* Two a few rows apart, each thread finding one or the other first
       * as the share changes: the first asked is named. */
      {"UPDATE session_summaries SET data = substr(data, 1, 12) || x'00' || substr(data, 14) "
       "WHERE session_id IN (1497, 1500)",
       ALL_SUMMARIES - 1500},
  };
  for (size_t k = 0; k < sizeof damages / sizeof *damages; k++) {
    tl_test_exec_sql(f->db, "CREATE TABLE IF NOT EXISTS saved AS SELECT * FROM session_summaries");
    tl_test_exec_sql(f->db, damages[k].sql);
    assert_int_equal(tl_store_open(&s, f->db, TL_STORE_READONLY), TL_OK);
    assert_int_equal(summaries_both_ways(s, asked, n, &a, &b), TL_ECORRUPT);
    assert_int_equal(a.calls, damages[k].reached);
    assert_non_null(strstr(tl_store_errmsg(s), ": summary: "));
    assert_int_equal(s->damaged_id, ids[ALL_SUMMARIES - 1 - damages[k].reached]);
    tl_store_close(s);
    tl_test_exec_sql(f->db,
                     "DELETE FROM session_summaries; INSERT INTO session_summaries SELECT * FROM "
                     "saved; DROP TABLE saved");
  }
  free(ids);
  free(asked);
  free(a.call);
  free(b.call);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(batches_equal_one_by_one, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(damaged_row_fails_its_session_only, tl_test_setup,
                                      tl_test_teardown),
      cmocka_unit_test_setup_teardown(failed_step_is_an_error, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(session_strings_are_pooled, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(details_equal_one_by_one, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(summaries_on_two_threads_as_on_one, tl_test_setup,
                                      tl_test_teardown),
      cmocka_unit_test(pool_keeps_one_copy),
      cmocka_unit_test(pool_tells_near_strings_apart),
      cmocka_unit_test(pool_add_copies_apart),
      cmocka_unit_test(pool_maybe_copies_new_strings),
      cmocka_unit_test(hash_reads_every_byte_and_the_length),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
