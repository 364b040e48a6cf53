/* tl_report.h: the one door into tl's reports: exact distributions of stored
 * samples, comparisons of labels, and the pages tlreport writes.
 *
 * Every percentile is the nearest-rank percentile of the raw samples
 * (tl_rank in tl_store.h): exact, one of the measured values, computed in a
 * few passes over the compressed blocks with memory bounded by the number of
 * samples near each requested rank rather than by the whole data set. */
#ifndef TL_REPORT_H
#define TL_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tl_store.h"

/* ------------------------------------------------------------------------ */
/* Exact distributions                                                       */

enum { TL_MAX_PCTS = 16 };

/* The distribution of the samples of a set of sessions. */
typedef struct {
  int64_t count;
  int64_t min_ns, max_ns;
  double mean_ns, stddev_ns; /* population standard deviation */
  size_t pct_count;
  double pcts[TL_MAX_PCTS];    /* requested percentiles, 0..100 */
  int64_t pct_ns[TL_MAX_PCTS]; /* their exact nearest-rank values */
} tl_dist;

/* Computes the distribution of all samples of the given sessions. With no
 * samples, count is 0 and the rest is zero. Errors leave a message on the
 * store. */
int tl_dist_compute(tl_store *store, const int64_t *session_ids, size_t n, const double *pcts,
                    size_t pct_count, tl_dist *out);

/* The same over values in memory (sorts a copy); for tests and small sets. */
int tl_dist_of_values(const int64_t *values, size_t n, const double *pcts, size_t pct_count,
                      tl_dist *out);

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
  tl_dist dist;
  tl_dist spectrum; /* at tl_spectrum_pcts, for the chart */
  /* Histogram of the samples: TL_HIST_BINS bins of hist_width_ns from
   * hist_lo_ns (the minimum) up to the 99.9th percentile; the samples above
   * it are counted in hist_over, so one outlier cannot flatten the chart. */
  int64_t hist_lo_ns, hist_width_ns;
  int64_t hist[TL_HIST_BINS];
  int64_t hist_over;
} tl_group;

/* What the page says about one session beyond its row in the store. */
typedef struct {
  tl_fact_row *facts; /* host facts at the session, sorted by key */
  size_t fact_count;
  tl_fact_row *tags; /* --tag KEY=VALUE of the session, sorted by key */
  size_t tag_count;
  tl_dist dist; /* the session's own p50, p90 and p99, for the trend chart */
} tl_session_detail;

typedef struct {
  tl_group *groups; /* ordered by label (as asked), probe, delay */
  size_t group_count;
  char **labels; /* labels compared, in the order asked */
  size_t label_count;
  tl_session_list sessions;   /* every session behind the comparison, oldest first */
  tl_session_detail *details; /* sessions.count entries, same order */
  int baseline;               /* index into labels of --baseline, or -1 */
} tl_comparison;

typedef struct {
  const char *const *labels; /* labels to compare; NULL/0: every label */
  size_t label_count;
  tl_filter filter; /* further filters (its labels are ignored) */
  double pcts[TL_MAX_PCTS];
  size_t pct_count;     /* 0: 50, 90, 99, 99.9 (the maximum is always shown) */
  int64_t last;         /* >0: only the newest N sessions of each label, probe and delay */
  const char *baseline; /* a compared label the others are shown as ratios of, or NULL */
} tl_compare_opts;

void tl_compare_opts_init(tl_compare_opts *opts);

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

typedef struct {
  tl_format format;
  const char *title;    /* NULL: "Timer latency: LABEL, LABEL ..." */
  int site_links;       /* link labels and hosts to the pages of a --site */
  int64_t generated_ns; /* >0: say when the page was made; 0 keeps pages byte-identical */
} tl_page_opts;

void tl_page_opts_init(tl_page_opts *opts);

/* Writes the comparison page in the asked format. The page is a list of
 * sections, each written by one function in page.c: summary, tables per
 * delay, charts (HTML only), hosts and sessions, method, and confounds.
 * User text is escaped for the format. TL_EIO when writing failed. */
int tl_render(const tl_comparison *cmp, const tl_page_opts *opts, FILE *out);

/* tl_render() as Markdown with default options. */
int tl_render_markdown(const tl_comparison *cmp, FILE *out);

/* Markdown-escapes inline text s onto out: a backslash before punctuation
 * that Markdown or HTML would read inline, control characters dropped. */
void tl_md_escape(FILE *out, const char *s);

/* HTML-escapes s onto out: & < > " ' become entities, control characters
 * are dropped and bytes that are not UTF-8 become U+FFFD. The one escaper
 * for all HTML and SVG tl writes. */
void tl_html_escape(FILE *out, const char *s);

/* "1.17 ms": nanoseconds to milliseconds with two decimals. */
void tl_format_ms(int64_t ns, char *buf, size_t len);

/* ------------------------------------------------------------------------ */
/* Writing files                                                             */

/* Replaces path with len bytes of data: written to a temporary file in the
 * same folder, then renamed over path, so a failed write leaves no half
 * file. An existing path that is not tl output (no TL_REPORT_MARKER in its
 * first line), a symbolic link or not a regular file is refused with
 * TL_ECONFLICT unless force is set (a link is then replaced, never
 * followed). */
int tl_report_write_file(const char *path, const char *data, size_t len, int force, char *err,
                         size_t errlen);

/* Writes a static site into dir (created when missing): index.html, one
 * page per label (label-LABEL.html), one per host (host-FINGERPRINT.html)
 * and the comparison (compare.html), linked relatively. Only names made of
 * validated labels and hex fingerprints are written, each inside dir
 * through tl_report_write_file rules. Same database and options give the
 * same bytes. *pages receives the number of files written (may be NULL). */
int tl_site_write(tl_store *store, const tl_compare_opts *opts, const tl_page_opts *page,
                  const char *dir, int force, size_t *pages, char *err, size_t errlen);

#endif /* TL_REPORT_H */
