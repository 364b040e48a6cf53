/* page_hosts.c: the Hosts and sessions section of the comparison page: the
 * hosts table (hosts of which only the name is known folded into one line,
 * hosts alike folded into one row when there are many), then the sessions,
 * listed one a row or summarized when there are more than a Markdown page
 * lists. Also owns the short forms of dates and host facts that other
 * sections and pages print (tl__date_only, tl__minute, tl__host_cpu ...). */
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"

/* "2026-11-30" (UTC). */
void tl__date_only(int64_t ns, char *buf, size_t len) {
  char d[32];
  tl_date_format(ns, d, sizeof d);
  snprintf(buf, len, "%.10s", d);
}

/* "2026-11-30 09:56": short enough not to wrap in a table (UTC). */
void tl__minute(int64_t ns, char *buf, size_t len) {
  char d[32];
  tl_date_format(ns, d, sizeof d);
  snprintf(buf, len, "%.10s %.5s", d, d + 11);
}

const char *tl__or_unknown(const char *v) { return v && *v ? v : "unknown"; }

void tl__host_cpu(const tl_session_detail *d, char *buf, size_t len) {
  snprintf(buf, len, "%s", tl__or_unknown(tl__fact(d, "cpu.model")));
}

static void host_cores(const tl_session_detail *d, char *buf, size_t len) {
  const char *cores = tl__fact(d, "cpu.cores"), *logical = tl__fact(d, "cpu.logical");
  if (cores && logical && strcmp(cores, logical) != 0)
    snprintf(buf, len, "%s cores, %s threads", cores, logical);
  else if (cores || logical)
    snprintf(buf, len, "%s", cores ? cores : logical);
  else
    snprintf(buf, len, "unknown");
}

static void host_ram(const tl_session_detail *d, char *buf, size_t len) {
  const char *m = tl__fact(d, "mem.total_bytes");
  char *end;
  double b = m ? strtod(m, &end) : 0;
  if (m && *m && !*end && b > 0)
    snprintf(buf, len, "%.1f GiB", b / (1024.0 * 1024 * 1024));
  else
    snprintf(buf, len, "unknown");
}

void tl__host_os(const tl_session_detail *d, char *buf, size_t len) {
  const char *name = tl__fact(d, "os.name"), *ver = tl__fact(d, "os.version");
  if (name && ver && !strstr(name, ver))
    snprintf(buf, len, "%s %s", name, ver);
  else
    snprintf(buf, len, "%s", tl__or_unknown(name ? name : ver));
}

/* vm, cloud and container joined: "kvm, digitalocean", "none" or "unknown". */
static void host_virt(const tl_session_detail *d, char *buf, size_t len) {
  static const char *const keys[] = {"vm", "cloud", "container"};
  size_t at = 0;
  int unknown = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < 3; i++) {
    const char *v = tl__fact(d, keys[i]);
    if (!v || strcmp(v, "unknown") == 0)
      unknown = 1;
    else if (strcmp(v, "none") != 0 && at < len)
      at += (size_t)snprintf(buf + at, len - at, "%s%s %s", at ? ", " : "", keys[i], v);
  }
  if (!at)
    snprintf(buf, len, "%s", unknown ? "unknown" : "none");
}

/* Per label: how many sessions and runs, over which dates, their statuses
 * and hosts. One row per label whatever the number of sessions. */
