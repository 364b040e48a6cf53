/* svg.c: the charts of the HTML page, as inline SVG written here: no
 * script, no font or file from elsewhere. Every series has its own colour
 * (Okabe-Ito, distinguishable with the common colour-vision deficiencies),
 * its own dash pattern and its own marker, so the charts still read in
 * greyscale print. Colours come from CSS classes (.s0 ...) so the dark
 * scheme can lighten them; every chart has a <title> and a <desc>. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"

enum { STYLES = 7, DASHES = 5 };

static const char *const dashes[DASHES] = {"", "7 4", "2 3", "9 3 2 3", "4 4"};

/* A plot area in pixels and the values it spans. */
typedef struct {
  double left, right, top, bottom;
  double x0, x1, y0, y1;
} frame;

static double px(const frame *f, double x) {
  return f->x1 > f->x0 ? f->left + (x - f->x0) / (f->x1 - f->x0) * (f->right - f->left)
                       : (f->left + f->right) / 2;
}

static double py(const frame *f, double y) {
  return f->y1 > f->y0 ? f->bottom - (y - f->y0) / (f->y1 - f->y0) * (f->bottom - f->top)
                       : (f->top + f->bottom) / 2;
}

/* A "nice" tick step (1, 2 or 5 times a power of ten) giving about `want`
 * ticks over [lo, hi]; widens [lo, hi] to whole steps. */
static double nice_step(double *lo, double *hi, int want) {
  double span = *hi - *lo;
  if (span <= 0)
    span = *hi > 0 ? *hi : 1;
  double raw = span / want, mag = pow(10, floor(log10(raw))), step = mag;
  if (raw / mag > 5)
    step = 10 * mag;
  else if (raw / mag > 2)
    step = 5 * mag;
  else if (raw / mag > 1)
    step = 2 * mag;
  *lo = floor(*lo / step) * step;
  *hi = ceil(*hi / step) * step;
  if (*hi <= *lo)
    *hi = *lo + step;
  return step;
}

/* The label index of a label, for its style. */
static size_t style_of(const tl_comparison *c, const char *label) {
  for (size_t i = 0; i < c->label_count; i++)
    if (strcmp(c->labels[i], label) == 0)
      return i;
  return 0;
}

static void marker(FILE *o, size_t style, double x, double y, int hollow) {
  const char *fill = hollow ? " class=\"hollow\"" : "";
  switch (style % DASHES) {
  case 0:
    fprintf(o, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\"%s/>", x, y, fill);
    break;
  case 1:
    fprintf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"7\" height=\"7\"%s/>", x - 3.5, y - 3.5, fill);
    break;
  case 2:
    fprintf(o, "<path d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fZ\"%s/>", x, y - 4.5, x + 4.5, y + 3.5,
            x - 4.5, y + 3.5, fill);
    break;
  case 3:
    fprintf(o, "<path d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fL%.1f %.1fZ\"%s/>", x, y - 5, x + 5, y, x,
            y + 5, x - 5, y, fill);
    break;
  default:
    fprintf(o,
            "<path d=\"M%.1f %.1fL%.1f %.1fM%.1f %.1fL%.1f %.1f\" class=\"line\" "
            "stroke-width=\"2\"/>",
            x - 4, y - 4, x + 4, y + 4, x - 4, y + 4, x + 4, y - 4);
  }
}

/* Opens a figure with an accessible SVG of w x h user units. */
static void open_svg(tl__page *p, double w, double h, const char *title, const char *desc) {
  FILE *o = p->out;
  p->chart_id++;
  fprintf(o,
          "<figure><svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" "
          "width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"",
          w, h, w, h);
  tl_html_escape(o, title);
  fputs("\"><title>", o);
  tl_html_escape(o, title);
  fputs("</title><desc>", o);
  tl_html_escape(o, desc);
  fputs("</desc>\n", o);
}

static void close_svg(tl__page *p, const char *caption) {
  fputs("</svg><figcaption>", p->out);
  tl_html_escape(p->out, caption);
  fputs("</figcaption></figure>\n", p->out);
}

static void text(FILE *o, double x, double y, const char *anchor, const char *s) {
  fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">", x, y, anchor);
  tl_html_escape(o, s);
  fputs("</text>", o);
}

