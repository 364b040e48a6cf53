/* site_write.c: the static site (tlreport --site DIR), built from
 * comparisons: every label, each label alone, each host alone, and the
 * index (site.c), each page written beside its place as output.c writes a
 * page. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report_internal.h"

static int errf(char *err, size_t errlen, int code, const char *what, const char *name) {
  snprintf(err, errlen, "%s %s", name, what);
  return code;
}

/* ======================================================================== */
/* The static site                                                           */

/* The site is written all or nothing: every page's name is known and checked
 * before any page is rendered, each page goes to a temporary file beside its
 * place, and only when every one is written are they renamed into place. A
 * refused or failed run leaves the folder as it was. */

/* A Markdown site (--format md) has the same pages as .md files, each
 * page's charts beside it as PAGE-1.svg ... (PAGE_CHART), which take
 * their places before any page, so that no page links a missing chart. */
typedef enum { PAGE_COMPARE, PAGE_LABEL, PAGE_HOST, PAGE_INDEX, PAGE_CHART } page_kind;

typedef struct {
  page_kind kind;
  size_t at;      /* PAGE_LABEL: index into labels; PAGE_HOST: into sessions */
  char name[128]; /* inside the site */
  mode_t mode;    /* of the page it replaces, or 0 */
  char tmp[64];   /* the temporary file, once written */
  int written;
  size_t charts; /* a Markdown page's: how many, named after it */
} site_page;

typedef struct {
  tl_store *store; /* for the statistics of each page */
  int dirfd;
  const char *dir;
  site_page *pages;
  size_t count;
  char *err;
  size_t errlen;
  const tl_comparison *all;     /* every label, by label: the site's colour order */
  const tl_session_list *from;  /* the sessions every page narrows (read once) */
  const tl_comparison *grouped; /* compare.html grouped by --by, or NULL */
  const char **host_fps;        /* the hosts given a page, by fingerprint, in byte order */
  size_t host_fp_count;
  size_t *host_first, *host_at; /* host_fps[h]'s sessions of from: host_at[host_first[h]...] */
  size_t *label_of;             /* each session of all: the first of all's labels of its name */
  size_t *machine_at;           /* all's sessions by machine: those of the machine whose first */
  size_t *machine_first;        /* session is i are machine_at[machine_first[i]...[i + 1]] */
  const char *ext;              /* of the pages: "html" or "md" */
  int force;
  tl_stats all_stats; /* of all, once: the comparison page, the index and a lone label's page */
  int have_all_stats;
} site;

static int add_page(site *s, page_kind kind, size_t at, const char *name) {
  site_page *p = realloc(s->pages, (s->count + 1) * sizeof *p);
  if (!p)
    return errf(s->err, s->errlen, TL_ENOMEM, "could not be made (out of memory)", name);
  s->pages = p;
  p += s->count++;
  memset(p, 0, sizeof *p);
  p->kind = kind;
  p->at = at;
  snprintf(p->name, sizeof p->name, "%s", name);
  return TL_OK;
}

/* Every page of the site by label gives a label the colour and marker it
 * has on the comparison of every label; a page grouped by --by keeps its
 * own order (its groups are no labels). */
static void site_styles(const site *s, tl_page_opts *o) {
  o->style_order = (const char *const *)s->all->labels;
  o->style_count = s->all->label_count;
}

/* Writes a file of the site (data, len) to page p's temporary file, once
 * it may replace what is there. */
static int put_file(site *s, site_page *p, const char *data, size_t len, int checked) {
  char shown[4200];
  snprintf(shown, sizeof shown, "%s/%s", s->dir, p->name);
  int rc = checked
               ? TL_OK
               : tl__output_check(s->dirfd, p->name, shown, s->force, &p->mode, s->err, s->errlen);
  if (!rc)
    rc = tl__output_write_temp(s->dirfd, shown, data, len, p->mode, p->tmp, s->err, s->errlen);
  p->written = rc == TL_OK;
  return rc;
}

