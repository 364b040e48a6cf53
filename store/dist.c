/* dist.c: exact nearest-rank percentiles over any number of samples with
 * little memory, for a group of sessions and for each of its sessions in the
 * same passes (a sweep).
 *
 * Pass 1 reads every sample once for the count, extremes and sums of each
 * session and a log-linear histogram (2048 sub-buckets per power of two,
 * fine enough that the bucket of a rank in timer data holds few enough
 * samples to collect at once). A session's histogram lives only while its
 * samples go by: its ranks are located when it ends, then it is added to the
 * group's. Each requested rank then lies in one known bucket [lo, hi] with a
 * known number of samples below it. Each further pass either collects the
 * samples of [lo, hi] and picks the rank exactly (when few enough fall
 * there), or splits [lo, hi] into 4096 linear buckets to narrow it further.
 * Typical timer data needs two passes, however many ranks are asked.
 *
 * Over a store, pass 1 reads no sample: each session's stored summary
 * (tl_store_summaries) has its count, extremes, sums, histogram (the same
 * layout) and its own percentiles at the usual levels, so a group's ranks
 * are located at once, and the next pass reads only what they need.
 *
 * The passes after the first skip, verified but undecoded, every stored
 * block whose min..max (kept in the block's row) misses all the ranges still
 * open for its session and for the group. The group's ranges that are whole
 * log buckets count per value in one table (count_fast: one look-up and one
 * count a sample, without a branch); the others, and the sessions' own,
 * take their samples through a bitmap of the buckets they lie in and a list
 * per bucket, so that the cost of a sample stays the same whatever the
 * number of ranks. The histogram chart comes from the group's histogram,
 * with only the buckets that straddle a bin counted per value (fast_setup). */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rank.h"
#include "store_internal.h"

enum {
  SUB_BITS = 11,
  SUB = 1 << SUB_BITS,
  LOG_BUCKETS = (64 - SUB_BITS + 1) * SUB,
  BITMAP_WORDS = LOG_BUCKETS / 64,
  DIRECT_ENTRIES = 1 << 16, /* see direct_setup */
};

/* The histogram is the session summaries' (tl_summary_bucket), so that a
 * session's stored one adds into the group's as it is. */
_Static_assert((int)SUB_BITS == (int)TL_SUMMARY_SUB_BITS &&
                   (int)LOG_BUCKETS == (int)TL_SUMMARY_BUCKETS,
               "the sweep's histogram is the summaries'");
#define log_index tl_summary_bucket
#define log_bounds tl_summary_bucket_bounds

/* Whether a block of session (its stored min..max) is worth decoding. */
typedef int (*wanted_cb)(void *ctx, size_t session, int64_t min, int64_t max);
/* Hands every wanted sample to cb, session by session, in stored order; tap
 * (may be NULL) sees them too, as they are read, on the caller's thread,
 * which has time to spare while another thread runs cb. */
typedef struct {
  wanted_cb wanted; /* may be NULL: every block */
  tl_sweep_session_cb cb;
  void *ctx;
  tl_sweep_session_cb tap;
  void *tap_ctx;
} reading;
typedef int (*source_fn)(void *src, const reading *r);

typedef struct {
  int64_t count, min, max;
  unsigned __int128 sum, sumsq; /* exact: values are below 2^63 */
} moments;

typedef struct {
  size_t set;   /* a session's index, or the sweep's session count: the group */
  int64_t rank; /* 1-based rank in the set */
  int32_t next; /* the next target of the same bucket taking samples, or -1 */
  tl__rank r;   /* where its value lies, and how this pass reads it (rank.h);
                   its counts lent when they are the sweep's fast counts
                   (count_fast), and r.same an earlier target of the set */
} target;

struct tl_sweep {
  source_fn source;
  void *src;
  tl_store *store;         /* when the samples are a store's: pass 1 reads their summaries */
  const int64_t *ids;      /* ns sessions of store */
  tl_sweep_session_cb tap; /* pass 1's tap, left for the next pass when pass 1 read summaries */
  void *tap_ctx;
  size_t ns; /* sessions; the group is set ns */
  double *spcts;
  size_t snp;
  size_t *shandle;       /* ns x snp: the target of each session's percentile */
  moments *m;            /* ns + 1: every session, then the group */
  int64_t *shist;        /* the log histogram of the session being read (pass 1) */
  int64_t *ghist;        /* the group's */
  size_t cur;            /* the session being read in pass 1, or SIZE_MAX */
  size_t *tfirst, *tend; /* ns + 1: each set's targets are t[tfirst..tend) */
  target *t;
  size_t nt, tcap;
  int first_done;
  int oom;
  /* Passes after the first. */
  uint64_t *bits;  /* buckets of the open ranges of the group and the current session */
  int32_t *head;   /* per bucket: the first target taking its samples, or -1 */
  size_t bits_for; /* whose ranges are marked besides the group's, or SIZE_MAX */
  size_t slow;     /* takers on the lists now */
  /* The group's whole-bucket COUNT ranges, counted without a list (see
   * count_fast): per log bucket from fast_first (fast_len of them, then one
   * for samples outside them), where its values' counts start in fast and
   * the mask of a value's offset there. */
  uint32_t *fast_base, *fast_mask, *fast;
  uint8_t *fast_slow; /* per bucket as fast_base: 1 where takers are on the lists */
  size_t fast_first, fast_len;
  /* The same by value: entry (x - direct_lo) >> direct_shift, direct_len of
   * them then one for the rest (see count_direct); NULL when too many. */
  uint32_t *direct_base, *direct_mask;
  int64_t direct_lo;
  unsigned direct_shift;
  size_t direct_len;
  /* The log buckets whose values the next pass counts into the fast counts
   * (tl_sweep_count_values), nasked of them; after that pass, where each
   * one's counts start in values, the fast counts it kept. */
  size_t *asked, nasked;
  uint32_t *asked_at;
  int asking; /* the next pass counts them */
  uint32_t *values;
  tl_sweep_session_cb next_tap; /* sees every sample of the next pass, or NULL */
  void *next_tap_ctx;
};

