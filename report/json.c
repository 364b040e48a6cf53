/* json.c: the comparison as JSON, for scripts and dashboards. The numbers
 * are the page's own, in integer nanoseconds (means and deviations as
 * numbers with a fraction); the shape is documented in docs/report-json.md.
 * With tl_page_opts.stats it also carries the page's statistics (intervals,
 * differences between labels, changes over time) as tl_stats_compute found
 * them: this file only formats them. The first line holds the tl-report
 * marker, like every file tl writes. */
#include <math.h>
#include <string.h>

#include "report_internal.h"

static void num(FILE *o, double v) {
  if (isfinite(v))
    fprintf(o, "%.3f", v);
  else
    fputs("null", o);
}

static void dist(FILE *o, const tl_dist *d, const char *indent) {
  fprintf(o, "{\"samples\": %lld", (long long)d->count);
  if (d->count) {
    fprintf(o, ", \"min_ns\": %lld, \"max_ns\": %lld, \"mean_ns\": ", (long long)d->min_ns,
            (long long)d->max_ns);
    num(o, d->mean_ns);
    fputs(", \"stddev_ns\": ", o);
    num(o, d->stddev_ns);
    fprintf(o, ",\n%s \"percentiles\": [", indent);
    for (size_t i = 0; i < d->pct_count; i++)
      fprintf(o, "%s{\"p\": %s, \"ns\": %lld}", i ? ", " : "", TL_PCT(d->pcts[i]),
              (long long)d->pct_ns[i]);
    fputc(']', o);
  }
  fputc('}', o);
}

/* A ratio, probability or test statistic: six significant digits (a small
 * p-value keeps its size), null when not finite. */
static void real(FILE *o, double v) {
  if (isfinite(v))
    fprintf(o, "%.6g", v);
  else
    fputs("null", o);
}

/* A latency that may be unknown: -1 (the data cannot give it) is null. */
static void ns_or_null(FILE *o, int64_t v) {
  if (v < 0)
    fputs("null", o);
  else
    fprintf(o, "%lld", (long long)v);
}

static void rows(FILE *o, const tl_fact_row *r, size_t n) {
  fputc('{', o);
  for (size_t i = 0; i < n; i++) {
    fputs(i ? ", " : "", o);
    tl_fput_json(o, r[i].key);
    fputs(": ", o);
    tl_fput_json(o, r[i].value);
  }
  fputc('}', o);
}

/* ======================================================================== */
/* How sure is this? and Changes over time                                   */

/* What tl_stats_compute found about group g (its entry gs): how the
 * intervals were made, each percentile's interval and warnings, each
 * session's own p90 and p99, and the lasting changes in them. Only
 * formats what gs holds. */
static void group_stats(FILE *o, const tl_group *g, const tl_group_stats *gs) {
  fputs(",\n   \"stats\": {\"ci_method\": ", o);
  if (g->dist.count && gs->method == TL_CI_SESSIONS)
    fputs("\"sessions\"", o);
  else if (g->dist.count && gs->method == TL_CI_ORDER)
    fputs("\"order\"", o);
  else
    fputs("null", o); /* no samples: nothing to bound */
  fputs(",\n    \"percentiles\": [", o);
  for (size_t k = 0; g->dist.count && k < g->dist.pct_count; k++) {
    const tl_pct_stats *p = &gs->pct[k];
    fprintf(o, "%s{\"p\": %s, \"lo_ns\": ", k ? ",\n     " : "", TL_PCT(g->dist.pcts[k]));
    ns_or_null(o, p->lo_ns);
    fputs(", \"hi_ns\": ", o);
    ns_or_null(o, p->hi_ns);
    fprintf(o, ", \"above\": %lld, \"few\": %s, \"needed\": %lld, \"spread_ns\": %lld}",
            (long long)p->above, p->few ? "true" : "false", (long long)p->needed,
            (long long)p->spread_ns);
  }
  fputs("],\n    \"series\": [", o);
  for (size_t i = 0; i < gs->session_count; i++) {
    fprintf(o, "%s{\"started_ns\": %lld", i ? ",\n     " : "", (long long)gs->started_ns[i]);
    for (int s = 0; s < TL_STATS_SERIES; s++) {
      fprintf(o, ", \"p%s_ns\": ", TL_PCT(gs->series_pcts[s]));
      ns_or_null(o, gs->series_ns[s] ? gs->series_ns[s][i] : -1);
    }
    fputc('}', o);
  }
  fputs("],\n    \"changes\": [", o);
  for (size_t i = 0; i < gs->change_count; i++) {
    const tl_change *ch = &gs->changes[i];
    char line[1024];
    fprintf(o,
            "%s{\"p\": %s, \"session\": %zu, \"at_ns\": %lld, \"before_ns\": ", i ? ",\n     " : "",
            TL_PCT(ch->pct), ch->session_index, (long long)ch->at_ns);
    num(o, ch->before_ns);
    fputs(", \"after_ns\": ", o);
    num(o, ch->after_ns);
    fputs(", \"p_value\": ", o);
    real(o, ch->p_value);
    fputs(",\n      \"sentence\": ", o);
    tl_change_sentence(g, ch, line, sizeof line);
    tl_fput_json(o, line);
    fputc('}', o);
  }
  fputs("]}", o);
}

