/* svg_trend.c: the charts along an axis of their own, drawn with the
 * shared parts of svg.c: the trend (p90 and p99 of each session over time,
 * one line per label, dense series folded per day or week, with the lasting
 * changes the statistics found) and the --by trend (p50, p90 and p99 with
 * their intervals against the values of a numeric key). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"
#include "svg_internal.h"

/* Session i's details (its own p50/p90/p99 first among its pct_ns) when it
 * is a point of the trend of probe and delay, else NULL. */
static const tl_session_detail *trend_point(const tl_comparison *c, size_t i, const char *probe,
                                            int64_t delay_ns) {
  const tl_session *s = &c->sessions.items[i];
  const tl_session_detail *d = &c->details[i];
  if (strcmp(s->probe, probe) != 0 || s->delay_ns != delay_ns || !d->count)
    return NULL;
  return d;
}

/* A series of the trend chart: one label's p90 or p99 per session, or,
 * when there are more sessions than the chart can show apart
 * (TREND_DENSE), the median of each day's (or week's) sessions with the
 * lowest and highest as a whisker. */
enum { TREND_DENSE = 60 };

typedef struct {
  double t, v, lo, hi; /* time (s), value, spread (ns of lateness) */
} trend_pt;

/* The points of label l's series `which` (1: p90, 2: p99) into pts (room
 * for every session); bucket_s > 0 folds them per bucket. Returns how
 * many. */
static size_t trend_series(const tl_comparison *c, size_t l, const char *probe, int64_t delay_ns,
                           int which, double bucket_s, trend_pt *pts, double *scratch) {
  double armed = (double)tl_probe_armed_ns(probe, delay_ns);
  size_t n = 0, count;
  const size_t *at = tl__label_sessions(c, l, &count);
  for (size_t k = 0; k < count; k++) {
    const tl_session_detail *d = trend_point(c, at[k], probe, delay_ns);
    if (!d)
      continue;
    double v = (double)d->pct_ns[which] - armed;
    pts[n++] = (trend_pt){(double)c->sessions.items[at[k]].started_ns / 1e9, v, v, v};
  }
  if (bucket_s <= 0 || n == 0)
    return n;
  /* Sessions come in time order: fold each run of one bucket. */
  size_t out = 0;
  for (size_t i = 0; i < n;) {
    double b = floor(pts[i].t / bucket_s);
    size_t j = i, k = 0;
    double lo = pts[i].v, hi = pts[i].v;
    while (j < n && floor(pts[j].t / bucket_s) == b) {
      lo = fmin(lo, pts[j].v);
      hi = fmax(hi, pts[j].v);
      scratch[k++] = pts[j++].v;
    }
    /* A fleet's day is thousands of sessions a label: selected, not sorted. */
    pts[out++] = (trend_pt){(b + 0.5) * bucket_s, tl__median(scratch, k), lo, hi};
    i = j;
  }
  return out;
}

/* Date labels of the trend's x axis: three (room for them on a phone),
 * with times of day when the data spans less than two days. */
static void trend_dates(FILE *o, const frame *f, double t0, double t1) {
  for (int k = 0; k <= 2; k++) {
    double t = t0 + (t1 - t0) * k / 2;
    char date[32], buf[32];
    tl_date_format((int64_t)(t * 1e9), date, sizeof date);
    if (t1 - t0 < 600)
      snprintf(buf, sizeof buf, "%.8s", date + 11);
    else if (t1 - t0 < 2 * 86400)
      snprintf(buf, sizeof buf, "%.5s %.5s", date + 5, date + 11);
    else
      snprintf(buf, sizeof buf, "%.10s", date);
    double x = px(f, t);
    fprintf(o, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x,
            f->bottom, x, f->bottom + 4);
    tl__svg_text(o, x, f->bottom + 24, k == 0 ? "start" : k == 2 ? "end" : "middle", buf);
  }
}

/* The sessions of the trend of probe and delay: how many, the span of their
 * start times (s) and of their p90 and p99 lateness (ns; lo the least
 * positive). */
