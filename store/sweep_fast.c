/* sweep_fast.c: the sweep's fast counts. In the passes after the first,
 * the group's ranges that are whole log buckets, and the buckets whose
 * values a caller asked for (tl_sweep_count_values), count per value in
 * one table: one look-up and one count a sample, without a branch on
 * whether its bucket is wanted; the few samples of buckets with takers on
 * the lists (dist.c) are picked out on the way. */
#include <stdlib.h>
#include <string.h>

#include "sweep_internal.h"

enum { DIRECT_ENTRIES = 1 << 16 }; /* see direct_setup */

/* Keeps the fast table's copy of the bitmap (its buckets only: outside
 * them are no samples of the group). */
void tl__sweep_mark_slow(tl_sweep *w, size_t b, int on) {
  if (w->fast_slow && b - w->fast_first < w->fast_len)
    w->fast_slow[b - w->fast_first] = (uint8_t)on;
}

void tl__sweep_fast_free(tl_sweep *w) {
  free(w->fast_base);
  free(w->fast_mask);
  free(w->fast);
  free(w->fast_slow);
  w->fast_base = w->fast_mask = w->fast = NULL;
  w->fast_slow = NULL;
  free(w->direct_base);
  free(w->direct_mask);
  w->direct_base = w->direct_mask = NULL;
}

/* A sample in the span of the group's takers picked apart (see
 * tl__sweep_pick_plan), taken where its bucket is marked: out of the loop's
 * way, as it is seldom called. */
static __attribute__((noinline)) void take_marked(tl_sweep *w, int64_t x) {
  size_t b = log_index(x);
  if (w->bits[b / 64] >> (b % 64) & 1)
    tl__sweep_take(w, b, x);
}

/* Counts each sample at its value in the group's fast ranges: one table look-up and
 * one increment a sample, without a branch on whether its bucket is wanted
 * (most timer samples fall in a few buckets, about half of them wanted, so
 * that branch would be a coin toss). The samples of the other buckets are
 * counted into 8 spare counts at the front, spread by their low bits so
 * that consecutive ones seldom wait on the same count. The samples of
 * buckets with ranges on the lists are picked out on the way, without a
 * branch either, and handed to take after each stretch; or, when the
 * group's few tail samples are all there is to pick (spanned), each sample
 * in their span is taken as it comes, past a compare seldom true. */
static inline __attribute__((always_inline)) void
count_stretch(tl_sweep *w, const int64_t *p, size_t m, int by_double, int picking, int spanned) {
  const uint32_t *base = w->fast_base, *mask = w->fast_mask;
  const uint8_t *slow = w->fast_slow;
  uint32_t *fast = w->fast;
  size_t first = w->fast_first, len = w->fast_len, picked = 0;
  uint64_t span_lo = (uint64_t)w->pick_lo, span = (uint64_t)w->pick_hi - span_lo;
  uint16_t pick[TL_BLOCK_MAX];
  for (size_t i = 0; i < m; i++) {
    uint64_t u = (uint64_t)p[i];
    size_t k;
    if (by_double) {
      /* Below 2^53 a latency converts to a double exactly, whose exponent
       * and top 11 bits of mantissa are its log bucket, less a constant,
       * from 2^11 on: cheaper than finding the top bit and shifting. */
      double d = (double)p[i];
      uint64_t bits;
      memcpy(&bits, &d, sizeof bits);
      k = (size_t)(bits >> (52 - SUB_BITS)) - (size_t)(1023 + SUB_BITS - 1) * SUB;
      k = u < SUB ? (size_t)u : k;
    } else {
      k = log_index(p[i]);
    }
    k -= first; /* wraps below first */
    k = k < len ? k : len;
    fast[base[k] + (u & mask[k])]++;
    if (picking) {
      pick[picked] = (uint16_t)i;
      picked += slow[k];
    }
    if (spanned && u - span_lo <= span)
      take_marked(w, p[i]);
  }
  for (size_t j = 0; j < picked; j++)
    tl__sweep_take(w, log_index(p[pick[j]]), p[pick[j]]);
}

/* count_stretch without a pick-out, for a group whose samples span few
 * enough of its smallest buckets: the entry of a sample is then its offset
 * from the group's first bucket, shifted by that bucket's width, and a wider
 * bucket spans several entries with the same base and mask. */
