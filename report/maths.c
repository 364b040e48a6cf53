/* maths.c: the statistical methods of the report, apart from tl's data:
 * seeded random draws (splitmix64, so that a database always gives the same
 * bytes), binomial tails and the order-statistic interval of a percentile,
 * and lasting steps in a series (binary segmentation with a permutation
 * test); the rank test is rank_test.c's. Methods and their limits are
 * described in docs/statistics.md. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats_internal.h"

enum {
  PERMUTATIONS = 999, /* of the step test */
  STEP_POINTS = 5000, /* a longer series is tested in this many bins */
};

/* ======================================================================== */
/* Student's t                                                               */

/* The regularized incomplete beta function I_x(a, b) by its continued
 * fraction, evaluated with the modified Lentz method (Press et al.,
 * Numerical Recipes, 3rd ed., 6.4); about 1e-12 relative. */
static double beta_fraction(double x, double a, double b) {
  const double tiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  d = 1 / (fabs(d) < tiny ? tiny : d);
  double h = d;
  for (int m = 1; m <= 300; m++) {
    double m2 = 2.0 * m, aa = m * (b - m) * x / ((a - 1 + m2) * (a + m2));
    d = 1 + aa * d;
    c = 1 + aa / c;
    d = 1 / (fabs(d) < tiny ? tiny : d);
    c = fabs(c) < tiny ? tiny : c;
    h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1 + m2));
    d = 1 + aa * d;
    c = 1 + aa / c;
    d = 1 / (fabs(d) < tiny ? tiny : d);
    c = fabs(c) < tiny ? tiny : c;
    double step = d * c;
    h *= step;
    if (fabs(step - 1) < 1e-14)
      break;
  }
  return h;
}

static double incomplete_beta(double x, double a, double b) {
  if (x <= 0)
    return 0;
  if (x >= 1)
    return 1;
  double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
  if (x < (a + 1) / (a + b + 2))
    return front * beta_fraction(x, a, b) / a;
  return 1 - front * beta_fraction(1 - x, b, a) / b;
}

/* P(T <= t) for Student's t with df degrees of freedom (df > 0, not
 * necessarily whole: Welch's are not). */
static double t_cdf(double t, double df) {
  double tail = 0.5 * incomplete_beta(df / (df + t * t), df / 2, 0.5);
  return t > 0 ? 1 - tail : tail;
}

/* The bisection below asks t_cdf(x) < p some 35 times. Where the answer is
 * sure without working t_cdf out, it is not worked out: t_cdf is monotone
 * and good to about 1e-13, so left of a point where it is below p - 1e-9
 * every answer is yes, right of one where it is above p + 1e-9 every answer
 * no. Newton's steps find two such points close around the quantile first
 * (about five t_cdf), which leaves the bisection about eight of its own:
 * the same answers, so the same quantile to the last bit. A page comparing
 * 200 hosts works out 200,000 of these. */
typedef struct {
  double p, df;
  double a, b; /* t_cdf(a) < p - 1e-9, t_cdf(b) > p + 1e-9 */
  int noting;  /* a and b narrow with every t_cdf worked out */
} t_search;

static double t_cdf_noted(t_search *k, double x) {
  double v = t_cdf(x, k->df);
  if (k->noting && v < k->p - 1e-9 && x > k->a)
    k->a = x;
  if (k->noting && v > k->p + 1e-9 && x < k->b)
    k->b = x;
  return v;
}

/* t_cdf(x, df) < p, as the bisection would work it out. */
static int t_below_p(t_search *k, double x) {
  if (x <= k->a)
    return 1;
  if (x >= k->b)
    return 0;
  return t_cdf_noted(k, x) < k->p;
}

/* Narrows [a, b] around the quantile by Newton's steps from the normal's
 * (with two terms of Cornish and Fisher's expansion for p = 0.975, the
 * intervals'): t_cdf is concave right of 0, so a step from the right lands
 * left of the quantile and the steps from the left do not pass it. */
