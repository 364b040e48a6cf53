/* page.c: the comparison page, section by section. Each section is one
 * function that reads the comparison and writes Markdown prose (through
 * tl__prose, write.c) and tables (tl__table), so the same code makes the Markdown
 * page and the HTML one; charts are drawn only in HTML. A new section (say,
 * statistics) is one more function in the list in tl_render(). Here: the
 * title and contents, the answer, the lateness tables and how sure they
 * are; the charts, the hosts and sessions, and how it was measured are in
 * page_charts.c, page_hosts.c and page_method.c, which call nothing here.
 *
 * HTML: cmark 0.30 has no tables extension, so the HTML page is not one
 * cmark run over the whole Markdown. Prose is rendered by cmark in safe mode
 * (raw HTML in the input never passes), while tables and charts are written
 * as HTML by tl itself, every piece of user text through tl_html_escape. The
 * result sits in one self-contained template (template.c): inline CSS, light
 * and dark schemes, no script, no file from elsewhere. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"

/* ======================================================================== */
/* Helpers                                                                   */

/* How many labels have sessions on the page: a page of one speaks of it
 * alone, with no comparison wording. */
static size_t labels_with_sessions(const tl_comparison *c) {
  size_t n = 0;
  for (size_t i = 0; i < c->label_count; i++)
    n += tl__label_session_count(c, i) != 0;
  return n;
}

/* The percentile the plain-words lines speak of: 90 when shown, else the
 * first one asked for. */
static double headline_pct(const tl_comparison *c) {
  const tl_dist *d = &c->groups[0].dist;
  return tl__pct_index(d, 90) >= 0 ? 90 : d->pcts[0];
}

/* ======================================================================== */
/* 1. Title and contents                                                    */

void tl__section_title(tl__page *p) {
  FILE *f = tl__prose(p);
  fputs("# ", f);
  if (p->o->title) {
    tl_md_escape(f, p->o->title);
  } else {
    fputs("Timer latency", f);
    if (p->c->by) {
      fputs(" by ", f);
      tl_md_escape(f, p->c->by);
    }
    fputs(": ", f);
    tl__md_list_labels(f, p->c);
  }
  fputs("\n\n", f);
}

/* One line of links to the sections. */
static void section_contents(tl__page *p) {
  static const char *const toc[][2] = {
      {"summary", "Summary"},
      {"lateness-by-delay", "Lateness by delay"},
      {"why-the-tail-is-long", "Why the tail is long"},
      {"how-sure-is-this", "How sure is this?"},
      {"charts", "Charts"},
      {"hosts-and-sessions", "Hosts and sessions"},
      {"how-it-was-measured", "How it was measured"},
  };
  FILE *f = tl__prose(p);
  fputs("Contents: ", f);
  if (p->o->host_facts && !p->c->by)
    fputs("[Host facts](#host-facts) \xC2\xB7 ", f);
  for (size_t i = 0; i < sizeof toc / sizeof toc[0]; i++) {
    if (strcmp(toc[i][0], "how-sure-is-this") == 0 && !tl__page_stats(p))
      continue;
    if (strcmp(toc[i][0], "why-the-tail-is-long") == 0 && !tl__causes_any(p->c))
      continue;
    if (strcmp(toc[i][0], "charts") == 0 && p->o->format != TL_FORMAT_HTML && !p->o->charts)
      continue; /* one line says where the charts are, under no heading */
    fprintf(f, "%s[%s](#%s)", i ? " \xC2\xB7 " : "", toc[i][1], toc[i][0]);
    char id[256], text[256];
    if (i == 0 && tl__by_heading(p->c, id, sizeof id, text, sizeof text))
      fprintf(f, " \xC2\xB7 [%s](#%s)", text, id);
  }
  fputs("\n\n", f);
}

/* ======================================================================== */
/* 2. The answer: summary, what changed over time, read with care           */

static void sentence(FILE *out, const tl_comparison *c, const char *label, double pct) {
  size_t n = 0;
  const tl_group *g[64];
  const char *probe = NULL;
  for (size_t i = 0; i < c->group_count && n < sizeof g / sizeof g[0]; i++) {
    if (strcmp(c->groups[i].label, label) != 0 || !c->groups[i].dist.count)
      continue;
    if (!probe)
      probe = c->groups[i].probe;
    if (strcmp(c->groups[i].probe, probe) == 0 && tl__pct_index(&c->groups[i].dist, pct) >= 0)
      g[n++] = &c->groups[i];
  }
  if (!n)
    return;
  int64_t value[64], delay[64];
  for (size_t i = 0; i < n; i++) {
    value[i] = g[i]->dist.pct_ns[tl__pct_index(&g[i]->dist, pct)];
    delay[i] = g[i]->delay_ns;
  }
  char text[4096];
  tl_percent_sentence(pct, probe, value, delay, n, text, sizeof text);
  fputs("- On ", out);
  tl_md_escape(out, label);
  fputs(", ", out);
  tl_md_escape(out, text);
  fputs(".\n", out);
}

