/* rank_test.c: the Mann-Whitney rank test, of two samples and of every
 * pair of groups of one probe and delay. Pairs are many (a fleet's 200
 * hosts: 19,900 a delay), so a block's pairs are counted together in one
 * merge of its groups' kept samples, each group holding only those, as
 * gaps of a byte or so. Its limits are described in docs/statistics.md. */
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

/* The test from U (the pairs (x of a, y of b) with x above y, and half
 * those equal) and the ties' sum of t^3 - t: halves of whole numbers and
 * whole numbers, exact in a long double, so the same however counted. */
static void mw_result(long double u, long double ties, size_t na, size_t nb, tl_mw *out) {
  memset(out, 0, sizeof *out);
  out->p_value = 1;
  out->a_below_b = 0.5;
  if (!na || !nb)
    return;
  long double n1 = (long double)na, n2 = (long double)nb, n = n1 + n2;
  long double var = n1 * n2 / 12.0L * ((n + 1) - ties / (n * (n - 1 > 0 ? n - 1 : 1)));
  long double d = u - n1 * n2 / 2;
  out->u = (double)u;
  out->a_below_b = (double)(1 - u / (n1 * n2));
  if (var <= 0)
    return;
  long double ad = fabsl(d) - 0.5L;
  if (ad < 0)
    ad = 0;
  out->z = (double)((d < 0 ? -ad : ad) / sqrtl(var));
  out->p_value = erfc(fabs(out->z) / sqrt(2.0));
}

int tl_mann_whitney(const int64_t *a, size_t na, const int64_t *b, size_t nb, tl_mw *out) {
  if (!na || !nb) {
    mw_result(0, 0, 0, 0, out);
    return TL_EINVAL;
  }
  /* Equal values take a's first, so that a b counts the a's of its run
   * before it. No branch depends on which side a value comes from: the
   * sides interleave at random, and a branch would miss every other time. */
  mw_walk w = {0, 0, 0, 0, 0, 0, a[0] < b[0] ? a[0] : b[0], UINT64_MAX, 0};
  size_t i = 0, j = 0;
  while (i < na || j < nb) {
    size_t left = MW_FLUSH;
    for (; left && i < na && j < nb; left--) {
      int64_t x = a[i], y = b[j];
      uint64_t take = x <= y, a_mask = -take;
      mw_value(&w, (int64_t)(((uint64_t)x & a_mask) | ((uint64_t)y & ~a_mask)), take);
      w.below += j & a_mask;
      w.equal += w.ras & ~a_mask;
      i += take;
      j += take ^ 1;
    }
    for (; left && j == nb && i < na; left--, i++) {
      mw_value(&w, a[i], 1);
      w.below += nb;
    }
    for (; left && i == na && j < nb; left--, j++) {
      mw_value(&w, b[j], 0);
      w.equal += w.ras;
    }
    mw_flush(&w);
  }
  mw_result(w.below_all + 0.5L * w.equal_all, w.ties_all, na, nb, out);
  return TL_OK;
}

/* ======================================================================== */
/* Every pair of a block                                                     */

/* Only the pooled samples of a group whose own statistics are done, as the
 * rank test reads them, in order: the first and each gap to the next as a
 * varint (tl_varint_put). A block's groups are held until its pairs are done,
 * and timer samples lie close together: 1.03 bytes a kept sample at 200
 * hosts (43 MB a delay), where the samples with their sessions' copies and
 * tags took 20 (0.8 GB). */
int tl__rank_keep_pool_only(tl__gcalc *g) {
  tl__sset *x = &g->set;
  size_t m = x->m, bytes = 0;
  for (size_t i = 1; i < m; i++)
    bytes += tl_varint_len((uint64_t)x->pool[i] - (uint64_t)x->pool[i - 1]);
  if (m && !(g->gaps = malloc(bytes ? bytes : 1)))
    return TL_ENOMEM;
  g->first = m ? x->pool[0] : 0;
  g->gaps_len = 0;
  for (size_t i = 1; i < m; i++)
    g->gaps_len +=
        tl_varint_put(g->gaps + g->gaps_len, (uint64_t)x->pool[i] - (uint64_t)x->pool[i - 1]);
  size_t ns = x->ns;
  tl__sset_free(x); /* a borrowed set's arrays are left to the comparison */
  x->m = m;
  x->ns = ns;
  return TL_OK;
}

/* Every pair of a block's groups at once: one merge of all their pools,
 * value by value, through a heap of each group's next value. At each value
 * every group holding it (c times) adds, for each group after it, c times
 * the values that group has below it and below or at it, which sum to
 * twice U; the pairs holding it both add their ties. A pair's counts are
 * those of its own merge, exactly, for a cost of the values times the
 * groups, adds that run side by side, where 19,900 merges of two pools
 * each walked a value at a time. */
typedef struct {
  const uint8_t *gaps, *end; /* after v */
  int64_t v;                 /* the value read last */
  size_t left;               /* values after it */
} pool;

/* The gap to the pool's next value (left > 0). The pool's own bytes always
 * read; were they ever short, the pool would end there rather than be read
 * past. */
static inline uint64_t next_gap(pool *p) {
  uint64_t gap = 0;
  p->left = tl_varint_get(&p->gaps, p->end, &gap) ? p->left - 1 : 0;
  return gap;
}

