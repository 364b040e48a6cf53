/* counters.c: the counters a session keeps each second, beside its samples,
 * so that a report can say what the host was doing while samples were late:
 * time the hypervisor stole, time spent in interrupts, context switches,
 * runnable threads, CPU pressure (PSI, where the kernel has it enabled), the
 * cgroup's quota throttling, and CPU 0's frequency.
 *
 * The parsers take the text of one file each, so tests feed them fixtures.
 * The series they fill is bounded: a session of any length keeps at most
 * TL_COUNTER_ROWS_MAX rows; when that fills, neighbouring rows merge and
 * each new row covers twice the time. A row holds differences (a counter's
 * growth over the row's time), except procs_running (the most seen) and the
 * frequency (the last seen), which are levels. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "causes_internal.h"

/* ======================================================================== */
/* Parsers                                                                   */

/* The value after "key" at the start of a line of text, -1 if absent. */
static int64_t line_value(const char *text, const char *key) {
  size_t kl = strlen(key);
  for (const char *line = text; line && *line;) {
    if (strncmp(line, key, kl) == 0 && (line[kl] == ' ' || line[kl] == '\t')) {
      char *end;
      long long v = strtoll(line + kl, &end, 10);
      return end != line + kl && v >= 0 ? (int64_t)v : -1;
    }
    line = strchr(line, '\n');
    line = line ? line + 1 : NULL;
  }
  return -1;
}

int tl__parse_proc_stat(const char *text, long ticks_per_s, tl__counters *c) {
  c->steal_ns = c->irq_ns = c->softirq_ns = c->ctxt = c->procs_running = -1;
  if (ticks_per_s <= 0)
    ticks_per_s = 100;
  int64_t steal = 0, irq = 0, softirq = 0;
  int cpus = 0;
  for (const char *line = text; line && *line;) {
    /* "cpuN user nice system idle iowait irq softirq steal ...": the per-CPU
     * lines, not the "cpu " total, so that a CPU's own line is what counts. */
    if (strncmp(line, "cpu", 3) == 0 && isdigit((unsigned char)line[3])) {
      long long f[8];
      const char *p = line + 3;
      while (isdigit((unsigned char)*p))
        p++;
      int n = 0;
      char *end;
      for (; n < 8; n++) {
        f[n] = strtoll(p, &end, 10);
        if (end == p || f[n] < 0)
          break;
        p = end;
      }
      if (n >= 7) {
        irq += f[5];
        softirq += f[6];
        steal += n == 8 ? f[7] : 0;
        cpus++;
      }
    }
    line = strchr(line, '\n');
    line = line ? line + 1 : NULL;
  }
  int64_t ns_per_tick = 1000000000 / ticks_per_s;
  if (cpus) {
    c->steal_ns = steal * ns_per_tick;
    c->irq_ns = irq * ns_per_tick;
    c->softirq_ns = softirq * ns_per_tick;
  }
  c->ctxt = line_value(text, "ctxt");
  c->procs_running = line_value(text, "procs_running");
  return cpus || c->ctxt >= 0 ? TL_OK : TL_EINVAL;
}

int tl__parse_psi_cpu(const char *text, int64_t *some_total_us) {
  for (const char *line = text; line && *line;) {
    if (strncmp(line, "some ", 5) == 0) {
      const char *t = strstr(line, "total=");
      const char *nl = strchr(line, '\n');
      if (t && (!nl || t < nl) && isdigit((unsigned char)t[6])) {
        *some_total_us = strtoll(t + 6, NULL, 10);
        return TL_OK;
      }
    }
    line = strchr(line, '\n');
    line = line ? line + 1 : NULL;
  }
  return TL_EINVAL;
}

int tl__parse_cpu_stat(const char *text, tl__counters *c) {
  c->nr_periods = line_value(text, "nr_periods");
  c->nr_throttled = line_value(text, "nr_throttled");
  int64_t ns = line_value(text, "throttled_time"); /* v1: nanoseconds */
  int64_t us = line_value(text, "throttled_usec"); /* v2: microseconds */
  c->throttled_ns = ns >= 0 ? ns : us >= 0 ? us * 1000 : -1;
  return c->nr_periods >= 0 || c->throttled_ns >= 0 ? TL_OK : TL_EINVAL;
}

int tl__parse_schedstat(const char *text, int64_t *run_ns, int64_t *wait_ns) {
  char *end;
  long long run = strtoll(text, &end, 10);
  if (end == text || run < 0)
    return TL_EINVAL;
  const char *p = end;
  long long wait = strtoll(p, &end, 10);
  if (end == p || wait < 0)
    return TL_EINVAL;
  *run_ns = run;
  *wait_ns = wait;
  return TL_OK;
}

/* ======================================================================== */
/* Reading                                                                   */