/* Every pair of groups of the same probe and delay: the difference at each
 * percentile with its interval and the page's sentence, and the rank test
 * of the whole distributions. */
static void pairs(FILE *o, const tl_comparison *c, const tl_stats *st) {
  fputs(",\n \"pairs\": [", o);
  for (size_t i = 0; i < st->pair_count; i++) {
    const tl_pair_stats *p = &st->pairs[i];
    const tl_group *a = &c->groups[p->a];
    char line[1024];
    fprintf(o, "%s{\"a\": %zu, \"b\": %zu, \"a_label\": ", i ? ",\n  " : "\n  ", p->a, p->b);
    tl_fput_json(o, a->label);
    fputs(", \"b_label\": ", o);
    tl_fput_json(o, c->groups[p->b].label);
    fputs(", \"probe\": ", o);
    tl_fput_json(o, a->probe);
    fprintf(o,
            ", \"delay_ns\": %lld, \"sessions_a\": %zu, \"sessions_b\": %zu, \"decided\": %s,\n"
            "   \"percentiles\": [",
            (long long)a->delay_ns, p->sessions_a, p->sessions_b, p->decided ? "true" : "false");
    for (size_t k = 0; k < a->dist.pct_count; k++) {
      fprintf(o, "%s{\"p\": %s, \"diff_ns\": %lld, \"lo_ns\": ", k ? ",\n    " : "",
              TL_PCT(a->dist.pcts[k]), (long long)p->diff_ns[k]);
      /* No interval where the sessions cannot measure run-to-run variation. */
      if (p->decided)
        fprintf(o, "%lld, \"hi_ns\": %lld", (long long)p->lo_ns[k], (long long)p->hi_ns[k]);
      else
        fputs("null, \"hi_ns\": null", o);
      fprintf(
          o,
          ", \"clear\": %s, \"spread_over\": %s, \"sessions_needed\": %lld,\n     \"sentence\": ",
          p->clear[k] ? "true" : "false", p->spread_over[k] ? "true" : "false",
          (long long)p->sessions_needed[k]);
      tl_pair_sentence(c, st, p, k, line, sizeof line);
      tl_fput_json(o, line);
      fputc('}', o);
    }
    if (!st->ranked) { /* statistics made without the rank test */
      fputs("],\n   \"mann_whitney\": null}", o);
      continue;
    }
    fputs("],\n   \"mann_whitney\": {\"u\": ", o);
    num(o, p->mw.u);
    fputs(", \"z\": ", o);
    real(o, p->mw.z);
    fputs(", \"p_value\": ", o);
    real(o, p->mw.p_value);
    fputs(", \"a_below_b\": ", o);
    real(o, p->mw.a_below_b);
    fputs("}}", o);
  }
  fputc(']', o);
}

/* The sessions left out as damaged. */
static void left_out(FILE *o, const tl_page_opts *opts) {
  fputs(",\n \"left_out\": [", o);
  for (size_t i = 0; opts->left_out && i < opts->left_out->count; i++) {
    const tl_left_out *x = &opts->left_out->items[i];
    char date[32];
    tl_date_format(x->started_ns, date, sizeof date);
    fputs(i ? ",\n  {\"uuid\": " : "\n  {\"uuid\": ", o);
    tl_fput_json(o, x->uuid);
    fputs(", \"label\": ", o);
    tl_fput_json(o, x->label);
    fprintf(o, ", \"started_ns\": %lld, \"started\": \"%s\", \"why\": ", (long long)x->started_ns,
            date);
    tl_fput_json(o, x->why);
    fputc('}', o);
  }
  fputc(']', o);
}

