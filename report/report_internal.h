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
/* The statistics of a page (o->stats) when computed for this comparison
 * (one entry per group), or NULL; tl__page_stats for the page being written. */
const tl_stats *tl__stats_for(const tl_comparison *c, const tl_page_opts *o);
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
/* Whether groups a and b have the same probe and delay (stats.c). */
int tl__same_block(const tl_group *a, const tl_group *b);
/* The group of label, probe and delay in c, or NULL. */
const tl_group *tl__find_group(const tl_comparison *c, const char *label, const char *probe,
                               int64_t delay_ns);
/* The index of session id in c's sessions, or -1 (compare.c). The search
 * starts at *from and leaves it after the session found: a group lists its
 * sessions in the comparison's order, so each is found at the first look. */
ptrdiff_t tl__session_index(const tl_comparison *c, int64_t id, size_t *from);
/* The distinct (probe, delay) pairs, in group order of first appearance
 * sorted by probe then delay. Returns how many; *out has room for
 * group_count entries (indices of a representative group). */
size_t tl__delays_of(const tl_comparison *c, size_t *out);
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
/* Distinct hosts by fingerprint in order of first session into first;
 * newest[i] is the index of host i's newest session (whose facts describe
 * it); both have room for every session. Returns how many (0 when out of
 * memory). */
size_t tl__hosts_of(const tl_comparison *c, size_t *first, size_t *newest);
/* For the nh hosts of tl__hosts_of (first as it gave): how many sessions
 * each host has under each label, at [host * label_count + label]. A
 * malloc'ed array the caller frees, or NULL when out of memory. */
size_t *tl__host_label_counts(const tl_comparison *c, const size_t *first, size_t nh);
/* "2026-11-30" (UTC). */
void tl__date_only(int64_t ns, char *buf, size_t len);

/* Which items share a key (distinct.c). key(ctx, i, part) gives part
 * 0..parts-1 of item i's key, or NULL for an item that has none. first[i]
 * receives the index of the first item with item i's key (i itself when it
 * is the first), SIZE_MAX for an item without a key. Linear in n. */
enum { TL__KEY_PARTS = 2 };
typedef const char *(*tl__key_fn)(const void *ctx, size_t i, int part);
int tl__first_same(size_t n, int parts, tl__key_fn key, const void *ctx, size_t *first);
typedef enum {
  TL__SAME_HOST,    /* label and host fingerprint */
  TL__SAME_MACHINE, /* host fingerprint, whatever the label */
  TL__SAME_RUN,     /* run UUID */
  TL__SAME_STATUS,  /* label and status */
  TL__SAME_PROBE,   /* probe */
  TL__SAME_COMMAND, /* label and command line */
  TL__SAME_LABEL,   /* label */
} tl__session_key;
/* tl__first_same over the comparison's sessions: a malloc'ed array of
 * sessions.count indexes (the caller frees), or NULL when out of memory. */
size_t *tl__sessions_first(const tl_comparison *c, tl__session_key which);

/* A list of items joined by ", " that shows its first show items and
 * folds the rest into a count: "a, b, c and 147 more hosts". A page's
 * lists show TL__LIST_SHOWN. */
enum { TL__LIST_SHOWN = 24 };
typedef struct {
  char *text;
  size_t len, cap, count, show;
  int failed, folded;
} tl__fold;
void tl__fold_init(tl__fold *l, size_t show);
void tl__fold_add(tl__fold *l, const char *item);
/* The list, with " and N more <more>" when folded ("" when memory ran out);
 * valid until tl__fold_free. */
const char *tl__fold_text(tl__fold *l, const char *more);
void tl__fold_free(tl__fold *l);
/* v, or "unknown" when NULL or empty. */
const char *tl__or_unknown(const char *v);
/* A host's CPU model and its OS with version, or "unknown". */
void tl__host_cpu(const tl_session_detail *d, char *buf, size_t len);
void tl__host_os(const tl_session_detail *d, char *buf, size_t len);

/* ------------------------------------------------------------------------ */
/* Looking things up                                                         */

/* Fails with rc (not TL_OK), saying why into err: "out of memory" for
 * TL_ENOMEM, else the store's last message. */
int tl__store_failed(tl_store *store, int rc, char *err, size_t errlen);
/* The value of fact key in d, or NULL. */
const char *tl__fact(const tl_session_detail *d, const char *key);
/* The value of tag key in d, or NULL. */
const char *tl__tag(const tl_session_detail *d, const char *key);
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
/* Charts (svg.c): inline SVG, no script, no external font or file           */

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
/* The samples the statistics keep of a group (kept.c; at most TL_STATS_KEEP, by a
 * seeded reservoir per session), gathered while the comparison reads the
 * group: tl__kept_add is a sweep's tap, tl__kept_finish sorts them after
 * the sweep. tl__kept_new returns NULL when out of memory or when keeping
 * would take more than *budget bytes, which it otherwise reduces; the
 * statistics then read the group's samples themselves. */
typedef struct tl__kept tl__kept;
/* What the statistics keep of group i of a comparison tl_compare made, or
 * NULL. It lives beside the groups (compare.c), out of the public tl_group. */
tl__kept *tl__group_kept(const tl_comparison *c, size_t i);
/* Frees what the statistics keep of every group, so that they read the
 * samples themselves (tests compare the two ways). */
