/* tl_report.h: the one door into tl's reports: comparisons of labels, and
 * the pages tlreport writes.
 *
 * Every percentile is the nearest-rank percentile of the raw samples
 * (tl_rank in tl_base.h), found exactly by the store's sweep (tl_sweep in
 * tl_store.h): one of the measured values, never an interpolation. */
#ifndef TL_REPORT_H
#define TL_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tl_store.h"

/* ------------------------------------------------------------------------ */
/* Lateness: what comparisons compare                                        */

/* Every sample is the time from arming the timer to its wake-up, so it holds
 * the delay everyone waits plus how late the timer was. Comparisons (ratios,
 * best and worst, --baseline, differences, --check) are about the lateness:
 * the sample minus the delay the timer was really armed for
 * (tl_probe_armed_ns, tl_base.h). */

/* Ratios of latenesses are shown only where both are at least this (0.1 ms):
 * below it, clock granularity and scheduling noise are the same size as the
 * value, and 0.02 against 0.07 ms is a difference of 0.05 ms, not "3.5 times
 * worse". Below it, differences are given in time only. */
enum { TL_RATIO_FLOOR_NS = 100000 };

/* b / a for latenesses a and b (ns), or 0 when either is below
 * TL_RATIO_FLOOR_NS and no ratio should be shown. */
double tl_lateness_ratio(int64_t a_ns, int64_t b_ns);

/* ------------------------------------------------------------------------ */
/* Comparisons                                                               */

/* The percentiles the latency-by-percentile chart is drawn through (0 is the
 * minimum); each is an exact nearest-rank value like every other. */
enum { TL_SPECTRUM_POINTS = 13, TL_HIST_BINS = 40 };
extern const double tl_spectrum_pcts[TL_SPECTRUM_POINTS];

/* One row of a comparison: the sessions of one label, probe and delay. */
typedef struct {
  char *label;
  char *probe;
  int64_t delay_ns;
  size_t session_count;
  int64_t *session_ids; /* session_count ids, oldest first */
  size_t *session_at;   /* where each of them is in the comparison's sessions */
  tl_dist dist;
  tl_dist spectrum; /* at tl_spectrum_pcts, for the chart */
  /* Histogram of the samples: TL_HIST_BINS bins of hist_width_ns from
   * hist_lo_ns (the minimum) up to the 99.9th percentile, rounded up by at
   * most 1/2048 so that the bins fill in the pass that finds the percentiles,
   * or, when p99.9 lies more than four times as far out as p90, up to four
   * times p90's distance from the minimum; the samples above that (10% at
   * most) are counted in hist_over, so a few spikes cannot flatten the
   * chart. */
  int64_t hist_lo_ns, hist_width_ns;
  int64_t hist[TL_HIST_BINS];
  int64_t hist_over;
} tl_group;

/* What the page says about one session beyond its row in the store. */
typedef struct {
  char *label;        /* with --by, the session's own label (its row's label is its group) */
  tl_fact_row *facts; /* host facts at the session, sorted by key */
  size_t fact_count;
  tl_fact_row *tags; /* --tag KEY=VALUE of the session, sorted by key */
  size_t tag_count;
  /* Its own distribution, kept small (a fleet has hundreds of thousands of
   * sessions; tl__session_dist makes a tl_dist of it): its samples' moments
   * (count 0: none) and its values at pcts, which are 50, 90 and 99 (for the
   * trend chart), then the groups' percentiles (for the statistics). */
  int64_t count, min_ns, max_ns;
  double mean_ns, stddev_ns;
  size_t pct_count;
  const double *pcts; /* shared by every session of the comparison */
  int64_t *pct_ns;
} tl_session_detail;

/* The time past p50 of a group's samples above one percentile, split by
 * cause (causes.c). */
