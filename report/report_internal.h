/* report_internal.h: the rendering floor of report/: tables that print as
 * Markdown or HTML, the page being written, its sections, the SVG charts
 * and JSON. It builds on the computing floor (compute.h), which never
 * includes it. Nothing here is part of tl_report.h. */
#ifndef TL_REPORT_INTERNAL_H
#define TL_REPORT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "compute.h"
#include "tl_report.h"

#ifdef TL_REPORT_COMPUTING
#error "the computing floor of report/ includes compute.h, never the rendering floor's header"
#endif

/* ------------------------------------------------------------------------ */
/* Tables                                                                    */

/* A table of plain-text cells, escaped only when written, so one table
 * serves Markdown and HTML alike. */
typedef struct tl__table tl__table;

/* Cell flags: the best of its column (bold); in Markdown, a linked cell
 * that is an image (its text the alternative, its link the picture). */
enum { TL__BEST = 1, TL__IMAGE = 2 };

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
/* The same in parts, for a table too long to hold: its head, then each
 * time some rows were added those rows (forgotten once written), then its
 * foot. */
void tl__table_write_head(const tl__table *t, tl_format format, FILE *out);
int tl__table_write_rows(tl__table *t, tl_format format, FILE *out);
void tl__table_write_foot(const tl__table *t, tl_format format, FILE *out);
void tl__table_free(tl__table *t);

/* ------------------------------------------------------------------------ */
/* The page being written                                                    */

/* The sessions left out as damaged (o->left_out), as Markdown bullets;
 * whether there were any. */
int tl__left_out_bullets(FILE *f, const tl_page_opts *o);

typedef struct {
  const tl_comparison *c;
  const tl_page_opts *o;
  FILE *out;
  FILE *md; /* where prose goes: out for Markdown, a buffer for HTML */
  char *md_buf;
  size_t md_len;
  int chart_id; /* numbers the charts of one page */
  int failed;
  int svg_file;     /* the chart being drawn is a file of its own (Markdown) */
  int chart_inline; /* the last Markdown chart link ended a line of small images */
  char chart_title[256], chart_caption[512]; /* of the last chart drawn */
} tl__page;

/* Writes a table where the page is (flushing the prose first) and frees
 * it; NULL (out of memory) fails the page. */
void tl__put_table(tl__page *p, tl__table *t);
/* A section heading with its anchor id (see page.c). */
void tl__heading(tl__page *p, const char *id, const char *text);

/* The stream for Markdown prose. For HTML the prose is buffered and turned
 * into HTML by cmark (safe mode: raw HTML never passes) when the next table
 * or chart is written, or at the end. */
FILE *tl__prose(tl__page *p);
void tl__prose_flush(tl__page *p);

/* s for the inside of a fenced code block: as it is, but control characters
 * dropped and bytes that are not UTF-8 as U+FFFD (like tl_md_escape). */
void tl__md_literal(FILE *out, const char *s);

/* What the comparison page and a site's index share (page.c). */
/* The HTML head (template.c: inline stylesheet, title escaped) and the
 * opening of <main>, with the site's links when asked. */
void tl__html_head(tl__page *p, const char *title);
/* "# title": the one asked, else "Timer latency: " and the labels. */
void tl__section_title(tl__page *p);
/* Ends the page with its closing line (in HTML, in the footer that ends the
 * document); returns the page's first failure, else TL_EIO when its output
 * failed, else TL_OK. */
int tl__page_end(tl__page *p);
/* The page's (probe, delay) blocks as tl__delays_of gives them, allocated
 * (the caller frees); NULL with the page marked failed when out of memory
 * (write.c). */
size_t *tl__page_blocks(tl__page *p, size_t *n);
/* Sections of the comparison page that live in files of their own, called
 * by tl_render (page.c) in reading order: the charts (page_charts.c), the
 * hosts and sessions (page_hosts.c), how it was measured (page_method.c). */
void tl__section_charts(tl__page *p);
void tl__section_hosts(tl__page *p);
void tl__section_method(tl__page *p);
/* Writes sections[0..count) of the page in order (page_threads.c), those
 * from later on written into memory on a second thread meanwhile: each of
 * those must depend on nothing the earlier ones do to the page and draw no
 * chart (a Markdown page's chart files are listed in the options, in
 * order), and the first of them must begin with a heading (which in HTML
 * ends the prose before it). The bytes are those of the sections written
 * one after another. */