/* Ratios against the baseline's group of the same probe and delay. */
static void vs_baseline(FILE *o, const tl_comparison *c, const tl_group *g, int64_t armed) {
  const tl_group *b =
      c->baseline >= 0 ? tl__find_group(c, c->labels[c->baseline], g->probe, g->delay_ns) : NULL;
  if (b && b->dist.count && g->dist.count) {
    fputs(",\n   \"vs_baseline\": {\"min\": ", o);
    num(o, b->dist.min_ns ? (double)g->dist.min_ns / (double)b->dist.min_ns : NAN);
    for (size_t k = 0; k < g->dist.pct_count; k++) {
      fprintf(o, ", \"p%s\": ", TL_PCT(g->dist.pcts[k]));
      num(o, b->dist.pct_ns[k] ? (double)g->dist.pct_ns[k] / (double)b->dist.pct_ns[k] : NAN);
    }
    fputs(", \"max\": ", o);
    num(o, b->dist.max_ns ? (double)g->dist.max_ns / (double)b->dist.max_ns : NAN);
    fputs(", \"mean\": ", o);
    num(o, b->dist.mean_ns > 0 ? g->dist.mean_ns / b->dist.mean_ns : NAN);
    fputs("},\n   \"vs_baseline_lateness\": {", o);
    for (size_t k = 0; k < g->dist.pct_count; k++) {
      int64_t bl = b->dist.pct_ns[k] - armed, gl = g->dist.pct_ns[k] - armed;
      double r = tl_lateness_ratio(bl, gl);
      fprintf(o, "%s\"p%s\": {\"diff_ns\": %lld, \"ratio\": ", k ? ", " : "",
              TL_PCT(g->dist.pcts[k]), (long long)(gl - bl));
      num(o, r > 0 ? r : NAN);
      fputc('}', o);
    }
    fputc('}', o);
  }
}

/* groups[i]: its distribution, lateness, baseline ratios, chart points,
 * causes and statistics. */
static void json_group(FILE *o, const tl_comparison *c, const tl_stats *st, size_t i) {
  const tl_group *g = &c->groups[i];
  fputs(i ? ",\n  {" : "\n  {", o);
  fputs("\"label\": ", o);
  tl_fput_json(o, g->label);
  fputs(", \"probe\": ", o);
  tl_fput_json(o, g->probe);
  fprintf(o,
          ", \"delay_ns\": %lld, \"sessions\": %zu,\n   \"distribution\": ", (long long)g->delay_ns,
          g->session_count);
  dist(o, &g->dist, "  ");
  int64_t armed = tl_probe_armed_ns(g->probe, g->delay_ns);
  fprintf(o, ",\n   \"armed_ns\": %lld", (long long)armed);
  if (g->dist.count) {
    fputs(",\n   \"overshoot_ns\": ", o);
    num(o, g->dist.mean_ns - (double)g->delay_ns);
    /* What the page compares: each value minus the delay really armed. */
    fprintf(o, ",\n   \"lateness\": {\"min_ns\": %lld, \"max_ns\": %lld, \"mean_ns\": ",
            (long long)(g->dist.min_ns - armed), (long long)(g->dist.max_ns - armed));
    num(o, g->dist.mean_ns - (double)armed);
    fputs(", \"percentiles\": [", o);
    for (size_t k = 0; k < g->dist.pct_count; k++)
      fprintf(o, "%s{\"p\": %s, \"ns\": %lld}", k ? ", " : "", TL_PCT(g->dist.pcts[k]),
              (long long)(g->dist.pct_ns[k] - armed));
    fputs("]}", o);
  }
  vs_baseline(o, c, g, armed);
  fputs(",\n   \"spectrum\": [", o);
  for (size_t k = 0; g->spectrum.count && k < g->spectrum.pct_count; k++)
    fprintf(o, "%s{\"p\": %s, \"ns\": %lld}", k ? ", " : "", TL_PCT(g->spectrum.pcts[k]),
            (long long)g->spectrum.pct_ns[k]);
  fprintf(o, "],\n   \"histogram\": {\"lo_ns\": %lld, \"width_ns\": %lld, \"counts\": [",
          (long long)g->hist_lo_ns, (long long)g->hist_width_ns);
  for (int k = 0; k < TL_HIST_BINS; k++)
    fprintf(o, "%s%lld", k ? ", " : "", (long long)g->hist[k]);
  fprintf(o, "], \"above\": %lld}", (long long)g->hist_over);
  tl__causes_json(o, c, i);
  if (st)
    group_stats(o, g, &st->groups[i]);
  fputc('}', o);
}