/* Horizontal grid lines and tick labels of the y axis, in ms, with its name. */
static void y_axis(FILE *o, const frame *f, double step, const char *name) {
  for (double v = f->y0; v <= f->y1 + step / 2; v += step) {
    char buf[32];
    double y = py(f, v);
    fprintf(o, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", f->left, y,
            f->right, y);
    snprintf(buf, sizeof buf, "%g", fabs(v) < step / 1e6 ? 0.0 : v);
    text(o, f->left - 6, y + 4, "end", buf);
  }
  fprintf(o, "<text x=\"14\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 14 %.1f)\">",
          (f->top + f->bottom) / 2, (f->top + f->bottom) / 2);
  tl_html_escape(o, name);
  fputs("</text>\n", o);
  fprintf(o, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", f->left,
          f->bottom, f->right, f->bottom);
}

/* Legend entries: the line sample takes 34 units, then the name; a
 * character of text is taken as 13 units, its width at the 22 px that
 * phones get, so that no name runs into the next. Names longer than
 * LEGEND_CHARS are cut with an ellipsis. */
enum { LEGEND_CHARS = 24 };

static size_t name_chars(const char *s) {
  size_t n = 0;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    n += (*p & 0xC0) != 0x80; /* count UTF-8 lead bytes only */
  return n;
}

static double legend_col(const char *const *names, size_t n) {
  size_t longest = 4;
  for (size_t i = 0; i < n; i++) {
    size_t c = name_chars(names[i]);
    longest = c > longest ? c : longest;
  }
  if (longest > LEGEND_CHARS)
    longest = LEGEND_CHARS;
  return 34 + 13 * (double)longest + 16;
}

/* One legend entry per label, in rows as wide as the plot. */
static double legend(tl__page *p, const frame *f, const char *const *names, const size_t *styles,
                     size_t n, double y) {
  FILE *o = p->out;
  double x = f->left, col = legend_col(names, n);
  for (size_t i = 0; i < n; i++) {
    if (x > f->left && x + col > f->right + 10) {
      x = f->left;
      y += 30; /* a 22 px line of text is about 27 tall */
    }
    size_t s = styles[i];
    fprintf(o,
            "<g class=\"s%zu\"><line class=\"line\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
            "y2=\"%.1f\" stroke-width=\"2\" stroke-dasharray=\"%s\"/>",
            s % STYLES, x, y - 4, x + 28, y - 4, dashes[s % DASHES]);
    marker(o, s, x + 14, y - 4, 0);
    fputs("</g>", o);
    char name[4 * LEGEND_CHARS + 8];
    if (name_chars(names[i]) > LEGEND_CHARS) {
      /* Cut at a character boundary, then an ellipsis. */
      size_t at = 0, chars = 0;
      const char *t = names[i];
      while (t[at] && chars < LEGEND_CHARS - 1) {
        at++;
        while (((unsigned char)t[at] & 0xC0) == 0x80)
          at++;
        chars++;
      }
      snprintf(name, sizeof name, "%.*s\xE2\x80\xA6", (int)at, t);
    } else {
      snprintf(name, sizeof name, "%s", names[i]);
    }
    text(o, x + 34, y, "start", name);
    x += col;
  }
  fputc('\n', o);
  return y;
}

static size_t legend_rows(const char *const *names, size_t n, double width) {
  size_t per = (size_t)(width / legend_col(names, n));
  if (per < 1)
    per = 1;
  return (n + per - 1) / per;
}

/* Microseconds when every value is below 1 ms, so tick labels stay short. */
static double unit_for(double hi_ms, const char **axis) {
  if (hi_ms < 1) {
    *axis = "Lateness (\xC2\xB5s)";
    return 1000;
  }
  *axis = "Lateness (ms)";
  return 1;
}

/* x position of percentile p on the log scale: 0 at p0, 1 at p90, 2 at p99 ... */
static double pct_x(double pct) { return pct >= 100 ? 4.5 : -log10(1 - pct / 100); }

/* How many of the spectrum's points g's samples support: the minimum, then
 * each percentile with at least TL_STATS_MIN_ABOVE samples above it (1,200
 * samples reach p99, not p99.99). */
