/* causes.c: why the tail is long. For each label, probe and delay it takes
 * the samples above the p99 and the time each spent past the p50 (the
 * floor every sample pays: the timer slack and the wake-up path), and
 * splits that time by what tlcollect recorded:
 *
 * - waiting for a CPU: the measuring thread's run-queue wait during the
 *   sample, at most the sample's own time past the p50; of it, "throttled"
 *   when the session's cgroup counted throttled quota periods;
 * - not attributed: the rest, and every tail sample whose causes were not
 *   read (a child probe, macOS, a sample tl did not keep).
 *
 * The tail's count and time come from the sessions' stored histograms
 * (within 1/2048 of each value), the causes from the slowest samples tl
 * kept with their run-queue wait. Steal and interrupt time are known only
 * per second and host-wide, so they are shown beside the split as shares
 * of the CPU time during the sessions, never put into it: a sample is not
 * blamed on the hypervisor because the hypervisor stole time that second. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"

/* ======================================================================== */
/* Computing                                                                 */

/* Index of percentile want among the group's, or -1. */
static int pct_index(const tl_dist *d, double want) {
  for (size_t k = 0; k < d->pct_count; k++)
    if (fabs(d->pcts[k] - want) < 1e-9)
      return (int)k;
  return -1;
}

typedef struct {
  int64_t p50, p99;
  tl_group_causes *gc;
} tail_ctx;

/* Counts one session's samples above the p99 and their time past p50,
 * from its histogram: the midpoint of each bucket above the p99's. */
static int count_tail(void *arg, size_t index, const tl_summary *m) {
  (void)index;
  tail_ctx *t = arg;
  for (size_t k = 0; k < m->hist_len; k++) {
    int64_t lo, hi, n = m->hist[k];
    if (!n)
      continue;
    tl_summary_bucket_bounds(m->hist_first + k, &lo, &hi);
    if (lo <= t->p99)
      continue;
    if (hi > m->max_ns)
      hi = m->max_ns;
    t->gc->tail_samples += n;
    t->gc->tail_ns += n * (lo + (hi - lo) / 2 - t->p50);
  }
  return 0;
}

/* The session's counters over its whole time: periods, throttled periods,
 * steal and IRQ time, and the time they cover. */
typedef struct {
  int64_t periods, throttled, steal_ns, irq_ns, span_ms;
  int have_periods, have_steal, any;
} counter_sums;

static void sum_counters(tl_store *store, int64_t id, counter_sums *cs) {
  tl_counter_row *r;
  size_t n;
  if (tl_store_counters(store, id, &r, &n) != TL_OK)
    return;
  cs->any |= n > 0;
  for (size_t i = 0; i < n; i++) {
    if (r[i].nr_periods >= 0 && r[i].nr_throttled >= 0) {
      cs->periods += r[i].nr_periods;
      cs->throttled += r[i].nr_throttled;
      cs->have_periods = 1;
    }
    if (r[i].steal_ns >= 0 && r[i].irq_ns >= 0 && r[i].softirq_ns >= 0) {
      cs->steal_ns += r[i].steal_ns;
      cs->irq_ns += r[i].irq_ns + r[i].softirq_ns;
      cs->span_ms += r[i].span_ms;
      cs->have_steal = 1;
    }
  }
  free(r);
}

/* Adds one session's kept causes of tail samples to gc; throttled says the
 * session's cgroup throttled. Whether the session recorded causes at all. */
static int add_causes(tl_store *store, int64_t id, int64_t p50, int64_t p99, int throttled,
                      tl_group_causes *gc) {
  tl_cause *c;
  size_t n;
  tl_cause_sums sums;
  if (tl_store_causes(store, id, &c, &n, &sums) != TL_OK)
    return 0; /* damaged: its tail stays not attributed */
  for (size_t i = 0; i < n; i++) {
    /* Kept latencies are to the microsecond: above the p99 by more than
     * the rounding, so that a sample at the p99 is not counted. */
    if (c[i].latency_ns <= p99 + 500 || c[i].runq_wait_ns < 0)
      continue;
    int64_t past = c[i].latency_ns - p50;
    int64_t wait = c[i].runq_wait_ns < past ? c[i].runq_wait_ns : past;
    gc->measured_samples++;
    gc->cpu_wait_ns += wait;
    if (throttled)
      gc->throttled_ns += wait;
    gc->nivcsw += c[i].nivcsw > 0 ? c[i].nivcsw : 0;
    gc->migrations += c[i].migrated > 0;
  }
  free(c);
  return sums.samples > 0;
}

