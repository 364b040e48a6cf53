/* stats.c: how sure a comparison is. Confidence intervals of percentiles
 * (order statistics over the samples, or a bootstrap over sessions when a
 * group has several), differences between labels with a bootstrap interval
 * and a Mann-Whitney rank test, the spread between sessions, warnings when a
 * percentile rests on too few samples, lasting changes in the per-session
 * p90/p99 series, the plain-words sentences and Markdown built from them,
 * and the regression check behind `tlreport --check`.
 *
 * Large groups are reduced to at most TL_STATS_KEEP samples by a seeded
 * reservoir per session (in proportion to the session's size); the point
 * values quoted are always the exact ones of the whole data. Every random
 * draw comes from a splitmix64 stream seeded from the label, probe and delay,
 * so a database always gives the same bytes. Methods and their limits are
 * described in docs/statistics.md. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"

enum {
  B = TL_STATS_REPLICATES,
  PERMUTATIONS = 999, /* of the step test */
  MAX_CHANGES = 8,    /* per series */
};

static const double CONF = 0.95;
static const double SERIES_PCTS[TL_STATS_SERIES] = {90, 99};

/* ======================================================================== */
/* Random draws                                                              */

typedef struct {
  uint64_t s;
} tl__rng;

static uint64_t tl__rng_next(tl__rng *r) {
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Uniform in (0, 1): never 0, so that log() is safe. */
static double tl__rng_unit(tl__rng *r) {
  return ((double)(tl__rng_next(r) >> 11) + 0.5) * 0x1.0p-53;
}

static uint64_t tl__rng_below(tl__rng *r, uint64_t n) { return tl__rng_next(r) % n; }

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

static double tl__rng_beta(tl__rng *r, double a, double b) {
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
static uint64_t tl__group_seed(const char *label, const char *probe, int64_t delay_ns,
                               const char *what) {
  uint64_t h = 0xcbf29ce484222325ULL;
  h = fnv(h, label, strlen(label) + 1);
  h = fnv(h, probe, strlen(probe) + 1);
  h = fnv(h, &delay_ns, sizeof delay_ns);
  return fnv(h, what, strlen(what));
}

static int tl__cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
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

double tl_binom_cdf(int64_t k, int64_t n, double p) {
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
  double lp = log(q), lq = log1p(-q), cdf = 0;
  int64_t last_low = -1, first_high = -1;
  if (a > 0)
    last_low = a - 1; /* everything below the window has negligible mass */
  for (int64_t j = a; j <= b && j <= n - 1; j++) {
    cdf += binom_pmf(j, n, lp, lq);
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
/* Mann-Whitney U                                                            */

int tl_mann_whitney(const int64_t *a, size_t na, const int64_t *b, size_t nb, tl_mw *out) {
  memset(out, 0, sizeof *out);
  out->p_value = 1;
  out->a_below_b = 0.5;
  if (!na || !nb)
    return TL_EINVAL;
  long double u = 0, ties = 0;
  size_t i = 0, j = 0;
  while (i < na || j < nb) {
    int64_t v = i < na && (j >= nb || a[i] <= b[j]) ? a[i] : b[j];
    size_t ca = 0, cb = 0;
    while (i < na && a[i] == v)
      i++, ca++;
    while (j < nb && b[j] == v)
      j++, cb++;
    /* b values below v: j - cb. */
    u += (long double)ca * (long double)(j - cb) + 0.5L * (long double)ca * (long double)cb;
    long double t = (long double)(ca + cb);
    ties += t * t * t - t;
  }
  long double n1 = (long double)na, n2 = (long double)nb, n = n1 + n2;
  long double var = n1 * n2 / 12.0L * ((n + 1) - ties / (n * (n - 1 > 0 ? n - 1 : 1)));
  long double d = u - n1 * n2 / 2;
  out->u = (double)u;
  out->a_below_b = (double)(1 - u / (n1 * n2));
  if (var <= 0)
    return TL_OK;
  long double ad = fabsl(d) - 0.5L;
  if (ad < 0)
    ad = 0;
  out->z = (double)((d < 0 ? -ad : ad) / sqrtl(var));
  out->p_value = erfc(fabs(out->z) / sqrt(2.0));
  return TL_OK;
}

/* ======================================================================== */
/* Steps in a series                                                         */

/* The best single split of x[0..n) into two means, both sides at least L
 * long: returns the share of the sum of squares it explains (0 when none),
 * the split in *at. w, when not NULL, holds each split's weight
 * t (n - t) / n, worked out once for the many shuffles of one segment. */
static double best_split(const double *x, size_t n, size_t L, const double *w, size_t *at) {
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
    double r = (w ? w[t] : (double)t * (double)(n - t) / (double)n) * (m1 - m2) * (m1 - m2);
    if (r > best) {
      best = r;
      *at = t;
    }
  }
  return best / sq;
}

static double median_of(const double *x, size_t n, double *tmp) {
  memcpy(tmp, x, n * sizeof *x);
  qsort(tmp, n, sizeof *tmp, cmp_dbl);
  return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

typedef struct {
  const double *x;
  size_t L;
  double alpha;
  uint64_t seed;
  double *perm;
  size_t *cuts;
  double *pv;
  size_t ncut, max;
  uint64_t *inv; /* inv[d] = UINT64_MAX / d, for the shuffles */
  double *w;     /* the weights of a segment's splits (best_split) */
} seg_ctx;

static void binseg(seg_ctx *c, size_t lo, size_t hi) {
  size_t n = hi - lo, at;
  if (c->ncut >= c->max)
    return;
  double stat = best_split(c->x + lo, n, c->L, NULL, &at);
  if (stat <= 0)
    return;
  /* Permutation test: how often does a shuffled segment split as well? */
  for (size_t t = 1; t < n; t++)
    c->w[t] = (double)t * (double)(n - t) / (double)n;
  tl__rng r = {c->seed ^ ((uint64_t)lo * 0x9e3779b97f4a7c15ULL) ^ (uint64_t)hi};
  memcpy(c->perm, c->x + lo, n * sizeof *c->perm);
  size_t as_good = 0, dummy;
  for (int k = 0; k < PERMUTATIONS; k++) {
    for (size_t i = n - 1; i > 0; i--) {
      size_t j = (size_t)mod_by(tl__rng_next(&r), i + 1, c->inv[i + 1]);
      double t = c->perm[i];
      c->perm[i] = c->perm[j];
      c->perm[j] = t;
    }
    as_good += best_split(c->perm, n, c->L, c->w, &dummy) >= stat * (1 - 1e-12);
  }
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
  seg_ctx c = {x, d.min_segment, d.alpha, d.seed, NULL, NULL, NULL, 0, max, NULL, NULL};
  c.perm = malloc(n * sizeof *c.perm);
  c.cuts = malloc((max + 2) * sizeof *c.cuts);
  c.pv = malloc((max + 2) * sizeof *c.pv);
  c.inv = malloc((n + 1) * sizeof *c.inv);
  c.w = malloc((n + 1) * sizeof *c.w);
  double *tmp = malloc(n * sizeof *tmp);
  if (!c.perm || !c.cuts || !c.pv || !c.inv || !c.w || !tmp) {
    free(c.perm);
    free(c.cuts);
    free(c.pv);
    free(c.inv);
    free(c.w);
    free(tmp);
    return TL_ENOMEM;
  }
  for (size_t i = 1; i <= n; i++)
    c.inv[i] = UINT64_MAX / i;
  binseg(&c, 0, n);
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
  free(c.perm);
  free(c.cuts);
  free(c.pv);
  free(c.inv);
  free(c.w);
  free(tmp);
  return TL_OK;
}

/* ======================================================================== */
/* Samples of a group in bounded memory                                      */

typedef struct {
  int64_t id, started_ns;
  uint64_t key;  /* of its UUID, which every store gives it (its id is the store's own) */
  int64_t n;     /* samples seen */
  size_t cap, m; /* reservoir capacity, samples kept */
  int64_t *v;    /* kept samples, sorted once loaded (a slice of the set's buffer) */
  tl__rng r;
  double log_q;               /* log(1 - p), p the chance to keep each sample; 0: every one */
  double w;                   /* once the slots are full, Algorithm L's weight */
  int64_t next;               /* the 1-based number of the next sample to keep */
  const tl_session_detail *d; /* what the comparison computed for it, or NULL */
} tl__sess;

typedef struct {
  tl__sess *s;
  size_t ns;
  int64_t *buf;  /* every kept sample, session by session */
  int64_t *pool; /* the same, sorted */
  uint32_t *tag; /* the session of each pooled sample */
  size_t m;      /* kept in total */
  int64_t n;     /* samples in total */
  int exact;     /* every sample kept */
  int borrowed;  /* the arrays belong to the comparison (a tl__kept) */
  /* Exact values at ranks of the group that the comparison found. */
  int64_t known_rank[2 * TL_MAX_PCTS], known_value[2 * TL_MAX_PCTS];
  size_t known;
} tl__sset;

static void tl__sset_free(tl__sset *x) {
  if (!x->borrowed) {
    free(x->s);
    free(x->buf);
    free(x->pool);
    free(x->tag);
  }
  memset(x, 0, sizeof *x);
}

/* Keeping a uniform sample of a session in cap slots, in one pass.
 *
 * The session's size is known beforehand (the count its row records), so
 * each sample is kept with the same chance p, a little under cap / n, and
 * the gap to the next kept sample is drawn at once (geometric): one draw per
 * kept sample, and the kept samples are a uniform sample of the session
 * whatever their number. Should the slots fill up all the same (a session
 * larger than its row says), the rest goes through Algorithm L (Li, 1994), a
 * reservoir with a few draws per replaced sample; small sessions whose
 * every sample fits take them all, then continue the same way. */
static void keep_next(tl__sess *s) {
  double skip = floor(log(tl__rng_unit(&s->r)) / s->log_q);
  s->next = skip < 0x1p62 ? s->n + (int64_t)skip + 1 : INT64_MAX;
}

static void replace_next(tl__sess *s) {
  double skip = floor(log(tl__rng_unit(&s->r)) / log1p(-s->w));
  s->next = skip < 0x1p62 ? s->n + (int64_t)skip + 1 : INT64_MAX;
}

/* The slots are full at sample s->n: from now on a reservoir. Its weight is
 * the largest of the kept samples' random keys, the cap-th smallest of n
 * uniform keys: a Beta(cap, n - cap + 1) draw (after the first cap samples,
 * the largest of cap keys, as in Algorithm L). */
static void reservoir_start(tl__sess *s) {
  s->w = tl__rng_beta(&s->r, (double)s->cap, (double)(s->n - (int64_t)s->cap + 1));
  replace_next(s);
}

/* Readies s (cap slots, expected samples) before its first sample. */
static void keep_start(tl__sess *s, int64_t expected) {
  s->n = 0;
  s->m = 0;
  s->log_q = 0; /* every sample while there is room */
  double p = (double)s->cap / (double)expected * (1 - 4 / sqrt((double)s->cap));
  if ((int64_t)s->cap < expected && s->cap > 16 && p > 0) {
    /* Four standard deviations under cap on average, so that the slots
     * almost never fill. */
    s->log_q = log1p(-p);
    keep_next(s);
  }
}

static void reservoir_add(tl__sess *s, const int64_t *v, size_t n) {
  int64_t base = s->n, end = s->n + (int64_t)n;
  if (s->log_q == 0 && s->m < s->cap) {
    size_t take = s->cap - s->m < n ? s->cap - s->m : n;
    memcpy(s->v + s->m, v, take * sizeof *v);
    s->m += take;
    s->n += (int64_t)take;
    if (s->m == s->cap)
      reservoir_start(s);
  }
  if (s->m == s->cap || s->log_q != 0)
    while (s->next <= end) {
      int64_t x = v[s->next - base - 1];
      s->n = s->next;
      if (s->m < s->cap) {
        s->v[s->m++] = x;
        if (s->m < s->cap)
          keep_next(s);
        else
          reservoir_start(s);
      } else {
        s->v[tl__rng_below(&s->r, s->cap)] = x;
        s->w *= exp(log(tl__rng_unit(&s->r)) / (double)s->cap);
        replace_next(s);
      }
    }
  s->n = end;
}

static int reservoir_cb(void *ctx, const int64_t *v, size_t n) {
  reservoir_add(ctx, v, n);
  return 0;
}

/* The index of session id in the comparison, or -1. The search starts at
 * *from and leaves it after the session found: a group lists its sessions
 * in the comparison's order, so each is found at the first look. */
static ptrdiff_t find_session(const tl_comparison *cmp, int64_t id, size_t *from) {
  size_t n = cmp->sessions.count;
  for (size_t k = 0; k < n; k++) {
    size_t i = (*from + k) % n;
    if (cmp->sessions.items[i].id == id) {
      *from = i + 1;
      return (ptrdiff_t)i;
    }
  }
  return -1;
}

/* Sorts v, made of the sorted runs v[run[i]..run[i+1]) (i < runs), carrying
 * each sample's tag along, by merging the runs a pair at a time (vt and tt
 * as large as v): the sessions' samples are sorted already, so the pool
 * need not be sorted again from scratch. */
static void pool_merge(int64_t *v, uint32_t *tag, int64_t *vt, uint32_t *tt, size_t *run,
                       size_t runs) {
  int64_t *src = v, *dst = vt;
  uint32_t *tsrc = tag, *tdst = tt;
  while (runs > 1) {
    size_t out = 0;
    for (size_t r = 0; r < runs; r += 2) {
      /* An odd run out (no partner) is copied as it is. */
      size_t a = run[r], am = run[r + 1], b = am, bm = r + 1 < runs ? run[r + 2] : am, at = a;
      while (a < am && b < bm) {
        size_t from = src[b] < src[a] ? b++ : a++;
        dst[at] = src[from];
        tdst[at++] = tsrc[from];
      }
      for (; a < am; a++, at++)
        dst[at] = src[a], tdst[at] = tsrc[a];
      for (; b < bm; b++, at++)
        dst[at] = src[b], tdst[at] = tsrc[b];
      run[out++] = run[r];
    }
    run[out] = run[runs];
    runs = out;
    int64_t *t = src;
    src = dst;
    dst = t;
    uint32_t *u = tsrc;
    tsrc = tdst;
    tdst = u;
  }
  if (src != v) {
    memcpy(v, src, run[1] * sizeof *v);
    memcpy(tag, tsrc, run[1] * sizeof *tag);
  }
}

/* Sorts the samples of x (each session's, one session after another in
 * x->buf) into x->pool with their sessions in x->tag, and sorts each
 * session's own. When a sample and its session's number fit in one 63-bit
 * key, one radix sort of the keys (a few passes over the pool), then each
 * session takes its samples back in order; otherwise each session is sorted
 * and the sessions are merged. */
static int pool_sort(tl__sset *x) {
  size_t m = x->m;
  int64_t lo = m ? x->buf[0] : 0, hi = lo;
  for (size_t j = 1; j < m; j++) {
    lo = x->buf[j] < lo ? x->buf[j] : lo;
    hi = x->buf[j] > hi ? x->buf[j] : hi;
  }
  int bits = 0;
  while (bits < 32 && ((size_t)1 << bits) < x->ns)
    bits++;
  uint64_t span = (uint64_t)hi - (uint64_t)lo;
  if (bits < 32 && span < (UINT64_C(1) << (63 - bits))) {
    int64_t *key = x->pool;
    int64_t **put = malloc((x->ns ? x->ns : 1) * sizeof *put); /* where each session's next goes */
    if (!put)
      return TL_ENOMEM;
    for (size_t i = 0, at = 0; i < x->ns; i++)
      for (size_t j = 0; j < x->s[i].m; j++)
        key[at++] = (int64_t)((((uint64_t)x->s[i].v[j] - (uint64_t)lo) << bits) | i);
    if (tl__sort_i64(key, m)) {
      free(put);
      return TL_ENOMEM;
    }
    for (size_t i = 0; i < x->ns; i++)
      put[i] = x->s[i].v;
    uint64_t mask = ((uint64_t)1 << bits) - 1;
    for (size_t j = 0; j < m; j++) {
      uint64_t k = (uint64_t)key[j];
      uint32_t t = (uint32_t)(k & mask);
      int64_t v = (int64_t)((k >> bits) + (uint64_t)lo);
      x->tag[j] = t;
      x->pool[j] = v;
      *put[t]++ = v;
    }
    free(put);
    return TL_OK;
  }
  int64_t *vt = malloc((m ? m : 1) * sizeof *vt);
  uint32_t *tt = malloc((m ? m : 1) * sizeof *tt);
  size_t *run = malloc((x->ns + 1) * sizeof *run);
  int rc = vt && tt && run ? TL_OK : TL_ENOMEM;
  for (size_t i = 0; i < x->ns && !rc; i++)
    rc = tl__sort_i64(x->s[i].v, x->s[i].m);
  if (!rc) {
    memcpy(x->pool, x->buf, m * sizeof *x->pool);
    run[0] = 0;
    for (size_t i = 0; i < x->ns; i++) {
      run[i + 1] = run[i] + x->s[i].m;
      for (size_t j = run[i]; j < run[i + 1]; j++)
        x->tag[j] = (uint32_t)i;
    }
    pool_merge(x->pool, x->tag, vt, tt, run, x->ns);
  }
  free(vt);
  free(tt);
  free(run);
  return rc;
}

/* Readies x to keep samples of the sessions ids[0..nids): every sample when
 * the group has at most TL_STATS_KEEP, otherwise a reservoir per session
 * sized in proportion to the session. Samples then go to reservoir_add
 * session by session, and sset_finish sorts them. */
static int sset_prepare(const tl_comparison *cmp, const int64_t *ids, size_t nids, uint64_t seed,
                        tl__sset *x) {
  memset(x, 0, sizeof *x);
  x->s = calloc(nids ? nids : 1, sizeof *x->s);
  if (!x->s)
    return TL_ENOMEM;
  x->ns = nids;
  int64_t total = 0;
  size_t from = 0;
  for (size_t i = 0; i < nids; i++) {
    ptrdiff_t at = find_session(cmp, ids[i], &from);
    const tl_session *s = at < 0 ? NULL : &cmp->sessions.items[at];
    x->s[i].d = at < 0 || !cmp->details ? NULL : &cmp->details[at];
    x->s[i].id = ids[i];
    x->s[i].started_ns = s ? s->started_ns : 0;
    /* FNV-1a of the UUID: the same draws from a file and from a server. */
    uint64_t key = 0xcbf29ce484222325ULL;
    for (const char *u = s ? s->uuid : ""; *u; u++)
      key = (key ^ (unsigned char)*u) * 0x100000001b3ULL;
    x->s[i].key = s ? key : (uint64_t)ids[i];
    x->s[i].n = s && s->sample_count > 0 ? s->sample_count : 1; /* expected, for sizing */
    total += x->s[i].n;
  }
  size_t cap_total = 0;
  for (size_t i = 0; i < nids; i++) {
    tl__sess *s = &x->s[i];
    if (total <= TL_STATS_KEEP)
      s->cap = (size_t)s->n;
    else
      s->cap = (size_t)((double)TL_STATS_KEEP * (double)s->n / (double)total) + 1;
    cap_total += s->cap;
  }
  x->buf = malloc((cap_total ? cap_total : 1) * sizeof *x->buf);
  if (!x->buf) {
    tl__sset_free(x);
    return TL_ENOMEM;
  }
  size_t at = 0;
  for (size_t i = 0; i < nids; i++) {
    tl__sess *s = &x->s[i];
    s->v = x->buf + at;
    at += s->cap;
    s->r.s = seed ^ (s->key * 0xd6e8feb86659fd93ULL);
    keep_start(s, s->n);
  }
  return TL_OK;
}

/* Closes the gaps left by sessions smaller than expected, then sorts what
 * each session kept and the pool of them all. */
static int sset_finish(tl__sset *x) {
  x->exact = 1;
  x->n = 0;
  size_t at = 0;
  for (size_t i = 0; i < x->ns; i++) {
    tl__sess *s = &x->s[i];
    x->exact &= (int64_t)s->m == s->n;
    x->n += s->n;
    memmove(x->buf + at, s->v, s->m * sizeof *x->buf);
    s->v = x->buf + at;
    at += s->m;
  }
  x->m = at;
  x->pool = malloc((at ? at : 1) * sizeof *x->pool);
  x->tag = malloc((at ? at : 1) * sizeof *x->tag);
  if (!x->pool || !x->tag)
    return TL_ENOMEM;
  return pool_sort(x);
}

/* Loads the sessions ids[0..nids) into x by reading them. Errors leave a
 * message on the store. */
static int tl__sset_load(tl_store *store, const tl_comparison *cmp, const int64_t *ids, size_t nids,
                         uint64_t seed, tl__sset *x) {
  int rc = sset_prepare(cmp, ids, nids, seed, x);
  for (size_t i = 0; i < nids && !rc; i++)
    rc = tl__scan(store, &x->s[i].id, 1, reservoir_cb, &x->s[i]);
  if (!rc)
    rc = sset_finish(x);
  if (rc)
    tl__sset_free(x);
  return rc;
}

/* What the statistics keep of a comparison's group, gathered while the
 * comparison reads its samples. */
struct tl__kept {
  tl__sset set;
};

tl__kept *tl__kept_new(const tl_comparison *cmp, const tl_group *g, size_t *budget) {
  tl__kept *k = malloc(sizeof *k);
  if (!k)
    return NULL;
  uint64_t seed = tl__group_seed(g->label, g->probe, g->delay_ns, "ci");
  if (sset_prepare(cmp, g->session_ids, g->session_count, seed, &k->set)) {
    free(k);
    return NULL;
  }
  size_t cap = 0;
  for (size_t i = 0; i < k->set.ns; i++)
    cap += k->set.s[i].cap;
  /* The samples, the pool and its tags. */
  size_t bytes = cap * (2 * sizeof(int64_t) + sizeof(uint32_t));
  if (bytes > *budget) {
    tl__kept_free(k);
    return NULL;
  }
  *budget -= bytes;
  return k;
}

int tl__kept_add(void *kept, size_t session, const int64_t *v, size_t n) {
  tl__kept *k = kept;
  reservoir_add(&k->set.s[session], v, n);
  return 0;
}

int tl__kept_finish(tl__kept *k) { return sset_finish(&k->set); }

void tl__kept_values(tl__kept *k, const int64_t *ranks, const int64_t *values, size_t n) {
  n = n < 2 * TL_MAX_PCTS ? n : 2 * TL_MAX_PCTS;
  memcpy(k->set.known_rank, ranks, n * sizeof *ranks);
  memcpy(k->set.known_value, values, n * sizeof *values);
  k->set.known = n;
}

size_t tl__stats_ci_ranks(int64_t n, size_t sessions, const double *pcts, size_t np,
                          int64_t *ranks) {
  size_t nr = 0;
  for (size_t k = 0; k < np && n > 0 && sessions < TL_STATS_BOOT_SESSIONS; k++) {
    int64_t lo, hi;
    tl_order_stat_ci(n, pcts[k], CONF, &lo, &hi);
    if (lo)
      ranks[nr++] = lo;
    if (hi)
      ranks[nr++] = hi;
  }
  return nr;
}

void tl__kept_free(tl__kept *k) {
  if (!k)
    return;
  tl__sset_free(&k->set);
  free(k);
}

static size_t upper_bound(const int64_t *v, size_t n, int64_t x) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (v[mid] <= x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* The smallest kept value at which the weighted count of samples reaches
 * rank: session i stands for w[i] copies (w NULL: one) of its n samples,
 * each kept sample for n / m of them. */
static int64_t tl__sset_at(const tl__sset *x, const double *w, double rank) {
  if (x->exact && !w) {
    size_t r = rank < 1 ? 1 : (size_t)ceil(rank - 1e-9);
    return x->pool[(r > x->m ? x->m : r) - 1];
  }
  size_t lo = 0, hi = x->m - 1;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    double c = 0;
    for (size_t i = 0; i < x->ns; i++) {
      const tl__sess *s = &x->s[i];
      double wi = w ? w[i] : 1;
      if (wi > 0 && s->m)
        c += wi * (double)s->n / (double)s->m * (double)upper_bound(s->v, s->m, x->pool[mid]);
    }
    if (c >= rank - 1e-6)
      hi = mid;
    else
      lo = mid + 1;
  }
  return x->pool[lo];
}

/* ======================================================================== */
/* The session bootstrap, without searching every session                  */

/* A replicate of the session bootstrap asks for the smallest pooled value at
 * which the resampled sessions' weighted count reaches a rank. tl__sset_at finds
 * it by a binary search over the pool whose every step is a binary search in
 * every session: sessions x log(pool) x log(session) per replicate and
 * percentile, which made a month of runs (240 sessions a group) cost
 * seconds. tl__boot_at finds the same value from a table made once per group:
 * the pool cut at marks, with every session's count below each mark. The
 * weight below a mark is then one product of its row and the replicate's
 * weights; a bisection over the marks finds the last one below the rank,
 * and a walk from it adds each pooled sample's weight until the rank is
 * reached. The sums are tl__sset_at's in another order: equal while every
 * sample is kept (whole numbers), within rounding otherwise, far inside the
 * 1e-6 both allow. */

enum {
  BOOT_ROWS = 1u << 20, /* counts in the table of marks at most (4 MiB) */
};

int tl__stats_boot_search;

/* The pool cut at marks (at starts of runs of equal values): row t holds
 * each session's count of kept samples below mark t, so that a replicate's
 * weight below a mark is one product of a row and the weights. */
typedef struct {
  const tl__sset *x;
  double *unit; /* in a replicate: the weight of one kept sample of each session */
  double *per;  /* samples per kept sample of each session */
  size_t *mark; /* marks + 1 positions in the pool, from 0 to m */
  float *row;   /* (marks + 1) x sessions counts (exact below 2^24) */
  size_t marks;
  /* Per percentile, the marks the walks have started from so far: the next
   * replicate's is most likely among them. */
  size_t seen_lo[TL_MAX_PCTS], seen_hi[TL_MAX_PCTS];
  int seen[TL_MAX_PCTS];
} tl__boot;

static void tl__boot_free(tl__boot *bt) {
  free(bt->unit);
  free(bt->per);
  free(bt->mark);
  free(bt->row);
  memset(bt, 0, sizeof *bt);
}

/* Marks the pool every step samples (about half the number of
 * sessions, or more when the table would pass BOOT_ROWS: a mark visited
 * costs a product over the sessions, a sample walked one addition) and
 * counts each session's kept samples below every mark. */
static int tl__boot_init(const tl__sset *x, tl__boot *bt) {
  memset(bt, 0, sizeof *bt);
  bt->x = x;
  size_t m = x->m, ns = x->ns ? x->ns : 1, step = ns / 2 > 16 ? ns / 2 : 16;
  if (m / step + 2 > BOOT_ROWS / ns)
    step = m / (BOOT_ROWS / ns > 2 ? BOOT_ROWS / ns - 2 : 1) + 1;
  size_t most = m / step + 2;
  bt->unit = malloc(ns * sizeof *bt->unit);
  bt->per = malloc(ns * sizeof *bt->per);
  bt->mark = malloc(most * sizeof *bt->mark);
  bt->row = malloc(most * ns * sizeof *bt->row);
  if (!bt->unit || !bt->per || !bt->mark || !bt->row) {
    tl__boot_free(bt);
    return TL_ENOMEM;
  }
  for (size_t i = 0; i < x->ns; i++)
    bt->per[i] = x->s[i].m ? (double)x->s[i].n / (double)x->s[i].m : 0;
  memset(bt->row, 0, ns * sizeof *bt->row);
  bt->mark[0] = 0;
  size_t t = 0;
  for (size_t j = 0; j < m;) {
    size_t next = j + step < m ? j + step : m;
    while (next < m && x->pool[next] == x->pool[next - 1])
      next++;
    float *r = bt->row + (t + 1) * ns;
    memcpy(r, r - ns, ns * sizeof *r);
    for (; j < next; j++)
      r[x->tag[j]] += 1;
    bt->mark[++t] = next;
  }
  bt->marks = t;
  return TL_OK;
}

/* Readies a replicate of weights w (session i counted w[i] times). */
static void tl__boot_weigh(tl__boot *bt, const double *w) {
  /* The factor tl__sset_at multiplies a session's count by (it divides after
   * multiplying: the same while every sample is kept, within a rounding
   * otherwise). */
  for (size_t i = 0; i < bt->x->ns; i++)
    bt->unit[i] = w[i] * bt->per[i];
}

/* The replicate's weight below mark t: exact while every sample is kept
 * (whole numbers), otherwise the same products as tl__sset_at's summed in
 * another order. Eight sums side by side, so that it vectorizes and the
 * additions overlap. */
static double boot_below(const tl__boot *bt, size_t t) {
  const float *r = bt->row + t * bt->x->ns;
  const double *u = bt->unit;
  size_t ns = bt->x->ns, i = 0;
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
  for (; i + 8 <= ns; i += 8) {
    s0 += u[i] * (double)r[i];
    s1 += u[i + 1] * (double)r[i + 1];
    s2 += u[i + 2] * (double)r[i + 2];
    s3 += u[i + 3] * (double)r[i + 3];
    s4 += u[i + 4] * (double)r[i + 4];
    s5 += u[i + 5] * (double)r[i + 5];
    s6 += u[i + 6] * (double)r[i + 6];
    s7 += u[i + 7] * (double)r[i + 7];
  }
  for (; i < ns; i++)
    s0 += u[i] * (double)r[i];
  return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
}

/* tl__sset_at(x, w, rank) for the weights of the last tl__boot_weigh, percentile k:
 * the last mark below the rank by bisection (first between the marks
 * earlier replicates of k started from, when those are few), then a walk
 * from it, adding each sample's weight. Should rounding keep the walk from
 * the rank (not while every sample is kept), tl__sset_at answers. */
static int64_t tl__boot_at(tl__boot *bt, const double *w, double rank, size_t k) {
  const tl__sset *x = bt->x;
  double need = rank - 1e-6;
  size_t lo = 0, hi = bt->marks; /* the weight below lo is under need */
  int hi_ok = 0;                 /* the weight below hi is known to reach it */
  if (tl__stats_boot_search)
    return tl__sset_at(x, w, rank);
  if (bt->seen[k] && (bt->seen_hi[k] - bt->seen_lo[k]) * 8 < bt->marks) {
    size_t a = bt->seen_lo[k], b = bt->seen_hi[k] + 1;
    if (a > 0 && boot_below(bt, a) >= need)
      hi = a, hi_ok = 1;
    else
      lo = a;
    if (!hi_ok && b < hi) {
      if (boot_below(bt, b) >= need)
        hi = b, hi_ok = 1;
      else
        lo = b;
    }
  }
  if (!hi_ok && boot_below(bt, hi) < need)
    return tl__sset_at(x, w, rank);
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (boot_below(bt, mid) < need)
      lo = mid;
    else
      hi = mid;
  }
  bt->seen_lo[k] = !bt->seen[k] || lo < bt->seen_lo[k] ? lo : bt->seen_lo[k];
  bt->seen_hi[k] = !bt->seen[k] || lo > bt->seen_hi[k] ? lo : bt->seen_hi[k];
  bt->seen[k] = 1;
  double c = boot_below(bt, lo);
  const double *unit = bt->unit;
  const uint32_t *tag = x->tag;
  size_t j = bt->mark[lo];
  /* Eight samples at a time while they stay below the rank (their sum
   * adds in parallel), then one value at a time. */
  for (; j + 8 <= x->m; j += 8) {
    double eight = ((unit[tag[j]] + unit[tag[j + 1]]) + (unit[tag[j + 2]] + unit[tag[j + 3]])) +
                   ((unit[tag[j + 4]] + unit[tag[j + 5]]) + (unit[tag[j + 6]] + unit[tag[j + 7]]));
    if (c + eight >= need)
      break;
    c += eight;
  }
  while (j < x->m) {
    int64_t v = x->pool[j];
    do
      c += unit[tag[j]];
    while (++j < x->m && x->pool[j] == v);
    if (c >= need)
      return v;
  }
  return tl__sset_at(x, w, rank);
}

/* Exact values at 1-based ranks of the whole group: from the pool when every
 * sample is kept, or those the comparison found, else by the exact
 * distribution machinery (dist.c), which takes percentiles: (r - 0.5) / n
 * lands on rank r under tl_rank. */
static int tl__sset_values_at_ranks(tl_store *store, const tl__sset *x, const int64_t *ranks,
                                    size_t k, int64_t *out) {
  if (x->exact) {
    for (size_t i = 0; i < k; i++)
      out[i] = x->pool[ranks[i] - 1];
    return TL_OK;
  }
  size_t found = 0;
  for (size_t i = 0; i < k; i++)
    for (size_t j = 0; j < x->known; j++)
      if (x->known_rank[j] == ranks[i]) {
        out[i] = x->known_value[j];
        found++;
        break;
      }
  if (found == k)
    return TL_OK;
  int64_t *ids = malloc(x->ns * sizeof *ids);
  if (!ids)
    return TL_ENOMEM;
  for (size_t i = 0; i < x->ns; i++)
    ids[i] = x->s[i].id;
  int rc = TL_OK;
  for (size_t at = 0; at < k && !rc; at += TL_MAX_PCTS) {
    size_t c = k - at < TL_MAX_PCTS ? k - at : TL_MAX_PCTS;
    double p[TL_MAX_PCTS];
    for (size_t i = 0; i < c; i++)
      p[i] = 100.0 * ((double)ranks[at + i] - 0.5) / (double)x->n;
    tl_dist d;
    rc = tl_dist_compute(store, ids, x->ns, p, c, &d);
    for (size_t i = 0; i < c && !rc; i++)
      out[at + i] = d.pct_ns[i];
  }
  free(ids);
  return rc;
}

/* The value at pct among those the comparison computed for the session. */
static int known_value(const tl_session_detail *d, double pct, int64_t *out) {
  const tl_dist *ds[] = {&d->dist, &d->at_pcts};
  for (size_t i = 0; i < 2; i++)
    for (size_t k = 0; k < ds[i]->pct_count; k++)
      if (ds[i]->pcts[k] == pct) {
        *out = ds[i]->pct_ns[k];
        return 1;
      }
  return 0;
}

/* A session's own exact percentiles: from its samples when all are kept,
 * else from what the comparison computed, else from the store. */
static int tl__sess_values(tl_store *store, const tl__sess *s, const double *p, size_t np,
                           int64_t *out) {
  if (!s->n) {
    memset(out, 0, np * sizeof *out);
    return TL_OK;
  }
  if ((int64_t)s->m == s->n) {
    for (size_t k = 0; k < np; k++)
      out[k] = s->v[tl_rank(p[k], s->n) - 1];
    return TL_OK;
  }
  size_t known = 0;
  while (s->d && known < np && known_value(s->d, p[known], &out[known]))
    known++;
  if (known == np)
    return TL_OK;
  tl_dist d;
  int rc = tl_dist_compute(store, &s->id, 1, p, np, &d);
  for (size_t k = 0; k < np && !rc; k++)
    out[k] = d.pct_ns[k];
  return rc;
}

/* ======================================================================== */
/* One group: intervals, replicates, spread, series                          */

typedef struct {
  tl__sset set;
  tl_dist dist; /* exact */
  tl_ci_method method;
  tl_pct_stats pct[TL_MAX_PCTS]; /* intervals, warnings, spread */
  int64_t *rep;                  /* pct_count x B bootstrap values, each row sorted */
  uint64_t seed;                 /* of this group's draws */
  int64_t *series[TL_STATS_SERIES];
} tl__gcalc;

static void tl__gcalc_free(tl__gcalc *g) {
  tl__sset_free(&g->set);
  free(g->rep);
  for (int k = 0; k < TL_STATS_SERIES; k++)
    free(g->series[k]);
  memset(g, 0, sizeof *g);
}

static int64_t samples_needed(double pct) {
  if (pct >= 100)
    return 0;
  int64_t n = (int64_t)ceil(TL_STATS_MIN_ABOVE / (1 - pct / 100)) - 2;
  if (n < 1)
    n = 1;
  while (n - tl_rank(pct, n) < TL_STATS_MIN_ABOVE)
    n++;
  return n;
}

/* Computes everything about the sessions ids[0..n): dist (given, or computed
 * when NULL), method, intervals, bootstrap replicates and, with series, the
 * sessions' own p90 and p99. kept: the samples the comparison kept of
 * exactly these sessions with this seed, or NULL to read them. */
static int tl__gcalc_run(tl_store *store, const tl_comparison *cmp, const int64_t *ids, size_t n,
                         const double *pcts, size_t np, const tl_dist *dist, uint64_t seed,
                         int series, const tl__kept *kept, tl__gcalc *g) {
  memset(g, 0, sizeof *g);
  g->seed = seed;
  int rc = TL_OK;
  if (kept) {
    g->set = kept->set;
    g->set.borrowed = 1;
  } else if ((rc = tl__sset_load(store, cmp, ids, n, seed, &g->set))) {
    return rc;
  }
  tl__sset *x = &g->set;
  if (dist) {
    g->dist = *dist;
  } else if (x->exact) {
    rc = tl_dist_of_values(x->pool, x->m, pcts, np, &g->dist);
  } else {
    rc = tl_dist_compute(store, ids, n, pcts, np, &g->dist);
  }
  if (rc)
    return rc;
  if (!x->n || !x->m)
    return TL_OK;
  size_t with_samples = 0;
  for (size_t i = 0; i < x->ns; i++)
    with_samples += x->s[i].n > 0;
  g->method = with_samples >= TL_STATS_BOOT_SESSIONS ? TL_CI_SESSIONS : TL_CI_ORDER;

  /* Sessions' own values: the spread, and the series. */
  int64_t *own = malloc((x->ns * (np + TL_STATS_SERIES) + 1) * sizeof *own);
  if (!own)
    return TL_ENOMEM;
  /* One pass per session for both lists when they fit together. */
  double both[TL_MAX_PCTS + TL_STATS_SERIES];
  memcpy(both, pcts, np * sizeof *pcts);
  memcpy(both + np, SERIES_PCTS, sizeof SERIES_PCTS);
  int together = series && np + TL_STATS_SERIES <= TL_MAX_PCTS;
  for (size_t i = 0; i < x->ns && !rc; i++) {
    int64_t *row = own + i * (np + TL_STATS_SERIES);
    rc = tl__sess_values(store, &x->s[i], both, together ? np + TL_STATS_SERIES : np, row);
    if (!rc && series && !together)
      rc = tl__sess_values(store, &x->s[i], SERIES_PCTS, TL_STATS_SERIES, row + np);
  }
  for (size_t k = 0; k < np && !rc; k++) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    size_t used = 0;
    for (size_t i = 0; i < x->ns; i++) {
      if (!x->s[i].n)
        continue;
      int64_t v = own[i * (np + TL_STATS_SERIES) + k];
      lo = v < lo ? v : lo;
      hi = v > hi ? v : hi;
      used++;
    }
    g->pct[k].spread_ns = used > 1 ? hi - lo : 0;
  }
  for (int s = 0; s < TL_STATS_SERIES && series && !rc; s++) {
    g->series[s] = malloc((x->ns ? x->ns : 1) * sizeof *g->series[s]);
    if (!g->series[s])
      rc = TL_ENOMEM;
    for (size_t i = 0; i < x->ns && !rc; i++)
      g->series[s][i] = own[i * (np + TL_STATS_SERIES) + np + (size_t)s];
  }
  free(own);
  if (rc)
    return rc;

  /* Bootstrap replicates of every percentile. */
  g->rep = malloc(np * B * sizeof *g->rep);
  double *w = malloc(x->ns * sizeof *w);
  if (!g->rep || !w) {
    free(w);
    return TL_ENOMEM;
  }
  tl__boot bt = {0};
  if (g->method == TL_CI_SESSIONS && tl__boot_init(x, &bt)) {
    free(w);
    return TL_ENOMEM;
  }
  tl__rng r = {seed};
  for (size_t b = 0; b < B; b++) {
    if (g->method == TL_CI_SESSIONS) {
      int64_t total = 0;
      while (total == 0) { /* a resample of empty sessions only is drawn again */
        memset(w, 0, x->ns * sizeof *w);
        for (size_t i = 0; i < x->ns; i++) {
          size_t pick = (size_t)tl__rng_below(&r, x->ns);
          w[pick] += 1;
          total += x->s[pick].n;
        }
      }
      tl__boot_weigh(&bt, w);
      for (size_t k = 0; k < np; k++)
        g->rep[k * B + b] = tl__boot_at(&bt, w, (double)tl_rank(pcts[k], total), k);
    } else {
      /* The k-th smallest of a resample of n is F^-1 of a Beta(k, n-k+1)
       * draw, so each replicate costs one draw instead of n. */
      for (size_t k = 0; k < np; k++) {
        int64_t rank = tl_rank(pcts[k], x->n);
        double u = tl__rng_beta(&r, (double)rank, (double)(x->n - rank + 1));
        g->rep[k * B + b] = tl__sset_at(x, NULL, ceil(u * (double)x->n));
      }
    }
  }
  free(w);
  tl__boot_free(&bt);
  for (size_t k = 0; k < np; k++)
    qsort(g->rep + k * B, B, sizeof *g->rep, tl__cmp_i64);

  /* Intervals and warnings. */
  int64_t ranks[2 * TL_MAX_PCTS], vals[2 * TL_MAX_PCTS];
  for (size_t k = 0; k < np; k++) {
    tl_pct_stats *p = &g->pct[k];
    p->above = x->n - tl_rank(pcts[k], x->n);
    p->few = p->above < TL_STATS_MIN_ABOVE;
    p->needed = samples_needed(pcts[k]);
    p->lo_ns = p->hi_ns = -1;
    if (g->method == TL_CI_SESSIONS) {
      size_t cut = (size_t)(B * (1 - CONF) / 2);
      p->lo_ns = g->rep[k * B + cut];
      p->hi_ns = g->rep[k * B + B - 1 - cut];
    }
  }
  size_t nr = tl__stats_ci_ranks(x->n, with_samples, pcts, np, ranks);
  if (nr && (rc = tl__sset_values_at_ranks(store, x, ranks, nr, vals)))
    return rc;
  nr = 0;
  for (size_t k = 0; k < np && g->method == TL_CI_ORDER; k++) {
    int64_t lo, hi;
    tl_order_stat_ci(x->n, pcts[k], CONF, &lo, &hi);
    if (lo)
      g->pct[k].lo_ns = vals[nr++];
    if (hi)
      g->pct[k].hi_ns = vals[nr++];
  }
  return TL_OK;
}

/* The 95% interval of b minus a at percentile k, pairing the independent
 * replicates of the two groups. */
static void shuffled_row(const tl__gcalc *g, size_t k, int64_t *out) {
  tl__rng r = {g->seed ^ (0x746c646966660000ULL + k)};
  memcpy(out, g->rep + k * B, B * sizeof *out);
  for (size_t i = B - 1; i > 0; i--) {
    size_t j = (size_t)tl__rng_below(&r, i + 1);
    int64_t t = out[i];
    out[i] = out[j];
    out[j] = t;
  }
}

/* The 95% interval of b minus a at percentile k. The replicates are stored
 * sorted; each group's are put in an order seeded by that group, so that
 * the pairs are independent and a pair gives the same (mirrored) interval
 * whichever side it is asked from. */
static void tl__diff_interval(const tl__gcalc *a, const tl__gcalc *b, size_t k, int64_t *lo,
                              int64_t *hi) {
  int64_t d[B], e[B];
  shuffled_row(a, k, e);
  shuffled_row(b, k, d);
  for (size_t i = 0; i < B; i++)
    d[i] -= e[i];
  qsort(d, B, sizeof *d, tl__cmp_i64);
  size_t cut = (size_t)(B * (1 - CONF) / 2);
  *lo = d[cut];
  *hi = d[B - 1 - cut];
}

/* ======================================================================== */
/* The statistics of a comparison                                            */

void tl_stats_free(tl_stats *st) {
  if (!st)
    return;
  for (size_t i = 0; i < st->group_count; i++) {
    tl_group_stats *g = &st->groups[i];
    free(g->started_ns);
    for (int k = 0; k < TL_STATS_SERIES; k++)
      free(g->series_ns[k]);
    free(g->changes);
  }
  free(st->groups);
  free(st->pairs);
  memset(st, 0, sizeof *st);
}

static int tl__same_block(const tl_group *a, const tl_group *b) {
  return strcmp(a->probe, b->probe) == 0 && a->delay_ns == b->delay_ns;
}

/* Fills the group's series and finds its lasting changes. */
static int group_changes(const tl_group *grp, const tl__gcalc *c, tl_group_stats *gs) {
  size_t n = c->set.ns;
  gs->session_count = n;
  gs->started_ns = malloc((n ? n : 1) * sizeof *gs->started_ns);
  double *x = malloc((n ? n : 1) * sizeof *x);
  size_t *at = malloc((n ? n : 1) * sizeof *at);
  tl_step steps[MAX_CHANGES];
  if (!gs->started_ns || !x || !at) {
    free(x);
    free(at);
    return TL_ENOMEM;
  }
  for (size_t i = 0; i < n; i++)
    gs->started_ns[i] = c->set.s[i].started_ns;
  int rc = TL_OK;
  for (int s = 0; s < TL_STATS_SERIES && !rc; s++) {
    gs->series_pcts[s] = SERIES_PCTS[s];
    gs->series_ns[s] = malloc((n ? n : 1) * sizeof *gs->series_ns[s]);
    if (!gs->series_ns[s]) {
      rc = TL_ENOMEM;
      break;
    }
    /* A session's value enters the series only when it rests on enough
     * samples (the same rule as the warnings); the others are -1. */
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
      int64_t sn = c->set.s[i].n;
      int ok = c->series[s] && sn > 0 && sn - tl_rank(SERIES_PCTS[s], sn) >= TL_STATS_MIN_ABOVE;
      gs->series_ns[s][i] = ok ? c->series[s][i] : -1;
      if (ok) {
        x[used] = (double)c->series[s][i];
        at[used++] = i;
      }
    }
    tl_step_opts o = {0};
    o.seed = tl__group_seed(grp->label, grp->probe, grp->delay_ns, s ? "p99" : "p90");
    size_t found;
    rc = tl_steps_find(x, used, &o, steps, MAX_CHANGES, &found);
    if (rc || !found)
      continue;
    tl_change *more = realloc(gs->changes, (gs->change_count + found) * sizeof *more);
    if (!more) {
      rc = TL_ENOMEM;
      break;
    }
    gs->changes = more;
    for (size_t i = 0; i < found; i++) {
      tl_change *ch = &gs->changes[gs->change_count++];
      ch->pct = SERIES_PCTS[s];
      ch->session_index = at[steps[i].index];
      ch->at_ns = gs->started_ns[ch->session_index];
      ch->before_ns = steps[i].before;
      ch->after_ns = steps[i].after;
      ch->p_value = steps[i].p_value;
    }
  }
  free(at);
  free(x);
  return rc;
}

int tl_stats_compute(tl_store *store, const tl_comparison *cmp, tl_stats *out, char *err,
                     size_t errlen) {
  memset(out, 0, sizeof *out);
  size_t ng = cmp->group_count;
  out->groups = calloc(ng ? ng : 1, sizeof *out->groups);
  char *done = calloc(ng ? ng : 1, 1);
  tl__gcalc *calc = calloc(ng ? ng : 1, sizeof *calc);
  size_t *block = calloc(ng ? ng : 1, sizeof *block);
  int rc = TL_OK;
  if (!out->groups || !done || !calc || !block) {
    rc = TL_ENOMEM;
    goto fail;
  }
  out->group_count = ng;
  /* One probe and delay at a time, so that only its groups' samples are in
   * memory together. */
  for (size_t first = 0; first < ng && !rc; first++) {
    if (done[first])
      continue;
    size_t nb = 0;
    for (size_t i = first; i < ng; i++)
      if (!done[i] && tl__same_block(&cmp->groups[first], &cmp->groups[i])) {
        block[nb++] = i;
        done[i] = 1;
      }
    for (size_t k = 0; k < nb && !rc; k++) {
      const tl_group *g = &cmp->groups[block[k]];
      rc = tl__gcalc_run(
          store, cmp, g->session_ids, g->session_count, g->dist.pcts, g->dist.pct_count, &g->dist,
          tl__group_seed(g->label, g->probe, g->delay_ns, "ci"), 1, g->kept, &calc[block[k]]);
      tl_group_stats *gs = &out->groups[block[k]];
      if (rc)
        break;
      gs->method = calc[block[k]].method;
      memcpy(gs->pct, calc[block[k]].pct, sizeof gs->pct);
      rc = group_changes(g, &calc[block[k]], gs);
    }
    for (size_t i = 0; i < nb && !rc; i++)
      for (size_t j = i + 1; j < nb && !rc; j++) {
        const tl__gcalc *a = &calc[block[i]], *b = &calc[block[j]];
        if (!a->set.m || !b->set.m)
          continue;
        tl_pair_stats *more = realloc(out->pairs, (out->pair_count + 1) * sizeof *more);
        if (!more) {
          rc = TL_ENOMEM;
          break;
        }
        out->pairs = more;
        tl_pair_stats *p = &out->pairs[out->pair_count++];
        memset(p, 0, sizeof *p);
        p->a = block[i];
        p->b = block[j];
        for (size_t k = 0; k < a->dist.pct_count; k++) {
          p->diff_ns[k] = b->dist.pct_ns[k] - a->dist.pct_ns[k];
          tl__diff_interval(a, b, k, &p->lo_ns[k], &p->hi_ns[k]);
          p->clear[k] = p->lo_ns[k] > 0 || p->hi_ns[k] < 0;
          int64_t mag = p->diff_ns[k] < 0 ? -p->diff_ns[k] : p->diff_ns[k];
          p->spread_over[k] = a->pct[k].spread_ns > mag || b->pct[k].spread_ns > mag;
        }
        rc = tl_mann_whitney(a->set.pool, a->set.m, b->set.pool, b->set.m, &p->mw);
      }
    for (size_t k = 0; k < nb; k++)
      tl__gcalc_free(&calc[block[k]]);
  }
fail:
  for (size_t i = 0; i < ng && calc; i++)
    tl__gcalc_free(&calc[i]);
  free(calc);
  free(done);
  free(block);
  if (rc == TL_ENOMEM)
    return tl_fail(err, errlen, rc, "out of memory");
  if (rc)
    return tl_fail(err, errlen, rc, "%s", tl_store_errmsg(store));
  return TL_OK;
}

/* ======================================================================== */
/* Verdicts                                                                  */

const tl_pair_stats *tl__pair_of(const tl_stats *st, size_t a, size_t b) {
  for (size_t i = 0; st && i < st->pair_count; i++)
    if ((st->pairs[i].a == a && st->pairs[i].b == b) ||
        (st->pairs[i].a == b && st->pairs[i].b == a))
      return &st->pairs[i];
  return NULL;
}

int tl__clearly_below(const tl_stats *st, size_t a, size_t b, size_t k) {
  const tl_pair_stats *p = tl__pair_of(st, a, b);
  /* A percentile that rests on too few samples decides nothing, as in the
   * regression check. */
  if (!p || !p->clear[k] || st->groups[a].pct[k].few || st->groups[b].pct[k].few)
    return 0;
  /* diff is p->b minus p->a */
  return p->a == a ? p->lo_ns[k] > 0 : p->hi_ns[k] < 0;
}

int tl__clear_best(const tl_comparison *cmp, const tl_stats *st, const size_t *groups, size_t n,
                   size_t k) {
  int low = -1;
  for (size_t i = 0; i < n; i++) {
    const tl_dist *d = &cmp->groups[groups[i]].dist;
    if (d->count && k < d->pct_count &&
        (low < 0 || d->pct_ns[k] < cmp->groups[groups[low]].dist.pct_ns[k]))
      low = (int)i;
  }
  if (low < 0 || !st)
    return -1;
  size_t others = 0;
  for (size_t i = 0; i < n; i++) {
    if ((int)i == low || !cmp->groups[groups[i]].dist.count)
      continue;
    if (!tl__clearly_below(st, groups[low], groups[i], k))
      return -1;
    others++;
  }
  return others ? low : -1;
}

/* ======================================================================== */
/* Sentences and Markdown                                                    */

/* Milliseconds with two decimals, or three when the largest number said
 * together (scale, in ns) is below 1 ms, so that sub-millisecond differences
 * stay visible; never "-0.00". */
static void tl__sentence_ms(double ns, double scale, char *buf, size_t len) {
  /* The decimals of tl__ms (format.c) for the largest number of a sentence,
   * so that the numbers side by side are written alike. */
  double a = fabs(scale);
  int dec = a >= 1e6 ? 2 : a >= 1e5 ? 3 : a >= 1e4 ? 4 : 5;
  double half = 0.5 * pow(10, 6 - dec); /* no "-0.000" for a tiny negative */
  snprintf(buf, len, "%.*f", dec, fabs(ns) < half ? 0.0 : ns / 1e6);
}

static double tl__max_abs3(double a, double b, double c) {
  a = fabs(a), b = fabs(b), c = fabs(c);
  return a > b ? (a > c ? a : c) : (b > c ? b : c);
}

/* Prose for a Markdown page: escapes what Markdown or HTML would read as
 * markup anywhere in a line (and drops control characters), but leaves the
 * punctuation of ordinary sentences alone. */
static void md_prose(FILE *out, const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p < 0x20 || *p == 0x7f)
      continue;
    if (strchr("\\`*_[]<>&|#~!", *p))
      fputc('\\', out);
    fputc(*p, out);
  }
}

