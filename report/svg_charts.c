/* svg_charts.c: the charts of one probe and delay across labels, drawn
 * with the shared parts of svg.c: the percentile spectrum (one line per
 * label on a log lateness axis), the histogram of one group (its bulk on a
 * linear axis, the samples beyond as one bar apart) and the answer box's
 * dots (p50, p90 and p99 of each label with their 95% intervals). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"
#include "svg_internal.h"

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
  double w = 640, left = 122, rows = (double)tl__svg_legend_rows(names, n, w - left - 16);
  double h = 342 + rows * 30;
  frame f = {left, w - 16, 16, 258, 0, 4, 0, 1};
  tl__svg_log_span(lo, hi, &f.y0, &f.y1);
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
  tl__svg_open(p, w, h, title, desc);
  FILE *o = p->out;
  tl__svg_log_axis(o, &f);
  static const char *const ticks[] = {"0%", "90%", "99%", "99.9%", "99.99%"};
  for (int t = 0; t <= 4; t++) {
    double x = px(&f, t);
    fprintf(o, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x, f.top,
            x, f.bottom);
    tl__svg_text(o, x, f.bottom + 24, t == 0 ? "start" : t == 4 ? "end" : "middle", ticks[t]);
  }
  tl__svg_text(o, (f.left + f.right) / 2, f.bottom + 52, "middle", "Percentile (log scale)");
  fputc('\n', o);
  for (size_t i = 0; i < n; i++) {
    size_t s = styles[i];
    fprintf(o,
            "<g class=\"s%zu\"><polyline class=\"line\" stroke-width=\"2\" "
            "stroke-dasharray=\"%s\" points=\"",
            s % STYLES, tl__svg_dashes[s % DASHES]);
    for (int k = 0; k < pts[i]; k++)
      fprintf(o, "%s%.1f,%.1f", k ? " " : "", px(&f, pct_x(tl_spectrum_pcts[k])),
              log_y(&f, (double)g[i]->spectrum.pct_ns[k] - armed));
    fputs("\"/>", o);
    /* Markers at the ticks only, so the lines stay readable. */
    for (int k = 0; k < pts[i]; k++) {
      double q = tl_spectrum_pcts[k];
      if (q == 0 || q == 90 || q == 99 || q == 99.9 || q == 99.99)
        tl__svg_marker(o, s, px(&f, pct_x(q)), log_y(&f, (double)g[i]->spectrum.pct_ns[k] - armed),
                       0);
    }
    fputs("</g>\n", o);
  }
  tl__svg_legend(p, &f, names, styles, n, 336);
  tl__svg_close(p, "Lateness by percentile, both on log scales: the further right, the rarer the "
                   "call; a line stops where too few samples lie above. Lower is better.");
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
  double u = tl__svg_unit_for(
      fmax(fabs((double)(hi_ns - armed)), fabs((double)(lo_ns - armed))) / 1e6, &axis);
  f.x0 = (double)(lo_ns - armed) / 1e6 * u;
  f.x1 = (double)(hi_ns - armed) / 1e6 * u;
  double ystep = tl__svg_nice_step(&f.y0, &f.y1, 4);
  double x0 = f.x0, x1 = f.x1;
  double xstep = tl__svg_nice_step(&x0, &x1, 4);
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
  tl__svg_open(p, w, h, title, desc);
  FILE *o = p->out;
  tl__svg_count_axis(o, &f, ystep, "Samples");
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
    tl__svg_text(o, x, f.bottom + 17, last && any_over ? "end" : "middle", buf);
  }
  tl__svg_text(o, (f.left + f.right) / 2, f.bottom + 38, "middle", axis);
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
    tl__svg_count_label((double)g->hist_over, n, sizeof n);
    fprintf(o, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
            f.right + 14, f.bottom, w - 6, f.bottom);
    double y = fmin(py(&f, (double)g->hist_over), f.bottom) - 6;
    tl__svg_text(o, w - 4, y, "end", n);
    tl__svg_text(o, (f.right + 14 + w - 6) / 2, f.bottom + 17, "middle", "\xE2\x80\xBA");
    fputc('\n', o);
  }
  char cap[512];
  if (g->hist_over) {
    char n[32];
    tl__svg_count_label((double)g->hist_over, n, sizeof n);
    snprintf(cap, sizeof cap,
             "%s, %s: %lld samples; the bar on the right counts the %s samples "
             "beyond %s late (the slowest %s)",
             g->label, call, (long long)g->dist.count, n, hi, mx);
  } else {
    snprintf(cap, sizeof cap, "%s, %s: %lld samples", g->label, call, (long long)g->dist.count);
  }
  tl__svg_close(p, cap);
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
  double step = tl__svg_nice_step(&f.x0, &f.x1, 5);
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
  tl__svg_open(p, w, h, title, desc);
  FILE *o = p->out;
  for (double v = f.x0; v <= f.x1 + step / 2; v += step) {
    char buf[32];
    double x = px(&f, v);
    snprintf(buf, sizeof buf, "%g", fabs(v) < step / 1e6 ? 0.0 : v);
    fprintf(o, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x, f.top,
            x, f.bottom);
    tl__svg_text(o, x, f.bottom + 22, "middle", buf);
  }
  char axis[64];
  snprintf(axis, sizeof axis, "Lateness (%s)", u.name);
  tl__svg_text(o, (f.left + f.right) / 2, f.bottom + 52, "middle", axis);
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
    tl__svg_text(o, f.left - 8, y + 4, "end", name);
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
      tl__svg_marker(o, shapes[j], px(&f, v), yy, j == 2);
    }
    fputs("</g>\n", o);
  }
  /* Legend: the shapes, in the colour of the text. */
  double ly = f.bottom + 84, lx = 20;
  for (size_t j = 0; j < nk; j++) {
    char name[16];
    snprintf(name, sizeof name, "p%s", TL_PCT(g0->dist.pcts[at[j]]));
    fputs("<g class=\"key\">", o);
    tl__svg_marker(o, shapes[j], lx + 5, ly - 4, j == 2);
    fputs("</g>", o);
    tl__svg_text(o, lx + 14, ly, "start", name);
    lx += 80;
  }
  tl__svg_text(o, lx + 10, ly, "start", "lines: 95% interval");
  fputc('\n', o);
  char cap[256];
  snprintf(cap, sizeof cap,
           "%s: lateness by label, lower is better; dots apart with whiskers "
           "that do not overlap are clearly different.",
           call);
  tl__svg_close(p, cap);
}