static int group_causes(tl_store *store, const tl_comparison *c, const tl_group *g,
                        tl_group_causes *gc) {
  memset(gc, 0, sizeof *gc);
  gc->timer_slack_ns = -1;
  gc->periods = gc->throttled_periods = -1;
  gc->steal_pct = gc->irq_pct = NAN;
  int k50 = pct_index(&g->dist, 50), k99 = pct_index(&g->dist, 99);
  if (k50 < 0 || k99 < 0 || !g->dist.count)
    return TL_OK;
  int64_t p50 = g->dist.pct_ns[k50], p99 = g->dist.pct_ns[k99];
  gc->floor_ns = p50 - tl_probe_armed_ns(g->probe, g->delay_ns);
  tail_ctx t = {p50, p99, gc};
  if (tl_store_summaries(store, g->session_ids, g->session_count, count_tail, &t) != TL_OK)
    return TL_OK; /* no histogram: no tail to split */
  counter_sums all = {0};
  double cpus = 0;
  int recorded = 0; /* a session recorded causes or counters: there is something to say */
  size_t from = 0;
  for (size_t s = 0; s < g->session_count; s++) {
    counter_sums cs = {0};
    sum_counters(store, g->session_ids[s], &cs);
    recorded |=
        add_causes(store, g->session_ids[s], p50, p99, cs.have_periods && cs.throttled > 0, gc);
    recorded |= cs.any;
    all.periods += cs.periods;
    all.throttled += cs.throttled;
    all.have_periods |= cs.have_periods;
    all.steal_ns += cs.steal_ns;
    all.irq_ns += cs.irq_ns;
    all.span_ms += cs.span_ms;
    all.have_steal |= cs.have_steal;
    ptrdiff_t i = tl__session_index(c, g->session_ids[s], &from);
    if (i < 0)
      continue;
    const tl_session_detail *d = &c->details[i];
    const char *v = tl__fact(d, "timer_slack_ns");
    if (v && gc->timer_slack_ns < 0 && strspn(v, "0123456789") == strlen(v) && *v)
      gc->timer_slack_ns = strtoll(v, NULL, 10);
    v = tl__fact(d, "cgroup.cpu_quota");
    if (v && !gc->quota[0] && strcmp(v, "unknown") != 0)
      snprintf(gc->quota, sizeof gc->quota, "%s", v);
    v = tl__fact(d, "cpu.logical");
    if (v && cpus == 0)
      cpus = strtod(v, NULL);
  }
  if (all.have_periods) {
    gc->periods = all.periods;
    gc->throttled_periods = all.throttled;
  }
  if (all.have_steal && all.span_ms > 0 && cpus > 0) {
    double cpu_ns = (double)all.span_ms * 1e6 * cpus;
    gc->steal_pct = 100.0 * (double)all.steal_ns / cpu_ns;
    gc->irq_pct = 100.0 * (double)all.irq_ns / cpu_ns;
  }
  /* The histogram's midpoints and the kept microseconds may disagree by a
   * hair: the split never claims more than the tail holds. */
  if (gc->measured_samples > gc->tail_samples)
    gc->measured_samples = gc->tail_samples;
  if (gc->cpu_wait_ns > gc->tail_ns)
    gc->cpu_wait_ns = gc->tail_ns;
  if (gc->throttled_ns > gc->cpu_wait_ns)
    gc->throttled_ns = gc->cpu_wait_ns;
  gc->not_attributed_ns = gc->tail_ns - gc->cpu_wait_ns;
  gc->known = recorded && gc->tail_samples > 0 && gc->tail_ns > 0;
  return TL_OK;
}

int tl__causes_compute(tl_store *store, tl_comparison *c) {
  if (!c->group_count)
    return TL_OK;
  c->causes = calloc(c->group_count, sizeof *c->causes);
  if (!c->causes)
    return TL_ENOMEM;
  for (size_t i = 0; i < c->group_count; i++)
    group_causes(store, c, &c->groups[i], &c->causes[i]);
  return TL_OK;
}

/* ======================================================================== */
/* Saying it                                                                 */

static double share(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * (double)part / (double)whole : 0;
}

static const tl_group_causes *causes_of(const tl_comparison *c, size_t i) {
  return c->causes && c->causes[i].known ? &c->causes[i] : NULL;
}

/* "On droplet, 84 % of the time past p99 of setTimeout(1) was spent waiting
 * for a CPU: the 0.2-CPU quota throttled 81 of 83 periods." */
