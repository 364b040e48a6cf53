/* causes.c: the runner's side of why samples were late. The measuring
 * thread reads its own state just before arming each sample and just after
 * reading its wake-up clock (tl__causes_before / _after), so the timed
 * interval holds no extra work; the difference is queued with the latency.
 * The writer thread keeps the slowest few per cent of each piece it hands to
 * the store, with their causes, and the sums over all, by latency band too
 * (tl__cause_keep), and
 * about once a second reads the host's counters into a bounded series
 * (tl__counter_clock). Only probes that time on the runner's own thread, one
 * timer at a time, read causes: a child process's or a second timer's
 * causes are not this thread's, and are "not attributed". */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "causes_internal.h"

/* ======================================================================== */
/* The measuring thread                                                      */

void tl__causes_open(tl__causes *c, int probe_flags, int32_t concurrency, int off) {
  memset(c, 0, sizeof *c);
  if (!off && (probe_flags & TL__PROBE_CAUSES) && concurrency <= 1)
    c->self = tl__self_open();
}

void tl__causes_close(tl__causes *c) {
  tl__self_close(c->self);
  c->self = NULL;
}

void tl__causes_before(tl__causes *c) {
  if (!c->self)
    return;
  if (c->after_ns && tl__os_mono_ns() - c->after_ns < TL__CAUSE_REUSE_NS)
    c->before = c->after;
  else
    tl__self_read(c->self, &c->before);
  c->armed = 1;
}

tl__cause_cell tl__causes_after(tl__causes *c) {
  tl__cause_cell cell = {TL__CAUSE_NONE, 0, -1};
  if (!c->self || !c->armed)
    return cell;
  tl__self_mark after;
  tl__self_read(c->self, &after);
  c->armed = 0;
  c->after = after;
  c->after_ns = tl__os_mono_ns();
  const tl__self_mark *b = &c->before;
  if (b->runq_wait_ns >= 0 && after.runq_wait_ns >= b->runq_wait_ns) {
    int64_t us = (after.runq_wait_ns - b->runq_wait_ns + 500) / 1000;
    cell.runq_us = us < (int64_t)TL__CAUSE_NONE ? (uint32_t)us : TL__CAUSE_NONE - 1;
  }
  if (b->nivcsw >= 0 && after.nivcsw >= b->nivcsw) {
    int64_t n = after.nivcsw - b->nivcsw;
    cell.nivcsw = (uint16_t)(n < 0xffff ? n : 0xffff);
  }
  if (b->cpu >= 0 && after.cpu >= 0)
    cell.migrated = b->cpu != after.cpu;
  return cell;
}

/* ======================================================================== */
/* What is kept                                                              */

typedef struct {
  int64_t latency;
  size_t at;
} ranked;

static int slower_first(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  return x->latency < y->latency   ? 1
         : x->latency > y->latency ? -1
                                   : (x->at > y->at) - (x->at < y->at);
}

static int by_index(const void *a, const void *b) {
  const tl_cause *x = a, *y = b;
  return (x->index > y->index) - (x->index < y->index);
}

void tl__cause_keep_piece(tl__cause_keep *k, int64_t first_index, const int64_t *latency_ns,
                          const tl__cause_cell *cells, size_t n) {
  size_t measured = 0;
  for (size_t i = 0; i < n; i++) {
    if (cells[i].runq_us == TL__CAUSE_NONE && cells[i].migrated < 0)
      continue;
    measured++;
    k->sums.samples++;
    if (cells[i].runq_us != TL__CAUSE_NONE) {
      int64_t wait = (int64_t)cells[i].runq_us * 1000;
      int band = tl_cause_band(latency_ns[i]);
      k->sums.runq_wait_ns += wait;
      k->sums.band_samples[band]++;
      k->sums.band_wait_ns[band] += wait;
    }
    k->sums.nivcsw += cells[i].nivcsw;
    k->sums.migrations += cells[i].migrated > 0;
  }
  if (!measured)
    return; /* nothing read (a child probe): nothing to keep */
  size_t keep = (n * TL__CAUSE_KEEP_PCT + 99) / 100;
  ranked *r = malloc(n * sizeof *r);
  if (r && k->n + keep > k->cap) {
    size_t cap = (k->n + keep) * 2;
    tl_cause *more = realloc(k->pending, cap * sizeof *more);
    if (more) {
      k->pending = more;
      k->cap = cap;
    }
  }
  if (!r || k->n + keep > k->cap) { /* out of memory: these causes are lost, not guessed */
    free(r);
    k->failed = 1;
    return;
  }
  for (size_t i = 0; i < n; i++)
    r[i] = (ranked){latency_ns[i], i};
  qsort(r, n, sizeof *r, slower_first);
  size_t first = k->n;
  for (size_t j = 0; j < keep; j++) {
    const tl__cause_cell *c = &cells[r[j].at];
    int measured_one = c->runq_us != TL__CAUSE_NONE || c->migrated >= 0;
    k->pending[k->n++] = (tl_cause){first_index + (int64_t)r[j].at, r[j].latency,
                                    c->runq_us != TL__CAUSE_NONE ? (int64_t)c->runq_us * 1000 : -1,
                                    measured_one ? (int32_t)c->nivcsw : -1, c->migrated};
  }
  qsort(k->pending + first, k->n - first, sizeof *k->pending, by_index);
  free(r);
}

int tl__cause_keep_due(tl__cause_keep *k, int64_t now_ms) {
  if (!k->last_ms)
    k->last_ms = now_ms;
  return k->n >= TL__CAUSE_PENDING_MAX || now_ms - k->last_ms >= TL__CAUSE_STORE_MS;
}

int tl__cause_keep_store(tl__cause_keep *k, tl_store *store, int64_t session_id) {
  if (!k->n && !k->sums.samples)
    return TL_OK;
  int err = tl_store_add_causes(store, session_id, k->pending, k->n, &k->sums);
  k->last_ms = 0;
  if (err == TL_OK) {
    k->n = 0;
    memset(&k->sums, 0, sizeof k->sums);
  }
  return err;
}

void tl__cause_keep_free(tl__cause_keep *k) {
  free(k->pending);
  memset(k, 0, sizeof *k);
}

/* ======================================================================== */
/* The counters                                                              */

void tl__counter_clock_open(tl__counter_clock *k, int64_t start_ns) {
  memset(k, 0, sizeof *k);
  k->env_open = tl__host_env_default(&k->env) == TL_OK;
  if (!k->env_open)
    return;
  if (tl__cgroup_find(&k->env, &k->cg) != TL_OK)
    memset(&k->cg, 0, sizeof k->cg);
  if ((k->series = malloc(sizeof *k->series)))
    tl__counter_series_init(k->series, start_ns, 1000);
  tl__counter_clock_tick(k, start_ns);
}

void tl__counter_clock_tick(tl__counter_clock *k, int64_t now_ns) {
  if (!k->series)
    return;
  tl__counters c;
  tl__counters_read(&k->env, k->cg.version ? &k->cg : NULL, &c);
  tl__counter_series_add(k->series, now_ns, &c);
}

int tl__counter_clock_store(tl__counter_clock *k, tl_store *store, int64_t session_id) {
  if (!k->series)
    return TL_OK;
  tl__counter_series_finish(k->series);
  if (!k->series->n)
    return TL_OK;
  return tl_store_set_counters(store, session_id, k->series->rows, k->series->n);
}

void tl__counter_clock_close(tl__counter_clock *k) {
  free(k->series);
  k->series = NULL;
  if (k->env_open)
    tl__host_env_close(&k->env);
  k->env_open = 0;
}