static void session_summary(tl__page *p) {
  const tl_comparison *c = p->c;
  size_t n = c->sessions.count;
  const char *head[] = {c->by ? c->by : "label", "sessions", "runs", "first (UTC)",
                        "newest (UTC)",          "statuses", "hosts"};
  tl__table *t = tl__table_new(7, head, "lrrllll");
  size_t *run = tl__sessions_first(c, TL__SAME_RUN), *host = tl__sessions_first(c, TL__SAME_HOST);
  size_t *status = tl__sessions_first(c, TL__SAME_STATUS), *same = calloc(n + 1, sizeof *same);
  if (!run || !host || !status || !same) {
    tl__table_free(t);
    t = NULL;
    p->failed = TL_ENOMEM;
  }
  for (size_t i = 0; t && i < n; i++)
    same[status[i]]++; /* the sessions of each label and status, at the first one */
  for (size_t l = 0; t && l < c->label_count; l++) {
    size_t count = 0, runs = 0, hosts = 0;
    int64_t t0 = 0, t1 = 0;
    char statuses[512] = "";
    size_t at = 0;
    size_t of_label;
    const size_t *mine = tl__label_sessions(c, l, &of_label);
    for (size_t k = 0; k < of_label; k++) {
      size_t i = mine[k];
      const tl_session *s = &c->sessions.items[i];
      if (!count++)
        t0 = s->started_ns;
      t1 = s->started_ns > t1 ? s->started_ns : t1;
      runs += run[i] == i;
      hosts += host[i] == i;
      /* Each status once, with its count, in order of first appearance. */
      if (status[i] != i)
        continue;
      if (at < sizeof statuses)
        at += (size_t)snprintf(statuses + at, sizeof statuses - at, "%s%zu %s", at ? ", " : "",
                               same[i], s->status);
    }
    if (!count)
      continue;
    char href[128], d0[32], d1[32];
    tl__table_link(t, tl__table_add(t, c->labels[l]),
                   tl__label_href(p, c->labels[l], href, sizeof href));
    tl__table_addf(t, "%zu", count);
    tl__table_addf(t, "%zu", runs);
    tl__date_only(t0, d0, sizeof d0);
    tl__date_only(t1, d1, sizeof d1);
    tl__table_add(t, d0);
    tl__table_add(t, d1);
    tl__table_add(t, statuses);
    tl__table_addf(t, "%zu", hosts);
  }
  free(run);
  free(host);
  free(status);
  free(same);
  FILE *f = tl__prose(p);
  fputs("### Sessions\n\n", f);
  tl__put_table(p, t);
}

/* Every session, one row each: folded into <details> in HTML; in Markdown
 * only while short, so that the page does not grow with the runs. */
enum { SESSION_ROWS = 1024 };
static void session_list(tl__page *p) {
  const tl_comparison *c = p->c;
  size_t n = c->sessions.count;
  int html = p->o->format == TL_FORMAT_HTML;
  if (!html && n > TL__MD_LIST_MAX) {
    fprintf(tl__prose(p),
            "The list of all %zu sessions is in the HTML page (`--format html`), in JSON "
            "(`--format json`) and on the label pages of `--site`.\n\n",
            n);
    return;
  }
  static const char *const shead[] = {"started (UTC)", "label",   "host",     "probe",    "delay",
                                      "status",        "samples", "p90 late", "p99 late", "tags"};
  tl__table *t = tl__table_new(10, shead, "llllrlrrrl");
  if (!t) {
    p->failed = TL_ENOMEM;
    return;
  }
  /* Written a few rows at a time: a fleet's month is 288,000 rows. */
  tl__prose_flush(p);
  if (html)
    fprintf(p->out, "<details><summary>All %zu sessions</summary>\n", n);
  tl_format format = p->o->format;
  tl__table_write_head(t, format, p->out);
  for (size_t i = 0; i < n && !p->failed; i++) {
    if (i % SESSION_ROWS == 0 && tl__table_write_rows(t, format, p->out))
      p->failed = TL_ENOMEM;
    const tl_session *s = &c->sessions.items[i];
    const tl_session_detail *d = &c->details[i];
    char buf[1024], href[128], v[48];
    tl__minute(s->started_ns, buf, sizeof buf);
    tl__table_add(t, buf);
    const char *own = d->label ? d->label : s->label; /* with --by, s->label is the group */
    tl__table_link(t, tl__table_add(t, own), tl__label_href(p, own, href, sizeof href));
    size_t cell = tl__table_add(t, s->hostname);
    tl__table_link(t, cell, tl__host_href(p, s->host_fingerprint, href, sizeof href));
    tl__table_add(t, s->probe);
    tl__table_addf(t, "%g ms", (double)s->delay_ns / 1e6);
    tl__table_add(t, s->status);
    tl__table_addf(t, "%lld", (long long)s->sample_count);
    int64_t armed = tl_probe_armed_ns(s->probe, s->delay_ns);
    for (int k = 1; k <= 2; k++) {
      if (d->count) {
        tl__say_time((double)(d->pct_ns[k] - armed), v, sizeof v);
        tl__table_add(t, v);
      } else {
        tl__table_add(t, "-");
      }
    }
    size_t at = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < d->tag_count && at < sizeof buf; k++)
      at += (size_t)snprintf(buf + at, sizeof buf - at, "%s%s=%s", k ? " " : "", d->tags[k].key,
                             d->tags[k].value);
    tl__table_add(t, buf);
  }
  if (tl__table_write_rows(t, format, p->out))
    p->failed = TL_ENOMEM;
  tl__table_write_foot(t, format, p->out);
  tl__table_free(t);
  if (html)
    fputs("</details>\n", p->out);
}

