/* rank_test.c: the Mann-Whitney rank test, of two samples and of every
 * pair of groups of one probe and delay. Pairs are many (a fleet's 200
 * hosts: 19,900 a delay, each merging two groups' kept samples), so each
 * group keeps only its pool for them, in 32 bits where it can, and two
 * threads take the pairs in turn. Its limits are described in
 * docs/statistics.md. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats_internal.h"

/* ======================================================================== */
/* Two samples                                                               */

/* The merge of two sorted samples, value by value: for each value of a the
 * b's below it and those equal, and each run of equal values' t^3 - t (as
 * the sum of 3r(r + 1) over its r-th value), in whole numbers. */
typedef struct {
  uint64_t below, equal, ties; /* since the last mw_flush */
  long double below_all, equal_all, ties_all;
  int64_t prev;      /* the last value */
  uint64_t run, ras; /* values equal to it before it; a's among them and it */
} mw_walk;

enum {
  MW_FLUSH = 1 << 16,    /* values between flushes: the whole-number sums cannot overflow */
  MW_LONG_RUN = 1 << 20, /* runs longer than this add to the ties as long doubles */
};

/* Masks rather than conditions, so that the compiler makes no branch. */
static inline void mw_value(mw_walk *w, int64_t v, uint64_t is_a) {
  uint64_t same = -(uint64_t)(v == w->prev);
  w->run = (w->run + 1) & same;
  w->ras = (w->ras & same) + is_a;
  w->prev = v;
  if (w->run < MW_LONG_RUN)
    w->ties += 3 * w->run * (w->run + 1);
  else
    w->ties_all += 3.0L * (long double)w->run * (long double)(w->run + 1);
}

static void mw_flush(mw_walk *w) {
  w->below_all += (long double)w->below;
  w->equal_all += (long double)w->equal;
  w->ties_all += (long double)w->ties;
  w->below = w->equal = w->ties = 0;
}

/* Value i of side s, narrow: its offset from base, else itself. Always
 * inlined with narrow a constant, so that each kind of merge is a loop of
 * its own. */
static inline __attribute__((always_inline)) int64_t side_at(const tl__mw_side *s, size_t i,
                                                             int narrow) {
  return narrow ? s->base + (int64_t)s->narrow[i] : s->wide[i];
}

static inline __attribute__((always_inline)) void mw_merge(mw_walk *w, const tl__mw_side *sa,
                                                           const tl__mw_side *sb, int an, int bn) {
  size_t na = sa->n, nb = sb->n, i = 0, j = 0;
  /* Equal values take a's first, so that a b counts the a's of its run
   * before it. No branch depends on which side a value comes from: the
   * sides interleave at random, and a branch would miss every other time. */
  while (i < na || j < nb) {
    size_t left = MW_FLUSH;
    for (; left && i < na && j < nb; left--) {
      int64_t x = side_at(sa, i, an), y = side_at(sb, j, bn);
      uint64_t take = x <= y, a_mask = -take;
      mw_value(w, (int64_t)(((uint64_t)x & a_mask) | ((uint64_t)y & ~a_mask)), take);
      w->below += j & a_mask;
      w->equal += w->ras & ~a_mask;
      i += take;
      j += take ^ 1;
    }
    for (; left && j == nb && i < na; left--, i++) {
      mw_value(w, side_at(sa, i, an), 1);
      w->below += nb;
    }
    for (; left && i == na && j < nb; left--, j++) {
      mw_value(w, side_at(sb, j, bn), 0);
      w->equal += w->ras;
    }
    mw_flush(w);
  }
}

int tl_mann_whitney(const int64_t *a, size_t na, const int64_t *b, size_t nb, tl_mw *out) {
  tl__mw_side sa = {a, NULL, 0, na}, sb = {b, NULL, 0, nb};
  return tl__mann_whitney_sides(&sa, &sb, out);
}