static void t_narrow(t_search *k) {
  double df = k->df, x = 0;
  if (k->p == 0.975) {
    double z = 1.959963984540054, z3 = z * z * z;
    x = z + (z3 + z) / (4 * df) + (5 * z3 * z * z + 16 * z3 + 3 * z) / (96 * df * df);
  }
  double log_c = lgamma((df + 1) / 2) - lgamma(df / 2) - 0.5 * log(df * 3.141592653589793);
  for (int i = 0; i < 40; i++) {
    double f = exp(log_c - 0.5 * (df + 1) * log1p(x * x / df));
    double miss = t_cdf_noted(k, x) - k->p;
    if (!(f > 0) || !isfinite(miss))
      return;
    if (fabs(miss) < 1e-12) {
      t_cdf_noted(k, x - 3e-9 / f);
      t_cdf_noted(k, x + 3e-9 / f);
      return;
    }
    x -= miss / f;
    x = x > 0 ? x : 0;
  }
}

int tl__stats_t_direct;

double tl__t_quantile(double p, double df) {
  if (!(df > 0) || !(p > 0.5 && p < 1))
    return NAN;
  if (df > 1e7)
    df = 1e7; /* the normal's, to 1e-7 */
  /* t_cdf(0) is 0.5 exactly */
  t_search k = {p, df, p - 1e-9 > 0.5 ? 0 : -INFINITY, INFINITY, !tl__stats_t_direct};
  if (!k.noting)
    k.a = -INFINITY; /* as first written: every answer worked out */
  else if (df >= 1)
    t_narrow(&k);
  double lo = 0, hi = 1;
  while (t_below_p(&k, hi) && hi < 1e12)
    hi *= 2;
  for (int i = 0; i < 100 && hi - lo > 1e-10 * hi; i++) {
    double mid = 0.5 * (lo + hi);
    if (t_below_p(&k, mid))
      lo = mid;
    else
      hi = mid;
  }
  return 0.5 * (lo + hi);
}

/* Whether tl__t_quantile(p, df) is below c, from one t_cdf: 1 or 0, or -1
 * when too close to tell. The bisection above ends on lo < q <= hi (in
 * t_cdf) with hi - lo <= 1e-10 hi, hi <= 16 for df >= 1 and p <= 0.975, and
 * t's density is below 0.4: so t_cdf(hi) - t_cdf(lo) < 7e-10. A c whose
 * t_cdf is more than 1e-9 above p lies above hi (by more than 9e-10), one
 * more than 1e-9 below p below lo. A search over the number of sessions
 * asks this a dozen times a pair of groups. */
int tl__t_quantile_below(double p, double df, double c) {
  if (!(df >= 1 && p > 0.5 && p <= 0.975 && c > 0 && c < INFINITY))
    return -1;
  double at = t_cdf(c, df > 1e7 ? 1e7 : df);
  return at > p + 1e-9 ? 1 : at < p - 1e-9 ? 0 : -1;
}

/* ======================================================================== */
/* Random draws                                                              */

/* x % d (d >= 1) given inv = UINT64_MAX / d, without a division where the
 * compiler has 128-bit products: the quotient x * inv / 2^64 is the true one
 * or one less, so one subtraction finishes the remainder. */
static uint64_t mod_by(uint64_t x, uint64_t d, uint64_t inv) {
#ifdef __SIZEOF_INT128__
  uint64_t q = (uint64_t)(((unsigned __int128)x * inv) >> 64), rem = x - q * d;
  return rem >= d ? rem - d : rem;
#else
  (void)inv;
  return x % d;
#endif
}

static double rng_normal(tl__rng *r) {
  double u = tl__rng_unit(r), v = tl__rng_unit(r);
  return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* Gamma(a, 1) for a >= 1 (Marsaglia and Tsang). */
static double rng_gamma(tl__rng *r, double a) {
  double d = a - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
  for (;;) {
    double x = rng_normal(r), v = 1.0 + c * x;
    if (v <= 0)
      continue;
    v = v * v * v;
    double u = tl__rng_unit(r);
    if (log(u) < 0.5 * x * x + d - d * v + d * log(v))
      return d * v;
  }
}

double tl__rng_beta(tl__rng *r, double a, double b) {
  double x = rng_gamma(r, a), y = rng_gamma(r, b);
  return x / (x + y);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++)
    h = (h ^ c[i]) * 0x100000001b3ULL;
  return h;
}

