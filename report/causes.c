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
 * (within 1/2048 of each value), as the group's sweep counted them while
 * it read them (group_passes.c), else read again here; the causes from the
 * slowest samples tl kept with their run-queue wait. Steal and interrupt
 * time are known only per second and host-wide, so they are shown beside
 * the split as shares of the CPU time during the sessions, never put into
 * it: a sample is not blamed on the hypervisor because the hypervisor
 * stole time that second. causes_page.c says it on the page and in JSON. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compute.h"

/* ======================================================================== */
/* Computing                                                                 */

typedef struct {
  int64_t p50, p99, p90; /* p90 -1: not among the group's percentiles */
  tl_group_causes *gc;
} tail_ctx;

/* Adds n samples of a bucket [lo, hi) to a tail's count and its time past
 * p50, at the bucket's midpoint. In double and held at INT64_MAX: a bucket
 * of many samples far out (hours, in nanoseconds) would overflow a 64-bit
 * product. */
static void add_bucket(int64_t *samples, int64_t *past_ns, int64_t n, int64_t lo, int64_t hi,
                       int64_t p50) {
  *samples += n;
  double sum = (double)*past_ns + (double)n * (double)(lo + (hi - lo) / 2 - p50);
  *past_ns = sum >= 0x1p63 ? INT64_MAX : (int64_t)sum;
}

/* Adds bucket k of m's histogram (n samples) to the tails it lies above. */
static void tail_bucket(tail_ctx *t, const tl_summary *m, size_t k, int64_t n) {
  int64_t lo, hi;
  tl_summary_bucket_bounds(m->hist_first + k, &lo, &hi);
  if (hi > m->max_ns)
    hi = m->max_ns;
  if (lo > t->p99)
    add_bucket(&t->gc->tail_samples, &t->gc->tail_ns, n, lo, hi, t->p50);
  if (t->p90 >= 0 && lo > t->p90)
    add_bucket(&t->gc->at90.tail_samples, &t->gc->at90.tail_ns, n, lo, hi, t->p50);
}

/* Counts one session's samples above the p99 (and the p90) and their time
 * past p50, from its histogram: the midpoint of each bucket above. Where
 * the summary lists its non-empty buckets, only those are visited. */
static int count_tail(void *arg, size_t index, const tl_summary *m) {
  (void)index;
  tail_ctx *t = arg;
  /* No bucket up to the one that holds the lower bound starts above it:
   * the walk starts past it. */
  int64_t below = t->p90 >= 0 && t->p90 < t->p99 ? t->p90 : t->p99;
  size_t past = below < 0 ? 0 : tl_summary_bucket(below) + 1;
  size_t from = past > m->hist_first ? past - m->hist_first : 0;
  if (m->nz_at) {
    size_t lo = 0, hi = m->nz; /* the first listed bucket at or past from */
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (m->nz_at[mid] < from)
        lo = mid + 1;
      else
        hi = mid;
    }
    for (size_t i = lo; i < m->nz; i++)
      tail_bucket(t, m, m->nz_at[i], m->hist[m->nz_at[i]]);
    return 0;
  }
  for (size_t k = from; k < m->hist_len; k++)
    if (m->hist[k])
      tail_bucket(t, m, k, m->hist[k]);
  return 0;
}

/* The session's counters over its whole time: periods, throttled periods,
 * steal and IRQ time, and the time they cover. */
typedef struct {
  int64_t periods, throttled, steal_ns, irq_ns, span_ms;
  int have_periods, have_steal, any;
} counter_sums;

static void sum_counters(const tl_counter_row *r, size_t n, counter_sums *cs) {
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
}

/* Adds the run-queue wait of a session's samples in latency bands wholly
 * above p90 to at90, each band's at most its samples' time past p50. */
static void add_bands(const tl_cause_sums *sums, int64_t p50, int64_t p90, int throttled,
                      tl_tail_split *at90) {
  for (int b = 0; b < TL_CAUSE_BANDS; b++) {
    int64_t lo, hi, n = sums->band_samples[b];
    if (!n)
      continue;
    tl_cause_band_bounds(b, &lo, &hi);
    if (lo <= p90)
      continue;
    double most = (double)n * ((double)hi - (double)p50);
    int64_t wait = (double)sums->band_wait_ns[b] < most ? sums->band_wait_ns[b] : (int64_t)most;
    at90->measured_samples += n;
    at90->cpu_wait_ns += wait;
    if (throttled)
      at90->throttled_ns += wait;
  }
}