int tl__mann_whitney_sides(const tl__mw_side *sa, const tl__mw_side *sb, tl_mw *out) {
  memset(out, 0, sizeof *out);
  out->p_value = 1;
  out->a_below_b = 0.5;
  size_t na = sa->n, nb = sb->n;
  if (!na || !nb)
    return TL_EINVAL;
  int an = sa->narrow != NULL, bn = sb->narrow != NULL;
  int64_t a0 = side_at(sa, 0, an), b0 = side_at(sb, 0, bn);
  mw_walk w = {0, 0, 0, 0, 0, 0, a0 < b0 ? a0 : b0, UINT64_MAX, 0};
  if (an && bn)
    mw_merge(&w, sa, sb, 1, 1);
  else if (an)
    mw_merge(&w, sa, sb, 1, 0);
  else if (bn)
    mw_merge(&w, sa, sb, 0, 1);
  else
    mw_merge(&w, sa, sb, 0, 0);
  long double u = w.below_all + 0.5L * w.equal_all, ties = w.ties_all;
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
/* Every pair of a block                                                     */

/* Only the pooled samples of a group whose own statistics are done: the
 * sessions' own copies and the pool's tags go, and a pool spanning under
 * 2^32 ns (4.3 s) becomes 32-bit offsets. A block's groups are held until
 * its pairs are done: at 200 hosts, 4 bytes a kept sample (0.2 GB) rather
 * than 20 (1 GB). */
void tl__rank_keep_pool_only(tl__gcalc *g) {
  tl__sset *x = &g->set;
  if (x->borrowed)
    return; /* the comparison's, freed with it */
  if (x->buf != x->pool)
    free(x->buf);
  free(x->tag);
  free(x->s);
  x->buf = NULL;
  x->tag = NULL;
  x->s = NULL;
  size_t m = x->m;
  if (!m || (uint64_t)x->pool[m - 1] - (uint64_t)x->pool[0] > UINT32_MAX ||
      !(g->narrow = malloc(m * sizeof *g->narrow)))
    return; /* the pool as it is */
  g->narrow_base = x->pool[0];
  for (size_t i = 0; i < m; i++)
    g->narrow[i] = (uint32_t)((uint64_t)x->pool[i] - (uint64_t)g->narrow_base);
  free(x->pool);
  x->pool = NULL;
}

static tl__mw_side rank_side(const tl__gcalc *g) {
  return (tl__mw_side){g->narrow ? NULL : g->set.pool, g->narrow, g->narrow_base, g->set.m};
}

/* No test depends on another and each writes its own pair, so two
 * threads take them in turn from one counter and the bytes stay the same. */
typedef struct {
  const tl__gcalc *calc;
  tl_pair_stats *pairs;
  size_t count, next; /* pairs, and the next one to test */
  int rc;             /* the first test that failed */
  int locked;         /* mu was made: a second thread may take pairs too */
  pthread_mutex_t mu;
} rank_tests;

static void *rank_tests_run(void *arg) {
  rank_tests *t = arg;
  for (int rc = TL_OK;;) {
    if (t->locked)
      pthread_mutex_lock(&t->mu);
    t->rc = t->rc ? t->rc : rc;
    size_t i = t->next < t->count && !t->rc ? t->next++ : SIZE_MAX;
    if (t->locked)
      pthread_mutex_unlock(&t->mu);
    if (i == SIZE_MAX)
      return NULL;
    tl_pair_stats *p = &t->pairs[i];
    tl__mw_side a = rank_side(&t->calc[p->a]), b = rank_side(&t->calc[p->b]);
    rc = tl__mann_whitney_sides(&a, &b, &p->mw);
  }
}

int tl__rank_pairs(const tl__gcalc *calc, tl_pair_stats *pairs, size_t count) {
  rank_tests t = {.calc = calc, .pairs = pairs, .count = count};
  t.locked = count > 1 && pthread_mutex_init(&t.mu, NULL) == 0;
  pthread_t helper;
  int two = t.locked && pthread_create(&helper, NULL, rank_tests_run, &t) == 0;
  rank_tests_run(&t);
  if (two)
    pthread_join(helper, NULL);
  if (t.locked)
    pthread_mutex_destroy(&t.mu);
  return t.rc;
}