static int spectrum_points(const tl_group *g) {
  int k = 1;
  while (k < TL_SPECTRUM_POINTS &&
         g->spectrum.count - tl_rank(tl_spectrum_pcts[k], g->spectrum.count) >= TL_STATS_MIN_ABOVE)
    k++;
  return k;
}

void tl__svg_spectrum(tl__page *p, const char *probe, int64_t delay_ns) {
  const tl_comparison *c = p->c;
  const tl_group *g[256];
  const char *names[256];
  size_t styles[256], n = 0;
  /* Lateness, in ms, like the tables. */
  double armed = (double)tl_probe_armed_ns(probe, delay_ns) / 1e6, lo = 0, hi = 0;
  int pts[256];
  for (size_t i = 0; i < c->group_count && n < 256; i++) {
    const tl_group *x = &c->groups[i];
    if (strcmp(x->probe, probe) != 0 || x->delay_ns != delay_ns || !x->spectrum.count)
      continue;
    g[n] = x;
    names[n] = x->label;
    styles[n] = style_of(c, x->label);
    pts[n] = spectrum_points(x);
    double a = (double)x->spectrum.pct_ns[0] / 1e6 - armed,
           b = (double)x->spectrum.pct_ns[pts[n] - 1] / 1e6 - armed;
    if (!n || a < lo)
      lo = a;
    if (!n || b > hi)
      hi = b;
    n++;
  }
  if (!n)
    return;
  double w = 640, rows = (double)legend_rows(names, n, 640 - 78 - 16);
  double h = 342 + rows * 30;
  const char *axis;
  double u = unit_for(fmax(hi, -lo), &axis);
  frame f = {78, w - 16, 16, 258, 0, 4, lo * u, hi * u};
  double step = nice_step(&f.y0, &f.y1, 5);
  char call[96], title[256], desc[1024];
  tl__call_name(probe, delay_ns, call, sizeof call);
  snprintf(title, sizeof title, "Lateness by percentile, %s", call);
  size_t at = (size_t)snprintf(desc, sizeof desc,
                               "Lateness (y) at each percentile from 0 to 99.99 on a log scale "
                               "(x), one line per label, each stopping at the highest percentile "
                               "with at least %d samples above it.",
                               TL_STATS_MIN_ABOVE);
  for (size_t i = 0; i < n && at < sizeof desc; i++) {
    char a[32], b[32];
    int k = 0;
    while (k < TL_SPECTRUM_POINTS && tl_spectrum_pcts[k] != 99)
      k++;
    tl_format_ms((double)g[i]->spectrum.pct_ns[k], a, sizeof a);
    tl_format_ms((double)g[i]->spectrum.pct_ns[TL_SPECTRUM_POINTS - 1], b, sizeof b);
    at +=
        (size_t)snprintf(desc + at, sizeof desc - at, " %s: p99 %s, p99.99 %s.", g[i]->label, a, b);
  }
  open_svg(p, w, h, title, desc);
  FILE *o = p->out;
  y_axis(o, &f, step, axis);
  static const char *const ticks[] = {"0%", "90%", "99%", "99.9%", "99.99%"};
  for (int t = 0; t <= 4; t++) {
    double x = px(&f, t);
    fprintf(o, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x, f.top,
            x, f.bottom);
    text(o, x, f.bottom + 22, t == 0 ? "start" : t == 4 ? "end" : "middle", ticks[t]);
  }
  text(o, (f.left + f.right) / 2, f.bottom + 50, "middle", "Percentile (log scale)");
  fputc('\n', o);
  for (size_t i = 0; i < n; i++) {
    size_t s = styles[i];
    fprintf(o,
            "<g class=\"s%zu\"><polyline class=\"line\" stroke-width=\"2\" "
            "stroke-dasharray=\"%s\" points=\"",
            s % STYLES, dashes[s % DASHES]);
    for (int k = 0; k < pts[i]; k++)
      fprintf(o, "%s%.1f,%.1f", k ? " " : "", px(&f, pct_x(tl_spectrum_pcts[k])),
              py(&f, ((double)g[i]->spectrum.pct_ns[k] / 1e6 - armed) * u));
    fputs("\"/>", o);
    /* Markers at the ticks only, so the lines stay readable. */
    for (int k = 0; k < pts[i]; k++) {
      double q = tl_spectrum_pcts[k];
      if (q == 0 || q == 90 || q == 99 || q == 99.9 || q == 99.99)
        marker(o, s, px(&f, pct_x(q)), py(&f, ((double)g[i]->spectrum.pct_ns[k] / 1e6 - armed) * u),
               0);
    }
    fputs("</g>\n", o);
  }
  legend(p, &f, names, styles, n, 334);
  close_svg(p, "Lateness by percentile: the further right, the rarer the call; a line stops "
               "where too few samples lie above. Lower is better.");
}