/* The seed of a group: its label, probe and delay, and a purpose. */
uint64_t tl__group_seed(const char *label, const char *probe, int64_t delay_ns, const char *what) {
  uint64_t h = 0xcbf29ce484222325ULL;
  h = fnv(h, label, strlen(label) + 1);
  h = fnv(h, probe, strlen(probe) + 1);
  h = fnv(h, &delay_ns, sizeof delay_ns);
  return fnv(h, what, strlen(what));
}

int tl__cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* ======================================================================== */
/* Binomial and order statistics                                             */

/* The binomial mass is negligible (far below 1e-300) outside this window. */
static void binom_window(int64_t n, double p, int64_t *a, int64_t *b) {
  double mu = (double)n * p, sd = sqrt((double)n * p * (1 - p));
  double lo = floor(mu - 40 * sd - 40), hi = ceil(mu + 40 * sd + 40);
  *a = lo < 0 ? 0 : (int64_t)lo;
  *b = hi > (double)n ? n : (int64_t)hi;
}

static double binom_pmf(int64_t k, int64_t n, double lp, double lq) {
  return exp(lgamma((double)n + 1) - lgamma((double)k + 1) - lgamma((double)(n - k) + 1) +
             (double)k * lp + (double)(n - k) * lq);
}

double tl__binom_cdf(int64_t k, int64_t n, double p) {
  if (k < 0)
    return 0;
  if (k >= n || p <= 0)
    return 1;
  if (p >= 1)
    return 0;
  int64_t a, b;
  binom_window(n, p, &a, &b);
  if (k < a)
    return 0;
  if (k >= b)
    return 1;
  double lp = log(p), lq = log1p(-p), sum = 0;
  for (int64_t j = a; j <= k; j++)
    sum += binom_pmf(j, n, lp, lq);
  return sum > 1 ? 1 : sum;
}

/* The log of the binomial mass at k, as binom_pmf works it out. */
static double binom_log_pmf(int64_t k, int64_t n, double lp, double lq) {
  return lgamma((double)n + 1) - lgamma((double)k + 1) - lgamma((double)(n - k) + 1) +
         (double)k * lp + (double)(n - k) * lq;
}

enum {
  BINOM_DIRECT = 4096, /* windows up to this many masses: each by its formula */
  BINOM_ANCHOR = 64,   /* otherwise one by its formula every this many, products between */
};

/* Below e^-100 a stretch of masses adds less than 1e-30 to the tails. */
static const double BINOM_NEGLIGIBLE_LOG = -100;

int tl_order_stat_ci(int64_t n, double pct, double conf, int64_t *lo_rank, int64_t *hi_rank) {
  *lo_rank = *hi_rank = 0;
  if (n < 1 || !(pct >= 0 && pct <= 100) || !(conf > 0 && conf < 1))
    return TL_EINVAL;
  double q = pct / 100, tail = (1 - conf) / 2;
  /* P(X_(l) > x_q) = P(Bin(n, q) <= l - 1) and P(X_(u) < x_q) = P(Bin >= u):
   * l is the largest rank with the first at most tail, u the smallest with
   * the second at most tail. */
  if (q <= 0) {
    *hi_rank = 1;
    return TL_OK;
  }
  if (q >= 1) {
    *lo_rank = n;
    return TL_OK;
  }
  int64_t a, b;
  binom_window(n, q, &a, &b);
  double lp = log(q), lq = log1p(-q), odds = q / (1 - q), cdf = 0, mass = 0;
  int64_t last_low = -1, first_high = -1, end = b < n - 1 ? b : n - 1;
  if (a > 0)
    last_low = a - 1; /* everything below the window has negligible mass */
  /* A small window sums every mass by its formula. A large one (tens of
   * thousands of masses for a million samples, each three lgamma and an exp)
   * skips the stretches below the mode that add nothing, and gets from one
   * mass to the next by their ratio (n - j + 1) / j * q / (1 - q), starting
   * again from the formula every BINOM_ANCHOR masses: the sums stay within
   * 1e-13 of the direct ones, so the ranks are the same unless a tail lands
   * that close to 2.5% (tests/test_stats.c compares them). */
  int direct = end - a < BINOM_DIRECT;
  int64_t mode = (int64_t)floor((double)(n + 1) * q);
  for (int64_t j = a; j <= end; j++) {
    if (direct) {
      mass = binom_pmf(j, n, lp, lq);
    } else if ((j - a) % BINOM_ANCHOR == 0) {
      int64_t stretch = j + BINOM_ANCHOR - 1 < end ? j + BINOM_ANCHOR - 1 : end;
      if (stretch < mode && cdf == 0 && binom_log_pmf(stretch, n, lp, lq) < BINOM_NEGLIGIBLE_LOG) {
        if (cdf <= tail)
          last_low = stretch;
        j = stretch;
        continue;
      }
      mass = binom_pmf(j, n, lp, lq);
    } else {
      mass *= (double)(n - j + 1) / (double)j * odds;
    }
    cdf += mass;
    if (cdf <= tail)
      last_low = j;
    if (cdf >= 1 - tail) {
      first_high = j;
      break;
    }
  }
  if (first_high < 0 && b < n - 1)
    first_high = b; /* the rest of the mass is negligible */
  *lo_rank = last_low >= 0 ? last_low + 1 : 0;
  *hi_rank = first_high >= 0 ? first_high + 1 : 0;
  return TL_OK;
}