/* Whether nothing is known of a host but its name (imported data, say):
 * its row would be a row of "unknown". */
static int host_unknown(const tl_session_detail *d) {
  void (*const cells[])(const tl_session_detail *, char *,
                        size_t) = {tl__host_cpu, host_cores, host_ram, tl__host_os, host_virt};
  char buf[512];
  for (size_t i = 0; i < sizeof cells / sizeof *cells; i++) {
    cells[i](d, buf, sizeof buf);
    if (strcmp(buf, "unknown") != 0)
      return 0;
  }
  static const char *const keys[] = {"kernel.release", "clocksource.current", "cpu.governor"};
  for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
    if (strcmp(tl__or_unknown(tl__fact(d, keys[i])), "unknown") != 0)
      return 0;
  return 1;
}

/* The hosts of which only the name is known, folded into one line. */
static void bare_hosts(tl__page *p, const size_t *first, const size_t *newest, size_t nh,
                       size_t bare) {
  const tl_comparison *c = p->c;
  FILE *f = tl__prose(p);
  fputs(bare == nh ? "Of the hosts only their names are known: "
                   : "Of the other hosts only their names are known: ",
        f);
  tl__fold names;
  tl__fold_init(&names, TL__LIST_SHOWN);
  for (size_t h = 0; h < nh; h++) {
    if (!host_unknown(&c->details[newest[h]]))
      continue;
    char item[512];
    snprintf(item, sizeof item, "%s (%s)", c->sessions.items[newest[h]].hostname,
             c->sessions.items[first[h]].label);
    tl__fold_add(&names, item);
  }
  tl_md_escape(f, tl__fold_text(&names, "hosts"));
  fputs(".\n\n", f);
  tl__fold_free(&names);
}

static const char *row_key(const void *ctx, size_t i, int part) {
  (void)part;
  return ((char *const *)ctx)[i];
}

/* The RAM cell of a folded row: the size class ("1G"), so that machines
 * sold as the same size fold together. */
static void host_ram_class(const tl_session_detail *d, char *buf, size_t len) {
  const char *m = tl__fact(d, "mem.total_bytes");
  char *end;
  long long b = m ? strtoll(m, &end, 10) : 0;
  if (m && *m && !*end && b > 0)
    tl_memory_class(b, buf, len);
  else
    snprintf(buf, len, "unknown");
}

/* Many hosts: one row for the hosts alike in every column but their name
 * (memory by size class), with their count and first names; in HTML the
 * table of every host follows, folded. t holds a row per host. */
static void put_hosts_folded(tl__page *p, tl__table *t, const size_t *newest, size_t nh) {
  enum { COLS = 10, NAMES = 3 };
  static const char *const head[] = {"hosts",       "labels",  "CPU",    "cores",
                                     "RAM",         "OS",      "kernel", "virtualization",
                                     "clocksource", "governor"};
  char **key = calloc(nh + 1, sizeof *key);
  size_t *same = malloc((nh + 1) * sizeof *same), *count = calloc(nh + 1, sizeof *count);
  tl__table *folded = tl__table_new(COLS, head, "llllllllll");
  int rc = key && same && count && folded ? TL_OK : TL_ENOMEM;
  for (size_t h = 0; !rc && h < nh; h++) {
    char ram[32], *text = NULL;
    size_t len = 0;
    FILE *k = open_memstream(&text, &len);
    host_ram_class(&p->c->details[newest[h]], ram, sizeof ram);
    for (size_t col = 1; k && col < COLS; col++)
      fprintf(k, "%s\x1f", col == 4 ? ram : tl__table_cell(t, h, col));
    if (!k || fclose(k) || !text)
      rc = TL_ENOMEM;
    key[h] = text;
  }
  if (!rc)
    rc = tl__first_same(nh, 1, row_key, key, same);
  for (size_t h = 0; !rc && h < nh; h++)
    count[same[h]]++;
  for (size_t h = 0; !rc && h < nh; h++) {
    if (same[h] != h)
      continue;
    tl__fold names;
    tl__fold_init(&names, NAMES);
    for (size_t k = h; k < nh && names.count < count[h]; k++)
      if (same[k] == h)
        tl__fold_add(&names, tl__table_cell(t, k, 0));
    if (count[h] > 1)
      tl__table_addf(folded, "%zu hosts: %s", count[h], tl__fold_text(&names, "hosts"));
    else
      tl__table_add(folded, tl__fold_text(&names, "hosts"));
    tl__fold_free(&names);
    for (size_t col = 1; col < COLS; col++) {
      char ram[32];
      host_ram_class(&p->c->details[newest[h]], ram, sizeof ram);
      tl__table_add(folded, col == 4 && count[h] > 1 ? ram : tl__table_cell(t, h, col));
    }
  }
  for (size_t h = 0; key && h < nh; h++)
    free(key[h]);
  free(key);
  free(same);
  free(count);
  if (rc) {
    p->failed = rc;
    tl__table_free(folded);
    tl__table_free(t);
    return;
  }
  fprintf(tl__prose(p),
          "%zu hosts, one row for the hosts alike in every column (memory by size class), with "
          "their count.\n\n",
          nh);
  tl__put_table(p, folded);
  if (p->o->format == TL_FORMAT_HTML) {
    tl__prose_flush(p);
    fprintf(p->out, "<details><summary>All %zu hosts</summary>\n", nh);
    tl__put_table(p, t);
    fputs("</details>\n", p->out);
  } else {
    tl__table_free(t);
  }
}