/* A group's read of its sessions' causes: the tail's bounds, and each
 * session's counters, summed before. */
typedef struct {
  const tail_ctx *t;
  const counter_sums *cs; /* the group's sessions' */
  tl_group_causes *gc;
  int recorded; /* a session recorded causes */
} causes_ctx;

/* Adds one session's kept causes of tail samples to gc, and its bands to
 * gc->at90 when p90 >= 0, throttled when its cgroup throttled. A damaged
 * session's tail stays not attributed. */
static int add_causes(void *arg, size_t index, int err, const tl_cause *c, size_t n,
                      const tl_cause_sums *sums) {
  causes_ctx *x = arg;
  if (err)
    return TL_OK;
  const counter_sums *cs = &x->cs[index];
  int throttled = cs->have_periods && cs->throttled > 0;
  tl_group_causes *gc = x->gc;
  int64_t p50 = x->t->p50, p99 = x->t->p99;
  if (x->t->p90 >= 0 && sums->samples > 0) /* bands are stored with measured samples only */
    add_bands(sums, p50, x->t->p90, throttled, &gc->at90);
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
  x->recorded |= sums->samples > 0;
  return TL_OK;
}

/* The split never claims more than the tail holds: the histogram's
 * midpoints and the kept microseconds may disagree by a hair. */
static void settle(int64_t tail_samples, int64_t tail_ns, int64_t *measured, int64_t *wait_ns,
                   int64_t *throttled_ns, int64_t *not_attributed_ns) {
  if (*measured > tail_samples)
    *measured = tail_samples;
  if (*wait_ns > tail_ns)
    *wait_ns = tail_ns;
  if (*throttled_ns > *wait_ns)
    *throttled_ns = *wait_ns;
  *not_attributed_ns = tail_ns - *wait_ns;
}

/* The facts the split names, from the first session that recorded each. */
static void group_facts(const tl_session_detail *d, tl_group_causes *gc, double *cpus) {
  const char *v = tl__fact(d, "timer_slack_ns");
  if (v && gc->timer_slack_ns < 0 && strspn(v, "0123456789") == strlen(v) && *v)
    gc->timer_slack_ns = strtoll(v, NULL, 10);
  v = tl__fact(d, "cgroup.cpu_quota");
  if (v && !gc->quota[0] && strcmp(v, "unknown") != 0)
    snprintf(gc->quota, sizeof gc->quota, "%s", v);
  v = tl__fact(d, "cpu.logical");
  if (v && *cpus == 0)
    *cpus = strtod(v, NULL);
}

/* Whether counted is the tail count_tail finds: at the same values, and
 * below 2^53, where count_tail's sums in double are exact integers, so that
 * the order of its additions does not matter. */
static int tail_counted(const tl__tail *counted, const tail_ctx *t) {
  const int64_t exact = INT64_C(1) << 53;
  return counted && counted->known && counted->p50 == t->p50 && counted->p99 == t->p99 &&
         counted->p90 == t->p90 && counted->past_ns[0] < exact &&
         (t->p90 < 0 || counted->past_ns[1] < exact);
}

/* The tail's count and time: as counted, else from the sessions'
 * summaries read again. Fails when they cannot be read. */
static int tail_of(tl_store *store, const tl_group *g, const tl__tail *counted, tail_ctx *t) {
  if (!tail_counted(counted, t))
    return tl_store_summaries(store, g->session_ids, g->session_count, count_tail, t);
  t->gc->tail_samples = counted->samples[0];
  t->gc->tail_ns = counted->past_ns[0];
  if (t->p90 >= 0) {
    t->gc->at90.tail_samples = counted->samples[1];
    t->gc->at90.tail_ns = counted->past_ns[1];
  }
  return TL_OK;
}

/* One group's split, its counters (cs: of every session of the
 * comparison) and its causes read for all its sessions at once; counted:
 * its tail already counted, or NULL. */