/* ======================================================================== */
/* Steps in a series                                                         */

/* The best single split of x[0..n) into two means, both sides at least L
 * long: returns the share of the sum of squares it explains (0 when none),
 * the split in *at. */
static double best_split(const double *x, size_t n, size_t L, size_t *at) {
  double total = 0, sq = 0;
  for (size_t i = 0; i < n; i++)
    total += x[i];
  double mean = total / (double)n;
  for (size_t i = 0; i < n; i++)
    sq += (x[i] - mean) * (x[i] - mean);
  *at = 0;
  if (n < 2 * L || !(sq > 1e-12 * (fabs(mean) + 1) * (fabs(mean) + 1)))
    return 0;
  double left = 0, best = -1;
  for (size_t t = 1; t < n; t++) {
    left += x[t - 1];
    if (t < L || n - t < L)
      continue;
    double m1 = left / (double)t, m2 = (total - left) / (double)(n - t);
    double r = (double)t * (double)(n - t) / (double)n * (m1 - m2) * (m1 - m2);
    if (r > best) {
      best = r;
      *at = t;
    }
  }
  return best / sq;
}

static double median3(double a, double b, double c) {
  if (a > b) {
    double t = a;
    a = b;
    b = t;
  }
  return c < a ? a : c > b ? b : c;
}

/* The k-th smallest of a[0..n) (k < n), the smaller ones moved before it:
 * quickselect, three-way, so that runs of equal values end it early. */
static double select_kth(double *a, size_t n, size_t k) {
  size_t lo = 0, hi = n;
  while (hi - lo > 1) {
    double p = median3(a[lo], a[lo + (hi - lo) / 2], a[hi - 1]), t;
    size_t lt = lo, i = lo, gt = hi; /* [lo, lt) < p, [lt, i) == p, [gt, hi) > p */
    while (i < gt) {
      if (a[i] < p) {
        t = a[lt], a[lt++] = a[i], a[i++] = t;
      } else if (a[i] > p) {
        t = a[--gt], a[gt] = a[i], a[i] = t;
      } else {
        i++;
      }
    }
    if (k < lt)
      hi = lt;
    else if (k >= gt)
      lo = gt;
    else
      return p;
  }
  return a[k];
}

double tl__median(double *v, size_t n) {
  double upper = select_kth(v, n, n / 2);
  if (n % 2)
    return upper;
  double lower = v[0]; /* the largest of those before the upper middle */
  for (size_t i = 1; i < n / 2; i++)
    lower = v[i] > lower ? v[i] : lower;
  return (lower + upper) / 2;
}

/* The median of x[0..n) (n >= 1), x left as it is. */
static double median_of(const double *x, size_t n, double *tmp) {
  memcpy(tmp, x, n * sizeof *x);
  return tl__median(tmp, n);
}