/* Appends to buf[len] at *at, never past the end. */
static void add(char *buf, size_t len, size_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void add(char *buf, size_t len, size_t *at, const char *fmt, ...) {
  if (*at >= len)
    return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf + *at, len - *at, fmt, ap);
  va_end(ap);
  if (n > 0)
    *at += (size_t)n < len - *at ? (size_t)n : len - *at - 1;
}

static void few_note(char *buf, size_t len, size_t *at, const tl_group *g, const tl_pct_stats *p,
                     double pct) {
  if (!p->few)
    return;
  if (!p->needed) {
    add(buf, len, at, "; p%g is the largest sample, which no amount of data pins down", pct);
    return;
  }
  add(buf, len, at,
      "; too few samples for p%g on %s: %lld above it, %d needed (at least %lld samples)", pct,
      g->label, (long long)p->above, TL_STATS_MIN_ABOVE, (long long)p->needed);
}

void tl_pair_sentence(const tl_comparison *cmp, const tl_stats *st, const tl_pair_stats *p,
                      size_t k, char *buf, size_t len) {
  const tl_group *a = &cmp->groups[p->a], *b = &cmp->groups[p->b];
  const tl_group_stats *as = &st->groups[p->a], *bs = &st->groups[p->b];
  double pct = a->dist.pcts[k];
  size_t at = 0;
  char d[32], lo[32], hi[32];
  if (len)
    buf[0] = '\0';
  if (p->clear[k]) {
    /* Say it from the faster side: a positive difference and interval. */
    int a_faster = p->lo_ns[k] > 0;
    const tl_group *fast = a_faster ? a : b, *slow = a_faster ? b : a;
    double dd = a_faster ? (double)p->diff_ns[k] : -(double)p->diff_ns[k];
    double l = a_faster ? (double)p->lo_ns[k] : -(double)p->hi_ns[k];
    double h = a_faster ? (double)p->hi_ns[k] : -(double)p->lo_ns[k];
    double sc = tl__max_abs3(dd, l, h);
    tl__sentence_ms(dd, sc, d, sizeof d);
    tl__sentence_ms(l, sc, lo, sizeof lo);
    tl__sentence_ms(h, sc, hi, sizeof hi);
    add(buf, len, &at, "%s is faster than %s at p%g by %s ms (95%% CI %s to %s ms)", fast->label,
        slow->label, pct, d, lo, hi);
    if (p->spread_over[k]) {
      const tl_group *wide = as->pct[k].spread_ns >= bs->pct[k].spread_ns ? a : b;
      const tl_group_stats *ws = wide == a ? as : bs;
      char sp[32];
      tl__sentence_ms((double)ws->pct[k].spread_ns, (double)ws->pct[k].spread_ns, sp, sizeof sp);
      add(buf, len, &at,
          "; but the sessions of %s disagree with each other by up to %s ms at p%g, more than "
          "this difference",
          wide->label, sp, pct);
    }
  } else {
    double sc = tl__max_abs3((double)p->diff_ns[k], (double)p->lo_ns[k], (double)p->hi_ns[k]);
    tl__sentence_ms((double)p->diff_ns[k], sc, d, sizeof d);
    tl__sentence_ms((double)p->lo_ns[k], sc, lo, sizeof lo);
    tl__sentence_ms((double)p->hi_ns[k], sc, hi, sizeof hi);
    add(buf, len, &at,
        "no clear difference between %s and %s at p%g with this data (%s minus %s: %s ms, 95%% "
        "CI %s to %s ms)",
        a->label, b->label, pct, b->label, a->label, d, lo, hi);
  }
  few_note(buf, len, &at, a, &as->pct[k], pct);
  few_note(buf, len, &at, b, &bs->pct[k], pct);
}