static int group_causes(tl_store *store, const tl_comparison *c, const counter_sums *cs,
                        const tl_group *g, const tl__tail *counted, tl_group_causes *gc) {
  memset(gc, 0, sizeof *gc);
  gc->timer_slack_ns = -1;
  gc->periods = gc->throttled_periods = -1;
  gc->steal_pct = gc->irq_pct = NAN;
  int k50 = tl__pct_index(&g->dist, 50), k99 = tl__pct_index(&g->dist, 99),
      k90 = tl__pct_index(&g->dist, 90);
  if (k50 < 0 || k99 < 0 || !g->dist.count)
    return TL_OK;
  int64_t p50 = g->dist.pct_ns[k50], p99 = g->dist.pct_ns[k99];
  gc->floor_ns = p50 - tl_probe_armed_ns(g->probe, g->delay_ns);
  gc->at90.known = k90 >= 0;
  tail_ctx t = {p50, p99, k90 >= 0 ? g->dist.pct_ns[k90] : -1, gc};
  if (tail_of(store, g, counted, &t) != TL_OK)
    return TL_OK; /* no histogram: no tail to split */
  counter_sums all = {0}, *own = malloc((g->session_count + 1) * sizeof *own);
  if (!own)
    return TL_ENOMEM;
  double cpus = 0;
  int recorded = 0; /* a session recorded causes or counters: there is something to say */
  for (size_t s = 0; s < g->session_count; s++) {
    size_t i = g->session_at[s];
    own[s] = cs[i];
    recorded |= own[s].any;
    all.periods += own[s].periods;
    all.throttled += own[s].throttled;
    all.have_periods |= own[s].have_periods;
    all.steal_ns += own[s].steal_ns;
    all.irq_ns += own[s].irq_ns;
    all.span_ms += own[s].span_ms;
    all.have_steal |= own[s].have_steal;
    group_facts(&c->details[i], gc, &cpus);
  }
  causes_ctx x = {&t, own, gc, 0};
  tl_store_causes_of(store, g->session_ids, g->session_count, add_causes, &x);
  free(own);
  recorded |= x.recorded;
  if (all.have_periods) {
    gc->periods = all.periods;
    gc->throttled_periods = all.throttled;
  }
  if (all.have_steal && all.span_ms > 0 && cpus > 0) {
    double cpu_ns = (double)all.span_ms * 1e6 * cpus;
    gc->steal_pct = 100.0 * (double)all.steal_ns / cpu_ns;
    gc->irq_pct = 100.0 * (double)all.irq_ns / cpu_ns;
  }
  settle(gc->tail_samples, gc->tail_ns, &gc->measured_samples, &gc->cpu_wait_ns, &gc->throttled_ns,
         &gc->not_attributed_ns);
  tl_tail_split *a = &gc->at90;
  settle(a->tail_samples, a->tail_ns, &a->measured_samples, &a->cpu_wait_ns, &a->throttled_ns,
         &a->not_attributed_ns);
  gc->known = recorded && gc->tail_samples > 0 && gc->tail_ns > 0;
  return TL_OK;
}

/* ======================================================================== */
/* A session's counters, folded                                              */

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median and the largest of v[0..n) (sorted here); NAN when n is 0. */
static void median_max(double *v, size_t n, double out[2]) {
  out[0] = out[1] = NAN;
  if (!n)
    return;
  qsort(v, n, sizeof *v, by_value);
  out[0] = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  out[1] = v[n - 1];
}

enum { FOLD_STEAL, FOLD_IRQ, FOLD_CTXT, FOLD_PSI, FOLD_RUN, FOLD_FREQ, FOLDS };

