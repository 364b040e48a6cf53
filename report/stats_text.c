/* stats_text.c: the statistics in words: the verdicts every "best" of a
 * page comes from, the plain sentences about a difference or a change over
 * time, and the "How sure is this?" section in Markdown. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "report_internal.h"
#include "stats_internal.h"

/* ======================================================================== */
/* Verdicts                                                                  */

/* A pair's first group comes first in the comparison (a < b): the pairs
 * of the smaller, from where they begin, b rising. A page looks pairs up by
 * the row and column of its tables: a scan of every pair each time grows
 * with the fourth power of the groups. */
const tl_pair_stats *tl__pair_of(const tl_stats *st, size_t a, size_t b) {
  size_t lo = a < b ? a : b, hi = a < b ? b : a;
  if (!st || !st->pair_since || lo >= st->group_count || st->pair_since[lo] == SIZE_MAX)
    return NULL;
  /* The first pair from there at or past hi, or of another first group:
   * at most group_count ahead. */
  size_t from = st->pair_since[lo], to = from + st->group_count;
  to = to < st->pair_count ? to : st->pair_count;
  while (from < to) {
    size_t mid = from + (to - from) / 2;
    if (st->pairs[mid].a == lo && st->pairs[mid].b < hi)
      from = mid + 1;
    else
      to = mid;
  }
  return from < st->pair_count && st->pairs[from].a == lo && st->pairs[from].b == hi
             ? &st->pairs[from]
             : NULL;
}

int tl__clearly_below(const tl_stats *st, size_t a, size_t b, size_t k) {
  const tl_pair_stats *p = tl__pair_of(st, a, b);
  /* A percentile that rests on too few samples decides nothing, as in the
   * regression check. */
  if (!p || !p->clear[k] || st->groups[a].pct[k].few || st->groups[b].pct[k].few)
    return 0;
  /* diff is p->b minus p->a */
  return p->a == a ? p->lo_ns[k] > 0 : p->hi_ns[k] < 0;
}

int tl__clear_best(const tl_comparison *cmp, const tl_stats *st, const size_t *groups, size_t n,
                   size_t k) {
  int low = -1;
  for (size_t i = 0; i < n; i++) {
    const tl_dist *d = &cmp->groups[groups[i]].dist;
    if (d->count && k < d->pct_count &&
        (low < 0 || d->pct_ns[k] < cmp->groups[groups[low]].dist.pct_ns[k]))
      low = (int)i;
  }
  if (low < 0 || !st)
    return -1;
  size_t others = 0;
  for (size_t i = 0; i < n; i++) {
    if ((int)i == low || !cmp->groups[groups[i]].dist.count)
      continue;
    if (!tl__clearly_below(st, groups[low], groups[i], k))
      return -1;
    others++;
  }
  return others ? low : -1;
}

/* ======================================================================== */
/* Sentences and Markdown                                                    */

/* Milliseconds with two decimals, or up to five when the largest number
 * said together (scale, in ns) is below 1 ms, so that sub-millisecond
 * differences stay visible; never "-0.00". */
void tl__sentence_ms(double ns, double scale, char *buf, size_t len) {
  /* The decimals of tl_format_ms (base/percentile.c) for the largest number
   * of a sentence, so that the numbers side by side are written alike. */
  double a = fabs(scale);
  int dec = a >= 1e6 ? 2 : a >= 1e5 ? 3 : a >= 1e4 ? 4 : 5;
  double half = 0.5 * pow(10, 6 - dec); /* no "-0.000" for a tiny negative */
  snprintf(buf, len, "%.*f", dec, fabs(ns) < half ? 0.0 : ns / 1e6);
}

double tl__max_abs3(double a, double b, double c) {
  a = fabs(a), b = fabs(b), c = fabs(c);
  return a > b ? (a > c ? a : c) : (b > c ? b : c);
}

/* Prose for a Markdown page: escapes what Markdown or HTML would read as
 * markup anywhere in a line (and drops control characters), but leaves the
 * punctuation of ordinary sentences alone. */
static void md_prose(FILE *out, const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p < 0x20 || *p == 0x7f)
      continue;
    if (strchr("\\`*_[]<>&|#~!", *p))
      fputc('\\', out);
    fputc(*p, out);
  }
}

