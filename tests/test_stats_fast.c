/* test_stats_fast.c: the short roads the statistics take where a fleet has
 * many groups give the answers of the long ones: whether a t quantile lies
 * below a value, from one t distribution function instead of the quantile
 * (on many random degrees of freedom and values, most of them within a hair
 * of the quantile); the quantile itself with most of its bisection's
 * answers known ahead; a pair of groups looked up through the pairs' index
 * instead of a scan of every pair; the change-point search with its
 * shuffles' draws made ahead as with each draw beside its swap; and the
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

/* The change-point search with its draws made ahead of the swaps finds
 * the steps, places and p-values of the search that draws beside each swap,
 * on random series of many lengths (binned past 5,000 points), with none,
 * one or several steps, ties and constant stretches. */
static void steps_as_found_directly(void **state) {
  (void)state;
  enum { MAX = 8 };
  size_t with_steps = 0;
  for (int round = 0; round < 160; round++) {
    size_t n = round % 16 == 15 ? 6000 + (size_t)(unit() * 3000) : 6 + (size_t)(unit() * 900);
    double *x = malloc(n * sizeof *x);
    int shape = round % 5;
    size_t steps_in = shape == 0 ? 0 : (size_t)shape;
    for (size_t i = 0; i < n; i++) {
      double level = 100 + 40 * (double)((i * (steps_in + 1)) / n % 2);
      x[i] = shape == 4 ? floor(level + unit() * 4) : level + (unit() - 0.5) * 60;
    }
    tl_step_opts o = {0};
    o.seed = 0x1234u + (uint64_t)round;
    tl_step fast[MAX], direct[MAX];
    size_t nf = 99, nd = 98;
    assert_int_equal(tl_steps_find(x, n, &o, fast, MAX, &nf), TL_OK);
    tl__stats_steps_direct = 1;
    assert_int_equal(tl_steps_find(x, n, &o, direct, MAX, &nd), TL_OK);
    tl__stats_steps_direct = 0;
    assert_int_equal(nf, nd);
    for (size_t i = 0; i < nf; i++) {
      assert_int_equal(fast[i].index, direct[i].index);
      assert_true(fast[i].before == direct[i].before && fast[i].after == direct[i].after);
      assert_true(fast[i].p_value == direct[i].p_value);
    }
    with_steps += nf > 0;
    free(x);
  }
  assert_true(with_steps > 60); /* the steps planted were found, so the tests ran in full */
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
      cmocka_unit_test(steps_as_found_directly),
      cmocka_unit_test_setup_teardown(pairs_found_as_scanned, tl_test_store_setup,
                                      tl_test_store_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
