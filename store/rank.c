/* rank.c: the exact-rank engine (rank.h): nearest-rank values over any
 * number of samples with little memory, in passes that each read only the
 * samples of the ranges still open. The summary writer (summary.c) runs it
 * for a session's own percentiles, the sweep (dist.c) for a group's and its
 * sessions' at once; both locate their ranks in the same log-linear
 * histogram first, so one more pass usually settles every rank. Also the
 * sort of samples (tl_sort_i64) that the engine, the summaries' windows and
 * the report's statistics use. */
#include <stdlib.h>
#include <string.h>

#include "rank.h"
#include "tl_store.h"

void tl__rank_locate(tl__rank *r, int64_t rank, const int64_t *hist, size_t first, size_t len) {
  int64_t cum = 0;
  for (size_t b = 0; b < len; b++) {
    if (cum + hist[b] >= rank) {
      tl_summary_bucket_bounds(first + b, &r->lo, &r->hi);
      r->want = rank - cum;
      r->inside = hist[b];
      return;
    }
    cum += hist[b];
  }
}

int tl__rank_open(tl__rank *r) {
  r->same = SIZE_MAX;
  if (r->done)
    return 0;
  if (r->lo == r->hi) {
    r->done = 1;
    r->value = r->lo;
    return 0;
  }
  return 1;
}

void tl__rank_plan(tl__rank *r, int prefer_count) {
  uint64_t span = (uint64_t)r->hi - (uint64_t)r->lo + 1;
  uint64_t collect = (uint64_t)r->inside * sizeof *r->vals, count = span * sizeof *r->count;
  /* Counting takes less memory than collecting where many samples share few
   * values (a 50 ms session holds most of its samples in one bucket), and
   * needs no selection; no count can overflow while inside fits one. */
  r->n = 0;
  r->extra = 0;
  if ((count < collect || (prefer_count && count <= TL__RANK_SMALL)) && count <= TL__RANK_BYTES &&
      r->inside <= UINT32_MAX)
    r->mode = TL__RANK_COUNT;
  else if (collect <= TL__RANK_BYTES)
    r->mode = TL__RANK_COLLECT;
  else
    r->mode = TL__RANK_NARROW;
}

/* The i-th of ranks stride bytes apart from first. */
static tl__rank *rank_at(tl__rank *first, size_t stride, size_t i) {
  return (tl__rank *)(void *)((char *)first + i * stride);
}

size_t tl__rank_open_set(tl__rank *first, size_t stride, size_t n, size_t base, int prefer_count) {
  size_t open = 0;
  for (size_t k = 0; k < n; k++) {
    tl__rank *x = rank_at(first, stride, k);
    if (!tl__rank_open(x))
      continue;
    open++;
    for (size_t j = 0; j < k && x->same == SIZE_MAX; j++) {
      const tl__rank *y = rank_at(first, stride, j);
      if (tl__rank_takes(y) && y->lo == x->lo && y->hi == x->hi)
        x->same = base + j;
    }
    if (x->same == SIZE_MAX)
      tl__rank_plan(x, prefer_count);
  }
  return open;
}

int tl__rank_alloc(tl__rank *r) {
  uint64_t span = (uint64_t)r->hi - (uint64_t)r->lo + 1;
  if (r->mode == TL__RANK_COUNT) {
    if (r->count_lent)
      return TL_OK;
    r->count = calloc(span, sizeof *r->count);
    return r->count ? TL_OK : TL_ENOMEM;
  }
  if (r->mode == TL__RANK_COLLECT) {
    r->vals = malloc((size_t)r->inside * sizeof *r->vals + 1);
    return r->vals ? TL_OK : TL_ENOMEM;
  }
  r->width = (span + TL__RANK_SPLIT - 1) / TL__RANK_SPLIT;
  r->split = calloc(TL__RANK_SPLIT, sizeof *r->split);
  return r->split ? TL_OK : TL_ENOMEM;
}

void tl__rank_free(tl__rank *r) {
  free(r->vals);
  if (!r->count_lent)
    free(r->count);
  free(r->split);
  r->vals = NULL;
  r->count = NULL;
  r->split = NULL;
  r->count_lent = 0;
}

