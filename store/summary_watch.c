/* summary_watch.c: a session's percentiles read off windows around their
 * places while its samples go by, so that a summary seldom reads its
 * blocks again (summary.c).
 *
 * The writer, import, merge and push see each sample of a session once, as
 * it is stored; a session's own percentiles would then need the blocks read
 * again (resolve_all), which costs about as much as encoding them. So the
 * first TL__WATCH_AFTER samples are held, and they show about where each
 * percentile lies: from then on the samples in a window of whole buckets
 * around each place (wide enough for four standard errors of the held
 * samples' quantile) are counted value by value, the held ones included, and
 * above the highest the samples are collected. At the end a percentile whose
 * bucket lies in a window is read off it, exactly; one whose data moved
 * further, or whose window outgrew its bounded memory, reads the blocks as
 * before. A session of at most TL__WATCH_AFTER samples is read off the held
 * ones. The answer is the same either way; only the reading differs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "summary_internal.h"

/* The windows' buckets marked, or cleared (an open window's up to the
 * last bucket). */
static void watch_mark(tl__watch *w, uint8_t on) {
  for (size_t k = 0; k < w->nwin; k++) {
    size_t from = tl_summary_bucket(w->win[k].lo), to = tl_summary_bucket(w->win[k].hi);
    memset(w->marked + from, on, to - from + 1);
  }
}

/* No window counts any more (a batch was taken back, or memory ran out):
 * the blocks settle every rank. */
void tl__watch_stop(tl__watch *w) {
  watch_mark(w, 0);
  w->state = TL__WATCH_BLIND;
}

void tl__watch_clear(tl__watch *w) {
  watch_mark(w, 0);
  for (size_t k = 0; k < w->nwin; k++) {
    tl__watch_window *x = &w->win[k];
    if (x->count)
      memset(x->count, 0, (size_t)((uint64_t)x->hi - (uint64_t)x->lo + 1) * sizeof *x->count);
    x->n = 0;
    x->taken = 0;
    x->full = 0;
  }
  w->state = TL__WATCH_HOLDING;
  w->nheld = 0;
  w->held_sorted = 0;
  w->nwin = 0;
}

/* Places the windows from the held samples, then counts them in. Where the
 * memory for a window cannot be had, nothing is watched. */
void tl__watch_start(tl__watch *w) {
  int64_t *v = w->held;
  size_t n = w->nheld;
  if (tl_sort_i64(v, n) != TL_OK) {
    tl__watch_stop(w);
    return;
  }
  /* Each percentile's window in quantiles, then in whole buckets, from the
   * end of the one before where they overlap (so that a bucket lies in one
   * window at most); one that reaches the top stays open upwards. */
  int64_t lo[TL_SUMMARY_PCTS], hi[TL_SUMMARY_PCTS];
  size_t nw = 0;
  for (size_t k = 0; k < TL_SUMMARY_PCTS; k++) {
    double p = tl_summary_pcts[k] / 100, d = 4 * sqrt(p * (1 - p) / (double)n) + 2.0 / (double)n;
    double qlo = (p - d) * (double)n, qhi = (p + d) * (double)n;
    int64_t a = v[qlo > 0 ? (size_t)qlo : 0],
            b = qhi < (double)(n - 1) ? v[(size_t)qhi + 1] : INT64_MAX, x, y;
    tl_summary_bucket_bounds(tl_summary_bucket(a), &a, &x);
    if (b != INT64_MAX)
      tl_summary_bucket_bounds(tl_summary_bucket(b), &y, &b);
    if (nw && a <= hi[nw - 1]) {
      if (hi[nw - 1] == INT64_MAX || b <= hi[nw - 1])
        continue; /* inside the one before */
      a = hi[nw - 1] + 1;
    }
    lo[nw] = a;
    hi[nw++] = b;
  }
  int ok = 1;
  for (size_t k = 0; k < nw && ok; k++) {
    tl__watch_window *x = &w->win[k];
    uint64_t span = hi[k] == INT64_MAX ? UINT64_MAX : (uint64_t)hi[k] - (uint64_t)lo[k] + 1;
    x->lo = lo[k];
    x->hi = hi[k];
    /* Kept from an earlier session where they fit; counts are zero there. */
    if (span <= TL__WATCH_COUNT_SPAN) {
      free(x->vals);
      x->vals = NULL;
      ok = x->count || (x->count = calloc(TL__WATCH_COUNT_SPAN, sizeof *x->count));
    } else {
      free(x->count);
      x->count = NULL;
      ok = x->vals || (x->vals = malloc(TL__WATCH_GATHER_MAX * sizeof *x->vals));
    }
    w->nwin = k + 1;
  }
  if (!ok) {
    tl__watch_stop(w);
    return;
  }
  watch_mark(w, 1);
  w->state = TL__WATCH_WATCHING;
  for (size_t i = 0; i < n; i++)
    if (w->marked[tl_summary_bucket(v[i])])
      tl__watch_take(w, v[i]);
}

/* The session's samples sorted, when the held ones are all it has (a
 * session of at most TL__WATCH_AFTER samples): its rank-th is then
 * sorted[rank - 1]. NULL otherwise, or when the sort finds no memory. */
const int64_t *tl__watch_all_sorted(tl__watch *w, int64_t total) {
  if (w->state != TL__WATCH_HOLDING || (int64_t)w->nheld != total)
    return NULL;
  if (!w->held_sorted && tl_sort_i64(w->held, w->nheld) != TL_OK)
    return NULL;
  w->held_sorted = 1;
  return w->held;
}

/* The want-th (1-based) of the inside samples in [lo, hi], from a window
 * that holds that range whole: 1 and the value in *out, or 0 where none
 * does (or its samples do not add up to inside, which the blocks then
 * settle). */
int tl__watch_value(tl__watch *w, int64_t lo, int64_t hi, int64_t want, int64_t inside,
                    int64_t *out) {
  if (w->state != TL__WATCH_WATCHING)
    return 0;
  for (size_t k = 0; k < w->nwin; k++) {
    tl__watch_window *x = &w->win[k];
    if (x->full || lo < x->lo || hi > x->hi)
      continue;
    int64_t cum = 0, at = INT64_MIN;
    if (x->count) {
      for (int64_t v = lo; v <= hi; v++) {
        cum += x->count[v - x->lo];
        if (at == INT64_MIN && cum >= want)
          at = v;
      }
    } else {
      /* The window's values in [lo, hi] to its front, then sorted. */
      size_t m = 0;
      for (size_t i = 0; i < x->n; i++)
        if (x->vals[i] >= lo && x->vals[i] <= hi) {
          int64_t t = x->vals[m];
          x->vals[m++] = x->vals[i];
          x->vals[i] = t;
        }
      cum = (int64_t)m;
      if (cum == inside && tl_sort_i64(x->vals, m) == TL_OK)
        at = x->vals[want - 1];
    }
    if (cum != inside || at == INT64_MIN)
      return 0;
    *out = at;
    return 1;
  }
  return 0;
}