typedef void (*tl__section_fn)(tl__page *p);
void tl__write_sections(tl__page *p, tl__section_fn const *sections, size_t count, size_t later);
/* Markdown pages list every session and command line only up to this many;
 * beyond, they summarize (the page must not grow with the runs). */
enum { TL__MD_LIST_MAX = 24 };
/* tl__stats_for for the page being written. */
const tl_stats *tl__page_stats(const tl__page *p);
/* The link to a host's page of the site, or NULL when the page is not part
 * of a site or the site made no page for that host (tl_page_opts.host_pages). */
const char *tl__host_href(const tl__page *p, const char *fingerprint, char *buf, size_t len);
/* The link to a label's page of the site, or NULL when the page is not part
 * of a site or the label is not one that becomes a file name. */
const char *tl__label_href(const tl__page *p, const char *label, char *buf, size_t len);
/* The extension of a site's pages in the format of page p: "html" or "md". */
const char *tl__page_ext(const tl__page *p);
/* A page of a Markdown site: the line of links that opens it, as the HTML
 * pages' <nav> (nothing when the page is not part of a site). */
void tl__md_nav(tl__page *p);

/* "Read with care" (care.c): what could make the comparison unfair, as
 * Markdown bullets, or "Nothing found" with what was looked at. */
void tl__read_with_care(tl__page *p);
/* The facts a comparison can differ in, and how sentences name each
 * (care.c): compared within and between labels for "Read with care" (those
 * with care set), and along the groups of --by (by_answer.c). */
typedef struct {
  const char *key;    /* a host key (tl_host_keys), or "label", "probe", "libuv" */
  const char *name;   /* "kernel", "CPUs" */
  int the;            /* a sentence says "the kernel" */
  int plural;         /* "CPUs rise", "the kernel rises" */
  const char *as_key; /* what the tail changes with: "the number of CPUs" */
  const char *care;   /* its name in "Nothing found", or NULL: not compared there */
} tl__trait;
extern const tl__trait tl__traits[];
extern const size_t tl__trait_count;
/* The labels, escaped, joined by ", ". */
void tl__md_list_labels(FILE *f, const tl_comparison *c);

/* "2026-11-30" (UTC). */
void tl__date_only(int64_t ns, char *buf, size_t len);
/* "2026-11-30 09:56": short enough not to wrap in a table (UTC). */
void tl__minute(int64_t ns, char *buf, size_t len);

/* v, or "unknown" when NULL or empty. */
const char *tl__or_unknown(const char *v);
/* A host's CPU model and its OS with version, or "unknown". */
void tl__host_cpu(const tl_session_detail *d, char *buf, size_t len);
void tl__host_os(const tl_session_detail *d, char *buf, size_t len);

/* ------------------------------------------------------------------------ */
/* Looking things up                                                         */

/* The unit of a column or chart whose largest value is max_abs_ns: µs
 * below 1 ms (as the charts do), else ms. */
typedef struct {
  double div;       /* ns per unit */
  const char *name; /* "ms" or "µs" */
} tl__unit;
tl__unit tl__unit_for(double max_abs_ns);
/* ns in unit u as a bare number ("2.12", "130.4", "0.500"), never "-0.00". */
void tl__num(double ns, tl__unit u, char *buf, size_t len);
/* ns in its own unit, for prose: "2.12 ms", "130.4 µs". */
void tl__say_time(double ns, char *buf, size_t len);
/* "setTimeout(50)" for settimeout, "uv 50 ms" for other probes. */
void tl__call_name(const char *probe, int64_t delay_ns, char *buf, size_t len);
/* The site page of a host: "host-FINGERPRINT.EXT" when fp is hex,
 * "host-imported-NAME.EXT" for an imported host whose name is a valid label
 * (the only fingerprints that become file names): 0, else -1. ext: "html"
 * or "md". */
