/* test_dist.c: exact percentiles against values worked out by hand and
 * against a plain sort of the same samples. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "chart.h"
#include "support.h"
#include "support_store.h"
#include "tl_store.h"

static void hand_computed(void **state) {
  (void)state;
  const double p[] = {50, 90, 99, 100};
  tl_dist d;
  /* Odd count: 1..9 in shuffled order. p50 = 5th = 5, p90 = ceil(8.1) = 9th. */
  const int64_t odd[] = {9, 1, 8, 2, 7, 3, 6, 4, 5};
  assert_int_equal(tl_dist_of_values(odd, 9, p, 4, &d), TL_OK);
  assert_int_equal(d.count, 9);
  assert_int_equal(d.pct_ns[0], 5);
  assert_int_equal(d.pct_ns[1], 9);
  assert_int_equal(d.pct_ns[3], 9);
  assert_int_equal(d.min_ns, 1);
  assert_int_equal(d.max_ns, 9);
  assert_true(d.mean_ns == 5.0);
  /* Even count: 10, 20, 30, 40. p50 = 2nd = 20 (no interpolation). */
  const int64_t even[] = {40, 10, 30, 20};
  assert_int_equal(tl_dist_of_values(even, 4, p, 2, &d), TL_OK);
  assert_int_equal(d.pct_ns[0], 20);
  assert_int_equal(d.pct_ns[1], 40);
  assert_true(d.stddev_ns > 11.18 && d.stddev_ns < 11.19); /* sqrt(125) */
  /* One sample: every percentile is it. */
  const int64_t one[] = {1234567};
  assert_int_equal(tl_dist_of_values(one, 1, p, 4, &d), TL_OK);
  for (int i = 0; i < 4; i++)
    assert_int_equal(d.pct_ns[i], 1234567);
  /* Ties: 7 x 100 and 3 x 200: p70 = 100, p71 = 200. */
  const int64_t ties[] = {200, 100, 100, 200, 100, 100, 100, 200, 100, 100};
  const double q[] = {70, 71};
  assert_int_equal(tl_dist_of_values(ties, 10, q, 2, &d), TL_OK);
  assert_int_equal(d.pct_ns[0], 100);
  assert_int_equal(d.pct_ns[1], 200);
  /* No samples. */
  assert_int_equal(tl_dist_of_values(NULL, 0, p, 4, &d), TL_OK);
  assert_int_equal(d.count, 0);
  /* Bad percentiles and negative values are refused. */
  const double bad[] = {101};
  assert_int_equal(tl_dist_of_values(odd, 9, bad, 1, &d), TL_EINVAL);
  const int64_t neg[] = {-1};
  assert_int_equal(tl_dist_of_values(neg, 1, p, 1, &d), TL_EINVAL);
}