typedef struct {
  const double *x;
  double alpha;
  uint64_t seed;
  tl__shuffle sh; /* the buffers of the permutation test */
  size_t *cuts;
  double *pv;
  size_t ncut, max;
} seg_ctx;

/* Shuffles perm[0..n) once (Fisher-Yates from the end) and returns its best
 * split's share of sq, in the same pass: after step i, perm[i..n) is final,
 * so the sum right of split i is known. With w[t] = n / (t (n - t)) the
 * split's sum of squares is w[t] (left - t mean)^2, which is
 * t (n - t) / n (m1 - m2)^2 without a division. The draws come first, on
 * their own: each depends on nothing before it, so they overlap, where
 * mixed with the swaps and the sums each would wait for those. */
double tl__shuffled_split(const tl__shuffle *s, size_t n, tl__rng *r, double total, double sq) {
  uint32_t *pick = s->pick;
  double *perm = s->perm;
  for (size_t i = n - 1; i > 0; i--)
    pick[i] = (uint32_t)mod_by(tl__rng_next(r), i + 1, s->inv[i + 1]);
  double mean = total / (double)n, best = 0, right = 0;
  for (size_t i = n - 1; i > 0; i--) {
    double v = perm[pick[i]];
    perm[pick[i]] = perm[i];
    perm[i] = v;
    right += v;
    if (i >= s->L && n - i >= s->L) {
      double d = (total - right) - (double)i * mean, q = s->w[i] * d * d;
      best = q > best ? q : best;
    }
  }
  return best / sq;
}

static void binseg(seg_ctx *c, size_t lo, size_t hi) {
  size_t n = hi - lo, at;
  if (c->ncut >= c->max)
    return;
  double stat = best_split(c->x + lo, n, c->sh.L, &at);
  if (stat <= 0)
    return;
  /* Permutation test: how often does a shuffled segment split as well? */
  double total = 0, sq = 0;
  for (size_t i = 0; i < n; i++)
    total += c->x[lo + i];
  for (size_t i = 0; i < n; i++)
    sq += (c->x[lo + i] - total / (double)n) * (c->x[lo + i] - total / (double)n);
  for (size_t t = 1; t < n; t++)
    c->sh.w[t] = (double)n / ((double)t * (double)(n - t));
  tl__rng r = {c->seed ^ ((uint64_t)lo * 0x9e3779b97f4a7c15ULL) ^ (uint64_t)hi};
  memcpy(c->sh.perm, c->x + lo, n * sizeof *c->sh.perm);
  size_t as_good = 0;
  /* p only grows with the shuffles that split as well: once it is above
   * alpha the rest cannot bring it back, so stop there (the usual case where
   * nothing changed); the answer is the same. */
  for (int k = 0; k < PERMUTATIONS && !((double)(as_good + 1) / (PERMUTATIONS + 1) > c->alpha); k++)
    as_good += tl__shuffled_split(&c->sh, n, &r, total, sq) >= stat * (1 - 1e-12);
  double p = (double)(as_good + 1) / (PERMUTATIONS + 1);
  if (p > c->alpha)
    return;
  c->cuts[c->ncut] = lo + at;
  c->pv[c->ncut] = p;
  c->ncut++;
  binseg(c, lo, lo + at);
  binseg(c, lo + at, hi);
}