/* The groups of g0's probe and delay, in label order, as indices into
 * c->groups; returns how many (out has room for label_count). */
static size_t block_of(const tl_comparison *c, const tl_group *g0, size_t *out) {
  size_t n = 0;
  for (size_t l = 0; l < c->label_count; l++) {
    const tl_group *g = tl__find_group(c, c->labels[l], g0->probe, g0->delay_ns);
    if (g)
      out[n++] = (size_t)(g - c->groups);
  }
  return n;
}

/* Group i's lateness at its percentile k (ns). */
static int64_t lateness_at(const tl_comparison *c, size_t i, size_t k) {
  const tl_group *g = &c->groups[i];
  return g->dist.pct_ns[k] - tl_probe_armed_ns(g->probe, g->delay_ns);
}

/* " (2.6×)" when the ratio of the two latenesses may be shown, else "". */
static void ratio_note(int64_t a_ns, int64_t b_ns, char *buf, size_t len) {
  double r = tl_lateness_ratio(a_ns, b_ns);
  if (r > 0)
    snprintf(buf, len, " (%.*f\xC3\x97)", r < 10 ? 2 : 1, r);
  else
    snprintf(buf, len, "%s", "");
}

/* The verdict of one probe and delay at percentile k, on lateness: the
 * label that is clearly the least late and how much later each other is,
 * or which labels cannot be told apart. Fills buf with plain text; when one
 * label is clearly the least late, *best is its group and the text goes on
 * after its name (" is the least late ..."), else *best is NULL. */