void tl__counters_read(const tl__host_env *env, const tl__cgroup *cg, tl__counters *c) {
  memset(c, 0xff, sizeof *c); /* every field -1 */
  char *text = NULL;
  long hz = sysconf(_SC_CLK_TCK);
  if (tl__host_read(env, "proc/stat", &text, NULL) == 0)
    tl__parse_proc_stat(text, hz, c);
  free(text);
  text = NULL;
  if (tl__host_read(env, "proc/pressure/cpu", &text, NULL) == 0 &&
      tl__parse_psi_cpu(text, &c->psi_some_us) != TL_OK)
    c->psi_some_us = -1;
  free(text);
  text = NULL;
  if (cg && cg->cpu_dir[0]) {
    char path[TL_CGROUP_PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/cpu.stat", cg->cpu_dir);
    if (tl__host_read(env, path, &text, NULL) == 0)
      tl__parse_cpu_stat(text, c);
    free(text);
  }
  char line[64];
  if (tl__host_read_line(env, "sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", line,
                         sizeof line) == 0 &&
      isdigit((unsigned char)line[0]))
    c->freq_khz = strtoll(line, NULL, 10);
}

/* ======================================================================== */
/* The bounded series                                                        */

void tl__counter_series_init(tl__counter_series *s, int64_t start_ns, int64_t span_ms) {
  memset(s, 0, sizeof *s);
  s->start_ns = start_ns;
  s->span_ms = span_ms > 0 ? span_ms : 1000;
}

/* Growth of a total, -1 when either end is unknown or it ran back. */
static int64_t grew(int64_t before, int64_t after) {
  return before >= 0 && after >= before ? after - before : -1;
}

/* a += b for a difference that may be unknown (-1). */
static void add_diff(int64_t *a, int64_t b) {
  if (b < 0)
    return;
  *a = *a < 0 ? b : *a + b;
}

static void merge_row(tl_counter_row *into, const tl_counter_row *r) {
  add_diff(&into->steal_ns, r->steal_ns);
  add_diff(&into->irq_ns, r->irq_ns);
  add_diff(&into->softirq_ns, r->softirq_ns);
  add_diff(&into->ctxt, r->ctxt);
  add_diff(&into->psi_some_us, r->psi_some_us);
  add_diff(&into->nr_periods, r->nr_periods);
  add_diff(&into->nr_throttled, r->nr_throttled);
  add_diff(&into->throttled_ns, r->throttled_ns);
  if (r->procs_running > into->procs_running)
    into->procs_running = r->procs_running;
  if (r->freq_khz > 0)
    into->freq_khz = r->freq_khz;
  into->span_ms += r->span_ms;
  into->t_ms = r->t_ms;
}

static void empty_row(tl_counter_row *r) {
  memset(r, 0xff, sizeof *r);
  r->t_ms = r->span_ms = 0;
  r->freq_khz = 0;
}

/* Halves the rows by merging neighbours; new rows cover twice the time. */
static void coarsen(tl__counter_series *s) {
  size_t k = 0;
  for (size_t i = 0; i + 1 < s->n; i += 2, k++) {
    tl_counter_row r = s->rows[i];
    merge_row(&r, &s->rows[i + 1]);
    s->rows[k] = r;
  }
  if (s->n % 2)
    s->rows[k++] = s->rows[s->n - 1];
  s->n = k;
  s->span_ms *= 2;
}

void tl__counter_series_finish(tl__counter_series *s) {
  if (!s->open_used)
    return;
  if (s->n == TL_COUNTER_ROWS_MAX)
    coarsen(s);
  s->rows[s->n++] = s->open;
  s->open_used = 0;
}

void tl__counter_series_add(tl__counter_series *s, int64_t now_ns, const tl__counters *c) {
  if (!s->have_last) {
    s->last = *c;
    s->last_ns = now_ns;
    s->have_last = 1;
    return;
  }
  tl_counter_row d;
  empty_row(&d);
  d.t_ms = (now_ns - s->start_ns) / 1000000;
  d.span_ms = (now_ns - s->last_ns) / 1000000;
  d.steal_ns = grew(s->last.steal_ns, c->steal_ns);
  d.irq_ns = grew(s->last.irq_ns, c->irq_ns);
  d.softirq_ns = grew(s->last.softirq_ns, c->softirq_ns);
  d.ctxt = grew(s->last.ctxt, c->ctxt);
  d.psi_some_us = grew(s->last.psi_some_us, c->psi_some_us);
  d.nr_periods = grew(s->last.nr_periods, c->nr_periods);
  d.nr_throttled = grew(s->last.nr_throttled, c->nr_throttled);
  d.throttled_ns = grew(s->last.throttled_ns, c->throttled_ns);
  d.procs_running = c->procs_running;
  d.freq_khz = c->freq_khz > 0 ? c->freq_khz : 0;
  s->last = *c;
  s->last_ns = now_ns;
  if (!s->open_used) {
    s->open = d;
    s->open_used = 1;
  } else {
    merge_row(&s->open, &d);
  }
  if (s->open.span_ms >= s->span_ms)
    tl__counter_series_finish(s);
}