int tl_steps_find(const double *x, size_t n, const tl_step_opts *o, tl_step *steps, size_t max,
                  size_t *count) {
  *count = 0;
  tl_step_opts d = {0};
  if (o)
    d = *o;
  if (!d.min_segment)
    d.min_segment = 3;
  if (!(d.alpha > 0))
    d.alpha = 0.01;
  if (!(d.min_change > 0))
    d.min_change = 0.05;
  if (n < 2 * d.min_segment || !max)
    return TL_OK;
  for (size_t i = 0; i < n; i++)
    if (!isfinite(x[i]))
      return TL_EINVAL;
  /* Each split costs PERMUTATIONS passes over its segment: past STEP_POINTS
   * points (a fleet's sessions) the test runs on the means of STEP_POINTS
   * bins of consecutive points, so that its cost stops growing with the
   * series; the cuts fall between bins and the medians either side are the
   * points' own. */
  size_t nb = n > STEP_POINTS ? STEP_POINTS : n;
  double *bins = nb < n ? malloc(nb * sizeof *bins) : NULL;
  seg_ctx c = {bins ? bins : x,
               d.alpha,
               d.seed,
               {NULL, d.min_segment, NULL, NULL, NULL},
               NULL,
               NULL,
               0,
               max};
  tl__shuffle *sh = &c.sh;
  double *w = sh->w = malloc((nb + 1) * sizeof *w);
  uint64_t *inv = sh->inv = malloc((nb + 1) * sizeof *inv);
  sh->perm = malloc(nb * sizeof *sh->perm);
  sh->pick = malloc((nb + 1) * sizeof *sh->pick);
  c.cuts = malloc((max + 2) * sizeof *c.cuts);
  c.pv = malloc((max + 2) * sizeof *c.pv);
  double *tmp = malloc(n * sizeof *tmp);
  int rc = TL_ENOMEM;
  if (!sh->perm || !c.cuts || !c.pv || !inv || !w || !sh->pick || !tmp || (nb < n && !bins))
    goto done;
  for (size_t b = 0; bins && b < nb; b++) {
    size_t from = b * n / nb, to = (b + 1) * n / nb;
    double sum = 0;
    for (size_t i = from; i < to; i++)
      sum += x[i];
    bins[b] = sum / (double)(to - from);
  }
  for (size_t i = 1; i <= nb; i++)
    inv[i] = UINT64_MAX / i;
  binseg(&c, 0, nb);
  for (size_t i = 0; bins && i < c.ncut; i++)
    c.cuts[i] = c.cuts[i] * n / nb; /* the bin's first point */
  /* Order the cuts; then drop, smallest first, those whose segments'
   * medians move by less than min_change, re-measuring after each drop. */
  for (size_t i = 1; i < c.ncut; i++)
    for (size_t k = i; k > 0 && c.cuts[k - 1] > c.cuts[k]; k--) {
      size_t t = c.cuts[k];
      c.cuts[k] = c.cuts[k - 1];
      c.cuts[k - 1] = t;
      double tp = c.pv[k];
      c.pv[k] = c.pv[k - 1];
      c.pv[k - 1] = tp;
    }
  for (;;) {
    size_t worst = 0;
    double worst_rel = INFINITY;
    for (size_t i = 0; i < c.ncut; i++) {
      size_t s0 = i ? c.cuts[i - 1] : 0, s1 = c.cuts[i], s2 = i + 1 < c.ncut ? c.cuts[i + 1] : n;
      double before = median_of(x + s0, s1 - s0, tmp), after = median_of(x + s1, s2 - s1, tmp);
      double rel = fabs(after - before) / (fabs(before) > 0 ? fabs(before) : 1);
      steps[i].index = s1;
      steps[i].before = before;
      steps[i].after = after;
      steps[i].p_value = c.pv[i];
      if (rel < worst_rel) {
        worst_rel = rel;
        worst = i;
      }
    }
    if (!c.ncut || worst_rel >= d.min_change)
      break;
    memmove(c.cuts + worst, c.cuts + worst + 1, (c.ncut - worst - 1) * sizeof *c.cuts);
    memmove(c.pv + worst, c.pv + worst + 1, (c.ncut - worst - 1) * sizeof *c.pv);
    c.ncut--;
  }
  *count = c.ncut;
  rc = TL_OK;
done:
  free(bins);
  free(sh->perm);
  free(c.cuts);
  free(c.pv);
  free(inv);
  free(w);
  free(sh->pick);
  free(tmp);
  return rc;
}

size_t tl__stats_ci_ranks(int64_t n, size_t sessions, const double *pcts, size_t np,
                          int64_t *ranks) {
  size_t nr = 0;
  for (size_t k = 0; k < np && n > 0 && sessions < TL_STATS_BOOT_SESSIONS; k++) {
    int64_t lo, hi;
    tl_order_stat_ci(n, pcts[k], TL__CONF, &lo, &hi);
    if (lo)
      ranks[nr++] = lo;
    if (hi)
      ranks[nr++] = hi;
  }
  return nr;
}