void tl_change_sentence(const tl_group *g, const tl_change *c, char *buf, size_t len) {
  char before[32], after[32], date[32];
  double armed = (double)tl_armed_ns(g->probe, g->delay_ns);
  double sc = tl__max_abs3(c->before_ns - armed, c->after_ns - armed, 0);
  tl__sentence_ms(c->before_ns - armed, sc, before, sizeof before);
  tl__sentence_ms(c->after_ns - armed, sc, after, sizeof after);
  tl_date_format(c->at_ns, date, sizeof date);
  char *t = strchr(date, 'T');
  if (t)
    *t = '\0';
  snprintf(buf, len, "p%g lateness of %s at %g ms (%s) %s from %s to %s ms on %s", c->pct, g->label,
           (double)g->delay_ns / 1e6, g->probe, c->after_ns > c->before_ns ? "rose" : "fell",
           before, after, date);
}

static void md_group_head(FILE *out, const tl_group *g) {
  tl_md_escape(out, g->probe);
  fprintf(out, ", %g ms", (double)g->delay_ns / 1e6);
}

tl__table *tl__stats_ci_table(const tl_comparison *cmp, const tl_stats *st, tl__heads *heads) {
  const tl_dist *d0 = &cmp->groups[0].dist;
  char *align = heads->align;
  size_t cols = 0;
  for (const char *h = "label\0probe\0delay\0"; *h; h += strlen(h) + 1) {
    snprintf(heads->text[cols], 32, "%s", h);
    align[cols] = cols == 2 ? 'r' : 'l'; /* the delay is a number */
    cols++;
  }
  for (size_t k = 0; k < d0->pct_count; k++) {
    snprintf(heads->text[cols], 32, "p%g (95%% CI)", d0->pcts[k]);
    align[cols++] = 'r';
  }
  snprintf(heads->text[cols], 32, "interval from");
  align[cols++] = 'l';
  for (size_t c = 0; c < cols; c++)
    heads->name[c] = heads->text[c];
  tl__table *t = tl__table_new(cols, heads->name, align);
  if (!t)
    return NULL;
  for (size_t i = 0; i < cmp->group_count; i++) {
    const tl_group *g = &cmp->groups[i];
    const tl_group_stats *gs = &st->groups[i];
    tl__table_add(t, g->label);
    tl__table_add(t, g->probe);
    tl__table_addf(t, "%g ms", (double)g->delay_ns / 1e6);
    for (size_t k = 0; k < g->dist.pct_count; k++) {
      char v[32], lo[32], hi[32];
      if (!g->dist.count) {
        tl__table_add(t, "-");
        continue;
      }
      /* Lateness, like the page's tables: the interval moves with the value. */
      double armed = (double)tl_armed_ns(g->probe, g->delay_ns);
      double val = (double)g->dist.pct_ns[k] - armed;
      double sc = tl__max_abs3(val, (double)gs->pct[k].hi_ns - armed, 0);
      tl__sentence_ms(val, sc, v, sizeof v);
      if (gs->pct[k].lo_ns >= 0)
        tl__sentence_ms((double)gs->pct[k].lo_ns - armed, sc, lo, sizeof lo);
      else
        snprintf(lo, sizeof lo, "?");
      if (gs->pct[k].hi_ns >= 0)
        tl__sentence_ms((double)gs->pct[k].hi_ns - armed, sc, hi, sizeof hi);
      else
        snprintf(hi, sizeof hi, "?");
      tl__table_addf(t, "%s (%s to %s)%s", v, lo, hi, gs->pct[k].few ? " (few samples)" : "");
    }
    if (!g->dist.count)
      tl__table_add(t, "no samples");
    else if (gs->method == TL_CI_SESSIONS)
      tl__table_addf(t, "bootstrap over %zu sessions", g->session_count);
    else
      tl__table_addf(t, "order statistics over %lld samples (%zu session%s)",
                     (long long)g->dist.count, g->session_count, g->session_count == 1 ? "" : "s");
  }
  return t;
}

