/* test_stats.c: the statistics behind "How sure is this?" against answers
 * worked out independently here: binomial tails by convolving Bernoulli
 * steps, Mann-Whitney U by comparing every pair, midranks by counting;
 * identical data (no difference claimed), shifted data (the shift found and
 * covered), a planted step (found on the right date), too few samples (a
 * warning), and the regression check. */
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
#include <sqlite3.h>

#include "report_internal.h"
#include "stats_internal.h"
#include "support.h"
#include "support_stats.h"
#include "support_store.h"
#include "tl_report.h"

/* ======================================================================== */
/* Independent references                                                    */

/* P(Bin(n, p) <= k) for every k, by adding one Bernoulli trial at a time. */
static double *binom_cdf_dp(int n, double p) {
  double *pmf = calloc((size_t)n + 1, sizeof *pmf), *cdf = malloc(((size_t)n + 1) * sizeof *cdf);
  pmf[0] = 1;
  for (int t = 1; t <= n; t++)
    for (int k = t; k >= 0; k--)
      pmf[k] = pmf[k] * (1 - p) + (k ? pmf[k - 1] * p : 0);
  double c = 0;
  for (int k = 0; k <= n; k++)
    cdf[k] = (c += pmf[k]);
  free(pmf);
  return cdf;
}

static void order_ci_against_binomial(void **state) {
  (void)state;
  const int ns[] = {1, 5, 20, 59, 100, 500, 1000, 2000};
  const double ps[] = {1, 50, 90, 95, 99, 99.9};
  for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
    for (size_t j = 0; j < sizeof ps / sizeof ps[0]; j++) {
      int n = ns[i];
      double q = ps[j] / 100;
      double *cdf = binom_cdf_dp(n, q);
      int64_t lo, hi;
      assert_int_equal(tl_order_stat_ci(n, ps[j], 0.95, &lo, &hi), TL_OK);
      /* lo: the largest rank whose lower tail B(lo - 1) is at most 2.5%. */
      if (lo) {
        assert_true(cdf[lo - 1] <= 0.025 + 1e-12);
        assert_true(lo == n || cdf[lo] > 0.025 - 1e-12);
      } else {
        assert_true(cdf[0] > 0.025 - 1e-12);
      }
      /* hi: the smallest rank whose B(hi - 1) reaches 97.5%. */
      if (hi) {
        assert_true(cdf[hi - 1] >= 0.975 - 1e-12);
        assert_true(hi == 1 || cdf[hi - 2] < 0.975 + 1e-12);
      } else {
        assert_true(cdf[n - 1] < 0.975 + 1e-12);
      }
      for (int k = 0; k < n; k += 1 + n / 50)
        assert_true(fabs(tl__binom_cdf(k, n, q) - cdf[k]) < 1e-9);
      free(cdf);
    }
  /* p99.9 of 500 samples has no upper bound; p99 of 1000 has one. */
  int64_t lo, hi;
  tl_order_stat_ci(500, 99.9, 0.95, &lo, &hi);
  assert_int_equal(hi, 0);
  tl_order_stat_ci(1000, 99, 0.95, &lo, &hi);
  assert_true(hi > 990 && hi <= 1000);
  /* Large n: the normal approximation n/2 +- 1.96 sqrt(n)/2 holds closely. */
  tl_order_stat_ci(1000000, 50, 0.95, &lo, &hi);
  assert_true(llabs(lo - (500000 - 980)) <= 2);
  assert_true(llabs(hi - (500000 + 981)) <= 2);
  /* Bad input. */
  assert_int_equal(tl_order_stat_ci(0, 50, 0.95, &lo, &hi), TL_EINVAL);
  assert_int_equal(tl_order_stat_ci(10, -1, 0.95, &lo, &hi), TL_EINVAL);
  assert_int_equal(tl_order_stat_ci(10, 101, 0.95, &lo, &hi), TL_EINVAL);
  assert_int_equal(tl_order_stat_ci(10, NAN, 0.95, &lo, &hi), TL_EINVAL);
  assert_int_equal(tl_order_stat_ci(10, 50, 1.0, &lo, &hi), TL_EINVAL);
}

/* The order-statistic interval as first written: every binomial mass of
 * the window by its formula, added rank by rank. */
static void order_ci_reference(int64_t n, double pct, double conf, int64_t *lo_rank,
                               int64_t *hi_rank) {
  double q = pct / 100, tail = (1 - conf) / 2;
  double mu = (double)n * q, sd = sqrt((double)n * q * (1 - q));
  double wlo = floor(mu - 40 * sd - 40), whi = ceil(mu + 40 * sd + 40);
  int64_t a = wlo < 0 ? 0 : (int64_t)wlo, b = whi > (double)n ? n : (int64_t)whi;
  double lp = log(q), lq = log1p(-q), cdf = 0;
  int64_t last_low = a > 0 ? a - 1 : -1, first_high = -1;
  for (int64_t j = a; j <= b && j <= n - 1; j++) {
    cdf += exp(lgamma((double)n + 1) - lgamma((double)j + 1) - lgamma((double)(n - j) + 1) +
               (double)j * lp + (double)(n - j) * lq);
    if (cdf <= tail)
      last_low = j;
    if (cdf >= 1 - tail) {
      first_high = j;
      break;
    }
  }
  if (first_high < 0 && b < n - 1)
    first_high = b;
  *lo_rank = last_low >= 0 ? last_low + 1 : 0;
  *hi_rank = first_high >= 0 ? first_high + 1 : 0;
}

/* The interval's ranks are the reference's for small and large n, extreme
 * percentiles and other confidences (large windows take the faster walk). */
static void order_ci_same_ranks_as_reference(void **state) {
  (void)state;
  const double ps[] = {0.001, 0.01, 0.1, 1,  2.5,  5,    10,    25,     50,
                       75,    90,   95,  99, 99.5, 99.9, 99.99, 99.999, 99.9999};
  const double confs[] = {0.95, 0.9, 0.99};
  const int64_t big[] = {10000, 12345, 50000, 99999, 262144, 1000000, 1000003, 4321987, 100000000};
  size_t cases = 0;
  for (size_t c = 0; c < sizeof confs / sizeof confs[0]; c++)
    for (size_t j = 0; j < sizeof ps / sizeof ps[0]; j++) {
      for (int64_t n = 1; n <= 300; n += c ? 7 : 1) {
        int64_t lo, hi, rlo, rhi;
        assert_int_equal(tl_order_stat_ci(n, ps[j], confs[c], &lo, &hi), TL_OK);
        order_ci_reference(n, ps[j], confs[c], &rlo, &rhi);
        assert_int_equal(lo, rlo);
        assert_int_equal(hi, rhi);
        cases++;
      }
      for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
        if (c && big[i] > 1000000)
          continue;
        int64_t lo, hi, rlo, rhi;
        assert_int_equal(tl_order_stat_ci(big[i], ps[j], confs[c], &lo, &hi), TL_OK);
        order_ci_reference(big[i], ps[j], confs[c], &rlo, &rhi);
        assert_int_equal(lo, rlo);
        assert_int_equal(hi, rhi);
        cases++;
      }
    }
  /* Sizes and percentiles drawn at random, up to 20 million samples. */
  uint64_t s = 0x9e3779b97f4a7c15ULL;
  for (int t = 0; t < 150; t++) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    int64_t n = 1000 + (int64_t)((s >> 20) % (t < 120 ? 2000000 : 20000000));
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    double pct = (double)((s >> 11) % 1000000) / 10000.0;
    int64_t lo, hi, rlo, rhi;
    assert_int_equal(tl_order_stat_ci(n, pct, 0.95, &lo, &hi), TL_OK);
    order_ci_reference(n, pct, 0.95, &rlo, &rhi);
    assert_int_equal(lo, rlo);
    assert_int_equal(hi, rhi);
    cases++;
  }
  assert_true(cases > 6000);
}