static void moments_add(moments *to, const moments *p) {
  if (!p->count)
    return;
  to->min = to->count && to->min < p->min ? to->min : p->min;
  to->max = to->count && to->max > p->max ? to->max : p->max;
  to->count += p->count;
  to->sum += p->sum;
  to->sumsq += p->sumsq;
}

/* The index of the target of rank in set, added when new; SIZE_MAX when
 * out of memory. A set's targets are added together (a session's when it
 * ends, the group's after pass 1), so they stay contiguous. */
static size_t target_add(tl_sweep *w, size_t set, int64_t rank) {
  for (size_t k = w->tfirst[set]; k < w->tend[set]; k++)
    if (w->t[k].rank == rank)
      return k;
  if (w->tend[set] == w->tfirst[set])
    w->tfirst[set] = w->tend[set] = w->nt;
  if (w->tend[set] != w->nt)
    return SIZE_MAX; /* not contiguous: a caller's mistake */
  if (w->nt == w->tcap) {
    size_t cap = w->tcap ? 2 * w->tcap : 64;
    target *t = realloc(w->t, cap * sizeof *t);
    if (!t)
      return SIZE_MAX;
    w->t = t;
    w->tcap = cap;
  }
  target *x = &w->t[w->nt];
  memset(x, 0, sizeof *x);
  x->set = set;
  x->rank = rank;
  w->tend[set] = ++w->nt;
  return w->nt - 1;
}

/* Finds the log bucket of each target of set in hist[0..len), the counts
 * of buckets first... */
static void locate(tl_sweep *w, size_t set, const int64_t *hist, size_t first, size_t len) {
  for (size_t k = w->tfirst[set]; k < w->tend[set]; k++) {
    target *x = &w->t[k];
    if (!x->r.inside && !x->r.done) /* not located already */
      tl__rank_locate(&x->r, x->rank, hist, first, len);
  }
}

/* The end of a session's samples in pass 1: its ranks are located in its own
 * histogram, which is then added to the group's and cleared. */
static void session_end(tl_sweep *w) {
  size_t s = w->cur;
  w->cur = SIZE_MAX;
  if (s == SIZE_MAX || !w->m[s].count)
    return;
  const moments *m = &w->m[s];
  for (size_t k = 0; k < w->snp; k++) {
    size_t h = target_add(w, s, tl_rank(w->spcts[k], m->count));
    w->oom |= h == SIZE_MAX;
    w->shandle[s * w->snp + k] = h;
  }
  size_t from = log_index(m->min), to = log_index(m->max);
  locate(w, s, w->shist + from, from, to - from + 1);
  for (size_t b = from; b <= to; b++) {
    w->ghist[b] += w->shist[b];
    w->shist[b] = 0;
  }
}

static void pass1_values(tl_sweep *w, size_t session, const int64_t *v, size_t n) {
  moments *m = &w->m[session];
  int64_t lo = m->count ? m->min : v[0], hi = m->count ? m->max : v[0];
  unsigned __int128 sum = 0, sumsq = 0;
  int64_t *hist = w->shist ? w->shist : w->ghist;
  for (size_t i = 0; i < n; i++) {
    int64_t x = v[i];
    lo = x < lo ? x : lo;
    hi = x > hi ? x : hi;
    sum += (uint64_t)x;
    sumsq += (unsigned __int128)((uint64_t)x) * (uint64_t)x;
    hist[log_index(x)]++;
  }
  m->min = lo;
  m->max = hi;
  m->count += (int64_t)n;
  m->sum += sum;
  m->sumsq += sumsq;
}

/* Keeps the fast table's copy of the bitmap (its buckets only: outside
 * them are no samples of the group). */
static void mark_slow(tl_sweep *w, size_t b, int on) {
  if (w->fast_slow && b - w->fast_first < w->fast_len)
    w->fast_slow[b - w->fast_first] = (uint8_t)on;
}

/* Puts target k at the front of its bucket's list of takers. */
static void push(tl_sweep *w, size_t k) {
  target *t = &w->t[k];
  size_t b = log_index(t->r.lo);
  t->next = w->head[b];
  w->head[b] = (int32_t)k;
  w->slow++;
  mark_slow(w, b, 1);
  w->bits[b / 64] |= (uint64_t)1 << (b % 64);
}

static int taker(const target *t) { return tl__rank_takes(&t->r); }

/* Unmarks the ranges of the session marked last: they lie at the front of
 * their lists in push order, so are popped in reverse. */