static size_t trend_extent(const tl_comparison *c, const char *probe, int64_t delay_ns,
                           double *t0_out, double *t1_out, double *lo_out, double *hi_out) {
  size_t n = 0;
  double armed = (double)tl_probe_armed_ns(probe, delay_ns), t0 = 0, t1 = 0, hi = 0, lo = 0;
  for (size_t i = 0; i < c->sessions.count; i++) {
    const tl_session *s = &c->sessions.items[i];
    const tl_session_detail *d = trend_point(c, i, probe, delay_ns);
    if (!d)
      continue;
    double t = (double)s->started_ns / 1e9;
    if (!n || t < t0)
      t0 = t;
    if (!n || t > t1)
      t1 = t;
    for (int k = 1; k <= 2; k++) {
      double v = (double)d->pct_ns[k] - armed;
      hi = fmax(hi, v);
      if (v > 0 && (lo <= 0 || v < lo))
        lo = v;
    }
    n++;
  }
  *t0_out = t0;
  *t1_out = t1;
  *lo_out = lo;
  *hi_out = hi;
  return n;
}

/* The lasting changes the statistics found in the groups of probe and
 * delay, as dashed vertical lines where they start. */
static void trend_changes(tl__page *p, const frame *f, const char *probe, int64_t delay_ns) {
  const tl_comparison *c = p->c;
  FILE *o = p->out;
  const tl_stats *st = tl__page_stats(p);
  for (size_t i = 0; st && i < c->group_count; i++) {
    const tl_group *g = &c->groups[i];
    if (strcmp(g->probe, probe) != 0 || g->delay_ns != delay_ns)
      continue;
    for (size_t k = 0; k < st->groups[i].change_count; k++) {
      const tl_change *ch = &st->groups[i].changes[k];
      char line[256];
      double x = px(f, (double)ch->at_ns / 1e9);
      tl_change_sentence(g, ch, line, sizeof line);
      fprintf(o,
              "<g class=\"s%zu\"><line class=\"line\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
              "y2=\"%.1f\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"><title>",
              tl__style_of(p, g->label) % STYLES, x, f->top, x, f->bottom);
      tl_html_escape(o, line);
      fputs("</title></line></g>\n", o);
    }
  }
}