int tl_stats_markdown(const tl_comparison *cmp, const tl_stats *st, FILE *out) {
  fputs("## How sure is this?\n\n", out);
  if (!cmp->group_count)
    return ferror(out) ? TL_EIO : TL_OK;
  fputs("95% confidence intervals of each percentile's lateness, in milliseconds:\n\n", out);
  tl__heads heads;
  tl__table *t = tl__stats_ci_table(cmp, st, &heads);
  int rc = t ? tl__table_write(t, TL_FORMAT_MD, out) : TL_ENOMEM;
  tl__table_free(t);
  if (rc)
    return rc;
  tl__stats_notes(out, cmp, st, 1);
  return ferror(out) ? TL_EIO : TL_OK;
}

void tl__stats_notes(FILE *out, const tl_comparison *cmp, const tl_stats *st, int all) {
  char line[1024];
  /* Warnings: percentiles that rest on too few samples, and unbounded ends. */
  int warned = 0;
  for (size_t i = 0; i < cmp->group_count; i++) {
    const tl_group *g = &cmp->groups[i];
    for (size_t k = 0; k < g->dist.pct_count && g->dist.count; k++) {
      const tl_pct_stats *p = &st->groups[i].pct[k];
      if (!p->few)
        continue;
      fputs(warned++ ? "- " : "Warnings:\n\n- ", out);
      fprintf(out, "p%g of ", g->dist.pcts[k]);
      tl_md_escape(out, g->label);
      fputs(" (", out);
      md_group_head(out, g);
      if (p->needed)
        fprintf(out,
                ") rests on too few samples: %lld above it, %d needed; collect at least %lld "
                "samples.\n",
                (long long)p->above, TL_STATS_MIN_ABOVE, (long long)p->needed);
      else
        fputs(") is the largest sample: no amount of data gives it an upper bound.\n", out);
    }
  }
  if (warned)
    fputs("\n", out);

  /* Differences, one block per probe and delay. */
  for (size_t i = 0; all && i < st->pair_count; i++) {
    const tl_pair_stats *p = &st->pairs[i];
    const tl_group *a = &cmp->groups[p->a], *b = &cmp->groups[p->b];
    if (i == 0 || !tl__same_block(&cmp->groups[st->pairs[i - 1].a], a)) {
      fputs("### ", out);
      md_group_head(out, a);
      fputs("\n\n", out);
    }
    for (size_t k = 0; k < a->dist.pct_count; k++) {
      tl_pair_sentence(cmp, st, p, k, line, sizeof line);
      fputs("- ", out);
      md_prose(out, line);
      fputs(".\n", out);
    }
    const tl_group *fast = p->mw.a_below_b >= 0.5 ? a : b, *slow = fast == a ? b : a;
    double share = p->mw.a_below_b >= 0.5 ? p->mw.a_below_b : 1 - p->mw.a_below_b;
    char pv[32];
    if (p->mw.p_value < 0.001)
      snprintf(pv, sizeof pv, "p < 0.001");
    else
      snprintf(pv, sizeof pv, "p = %.3f", p->mw.p_value);
    if (p->mw.p_value < 0.05) {
      fputs("- As a whole the distributions differ (Mann-Whitney, ", out);
      fputs(pv, out);
      fputs("): a call on ", out);
      tl_md_escape(out, fast->label);
      fputs(" is faster than one on ", out);
      tl_md_escape(out, slow->label);
      fprintf(out, " %.0f%% of the time.\n", share * 100);
    } else {
      fputs("- As a whole the distributions of ", out);
      tl_md_escape(out, a->label);
      fputs(" and ", out);
      tl_md_escape(out, b->label);
      fprintf(out, " are not clearly different (Mann-Whitney, %s).\n", pv);
    }
    if (i + 1 == st->pair_count || !tl__same_block(&cmp->groups[st->pairs[i + 1].a], a))
      fputs("\n", out);
  }

  if (!all)
    return;
  fputs("## Changes over time\n\n", out);
  size_t changes = 0;
  for (size_t i = 0; i < cmp->group_count; i++)
    for (size_t c = 0; c < st->groups[i].change_count; c++) {
      tl_change_sentence(&cmp->groups[i], &st->groups[i].changes[c], line, sizeof line);
      fputs("- ", out);
      md_prose(out, line);
      fputs(".\n", out);
      changes++;
    }
  if (!changes)
    fputs("No lasting change in the per-session p90 or p99 of any label (a change needs at least "
          "3 sessions on each side).\n",
          out);
  fputs("\nHow these are worked out, and their limits: docs/statistics.md.\n", out);
}

