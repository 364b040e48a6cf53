/* summary.c: the numbers of tlcollect's closing sentence (count, p50, p90,
 * p99 and max, nearest rank, exact) in bounded memory, from samples that can
 * be read again: the session as stored (a dry run's in its scratch database).
 *
 * A first pass counts the samples in a log-linear histogram: one bucket per
 * value below 256 ns, 128 buckets per power of two above (each under 1 % of
 * its values wide). A rank whose bucket holds a single value is done. For
 * the others each further pass looks only inside the rank's bucket: once it
 * holds few enough samples they are collected and sorted; until then they
 * are counted in SPLIT_BINS equal bins, which narrows the range by that
 * factor per pass (at most five passes for any int64 range). Memory stays
 * under a few MiB whatever the number of samples. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect_internal.h"

enum {
  EXACT_BELOW = 256, /* one bucket per value below this */
  SUB = 128,         /* buckets per power of two above it */
  BUCKETS = EXACT_BELOW + (63 - 8) * SUB,
  COLLECT_MAX = 1 << 18, /* samples of one rank's range collected and sorted */
  SPLIT_BINS = 4096,
};

static int bucket_of(int64_t v) {
  if (v < EXACT_BELOW)
    return (int)v;
  int e = 63 - __builtin_clzll((unsigned long long)v); /* 8..62 */
  return EXACT_BELOW + (e - 8) * SUB + (int)((v >> (e - 7)) - SUB);
}

static void bucket_range(int b, int64_t *lo, int64_t *hi) {
  if (b < EXACT_BELOW) {
    *lo = *hi = b;
    return;
  }
  int e = 8 + (b - EXACT_BELOW) / SUB, shift = e - 7;
  *lo = (int64_t)(SUB + (b - EXACT_BELOW) % SUB) << shift;
  *hi = *lo + (((int64_t)1 << shift) - 1);
}

/* One rank being narrowed down: the k-th smallest of the cnt samples in
 * [lo, hi]. */
typedef struct {
  int64_t lo, hi, k, cnt;
  int done;
  int64_t value;
  int64_t width; /* of a bin, when splitting */
  int64_t *vals; /* collected, when cnt <= COLLECT_MAX */
  int64_t nvals;
  int64_t *bins; /* SPLIT_BINS counts, when splitting */
  int overflow;  /* more samples in the range than counted before */
} target;

typedef struct {
  int64_t *hist; /* BUCKETS counts (first pass) */
  int64_t n, max;
  target *t;
  size_t nt;
} pass_ctx;

static int count_pass(void *ctx, const int64_t *v, size_t n) {
  pass_ctx *p = ctx;
  for (size_t i = 0; i < n; i++) {
    int64_t x = v[i] < 0 ? 0 : v[i];
    p->hist[bucket_of(x)]++;
    if (x > p->max)
      p->max = x;
  }
  p->n += (int64_t)n;
  return 0;
}