/* Appends to buf[len] at *at, never past the end. */
static void add(char *buf, size_t len, size_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void add(char *buf, size_t len, size_t *at, const char *fmt, ...) {
  if (*at >= len)
    return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf + *at, len - *at, fmt, ap);
  va_end(ap);
  if (n > 0)
    *at += (size_t)n < len - *at ? (size_t)n : len - *at - 1;
}

static void few_note(char *buf, size_t len, size_t *at, const tl_group *g, const tl_pct_stats *p,
                     double pct) {
  if (!p->few)
    return;
  if (!p->needed) {
    add(buf, len, at, "; p%s is the largest sample, which no amount of data pins down",
        TL_PCT(pct));
    return;
  }
  add(buf, len, at,
      "; too few samples for p%s on %s: %lld above it, %d needed (at least %lld samples)",
      TL_PCT(pct), g->label, (long long)p->above, TL_STATS_MIN_ABOVE, (long long)p->needed);
}

void tl__sessions_phrase(size_t a, size_t b, char *buf, size_t len) {
  if (a == b)
    snprintf(buf, len, "%zu session%s each", a, a == 1 ? "" : "s");
  else
    snprintf(buf, len, "%zu and %zu sessions", a, b);
}

int64_t tl__sessions_to_collect(const tl_pair_stats *p, size_t k) {
  int64_t n = p->sessions_needed[k] ? p->sessions_needed[k] : TL_STATS_FIRST_SESSIONS;
  return n < TL_STATS_MIN_SESSIONS ? TL_STATS_MIN_SESSIONS : n;
}

void tl_pair_sentence(const tl_comparison *cmp, const tl_stats *st, const tl_pair_stats *p,
                      size_t k, char *buf, size_t len) {
  const tl_group *a = &cmp->groups[p->a], *b = &cmp->groups[p->b];
  const tl_group_stats *as = &st->groups[p->a], *bs = &st->groups[p->b];
  double pct = a->dist.pcts[k];
  size_t at = 0;
  char d[32], lo[32], hi[32], on[64];
  if (len)
    buf[0] = '\0';
  if (!p->decided) {
    /* What was seen, what it rests on and what would settle it. */
    tl__sentence_ms((double)p->diff_ns[k], (double)p->diff_ns[k], d, sizeof d);
    tl__sessions_phrase(p->sessions_a, p->sessions_b, on, sizeof on);
    long long need = (long long)tl__sessions_to_collect(p, k);
    add(buf, len, &at,
        "%s and %s cannot be told apart at p%s yet: %s minus %s is %s ms, from %s, too few to "
        "measure how much runs vary; collect at least %lld sessions a label (tlcollect --repeat "
        "%lld)",
        a->label, b->label, TL_PCT(pct), b->label, a->label, d, on, need, need);
  } else if (p->clear[k]) {
    /* Say it from the faster side: a positive difference and interval. */
    int a_faster = p->lo_ns[k] > 0;
    const tl_group *fast = a_faster ? a : b, *slow = a_faster ? b : a;
    double dd = a_faster ? (double)p->diff_ns[k] : -(double)p->diff_ns[k];
    double l = a_faster ? (double)p->lo_ns[k] : -(double)p->hi_ns[k];
    double h = a_faster ? (double)p->hi_ns[k] : -(double)p->lo_ns[k];
    double sc = tl__max_abs3(dd, l, h);
    tl__sentence_ms(dd, sc, d, sizeof d);
    tl__sentence_ms(l, sc, lo, sizeof lo);
    tl__sentence_ms(h, sc, hi, sizeof hi);
    tl__sessions_phrase(a_faster ? p->sessions_a : p->sessions_b,
                        a_faster ? p->sessions_b : p->sessions_a, on, sizeof on);
    add(buf, len, &at, "%s is faster than %s at p%s by %s ms (95%% CI %s to %s ms, %s)",
        fast->label, slow->label, TL_PCT(pct), d, lo, hi, on);
    if (p->spread_over[k]) {
      const tl_group *wide = as->pct[k].spread_ns >= bs->pct[k].spread_ns ? a : b;
      const tl_group_stats *ws = wide == a ? as : bs;
      char sp[32];
      tl__sentence_ms((double)ws->pct[k].spread_ns, (double)ws->pct[k].spread_ns, sp, sizeof sp);
      add(buf, len, &at,
          "; but the sessions of %s disagree with each other by up to %s ms at p%s, more than "
          "this difference",
          wide->label, sp, TL_PCT(pct));
    }
  } else {
    double sc = tl__max_abs3((double)p->diff_ns[k], (double)p->lo_ns[k], (double)p->hi_ns[k]);
    tl__sentence_ms((double)p->diff_ns[k], sc, d, sizeof d);
    tl__sentence_ms((double)p->lo_ns[k], sc, lo, sizeof lo);
    tl__sentence_ms((double)p->hi_ns[k], sc, hi, sizeof hi);
    tl__sessions_phrase(p->sessions_a, p->sessions_b, on, sizeof on);
    add(buf, len, &at,
        "no clear difference between %s and %s at p%s with %s (%s minus %s: %s ms, 95%% CI %s to "
        "%s ms)",
        a->label, b->label, TL_PCT(pct), on, b->label, a->label, d, lo, hi);
    size_t most = p->sessions_a > p->sessions_b ? p->sessions_a : p->sessions_b;
    if (p->sessions_needed[k] > (int64_t)most)
      add(buf, len, &at,
          "; about %lld sessions a label would make a difference this size clear (tlcollect "
          "--repeat %lld)",
          (long long)p->sessions_needed[k], (long long)p->sessions_needed[k]);
  }
  few_note(buf, len, &at, a, &as->pct[k], pct);
  few_note(buf, len, &at, b, &bs->pct[k], pct);
}

