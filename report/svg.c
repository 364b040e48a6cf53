/* svg.c: the drawing parts every chart of tl shares, as inline SVG: no
 * script, no font or file from elsewhere. It owns the styles (every series
 * has its own colour, Okabe-Ito, distinguishable with the common
 * colour-vision deficiencies, its own dash pattern and its own marker, so
 * the charts still read in greyscale print; colours come from CSS classes
 * (.s0 ...) so the dark scheme can lighten them), the opening and closing
 * of a figure (every chart has a <title> and a <desc>), text, legends, tick
 * steps and the log lateness and count axes. The charts themselves are in
 * svg_charts.c and svg_trend.c, which call down into this file. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"
#include "svg_internal.h"

const char *const tl__svg_dashes[DASHES] = {"", "7 4", "2 3", "9 3 2 3", "4 4"};

/* A "nice" tick step (1, 2 or 5 times a power of ten) giving about `want`
 * ticks over [lo, hi]; widens [lo, hi] to whole steps. */
double tl__svg_nice_step(double *lo, double *hi, int want) {
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

void tl__svg_marker(FILE *o, size_t style, double x, double y, int hollow) {
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
void tl__svg_open(tl__page *p, double w, double h, const char *title, const char *desc) {
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

void tl__svg_close(tl__page *p, const char *caption) {
  snprintf(p->chart_caption, sizeof p->chart_caption, "%s", caption);
  if (p->svg_file) {
    fputs("</svg>\n", p->out);
    return;
  }
  fputs("</svg><figcaption>", p->out);
  tl_html_escape(p->out, caption);
  fputs("</figcaption></figure>\n", p->out);
}

void tl__svg_text(FILE *o, double x, double y, const char *anchor, const char *s) {
  fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">", x, y, anchor);
  tl_html_escape(o, s);
  fputs("</text>", o);
}

/* Legend entries: the line sample takes 34 units, then the name; a
 * character of text is taken as 13 units, its width at the 22 px that
 * phones get, so that no name runs into the next. Names longer than
 * LEGEND_CHARS are cut with an ellipsis. */
enum { LEGEND_CHARS = 24 };

size_t tl__svg_name_chars(const char *s) {
  size_t n = 0;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    n += (*p & 0xC0) != 0x80; /* count UTF-8 lead bytes only */
  return n;
}

static double legend_col(const char *const *names, size_t n) {
  size_t longest = 4;
  for (size_t i = 0; i < n; i++) {
    size_t c = tl__svg_name_chars(names[i]);
    longest = c > longest ? c : longest;
  }
  if (longest > LEGEND_CHARS)
    longest = LEGEND_CHARS;
  return 34 + 13 * (double)longest + 16;
}

/* One legend entry per label, in rows as wide as the plot. */
double tl__svg_legend(tl__page *p, const frame *f, const char *const *names, const size_t *styles,
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
            x, y - 4, x + 28, y - 4, tl__svg_dashes[s % DASHES]);
    tl__svg_marker(o, s, x + 14, y - 4, 0);
    fputs("</g>", o);
    char name[4 * LEGEND_CHARS + 8];
    if (tl__svg_name_chars(names[i]) > LEGEND_CHARS) {
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
    tl__svg_text(o, x + 34, y, "start", name);
    x += col;
  }
  fputc('\n', o);
  return y;
}

size_t tl__svg_legend_rows(const char *const *names, size_t n, double width) {
  size_t per = (size_t)(width / legend_col(names, n));
  if (per < 1)
    per = 1;
  return (n + per - 1) / per;
}

/* Microseconds when every value is below 1 ms, so tick labels stay short. */
double tl__svg_unit_for(double hi_ms, const char **axis) {
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
void tl__svg_log_span(double lo_ns, double hi_ns, double *y0, double *y1) {
  lo_ns = lo_ns > 0 ? lo_ns : hi_ns > 0 ? hi_ns / 10 : 1000;
  hi_ns = hi_ns > lo_ns ? hi_ns : lo_ns;
  *y0 = floor(log10(lo_ns) + 1e-9);
  *y1 = ceil(log10(hi_ns) - 1e-9);
  if (*y1 <= *y0)
    *y1 = *y0 + 1;
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
void tl__svg_log_axis(FILE *o, const frame *f) {
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
      tl__svg_text(o, f->left - 6, y + 5, "end", buf);
    }
  double mid = (f->top + f->bottom) / 2;
  fprintf(o,
          "<text x=\"26\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 26 %.1f)\">"
          "Lateness (log scale)</text>\n",
          mid, mid);
  fprintf(o, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", f->left,
          f->bottom, f->right, f->bottom);
}

/* A count for a tick label, short enough for a narrow chart's margin:
 * "950", "2.5k", "150k", "1.2M". */
void tl__svg_count_label(double v, char *buf, size_t len) {
  if (fabs(v) < 1000)
    snprintf(buf, len, "%g", v);
  else if (fabs(v) < 1e6)
    snprintf(buf, len, "%gk", round(v / 100) / 10);
  else
    snprintf(buf, len, "%gM", round(v / 1e5) / 10);
}

/* Grid lines and tick labels of a chart's y axis of counts, with its name. */
void tl__svg_count_axis(FILE *o, const frame *f, double step, const char *name) {
  for (double v = f->y0; v <= f->y1 + step / 2; v += step) {
    char buf[32];
    double y = py(f, v);
    fprintf(o, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", f->left, y,
            f->right, y);
    tl__svg_count_label(fabs(v) < step / 1e6 ? 0.0 : v, buf, sizeof buf);
    tl__svg_text(o, f->left - 6, y + 4, "end", buf);
  }
  fprintf(o, "<text x=\"18\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 18 %.1f)\">",
          (f->top + f->bottom) / 2, (f->top + f->bottom) / 2);
  tl_html_escape(o, name);
  fputs("</text>\n", o);
  fprintf(o, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", f->left,
          f->bottom, f->right, f->bottom);
}