void tl__svg_histogram(tl__page *p, const tl_group *g) {
  const tl_comparison *c = p->c;
  size_t s = style_of(c, g->label);
  int64_t top = 0;
  for (int i = 0; i < TL_HIST_BINS; i++)
    if (g->hist[i] > top)
      top = g->hist[i];
  /* One x axis for every histogram of this probe and delay, so that equal
   * shapes at different places do not look alike; lateness, like the tables. */
  int64_t armed = tl_probe_armed_ns(g->probe, g->delay_ns);
  int64_t lo_ns = g->hist_lo_ns, hi_ns = g->hist_lo_ns + g->hist_width_ns * TL_HIST_BINS;
  for (size_t i = 0; i < c->group_count; i++) {
    const tl_group *x = &c->groups[i];
    if (strcmp(x->probe, g->probe) != 0 || x->delay_ns != g->delay_ns || !x->dist.count)
      continue;
    lo_ns = x->hist_lo_ns < lo_ns ? x->hist_lo_ns : lo_ns;
    int64_t end = x->hist_lo_ns + x->hist_width_ns * TL_HIST_BINS;
    hi_ns = end > hi_ns ? end : hi_ns;
  }
  double w = 360, h = 240;
  frame f = {60, w - 12, 14, 190, 0, 0, 0, (double)top};
  const char *axis;
  double u =
      unit_for(fmax(fabs((double)(hi_ns - armed)), fabs((double)(lo_ns - armed))) / 1e6, &axis);
  f.x0 = (double)(lo_ns - armed) / 1e6 * u;
  f.x1 = (double)(hi_ns - armed) / 1e6 * u;
  double ystep = nice_step(&f.y0, &f.y1, 4);
  double x0 = f.x0, x1 = f.x1;
  double xstep = nice_step(&x0, &x1, 4);
  char call[96], title[256], desc[512], lo[32], hi[32], mx[32];
  tl__call_name(g->probe, g->delay_ns, call, sizeof call);
  snprintf(title, sizeof title, "Histogram, %s, %s", g->label, call);
  tl__say_time((double)(g->hist_lo_ns - armed), lo, sizeof lo);
  tl__say_time((double)(g->hist_lo_ns + g->hist_width_ns * TL_HIST_BINS - armed), hi, sizeof hi);
  tl__say_time((double)(g->dist.max_ns - armed), mx, sizeof mx);
  snprintf(desc, sizeof desc,
           "Number of samples (y) per lateness bin (x) for %s, %lld samples from %s to %s late; "
           "%lld samples beyond the 99.9th percentile, up to %s late, are not drawn. Every "
           "histogram of %s has the same x axis.",
           g->label, (long long)g->dist.count, lo, hi, (long long)g->hist_over, mx, call);
  open_svg(p, w, h, title, desc);
  FILE *o = p->out;
  y_axis(o, &f, ystep, "Samples");
  for (double v = x0; v <= x1 + xstep / 2; v += xstep) {
    if (v < f.x0 - xstep / 1e6 || v > f.x1 + xstep / 1e6)
      continue;
    char buf[32];
    snprintf(buf, sizeof buf, "%g", fabs(v) < xstep / 1e6 ? 0.0 : v);
    double x = px(&f, v);
    fprintf(o, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x,
            f.bottom, x, f.bottom + 4);
    text(o, x, f.bottom + 17, "middle", buf);
  }
  text(o, (f.left + f.right) / 2, f.bottom + 36, "middle", axis);
  fprintf(o, "\n<g class=\"s%zu\">", s % STYLES);
  for (int i = 0; i < TL_HIST_BINS; i++) {
    if (!g->hist[i])
      continue;
    double y = py(&f, (double)g->hist[i]);
    double a = px(&f, (double)(g->hist_lo_ns + g->hist_width_ns * i - armed) / 1e6 * u);
    double b = px(&f, (double)(g->hist_lo_ns + g->hist_width_ns * (i + 1) - armed) / 1e6 * u);
    fprintf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>", a + 0.25, y,
            b - a - 0.5 > 0.5 ? b - a - 0.5 : 0.5, f.bottom - y);
  }
  fputs("</g>\n", o);
  char cap[512];
  snprintf(cap, sizeof cap, "%s, %s: %lld samples%s", g->label, call, (long long)g->dist.count,
           g->hist_over ? "; the slowest 0.1% at most are left out (see max in the table)" : "");
  close_svg(p, cap);
}

