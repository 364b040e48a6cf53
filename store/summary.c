/* summary.c: a summary per session, so that a report can learn a session's
 * count, extremes, sums, histogram and own percentiles without reading its
 * samples.
 *
 * A summary is computed from the session's samples (one pass for the
 * count, extremes, sums and a log-linear histogram, then passes over only
 * the blocks that may hold the few buckets of the percentiles' ranks, which
 * the windows of "Watching the ranks" usually spare), and stored as a blob
 * with a version byte and a CRC32C (docs/schema.md) in session_summaries
 * when the session ends, is merged, imported or pushed, or by migration 3. Every read verifies the
 * checksum, the layout and the count against the session's sample_count; a session without one
 * (running, or damaged) has its summary computed on the fly. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

const double tl_summary_pcts[TL_SUMMARY_PCTS] = {50, 90, 99, 99.9, 99.99};

enum {
  SUB = 1 << TL_SUMMARY_SUB_BITS,
  HEAD = 8,                      /* version, layout, levels, 0, CRC32C */
  FIXED = HEAD + 3 * 8 + 2 * 16, /* + count, min, max, sum, sumsq */
  LEVELS = FIXED + TL_SUMMARY_PCTS * 8,
  COLLECT_MAX = 1 << 20,      /* values gathered at once for one rank */
  COUNT_SPAN_MAX = 1 << 21,   /* values counted one by one for one rank */
  NARROW = 4096,              /* linear buckets a wide range is cut into */
  MARKS = 1 << 16,            /* slots of the map of the ranges a pass reads */
  WATCH_AFTER = 8192,         /* samples held before the windows are placed */
  WATCH_COUNT_SPAN = 1 << 17, /* values a window counts one by one, at most */
  WATCH_GATHER_MAX = 1 << 16, /* values a window collects, at most */
};

void tl_summary_bucket_bounds(size_t b, int64_t *lo, int64_t *hi) {
  if (b < SUB) {
    *lo = *hi = (int64_t)b;
    return;
  }
  int e = (int)(b / SUB) + TL_SUMMARY_SUB_BITS - 1;
  uint64_t sub = b % SUB;
  uint64_t l = (SUB + sub) << (e - TL_SUMMARY_SUB_BITS);
  *lo = (int64_t)l;
  *hi = (int64_t)(l + ((uint64_t)1 << (e - TL_SUMMARY_SUB_BITS)) - 1);
}

/* ======================================================================== */
/* The summarizer's state                                                    */

/* One percentile's rank being resolved: it lies in [lo, hi], the want-th
 * (1-based) of the inside samples there; and what the current pass gathers
 * for it. A target whose range another open one has already (same) reads
 * that one's data. */
typedef struct {
  int64_t lo, hi, inside, want;
  int done;
  size_t same;
  enum { GATHER = 1, COUNT, SPLIT } mode;
  int64_t *vals;
  size_t n;
  int extra, sorted;
  uint32_t *count;
  int64_t *split;
  uint64_t width;
} rank_target;

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
} watch_window;

typedef struct {
  enum { HOLDING, WATCHING, BLIND } state;
  int64_t held[WATCH_AFTER]; /* the first samples, while HOLDING */
  size_t nheld;
  int held_sorted;
  watch_window win[TL_SUMMARY_PCTS];
  size_t nwin;
  uint8_t marked[TL_SUMMARY_BUCKETS]; /* the windows' buckets */
} watch;

struct tl__summarizer {
  tl_summary sum;
  int64_t *hist; /* TL_SUMMARY_BUCKETS, zero outside [hist_first, +hist_len) */
  rank_target t[TL_SUMMARY_PCTS];
  int64_t lo, hi; /* the span of the open targets' ranges, this pass */
  /* Which slots of 2^shift values from lo hold a range the pass reads:
   * most samples lie in none, and one look tells (slot `outside`, never
   * marked, for the samples beyond). */
  unsigned shift;
  size_t outside;
  uint8_t marks[MARKS + 1];
  int64_t decoded[TL_BLOCK_MAX];
  watch w; /* the ranks' windows while the samples go by */
};

/* ======================================================================== */
/* Watching the ranks                                                        */

/* The writer, import, merge and push see each sample of a session once, as
 * it is stored; a session's own percentiles would then need the blocks read
 * again (resolve_all), which costs about as much as encoding them. So the
 * first WATCH_AFTER samples are held, and they show about where each
 * percentile lies: from then on the samples in a window of whole buckets
 * around each place (wide enough for four standard errors of the held
 * samples' quantile) are counted value by value, the held ones included, and
 * above the highest the samples are collected. At the end a percentile whose
 * bucket lies in a window is read off it, exactly; one whose data moved
 * further, or whose window outgrew its bounded memory, reads the blocks as
 * before. A session of at most WATCH_AFTER samples is read off the held
 * ones. The answer is the same either way; only the reading differs. */