/* A Markdown page's charts, each a file of the site. */
static int put_charts(site *s, const tl_chart_files *charts) {
  int rc = TL_OK;
  for (size_t i = 0; i < charts->count && !rc; i++) {
    rc = add_page(s, PAGE_CHART, 0, charts->items[i].name);
    if (!rc)
      rc = put_file(s, &s->pages[s->count - 1], charts->items[i].data, charts->items[i].len, 0);
  }
  return rc;
}

/* Renders a comparison (or the index, when index is set) into page at's
 * temporary file, and a Markdown page's charts into theirs. */
static int put_page(site *s, size_t at, const tl_comparison *c, const tl_page_opts *base,
                    const char *title) {
  site_page *p = &s->pages[at];
  char stem[128];
  tl_page_opts o = *base;
  snprintf(stem, sizeof stem, "%.*s", (int)(strlen(p->name) - strlen(s->ext) - 1), p->name);
  tl_chart_files charts = {stem, NULL, 0};
  if (o.format == TL_FORMAT_MD)
    o.charts = &charts;
  o.site_links = 1;
  o.title = title;
  o.host_facts = p->kind == PAGE_HOST;
  if (c != s->grouped)
    site_styles(s, &o);
  o.compare_by = s->grouped ? s->grouped->by : NULL;
  o.host_pages = s->host_fps;
  o.host_page_count = s->host_fp_count;
  tl_stats own, *st = &own;
  memset(&own, 0, sizeof own);
  int rc = TL_OK;
  if (c == s->all && !s->have_all_stats) {
    st = &s->all_stats; /* worked out once for every page of all */
    rc = tl_stats_compute_unranked(s->store, c, st, s->err, s->errlen);
    s->have_all_stats = rc == TL_OK;
  } else if (c == s->all) {
    st = &s->all_stats;
  } else {
    /* the index's changes too; no page of the site says the rank test */
    rc = tl_stats_compute_unranked(s->store, c, st, s->err, s->errlen);
  }
  /* Straight into its temporary file: memory never holds the page. */
  char shown[4200];
  snprintf(shown, sizeof shown, "%s/%s", s->dir, p->name);
  FILE *m =
      rc ? NULL : tl__output_temp_open(s->dirfd, shown, p->mode, p->tmp, &rc, s->err, s->errlen);
  if (m) {
    o.stats = st;
    int made = p->kind == PAGE_INDEX ? tl__render_index(c, &o, m) : tl_render(c, &o, m);
    if (ferror(m))
      made = TL_OK; /* a write that failed: tl__output_temp_close says why */
    else if (made)
      errf(s->err, s->errlen, made, "could not be made", p->name);
    rc = tl__output_temp_close(s->dirfd, m, p->tmp, shown, made, s->err, s->errlen);
    p->written = rc == TL_OK;
  }
  tl_stats_free(&own);
  if (!rc)
    rc = put_charts(s, &charts); /* p moves when the list grows */
  s->pages[at].charts = charts.count;
  tl_chart_files_free(&charts);
  return rc;
}

/* Whether session x is one of labels' and, when host is set, one the
 * store's host filter selects: its hostname, or a fingerprint prefix. */
static int narrowed_in(const tl_session *x, const char *const *labels, size_t nl,
                       const char *host) {
  if (host && strcmp(x->hostname, host) != 0 && strncmp(x->host_fingerprint, host, strlen(host)))
    return 0;
  for (size_t l = 0; l < nl; l++)
    if (strcmp(x->label, labels[l]) == 0)
      return 1;
  return 0;
}

