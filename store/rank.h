/* rank.h: the exact-rank engine (rank.c), shared by the summary writer
 * (summary.c) and the sweep (dist.c); internal to store/.
 *
 * A rank being resolved is a tl__rank: its answer lies in [lo, hi], the
 * want-th (1-based) of the inside samples there. Its caller locates it in
 * a histogram (tl__rank_locate), then runs passes over the samples until it
 * is done: before each pass tl__rank_open tells whether it still needs one,
 * tl__rank_plan and tl__rank_alloc choose and ready how it reads its range
 * (tl__rank_open_set opens and plans the ranks of one set of samples),
 * tl__rank_take is handed every sample of the pass inside [lo, hi], and
 * tl__rank_resolve gives the value, or a narrower range for the next pass.
 * Several ranks of one set of samples with the same range read it once: the
 * later ones point at the first (same) and resolve from what it saw. */
#ifndef TL_RANK_H
#define TL_RANK_H

#include <stddef.h>
#include <stdint.h>

enum {
  TL__RANK_BYTES = 8 << 20,  /* memory for the samples of one range in one pass */
  TL__RANK_SPLIT = 4096,     /* linear parts a wide range is cut into */
  TL__RANK_SMALL = 64 << 10, /* counts a caller may prefer to collecting */
};

typedef enum {
  TL__RANK_COLLECT = 1, /* the samples of [lo, hi] collected, then selected */
  TL__RANK_COUNT,       /* counted value by value */
  TL__RANK_NARROW,      /* counted in TL__RANK_SPLIT parts, for a further pass */
} tl__rank_mode;

typedef struct {
  int64_t lo, hi; /* the answer lies in [lo, hi] */
  int64_t want;   /* 1-based among the samples in [lo, hi] */
  int64_t inside; /* samples in [lo, hi] */
  int done;
  int64_t value; /* once done */
  size_t same;   /* an earlier open rank whose range (the same) serves this
                    pass for both, or SIZE_MAX */
  /* This pass, for the range: */
  tl__rank_mode mode;
  int64_t *vals; /* COLLECT: n samples so far */
  size_t n;
  int extra;       /* COLLECT: more samples than inside came */
  uint32_t *count; /* COUNT: samples at each value of [lo, hi] */
  int count_lent;  /* count is the caller's memory, not freed here */
  int64_t *split;  /* NARROW: TL__RANK_SPLIT counts of width each */
  uint64_t width;
} tl__rank;

/* Places r at the rank-th (1-based) sample of a histogram of log buckets
 * (tl_summary_bucket) hist[0..len) of buckets first...: its bucket's bounds,
 * the samples there and the place of rank among them. Unchanged when the
 * histogram holds fewer than rank samples. */
void tl__rank_locate(tl__rank *r, int64_t rank, const int64_t *hist, size_t first, size_t len);

/* Before a pass: 1 when r still needs one (same cleared), 0 when it is done,
 * which a range of one value makes it. */
int tl__rank_open(tl__rank *r);

/* Whether r reads its range in the coming pass (open and not served by
 * another's). */
static inline int tl__rank_takes(const tl__rank *r) { return !r->done && r->same == SIZE_MAX; }

/* Chooses how r reads its range: counted per value or collected, whichever
 * takes less memory (counted when prefer_count and counting is small), or
 * when both take more than TL__RANK_BYTES, cut into parts to narrow it. */
void tl__rank_plan(tl__rank *r, int prefer_count);

/* Before a pass, the n ranks of one set of samples, the i-th at
 * (char *)first + i * stride (in records of the caller's): opens each
 * (tl__rank_open), then points one whose range an earlier open one reads at
 * that one (same: base + its index), or else plans how it reads its range
 * (tl__rank_plan). The number still open. */
size_t tl__rank_open_set(tl__rank *first, size_t stride, size_t n, size_t base, int prefer_count);

/* The memory of r's mode (none when its counts are lent); TL_ENOMEM. */
int tl__rank_alloc(tl__rank *r);

/* A sample x of r's range [lo, hi] in the pass. */
static inline void tl__rank_take(tl__rank *r, int64_t x) {
  if (r->mode == TL__RANK_COLLECT) {
    if (r->n < (size_t)r->inside)
      r->vals[r->n++] = x;
    else
      r->extra = 1; /* the samples changed since they were counted */
  } else if (r->mode == TL__RANK_COUNT) {
    r->count[x - r->lo]++;
  } else {
    r->split[(uint64_t)(x - r->lo) / r->width]++;
  }
}

/* After a pass: x's value from what its range's reader (x itself, or the
 * one it shares the range with) saw, or a narrower range for the next
 * pass. TL_ECORRUPT when the reader saw other than inside samples (they
 * changed between passes). Ranks that share a range resolve before their
 * reader (in reverse order), which a narrowing moves. */
int tl__rank_resolve(tl__rank *x, tl__rank *reader);

/* Frees the memory of the pass (not lent counts). */
void tl__rank_free(tl__rank *r);

#endif