static void verdict_text(const tl__page *p, const tl_group *g0, size_t k, const tl_group **best,
                         char *buf, size_t len) {
  const tl_comparison *c = p->c;
  const tl_stats *st = tl__page_stats(p);
  size_t idx[256], all[256], n = 0, at = 0;
  size_t m = block_of(c, g0, all);
  for (size_t i = 0; i < m && n < 256; i++)
    if (c->groups[all[i]].dist.count)
      idx[n++] = all[i];
  buf[0] = '\0';
  *best = NULL;
  if (!n)
    return;
  double pct = g0->dist.pcts[k];
  char v[48], w[48], r[32];
#define SAY(...)                                                                                   \
  do {                                                                                             \
    int k_ = snprintf(buf + at, at < len ? len - at : 0, __VA_ARGS__);                             \
    if (k_ > 0)                                                                                    \
      at += (size_t)k_ < len - at ? (size_t)k_ : len - at - 1;                                     \
  } while (0)
  if (n == 1) {
    tl__say_time((double)lateness_at(c, idx[0], k), v, sizeof v);
    size_t ns = c->groups[idx[0]].session_count;
    SAY("%s: p%s is %s late (%zu session%s)", c->groups[idx[0]].label, TL_PCT(pct), v, ns,
        ns == 1 ? "" : "s");
    return;
  }
  /* The lowest, and the labels not clearly later than it. */
  size_t low = 0;
  for (size_t i = 1; i < n; i++)
    if (lateness_at(c, idx[i], k) < lateness_at(c, idx[low], k))
      low = i;
  int64_t lo_ns = lateness_at(c, idx[low], k);
  char tied[256];
  size_t nt = 0;
  int unsettled = 0; /* a tie that too few sessions leave open */
  for (size_t i = 0; i < n; i++) {
    tied[i] = (char)(i == low || !st || !tl__clearly_below(st, idx[low], idx[i], k));
    const tl_pair_stats *pr = st && i != low ? tl__pair_of(st, idx[low], idx[i]) : NULL;
    unsettled |= tied[i] && pr && !pr->decided;
  }
  for (size_t i = 0; i < n; i++)
    nt += tied[i] != 0;
  if (nt == 1) {
    tl__say_time((double)lo_ns, v, sizeof v);
    *best = &c->groups[idx[low]];
    SAY(" is the least late at p%s (%s late)", TL_PCT(pct), v);
  } else {
    int64_t hi_ns = lo_ns;
    for (size_t i = 0; i < n; i++)
      if (tied[i] && lateness_at(c, idx[i], k) > hi_ns)
        hi_ns = lateness_at(c, idx[i], k);
    tl__say_time((double)lo_ns, v, sizeof v);
    tl__say_time((double)hi_ns, w, sizeof w);
    SAY("%s at p%s between ",
        !st         ? "no verdict without statistics"
        : unsettled ? "no verdict yet"
        : nt == n   ? "no clear difference"
                    : "no clear best",
        TL_PCT(pct));
    size_t said = 0;
    for (size_t i = 0; i < n; i++)
      if (tied[i])
        SAY("%s%s", said++ ? (said == nt ? " and " : ", ") : "", c->groups[idx[i]].label);
    SAY(" (%s to %s late)", v, w);
    /* Why a label could not be told apart, when the data says. */
    for (size_t i = 0; i < n && st; i++)
      if (tied[i] && st->groups[idx[i]].pct[k].few)
        SAY("; too few samples for p%s on %s", TL_PCT(pct), c->groups[idx[i]].label);
  }
  /* Every other label against the least late: the gap, how sure, and what
   * it rests on. */
  for (size_t i = 0; i < n; i++) {
    if (i == low)
      continue;
    const tl_group *g = &c->groups[idx[i]];
    const tl_pair_stats *pr = st ? tl__pair_of(st, idx[low], idx[i]) : NULL;
    int64_t l = lateness_at(c, idx[i], k);
    tl__say_time((double)(l - lo_ns), v, sizeof v);
    ratio_note(lo_ns, l, r, sizeof r);
    if (!pr) {
      if (!tied[i])
        SAY("; %s is %s later%s", g->label, v, r);
      continue;
    }
    char on[64];
    int sign = pr->b == idx[i] ? 1 : -1; /* pr holds b minus a; here i minus the least late */
    size_t ni = sign > 0 ? pr->sessions_b : pr->sessions_a;
    size_t nl = sign > 0 ? pr->sessions_a : pr->sessions_b;
    tl__sessions_phrase(ni, nl, on, sizeof on);
    if (!pr->decided) {
      long long need = (long long)tl__sessions_to_collect(pr, k);
      SAY("; %s is %s later, from %s: too few to tell; collect at least %lld sessions a label "
          "(tlcollect --repeat %lld)",
          g->label, v, on, need, need);
      continue;
    }
    double a = sign > 0 ? (double)pr->lo_ns[k] : -(double)pr->hi_ns[k];
    double b = sign > 0 ? (double)pr->hi_ns[k] : -(double)pr->lo_ns[k];
    tl__unit u = tl__unit_for(fmax(fabs(a), fabs(b)));
    char ia[48], ib[48];
    tl__num(a, u, ia, sizeof ia);
    tl__num(b, u, ib, sizeof ib);
    double times = tied[i] ? 0 : tl_lateness_ratio(lo_ns, l);
    char x[32] = "";
    if (times > 0)
      snprintf(x, sizeof x, "%.*f\xC3\x97; ", times < 10 ? 2 : 1, times);
    SAY("; %s is %s later (%s95%% interval %s to %s %s, %s)", g->label, v, x, ia, ib, u.name, on);
  }
#undef SAY
}

/* The summary's prose: the basis in one line, one verdict per probe and
 * delay, and each label's plain-words sentence in total time. */
static void summary_prose(tl__page *p) {
  const tl_comparison *c = p->c;
  FILE *f = tl__prose(p);
  double pct = headline_pct(c);
  size_t n, *idx = tl__page_blocks(p, &n);
  if (!idx)
    return;
  for (size_t i = 0; i < n; i++) {
    const tl_group *g0 = &c->groups[idx[i]];
    int k = tl__pct_index(&g0->dist, pct);
    char call[96], text[2048];
    if (k < 0)
      continue;
    const tl_group *best;
    verdict_text(p, g0, (size_t)k, &best, text, sizeof text);
    tl__call_name(g0->probe, g0->delay_ns, call, sizeof call);
    fputs("- ", f);
    tl_md_escape(f, call);
    fputs(": ", f);
    if (best) {
      fputs("**", f);
      tl_md_escape(f, best->label);
      fputs("**", f);
    }
    tl_md_escape(f, text);
    fputs(".\n", f);
  }
  free(idx);
  if (labels_with_sessions(c) < 2)
    fputs("\nSaid in **lateness**: how long after its delay a timer fired (the latency minus "
          "the delay it was armed for, 1 ms for a Node-style 0). Each session is one "
          "observation.\n",
          f);
  else
    fputs("\nCompared on **lateness**: how long after its delay a timer fired (the latency minus "
          "the delay it was armed for, 1 ms for a Node-style 0). Each session is one observation: "
          "a label is called the least late only where the 95% interval of its difference from "
          "each other label, from the sessions' own values, excludes 0, which takes at least 2 "
          "sessions a label; ratios are given only where both latenesses are at least 0.1 ms.\n",
          f);
  fputs("\nIn total time, as people say it:\n\n", f);
  for (size_t i = 0; i < c->label_count; i++)
    if (tl__label_session_count(c, i))
      sentence(f, c, c->labels[i], pct);
  fputc('\n', f);
}

