/* page.c: the comparison page, section by section. Each section is one
 * function that reads the comparison and writes Markdown prose (through
 * tl__prose, write.c) and tables (tl__table), so the same code makes the Markdown
 * page and the HTML one; charts are drawn only in HTML. A new section (say,
 * statistics) is one more function in the list in tl_render().
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

/* Markdown pages list every session and command line only up to this many;
 * beyond, they summarize (the page must not grow with the runs). */
enum { MD_LIST_MAX = 24 };

static int label_has_sessions(const tl_comparison *c, const char *label) {
  for (size_t i = 0; i < c->sessions.count; i++)
    if (strcmp(c->sessions.items[i].label, label) == 0)
      return 1;
  return 0;
}

/* How many labels have sessions on the page: a page of one speaks of it
 * alone, with no comparison wording. */
static size_t labels_with_sessions(const tl_comparison *c) {
  size_t n = 0;
  for (size_t i = 0; i < c->label_count; i++)
    n += label_has_sessions(c, c->labels[i]) != 0;
  return n;
}

/* The percentile the plain-words lines speak of: 90 when shown, else the
 * first one asked for. */
static double headline_pct(const tl_comparison *c) {
  const tl_dist *d = &c->groups[0].dist;
  return tl__pct_index(d, 90) >= 0 ? 90 : d->pcts[0];
}

/* The page's (probe, delay) blocks as delays_of gives them, allocated (the
 * caller frees); NULL with the page marked failed when out of memory. */
