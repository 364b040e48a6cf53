/* causes_page.c: why the tail is long, as the page and JSON say it (computed
 * in causes.c): a sentence per group in the answer box, the section's table
 * and, in HTML, a stacked bar per label above p99 and p90; each session's
 * per-second counters beside the list of sessions. What tl did not measure
 * is "not attributed", never guessed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"

/* ======================================================================== */
/* Saying it                                                                 */

static double share(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * (double)part / (double)whole : 0;
}

static const tl_group_causes *causes_of(const tl_comparison *c, size_t i) {
  return c->causes && c->causes[i].known ? &c->causes[i] : NULL;
}

/* The split above p99 (k 0) or above p90 (k 1); NULL when there is none. */
static const tl_tail_split *split_of(const tl_group_causes *gc, int k, tl_tail_split *buf) {
  if (k == 1)
    return gc->at90.known && gc->at90.tail_samples > 0 ? &gc->at90 : NULL;
  *buf = (tl_tail_split){1,
                         gc->tail_samples,
                         gc->tail_ns,
                         gc->measured_samples,
                         gc->cpu_wait_ns,
                         gc->throttled_ns,
                         gc->not_attributed_ns};
  return buf;
}

static const char *const split_name[2] = {"p99", "p90"};

/* "On droplet, 84 % of the time past p99 of setTimeout(1) was spent waiting
 * for a CPU: the 0.2-CPU quota throttled 81 of 83 periods." Said of the
 * samples above p90 when none above p99 had their causes read (a p99 of
 * too few samples, the slowest not kept) but some above p90 had. */
static void sentence(FILE *f, const tl_comparison *c, size_t i) {
  const tl_group *g = &c->groups[i];
  const tl_group_causes *gc = &c->causes[i];
  tl_tail_split buf;
  const tl_tail_split *sp = split_of(gc, 0, &buf);
  int k = 0;
  if (!sp->measured_samples && split_of(gc, 1, &buf) && gc->at90.measured_samples)
    sp = &gc->at90, k = 1;
  char call[96];
  tl__call_name(g->probe, g->delay_ns, call, sizeof call);
  fputs("- On **", f);
  tl_md_escape(f, g->label);
  fputs("**, ", f);
  if (!sp->measured_samples) {
    fputs("the time past p99 of ", f);
    tl_md_escape(f, call);
    fputs(" is not attributed: no causes were recorded for its slowest samples", f);
  } else {
    fprintf(f, "%.0f %% of the time past %s of ", share(sp->cpu_wait_ns, sp->tail_ns),
            split_name[k]);
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
    fprintf(f, "; %.0f %% is not attributed", share(sp->not_attributed_ns, sp->tail_ns));
  }
  if (isfinite(gc->steal_pct) && gc->steal_pct >= 1)
    fprintf(f, " (the hypervisor stole %.0f %% of the CPU time meanwhile)", gc->steal_pct);
  fputs(".\n", f);
}

void tl__causes_answer(tl__page *p) {
  const tl_comparison *c = p->c;
  int any = 0;
  for (size_t i = 0; i < c->group_count; i++)
    any |= causes_of(c, i) &&
           (c->causes[i].measured_samples > 0 || c->causes[i].at90.measured_samples > 0);
  if (!any)
    return;
  FILE *f = tl__prose(p);
  fputs("Why the tail is long ([details](#why-the-tail-is-long)):\n\n", f);
  for (size_t i = 0; i < c->group_count; i++)
    if (causes_of(c, i))
      sentence(f, c, i);
  fputc('\n', f);
}

/* Two stacked bars per label of one group, above p99 and above p90:
 * waiting for a CPU (throttled and not), not attributed; widths are shares
 * of the time past p50. */