void tl__svg_trend(tl__page *p, const char *probe, int64_t delay_ns) {
  const tl_comparison *c = p->c;
  double t0 = 0, t1 = 0, hi = 0, lo = 0;
  size_t n = trend_extent(c, probe, delay_ns, &t0, &t1, &lo, &hi);
  if (!n)
    return;
  const char *names[256];
  size_t styles[256], shown[256], nl = 0, most = 0;
  for (size_t l = 0; l < c->label_count && nl < 256; l++) {
    size_t k = 0, count;
    const size_t *at = tl__label_sessions(c, l, &count);
    for (size_t i = 0; i < count; i++)
      k += trend_point(c, at[i], probe, delay_ns) != NULL;
    if (!k)
      continue;
    names[nl] = c->labels[l];
    shown[nl] = l;
    styles[nl++] = tl__style_of(p, c->labels[l]);
    most = k > most ? k : most;
  }
  /* Dense series fold per day, or per week when even days are too many. */
  double bucket = 0;
  if (most > TREND_DENSE)
    bucket = (t1 - t0) / 86400 > TREND_DENSE ? 7 * 86400 : 86400;
  trend_pt *pts = malloc(most * sizeof *pts);
  double *scratch = malloc(most * sizeof *scratch);
  if (!pts || !scratch) {
    free(pts);
    free(scratch);
    p->failed = TL_ENOMEM;
    return;
  }
  double w = 640, left = 122, rows = (double)tl__svg_legend_rows(names, nl, w - left - 16);
  double h = 344 + rows * 30;
  /* The axis spans the data (a minute around a single session); the plot
   * keeps 8 units inside the frame so that edge markers show whole. */
  if (t1 - t0 < 60) {
    t0 -= 30;
    t1 += 30;
  }
  frame f = {left + 8, w - 24, 16, 258, t0, t1, 0, 1};
  frame axis = f;
  axis.left -= 8;
  axis.right += 8;
  tl__svg_log_span(lo, hi, &f.y0, &f.y1);
  axis.y0 = f.y0;
  axis.y1 = f.y1;
  char call[96], title[256], desc[640];
  tl__call_name(probe, delay_ns, call, sizeof call);
  snprintf(title, sizeof title, "p90 and p99 of each session over time, %s", call);
  snprintf(desc, sizeof desc,
           "Lateness (y, log scale) of each of %zu sessions by its start time (x, UTC)%s: filled "
           "markers and thick lines p90, hollow markers and thin lines p99, one line per label; "
           "dashed vertical lines mark lasting changes found in them.",
           n,
           bucket == 0         ? ""
           : bucket == 86400.0 ? ", the median of each day's sessions with whiskers from the "
                                 "lowest to the highest"
                               : ", the median of each week's sessions with whiskers from the "
                                 "lowest to the highest");
  tl__svg_open(p, w, h, title, desc);
  FILE *o = p->out;
  tl__svg_log_axis(o, &axis);
  trend_dates(o, &f, t0, t1);
  tl__svg_text(o, (f.left + f.right) / 2, f.bottom + 52, "middle",
               bucket == 0         ? "Session start (UTC)"
               : bucket == 86400.0 ? "Day (UTC): median of its sessions"
                                   : "Week (UTC): median of its sessions");
  fputc('\n', o);
  for (size_t l = 0; l < nl; l++) {
    size_t s = styles[l];
    for (int which = 1; which <= 2; which++) {
      size_t np = trend_series(c, shown[l], probe, delay_ns, which, bucket, pts, scratch);
      fprintf(o,
              "<g class=\"s%zu\"><polyline class=\"line\" stroke-width=\"%s\" "
              "stroke-dasharray=\"%s\" points=\"",
              s % STYLES, which == 1 ? "2.5" : "1", tl__svg_dashes[s % DASHES]);
      for (size_t i = 0; i < np; i++)
        fprintf(o, "%s%.1f,%.1f", i ? " " : "", px(&f, pts[i].t), log_y(&f, pts[i].v));
      fputs("\"/>", o);
      for (size_t i = 0; i < np; i++) {
        if (pts[i].hi > pts[i].lo)
          fprintf(o, "<line class=\"line\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
                  px(&f, pts[i].t), log_y(&f, pts[i].lo), px(&f, pts[i].t), log_y(&f, pts[i].hi));
        tl__svg_marker(o, s, px(&f, pts[i].t), log_y(&f, pts[i].v), which == 2);
      }
      fputs("</g>\n", o);
    }
  }
  free(pts);
  free(scratch);
  trend_changes(p, &f, probe, delay_ns);
  tl__svg_legend(p, &axis, names, styles, nl, 338);
  tl__svg_close(p, bucket == 0 ? "p90 (filled, thick) and p99 (hollow, thin) of each session over "
                                 "time, on a log scale. Lower is better; a step is worth a look in "
                                 "the sessions table."
                               : "p90 (filled, thick) and p99 (hollow, thin) over time, on a log "
                                 "scale: the median of each period's sessions, whiskers from its "
                                 "lowest to its highest. Lower is better.");
}

/* p50, p90 and p99 lateness (dots) with their 95% intervals (whiskers)
 * against the values of a numeric --by key, evenly spaced in their order;
 * the unknown group is left out (it has no place on the axis). */