static inline __attribute__((always_inline)) void count_direct(tl_sweep *w, const int64_t *p,
                                                               size_t m, int spanned) {
  const uint32_t *base = w->direct_base, *mask = w->direct_mask;
  uint32_t *fast = w->fast;
  uint64_t lo = (uint64_t)w->direct_lo;
  uint64_t span_lo = (uint64_t)w->pick_lo, span = (uint64_t)w->pick_hi - span_lo;
  unsigned shift = w->direct_shift;
  size_t len = w->direct_len;
  for (size_t i = 0; i < m; i++) {
    uint64_t u = (uint64_t)p[i];
    uint64_t k = (u - lo) >> shift; /* wraps below lo */
    k = k < len ? k : len;
    fast[base[k] + (u & mask[k])]++;
    if (spanned && u - span_lo <= span)
      take_marked(w, p[i]);
  }
}

/* The direct table of count_direct from the fast table by bucket, when it
 * takes at most DIRECT_ENTRIES entries; TL_ENOMEM when out of memory. */
static int direct_setup(tl_sweep *w) {
  const moments *g = &w->m[w->ns];
  int64_t lo, hi;
  log_bounds(w->fast_first, &lo, &hi);
  unsigned shift = (unsigned)__builtin_ctzll((uint64_t)(hi - lo + 1));
  uint64_t len = (((uint64_t)g->max - (uint64_t)lo) >> shift) + 1;
  if (len > DIRECT_ENTRIES)
    return TL_OK;
  w->direct_base = malloc((len + 1) * sizeof *w->direct_base);
  w->direct_mask = malloc((len + 1) * sizeof *w->direct_mask);
  if (!w->direct_base || !w->direct_mask)
    return TL_ENOMEM;
  for (uint64_t k = 0; k < len; k++) {
    size_t b = log_index((int64_t)((uint64_t)lo + (k << shift))) - w->fast_first;
    w->direct_base[k] = w->fast_base[b];
    w->direct_mask[k] = w->fast_mask[b];
  }
  w->direct_base[len] = w->fast_base[w->fast_len];
  w->direct_mask[len] = w->fast_mask[w->fast_len];
  w->direct_lo = lo;
  w->direct_shift = shift;
  w->direct_len = (size_t)len;
  return TL_OK;
}

/* count_stretch picking samples out, taking a span's apart, or neither:
 * each its own loop, the flags constant in it. */
static inline __attribute__((always_inline)) void
count_stretch_as(tl_sweep *w, const int64_t *p, size_t m, int by_double, int picking, int apart) {
  if (apart)
    count_stretch(w, p, m, by_double, 0, 1);
  else if (picking)
    count_stretch(w, p, m, by_double, 1, 0);
  else
    count_stretch(w, p, m, by_double, 0, 0);
}

void tl__sweep_count_fast(tl_sweep *w, const int64_t *v, size_t n) {
  int by_double = w->m[w->ns].max < ((int64_t)1 << 53);
  int apart = w->slow && w->pick_apart && w->slow == w->pick_group;
  int picking = w->slow && !apart;
  for (size_t at = 0; at < n; at += TL_BLOCK_MAX) {
    size_t m = n - at < TL_BLOCK_MAX ? n - at : TL_BLOCK_MAX;
    const int64_t *p = v + at;
    /* Constant flags: a loop for each case, without the tests it does not
     * need. */
    if (w->direct_base && !picking) {
      if (apart)
        count_direct(w, p, m, 1);
      else
        count_direct(w, p, m, 0);
    } else if (by_double) {
      count_stretch_as(w, p, m, 1, picking, apart);
    } else {
      count_stretch_as(w, p, m, 0, picking, apart);
    }
  }
}

/* The group's takers on the lists are picked apart when at most one in
 * PICK_APART_SHARE of its samples lies in their span (by the histogram of
 * pass 1): the tail ranks of a 50 ms group, whose buckets are too wide to
 * count, would otherwise turn every sample's count into a count and a
 * pick-out, and keep the group from its direct table. */
enum { PICK_APART_SHARE = 64 };