/* sessions[i]: what it is, where it ran, its facts, tags and own values. */
static void json_session(FILE *o, const tl_comparison *c, size_t i) {
  const tl_session *s = &c->sessions.items[i];
  const tl_session_detail *d = &c->details[i];
  fputs(i ? ",\n  {" : "\n  {", o);
  fputs("\"uuid\": ", o);
  tl_fput_json(o, s->uuid);
  fputs(", \"run_uuid\": ", o);
  tl_fput_json(o, s->run_uuid);
  fputs(", \"label\": ", o);
  tl_fput_json(o, d->label ? d->label : s->label);
  if (c->by) {
    fputs(", \"group\": ", o);
    tl_fput_json(o, s->label);
  }
  fputs(", \"probe\": ", o);
  tl_fput_json(o, s->probe);
  fprintf(o, ", \"delay_ns\": %lld,\n   \"started_ns\": %lld, \"ended_ns\": %lld, \"status\": ",
          (long long)s->delay_ns, (long long)s->started_ns, (long long)s->ended_ns);
  tl_fput_json(o, s->status);
  fprintf(o, ", \"samples\": %lld, \"missed_periods\": %lld, \"warmup\": %lld,\n   \"host\": ",
          (long long)s->sample_count, (long long)s->missed_periods, (long long)s->warmup);
  tl_fput_json(o, s->host_fingerprint);
  fputs(", \"hostname\": ", o);
  tl_fput_json(o, s->hostname);
  fputs(", \"tl_version\": ", o);
  tl_fput_json(o, s->tl_version);
  fputs(", \"libuv_version\": ", o);
  tl_fput_json(o, s->libuv_version);
  fputs(",\n   \"command_line\": ", o);
  tl_fput_json(o, s->command_line);
  fputs(",\n   \"tags\": ", o);
  rows(o, d->tags, d->tag_count);
  fputs(",\n   \"facts\": ", o);
  rows(o, d->facts, d->fact_count);
  fputs(",\n   \"distribution\": ", o);
  tl_dist own;
  tl__session_dist(d, 0, 3, &own);
  dist(o, &own, "  ");
  tl__causes_session_json(o, c, i);
  fputc('}', o);
}

int tl__render_json(const tl_comparison *c, const tl_page_opts *opts, FILE *o) {
  /* The statistics, when computed for this comparison (one entry per group). */
  const tl_stats *st = tl__stats_for(c, opts);
  fputs("{\"format\": \"" TL_REPORT_MARKER "\", \"version\": 1,\n", o);
  if (opts->generated_ns > 0) {
    char date[32];
    tl_date_format(opts->generated_ns, date, sizeof date);
    fprintf(o, " \"generated\": \"%s\",\n", date);
  }
  fputs(" \"labels\": [", o);
  for (size_t i = 0; i < c->label_count; i++) {
    fputs(i ? ", " : "", o);
    tl_fput_json(o, c->labels[i]);
  }
  fputs("],\n \"by\": ", o);
  if (c->by)
    tl_fput_json(o, c->by);
  else
    fputs("null", o);
  if (c->by)
    tl__by_json(o, c);
  fputs(",\n \"baseline\": ", o);
  if (c->baseline >= 0)
    tl_fput_json(o, c->labels[c->baseline]);
  else
    fputs("null", o);
  left_out(o, opts);
  fputs(",\n \"groups\": [", o);
  for (size_t i = 0; i < c->group_count; i++)
    json_group(o, c, st, i);
  fputc(']', o);
  if (st)
    pairs(o, c, st);
  fputs(",\n \"sessions\": [", o);
  for (size_t i = 0; i < c->sessions.count; i++)
    json_session(o, c, i);
  fputs("]\n}\n", o);
  return ferror(o) ? TL_EIO : TL_OK;
}
