/* compute.h: the computing floor of report/: what a comparison holds beyond
 * tl_report.h and what is computed over it (lookups, the samples the
 * statistics keep, --by groups and trends, causes). Files of this floor
 * include this header only and never write a page; the rendering floor
 * (report_internal.h) builds on it. The build compiles this floor with
 * TL_REPORT_COMPUTING, under which report_internal.h refuses to be
 * included, so an arrow pointing up fails to compile. */
#ifndef TL_REPORT_COMPUTE_H
#define TL_REPORT_COMPUTE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tl_report.h"

/* ------------------------------------------------------------------------ */
/* Finding things in a comparison (lookup.c, stats.c)                       */

/* The statistics of a page (o->stats) when computed for this comparison
 * (one entry per group), or NULL. */
const tl_stats *tl__stats_for(const tl_comparison *c, const tl_page_opts *o);
/* Whether groups a and b have the same probe and delay (lookup.c). */
int tl__same_block(const tl_group *a, const tl_group *b);
/* The groups of group's block (tl__same_block) into block, in increasing
 * order; how many (lookup.c). */
size_t tl__block_of(const tl_comparison *c, size_t group, size_t *block);
/* The distribution of session detail d at its percentiles [first,
 * first + n): (d, 0, 3) its own p50, p90 and p99, (d, 3, d->pct_count - 3)
 * its values at the groups' percentiles. */
void tl__session_dist(const tl_session_detail *d, size_t first, size_t n, tl_dist *out);
/* The index of percentile p among d's, or -1. */
int tl__pct_index(const tl_dist *d, double p);
/* The group of label, probe and delay in c, or NULL. */
const tl_group *tl__find_group(const tl_comparison *c, const char *label, const char *probe,
                               int64_t delay_ns);
/* The index of session id in c's sessions, or -1 (lookup.c). The search
 * starts at *from and leaves it after the session found: a group lists its
 * sessions in the comparison's order, so each is found a few looks on
 * (halving the way there where the ids rise, as they do), then anywhere. */
ptrdiff_t tl__session_index(const tl_comparison *c, int64_t id, size_t *from);
/* qsort and bsearch of strings (an array of char *) in byte order. */
int tl__by_bytes(const void *a, const void *b);
/* The places in c->sessions of the sessions of label l (an index into
 * c->labels), in the list's order: *n of them (lookup.c). The page asks
 * this of every label, and with a --by of 200 hosts a pass through every
 * session a label would be 200 passes. */
const size_t *tl__label_sessions(const tl_comparison *c, size_t l, size_t *n);
/* How many sessions label l has. */
size_t tl__label_session_count(const tl_comparison *c, size_t l);
/* Makes and frees what tl__label_sessions reads, once c's labels and
 * sessions are final (compare.c); TL_ENOMEM when out of memory. */
int tl__label_sessions_make(tl_comparison *c);
void tl__label_sessions_free(tl_comparison *c);
/* The distinct (probe, delay) pairs, in group order of first appearance
 * sorted by probe then delay. Returns how many; *out has room for
 * group_count entries (indices of a representative group). */
size_t tl__delays_of(const tl_comparison *c, size_t *out);
/* Distinct hosts by fingerprint in order of first session into first;
 * newest[i] is the index of host i's newest session (whose facts describe
 * it); both have room for every session. Returns how many (0 when out of
 * memory). */
size_t tl__hosts_of(const tl_comparison *c, size_t *first, size_t *newest);
/* For the nh hosts of tl__hosts_of (first as it gave): how many sessions
 * each host has under each label, at [host * label_count + label]. A
 * malloc'ed array the caller frees, or NULL when out of memory. */
size_t *tl__host_label_counts(const tl_comparison *c, const size_t *first, size_t nh);

/* ------------------------------------------------------------------------ */
/* Which items share a key (distinct.c), lists that fold                    */

/* Which items share a key (distinct.c). key(ctx, i, part) gives part
 * 0..parts-1 of item i's key, or NULL for an item that has none. first[i]
 * receives the index of the first item with item i's key (i itself when it
 * is the first), SIZE_MAX for an item without a key. Linear in n. The
 * strings stay put during the call: the same pointers are the same key. */
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

/* For every session, the first one that holds the very same strings (by
 * pointer, as a pooled list holds them) as its label, own label, probe,
 * host, libuv version and facts and tags, and the same delay: what the
 * page reads of a session then says the same of both, so that a question
 * asked of every session can be asked once of each first one. Strings
 * that are equal but not pooled only make fewer sessions alike. A malloc'ed
 * array of sessions.count (the caller frees), or NULL when out of memory;
 * needs c->details. */
size_t *tl__sessions_alike(const tl_comparison *c);

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

/* ------------------------------------------------------------------------ */
/* Reading the store                                                        */

/* Fails with rc (not TL_OK), saying why into err: "out of memory" for
 * TL_ENOMEM, else the store's last message. */