/* "What changed over time" in the summary: each lasting change, said as
 * how much later or earlier a label became. */
static void change_bullets(tl__page *p) {
  const tl_comparison *c = p->c;
  const tl_stats *st = tl__page_stats(p);
  FILE *f = tl__prose(p);
  size_t said = 0;
  for (size_t i = 0; st && i < c->group_count; i++)
    for (size_t k = 0; k < st->groups[i].change_count; k++) {
      const tl_group *g = &c->groups[i];
      const tl_change *ch = &st->groups[i].changes[k];
      char call[96], d[48], b[48], a[48], date[32];
      double armed = (double)tl_probe_armed_ns(g->probe, g->delay_ns);
      tl__call_name(g->probe, g->delay_ns, call, sizeof call);
      tl__say_time(fabs(ch->after_ns - ch->before_ns), d, sizeof d);
      tl__say_time(ch->before_ns - armed, b, sizeof b);
      tl__say_time(ch->after_ns - armed, a, sizeof a);
      tl_date_format(ch->at_ns, date, sizeof date);
      fputs("- ", f);
      tl_md_escape(f, g->label);
      fprintf(f, " got %s on %.10s: p%s %s%s (", ch->after_ns > ch->before_ns ? "worse" : "better",
              date, TL_PCT(ch->pct), ch->after_ns > ch->before_ns ? "+" : "\xE2\x88\x92", d);
      tl_md_escape(f, call);
      fprintf(f, ", from %s to %s late).\n", b, a);
      said++;
    }
  if (!said)
    fputs(st ? "No lasting change in any label's p90 or p99 (a change needs at least 3 sessions "
               "on each side).\n"
             : "Not worked out for this page.\n",
          f);
  fputc('\n', f);
}

/* The answer box: the verdicts and their chart, with what changed over time
 * and what to read with care beside them. */
static void section_answer(tl__page *p) {
  const tl_comparison *c = p->c;
  int html = p->o->format == TL_FORMAT_HTML;
  if (html) {
    tl__prose_flush(p);
    fputs("<section class=\"answer\" id=\"summary\"><div class=\"verdicts\">\n", p->out);
  }
  fputs("## Summary\n\n", tl__prose(p));
  if (c->by)
    tl__by_answer(p); /* how the tail changes with the key, before the ranking */
  summary_prose(p);
  tl__causes_answer(p);
  if (html) {
    size_t n, *idx = tl__page_blocks(p, &n);
    if (!idx)
      return;
    tl__prose_flush(p);
    for (size_t i = 0; i < n; i++)
      tl__svg_dots(p, &c->groups[idx[i]]);
    free(idx);
    fputs("</div><aside>\n", p->out);
  }
  fputs("### What changed over time\n\n", tl__prose(p));
  change_bullets(p);
  fputs("### Read with care\n\n", tl__prose(p));
  tl__read_with_care(p);
  if (html) {
    tl__prose_flush(p);
    fputs("</aside></section>\n", p->out);
  }
}

/* ======================================================================== */
/* 3. Lateness by delay (after the --by section of group.c)                 */

#define NBSP "\xC2\xA0"

/* The cell "row minus column" at percentile k, from the pair statistics of
 * the two groups, alike in the baseline table and the differences matrix:
 * the difference with its 95% interval from the sessions' own values and
 * the sessions it rests on, "clearly" only where that interval excludes 0
 * and both percentiles rest on enough samples (tl__clearly_below); with too
 * few sessions for any verdict, how many a label would settle it. note
 * (a ratio, or "") follows the interval. No-break spaces inside the number
 * and its interval, so that a narrow column breaks only between the parts. */