/* Session i's own p50/p90/p99 when it is a point of the trend of probe and
 * delay (of label; NULL: any), else NULL. */
static const tl_dist *trend_point(const tl_comparison *c, size_t i, const char *label,
                                  const char *probe, int64_t delay_ns) {
  const tl_session *s = &c->sessions.items[i];
  const tl_dist *d = &c->details[i].dist;
  if ((label && strcmp(s->label, label) != 0) || strcmp(s->probe, probe) != 0 ||
      s->delay_ns != delay_ns || !d->count)
    return NULL;
  return d;
}

void tl__svg_trend(tl__page *p, const char *probe, int64_t delay_ns) {
  const tl_comparison *c = p->c;
  size_t n = 0;
  /* Lateness, in ms, like the tables. */
  double armed = (double)tl_probe_armed_ns(probe, delay_ns) / 1e6, t0 = 0, t1 = 0, hi = 0, lo = 0;
  for (size_t i = 0; i < c->sessions.count; i++) {
    const tl_session *s = &c->sessions.items[i];
    const tl_dist *d = trend_point(c, i, NULL, probe, delay_ns);
    if (!d)
      continue;
    double t = (double)s->started_ns / 1e9;
    if (!n || t < t0)
      t0 = t;
    if (!n || t > t1)
      t1 = t;
    if (!n || (double)d->pct_ns[2] / 1e6 - armed > hi)
      hi = (double)d->pct_ns[2] / 1e6 - armed;
    if (!n || (double)d->pct_ns[1] / 1e6 - armed < lo)
      lo = (double)d->pct_ns[1] / 1e6 - armed;
    n++;
  }
  if (!n)
    return;
  const char *names[256];
  size_t styles[256], nl = 0;
  for (size_t l = 0; l < c->label_count && nl < 256; l++)
    for (size_t i = 0; i < c->sessions.count; i++)
      if (strcmp(c->sessions.items[i].label, c->labels[l]) == 0 &&
          strcmp(c->sessions.items[i].probe, probe) == 0 &&
          c->sessions.items[i].delay_ns == delay_ns) {
        names[nl] = c->labels[l];
        styles[nl++] = l;
        break;
      }
  double w = 640, rows = (double)legend_rows(names, nl, 640 - 78 - 16);
  double h = 342 + rows * 30;
  /* The axis spans the data, with a little room either side (a minute
   * around a single session). */
  double pad = t1 - t0 < 60 ? 30 : (t1 - t0) * 0.03;
  t0 -= pad;
  t1 += pad;
  const char *axis;
  double u = unit_for(fmax(hi, -lo), &axis);
  frame f = {78, w - 16, 16, 258, t0, t1, lo * u, hi * u};
  double step = nice_step(&f.y0, &f.y1, 5);
  char call[96], title[256], desc[512];
  tl__call_name(probe, delay_ns, call, sizeof call);
  snprintf(title, sizeof title, "p90 and p99 of each session over time, %s", call);
  snprintf(desc, sizeof desc,
           "Lateness (y) of each of %zu sessions by its start time (x, UTC): filled markers "
           "and thick lines p90, hollow markers and thin lines p99, one line per label; "
           "dashed vertical lines mark lasting changes found in them.",
           n);
  open_svg(p, w, h, title, desc);
  FILE *o = p->out;
  y_axis(o, &f, step, axis);
  /* Three dates along the x axis (room for them on a phone); with less than
   * two days, times of day too. */
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
    double x = px(&f, t);
    fprintf(o, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x,
            f.bottom, x, f.bottom + 4);
    text(o, x, f.bottom + 22, k == 0 ? "start" : k == 2 ? "end" : "middle", buf);
  }
  text(o, (f.left + f.right) / 2, f.bottom + 50, "middle", "Session start (UTC)");
  fputc('\n', o);
  for (size_t l = 0; l < nl; l++) {
    size_t s = styles[l];
    for (int which = 1; which <= 2; which++) {
      fprintf(o,
              "<g class=\"s%zu\"><polyline class=\"line\" stroke-width=\"%s\" "
              "stroke-dasharray=\"%s\" points=\"",
              s % STYLES, which == 1 ? "2.5" : "1", dashes[s % DASHES]);
      int first = 1;
      for (size_t i = 0; i < c->sessions.count; i++) {
        const tl_session *x = &c->sessions.items[i];
        const tl_dist *d = trend_point(c, i, names[l], probe, delay_ns);
        if (!d)
          continue;
        fprintf(o, "%s%.1f,%.1f", first ? "" : " ", px(&f, (double)x->started_ns / 1e9),
                py(&f, ((double)d->pct_ns[which] / 1e6 - armed) * u));
        first = 0;
      }
      fputs("\"/>", o);
      for (size_t i = 0; i < c->sessions.count; i++) {
        const tl_session *x = &c->sessions.items[i];
        const tl_dist *d = trend_point(c, i, names[l], probe, delay_ns);
        if (!d)
          continue;
        marker(o, s, px(&f, (double)x->started_ns / 1e9),
               py(&f, ((double)d->pct_ns[which] / 1e6 - armed) * u), which == 2);
      }
      fputs("</g>\n", o);
    }
  }
  /* The lasting changes the statistics found, where they start. */
  const tl_stats *st = tl__page_stats(p);
  for (size_t i = 0; st && i < c->group_count; i++) {
    const tl_group *g = &c->groups[i];
    if (strcmp(g->probe, probe) != 0 || g->delay_ns != delay_ns)
      continue;
    for (size_t k = 0; k < st->groups[i].change_count; k++) {
      const tl_change *ch = &st->groups[i].changes[k];
      char line[256];
      double x = px(&f, (double)ch->at_ns / 1e9);
      tl_change_sentence(g, ch, line, sizeof line);
      fprintf(o,
              "<g class=\"s%zu\"><line class=\"line\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
              "y2=\"%.1f\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"><title>",
              style_of(c, g->label) % STYLES, x, f.top, x, f.bottom);
      tl_html_escape(o, line);
      fputs("</title></line></g>\n", o);
    }
  }
  legend(p, &f, names, styles, nl, 334);
  close_svg(p, "p90 (filled, thick) and p99 (hollow, thin) of each session over time. Lower is "
               "better; a step is worth a look in the sessions table.");
}