static int narrow_pass(void *ctx, const int64_t *v, size_t n) {
  pass_ctx *p = ctx;
  for (size_t j = 0; j < p->nt; j++) {
    target *t = &p->t[j];
    if (t->done)
      continue;
    for (size_t i = 0; i < n; i++) {
      if (v[i] < t->lo || v[i] > t->hi)
        continue;
      if (t->vals) {
        if (t->nvals == t->cnt) {
          t->overflow = 1;
          continue;
        }
        t->vals[t->nvals++] = v[i];
      } else {
        t->bins[(v[i] - t->lo) / t->width]++;
      }
    }
  }
  return 0;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Prepares the next pass for t: collect or split. */
static int plan(target *t) {
  if (t->lo == t->hi) {
    t->done = 1;
    t->value = t->lo;
    return TL_OK;
  }
  if (t->cnt <= COLLECT_MAX) {
    t->vals = malloc((size_t)t->cnt * sizeof *t->vals);
    t->nvals = 0;
    return t->vals ? TL_OK : TL_ENOMEM;
  }
  t->width = (t->hi - t->lo) / SPLIT_BINS + 1;
  if (!t->bins)
    t->bins = malloc(SPLIT_BINS * sizeof *t->bins);
  if (!t->bins)
    return TL_ENOMEM;
  memset(t->bins, 0, SPLIT_BINS * sizeof *t->bins);
  return TL_OK;
}

/* Takes in what the pass found; TL_ECORRUPT when the samples read differ
 * from those of the first pass. */
static int settle(target *t) {
  if (t->vals) {
    int err = TL_OK;
    if (t->overflow || t->nvals != t->cnt) {
      err = TL_ECORRUPT;
    } else {
      qsort(t->vals, (size_t)t->nvals, sizeof *t->vals, cmp_i64);
      t->value = t->vals[t->k - 1];
      t->done = 1;
    }
    free(t->vals);
    t->vals = NULL;
    return err;
  }
  int64_t below = 0, total = 0;
  for (int b = 0; b < SPLIT_BINS; b++)
    total += t->bins[b];
  if (total != t->cnt)
    return TL_ECORRUPT;
  for (int b = 0; b < SPLIT_BINS; b++) {
    if (below + t->bins[b] >= t->k) {
      t->lo += (int64_t)b * t->width;
      if (t->hi - t->lo >= t->width)
        t->hi = t->lo + t->width - 1;
      t->k -= below;
      t->cnt = t->bins[b];
      return TL_OK;
    }
    below += t->bins[b];
  }
  return TL_ECORRUPT;
}

int tl__summarize(tl__replay_fn replay, void *src, tl_collect_result *r, char *err, size_t errlen) {
  static const int pcts[] = {50, 90, 99};
  enum { NT = sizeof pcts / sizeof pcts[0] };
  r->samples = r->p50_ns = r->p90_ns = r->p99_ns = r->max_ns = 0;
  target t[NT];
  memset(t, 0, sizeof t);
  pass_ctx p = {.hist = calloc(BUCKETS, sizeof(int64_t)), .t = t, .nt = NT};
  if (!p.hist) {
    snprintf(err, errlen, "out of memory summarizing the samples");
    return TL_ENOMEM;
  }
  int rc = replay(src, count_pass, &p);
  for (size_t j = 0; j < NT && rc == TL_OK && p.n > 0; j++) {
    int64_t rank = tl_rank(pcts[j], p.n), below = 0;
    int b = 0;
    while (below + p.hist[b] < rank)
      below += p.hist[b++];
    bucket_range(b, &t[j].lo, &t[j].hi);
    t[j].k = rank - below;
    t[j].cnt = p.hist[b];
  }
  free(p.hist);
  p.hist = NULL;
  if (rc) {
    snprintf(err, errlen, "reading the samples back failed");
    return rc;
  }
  for (int passes = 0; p.n > 0; passes++) {
    int open = 0;
    for (size_t j = 0; j < NT && rc == TL_OK; j++)
      if (!t[j].done && (rc = plan(&t[j])) == TL_OK)
        open |= !t[j].done;
    if (rc || !open || passes > 16)
      break;
    rc = replay(src, narrow_pass, &p);
    for (size_t j = 0; j < NT && rc == TL_OK; j++)
      if (!t[j].done)
        rc = settle(&t[j]);
  }
  for (size_t j = 0; j < NT; j++) {
    free(t[j].vals);
    free(t[j].bins);
    if (rc == TL_OK && p.n > 0 && !t[j].done)
      rc = TL_ECORRUPT;
  }
  if (rc) {
    snprintf(err, errlen, "%s",
             rc == TL_ENOMEM     ? "out of memory summarizing the samples"
             : rc == TL_ECORRUPT ? "the samples read back differ from one reading to the next"
                                 : "reading the samples back failed");
    return rc;
  }
  r->samples = p.n;
  r->max_ns = p.max;
  r->p50_ns = t[0].value;
  r->p90_ns = t[1].value;
  r->p99_ns = t[2].value;
  return TL_OK;
}
