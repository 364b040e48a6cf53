/* sweep_internal.h: what the files of the sweep share (dist.c runs its
 * passes, sweep_fast.c counts the group's whole buckets without a list,
 * sweep_many.c runs several sweeps' passes in one reading, scan_threaded.c
 * reads a store's samples on two threads); internal to store/. */
#ifndef TL_SWEEP_INTERNAL_H
#define TL_SWEEP_INTERNAL_H

#include "rank.h"
#include "store_internal.h"

/* The histogram is the session summaries' (tl_summary_bucket), so that a
 * session's stored one adds into the group's as it is. */
enum {
  SUB_BITS = TL_SUMMARY_SUB_BITS,
  SUB = 1 << SUB_BITS,
  LOG_BUCKETS = TL_SUMMARY_BUCKETS,
  BITMAP_WORDS = LOG_BUCKETS / 64,
};
/* The most values tl_sweep_count_values counts one by one (256 KiB of
 * counts). A sample of an asked bucket is counted at its value, anywhere in
 * a bucket thousands of values wide: past a core's own cache, nearly every
 * such count is a miss. On the 30-day fleet by memory, the four 50 ms groups
 * asked 3 MiB each; counting took 2.5 s, and 1.5 s once the chart binned
 * their samples instead (0.2 s more). */
enum { VALUES_ASKED_MAX = 1 << 16 };
#define log_index tl_summary_bucket
#define log_bounds tl_summary_bucket_bounds

/* Whether a block of session (its stored min..max) is worth decoding. */
typedef int (*wanted_cb)(void *ctx, size_t session, int64_t min, int64_t max);
/* Hands every wanted sample to cb, session by session, in stored order; tap
 * (may be NULL) sees them too, each session's in the same order, on cb's
 * thread just after cb takes each stretch (which is then in the cache):
 * that thread, which counts, has time to spare, where the one that reads
 * and decodes sets the pace. */
typedef struct {
  wanted_cb wanted; /* may be NULL: every block */
  tl_sweep_session_cb cb;
  void *ctx;
  tl_sweep_session_cb tap;
  void *tap_ctx;
  /* May be NULL: per session, which of parts it belongs to (sweep_many.c's
   * sweeps); cb then takes each stretch of samples part by part, each
   * part's sessions in order, so that one part's tables stay in the cache. */
  const uint32_t *part;
  uint32_t parts;
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

/* A session's percentile that its summary gave, not a target. */
#define SUMMARY_VALUE (SIZE_MAX - 1)

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
  /* ns x snp: each session's percentile, the handle of its target, or the
   * value its summary gave where sgiven is 1 (a byte beside one array, where
   * a second array of values cost a fleet's month 16 MiB; bytes, not bits,
   * so that sessions written on two threads share no memory location) */
  uint64_t *sat;
  uint8_t *sgiven;
  moments *m;            /* ns + 1: every session, then the group */
  int64_t *shist;        /* the log histogram of the session being read (pass 1) */
  int64_t *ghist;        /* the group's */
  size_t cur;            /* the session being read in pass 1, or SIZE_MAX */
  size_t *tfirst, *tend; /* ns + 1: each set's targets are t[tfirst..tend) */
  target *t;
  size_t nt, tcap;
  int first_done;
  int oom;
  /* Pass 1 from summaries: per log bucket, how far its samples' midpoints
   * move when the bucket is held at its session's maximum (only a
   * session's top bucket moves), summed over the sessions; NULL until one
   * moves. tail_unknown: one could not be counted (tl_sweep_tail). */
  int64_t *gclamp;
  int tail_unknown;
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
  /* The group's takers on the lists, pick_group of them, whose ranges lie
   * in [pick_lo, pick_hi]: when few of the group's samples do (a tail's
   * ranks, which collect), pick_apart, and while no session's takers are on
   * the lists too, the counting loop does not pick samples out: a compare
   * that is seldom true finds those in that span. */
  size_t pick_group;
  int pick_apart;
  int64_t pick_lo, pick_hi;
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

static inline int tl__sweep_taker(const target *t) { return tl__rank_takes(&t->r); }

/* A sample in a marked bucket: every open range of its session and of the
 * group there that holds it counts it. */
static inline void tl__sweep_take(tl_sweep *w, size_t b, int64_t x) {
  for (int32_t k = w->head[b]; k >= 0; k = w->t[k].next) {
    tl__rank *t = &w->t[k].r;
    if (x >= t->lo && x <= t->hi)
      tl__rank_take(t, x);
  }
}

/* The fast counts (sweep_fast.c): set up for the next pass, freed after it;
 * a sample's bucket b marked (on) where takers of it are on the lists; the
 * samples v[0..n) counted; the asked buckets' counts kept for
 * tl_sweep_values after the pass (TL_ECORRUPT: they disagree with the
 * histogram). */
int tl__sweep_fast_setup(tl_sweep *w);
/* After the group's takers are on the lists: whether they are picked apart. */
void tl__sweep_pick_plan(tl_sweep *w);
void tl__sweep_fast_free(tl_sweep *w);
void tl__sweep_mark_slow(tl_sweep *w, size_t b, int on);
void tl__sweep_count_fast(tl_sweep *w, const int64_t *v, size_t n);
int tl__sweep_values_keep(tl_sweep *w);

/* Pass 1 from summaries, in two steps, so that several sweeps may share
 * one reading (sweep_many.c): each session's summary (as tl_summary_cb, ctx
 * the sweep), then the end of the pass, which the reading returned err; it
 * leaves tap for the next pass. */
int tl__sweep_from_summary(void *sweep, size_t session, const tl_summary *sum);
int tl__sweep_first_end(tl_sweep *w, int err, tl_sweep_session_cb tap, void *tap_ctx);

/* A pass after the first, in three steps, so that several sweeps may share
 * one reading (sweep_many.c): set up (*needed 0: no pass is needed, and
 * its memory is freed), how the pass reads the samples, then what the
 * reading (which returned err) found. */
int tl__sweep_pass_begin(tl_sweep *w, int *needed);
void tl__sweep_pass_reading(tl_sweep *w, reading *r);
int tl__sweep_pass_end(tl_sweep *w, int err);
/* The error of a pass whose samples disagree with their summaries, naming
 * the session where tlstore check's comparison finds it. */
int tl__sweep_explain_disagreement(tl_store *s, size_t sessions);

static inline uint64_t tl__sweep_bucket_width(size_t b) {
  int64_t lo, hi;
  log_bounds(b, &lo, &hi);
  return (uint64_t)(hi - lo) + 1;
}

/* A source over the samples of the sessions ids[0..n) of a store (ids not
 * copied), read on two threads (scan_threaded.c), or NULL when out of
 * memory; its source_fn is tl__store_src_scan. */
typedef struct tl__store_src tl__store_src;
tl__store_src *tl__store_src_open(tl_store *store, const int64_t *session_ids, size_t n);
void tl__store_src_close(void *src);
int tl__store_src_scan(void *src, const reading *r);

#endif