static void bars(tl__page *p, const tl_comparison *c) {
  FILE *o = p->out;
  size_t n = 0;
  tl_tail_split buf;
  for (size_t i = 0; i < c->group_count; i++)
    for (int k = 0; k < 2; k++)
      n += causes_of(c, i) && split_of(&c->causes[i], k, &buf);
  const double w = 720, left = 200, barw = 400, rowh = 26, top = 28;
  double h = top + rowh * (double)n + 10;
  p->chart_id++;
  fprintf(o,
          "<figure><svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" "
          "width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"Why the tail is long\">"
          "<title>Why the tail is long</title><desc>For each label, probe and delay, the time "
          "its samples above p99, and above p90, spent past the p50, split into waiting for a CPU "
          "(throttled by "
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
    for (int k = 0; gc && k < 2; k++) {
      const tl_tail_split *sp = split_of(gc, k, &buf);
      if (!sp)
        continue;
      char call[96], name[256];
      tl__call_name(c->groups[i].probe, c->groups[i].delay_ns, call, sizeof call);
      snprintf(name, sizeof name, "%s, %s, %s", c->groups[i].label, call, split_name[k]);
      fprintf(o, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\" font-size=\"11\">", left - 6,
              y + 14);
      tl_html_escape(o, name);
      fputs("</text>", o);
      const int64_t parts[] = {sp->throttled_ns, sp->cpu_wait_ns - sp->throttled_ns,
                               sp->not_attributed_ns};
      double x = left;
      for (int j = 0; j < 3; j++) {
        double bw = barw * share(parts[j], sp->tail_ns) / 100.0;
        if (bw > 0)
          fprintf(o, "<rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"18\" fill=\"%s\"/>", x, y,
                  bw, fills[j]);
        x += bw;
      }
      fprintf(o, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\">%.0f %% CPU wait</text>\n",
              left + barw + 6, y + 14, share(sp->cpu_wait_ns, sp->tail_ns));
      y += rowh;
    }
  }
  fputs("</svg><figcaption>The time past p50 of the samples above p99 and above p90, by cause."
        "</figcaption></figure>\n",
        o);
}

int tl__causes_any(const tl_comparison *c) {
  for (size_t i = 0; i < c->group_count; i++)
    if (causes_of(c, i))
      return 1;
  return 0;
}