void tl__sweep_pick_plan(tl_sweep *w) {
  w->pick_group = w->slow;
  w->pick_apart = 0;
  if (!w->slow || !w->fast)
    return;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (size_t k = w->tfirst[w->ns]; k < w->tend[w->ns]; k++) {
    const target *x = &w->t[k];
    if (tl__sweep_taker(x) && !x->r.count_lent) {
      lo = x->r.lo < lo ? x->r.lo : lo;
      hi = x->r.hi > hi ? x->r.hi : hi;
    }
  }
  int64_t inside = 0;
  for (size_t b = log_index(lo); b <= log_index(hi); b++)
    inside += w->ghist[b];
  w->pick_lo = lo;
  w->pick_hi = hi;
  w->pick_apart = inside <= w->m[w->ns].count / PICK_APART_SHARE;
}

/* Gives bucket b (from fast_first) counts per value in the fast counts. */
static void fast_claim(tl_sweep *w, size_t b, uint64_t *at) {
  uint64_t width = tl__sweep_bucket_width(w->fast_first + b);
  w->fast_base[b] = (uint32_t)*at;
  w->fast_mask[b] = (uint32_t)(width - 1); /* widths are powers of two */
  *at += width;
}

/* Sets up the fast counts of the next pass: the buckets of the group's
 * takers that count a whole log bucket (the usual case in the pass after
 * pass 1), the others staying on the lists; and the buckets whose values
 * the caller asked for (a chart's that straddle the edge of a bin: timer
 * samples fill a few dozen buckets, straddling bins at a handful). */
int tl__sweep_fast_setup(tl_sweep *w) {
  const moments *g = &w->m[w->ns];
  size_t first = log_index(g->min), len = log_index(g->max) - first + 1;
  w->fast_first = first;
  w->fast_len = len;
  w->fast_base = calloc(len + 1, sizeof *w->fast_base);
  w->fast_mask = malloc((len + 1) * sizeof *w->fast_mask);
  w->fast_slow = calloc(len + 1, 1);
  if (!w->fast_base || !w->fast_mask || !w->fast_slow) {
    tl__sweep_fast_free(w);
    return TL_ENOMEM;
  }
  for (size_t b = 0; b <= len; b++)
    w->fast_mask[b] = 7;
  uint64_t at = 8; /* the spare counts */
  for (size_t i = 0; i < w->nasked && w->asking; i++) {
    size_t b = w->asked[i] - first; /* wraps below first */
    if (b < len && !w->fast_base[b])
      fast_claim(w, b, &at);
    w->asked_at[i] = b < len ? w->fast_base[b] : 0;
  }
  for (size_t k = w->tfirst[w->ns]; k < w->tend[w->ns]; k++) {
    target *x = &w->t[k];
    int64_t lo, hi;
    size_t b = log_index(x->r.lo);
    log_bounds(b, &lo, &hi);
    x->r.count_lent = tl__sweep_taker(x) && x->r.mode == TL__RANK_COUNT && lo == x->r.lo &&
                      hi == x->r.hi && b - first < len &&
                      at + tl__sweep_bucket_width(b) <= UINT32_MAX;
    if (x->r.count_lent && !w->fast_base[b - first])
      fast_claim(w, b - first, &at);
  }
  if (at == 8) {
    tl__sweep_fast_free(w);
    return TL_OK;
  }
  if (!(w->fast = calloc(at, sizeof *w->fast))) {
    tl__sweep_fast_free(w);
    return TL_ENOMEM;
  }
  for (size_t k = w->tfirst[w->ns]; k < w->tend[w->ns]; k++)
    if (w->t[k].r.count_lent)
      w->t[k].r.count = w->fast + w->fast_base[log_index(w->t[k].r.lo) - first];
  int err = direct_setup(w);
  if (err)
    tl__sweep_fast_free(w);
  return err;
}

/* Keeps the fast counts of the asked buckets for tl_sweep_values, once they
 * add up to the group's histogram (TL_ECORRUPT: the data changed between
 * passes). */
int tl__sweep_values_keep(tl_sweep *w) {
  for (size_t i = 0; i < w->nasked; i++) {
    if (!w->asked_at[i])
      continue;
    uint64_t width = tl__sweep_bucket_width(w->asked[i]), seen = 0;
    for (uint64_t x = 0; x < width; x++)
      seen += w->fast[w->asked_at[i] + x];
    if (seen != (uint64_t)w->ghist[w->asked[i]])
      return TL_ECORRUPT;
  }
  w->values = w->fast; /* the fast counts of the group's ranges stay theirs */
  w->fast = NULL;
  return TL_OK;
}