static void pair_cell(tl__table *t, const tl_stats *st, const tl_pair_stats *pr, size_t row,
                      size_t col, size_t k, const char *note) {
  /* pr holds b minus a; the cell is row minus column. */
  int sign = pr->b == row ? 1 : -1;
  double d = sign * (double)pr->diff_ns[k];
  double lo = sign > 0 ? (double)pr->lo_ns[k] : -(double)pr->hi_ns[k];
  double hi = sign > 0 ? (double)pr->hi_ns[k] : -(double)pr->lo_ns[k];
  char dv[48], lv[48], hv[48], on[64];
  tl__sessions_phrase(sign > 0 ? pr->sessions_b : pr->sessions_a,
                      sign > 0 ? pr->sessions_a : pr->sessions_b, on, sizeof on);
  if (!pr->decided) {
    tl__unit u = tl__unit_for(fabs(d));
    tl__num(d, u, dv, sizeof dv);
    long long need = (long long)tl__sessions_to_collect(pr, k);
    tl__table_addf(t, "%s%s" NBSP "%s%s (%s: too few to tell; collect %lld a label)",
                   d > 0 ? "+" : "", dv, u.name, note, on, need);
    return;
  }
  tl__unit u = tl__unit_for(fmax(fabs(lo), fabs(hi)));
  tl__num(d, u, dv, sizeof dv);
  tl__num(lo, u, lv, sizeof lv);
  tl__num(hi, u, hv, sizeof hv);
  int clear = tl__clearly_below(st, row, col, k) || tl__clearly_below(st, col, row, k);
  /* The interval never wraps; it may go under the difference, so that a
   * matrix of six groups still fits a wide screen. */
  tl__table_addf(t, "%s%s" NBSP "%s (%s" NBSP "to" NBSP "%s; %s)%s%s", d > 0 ? "+" : "", dv, u.name,
                 lv, hv, on, note, clear ? (d > 0 ? ", clearly later" : ", clearly earlier") : "");
}

/* The heading of one probe and delay's table, "### setTimeout(1)", and the
 * line that says what its lateness is measured from (armed ns). */
static void delay_heading(tl__page *p, const tl_group *g0, int64_t armed) {
  char call[96], armed_s[48];
  tl__call_name(g0->probe, g0->delay_ns, call, sizeof call);
  tl__say_time((double)armed, armed_s, sizeof armed_s);
  FILE *f = tl__prose(p);
  fputs("### ", f);
  tl_md_escape(f, call);
  fputs("\n\n", f);
  fputs("Probe ", f);
  tl_md_escape(f, g0->probe);
  fprintf(f, "; lateness is the latency minus %s.\n\n", armed_s);
}

/* Group gi's cells in the lateness table: its np percentiles, then max,
 * min, mean and stddev, in unit u; "-" in each when it has no samples. */
static void lateness_cells(tl__table *t, const tl_comparison *c, size_t gi, size_t np,
                           int64_t armed, tl__unit u) {
  const tl_group *g = &c->groups[gi];
  size_t nvals = np + 4;
  char v[48];
  if (g->dist.count) {
    double row[TL_MAX_PCTS + 4];
    size_t k = 0;
    for (size_t i = 0; i < np; i++)
      row[k++] = (double)lateness_at(c, gi, i);
    row[k++] = (double)(g->dist.max_ns - armed);
    row[k++] = (double)(g->dist.min_ns - armed);
    row[k++] = g->dist.mean_ns - (double)armed;
    row[k++] = g->dist.stddev_ns;
    for (size_t i = 0; i < nvals; i++) {
      tl__num(row[i], u, v, sizeof v);
      tl__table_add(t, v);
    }
  } else {
    for (size_t i = 0; i < nvals; i++)
      tl__table_add(t, "-");
  }
}

/* Group gi's row in the table against the baseline group base: at each
 * percentile its difference from the baseline (pair_cell when there are
 * pair statistics, else the bare difference), with the ratio note. */