int tl__store_failed(tl_store *store, int rc, char *err, size_t errlen);
/* The value of fact key in d, or NULL. */
const char *tl__fact(const tl_session_detail *d, const char *key);
/* The value of tag key in d, or NULL. */
const char *tl__tag(const tl_session_detail *d, const char *key);

/* ------------------------------------------------------------------------ */
/* What the statistics keep (kept.c, group_passes.c, maths.c)               */

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
/* Frees every session's details (facts, tags, own percentiles), which a
 * site's pages of every label have used by the time its host pages, which
 * read their own, are made: details becomes NULL. */
void tl__comparison_drop_details(tl_comparison *c);
/* What tl__compare works out beyond the sessions and labels. */
typedef enum {
  TL__SESSIONS_ONLY, /* nothing: the checks that fail before any sample is read */
  TL__GROUPS,        /* the groups, each over all its sessions (tl_compare's) */
  /* The groups of each label, probe and delay's earlier sessions: a group's
   * latest session (its last, the newest run) is held apart when it has
   * two or more (tl__group_latest), in the list but in no group, and the
   * samples kept for the statistics are seeded "earlier" (check.c's): the
   * check of the latest against the earlier reads the earlier ones once. */
  TL__EARLIER_GROUPS,
  /* TL__GROUPS, and beside each group of two sessions or more the values
   * and kept samples of its earlier sessions (tl__group_earlier), from the
   * same passes: the check with a baseline needs both, and reads the
   * earlier sessions once. */
  TL__GROUPS_AND_EARLIER
} tl__groups;
/* tl_compare inside the caller's read snapshot (tl_store_read_begin). */
int tl__compare(tl_store *store, const tl_compare_opts *o, tl__groups groups, tl_comparison *out,
                char *err, size_t errlen);
/* The session held apart from group i (TL__EARLIER_GROUPS), or NULL. */
const int64_t *tl__group_latest(const tl_comparison *c, size_t i);
/* The distribution of group i's earlier sessions (all but its last) at
 * the group's percentiles and, into *kept, what the statistics keep of them
 * (seeded "earlier"; NULL when not kept), when tl__compare worked them out
 * (TL__GROUPS_AND_EARLIER); NULL otherwise. */
const tl_dist *tl__group_earlier(const tl_comparison *c, size_t i, const tl__kept **kept);
/* What tl__compare_each calls as each group's pass over the samples ends:
 * the group's values, its sessions' details and what the statistics keep of
 * it (tl__group_kept) are final, and the kept samples go when done returns.
 * A non-zero return (a TL_ code) ends the comparison with that error. */
typedef struct {
  int (*done)(void *ctx, tl_store *store, const tl_comparison *c, size_t group);
  void *ctx;
  /* The groups of one probe and delay (tl__same_block) one after another,
   * the blocks in the order of their first groups and each block's groups
   * in theirs: a block's groups are all done before the next's begin. */
  int blocks_in_turn;
} tl__group_hook;
/* tl_compare with hook (NULL: none) called for every group: the statistics
 * take each group's kept samples as they come, and their memory goes to the
 * next groups', so that no group's samples are read twice. */
int tl__compare_each(tl_store *store, const tl_compare_opts *o, const tl__group_hook *hook,
                     tl_comparison *out, char *err, size_t errlen);
/* tl_compare_with_stats, with ranked the rank test of every pair too
 * (JSON's): each block's pairs as soon as its groups are read (stats.c). */
int tl__compare_with_stats(tl_store *store, const tl_compare_opts *o, int ranked,
                           tl_comparison *cmp, tl_stats *out, char *err, size_t errlen);
/* tl__compare (with groups) of the given sessions, taken over (the list is
 * left empty): what o's filter selects, in the store's order, chosen by the
 * caller (a site narrows the list it read once to each host's). o->labels
 * must name labels those sessions hold; o->filter is not applied again. */
int tl__compare_given(tl_store *store, const tl_compare_opts *o, tl_session_list *sessions,
                      tl_comparison *out, char *err, size_t errlen);
/* The kept samples of group g, its reservoirs seeded by g and what
 * (tl__group_seed). */
tl__kept *tl__kept_new(const tl_comparison *cmp, const tl_group *g, const char *what,
                       size_t *budget);
int tl__kept_add(void *kept, size_t session, const int64_t *v, size_t n);
int tl__kept_finish(tl__kept *k);
void tl__kept_free(tl__kept *k);
/* Frees k (NULL is fine) and gives its bytes back to the budget it came
 * from (tl__kept_new). */
void tl__kept_give_back(tl__kept *k, size_t *budget);
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
/* Set, tl__t_quantile's bisection works out every t_cdf it asks about. */
extern int tl__stats_t_direct;
/* The bytes a comparison may hold of kept samples at once (64 MiB; tests
 * lower it to see groups beyond it). */
extern size_t tl__kept_budget;

/* ------------------------------------------------------------------------ */
/* Grouping by what the machine is (group.c)                                */

enum { TL__BY_NAME_MAX = 96 }; /* the longest name of one key's value */

