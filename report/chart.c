/* chart.c: the page's histogram of a group, in equal bins from its minimum.
 *
 * The bins come from the group's log-linear histogram, which the sweep
 * knows after its first pass (exact counts per bucket, from the sessions'
 * summaries): a bucket inside one bin adds its count there, and only the
 * buckets whose samples straddle the edge of a bin are counted value by
 * value, in the pass that finds the percentiles (tl_sweep_count_values).
 * Timer samples fill a few dozen buckets and straddle bins at a handful.
 * Where those would take more memory than the sweep gives them, every
 * sample of that pass is binned as it is read instead (bin_samples). */
#include <stdlib.h>
#include <string.h>

#include "chart.h"

/* The chart's bin of a latency (bins: above hi), and the largest latency
 * of a bin. */
static size_t chart_bin(const tl__chart *c, int64_t x) {
  if (x > c->hi)
    return c->bins;
  uint64_t b = ((uint64_t)x - (uint64_t)c->lo) / (uint64_t)c->width;
  return b < c->bins - 1 ? (size_t)b : c->bins - 1;
}

static int64_t chart_bin_top(const tl__chart *c, size_t bin) {
  if (bin >= c->bins)
    return INT64_MAX;
  if (bin == c->bins - 1)
    return c->hi;
  uint64_t top = (uint64_t)c->lo + (bin + 1) * (uint64_t)c->width - 1;
  return top < (uint64_t)c->hi ? (int64_t)top : c->hi;
}

static int64_t *bin_count(tl__chart *c, size_t bin) {
  return bin < c->bins ? &c->counts[bin] : c->over;
}

/* The group's samples in log bucket b lie in [*lo, *hi]. */
static void group_bounds(const tl__chart *c, size_t b, int64_t *lo, int64_t *hi) {
  tl_summary_bucket_bounds(b, lo, hi);
  *lo = *lo > c->min ? *lo : c->min;
  *hi = *hi < c->max ? *hi : c->max;
}

/* Whether the group's samples of log bucket b may fall in two bins. */
static int chart_splits(const tl__chart *c, size_t b) {
  int64_t lo, hi;
  group_bounds(c, b, &lo, &hi);
  return chart_bin(c, lo) != chart_bin(c, hi);
}

/* Bins the samples as the sweep reads them. Timer samples crowd into one or
 * two bins, so consecutive samples would wait on each other's increment of
 * the same count: four interleaved sets of counts (folded by fold_parts)
 * keep four increments in flight. Bin `bins` counts the samples above hi.
 * While offsets fit 32 bits, a multiplication by a 64-bit reciprocal gives
 * the exact quotient (Lemire, Kaser and Kurz, "Faster remainder by direct
 * computation", 2019) where a division would take tens of cycles. */
static int bin_samples(void *arg, size_t session, const int64_t *v, size_t n) {
  (void)session;
  tl__chart *c = arg;
  uint64_t lo = (uint64_t)c->lo, hi = (uint64_t)c->hi, width = (uint64_t)c->width;
  uint64_t last = c->bins - 1, over = c->bins, stride = c->bins + 1;
  int64_t *part = c->part;
  if (hi - lo <= UINT32_MAX && width > 1) {
    uint64_t inv = UINT64_MAX / width + 1;
    for (size_t i = 0; i < n; i++) {
      uint64_t x = (uint64_t)v[i];
      uint64_t b = (uint64_t)(((unsigned __int128)inv * (x - lo)) >> 64);
      b = b < last ? b : last;
      b = x > hi ? over : b;
      part[(i & 3) * stride + b]++;
    }
    return 0;
  }
  for (size_t i = 0; i < n; i++) {
    uint64_t x = (uint64_t)v[i], b = (x - lo) / width;
    b = b < last ? b : last;
    b = x > hi ? over : b;
    part[(i & 3) * stride + b]++;
  }
  return 0;
}

/* Adds the interleaved counts of bin_samples into the chart. */
static void fold_parts(tl__chart *c) {
  size_t stride = c->bins + 1;
  for (size_t j = 0; j < 4; j++) {
    for (size_t b = 0; b < c->bins; b++)
      c->counts[b] += c->part[j * stride + b];
    *c->over += c->part[j * stride + c->bins];
  }
}

int tl__chart_ask(tl__chart *c, tl_sweep *w, size_t group, int64_t lo, int64_t width, int64_t hi,
                  int64_t *counts, size_t bins, int64_t *over) {
  tl_dist d;
  tl_sweep_dist(w, group, &d);
  *c = (tl__chart){lo, width, hi, counts, bins, over, d.min_ns, d.max_ns, NULL};
  size_t first, len, n = 0;
  const int64_t *hist = tl_sweep_hist(w, &first, &len);
  if (!bins || !len)
    return TL_OK;
  size_t *split = malloc(len * sizeof *split);
  if (!split)
    return TL_ENOMEM;
  for (size_t b = 0; b < len; b++)
    if (hist[b] && chart_splits(c, first + b))
      split[n++] = first + b;
  int asked = !n || tl_sweep_count_values(w, split, n);
  free(split);
  if (asked)
    return TL_OK;
  /* The binning is a tap of the sweep's next pass, on whichever of its
   * threads has time to spare. */
  if (!(c->part = calloc(4 * (bins + 1), sizeof *c->part)))
    return TL_ENOMEM;
  tl_sweep_tap(w, bin_samples, c);
  return TL_OK;
}

/* A straddling bucket b's samples in [lo, hi], value by value, summed
 * bin by bin. */
static void add_values(tl__chart *c, size_t b, int64_t lo, int64_t hi, const uint32_t *values) {
  int64_t blo, bhi;
  tl_summary_bucket_bounds(b, &blo, &bhi);
  const uint32_t *v = values + (lo - blo);
  for (int64_t x = lo; x <= hi;) {
    size_t bin = chart_bin(c, x);
    int64_t top = chart_bin_top(c, bin), end = top < hi ? top : hi, sum = 0;
    for (int64_t y = x; y <= end; y++)
      sum += *v++;
    *bin_count(c, bin) += sum;
    x = end + 1;
  }
}

void tl__chart_fill(tl__chart *c, const tl_sweep *w) {
  if (c->part) {
    fold_parts(c);
    return;
  }
  size_t first, len;
  const int64_t *hist = tl_sweep_hist(w, &first, &len);
  for (size_t b = 0; b < len && c->bins; b++) {
    int64_t lo, hi;
    if (!hist[b])
      continue;
    group_bounds(c, first + b, &lo, &hi);
    const uint32_t *values = tl_sweep_values(w, first + b);
    if (values && chart_splits(c, first + b))
      add_values(c, first + b, lo, hi, values);
    else
      *bin_count(c, chart_bin(c, lo)) += hist[b];
  }
}

void tl__chart_free(tl__chart *c) {
  free(c->part);
  c->part = NULL;
}