static void baseline_row(tl__table *ratio, const tl_comparison *c, const tl_stats *st,
                         const tl_group *base, size_t gi, size_t np, int64_t armed, tl__unit u,
                         const char *link) {
  const tl_group *g = &c->groups[gi];
  char v[48];
  tl__table_link(ratio, tl__table_add(ratio, g->label), link);
  for (size_t i = 0; i < np; i++) {
    char r_note[32];
    if (!g->dist.count) {
      tl__table_add(ratio, "-");
      continue;
    }
    int64_t bl = base->dist.pct_ns[i] - armed, gl = g->dist.pct_ns[i] - armed;
    ratio_note(bl, gl, r_note, sizeof r_note);
    const tl_pair_stats *pr = g != base ? tl__pair_of(st, gi, (size_t)(base - c->groups)) : NULL;
    if (pr) {
      pair_cell(ratio, st, pr, gi, (size_t)(base - c->groups), i, r_note);
      continue;
    }
    /* The baseline itself, or a page without statistics: the bare difference. */
    tl__num((double)(gl - bl), u, v, sizeof v);
    tl__table_addf(ratio, "%s%s" NBSP "%s%s", gl > bl && strcmp(v, "0.000") ? "+" : "", v, u.name,
                   r_note);
  }
}

/* The table against the baseline, after the line that says what its cells
 * hold (with statistics st, or without). */
static void baseline_table(tl__page *p, const tl_stats *st, tl__table *ratio) {
  const tl_comparison *c = p->c;
  FILE *f = tl__prose(p);
  fputs("Against **", f);
  tl_md_escape(f, c->labels[c->baseline]);
  if (st)
    fputs("**: each label's lateness minus the baseline's, with its 95% interval from the "
          "sessions' own values and the sessions it rests on (the label's, then the "
          "baseline's), and the ratio of the two where both are at least 0.1 ms; \"clearly\" "
          "where the interval excludes 0 and both rest on enough samples, with too few "
          "sessions how many a label would settle it:\n\n",
          f);
  else
    fputs("**: each label's lateness minus the baseline's, with the ratio of the two where "
          "both are at least 0.1 ms:\n\n",
          f);
  tl__put_table(p, ratio);
}

/* One table per probe and delay: each label's lateness, percentiles first
 * (the columns a narrow screen shows), the unit in the header and bare
 * numbers in the cells; a percentile is marked best only where that label
 * is clearly the least late (tl__clear_best). With --baseline, a second
 * table gives each label's difference from the baseline, with the ratio
 * where both latenesses are above TL_RATIO_FLOOR_NS. */
static void delay_table(tl__page *p, const tl_group *g0) {
  const tl_comparison *c = p->c;
  const tl_stats *st = tl__page_stats(p);
  const tl_dist *d0 = &g0->dist;
  size_t np = d0->pct_count, nvals = np + 4, cols = 1 + nvals + 2;
  const char *head[1 + TL_MAX_PCTS + 4 + 2];
  char names[TL_MAX_PCTS + 4][32];
  char align[1 + TL_MAX_PCTS + 4 + 2 + 1];
  size_t *idx = calloc(c->label_count + 1, sizeof *idx);
  if (!idx) {
    p->failed = TL_ENOMEM;
    return;
  }
  size_t rows = block_of(c, g0, idx);
  int64_t armed = tl_probe_armed_ns(g0->probe, g0->delay_ns);
  double top = 0;
  for (size_t r = 0; r < rows; r++)
    for (size_t k = 0; k < np && c->groups[idx[r]].dist.count; k++)
      top = fmax(top, fabs((double)lateness_at(c, idx[r], k)));
  tl__unit u = tl__unit_for(top);
  static const char *const tail[] = {"max", "min", "mean", "stddev"};
  for (size_t i = 0; i < nvals; i++) {
    if (i < np)
      snprintf(names[i], sizeof names[i], "p%s (%s)", TL_PCT(d0->pcts[i]), u.name);
    else
      snprintf(names[i], sizeof names[i], "%s (%s)", tail[i - np], u.name);
  }
  size_t h = 0;
  head[h++] = c->by ? c->by : "label";
  for (size_t i = 0; i < nvals; i++)
    head[h++] = names[i];
  head[h++] = "sessions";
  head[h++] = "samples";
  memset(align, 'r', cols);
  align[0] = 'l';
  align[cols] = '\0';

  delay_heading(p, g0, armed);

  tl__table *t = tl__table_new(cols, head, align);
  const tl_group *base =
      c->baseline >= 0 ? tl__find_group(c, c->labels[c->baseline], g0->probe, g0->delay_ns) : NULL;
  if (base && !base->dist.count)
    base = NULL;
  /* The baseline table says a unit in each cell: its intervals need their own. */
  const char *bhead[1 + TL_MAX_PCTS];
  char bnames[TL_MAX_PCTS][16];
  bhead[0] = head[0];
  for (size_t i = 0; i < np; i++) {
    snprintf(bnames[i], sizeof bnames[i], "p%s", TL_PCT(d0->pcts[i]));
    bhead[1 + i] = bnames[i];
  }
  tl__table *ratio = base ? tl__table_new(1 + np, bhead, align) : NULL;
  if (!t || (base && !ratio)) {
    p->failed = TL_ENOMEM;
    tl__table_free(t);
    tl__table_free(ratio);
    free(idx);
    return;
  }
  size_t first_cell[256];
  for (size_t r = 0; r < rows; r++) {
    const tl_group *g = &c->groups[idx[r]];
    char href[128];
    const char *link = tl__label_href(p, g->label, href, sizeof href);
    size_t cell = tl__table_add(t, g->label);
    tl__table_link(t, cell, link);
    if (r < 256)
      first_cell[r] = cell;
    lateness_cells(t, c, idx[r], np, armed, u);
    tl__table_addf(t, "%zu", g->session_count);
    tl__table_addf(t, "%lld", (long long)g->dist.count);
    if (ratio)
      baseline_row(ratio, c, st, base, idx[r], np, armed, u, link);
  }
  for (size_t k = 0; k < np && rows <= 256; k++) {
    int best = tl__clear_best(c, st, idx, rows, k);
    if (best >= 0)
      tl__table_mark(t, first_cell[best] + 1 + k, TL__BEST);
  }
  tl__put_table(p, t);
  if (ratio)
    baseline_table(p, st, ratio);
  free(idx);
}