typedef struct {
  int known;                 /* 0: the percentile is not among the group's */
  int64_t tail_samples;      /* samples above it (from the sessions' histograms) */
  int64_t tail_ns;           /* their time past the p50, summed */
  int64_t measured_samples;  /* of those, with their run-queue wait read */
  int64_t cpu_wait_ns;       /* waiting for a CPU, at most the time past p50 */
  int64_t throttled_ns;      /* of cpu_wait_ns, in sessions whose cgroup's quota throttled */
  int64_t not_attributed_ns; /* tail_ns - cpu_wait_ns */
} tl_tail_split;

/* Why a group's tail was late (causes.c): its samples above p99, each
 * counted past the group's p50 (the floor every sample pays), split by
 * cause; the same above p90 in at90. What was not measured is not
 * attributed, never guessed. */
typedef struct {
  int known;                /* 0: nothing recorded, no sentence, no bar */
  int64_t tail_samples;     /* samples above p99 (from the sessions' histograms) */
  int64_t tail_ns;          /* their time past the p50, summed */
  int64_t measured_samples; /* of those, with their run-queue wait read */
  int64_t cpu_wait_ns; /* waiting for a CPU: each one's run-queue wait, at most its time past p50 */
  int64_t throttled_ns;       /* of cpu_wait_ns, in sessions whose cgroup's quota throttled */
  int64_t not_attributed_ns;  /* tail_ns - cpu_wait_ns */
  int64_t nivcsw, migrations; /* in the tail samples measured */
  int64_t floor_ns;           /* the p50 lateness */
  int64_t timer_slack_ns;     /* the recorded timer slack (-1 unknown) */
  char quota[32];             /* the cgroup's CPU quota ("0.2", "none", "" unknown) */
  int64_t periods, throttled_periods; /* the quota's periods over the sessions (-1 unknown) */
  double steal_pct,
      irq_pct; /* of CPU time during the sessions: stolen, in IRQ and softirq (NAN unknown) */
  tl_tail_split at90; /* above p90: from each session's wait by latency band, where the
                         band lies wholly above the p90 (the band across it is not attributed) */
} tl_group_causes;

/* A session's per-second counters, folded so that any session length
 * gives one small row (causes.c): over its intervals (a second each, longer
 * for long sessions), the median and the largest rate. NAN or -1: not
 * readable there. */
typedef struct {
  int known;                     /* 0: the session recorded no counters */
  int64_t intervals, span_ms;    /* rows kept, and the time they cover */
  double steal_ms[2], irq_ms[2]; /* CPU time stolen, in IRQ and softirq, ms a second (all CPUs) */
  double ctxt[2];                /* context switches a second, host-wide */
  double psi_pct[2];             /* CPU pressure: per cent of the time some task waited */
  int64_t runnable[2];           /* runnable threads: median and most seen */
  int64_t periods, throttled;    /* the cgroup's quota periods, and throttled ones, in all */
  int64_t throttled_ns;          /* time the quota held the cgroup back, in all */
  int64_t freq_khz[3];           /* CPU 0's frequency: lowest, median, highest (0 unknown) */
} tl_session_counters;

typedef struct {
  tl_group *groups;              /* ordered by label (as asked), probe, delay */
  tl_group_causes *causes;       /* group_count entries (causes.c), NULL when none could be read */
  tl_session_counters *counters; /* sessions.count entries (causes.c), NULL when none */
  size_t group_count;
  char **labels; /* labels compared, in the order asked */
  size_t label_count;
  tl_session_list sessions;         /* every session behind the comparison, oldest first */
  tl_session_detail *details;       /* sessions.count entries, same order */
  void *detail_values;              /* what the details' pcts and pct_ns point into */
  struct tl__row_sets *detail_rows; /* and their facts and tags, each set once */
  int baseline;                     /* index into labels of --baseline, or -1 */
  char *by;        /* grouped --by this ("memory", "memory and cpus"): labels are its values;
                      NULL when grouped by label */
  double *label_x; /* with one numeric --by key: each label's value (NAN: unknown), else NULL */
  struct tl__by *by_keys;                    /* by, parsed once (report's own), or NULL */
  struct tl__label_sessions *label_sessions; /* each label's sessions (lookup.c) */
} tl_comparison;