int tl_render_stats_markdown(tl_store *store, const tl_comparison *cmp, FILE *out, char *err,
                             size_t errlen) {
  tl_stats st;
  int rc = tl_stats_compute(store, cmp, &st, err, errlen);
  if (!rc && (rc = tl_stats_markdown(cmp, &st, out)))
    tl_fail(err, errlen, rc, "writing the statistics failed");
  tl_stats_free(&st);
  return rc;
}

/* ======================================================================== */
/* Regression check                                                          */

void tl_check_opts_init(tl_check_opts *o) {
  memset(o, 0, sizeof *o);
  tl_compare_opts_init(&o->compare);
  o->max_regression = 0.10;
  o->min_regression_ns = 10000;
}

int tl_regression_parse(const char *s, double *fraction, char *why, size_t whylen) {
  char *end;
  if (!s || !*s || *s == ' ' || *s == '+' || *s == '-')
    return tl_fail(why, whylen, TL_EINVAL, "expected a percentage such as 10%%");
  double v = strtod(s, &end);
  if (end == s || (*end && strcmp(end, "%") != 0))
    return tl_fail(why, whylen, TL_EINVAL, "expected a percentage such as 10%%");
  if (!(v > 0 && v <= 1000))
    return tl_fail(why, whylen, TL_EINVAL, "must be above 0%% and at most 1000%%");
  *fraction = v / 100;
  return TL_OK;
}