void tl_change_sentence(const tl_group *g, const tl_change *c, char *buf, size_t len) {
  char before[32], after[32], date[32];
  double armed = (double)tl_probe_armed_ns(g->probe, g->delay_ns);
  double sc = tl__max_abs3(c->before_ns - armed, c->after_ns - armed, 0);
  tl__sentence_ms(c->before_ns - armed, sc, before, sizeof before);
  tl__sentence_ms(c->after_ns - armed, sc, after, sizeof after);
  tl_date_format(c->at_ns, date, sizeof date);
  char *t = strchr(date, 'T');
  if (t)
    *t = '\0';
  snprintf(buf, len, "p%s lateness of %s at %g ms (%s) %s from %s to %s ms on %s", TL_PCT(c->pct),
           g->label, (double)g->delay_ns / 1e6, g->probe,
           c->after_ns > c->before_ns ? "rose" : "fell", before, after, date);
}

static void md_group_head(FILE *out, const tl_group *g) {
  tl_md_escape(out, g->probe);
  fprintf(out, ", %g ms", (double)g->delay_ns / 1e6);
}

int tl__stats_ci_method(const tl_comparison *cmp, const tl_stats *st, char *buf, size_t len) {
  size_t lo = SIZE_MAX, hi = 0, groups = 0;
  int method = -1;
  for (size_t i = 0; i < cmp->group_count; i++) {
    const tl_group *g = &cmp->groups[i];
    if (!g->dist.count)
      continue;
    int m = st->groups[i].method != TL_CI_SESSIONS ? 0 : st->groups[i].linear ? 2 : 1;
    if (method >= 0 && m != method)
      return 0;
    method = m;
    size_t n = m ? g->session_count : (size_t)g->dist.count;
    lo = n < lo ? n : lo;
    hi = n > hi ? n : hi;
    groups++;
  }
  if (method < 0)
    return 0;
  const char *what = method == 2   ? "Woodruff's interval over its sessions"
                     : method == 1 ? "a bootstrap over its sessions"
                                   : "order statistics over its samples";
  if (groups == 1 || lo == hi)
    snprintf(buf, len, "%s (%zu%s)", what, lo, groups > 1 ? " each" : "");
  else
    snprintf(buf, len, "%s (%zu to %zu)", what, lo, hi);
  return 1;
}