static size_t *page_blocks(tl__page *p, size_t *n) {
  size_t *idx = calloc(p->c->group_count + 1, sizeof *idx);
  *n = idx ? tl__delays_of(p->c, idx) : 0;
  if (!idx)
    p->failed = TL_ENOMEM;
  return idx;
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
  size_t n, *idx = page_blocks(p, &n);
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
    if (label_has_sessions(c, c->labels[i]))
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
    size_t n, *idx = page_blocks(p, &n);
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

  char call[96], v[48], armed_s[48];
  tl__call_name(g0->probe, g0->delay_ns, call, sizeof call);
  tl__say_time((double)armed, armed_s, sizeof armed_s);
  FILE *f = tl__prose(p);
  fputs("### ", f);
  tl_md_escape(f, call);
  fputs("\n\n", f);
  fputs("Probe ", f);
  tl_md_escape(f, g0->probe);
  fprintf(f, "; lateness is the latency minus %s.\n\n", armed_s);

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
    if (g->dist.count) {
      double row[TL_MAX_PCTS + 4];
      size_t k = 0;
      for (size_t i = 0; i < np; i++)
        row[k++] = (double)lateness_at(c, idx[r], i);
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
    tl__table_addf(t, "%zu", g->session_count);
    tl__table_addf(t, "%lld", (long long)g->dist.count);
    if (ratio) {
      tl__table_link(ratio, tl__table_add(ratio, g->label), link);
      for (size_t i = 0; i < np; i++) {
        char r_note[32];
        if (!g->dist.count) {
          tl__table_add(ratio, "-");
          continue;
        }
        int64_t bl = base->dist.pct_ns[i] - armed, gl = g->dist.pct_ns[i] - armed;
        ratio_note(bl, gl, r_note, sizeof r_note);
        const tl_pair_stats *pr =
            g != base ? tl__pair_of(st, idx[r], (size_t)(base - c->groups)) : NULL;
        if (pr) {
          pair_cell(ratio, st, pr, idx[r], (size_t)(base - c->groups), i, r_note);
          continue;
        }
        /* The baseline itself, or a page without statistics: the bare difference. */
        tl__num((double)(gl - bl), u, v, sizeof v);
        tl__table_addf(ratio, "%s%s" NBSP "%s%s", gl > bl && strcmp(v, "0.000") ? "+" : "", v,
                       u.name, r_note);
      }
    }
  }
  for (size_t k = 0; k < np && rows <= 256; k++) {
    int best = tl__clear_best(c, st, idx, rows, k);
    if (best >= 0)
      tl__table_mark(t, first_cell[best] + 1 + k, TL__BEST);
  }
  tl__put_table(p, t);
  if (ratio) {
    f = tl__prose(p);
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
  size_t n, *idx = page_blocks(p, &n);
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
/* 5. Charts                                                                */

/* A chart's file name in a Markdown link: unreserved characters as they
 * are, every other byte percent-encoded (the name comes from -o). */
void tl__md_url(FILE *f, const char *name) {
  for (const unsigned char *s = (const unsigned char *)name; *s; s++)
    if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
        strchr("-._~", *s))
      fputc(*s, f);
    else
      fprintf(f, "%%%02X", *s);
}

void tl_chart_files_free(tl_chart_files *charts) {
  for (size_t i = 0; charts && i < charts->count; i++) {
    free(charts->items[i].name);
    free(charts->items[i].data);
  }
  if (charts) {
    free(charts->items);
    charts->items = NULL;
    charts->count = 0;
  }
}

typedef enum { CHART_SPECTRUM, CHART_TREND, CHART_HISTOGRAM, CHART_BY } chart_kind;

const char *tl__chart_file_add(tl__page *p, char *data, size_t len) {
  tl_chart_files *files = p->o->charts;
  char name[512];
  snprintf(name, sizeof name, "%s-%zu.svg", files->stem, files->count + 1);
  tl_chart_file *items = realloc(files->items, (files->count + 1) * sizeof *items);
  if (items)
    files->items = items;
  if (!items || !(items[files->count].name = strdup(name))) {
    free(data);
    p->failed = TL_ENOMEM;
    return NULL;
  }
  items[files->count].data = data;
  items[files->count].len = len;
  return items[files->count++].name;
}

/* Draws one chart of a Markdown page into a file of its own (added to
 * p->o->charts) and links it as an image; with `inline_image`, no line
 * break after it, so that small charts sit side by side. Nothing when the
 * chart has nothing to draw. */
static void md_chart(tl__page *p, chart_kind kind, const tl_group *g, int inline_image) {
  char *buf = NULL;
  size_t len = 0;
  FILE *saved = p->out, *mem = open_memstream(&buf, &len);
  if (!mem) {
    p->failed = TL_ENOMEM;
    return;
  }
  p->out = mem;
  p->svg_file = 1;
  if (kind == CHART_SPECTRUM)
    tl__svg_spectrum(p, g->probe, g->delay_ns);
  else if (kind == CHART_TREND)
    tl__svg_trend(p, g->probe, g->delay_ns);
  else if (kind == CHART_BY)
    tl__svg_by_trend(p, g->probe, g->delay_ns);
  else
    tl__svg_histogram(p, g);
  p->svg_file = 0;
  p->out = saved;
  if (fclose(mem) != 0) {
    free(buf);
    p->failed = TL_ENOMEM;
    return;
  }
  if (!len) {
    free(buf);
    return;
  }
  const char *name = tl__chart_file_add(p, buf, len);
  if (!name)
    return;
  FILE *f = tl__prose(p);
  fputs(inline_image && p->o->charts->count > 1 && p->chart_inline ? " ![" : "![", f);
  tl_md_escape(f, p->chart_title);
  fputs("](", f);
  tl__md_url(f, name);
  fputs(inline_image ? ")" : ")\n\n", f);
  p->chart_inline = inline_image;
  if (!inline_image) {
    tl_md_escape(f, p->chart_caption);
    fputs("\n\n", f);
  }
}

/* The heading of one probe and delay's charts: "### setTimeout(1)". */
static void block_heading(tl__page *p, const tl_group *g0) {
  char call[96];
  tl__call_name(g0->probe, g0->delay_ns, call, sizeof call);
  FILE *f = tl__prose(p);
  fputs("### ", f);
  tl_md_escape(f, call);
  fputs("\n\n", f);
}

/* The Markdown page's charts, as SVG files beside it (-o), or one line
 * saying how to get them when the page goes to standard output. */
static void markdown_charts(tl__page *p) {
  const tl_comparison *c = p->c;
  FILE *f = tl__prose(p);
  if (!p->o->charts) {
    fputs("Charts: written beside the page as SVG files with `-o FILE.md`, or inline with "
          "`--format html`.\n\n",
          f);
    return;
  }
  tl__heading(p, "charts", "Charts");
  size_t n, *idx = page_blocks(p, &n);
  if (!idx)
    return;
  for (size_t i = 0; i < n; i++) {
    const tl_group *g0 = &c->groups[idx[i]];
    block_heading(p, g0);
    md_chart(p, CHART_SPECTRUM, g0, 0);
    md_chart(p, CHART_TREND, g0, 0);
    if (c->by && c->label_x)
      md_chart(p, CHART_BY, g0, 0);
    for (size_t l = 0; l < c->label_count; l++) {
      const tl_group *g = tl__find_group(c, c->labels[l], g0->probe, g0->delay_ns);
      if (g && g->dist.count)
        md_chart(p, CHART_HISTOGRAM, g, 1);
    }
    if (p->chart_inline)
      fputs("\n\nHistograms: the bulk of each label's samples; the bar set apart on the right "
            "counts those beyond.\n\n",
            tl__prose(p));
    p->chart_inline = 0;
  }
  free(idx);
}

static void section_charts(tl__page *p) {
  const tl_comparison *c = p->c;
  if (p->o->format != TL_FORMAT_HTML) {
    markdown_charts(p);
    return;
  }
  tl__heading(p, "charts", "Charts");
  size_t n, *idx = page_blocks(p, &n);
  if (!idx)
    return;
  for (size_t i = 0; i < n; i++) {
    const tl_group *g0 = &c->groups[idx[i]];
    block_heading(p, g0);
    tl__prose_flush(p);
    fputs("<div class=\"charts\">\n", p->out);
    tl__svg_spectrum(p, g0->probe, g0->delay_ns);
    tl__svg_trend(p, g0->probe, g0->delay_ns);
    fputs("</div>\n<div class=\"charts small\">\n", p->out);
    for (size_t l = 0; l < c->label_count; l++) {
      const tl_group *g = tl__find_group(c, c->labels[l], g0->probe, g0->delay_ns);
      if (g && g->dist.count)
        tl__svg_histogram(p, g);
    }
    fputs("</div>\n", p->out);
  }
  free(idx);
}

/* ======================================================================== */
/* 6. Hosts and sessions                                                    */

/* "2026-11-30" (UTC). */
void tl__date_only(int64_t ns, char *buf, size_t len) {
  char d[32];
  tl_date_format(ns, d, sizeof d);
  snprintf(buf, len, "%.10s", d);
}

/* "2026-11-30 09:56": short enough not to wrap in a table (UTC). */
static void minute(int64_t ns, char *buf, size_t len) {
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
    for (size_t i = 0; i < n; i++) {
      const tl_session *s = &c->sessions.items[i];
      if (strcmp(s->label, c->labels[l]) != 0)
        continue;
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
static void session_list(tl__page *p) {
  const tl_comparison *c = p->c;
  size_t n = c->sessions.count;
  int html = p->o->format == TL_FORMAT_HTML;
  if (!html && n > MD_LIST_MAX) {
    fprintf(tl__prose(p),
            "The list of all %zu sessions is in the HTML page (`--format html`), in JSON "
            "(`--format json`) and on the label pages of `--site`.\n\n",
            n);
    return;
  }
  static const char *const shead[] = {"started (UTC)", "label",   "host",     "probe",    "delay",
                                      "status",        "samples", "p90 late", "p99 late", "tags"};
  tl__table *t = tl__table_new(10, shead, "llllrlrrrl");
  for (size_t i = 0; t && i < n; i++) {
    const tl_session *s = &c->sessions.items[i];
    const tl_session_detail *d = &c->details[i];
    char buf[1024], href[128], v[48];
    minute(s->started_ns, buf, sizeof buf);
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
      if (d->dist.count) {
        tl__say_time((double)(d->dist.pct_ns[k] - armed), v, sizeof v);
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
  if (html) {
    tl__prose_flush(p);
    fprintf(p->out, "<details><summary>All %zu sessions</summary>\n", n);
  }
  tl__put_table(p, t);
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

static void section_hosts(tl__page *p) {
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
  if (t && rows > MD_LIST_MAX)
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

/* ======================================================================== */
/* 7. How it was measured                                                   */

/* A fenced code block around text that may hold backticks: the fence is
 * longer than any run of backticks inside. */
static void code_block(FILE *f, const char *text) {
  size_t run = 0, longest = 0;
  for (const char *s = text; *s; s++) {
    run = *s == '`' ? run + 1 : 0;
    if (run > longest)
      longest = run;
  }
  size_t fence = longest < 3 ? 3 : longest + 1;
  for (size_t i = 0; i < fence; i++)
    fputc('`', f);
  fputs("sh\n", f);
  tl__md_literal(f, text);
  fputc('\n', f);
  for (size_t i = 0; i < fence; i++)
    fputc('`', f);
  fputs("\n\n", f);
}

static void command_lines(tl__page *p);

static void section_method(tl__page *p) {
  const tl_comparison *c = p->c;
  tl__heading(p, "how-it-was-measured", "How it was measured");
  FILE *f = tl__prose(p);
  size_t n = c->sessions.count, *same = tl__sessions_first(c, TL__SAME_PROBE);
  if (!same)
    p->failed = TL_ENOMEM;
  for (size_t i = 0; same && i < n; i++) {
    const char *probe = c->sessions.items[i].probe;
    if (same[i] != i)
      continue;
    size_t sessions = 0, imported = 0;
    for (size_t j = i; j < n; j++)
      if (strcmp(c->sessions.items[j].probe, probe) == 0) {
        sessions++;
        imported += strncmp(c->sessions.items[j].host_fingerprint, "imported:", 9) == 0;
      }
    fputs("- **", f);
    tl_md_escape(f, probe);
    fputs("**: ", f);
    /* tl cannot know how another tool measured what it imported, whatever
     * its --probe says. */
    if (imported == sessions) {
      fputs("imported with `tlstore import --probe ", f);
      tl__md_literal(f, probe);
      fputs("`: measured by another tool, not by tl, which cannot say how.", f);
    } else {
      tl_md_escape(f, tl__probe_definition(probe));
      if (imported)
        fprintf(f,
                " %zu of its %zu sessions were imported (`tlstore import`): measured by "
                "another tool, not by tl.",
                imported, sessions);
    }
    fputc('\n', f);
  }
  free(same);
  fputs("\nPercentiles are exact and nearest-rank over every raw sample: pN is the smallest "
        "measured latency that at least N percent of the samples do not exceed (the "
        "ceil(N/100 \xC3\x97 n)-th smallest of n), never an interpolation or an estimate. The "
        "mean and the standard deviation (population) are over the same samples.\n\n",
        f);
  command_lines(p);
}

/* Which command lines need their call in the heading: those of a label
 * that ran more than one command line, when all the sessions of that command
 * line share one probe and delay. A malloc'ed array of flags by session,
 * set at each command line's first session (cmd: TL__SAME_COMMAND, label:
 * TL__SAME_LABEL), or NULL when out of memory. Linear in the sessions. */
static char *command_calls(const tl_comparison *c, const size_t *cmd, const size_t *label) {
  size_t n = c->sessions.count;
  size_t *commands = calloc(n + 1, sizeof *commands);
  char *mixed = calloc(n + 1, 1), *call = calloc(n + 1, 1);
  if (!commands || !mixed || !call) {
    free(call);
    call = NULL;
  }
  for (size_t i = 0; call && i < n; i++) {
    const tl_session *s = &c->sessions.items[i], *first = &c->sessions.items[cmd[i]];
    commands[label[i]] += cmd[i] == i;
    if (s->delay_ns != first->delay_ns || strcmp(s->probe, first->probe) != 0)
      mixed[cmd[i]] = 1;
  }
  for (size_t i = 0; call && i < n; i++)
    call[i] = cmd[i] == i && commands[label[i]] > 1 && !mixed[i];
  free(commands);
  free(mixed);
  return call;
}

/* What one import changes from the next: its --start, its --delay and
 * the file it read (the last word). */
enum { IMPORT_START, IMPORT_DELAY, IMPORT_FILE, IMPORT_PARTS };

/* An import's command line ("tlstore import ... --start D --delay T
 * FILE") with what one import changes from the next left out, so that a
 * month of imports made by one script is one command: a malloc'ed string
 * of the other words, the three parts' words into part[] (pointers into
 * cmd with their lengths); NULL when cmd is no import or memory ran out. */
static char *import_shape(const char *cmd, const char *part[IMPORT_PARTS],
                          size_t part_len[IMPORT_PARTS]) {
  static const char *const option[] = {"--start", "--delay"};
  if (strncmp(cmd, "tlstore import ", 15) != 0)
    return NULL;
  size_t n = strlen(cmd), at = 0;
  char *shape = malloc(n + 1);
  for (int k = 0; k < IMPORT_PARTS; k++) {
    part[k] = "";
    part_len[k] = 0;
  }
  const char *w = cmd, *prev = NULL;
  size_t prev_len = 0;
  while (shape && *w) {
    size_t len = strcspn(w, " ");
    int skip = w + len == cmd + n && w[0] != '-'; /* the file */
    if (skip) {
      part[IMPORT_FILE] = w;
      part_len[IMPORT_FILE] = len;
    }
    for (int k = 0; k < 2 && prev; k++)
      if (prev_len == strlen(option[k]) && strncmp(prev, option[k], prev_len) == 0) {
        part[k] = w;
        part_len[k] = len;
        skip = 1;
      }
    if (!skip) {
      memcpy(shape + at, w, len);
      at += len;
      shape[at++] = ' ';
    }
    prev = w;
    prev_len = len;
    w += len + strspn(w + len, " ");
  }
  if (shape)
    shape[at] = '\0';
  return shape;
}

/* The commands of the sessions, once each: a session's label and command
 * line, an import's without what changes from one import to the next. */
typedef struct {
  const tl_comparison *c;
  char **shape; /* per session: import_shape, or NULL */
} command_keys;

static const char *command_key(const void *ctx, size_t i, int part) {
  const command_keys *k = ctx;
  const tl_session *s = &k->c->sessions.items[i];
  return part ? (k->shape[i] ? k->shape[i] : s->command_line) : s->label;
}

/* For each command (at its first session): which parts vary among its
 * imports, and its first few delays. */
enum { SHOWN_DELAYS = 8 };
typedef struct {
  int varies[IMPORT_PARTS];
  size_t delays;
  int64_t delay_ns[SHOWN_DELAYS];
} import_group;

static void note_import(const tl_comparison *c, const size_t *cmd, size_t j, import_group *groups) {
  const char *a[IMPORT_PARTS], *b[IMPORT_PARTS];
  size_t al[IMPORT_PARTS], bl[IMPORT_PARTS];
  import_group *g = &groups[cmd[j]];
  char *x = import_shape(c->sessions.items[j].command_line, a, al);
  char *y = import_shape(c->sessions.items[cmd[j]].command_line, b, bl);
  for (int k = 0; x && y && k < IMPORT_PARTS; k++)
    g->varies[k] |= al[k] != bl[k] || strncmp(a[k], b[k], al[k]) != 0;
  free(x);
  free(y);
  int64_t d = c->sessions.items[j].delay_ns;
  size_t i = 0;
  while (i < g->delays && g->delay_ns[i] != d)
    i++;
  if (i == g->delays && i < SHOWN_DELAYS)
    g->delay_ns[g->delays++] = d;
}

/* After an import's command line: what its other imports change. */
static void import_note(FILE *f, const tl_session *s, const import_group *g, size_t runs) {
  static const char *const said[] = {"`--start`", "`--delay`", "the file"};
  size_t n = 0;
  for (int k = 0; k < IMPORT_PARTS; k++)
    n += g->varies[k] != 0;
  if (runs < 2 || !n)
    return;
  fputs("The others differ from it only in ", f);
  for (int k = 0, i = 0; k < IMPORT_PARTS; k++) {
    if (!g->varies[k])
      continue;
    fprintf(f, "%s%s", i ? (i + 1 == (int)n ? " and " : ", ") : "", said[k]);
    if (k == IMPORT_DELAY) {
      fputs(" (", f);
      for (size_t d = 0; d < g->delays; d++) {
        char call[96];
        tl__call_name(s->probe, g->delay_ns[d], call, sizeof call);
        fputs(d ? ", " : "", f);
        tl_md_escape(f, call);
      }
      fputs(g->delays == SHOWN_DELAYS ? " ...)" : ")", f);
    }
    i++;
  }
  fputs(".\n\n", f);
}

/* The command lines, once each: the runs of a label that share one command
 * line (a scheduled job) are one entry with their count and dates, and so
 * are imports that differ only in their start, delay and file. HTML folds
 * them into <details>; Markdown lists at most MD_LIST_MAX. */
static void command_lines(tl__page *p) {
  const tl_comparison *c = p->c;
  size_t n = c->sessions.count, shown = 0, total = 0;
  int html = p->o->format == TL_FORMAT_HTML;
  FILE *f = tl__prose(p);
  fputs("### Command lines\n\n", f);
  if (html) {
    tl__prose_flush(p);
    fputs("<details><summary>The command line of every run</summary>\n", p->out);
    f = tl__prose(p);
  }
  /* The runs of each label and command line (counted at their first
   * sessions) and the newest of them, kept at the key's first session. */
  command_keys keys = {c, calloc(n + 1, sizeof *keys.shape)};
  for (size_t i = 0; keys.shape && i < n; i++) {
    const char *part[IMPORT_PARTS];
    size_t len[IMPORT_PARTS];
    keys.shape[i] = import_shape(c->sessions.items[i].command_line, part, len);
  }
  size_t *run = tl__sessions_first(c, TL__SAME_RUN), *cmd = malloc((n + 1) * sizeof *cmd);
  if (keys.shape && cmd && tl__first_same(n, 2, command_key, &keys, cmd) != TL_OK) {
    free(cmd);
    cmd = NULL;
  }
  size_t *label = tl__sessions_first(c, TL__SAME_LABEL);
  char *with_call = cmd && label ? command_calls(c, cmd, label) : NULL;
  size_t *runs_of = calloc(n + 1, sizeof *runs_of);
  int64_t *last_of = calloc(n + 1, sizeof *last_of);
  import_group *imports = calloc(n + 1, sizeof *imports);
  if (!keys.shape || !run || !cmd || !label || !with_call || !runs_of || !last_of || !imports) {
    p->failed = TL_ENOMEM;
    n = 0;
  }
  for (size_t j = 0; j < n; j++)
    if (keys.shape[j])
      note_import(c, cmd, j, imports);
  for (size_t i = 0; i < n; i++)
    if (run[i] == i) {
      int64_t t = c->sessions.items[i].started_ns;
      if (!runs_of[cmd[i]]++ || t > last_of[cmd[i]])
        last_of[cmd[i]] = t;
    }
  /* The first run of this label with this command line speaks for all. */
  for (size_t i = 0; i < n; i++) {
    const tl_session *s = &c->sessions.items[i];
    if (run[i] != i || cmd[i] != i)
      continue;
    total++;
    if (!html && shown >= MD_LIST_MAX)
      continue;
    shown++;
    size_t runs = runs_of[i];
    int64_t last = last_of[i];
    char date[32], end[32], call[96];
    minute(s->started_ns, date, sizeof date);
    fputs("**", f);
    tl_md_escape(f, c->details[i].label ? c->details[i].label : s->label);
    fputs("**", f);
    if (with_call[i]) {
      tl__call_name(s->probe, s->delay_ns, call, sizeof call);
      fputs(", ", f);
      tl_md_escape(f, call);
    }
    fputs(" on ", f);
    tl_md_escape(f, s->hostname);
    if (runs > 1) {
      tl__date_only(s->started_ns, date, sizeof date);
      tl__date_only(last, end, sizeof end);
      fprintf(f, ", %zu %s from %s to %s (UTC)%s:\n\n", runs, keys.shape[i] ? "imports" : "runs",
              date, end, keys.shape[i] ? ", the first" : "");
    } else {
      fprintf(f, ", %s UTC:\n\n", date);
    }
    code_block(f, *s->command_line ? s->command_line : "(not recorded)");
    if (keys.shape[i])
      import_note(f, s, &imports[i], runs);
  }
  for (size_t i = 0; keys.shape && i < c->sessions.count; i++)
    free(keys.shape[i]);
  free(keys.shape);
  free(imports);
  free(run);
  free(cmd);
  free(label);
  free(with_call);
  free(runs_of);
  free(last_of);
  if (total > shown)
    fprintf(f,
            "And %zu more command lines: in the HTML page (`--format html`) and in JSON "
            "(`--format json`).\n\n",
            total - shown);
  if (html) {
    tl__prose_flush(p);
    fputs("</details>\n", p->out);
  }
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
  /* The sections, in reading order. */
  void (*const sections[])(tl__page *) = {
      tl__section_title, section_contents, tl__host_facts_section, section_answer,
      tl__by_section,    section_tables,   tl__causes_section,     section_stats,
      section_charts,    section_hosts,    section_method,
  };
  for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
    if (c->group_count || sections[i] == tl__section_title)
      sections[i](&p);
  return tl__page_end(&p);
}

int tl_render_markdown(const tl_comparison *c, FILE *out) {
  tl_page_opts o;
  tl_page_opts_init(&o);
  return tl_render(c, &o, out);
}