/* One check of candidate against reference at percentile k; prints a line
 * and returns 1 when it has regressed, 0 when not, -1 when it cannot say (no
 * samples, or too few for the percentile on either side: the bootstrap of
 * the largest samples is unreliable). */
static int check_one(FILE *out, const tl_group *g, const tl__gcalc *ref, const tl__gcalc *cand,
                     size_t k, double max, int64_t min_ns, const char *which, const char *against) {
  int64_t rv = ref->dist.pct_ns[k], cv = cand->dist.pct_ns[k];
  if (!ref->dist.count || !cand->dist.count || ref->pct[k].few || cand->pct[k].few)
    return -1;
  /* Relative to the reference's lateness, not to the delay everyone waits;
   * a lateness below the ratio floor counts as the floor, so that noise-level
   * latenesses give no huge percentages. */
  int64_t armed = tl_armed_ns(g->probe, g->delay_ns), rl = rv - armed, cl = cv - armed;
  double rel = (double)(cv - rv) / (double)(rl > TL_RATIO_FLOOR_NS ? rl : TL_RATIO_FLOOR_NS);
  int64_t lo, hi;
  tl__diff_interval(ref, cand, k, &lo, &hi);
  if (!(rel > max) || lo <= 0 || cv - rv < min_ns)
    return 0;
  char line[768], c[32], r[32], l[32], h[32];
  double sc = tl__max_abs3((double)cl, (double)rl, 0);
  tl__sentence_ms((double)cl, sc, c, sizeof c);
  tl__sentence_ms((double)rl, sc, r, sizeof r);
  tl__sentence_ms((double)lo, tl__max_abs3((double)lo, (double)hi, 0), l, sizeof l);
  tl__sentence_ms((double)hi, tl__max_abs3((double)lo, (double)hi, 0), h, sizeof h);
  snprintf(line, sizeof line,
           "regression: %s %s %g ms p%g%s is %s ms late, %.1f%% above %s (%s ms late; 95%% CI "
           "of the difference %s to %s ms; allowed %g%%)",
           g->label, g->probe, (double)g->delay_ns / 1e6, g->dist.pcts[k], which, c, rel * 100,
           against, r, l, h, max * 100);
  tl_fput_safe(out, line);
  fputc('\n', out);
  return 1;
}