static void marks_drop(tl_sweep *w) {
  size_t old = w->bits_for;
  w->bits_for = SIZE_MAX;
  if (old == SIZE_MAX)
    return;
  for (size_t k = w->tend[old]; k-- > w->tfirst[old];) {
    if (!taker(&w->t[k]))
      continue;
    size_t b = log_index(w->t[k].r.lo);
    w->head[b] = w->t[k].next;
    w->slow--;
    if (w->head[b] < 0) {
      w->bits[b / 64] &= ~((uint64_t)1 << (b % 64));
      mark_slow(w, b, 0);
    }
  }
}

/* Marks the ranges of session instead of the previous one's. */
static void marks_switch(tl_sweep *w, size_t session) {
  marks_drop(w);
  for (size_t k = w->tfirst[session]; k < w->tend[session]; k++)
    if (taker(&w->t[k]))
      push(w, k);
  w->bits_for = session;
}

/* A sample in a marked bucket: every open range of its session and of the
 * group there that holds it counts it. */
static void take(tl_sweep *w, size_t b, int64_t x) {
  for (int32_t k = w->head[b]; k >= 0; k = w->t[k].next) {
    tl__rank *t = &w->t[k].r;
    if (x >= t->lo && x <= t->hi)
      tl__rank_take(t, x);
  }
}

static void fast_free(tl_sweep *w) {
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

/* The reading thread's work in the first pass after pass 1: the caller's
 * tap of that pass, and pass 1's when pass 1 read summaries. */
static int finish_tap(void *arg, size_t session, const int64_t *v, size_t n) {
  tl_sweep *w = arg;
  int err = w->next_tap ? w->next_tap(w->next_tap_ctx, session, v, n) : 0;
  return !err && w->tap ? w->tap(w->tap_ctx, session, v, n) : err;
}

/* Counts each sample at its value in the group's fast ranges: one table look-up and
 * one increment a sample, without a branch on whether its bucket is wanted
 * (most timer samples fall in a few buckets, about half of them wanted, so
 * that branch would be a coin toss). The samples of the other buckets are
 * counted into 8 spare counts at the front, spread by their low bits so
 * that consecutive ones seldom wait on the same count. The samples of
 * buckets with ranges on the lists are picked out on the way, without a
 * branch either, and handed to take after each stretch. */
static inline __attribute__((always_inline)) void
count_stretch(tl_sweep *w, const int64_t *p, size_t m, int by_double, int picking) {
  const uint32_t *base = w->fast_base, *mask = w->fast_mask;
  const uint8_t *slow = w->fast_slow;
  uint32_t *fast = w->fast;
  size_t first = w->fast_first, len = w->fast_len, picked = 0;
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
  }
  for (size_t j = 0; j < picked; j++)
    take(w, log_index(p[pick[j]]), p[pick[j]]);
}

/* count_stretch without a pick-out, for a group whose samples span few
 * enough of its smallest buckets: the entry of a sample is then its offset
 * from the group's first bucket, shifted by that bucket's width, and a wider
 * bucket spans several entries with the same base and mask. */
