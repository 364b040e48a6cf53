/* test_stats_fast.c: the short roads the statistics take where a fleet has
 * many groups give the answers of the long ones: whether a t quantile lies
 * below a value, from one t distribution function instead of the quantile
 * (on many random degrees of freedom and values, most of them within a hair
 * of the quantile); the quantile itself with most of its bisection's
 * answers known ahead; a pair of groups looked up through the pairs' index
 * instead of a scan of every pair; the median by selection as by a sort;
 * the change-point search's shuffles with their draws made ahead as with
 * each draw beside its swap; the search for changes on a worker thread as
 * on this one, errors included; and the
 * statistics without the rank test (which let each group's samples go
 * early) equal to those with it in everything else. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "report_internal.h"
#include "stats_internal.h"
#include "support.h"
#include "support_store.h"
#include "tl_report.h"

static uint64_t rng_state = 0x5eed5eed12345678ULL;

static double unit(void) {
  rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
  return ((double)(rng_state >> 11) + 0.5) * 0x1.0p-53;
}

/* The one-t_cdf answer, where it gives one, is the quantile's own; values
 * right at the quantile are left to it. */
static void t_quantile_below_as_worked_out(void **state) {
  (void)state;
  size_t settled = 0, near = 0;
  for (int i = 0; i < 20000; i++) {
    /* degrees of freedom from 1 to 10^7, fractional (Welch's are) */
    double df = i % 7 == 0 ? 1 + (double)(i % 5) : exp(unit() * log(1e7));
    double q = tl__t_quantile(0.975, df);
    double c;
    switch (i % 4) {
    case 0: /* anywhere */
      c = unit() * 20;
      break;
    case 1: /* within a relative 1e-6 of the quantile */
      c = q * (1 + (unit() - 0.5) * 2e-6);
      break;
    case 2: /* within the bisection's own 1e-10 */
      c = q * (1 + (unit() - 0.5) * 2e-10);
      break;
    default: /* the quantile itself, and its neighbours */
      c = i % 8 == 3 ? q : nextafter(q, i % 8 == 7 ? 0 : INFINITY);
    }
    int fast = tl__t_quantile_below(0.975, df, c);
    if (fast >= 0) {
      assert_int_equal(fast, q < c);
      settled++;
      near += fabs(c / q - 1) < 1e-5;
    }
  }
  /* It settles nearly every value not within 1e-10, even those within 1e-6. */
  assert_true(settled > 9500);
  assert_true(near > 4500);
  /* Outside where the margins hold it says nothing. */
  assert_int_equal(tl__t_quantile_below(0.975, 0.5, 3), -1);
  assert_int_equal(tl__t_quantile_below(0.99, 10, 3), -1);
  assert_int_equal(tl__t_quantile_below(0.975, 10, NAN), -1);
  assert_int_equal(tl__t_quantile_below(0.975, NAN, 3), -1);
}

/* The t quantile with most of its bisection's answers settled ahead is
 * the one that works every answer out, to the last bit: on degrees of
 * freedom from 0.3 to 10^8 (fractional, as Welch's are) and several p. */
static void t_quantile_as_bisected(void **state) {
  (void)state;
  const double ps[] = {0.975, 0.975, 0.975, 0.95, 0.995, 0.6, 0.9999};
  for (int i = 0; i < 6000; i++) {
    double df = i % 50 == 0 ? 1 + i % 7 : exp(log(0.3) + unit() * (log(1e8) - log(0.3)));
    double p = ps[i % (sizeof ps / sizeof ps[0])];
    double fast = tl__t_quantile(p, df);
    tl__stats_t_direct = 1;
    double direct = tl__t_quantile(p, df);
    tl__stats_t_direct = 0;
    assert_true(fast == direct);
  }
  assert_true(fabs(tl__t_quantile(0.975, 1) - 12.7062047) < 1e-6);
  assert_true(fabs(tl__t_quantile(0.975, 1e9) - 1.959964) < 1e-6);
  assert_true(isnan(tl__t_quantile(0.975, 0)) && isnan(tl__t_quantile(0.4, 5)));
}