tl__table *tl__stats_ci_table(const tl_comparison *cmp, const tl_stats *st, tl__heads *heads,
                              int method_column) {
  const tl_dist *d0 = &cmp->groups[0].dist;
  char *align = heads->align;
  size_t cols = 0;
  for (const char *h = "label\0probe\0delay\0"; *h; h += strlen(h) + 1) {
    snprintf(heads->text[cols], 32, "%s", h);
    align[cols] = cols == 2 ? 'r' : 'l'; /* the delay is a number */
    cols++;
  }
  for (size_t k = 0; k < d0->pct_count; k++) {
    snprintf(heads->text[cols], 32, "p%s (95%% CI)", TL_PCT(d0->pcts[k]));
    align[cols++] = 'r';
  }
  if (method_column) {
    snprintf(heads->text[cols], 32, "interval from");
    align[cols++] = 'l';
  }
  for (size_t c = 0; c < cols; c++)
    heads->name[c] = heads->text[c];
  tl__table *t = tl__table_new(cols, heads->name, align);
  if (!t)
    return NULL;
  for (size_t i = 0; i < cmp->group_count; i++) {
    const tl_group *g = &cmp->groups[i];
    const tl_group_stats *gs = &st->groups[i];
    tl__table_add(t, g->label);
    tl__table_add(t, g->probe);
    tl__table_addf(t, "%g ms", (double)g->delay_ns / 1e6);
    for (size_t k = 0; k < g->dist.pct_count; k++) {
      char v[32], lo[32], hi[32];
      if (!g->dist.count) {
        tl__table_add(t, "-");
        continue;
      }
      /* Lateness, like the page's tables: the interval moves with the value. */
      double armed = (double)tl_probe_armed_ns(g->probe, g->delay_ns);
      double val = (double)g->dist.pct_ns[k] - armed;
      double sc = tl__max_abs3(val, (double)gs->pct[k].hi_ns - armed, 0);
      tl__sentence_ms(val, sc, v, sizeof v);
      if (gs->pct[k].lo_ns >= 0)
        tl__sentence_ms((double)gs->pct[k].lo_ns - armed, sc, lo, sizeof lo);
      else
        snprintf(lo, sizeof lo, "?");
      if (gs->pct[k].hi_ns >= 0)
        tl__sentence_ms((double)gs->pct[k].hi_ns - armed, sc, hi, sizeof hi);
      else
        snprintf(hi, sizeof hi, "?");
      tl__table_addf(t, "%s (%s to %s)%s", v, lo, hi, gs->pct[k].few ? " (few samples)" : "");
    }
    if (!method_column)
      continue;
    if (!g->dist.count)
      tl__table_add(t, "no samples");
    else if (gs->method == TL_CI_SESSIONS)
      tl__table_addf(t, "%s over %zu sessions", gs->linear ? "Woodruff's interval" : "bootstrap",
                     g->session_count);
    else
      tl__table_addf(t, "order statistics over %lld samples (%zu session%s)",
                     (long long)g->dist.count, g->session_count, g->session_count == 1 ? "" : "s");
  }
  return t;
}

int tl__stats_markdown(const tl_comparison *cmp, const tl_stats *st, FILE *out) {
  fputs("## How sure is this?\n\n", out);
  if (!cmp->group_count)
    return ferror(out) ? TL_EIO : TL_OK;
  char method[160];
  int once = tl__stats_ci_method(cmp, st, method, sizeof method);
  fputs("95% confidence intervals of each percentile's lateness, in milliseconds", out);
  if (once)
    fprintf(out, ", each row's from %s", method);
  fputs(":\n\n", out);
  tl__heads heads;
  tl__table *t = tl__stats_ci_table(cmp, st, &heads, !once);
  int rc = t ? tl__table_write(t, TL_FORMAT_MD, out) : TL_ENOMEM;
  tl__table_free(t);
  if (rc)
    return rc;
  tl__stats_notes(out, cmp, st, 1);
  return ferror(out) ? TL_EIO : TL_OK;
}