void tl__section_hosts(tl__page *p) {
  const tl_comparison *c = p->c;
  size_t n = c->sessions.count;
  size_t *first = calloc(n + 1, sizeof *first), *newest = calloc(n + 1, sizeof *newest);
  if (!first || !newest) {
    free(first);
    free(newest);
    p->failed = TL_ENOMEM;
    return;
  }
  size_t nh = tl__hosts_of(c, first, newest), known = 0;
  for (size_t h = 0; h < nh; h++)
    known += !host_unknown(&c->details[newest[h]]);
  size_t *used = tl__host_label_counts(c, first, nh);
  size_t *row_newest = calloc(nh + 1, sizeof *row_newest);
  if (!used || !row_newest)
    p->failed = TL_ENOMEM;
  tl__heading(p, "hosts-and-sessions", "Hosts and sessions");
  FILE *f = tl__prose(p);
  if (known)
    fputs("Each host as its newest session saw it.\n\n", f);
  static const char *const hhead[] = {"host",        "labels",  "CPU",    "cores",
                                      "RAM",         "OS",      "kernel", "virtualization",
                                      "clocksource", "governor"};
  tl__table *t = tl__table_new(10, hhead, "llllrlllll");
  size_t bare = 0, rows = 0;
  for (size_t h = 0; t && h < nh; h++) {
    const tl_session *s = &c->sessions.items[newest[h]];
    const tl_session_detail *d = &c->details[newest[h]];
    char buf[512], href[128];
    if (host_unknown(d)) {
      bare++;
      continue;
    }
    if (row_newest)
      row_newest[rows] = newest[h];
    rows++;
    size_t cell = tl__table_add(t, s->hostname);
    tl__table_link(t, cell, tl__host_href(p, s->host_fingerprint, href, sizeof href));
    size_t at = 0;
    buf[0] = '\0';
    for (size_t l = 0; used && l < c->label_count && at < sizeof buf; l++)
      if (used[h * c->label_count + l])
        at += (size_t)snprintf(buf + at, sizeof buf - at, "%s%s", at ? ", " : "", c->labels[l]);
    tl__table_add(t, buf);
    tl__host_cpu(d, buf, sizeof buf);
    tl__table_add(t, buf);
    host_cores(d, buf, sizeof buf);
    tl__table_add(t, buf);
    host_ram(d, buf, sizeof buf);
    tl__table_add(t, buf);
    tl__host_os(d, buf, sizeof buf);
    tl__table_add(t, buf);
    tl__table_add(t, tl__or_unknown(tl__fact(d, "kernel.release")));
    host_virt(d, buf, sizeof buf);
    tl__table_add(t, buf);
    tl__table_add(t, tl__or_unknown(tl__fact(d, "clocksource.current")));
    tl__table_add(t, tl__or_unknown(tl__fact(d, "cpu.governor")));
  }
  if (t && rows > TL__MD_LIST_MAX)
    put_hosts_folded(p, t, row_newest, rows);
  else if (rows || !t)
    tl__put_table(p, t);
  else
    tl__table_free(t);
  if (bare)
    bare_hosts(p, first, newest, nh, bare);

  session_summary(p);
  session_list(p);
  tl__causes_counters(p);
  free(first);
  free(newest);
  free(used);
  free(row_newest);
}