static void sentence(FILE *f, const tl_comparison *c, size_t i) {
  const tl_group *g = &c->groups[i];
  const tl_group_causes *gc = &c->causes[i];
  char call[96];
  tl__call_name(g->probe, g->delay_ns, call, sizeof call);
  fputs("- On **", f);
  tl_md_escape(f, g->label);
  fputs("**, ", f);
  if (!gc->measured_samples) {
    fputs("the time past p99 of ", f);
    tl_md_escape(f, call);
    fputs(" is not attributed: no causes were recorded for its slowest samples", f);
  } else {
    fprintf(f, "%.0f %% of the time past p99 of ", share(gc->cpu_wait_ns, gc->tail_ns));
    tl_md_escape(f, call);
    fputs(" was spent waiting for a CPU", f);
    if (gc->throttled_periods > 0 && gc->periods > 0) {
      fputs(": the ", f);
      if (gc->quota[0] && strcmp(gc->quota, "none") != 0) {
        tl_md_escape(f, gc->quota);
        fputs("-CPU ", f);
      }
      fprintf(f, "quota throttled %lld of %lld periods", (long long)gc->throttled_periods,
              (long long)gc->periods);
    }
    fprintf(f, "; %.0f %% is not attributed", share(gc->not_attributed_ns, gc->tail_ns));
  }
  if (isfinite(gc->steal_pct) && gc->steal_pct >= 1)
    fprintf(f, " (the hypervisor stole %.0f %% of the CPU time meanwhile)", gc->steal_pct);
  fputs(".\n", f);
}

void tl__causes_answer(tl__page *p) {
  const tl_comparison *c = p->c;
  int any = 0;
  for (size_t i = 0; i < c->group_count; i++)
    any |= causes_of(c, i) && c->causes[i].measured_samples > 0;
  if (!any)
    return;
  FILE *f = tl__prose(p);
  fputs("Why the tail is long ([details](#why-the-tail-is-long)):\n\n", f);
  for (size_t i = 0; i < c->group_count; i++)
    if (causes_of(c, i))
      sentence(f, c, i);
  fputc('\n', f);
}

/* A stacked bar per label of one group: waiting for a CPU (throttled and
 * not), not attributed; widths are shares of the time past p99. */
static void bars(tl__page *p, const tl_comparison *c) {
  FILE *o = p->out;
  size_t n = 0;
  for (size_t i = 0; i < c->group_count; i++)
    n += causes_of(c, i) != NULL;
  const double w = 720, left = 200, barw = 400, rowh = 26, top = 28;
  double h = top + rowh * (double)n + 10;
  p->chart_id++;
  fprintf(o,
          "<figure><svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" "
          "width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"Why the tail is long\">"
          "<title>Why the tail is long</title><desc>For each label, probe and delay, the time "
          "its samples above p99 spent past the p50, split into waiting for a CPU (throttled by "
          "a quota, or not) and not attributed.</desc>\n",
          w, h, w, h);
  static const char *const names[] = {"throttled", "waiting for a CPU", "not attributed"};
  static const char *const fills[] = {"#b2182b", "#ef8a62", "#bababa"};
  for (int k = 0; k < 3; k++) {
    fprintf(o, "<rect x=\"%.0f\" y=\"6\" width=\"10\" height=\"10\" fill=\"%s\"/>",
            left + 140.0 * k, fills[k]);
    fprintf(o, "<text x=\"%.0f\" y=\"15\" font-size=\"11\">%s</text>\n", left + 140.0 * k + 14,
            names[k]);
  }
  double y = top;
  for (size_t i = 0; i < c->group_count; i++) {
    const tl_group_causes *gc = causes_of(c, i);
    if (!gc)
      continue;
    char call[96], name[256];
    tl__call_name(c->groups[i].probe, c->groups[i].delay_ns, call, sizeof call);
    snprintf(name, sizeof name, "%s, %s", c->groups[i].label, call);
    fprintf(o, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\" font-size=\"11\">", left - 6,
            y + 14);
    tl_html_escape(o, name);
    fputs("</text>", o);
    const int64_t parts[] = {gc->throttled_ns, gc->cpu_wait_ns - gc->throttled_ns,
                             gc->not_attributed_ns};
    double x = left;
    for (int k = 0; k < 3; k++) {
      double bw = barw * share(parts[k], gc->tail_ns) / 100.0;
      if (bw > 0)
        fprintf(o, "<rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"18\" fill=\"%s\"/>", x, y,
                bw, fills[k]);
      x += bw;
    }
    fprintf(o, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\">%.0f %% CPU wait</text>\n",
            left + barw + 6, y + 14, share(gc->cpu_wait_ns, gc->tail_ns));
    y += rowh;
  }
  fputs("</svg><figcaption>The time past p50 of the samples above p99, by cause."
        "</figcaption></figure>\n",
        o);
}

int tl__causes_any(const tl_comparison *c) {
  for (size_t i = 0; i < c->group_count; i++)
    if (causes_of(c, i))
      return 1;
  return 0;
}