void tl__svg_by_trend(tl__page *p, const char *probe, int64_t delay_ns) {
  const tl_comparison *c = p->c;
  const tl_stats *st = tl__page_stats(p);
  static const double want[3] = {50, 90, 99};
  static const char *const names[3] = {"p50", "p90", "p99"};
  size_t gi[256], n = 0, at[256][3];
  int64_t armed = tl_probe_armed_ns(probe, delay_ns);
  double hi = 0, lo = 0;
  for (size_t l = 0; l < c->label_count && n < 256; l++) {
    if (!c->label_x || isnan(c->label_x[l]))
      continue;
    for (size_t i = 0; i < c->group_count; i++) {
      const tl_group *g = &c->groups[i];
      if (strcmp(g->label, c->labels[l]) != 0 || strcmp(g->probe, probe) != 0 ||
          g->delay_ns != delay_ns || !g->dist.count)
        continue;
      for (size_t w = 0; w < 3; w++) {
        size_t k = 0;
        while (k < g->dist.pct_count && g->dist.pcts[k] != want[w])
          k++;
        at[n][w] = k;
        if (k < g->dist.pct_count) {
          int64_t top = st && st->groups[i].pct[k].hi_ns >= 0 ? st->groups[i].pct[k].hi_ns
                                                              : g->dist.pct_ns[k];
          int64_t bottom = st && st->groups[i].pct[k].lo_ns >= 0 ? st->groups[i].pct[k].lo_ns
                                                                 : g->dist.pct_ns[k];
          hi = fmax(hi, (double)(top - armed));
          if (bottom - armed > 0 && (lo <= 0 || (double)(bottom - armed) < lo))
            lo = (double)(bottom - armed);
        }
      }
      gi[n++] = i;
    }
  }
  if (n == 0)
    return;
  double w = 640, h = 344;
  frame f = {122, w - 16, 16, 258, -0.5, (double)n - 0.5, 0, 1};
  tl__svg_log_span(lo, hi, &f.y0, &f.y1);
  char call[96], title[256], desc[512];
  tl__call_name(probe, delay_ns, call, sizeof call);
  snprintf(title, sizeof title, "p50, p90 and p99 lateness by %s, %s", c->by, call);
  snprintf(desc, sizeof desc,
           "Lateness (y, log scale) of each of %zu values of %s (x, in order): dots at p50, p90 "
           "and p99, "
           "whiskers their 95%% confidence intervals.",
           n, c->by);
  tl__svg_open(p, w, h, title, desc);
  FILE *o = p->out;
  tl__svg_log_axis(o, &f);
  /* Every value's name when they fit side by side at the 22 px phones
   * get (13 units a character), else every second, third ... */
  size_t longest = 1;
  for (size_t i = 0; i < n; i++)
    if (tl__svg_name_chars(c->groups[gi[i]].label) > longest)
      longest = tl__svg_name_chars(c->groups[gi[i]].label);
  double room = n > 1 ? px(&f, 1) - px(&f, 0) : f.right - f.left;
  size_t every = (size_t)ceil((13.0 * (double)longest + 12) / room);
  for (size_t i = 0; i < n; i += every ? every : 1)
    tl__svg_text(o, px(&f, (double)i), f.bottom + 24, "middle", c->groups[gi[i]].label);
  tl__svg_text(o, (f.left + f.right) / 2, f.bottom + 52, "middle", c->by);
  fputc('\n', o);
  for (size_t s = 0; s < 3; s++) {
    /* The percentiles in the colour of the text, told apart by dash and
     * marker: colours belong to labels and --by values. */
    fprintf(o,
            "<g class=\"key\"><polyline class=\"line\" stroke-width=\"1.5\" "
            "stroke-dasharray=\"%s\" points=\"",
            tl__svg_dashes[s % DASHES]);
    int first = 1;
    for (size_t i = 0; i < n; i++) {
      const tl_group *g = &c->groups[gi[i]];
      if (at[i][s] >= g->dist.pct_count)
        continue;
      fprintf(o, "%s%.1f,%.1f", first ? "" : " ", px(&f, (double)i),
              log_y(&f, (double)(g->dist.pct_ns[at[i][s]] - armed)));
      first = 0;
    }
    fputs("\"/>", o);
    for (size_t i = 0; i < n; i++) {
      const tl_group *g = &c->groups[gi[i]];
      size_t k = at[i][s];
      if (k >= g->dist.pct_count)
        continue;
      double x = px(&f, (double)i);
      const tl_pct_stats *ps = st ? &st->groups[gi[i]].pct[k] : NULL;
      if (ps && ps->lo_ns >= 0 && ps->hi_ns >= 0)
        fprintf(o, "<line class=\"line\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x,
                log_y(&f, (double)(ps->lo_ns - armed)), x, log_y(&f, (double)(ps->hi_ns - armed)));
      tl__svg_marker(o, s, x, log_y(&f, (double)(g->dist.pct_ns[k] - armed)), 0);
    }
    fputs("</g>\n", o);
  }
  tl__svg_legend(p, &f, names, NULL, 3, 338);
  tl__svg_close(p, "p50, p90 and p99 lateness of each value on a log scale, with 95% intervals. "
                   "Lower is better.");
}