/* The answer box's chart for one probe and delay: one row per label, its
 * p50, p90 and p99 lateness as dots (circle, square, triangle) on one
 * shared axis that starts at 0, each with its 95% interval as a whisker
 * (an end the data cannot bound is left open). */
void tl__svg_dots(tl__page *p, const tl_group *g0) {
  const tl_comparison *c = p->c;
  const tl_stats *st = tl__page_stats(p);
  static const double want[3] = {50, 90, 99};
  int at[3];
  size_t nk = 0;
  for (size_t w = 0; w < 3; w++)
    for (size_t k = 0; k < g0->dist.pct_count; k++)
      if (g0->dist.pcts[k] == want[w])
        at[nk++] = (int)k;
  const tl_group *rows[64];
  size_t n = 0;
  for (size_t l = 0; l < c->label_count && n < 64; l++)
    for (size_t i = 0; i < c->group_count; i++) {
      const tl_group *g = &c->groups[i];
      if (strcmp(g->label, c->labels[l]) == 0 && tl__same_block(g, g0) && g->dist.count)
        rows[n++] = g;
    }
  if (!n || !nk)
    return;
  int64_t armed = tl_probe_armed_ns(g0->probe, g0->delay_ns);
  double lo = 0, hi = 0;
  for (size_t r = 0; r < n; r++)
    for (size_t j = 0; j < nk; j++) {
      size_t gi = (size_t)(rows[r] - c->groups);
      double v = (double)(rows[r]->dist.pct_ns[at[j]] - armed);
      lo = fmin(lo, v);
      hi = fmax(hi, v);
      if (st && st->groups[gi].pct[at[j]].lo_ns >= 0)
        lo = fmin(lo, (double)(st->groups[gi].pct[at[j]].lo_ns - armed));
      if (st && st->groups[gi].pct[at[j]].hi_ns >= 0)
        hi = fmax(hi, (double)(st->groups[gi].pct[at[j]].hi_ns - armed));
    }
  tl__unit u = tl__unit_for(hi > -lo ? hi : -lo);
  /* Room for text at 22 px, the size phones get (see the page's CSS). */
  double w = 560, row_h = 34, top = 12, left = 150;
  double h = top + row_h * (double)n + 96;
  frame f = {left, w - 20, top, top + row_h * (double)n, lo / u.div, hi / u.div, 0, 1};
  double step = nice_step(&f.x0, &f.x1, 5);
  char call[96], title[256], desc[2048];
  tl__call_name(g0->probe, g0->delay_ns, call, sizeof call);
  snprintf(title, sizeof title, "Lateness of %s: p50, p90 and p99 with 95%% intervals", call);
  size_t dl =
      (size_t)snprintf(desc, sizeof desc,
                       "How late the timer fired (%s, x) for each label (rows): circle p50, "
                       "square p90, triangle p99; lines are 95%% confidence intervals.",
                       u.name);
  for (size_t r = 0; r < n && dl < sizeof desc; r++) {
    char v[32];
    dl += (size_t)snprintf(desc + dl, sizeof desc - dl, " %s:", rows[r]->label);
    for (size_t j = 0; j < nk && dl < sizeof desc; j++) {
      tl__num((double)(rows[r]->dist.pct_ns[at[j]] - armed), u, v, sizeof v);
      dl +=
          (size_t)snprintf(desc + dl, sizeof desc - dl, " p%s %s", TL_PCT(g0->dist.pcts[at[j]]), v);
    }
    if (dl < sizeof desc)
      dl += (size_t)snprintf(desc + dl, sizeof desc - dl, ".");
  }
  open_svg(p, w, h, title, desc);
  FILE *o = p->out;
  for (double v = f.x0; v <= f.x1 + step / 2; v += step) {
    char buf[32];
    double x = px(&f, v);
    snprintf(buf, sizeof buf, "%g", fabs(v) < step / 1e6 ? 0.0 : v);
    fprintf(o, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x, f.top,
            x, f.bottom);
    text(o, x, f.bottom + 22, "middle", buf);
  }
  char axis[64];
  snprintf(axis, sizeof axis, "Lateness (%s)", u.name);
  text(o, (f.left + f.right) / 2, f.bottom + 52, "middle", axis);
  fputc('\n', o);
  static const size_t shapes[3] = {0, 1, 2}; /* circle, square, triangle (marker styles) */
  for (size_t r = 0; r < n; r++) {
    size_t gi = (size_t)(rows[r] - c->groups), s = style_of(c, rows[r]->label);
    double y = f.top + row_h * ((double)r + 0.5);
    char name[64];
    /* Long labels are cut so they never run into the plot. */
    snprintf(name, sizeof name, "%s", rows[r]->label);
    if (strlen(rows[r]->label) > 11)
      snprintf(name, sizeof name, "%.10s\xE2\x80\xA6", rows[r]->label);
    text(o, f.left - 8, y + 4, "end", name);
    fprintf(o, "<g class=\"s%zu\">", s % STYLES);
    for (size_t j = 0; j < nk; j++) {
      double yy = y + ((double)j - 1) * 8;
      const tl_pct_stats *ps = st ? &st->groups[gi].pct[at[j]] : NULL;
      double v = (double)(rows[r]->dist.pct_ns[at[j]] - armed) / u.div;
      if (ps && (ps->lo_ns >= 0 || ps->hi_ns >= 0)) {
        double a = ps->lo_ns >= 0 ? (double)(ps->lo_ns - armed) / u.div : v;
        double b = ps->hi_ns >= 0 ? (double)(ps->hi_ns - armed) / u.div : v;
        fprintf(o,
                "<line class=\"line\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                "stroke-width=\"1.5\"/>",
                px(&f, a), yy, px(&f, b), yy);
      }
      marker(o, shapes[j], px(&f, v), yy, j == 2);
    }
    fputs("</g>\n", o);
  }
  /* Legend: the shapes, in the colour of the text. */
  double ly = f.bottom + 84, lx = 20;
  for (size_t j = 0; j < nk; j++) {
    char name[16];
    snprintf(name, sizeof name, "p%s", TL_PCT(g0->dist.pcts[at[j]]));
    fputs("<g class=\"key\">", o);
    marker(o, shapes[j], lx + 5, ly - 4, j == 2);
    fputs("</g>", o);
    text(o, lx + 14, ly, "start", name);
    lx += 80;
  }
  text(o, lx + 10, ly, "start", "lines: 95% interval");
  fputc('\n', o);
  char cap[256];
  snprintf(cap, sizeof cap,
           "%s: lateness by label, lower is better; dots apart with whiskers "
           "that do not overlap are clearly different.",
           call);
  close_svg(p, cap);
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
  double hi = 0;
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
          hi = fmax(hi, (double)top / 1e6);
        }
      }
      gi[n++] = i;
    }
  }
  if (n == 0)
    return;
  int64_t armed = tl_probe_armed_ns(probe, delay_ns);
  hi -= (double)armed / 1e6;
  const char *axis;
  double u = unit_for(hi, &axis);
  axis = u == 1 ? "Lateness (ms)" : "Lateness (\xC2\xB5s)";
  double w = 640, h = 342;
  frame f = {78, w - 16, 16, 258, -0.5, (double)n - 0.5, 0, fmax(hi, 0) * u};
  double step = nice_step(&f.y0, &f.y1, 5);
  char call[96], title[256], desc[512];
  tl__call_name(probe, delay_ns, call, sizeof call);
  snprintf(title, sizeof title, "p50, p90 and p99 lateness by %s, %s", c->by, call);
  snprintf(desc, sizeof desc,
           "Lateness (y) of each of %zu values of %s (x, in order): dots at p50, p90 and p99, "
           "whiskers their 95%% confidence intervals.",
           n, c->by);
  open_svg(p, w, h, title, desc);
  FILE *o = p->out;
  y_axis(o, &f, step, axis);
  for (size_t i = 0; i < n; i++)
    text(o, px(&f, (double)i), f.bottom + 22, "middle", c->groups[gi[i]].label);
  text(o, (f.left + f.right) / 2, f.bottom + 50, "middle", c->by);
  fputc('\n', o);
  for (size_t s = 0; s < 3; s++) {
    fprintf(o,
            "<g class=\"s%zu\"><polyline class=\"line\" stroke-width=\"1.5\" "
            "stroke-dasharray=\"%s\" points=\"",
            s % STYLES, dashes[s % DASHES]);
    int first = 1;
    for (size_t i = 0; i < n; i++) {
      const tl_group *g = &c->groups[gi[i]];
      if (at[i][s] >= g->dist.pct_count)
        continue;
      fprintf(o, "%s%.1f,%.1f", first ? "" : " ", px(&f, (double)i),
              py(&f, (double)(g->dist.pct_ns[at[i][s]] - armed) / 1e6 * u));
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
                py(&f, (double)(ps->lo_ns - armed) / 1e6 * u), x,
                py(&f, (double)(ps->hi_ns - armed) / 1e6 * u));
      marker(o, s, x, py(&f, (double)(g->dist.pct_ns[k] - armed) / 1e6 * u), 0);
    }
    fputs("</g>\n", o);
  }
  size_t styles[3] = {0, 1, 2};
  legend(p, &f, names, styles, 3, 334);
  close_svg(p, "p50, p90 and p99 lateness of each value, with 95% intervals. Lower is better.");
}