/* The rank test's bullet of pair p (a and b its groups). */
static void md_rank_test(FILE *out, const tl_pair_stats *p, const tl_group *a, const tl_group *b) {
  const tl_group *fast = p->mw.a_below_b >= 0.5 ? a : b, *slow = fast == a ? b : a;
  double share = p->mw.a_below_b >= 0.5 ? p->mw.a_below_b : 1 - p->mw.a_below_b;
  char pv[32];
  if (p->mw.p_value < 0.001)
    snprintf(pv, sizeof pv, "p < 0.001");
  else
    snprintf(pv, sizeof pv, "p = %.3f", p->mw.p_value);
  if (p->mw.p_value < 0.05) {
    fputs("- As a whole the distributions differ (Mann-Whitney, ", out);
    fputs(pv, out);
    fputs("): a call on ", out);
    tl_md_escape(out, fast->label);
    fputs(" is faster than one on ", out);
    tl_md_escape(out, slow->label);
    fprintf(out, " %.0f%% of the time.\n", share * 100);
  } else {
    fputs("- As a whole the distributions of ", out);
    tl_md_escape(out, a->label);
    fputs(" and ", out);
    tl_md_escape(out, b->label);
    fprintf(out, " are not clearly different (Mann-Whitney, %s).\n", pv);
  }
}

void tl__stats_notes(FILE *out, const tl_comparison *cmp, const tl_stats *st, int all) {
  char line[1024];
  /* Warnings: percentiles that rest on too few samples, and unbounded ends. */
  int warned = 0;
  for (size_t i = 0; i < cmp->group_count; i++) {
    const tl_group *g = &cmp->groups[i];
    for (size_t k = 0; k < g->dist.pct_count && g->dist.count; k++) {
      const tl_pct_stats *p = &st->groups[i].pct[k];
      if (!p->few)
        continue;
      fputs(warned++ ? "- " : "Warnings:\n\n- ", out);
      fprintf(out, "p%s of ", TL_PCT(g->dist.pcts[k]));
      tl_md_escape(out, g->label);
      fputs(" (", out);
      md_group_head(out, g);
      if (p->needed)
        fprintf(out,
                ") rests on too few samples: %lld above it, %d needed; collect at least %lld "
                "samples.\n",
                (long long)p->above, TL_STATS_MIN_ABOVE, (long long)p->needed);
      else
        fputs(") is the largest sample: no amount of data gives it an upper bound.\n", out);
    }
  }
  if (warned)
    fputs("\n", out);

  /* Differences, one block per probe and delay. */
  for (size_t i = 0; all && i < st->pair_count; i++) {
    const tl_pair_stats *p = &st->pairs[i];
    const tl_group *a = &cmp->groups[p->a], *b = &cmp->groups[p->b];
    if (i == 0 || !tl__same_block(&cmp->groups[st->pairs[i - 1].a], a)) {
      fputs("### ", out);
      md_group_head(out, a);
      fputs("\n\n", out);
    }
    for (size_t k = 0; k < a->dist.pct_count; k++) {
      tl_pair_sentence(cmp, st, p, k, line, sizeof line);
      fputs("- ", out);
      md_prose(out, line);
      fputs(".\n", out);
    }
    if (st->ranked) /* else the statistics were made without it */
      md_rank_test(out, p, a, b);
    if (i + 1 == st->pair_count || !tl__same_block(&cmp->groups[st->pairs[i + 1].a], a))
      fputs("\n", out);
  }

  if (!all)
    return;
  fputs("## Changes over time\n\n", out);
  size_t changes = 0;
  for (size_t i = 0; i < cmp->group_count; i++)
    for (size_t c = 0; c < st->groups[i].change_count; c++) {
      tl_change_sentence(&cmp->groups[i], &st->groups[i].changes[c], line, sizeof line);
      fputs("- ", out);
      md_prose(out, line);
      fputs(".\n", out);
      changes++;
    }
  if (!changes)
    fputs("No lasting change in the per-session p90 or p99 of any label (a change needs at least "
          "3 sessions on each side).\n",
          out);
  fputs("\nHow these are worked out, and their limits: docs/statistics.md.\n", out);
}

int tl__render_stats_markdown(tl_store *store, const tl_comparison *cmp, FILE *out, char *err,
                              size_t errlen) {
  tl_stats st;
  int rc = tl_stats_compute(store, cmp, &st, err, errlen);
  if (!rc && (rc = tl__stats_markdown(cmp, &st, out)))
    tl_fail(err, errlen, rc, "writing the statistics failed");
  tl_stats_free(&st);
  return rc;
}