int tl__host_page(const char *fingerprint, const char *ext, char *buf, size_t len);
/* A one-paragraph definition of a probe by its stored name (never NULL). */
const char *tl__probe_definition(const char *probe);

/* ------------------------------------------------------------------------ */
/* Charts (svg.c, svg_charts.c, svg_trend.c): inline SVG, nothing external   */

/* The style number (colour, dash, marker) of a label on page p (see
 * tl_page_opts.style_order). */
size_t tl__style_of(const tl__page *p, const char *label);
/* The stylesheet of a chart written as a file of its own (template.c): the
 * page's chart styles, on a background of its own so that it reads on
 * light and dark pages alike. */
extern const char tl__svg_file_css[];
/* Latency by percentile, one line per label, for one probe and delay. */
void tl__svg_spectrum(tl__page *p, const char *probe, int64_t delay_ns);
/* The histogram of one group. */
void tl__svg_histogram(tl__page *p, const tl_group *g);
/* The answer box's chart: p50, p90 and p99 lateness of each label with
 * their 95% intervals, for g0's probe and delay. */
void tl__svg_dots(tl__page *p, const tl_group *g0);
/* p90 and p99 of each session over time, one line per label. */
void tl__svg_trend(tl__page *p, const char *probe, int64_t delay_ns);

/* A Markdown page's chart, data (malloc'ed, owned by the list afterwards,
 * freed on failure) of len bytes, added to p->o->charts as the next
 * "STEM-N.svg": its name, or NULL (the page failed) when out of memory. */
const char *tl__chart_file_add(tl__page *p, char *data, size_t len);
/* A chart's file name in a Markdown link, percent-encoded where needed. */
void tl__md_url(FILE *f, const char *name);
/* The index page of a site (HTML or Markdown) over the comparison of every label (site.c). */
int tl__render_index(const tl_comparison *all, const tl_page_opts *opts, FILE *out);

/* Statistics (stats_text.c) on a page: the confidence-interval table (heads
 * receives the column names and alignment, and must outlive the table), and the prose
 * around it (warnings, differences, changes over time) in Markdown. */
typedef struct {
  char text[TL_MAX_PCTS + 4][32];
  const char *name[TL_MAX_PCTS + 4];
  char align[TL_MAX_PCTS + 5];
} tl__heads;

/* Verdicts (stats_text.c): the pair of groups a and b, or NULL; whether group
 * a's value at percentile k is clearly below b's (the 95% interval of the
 * difference lies above 0); and the group among groups[0..n) that is
 * clearly below every other at k, or -1 when none is (the index into
 * groups). Every "best" tl marks comes from tl__clear_best. */
const tl_pair_stats *tl__pair_of(const tl_stats *st, size_t a, size_t b);
int tl__clearly_below(const tl_stats *st, size_t a, size_t b, size_t k);
/* "3 sessions each" or "2 and 5 sessions". */
void tl__sessions_phrase(size_t a, size_t b, char *buf, size_t len);
/* Sessions a label to collect before pair p can be decided at percentile k
 * (at least TL_STATS_MIN_SESSIONS). */
int64_t tl__sessions_to_collect(const tl_pair_stats *p, size_t k);
int tl__clear_best(const tl_comparison *cmp, const tl_stats *st, const size_t *groups, size_t n,
                   size_t k);

/* The column "interval from" (how each row's interval was found) only with
 * method_column; tl__stats_ci_method says it once for every row instead
 * ("a bootstrap over its sessions (240 each)") and returns 1 when every
 * row with samples has the same method, else 0. */
tl__table *tl__stats_ci_table(const tl_comparison *cmp, const tl_stats *st, tl__heads *heads,
                              int method_column);
int tl__stats_ci_method(const tl_comparison *cmp, const tl_stats *st, char *buf, size_t len);
/* The warnings; with all, also each pair's sentences and the changes over
 * time (a page with its own matrix of differences and summary of changes
 * leaves them out). */
void tl__stats_notes(FILE *out, const tl_comparison *cmp, const tl_stats *st, int all);

/* ------------------------------------------------------------------------ */
/* Grouping by what the machine is (group.c)                                 */

/* The page's section on the groups of --by (what each holds, the exact
 * values recorded), and the "Read with care" notes on what differs inside a
 * group (returns 1 if any). */