typedef struct {
  const char *const *labels; /* labels to compare; NULL/0: every label */
  size_t label_count;
  tl_filter filter; /* further filters (its labels are ignored) */
  double pcts[TL_MAX_PCTS];
  size_t pct_count;     /* 0: 50, 90, 99, 99.9 (the maximum is always shown) */
  int64_t last;         /* >0: only the newest N sessions of each label, probe and delay */
  const char *baseline; /* a compared label the others are shown as ratios of, or NULL */
  const char *by;       /* group by host facts or tags (tlreport --by): labels and baseline
                           are then values of it ("1G", "2 CPUs"); NULL: by label */
} tl_compare_opts;

void tl_compare_opts_init(tl_compare_opts *opts);

/* ------------------------------------------------------------------------ */
/* Comparing by what the machine is (group.c)                                */

enum { TL_BY_MAX = 2 }; /* keys crossed at most */

/* Checks a --by KEY[,KEY] ("memory", "cpus", "tag:load", "memory,cpus");
 * for a word that is no key, err says which keys the sessions matching
 * filter have (one line). TL_OK or TL_EINVAL. */
int tl_by_check(tl_store *store, const char *spec, const tl_filter *filter, char *err,
                size_t errlen);
/* tlreport --by help: every key the sessions matching filter have, with
 * the number of sessions of each value, in the order --by puts them. */
int tl_by_help(tl_store *store, const tl_filter *filter, FILE *out, char *err, size_t errlen);

/* Builds the comparison. An unknown label is TL_ENOTFOUND with a message
 * listing the labels the database has; a filter that matches no session (or
 * no session of one of the asked labels) is TL_ENOTFOUND too, and so is a
 * baseline that is not among the compared labels. Messages go to err. */
int tl_compare(tl_store *store, const tl_compare_opts *opts, tl_comparison *out, char *err,
               size_t errlen);
void tl_comparison_free(tl_comparison *cmp);

/* ------------------------------------------------------------------------ */
/* Pages                                                                     */

/* Every file tl writes starts with a first line holding this marker, which is
 * how -o and --site tell tl's own output (safe to replace) from other files. */
#define TL_REPORT_MARKER "tl-report"

typedef enum { TL_FORMAT_MD, TL_FORMAT_HTML, TL_FORMAT_JSON } tl_format;

/* Sessions left out of a report because their samples failed verification
 * (tlreport --skip-damaged): the page says which and why. */
typedef struct {
  int64_t session_id;
  char *label, *uuid;
  int64_t started_ns;
  char *why; /* the verification error, one line */
} tl_left_out;

typedef struct {
  tl_left_out *items;
  size_t count;
} tl_left_out_list;

void tl_left_out_free(tl_left_out_list *list);

/* Runs make(ctx), a whole report from store (a page or a site), and each
 * time it fails with TL_ECORRUPT naming a damaged session (its message in
 * err), leaves that session out of the store's lists, adds it to *left and
 * runs make again, so that no number of the result comes from it. Returns
 * make's last result; a failure that names no session, or one already left
 * out, is returned as it is. */
int tl_report_skipping_damaged(tl_store *store, int (*make)(void *ctx), void *ctx,
                               tl_left_out_list *left, char *err, size_t errlen);

/* The charts of a Markdown page, each an SVG file to be written beside it
 * (tl_report_write_charts) and linked from it as an image: "STEM-1.svg",
 * "STEM-2.svg" ... in the page's order. */
typedef struct {
  char *name; /* file name, without folders */
  char *data; /* the standalone SVG */
  size_t len;
} tl_chart_file;

typedef struct {
  const char *stem; /* the page's file name without folders and ".md" */
  tl_chart_file *items;
  size_t count;
} tl_chart_files;

/* Frees the files (not stem) and empties the list; NULL is fine. */
void tl_chart_files_free(tl_chart_files *charts);