/* The change-point search's shuffle as first written, each draw beside its
 * swap and taken with a plain remainder: the reference the library's
 * shuffle, its draws made ahead through a multiplication, must match. */
static double shuffled_split_reference(double *perm, size_t n, size_t L, const double *w,
                                       tl__rng *r, double total, double sq) {
  double mean = total / (double)n, best = 0, right = 0;
  for (size_t i = n - 1; i > 0; i--) {
    size_t j = (size_t)(tl__rng_next(r) % (i + 1));
    double v = perm[j];
    perm[j] = perm[i];
    perm[i] = v;
    right += v;
    if (i >= L && n - i >= L) {
      double d = (total - right) - (double)i * mean, q = w[i] * d * d;
      best = q > best ? q : best;
    }
  }
  return best / sq;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double sorted_median(const double *x, size_t n) {
  double *t = malloc(n * sizeof *t);
  memcpy(t, x, n * sizeof *t);
  qsort(t, n, sizeof *t, by_value);
  double m = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
  free(t);
  return m;
}

/* The median by selection is the sorted one's, on 2,000 random arrays of
 * 1 to 300 values, odd and even counts, with many ties or none, keeping
 * every value (in another order). */
static void median_as_sorted(void **state) {
  (void)state;
  tl__rng r = {20261205};
  double x[300], y[300];
  for (int draw = 0; draw < 2000; draw++) {
    size_t n = 1 + (size_t)tl__rng_below(&r, 300);
    uint64_t spread = draw % 2 ? 5 : UINT64_C(1) << 40; /* ties, or almost none */
    for (size_t i = 0; i < n; i++)
      x[i] = y[i] = (double)tl__rng_below(&r, spread) - (double)(spread / 2);
    double want = sorted_median(x, n), got = tl__median(y, n);
    assert_true(got == want);
    qsort(x, n, sizeof *x, by_value);
    qsort(y, n, sizeof *y, by_value);
    assert_memory_equal(x, y, n * sizeof *x);
  }
}

/* The change-point search's shuffles, with their draws made ahead of the
 * swaps, give the reference's every split statistic, shuffled order and
 * next draw, shuffle after shuffle, on random segments of 2 to 5,000 points
 * (the longest a search shuffles), with or without a step, ties and
 * constant stretches; then the search itself finds the steps planted. */
static void steps_as_shuffled_directly(void **state) {
  (void)state;
  enum { MAX = 8, LONGEST = 5000 };
  double *w = malloc((LONGEST + 1) * sizeof *w), *ref = malloc(LONGEST * sizeof *ref);
  uint64_t *inv = malloc((LONGEST + 1) * sizeof *inv);
  tl__shuffle sh = {malloc(LONGEST * sizeof(double)), 0, w, inv,
                    malloc((LONGEST + 1) * sizeof(uint32_t))};
  for (size_t d = 1; d <= LONGEST; d++)
    inv[d] = UINT64_MAX / d;
  size_t better = 0;
  for (int round = 0; round < 300; round++) {
    size_t n = round % 10 == 9 ? LONGEST - (size_t)(unit() * 40) : 2 + (size_t)(unit() * 1200);
    int shape = round % 5;
    for (size_t i = 0; i < n; i++) {
      double level = 100 + 40 * (double)((i * (size_t)(shape + 1)) / n % 2);
      sh.perm[i] = shape == 4 ? floor(level + unit() * 4) : level + (unit() - 0.5) * 60;
    }
    sh.L = 1 + (size_t)(unit() * (double)(n / 2));
    double total = 0, sq = 0;
    for (size_t i = 0; i < n; i++)
      total += sh.perm[i];
    for (size_t i = 0; i < n; i++)
      sq += (sh.perm[i] - total / (double)n) * (sh.perm[i] - total / (double)n);
    for (size_t t = 1; t < n; t++)
      w[t] = (double)n / ((double)t * (double)(n - t));
    memcpy(ref, sh.perm, n * sizeof *ref);
    tl__rng rf = {0x1234u + (uint64_t)round}, rr = rf;
    for (int k = 0; k < 20; k++) {
      double fast = tl__shuffled_split(&sh, n, &rf, total, sq);
      double direct = shuffled_split_reference(ref, n, sh.L, w, &rr, total, sq);
      assert_true(fast == direct);
      assert_memory_equal(sh.perm, ref, n * sizeof *ref);
      assert_true(rf.s == rr.s);
      better += fast > 0;
    }
  }
  assert_true(better > 3000); /* most shuffles had a split to weigh */
  free(sh.perm);
  free(sh.pick);
  free(w);
  free(ref);
  free(inv);
  /* The search on a series with one clear step finds it (binned past 5,000),
   * with the medians either side as a sort gives them (ties, odd and even
   * lengths). */
  for (size_t n = 600; n <= 9001; n += 1681) {
    double *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++)
      x[i] = (i < n / 3 ? 100 : 150) + floor((unit() - 0.5) * 30 * (n % 2 ? 1 : 8)) / 8;
    tl_step_opts o = {0};
    o.seed = 0x77u;
    tl_step steps[MAX];
    size_t ns = 99;
    assert_int_equal(tl_steps_find(x, n, &o, steps, MAX, &ns), TL_OK);
    assert_int_equal(ns, 1);
    assert_true(steps[0].index >= n / 3 - n / 500 - 1 && steps[0].index <= n / 3 + n / 500 + 1);
    assert_true(steps[0].p_value < 0.01);
    size_t at = steps[0].index;
    assert_true(steps[0].before == sorted_median(x, at));
    assert_true(steps[0].after == sorted_median(x + at, n - at));
    free(x);
  }
}

