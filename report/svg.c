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

/* The style (colour, dash and marker) of a label: its place in the
 * site-wide order when the page is one of a site, so that a label looks the
 * same on every page, else its place among the page's labels. */
size_t tl__style_of(const tl__page *p, const char *label) {
  const tl_page_opts *o = p->o;
  for (size_t i = 0; o && i < o->style_count; i++)
    if (strcmp(o->style_order[i], label) == 0)
      return i;
  for (size_t i = 0; i < p->c->label_count; i++)
    if (strcmp(p->c->labels[i], label) == 0)
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

/* Opens a figure with an accessible SVG of w x h user units; for a file of
 * its own (p->svg_file), a standalone SVG document with its stylesheet, its
 * first line tl's marker (so that -o may replace it). */
static void open_svg(tl__page *p, double w, double h, const char *title, const char *desc) {
  FILE *o = p->out;
  p->chart_id++;
  snprintf(p->chart_title, sizeof p->chart_title, "%s", title);
  if (p->svg_file)
    fputs("<!-- " TL_REPORT_MARKER ": written by tlreport; tlreport may replace this file -->\n",
          o);
  fprintf(o,
          "%s<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" "
          "width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"",
          p->svg_file ? "" : "<figure>", w, h, w, h);
  tl_html_escape(o, title);
  fputs("\"><title>", o);
  tl_html_escape(o, title);
  fputs("</title><desc>", o);
  tl_html_escape(o, desc);
  fputs("</desc>\n", o);
  if (p->svg_file)
    fprintf(o, "<style>%s</style><rect class=\"bg\" width=\"%.0f\" height=\"%.0f\"/>\n",
            tl__svg_file_css, w, h);
}

static void close_svg(tl__page *p, const char *caption) {
  snprintf(p->chart_caption, sizeof p->chart_caption, "%s", caption);
  if (p->svg_file) {
    fputs("</svg>\n", p->out);
    return;
  }
  fputs("</svg><figcaption>", p->out);
  tl_html_escape(p->out, caption);
  fputs("</figcaption></figure>\n", p->out);
}

static void text(FILE *o, double x, double y, const char *anchor, const char *s) {
  fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">", x, y, anchor);
  tl_html_escape(o, s);
  fputs("</text>", o);
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
    /* Without styles: the series are told apart by dash and marker only,
     * in the colour of the text (percentiles, never a label's colour). */
    size_t s = styles ? styles[i] : i;
    if (styles)
      fprintf(o, "<g class=\"s%zu\">", s % STYLES);
    else
      fputs("<g class=\"key\">", o);
    fprintf(o,
            "<line class=\"line\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
            "y2=\"%.1f\" stroke-width=\"2\" stroke-dasharray=\"%s\"/>",
            x, y - 4, x + 28, y - 4, dashes[s % DASHES]);
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

/* A log lateness axis: the y frame holds log10 of nanoseconds, from the
 * decade below the least positive value to the decade above the largest,
 * so that a p90 of 0.16 ms and one of 0.97 ms lie apart even when a spike
 * reaches 40 ms. Values at or below the bottom (a lateness of 0 or less)
 * sit on it. */
static void log_span(double lo_ns, double hi_ns, double *y0, double *y1) {
  lo_ns = lo_ns > 0 ? lo_ns : hi_ns > 0 ? hi_ns / 10 : 1000;
  hi_ns = hi_ns > lo_ns ? hi_ns : lo_ns;
  *y0 = floor(log10(lo_ns) + 1e-9);
  *y1 = ceil(log10(hi_ns) - 1e-9);
  if (*y1 <= *y0)
    *y1 = *y0 + 1;
}

static double log_y(const frame *f, double ns) {
  return py(f, ns > 0 ? fmax(log10(ns), f->y0) : f->y0);
}

/* "50 µs", "1 ms", "200 ns": a tick label of the log axis. */
static void tick_time(double ns, char *buf, size_t len) {
  if (ns < 1e3 - 1e-6)
    snprintf(buf, len, "%g ns", ns);
  else if (ns < 1e6 - 1e-3)
    snprintf(buf, len, "%g \xC2\xB5s", ns / 1e3);
  else if (ns < 1e9 - 1)
    snprintf(buf, len, "%g ms", ns / 1e6);
  else
    snprintf(buf, len, "%g s", ns / 1e9);
}

/* Grid and tick labels of the log axis: every decade, and 2 and 5 times it
 * when the axis spans few decades (so that there are enough to read by). */
static void log_axis(FILE *o, const frame *f) {
  int decades = (int)(f->y1 - f->y0);
  for (int e = (int)f->y0; e <= (int)f->y1; e++)
    for (int m = 1; m <= 5; m += m == 1 ? 1 : 3) {
      if (m > 1 && (decades > 2 || e == (int)f->y1))
        continue;
      double ns = m * pow(10, e);
      char buf[32];
      double y = py(f, log10(ns));
      fprintf(o, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", f->left,
              y, f->right, y);
      tick_time(ns, buf, sizeof buf);
      text(o, f->left - 6, y + 5, "end", buf);
    }
  double mid = (f->top + f->bottom) / 2;
  fprintf(o,
          "<text x=\"26\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 26 %.1f)\">"
          "Lateness (log scale)</text>\n",
          mid, mid);
  fprintf(o, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", f->left,
          f->bottom, f->right, f->bottom);
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
  /* Lateness, in ns, on a log axis: the tail spans decades. */
  double armed = (double)tl_probe_armed_ns(probe, delay_ns), lo = 0, hi = 0;
  int pts[256];
  for (size_t i = 0; i < c->group_count && n < 256; i++) {
    const tl_group *x = &c->groups[i];
    if (strcmp(x->probe, probe) != 0 || x->delay_ns != delay_ns || !x->spectrum.count)
      continue;
    g[n] = x;
    names[n] = x->label;
    styles[n] = tl__style_of(p, x->label);
    pts[n] = spectrum_points(x);
    for (int k = 0; k < pts[n]; k++) {
      double v = (double)x->spectrum.pct_ns[k] - armed;
      if (v > 0 && (lo <= 0 || v < lo))
        lo = v;
      hi = fmax(hi, v);
    }
    n++;
  }
  if (!n)
    return;
  double w = 640, left = 122, rows = (double)legend_rows(names, n, w - left - 16);
  double h = 342 + rows * 30;
  frame f = {left, w - 16, 16, 258, 0, 4, 0, 1};
  log_span(lo, hi, &f.y0, &f.y1);
  char call[96], title[256], desc[1024];
  tl__call_name(probe, delay_ns, call, sizeof call);
  snprintf(title, sizeof title, "Lateness by percentile, %s", call);
  size_t at = (size_t)snprintf(desc, sizeof desc,
                               "Lateness (y, log scale) at each percentile from 0 to 99.99 on a "
                               "log scale (x), one line per label, each stopping at the highest "
                               "percentile with at least %d samples above it.",
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
  log_axis(o, &f);
  static const char *const ticks[] = {"0%", "90%", "99%", "99.9%", "99.99%"};
  for (int t = 0; t <= 4; t++) {
    double x = px(&f, t);
    fprintf(o, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x, f.top,
            x, f.bottom);
    text(o, x, f.bottom + 24, t == 0 ? "start" : t == 4 ? "end" : "middle", ticks[t]);
  }
  text(o, (f.left + f.right) / 2, f.bottom + 52, "middle", "Percentile (log scale)");
  fputc('\n', o);
  for (size_t i = 0; i < n; i++) {
    size_t s = styles[i];
    fprintf(o,
            "<g class=\"s%zu\"><polyline class=\"line\" stroke-width=\"2\" "
            "stroke-dasharray=\"%s\" points=\"",
            s % STYLES, dashes[s % DASHES]);
    for (int k = 0; k < pts[i]; k++)
      fprintf(o, "%s%.1f,%.1f", k ? " " : "", px(&f, pct_x(tl_spectrum_pcts[k])),
              log_y(&f, (double)g[i]->spectrum.pct_ns[k] - armed));
    fputs("\"/>", o);
    /* Markers at the ticks only, so the lines stay readable. */
    for (int k = 0; k < pts[i]; k++) {
      double q = tl_spectrum_pcts[k];
      if (q == 0 || q == 90 || q == 99 || q == 99.9 || q == 99.99)
        marker(o, s, px(&f, pct_x(q)), log_y(&f, (double)g[i]->spectrum.pct_ns[k] - armed), 0);
    }
    fputs("</g>\n", o);
  }
  legend(p, &f, names, styles, n, 336);
  close_svg(p, "Lateness by percentile, both on log scales: the further right, the rarer the "
               "call; a line stops where too few samples lie above. Lower is better.");
}

/* A count for a tick label, short enough for a narrow chart's margin:
 * "950", "2.5k", "150k", "1.2M". */
static void count_label(double v, char *buf, size_t len) {
  if (fabs(v) < 1000)
    snprintf(buf, len, "%g", v);
  else if (fabs(v) < 1e6)
    snprintf(buf, len, "%gk", round(v / 100) / 10);
  else
    snprintf(buf, len, "%gM", round(v / 1e5) / 10);
}

/* Grid lines and tick labels of a chart's y axis of counts, with its name. */
static void count_axis(FILE *o, const frame *f, double step, const char *name) {
  for (double v = f->y0; v <= f->y1 + step / 2; v += step) {
    char buf[32];
    double y = py(f, v);
    fprintf(o, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", f->left, y,
            f->right, y);
    count_label(fabs(v) < step / 1e6 ? 0.0 : v, buf, sizeof buf);
    text(o, f->left - 6, y + 4, "end", buf);
  }
  fprintf(o, "<text x=\"18\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 18 %.1f)\">",
          (f->top + f->bottom) / 2, (f->top + f->bottom) / 2);
  tl_html_escape(o, name);
  fputs("</text>\n", o);
  fprintf(o, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", f->left,
          f->bottom, f->right, f->bottom);
}

/* Whether any histogram of g's probe and delay left samples out: then
 * each has the overflow column, so that their plot areas line up. */
static int any_overflow(const tl_comparison *c, const tl_group *g) {
  for (size_t i = 0; i < c->group_count; i++)
    if (tl__same_block(&c->groups[i], g) && c->groups[i].dist.count && c->groups[i].hist_over)
      return 1;
  return 0;
}

/* The histogram of one group over the bulk of its samples (see tl_group):
 * bins on a linear lateness axis of its own (a shared one squeezed the
 * least late label into a bar or two; the percentile chart compares them);
 * the samples beyond, if any, as one bar set apart at the right, its count
 * written above it. */
void tl__svg_histogram(tl__page *p, const tl_group *g) {
  const tl_comparison *c = p->c;
  size_t s = tl__style_of(p, g->label);
  int64_t top = g->hist_over;
  for (int i = 0; i < TL_HIST_BINS; i++)
    if (g->hist[i] > top)
      top = g->hist[i];
  int64_t armed = tl_probe_armed_ns(g->probe, g->delay_ns), lo_ns = g->hist_lo_ns;
  int64_t hi_ns = g->hist_lo_ns + g->hist_width_ns * TL_HIST_BINS;
  int any_over = any_overflow(c, g);
  /* Room on the left for "150k" and the axis name beside it; on the right
   * for the overflow bar (44 units). */
  double w = 360, h = 240, over_w = any_over ? 44 : 0;
  frame f = {72, w - 12 - over_w, 26, 190, 0, 0, 0, (double)top};
  const char *axis;
  double u =
      unit_for(fmax(fabs((double)(hi_ns - armed)), fabs((double)(lo_ns - armed))) / 1e6, &axis);
  f.x0 = (double)(lo_ns - armed) / 1e6 * u;
  f.x1 = (double)(hi_ns - armed) / 1e6 * u;
  double ystep = nice_step(&f.y0, &f.y1, 4);
  double x0 = f.x0, x1 = f.x1;
  double xstep = nice_step(&x0, &x1, 4);
  char call[96], title[256], desc[768], lo[32], hi[32], mx[32];
  tl__call_name(g->probe, g->delay_ns, call, sizeof call);
  snprintf(title, sizeof title, "Histogram, %s, %s", g->label, call);
  int64_t end_ns = g->hist_lo_ns + g->hist_width_ns * TL_HIST_BINS;
  tl__say_time((double)(g->hist_lo_ns - armed), lo, sizeof lo);
  tl__say_time((double)(end_ns - armed), hi, sizeof hi);
  tl__say_time((double)(g->dist.max_ns - armed), mx, sizeof mx);
  snprintf(desc, sizeof desc,
           "Number of samples (y) per lateness bin (x) for %s, %lld samples from %s to %s late; "
           "%lld samples beyond that, up to %s late, are counted in the bar on the right.",
           g->label, (long long)(g->dist.count - g->hist_over), lo, hi, (long long)g->hist_over,
           mx);
  open_svg(p, w, h, title, desc);
  FILE *o = p->out;
  count_axis(o, &f, ystep, "Samples");
  for (double v = x0; v <= x1 + xstep / 2; v += xstep) {
    if (v < f.x0 - xstep / 1e6 || v > f.x1 + xstep / 1e6)
      continue;
    char buf[32];
    snprintf(buf, sizeof buf, "%g", fabs(v) < xstep / 1e6 ? 0.0 : v);
    double x = px(&f, v);
    fprintf(o, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x,
            f.bottom, x, f.bottom + 4);
    /* The last tick's label ends at the axis, clear of the overflow bar's. */
    int last = v + xstep > f.x1 + xstep / 1e6;
    text(o, x, f.bottom + 17, last && any_over ? "end" : "middle", buf);
  }
  text(o, (f.left + f.right) / 2, f.bottom + 38, "middle", axis);
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
  if (any_over) {
    double a = f.right + 14, b = w - 6, y = py(&f, (double)g->hist_over);
    if (g->hist_over)
      fprintf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>", a, y, b - a,
              f.bottom - y);
  }
  fputs("</g>\n", o);
  if (any_over) {
    char n[32];
    count_label((double)g->hist_over, n, sizeof n);
    fprintf(o, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
            f.right + 14, f.bottom, w - 6, f.bottom);
    double y = fmin(py(&f, (double)g->hist_over), f.bottom) - 6;
    text(o, w - 4, y, "end", n);
    text(o, (f.right + 14 + w - 6) / 2, f.bottom + 17, "middle", "\xE2\x80\xBA");
    fputc('\n', o);
  }
  char cap[512];
  if (g->hist_over) {
    char n[32];
    count_label((double)g->hist_over, n, sizeof n);
    snprintf(cap, sizeof cap,
             "%s, %s: %lld samples; the bar on the right counts the %s samples "
             "beyond %s late (the slowest %s)",
             g->label, call, (long long)g->dist.count, n, hi, mx);
  } else {
    snprintf(cap, sizeof cap, "%s, %s: %lld samples", g->label, call, (long long)g->dist.count);
  }
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

/* A series of the trend chart: one label's p90 or p99 per session, or,
 * when there are more sessions than the chart can show apart
 * (TREND_DENSE), the median of each day's (or week's) sessions with the
 * lowest and highest as a whisker. */
enum { TREND_DENSE = 60 };

typedef struct {
  double t, v, lo, hi; /* time (s), value, spread (ns of lateness) */
} trend_pt;

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The points of label's series `which` (1: p90, 2: p99) into pts (room for
 * every session); bucket_s > 0 folds them per bucket. Returns how many. */
static size_t trend_series(const tl_comparison *c, const char *label, const char *probe,
                           int64_t delay_ns, int which, double bucket_s, trend_pt *pts,
                           double *scratch) {
  double armed = (double)tl_probe_armed_ns(probe, delay_ns);
  size_t n = 0;
  for (size_t i = 0; i < c->sessions.count; i++) {
    const tl_dist *d = trend_point(c, i, label, probe, delay_ns);
    if (!d)
      continue;
    double v = (double)d->pct_ns[which] - armed;
    pts[n++] = (trend_pt){(double)c->sessions.items[i].started_ns / 1e9, v, v, v};
  }
  if (bucket_s <= 0 || n == 0)
    return n;
  /* Sessions come in time order: fold each run of one bucket. */
  size_t out = 0;
  for (size_t i = 0; i < n;) {
    double b = floor(pts[i].t / bucket_s);
    size_t j = i, k = 0;
    while (j < n && floor(pts[j].t / bucket_s) == b)
      scratch[k++] = pts[j++].v;
    qsort(scratch, k, sizeof *scratch, by_value);
    double mid = k % 2 ? scratch[k / 2] : (scratch[k / 2 - 1] + scratch[k / 2]) / 2;
    pts[out++] = (trend_pt){(b + 0.5) * bucket_s, mid, scratch[0], scratch[k - 1]};
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
    text(o, x, f->bottom + 24, k == 0 ? "start" : k == 2 ? "end" : "middle", buf);
  }
}

void tl__svg_trend(tl__page *p, const char *probe, int64_t delay_ns) {
  const tl_comparison *c = p->c;
  size_t n = 0;
  double armed = (double)tl_probe_armed_ns(probe, delay_ns), t0 = 0, t1 = 0, hi = 0, lo = 0;
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
    for (int k = 1; k <= 2; k++) {
      double v = (double)d->pct_ns[k] - armed;
      hi = fmax(hi, v);
      if (v > 0 && (lo <= 0 || v < lo))
        lo = v;
    }
    n++;
  }
  if (!n)
    return;
  const char *names[256];
  size_t styles[256], nl = 0, most = 0;
  for (size_t l = 0; l < c->label_count && nl < 256; l++) {
    size_t k = 0;
    for (size_t i = 0; i < c->sessions.count; i++)
      k += trend_point(c, i, c->labels[l], probe, delay_ns) != NULL;
    if (!k)
      continue;
    names[nl] = c->labels[l];
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
  double w = 640, left = 122, rows = (double)legend_rows(names, nl, w - left - 16);
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
  log_span(lo, hi, &f.y0, &f.y1);
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
  open_svg(p, w, h, title, desc);
  FILE *o = p->out;
  log_axis(o, &axis);
  trend_dates(o, &f, t0, t1);
  text(o, (f.left + f.right) / 2, f.bottom + 52, "middle",
       bucket == 0         ? "Session start (UTC)"
       : bucket == 86400.0 ? "Day (UTC): median of its sessions"
                           : "Week (UTC): median of its sessions");
  fputc('\n', o);
  for (size_t l = 0; l < nl; l++) {
    size_t s = styles[l];
    for (int which = 1; which <= 2; which++) {
      size_t np = trend_series(c, names[l], probe, delay_ns, which, bucket, pts, scratch);
      fprintf(o,
              "<g class=\"s%zu\"><polyline class=\"line\" stroke-width=\"%s\" "
              "stroke-dasharray=\"%s\" points=\"",
              s % STYLES, which == 1 ? "2.5" : "1", dashes[s % DASHES]);
      for (size_t i = 0; i < np; i++)
        fprintf(o, "%s%.1f,%.1f", i ? " " : "", px(&f, pts[i].t), log_y(&f, pts[i].v));
      fputs("\"/>", o);
      for (size_t i = 0; i < np; i++) {
        if (pts[i].hi > pts[i].lo)
          fprintf(o, "<line class=\"line\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
                  px(&f, pts[i].t), log_y(&f, pts[i].lo), px(&f, pts[i].t), log_y(&f, pts[i].hi));
        marker(o, s, px(&f, pts[i].t), log_y(&f, pts[i].v), which == 2);
      }
      fputs("</g>\n", o);
    }
  }
  free(pts);
  free(scratch);
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
              tl__style_of(p, g->label) % STYLES, x, f.top, x, f.bottom);
      tl_html_escape(o, line);
      fputs("</title></line></g>\n", o);
    }
  }
  legend(p, &axis, names, styles, nl, 338);
  close_svg(p, bucket == 0 ? "p90 (filled, thick) and p99 (hollow, thin) of each session over "
                             "time, on a log scale. Lower is better; a step is worth a look in "
                             "the sessions table."
                           : "p90 (filled, thick) and p99 (hollow, thin) over time, on a log "
                             "scale: the median of each period's sessions, whiskers from its "
                             "lowest to its highest. Lower is better.");
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
  frame f = {left, w - 32, top, top + row_h * (double)n, lo / u.div, hi / u.div, 0, 1};
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
    size_t gi = (size_t)(rows[r] - c->groups), s = tl__style_of(p, rows[r]->label);
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
  log_span(lo, hi, &f.y0, &f.y1);
  char call[96], title[256], desc[512];
  tl__call_name(probe, delay_ns, call, sizeof call);
  snprintf(title, sizeof title, "p50, p90 and p99 lateness by %s, %s", c->by, call);
  snprintf(desc, sizeof desc,
           "Lateness (y, log scale) of each of %zu values of %s (x, in order): dots at p50, p90 "
           "and p99, "
           "whiskers their 95%% confidence intervals.",
           n, c->by);
  open_svg(p, w, h, title, desc);
  FILE *o = p->out;
  log_axis(o, &f);
  /* Every value's name when they fit side by side at the 22 px phones
   * get (13 units a character), else every second, third ... */
  size_t longest = 1;
  for (size_t i = 0; i < n; i++)
    if (name_chars(c->groups[gi[i]].label) > longest)
      longest = name_chars(c->groups[gi[i]].label);
  double room = n > 1 ? px(&f, 1) - px(&f, 0) : f.right - f.left;
  size_t every = (size_t)ceil((13.0 * (double)longest + 12) / room);
  for (size_t i = 0; i < n; i += every ? every : 1)
    text(o, px(&f, (double)i), f.bottom + 24, "middle", c->groups[gi[i]].label);
  text(o, (f.left + f.right) / 2, f.bottom + 52, "middle", c->by);
  fputc('\n', o);
  for (size_t s = 0; s < 3; s++) {
    /* The percentiles in the colour of the text, told apart by dash and
     * marker: colours belong to labels and --by values. */
    fprintf(o,
            "<g class=\"key\"><polyline class=\"line\" stroke-width=\"1.5\" "
            "stroke-dasharray=\"%s\" points=\"",
            dashes[s % DASHES]);
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
      marker(o, s, x, log_y(&f, (double)(g->dist.pct_ns[k] - armed)), 0);
    }
    fputs("</g>\n", o);
  }
  legend(p, &f, names, NULL, 3, 338);
  close_svg(p, "p50, p90 and p99 lateness of each value on a log scale, with 95% intervals. "
               "Lower is better.");
}