typedef struct {
  tl_format format;
  const char *title;            /* NULL: "Timer latency: LABEL, LABEL ..." */
  int site_links;               /* link labels and hosts to the pages of a --site */
  int host_facts;               /* a host's page: list the facts tlreport --by groups on */
  int64_t generated_ns;         /* >0: say when the page was made; 0 keeps pages byte-identical */
  const struct tl_stats *stats; /* tl_stats_compute() of the same comparison, or NULL */
  const tl_left_out_list *left_out; /* sessions left out as damaged ("Read with care"), or NULL */
  /* The labels in the order that gives each its colour and marker (a site
   * passes every label of the site, so a label looks the same on each
   * page), or NULL: the page's own labels in order. */
  const char *const *style_order;
  size_t style_count;
  /* Markdown: where the charts go, as SVG files to write beside the page
   * (-o), or NULL: no file can be written (standard output) and one line
   * says how to get them. */
  tl_chart_files *charts;
  const char *compare_by; /* a site's page: the --by key compare.html is grouped by, or NULL */
  const char *const *host_pages; /* a site's page: the fingerprints of the hosts with a page,
                                    in byte order (strcmp) */
  size_t host_page_count;
} tl_page_opts;

void tl_page_opts_init(tl_page_opts *opts);

/* Writes the comparison page in the asked format. The page is a list of
 * sections, each written by one function in page.c: summary, tables per
 * delay, charts (HTML only), hosts and sessions, method, and confounds.
 * User text is escaped for the format. TL_EIO when writing failed. */
int tl_render(const tl_comparison *cmp, const tl_page_opts *opts, FILE *out);

/* Markdown-escapes inline text s onto out: a backslash before punctuation
 * that Markdown or HTML would read inline, control characters dropped. */
void tl_md_escape(FILE *out, const char *s);

/* HTML-escapes s onto out: & < > " ' become entities, control characters
 * are dropped and bytes that are not UTF-8 become U+FFFD. The one escaper
 * for all HTML and SVG tl writes. */
void tl_html_escape(FILE *out, const char *s);

/* ------------------------------------------------------------------------ */
/* Writing files                                                             */

/* A page written to path as it is made: into a temporary file in the same
 * folder (*out, from tl_report_file_open), renamed over path by
 * tl_report_file_place, so that neither memory holds the page nor a failed
 * run leaves half a file. An existing path that is not tl output (no
 * TL_REPORT_MARKER in its first line), a symbolic link or not a regular
 * file is refused with TL_ECONFLICT unless force is set (a link is then
 * replaced, never followed), before anything is written. A replaced file
 * keeps its permissions; a new one gets 0644 less the umask. */
typedef struct tl_report_file tl_report_file;
/* NULL with err set when path may not be written. */
tl_report_file *tl_report_file_open(const char *path, int force, FILE **out, char *err,
                                    size_t errlen);
/* Empties the file, for a page made again. */
int tl_report_file_restart(tl_report_file *f);
/* Puts the page in place with a Markdown page's chart files (may be NULL)
 * beside it, as --site does: every chart's name checked before any is
 * written, the page put in place last. Frees f, whatever the result. */
int tl_report_file_place(tl_report_file *f, const tl_chart_files *charts, char *err, size_t errlen);
/* Removes the temporary file and frees f (may be NULL). */
void tl_report_file_discard(tl_report_file *f);

/* Writes a static site into dir (created when missing): index.html, one
 * page per label (label-LABEL.html), one per host (host-FINGERPRINT.html,
 * or host-imported-NAME.html for imported data) and the comparison
 * (compare.html), linked relatively. Only names made of validated labels,
 * imported host names that are valid labels and hex fingerprints are written, each inside dir
 * by tl_report_file_open's rules. All or nothing: every page is checked
 * and made before any takes its place, so a refused or failed run leaves
 * the folder as it was (and creates none). Same database and options give
 * the same bytes. *pages receives the number of files written (may be
 * NULL). */
int tl_site_write(tl_store *store, const tl_compare_opts *opts, const tl_page_opts *page,
                  const char *dir, int force, size_t *pages, char *err, size_t errlen);