/* A series of n points with a few real steps (kind picks how many and
 * where) and noise; every third point of the whole series left out, so that
 * at[] maps the searched points back with gaps. */
static tl__steps_job steps_job(size_t n, int kind, uint64_t seed) {
  tl__steps_job j;
  memset(&j, 0, sizeof j);
  j.x = malloc(n * sizeof *j.x);
  j.at = malloc(n * sizeof *j.at);
  assert_non_null(j.x);
  assert_non_null(j.at);
  for (size_t i = 0; i < n; i++) {
    size_t part = i * (size_t)(kind % 4 + 1) / n;
    j.x[i] = 100 + 30 * (double)(part % 3) + (unit() - 0.5) * 40;
    j.at[i] = i + i / 2;
  }
  j.n = n;
  j.opts.seed = seed;
  return j;
}

/* What the search on the job's points gives, as the runner should report
 * it (indexes through at). */
static size_t steps_directly(const tl__steps_job *j, tl_step *steps) {
  size_t found = 99;
  assert_int_equal(tl_steps_find(j->x, j->n, &j->opts, steps, TL__STEPS_MAX, &found), TL_OK);
  for (size_t i = 0; i < found; i++)
    steps[i].index = j->at[steps[i].index];
  return found;
}

/* Runs the jobs on a runner (threaded or not, with a queue of max_points)
 * and checks every step and p-value against the search made directly. */