/* The cells of a table row that belong to the group, not to a split. */
static void group_cells(tl__table *t, const tl_group_causes *gc) {
  char buf[64];
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

void tl__causes_section(tl__page *p) {
  const tl_comparison *c = p->c;
  if (!tl__causes_any(c))
    return;
  tl__heading(p, "why-the-tail-is-long", "Why the tail is long");
  fputs("For each label, probe and delay: the samples above its p99, and above its p90, and the "
        "time each spent past the p50 (the floor every sample pays, timer slack included), split "
        "into waiting for a CPU (the measuring thread's run-queue wait during the sample; "
        "throttled when the session's cgroup counted throttled quota periods) and not attributed. "
        "Above p99 each of the slowest samples' own wait counts; above p90, each session's wait "
        "summed by latency band (eight bands a doubling), the band across the p90 not "
        "attributed. What tl did not measure (a probe in another process, macOS, a sample whose "
        "causes were not kept) is not attributed, never guessed. Steal and IRQ time are known "
        "per second and host-wide only: they are shown as shares of the CPU time during the "
        "sessions, not in the split.\n\n",
        tl__prose(p));
  if (p->o->format == TL_FORMAT_HTML) {
    tl__prose_flush(p);
    bars(p, c);
  }
  static const char *const head[] = {
      "label",       "call",        "above",       "tail samples",
      "past p50",    "CPU wait %",  "throttled %", "not attributed %",
      "floor (p50)", "timer slack", "quota",       "throttled periods",
      "steal %",     "IRQ %"};
  tl__table *t = tl__table_new(14, head, "lllrrrrrrrlrrr");
  tl_tail_split buf2;
  for (size_t i = 0; t && i < c->group_count; i++) {
    const tl_group_causes *gc = causes_of(c, i);
    for (int k = 0; gc && k < 2; k++) {
      const tl_tail_split *sp = split_of(gc, k, &buf2);
      if (!sp)
        continue;
      char call[96], buf[64];
      tl__call_name(c->groups[i].probe, c->groups[i].delay_ns, call, sizeof call);
      tl__table_add(t, c->groups[i].label);
      tl__table_add(t, call);
      tl__table_add(t, split_name[k]);
      tl__table_addf(t, "%lld (%lld measured)", (long long)sp->tail_samples,
                     (long long)sp->measured_samples);
      tl__say_time((double)sp->tail_ns, buf, sizeof buf);
      tl__table_add(t, buf);
      tl__table_addf(t, "%.1f", share(sp->cpu_wait_ns, sp->tail_ns));
      tl__table_addf(t, "%.1f", share(sp->throttled_ns, sp->tail_ns));
      tl__table_addf(t, "%.1f", share(sp->not_attributed_ns, sp->tail_ns));
      group_cells(t, gc);
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
    fprintf(o, ", \"steal_pct\": %.3f, \"irq_pct\": %.3f", gc->steal_pct, gc->irq_pct);
  else
    fputs(", \"steal_pct\": null, \"irq_pct\": null", o);
  const tl_tail_split *a = &gc->at90;
  if (a->known)
    fprintf(o,
            ",\n    \"p90\": {\"above\": 90, \"tail_samples\": %lld, \"measured_samples\": %lld, "
            "\"past_p50_ns\": %lld, \"cpu_wait_ns\": %lld, \"throttled_ns\": %lld, "
            "\"not_attributed_ns\": %lld}}",
            (long long)a->tail_samples, (long long)a->measured_samples, (long long)a->tail_ns,
            (long long)a->cpu_wait_ns, (long long)a->throttled_ns, (long long)a->not_attributed_ns);
  else
    fputs(", \"p90\": null}", o);
}

/* ======================================================================== */
/* Each session's counters, beside the list of sessions                      */

/* As many sessions' counters as Markdown lists, like the sessions: the
 * rest are in HTML and JSON, so that the page does not grow with the runs. */
enum { COUNTERS_MD_MAX = 24 };

static const tl_session_counters *counters_of(const tl_comparison *c, size_t i) {
  return c->counters && c->counters[i].known ? &c->counters[i] : NULL;
}

/* "0.4 / 3.1" to digits places, or "unknown". */
static void add_pair(tl__table *t, const double v[2], int digits) {
  if (isfinite(v[0]))
    tl__table_addf(t, "%.*f / %.*f", digits, v[0], digits, v[1]);
  else
    tl__table_add(t, "unknown");
}

void tl__causes_counters(tl__page *p) {
  const tl_comparison *c = p->c;
  size_t n = 0;
  for (size_t i = 0; i < c->sessions.count; i++)
    n += counters_of(c, i) != NULL;
  if (!n)
    return;
  int html = p->o->format == TL_FORMAT_HTML;
  FILE *f = tl__prose(p);
  fputs("### What the host was doing\n\n", f);
  if (!html && n > COUNTERS_MD_MAX) {
    fprintf(f,
            "The counters of %zu sessions are in the HTML page (`--format html`) and in JSON "
            "(`--format json`, `sessions[].counters`).\n\n",
            n);
    return;
  }
  fputs("The counters tlcollect read about once a second during each session, host-wide but for "
        "the throttling (the session's cgroup): the median and the highest interval (a second; "
        "longer in sessions of more than 2048 seconds, which keep at most 2048 intervals). Steal "
        "and IRQ time are CPU time summed over the CPUs; CPU pressure is the share of the time "
        "some task waited for a CPU (PSI, where the kernel has it). These are not split per "
        "sample: a second with steal does not make its samples late.\n\n",
        f);
  static const char *const head[] = {"started (UTC)",     "label",      "host",
                                     "seconds",           "steal ms/s", "IRQ ms/s",
                                     "switches/s",        "runnable",   "CPU pressure %",
                                     "throttled periods", "throttled",  "CPU 0 MHz"};
  tl__table *t = tl__table_new(12, head, "lllrrrrrrrrr");
  for (size_t i = 0; t && i < c->sessions.count; i++) {
    const tl_session_counters *sc = counters_of(c, i);
    if (!sc)
      continue;
    const tl_session *s = &c->sessions.items[i];
    const tl_session_detail *d = &c->details[i];
    char buf[64], href[128];
    tl_date_format(s->started_ns, buf, sizeof buf);
    tl__table_addf(t, "%.10s %.5s", buf, buf + 11);
    const char *own = d->label ? d->label : s->label;
    tl__table_link(t, tl__table_add(t, own), tl__label_href(p, own, href, sizeof href));
    tl__table_link(t, tl__table_add(t, s->hostname),
                   tl__host_href(p, s->host_fingerprint, href, sizeof href));
    tl__table_addf(t, "%.0f", (double)sc->span_ms / 1e3);
    add_pair(t, sc->steal_ms, 1);
    add_pair(t, sc->irq_ms, 1);
    add_pair(t, sc->ctxt, 0);
    if (sc->runnable[0] >= 0)
      tl__table_addf(t, "%lld / %lld", (long long)sc->runnable[0], (long long)sc->runnable[1]);
    else
      tl__table_add(t, "unknown");
    add_pair(t, sc->psi_pct, 1);
    if (sc->periods >= 0)
      tl__table_addf(t, "%lld of %lld", (long long)sc->throttled, (long long)sc->periods);
    else
      tl__table_add(t, "no quota seen");
    if (sc->throttled_ns > 0)
      tl__say_time((double)sc->throttled_ns, buf, sizeof buf);
    tl__table_add(t, sc->throttled_ns > 0 ? buf : sc->throttled_ns == 0 ? "0" : "unknown");
    if (sc->freq_khz[1] > 0)
      tl__table_addf(t, "%lld / %lld / %lld", (long long)(sc->freq_khz[0] / 1000),
                     (long long)(sc->freq_khz[1] / 1000), (long long)(sc->freq_khz[2] / 1000));
    else
      tl__table_add(t, "unknown");
  }
  if (html) {
    tl__prose_flush(p);
    fprintf(p->out, "<details><summary>Counters of %zu sessions</summary>\n", n);
  }
  tl__put_table(p, t);
  if (html)
    fputs("</details>\n", p->out);
}

/* {"median": x, "max": y} or null. */
static void json_pair(FILE *o, const char *key, const double v[2]) {
  fprintf(o, "\"%s\": ", key);
  if (isfinite(v[0]))
    fprintf(o, "{\"median\": %.3f, \"max\": %.3f}", v[0], v[1]);
  else
    fputs("null", o);
}

static void json_int(FILE *o, const char *key, int64_t v) {
  if (v >= 0)
    fprintf(o, "\"%s\": %lld", key, (long long)v);
  else
    fprintf(o, "\"%s\": null", key);
}

void tl__causes_session_json(FILE *o, const tl_comparison *c, size_t i) {
  const tl_session_counters *sc = counters_of(c, i);
  if (!sc)
    return;
  fprintf(o, ",\n   \"counters\": {\"intervals\": %lld, \"span_ms\": %lld, ",
          (long long)sc->intervals, (long long)sc->span_ms);
  json_pair(o, "steal_ms_per_s", sc->steal_ms);
  fputs(", ", o);
  json_pair(o, "irq_ms_per_s", sc->irq_ms);
  fputs(", ", o);
  json_pair(o, "switches_per_s", sc->ctxt);
  fputs(",\n    ", o);
  json_pair(o, "psi_some_pct", sc->psi_pct);
  fputs(", \"runnable\": ", o);
  if (sc->runnable[0] >= 0)
    fprintf(o, "{\"median\": %lld, \"max\": %lld}", (long long)sc->runnable[0],
            (long long)sc->runnable[1]);
  else
    fputs("null", o);
  fputs(", ", o);
  json_int(o, "periods", sc->periods);
  fputs(", ", o);
  json_int(o, "throttled_periods", sc->throttled);
  fputs(", ", o);
  json_int(o, "throttled_ns", sc->throttled_ns);
  fputs(", \"freq_khz\": ", o);
  if (sc->freq_khz[1] > 0)
    fprintf(o, "{\"min\": %lld, \"median\": %lld, \"max\": %lld}}", (long long)sc->freq_khz[0],
            (long long)sc->freq_khz[1], (long long)sc->freq_khz[2]);
  else
    fputs("null}", o);
}