/* ------------------------------------------------------------------------ */
/* How sure is this? (stats.c; methods in docs/statistics.md)               */
/* Confidence intervals of percentiles, differences between labels with a    */
/* rank test, session-to-session spread, warnings when a percentile rests on */
/* too few samples, lasting changes in per-session series, and the           */
/* regression check. Every random draw comes from a PRNG seeded by the       */
/* label, probe and delay, so the same database gives the same bytes.        */

enum {
  TL_STATS_BOOT_SESSIONS = 5,       /* sessions a group needs to bootstrap over sessions */
  TL_STATS_LINEAR_SESSIONS = 10000, /* sessions from which Woodruff's interval replaces the
                                       bootstrap (its cost does not grow with sessions) */
  TL_STATS_MIN_ABOVE = 10,          /* samples a percentile needs above it to be trusted */
  TL_STATS_REPLICATES = 1000,       /* bootstrap replicates */
  TL_STATS_KEEP = 1 << 18,          /* samples of one group held in memory at most */
  TL_STATS_SERIES = 2,              /* per-session series: p90 and p99 */
  TL_STATS_MIN_SESSIONS = 2,    /* sessions a label needs for any verdict (run-to-run variation) */
  TL_STATS_FIRST_SESSIONS = 5,  /* sessions a label to collect when variation is unknown */
  TL_STATS_LOG_FLOOR_NS = 1000, /* a session's lateness below 1 us counts as 1 us in logs */
};

/* The 1-based ranks of the distribution-free (binomial) confidence interval
 * of the pct percentile among n samples: the true percentile lies between
 * the lo-th and hi-th smallest sample with probability at least conf (each
 * tail at most (1 - conf) / 2). A bound the data cannot give is 0: the
 * lowest percentiles of very few samples have no lo, the highest no hi.
 * TL_EINVAL for n < 1, pct outside [0, 100] or conf outside (0, 1). */
int tl_order_stat_ci(int64_t n, double pct, double conf, int64_t *lo_rank, int64_t *hi_rank);

/* The Mann-Whitney U test of two samples, each sorted ascending. */
typedef struct {
  double u;         /* pairs (x of a, y of b) with x > y, ties counted half */
  double z;         /* normal approximation, tie- and continuity-corrected */
  double p_value;   /* two-sided; 1 when every value is the same */
  double a_below_b; /* probability that a value of a is below one of b, ties half */
} tl_mw;
int tl_mann_whitney(const int64_t *a, size_t na, const int64_t *b, size_t nb, tl_mw *out);

/* A lasting change (step) in a series: binary segmentation on the mean,
 * each split kept only if a permutation test finds it (p <= alpha), both
 * sides hold min_segment points and the median level moves by min_change. */
typedef struct {
  size_t index;         /* first point after the change */
  double before, after; /* median of the segments either side */
  double p_value;       /* permutation test of the split */
} tl_step;

typedef struct {
  size_t min_segment; /* 0: 3 points */
  double alpha;       /* 0: 0.01 */
  double min_change;  /* relative change of the level; 0: 0.05 (5%) */
  uint64_t seed;      /* of the permutations */
} tl_step_opts;

/* Up to max steps of x[0..n), in order of index, into steps; *count is how
 * many. opts may be NULL (defaults). TL_EINVAL for a value that is not
 * finite, TL_ENOMEM when the working copies cannot be allocated. */
int tl_steps_find(const double *x, size_t n, const tl_step_opts *opts, tl_step *steps, size_t max,
                  size_t *count);

typedef enum {
  TL_CI_ORDER = 1,    /* order statistics over the samples (few sessions) */
  TL_CI_SESSIONS = 2, /* over sessions (TL_STATS_BOOT_SESSIONS or more): a bootstrap, or
                         Woodruff's interval from TL_STATS_LINEAR_SESSIONS (linear) */
} tl_ci_method;

/* What one percentile of one group can claim. */
typedef struct {
  int64_t lo_ns, hi_ns; /* 95% confidence interval; -1: the data cannot bound it */
  int64_t above;        /* samples above the percentile (n - rank) */
  int few;              /* fewer than TL_STATS_MIN_ABOVE above: warn */
  int64_t needed;       /* samples needed to have enough above; 0: none will do (p100) */
  int64_t spread_ns;    /* largest minus smallest session's own value; 0 with one session */
} tl_pct_stats;