/* The windows' buckets marked, or cleared (an open window's up to the
 * last bucket). */
static void watch_mark(watch *w, uint8_t on) {
  for (size_t k = 0; k < w->nwin; k++) {
    size_t from = tl_summary_bucket(w->win[k].lo), to = tl_summary_bucket(w->win[k].hi);
    memset(w->marked + from, on, to - from + 1);
  }
}

/* No window counts any more (a batch was taken back, or memory ran out):
 * the blocks settle every rank. */
static void watch_stop(watch *w) {
  watch_mark(w, 0);
  w->state = BLIND;
}

static void watch_clear(watch *w) {
  watch_mark(w, 0);
  for (size_t k = 0; k < w->nwin; k++) {
    watch_window *x = &w->win[k];
    if (x->count)
      memset(x->count, 0, (size_t)((uint64_t)x->hi - (uint64_t)x->lo + 1) * sizeof *x->count);
    x->n = 0;
    x->taken = 0;
    x->full = 0;
  }
  w->state = HOLDING;
  w->nheld = 0;
  w->held_sorted = 0;
  w->nwin = 0;
}

/* A sample in a marked bucket: counted, collected, or its window gives up. */
static void watch_take(watch *w, int64_t v) {
  for (size_t k = 0; k < w->nwin; k++) {
    watch_window *x = &w->win[k];
    if (v < x->lo || v > x->hi || x->full)
      continue;
    if (x->count) {
      /* No cell can overflow while the window's total stays under its range. */
      if (++x->taken < (int64_t)UINT32_MAX)
        x->count[v - x->lo]++;
      else
        x->full = 1;
    } else if (x->n < WATCH_GATHER_MAX) {
      x->vals[x->n++] = v;
    } else {
      x->full = 1;
    }
    return;
  }
}

/* Places the windows from the held samples, then counts them in. Where the
 * memory for a window cannot be had, nothing is watched. */
static void watch_start(watch *w) {
  int64_t *v = w->held;
  size_t n = w->nheld;
  if (tl_sort_i64(v, n) != TL_OK) {
    watch_stop(w);
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
    watch_window *x = &w->win[k];
    uint64_t span = hi[k] == INT64_MAX ? UINT64_MAX : (uint64_t)hi[k] - (uint64_t)lo[k] + 1;
    x->lo = lo[k];
    x->hi = hi[k];
    /* Kept from an earlier session where they fit; counts are zero there. */
    if (span <= WATCH_COUNT_SPAN) {
      free(x->vals);
      x->vals = NULL;
      ok = x->count || (x->count = calloc(WATCH_COUNT_SPAN, sizeof *x->count));
    } else {
      free(x->count);
      x->count = NULL;
      ok = x->vals || (x->vals = malloc(WATCH_GATHER_MAX * sizeof *x->vals));
    }
    w->nwin = k + 1;
  }
  if (!ok) {
    watch_stop(w);
    return;
  }
  watch_mark(w, 1);
  w->state = WATCHING;
  for (size_t i = 0; i < n; i++)
    if (w->marked[tl_summary_bucket(v[i])])
      watch_take(w, v[i]);
}

/* The want-th (1-based) of the inside samples in [lo, hi] of the total a
 * session holds, from the held samples or a window that holds that range
 * whole: 1 and the value in *out, or 0 where none does (or its samples do
 * not add up to inside, which the blocks then settle). */