void tl__comparison_drop_kept(tl_comparison *c);
/* tl_compare inside the caller's read snapshot (tl_store_read_begin); with
 * groups 0, only the sessions and labels: the checks that fail before any
 * sample is read. */
int tl__compare(tl_store *store, const tl_compare_opts *o, int groups, tl_comparison *out,
                char *err, size_t errlen);
tl__kept *tl__kept_new(const tl_comparison *cmp, const tl_group *g, size_t *budget);
int tl__kept_add(void *kept, size_t session, const int64_t *v, size_t n);
int tl__kept_finish(tl__kept *k);
void tl__kept_free(tl__kept *k);
/* The ranks of a group whose exact values the statistics need (the ends of
 * the order-statistic intervals at pcts, for a group of n samples in fewer
 * than TL_STATS_BOOT_SESSIONS sessions with samples): at most 2 * np into
 * ranks; returns how many. tl__kept_values hands their values over. */
size_t tl__stats_ci_ranks(int64_t n, size_t sessions, const double *pcts, size_t np,
                          int64_t *ranks);
void tl__kept_values(tl__kept *k, const int64_t *ranks, const int64_t *values, size_t n);
/* For tests: when set, every replicate of the session bootstrap is answered
 * by the binary search over every session that the table of marks replaced,
 * so that the two can be compared. */
extern int tl__stats_boot_search;

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

/* Parsed --by: one or two host keys or tags. */
typedef struct {
  size_t n;
  struct {
    const tl_host_key *key;       /* a host key, or NULL for a tag */
    char tag[TL_TAG_KEY_MAX + 1]; /* the tag's key when key is NULL */
  } k[TL_BY_MAX];
} tl__by;

/* The groups of a comparison made --by: their names in natural order and,
 * for a numeric key alone, each one's value (NAN: unknown). */
typedef struct {
  char **names;
  double *x;
  size_t count;
  int numeric; /* one numeric key (memory, cpus, hz) */
} tl__by_groups;

/* Parses "memory", "tag:load", "memory,cpus"; TL_ENOTFOUND for a word that
 * is no key (err names it), TL_EINVAL for anything else malformed. */
int tl__by_parse(const char *spec, tl__by *by, char *err, size_t errlen);
/* "memory,cpus": the keys as --by takes them (malloc'd; NULL on OOM). */
char *tl__by_spec(const tl__by *by);
/* "memory", "memory and cpus". */
void tl__by_title(const tl__by *by, char *buf, size_t len);
/* Gives every session of list its group name as its label, moving its own
 * label to orig[i] (list->count entries, owned by the caller afterwards),
 * and lists the groups in out (free with tl__by_groups_free). */
int tl__by_assign(tl_store *store, const tl__by *by, tl_session_list *list, char **orig,
                  tl__by_groups *out, char *err, size_t errlen);
void tl__by_groups_free(tl__by_groups *g);
/* The group a person means by asked ("1G", "1024M", "2", "1G/2",
 * "unknown"), into buf; TL_ENOTFOUND listing the values when none is. */
int tl__by_value(const tl__by *by, const tl__by_groups *g, const char *asked, char *buf, size_t len,
                 char *err, size_t errlen);

/* Session i's value under host key k (NULL: the tag named tag) as --by
 * names it ("1G", "2 CPUs", the text recorded) into name, and as a number
 * into *num (NAN for text); 0 when the session did not record it. */
int tl__by_part(const tl_comparison *c, size_t i, const tl_host_key *k, const char *tag, char *name,
                size_t len, double *num);
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
/* A rank correlation: Spearman's rho (average ranks for ties) over n
 * pairs with its 95% interval by Fisher's z; NAN when n < 4 or either side
 * does not vary. values: distinct x values. */
typedef struct {
  double rho, lo, hi;
  size_t n, values;
} tl__rank_corr;
int tl__spearman(const double *x, const double *y, size_t n, tl__rank_corr *out);
/* How the tail of one probe and delay changes with the numeric key: the
 * rank correlation at p90 and p99 between the key and each unit's own
 * lateness. A unit is a session or, where several hosts share a value, a
 * host (the median of its sessions). in: the sessions to count (NULL: all). */
typedef struct {
  tl__rank_corr r[2]; /* at p90 and at p99 */
  size_t sessions, units, values;
  int by_host;       /* units are hosts */
  int one_host_each; /* every value is one host */
} tl__by_trend;
int tl__by_trend_of(const tl_comparison *c, const char *probe, int64_t delay_ns,
                    const unsigned char *in, tl__by_trend *out);
/* The JSON of a --by comparison's answer (",\n \"by_trend\": [...]" and
 * ",\n \"by_confounds\": [...]"). */
void tl__by_json(FILE *o, const tl_comparison *c);
/* p50, p90 and p99 lateness of each value of a numeric --by key, with
 * their intervals, for one probe and delay (svg.c). */
void tl__svg_by_trend(tl__page *p, const char *probe, int64_t delay_ns);

/* JSON (json.c). */
int tl__render_json(const tl_comparison *c, const tl_page_opts *o, FILE *out);

/* ------------------------------------------------------------------------ */
/* Why the tail is long (causes.c)                                           */

/* Fills c->causes from the store: each session's kept causes, counters and
 * summary. Only running out of memory fails; what cannot be read (an older
 * file, a server, a damaged blob) is "not attributed". */
int tl__causes_compute(tl_store *store, tl_comparison *c);
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

#endif
