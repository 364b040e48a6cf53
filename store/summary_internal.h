/* summary_internal.h: what the files of a session's summary share
 * (summary.c computes and stores it, summary_watch.c watches its ranks
 * while the samples go by, summary_blob.c is its stored form); internal to
 * store/. */
#ifndef TL_SUMMARY_INTERNAL_H
#define TL_SUMMARY_INTERNAL_H

#include "store_internal.h"

enum {
  TL__WATCH_AFTER = 8192,         /* samples held before the windows are placed */
  TL__WATCH_COUNT_SPAN = 1 << 17, /* values a window counts one by one, at most */
  TL__WATCH_GATHER_MAX = 1 << 16, /* values a window collects, at most */
};

/* A window of whole buckets [lo, hi] whose samples are counted value by
 * value (count: hi - lo + 1 cells) or collected (vals), and the samples it
 * took. The last window may have hi = INT64_MAX: every sample from lo up. */
typedef struct {
  int64_t lo, hi;
  uint32_t *count;
  int64_t *vals;
  size_t n;
  int64_t taken;
  int full; /* it gave up: more than it may hold */
} tl__watch_window;

typedef struct {
  enum { TL__WATCH_HOLDING, TL__WATCH_WATCHING, TL__WATCH_BLIND } state;
  int64_t held[TL__WATCH_AFTER]; /* the first samples, while TL__WATCH_HOLDING */
  size_t nheld;
  int held_sorted;
  tl__watch_window win[TL_SUMMARY_PCTS];
  size_t nwin;
  uint8_t marked[TL_SUMMARY_BUCKETS]; /* the windows' buckets */
} tl__watch;

/* Forgets the samples and windows of the last session (keeping memory). */
void tl__watch_clear(tl__watch *w);
/* No window counts any more: the blocks settle every rank. */
void tl__watch_stop(tl__watch *w);
/* Places the windows from the held samples, then counts those in. */
void tl__watch_start(tl__watch *w);
/* The session's samples sorted when all total of them are held, or NULL. */
const int64_t *tl__watch_all_sorted(tl__watch *w, int64_t total);
/* The want-th of the inside samples in [lo, hi], from a window: 1 and
 * *out, or 0. */
int tl__watch_value(tl__watch *w, int64_t lo, int64_t hi, int64_t want, int64_t inside,
                    int64_t *out);

/* A sample in a marked bucket: counted, collected, or its window gives up. */
static inline void tl__watch_take(tl__watch *w, int64_t v) {
  for (size_t k = 0; k < w->nwin; k++) {
    tl__watch_window *x = &w->win[k];
    if (v < x->lo || v > x->hi || x->full)
      continue;
    if (x->count) {
      /* No cell can overflow while the window's total stays under its range. */
      if (++x->taken < (int64_t)UINT32_MAX)
        x->count[v - x->lo]++;
      else
        x->full = 1;
    } else if (x->n < TL__WATCH_GATHER_MAX) {
      x->vals[x->n++] = v;
    } else {
      x->full = 1;
    }
    return;
  }
}

#endif