/* A lasting change in one of a group's per-session series. */
typedef struct {
  double pct;           /* 90 or 99 */
  size_t session_index; /* first session after the change (group order, oldest first) */
  int64_t at_ns;        /* when that session started */
  double before_ns, after_ns;
  double p_value;
} tl_change;

typedef struct {
  tl_ci_method method;
  int linear;                          /* TL_CI_SESSIONS by Woodruff's interval, not a bootstrap */
  tl_pct_stats pct[TL_MAX_PCTS];       /* in the order of the group's dist.pcts */
  double series_pcts[TL_STATS_SERIES]; /* 90, 99 */
  int64_t *started_ns;                 /* session_count start times, oldest first */
  int64_t *series_ns[TL_STATS_SERIES]; /* each session's own p90 and p99; -1 when it
                                          rests on too few samples */
  size_t session_count;
  tl_change *changes; /* change_count lasting changes, by series then time */
  size_t change_count;
} tl_group_stats;

/* Two groups of the same probe and delay (a before b in the comparison). */
typedef struct {
  size_t a, b;                  /* group indices */
  int64_t diff_ns[TL_MAX_PCTS]; /* b minus a at each percentile, exact */
  int64_t lo_ns[TL_MAX_PCTS];   /* 95% interval of the difference, from the sessions'
                                   own values (Welch on logs); diff_ns when !decided */
  int64_t hi_ns[TL_MAX_PCTS];
  int clear[TL_MAX_PCTS];               /* decided and the interval excludes 0 */
  int decided;                          /* both have TL_STATS_MIN_SESSIONS sessions with samples */
  size_t sessions_a, sessions_b;        /* sessions with samples: what the verdict rests on */
  int64_t sessions_needed[TL_MAX_PCTS]; /* sessions a label that would likely make the
                                           difference seen clear; 0: none would */
  int spread_over[TL_MAX_PCTS];         /* a's or b's sessions disagree by more than |diff| */
  tl_mw mw;                             /* rank test of the whole distributions */
} tl_pair_stats;

typedef struct tl_stats {
  tl_group_stats *groups; /* one per comparison group, same order */
  size_t group_count;
  tl_pair_stats *pairs; /* every pair of groups with the same probe and delay */
  size_t pair_count;
  int ranked;         /* the pairs carry the rank test (mw); else it was left out */
  size_t *pair_since; /* per group a: its first pair as a (the pairs of a are
                         together, b rising), for looking a pair up; SIZE_MAX: none */
} tl_stats;

/* Computes the statistics of a comparison built by tl_compare on the same
 * store, from the samples the comparison kept of each group (at most
 * TL_STATS_KEEP, for as many groups as fit in 64 MiB) or, for the other
 * groups, read again one probe and delay at a time. Free with tl_stats_free
 * (also after a failure; NULL is fine). Errors go to err. */
int tl_stats_compute(tl_store *store, const tl_comparison *cmp, tl_stats *out, char *err,
                     size_t errlen);
/* tl_stats_compute without the rank test of each pair (ranked 0), which
 * only the JSON export and the statistics' own Markdown say: it reads all
 * of both groups' kept samples, for every pair of groups. */
int tl_stats_compute_unranked(tl_store *store, const tl_comparison *cmp, tl_stats *out, char *err,
                              size_t errlen);
/* tl_compare, then tl_stats_compute_unranked, with the same results: each
 * group's statistics are worked out as the comparison's pass over its
 * samples ends, from the samples kept for them, which then make room for
 * the next groups'. So no group's samples are read twice, however many
 * groups there are (200 hosts --by hostname). On failure both are freed
 * already. */
int tl_compare_with_stats(tl_store *store, const tl_compare_opts *opts, tl_comparison *cmp,
                          tl_stats *out, char *err, size_t errlen);
void tl_stats_free(tl_stats *st);