void tl__by_section(tl__page *p);
/* A host's page: the host's facts, which open it (nothing elsewhere). */
void tl__host_facts_section(tl__page *p);
/* The heading of that section ("By memory") and its anchor ("by-memory");
 * 0 when the comparison is not --by. */
int tl__by_heading(const tl_comparison *c, char *id, size_t idlen, char *text, size_t textlen);
int tl__by_confounds(const tl_comparison *c, FILE *f);

/* The answer of a --by page, first in its answer box (by_answer.c): what
 * else changes with the key across the groups, how the tail changes with a
 * numeric key at p90 and p99 (over sessions, each with its interval), each
 * group's p90 and p99 lateness in key order and, in HTML, their chart. */
void tl__by_answer(tl__page *p);

/* The JSON of a --by comparison's answer (",\n \"by_trend\": [...]" and
 * ",\n \"by_confounds\": [...]"). */
void tl__by_json(FILE *o, const tl_comparison *c);
/* p50, p90 and p99 lateness of each value of a numeric --by key, with
 * their intervals, for one probe and delay (svg_trend.c). */
void tl__svg_by_trend(tl__page *p, const char *probe, int64_t delay_ns);

/* ------------------------------------------------------------------------ */
/* Writing files beside their places (output.c), for pages and the site      */

/* The mode of a file that replaces none (or another user's): 0644 less
 * the umask. */
#define TL__NEW_FILE ((mode_t)-1)

/* Whether name in dirfd may be replaced; *mode: the new file's. */
int tl__output_check(int dirfd, const char *name, const char *shown, int force, mode_t *mode,
                     char *err, size_t errlen);
/* A new temporary file in dirfd (its name in tmp) to write a page into. */
FILE *tl__output_temp_open(int dirfd, const char *shown, mode_t mode, char tmp[64], int *rc,
                           char *err, size_t errlen);
/* Flushes, syncs and closes it, or removes it when rc or any of that failed. */
int tl__output_temp_close(int dirfd, FILE *f, const char *tmp, const char *shown, int rc, char *err,
                          size_t errlen);
/* data into a new temporary file, synced and closed. */
int tl__output_write_temp(int dirfd, const char *shown, const char *data, size_t len, mode_t mode,
                          char tmp[64], char *err, size_t errlen);
/* Renames the written temporary file over name. */
int tl__output_put_in_place(int dirfd, const char *tmp, const char *name, const char *shown,
                            char *err, size_t errlen);
/* Opens the folder dir to write in (links followed only when safe). */
int tl__output_open_folder(const char *dir, char *err, size_t errlen);
/* Removes tlreport's charts STEM-N.svg past count beside a Markdown page. */
void tl__output_drop_stale_charts(int dirfd, const char *stem, size_t count);
/* 0 when every byte written to f reached its file, else why not (an errno
 * value: EFBIG, ENOSPC, EIO when nothing says); f is a page's temporary or
 * scratch file, removed when this fails. */
int tl__flush_failure(FILE *f);

/* JSON (json.c). */
int tl__render_json(const tl_comparison *c, const tl_page_opts *o, FILE *out);

/* ------------------------------------------------------------------------ */
/* Why the tail is long (causes.c)                                           */

/* One sentence per group whose tail is explained, in the answer box. */
void tl__causes_answer(tl__page *p);
/* Whether any group of the comparison has its causes (and so the page the
 * section "Why the tail is long"). */
int tl__causes_any(const tl_comparison *c);
/* The section "Why the tail is long": a table, and in HTML a stacked bar
 * per label. Nothing when no group has causes. */
void tl__causes_section(tl__page *p);
/* groups[i].causes in JSON (after the group's other fields), or nothing. */
void tl__causes_json(FILE *o, const tl_comparison *c, size_t i);
/* Each session's per-second counters, one row a session, beside the list
 * of sessions; nothing when no session recorded them. */
void tl__causes_counters(tl__page *p);
/* sessions[i].counters in JSON (after the session's other fields), or
 * nothing. */
void tl__causes_session_json(FILE *o, const tl_comparison *c, size_t i);

#endif