/* Session x into list (its room made), its strings in the list's pool. */
static int copy_session(tl_session_list *list, const tl_session *x) {
  tl_session *y = &list->items[list->count++];
  *y = *x;
  char **text[] = {&y->uuid,       &y->run_uuid,         &y->label,  &y->probe,
                   &y->hostname,   &y->host_fingerprint, &y->status, &y->command_line,
                   &y->tl_version, &y->libuv_version};
  for (size_t i = 0; i < sizeof text / sizeof text[0]; i++)
    if (!(*text[i] = tl_strpool_get(list->strings, *text[i])))
      return TL_ENOMEM;
  return TL_OK;
}

/* The index of fingerprint fp among the site's host pages, or SIZE_MAX. */
static size_t host_of(const site *s, const char *fp) {
  const char **at = bsearch(&fp, s->host_fps, s->host_fp_count, sizeof *s->host_fps, tl__by_bytes);
  return at ? (size_t)(at - s->host_fps) : SIZE_MAX;
}

/* The host page whose fingerprint begins fp, or SIZE_MAX. No page's
 * fingerprint begins another's (host_ambiguous), so there is at most one,
 * and it is the last in byte order not after fp: any between them would
 * begin with it too. */
static size_t host_begun(const site *s, const char *fp) {
  size_t lo = 0, hi = s->host_fp_count; /* the first after fp, in [lo, hi] */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (strcmp(s->host_fps[mid], fp) <= 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  const char *before = lo ? s->host_fps[lo - 1] : NULL;
  return before && strncmp(fp, before, strlen(before)) == 0 ? lo - 1 : SIZE_MAX;
}

/* Each host page's sessions of s->from, in their order, listed once for
 * every host page: the store's host filter takes a session whose hostname
 * is the host asked or whose fingerprint begins with it, and a pass over
 * every session a page made the host pages cost hosts times sessions. */
static int host_sessions_make(site *s) {
  const tl_session_list *from = s->from;
  size_t nh = s->host_fp_count, *page = malloc((2 * from->count + 1) * sizeof *page);
  s->host_first = calloc(nh + 2, sizeof *s->host_first);
  s->host_at = malloc((2 * from->count + 1) * sizeof *s->host_at);
  if (!page || !s->host_first || !s->host_at) {
    free(page);
    return TL_ENOMEM;
  }
  for (size_t i = 0; i < from->count; i++) {
    const tl_session *x = &from->items[i];
    size_t *mine = page + 2 * i;
    mine[0] = host_begun(s, x->host_fingerprint);
    mine[1] = host_of(s, x->hostname);
    if (mine[1] == mine[0])
      mine[1] = SIZE_MAX;
    for (int k = 0; k < 2; k++)
      if (mine[k] != SIZE_MAX)
        s->host_first[mine[k] + 2]++;
  }
  /* Counted at h + 2, begun at h + 1: filled through host_first[h + 1],
   * which ends at where page h + 1 begins. */
  for (size_t h = 2; h <= nh + 1; h++)
    s->host_first[h] += s->host_first[h - 1];
  for (size_t i = 0; i < 2 * from->count; i++)
    if (page[i] != SIZE_MAX)
      s->host_at[s->host_first[page[i] + 1]++] = i / 2;
  free(page);
  return TL_OK;
}

/* The sessions of s->from that a page of labels (and host) compares, in
 * their order: what the store would list for that filter, without reading
 * every session again for each of the site's pages. Only from's sessions
 * at[0], at[1]... (n_at of them, in order; every session when at is NULL)
 * may be among them. */
static int narrow(const site *s, const char *const *labels, size_t nl, const char *host,
                  const size_t *at, size_t n_at, tl_session_list *out) {
  const tl_session_list *from = s->from;
  memset(out, 0, sizeof *out);
  size_t end = at ? n_at : from->count, n = 0;
  for (size_t k = 0; k < end; k++)
    n += narrowed_in(&from->items[at ? at[k] : k], labels, nl, host);
  if (!n)
    return TL_OK;
  out->items = malloc(n * sizeof *out->items);
  out->strings = tl_strpool_new();
  int rc = out->items && out->strings ? TL_OK : TL_ENOMEM;
  for (size_t k = 0; k < end && !rc; k++) {
    const tl_session *x = &from->items[at ? at[k] : k];
    if (narrowed_in(x, labels, nl, host))
      rc = copy_session(out, x);
  }
  if (rc)
    tl_session_list_free(out);
  return rc;
}

/* A comparison of the same sessions narrowed to labels and/or a host, of
 * from's sessions at[0]... (see narrow). */
static int sub_compare(tl_store *store, const tl_compare_opts *opts, const char *const *labels,
                       size_t nl, const char *host, const size_t *at, size_t n_at,
                       tl_comparison *out, site *s) {
  tl_compare_opts o = *opts;
  o.labels = labels;
  o.label_count = nl;
  o.baseline = NULL;
  if (host)
    o.filter.host = host;
  tl_session_list list;
  if (narrow(s, labels, nl, host, at, n_at, &list)) {
    memset(out, 0, sizeof *out);
    return errf(s->err, s->errlen, TL_ENOMEM, "could not be made (out of memory)", s->dir);
  }
  int rc = tl__compare_given(store, &o, &list, out, s->err, s->errlen);
  tl_session_list_free(&list); /* emptied when taken over */
  return rc;
}

/* Whether a host page of fp would take in another host's sessions too: the
 * store selects a host by fingerprint prefix, and one imported host's
 * fingerprint may begin another's ("imported:db" and "imported:db2"). In
 * the hosts' fingerprints in byte order (sorted, n of them, fp among them)
 * the ones fp begins come right after it. */
static int host_ambiguous(const char *const *sorted, size_t n, const char *fp) {
  const char *const *at = bsearch(&fp, sorted, n, sizeof *sorted, tl__by_bytes);
  return at && at + 1 < sorted + n && strncmp(at[1], fp, strlen(fp)) == 0;
}

/* Each session's label and all's sessions by machine, for the labels of
 * each host page: a pass through every session for each host page and
 * label made them cost hosts times labels times sessions. A session's
 * label is the first of all's labels of its name, as tl__label_sessions
 * shares a name's sessions; first[i] is session i's machine's first. */
static int machines_make(site *s, const tl_comparison *all, const size_t *first) {
  size_t ns = all->sessions.count, n;
  s->label_of = malloc((ns + 1) * sizeof *s->label_of);
  s->machine_first = calloc(ns + 2, sizeof *s->machine_first);
  s->machine_at = malloc((ns + 1) * sizeof *s->machine_at);
  if (!s->label_of || !s->machine_first || !s->machine_at)
    return TL_ENOMEM;
  for (size_t i = 0; i < ns; i++)
    s->label_of[i] = SIZE_MAX;
  for (size_t l = 0; l < all->label_count; l++) {
    const size_t *at = tl__label_sessions(all, l, &n);
    for (size_t k = 0; k < n; k++)
      if (s->label_of[at[k]] == SIZE_MAX)
        s->label_of[at[k]] = l;
  }
  /* Counted at i + 2, begun at i + 1, as host_sessions_make does. */
  for (size_t i = 0; i < ns; i++)
    s->machine_first[first[i] + 2]++;
  for (size_t i = 2; i <= ns + 1; i++)
    s->machine_first[i] += s->machine_first[i - 1];
  for (size_t i = 0; i < ns; i++)
    s->machine_at[s->machine_first[first[i] + 1]++] = i;
  return TL_OK;
}

/* The labels measured on the host whose first session is all's session
 * i, in the comparison's order: at most room of them into labels. */
static size_t host_labels(const site *s, size_t i, const char **labels, size_t room) {
  const tl_comparison *all = s->all;
  unsigned char *seen = calloc(all->label_count + 1, 1);
  size_t nl = 0, n;
  if (!seen)
    return SIZE_MAX;
  for (size_t k = s->machine_first[i]; k < s->machine_first[i + 1]; k++)
    if (s->label_of[s->machine_at[k]] != SIZE_MAX)
      seen[s->label_of[s->machine_at[k]]] = 1;
  for (size_t l = 0; l < all->label_count && nl < room; l++) {
    const size_t *at = tl__label_sessions(all, l, &n);
    if (n && seen[s->label_of[at[0]]])
      labels[nl++] = all->labels[l];
  }
  free(seen);
  return nl;
}

/* The pages of the site, named from the comparison of every label. */
static int plan_pages(site *s, const tl_comparison *all) {
  s->host_fps = calloc(all->sessions.count + 1, sizeof *s->host_fps);
  if (!s->host_fps)
    return errf(s->err, s->errlen, TL_ENOMEM, "could not be planned (out of memory)", s->dir);
  char name[128];
  snprintf(name, sizeof name, "compare.%s", s->ext);
  int rc = add_page(s, PAGE_COMPARE, 0, name);
  for (size_t i = 0; i < all->label_count && !rc; i++) {
    if (tl_label_check(all->labels[i], NULL, 0) != TL_OK)
      continue; /* only validated labels become file names */
    snprintf(name, sizeof name, "label-%s.%s", all->labels[i], s->ext);
    rc = add_page(s, PAGE_LABEL, i, name);
  }
  /* Each host at its first session, through one hash table. */
  size_t *first = tl__sessions_first(all, TL__SAME_MACHINE), nm = 0;
  const char **machines = malloc((all->sessions.count + 1) * sizeof *machines);
  if (!first || !machines) {
    free(first);
    free(machines);
    return errf(s->err, s->errlen, TL_ENOMEM, "could not be planned (out of memory)", s->dir);
  }
  for (size_t i = 0; i < all->sessions.count; i++)
    if (first[i] == i)
      machines[nm++] = all->sessions.items[i].host_fingerprint;
  qsort(machines, nm, sizeof *machines, tl__by_bytes);
  for (size_t i = 0; i < all->sessions.count && !rc; i++) {
    const tl_session *x = &all->sessions.items[i];
    if (first[i] == i && tl__host_page(x->host_fingerprint, s->ext, name, sizeof name) == 0 &&
        !host_ambiguous(machines, nm, x->host_fingerprint)) {
      rc = add_page(s, PAGE_HOST, i, name);
      s->host_fps[s->host_fp_count++] = x->host_fingerprint;
    }
  }
  if (!rc && machines_make(s, all, first))
    rc = errf(s->err, s->errlen, TL_ENOMEM, "could not be planned (out of memory)", s->dir);
  free(first);
  free(machines);
  /* In byte order, for the links to them and the sessions of each. */
  qsort(s->host_fps, s->host_fp_count, sizeof *s->host_fps, tl__by_bytes);
  if (!rc && host_sessions_make(s))
    rc = errf(s->err, s->errlen, TL_ENOMEM, "could not be planned (out of memory)", s->dir);
  snprintf(name, sizeof name, "index.%s", s->ext);
  if (!rc)
    rc = add_page(s, PAGE_INDEX, 0, name);
  return rc;
}

/* Writes page at of the site to its temporary file. */
static int make_page(site *s, size_t at, const tl_compare_opts *opts, const tl_comparison *grouped,
                     const tl_comparison *all, const tl_page_opts *page) {
  const site_page *p = &s->pages[at];
  tl_comparison one;
  char title[512];
  int rc;
  switch (p->kind) {
  case PAGE_COMPARE:
    return put_page(s, at, grouped ? grouped : all, page, NULL);
  case PAGE_INDEX:
    return put_page(s, at, all, page, "Timer latency results");
  case PAGE_LABEL: {
    const char *label = all->labels[p->at];
    snprintf(title, sizeof title, "Timer latency on %s", label);
    /* The page of the only label is the comparison of every label: made
     * once (a fleet's label holds every session). */
    if (all->label_count == 1 && !opts->baseline)
      return put_page(s, at, all, page, title);
    /* Its sessions listed with all, but when --last kept only some. */
    size_t n = 0;
    const size_t *mine = s->from == &all->sessions ? tl__label_sessions(all, p->at, &n) : NULL;
    if ((rc = sub_compare(s->store, opts, &label, 1, NULL, mine, n, &one, s)))
      return rc;
    break;
  }
  default: {
    const tl_session *x = &all->sessions.items[p->at];
    const char *labels[256];
    size_t nl = host_labels(s, p->at, labels, 256);
    size_t h = host_of(s, x->host_fingerprint), first = s->host_first[h];
    if (nl == SIZE_MAX)
      return errf(s->err, s->errlen, TL_ENOMEM, "could not be made (out of memory)", p->name);
    if ((rc = sub_compare(s->store, opts, labels, nl, x->host_fingerprint, s->host_at + first,
                          s->host_first[h + 1] - first, &one, s)))
      return rc;
    snprintf(title, sizeof title, "Timer latency on host %s", x->hostname);
  }
  }
  rc = put_page(s, at, &one, page, title);
  tl_comparison_free(&one);
  return rc;
}

/* The host pages come last. Each reads every database page holding its
 * sessions' summaries and samples, and a fleet's hosts share those pages
 * (sessions of one time, of many hosts): the next host, in the order of
 * their first sessions, needs nearly the same ones. A read cache of what
 * one host page reads (160 MiB: 1,440 sessions, summaries and samples)
 * then saves reading them again from the file; the samples kept for the
 * pages of every label, and every session's details (each host page reads
 * its own), all written by now, make room for it. */
enum { HOST_PAGES_CACHE = 160 << 20 };

static void before_host_pages(site *s, tl_comparison *grouped, tl_comparison *all) {
  tl__comparison_drop_kept(all);
  tl__comparison_drop_details(all);
  if (grouped) {
    tl__comparison_drop_kept(grouped);
    tl__comparison_drop_details(grouped);
  }
  (void)tl_store_read_cache(s->store, HOST_PAGES_CACHE); /* without it, only slower */
}

/* The sessions each page of the site narrows: those of the comparison of
 * every label, or, when --last kept only some of them, the store's list
 * again (into listed), since each page keeps its own last ones. */
static int site_sessions(tl_store *store, const tl_compare_opts *by_label, const tl_comparison *all,
                         tl_session_list *listed, const tl_session_list **from, char *err,
                         size_t errlen) {
  *from = &all->sessions;
  if (by_label->last <= 0)
    return TL_OK;
  tl_filter f = by_label->filter;
  f.labels = by_label->labels;
  f.label_count = by_label->label_count;
  int rc = tl_store_sessions(store, &f, listed);
  *from = listed;
  return rc ? tl_fail(err, errlen, rc, "%s", tl_store_errmsg(store)) : TL_OK;
}

int tl_site_write(tl_store *store, const tl_compare_opts *opts, const tl_page_opts *page,
                  const char *dir, int force, size_t *pages, char *err, size_t errlen) {
  if (pages)
    *pages = 0;
  site s;
  memset(&s, 0, sizeof s);
  s.store = store;
  s.dirfd = -1;
  s.dir = dir;
  s.err = err;
  s.errlen = errlen;
  s.ext = page->format == TL_FORMAT_MD ? "md" : "html";
  s.force = force;
  /* With --by, compare.html is grouped by it; the label and host pages and
   * the index stay by label, so that their links hold. */
  tl_compare_opts by_label = *opts;
  tl_comparison grouped, all;
  tl_session_list listed = {0};
  int have_grouped = 0, have_all = 0, made_dir = 0, rc = TL_OK;
  if (opts->by) {
    by_label.by = NULL;
    by_label.labels = NULL;
    by_label.label_count = 0;
    by_label.baseline = NULL;
  }
  /* One read snapshot for every page, so that they agree. */
  if ((rc = tl_store_read_begin(store)))
    return tl_fail(err, errlen, rc, "%s", tl_store_errmsg(store));
  if (opts->by) {
    rc = tl__compare(store, opts, TL__GROUPS, &grouped, err, errlen);
    have_grouped = rc == TL_OK;
  }
  if (!rc) {
    rc = tl__compare(store, &by_label, TL__GROUPS, &all, err, errlen);
    have_all = rc == TL_OK;
  }
  if (!rc)
    rc = site_sessions(store, &by_label, &all, &listed, &s.from, err, errlen);
  if (!rc) {
    s.all = &all;
    s.grouped = have_grouped ? &grouped : NULL;
    rc = plan_pages(&s, &all);
  }
  if (!rc) {
    made_dir = mkdir(dir, 0755) == 0;
    if (!made_dir && errno != EEXIST) {
      snprintf(err, errlen, "cannot create the folder %s: %s", dir, strerror(errno));
      rc = TL_EIO;
    }
  }
  if (!rc && (s.dirfd = tl__output_open_folder(dir, err, errlen)) < 0)
    rc = TL_EIO;
  /* Every page may be replaced before any is made. */
  for (size_t i = 0; i < s.count && !rc; i++) {
    char shown[4200];
    snprintf(shown, sizeof shown, "%s/%s", dir, s.pages[i].name);
    rc = tl__output_check(s.dirfd, s.pages[i].name, shown, force, &s.pages[i].mode, err, errlen);
  }
  size_t planned = s.count; /* the charts of Markdown pages follow */
  for (int hosts = 0; hosts <= 1 && !rc; hosts++) {
    if (hosts)
      before_host_pages(&s, have_grouped ? &grouped : NULL, &all);
    for (size_t i = 0; i < planned && !rc; i++)
      if ((s.pages[i].kind == PAGE_HOST) == hosts)
        rc = make_page(&s, i, &by_label, have_grouped ? &grouped : NULL, &all, page);
  }
  tl_store_read_cache(store, 0);
  /* Then all of them take their places, the charts first. */
  size_t placed = 0;
  for (int charts = 1; charts >= 0; charts--)
    for (size_t i = 0; i < s.count && !rc; i++) {
      char shown[4200];
      if ((s.pages[i].kind == PAGE_CHART) != charts)
        continue;
      snprintf(shown, sizeof shown, "%s/%s", dir, s.pages[i].name);
      rc = tl__output_put_in_place(s.dirfd, s.pages[i].tmp, s.pages[i].name, shown, err, errlen);
      s.pages[i].written = 0;
      placed += rc == TL_OK && !charts;
    }
  for (size_t i = 0; i < s.count; i++)
    if (s.pages[i].written)
      unlinkat(s.dirfd, s.pages[i].tmp, 0);
  for (size_t i = 0; i < s.count && !rc && !strcmp(s.ext, "md"); i++)
    if (s.pages[i].kind != PAGE_CHART) {
      char stem[128];
      snprintf(stem, sizeof stem, "%.*s", (int)(strlen(s.pages[i].name) - 3), s.pages[i].name);
      tl__output_drop_stale_charts(s.dirfd, stem, s.pages[i].charts);
    }
  tl_store_read_end(store);
  if (s.dirfd >= 0)
    close(s.dirfd);
  if (rc && made_dir)
    rmdir(dir); /* refused before any page took its place: the folder was empty */
  if (have_grouped)
    tl_comparison_free(&grouped);
  if (have_all)
    tl_comparison_free(&all);
  tl_session_list_free(&listed);
  tl_stats_free(&s.all_stats);
  free(s.pages);
  free(s.host_fps);
  free(s.host_first);
  free(s.host_at);
  free(s.label_of);
  free(s.machine_first);
  free(s.machine_at);
  if (pages)
    *pages = placed;
  return rc;
}