/* One plain-text sentence (no Markdown; escape it for the page) about
 * percentile k of a pair: "droplet is faster than vbox at p90 by 3.10 ms
 * (95% CI 2.80 to 3.40 ms)" or "no clear difference between vbox and
 * droplet at p99 with this data (...)", with the spread and few-samples
 * caveats. Truncated to len. */
void tl_pair_sentence(const tl_comparison *cmp, const tl_stats *st, const tl_pair_stats *p,
                      size_t k, char *buf, size_t len);
/* "p99 of droplet at 50 ms (settimeout) rose from 52.10 to 58.40 ms on
 * 2026-11-12" (plain text, UTC date). */
void tl_change_sentence(const tl_group *g, const tl_change *c, char *buf, size_t len);

/* ------------------------------------------------------------------------ */
/* Regression check (tlreport --check)                                       */

typedef struct {
  tl_compare_opts compare;   /* labels (the baseline is added), filters, percentiles */
  const char *baseline;      /* compare every label with this one; NULL: history only */
  double max_regression;     /* allowed worsening as a fraction: 0.10 for 10% */
  int64_t min_regression_ns; /* smaller worsenings never count (timer jitter) */
} tl_check_opts;

/* max_regression 0.10, min_regression_ns 10 us. */
void tl_check_opts_init(tl_check_opts *opts);

/* "10%", "10" (percent) or "2.5%" to a fraction in (0, 10]. */
int tl_regression_parse(const char *s, double *fraction, char *why, size_t whylen);

enum { TL_CHECK_REGRESSED = 1 };

/* Checks every label's percentiles against the baseline's (same probe and
 * delay) and each group's latest session against its earlier sessions. A
 * percentile has regressed when it is more than max_regression (and at least
 * min_regression_ns) above the reference and the 95% interval of the
 * difference lies above zero. Writes one line per regression and a summary
 * to out (user text made safe for a terminal), nothing when it fails. Returns TL_OK,
 * TL_CHECK_REGRESSED, or a negative TL_E* code with a message in err; an
 * unknown baseline is TL_ENOTFOUND naming the labels there are. */
int tl_report_check(tl_store *store, const tl_check_opts *opts, FILE *out, char *err,
                    size_t errlen);

/* ------------------------------------------------------------------------ */
/* tlreport's command line (args.c)                                          */

enum { TL_REPORT_LABELS_MAX = 64 };

/* What tlreport's options ask for, gathered by tl_report_option. */
typedef struct {
  tl_compare_opts compare; /* --compare, --by, --baseline, --last, --percentiles, filters */
  tl_page_opts page;       /* --format, --timestamp */
  tl_check_opts check;     /* --max-regression */
  tl_filter_args filter;   /* --probe, --delay, --since, --until, --host, --tag */
  const char *output;      /* -o FILE, or NULL */
  const char *site;        /* --site DIR, or NULL */
  int force, checking, format_given, max_regression_given, by_help;
  int skip_damaged;                   /* --skip-damaged */
  char *labels[TL_REPORT_LABELS_MAX]; /* --compare, split into label_buf */
  char label_buf[4096], pct_buf[512];
} tl_report_args;
void tl_report_args_init(tl_report_args *a);
/* tlreport's option --name (without "--") with value v (NULL for a flag).
 * Returns 1 when taken, 0 when name is none of its options, TL_EINVAL with
 * a one-line reason in why for a bad value. */
int tl_report_option(tl_report_args *a, const char *name, const char *v, char *why, size_t whylen);
/* After the last option: the option whose value or company is wrong
 * ("--baseline"), with why, or NULL when they go together. */
const char *tl_report_args_check(tl_report_args *a, char *why, size_t whylen);
/* Makes what a asks for from store: the --by keys, the check's findings or
 * the page to out, the page to a->output, or the site. Returns TL_OK,
 * TL_CHECK_REGRESSED or an error with its message in err; *usage is set when
 * that error is the user's (an unknown --by key or value). */
int tl_report_run(tl_store *store, const tl_report_args *a, FILE *out, int *usage, char *err,
                  size_t errlen);

#endif /* TL_REPORT_H */