static void runner_as_direct(int threaded, size_t max_points) {
  enum { JOBS = 14 };
  tl__steps_job jobs[JOBS];
  tl_step want[JOBS][TL__STEPS_MAX];
  size_t want_n[JOBS], with_steps = 0;
  for (int k = 0; k < JOBS; k++) {
    size_t n = k == 3 ? 5600 : 40 + (size_t)(unit() * 1500);
    jobs[k] = steps_job(n, k, 0xabc0u + (uint64_t)k);
    want_n[k] = steps_directly(&jobs[k], want[k]);
    with_steps += want_n[k] > 0;
  }
  assert_true(with_steps >= JOBS / 2); /* the series have steps to find */
  tl__steps_runner r;
  tl__steps_runner_start(&r, threaded);
  assert_int_equal(r.threaded, threaded);
  r.max_points = max_points;
  for (int k = 0; k < JOBS; k++)
    assert_int_equal(tl__steps_runner_add(&r, &jobs[k]), TL_OK);
  assert_int_equal(tl__steps_runner_wait(&r), TL_OK);
  tl__steps_runner_stop(&r);
  for (int k = 0; k < JOBS; k++) {
    assert_int_equal(jobs[k].rc, TL_OK);
    assert_int_equal(jobs[k].found, want_n[k]);
    assert_null(jobs[k].x); /* given back once searched */
    for (size_t i = 0; i < want_n[k]; i++) {
      assert_int_equal(jobs[k].steps[i].index, want[k][i].index);
      assert_memory_equal(&jobs[k].steps[i].before, &want[k][i].before, sizeof(double));
      assert_memory_equal(&jobs[k].steps[i].after, &want[k][i].after, sizeof(double));
      assert_memory_equal(&jobs[k].steps[i].p_value, &want[k][i].p_value, sizeof(double));
    }
  }
}

/* The changes found on the worker thread, with the queue wide or so
 * narrow that each job waits for the one before, and without the thread,
 * are those the search gives directly, to the bit. */
static void steps_on_a_worker_as_directly(void **state) {
  (void)state;
  runner_as_direct(1, TL__STEPS_QUEUE_POINTS);
  runner_as_direct(1, 1);
  runner_as_direct(0, TL__STEPS_QUEUE_POINTS);
}

/* A search that fails on the worker (a point that is not a number) gives
 * its error to the waiter, as without the thread; the jobs after it and
 * those never waited for are freed, not searched (the sanitizers see a
 * leak), and nothing hangs. */
static void worker_error_reaches_the_waiter(void **state) {
  (void)state;
  enum { JOBS = 6, BAD = 2 };
  for (int threaded = 0; threaded <= 1; threaded++) {
    tl__steps_job jobs[JOBS];
    tl__steps_runner r;
    tl__steps_runner_start(&r, threaded);
    int first = TL_OK;
    for (int k = 0; k < JOBS; k++) {
      jobs[k] = steps_job(300, k, 0x5u + (uint64_t)k);
      if (k == BAD)
        jobs[k].x[150] = NAN;
      int rc = tl__steps_runner_add(&r, &jobs[k]);
      assert_true(rc == TL_OK || rc == TL_EINVAL);
      first = first ? first : rc;
    }
    assert_int_equal(tl__steps_runner_wait(&r), TL_EINVAL);
    if (!threaded)
      assert_int_equal(first, TL_EINVAL); /* told as soon as it ran */
    assert_int_equal(jobs[BAD].rc, TL_EINVAL);
    tl__steps_runner_stop(&r);
    for (int k = 0; k < JOBS; k++)
      assert_null(jobs[k].x);
  }
  /* Stopped with jobs still queued: they are freed, unsearched. */
  tl__steps_job jobs[4];
  tl__steps_runner r;
  tl__steps_runner_start(&r, 1);
  for (int k = 0; k < 4; k++) {
    jobs[k] = steps_job(3000, 1, 0x9u);
    assert_int_equal(tl__steps_runner_add(&r, &jobs[k]), TL_OK);
  }
  tl__steps_runner_stop(&r);
  for (int k = 0; k < 4; k++)
    assert_null(jobs[k].x);
}

/* ======================================================================== */
/* Through the store                                                         */

typedef tl_test_store fixture;

static void add_session(fixture *f, const char *label, int64_t delay_ns, const int64_t *v,
                        size_t n) {
  tl_session_spec spec = tl_test_spec(label);
  spec.delay_ns = delay_ns;
  assert_true(tl_test_write_session(f->s, &spec, v, n, 0) > 0);
}

enum { LABELS = 9, DELAYS = 2, SESSIONS = 3, SAMPLES = 300 };

/* LABELS labels of a few sessions each at two delays, the last label at
 * one delay only, so that the groups of a delay are not every other one. */