static void section_tables(tl__page *p) {
  const tl_comparison *c = p->c;
  tl__heading(p, "lateness-by-delay", "Lateness by delay");
  FILE *f = tl__prose(p);
  if (labels_with_sessions(c) < 2)
    fputs("How late each timer fired, percentiles first.\n\n", f);
  else
    fputs("How late each timer fired, percentiles first. A percentile is in bold where that "
          "label is clearly the least late (the 95% interval of each difference excludes 0), "
          "nowhere else.\n\n",
          f);
  size_t n, *idx = tl__page_blocks(p, &n);
  if (!idx)
    return;
  for (size_t i = 0; i < n; i++)
    delay_table(p, &c->groups[idx[i]]);
  free(idx);
}

/* ======================================================================== */
/* 4. How sure is this?                                                     */

/* One matrix per probe and delay instead of a sentence per pair: the cell
 * of row A and column B is A's p90 lateness minus B's with its 95%
 * interval, and whether that is clear. Its size depends on the labels, not
 * on the sessions. */
static void difference_matrices(tl__page *p) {
  const tl_comparison *c = p->c;
  const tl_stats *st = tl__page_stats(p);
  size_t *blk = calloc(c->group_count + 1, sizeof *blk);
  size_t *idx = calloc(c->label_count + 1, sizeof *idx);
  if (!blk || !idx || !st) {
    free(blk);
    free(idx);
    if (st)
      p->failed = TL_ENOMEM;
    return;
  }
  double pct = headline_pct(c);
  size_t nb = tl__delays_of(c, blk);
  int titled = 0;
  for (size_t b = 0; b < nb; b++) {
    const tl_group *g0 = &c->groups[blk[b]];
    size_t n = block_of(c, g0, idx), with = 0;
    int k = tl__pct_index(&g0->dist, pct);
    for (size_t i = 0; i < n; i++)
      with += c->groups[idx[i]].dist.count > 0;
    if (with < 2 || k < 0 || n > TL_MAX_PCTS + 3)
      continue;
    FILE *f = tl__prose(p);
    if (!titled++)
      fprintf(
          f,
          "### Differences\n\nEach cell is the row's p%s lateness minus the column's (each pair "
          "once), with its 95%% interval from the sessions' own values and the sessions it "
          "rests on; \"clearly\" where the interval excludes 0 and both rest on enough samples "
          "and at least %d sessions.\n\n",
          TL_PCT(pct), TL_STATS_MIN_SESSIONS);
    char call[96];
    tl__call_name(g0->probe, g0->delay_ns, call, sizeof call);
    fputs("**", f);
    tl_md_escape(f, call);
    fputs("**\n\n", f);
    /* The lower triangle only: the upper one holds the same differences
     * with the sign turned, so rows from the second label, columns up to
     * the one before the last. */
    tl__heads h;
    h.name[0] = "minus";
    h.align[0] = 'l';
    for (size_t j = 0; j + 1 < n; j++) {
      snprintf(h.text[j], sizeof h.text[j], "%s", c->groups[idx[j]].label);
      h.name[j + 1] = h.text[j];
      h.align[j + 1] = 'r';
    }
    h.align[n] = '\0';
    tl__table *t = tl__table_new(n, h.name, h.align);
    for (size_t r = 1; t && r < n; r++) {
      tl__table_add(t, c->groups[idx[r]].label);
      for (size_t j = 0; j + 1 < n; j++) {
        const tl_pair_stats *pr = j < r ? tl__pair_of(st, idx[r], idx[j]) : NULL;
        if (j >= r || !pr) {
          tl__table_add(t, j >= r ? "" : "-");
          continue;
        }
        pair_cell(t, st, pr, idx[r], idx[j], (size_t)k, "");
      }
    }
    tl__put_table(p, t);
  }
  free(blk);
  free(idx);
}