/* Folds the rows of one session's counters; TL_ENOMEM, or TL_OK. */
static int fold_counters(const tl_counter_row *r, size_t n, tl_session_counters *sc) {
  double *v = malloc((n ? n : 1) * FOLDS * sizeof *v);
  if (!v)
    return TL_ENOMEM;
  size_t k[FOLDS] = {0};
  sc->periods = sc->throttled = sc->throttled_ns = -1;
  for (size_t i = 0; i < n; i++) {
    sc->span_ms += r[i].span_ms;
    if (r[i].nr_periods >= 0 && r[i].nr_throttled >= 0) {
      sc->periods = (sc->periods < 0 ? 0 : sc->periods) + r[i].nr_periods;
      sc->throttled = (sc->throttled < 0 ? 0 : sc->throttled) + r[i].nr_throttled;
    }
    if (r[i].throttled_ns >= 0)
      sc->throttled_ns = (sc->throttled_ns < 0 ? 0 : sc->throttled_ns) + r[i].throttled_ns;
    if (r[i].procs_running >= 0)
      v[FOLD_RUN * n + k[FOLD_RUN]++] = (double)r[i].procs_running;
    if (r[i].freq_khz > 0)
      v[FOLD_FREQ * n + k[FOLD_FREQ]++] = (double)r[i].freq_khz;
    if (r[i].span_ms <= 0)
      continue;
    double s = (double)r[i].span_ms / 1e3; /* a rate is per second of the row */
    if (r[i].steal_ns >= 0)
      v[FOLD_STEAL * n + k[FOLD_STEAL]++] = (double)r[i].steal_ns / 1e6 / s;
    if (r[i].irq_ns >= 0 && r[i].softirq_ns >= 0)
      v[FOLD_IRQ * n + k[FOLD_IRQ]++] = (double)(r[i].irq_ns + r[i].softirq_ns) / 1e6 / s;
    if (r[i].ctxt >= 0)
      v[FOLD_CTXT * n + k[FOLD_CTXT]++] = (double)r[i].ctxt / s;
    if (r[i].psi_some_us >= 0) /* the kernel's and tl's clocks differ by a hair: at most all */
      v[FOLD_PSI * n + k[FOLD_PSI]++] = fmin(100, (double)r[i].psi_some_us / 1e4 / s);
  }
  sc->known = n > 0;
  sc->intervals = (int64_t)n;
  median_max(v + FOLD_STEAL * n, k[FOLD_STEAL], sc->steal_ms);
  median_max(v + FOLD_IRQ * n, k[FOLD_IRQ], sc->irq_ms);
  median_max(v + FOLD_CTXT * n, k[FOLD_CTXT], sc->ctxt);
  median_max(v + FOLD_PSI * n, k[FOLD_PSI], sc->psi_pct);
  double run[2], freq[2];
  median_max(v + FOLD_RUN * n, k[FOLD_RUN], run);
  sc->runnable[0] = isfinite(run[0]) ? (int64_t)run[0] : -1;
  sc->runnable[1] = isfinite(run[1]) ? (int64_t)run[1] : -1;
  median_max(v + FOLD_FREQ * n, k[FOLD_FREQ], freq);
  sc->freq_khz[0] = k[FOLD_FREQ] ? (int64_t)v[FOLD_FREQ * n] : 0;
  sc->freq_khz[1] = isfinite(freq[0]) ? (int64_t)freq[0] : 0;
  sc->freq_khz[2] = isfinite(freq[1]) ? (int64_t)freq[1] : 0;
  free(v);
  return TL_OK;
}

/* Every session's counters, read at once: folded into c->counters and
 * summed into cs[]. What cannot be read stays unknown. */
typedef struct {
  tl_comparison *c;
  counter_sums *cs;
} counters_ctx;

static int take_counters(void *arg, size_t i, int err, const tl_counter_row *r, size_t n) {
  counters_ctx *x = arg;
  tl_comparison *c = x->c;
  if (err || !n)
    return TL_OK;
  sum_counters(r, n, &x->cs[i]);
  if (!c->counters && !(c->counters = calloc(c->sessions.count, sizeof *c->counters)))
    return TL_ENOMEM;
  return fold_counters(r, n, &c->counters[i]);
}

static int session_counters(tl_store *store, tl_comparison *c, counter_sums *cs) {
  int64_t *ids = malloc((c->sessions.count + 1) * sizeof *ids);
  if (!ids)
    return TL_ENOMEM;
  for (size_t i = 0; i < c->sessions.count; i++)
    ids[i] = c->sessions.items[i].id;
  counters_ctx x = {c, cs};
  int err = tl_store_counters_of(store, ids, c->sessions.count, take_counters, &x);
  free(ids);
  return err == TL_ENOMEM ? err : TL_OK; /* the rest: what was read is kept */
}

int tl__causes_compute(tl_store *store, tl_comparison *c, const tl__tail *tails) {
  if (!c->group_count)
    return TL_OK;
  c->causes = calloc(c->group_count, sizeof *c->causes);
  counter_sums *cs = calloc(c->sessions.count + 1, sizeof *cs);
  int err = c->causes && cs ? session_counters(store, c, cs) : TL_ENOMEM;
  for (size_t i = 0; i < c->group_count && !err; i++)
    group_causes(store, c, cs, &c->groups[i], tails ? &tails[i] : NULL, &c->causes[i]);
  free(cs);
  return err;
}