static void many_groups(fixture *f) {
  int64_t v[SAMPLES];
  for (int l = 0; l < LABELS; l++)
    for (int d = 0; d < (l == LABELS - 1 ? 1 : DELAYS); d++)
      for (int s = 0; s < SESSIONS; s++) {
        for (size_t i = 0; i < SAMPLES; i++)
          v[i] = 1000000 + d * 1000000 + (int64_t)(unit() * (200000 + 30000 * l));
        char label[16];
        snprintf(label, sizeof label, "host%02d", l);
        add_session(f, label, (int64_t)d * 1000000, v, SAMPLES);
      }
}

static const tl_pair_stats *scan_for_pair(const tl_stats *st, size_t a, size_t b) {
  for (size_t i = 0; i < st->pair_count; i++)
    if ((st->pairs[i].a == a && st->pairs[i].b == b) ||
        (st->pairs[i].a == b && st->pairs[i].b == a))
      return &st->pairs[i];
  return NULL;
}

/* Every pair is found through the index as by a scan, both ways round;
 * groups of different delays have none. Without the rank test the
 * statistics are the same but for it. */
static void pairs_found_as_scanned(void **state) {
  fixture *f = *state;
  many_groups(f);
  tl_compare_opts o;
  tl_compare_opts_init(&o);
  tl_comparison cmp;
  tl_stats st, plain;
  char err[512];
  assert_int_equal(tl_compare(f->s, &o, &cmp, err, sizeof err), TL_OK);
  assert_int_equal(tl_stats_compute(f->s, &cmp, &st, err, sizeof err), TL_OK);
  assert_int_equal(tl_stats_compute_unranked(f->s, &cmp, &plain, err, sizeof err), TL_OK);
  size_t ng = cmp.group_count, found = 0;
  assert_int_equal(ng, LABELS * DELAYS - 1);
  assert_int_equal(st.pair_count, (LABELS * (LABELS - 1) + (LABELS - 1) * (LABELS - 2)) / 2);
  for (size_t a = 0; a < ng; a++)
    for (size_t b = 0; b < ng; b++) {
      const tl_pair_stats *p = tl__pair_of(&st, a, b);
      assert_ptr_equal(p, scan_for_pair(&st, a, b));
      found += p != NULL;
    }
  assert_int_equal(found, 2 * st.pair_count);
  assert_null(tl__pair_of(&st, ng, 0));
  assert_null(tl__pair_of(NULL, 0, 1));
  assert_true(st.ranked);
  assert_false(plain.ranked);
  assert_int_equal(plain.pair_count, st.pair_count);
  size_t differ = 0;
  for (size_t i = 0; i < st.pair_count; i++) {
    tl_pair_stats x = st.pairs[i];
    differ += x.mw.p_value < 0.05;
    memset(&x.mw, 0, sizeof x.mw);
    tl_pair_stats y = plain.pairs[i];
    memset(&y.mw, 0, sizeof y.mw);
    assert_memory_equal(&x, &y, sizeof x);
  }
  assert_true(differ > 0); /* the rank test was made, and tells the widths apart */
  /* Each group's samples went before the next group's were read: the same
   * intervals and changes all the same. */
  for (size_t g = 0; g < ng; g++) {
    assert_int_equal(plain.groups[g].method, st.groups[g].method);
    assert_memory_equal(plain.groups[g].pct, st.groups[g].pct, sizeof st.groups[g].pct);
    assert_int_equal(plain.groups[g].change_count, st.groups[g].change_count);
  }
  tl_stats_free(&st);
  tl_stats_free(&plain);
  tl_comparison_free(&cmp);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_quantile_below_as_worked_out),
      cmocka_unit_test(t_quantile_as_bisected),
      cmocka_unit_test(median_as_sorted),
      cmocka_unit_test(steps_as_shuffled_directly),
      cmocka_unit_test(steps_on_a_worker_as_directly),
      cmocka_unit_test(worker_error_reaches_the_waiter),
      cmocka_unit_test_setup_teardown(pairs_found_as_scanned, tl_test_store_setup,
                                      tl_test_store_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