typedef struct {
  int64_t v; /* the group's next value */
  size_t g;
} head;

/* By value, then group: the groups holding a value leave in their order. */
static inline int head_below(head x, head y) { return x.v < y.v || (x.v == y.v && x.g < y.g); }

static void sift_down(head *heap, size_t n, size_t k) {
  head x = heap[k];
  for (size_t l; (l = 2 * k + 1) < n; k = l) {
    l += l + 1 < n && head_below(heap[l + 1], heap[l]);
    if (!head_below(heap[l], x))
      break;
    heap[k] = heap[l];
  }
  heap[k] = x;
}

typedef struct {
  size_t G;
  uint64_t *twice_u; /* [a * G + b], a < b: twice the pairs (x of a, y of b) with y below x,
                        plus those with y equal to x */
  uint64_t *cross;   /* [a * G + b], a < b: 3 ca cb (ca + cb) over the values both hold */
  uint64_t *self;    /* [a]: c^3 - c over a's values, each held c times */
} block_counts;

/* One value, held by the groups held[0..nheld) (in increasing order),
 * times[h] each; seen2[b]: twice the values of group b below it, plus b's
 * times, so that c seen2[b] is what c of a's values add to twice U. */
static void count_value(block_counts *k, const size_t *held, const uint64_t *times, size_t nheld,
                        const uint64_t *seen2) {
  size_t G = k->G;
  for (size_t h = 0; h < nheld; h++) {
    size_t a = held[h];
    uint64_t c = times[h], *row = k->twice_u + a * G, *cross = k->cross + a * G;
    if (c == 1)
      for (size_t b = a + 1; b < G; b++)
        row[b] += seen2[b];
    else
      for (size_t b = a + 1; b < G; b++)
        row[b] += c * seen2[b];
    k->self[a] += c * c * c - c;
    for (size_t j = h + 1; j < nheld; j++)
      cross[held[j]] += 3 * c * times[j] * (c + times[j]);
  }
}

/* The counts of the pools p[0..G) (G >= 1). */
static int count_block(pool *p, block_counts *k) {
  size_t G = k->G, n = 0;
  uint64_t *seen2 = calloc(G, sizeof *seen2), *times = malloc(G * sizeof *times);
  size_t *held = malloc(G * sizeof *held);
  head *heap = malloc(G * sizeof *heap);
  if (!seen2 || !times || !held || !heap) {
    free(seen2);
    free(times);
    free(held);
    free(heap);
    return TL_ENOMEM;
  }
  for (size_t a = 0; a < G; a++)
    if (p[a].gaps)
      heap[n++] = (head){p[a].v, a};
  for (size_t i = n / 2; i-- > 0;)
    sift_down(heap, n, i);
  while (n) {
    int64_t v = heap[0].v;
    size_t nheld = 0;
    /* The groups holding v, in increasing order, each as many times as it
     * does. */
    while (n && heap[0].v == v) {
      pool *q = &p[heap[0].g];
      uint64_t c = 1, gap = 0;
      while (q->left && !(gap = next_gap(q)))
        c++;
      held[nheld] = heap[0].g;
      times[nheld++] = c;
      if (gap) {
        q->v = (int64_t)((uint64_t)q->v + gap);
        heap[0].v = q->v;
      } else {
        heap[0] = heap[--n];
      }
      if (n)
        sift_down(heap, n, 0);
    }
    for (size_t h = 0; h < nheld; h++)
      seen2[held[h]] += times[h];
    count_value(k, held, times, nheld, seen2);
    for (size_t h = 0; h < nheld; h++)
      seen2[held[h]] += times[h];
  }
  free(seen2);
  free(times);
  free(held);
  free(heap);
  return TL_OK;
}

int tl__rank_pairs(const tl__gcalc *calc, const size_t *block, size_t nb, tl_pair_stats *pairs,
                   size_t count) {
  if (!count)
    return TL_OK;
  pool *p = malloc(nb * sizeof *p);
  block_counts k = {nb, calloc(nb * nb, sizeof *k.twice_u), calloc(nb * nb, sizeof *k.cross),
                    calloc(nb, sizeof *k.self)};
  int rc = p && k.twice_u && k.cross && k.self ? TL_OK : TL_ENOMEM;
  for (size_t a = 0; a < nb && !rc; a++) {
    const tl__gcalc *g = &calc[block[a]];
    p[a] = (pool){g->set.m ? g->gaps : NULL, g->set.m ? g->gaps + g->gaps_len : NULL, g->first,
                  g->set.m ? g->set.m - 1 : 0};
  }
  if (!rc)
    rc = count_block(p, &k);
  for (size_t i = 0; i < count && !rc; i++) {
    tl_pair_stats *q = &pairs[i];
    size_t a = 0, b = 0; /* their places in the block, which is in order */
    while (block[a] != q->a)
      a++;
    for (b = a; block[b] != q->b;)
      b++;
    size_t ab = a * nb + b;
    mw_result((long double)k.twice_u[ab] / 2,
              (long double)k.self[a] + (long double)k.self[b] + (long double)k.cross[ab],
              calc[q->a].set.m, calc[q->b].set.m, &q->mw);
  }
  free(p);
  free(k.twice_u);
  free(k.cross);
  free(k.self);
  return rc;
}