/* The k-th smallest (0-based) of v[0..n), reordering v: Hoare's selection
 * with a median-of-three pivot, linear on average, where a sort would be
 * n log n. Ranks that share the samples select from them in turn. */
static int64_t select_kth(int64_t *v, size_t n, size_t k) {
  size_t lo = 0, hi = n - 1;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int64_t a = v[lo], b = v[mid], c = v[hi];
    int64_t pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
    size_t i = lo, j = hi;
    while (i <= j) {
      while (v[i] < pivot)
        i++;
      while (v[j] > pivot)
        j--;
      if (i <= j) {
        int64_t t = v[i];
        v[i] = v[j];
        v[j] = t;
        i++;
        if (j == 0)
          break;
        j--;
      }
    }
    /* Now v[lo..j] <= pivot <= v[i..hi], and anything between equals it. */
    if (k <= j && j != (size_t)-1 && j >= lo)
      hi = j;
    else if (k >= i)
      lo = i;
    else
      return v[k];
  }
  return v[k];
}

/* The narrower range of x: the part of the reader's split that holds it. */
static int narrow(tl__rank *x, const tl__rank *r) {
  int64_t cum = 0;
  for (size_t b = 0; b < TL__RANK_SPLIT; b++) {
    if (cum + r->split[b] >= x->want) {
      int64_t lo = r->lo + (int64_t)(b * r->width), hi = lo + (int64_t)r->width - 1;
      x->lo = lo;
      x->hi = hi < r->hi ? hi : r->hi;
      x->want -= cum;
      x->inside = r->split[b];
      return TL_OK;
    }
    cum += r->split[b];
  }
  return TL_ECORRUPT;
}

int tl__rank_resolve(tl__rank *x, tl__rank *r) {
  if (r->mode == TL__RANK_NARROW)
    return narrow(x, r);
  if (r->mode == TL__RANK_COLLECT) {
    if ((int64_t)r->n != r->inside || r->extra)
      return TL_ECORRUPT;
    x->value = select_kth(r->vals, r->n, (size_t)(x->want - 1));
  } else {
    uint64_t span = (uint64_t)r->hi - (uint64_t)r->lo + 1, at = span;
    int64_t cum = 0;
    for (uint64_t i = 0; i < span; i++)
      if ((cum += r->count[i]) >= x->want && at == span)
        at = i;
    if (cum != r->inside)
      return TL_ECORRUPT;
    x->value = r->lo + (int64_t)at;
  }
  x->done = 1;
  return TL_OK;
}

/* LSD radix sort by digits of (v - min) up to the highest one it spans: the
 * samples of a group span three or four bytes, so sorting a million takes
 * as many linear passes instead of n log n comparisons. */
int tl_sort_i64(int64_t *v, size_t n) {
  if (n < 2)
    return TL_OK;
  int64_t lo = v[0], hi = v[0];
  for (size_t i = 1; i < n; i++) {
    lo = v[i] < lo ? v[i] : lo;
    hi = v[i] > hi ? v[i] : hi;
  }
  uint64_t span = (uint64_t)hi - (uint64_t)lo;
  if (!span)
    return TL_OK;
  int64_t *tmp = malloc(n * sizeof *tmp);
  if (!tmp)
    return TL_ENOMEM;
  int64_t *src = v, *dst = tmp;
  /* Digits of 11 bits for many values (fewer passes over them), of 8 for
   * few (fewer counts to clear and add up). */
  int bits = n >= 4096 ? 11 : 8;
  uint64_t mask = ((uint64_t)1 << bits) - 1;
  size_t count[2049]; /* each pass clears the mask + 2 it uses */
  for (int shift = 0; shift < 64 && span >> shift; shift += bits) {
    memset(count, 0, (mask + 2) * sizeof *count);
    for (size_t i = 0; i < n; i++)
      count[(((uint64_t)src[i] - (uint64_t)lo) >> shift & mask) + 1]++;
    for (uint64_t b = 0; b < mask + 1; b++)
      count[b + 1] += count[b];
    for (size_t i = 0; i < n; i++)
      dst[count[((uint64_t)src[i] - (uint64_t)lo) >> shift & mask]++] = src[i];
    int64_t *t = src;
    src = dst;
    dst = t;
  }
  if (src != v)
    memcpy(v, src, n * sizeof *v);
  free(tmp);
  return TL_OK;
}