static void count_direct(tl_sweep *w, const int64_t *p, size_t m) {
  const uint32_t *base = w->direct_base, *mask = w->direct_mask;
  uint32_t *fast = w->fast;
  uint64_t lo = (uint64_t)w->direct_lo;
  unsigned shift = w->direct_shift;
  size_t len = w->direct_len;
  for (size_t i = 0; i < m; i++) {
    uint64_t u = (uint64_t)p[i];
    uint64_t k = (u - lo) >> shift; /* wraps below lo */
    k = k < len ? k : len;
    fast[base[k] + (u & mask[k])]++;
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

static void count_fast(tl_sweep *w, const int64_t *v, size_t n) {
  int by_double = w->m[w->ns].max < ((int64_t)1 << 53);
  if (w->direct_base && !w->slow) {
    for (size_t at = 0; at < n; at += TL_BLOCK_MAX)
      count_direct(w, v + at, n - at < TL_BLOCK_MAX ? n - at : TL_BLOCK_MAX);
    return;
  }
  for (size_t at = 0; at < n; at += TL_BLOCK_MAX) {
    size_t m = n - at < TL_BLOCK_MAX ? n - at : TL_BLOCK_MAX;
    /* Constant flags: four loops, each without the tests it does not need. */
    if (by_double && w->slow)
      count_stretch(w, v + at, m, 1, 1);
    else if (by_double)
      count_stretch(w, v + at, m, 1, 0);
    else if (w->slow)
      count_stretch(w, v + at, m, 0, 1);
    else
      count_stretch(w, v + at, m, 0, 0);
  }
}

static int on_segment(void *arg, size_t session, const int64_t *v, size_t n) {
  tl_sweep *w = arg;
  if (!n)
    return 0;
  if (!w->first_done) {
    if (w->shist && session != w->cur) {
      session_end(w);
      w->cur = session;
    }
    pass1_values(w, session, v, n);
    return 0;
  }
  if (session != w->bits_for)
    marks_switch(w, session);
  if (w->fast) {
    count_fast(w, v, n);
    return 0;
  }
  if (!w->slow)
    return 0;
  const uint64_t *bits = w->bits;
  for (size_t i = 0; i < n; i++) {
    size_t b = log_index(v[i]);
    if (bits[b / 64] >> (b % 64) & 1)
      take(w, b, v[i]);
  }
  return 0;
}

/* After pass 1, only blocks that may hold a sample of an open range (or any
 * block, while values are counted or a tap sees them). */
static int block_wanted(void *arg, size_t session, int64_t min, int64_t max) {
  const tl_sweep *w = arg;
  if (!w->first_done || w->asking || w->tap || w->next_tap)
    return 1;
  size_t sets[2] = {session, w->ns};
  for (size_t i = 0; i < 2; i++)
    for (size_t k = w->tfirst[sets[i]]; k < w->tend[sets[i]]; k++) {
      const tl__rank *t = &w->t[k].r;
      if (!t->done && max >= t->lo && min <= t->hi)
        return 1;
    }
  return 0;
}

static void sweep_free(tl_sweep *w);

/* NULL when out of memory; spcts are valid percentiles. */
static tl_sweep *sweep_new(source_fn source, void *src, size_t ns, const double *spcts,
                           size_t snp) {
  tl_sweep *w = calloc(1, sizeof *w);
  if (!w)
    return NULL;
  w->source = source;
  w->src = src;
  w->ns = ns;
  w->snp = snp;
  w->cur = w->bits_for = SIZE_MAX;
  w->m = calloc(ns + 1, sizeof *w->m);
  w->tfirst = calloc(ns + 1, sizeof *w->tfirst);
  w->tend = calloc(ns + 1, sizeof *w->tend);
  w->ghist = calloc(LOG_BUCKETS, sizeof *w->ghist);
  int ok = w->m && w->tfirst && w->tend && w->ghist;
  if (ok && snp) {
    w->spcts = malloc(snp * sizeof *w->spcts);
    w->shandle = malloc(ns * snp * sizeof *w->shandle + 1);
    w->shist = calloc(LOG_BUCKETS, sizeof *w->shist);
    ok = w->spcts && w->shandle && w->shist;
    if (ok) {
      memcpy(w->spcts, spcts, snp * sizeof *spcts);
      memset(w->shandle, 0xff, ns * snp * sizeof *w->shandle);
    }
  }
  if (!ok) {
    sweep_free(w);
    return NULL;
  }
  return w;
}

static void sweep_free(tl_sweep *w) {
  if (!w)
    return;
  for (size_t k = 0; k < w->nt; k++)
    tl__rank_free(&w->t[k].r);
  free(w->t);
  free(w->m);
  free(w->tfirst);
  free(w->tend);
  free(w->ghist);
  free(w->shist);
  free(w->spcts);
  free(w->shandle);
  free(w->bits);
  free(w->head);
  fast_free(w);
  free(w->asked);
  free(w->asked_at);
  free(w->values);
  free(w);
}

/* Pass 1 from a session's summary: its moments, its own percentiles where
 * the summary holds them (located in its histogram otherwise), and its
 * histogram added to the group's. */
static int from_summary(void *arg, size_t s, const tl_summary *sum) {
  tl_sweep *w = arg;
  moments *m = &w->m[s];
  m->count = sum->count;
  m->min = sum->min_ns;
  m->max = sum->max_ns;
  m->sum = sum->sum;
  m->sumsq = sum->sumsq;
  if (!m->count)
    return 0;
  for (size_t k = 0; k < w->snp; k++) {
    size_t h = target_add(w, s, tl_rank(w->spcts[k], m->count));
    if (h == SIZE_MAX)
      return TL_ENOMEM;
    w->shandle[s * w->snp + k] = h;
    for (size_t j = 0; j < TL_SUMMARY_PCTS; j++)
      if (tl_summary_pcts[j] == w->spcts[k]) {
        w->t[h].r.done = 1;
        w->t[h].r.value = sum->pct_ns[j];
      }
  }
  locate(w, s, sum->hist, sum->hist_first, sum->hist_len);
  for (size_t b = 0; b < sum->hist_len; b++)
    w->ghist[sum->hist_first + b] += sum->hist[b];
  return 0;
}

int tl_sweep_first(tl_sweep *w, tl_sweep_session_cb tap, void *tap_ctx) {
  int err;
  if (w->store) {
    /* No pass over the samples: a tap sees them in the next pass, which
     * then reads every block. */
    err = tl_store_summaries(w->store, w->ids, w->ns, from_summary, w);
    w->tap = tap;
    w->tap_ctx = tap_ctx;
  } else {
    reading r = {block_wanted, on_segment, w, tap, tap_ctx};
    err = w->source(w->src, &r);
    session_end(w); /* the last session's */
  }
  w->first_done = 1;
  for (size_t s = 0; s < w->ns; s++)
    moments_add(&w->m[w->ns], &w->m[s]);
  if (!err && w->oom)
    err = TL_ENOMEM;
  return err;
}

void tl_sweep_dist(const tl_sweep *w, size_t set, tl_dist *out) {
  memset(out, 0, sizeof *out);
  const moments *m = &w->m[set];
  if (!m->count)
    return;
  out->count = m->count;
  out->min_ns = m->min;
  out->max_ns = m->max;
  long double mean = (long double)m->sum / m->count;
  long double var = (long double)m->sumsq / m->count - mean * mean;
  out->mean_ns = (double)mean;
  out->stddev_ns = var > 0 ? sqrt((double)var) : 0.0;
}

int64_t tl_sweep_count(const tl_sweep *w, size_t set) { return w->m[set].count; }

size_t tl_sweep_want(tl_sweep *w, int64_t rank) {
  const moments *g = &w->m[w->ns];
  if (rank < 1 || rank > g->count)
    return SIZE_MAX;
  size_t h = target_add(w, w->ns, rank);
  if (h != SIZE_MAX)
    locate(w, w->ns, w->ghist, 0, log_index(g->max) + 1);
  return h;
}

int64_t tl_sweep_bucket_top(const tl_sweep *w, int64_t rank) {
  int64_t cum = 0, lo = 0, hi = 0;
  for (size_t b = 0; b < LOG_BUCKETS; b++) {
    cum += w->ghist[b];
    if (cum >= rank) {
      log_bounds(b, &lo, &hi);
      break;
    }
  }
  return hi < w->m[w->ns].max ? hi : w->m[w->ns].max;
}

const int64_t *tl_sweep_hist(const tl_sweep *w, size_t *first, size_t *len) {
  const moments *g = &w->m[w->ns];
  *first = g->count ? log_index(g->min) : 0;
  *len = g->count ? log_index(g->max) - *first + 1 : 0;
  return w->ghist + *first;
}

static uint64_t bucket_width(size_t b) {
  int64_t lo, hi;
  log_bounds(b, &lo, &hi);
  return (uint64_t)(hi - lo) + 1;
}

int tl_sweep_count_values(tl_sweep *w, const size_t *buckets, size_t n) {
  uint64_t need = 0;
  for (size_t i = 0; i < n; i++)
    need += bucket_width(buckets[i]);
  if (need > TL__RANK_BYTES / sizeof *w->values)
    return 0;
  size_t *asked = realloc(w->asked, (n + 1) * sizeof *asked);
  if (asked)
    w->asked = asked;
  uint32_t *at = realloc(w->asked_at, (n + 1) * sizeof *at);
  if (at)
    w->asked_at = at;
  if (!asked || !at) {
    w->oom = 1; /* tl_sweep_finish says so */
    return 1;
  }
  memcpy(w->asked, buckets, n * sizeof *buckets);
  memset(w->asked_at, 0, n * sizeof *at);
  w->nasked = n;
  w->asking = 1;
  return 1;
}

const uint32_t *tl_sweep_values(const tl_sweep *w, size_t bucket) {
  for (size_t i = 0; i < w->nasked && w->values; i++)
    if (w->asked[i] == bucket && w->asked_at[i])
      return w->values + w->asked_at[i];
  return NULL;
}

void tl_sweep_tap(tl_sweep *w, tl_sweep_session_cb tap, void *ctx) {
  w->next_tap = tap;
  w->next_tap_ctx = ctx;
}

/* Gives bucket b (from fast_first) counts per value in the fast counts. */
static void fast_claim(tl_sweep *w, size_t b, uint64_t *at) {
  uint64_t width = bucket_width(w->fast_first + b);
  w->fast_base[b] = (uint32_t)*at;
  w->fast_mask[b] = (uint32_t)(width - 1); /* widths are powers of two */
  *at += width;
}

/* Sets up the fast counts of the next pass: the buckets of the group's
 * takers that count a whole log bucket (the usual case in the pass after
 * pass 1), the others staying on the lists; and the buckets whose values
 * the caller asked for (a chart's that straddle the edge of a bin: timer
 * samples fill a few dozen buckets, straddling bins at a handful). */
static int fast_setup(tl_sweep *w) {
  const moments *g = &w->m[w->ns];
  size_t first = log_index(g->min), len = log_index(g->max) - first + 1;
  w->fast_first = first;
  w->fast_len = len;
  w->fast_base = calloc(len + 1, sizeof *w->fast_base);
  w->fast_mask = malloc((len + 1) * sizeof *w->fast_mask);
  w->fast_slow = calloc(len + 1, 1);
  if (!w->fast_base || !w->fast_mask || !w->fast_slow) {
    fast_free(w);
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
    x->r.count_lent = taker(x) && x->r.mode == TL__RANK_COUNT && lo == x->r.lo && hi == x->r.hi &&
                      b - first < len && at + bucket_width(b) <= UINT32_MAX;
    if (x->r.count_lent && !w->fast_base[b - first])
      fast_claim(w, b - first, &at);
  }
  if (at == 8) {
    fast_free(w);
    return TL_OK;
  }
  if (!(w->fast = calloc(at, sizeof *w->fast))) {
    fast_free(w);
    return TL_ENOMEM;
  }
  for (size_t k = w->tfirst[w->ns]; k < w->tend[w->ns]; k++)
    if (w->t[k].r.count_lent)
      w->t[k].r.count = w->fast + w->fast_base[log_index(w->t[k].r.lo) - first];
  int err = direct_setup(w);
  if (err)
    fast_free(w);
  return err;
}

/* Keeps the fast counts of the asked buckets for tl_sweep_values, once they
 * add up to the group's histogram (TL_ECORRUPT: the data changed between
 * passes). */
static int values_keep(tl_sweep *w) {
  for (size_t i = 0; i < w->nasked; i++) {
    if (!w->asked_at[i])
      continue;
    uint64_t width = bucket_width(w->asked[i]), seen = 0;
    for (uint64_t x = 0; x < width; x++)
      seen += w->fast[w->asked_at[i] + x];
    if (seen != (uint64_t)w->ghist[w->asked[i]])
      return TL_ECORRUPT;
  }
  w->values = w->fast; /* the fast counts of the group's ranges stay theirs */
  w->fast = NULL;
  return TL_OK;
}

static int sweep_passes(tl_sweep *w) {
  int err = w->oom ? TL_ENOMEM : TL_OK;
  if (!err && !w->bits) {
    w->bits = calloc(BITMAP_WORDS, sizeof *w->bits);
    w->head = malloc(LOG_BUCKETS * sizeof *w->head);
    if (!w->bits || !w->head)
      err = TL_ENOMEM;
    else
      memset(w->head, 0xff, LOG_BUCKETS * sizeof *w->head);
  }
  while (!err) {
    size_t open = 0;
    for (size_t k = 0; k < w->nt && !err; k++) {
      target *x = &w->t[k];
      if (!tl__rank_open(&x->r))
        continue;
      open++;
      for (size_t j = w->tfirst[x->set]; j < k && x->r.same == SIZE_MAX; j++)
        if (taker(&w->t[j]) && w->t[j].r.lo == x->r.lo && w->t[j].r.hi == x->r.hi)
          x->r.same = j;
      /* The group's few ranges count where counting takes little, even
       * where collecting would take less: they then count in the fast
       * table, and no sample need be picked out for a list. */
      if (x->r.same == SIZE_MAX)
        tl__rank_plan(&x->r, x->set == w->ns);
    }
    if (!err)
      err = fast_setup(w);
    for (size_t k = 0; k < w->nt && !err; k++)
      if (taker(&w->t[k]))
        err = tl__rank_alloc(&w->t[k].r);
    if ((!open && !w->asking && !w->tap && !w->next_tap) || err)
      break;
    for (size_t k = w->tfirst[w->ns]; k < w->tend[w->ns]; k++)
      if (taker(&w->t[k]) && !w->t[k].r.count_lent)
        push(w, k);
    w->bits_for = SIZE_MAX;
    /* The taps run on the reading thread, which has less to do in these
     * passes than the thread that takes the ranges' samples. */
    reading r = {block_wanted, on_segment, w, w->next_tap || w->tap ? finish_tap : NULL, w};
    err = w->source(w->src, &r);
    if (w->asking && w->fast && !err)
      err = values_keep(w);
    w->asking = 0;
    w->tap = w->next_tap = NULL;
    marks_drop(w);
    for (size_t k = w->tfirst[w->ns]; k < w->tend[w->ns]; k++)
      if (taker(&w->t[k]))
        w->head[log_index(w->t[k].r.lo)] = -1;
    memset(w->bits, 0, BITMAP_WORDS * sizeof *w->bits);
    /* Backwards: a range shared by several targets is narrowed for its taker
     * (the first of them) only after the others read it. */
    for (size_t k = w->nt; k-- > 0 && !err;) {
      target *x = &w->t[k];
      if (!x->r.done)
        err = tl__rank_resolve(&x->r, x->r.same == SIZE_MAX ? &x->r : &w->t[x->r.same].r);
    }
    for (size_t k = 0; k < w->nt; k++)
      tl__rank_free(&w->t[k].r);
    fast_free(w);
    w->slow = 0;
  }
  for (size_t k = 0; k < w->nt; k++)
    tl__rank_free(&w->t[k].r);
  fast_free(w);
  return err;
}

/* A pass that counted other samples than the stored summaries promised:
 * a summary that disagrees with its samples (its checksum is right, so
 * only the samples tell) or samples that changed while they were read.
 * tlstore check's comparison finds the session, whose id is then left on
 * the store for tlreport --skip-damaged, and the message says which. */
typedef struct {
  char msg[256];
} first_problem;

static void keep_first(void *ctx, const char *problem) {
  first_problem *p = ctx;
  if (!p->msg[0])
    snprintf(p->msg, sizeof p->msg, "%s", problem);
}

static int64_t session_of_problem(tl_store *s, const char *problem) {
  tl_filter f;
  tl_filter_init(&f);
  tl_session_list list;
  int64_t id = 0;
  if (strncmp(problem, "session ", 8) != 0 || tl_store_sessions(s, &f, &list) != TL_OK)
    return 0;
  for (size_t i = 0; i < list.count && !id; i++)
    if (strncmp(problem + 8, list.items[i].uuid, strlen(list.items[i].uuid)) == 0)
      id = list.items[i].id;
  tl_session_list_free(&list);
  return id;
}

static int explain_disagreement(tl_store *s, size_t sessions) {
  first_problem p = {""};
  int problems = 0;
  if (tl__check_summaries(s, keep_first, &p, &problems) == TL_OK && p.msg[0]) {
    int64_t id = session_of_problem(s, p.msg);
    int err = tl__store_fail(s, TL_ECORRUPT, "%s: %s" TL__CHECK_HINT, s->path, p.msg);
    s->damaged_id = id;
    return err;
  }
  return tl__store_fail(s, TL_ECORRUPT,
                        "%s: the samples of %zu session%s changed while they were read, or "
                        "disagree with their summaries" TL__CHECK_HINT,
                        s->path, sessions, sessions == 1 ? "" : "s");
}

int tl_sweep_finish(tl_sweep *w) {
  if (w->store) /* a failure of the samples' reading leaves its own message */
    w->store->errmsg[0] = '\0';
  int err = sweep_passes(w);
  if (err == TL_ECORRUPT && w->store && !w->store->errmsg[0])
    err = explain_disagreement(w->store, w->ns);
  return err;
}

int64_t tl_sweep_value(const tl_sweep *w, size_t handle) {
  return handle < w->nt ? w->t[handle].r.value : 0;
}

int64_t tl_sweep_session_value(const tl_sweep *w, size_t session, size_t k) {
  return tl_sweep_value(w, w->shandle[session * w->snp + k]);
}

/* ======================================================================== */
/* Sources                                                                   */

/* Reading the store takes two threads: this one steps SQLite through the
 * blocks and decodes them into a batch of values, a worker counts the
 * previous batch. The two halves of the work are of similar size, so on two
 * cores a pass takes about half as long. Only the worker touches the sweep;
 * the batches alternate under one mutex. A batch remembers where each
 * session's samples start in it. */
enum { BATCH_VALUES = 64 * TL_BLOCK_MAX, BATCH_SEGMENTS = 256 };

typedef struct {
  size_t n, segs;
  size_t seg_at[BATCH_SEGMENTS];
  size_t seg_session[BATCH_SEGMENTS];
  int64_t v[BATCH_VALUES];
} batch;

typedef struct {
  tl_store *store;
  const int64_t *ids;
  size_t n;
  size_t at; /* index in ids of the session being read */
  reading r;
  batch *fill;         /* the batch this thread fills */
  batch *pending;      /* handed to the worker, not yet taken */
  int busy, quit;      /* the worker is counting a batch; no more will come */
  int err;             /* the worker's first error */
  int64_t bad_session; /* where a block failed to decode */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  batch batches[2];
} store_src;

/* Every block is read: one the pass does not want is only verified, not
 * decoded, so that a damaged block is found wherever it lies. */
static int block_filter(void *arg, const tl_block *b) {
  store_src *s = arg;
  while (s->at < s->n && s->ids[s->at] != b->session_id)
    s->at++;
  return 1;
}

static int batch_run(store_src *s, const batch *b) {
  for (size_t i = 0; i < b->segs; i++) {
    size_t end = i + 1 < b->segs ? b->seg_at[i + 1] : b->n;
    int err = s->r.cb(s->r.ctx, b->seg_session[i], b->v + b->seg_at[i], end - b->seg_at[i]);
    if (err)
      return err;
  }
  return 0;
}

static void *worker(void *arg) {
  store_src *s = arg;
  pthread_mutex_lock(&s->mu);
  for (;;) {
    while (!s->pending && !s->quit)
      pthread_cond_wait(&s->cv, &s->mu);
    if (!s->pending)
      break;
    batch *b = s->pending;
    s->pending = NULL;
    s->busy = 1;
    int err = s->err;
    pthread_mutex_unlock(&s->mu);
    if (!err)
      err = batch_run(s, b);
    pthread_mutex_lock(&s->mu);
    if (err && !s->err)
      s->err = err;
    b->n = b->segs = 0;
    s->busy = 0;
    pthread_cond_broadcast(&s->cv);
  }
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

/* Hands the filled batch to the worker once it is idle, and continues with
 * the other batch (which the worker has then finished). */
static int submit(store_src *s) {
  pthread_mutex_lock(&s->mu);
  while (s->pending || s->busy)
    pthread_cond_wait(&s->cv, &s->mu);
  int err = s->err;
  if (!err && s->fill->n) {
    s->pending = s->fill;
    s->fill = s->fill == &s->batches[0] ? &s->batches[1] : &s->batches[0];
    pthread_cond_broadcast(&s->cv);
  }
  pthread_mutex_unlock(&s->mu);
  return err;
}

static int block_decode(void *arg, const tl_block *b) {
  store_src *s = arg;
  if (s->r.wanted && !s->r.wanted(s->r.ctx, s->at, b->min_ns, b->max_ns)) {
    if (tl_block_verify(b, NULL) == TL_OK)
      return TL_OK;
    s->bad_session = b->session_id;
    return TL_ECORRUPT;
  }
  batch *f = s->fill;
  int new_seg = !f->segs || f->seg_session[f->segs - 1] != s->at;
  if (f->n + (size_t)b->count > BATCH_VALUES || (new_seg && f->segs == BATCH_SEGMENTS)) {
    int err = submit(s);
    if (err)
      return err;
    f = s->fill;
    new_seg = 1;
  }
  if (new_seg) {
    f->seg_at[f->segs] = f->n;
    f->seg_session[f->segs++] = s->at;
  }
  if (tl_block_decode(b, f->v + f->n, NULL)) {
    s->bad_session = b->session_id;
    return TL_ECORRUPT;
  }
  int err = s->r.tap ? s->r.tap(s->r.tap_ctx, s->at, f->v + f->n, (size_t)b->count) : TL_OK;
  f->n += (size_t)b->count;
  return err;
}

static int ignore_values(void *ctx, const int64_t *v, size_t n) {
  (void)ctx;
  (void)v;
  (void)n;
  return 0;
}

static int scan_store(void *arg, const reading *r) {
  store_src *s = arg;
  s->r = *r;
  s->at = 0;
  s->fill = &s->batches[0];
  s->pending = NULL;
  s->busy = s->quit = s->err = 0;
  s->batches[0].n = s->batches[1].n = s->batches[0].segs = s->batches[1].segs = 0;
  pthread_t th;
  if (pthread_create(&th, NULL, worker, s) != 0)
    return TL_ENOMEM;
  int err = tl_store_scan_blocks(s->store, s->ids, s->n, block_filter, block_decode, s);
  int werr = submit(s);
  pthread_mutex_lock(&s->mu);
  while (s->pending || s->busy)
    pthread_cond_wait(&s->cv, &s->mu);
  s->quit = 1;
  pthread_cond_broadcast(&s->cv);
  werr = s->err ? s->err : werr;
  pthread_mutex_unlock(&s->mu);
  pthread_join(th, NULL);
  if (err == TL_ECORRUPT && s->bad_session) {
    /* Let the store say which block is bad: a plain scan of that session
     * stops at the same block and leaves the message on the handle. */
    tl_store_scan(s->store, s->bad_session, ignore_values, NULL);
  }
  return err ? err : werr;
}

/* A source over the samples of the sessions (ids not copied), or NULL when
 * out of memory; free with src_close. */
static store_src *src_open(tl_store *store, const int64_t *session_ids, size_t n) {
  store_src *s = malloc(sizeof *s);
  if (!s)
    return NULL;
  memset(s, 0, offsetof(store_src, batches));
  if (pthread_mutex_init(&s->mu, NULL) != 0) {
    free(s);
    return NULL;
  }
  if (pthread_cond_init(&s->cv, NULL) != 0) {
    pthread_mutex_destroy(&s->mu);
    free(s);
    return NULL;
  }
  s->store = store;
  s->ids = session_ids;
  s->n = n;
  return s;
}

static void src_close(void *arg) {
  store_src *s = arg;
  if (!s)
    return;
  pthread_cond_destroy(&s->cv);
  pthread_mutex_destroy(&s->mu);
  free(s);
}

tl_sweep *tl_sweep_store(tl_store *store, const int64_t *session_ids, size_t n,
                         const double *session_pcts, size_t session_np) {
  store_src *s = src_open(store, session_ids, n);
  tl_sweep *w = s ? sweep_new(scan_store, s, n, session_pcts, session_np) : NULL;
  if (!w)
    src_close(s);
  else {
    w->store = store;
    w->ids = session_ids;
  }
  return w;
}

void tl_sweep_close(tl_sweep *w) {
  if (!w)
    return;
  src_close(w->src);
  sweep_free(w);
}

int tl_store_scan_threaded(tl_store *store, const int64_t *session_ids, size_t n,
                           tl_sweep_session_cb cb, void *ctx) {
  store_src *s = src_open(store, session_ids, n);
  if (!s)
    return TL_ENOMEM;
  reading r = {NULL, cb, ctx, NULL, NULL};
  int err = scan_store(s, &r);
  src_close(s);
  return err;
}

/* The group's values at pcts of one sweep into out (at most TL_MAX_PCTS),
 * tap seeing every sample. */
static int sweep_dist(tl_sweep *w, const double *pcts, size_t np, tl_sweep_session_cb tap,
                      void *tap_ctx, tl_dist *out) {
  memset(out, 0, sizeof *out);
  if (np > TL_MAX_PCTS)
    return TL_EINVAL;
  for (size_t k = 0; k < np; k++)
    if (!(pcts[k] >= 0 && pcts[k] <= 100))
      return TL_EINVAL;
  if (!w)
    return TL_ENOMEM;
  int err = tl_sweep_first(w, tap, tap_ctx);
  if (err)
    return err;
  size_t handle[TL_MAX_PCTS];
  int64_t count = tl_sweep_count(w, w->ns);
  for (size_t k = 0; k < np && count; k++)
    if ((handle[k] = tl_sweep_want(w, tl_rank(pcts[k], count))) == SIZE_MAX)
      return TL_ENOMEM;
  if (count && (err = tl_sweep_finish(w)))
    return err;
  tl_sweep_dist(w, w->ns, out);
  out->pct_count = np;
  memcpy(out->pcts, pcts, np * sizeof *pcts);
  for (size_t k = 0; k < np && count; k++)
    out->pct_ns[k] = tl_sweep_value(w, handle[k]);
  return TL_OK;
}

int tl_dist_compute_tap(tl_store *store, const int64_t *session_ids, size_t n, const double *pcts,
                        size_t pct_count, tl_sweep_session_cb tap, void *tap_ctx, tl_dist *out) {
  tl_sweep *w = tl_sweep_store(store, session_ids, n, NULL, 0);
  int err = sweep_dist(w, pcts, pct_count, tap, tap_ctx, out);
  tl_sweep_close(w);
  return err;
}

int tl_dist_compute(tl_store *store, const int64_t *session_ids, size_t n, const double *pcts,
                    size_t pct_count, tl_dist *out) {
  return tl_dist_compute_tap(store, session_ids, n, pcts, pct_count, NULL, NULL, out);
}

typedef struct {
  const int64_t *v;
  size_t n;
} mem_src;

static int scan_mem(void *arg, const reading *r) {
  mem_src *m = arg;
  for (size_t at = 0; at < m->n; at += TL_BLOCK_MAX) {
    size_t k = m->n - at < TL_BLOCK_MAX ? m->n - at : TL_BLOCK_MAX;
    int err = r->tap ? r->tap(r->tap_ctx, 0, m->v + at, k) : TL_OK;
    if (!err)
      err = r->cb(r->ctx, 0, m->v + at, k);
    if (err)
      return err;
  }
  return TL_OK;
}

int tl_dist_of_values(const int64_t *values, size_t n, const double *pcts, size_t pct_count,
                      tl_dist *out) {
  for (size_t i = 0; i < n; i++)
    if (values[i] < 0) {
      memset(out, 0, sizeof *out);
      return TL_EINVAL;
    }
  mem_src m = {values, n};
  tl_sweep *w = sweep_new(scan_mem, &m, 1, NULL, 0);
  int err = sweep_dist(w, pcts, pct_count, NULL, NULL, out);
  sweep_free(w);
  return err;
}