void tl__causes_section(tl__page *p) {
  const tl_comparison *c = p->c;
  if (!tl__causes_any(c))
    return;
  tl__heading(p, "why-the-tail-is-long", "Why the tail is long");
  fputs("For each label, probe and delay: the samples above its p99, and the time each spent "
        "past the p50 (the floor every sample pays, timer slack included), split into waiting "
        "for a CPU (the measuring thread's run-queue wait during the sample; throttled when the "
        "session's cgroup counted throttled quota periods) and not attributed. What tl did not "
        "measure (a probe in another process, macOS, a sample whose causes were not kept) is "
        "not attributed, never guessed. Steal and IRQ time are known per second and host-wide "
        "only: they are shown as shares of the CPU time during the sessions, not in the split.\n\n",
        tl__prose(p));
  if (p->o->format == TL_FORMAT_HTML) {
    tl__prose_flush(p);
    bars(p, c);
  }
  static const char *const head[] = {
      "label",       "call",        "tail samples",      "past p50",
      "CPU wait %",  "throttled %", "not attributed %",  "floor (p50)",
      "timer slack", "quota",       "throttled periods", "steal %",
      "IRQ %"};
  tl__table *t = tl__table_new(13, head, "llrrrrrrrlrrr");
  for (size_t i = 0; t && i < c->group_count; i++) {
    const tl_group_causes *gc = causes_of(c, i);
    if (!gc)
      continue;
    char call[96], buf[64];
    tl__call_name(c->groups[i].probe, c->groups[i].delay_ns, call, sizeof call);
    tl__table_add(t, c->groups[i].label);
    tl__table_add(t, call);
    tl__table_addf(t, "%lld (%lld measured)", (long long)gc->tail_samples,
                   (long long)gc->measured_samples);
    tl__say_time((double)gc->tail_ns, buf, sizeof buf);
    tl__table_add(t, buf);
    tl__table_addf(t, "%.1f", share(gc->cpu_wait_ns, gc->tail_ns));
    tl__table_addf(t, "%.1f", share(gc->throttled_ns, gc->tail_ns));
    tl__table_addf(t, "%.1f", share(gc->not_attributed_ns, gc->tail_ns));
    tl__say_time((double)gc->floor_ns, buf, sizeof buf);
    tl__table_add(t, buf);
    if (gc->timer_slack_ns >= 0)
      tl__say_time((double)gc->timer_slack_ns, buf, sizeof buf);
    tl__table_add(t, gc->timer_slack_ns >= 0 ? buf : "unknown");
    tl__table_add(t, gc->quota[0] ? gc->quota : "unknown");
    if (gc->periods >= 0)
      tl__table_addf(t, "%lld of %lld", (long long)gc->throttled_periods, (long long)gc->periods);
    else
      tl__table_add(t, "unknown");
    if (isfinite(gc->steal_pct)) {
      tl__table_addf(t, "%.1f", gc->steal_pct);
      tl__table_addf(t, "%.1f", gc->irq_pct);
    } else {
      tl__table_add(t, "unknown");
      tl__table_add(t, "unknown");
    }
  }
  tl__put_table(p, t);
}

void tl__causes_json(FILE *o, const tl_comparison *c, size_t i) {
  const tl_group_causes *gc = causes_of(c, i);
  if (!gc)
    return;
  fprintf(o,
          ",\n   \"causes\": {\"above\": 99, \"tail_samples\": %lld, \"measured_samples\": %lld, "
          "\"past_p50_ns\": %lld, \"cpu_wait_ns\": %lld, \"throttled_ns\": %lld, "
          "\"not_attributed_ns\": %lld, \"nivcsw\": %lld, \"migrations\": %lld,\n"
          "    \"floor_ns\": %lld, \"timer_slack_ns\": ",
          (long long)gc->tail_samples, (long long)gc->measured_samples, (long long)gc->tail_ns,
          (long long)gc->cpu_wait_ns, (long long)gc->throttled_ns, (long long)gc->not_attributed_ns,
          (long long)gc->nivcsw, (long long)gc->migrations, (long long)gc->floor_ns);
  if (gc->timer_slack_ns >= 0)
    fprintf(o, "%lld", (long long)gc->timer_slack_ns);
  else
    fputs("null", o);
  fputs(", \"quota_cpus\": ", o);
  if (gc->quota[0])
    tl_fput_json(o, gc->quota);
  else
    fputs("null", o);
  if (gc->periods >= 0)
    fprintf(o, ", \"periods\": %lld, \"throttled_periods\": %lld", (long long)gc->periods,
            (long long)gc->throttled_periods);
  else
    fputs(", \"periods\": null, \"throttled_periods\": null", o);
  if (isfinite(gc->steal_pct))
    fprintf(o, ", \"steal_pct\": %.3f, \"irq_pct\": %.3f}", gc->steal_pct, gc->irq_pct);
  else
    fputs(", \"steal_pct\": null, \"irq_pct\": null}", o);
}
