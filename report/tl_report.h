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

/* Writes the samples of the sessions matching filter as an HdrHistogram
 * percentile distribution ("hgrm", values in milliseconds), each value an
 * exact nearest-rank percentile. No matching sample is TL_ENOTFOUND. The
 * whole output comes from one read snapshot. Messages go to err. */
int tl_write_hgrm(tl_store *store, const tl_filter *filter, FILE *out, char *err, size_t errlen);

/* ------------------------------------------------------------------------ */
/* Comparisons                                                               */

/* One row of a comparison: the sessions of one label, probe and delay. */
typedef struct {
  char *label;
  char *probe;
  int64_t delay_ns;
  size_t session_count;
  int64_t *session_ids; /* session_count ids, oldest first */
  tl_dist dist;
} tl_group;

typedef struct {
  tl_group *groups; /* ordered by label (as asked), probe, delay */
  size_t group_count;
  char **labels; /* labels compared, in the order asked */
  size_t label_count;
  tl_session_list sessions; /* every session behind the comparison */
} tl_comparison;

typedef struct {
  const char *const *labels; /* labels to compare; NULL/0: every label */
  size_t label_count;
  tl_filter filter; /* further filters (its labels are ignored) */
  double pcts[TL_MAX_PCTS];
  size_t pct_count; /* 0: 50, 90, 99 */
} tl_compare_opts;

void tl_compare_opts_init(tl_compare_opts *opts);

/* Builds the comparison. An unknown label is TL_ENOTFOUND with a message
 * listing the labels the database has; a filter that matches no session is
 * TL_ENOTFOUND too. Messages go to err. */
int tl_compare(tl_store *store, const tl_compare_opts *opts, tl_comparison *out, char *err,
               size_t errlen);
void tl_comparison_free(tl_comparison *cmp);

/* ------------------------------------------------------------------------ */
/* Pages                                                                     */

/* The comparison as Markdown: a table per label and delay in milliseconds
 * and, per label, the sentence "On droplet, 90 percent of calls took up to
 * ...". User text is escaped for Markdown. */
int tl_render_markdown(const tl_comparison *cmp, FILE *out);

/* Markdown-escapes s (backslash before punctuation that Markdown or HTML
 * would read, control characters dropped) onto out. */
void tl_md_escape(FILE *out, const char *s);

/* "1.17 ms": nanoseconds to milliseconds with two decimals. */
void tl_format_ms(int64_t ns, char *buf, size_t len);

#endif /* TL_REPORT_H */