static int watch_value(watch *w, int64_t total, int64_t lo, int64_t hi, int64_t want,
                       int64_t inside, int64_t *out) {
  if (w->state == HOLDING && (int64_t)w->nheld == total) { /* every sample is held */
    if (!w->held_sorted && tl_sort_i64(w->held, w->nheld) != TL_OK)
      return 0;
    w->held_sorted = 1;
    size_t first = 0;
    while (first < w->nheld && w->held[first] < lo)
      first++;
    size_t end = first;
    while (end < w->nheld && w->held[end] <= hi)
      end++;
    if ((int64_t)(end - first) != inside)
      return 0;
    *out = w->held[first + (size_t)want - 1];
    return 1;
  }
  if (w->state != WATCHING)
    return 0;
  for (size_t k = 0; k < w->nwin; k++) {
    watch_window *x = &w->win[k];
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

/* ======================================================================== */
/* Computing                                                                 */

static void target_free(rank_target *x) {
  free(x->vals);
  free(x->count);
  free(x->split);
  x->vals = NULL;
  x->count = NULL;
  x->split = NULL;
}

tl__summarizer *tl__summarizer_new(void) {
  tl__summarizer *z = calloc(1, sizeof *z);
  if (z && !(z->hist = calloc(TL_SUMMARY_BUCKETS, sizeof *z->hist))) {
    free(z);
    z = NULL;
  }
  if (z)
    watch_clear(&z->w);
  return z;
}

void tl__summarizer_free(tl__summarizer *z) {
  if (!z)
    return;
  free(z->hist);
  for (size_t k = 0; k < TL_SUMMARY_PCTS; k++) {
    target_free(&z->t[k]);
    free(z->w.win[k].count);
    free(z->w.win[k].vals);
  }
  free(z);
}

/* Every sample added lies between the extremes, so their buckets bound
 * what is to clear, whether or not the summary was finished. */
static void clear(tl__summarizer *z) {
  if (z->sum.count) {
    size_t from = tl_summary_bucket(z->sum.min_ns), to = tl_summary_bucket(z->sum.max_ns);
    memset(z->hist + from, 0, (to - from + 1) * sizeof *z->hist);
  }
  memset(&z->sum, 0, sizeof z->sum);
  watch_clear(&z->w);
}

/* Adds n samples to the count, extremes, sums and histogram, and hands the
 * few in a watched bucket to their window: noted in the histogram's loop
 * without a branch (one look-up a sample), taken after it. */
static void add_samples(tl__summarizer *z, const int64_t *v, size_t n) {
  tl_summary *m = &z->sum;
  watch *w = &z->w;
  const uint8_t *marked = w->marked;
  int64_t *hist = z->hist;
  int64_t lo = m->count ? m->min_ns : v[0], hi = m->count ? m->max_ns : v[0];
  unsigned __int128 sum = 0, sumsq = 0;
  uint16_t hit[TL_BLOCK_MAX + 1];
  for (size_t at = 0; at < n; at += TL_BLOCK_MAX) {
    const int64_t *p = v + at;
    size_t len = n - at < TL_BLOCK_MAX ? n - at : TL_BLOCK_MAX, hits = 0;
    for (size_t i = 0; i < len; i++) {
      int64_t x = p[i];
      lo = x < lo ? x : lo;
      hi = x > hi ? x : hi;
      sum += (uint64_t)x;
      sumsq += (unsigned __int128)(uint64_t)x * (uint64_t)x;
    }
    /* Apart, so that neither loop runs out of registers. */
    for (size_t i = 0; i < len; i++) {
      int64_t x = p[i];
      size_t b = tl_summary_bucket(x);
      hist[b]++;
      hit[hits] = (uint16_t)i;
      hits += marked[b];
    }
    for (size_t k = 0; k < hits; k++)
      watch_take(w, p[hit[k]]);
  }
  m->min_ns = lo;
  m->max_ns = hi;
  m->count += (int64_t)n;
  m->sum += sum;
  m->sumsq += sumsq;
}

static int first_pass(void *arg, const int64_t *v, size_t n) {
  tl__summarizer *z = arg;
  watch *w = &z->w;
  if (w->state == HOLDING && n) {
    size_t take = WATCH_AFTER - w->nheld < n ? WATCH_AFTER - w->nheld : n;
    memcpy(w->held + w->nheld, v, take * sizeof *v);
    w->nheld += take;
    add_samples(z, v, take);
    v += take;
    n -= take;
    if (w->nheld == WATCH_AFTER)
      watch_start(w);
  }
  if (n)
    add_samples(z, v, n);
  return 0;
}

/* Marks the slots of the ranges the next pass reads (the open targets that
 * read for themselves). */
static void marks_setup(tl__summarizer *z) {
  uint64_t span = (uint64_t)z->hi - (uint64_t)z->lo;
  z->shift = 0;
  while ((span >> z->shift) >= MARKS)
    z->shift++;
  z->outside = (size_t)(span >> z->shift) + 1;
  memset(z->marks, 0, z->outside + 1);
  for (size_t k = 0; k < TL_SUMMARY_PCTS; k++) {
    const rank_target *t = &z->t[k];
    if (t->done || t->same != SIZE_MAX)
      continue;
    uint64_t to = ((uint64_t)t->hi - (uint64_t)z->lo) >> z->shift;
    for (uint64_t at = ((uint64_t)t->lo - (uint64_t)z->lo) >> z->shift; at <= to; at++)
      z->marks[at] = 1;
  }
}

static int gather(void *arg, const int64_t *v, size_t n) {
  tl__summarizer *z = arg;
  const uint64_t lo = (uint64_t)z->lo, outside = z->outside;
  const unsigned shift = z->shift;
  const uint8_t *marks = z->marks;
  for (size_t i = 0; i < n; i++) {
    /* Without a branch but for the rare sample in a marked slot: one past
     * the range reads slot `outside` or the last one, and the exact test
     * below tells. */
    uint64_t slot = ((uint64_t)v[i] - lo) >> shift;
    if (!marks[slot < outside ? slot : outside])
      continue;
    int64_t x = v[i];
    for (size_t k = 0; k < TL_SUMMARY_PCTS; k++) {
      rank_target *t = &z->t[k];
      if (t->done || t->same != SIZE_MAX || x < t->lo || x > t->hi)
        continue;
      if (t->mode == GATHER) {
        if (t->n < (size_t)t->inside)
          t->vals[t->n++] = x;
        else
          t->extra = 1; /* more than the first pass saw */
      } else if (t->mode == COUNT) {
        t->count[x - t->lo]++;
      } else {
        t->split[(uint64_t)(x - t->lo) / t->width]++;
      }
    }
  }
  return 0;
}

typedef struct {
  tl_store *store;
  tl__summarizer *z;
  tl_samples_cb fn;
} rescan;

static int overlaps(void *arg, const tl_block *b) {
  const tl__summarizer *z = ((rescan *)arg)->z;
  return b->max_ns >= z->lo && b->min_ns <= z->hi;
}

static int rescan_block(void *arg, const tl_block *b) {
  rescan *r = arg;
  const char *why;
  if (tl_block_decode(b, r->z->decoded, &why))
    return tl__block_fail(r->store, b, why);
  return r->fn(r->z, r->z->decoded, (size_t)b->count);
}

static int by_value(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static int changed(tl_store *s, int64_t session_id) {
  return tl__store_fail(s, TL_ECORRUPT, "%s: session %lld changed while it was summarised", s->path,
                        (long long)session_id);
}

/* How target x reads its range in the next pass: its samples gathered,
 * counted value by value, or its span cut into NARROW linear parts. */
static int target_setup(rank_target *x) {
  uint64_t span = (uint64_t)x->hi - (uint64_t)x->lo + 1;
  x->n = 0;
  x->extra = x->sorted = 0;
  target_free(x);
  /* Counting takes less memory than gathering where many samples share few
   * values (a 50 ms session holds most of its samples in one bucket), and
   * needs no sort. */
  if (span <= COUNT_SPAN_MAX && span * sizeof *x->count < (uint64_t)x->inside * sizeof *x->vals) {
    x->mode = COUNT;
    return (x->count = calloc(span, sizeof *x->count)) ? TL_OK : TL_ENOMEM;
  }
  if (x->inside <= COLLECT_MAX) {
    x->mode = GATHER;
    return (x->vals = malloc((size_t)x->inside * sizeof *x->vals + 1)) ? TL_OK : TL_ENOMEM;
  }
  if (span <= COUNT_SPAN_MAX) {
    x->mode = COUNT;
    return (x->count = calloc(span, sizeof *x->count)) ? TL_OK : TL_ENOMEM;
  }
  x->mode = SPLIT;
  x->width = (span + NARROW - 1) / NARROW;
  return (x->split = calloc(NARROW, sizeof *x->split)) ? TL_OK : TL_ENOMEM;
}

/* After a pass: x's value from what r (x itself, or the target whose range
 * it shares) saw, or a narrower range for the next pass. */
static int target_resolve(rank_target *x, rank_target *r) {
  int64_t cum = 0;
  if (r->mode == GATHER) {
    if ((int64_t)r->n != r->inside || r->extra)
      return TL_ECORRUPT;
    if (!r->sorted) /* once, by the first to resolve */
      qsort(r->vals, r->n, sizeof *r->vals, by_value);
    r->sorted = 1;
    x->lo = x->hi = r->vals[x->want - 1];
  } else if (r->mode == COUNT) {
    uint64_t span = (uint64_t)r->hi - (uint64_t)r->lo + 1, at = span;
    for (uint64_t i = 0; i < span; i++)
      if ((cum += r->count[i]) >= x->want && at == span)
        at = i;
    if (cum != r->inside)
      return TL_ECORRUPT;
    x->lo = x->hi = r->lo + (int64_t)at;
  } else {
    for (size_t b = 0; b < NARROW; b++) {
      if (cum + r->split[b] >= x->want) {
        int64_t lo = r->lo + (int64_t)(b * r->width), hi = lo + (int64_t)r->width - 1;
        x->hi = hi < r->hi ? hi : r->hi;
        x->lo = lo;
        x->want -= cum;
        x->inside = r->split[b];
        return TL_OK;
      }
      cum += r->split[b];
    }
    return TL_ECORRUPT;
  }
  return TL_OK;
}

/* The exact values of every target: each pass reads only the blocks that
 * overlap an open range, for all of them at once (timer data needs one). */
static int resolve_all(tl_store *s, tl__summarizer *z, int64_t session_id) {
  int err = TL_OK;
  for (;;) {
    size_t open = 0;
    for (size_t k = 0; k < TL_SUMMARY_PCTS && !err; k++) {
      rank_target *x = &z->t[k];
      x->same = SIZE_MAX;
      if (x->done)
        continue;
      if (x->lo == x->hi) {
        x->done = 1;
        continue;
      }
      z->lo = open && z->lo < x->lo ? z->lo : x->lo;
      z->hi = open && z->hi > x->hi ? z->hi : x->hi;
      open++;
      for (size_t j = 0; j < k && x->same == SIZE_MAX; j++)
        if (!z->t[j].done && z->t[j].same == SIZE_MAX && z->t[j].lo == x->lo && z->t[j].hi == x->hi)
          x->same = j;
      if (x->same == SIZE_MAX)
        err = target_setup(x);
    }
    if (err || !open)
      break;
    marks_setup(z);
    rescan r = {s, z, gather};
    if ((err = tl_store_scan_blocks(s, &session_id, 1, overlaps, rescan_block, &r)))
      break;
    /* Backwards: a shared range is narrowed for its owner only after the
     * targets that read it. */
    for (size_t k = TL_SUMMARY_PCTS; k-- > 0 && !err;) {
      rank_target *x = &z->t[k];
      if (!x->done && target_resolve(x, x->same == SIZE_MAX ? x : &z->t[x->same]))
        err = changed(s, session_id);
    }
  }
  for (size_t k = 0; k < TL_SUMMARY_PCTS; k++)
    target_free(&z->t[k]);
  return err;
}

void tl__summary_begin(tl__summarizer *z) { clear(z); }

void tl__summary_add(tl__summarizer *z, const int64_t *v, size_t n) {
  if (n)
    first_pass(z, v, n);
}

void tl__summary_totals(const tl__summarizer *z, tl_summary *saved) { *saved = z->sum; }

void tl__summary_take_back(tl__summarizer *z, const tl_summary *saved, const int64_t *v, size_t n) {
  for (size_t i = 0; i < n; i++)
    z->hist[tl_summary_bucket(v[i])]--;
  z->sum = *saved;
  /* Those samples come again: the windows would count them twice. */
  watch_stop(&z->w);
}

int tl__summary_compute(tl_store *s, tl__summarizer *z, int64_t session_id,
                        const tl_summary **out) {
  clear(z);
  rescan r = {s, z, first_pass};
  int err = tl_store_scan_blocks(s, &session_id, 1, NULL, rescan_block, &r);
  return err ? err : tl__summary_finish(s, z, session_id, out);
}

int tl__summary_finish(tl_store *s, tl__summarizer *z, int64_t session_id, const tl_summary **out) {
  int err = TL_OK;
  tl_summary *m = &z->sum;
  if (!m->count)
    m->hist_first = m->hist_len = 0;
  else {
    m->hist_first = tl_summary_bucket(m->min_ns);
    m->hist_len = tl_summary_bucket(m->max_ns) - m->hist_first + 1;
  }
  m->hist = z->hist + m->hist_first;
  for (size_t k = 0; k < TL_SUMMARY_PCTS; k++) {
    rank_target *x = &z->t[k];
    x->done = !m->count;
    int64_t rank = m->count ? tl_rank(tl_summary_pcts[k], m->count) : 0, cum = 0;
    for (size_t b = 0; b < m->hist_len; b++) {
      if (cum + m->hist[b] >= rank) {
        tl_summary_bucket_bounds(m->hist_first + b, &x->lo, &x->hi);
        x->lo = x->lo > m->min_ns ? x->lo : m->min_ns;
        x->hi = x->hi < m->max_ns ? x->hi : m->max_ns;
        x->want = rank - cum;
        x->inside = m->hist[b];
        break;
      }
      cum += m->hist[b];
    }
    int64_t v;
    if (!x->done && watch_value(&z->w, m->count, x->lo, x->hi, x->want, x->inside, &v))
      x->lo = x->hi = v;
  }
  err = resolve_all(s, z, session_id);
  for (size_t k = 0; k < TL_SUMMARY_PCTS && m->count; k++)
    m->pct_ns[k] = z->t[k].lo;
  *out = m;
  return err;
}

/* ======================================================================== */
/* The blob                                                                  */

static void put64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static size_t put_varint(uint8_t *p, uint64_t v) {
  size_t n = 0;
  while (v >= 0x80) {
    p[n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  p[n++] = (uint8_t)v;
  return n;
}

/* A varint at *p (before end) into *v; 0 when it runs past end or is longer
 * than 10 bytes. */
static int get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
  uint64_t x = 0;
  for (int shift = 0; shift < 70 && *p < end; shift += 7) {
    uint8_t c = *(*p)++;
    if (shift == 63 && c > 1)
      return 0;
    x |= (uint64_t)(c & 0x7f) << shift;
    if (!(c & 0x80)) {
      *v = x;
      return 1;
    }
  }
  return 0;
}

static uint32_t checksum(const uint8_t *blob, size_t len) {
  return tl_crc32c(tl_crc32c(0, blob, 4), blob + HEAD, len - HEAD);
}

size_t tl__summary_bound(const tl_summary *m) {
  size_t nz = 0;
  for (size_t b = 0; b < m->hist_len; b++)
    nz += m->hist[b] != 0;
  return LEVELS + 8 + nz * 20;
}

size_t tl__summary_encode(const tl_summary *m, uint8_t *out) {
  out[0] = TL_SUMMARY_VERSION;
  out[1] = TL_SUMMARY_SUB_BITS;
  out[2] = TL_SUMMARY_PCTS;
  out[3] = 0;
  put64(out + 8, (uint64_t)m->count);
  put64(out + 16, (uint64_t)m->min_ns);
  put64(out + 24, (uint64_t)m->max_ns);
  put64(out + 32, (uint64_t)m->sum);
  put64(out + 40, (uint64_t)(m->sum >> 64));
  put64(out + 48, (uint64_t)m->sumsq);
  put64(out + 56, (uint64_t)(m->sumsq >> 64));
  for (size_t k = 0; k < TL_SUMMARY_PCTS; k++)
    put64(out + FIXED + 8 * k, (uint64_t)m->pct_ns[k]);
  size_t at = LEVELS, nz = 0;
  uint8_t *count_at = out + at;
  at += 4;
  size_t prev = m->hist_first;
  for (size_t b = 0; b < m->hist_len; b++) {
    if (!m->hist[b])
      continue;
    nz++;
    at += put_varint(out + at, m->hist_first + b - prev);
    at += put_varint(out + at, (uint64_t)m->hist[b]);
    prev = m->hist_first + b;
  }
  for (int i = 0; i < 4; i++)
    count_at[i] = (uint8_t)(nz >> (8 * i));
  uint32_t crc = checksum(out, at);
  for (int i = 0; i < 4; i++)
    out[4 + i] = (uint8_t)(crc >> (8 * i));
  return at;
}

int tl__summary_decode(const uint8_t *blob, size_t len, int64_t *hist, tl_summary *m,
                       const char **why) {
  memset(m, 0, sizeof *m);
  *why = "too short";
  if (len < LEVELS + 4)
    return TL_ECORRUPT;
  *why = "unknown summary version";
  if (blob[0] != TL_SUMMARY_VERSION || blob[1] != TL_SUMMARY_SUB_BITS ||
      blob[2] != TL_SUMMARY_PCTS || blob[3] != 0)
    return TL_ECORRUPT;
  *why = "checksum mismatch";
  uint32_t crc = (uint32_t)blob[4] | (uint32_t)blob[5] << 8 | (uint32_t)blob[6] << 16 |
                 (uint32_t)blob[7] << 24;
  if (crc != checksum(blob, len))
    return TL_ECORRUPT;
  *why = "impossible values";
  m->count = (int64_t)get64(blob + 8);
  m->min_ns = (int64_t)get64(blob + 16);
  m->max_ns = (int64_t)get64(blob + 24);
  m->sum = (unsigned __int128)get64(blob + 40) << 64 | get64(blob + 32);
  m->sumsq = (unsigned __int128)get64(blob + 56) << 64 | get64(blob + 48);
  for (size_t k = 0; k < TL_SUMMARY_PCTS; k++)
    m->pct_ns[k] = (int64_t)get64(blob + FIXED + 8 * k);
  if (m->count < 0 || m->min_ns < 0 || m->max_ns < m->min_ns)
    return TL_ECORRUPT;
  for (size_t k = 0; k < TL_SUMMARY_PCTS; k++)
    if (m->count ? m->pct_ns[k] < (k ? m->pct_ns[k - 1] : m->min_ns) || m->pct_ns[k] > m->max_ns
                 : m->pct_ns[k] != 0)
      return TL_ECORRUPT;
  const uint8_t *p = blob + LEVELS + 4, *end = blob + len;
  uint64_t nz = (uint64_t)blob[LEVELS] | (uint64_t)blob[LEVELS + 1] << 8 |
                (uint64_t)blob[LEVELS + 2] << 16 | (uint64_t)blob[LEVELS + 3] << 24;
  *why = "bad histogram";
  if (!m->count) {
    m->hist = hist;
    return nz == 0 && p == end && m->min_ns == 0 && m->max_ns == 0 ? TL_OK : TL_ECORRUPT;
  }
  m->hist_first = tl_summary_bucket(m->min_ns);
  m->hist_len = tl_summary_bucket(m->max_ns) - m->hist_first + 1;
  m->hist = hist;
  memset(hist, 0, m->hist_len * sizeof *hist);
  uint64_t at = m->hist_first, total = 0;
  for (uint64_t i = 0; i < nz; i++) {
    uint64_t gap, c;
    if (!get_varint(&p, end, &gap) || !get_varint(&p, end, &c) || (i && !gap) || !c ||
        c > (uint64_t)m->count - total || gap >= m->hist_len ||
        at + gap >= m->hist_first + m->hist_len)
      return TL_ECORRUPT;
    at += gap;
    if (i == 0 && at != m->hist_first)
      return TL_ECORRUPT;
    hist[at - m->hist_first] = (int64_t)c;
    total += c;
  }
  if (p != end || total != (uint64_t)m->count || at != m->hist_first + m->hist_len - 1)
    return TL_ECORRUPT;
  return TL_OK;
}

int tl__summary_equal(const tl_summary *a, const tl_summary *b) {
  if (a->count != b->count || a->min_ns != b->min_ns || a->max_ns != b->max_ns ||
      a->sum != b->sum || a->sumsq != b->sumsq || a->hist_first != b->hist_first ||
      a->hist_len != b->hist_len)
    return 0;
  for (size_t k = 0; k < TL_SUMMARY_PCTS; k++)
    if (a->pct_ns[k] != b->pct_ns[k])
      return 0;
  return a->hist_len == 0 || memcmp(a->hist, b->hist, a->hist_len * sizeof *a->hist) == 0;
}

/* ======================================================================== */
/* Reading stored summaries                                                  */

typedef struct {
  tl_store *s;
  tl__summarizer *z;
  const int64_t *ids;
  tl_summary_cb fn;
  void *ctx;
} summaries_ctx;

/* One session's stored summary, verified, or (none stored) computed. */
static int one_summary(void *arg, size_t i, const char *uuid, int64_t sample_count,
                       const uint8_t *blob, size_t len) {
  summaries_ctx *c = arg;
  tl__summarizer *z = c->z;
  if (!blob) {
    const tl_summary *m;
    int err = tl__summary_compute(c->s, z, c->ids[i], &m);
    return err ? err : c->fn(c->ctx, i, m);
  }
  const char *why;
  tl_summary stored;
  int bad = tl__summary_decode(blob, len, z->hist, &stored, &why);
  if (!bad && stored.count != sample_count) {
    bad = TL_ECORRUPT;
    why = "its count differs from the session's";
  }
  int err = bad ? tl__store_fail(c->s, TL_ECORRUPT, "%s: session %.36s: summary: %s" TL__CHECK_HINT,
                                 c->s->path, uuid, why)
                : c->fn(c->ctx, i, &stored);
  if (bad) /* for tlreport --skip-damaged */
    c->s->damaged_id = c->ids[i];
  memset(z->hist, 0, stored.hist_len * sizeof *z->hist);
  return err;
}

int tl_store_summaries(tl_store *s, const int64_t *ids, size_t n, tl_summary_cb fn, void *ctx) {
  summaries_ctx c = {s, tl__summarizer_new(), ids, fn, ctx};
  if (!c.z)
    return tl__store_fail(s, TL_ENOMEM, "out of memory reading summaries");
  int err = s->ops->summary_blobs(s, ids, n, one_summary, &c);
  tl__summarizer_free(c.z);
  return err;
}

typedef struct {
  tl_store *s;
  tl__summarizer *z;
  int64_t *hist;
  const int64_t *ids;
  tl_problem_cb report;
  void *ctx;
  int *problems;
} check_ctx;

static int check_one(void *arg, size_t i, const char *uuid, int64_t sample_count,
                     const uint8_t *blob, size_t len) {
  check_ctx *c = arg;
  if (!blob)
    return TL_OK; /* running, damaged blocks, or from before summaries */
  const char *why = NULL;
  tl_summary stored;
  const tl_summary *fresh;
  int err = TL_OK;
  if (tl__summary_decode(blob, len, c->hist, &stored, &why) == TL_OK) {
    why = NULL;
    if (stored.count != sample_count)
      why = "its count differs from the session's";
    else if ((err = tl__summary_compute(c->s, c->z, c->ids[i], &fresh)) == TL_ECORRUPT)
      err = TL_OK; /* the blocks' problem, which the check of samples reports */
    else if (!err && !tl__summary_equal(&stored, fresh))
      why = "it differs from the session's samples";
  }
  if (!err)
    c->s->errmsg[0] = '\0';
  if (why) {
    char msg[200];
    snprintf(msg, sizeof msg, "session %.36s: summary: %s", uuid, why);
    if (c->report)
      c->report(c->ctx, msg);
    (*c->problems)++;
  }
  return err;
}

int tl__check_summaries(tl_store *s, tl_problem_cb report, void *ctx, int *problems) {
  tl_filter f;
  tl_filter_init(&f);
  tl_session_list list;
  int err = tl_store_sessions(s, &f, &list);
  if (err)
    return err;
  check_ctx c = {s,
                 tl__summarizer_new(),
                 malloc(TL_SUMMARY_BUCKETS * sizeof(int64_t)),
                 NULL,
                 report,
                 ctx,
                 problems};
  int64_t *ids = malloc(list.count * sizeof *ids + 1);
  if (!c.z || !c.hist || !ids)
    err = tl__store_fail(s, TL_ENOMEM, "out of memory checking summaries");
  for (size_t i = 0; !err && i < list.count; i++)
    ids[i] = list.items[i].id;
  c.ids = ids;
  if (!err)
    err = s->ops->summary_blobs(s, ids, list.count, check_one, &c);
  free(ids);
  free(c.hist);
  tl__summarizer_free(c.z);
  tl_session_list_free(&list);
  return err;
}

/* ======================================================================== */
/* A copy's summary                                                          */

/* What a copy reads of the samples to verify them gives count, extremes and
 * sum without the cost of a summary; a stored one is held against them. */
static void tally(tl_summary *t, const int64_t *v, size_t n) {
  if (!n)
    return;
  int64_t lo = t->count ? t->min_ns : v[0], hi = t->count ? t->max_ns : v[0];
  unsigned __int128 sum = 0;
  for (size_t i = 0; i < n; i++) {
    lo = v[i] < lo ? v[i] : lo;
    hi = v[i] > hi ? v[i] : hi;
    sum += (uint64_t)v[i];
  }
  t->min_ns = lo;
  t->max_ns = hi;
  t->count += (int64_t)n;
  t->sum += sum;
}

static int agrees(const tl_summary *stored, const tl_summary *tally) {
  return stored->count == tally->count && stored->min_ns == tally->min_ns &&
         stored->max_ns == tally->max_ns && stored->sum == tally->sum;
}

struct tl__summary_pick {
  tl__summarizer *z; /* makes one, fed the samples when none is kept */
  int64_t *hist;     /* TL_SUMMARY_BUCKETS, for decoding the stored one */
  tl_summary stored; /* decoded, when kept */
  tl_summary tally;  /* of the samples added, when kept */
  int kept;          /* the stored one decodes: it goes if it agrees */
  uint8_t *blob;     /* the stored one's bytes, then those finish gives */
  size_t len, cap;
};

tl__summary_pick *tl__summary_pick_new(void) {
  tl__summary_pick *p = calloc(1, sizeof *p);
  if (p && (!(p->z = tl__summarizer_new()) ||
            !(p->hist = malloc(TL_SUMMARY_BUCKETS * sizeof *p->hist)))) {
    tl__summary_pick_free(p);
    p = NULL;
  }
  return p;
}

void tl__summary_pick_free(tl__summary_pick *p) {
  if (!p)
    return;
  tl__summarizer_free(p->z);
  free(p->hist);
  free(p->blob);
  free(p);
}

/* Room for len bytes in p->blob; 0 when out of memory. */
static int blob_room(tl__summary_pick *p, size_t len) {
  if (len <= p->cap)
    return 1;
  uint8_t *b = realloc(p->blob, len);
  if (!b)
    return 0;
  p->blob = b;
  p->cap = len;
  return 1;
}

/* The stored summary, copied (the source's row is gone once this returns)
 * and decoded: kept when it decodes. */
static int stored_blob(void *ctx, size_t index, const char *uuid, int64_t sample_count,
                       const uint8_t *blob, size_t len) {
  (void)index;
  (void)uuid;
  (void)sample_count;
  tl__summary_pick *p = ctx;
  const char *why;
  if (!blob || tl__summary_decode(blob, len, p->hist, &p->stored, &why) != TL_OK)
    return TL_OK;
  if (!blob_room(p, len))
    return TL_ENOMEM;
  memcpy(p->blob, blob, len);
  p->len = len;
  p->kept = 1;
  return TL_OK;
}

int tl__summary_pick_begin(tl__summary_pick *p, tl_store *src, int64_t session_id) {
  p->kept = 0;
  memset(&p->tally, 0, sizeof p->tally);
  int err = src->ops->summary_blobs(src, &session_id, 1, stored_blob, p);
  if (err == TL_ENOMEM)
    return tl__store_fail(src, err, "out of memory reading a summary");
  if (err == TL_OK && !p->kept)
    tl__summary_begin(p->z);
  return err;
}

void tl__summary_pick_add(tl__summary_pick *p, const int64_t *v, size_t n) {
  if (p->kept)
    tally(&p->tally, v, n);
  else
    tl__summary_add(p->z, v, n);
}

int tl__summary_pick_finish(tl__summary_pick *p, tl_store *src, int64_t session_id,
                            const uint8_t **blob, size_t *len) {
  if (p->kept && agrees(&p->stored, &p->tally)) {
    *blob = p->blob;
    *len = p->len;
    return TL_OK;
  }
  /* Made from the samples: their first pass was the copy's, unless a stored
   * one that disagrees with them had it tallied only, and then it is read
   * again; the percentiles come from the watched windows, or else from the
   * blocks that hold their ranks. */
  const tl_summary *m;
  int err = p->kept ? tl__summary_compute(src, p->z, session_id, &m)
                    : tl__summary_finish(src, p->z, session_id, &m);
  if (err)
    return err;
  if (!blob_room(p, tl__summary_bound(m)))
    return tl__store_fail(src, TL_ENOMEM, "out of memory summarising a session");
  p->len = tl__summary_encode(m, p->blob);
  p->kept = 0;
  *blob = p->blob;
  *len = p->len;
  return TL_OK;
}