/* "How sure is this?" and "Changes over time", when statistics were
 * computed for the page (tl_page_opts.stats). */
static void section_stats(tl__page *p) {
  const tl_stats *st = p->o->stats;
  if (!st)
    return;
  tl__heading(p, "how-sure-is-this", "How sure is this?");
  /* The method once, above the table, when it is the same for every row. */
  char method[160];
  int once = tl__stats_ci_method(p->c, st, method, sizeof method);
  FILE *f = tl__prose(p);
  fputs("95% confidence intervals of each percentile's lateness, in milliseconds", f);
  if (once)
    fprintf(f, ", each row's from %s", method);
  fputs(":\n\n", f);
  tl__heads heads;
  tl__put_table(p, tl__stats_ci_table(p->c, st, &heads, !once));
  tl__stats_notes(tl__prose(p), p->c, st, 0);
  difference_matrices(p);
  fputs("How these are worked out, and their limits: docs/statistics.md.\n\n", tl__prose(p));
}

/* ======================================================================== */
/* The page: the sections in reading order                                  */

/* The closing line; the only clock time on a page, and only when asked. */
static void closing_line(tl__page *p, FILE *f) {
  if (p->o->generated_ns > 0) {
    char date[32];
    tl_date_format(p->o->generated_ns, date, sizeof date);
    fprintf(f, "Made with tlreport at %s.\n", date);
  } else {
    fputs("Made with tlreport.\n", f);
  }
}

int tl__page_end(tl__page *p) {
  if (p->o->format == TL_FORMAT_HTML) {
    tl__prose_flush(p);
    fputs("<footer>", p->out);
    closing_line(p, p->out);
    fputs("</footer>\n</main>\n</body>\n</html>\n", p->out);
  } else {
    closing_line(p, p->out);
  }
  if (p->failed)
    return p->failed;
  return ferror(p->out) ? TL_EIO : TL_OK;
}

void tl_page_opts_init(tl_page_opts *o) {
  memset(o, 0, sizeof *o);
  o->format = TL_FORMAT_MD;
}

int tl_render(const tl_comparison *c, const tl_page_opts *o, FILE *out) {
  if (o->format == TL_FORMAT_JSON)
    return tl__render_json(c, o, out);
  tl__page p = {.c = c, .o = o, .out = out};
  char title[1024];
  if (o->title) {
    snprintf(title, sizeof title, "%s", o->title);
  } else {
    size_t at = (size_t)snprintf(title, sizeof title, "Timer latency%s%s: ", c->by ? " by " : "",
                                 c->by ? c->by : "");
    for (size_t i = 0; i < c->label_count && at < sizeof title; i++)
      at += (size_t)snprintf(title + at, sizeof title - at, "%s%s", i ? ", " : "", c->labels[i]);
  }
  if (o->format == TL_FORMAT_HTML)
    tl__html_head(&p, title);
  else
    fputs("<!-- " TL_REPORT_MARKER ": written by tlreport; tlreport may replace this file -->\n\n",
          out);
  tl__md_nav(&p);
  /* The sections, in reading order; how it was measured, which reads every
   * session's command line, is written meanwhile on a second thread. */
  const tl__section_fn sections[] = {
      tl__section_title,  section_contents,  tl__host_facts_section, section_answer,
      tl__by_section,     section_tables,    tl__causes_section,     section_stats,
      tl__section_charts, tl__section_hosts, tl__section_method,
  };
  size_t count = c->group_count ? sizeof sections / sizeof sections[0] : 1, later = count;
  for (size_t i = 0; i < count; i++)
    later = sections[i] == tl__section_method ? i : later;
  tl__write_sections(&p, sections, count, later);
  return tl__page_end(&p);
}
