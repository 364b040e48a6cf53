/* site.c: the index page of a site (tlreport --site): what the site holds
 * (labels, hosts, newest data), each label's recent p90 lateness with a
 * sparkline of its recent sessions and the lasting changes found, written
 * with the comparison page's pieces (page.c) in the same HTML frame. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"

/* Whether session i of c is one of group g's, with samples. */
static int sampled_in(const tl_comparison *c, size_t i, const tl_group *g) {
  const tl_session *s = &c->sessions.items[i];
  return strcmp(s->label, g->label) == 0 && strcmp(s->probe, g->probe) == 0 &&
         s->delay_ns == g->delay_ns && c->details[i].count;
}

/* A sparkline of the last (at most SPARK) sessions' p90 lateness of group
 * g: no axis, no text, only the shape, its range said in its title. When
 * the site is grouped --by and those sessions mix its values (a label that
 * cycles through four memory sizes), each point is instead the median of
 * a day's sessions, over the last SPARK days: one point a session would
 * draw the values' differences as a sawtooth, not the label's trend. */
enum { SPARK = 30 };

static int by_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median_of(double *v, size_t n) {
  qsort(v, n, sizeof *v, by_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Session i's value of the site's --by key ("1G", "1G/2 CPUs") into buf;
 * "" when not grouped or not recorded. */
static void by_value(const tl_comparison *c, const tl__by *by, size_t i, char *buf, size_t len) {
  size_t at = 0;
  buf[0] = '\0';
  for (size_t k = 0; by && k < by->n && at < len; k++) {
    char name[128];
    double num;
    if (!tl__by_part(c, i, by->k[k].key, by->k[k].tag, name, sizeof name, &num))
      snprintf(name, sizeof name, "?");
    at += (size_t)snprintf(buf + at, len - at, "%s%s", k ? "/" : "", name);
  }
}

/* Whether the last SPARK sessions of g mix values of the --by key. */
static int mixes_values(const tl_comparison *c, const tl__by *by, const tl_group *g) {
  char first[256] = "", v[256];
  size_t n = 0;
  for (size_t i = c->sessions.count; by && i-- > 0 && n < SPARK;) {
    if (!sampled_in(c, i, g))
      continue;
    by_value(c, by, i, v, sizeof v);
    if (n++ && strcmp(v, first) != 0)
      return 1;
    snprintf(first, sizeof first, "%s", v);
  }
  return 0;
}

/* The points of g's sparkline, newest first, into v (SPARK of them at
 * most); per day when per_day. Returns how many. */
static size_t spark_points(const tl_comparison *c, const tl_group *g, int per_day, double *v) {
  enum { DAY = 86400 };
  int64_t armed = tl_probe_armed_ns(g->probe, g->delay_ns);
  size_t n = 0, k = 0;
  long long day = 0;
  double *today = per_day ? malloc((c->sessions.count + 1) * sizeof *today) : NULL;
  if (per_day && !today)
    return 0;
  for (size_t i = c->sessions.count; i-- > 0 && n < SPARK;) {
    if (!sampled_in(c, i, g))
      continue;
    double late = (double)(c->details[i].pct_ns[1] - armed);
    long long d = (long long)(c->sessions.items[i].started_ns / 1000000000 / DAY);
    if (!per_day) {
      v[n++] = late;
      continue;
    }
    if (k && d != day) {
      v[n++] = median_of(today, k);
      k = 0;
    }
    day = d;
    if (n < SPARK)
      today[k++] = late;
  }
  if (k && n < SPARK)
    v[n++] = median_of(today, k);
  free(today);
  return n;
}

/* Draws the sparkline onto o: inline in HTML, or as a file of its own
 * (file: a standalone SVG with its stylesheet and tl's marker). */
static void sparkline(tl__page *p, const tl_group *g, const tl__by *by, FILE *o, int file) {
  const tl_comparison *c = p->c;
  double v[SPARK];
  int per_day = mixes_values(c, by, g);
  size_t n = spark_points(c, g, per_day, v);
  if (n < 2) {
    fputs(file ? "" : "-", o);
    return;
  }
  double lo = v[0], hi = v[0];
  for (size_t i = 1; i < n; i++) {
    lo = fmin(lo, v[i]);
    hi = fmax(hi, v[i]);
  }
  char a[48], b[48], what[160];
  tl__say_time(lo, a, sizeof a);
  tl__say_time(hi, b, sizeof b);
  if (per_day)
    snprintf(what, sizeof what, "the median p90 lateness of each of the last %zu days", n);
  else
    snprintf(what, sizeof what, "p90 lateness of the last %zu sessions", n);
  size_t style = tl__style_of(p, g->label);
  if (file)
    fputs("<!-- " TL_REPORT_MARKER ": written by tlreport; tlreport may replace this file -->\n",
          o);
  fprintf(o,
          "<svg %sclass=\"spark\" viewBox=\"0 0 120 24\" width=\"120\" height=\"24\" role=\"img\" "
          "aria-label=\"%s, %s to %s\"><title>%s, oldest left: %s to %s%s</title>",
          file ? "xmlns=\"http://www.w3.org/2000/svg\" " : "", what, a, b, what, a, b,
          per_day ? " (the sessions mix values of --by, so a session alone would zigzag)" : "");
  if (file)
    fprintf(o, "<style>%s</style><rect class=\"bg\" width=\"120\" height=\"24\"/>",
            tl__svg_file_css);
  fprintf(o, "<polyline class=\"line s%zu\" stroke-width=\"1.5\" points=\"", style % 7);
  for (size_t i = 0; i < n; i++) {
    double x = 2 + 116.0 * (double)i / (double)(n - 1);
    double y = hi > lo ? 21 - 18 * (v[n - 1 - i] - lo) / (hi - lo) : 12;
    fprintf(o, "%s%.1f,%.1f", i ? " " : "", x, y);
  }
  fputs(file ? "\"/></svg>\n" : "\"/></svg>", o);
}

/* The index's figure for a label at a probe and delay is its recent
 * window, not one session: the median of the p90 lateness of its last
 * RECENT sessions (fewer when it has fewer), in ns; NAN without any. */
enum { RECENT = 10 };

static double recent_p90(const tl_comparison *c, const tl_group *g, size_t *used) {
  double v[RECENT];
  size_t n = 0;
  int64_t armed = tl_probe_armed_ns(g->probe, g->delay_ns);
  for (size_t i = c->sessions.count; i-- > 0 && n < RECENT;)
    if (sampled_in(c, i, g))
      v[n++] = (double)(c->details[i].pct_ns[1] - armed);
  *used = n;
  if (!n)
    return NAN;
  return median_of(v, n);
}

/* The answer, first: a sentence per probe and delay with each label's
 * recent p90 lateness, least late first. */
static void index_answer(tl__page *p) {
  const tl_comparison *c = p->c;
  FILE *f = tl__prose(p);
  fprintf(f,
          "## Recent lateness\n\nThe p90 lateness of each label's last %d sessions (the median "
          "of their p90s), least late first:\n\n",
          RECENT);
  for (size_t i = 0; i < c->group_count; i++) {
    const tl_group *g0 = &c->groups[i];
    size_t k = 0;
    while (k < i && !tl__same_block(&c->groups[k], g0))
      k++;
    if (k < i)
      continue; /* one sentence per probe and delay */
    const tl_group *row[256];
    double val[256];
    size_t n = 0, used;
    for (size_t j = i; j < c->group_count && n < 256; j++) {
      if (!tl__same_block(&c->groups[j], g0))
        continue;
      double v = recent_p90(c, &c->groups[j], &used);
      if (isnan(v))
        continue;
      size_t at = n++;
      while (at > 0 && val[at - 1] > v) { /* insertion: least late first */
        row[at] = row[at - 1];
        val[at] = val[at - 1];
        at--;
      }
      row[at] = &c->groups[j];
      val[at] = v;
    }
    if (!n)
      continue;
    char call[96];
    tl__call_name(g0->probe, g0->delay_ns, call, sizeof call);
    fputs("- ", f);
    tl_md_escape(f, call);
    fputs(": ", f);
    for (size_t r = 0; r < n; r++) {
      char v[48];
      tl__say_time(val[r], v, sizeof v);
      fputs(r ? ", " : "", f);
      tl_md_escape(f, row[r]->label);
      fprintf(f, " %s", v);
    }
    fputs(".\n", f);
  }
  fputs("\nWhether a difference is clear: the comparison page.\n\n", f);
}

/* The lasting changes the statistics found in group i, for a cell:
 * "⚑ worse 2026-11-20: p90 +120 µs; ...", "none", or "-" without
 * statistics. */
static void changes_text(const tl_stats *st, size_t i, char *buf, size_t len) {
  size_t at = 0;
  buf[0] = '\0';
  for (size_t k = 0; st && k < st->groups[i].change_count && at < len; k++) {
    const tl_change *ch = &st->groups[i].changes[k];
    char d[48], date[32];
    tl__say_time(fabs(ch->after_ns - ch->before_ns), d, sizeof d);
    tl_date_format(ch->at_ns, date, sizeof date);
    at += (size_t)snprintf(buf + at, len - at, "%s%s %.10s: p%s %s%s", k ? "; " : "",
                           ch->after_ns > ch->before_ns ? "\xE2\x9A\x91 worse" : "better", date,
                           TL_PCT(ch->pct), ch->after_ns > ch->before_ns ? "+" : "\xE2\x88\x92", d);
  }
  if (!at)
    snprintf(buf, len, "%s", st ? "none" : "-");
}

/* A Markdown index's sparkline: a chart file of its own, shown as an
 * image in cell "last sessions" of table t (text "-" when there is none). */
static void md_sparkline(tl__page *p, tl__table *t, const tl_group *g, const tl__by *by) {
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  if (mem)
    sparkline(p, g, by, mem, 1);
  if (!mem || fclose(mem) != 0) {
    free(buf);
    p->failed = TL_ENOMEM;
    tl__table_add(t, "-");
    return;
  }
  if (!len || !p->o->charts) {
    free(buf);
    tl__table_add(t, "-");
    return;
  }
  const char *name = tl__chart_file_add(p, buf, len);
  size_t cell = tl__table_add(t, "p90 of the last sessions");
  tl__table_link(t, cell, name);
  tl__table_mark(t, cell, TL__IMAGE);
}

/* Each label's recent p90 lateness at each probe and delay, the shape of
 * its recent sessions and the lasting changes found. */
static void index_latest(tl__page *p, const tl__by *by) {
  const tl_comparison *c = p->c;
  const tl_stats *st = tl__page_stats(p);
  int html = p->o->format == TL_FORMAT_HTML;
  fprintf(tl__prose(p),
          "## Labels at each delay\n\nEach label at each delay: the median p90 lateness of its "
          "last %d sessions, the p90 of its last sessions (oldest left) and the lasting changes "
          "the statistics found.\n\n",
          RECENT);
  static const char *const head[] = {"label", "delay", "recent p90 late", "last sessions",
                                     "changes"};
  tl__table *t = html ? NULL : tl__table_new(5, head, "llrll");
  FILE *o = p->out;
  if (html) {
    tl__prose_flush(p);
    fputs("<div class=\"scroll fold\"><table>\n<thead><tr><th>label</th><th>delay</th>"
          "<th class=\"n\">recent p90 late</th><th>last sessions</th><th>changes</th></tr>"
          "</thead>\n<tbody>\n",
          o);
  }
  for (size_t i = 0; i < c->group_count && (html || t); i++) {
    const tl_group *g = &c->groups[i];
    size_t used;
    double recent = recent_p90(c, g, &used);
    if (isnan(recent))
      continue;
    char call[96], v[48], href[128], changes[1024];
    tl__call_name(g->probe, g->delay_ns, call, sizeof call);
    tl__say_time(recent, v, sizeof v);
    changes_text(st, i, changes, sizeof changes);
    const char *link = tl__label_href(p, g->label, href, sizeof href);
    if (!html) {
      tl__table_link(t, tl__table_add(t, g->label), link);
      tl__table_add(t, call);
      tl__table_add(t, v);
      md_sparkline(p, t, g, by);
      tl__table_add(t, changes);
      continue;
    }
    fputs("<tr><td>", o);
    if (link)
      fprintf(o, "<a href=\"%s\">", link);
    tl_html_escape(o, g->label);
    fputs(link ? "</a></td><td data-h=\"delay\">" : "</td><td data-h=\"delay\">", o);
    tl_html_escape(o, call);
    fprintf(o,
            "</td><td class=\"n\" data-h=\"recent p90 late\">%s</td><td data-h=\"last sessions\">",
            v);
    sparkline(p, g, by, o, 0);
    fprintf(o, "</td><td data-h=\"changes\">%s</td></tr>\n", changes);
  }
  if (html)
    fputs("</tbody>\n</table></div>\n", o);
  else
    tl__put_table(p, t);
}

int tl__render_index(const tl_comparison *c, const tl_page_opts *o, FILE *out) {
  tl__page p = {.c = c, .o = o, .out = out};
  if (o->format == TL_FORMAT_HTML) {
    tl__html_head(&p, o->title ? o->title : "Timer latency results");
  } else {
    fputs("<!-- " TL_REPORT_MARKER ": written by tlreport; tlreport may replace this file -->\n\n",
          out);
    tl__md_nav(&p);
  }
  /* Under --by, a label's sparkline follows its trend, not its values'. */
  tl__by by;
  char why[256];
  int have_by = o->compare_by && tl__by_parse(o->compare_by, &by, why, sizeof why) == TL_OK;
  tl__section_title(&p);
  size_t n = c->sessions.count;
  int64_t newest = 0, samples = 0;
  for (size_t i = 0; i < n; i++) {
    const tl_session *s = &c->sessions.items[i];
    int64_t t = s->ended_ns > s->started_ns ? s->ended_ns : s->started_ns;
    newest = t > newest ? t : newest;
    samples += s->sample_count;
  }
  size_t *first = calloc(n + 1, sizeof *first), *last = calloc(n + 1, sizeof *last);
  if (!first || !last) {
    free(first);
    free(last);
    return TL_ENOMEM;
  }
  size_t nh = tl__hosts_of(c, first, last);
  size_t *used = tl__host_label_counts(c, first, nh),
         *on_host = tl__sessions_first(c, TL__SAME_HOST);
  if (!used || !on_host) {
    free(first);
    free(last);
    free(used);
    free(on_host);
    return TL_ENOMEM;
  }
  char date[32];
  tl__date_only(newest, date, sizeof date);
  FILE *f = tl__prose(&p);
  fprintf(f, "Newest data: %s. %zu labels, %zu hosts, %zu sessions, %lld samples.\n\n", date,
          c->label_count, nh, n, (long long)samples);
  if (o->left_out && o->left_out->count) {
    fputs("### Read with care\n\n", f);
    tl__left_out_bullets(f, o);
    fputc('\n', f);
  }
  index_answer(&p);
  f = tl__prose(&p);
  /* The link says what compare.html is: grouped by --by, or by label. */
  if (o->compare_by) {
    fputs("## Comparisons\n\n- [Timer latency by ", f);
    tl_md_escape(f, o->compare_by);
  } else {
    fputs("## Comparisons\n\n- [Every label side by side: ", f);
    tl__md_list_labels(f, c);
  }
  fprintf(f, "](compare.%s)\n\n## Labels\n\n", tl__page_ext(&p));
  static const char *const lhead[] = {"label", "sessions", "samples", "hosts", "first", "newest"};
  tl__table *t = tl__table_new(6, lhead, "lrrrll");
  for (size_t l = 0; t && l < c->label_count; l++) {
    size_t sessions = 0, hosts = 0;
    int64_t count = 0, t0 = 0, t1 = 0;
    size_t of_label;
    const size_t *at = tl__label_sessions(c, l, &of_label);
    for (size_t k = 0; k < of_label; k++) {
      const tl_session *s = &c->sessions.items[at[k]];
      hosts += on_host[at[k]] == at[k];
      if (!sessions++)
        t0 = s->started_ns;
      t1 = s->started_ns;
      count += s->sample_count;
    }
    char href[128], d0[32], d1[32];
    tl__table_link(t, tl__table_add(t, c->labels[l]),
                   tl__label_href(&p, c->labels[l], href, sizeof href));
    tl__table_addf(t, "%zu", sessions);
    tl__table_addf(t, "%lld", (long long)count);
    tl__table_addf(t, "%zu", hosts);
    tl__date_only(t0, d0, sizeof d0);
    tl__date_only(t1, d1, sizeof d1);
    tl__table_add(t, d0);
    tl__table_add(t, d1);
  }
  tl__put_table(&p, t);
  index_latest(&p, have_by ? &by : NULL);
  f = tl__prose(&p);
  fputs("## Hosts\n\n", f);
  static const char *const hhead[] = {"host", "CPU", "OS", "kernel", "labels", "sessions"};
  t = tl__table_new(6, hhead, "lllllr");
  for (size_t h = 0; t && h < nh; h++) {
    const tl_session *s = &c->sessions.items[last[h]];
    const tl_session_detail *d = &c->details[last[h]];
    char buf[512], href[128];
    size_t cell = tl__table_add(t, s->hostname);
    tl__table_link(t, cell, tl__host_href(&p, s->host_fingerprint, href, sizeof href));
    tl__host_cpu(d, buf, sizeof buf);
    tl__table_add(t, buf);
    tl__host_os(d, buf, sizeof buf);
    tl__table_add(t, buf);
    tl__table_add(t, tl__or_unknown(tl__fact(d, "kernel.release")));
    size_t at = 0, sessions = 0;
    buf[0] = '\0';
    for (size_t l = 0; l < c->label_count; l++) {
      size_t here = used[h * c->label_count + l];
      sessions += here;
      if (here && at < sizeof buf)
        at += (size_t)snprintf(buf + at, sizeof buf - at, "%s%s", at ? ", " : "", c->labels[l]);
    }
    tl__table_add(t, buf);
    tl__table_addf(t, "%zu", sessions);
  }
  tl__put_table(&p, t);
  free(first);
  free(last);
  free(used);
  free(on_host);
  return tl__page_end(&p);
}