static uint64_t rnd_state = 88172645463325252ULL;
static uint64_t rnd(void) {
  rnd_state ^= rnd_state << 13;
  rnd_state ^= rnd_state >> 7;
  rnd_state ^= rnd_state << 17;
  return rnd_state;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Sorts a and b, and returns U from all the pairs: 1 for each a above a b,
 * 1/2 for each tie. */
static double sorted_pairs_u(int64_t *a, size_t na, int64_t *b, size_t nb) {
  qsort(a, na, sizeof *a, cmp_i64);
  qsort(b, nb, sizeof *b, cmp_i64);
  double u = 0;
  for (size_t i = 0; i < na; i++)
    for (size_t j = 0; j < nb; j++)
      u += a[i] > b[j] ? 1 : a[i] == b[j] ? 0.5 : 0;
  return u;
}

static void mann_whitney_against_brute_force(void **state) {
  (void)state;
  int64_t a[60], b[70], all[130];
  for (int round = 0; round < 40; round++) {
    size_t na = 1 + rnd() % 60, nb = 1 + rnd() % 70;
    int range = 1 + (int)(rnd() % 30); /* small ranges: many ties */
    int shift = (int)(rnd() % 5);
    for (size_t i = 0; i < na; i++)
      a[i] = (int64_t)(rnd() % (uint64_t)range);
    for (size_t i = 0; i < nb; i++)
      b[i] = (int64_t)(rnd() % (uint64_t)range) + shift;
    double u = sorted_pairs_u(a, na, b, nb);
    /* Variance with ties from the midranks: n1 n2 / (N (N - 1)) sum (r - mean)^2. */
    size_t n = na + nb;
    memcpy(all, a, na * sizeof *a);
    memcpy(all + na, b, nb * sizeof *b);
    double ss = 0;
    for (size_t i = 0; i < n; i++) {
      double less = 0, same = 0;
      for (size_t j = 0; j < n; j++)
        less += all[j] < all[i], same += all[j] == all[i];
      double r = less + (same + 1) / 2;
      ss += (r - (double)(n + 1) / 2) * (r - (double)(n + 1) / 2);
    }
    double var = n > 1 ? (double)na * (double)nb / ((double)n * (double)(n - 1)) * ss : 0;
    tl_mw mw;
    assert_int_equal(tl_mann_whitney(a, na, b, nb, &mw), TL_OK);
    assert_true(fabs(mw.u - u) < 1e-9);
    assert_true(fabs(mw.a_below_b - (1 - u / ((double)na * (double)nb))) < 1e-12);
    if (var > 1e-12) {
      double d = u - (double)na * (double)nb / 2;
      double ad = fabs(d) - 0.5 > 0 ? fabs(d) - 0.5 : 0;
      double z = (d < 0 ? -ad : ad) / sqrt(var);
      assert_true(fabs(mw.z - z) < 1e-9);
      assert_true(fabs(mw.p_value - erfc(fabs(z) / sqrt(2.0))) < 1e-9);
    } else {
      assert_true(mw.p_value == 1);
    }
  }
  /* Large samples, cut into stretches that the merge walks side by side:
   * U against all the pairs (draws of their own, so that the other tests'
   * stay as they are). */
  enum { LA = 3000, LB = 3500 };
  int64_t *la = malloc(LA * sizeof *la), *lb = malloc(LB * sizeof *lb);
  uint64_t r = 0x9e3779b97f4a7c15ULL;
  for (int round = 0; round < 6; round++) {
    size_t na = LA - (size_t)round * 300, nb = LB - (size_t)round * 200;
    uint64_t range = round % 2 ? 40 : 1000000, shift = (uint64_t)round * range / 8;
    for (size_t i = 0; i < na + nb; i++) {
      r ^= r << 13, r ^= r >> 7, r ^= r << 17;
      if (i < na)
        la[i] = (int64_t)(r % range);
      else
        lb[i - na] = (int64_t)(r % range + shift);
    }
    double u = sorted_pairs_u(la, na, lb, nb);
    /* The ties of both together: t^3 - t for each value held t times. */
    long double ties = 0;
    for (size_t i = 0, j = 0; i < na || j < nb;) {
      int64_t v = j == nb || (i < na && la[i] <= lb[j]) ? la[i] : lb[j];
      long double t = 0;
      for (; i < na && la[i] == v; i++)
        t++;
      for (; j < nb && lb[j] == v; j++)
        t++;
      ties += t * t * t - t;
    }
    long double n1 = (long double)na, n2 = (long double)nb, n = n1 + n2;
    long double var = n1 * n2 / 12.0L * ((n + 1) - ties / (n * (n - 1)));
    long double d = (long double)u - n1 * n2 / 2, ad = fabsl(d) - 0.5L;
    tl_mw mw;
    assert_int_equal(tl_mann_whitney(la, na, lb, nb, &mw), TL_OK);
    assert_true(mw.u == u);
    assert_true(mw.z == (double)((d < 0 ? -ad : ad) / sqrtl(var)));
  }
  free(la);
  free(lb);
  /* Identical samples: U is half the pairs, p is 1. */
  for (size_t i = 0; i < 50; i++)
    a[i] = (int64_t)(i * 7 % 13);
  qsort(a, 50, sizeof *a, cmp_i64);
  tl_mw mw;
  tl_mann_whitney(a, 50, a, 50, &mw);
  assert_true(mw.u == 1250);
  assert_true(mw.p_value == 1);
  assert_int_equal(tl_mann_whitney(a, 0, a, 5, &mw), TL_EINVAL);
}

/* ======================================================================== */
/* Steps                                                                     */

static double noise(double amp) { return ((double)(rnd() % 2001) / 1000.0 - 1.0) * amp; }

static void planted_steps(void **state) {
  (void)state;
  double x[40];
  tl_step steps[8];
  size_t n;
  /* One step after 20 points: 52 -> 58 with noise of +-1. */
  for (int i = 0; i < 30; i++)
    x[i] = (i < 20 ? 52.0 : 58.0) + noise(1);
  assert_int_equal(tl_steps_find(x, 30, NULL, steps, 8, &n), TL_OK);
  assert_int_equal(n, 1);
  assert_int_equal(steps[0].index, 20);
  assert_true(fabs(steps[0].before - 52) < 1 && fabs(steps[0].after - 58) < 1);
  assert_true(steps[0].p_value <= 0.01);
  /* Two steps: up at 10, back down at 25. */
  for (int i = 0; i < 36; i++)
    x[i] = (i >= 10 && i < 25 ? 70.0 : 50.0) + noise(2);
  assert_int_equal(tl_steps_find(x, 36, NULL, steps, 8, &n), TL_OK);
  assert_int_equal(n, 2);
  assert_int_equal(steps[0].index, 10);
  assert_int_equal(steps[1].index, 25);
  assert_true(steps[1].after < steps[1].before);
  /* Noise alone, a step smaller than 5%, and too short a series: none. */
  for (int i = 0; i < 40; i++)
    x[i] = 52.0 + noise(3);
  assert_int_equal(tl_steps_find(x, 40, NULL, steps, 8, &n), TL_OK);
  assert_int_equal(n, 0);
  for (int i = 0; i < 40; i++)
    x[i] = (i < 20 ? 100.0 : 102.0) + noise(0.1);
  assert_int_equal(tl_steps_find(x, 40, NULL, steps, 8, &n), TL_OK);
  assert_int_equal(n, 0);
  for (int i = 0; i < 5; i++)
    x[i] = i < 3 ? 1 : 100;
  assert_int_equal(tl_steps_find(x, 5, NULL, steps, 8, &n), TL_OK);
  assert_int_equal(n, 0);
  /* A constant series, and one with an infinite value. */
  for (int i = 0; i < 20; i++)
    x[i] = 5;
  assert_int_equal(tl_steps_find(x, 20, NULL, steps, 8, &n), TL_OK);
  assert_int_equal(n, 0);
  x[3] = INFINITY;
  assert_int_equal(tl_steps_find(x, 20, NULL, steps, 8, &n), TL_EINVAL);
}

/* ======================================================================== */
/* Through the store                                                         */

typedef tl_test_store fixture;

static int64_t session_counter;
static const char *session_probe = "settimeout"; /* of the sessions add_session stores */

/* Stores one session and sets its start time (ns; 0 keeps the real one). */
static void add_session(fixture *f, const char *label, int64_t delay_ns, const int64_t *v, size_t n,
                        int64_t started_ns) {
  tl_session_spec spec = {
      .run_uuid = "run",
      .label = label,
      .probe = session_probe,
      .delay_ns = delay_ns,
      .command_line = "tlcollect",
      .host_fingerprint = "feedfacefeedface",
      .hostname = "stats",
      .libuv_version = "1.44.2",
  };
  tl_writer *w;
  char uuid[37];
  assert_int_equal(tl_writer_begin(f->s, &spec, &w, uuid), TL_OK);
  if (n)
    assert_int_equal(tl_writer_add(w, v, n), TL_OK);
  assert_int_equal(tl_writer_end(w, "complete"), TL_OK);
  session_counter++;
  if (!started_ns)
    started_ns = 1700000000000000000LL + session_counter * 1000000000LL;
  sqlite3 *db;
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
  sqlite3_busy_timeout(db, 5000);
  assert_int_equal(sqlite3_prepare_v2(
                       db,
                       "UPDATE sessions SET started_ns = ? WHERE " TL_TEST_UUID_TEXT("uuid") " = ?",
                       -1, &st, NULL),
                   SQLITE_OK);
  sqlite3_bind_int64(st, 1, started_ns);
  sqlite3_bind_text(st, 2, uuid, -1, SQLITE_STATIC);
  assert_int_equal(sqlite3_step(st), SQLITE_DONE);
  sqlite3_finalize(st);
  sqlite3_close(db);
}

/* n samples uniform in [lo, lo + width) nanoseconds. */
static void uniform(int64_t *v, size_t n, int64_t lo, int64_t width) {
  for (size_t i = 0; i < n; i++)
    v[i] = lo + (int64_t)(rnd() % (uint64_t)width);
}

/* The comparison of label a (and b, unless NULL) at percentiles p (np of
 * them; none: the defaults). */
static void compare_labels(fixture *f, const char *a, const char *b, const double *p, size_t np,
                           tl_comparison *cmp) {
  const char *labels[2] = {a, b};
  tl_compare_opts o;
  tl_compare_opts_init(&o);
  o.labels = labels;
  o.label_count = b ? 2 : 1;
  if (np) {
    memcpy(o.pcts, p, np * sizeof *p);
    o.pct_count = np;
  }
  char err[512];
  assert_int_equal(tl_compare(f->s, &o, cmp, err, sizeof err), TL_OK);
}

static void compare2(fixture *f, const char *a, const char *b, const double *p, size_t np,
                     tl_comparison *cmp, tl_stats *st) {
  compare_labels(f, a, b, p, np, cmp);
  char err[512];
  assert_int_equal(tl_stats_compute(f->s, cmp, st, err, sizeof err), TL_OK);
}

static char *markdown(const tl_comparison *cmp, const tl_stats *st) {
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  assert_int_equal(tl__stats_markdown(cmp, st, m), TL_OK);
  fclose(m);
  return buf;
}

static const double P3[] = {50, 90, 99};

static void identical_data_claims_nothing(void **state) {
  fixture *f = *state;
  int64_t v[2000];
  /* One session each, then six sessions each: the same samples twice. */
  for (int s = 0; s < 7; s++) {
    uniform(v, 2000, 1000000, 2000000);
    add_session(f, s ? "many1" : "one1", 0, v, 2000, 0);
    add_session(f, s ? "many2" : "one2", 0, v, 2000, 0);
  }
  const char *pairs[2][2] = {{"one1", "one2"}, {"many1", "many2"}};
  for (int t = 0; t < 2; t++) {
    tl_comparison cmp;
    tl_stats st;
    compare2(f, pairs[t][0], pairs[t][1], P3, 3, &cmp, &st);
    assert_int_equal(st.pair_count, 1);
    assert_int_equal(st.groups[0].method, t ? TL_CI_SESSIONS : TL_CI_ORDER);
    for (size_t k = 0; k < 3; k++) {
      assert_int_equal(st.pairs[0].diff_ns[k], 0);
      assert_false(st.pairs[0].clear[k]);
      assert_true(st.pairs[0].lo_ns[k] <= 0 && st.pairs[0].hi_ns[k] >= 0);
      char line[512];
      tl_pair_sentence(&cmp, &st, &st.pairs[0], k, line, sizeof line);
      /* One session a label measures no run-to-run variation: no verdict,
       * and the sentence says what would settle it. */
      assert_int_equal(st.pairs[0].decided, t);
      assert_non_null(strstr(line, t ? "no clear difference between many1 and many2 at p"
                                     : "one1 and one2 cannot be told apart at p"));
      assert_non_null(strstr(line, t ? "with 6 sessions each" : "from 1 session each"));
      if (!t)
        assert_non_null(strstr(line, "(tlcollect --repeat 5)"));
    }
    assert_true(st.pairs[0].mw.p_value == 1);
    char *md = markdown(&cmp, &st);
    assert_non_null(strstr(md, "are not clearly different (Mann-Whitney, p = 1.000)"));
    assert_null(strstr(md, "is faster than"));
    free(md);
    tl_stats_free(&st);
    tl_comparison_free(&cmp);
  }
}

/* Microsecond timers (the uv probe at 0 ms) are written with the digits
 * they need: a 40 us difference is not "0.000 ms". */
static void microseconds_keep_their_digits(void **state) {
  fixture *f = *state;
  int64_t v[5000];
  session_probe = "uv"; /* 0 means 0: the samples are the lateness */
  for (int s = 0; s < 3; s++) {
    uniform(v, 5000, 100000, 20000); /* 100 to 120 us */
    add_session(f, "quick", 0, v, 5000, 0);
    uniform(v, 5000, 140000, 20000); /* 40 us later */
    add_session(f, "later", 0, v, 5000, 0);
  }
  session_probe = "settimeout";
  tl_comparison cmp;
  tl_stats st;
  compare2(f, "later", "quick", P3, 3, &cmp, &st);
  char line[512];
  tl_pair_sentence(&cmp, &st, &st.pairs[0], 0, line, sizeof line);
  /* p50 of quick is ~0.110 ms, of later ~0.150 ms: a difference of ~0.040. */
  const char *by = strstr(line, "quick is faster than later at p50 by ");
  assert_non_null(by);
  double d = 0;
  char unit[8] = "";
  assert_int_equal(
      sscanf(by + strlen("quick is faster than later at p50 by "), "%lf %7s", &d, unit), 2);
  assert_true(d > 0.035 && d < 0.045); /* the true shift is 0.040 ms */
  assert_string_equal(unit, "ms");
  assert_null(strstr(line, "0.000"));
  char *md = markdown(&cmp, &st);
  assert_non_null(strstr(md, "| quick | uv | 0 ms | 0.1"));
  free(md);
  tl_stats_free(&st);
  tl_comparison_free(&cmp);
}

static void shifted_data_found_and_covered(void **state) {
  fixture *f = *state;
  const int64_t shift = 3000000; /* 3 ms */
  int64_t v[5000];
  /* Independent draws of uniform [1, 3) ms, and of the same shifted by 3 ms:
   * every true percentile differs by exactly 3 ms. */
  for (int s = 0; s < 3; s++) {
    uniform(v, 5000, 1000000, 2000000);
    add_session(f, "fast", 0, v, 5000, 0);
    uniform(v, 5000, 1000000 + shift, 2000000);
    add_session(f, "slow", 0, v, 5000, 0);
  }
  for (int s = 0; s < 6; s++) {
    uniform(v, 1000, 1000000, 2000000);
    add_session(f, "fast6", 0, v, 1000, 0);
    uniform(v, 1000, 1000000 + shift, 2000000);
    add_session(f, "slow6", 0, v, 1000, 0);
  }
  const char *pairs[2][2] = {{"slow", "fast"}, {"slow6", "fast6"}};
  for (int t = 0; t < 2; t++) {
    tl_comparison cmp;
    tl_stats st;
    compare2(f, pairs[t][0], pairs[t][1], P3, 3, &cmp, &st);
    assert_int_equal(st.groups[1].method, t ? TL_CI_SESSIONS : TL_CI_ORDER);
    const tl_pair_stats *p = &st.pairs[0];
    for (size_t k = 0; k < 3; k++) {
      /* fast minus slow is -3 ms: clear, and the interval covers it. */
      assert_true(p->clear[k]);
      assert_true(p->lo_ns[k] <= -shift && p->hi_ns[k] >= -shift);
      assert_true(p->hi_ns[k] - p->lo_ns[k] < 400000); /* and is narrow */
      /* Each group's interval holds its estimate and lies near its true
       * percentile (its coverage is measured in intervals_cover_the_truth
       * and group_intervals_at_every_size). */
      double q = P3[k] / 100;
      int64_t truth_fast = 1000000 + (int64_t)(q * 2000000);
      const tl_pct_stats *gf = &st.groups[1].pct[k];
      int64_t est = cmp.groups[1].dist.pct_ns[k], wide = gf->hi_ns - gf->lo_ns;
      assert_true(gf->lo_ns <= est && est <= gf->hi_ns);
      assert_true(gf->lo_ns - wide <= truth_fast && truth_fast <= gf->hi_ns + wide);
      char line[512];
      tl_pair_sentence(&cmp, &st, p, k, line, sizeof line);
      char want[64];
      snprintf(want, sizeof want, "%s is faster than %s at p%g by ", pairs[t][1], pairs[t][0],
               P3[k]);
      assert_non_null(strstr(line, want));
      assert_non_null(strstr(line, "(95% CI "));
    }
    assert_true(p->mw.p_value < 1e-6);
    assert_true(p->mw.a_below_b < 0.01); /* slow is almost never below fast */
    /* Asked the other way round, the same pair gives the mirrored interval. */
    tl_comparison rev;
    tl_stats rst;
    compare2(f, pairs[t][1], pairs[t][0], P3, 3, &rev, &rst);
    for (size_t k = 0; k < 3; k++) {
      assert_int_equal(rst.pairs[0].diff_ns[k], -p->diff_ns[k]);
      assert_int_equal(rst.pairs[0].lo_ns[k], -p->hi_ns[k]);
      assert_int_equal(rst.pairs[0].hi_ns[k], -p->lo_ns[k]);
    }
    assert_true(fabs(rst.pairs[0].mw.a_below_b - (1 - p->mw.a_below_b)) < 1e-12);
    tl_stats_free(&rst);
    tl_comparison_free(&rev);
    char *md = markdown(&cmp, &st);
    assert_non_null(strstr(md, "is faster than one on slow"));
    free(md);
    tl_stats_free(&st);
    tl_comparison_free(&cmp);
  }
}

/* The order-statistic interval is the pair of samples at the ranks the
 * binomial gives, read from a plain sort here. */
static void order_interval_is_the_sorted_samples(void **state) {
  fixture *f = *state;
  int64_t v[1500], s[1500];
  uniform(v, 1500, 500000, 10000000);
  add_session(f, "ord", 0, v, 1000, 0);
  add_session(f, "ord", 0, v + 1000, 500, 0);
  memcpy(s, v, sizeof v);
  qsort(s, 1500, sizeof *s, cmp_i64);
  const double p[] = {10, 50, 90, 99};
  tl_comparison cmp;
  tl_stats st;
  compare2(f, "ord", NULL, p, 4, &cmp, &st);
  assert_int_equal(st.groups[0].method, TL_CI_ORDER);
  for (size_t k = 0; k < 4; k++) {
    double *cdf = binom_cdf_dp(1500, p[k] / 100);
    int lo = 0, hi = 0;
    for (int j = 0; j < 1500; j++) {
      if (cdf[j] <= 0.025)
        lo = j + 1;
      if (!hi && cdf[j] >= 0.975)
        hi = j + 1;
    }
    free(cdf);
    assert_int_equal(st.groups[0].pct[k].lo_ns, s[lo - 1]);
    assert_int_equal(st.groups[0].pct[k].hi_ns, s[hi - 1]);
    assert_true(cmp.groups[0].dist.pct_ns[k] >= st.groups[0].pct[k].lo_ns);
    assert_true(cmp.groups[0].dist.pct_ns[k] <= st.groups[0].pct[k].hi_ns);
    /* Spread: the two sessions' own values. */
    int64_t a[1000], b[500];
    memcpy(a, v, sizeof a);
    memcpy(b, v + 1000, sizeof b);
    qsort(a, 1000, sizeof *a, cmp_i64);
    qsort(b, 500, sizeof *b, cmp_i64);
    assert_int_equal(st.groups[0].pct[k].spread_ns,
                     llabs(a[tl_rank(p[k], 1000) - 1] - b[tl_rank(p[k], 500) - 1]));
  }
  tl_stats_free(&st);
  tl_comparison_free(&cmp);
}

static void too_few_samples_warned(void **state) {
  fixture *f = *state;
  int64_t v[1000];
  uniform(v, 500, 1000000, 1000000);
  add_session(f, "small", 0, v, 500, 0);
  uniform(v, 1000, 1000000, 1000000);
  add_session(f, "big", 0, v, 1000, 0);
  const double p[] = {50, 99, 99.9, 100};
  tl_comparison cmp;
  tl_stats st;
  compare2(f, "small", "big", p, 4, &cmp, &st);
  const tl_pct_stats *sm = st.groups[0].pct, *bg = st.groups[1].pct;
  assert_false(sm[0].few);
  assert_true(sm[1].few); /* p99 of 500: 5 above */
  assert_int_equal(sm[1].above, 5);
  assert_int_equal(sm[1].needed, 1000);
  assert_false(bg[1].few); /* p99 of 1000: 10 above, enough */
  assert_true(sm[2].few && bg[2].few);
  assert_int_equal(sm[2].above, 0);
  assert_int_equal(sm[2].needed, 10000);
  assert_int_equal(sm[2].hi_ns, -1); /* p99.9 of 500 cannot be bounded above */
  assert_true(sm[3].few);
  assert_int_equal(sm[3].needed, 0);
  char *md = markdown(&cmp, &st);
  assert_non_null(
      strstr(md, "p99.9 of small (settimeout, 0 ms) rests on too few samples: 0 above it, 10 "
                 "needed; collect at least 10000 samples."));
  assert_non_null(strstr(md, "p99 of small (settimeout, 0 ms) rests on too few samples"));
  assert_null(strstr(md, "p99 of big"));
  assert_non_null(strstr(md, "(few samples)"));
  assert_non_null(strstr(md, "to ?)"));
  char line[512];
  tl_pair_sentence(&cmp, &st, &st.pairs[0], 2, line, sizeof line);
  assert_non_null(strstr(line, "too few samples for p99.9 on small"));
  free(md);
  tl_stats_free(&st);
  tl_comparison_free(&cmp);
}

static const int64_t DAY = 86400LL * 1000000000LL;
static const int64_t NOV1 = 1793491200LL * 1000000000LL; /* 2026-11-01T00:00:00Z */

/* Twelve daily sessions of 1000 samples; p99 steps from about 52 to about
 * 58 ms on the seventh day. */
static void planted_step_found_on_its_date(void **state) {
  fixture *f = *state;
  int64_t v[1000];
  for (int d = 0; d < 12; d++) {
    int64_t tail = d < 6 ? 52000000 : 58000000;
    for (int i = 0; i < 1000; i++)
      v[i] = i < 980 ? 50000000 + (int64_t)(rnd() % 1000000)
                     : tail + (int64_t)(rnd() % 200000) - 100000;
    add_session(f, "drop", 50000000, v, 1000, NOV1 + d * DAY + 3600LL * 1000000000LL);
  }
  char date[32];
  tl_date_format(NOV1 + 6 * DAY, date, sizeof date);
  assert_string_equal(date, "2026-11-07T00:00:00Z");
  const double p[] = {50, 99};
  tl_comparison cmp;
  tl_stats st;
  compare2(f, "drop", NULL, p, 2, &cmp, &st);
  const tl_group_stats *g = &st.groups[0];
  assert_int_equal(g->session_count, 12);
  assert_int_equal(g->change_count, 1); /* p99 only: p90 stays near 50.9 ms */
  assert_true(g->changes[0].pct == 99);
  assert_int_equal(g->changes[0].session_index, 6);
  assert_int_equal(g->changes[0].at_ns, NOV1 + 6 * DAY + 3600LL * 1000000000LL);
  assert_true(fabs(g->changes[0].before_ns - 52e6) < 2e5);
  assert_true(fabs(g->changes[0].after_ns - 58e6) < 2e5);
  /* The series are each session's own values. */
  for (size_t i = 0; i < 12; i++) {
    assert_int_equal(g->started_ns[i], NOV1 + (int64_t)i * DAY + 3600LL * 1000000000LL);
    assert_true(g->series_ns[1][i] > (i < 6 ? 51800000 : 57800000));
    assert_true(g->series_ns[1][i] < (i < 6 ? 52200000 : 58200000));
  }
  char line[256];
  tl_change_sentence(&cmp.groups[0], &g->changes[0], line, sizeof line);
  /* Said in lateness: 52 and 58 ms are 2 and 8 ms past the 50 ms. */
  assert_non_null(strstr(line, "p99 lateness of drop at 50 ms (settimeout) rose from "));
  double before = 0, after = 0;
  assert_int_equal(sscanf(strstr(line, "rose from ") + 10, "%lf to %lf", &before, &after), 2);
  assert_true(fabs(before - 2) < 0.2 && fabs(after - 8) < 0.2);
  assert_non_null(strstr(line, " ms on 2026-11-07"));
  char *md = markdown(&cmp, &st);
  assert_non_null(strstr(md, "- p99 lateness of drop at 50 ms (settimeout) rose from "));
  /* The method said once, not in every row. */
  assert_non_null(strstr(md, "each row's from a bootstrap over its sessions (12)"));
  assert_null(strstr(md, "interval from"));
  free(md);
  tl_stats_free(&st);
  tl_comparison_free(&cmp);
}

/* Sessions of one label that disagree more than the difference claimed. */
static void session_spread_reported(void **state) {
  fixture *f = *state;
  int64_t v[1000];
  for (int s = 0; s < 6; s++) {
    /* Five sessions at 1.0-1.1 ms and one at 5.0-5.1 ms; calm at 2.0-2.1. */
    uniform(v, 1000, s < 5 ? 1000000 : 5000000, 100000);
    add_session(f, "jumpy", 0, v, 1000, 0);
    uniform(v, 1000, 2000000, 100000);
    add_session(f, "calm", 0, v, 1000, 0);
  }
  const double p[] = {10};
  tl_comparison cmp;
  tl_stats st;
  compare2(f, "calm", "jumpy", p, 1, &cmp, &st);
  const tl_pair_stats *pr = &st.pairs[0];
  assert_true(st.groups[1].pct[0].spread_ns > 3900000);
  assert_true(st.groups[0].pct[0].spread_ns < 20000);
  /* jumpy is clearly faster at p10 (by about 1 ms: five of its six sessions
   * are a hundred times less late than calm's), but its sessions disagree
   * by about 4 ms. */
  assert_true(pr->decided);
  assert_true(pr->clear[0]);
  assert_true(pr->spread_over[0]);
  char line[512];
  tl_pair_sentence(&cmp, &st, pr, 0, line, sizeof line);
  assert_non_null(strstr(line, "jumpy is faster than calm at p10 by 1.00 ms (95% CI "));
  assert_non_null(strstr(line, " ms, 6 sessions each); but the sessions of jumpy disagree with "
                               "each other by up to 4."));
  assert_non_null(strstr(line, "ms at p10, more than this difference"));
  tl_stats_free(&st);
  tl_comparison_free(&cmp);
}

/* Sessions without samples, and sessions too short for their p90 and p99,
 * stay out of the series: four short sessions at 100 ms would otherwise
 * look like a step at the end. */
static void empty_and_short_sessions(void **state) {
  fixture *f = *state;
  int64_t v[1000];
  for (int s = 0; s < 9; s++) {
    uniform(v, 1000, 1000000, 100000);
    add_session(f, "e", 0, v, 1000, 0);
  }
  add_session(f, "e", 0, v, 0, 0);
  for (int s = 0; s < 4; s++) {
    uniform(v, 50, 100000000, 100000);
    add_session(f, "e", 0, v, 50, 0);
  }
  add_session(f, "none", 0, v, 0, 0);
  tl_comparison cmp;
  tl_stats st;
  compare2(f, "e", "none", P3, 3, &cmp, &st);
  const tl_group_stats *g = &st.groups[0];
  assert_int_equal(g->session_count, 14);
  assert_int_equal(g->change_count, 0);
  for (size_t i = 0; i < 14; i++) {
    assert_true((g->series_ns[0][i] < 0) == (i >= 9));
    assert_true((g->series_ns[1][i] < 0) == (i >= 9));
  }
  assert_int_equal(st.pair_count, 0);
  assert_int_equal(st.groups[1].session_count, 1);
  assert_int_equal(st.groups[1].series_ns[0][0], -1);
  char *md = markdown(&cmp, &st);
  assert_non_null(strstr(md, "| none | settimeout | 0 ms | - | - | - |\n"));
  free(md);
  tl_stats_free(&st);
  tl_comparison_free(&cmp);
}

static char *check(fixture *f, const char *baseline, const char *max, const char *labels,
                   int expect) {
  tl_check_opts o;
  tl_check_opts_init(&o);
  o.baseline = baseline;
  /* The percentiles the expectations below count on, whatever the default. */
  o.compare.pcts[0] = 50;
  o.compare.pcts[1] = 90;
  o.compare.pcts[2] = 99;
  o.compare.pct_count = 3;
  assert_int_equal(tl_regression_parse(max, &o.max_regression, NULL, 0), TL_OK);
  char buf[256], *items[8];
  size_t n = 0;
  if (labels) {
    snprintf(buf, sizeof buf, "%s", labels);
    assert_int_equal(tl_list_split(buf, items, 8, &n, NULL, 0), TL_OK);
    o.compare.labels = (const char *const *)items;
    o.compare.label_count = n;
  }
  char *out = NULL, err[512] = "";
  size_t len;
  FILE *m = open_memstream(&out, &len);
  int rc = tl_report_check(f->s, &o, m, err, sizeof err);
  fclose(m);
  if (rc != expect || getenv("TL_SHOW"))
    fprintf(stderr, "check: %d (%s)\n%s", rc, err, out);
  assert_int_equal(rc, expect);
  if (rc < 0) {
    free(out);
    return strdup(err);
  }
  return out;
}

static void regression_check(void **state) {
  fixture *f = *state;
  int64_t v[2000];
  /* base: 6 sessions of 10-12 ms. worse: 20% slower. same: like base.
   * hist: 5 sessions like base, then a latest session 30% slower. */
  for (int s = 0; s < 6; s++) {
    uniform(v, 2000, 10000000, 2000000);
    add_session(f, "base", 0, v, 2000, 0);
    uniform(v, 2000, 12000000, 2400000);
    add_session(f, "worse", 0, v, 2000, 0);
    uniform(v, 2000, 10000000, 2000000);
    add_session(f, "same", 0, v, 2000, 0);
    if (s < 5)
      uniform(v, 2000, 10000000, 2000000);
    else
      uniform(v, 2000, 13000000, 2600000);
    add_session(f, "hist", 0, v, 2000, 0);
  }
  char *out = check(f, "base", "10%", "worse,same", TL_CHECK_REGRESSED);
  assert_non_null(strstr(out, "regression: worse settimeout 0 ms p90 is "));
  assert_non_null(strstr(out, "above base ("));
  assert_null(strstr(out, "regression: same"));
  assert_null(strstr(out, "regression: base"));
  assert_non_null(strstr(out, "3 regressions above 10% in "));
  free(out);
  /* A looser threshold lets the 20% through. */
  out = check(f, "base", "25%", "worse,same", TL_OK);
  assert_non_null(strstr(out, "ok: no regression above 25% in "));
  free(out);
  /* Without a baseline, only history: the latest session of hist is worse. */
  out = check(f, NULL, "10%", "hist,same", TL_CHECK_REGRESSED);
  assert_non_null(strstr(out, "regression: hist settimeout 0 ms p50 in the latest session is "));
  assert_non_null(strstr(out, "above its 5 earlier sessions"));
  assert_null(strstr(out, "regression: same"));
  free(out);
  /* Every label (none named) against base. */
  out = check(f, "base", "10%", NULL, TL_CHECK_REGRESSED);
  assert_non_null(strstr(out, "regression: worse"));
  assert_non_null(strstr(out, "regression: hist"));
  free(out);
  /* Percentiles with too few samples are skipped, and said so; a single
   * session without a baseline leaves nothing to check. */
  uniform(v, 50, 10000000, 2000000);
  add_session(f, "tiny", 0, v, 50, 0);
  add_session(f, "tiny", 0, v, 50, 0);
  add_session(f, "single", 0, v, 50, 0);
  out = check(f, NULL, "10%", "tiny", TL_OK);
  assert_string_equal(out, "nothing to check: no label has a group of the baseline's probe and "
                           "delay or three sessions or more with enough samples (2 skipped: too "
                           "few samples; 1 skipped: too few sessions, collect at least 3 a "
                           "label)\n");
  free(out);
  out = check(f, NULL, "10%", "single", TL_OK);
  assert_non_null(strstr(out, "nothing to check"));
  free(out);
  /* An unknown baseline names what there is; a bad one is refused. */
  out = check(f, "nosuch", "10%", NULL, TL_ENOTFOUND);
  assert_non_null(strstr(out, "unknown label 'nosuch'"));
  free(out);
  out = check(f, "no such", "10%", NULL, TL_EINVAL);
  free(out);
  /* Parsing the threshold. */
  double x;
  assert_int_equal(tl_regression_parse("10%", &x, NULL, 0), TL_OK);
  assert_true(fabs(x - 0.10) < 1e-12);
  assert_int_equal(tl_regression_parse("2.5", &x, NULL, 0), TL_OK);
  assert_true(fabs(x - 0.025) < 1e-12);
  const char *bad[] = {"",     "%",    "0",   "0%",  "-5%", "abc",
                       "10%%", "10 %", "1e9", " 10", "nan", "inf"};
  char why[128];
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_equal(tl_regression_parse(bad[i], &x, why, sizeof why), TL_EINVAL);
}

/* The planted regression of a 50 ms timer: p90 lateness goes from about 2.1
 * to 5.6 ms (2.6 times worse), which is only 6.7% of the total latency. The
 * check compares lateness, so it fails at the default 10%; two samples of one
 * distribution still pass. */
static void check_compares_lateness(void **state) {
  fixture *f = *state;
  int64_t v[2000];
  const int64_t ms = 1000000, d = 50 * ms;
  for (int s = 0; s < 6; s++) {
    uniform(v, 2000, d + ms / 2, 1800 * 1000); /* lateness 0.5 to 2.3 ms: p90 2.12 */
    add_session(f, "vbox", d, v, 2000, 0);
    uniform(v, 2000, d + ms / 2, 1800 * 1000);
    add_session(f, "twin", d, v, 2000, 0);
    if (s < 5)
      uniform(v, 2000, d + ms / 2, 1800 * 1000);
    else
      uniform(v, 2000, d + ms, 5100 * 1000); /* lateness 1 to 6.1 ms: p90 5.59 */
    add_session(f, "droplet", d, v, 2000, 0);
    uniform(v, 2000, d + ms, 5100 * 1000);
    add_session(f, "later", d, v, 2000, 0);
  }
  /* History: the latest droplet session, at the default threshold. */
  char *out = check(f, NULL, "10%", "droplet", TL_CHECK_REGRESSED);
  assert_non_null(strstr(out, "regression: droplet settimeout 50 ms p90 in the latest session"));
  assert_non_null(strstr(out, " ms late, "));
  free(out);
  /* Against a baseline: every session of later is as late as droplet's last. */
  out = check(f, "vbox", "10%", "later", TL_CHECK_REGRESSED);
  assert_non_null(strstr(out, "regression: later settimeout 50 ms p90 is "));
  free(out);
  /* Two samples of one distribution pass, against each other and in history. */
  out = check(f, "vbox", "10%", "twin", TL_OK);
  assert_non_null(strstr(out, "ok: no regression above 10% in "));
  free(out);
}

/* More samples than the statistics keep in memory: the intervals still come
 * from the exact order statistics of every sample, and the output is the
 * same on every run. */
static void large_groups_and_determinism(void **state) {
  fixture *f = *state;
  size_t n = 200000;
  int64_t *v = malloc(2 * n * sizeof *v), *s = malloc(2 * n * sizeof *s);
  uniform(v, 2 * n, 1000000, 50000000);
  add_session(f, "huge", 0, v, n, 0);
  add_session(f, "huge", 0, v + n, n, 0);
  memcpy(s, v, 2 * n * sizeof *v);
  qsort(s, 2 * n, sizeof *s, cmp_i64);
  uniform(v, 20000, 1000000, 50000000);
  add_session(f, "other", 0, v, 20000, 0);
  tl_comparison cmp;
  tl_stats st;
  const double p[] = {50, 99.9};
  compare2(f, "huge", "other", p, 2, &cmp, &st);
  assert_true(cmp.groups[0].dist.count > TL_STATS_KEEP);
  char *md1 = markdown(&cmp, &st);
  tl_stats_free(&st);
  tl_comparison_free(&cmp);
  compare2(f, "huge", "other", p, 2, &cmp, &st);
  char *md2 = markdown(&cmp, &st);
  assert_string_equal(md1, md2);
  /* The samples at the binomial ranks, read from a plain sort. */
  assert_int_equal(st.groups[0].method, TL_CI_ORDER);
  for (size_t k = 0; k < 2; k++) {
    int64_t lo, hi;
    tl_order_stat_ci(2 * (int64_t)n, p[k], 0.95, &lo, &hi);
    assert_int_equal(st.groups[0].pct[k].lo_ns, s[lo - 1]);
    assert_int_equal(st.groups[0].pct[k].hi_ns, s[hi - 1]);
    assert_int_equal(cmp.groups[0].dist.pct_ns[k], s[tl_rank(p[k], 2 * (int64_t)n) - 1]);
  }
  /* The same bytes through the one-call renderer. */
  char *buf = NULL, err[256];
  size_t len;
  FILE *m = open_memstream(&buf, &len);
  assert_int_equal(tl__render_stats_markdown(f->s, &cmp, m, err, sizeof err), TL_OK);
  fclose(m);
  assert_string_equal(buf, md1);
  free(buf);
  /* The same bytes when the statistics read the samples themselves instead
   * of taking those the comparison kept while reading them. */
  for (size_t g = 0; g < cmp.group_count; g++)
    assert_non_null(tl__group_kept(&cmp, g));
  tl__comparison_drop_kept(&cmp);
  tl_stats_free(&st);
  assert_int_equal(tl_stats_compute(f->s, &cmp, &st, err, sizeof err), TL_OK);
  char *md3 = markdown(&cmp, &st);
  assert_string_equal(md3, md1);
  free(md3);
  free(md1);
  free(md2);
  free(v);
  free(s);
  tl_stats_free(&st);
  tl_comparison_free(&cmp);
}

/* What a hook of tl__compare_each saw: each group once, with its kept
 * samples; it fails at group fail_at (SIZE_MAX: never). */
typedef struct {
  size_t calls, kept, fail_at;
  char seen[32];
  size_t order[32]; /* the groups in the order handed over */
} hook_seen;

static int note_group(void *ctx, tl_store *store, const tl_comparison *c, size_t group) {
  hook_seen *h = ctx;
  (void)store;
  assert_true(group < c->group_count && group < sizeof h->seen);
  assert_int_equal(h->seen[group], 0);
  h->seen[group] = 1;
  h->order[h->calls] = group;
  h->kept += tl__group_kept(c, group) != NULL;
  return h->calls++ == h->fail_at ? TL_EIO : TL_OK;
}

/* tl_compare_with_stats works each group's statistics out as the
 * comparison's pass over it ends, from the samples kept for them, and then
 * frees them for the next groups: the same bytes as the statistics after
 * the comparison, which read again the groups beyond the kept samples'
 * memory (here lowered to one pass's eight groups, of 20 groups in three
 * passes and two delays, with a lasting change in one label). */
static void statistics_taken_as_the_comparison_reads(void **state) {
  fixture *f = *state;
  int64_t v[1000];
  const char *labels[10] = {"g0", "g1", "g2", "g3", "g4", "g5", "g6", "g7", "g8", "g9"};
  for (int l = 0; l < 10; l++)
    for (int d = 0; d < 12; d++)
      for (int delay = 0; delay < 2; delay++) {
        int64_t tail = l == 3 && d >= 6 ? 58000000 : 52000000;
        for (int i = 0; i < 1000; i++)
          v[i] = i < 980 ? 50000000 + (int64_t)(rnd() % 1000000) + l * 20000
                         : tail + (int64_t)(rnd() % 200000) - 100000;
        add_session(f, labels[l], delay * 50000000, v, 1000, NOV1 + d * DAY + delay);
      }
  tl_compare_opts o;
  tl_compare_opts_init(&o);
  o.labels = labels;
  o.label_count = 10;
  char err[512];
  size_t budget = tl__kept_budget;
  tl__kept_budget = 8 * 12000 * (2 * sizeof(int64_t) + sizeof(uint32_t));
  tl_comparison cmp;
  tl_stats after, with;
  assert_int_equal(tl_compare(f->s, &o, &cmp, err, sizeof err), TL_OK);
  assert_int_equal(cmp.group_count, 20);
  size_t kept = 0;
  for (size_t g = 0; g < cmp.group_count; g++)
    kept += tl__group_kept(&cmp, g) != NULL;
  assert_int_equal(kept, 8); /* the first pass's; the others are read again */
  assert_int_equal(tl_stats_compute_unranked(f->s, &cmp, &after, err, sizeof err), TL_OK);
  char *md_after = markdown(&cmp, &after);
  tl_stats_free(&after);
  tl_comparison_free(&cmp);

  assert_int_equal(tl_compare_with_stats(f->s, &o, &cmp, &with, err, sizeof err), TL_OK);
  char *md_with = markdown(&cmp, &with);
  assert_string_equal(md_with, md_after);
  assert_int_equal(with.group_count, 20);
  assert_int_equal(with.pair_count, 2 * 45);
  size_t changes = 0;
  for (size_t g = 0; g < with.group_count; g++) {
    assert_int_equal(with.groups[g].method, TL_CI_SESSIONS);
    changes += with.groups[g].change_count;
  }
  assert_true(changes > 0);
  assert_non_null(strstr(md_with, "- p99 lateness of g3 at 0 ms (settimeout) rose from "));
  assert_non_null(strstr(md_with, "- p99 lateness of g3 at 50 ms (settimeout) rose from "));
  free(md_with);
  free(md_after);
  tl_stats_free(&with);
  tl_comparison_free(&cmp);

  /* Every group is handed over once, each with its kept samples: the
   * memory of one pass's goes to the next pass's groups. */
  hook_seen seen = {0, 0, SIZE_MAX, {0}, {0}};
  tl__group_hook hook = {note_group, &seen, 0};
  assert_int_equal(tl__compare_each(f->s, &o, &hook, &cmp, err, sizeof err), TL_OK);
  assert_int_equal(seen.calls, 20);
  assert_int_equal(seen.kept, 20);
  for (size_t k = 0; k < 20; k++)
    assert_int_equal(seen.order[k], k);
  tl_comparison_free(&cmp);
  /* Asked, a delay's groups one after another (a label's two delays are
   * next to each other in the comparison): 0, 2, ..., 18, then 1, 3, ... */
  hook_seen turns = {0, 0, SIZE_MAX, {0}, {0}};
  tl__group_hook by_block = {note_group, &turns, 1};
  assert_int_equal(tl__compare_each(f->s, &o, &by_block, &cmp, err, sizeof err), TL_OK);
  assert_int_equal(turns.calls, 20);
  for (size_t k = 0; k < 20; k++)
    assert_int_equal(turns.order[k], k < 10 ? 2 * k : 2 * (k - 10) + 1);
  tl_comparison_free(&cmp);
  /* With the rank test (JSON's), each delay's pairs as soon as its groups
   * are read: the same bytes as the rank test after the comparison. */
  assert_int_equal(tl_compare(f->s, &o, &cmp, err, sizeof err), TL_OK);
  assert_int_equal(tl_stats_compute(f->s, &cmp, &after, err, sizeof err), TL_OK);
  char *ranked_after = markdown(&cmp, &after);
  tl_stats_free(&after);
  tl_comparison_free(&cmp);
  assert_int_equal(tl__compare_with_stats(f->s, &o, 1, &cmp, &with, err, sizeof err), TL_OK);
  assert_true(with.ranked);
  char *ranked_with = markdown(&cmp, &with);
  assert_non_null(strstr(ranked_with, "(Mann-Whitney, p"));
  assert_string_equal(ranked_with, ranked_after);
  free(ranked_with);
  free(ranked_after);
  tl_stats_free(&with);
  tl_comparison_free(&cmp);
  /* A hook's failure ends the comparison with it, nothing left to free. */
  hook_seen failing = {0, 0, 9, {0}, {0}};
  hook.ctx = &failing;
  assert_int_equal(tl__compare_each(f->s, &o, &hook, &cmp, err, sizeof err), TL_EIO);
  assert_int_equal(failing.calls, 10);
  assert_int_equal(cmp.group_count, 0);
  tl__kept_budget = budget;

  /* A label the store lacks: the comparison's error, nothing to free. */
  const char *none[1] = {"absent"};
  o.labels = none;
  o.label_count = 1;
  assert_int_equal(tl_compare_with_stats(f->s, &o, &cmp, &with, err, sizeof err), TL_ENOTFOUND);
  assert_null(with.groups);
  assert_non_null(strstr(err, "absent"));
}

/* The session bootstrap walks a table of marks over the pool instead of
 * searching every session for every replicate (stats.c): it must give the
 * very bytes of the search it replaced, with many ties, with a group too
 * large to keep whole, and with values too far apart to sort with their
 * session in one key (so the sessions are merged instead). */
static void session_bootstrap_as_searched(void **state) {
  fixture *f = *state;
  size_t big = TL_STATS_KEEP / 5 + 1000;
  int64_t *v = malloc(big * sizeof *v);
  for (int s = 0; s < 7; s++) {
    for (int i = 0; i < 300; i++)
      v[i] = 1000000 + (int64_t)(rnd() % 50) * 1000 + s * 3000;
    add_session(f, "ties", 0, v, 300, 0);
  }
  for (int s = 0; s < 6; s++) {
    uniform(v, big, 2000000 + s * 100000, 3000000);
    add_session(f, "big", 0, v, big, 0);
  }
  for (int s = 0; s < 5; s++) {
    for (int i = 0; i < 200; i++)
      v[i] = (rnd() % 3 ? 1000 : (INT64_C(1) << 61)) + (int64_t)(rnd() % 1000);
    add_session(f, "far", 0, v, 200, 0);
  }
  const char *labels[3] = {"ties", "big", "far"};
  tl_compare_opts o;
  tl_compare_opts_init(&o);
  o.labels = labels;
  o.label_count = 3;
  const double p[] = {50, 90, 99, 99.9};
  memcpy(o.pcts, p, sizeof p);
  o.pct_count = 4;
  tl_comparison cmp;
  tl_stats st;
  char err[512];
  assert_int_equal(tl_compare(f->s, &o, &cmp, err, sizeof err), TL_OK);
  assert_int_equal(tl_stats_compute(f->s, &cmp, &st, err, sizeof err), TL_OK);
  assert_int_equal(cmp.group_count, 3);
  assert_true(cmp.groups[1].dist.count > TL_STATS_KEEP);
  for (size_t g = 0; g < 3; g++)
    assert_int_equal(st.groups[g].method, TL_CI_SESSIONS);
  char *walked = markdown(&cmp, &st);
  tl_stats searched;
  tl__stats_boot_search = 1;
  int rc = tl_stats_compute(f->s, &cmp, &searched, err, sizeof err);
  tl__stats_boot_search = 0;
  assert_int_equal(rc, TL_OK);
  for (size_t g = 0; g < 3; g++)
    for (size_t k = 0; k < 4; k++) {
      assert_int_equal(st.groups[g].pct[k].lo_ns, searched.groups[g].pct[k].lo_ns);
      assert_int_equal(st.groups[g].pct[k].hi_ns, searched.groups[g].pct[k].hi_ns);
    }
  for (size_t i = 0; i < st.pair_count; i++)
    for (size_t k = 0; k < 4; k++) {
      assert_int_equal(st.pairs[i].lo_ns[k], searched.pairs[i].lo_ns[k]);
      assert_int_equal(st.pairs[i].hi_ns[k], searched.pairs[i].hi_ns[k]);
    }
  char *md = markdown(&cmp, &searched);
  assert_string_equal(walked, md);
  free(md);
  free(walked);
  free(v);
  tl_stats_free(&searched);
  tl_stats_free(&st);
  tl_comparison_free(&cmp);
}

/* Large samples of three values: runs of equal values longer than a
 * million and merges longer than the rank test's whole-number sums hold
 * between flushes; U and the ties worked out from the counts. */
static void mann_whitney_long_runs(void **state) {
  (void)state;
  const size_t ca[3] = {300000, 700000, 250000}, cb[3] = {200000, 800000, 350000};
  size_t na = ca[0] + ca[1] + ca[2], nb = cb[0] + cb[1] + cb[2];
  int64_t *a = malloc(na * sizeof *a), *b = malloc(nb * sizeof *b);
  size_t at = 0, bt = 0;
  long double u = 0, ties = 0, b_below = 0;
  for (int v = 0; v < 3; v++) {
    for (size_t i = 0; i < ca[v]; i++)
      a[at++] = 1000 + v;
    for (size_t i = 0; i < cb[v]; i++)
      b[bt++] = 1000 + v;
    u += (long double)ca[v] * b_below + 0.5L * (long double)ca[v] * (long double)cb[v];
    b_below += (long double)cb[v];
    long double t = (long double)(ca[v] + cb[v]);
    ties += t * t * t - t;
  }
  long double n1 = (long double)na, n2 = (long double)nb, n = n1 + n2;
  long double var = n1 * n2 / 12.0L * ((n + 1) - ties / (n * (n - 1)));
  long double d = u - n1 * n2 / 2, ad = fabsl(d) - 0.5L;
  tl_mw mw;
  assert_int_equal(tl_mann_whitney(a, na, b, nb, &mw), TL_OK);
  assert_true(mw.u == (double)u);
  assert_true(mw.z == (double)((d < 0 ? -ad : ad) / sqrtl(var)));
  free(a);
  free(b);
}

/* Every pair of a block at once (rank_test.c) gives each pair the result
 * of its own merge, bit for bit: pools kept as gaps from sets of their own
 * and from borrowed ones, empty groups, values near either end of the
 * 64-bit range and gaps of every width, many ties or none, runs held by
 * several groups, the block's groups spread through the comparison's. */
static void rank_pairs_as_each_merge(void **state) {
  (void)state;
  enum { MOST_G = 40 };
  const int64_t bases[] = {0, -INT64_C(5000000000), INT64_MAX / 2, INT64_MIN / 2};
  int64_t *v[MOST_G];
  tl__gcalc calc[2 * MOST_G];
  size_t block[MOST_G];
  tl_pair_stats *pairs = malloc(MOST_G * MOST_G * sizeof *pairs);
  uint64_t r = 0x2d358dccaa6c78a5ULL; /* draws of its own */
  for (int round = 0; round < 30; round++) {
    size_t G = round == 29 ? MOST_G : 1 + (size_t)round % 12;
    size_t most = round == 29 ? 20000 : 3000;
    int64_t base = bases[round % 4];
    uint64_t range = round % 3 == 0 ? 40 : round % 3 == 1 ? 100000 : UINT64_C(1) << 60;
    memset(calc, 0, sizeof calc);
    for (size_t g = 0; g < G; g++) {
      r ^= r << 13, r ^= r >> 7, r ^= r << 17;
      size_t n = g % 5 == 3 ? 0 : 1 + (size_t)(r % most);
      v[g] = malloc((n ? n : 1) * sizeof *v[g]);
      for (size_t i = 0; i < n; i++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        v[g][i] = base + (int64_t)(r % range + g % 8 * (range / 64));
      }
      qsort(v[g], n, sizeof *v[g], cmp_i64);
      block[g] = 2 * g + 1;
      tl__gcalc *c = &calc[block[g]];
      c->set.m = n;
      if (g % 2) { /* lent: left as it is */
        c->set.pool = v[g];
        c->set.borrowed = 1;
      } else { /* its own: freed */
        c->set.pool = malloc((n ? n : 1) * sizeof *c->set.pool);
        memcpy(c->set.pool, v[g], n * sizeof *v[g]);
      }
      assert_int_equal(tl__rank_keep_pool_only(c), TL_OK);
      assert_null(c->set.pool);
      assert_int_equal(c->set.m, n);
    }
    size_t count = 0;
    for (size_t a = 0; a < G; a++)
      for (size_t b = a + 1; b < G; b++)
        if (calc[block[a]].set.m && calc[block[b]].set.m) {
          memset(&pairs[count], 0, sizeof pairs[count]);
          pairs[count].a = block[a];
          pairs[count++].b = block[b];
        }
    assert_int_equal(tl__rank_pairs(calc, block, G, pairs, count), TL_OK);
    for (size_t i = 0; i < count; i++) {
      size_t a = pairs[i].a / 2, b = pairs[i].b / 2;
      tl_mw want;
      assert_int_equal(
          tl_mann_whitney(v[a], calc[pairs[i].a].set.m, v[b], calc[pairs[i].b].set.m, &want),
          TL_OK);
      assert_true(pairs[i].mw.u == want.u && pairs[i].mw.z == want.z);
      assert_true(pairs[i].mw.p_value == want.p_value && pairs[i].mw.a_below_b == want.a_below_b);
    }
    for (size_t g = 0; g < G; g++) {
      tl__gcalc_free(&calc[block[g]]);
      free(v[g]);
    }
  }
  free(pairs);
}

/* The rank test of every pair of a comparison of many labels at two
 * delays (two blocks of pairs): each pair's U, z and p are those of the
 * test run on that pair's own samples, so that no pair takes another's
 * result or is left out. */
static void rank_test_of_every_pair(void **state) {
  fixture *f = *state;
  enum { LABELS = 6, DELAYS = 2, SESSIONS = 2, PER = 300 };
  const char *labels[LABELS] = {"r0", "r1", "r2", "r3", "r4", "r5"};
  const int64_t delays[DELAYS] = {0, 50000000};
  static int64_t v[LABELS][DELAYS][SESSIONS * PER];
  uint64_t r = 0x5851f42d4c957f2dULL; /* draws of its own */
  for (int l = 0; l < LABELS; l++)
    for (int d = 0; d < DELAYS; d++) {
      for (int i = 0; i < SESSIONS * PER; i++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        /* Few distinct values (many ties), shifted a little by label. */
        v[l][d][i] = delays[d] + 1000000 + (int64_t)(r % 200) * 1000 + l * 7000;
      }
      /* One label spans more than 2^32 ns: its pool stays 64-bit. */
      if (l == LABELS - 1)
        v[l][d][0] = delays[d] + INT64_C(6000000000);
      for (int s = 0; s < SESSIONS; s++)
        add_session(f, labels[l], delays[d], v[l][d] + s * PER, PER, 0);
      qsort(v[l][d], SESSIONS * PER, sizeof v[l][d][0], cmp_i64);
    }
  tl_compare_opts o;
  tl_compare_opts_init(&o);
  o.labels = labels;
  o.label_count = LABELS;
  tl_comparison cmp;
  char err[512];
  assert_int_equal(tl_compare(f->s, &o, &cmp, err, sizeof err), TL_OK);
  /* First from the samples the comparison kept (borrowed), then read again
   * by the statistics (their own), and as the comparison reads. */
  for (int way = 0; way < 3; way++) {
    tl_stats st;
    if (way == 1)
      tl__comparison_drop_kept(&cmp);
    if (way == 2) {
      tl_comparison_free(&cmp);
      assert_int_equal(tl__compare_with_stats(f->s, &o, 1, &cmp, &st, err, sizeof err), TL_OK);
    } else {
      assert_int_equal(tl_stats_compute(f->s, &cmp, &st, err, sizeof err), TL_OK);
    }
    assert_true(st.ranked);
    assert_int_equal(st.pair_count, DELAYS * LABELS * (LABELS - 1) / 2);
    int seen[LABELS][LABELS][DELAYS] = {{{0}}};
    for (size_t i = 0; i < st.pair_count; i++) {
      const tl_pair_stats *p = &st.pairs[i];
      const tl_group *a = &cmp.groups[p->a], *b = &cmp.groups[p->b];
      assert_int_equal(a->delay_ns, b->delay_ns);
      int la = a->label[1] - '0', lb = b->label[1] - '0', d = a->delay_ns != 0;
      assert_true(la < lb);
      seen[la][lb][d]++;
      tl_mw want;
      assert_int_equal(tl_mann_whitney(v[la][d], SESSIONS * PER, v[lb][d], SESSIONS * PER, &want),
                       TL_OK);
      assert_true(p->mw.u == want.u);
      assert_true(p->mw.z == want.z);
      assert_true(p->mw.p_value == want.p_value);
      assert_true(p->mw.a_below_b == want.a_below_b);
    }
    for (int la = 0; la < LABELS; la++)
      for (int lb = la + 1; lb < LABELS; lb++)
        for (int d = 0; d < DELAYS; d++)
          assert_int_equal(seen[la][lb][d], 1);
    tl_stats_free(&st);
  }
  tl_comparison_free(&cmp);
}

/* The kept samples are sorted three ways (kept.c): by 32-bit keys of a
 * value and its session, by 64-bit ones, and by merging the sessions when
 * the values are too far apart for a key. Each must give the pool in order
 * with each sample's session, and each session's own samples in order. */
static void kept_samples_sorted(void **state) {
  fixture *f = *state;
  const int64_t spans[3] = {INT64_C(1) << 20, INT64_C(1) << 40, INT64_C(1) << 61};
  const char *labels[3] = {"narrow", "wide", "apart"};
  enum { SESSIONS = 9, MOST = 3000 };
  int64_t *raw = malloc(SESSIONS * MOST * sizeof *raw),
          *all = malloc(SESSIONS * MOST * sizeof *all);
  size_t count[SESSIONS];
  uint64_t r = 0x2545f4914f6cdd1dULL; /* its own draws: the other tests' stay as they are */
  for (int c = 0; c < 3; c++) {
    size_t total = 0;
    for (int s = 0; s < SESSIONS; s++) {
      int64_t *v = raw + s * MOST;
      count[s] = 500 + 300 * (size_t)s;
      /* Every third value from a few, so that values tie within and across sessions. */
      for (size_t i = 0; i < count[s]; i++) {
        r = r * 6364136223846793005ULL + 1442695040888963407ULL;
        v[i] = 5000 + (int64_t)((r >> 3) % (uint64_t)(i % 3 ? spans[c] : 40));
      }
      add_session(f, labels[c], 0, v, count[s], 0);
      memcpy(all + total, v, count[s] * sizeof *v);
      total += count[s];
    }
    tl_comparison cmp;
    compare_labels(f, labels[c], NULL, NULL, 0, &cmp);
    tl__sset x;
    const tl_group *g = &cmp.groups[0];
    assert_int_equal(tl__sset_load(f->s, &cmp, g->session_ids, g->session_count, 7, &x), TL_OK);
    assert_true(x.exact);
    assert_int_equal(x.m, total);
    assert_int_equal(x.ns, SESSIONS);
    qsort(all, total, sizeof *all, cmp_i64);
    assert_memory_equal(x.pool, all, total * sizeof *all);
    for (size_t s = 0; s < SESSIONS; s++) {
      /* The sessions are listed oldest first, as they were added. */
      int64_t *v = raw + s * MOST;
      qsort(v, count[s], sizeof *v, cmp_i64);
      assert_int_equal(x.s[s].m, count[s]);
      assert_memory_equal(x.s[s].v, v, count[s] * sizeof *v);
      size_t at = 0;
      for (size_t j = 0; j < total; j++)
        if (x.tag[j] == s)
          assert_true(x.pool[j] == v[at++]);
      assert_int_equal(at, count[s]);
    }
    tl__sset_free(&x);
    tl_comparison_free(&cmp);
  }
  free(all);
  free(raw);
}

/* --check takes a label's earlier sessions and its latest from the samples
 * the comparison kept, when it kept them all: the very sets reading them
 * would give. When it kept a reservoir, there is nothing to take. */
static void kept_part_as_read(void **state) {
  fixture *f = *state;
  int64_t v[700];
  uint64_t r = 0x9e3779b97f4a7c15ULL; /* its own draws: the other tests' stay as they are */
  for (int s = 0; s < 6; s++) {
    for (size_t i = 0; i < 700; i++) {
      r = r * 6364136223846793005ULL + 1442695040888963407ULL;
      v[i] = 1000000 + (int64_t)((r >> 20) % 5000) * (s + 1);
    }
    add_session(f, "part", 0, v, 300 + 80 * (size_t)s, 0);
  }
  tl_comparison cmp;
  compare_labels(f, "part", NULL, NULL, 0, &cmp);
  const tl_group *g = &cmp.groups[0];
  const tl__kept *k = tl__group_kept(&cmp, 0);
  assert_non_null(k);
  const size_t parts[3][2] = {{0, 5}, {5, 6}, {1, 4}};
  for (size_t c = 0; c < 3; c++) {
    size_t from = parts[c][0], to = parts[c][1];
    tl__kept *p = tl__kept_part(k, from, to);
    assert_non_null(p);
    tl__sset x;
    assert_int_equal(tl__sset_load(f->s, &cmp, g->session_ids + from, to - from, 3, &x), TL_OK);
    const tl__sset *y = &p->set;
    assert_true(x.exact && y->exact);
    assert_int_equal(y->ns, x.ns);
    assert_int_equal(y->m, x.m);
    assert_int_equal(y->n, x.n);
    assert_memory_equal(y->pool, x.pool, x.m * sizeof *x.pool);
    assert_memory_equal(y->tag, x.tag, x.m * sizeof *x.tag);
    for (size_t i = 0; i < x.ns; i++) {
      assert_int_equal(y->s[i].id, x.s[i].id);
      assert_int_equal(y->s[i].n, x.s[i].n);
      assert_int_equal(y->s[i].m, x.s[i].m);
      assert_memory_equal(y->s[i].v, x.s[i].v, x.s[i].m * sizeof *x.s[i].v);
    }
    tl__sset_free(&x);
    tl__kept_free(p);
  }
  assert_null(tl__kept_part(k, 3, 3));
  assert_null(tl__kept_part(k, 2, 7));
  assert_null(tl__kept_part(NULL, 0, 1));
  tl_comparison_free(&cmp);
}

/* Sessions of a label, for add_kinds. */
typedef struct {
  const char *label;
  size_t sessions, n;
} session_kind;

/* Stores the sessions of each kind in turn, a second apart, drawn from r
 * (its own draws: the other tests' stay as they are): lo plus up to width,
 * up to latest_width in a kind's last session, plus step times the
 * session's place. */
static void add_kinds(fixture *f, const session_kind *kinds, size_t nk, uint64_t r, int64_t lo,
                      int64_t width, int64_t latest_width, int64_t step) {
  static int64_t v[70000];
  int64_t t = 1700000000000000000;
  for (size_t k = 0; k < nk; k++)
    for (size_t s = 0; s < kinds[k].sessions; s++) {
      uint64_t w = (uint64_t)(s + 1 < kinds[k].sessions ? width : latest_width);
      assert_true(kinds[k].n <= sizeof v / sizeof *v);
      for (size_t i = 0; i < kinds[k].n; i++) {
        r = r * 6364136223846793005ULL + 1442695040888963407ULL;
        v[i] = lo + (int64_t)((r >> 20) % w) + (int64_t)s * step;
      }
      add_session(f, kinds[k].label, 0, v, kinds[k].n, t += 1000000000);
    }
}

/* Without a baseline, --check reads a group's earlier sessions once: its
 * comparison holds each group's latest session apart (TL__EARLIER_GROUPS).
 * Each group is then its earlier sessions, with the distribution and the
 * kept samples (seeded "earlier") that reading those gives, every sample
 * kept or a reservoir; a group of one session holds nothing apart. */
static void earlier_groups_as_read(void **state) {
  fixture *f = *state;
  /* "many": 350,000 samples, past TL_STATS_KEEP: a reservoir. */
  const session_kind kinds[] = {{"few", 5, 400}, {"many", 5, 70000}, {"one", 1, 300}};
  add_kinds(f, kinds, 3, 0xbb67ae8584caa73bULL, 1000000, 90000, 90000, 30000);
  tl_compare_opts o;
  tl_compare_opts_init(&o);
  char err[512];
  tl_comparison whole, apart;
  assert_int_equal(tl_store_read_begin(f->s), TL_OK);
  assert_int_equal(tl__compare(f->s, &o, TL__GROUPS, &whole, err, sizeof err), TL_OK);
  assert_int_equal(tl__compare(f->s, &o, TL__EARLIER_GROUPS, &apart, err, sizeof err), TL_OK);
  assert_int_equal(apart.group_count, 3);
  assert_int_equal(whole.group_count, 3);
  for (size_t i = 0; i < apart.group_count; i++) {
    const tl_group *w = &whole.groups[i], *g = &apart.groups[i];
    const int64_t *latest = tl__group_latest(&apart, i);
    assert_string_equal(g->label, w->label);
    assert_null(tl__group_latest(&whole, i));
    if (w->session_count < 2) {
      assert_null(latest);
      assert_int_equal(g->session_count, w->session_count);
      continue;
    }
    assert_non_null(latest);
    assert_int_equal(*latest, w->session_ids[w->session_count - 1]);
    assert_int_equal(g->session_count, w->session_count - 1);
    assert_memory_equal(g->session_ids, w->session_ids, g->session_count * sizeof *g->session_ids);
    /* The latest's own values are not worked out: what asks reads them. */
    size_t from = 0;
    ptrdiff_t at = tl__session_index(&apart, *latest, &from);
    assert_true(at >= 0);
    assert_int_equal(apart.details[at].pct_count, 0);
    tl_dist d;
    assert_int_equal(tl_dist_compute(f->s, g->session_ids, g->session_count, g->dist.pcts,
                                     g->dist.pct_count, &d),
                     TL_OK);
    assert_int_equal(g->dist.count, d.count);
    assert_int_equal(g->dist.min_ns, d.min_ns);
    assert_int_equal(g->dist.max_ns, d.max_ns);
    assert_memory_equal(g->dist.pct_ns, d.pct_ns, d.pct_count * sizeof *d.pct_ns);
    assert_true(d.count < w->dist.count);
    tl__sset x;
    assert_int_equal(tl__sset_load(f->s, &apart, g->session_ids, g->session_count,
                                   tl__group_seed(g->label, g->probe, g->delay_ns, "earlier"), &x),
                     TL_OK);
    const tl__kept *kept = tl__group_kept(&apart, i);
    assert_non_null(kept);
    const tl__sset *y = &kept->set;
    assert_int_equal(x.exact, strcmp(g->label, "few") == 0);
    assert_int_equal(y->exact, x.exact);
    assert_int_equal(y->ns, x.ns);
    assert_int_equal(y->n, x.n);
    assert_int_equal(y->m, x.m);
    assert_memory_equal(y->pool, x.pool, x.m * sizeof *x.pool);
    assert_memory_equal(y->tag, x.tag, x.m * sizeof *x.tag);
    tl__sset_free(&x);
  }
  tl_comparison_free(&whole);
  tl_comparison_free(&apart);
  tl_store_read_end(f->s);
}

/* TL__GROUPS_AND_EARLIER (the check with a baseline): its groups are
 * TL__GROUPS', and beside each of two sessions or more the values and kept
 * samples of its earlier sessions are those of TL__EARLIER_GROUPS' group,
 * which are those of reading them (earlier_groups_as_read): every sample
 * kept, a reservoir, and a one-session group, which has none. */
static void earlier_beside_groups(void **state) {
  fixture *f = *state;
  const session_kind kinds[] = {{"few", 5, 400}, {"many", 5, 70000}, {"one", 1, 300}};
  add_kinds(f, kinds, 3, 0x1f83d9abfb41bd6bULL, 1000000, 90000, 90000, 30000);
  tl_compare_opts o;
  tl_compare_opts_init(&o);
  char err[512];
  tl_comparison whole, apart, beside;
  assert_int_equal(tl_store_read_begin(f->s), TL_OK);
  assert_int_equal(tl__compare(f->s, &o, TL__GROUPS, &whole, err, sizeof err), TL_OK);
  assert_int_equal(tl__compare(f->s, &o, TL__EARLIER_GROUPS, &apart, err, sizeof err), TL_OK);
  assert_int_equal(tl__compare(f->s, &o, TL__GROUPS_AND_EARLIER, &beside, err, sizeof err), TL_OK);
  assert_int_equal(beside.group_count, 3);
  for (size_t i = 0; i < beside.group_count; i++) {
    const tl_group *w = &whole.groups[i], *g = &beside.groups[i], *a = &apart.groups[i];
    const tl__kept *kept = NULL, *none = NULL;
    assert_null(tl__group_earlier(&whole, i, &none));
    assert_null(tl__group_earlier(&apart, i, &none));
    assert_null(tl__group_latest(&beside, i));
    /* The group itself as TL__GROUPS has it. */
    assert_string_equal(g->label, w->label);
    assert_int_equal(g->session_count, w->session_count);
    assert_int_equal(g->dist.count, w->dist.count);
    assert_memory_equal(g->dist.pct_ns, w->dist.pct_ns, w->dist.pct_count * sizeof *w->dist.pct_ns);
    assert_memory_equal(g->spectrum.pct_ns, w->spectrum.pct_ns,
                        w->spectrum.pct_count * sizeof *w->spectrum.pct_ns);
    assert_memory_equal(g->hist, w->hist, sizeof w->hist);
    const tl__kept *wk = tl__group_kept(&whole, i), *gk = tl__group_kept(&beside, i);
    assert_non_null(wk);
    assert_non_null(gk);
    assert_int_equal(gk->set.m, wk->set.m);
    assert_memory_equal(gk->set.pool, wk->set.pool, wk->set.m * sizeof *wk->set.pool);
    const tl_dist *e = tl__group_earlier(&beside, i, &kept);
    if (w->session_count < 2) {
      assert_null(e);
      continue;
    }
    /* Its earlier sessions as TL__EARLIER_GROUPS' group. */
    assert_non_null(e);
    assert_int_equal(e->count, a->dist.count);
    assert_true(e->count < g->dist.count);
    assert_int_equal(e->min_ns, a->dist.min_ns);
    assert_int_equal(e->max_ns, a->dist.max_ns);
    assert_int_equal(e->pct_count, a->dist.pct_count);
    assert_memory_equal(e->pct_ns, a->dist.pct_ns, a->dist.pct_count * sizeof *e->pct_ns);
    const tl__kept *ak = tl__group_kept(&apart, i);
    assert_non_null(kept);
    assert_non_null(ak);
    assert_int_equal(kept->set.exact, strcmp(g->label, "few") == 0);
    assert_int_equal(kept->set.exact, ak->set.exact);
    assert_int_equal(kept->set.ns, ak->set.ns);
    assert_int_equal(kept->set.n, ak->set.n);
    assert_int_equal(kept->set.m, ak->set.m);
    assert_memory_equal(kept->set.pool, ak->set.pool, ak->set.m * sizeof *ak->set.pool);
    assert_memory_equal(kept->set.tag, ak->set.tag, ak->set.m * sizeof *ak->set.tag);
  }
  tl_comparison_free(&whole);
  tl_comparison_free(&apart);
  tl_comparison_free(&beside);
  tl_store_read_end(f->s);
}

/* --check's lines about latest sessions are the same whether the
 * comparison held them apart (no baseline) or read whole groups (with a
 * baseline, whose own checks add lines): every sample kept, and a
 * reservoir; and with a baseline, the same whether the earlier sessions'
 * kept samples came from the comparison or were read. */
static void check_latest_apart_as_whole(void **state) {
  fixture *f = *state;
  const session_kind kinds[] = {{"small", 6, 900}, {"big", 6, 60000}, {"base", 1, 900}};
  /* Each latest session spread four times as wide as the ones before. */
  add_kinds(f, kinds, 3, 0x3c6ef372fe94f82bULL, 10000000, 2000000, 8000000, 20000);
  char *whole = check(f, "base", "10%", "small,big,base", TL_CHECK_REGRESSED);
  char *apart = check(f, NULL, "10%", "small,big,base", TL_CHECK_REGRESSED);
  /* With no memory for kept samples, every side is read: the same lines. */
  size_t budget = tl__kept_budget;
  tl__kept_budget = 0;
  char *every_side_read = check(f, "base", "10%", "small,big,base", TL_CHECK_REGRESSED);
  tl__kept_budget = budget;
  assert_string_equal(every_side_read, whole);
  free(every_side_read);
  /* The lines of the latest sessions, in order, from each. */
  char *lines[2] = {whole, apart};
  for (int w = 0; w < 2; w++) {
    char *to = lines[w];
    for (char *line = lines[w], *end; *line; line = end) {
      end = line + strcspn(line, "\n");
      int keep = 0;
      for (char *l = line; !keep && (l = strstr(l, " in the latest session ")) && l < end; l++)
        keep = 1;
      end += *end == '\n';
      if (keep) {
        memmove(to, line, (size_t)(end - line));
        to += end - line;
      }
    }
    *to = 0;
  }
  assert_non_null(strstr(apart, "regression: small settimeout 0 ms p50 in the latest session"));
  assert_non_null(strstr(apart, "regression: big settimeout 0 ms p90 in the latest session"));
  assert_non_null(strstr(apart, "above its 5 earlier sessions"));
  assert_string_equal(apart, whole);
  free(whole);
  free(apart);
}

/* A check that finds a latest session damaged (read on its own, after the
 * findings of the groups before it) fails saying only why: no finding goes
 * out with the error. */
static void check_damaged_latest_says_only_why(void **state) {
  fixture *f = *state;
  const session_kind kinds[] = {{"a", 6, 900}, {"b", 6, 900}};
  add_kinds(f, kinds, 2, 0x510e527fade682d1ULL, 10000000, 2000000, 8000000, 20000);
  char *found = check(f, NULL, "10%", "a,b", TL_CHECK_REGRESSED);
  assert_non_null(strstr(found, "regression: a settimeout"));
  free(found);
  /* b's latest session's only block damaged. */
  tl_test_flip_block_bits(f->db, "id = (SELECT max(id) FROM sessions WHERE label = 'b')");
  tl_check_opts o;
  tl_check_opts_init(&o);
  const char *labels[] = {"a", "b"};
  o.compare.labels = labels;
  o.compare.label_count = 2;
  char *out = NULL, err[512] = "";
  size_t len = 0;
  FILE *m = open_memstream(&out, &len);
  assert_int_equal(tl_report_check(f->s, &o, m, err, sizeof err), TL_ECORRUPT);
  fclose(m);
  assert_non_null(strstr(err, "checksum mismatch"));
  assert_int_equal(len, 0);
  free(out);
}

/* The session bootstrap's draws take their remainder without a division
 * (tl__mod): it must be x % n for every x and n, at the edges too. */
static void remainder_as_divided(void **state) {
  (void)state;
  const uint64_t ns[] = {1,
                         2,
                         3,
                         5,
                         7,
                         719,
                         2919,
                         4096,
                         65537,
                         UINT64_C(4294967311),
                         UINT64_C(1) << 63,
                         (UINT64_C(1) << 63) + 1,
                         UINT64_MAX - 1,
                         UINT64_MAX};
  uint64_t r = 0x6a09e667f3bcc909ULL; /* its own draws: the other tests' stay as they are */
  for (size_t k = 0; k < sizeof ns / sizeof *ns; k++) {
    uint64_t n = ns[k];
    tl__mod d = tl__mod_of(n);
    const uint64_t edges[] = {0,
                              1,
                              n - 1,
                              n,
                              n + 1,
                              2 * n - 1,
                              UINT64_MAX,
                              UINT64_MAX - 1,
                              UINT64_MAX / n * n,
                              UINT64_MAX / n * n - 1};
    for (size_t e = 0; e < sizeof edges / sizeof *edges; e++)
      assert_true(tl__mod_apply(&d, edges[e]) == edges[e] % n);
    for (int t = 0; t < 20000; t++) {
      r = r * 6364136223846793005ULL + 1442695040888963407ULL;
      uint64_t x = r ^ (r >> 29) * (uint64_t)t;
      assert_true(tl__mod_apply(&d, x) == x % n);
    }
    tl__rng a = {n}, b = {n};
    for (int t = 0; t < 1000; t++)
      assert_true(tl__rng_below_mod(&a, &d) == tl__rng_below(&b, n));
  }
}

/* The statistics read a group's samples and its distribution in one
 * reading (tl__sset_load_dist): the set must be the one reading the samples
 * alone gives, and the distribution tl_dist_compute's, whether the group is
 * kept whole or by reservoirs. */
static void load_with_dist_as_apart(void **state) {
  fixture *f = *state;
  const size_t sizes[2] = {900, TL_STATS_KEEP / 3 + 7000}; /* whole; by reservoirs */
  const char *labels[2] = {"whole", "reservoir"};
  const double pcts[4] = {50, 90, 99, 99.9};
  int64_t *v = malloc(sizes[1] * sizeof *v);
  uint64_t r = 0xda942042e4dd58b5ULL; /* its own draws: the other tests' stay as they are */
  for (int c = 0; c < 2; c++) {
    for (int s = 0; s < 4; s++) {
      for (size_t i = 0; i < sizes[c]; i++) {
        r = r * 6364136223846793005ULL + 1442695040888963407ULL;
        v[i] = 2000000 + s * 30000 + (int64_t)((r >> 22) % (uint64_t)(i % 5 ? 300000 : 60));
      }
      add_session(f, labels[c], 0, v, sizes[c] - (size_t)s * 100, 0);
    }
    tl_comparison cmp;
    compare_labels(f, labels[c], NULL, NULL, 0, &cmp);
    const tl_group *g = &cmp.groups[0];
    tl__sset x, y;
    tl_dist alone, together;
    assert_int_equal(tl__sset_load(f->s, &cmp, g->session_ids, g->session_count, 11, &x), TL_OK);
    assert_int_equal(tl_dist_compute(f->s, g->session_ids, g->session_count, pcts, 4, &alone),
                     TL_OK);
    assert_int_equal(tl__sset_load_dist(f->s, &cmp, g->session_ids, g->session_count, 11, pcts, 4,
                                        &together, &y),
                     TL_OK);
    assert_int_equal(x.exact, c == 0);
    assert_int_equal(y.exact, x.exact);
    assert_int_equal(y.m, x.m);
    assert_int_equal(y.n, x.n);
    assert_memory_equal(y.pool, x.pool, x.m * sizeof *x.pool);
    assert_memory_equal(y.tag, x.tag, x.m * sizeof *x.tag);
    assert_memory_equal(&together, &alone, sizeof alone);
    tl__sset_free(&x);
    tl__sset_free(&y);
    tl_comparison_free(&cmp);
  }
  free(v);
}

/* The samples kept of a large group are spread over the whole session: the
 * same values stored rising in one label and falling in the other must look
 * alike to the rank test. A way of keeping that favoured early or late
 * samples would keep small values of one and large of the other. The third
 * label's row claims half its samples, so its slots fill up early and the
 * rest goes through the reservoir. */
static void reservoir_keeps_every_position_alike(void **state) {
  fixture *f = *state;
  size_t n = 1000000;
  int64_t *v = malloc(n * sizeof *v);
  for (size_t i = 0; i < n; i++)
    v[i] = 1000000 + (int64_t)i * 10;
  add_session(f, "rising", 0, v, n, 0);
  add_session(f, "understated", 0, v, n, 0);
  for (size_t i = 0; i < n; i++)
    v[i] = 1000000 + (int64_t)(n - 1 - i) * 10;
  add_session(f, "falling", 0, v, n, 0);
  const char *other[] = {"rising", "understated"};
  for (int k = 0; k < 2; k++) {
    tl_comparison cmp;
    tl_stats st;
    const char *labels[2] = {other[k], "falling"};
    tl_compare_opts o;
    tl_compare_opts_init(&o);
    o.labels = labels;
    o.label_count = 2;
    o.pcts[0] = 50;
    o.pct_count = 1;
    char err[512];
    assert_int_equal(tl_compare(f->s, &o, &cmp, err, sizeof err), TL_OK);
    /* As listed while its collector was still writing: half the count. */
    for (size_t i = 0; i < cmp.sessions.count; i++)
      if (strcmp(cmp.sessions.items[i].label, "understated") == 0)
        cmp.sessions.items[i].sample_count /= 2;
    assert_int_equal(tl_stats_compute(f->s, &cmp, &st, err, sizeof err), TL_OK);
    assert_true(cmp.groups[0].dist.count > TL_STATS_KEEP);
    assert_int_equal(st.pair_count, 1);
    assert_true(fabs(st.pairs[0].mw.a_below_b - 0.5) < 0.01);
    assert_true(st.pairs[0].mw.p_value > 0.001);
    tl_stats_free(&st);
    tl_comparison_free(&cmp);
  }
  free(v);
}

/* Calibration: over many independent data sets with a known shift, the 95%
 * interval of the difference covers the shift about 95% of the time, with
 * three sessions of 400 samples a label and five of 80. A wrong t quantile,
 * variance or degrees of freedom makes the intervals too narrow or too wide
 * and fails this. */
static void intervals_cover_the_truth(void **state) {
  fixture *f = *state;
  const int reps = 40;
  const int64_t shift = 200000;
  int64_t v[400];
  for (int mode = 0; mode < 2; mode++) {
    int covered = 0, sessions = mode ? 5 : 3;
    size_t per = mode ? 80 : 400;
    double width = 0;
    for (int r = 0; r < reps; r++) {
      char a[32], b[32];
      snprintf(a, sizeof a, "m%d-%d-a", mode, r);
      snprintf(b, sizeof b, "m%d-%d-b", mode, r);
      for (int s = 0; s < sessions; s++) {
        uniform(v, per, 1000000, 2000000);
        add_session(f, a, 0, v, per, 0);
        uniform(v, per, 1000000 + shift, 2000000);
        add_session(f, b, 0, v, per, 0);
      }
      const double p[] = {75};
      tl_comparison cmp;
      tl_stats st;
      compare2(f, a, b, p, 1, &cmp, &st);
      assert_int_equal(st.groups[0].method, mode ? TL_CI_SESSIONS : TL_CI_ORDER);
      covered += st.pairs[0].lo_ns[0] <= shift && shift <= st.pairs[0].hi_ns[0];
      width += (double)(st.pairs[0].hi_ns[0] - st.pairs[0].lo_ns[0]);
      tl_stats_free(&st);
      tl_comparison_free(&cmp);
    }
    /* 95% nominal; 34 of 40 or more happens with probability 0.99. The
     * theoretical width with three sessions of 400 samples a label: a
     * session's p75 varies by sqrt(.75 x .25 / 400) x 2 ms = 0.043 ms, so
     * 2 x t(0.975, about 4) x sqrt(2 / 3) x 0.043 ms = 0.20 ms; with five
     * of 80: 2 x t(0.975, about 8) x sqrt(2 / 5) x 0.097 ms = 0.28 ms. */
    assert_true(covered >= 34);
    width /= reps;
    assert_true(width > 0.15e6 && width < 0.36e6);
  }
}

/* ======================================================================== */
/* Error rates with run-to-run drift                                         */

/* Draws of their own, so that the other tests' stay as they are. */
static uint64_t drift_state = 0x243f6a8885a308d3ULL;

static double drift_unit(void) {
  drift_state = drift_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return ((double)(drift_state >> 11) + 0.5) * 0x1.0p-53;
}

/* A lognormal run-to-run factor: exp(sigma x a standard normal draw). */
static double drift_factor(double sigma) {
  double u = drift_unit(), v = drift_unit();
  return exp(sigma * sqrt(-2 * log(u)) * cos(6.283185307179586 * v));
}

enum { DRIFT_SAMPLES = 200 };

/* Stores one session of label at delay_ns whose lateness is uniform in
 * [0.5, 2.5) ms times scale times its own run-to-run factor. */
static void drifting_session(fixture *f, const char *label, int64_t delay_ns, double scale,
                             double factor) {
  tl_session_spec spec = {
      .run_uuid = "run",
      .label = label,
      .probe = "settimeout",
      .delay_ns = delay_ns,
      .command_line = "tlcollect",
      .host_fingerprint = "feedfacefeedface",
      .hostname = "stats",
      .libuv_version = "1.44.2",
  };
  int64_t v[DRIFT_SAMPLES];
  for (size_t i = 0; i < DRIFT_SAMPLES; i++)
    v[i] = delay_ns + (int64_t)((500000 + 2000000 * drift_unit()) * scale * factor);
  tl_writer *w;
  char uuid[37];
  assert_int_equal(tl_writer_begin(f->s, &spec, &w, uuid), TL_OK);
  assert_int_equal(tl_writer_add(w, v, DRIFT_SAMPLES), TL_OK);
  assert_int_equal(tl_writer_end(w, "complete"), TL_OK);
}

/* draws data sets of labels a and b, each at its own delay (1, 2, ... ms,
 * so that one comparison holds them all as separate pairs): sessions
 * sessions a label, collected alternately, every session drifting by its
 * own lognormal factor (sigma 0.3); b is scale_b times as late, and its
 * latest session last_b times more. */
static void drifting_pairs(fixture *f, const char *a, const char *b, int draws, int sessions,
                           double scale_b, double last_b) {
  for (int d = 0; d < draws; d++)
    for (int s = 0; s < sessions; s++) {
      int64_t delay = (int64_t)(d + 1) * 1000000;
      drifting_session(f, a, delay, 1, drift_factor(0.3));
      drifting_session(f, b, delay, scale_b * (s == sessions - 1 ? last_b : 1), drift_factor(0.3));
    }
}

/* How many of the pairs of a comparison of a and b are called clearly
 * different at p90, and how many of those say b is the later. */
static int clear_at_p90(fixture *f, const char *a, const char *b, int draws, int *b_later) {
  const double p90[] = {90};
  tl_comparison cmp;
  tl_stats st;
  compare2(f, a, b, p90, 1, &cmp, &st);
  assert_int_equal(st.pair_count, (size_t)draws);
  int clear = 0;
  *b_later = 0;
  for (size_t i = 0; i < st.pair_count; i++) {
    const tl_pair_stats *p = &st.pairs[i];
    int later = strcmp(cmp.groups[p->b].label, b) == 0 ? p->lo_ns[0] > 0 : p->hi_ns[0] < 0;
    clear += p->clear[0];
    *b_later += p->clear[0] && later;
    /* Each interval holds its pooled estimate; a verdict needs two sessions. */
    if (p->decided)
      assert_true(p->lo_ns[0] <= p->diff_ns[0] && p->diff_ns[0] <= p->hi_ns[0]);
    assert_int_equal(p->decided, p->sessions_a >= 2 && p->sessions_b >= 2);
    if (p->clear[0] && getenv("TL_SHOW")) {
      char line[512];
      tl_pair_sentence(&cmp, &st, p, 0, line, sizeof line);
      fprintf(stderr, "%s\n", line);
    }
  }
  tl_stats_free(&st);
  tl_comparison_free(&cmp);
  return clear;
}

/* Regressions found and checks made by tlreport --check --baseline a on
 * labels a and b at p90 (baseline and history). */
static void check_counts(fixture *f, const char *a, const char *b, size_t *bad, size_t *checks,
                         size_t *bad_b_vs_a) {
  tl_check_opts o;
  tl_check_opts_init(&o);
  o.baseline = a;
  o.compare.pcts[0] = 90;
  o.compare.pct_count = 1;
  const char *labels[2] = {a, b};
  o.compare.labels = labels;
  o.compare.label_count = 2;
  char *out = NULL, err[512] = "";
  size_t len;
  FILE *m = open_memstream(&out, &len);
  int rc = tl_report_check(f->s, &o, m, err, sizeof err);
  fclose(m);
  assert_true(rc == TL_OK || rc == TL_CHECK_REGRESSED);
  *bad = *checks = *bad_b_vs_a = 0;
  char want[64];
  snprintf(want, sizeof want, "regression: %s settimeout ", b);
  for (char *line = out, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
    *nl = '\0';
    if (strncmp(line, "regression: ", 12) == 0) {
      (*bad)++;
      *bad_b_vs_a +=
          strncmp(line, want, strlen(want)) == 0 && strstr(line, "in the latest") == NULL;
      if (getenv("TL_SHOW"))
        fprintf(stderr, "%s\n", line);
    } else {
      const char *in = strstr(line, " in ");
      assert_non_null(in);
      *checks = strtoul(in + 4, NULL, 10);
    }
  }
  free(out);
}

/* Twin labels whose sessions drift from run to run (each session's lateness
 * scaled by its own lognormal factor, sigma 0.3, as real sessions drift with
 * load and neighbours), at 1, 3 and 10 sessions a label over 200 draws each:
 * at most 1 pair in 20 may be called clearly different at p90. The count
 * allowed, 18 of 200, is what a true rate of 5% stays under with
 * probability 0.99. The intervals tl had before sessions became the unit
 * (over the samples below 5 sessions, a session bootstrap from 5) called
 * 181 and 154 of 200 twin pairs different at 1 and 3 sessions, and their
 * --check raised 205 and 81 false alarms in 600 checks at 3 and 10. A true 2x difference at
 * 10 sessions a label must be found at least 9 times in 10 (18 of 20), and
 * --check must raise no more false alarms than 1 in 20 checks on twins and
 * catch the planted regressions: b twice as late as the baseline, and a
 * latest session four times as late as its drifting history. */
static void twins_drifting_claim_little(void **state) {
  fixture *f = *state;
  enum { DRAWS = 200 };
  const int counts[3] = {1, 3, 10};
  for (int c = 0; c < 3; c++) {
    char a[32], b[32];
    snprintf(a, sizeof a, "twin-a-%d", counts[c]);
    snprintf(b, sizeof b, "twin-b-%d", counts[c]);
    drifting_pairs(f, a, b, DRAWS, counts[c], 1, 1);
    int later, clear = clear_at_p90(f, a, b, DRAWS, &later);
    fprintf(stderr, "twins, %d session(s) a label: %d of %d pairs called clearly different\n",
            counts[c], clear, DRAWS);
    if (counts[c] == 1)
      assert_int_equal(clear, 0); /* no run-to-run variation measured: no verdict */
    assert_true(clear <= 18);
    if (counts[c] == 1)
      continue;
    size_t bad, checks, bad_b;
    check_counts(f, a, b, &bad, &checks, &bad_b);
    fprintf(stderr, "twins, %d session(s) a label: --check found %zu regressions in %zu checks\n",
            counts[c], bad, checks);
    assert_true(checks >= DRAWS);
    assert_true(bad * 20 <= checks);
  }
  /* Power: b twice as late, 10 sessions a label, 20 draws. */
  drifting_pairs(f, "two-a", "two-b", 20, 10, 2, 1);
  int later, clear = clear_at_p90(f, "two-a", "two-b", 20, &later);
  fprintf(stderr, "2x later, 10 sessions a label: %d of 20 found\n", later);
  assert_true(later >= 18 && clear == later);
  size_t bad, checks, bad_b;
  check_counts(f, "two-a", "two-b", &bad, &checks, &bad_b);
  fprintf(stderr, "2x later, 10 sessions a label: --check caught %zu of 20\n", bad_b);
  assert_true(bad_b >= 18);
  /* A latest session four times as late as the nine before it. */
  drifting_pairs(f, "hist-a", "hist-b", 20, 10, 1, 4);
  size_t caught = 0;
  char *out = check(f, NULL, "10%", "hist-b", TL_CHECK_REGRESSED);
  for (const char *l = out; (l = strstr(l, "p90 in the latest session")); l++)
    caught++;
  free(out);
  fprintf(stderr, "latest session 4x later: --check caught %zu of 20 at p90\n", caught);
  assert_true(caught >= 18);
}

/* The Markdown page of labels a and b at p90 with --baseline a and the
 * statistics of the comparison. */
static char *baseline_page(fixture *f, const char *a, const char *b) {
  const char *labels[2] = {a, b};
  tl_compare_opts o;
  tl_compare_opts_init(&o);
  o.labels = labels;
  o.label_count = 2;
  o.baseline = a;
  o.pcts[0] = 90;
  o.pct_count = 1;
  char err[512];
  tl_comparison cmp;
  tl_stats st;
  assert_int_equal(tl_compare(f->s, &o, &cmp, err, sizeof err), TL_OK);
  assert_int_equal(tl_stats_compute(f->s, &cmp, &st, err, sizeof err), TL_OK);
  tl_page_opts po;
  tl_page_opts_init(&po);
  po.format = TL_FORMAT_MD;
  po.stats = &st;
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  assert_int_equal(tl_render(&cmp, &po, m), TL_OK);
  fclose(m);
  tl_stats_free(&st);
  tl_comparison_free(&cmp);
  return buf;
}

/* b's row of every baseline table of a page (one per probe and delay), each
 * a string in rows[]; returns how many. */
static size_t baseline_rows(const char *page, const char *b, char rows[][512], size_t max) {
  char start[64];
  snprintf(start, sizeof start, "\n| %s | ", b);
  size_t n = 0;
  for (const char *at = page; n < max && (at = strstr(at, "\nAgainst **")); at++) {
    const char *row = strstr(at, start), *end = row ? strchr(row + 1, '\n') : NULL;
    const char *next = strstr(at + 1, "\nAgainst **");
    assert_non_null(end);
    assert_true(!next || row < next);
    snprintf(rows[n++], 512, "%.*s", (int)(end - row - 1), row + 1);
  }
  return n;
}

/* The baseline table judges each label as the differences do, from the
 * sessions: twins of 3 sessions each get an interval and rarely "clearly",
 * a label 4 times as late at 5 sessions each is clearly later, and one
 * session each gets no verdict but the sessions that would settle it. */
static void baseline_table_rests_on_sessions(void **state) {
  fixture *f = *state;
  enum { DRAWS = 20 };
  static char rows[DRAWS][512];
  drifting_pairs(f, "base-a", "base-twin", DRAWS, 3, 1, 1);
  char *page = baseline_page(f, "base-a", "base-twin");
  assert_int_equal(baseline_rows(page, "base-twin", rows, DRAWS), DRAWS);
  size_t clear = 0;
  for (size_t i = 0; i < DRAWS; i++) {
    assert_non_null(strstr(rows[i], "\xC2\xA0to\xC2\xA0"));
    assert_non_null(strstr(rows[i], "; 3 sessions each)"));
    assert_null(strstr(rows[i], "**"));
    clear += strstr(rows[i], "clearly") != NULL;
  }
  fprintf(stderr, "baseline table, twins of 3 sessions: %zu of %d clearly different\n", clear,
          DRAWS);
  assert_true(clear <= 3); /* 5% expected: 1 of 20 */
  free(page);

  drifting_pairs(f, "base-b", "base-4x", DRAWS, 5, 4, 1);
  page = baseline_page(f, "base-b", "base-4x");
  assert_int_equal(baseline_rows(page, "base-4x", rows, DRAWS), DRAWS);
  clear = 0;
  for (size_t i = 0; i < DRAWS; i++) {
    assert_non_null(strstr(rows[i], "; 5 sessions each) ("));
    clear += strstr(rows[i], ", clearly later") != NULL;
    assert_null(strstr(rows[i], "clearly earlier"));
  }
  fprintf(stderr, "baseline table, 4x later at 5 sessions: %zu of %d clearly later\n", clear,
          DRAWS);
  assert_true(clear >= DRAWS - 1);
  free(page);

  drifting_pairs(f, "base-c", "base-one", 1, 1, 4, 1);
  page = baseline_page(f, "base-c", "base-one");
  assert_int_equal(baseline_rows(page, "base-one", rows, 1), 1);
  assert_non_null(strstr(rows[0], "(1 session each: too few to tell; collect 5 a label)"));
  assert_null(strstr(rows[0], "clearly"));
  free(page);
}

/* ======================================================================== */
/* Group intervals at every size                                             */

/* Session i's samples: uniform 1 us steps of [0, 1 ms) from the generator
 * r, each counted into bins. */
typedef struct {
  uint64_t r;
  int64_t *bins;
} uniform_fill;

enum { BINS = 1000 };

static void fill_uniform(void *ctx, size_t i, int64_t *v, size_t per) {
  uniform_fill *u = ctx;
  (void)i;
  for (size_t j = 0; j < per; j++) {
    u->r = u->r * 6364136223846793005ULL + 1442695040888963407ULL;
    v[j] = (int64_t)((u->r >> 33) % BINS) * 1000;
    u->bins[v[j] / 1000]++;
  }
}

/* The statistics of one group of ns sessions of per samples each, every
 * sample uniform in [0, 1 ms): its kept samples gathered as a comparison
 * gathers them (tl__kept), its exact percentiles worked out here, each
 * session's own values given as the comparison gives them. Returns the
 * group's statistics at pcts[0..np) in out (free with tl__gcalc_free). */
static void synthetic_group(size_t ns, size_t per, const double *pcts, size_t np, uint64_t seed,
                            tl__gcalc *out) {
  /* Every sample's value counted in 1 us bins: the exact percentiles. */
  uniform_fill u = {seed, calloc(BINS, sizeof *u.bins)};
  assert_non_null(u.bins);
  tl_test_group t;
  tl_test_group_make(&t, ns, per, pcts, np, fill_uniform, &u);
  /* Every session keeps its share (below 64 slots exactly, above by chance,
   * at least half), none keeps nothing. */
  for (size_t i = 0; i < ns; i++) {
    const tl__sess *x = &t.kept->set.s[i];
    size_t share = x->cap < per ? x->cap : per;
    assert_true(x->m >= 1 && x->m <= share && (x->cap >= 64 || x->m == share));
    assert_true(x->m * 2 >= share * 4 / 5); /* half of it, with room for chance */
  }
  tl_dist dist;
  memset(&dist, 0, sizeof dist);
  dist.count = (int64_t)(ns * per);
  dist.pct_count = np;
  for (size_t q = 0; q < np; q++) {
    int64_t rank = tl_rank(pcts[q], dist.count), seen = 0;
    size_t b = 0;
    while ((seen += u.bins[b]) < rank)
      b++;
    dist.pcts[q] = pcts[q];
    dist.pct_ns[q] = (int64_t)b * 1000;
  }
  assert_int_equal(
      tl__gcalc_run(NULL, &t.cmp, t.ids, ns, pcts, np, &dist, 0, seed ^ 0x5eed, 0, t.kept, out),
      TL_OK);
  tl__kept_free(t.kept); /* out borrowed its samples; the intervals are made */
  tl_test_group_free(&t);
  free(u.bins);
}

/* The interval of a group's percentile at every group size, from one
 * session to 100,000 small ones, kept whole or by reservoirs: each holds its
 * estimate, and over independent draws covers the true percentile about 95%
 * of the time. A reduction that let sessions keep no sample (at 10,000 to
 * 16,000 sessions a group) made the session bootstrap fall back to the
 * largest kept value: "(19.82 to 19.82)" for a p90 of 0.57 ms. From 10,000
 * sessions the intervals are Woodruff's (test_stats_linear.c). */
static void group_intervals_at_every_size(void **state) {
  (void)state;
  const struct {
    size_t sessions, per, draws;
  } sizes[] = {{1, 2000, 40},  {3, 500, 40},    {10, 200, 40},   {100, 50, 40},
               {2000, 40, 20}, {2000, 400, 10}, {14000, 20, 10}, {100000, 20, 2}};
  const double pcts[] = {50, 90};
  for (size_t c = 0; c < sizeof sizes / sizeof *sizes; c++) {
    size_t covered = 0, asked = 0;
    for (size_t d = 0; d < sizes[c].draws; d++) {
      tl__gcalc g;
      synthetic_group(sizes[c].sessions, sizes[c].per, pcts, 2, 0x9e3779b9ULL * (c * 100 + d + 1),
                      &g);
      for (size_t q = 0; q < 2; q++) {
        const tl_pct_stats *p = &g.pct[q];
        int64_t est = g.dist.pct_ns[q], truth = (int64_t)(pcts[q] * 10000); /* of [0, 1 ms) */
        if (!(p->lo_ns <= est && est <= p->hi_ns && p->lo_ns < p->hi_ns))
          fail_msg("%zu sessions of %zu: p%g %lld not in (%lld to %lld)", sizes[c].sessions,
                   sizes[c].per, pcts[q], (long long)est, (long long)p->lo_ns, (long long)p->hi_ns);
        covered += p->lo_ns <= truth && truth <= p->hi_ns;
        asked++;
      }
      tl__gcalc_free(&g);
    }
    fprintf(stderr, "%zu sessions of %zu samples: %zu of %zu intervals cover the truth\n",
            sizes[c].sessions, sizes[c].per, covered, asked);
    /* About 95%: at least 85% (with 80 intervals a true 95% falls below
     * that with probability under 0.001; a bootstrap over 10 sessions runs
     * a little narrow, about 90%). */
    assert_true(covered * 100 >= asked * 85);
  }
}

/* A probe name from the database is not validated by the writer: hostile
 * text must not become markup on the page or drive the terminal. */
static void hostile_text(void **state) {
  fixture *f = *state;
  int64_t v[1000];
  for (int s = 0; s < 3; s++) {
    uniform(v, 1000, 1000000, 1000000);
    add_session(f, "h1", 0, v, 1000, 0);
    for (int i = 0; i < 1000; i++)
      v[i] *= 3;
    add_session(f, "h2", 0, v, 1000, 0);
  }
  sqlite3 *db;
  assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
  assert_int_equal(sqlite3_exec(db,
                                "UPDATE sessions SET probe = '<img src=x>|*_[x](y)' || "
                                "char(10) || '# \x1b[31m'",
                                NULL, NULL, NULL),
                   SQLITE_OK);
  sqlite3_close(db);
  tl_comparison cmp;
  tl_stats st;
  compare2(f, "h1", "h2", P3, 3, &cmp, &st);
  char *md = markdown(&cmp, &st);
  for (const char *c = md; (c = strpbrk(c, "<>|[]*_")); c++)
    if (!(c[0] == '|' && strchr(" -:\n", c[-1])) && !(c[0] == '<' && c[1] == ' ') &&
        c[-1] != '\\') /* the table's own pipes, and "p < 0.001" */
      fail_msg("unescaped at %.40s", c - 10);
  /* An escaped bracket cannot close a link, so "](" may only follow '\\'. */
  for (const char *c = md; (c = strstr(c, "](")); c++)
    assert_true(c > md + 1 && c[-1] == '\\');
  assert_null(strstr(md, "\n# "));
  assert_null(strchr(md, 0x1b));
  assert_non_null(strstr(md, "\\<img"));
  free(md);
  tl_stats_free(&st);
  tl_comparison_free(&cmp);
  /* The check's lines stay one line each, with no escape character. */
  char *out = check(f, "h1", "10%", "h2", TL_CHECK_REGRESSED);
  assert_null(strchr(out, 0x1b));
  size_t lines = 0;
  for (char *line = out, *nl; (nl = strchr(line, '\n')); line = nl + 1, lines++)
    assert_true(strncmp(line, "regression: h2 ", 15) == 0 || strstr(line, " regressions above "));
  assert_int_equal(lines, 4);
  free(out);
}

/* tests/golden/stats.md, whose numbers are worked out in
 * tests/golden/README.md. TL_GOLDEN_OUT=path writes what was produced. */
static void golden_page(void **state) {
  fixture *f = *state;
  int64_t v[1000];
  for (int i = 0; i < 1000; i++)
    v[i] = (int64_t)(1000 - i) * 10000; /* 0.01 .. 10.00 ms */
  add_session(f, "vbox", 0, v, 1000, NOV1);
  for (int i = 0; i < 1000; i++)
    v[i] += 2000000; /* 2.01 .. 12.00 ms */
  add_session(f, "macos", 0, v, 1000, NOV1 + DAY);
  const int64_t a[] = {50200000, 50100000}, b[] = {60000000, 50300000, 50400000};
  add_session(f, "vbox", 50000000, a, 2, NOV1 + 2 * DAY);
  add_session(f, "vbox", 50000000, b, 3, NOV1 + 3 * DAY);
  tl_comparison cmp;
  tl_stats st;
  compare2(f, "vbox", "macos", P3, 3, &cmp, &st);
  char *md = markdown(&cmp, &st);
  const char *dump = getenv("TL_GOLDEN_OUT");
  if (dump)
    tl_test_write_file(dump, md, strlen(md));
  char *golden = tl_test_read_file(TL_SOURCE_DIR "/tests/golden/stats.md", NULL);
  assert_non_null(golden);
  assert_string_equal(md, golden);
  free(golden);
  free(md);
  tl_stats_free(&st);
  tl_comparison_free(&cmp);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(order_ci_against_binomial),
      cmocka_unit_test(order_ci_same_ranks_as_reference),
      cmocka_unit_test_setup_teardown(kept_samples_sorted, tl_test_store_setup,
                                      tl_test_store_teardown),
      cmocka_unit_test_setup_teardown(kept_part_as_read, tl_test_store_setup,
                                      tl_test_store_teardown),
      cmocka_unit_test_setup_teardown(earlier_groups_as_read, tl_test_store_setup,
                                      tl_test_store_teardown),
      cmocka_unit_test_setup_teardown(earlier_beside_groups, tl_test_store_setup,
                                      tl_test_store_teardown),
      cmocka_unit_test_setup_teardown(check_latest_apart_as_whole, tl_test_store_setup,
                                      tl_test_store_teardown),
      cmocka_unit_test_setup_teardown(check_damaged_latest_says_only_why, tl_test_store_setup,
                                      tl_test_store_teardown),
      cmocka_unit_test(remainder_as_divided),
      cmocka_unit_test_setup_teardown(load_with_dist_as_apart, tl_test_store_setup,
                                      tl_test_store_teardown),
      cmocka_unit_test(mann_whitney_against_brute_force),
      cmocka_unit_test(mann_whitney_long_runs),
      cmocka_unit_test(rank_pairs_as_each_merge),
      cmocka_unit_test_setup_teardown(rank_test_of_every_pair, tl_test_store_setup,
                                      tl_test_store_teardown),
      cmocka_unit_test(planted_steps),
      cmocka_unit_test_setup_teardown(identical_data_claims_nothing, tl_test_store_setup,
                                      tl_test_store_teardown),
      cmocka_unit_test_setup_teardown(microseconds_keep_their_digits, tl_test_store_setup,
                                      tl_test_store_teardown),
      cmocka_unit_test_setup_teardown(shifted_data_found_and_covered, tl_test_store_setup,
                                      tl_test_store_teardown),
      cmocka_unit_test_setup_teardown(order_interval_is_the_sorted_samples, tl_test_store_setup,
                                      tl_test_store_teardown),
      cmocka_unit_test_setup_teardown(too_few_samples_warned, tl_test_store_setup,
                                      tl_test_store_teardown),
      cmocka_unit_test_setup_teardown(planted_step_found_on_its_date, tl_test_store_setup,
                                      tl_test_store_teardown),
      cmocka_unit_test_setup_teardown(session_spread_reported, tl_test_store_setup,
                                      tl_test_store_teardown),
      cmocka_unit_test_setup_teardown(empty_and_short_sessions, tl_test_store_setup,
                                      tl_test_store_teardown),
      cmocka_unit_test_setup_teardown(regression_check, tl_test_store_setup,
                                      tl_test_store_teardown),
      cmocka_unit_test_setup_teardown(check_compares_lateness, tl_test_store_setup,
                                      tl_test_store_teardown),
      cmocka_unit_test_setup_teardown(large_groups_and_determinism, tl_test_store_setup,
                                      tl_test_store_teardown),
      cmocka_unit_test_setup_teardown(statistics_taken_as_the_comparison_reads, tl_test_store_setup,
                                      tl_test_store_teardown),
      cmocka_unit_test_setup_teardown(session_bootstrap_as_searched, tl_test_store_setup,
                                      tl_test_store_teardown),
      cmocka_unit_test_setup_teardown(reservoir_keeps_every_position_alike, tl_test_store_setup,
                                      tl_test_store_teardown),
      cmocka_unit_test_setup_teardown(intervals_cover_the_truth, tl_test_store_setup,
                                      tl_test_store_teardown),
      cmocka_unit_test_setup_teardown(twins_drifting_claim_little, tl_test_store_setup,
                                      tl_test_store_teardown),
      cmocka_unit_test_setup_teardown(baseline_table_rests_on_sessions, tl_test_store_setup,
                                      tl_test_store_teardown),
      cmocka_unit_test(group_intervals_at_every_size),
      cmocka_unit_test_setup_teardown(hostile_text, tl_test_store_setup, tl_test_store_teardown),
      cmocka_unit_test_setup_teardown(golden_page, tl_test_store_setup, tl_test_store_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