typedef struct {
  size_t checks, bad, skipped;
} check_tally;

/* Sessions on one side of a check, the exact distribution when known, the
 * purpose that seeds its draws and the samples the comparison kept of them. */
typedef struct {
  const int64_t *ids;
  size_t n;
  const tl_dist *dist;
  const char *seed;
  const tl__kept *kept;
} sides;

/* Checks cand (of group g) against ref (of group rg) at every percentile. */
static int check_sides(tl_store *store, const tl_comparison *cmp, const tl_group *g,
                       const tl_group *rg, const sides *ref, const sides *cand,
                       const tl_check_opts *o, const char *which, const char *against, FILE *out,
                       check_tally *t) {
  const double *p = g->dist.pcts;
  size_t np = g->dist.pct_count;
  tl__gcalc rgc, cgc;
  memset(&rgc, 0, sizeof rgc);
  memset(&cgc, 0, sizeof cgc);
  int rc = tl__gcalc_run(store, cmp, ref->ids, ref->n, p, np, ref->dist,
                         tl__group_seed(rg->label, rg->probe, rg->delay_ns, ref->seed), 0,
                         ref->kept, &rgc);
  if (!rc)
    rc = tl__gcalc_run(store, cmp, cand->ids, cand->n, p, np, cand->dist,
                       tl__group_seed(g->label, g->probe, g->delay_ns, cand->seed), 0, cand->kept,
                       &cgc);
  for (size_t k = 0; k < np && !rc; k++) {
    int r =
        check_one(out, g, &rgc, &cgc, k, o->max_regression, o->min_regression_ns, which, against);
    t->skipped += r < 0;
    t->checks += r >= 0;
    t->bad += r > 0;
  }
  tl__gcalc_free(&rgc);
  tl__gcalc_free(&cgc);
  return rc;
}

