/* stats_internal.h: what the files of the statistics share (maths.c,
 * kept.c, stats.c, rank_test.c, steps_runner.c, stats_text.c, check.c):
 * seeded draws, the samples kept of a group and the bootstrap over them,
 * one group's statistics, and how a sentence writes its numbers. Nothing
 * here is part of tl_report.h. */
#ifndef TL_STATS_INTERNAL_H
#define TL_STATS_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "compute.h"

/* The level of every interval tl shows. */
#define TL__CONF 0.95

/* ------------------------------------------------------------------------ */
/* Seeded draws (maths.c)                                                    */

typedef struct {
  uint64_t s;
} tl__rng;

static inline uint64_t tl__rng_next(tl__rng *r) {
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Uniform in (0, 1): never 0, so that log() is safe. */
static inline double tl__rng_unit(tl__rng *r) {
  return ((double)(tl__rng_next(r) >> 11) + 0.5) * 0x1.0p-53;
}

static inline uint64_t tl__rng_below(tl__rng *r, uint64_t n) { return tl__rng_next(r) % n; }

/* x % n for an n fixed over many draws, without a division (the session
 * bootstrap draws 1000 x sessions of them a group): Lemire, Kaser and Kurz,
 * "Faster remainder by direct computation" (2019), exact for every 64-bit x
 * and n > 0 with a 128-bit multiplier. */
typedef struct {
  unsigned __int128 m;
  uint64_t n;
} tl__mod;

static inline tl__mod tl__mod_of(uint64_t n) {
  tl__mod d = {~(unsigned __int128)0 / n + 1, n};
  return d;
}

static inline uint64_t tl__mod_apply(const tl__mod *d, uint64_t x) {
  unsigned __int128 low = d->m * x;
  unsigned __int128 bottom = ((low & UINT64_MAX) * d->n) >> 64, top = (low >> 64) * d->n;
  return (uint64_t)((bottom + top) >> 64);
}

/* tl__rng_below(r, d->n), the same draw. */
static inline uint64_t tl__rng_below_mod(tl__rng *r, const tl__mod *d) {
  return tl__mod_apply(d, tl__rng_next(r));
}

/* P(X <= k) for X ~ Binomial(n, p), summed in log space (exact to double
 * precision for any n; 0 for k < 0, 1 for k >= n). The tail sums behind
 * tl_order_stat_ci, open to the tests that check them. */
double tl__binom_cdf(int64_t k, int64_t n, double p);
/* A Beta(a, b) draw (a, b >= 1). */
double tl__rng_beta(tl__rng *r, double a, double b);
/* The p quantile (0.5 < p < 1) of Student's t with df degrees of freedom
 * (df > 0, fractional allowed); NAN outside. */
double tl__t_quantile(double p, double df);
/* Whether tl__t_quantile(p, df) < c (1 or 0) without working the quantile
 * out, or -1 when too close to tell. */
int tl__t_quantile_below(double p, double df, double c);
/* The permutation test of the change-point search (binary segmentation):
 * the buffers of one segment's shuffles, each n + 1 long. */
typedef struct {
  double *perm;   /* the segment's values, shuffled in place */
  size_t L;       /* the shortest side a split may have */
  double *w;      /* w[t] = n / (t (n - t)), the weight of split t */
  uint64_t *inv;  /* inv[d] = UINT64_MAX / d, for the draws */
  uint32_t *pick; /* one shuffle's draws */
} tl__shuffle;
/* Shuffles s->perm[0..n) once (Fisher-Yates from the end, the draw of step
 * i being tl__rng_next(r) % (i + 1)) and returns the best split's sum of
 * squares over sq, total being the values' sum. */
double tl__shuffled_split(const tl__shuffle *s, size_t n, tl__rng *r, double total, double sq);
/* The seed of a group's draws: its label, probe and delay, and a purpose. */
uint64_t tl__group_seed(const char *label, const char *probe, int64_t delay_ns, const char *what);
/* qsort's comparison of int64_t. */
int tl__cmp_i64(const void *a, const void *b);

/* ------------------------------------------------------------------------ */
/* The samples kept of a group (kept.c)                                      */

typedef struct {
  int64_t id, started_ns;
  uint64_t key;  /* of its UUID, which every store gives it (its id is the store's own) */
  int64_t n;     /* samples seen */
  size_t cap, m; /* reservoir capacity, samples kept */
  int64_t *v;    /* kept samples, sorted once loaded (a slice of the set's buffer) */
  tl__rng r;
  double log_q;               /* log(1 - p), p the chance to keep each sample; 0: every one */
  double w;                   /* once the slots are full, Algorithm L's weight */
  int64_t next;               /* the 1-based number of the next sample to keep */
  const tl_session_detail *d; /* what the comparison computed for it, or NULL */
} tl__sess;

typedef struct {
  tl__sess *s;
  size_t ns;
  int64_t *buf;  /* every kept sample, session by session */
  int64_t *pool; /* the same, sorted */
  uint32_t *tag; /* the session of each pooled sample */
  size_t m;      /* kept in total */
  int64_t n;     /* samples in total */
  int exact;     /* every sample kept */
  int borrowed;  /* the arrays belong to the comparison (a tl__kept) */
  /* Exact values at ranks of the group that the comparison found. */
  int64_t known_rank[2 * TL_MAX_PCTS], known_value[2 * TL_MAX_PCTS];
  size_t known;
} tl__sset;

/* What the statistics keep of a comparison's group, gathered while the
 * comparison reads its samples. */
struct tl__kept {
  tl__sset set;
  size_t bytes; /* taken from the budget */
};

/* The sessions [from, to) of k, when k kept every sample of its group, as a
 * set of their own (the one tl__sset_load would read, without reading);
 * NULL when k is NULL or did not keep every sample, or out of memory.
 * tl__kept_free frees it. */
tl__kept *tl__kept_part(const tl__kept *k, size_t from, size_t to);
/* Loads the sessions ids[0..nids) into x by reading them (every sample, or
 * a seeded reservoir per session when more than TL_STATS_KEEP). Errors
 * leave a message on the store. */
int tl__sset_load(tl_store *store, const tl_comparison *cmp, const int64_t *ids, size_t nids,
                  uint64_t seed, tl__sset *x);
/* The same, computing dist (the sessions' exact distribution at pcts[0..np))
 * from the same reading of the samples. */
int tl__sset_load_dist(tl_store *store, const tl_comparison *cmp, const int64_t *ids, size_t nids,
                       uint64_t seed, const double *pcts, size_t np, tl_dist *dist, tl__sset *x);
void tl__sset_free(tl__sset *x);
/* The smallest kept value at which the weighted count of samples reaches
 * rank (session i counted w[i] times; w NULL: once). */
int64_t tl__sset_at(const tl__sset *x, const double *w, double rank);
/* Exact values at 1-based ranks of the whole group. */
int tl__sset_values_at_ranks(tl_store *store, const tl__sset *x, const int64_t *ranks, size_t k,
                             int64_t *out);
/* A session's own exact values at percentiles p[0..np). */
int tl__sess_values(tl_store *store, const tl__sess *s, const double *p, size_t np, int64_t *out);

/* The pool cut at marks (at starts of runs of equal values): row t holds
 * each session's count of kept samples below mark t, so that a replicate's
 * weight below a mark is one product of a row and the weights. */
typedef struct {
  const tl__sset *x;
  double *unit; /* in a replicate: the weight of one kept sample of each session */
  double *per;  /* samples per kept sample of each session */
  double *w;    /* a replicate's counts as tl__sset_at takes them, when it answers */
  size_t *mark; /* marks + 1 positions in the pool, from 0 to m */
  float *row;   /* (marks + 1) x sessions counts (exact below 2^24) */
  size_t marks;
  /* The replicate's weight below each mark, once worked out: below[t] holds
   * it while below_gen[t] is gen (one more each replicate). */
  double *below;
  uint32_t *below_gen, gen;
  /* Per percentile, the marks the walks have started from so far: the next
   * replicate's is most likely among them. */
  size_t seen_lo[TL_MAX_PCTS], seen_hi[TL_MAX_PCTS];
  int seen[TL_MAX_PCTS];
} tl__boot;

/* The table of marks of x (tl__boot_free frees it); TL_ENOMEM. */
int tl__boot_init(const tl__sset *x, tl__boot *bt);
void tl__boot_free(tl__boot *bt);
/* Readies a replicate that counts session i count[i] times, then
 * tl__sset_at(x, w, rank) for it at percentile k (w[i] = count[i]), faster. */
void tl__boot_weigh(tl__boot *bt, const uint32_t *count);
int64_t tl__boot_at(tl__boot *bt, const uint32_t *count, double rank, size_t k);

/* ------------------------------------------------------------------------ */
/* The search for changes on a worker thread (steps_runner.c)                */

enum {
  TL__STEPS_MAX = 8,                 /* changes kept per series */
  TL__STEPS_QUEUE_POINTS = 1u << 22, /* points waiting for the worker, at most (32 MiB) */
};

/* One series to search: x[0..n) (malloc'd, given to the runner, freed once
 * searched) and at[i], the index in the whole series of x[i]. Its results
 * (steps[k].index in the whole series) may be read once the runner has
 * waited for it. */
typedef struct tl__steps_job {
  double *x;
  size_t *at;
  size_t n;
  tl_step_opts opts;
  tl_step steps[TL__STEPS_MAX];
  size_t found;
  int rc;
  struct tl__steps_job *next; /* in the queue */
} tl__steps_job;

typedef struct {
  int threaded; /* 0: a job runs as it is added */
  int quit, err;
  size_t pending, points; /* jobs added and not finished, and their points */
  size_t max_points;      /* TL__STEPS_QUEUE_POINTS (the tests lower it) */
  tl__steps_job *head, *tail;
  pthread_t th;
  pthread_mutex_t mu;
  pthread_cond_t cv;
} tl__steps_runner;

/* Starts the runner, with a worker thread when threaded and one can be
 * started (else jobs run as they are added; the results are the same). */
void tl__steps_runner_start(tl__steps_runner *r, int threaded);
/* Queues j (waiting while too many points are queued). Returns the first
 * error of a search so far; after one the rest are only freed. */
int tl__steps_runner_add(tl__steps_runner *r, tl__steps_job *j);
/* Waits until every job added has finished, running queued ones meanwhile;
 * the first error, or TL_OK. */
int tl__steps_runner_wait(tl__steps_runner *r);
/* Frees the jobs not yet searched without searching them, and ends the
 * worker. */
void tl__steps_runner_stop(tl__steps_runner *r);

/* ------------------------------------------------------------------------ */
/* One group's statistics (stats.c)                                          */

typedef struct {
  tl__sset set;
  tl_dist dist; /* exact */
  tl_ci_method method;
  int linear;                    /* TL_CI_SESSIONS by Woodruff's interval (no rep) */
  tl_pct_stats pct[TL_MAX_PCTS]; /* intervals, warnings, spread */
  int64_t *rep;  /* pct_count x TL_STATS_REPLICATES session-bootstrap values, rows sorted
                    (TL_CI_SESSIONS by the bootstrap only) */
  double *logl;  /* pct_count x used: each session's log lateness, the evidence of verdicts */
  size_t used;   /* sessions with samples */
  uint64_t seed; /* of this group's draws */
  int64_t *series[TL_STATS_SERIES];
  /* Once only the rank test needs the samples (tl__rank_keep_pool_only):
   * the sorted pool as its first value and the gaps after it (varints). */
  uint8_t *gaps;
  size_t gaps_len;
  int64_t first;
} tl__gcalc;

/* Computes everything about the sessions ids[0..n): dist (given, or computed
 * when NULL), method, intervals, bootstrap replicates, each session's log
 * lateness (its own value minus armed_ns) and, with series, the sessions'
 * own p90 and p99. kept: the samples the comparison kept of exactly these
 * sessions with this seed, or NULL to read them. */
int tl__gcalc_run(tl_store *store, const tl_comparison *cmp, const int64_t *ids, size_t n,
                  const double *pcts, size_t np, const tl_dist *dist, int64_t armed_ns,
                  uint64_t seed, int series, const tl__kept *kept, tl__gcalc *g);
void tl__gcalc_free(tl__gcalc *g);
/* For the rank test only (rank_test.c): g's pool into g->gaps, the rest of
 * its samples freed (a borrowed set left to its owner); TL_ENOMEM. */
int tl__rank_keep_pool_only(tl__gcalc *g);
/* The rank test of each of pairs[0..count), all between the groups
 * block[0..nb) of calc (in increasing order; each reduced by
 * tl__rank_keep_pool_only), into its mw: the same result as
 * tl_mann_whitney of its two groups' pools. */
int tl__rank_pairs(const tl__gcalc *calc, const size_t *block, size_t nb, tl_pair_stats *pairs,
                   size_t count);
/* The intervals over sessions of g's percentiles pcts[0..np) (g->set, seed
 * and dist made by tl__gcalc_run) into g->pct[k].lo_ns and hi_ns: by the
 * session bootstrap (filling g->rep), or with linear by Woodruff's interval
 * with the sessions as clusters, which tl__gcalc_run uses from
 * TL_STATS_LINEAR_SESSIONS sessions with samples on. Open to the tests,
 * which compare the two on the same groups. */
int tl__session_interval(tl__gcalc *g, const double *pcts, size_t np, int linear);
/* What the sessions say about b minus a at percentile k (stats.c; the
 * method is in docs/statistics.md). */
typedef struct {
  int decided;          /* run-to-run variation was measured: an interval exists */
  int64_t lo_ns, hi_ns; /* its 95% interval in ns, widened to hold the pooled difference */
  int64_t needed;       /* sessions a label with which a difference this size would be
                           clear; 0: none is seen that more sessions would settle */
} tl__sdiff;

/* Compares the sessions of b with those of a at percentile k, whose pooled
 * latenesses are la_ns and lb_ns: Welch's t on the sessions' log
 * latenesses (with predict, b is one new session and the interval is a's
 * prediction interval for it), said back as a difference at the pooled
 * values. */
void tl__session_diff(const tl__gcalc *a, const tl__gcalc *b, size_t k, int64_t la_ns,
                      int64_t lb_ns, int predict, tl__sdiff *out);

/* ------------------------------------------------------------------------ */
/* Numbers in sentences (stats_text.c)                                       */

/* ns in milliseconds with the decimals that suit scale, the largest number
 * said together; never "-0.00". */
void tl__sentence_ms(double ns, double scale, char *buf, size_t len);
/* The largest of |a|, |b| and |c|. */
double tl__max_abs3(double a, double b, double c);

/* The "How sure is this?" and "Changes over time" sections in Markdown on
 * their own (stats_text.c), for the tests that read them without a page. */
int tl__stats_markdown(const tl_comparison *cmp, const tl_stats *st, FILE *out);
/* tl_stats_compute, tl__stats_markdown and tl_stats_free in one call. */
int tl__render_stats_markdown(tl_store *store, const tl_comparison *cmp, FILE *out, char *err,
                              size_t errlen);

#endif
