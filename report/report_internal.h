/* report_internal.h: what the files of report/ share: tables that print as
 * Markdown or HTML, the page being written, the SVG charts and the facts a
 * page looks up. Nothing here is part of tl_report.h. */
#ifndef TL_REPORT_INTERNAL_H
#define TL_REPORT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tl_report.h"

/* ------------------------------------------------------------------------ */
/* Exact distributions (dist.c)                                              */

/* What the first pass over a set of samples learns (count, extremes, sums
 * and a log histogram), so that a set made of smaller ones can skip it. */
typedef struct tl__pass1 tl__pass1;
/* Empty; NULL when out of memory. Free with tl__pass1_free (NULL is fine). */
tl__pass1 *tl__pass1_new(void);
void tl__pass1_free(tl__pass1 *p);

/* tl_dist_compute for any number of percentiles, all found in the same
 * passes: out receives count, min, max, mean and stddev (pct_count 0),
 * values[i] the exact value at pcts[i]. With known (the pass-1 result of
 * exactly these sessions) the first pass is skipped; otherwise, with add_to,
 * its result is added there too. */
int tl__dist_many(tl_store *store, const int64_t *session_ids, size_t n, const double *pcts,
                  size_t pct_count, tl_dist *out, int64_t *values, const tl__pass1 *known,
                  tl__pass1 *add_to);
/* Hands every sample of the sessions, in stored order, to cb like
 * tl_store_scan, but decoding on this thread while cb runs on another. */
int tl__scan(tl_store *store, const int64_t *session_ids, size_t n, tl_samples_cb cb, void *ctx);

/* ------------------------------------------------------------------------ */
/* Tables                                                                    */

/* A table of plain-text cells, escaped only when written, so one table
 * serves Markdown and HTML alike. */
typedef struct tl__table tl__table;

enum { TL__BEST = 1 }; /* cell flags */

/* head: cols column names (not copied: they must outlive the table); align:
 * cols chars, 'l' or 'r'. NULL on OOM; free with tl__table_free. */
tl__table *tl__table_new(size_t cols, const char *const *head, const char *align);
/* Appends a cell (row-major, rows fill up in order); returns its index, or
 * (size_t)-1 when out of memory (the table then refuses to be written). */
size_t tl__table_add(tl__table *t, const char *text);
size_t tl__table_addf(tl__table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Marks cell i (flags) and sets a relative link for it (href may be NULL;
 * only names tl made from validated labels or fingerprints). */
void tl__table_mark(tl__table *t, size_t i, int flags);
void tl__table_link(tl__table *t, size_t i, const char *href);
size_t tl__table_rows(const tl__table *t);
/* The text of cell (row, col). */
const char *tl__table_cell(const tl__table *t, size_t row, size_t col);
/* Writes the table; TL_ENOMEM when a cell was lost. */
int tl__table_write(const tl__table *t, tl_format format, FILE *out);
void tl__table_free(tl__table *t);

/* ------------------------------------------------------------------------ */
/* The page being written                                                    */

typedef struct {
  const tl_comparison *c;
  const tl_page_opts *o;
  FILE *out;
  FILE *md; /* where prose goes: out for Markdown, a buffer for HTML */
  char *md_buf;
  size_t md_len;
  int chart_id; /* numbers the charts of one page */
  int failed;
} tl__page;

/* The stream for Markdown prose. For HTML the prose is buffered and turned
 * into HTML by cmark (safe mode: raw HTML never passes) when the next table
 * or chart is written, or at the end. */
FILE *tl__prose(tl__page *p);
void tl__prose_flush(tl__page *p);

/* s for the inside of a fenced code block: as it is, but control characters
 * dropped and bytes that are not UTF-8 as U+FFFD (like tl_md_escape). */
void tl__md_literal(FILE *out, const char *s);

/* ------------------------------------------------------------------------ */
/* Looking things up                                                         */

/* The value of fact key in d, or NULL. */
const char *tl__fact(const tl_session_detail *d, const char *key);
/* The value of tag key in d, or NULL. */
const char *tl__tag(const tl_session_detail *d, const char *key);
/* "setTimeout(50)" for settimeout, "uv 50 ms" for other probes. */
void tl__call_name(const char *probe, int64_t delay_ns, char *buf, size_t len);
/* A latency in milliseconds with enough digits for its size ("0.0021 ms"). */
void tl__ms(double ns, char *buf, size_t len);
/* The site page of a host: "host-FINGERPRINT.html"; 0 when fp is hex (the
 * only fingerprints that become file names), -1 otherwise. */
int tl__host_page(const char *fingerprint, char *buf, size_t len);
/* A one-paragraph definition of a probe by its stored name (never NULL). */
const char *tl__probe_definition(const char *probe);

/* ------------------------------------------------------------------------ */
/* Charts (svg.c): inline SVG, no script, no external font or file           */

/* Latency by percentile, one line per label, for one probe and delay. */
void tl__svg_spectrum(tl__page *p, const char *probe, int64_t delay_ns);
/* The histogram of one group. */
void tl__svg_histogram(tl__page *p, const tl_group *g);
/* p90 and p99 of each session over time, one line per label. */
void tl__svg_trend(tl__page *p, const char *probe, int64_t delay_ns);

/* The index page of a site (HTML) over the comparison of every label. */
int tl__render_index(const tl_comparison *all, const tl_page_opts *opts, FILE *out);

/* Statistics (stats.c) on a page: the confidence-interval table (heads
 * receives the column names and alignment, and must outlive the table), and the prose
 * around it (warnings, differences, changes over time) in Markdown. */
typedef struct {
  char text[TL_MAX_PCTS + 4][32];
  const char *name[TL_MAX_PCTS + 4];
  char align[TL_MAX_PCTS + 5];
} tl__heads;
tl__table *tl__stats_ci_table(const tl_comparison *cmp, const tl_stats *st, tl__heads *heads);
void tl__stats_notes(FILE *out, const tl_comparison *cmp, const tl_stats *st);

/* JSON (json.c). */
int tl__render_json(const tl_comparison *c, const tl_page_opts *o, FILE *out);

#endif