/* Parsed --by: one or two host keys or tags. */
typedef struct tl__by {
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
/* The first numeric key of by (memory, cpus ...), or -1. */
int tl__by_numeric_axis(const tl__by *by);
/* "memory", "memory and cpus". */
void tl__by_title(const tl__by *by, char *buf, size_t len);
/* Gives every session of list (from tl_store_sessions) its group name as
 * its label, in the list's pool, from its facts and tags in details[i],
 * and its own label to orig[i] (list->count entries, whose strings stay
 * the list's), and lists the groups in out (free with tl__by_groups_free). */
int tl__by_assign(const tl__by *by, tl_session_list *list, const tl_session_detail *details,
                  char **orig, tl__by_groups *out, char *err, size_t errlen);
void tl__by_groups_free(tl__by_groups *g);
/* The group a person means by asked ("1G", "1024M", "2", "1G/2",
 * "unknown"), into buf; TL_ENOTFOUND listing the values when none is. */
int tl__by_value(const tl__by *by, const tl__by_groups *g, const char *asked, char *buf, size_t len,
                 char *err, size_t errlen);

/* The name --by gives recorded value v (NULL: not recorded) under host key
 * k (NULL: a tag): "1G", "2 CPUs", the text, or "unknown". */
void tl__by_name(const tl_host_key *k, const char *v, char *buf, size_t len);
/* Session i's value under host key k (NULL: the tag named tag) as --by
 * names it ("1G", "2 CPUs", the text recorded) into name, and as a number
 * into *num (NAN for text); 0 when the session did not record it. */
int tl__by_part(const tl_comparison *c, size_t i, const tl_host_key *k, const char *tag, char *name,
                size_t len, double *num);

/* ------------------------------------------------------------------------ */
/* How the tail changes with a numeric key (by_trend.c)                     */

/* A rank correlation: Spearman's rho (average ranks for ties) over n
 * pairs with its 95% interval by Fisher's z; NAN when n < 4 or either side
 * does not vary. values: distinct x values. */
typedef struct {
  double rho, lo, hi;
  size_t n, values;
} tl__rank_corr;
int tl__spearman(const double *x, const double *y, size_t n, tl__rank_corr *out);
/* The median of v[0..n) (n >= 1; finite values), v reordered: by selection
 * rather than a sort, for the long series of a fleet's sessions (maths.c). */
double tl__median(double *v, size_t n);
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
extern const double tl__by_trend_pcts[2]; /* 90, 99: the percentiles of r */
int tl__by_trend_of(const tl_comparison *c, const char *probe, int64_t delay_ns,
                    const unsigned char *in, tl__by_trend *out);
/* The same in two steps, for a trend and its strata: the sessions of one
 * probe and delay that the trend reads, sorted once (*out NULL when c has
 * no numeric key), then the trend over those in in (NULL: all). */
typedef struct tl__trend_rows tl__trend_rows;
int tl__trend_rows_of(const tl_comparison *c, const char *probe, int64_t delay_ns,
                      tl__trend_rows **out);
int tl__by_trend_in(const tl__trend_rows *all, const unsigned char *in, tl__by_trend *out);
void tl__trend_rows_free(tl__trend_rows *r);

/* ------------------------------------------------------------------------ */
/* Why the tail is long (causes.c)                                          */

/* A group's tail as the pass that read its sessions' summaries counted it
 * (group_passes.c, tl_sweep_tail): the samples above its p99 and above its p90
 * ([0] and [1]), and their time past its p50. known 0: causes.c reads the
 * summaries again. */
typedef struct {
  int known;
  int64_t p50, p90, p99; /* the values counted at; p90 -1: not among the group's */
  int64_t samples[2], past_ns[2];
} tl__tail;

/* Fills c->causes and c->counters from the store: each session's kept
 * causes, counters and summary (tails, NULL or one per group: the tail
 * already counted). Only running out of memory fails; what cannot be read
 * (an older file, a server, a damaged blob) is "not attributed". */
int tl__causes_compute(tl_store *store, tl_comparison *c, const tl__tail *tails);

/* ------------------------------------------------------------------------ */
/* Reading a comparison's samples (group_passes.c)                          */

/* Where the passes put what they find beside the groups: per group, what
 * the statistics keep (seeded kept_seed: "ci", or "earlier" for the
 * earlier groups of TL__EARLIER_GROUPS) and the tail, and, when earlier is
 * not NULL (TL__GROUPS_AND_EARLIER), the earlier sessions' distribution and
 * kept samples of each group of two sessions or more. */
typedef struct {
  tl__kept **kept;
  const char *kept_seed;
  tl_dist *earlier;
  tl__kept **earlier_kept;
  tl__tail *tails;
} tl__group_out;
/* Fills c's groups (their distributions, charts and histograms) and their
 * sessions' values from the samples at pcts[0..np), hook called as each
 * group's pass ends. */
int tl__groups_read(tl_store *store, tl_comparison *c, const double *pcts, size_t np,
                    tl__group_out *out, const tl__group_hook *hook);

#endif
