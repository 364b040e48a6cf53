/* svg_internal.h: what the chart files (svg_charts.c, svg_trend.c) share
 * with svg.c, the drawing parts below them: the styles, the plot frame and
 * its scales, figures, text, legends and axes. Only those three files
 * include it; nothing here is part of tl_report.h. */
#ifndef TL_SVG_INTERNAL_H
#define TL_SVG_INTERNAL_H

#include <math.h>
#include <stddef.h>
#include <stdio.h>

#include "report_internal.h"

/* Colours (CSS classes .s0 ...) and dash patterns a series style cycles through. */
enum { STYLES = 7, DASHES = 5 };

extern const char *const tl__svg_dashes[DASHES];

/* A plot area in pixels and the values it spans. */
typedef struct {
  double left, right, top, bottom;
  double x0, x1, y0, y1;
} frame;

static inline double px(const frame *f, double x) {
  return f->x1 > f->x0 ? f->left + (x - f->x0) / (f->x1 - f->x0) * (f->right - f->left)
                       : (f->left + f->right) / 2;
}

static inline double py(const frame *f, double y) {
  return f->y1 > f->y0 ? f->bottom - (y - f->y0) / (f->y1 - f->y0) * (f->bottom - f->top)
                       : (f->top + f->bottom) / 2;
}

/* y of ns nanoseconds on a log lateness axis (see tl__svg_log_span). */
static inline double log_y(const frame *f, double ns) {
  return py(f, ns > 0 ? fmax(log10(ns), f->y0) : f->y0);
}

/* A "nice" tick step (1, 2 or 5 times a power of ten) giving about want
 * ticks, widening *lo and *hi to multiples of it. */
double tl__svg_nice_step(double *lo, double *hi, int want);
/* The marker of a style at (x, y), filled or hollow. */
void tl__svg_marker(FILE *o, size_t style, double x, double y, int hollow);
/* Opens a figure with an accessible SVG of w x h user units. */
void tl__svg_open(tl__page *p, double w, double h, const char *title, const char *desc);
/* Closes the figure tl__svg_open opened, with its caption. */
void tl__svg_close(tl__page *p, const char *caption);
/* Text s at (x, y), anchored start, middle or end, escaped. */
void tl__svg_text(FILE *o, double x, double y, const char *anchor, const char *s);
/* How many characters s shows (UTF-8), for the room a legend gives it. */
size_t tl__svg_name_chars(const char *s);
/* One legend entry per label, in rows as wide as the plot from y on;
 * returns the y below it. */
double tl__svg_legend(tl__page *p, const frame *f, const char *const *names, const size_t *styles,
                      size_t n, double y);
/* How many rows the legend of names takes in width units. */
size_t tl__svg_legend_rows(const char *const *names, size_t n, double width);
/* The unit of a lateness axis up to hi_ms: its scale from ms, its name. */
double tl__svg_unit_for(double hi_ms, const char **axis);
/* The y span (log10 of ns) of a log lateness axis from lo_ns to hi_ns. */
void tl__svg_log_span(double lo_ns, double hi_ns, double *y0, double *y1);
/* Grid and tick labels of the log lateness axis of f. */
void tl__svg_log_axis(FILE *o, const frame *f);
/* A count as a short tick label: "950", "2.5k", "1.2M". */
void tl__svg_count_label(double v, char *buf, size_t len);
/* Grid lines and tick labels of a y axis of counts, with its name. */
void tl__svg_count_axis(FILE *o, const frame *f, double step, const char *name);

#endif