static int cmp(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Large sets that force the narrowing passes: a tight cluster (most samples
 * in one log bucket), a heavy tail, huge values, and a cluster with one huge
 * value (beyond what a double holds exactly). */
static void against_sort(void **state) {
  (void)state;
  const size_t n = 3000000;
  int64_t *v = malloc(n * sizeof *v), *s = malloc(n * sizeof *s);
  const double p[] = {0, 1, 25, 50, 90, 99, 99.9, 99.99, 100};
  uint64_t x = 88172645463325252ULL;
  for (int shape = 0; shape < 4; shape++) {
    for (size_t i = 0; i < n; i++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      if (shape == 0)
        v[i] = 1000000 + (int64_t)(x % 5000); /* all in a narrow band */
      else if (shape == 1)
        v[i] = (int64_t)(x % 1000) * (int64_t)(x % 1000) * 100; /* skewed */
      else if (shape == 2)
        v[i] = (int64_t)(x >> 2); /* the whole int64 range */
      else
        v[i] = i == n / 2 ? INT64_MAX / 3 : 1000000 + (int64_t)(x % 5000);
    }
    memcpy(s, v, n * sizeof *v);
    qsort(s, n, sizeof *s, cmp);
    tl_dist d;
    assert_int_equal(tl_dist_of_values(v, n, p, 9, &d), TL_OK);
    for (size_t k = 0; k < 9; k++)
      assert_int_equal(d.pct_ns[k], s[tl_rank(p[k], (int64_t)n) - 1]);
    assert_int_equal(d.min_ns, s[0]);
    assert_int_equal(d.max_ns, s[n - 1]);
  }
  free(v);
  free(s);
}

/* A sweep over a store against a sort of the same samples: the group's
 * percentiles, each session's own (levels its summary holds and levels it
 * does not, so that session ranges and group ranges share buckets), and the
 * chart's counts against a plain division: bins of width 1, of an odd
 * width (both from the histogram), over all the samples (no bucket
 * straddles), and over seconds, where too many values straddle bins so that
 * each sample is binned, once with the reciprocal and once wider than it
 * serves. */
static void sweep_against_sort(void **state) {
  tl_test_fixture *f = *state;
  enum { SESSIONS = 4, PER = 150000, BINS = 40 };
  tl_store *st;
  assert_int_equal(tl_store_open(&st, f->db, 0), TL_OK);
  int64_t *all = malloc(SESSIONS * PER * sizeof *all), ids[SESSIONS];
  uint64_t x = 88172645463325252ULL;
  for (size_t k = 0; k < SESSIONS; k++) {
    int64_t *v = all + k * PER;
    for (size_t i = 0; i < PER; i++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      /* A tight cluster near 1 ms with a slow tail; one session far wider. */
      v[i] = 1000000 + (int64_t)(k * 3000) + (int64_t)(x % 4000);
      if (x % 100 == 0)
        v[i] += (int64_t)(x % 3000000);
      if (k == 3 && x % 1000 == 1)
        v[i] = (int64_t)(x >> 24) + 1; /* up to 2^40: seconds */
      if (k == 3 && x % 100 == 2)
        v[i] = ((int64_t)1 << 31) + (int64_t)(x >> 32); /* 2.1 to 6.4 s */
    }
    tl_session_spec spec = tl_test_spec("a");
    ids[k] = tl_test_write_session(st, &spec, v, PER, 0);
  }
  const double own[] = {50, 90, 99, 25, 75, 99.5};
  const double gp[] = {0, 1, 10, 25, 50, 60, 75, 90, 95, 99, 99.9, 99.99, 100};
  int64_t *sorted = malloc(SESSIONS * PER * sizeof *sorted);
  for (int chart = 0; chart < 5; chart++) {
    tl_sweep *w = tl_sweep_store(st, ids, SESSIONS, own, 6);
    assert_non_null(w);
    assert_int_equal(tl_sweep_first(w, NULL, NULL), TL_OK);
    int64_t n = tl_sweep_count(w, SESSIONS);
    assert_int_equal(n, SESSIONS * PER);
    size_t at[13];
    for (size_t k = 0; k < 13; k++)
      assert_true((at[k] = tl_sweep_want(w, tl_rank(gp[k], n))) != SIZE_MAX);
    tl_dist d;
    tl_sweep_dist(w, SESSIONS, &d);
    const int64_t tops[] = {d.min_ns + BINS - 1, 3900000, 4200000000, d.max_ns, 8600000000};
    int64_t lo = d.min_ns, hi = tops[chart];
    int64_t width = chart == 0 ? 1 : chart == 1 ? 12345 : (hi - lo) / BINS + 1;
    int64_t counts[BINS] = {0}, over = 0, want[BINS] = {0}, want_over = 0;
    tl__chart c;
    assert_int_equal(tl__chart_ask(&c, w, SESSIONS, lo, width, hi, counts, BINS, &over), TL_OK);
    /* Both ways are tried: straddling buckets counted value by value
     * below a millisecond and a half, each sample binned where bins of a
     * tenth of a second and more straddle buckets too wide (chart 3's bins
     * straddle none with a sample). */
    assert_int_equal(c.part != NULL, chart == 2 || chart == 4);
    assert_int_equal(tl_sweep_finish(w), TL_OK);
    tl__chart_fill(&c, w);
    tl__chart_free(&c);
    memcpy(sorted, all, SESSIONS * PER * sizeof *all);
    qsort(sorted, SESSIONS * PER, sizeof *sorted, cmp);
    for (size_t k = 0; k < 13; k++)
      assert_int_equal(tl_sweep_value(w, at[k]), sorted[tl_rank(gp[k], n) - 1]);
    for (size_t i = 0; i < SESSIONS * PER; i++) {
      if (all[i] > hi) {
        want_over++;
        continue;
      }
      int64_t b = (all[i] - lo) / width;
      want[b < BINS - 1 ? b : BINS - 1]++;
    }
    assert_memory_equal(counts, want, sizeof want);
    assert_int_equal(over, want_over);
    for (size_t s = 0; s < SESSIONS; s++) {
      memcpy(sorted, all + s * PER, PER * sizeof *all);
      qsort(sorted, PER, sizeof *sorted, cmp);
      for (size_t k = 0; k < 6; k++)
        assert_int_equal(tl_sweep_session_value(w, s, k), sorted[tl_rank(own[k], PER) - 1]);
    }
    tl_sweep_close(w);
  }
  free(sorted);
  free(all);
  tl_store_close(st);
}

/* tl_sweep_count_values counts at most 65,536 values, as its header says:
 * a chart asking more bins each sample instead, and the sweep's answers do
 * not change with what it was asked. */
static void values_asked_at_most(void **state) {
  tl_test_fixture *f = *state;
  enum { PER = 4096 };
  tl_store *st;
  assert_int_equal(tl_store_open(&st, f->db, 0), TL_OK);
  int64_t v[PER];
  for (size_t i = 0; i < PER; i++)
    v[i] = 50000000 + (int64_t)i * 3001; /* 50 ms on: buckets 16,384 values wide */
  tl_session_spec spec = tl_test_spec("a");
  int64_t id = tl_test_write_session(st, &spec, v, PER, 0);
  size_t b[5];
  int64_t lo, hi;
  b[0] = tl_summary_bucket(v[0]);
  for (size_t i = 1; i < 5; i++)
    b[i] = b[i - 1] + 1;
  for (size_t i = 0; i < 5; i++) {
    tl_summary_bucket_bounds(b[i], &lo, &hi);
    assert_int_equal(hi - lo + 1, 16384);
  }
  for (size_t asked = 4; asked <= 5; asked++) {
    tl_sweep *w = tl_sweep_store(st, &id, 1, NULL, 0);
    assert_non_null(w);
    assert_int_equal(tl_sweep_first(w, NULL, NULL), TL_OK);
    size_t at = tl_sweep_want(w, tl_rank(50, PER));
    assert_int_equal(tl_sweep_count_values(w, b, asked), asked == 4);
    assert_int_equal(tl_sweep_finish(w), TL_OK);
    assert_int_equal(tl_sweep_value(w, at), v[tl_rank(50, PER) - 1]);
    const uint32_t *counts = tl_sweep_values(w, b[1]);
    if (asked == 4) {
      /* The samples of the second bucket, each at its own value. */
      tl_summary_bucket_bounds(b[1], &lo, &hi);
      uint64_t seen = 0;
      for (size_t i = 0; i < PER; i++)
        if (v[i] >= lo && v[i] <= hi) {
          assert_int_equal(counts[v[i] - lo], 1);
          seen++;
        }
      uint64_t total = 0;
      for (int64_t x = 0; x <= hi - lo; x++)
        total += counts[x];
      assert_true(seen > 0);
      assert_int_equal(total, seen);
    } else {
      assert_null(counts);
    }
    tl_sweep_close(w);
  }
  tl_store_close(st);
}

/* A 50 ms group's tail: its ranks past p99.8 lie in buckets of 32,768
 * values and more, too wide to count, so they collect their few samples,
 * which the counting loop leaves to a compare of its own (the sweep's takers
 * picked apart), while the group's other ranks count in the direct table.
 * Exact against a sort: with the sessions' percentiles from their summaries
 * (only the group's takers on the lists), with one the summaries lack (each
 * session's takers on the lists too: picked out in the loop), with a tail
 * too heavy to pick apart, and with charts asking values and binning every
 * sample, each checked bin by bin. */
static void tail_ranks_picked_apart(void **state) {
  tl_test_fixture *f = *state;
  enum { SESSIONS = 6, PER = 20000, RANKS = 10 };
  tl_store *st;
  assert_int_equal(tl_store_open(&st, f->db, 0), TL_OK);
  int64_t *all = malloc(2 * SESSIONS * PER * sizeof *all), ids[2][SESSIONS];
  int64_t *sorted = malloc(SESSIONS * PER * sizeof *sorted);
  uint64_t x = 0x853c49e6748fea9bULL;
  for (int heavy = 0; heavy < 2; heavy++)
    for (size_t k = 0; k < SESSIONS; k++) {
      int64_t *v = all + (heavy * SESSIONS + k) * PER;
      for (size_t i = 0; i < PER; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        v[i] = 50000000 + (int64_t)(x % 100000);
        if (x % (heavy ? 20 : 500) == 7) /* one in 500 (or 20): 67 to 197 ms */
          v[i] = 67200000 + (int64_t)((x >> 20) % 130000000);
      }
      tl_session_spec spec = tl_test_spec(heavy ? "heavy" : "light");
      ids[heavy][k] = tl_test_write_session(st, &spec, v, PER, 0);
    }
  const double gp[RANKS] = {50, 90, 99, 99.5, 99.8, 99.9, 99.95, 99.99, 99.999, 100};
  const double own[] = {50, 90, 99, 99.5};
  for (int round = 0; round < 5; round++) {
    int heavy = round == 2, own_n = round == 1 ? 4 : 3, chart = round >= 3;
    const int64_t *v = all + heavy * SESSIONS * PER;
    tl_sweep *w = tl_sweep_store(st, ids[heavy], SESSIONS, own, (size_t)own_n);
    assert_non_null(w);
    assert_int_equal(tl_sweep_first(w, NULL, NULL), TL_OK);
    int64_t n = tl_sweep_count(w, SESSIONS);
    size_t at[RANKS];
    for (size_t k = 0; k < RANKS; k++)
      assert_true((at[k] = tl_sweep_want(w, tl_rank(gp[k], n))) != SIZE_MAX);
    int64_t counts[20] = {0}, over = 0, width = round == 3 ? 70000 : 7000;
    tl__chart c;
    if (chart) { /* round 3 asks the values of two buckets, round 4 bins every sample */
      assert_int_equal(tl__chart_ask(&c, w, SESSIONS, 50000000, width, 50139999, counts, 20, &over),
                       TL_OK);
      assert_int_equal(c.part != NULL, round == 4);
    }
    assert_int_equal(tl_sweep_finish(w), TL_OK);
    if (chart) {
      tl__chart_fill(&c, w);
      tl__chart_free(&c);
      int64_t want[20] = {0}, want_over = 0;
      for (size_t i = 0; i < SESSIONS * PER; i++) {
        int64_t b = (v[i] - 50000000) / width;
        if (v[i] > 50139999)
          want_over++;
        else
          want[b < 19 ? b : 19]++;
      }
      assert_memory_equal(counts, want, sizeof want);
      assert_int_equal(over, want_over);
    }
    memcpy(sorted, v, SESSIONS * PER * sizeof *v);
    qsort(sorted, SESSIONS * PER, sizeof *sorted, cmp);
    for (size_t k = 0; k < RANKS; k++)
      assert_int_equal(tl_sweep_value(w, at[k]), sorted[tl_rank(gp[k], n) - 1]);
    for (size_t s = 0; s < SESSIONS; s++) {
      memcpy(sorted, v + s * PER, PER * sizeof *v);
      qsort(sorted, PER, sizeof *sorted, cmp);
      for (int k = 0; k < own_n; k++)
        assert_int_equal(tl_sweep_session_value(w, s, (size_t)k), sorted[tl_rank(own[k], PER) - 1]);
    }
    tl_sweep_close(w);
  }
  free(sorted);
  free(all);
  tl_store_close(st);
}

/* What a tap saw, however the pass cut the samples into calls: each
 * session in the order they came, with its first sample, and a hash of
 * every sample in order. */
typedef struct {
  size_t n, samples;
  int64_t seen[2 * 64];
  uint64_t hash;
} tap_log;

static int log_tap(void *ctx, size_t session, const int64_t *v, size_t n) {
  tap_log *t = ctx;
  if (n && (!t->n || t->seen[t->n - 2] != (int64_t)session) &&
      t->n + 2 <= sizeof t->seen / sizeof *t->seen) {
    t->seen[t->n++] = (int64_t)session;
    t->seen[t->n++] = v[0];
  }
  for (size_t i = 0; i < n; i++)
    t->hash = (t->hash ^ (uint64_t)v[i]) * 0x100000001b3ULL;
  t->samples += n;
  return 0;
}

static void same_log(const tap_log *a, const tap_log *b) {
  assert_int_equal(a->n, b->n);
  assert_memory_equal(a->seen, b->seen, a->n * sizeof *a->seen);
  assert_int_equal(a->samples, b->samples);
  assert_int_equal(a->hash, b->hash);
}

/* Groups whose sessions interleave in the file, swept together
 * (tl_sweep_first_all, then tl_sweep_finish_all), four at once or in pairs
 * (whose taps run on the counting thread), find what each finds alone and
 * what a sort of its samples gives: its ranks, its sessions' own
 * percentiles (from their summaries or their samples) and its chart's
 * counts; a tap given to pass 1 or to the next pass sees all of a group's
 * samples in that group's order (one group lists its sessions backwards).
 * One group spans seconds, so that it needs more passes than the others,
 * and one asks nothing that pass 1 did not find. */
static void sweeps_share_passes(void **state) {
  tl_test_fixture *f = *state;
  enum { GROUPS = 4, EACH = 5, PER = 20000, BINS = 16 };
  tl_store *st;
  assert_int_equal(tl_store_open(&st, f->db, 0), TL_OK);
  int64_t *all = malloc(GROUPS * EACH * PER * sizeof *all), ids[GROUPS][EACH];
  uint64_t x = 0x9E3779B97F4A7C15ULL;
  for (size_t i = 0; i < EACH; i++)
    for (size_t g = 0; g < GROUPS; g++) {
      int64_t *v = all + (g * EACH + i) * PER;
      for (size_t j = 0; j < PER; j++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        v[j] = 50000 * (int64_t)(g + 1) + (int64_t)(x % 9000);
        if (x % 50 == 0)
          v[j] += (int64_t)(x % 5000000);
        if (g == 2 && x % 200 == 1)
          v[j] = (int64_t)(x >> 26) + 1; /* up to 2^38 ns */
      }
      tl_session_spec spec = tl_test_spec(g == 0 ? "a" : g == 1 ? "b" : g == 2 ? "c" : "d");
      size_t at = g == 1 ? EACH - 1 - i : i; /* group b lists its sessions backwards */
      ids[g][at] = tl_test_write_session(st, &spec, v, PER, 0);
    }
  /* Not in the summaries, so read from the samples; but those of the
   * group that needs no pass after the first. */
  const double own_read[] = {25, 75, 99.5}, own_summed[] = {50, 90, 99.9};
  const double gp[] = {0, 50, 90, 99, 99.9, 99.99, 100};
  int64_t *sorted = malloc(EACH * PER * sizeof *sorted);
  /* Per way of sweeping: alone, four together, in pairs. */
  tap_log logs[3] = {{0}}, firsts[3] = {{0}};
  for (int way = 0; way < 3; way++) {
    tl_sweep *ws[GROUPS];
    size_t at[GROUPS][7];
    int64_t counts[GROUPS][BINS] = {{0}}, over[GROUPS] = {0}, lo[GROUPS], width[GROUPS];
    tl__chart charts[GROUPS];
    /* Group b's pass 1 has a tap too. */
    tl_sweep_session_cb taps[GROUPS] = {NULL, log_tap, NULL, NULL};
    void *tap_ctxs[GROUPS] = {NULL, &firsts[way], NULL, NULL};
    for (size_t g = 0; g < GROUPS; g++) {
      assert_non_null(ws[g] = tl_sweep_store(st, ids[g], EACH, g == 3 ? own_summed : own_read, 3));
      if (!way)
        assert_int_equal(tl_sweep_first(ws[g], taps[g], tap_ctxs[g]), TL_OK);
    }
    if (way == 1)
      assert_int_equal(tl_sweep_first_all(ws, GROUPS, taps, tap_ctxs), TL_OK);
    for (size_t g = 0; g < GROUPS && way == 2; g += 2)
      assert_int_equal(tl_sweep_first_all(ws + g, 2, taps + g, tap_ctxs + g), TL_OK);
    for (size_t g = 0; g < GROUPS; g++) {
      int64_t n = tl_sweep_count(ws[g], EACH);
      assert_int_equal(n, EACH * PER);
      for (size_t k = 0; k < 7 && g != 3; k++)
        assert_true((at[g][k] = tl_sweep_want(ws[g], tl_rank(gp[k], n))) != SIZE_MAX);
      tl_dist d;
      tl_sweep_dist(ws[g], EACH, &d);
      lo[g] = d.min_ns;
      width[g] = 777 + (int64_t)g * 1001;
      memset(&charts[g], 0, sizeof charts[g]);
      if (g != 3)
        assert_int_equal(tl__chart_ask(&charts[g], ws[g], EACH, lo[g], width[g],
                                       lo[g] + BINS * width[g], counts[g], BINS, &over[g]),
                         TL_OK);
    }
    tl_sweep_tap(ws[1], log_tap, &logs[way]);
    if (way == 1)
      assert_int_equal(tl_sweep_finish_all(ws, GROUPS), TL_OK);
    for (size_t g = 0; g < GROUPS && way == 2; g += 2)
      assert_int_equal(tl_sweep_finish_all(ws + g, 2), TL_OK);
    for (size_t g = 0; g < GROUPS && !way; g++)
      assert_int_equal(tl_sweep_finish(ws[g]), TL_OK);
    for (size_t g = 0; g < GROUPS; g++) {
      if (g != 3)
        tl__chart_fill(&charts[g], ws[g]);
      tl__chart_free(&charts[g]);
      memcpy(sorted, all + g * EACH * PER, EACH * PER * sizeof *all);
      qsort(sorted, EACH * PER, sizeof *sorted, cmp);
      for (size_t k = 0; k < 7 && g != 3; k++)
        assert_int_equal(tl_sweep_value(ws[g], at[g][k]), sorted[tl_rank(gp[k], EACH * PER) - 1]);
      int64_t want[BINS] = {0}, want_over = 0;
      for (size_t i = 0; i < EACH * PER && g != 3; i++) {
        int64_t b = (sorted[i] - lo[g]) / width[g];
        if (sorted[i] > lo[g] + BINS * width[g])
          want_over++;
        else
          want[b < BINS - 1 ? b : BINS - 1]++;
      }
      assert_memory_equal(counts[g], want, sizeof want);
      assert_int_equal(over[g], want_over);
      for (size_t i = 0; i < EACH; i++) {
        size_t s = g == 1 ? EACH - 1 - i : i; /* where sample block i sits in the sweep */
        memcpy(sorted, all + (g * EACH + i) * PER, PER * sizeof *all);
        qsort(sorted, PER, sizeof *sorted, cmp);
        const double *own = g == 3 ? own_summed : own_read;
        tl_dist d;
        tl_sweep_dist(ws[g], s, &d);
        assert_int_equal(d.count, PER);
        assert_int_equal(d.min_ns, sorted[0]);
        assert_int_equal(d.max_ns, sorted[PER - 1]);
        for (size_t k = 0; k < 3; k++)
          assert_int_equal(tl_sweep_session_value(ws[g], s, k), sorted[tl_rank(own[k], PER) - 1]);
      }
      tl_sweep_close(ws[g]);
    }
  }
  /* Every block of every session, none left out for want of room. */
  const tap_log *alone = &logs[0];
  assert_int_equal(alone->n, 2 * EACH);
  assert_int_equal(alone->samples, EACH * PER);
  for (int k = 0; k < 3; k++) {
    same_log(&logs[k], alone);
    same_log(&firsts[k], alone);
  }
  /* In group b's order, which runs backwards in the file. */
  for (size_t k = 2; k < alone->n; k += 2)
    assert_true(alone->seen[k] > alone->seen[k - 2]);
  assert_int_equal(alone->seen[alone->n - 2], EACH - 1);
  free(sorted);
  free(all);
  tl_store_close(st);
}

/* Sweeps whose lists share sessions (a group, its earlier sessions, and
 * another group beside them), swept together: each finds what it finds
 * alone and what a sort of its own samples gives, and its tap sees its own
 * sessions once each, in its order, with every sample. The shared sessions
 * are read once for all (sweep_many.c): a session handed to only one of its
 * sweeps leaves the others short of samples. */
static void sweeps_share_sessions(void **state) {
  tl_test_fixture *f = *state;
  enum { EACH = 6, PER = 15000, SWEEPS = 4 };
  tl_store *st;
  assert_int_equal(tl_store_open(&st, f->db, 0), TL_OK);
  int64_t *all = malloc(2 * EACH * PER * sizeof *all), ids[2][EACH];
  uint64_t x = 0x6a09e667f3bcc908ULL;
  for (size_t i = 0; i < EACH; i++)
    for (size_t g = 0; g < 2; g++) {
      int64_t *v = all + (g * EACH + i) * PER;
      for (size_t j = 0; j < PER; j++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        v[j] = 40000 + 30000 * (int64_t)g + (int64_t)(x % 7000) * (int64_t)(i + 1);
        if (x % 40 == 0)
          v[j] += (int64_t)(x % 3000000);
      }
      tl_session_spec spec = tl_test_spec(g ? "b" : "a");
      ids[g][i] = tl_test_write_session(st, &spec, v, PER, 0);
    }
  /* a's sessions, a's but its last, b's, and a's from the third on. */
  const int64_t *lists[SWEEPS] = {ids[0], ids[0], ids[1], ids[0] + 2};
  const size_t counts[SWEEPS] = {EACH, EACH - 1, EACH, EACH - 2};
  const size_t from[SWEEPS] = {0, 0, EACH, 2}; /* the first session's place in all */
  const double gp[] = {0, 50, 90, 99, 99.9, 100}, own[] = {25, 75, 99.5};
  int64_t *sorted = malloc(EACH * PER * sizeof *sorted);
  tap_log logs[2][SWEEPS] = {{{0}}}, firsts[2][SWEEPS] = {{{0}}};
  for (int together = 0; together < 2; together++) {
    tl_sweep *ws[SWEEPS];
    size_t at[SWEEPS][6];
    tl_sweep_session_cb taps[SWEEPS];
    void *tap_ctxs[SWEEPS];
    for (size_t k = 0; k < SWEEPS; k++) {
      assert_non_null(ws[k] = tl_sweep_store(st, lists[k], counts[k], own, 3));
      taps[k] = log_tap;
      tap_ctxs[k] = &firsts[together][k];
      if (!together)
        assert_int_equal(tl_sweep_first(ws[k], taps[k], tap_ctxs[k]), TL_OK);
    }
    if (together)
      assert_int_equal(tl_sweep_first_all(ws, SWEEPS, taps, tap_ctxs), TL_OK);
    for (size_t k = 0; k < SWEEPS; k++) {
      int64_t n = tl_sweep_count(ws[k], counts[k]);
      assert_int_equal(n, (int64_t)counts[k] * PER);
      for (size_t p = 0; p < 6; p++)
        assert_true((at[k][p] = tl_sweep_want(ws[k], tl_rank(gp[p], n))) != SIZE_MAX);
      tl_sweep_tap(ws[k], log_tap, &logs[together][k]);
    }
    if (together)
      assert_int_equal(tl_sweep_finish_all(ws, SWEEPS), TL_OK);
    for (size_t k = 0; k < SWEEPS && !together; k++)
      assert_int_equal(tl_sweep_finish(ws[k]), TL_OK);
    for (size_t k = 0; k < SWEEPS; k++) {
      size_t n = counts[k] * PER;
      memcpy(sorted, all + from[k] * PER, n * sizeof *all);
      qsort(sorted, n, sizeof *sorted, cmp);
      for (size_t p = 0; p < 6; p++)
        assert_int_equal(tl_sweep_value(ws[k], at[k][p]), sorted[tl_rank(gp[p], (int64_t)n) - 1]);
      for (size_t i = 0; i < counts[k]; i++) {
        memcpy(sorted, all + (from[k] + i) * PER, PER * sizeof *all);
        qsort(sorted, PER, sizeof *sorted, cmp);
        for (size_t p = 0; p < 3; p++)
          assert_int_equal(tl_sweep_session_value(ws[k], i, p), sorted[tl_rank(own[p], PER) - 1]);
      }
      tl_sweep_close(ws[k]);
    }
  }
  for (size_t k = 0; k < SWEEPS; k++) {
    const tap_log *alone = &logs[0][k];
    assert_int_equal(alone->n, 2 * counts[k]);
    assert_int_equal(alone->samples, counts[k] * PER);
    for (size_t i = 0; i < counts[k]; i++)
      assert_int_equal(alone->seen[2 * i], (int64_t)i);
    same_log(&logs[1][k], alone);
    same_log(&firsts[1][k], &firsts[0][k]);
  }
  free(sorted);
  free(all);
  tl_store_close(st);
}

/* The radix sort of the statistics against qsort: narrow and wide spans,
 * negative values, ties, and the sizes at the edges. */
static void radix_sort(void **state) {
  (void)state;
  const size_t sizes[] = {0, 1, 2, 3, 255, 256, 257, 100000};
  uint64_t x = 2463534242ULL;
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
    for (int shape = 0; shape < 4; shape++) {
      size_t n = sizes[si];
      int64_t *v = malloc((n ? n : 1) * sizeof *v), *s = malloc((n ? n : 1) * sizeof *s);
      for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        if (shape == 0)
          v[i] = 50000000 + (int64_t)(x % 20000);
        else if (shape == 1)
          v[i] = (int64_t)(x % 3) * 1000; /* ties */
        else if (shape == 2)
          v[i] = (int64_t)x; /* any int64, negative too */
        else
          v[i] = 42;
      }
      memcpy(s, v, n * sizeof *v);
      qsort(s, n, sizeof *s, cmp);
      assert_int_equal(tl_sort_i64(v, n), TL_OK);
      if (n)
        assert_memory_equal(v, s, n * sizeof *v);
      free(v);
      free(s);
    }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(hand_computed),
      cmocka_unit_test(against_sort),
      cmocka_unit_test_setup_teardown(sweep_against_sort, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(values_asked_at_most, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(tail_ranks_picked_apart, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(sweeps_share_passes, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(sweeps_share_sessions, tl_test_setup, tl_test_teardown),
      cmocka_unit_test(radix_sort),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