int tl_report_check(tl_store *store, const tl_check_opts *o, FILE *out, char *err, size_t errlen) {
  if (!(o->max_regression > 0) || o->min_regression_ns < 0)
    return tl_fail(err, errlen, TL_EINVAL, "the allowed regression must be above 0%%");
  if (o->baseline && !o->compare.by && tl_label_check(o->baseline, NULL, 0))
    return tl_fail(err, errlen, TL_EINVAL, "the baseline is not a valid label");
  tl_compare_opts co = o->compare;
  const char *labels[258];
  if (co.label_count && o->baseline) {
    if (co.label_count > 256)
      return tl_fail(err, errlen, TL_EINVAL, "too many labels");
    int has = 0;
    for (size_t i = 0; i < co.label_count; i++) {
      labels[i] = co.labels[i];
      has |= strcmp(co.labels[i], o->baseline) == 0;
    }
    size_t n = co.label_count;
    if (!has)
      labels[n++] = o->baseline;
    co.labels = labels;
    co.label_count = n;
  } else if (o->baseline) {
    labels[0] = o->baseline;
    /* Check that the baseline exists by asking for it alone first. */
    tl_compare_opts one = co;
    one.labels = labels;
    one.label_count = 1;
    tl_comparison probe;
    int rc = tl_compare(store, &one, &probe, err, errlen);
    tl_comparison_free(&probe);
    if (rc == TL_ENOTFOUND && strncmp(err, "no session", 10) == 0)
      snprintf(err, errlen, "the baseline '%s' has no session that matches the filters",
               o->baseline);
    if (rc)
      return rc;
  }
  tl_comparison cmp;
  int rc = tl_compare(store, &co, &cmp, err, errlen);
  if (rc)
    return rc;
  check_tally tally = {0, 0, 0};
  /* The baseline as the comparison names it (a --by value as typed may differ). */
  const char *bl = cmp.baseline >= 0 ? cmp.labels[cmp.baseline] : o->baseline;
  for (size_t i = 0; i < cmp.group_count && !rc; i++) {
    const tl_group *g = &cmp.groups[i];
    /* Against the baseline's group of the same probe and delay. */
    const tl_group *base = NULL;
    for (size_t j = 0; j < cmp.group_count && bl; j++)
      if (strcmp(cmp.groups[j].label, bl) == 0 && tl__same_block(&cmp.groups[j], g))
        base = &cmp.groups[j];
    if (base && base != g) {
      sides ref = {base->session_ids, base->session_count, &base->dist, "ci", base->kept};
      sides cand = {g->session_ids, g->session_count, &g->dist, "ci", g->kept};
      rc = check_sides(store, &cmp, g, base, &ref, &cand, o, "", base->label, out, &tally);
    }
    /* Against its own earlier sessions: the latest session is the newest
     * run of this label, probe and delay. */
    if (g->session_count >= 2 && !rc) {
      size_t n = g->session_count;
      sides ref = {g->session_ids, n - 1, NULL, "earlier", NULL};
      sides cand = {g->session_ids + n - 1, 1, NULL, "latest", NULL};
      char against[96];
      snprintf(against, sizeof against, "its %zu earlier session%s", n - 1, n == 2 ? "" : "s");
      rc = check_sides(store, &cmp, g, g, &ref, &cand, o, " in the latest session", against, out,
                       &tally);
    }
  }
  if (rc) {
    if (rc == TL_ENOMEM)
      tl_fail(err, errlen, rc, "out of memory");
    else
      tl_fail(err, errlen, rc, "%s", tl_store_errmsg(store));
  } else {
    char skipped[96] = "";
    if (tally.skipped)
      snprintf(skipped, sizeof skipped, " (%zu skipped: too few samples)", tally.skipped);
    if (tally.bad)
      fprintf(out, "%zu regression%s above %g%% in %zu checks%s\n", tally.bad,
              tally.bad == 1 ? "" : "s", o->max_regression * 100, tally.checks, skipped);
    else if (tally.checks)
      fprintf(out, "ok: no regression above %g%% in %zu checks%s\n", o->max_regression * 100,
              tally.checks, skipped);
    else
      fprintf(out,
              "nothing to check: no label has a group of the baseline's probe and delay or "
              "two sessions or more with enough samples%s\n",
              skipped);
    rc = tally.bad ? TL_CHECK_REGRESSED : TL_OK;
  }
  tl_comparison_free(&cmp);
  if (!rc && ferror(out))
    return tl_fail(err, errlen, TL_EIO, "writing the check failed");
  return rc;
}
