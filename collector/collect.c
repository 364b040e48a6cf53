/* collect.c: the session runner. It hands delays to a probe in interleaved
 * order, keeps every measured sample in memory, and lets a writer thread
 * commit them to the store every flush_ms. The measuring thread never waits
 * on the disk: it takes a mutex only to append a sample. A stop (signal or
 * failed write) ends the run at the probe's next chance; whatever was
 * measured is committed and the sessions are marked 'interrupted'. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <uv.h>

#include "collect_internal.h"

static volatile sig_atomic_t stop_requested;
static tl__run *volatile current_run;

typedef struct {
  int64_t *v; /* kept samples (after warm-up) */
  size_t n, cap;
  size_t flushed;   /* handed to the writer so far */
  int64_t measured; /* including warm-up */
  int64_t issued;   /* handed out by tl__run_next (some may be in flight) */
  int64_t missed, missed_flushed;
  tl_writer *writer;
} delay_state;

struct tl__run {
  struct tl__run_view view;
  delay_state d[TL_MAX_DELAYS];
  size_t rr; /* round-robin position */
  uint64_t start_hr, deadline_hr;
  int oom;
  int write_failed;
  pthread_mutex_t lock;
  pthread_cond_t wake_writer;
  int writer_done;
  tl_store *store;
  char write_err[512];
  void (*volatile wake)(void *); /* read by a signal handler */
  void *volatile wake_arg;
  tl_host probe_facts; /* learnt by the probe while running; the measuring thread's own */
};

void tl_collect_opts_init(tl_collect_opts *o) {
  memset(o, 0, sizeof *o);
  o->probe = "settimeout";
  o->warmup = 5;
  o->flush_ms = 1000;
  o->cpu = -1;
}

const struct tl__run_view *tl__run_view(const tl__run *run) { return &run->view; }

int tl__run_stopping(const tl__run *run) { return stop_requested || run->oom || run->write_failed; }

void tl__run_set_wakeup(tl__run *run, void (*wake)(void *), void *arg) {
  /* Under the lock, so the writer thread never calls a wake-up that is being
   * taken away; in an order that a signal handler interrupting this thread
   * sees either the old pair or no function at all. */
  pthread_mutex_lock(&run->lock);
  if (wake) {
    run->wake_arg = arg;
    run->wake = wake;
  } else {
    run->wake = NULL;
    run->wake_arg = NULL;
  }
  pthread_mutex_unlock(&run->lock);
}

void tl_collect_stop(void) {
  stop_requested = 1;
  tl__run *run = current_run;
  void (*wake)(void *) = run ? run->wake : NULL;
  if (wake)
    wake(run->wake_arg); /* uv_async_send and write(2) are async-signal-safe */
}

static int delay_done(const tl__run *run, size_t i) {
  const tl_collect_opts *o = run->view.opts;
  /* Counted when handed out, so that timers still in flight (--concurrency)
   * do not overshoot the count. */
  return o->count > 0 && run->d[i].issued >= (int64_t)o->warmup + o->count;
}

int tl__run_next(tl__run *run) {
  if (tl__run_stopping(run))
    return -1;
  if (run->deadline_hr && uv_hrtime() >= run->deadline_hr)
    return -1;
  size_t n = run->view.delay_count;
  for (size_t k = 0; k < n; k++) {
    size_t i = (run->rr + k) % n;
    if (!delay_done(run, i)) {
      run->rr = (i + 1) % n;
      run->d[i].issued++;
      return (int)i;
    }
  }
  return -1;
}

void tl__run_record(tl__run *run, int index, int64_t latency_ns) {
  delay_state *d = &run->d[index];
  if (d->measured++ < run->view.opts->warmup)
    return;
  if (latency_ns < 0)
    latency_ns = 0; /* a monotonic clock never runs back; a probe bug must not poison the store */
  pthread_mutex_lock(&run->lock);
  if (d->n == d->cap) {
    size_t cap = d->cap ? d->cap * 2 : 4096;
    int64_t *p = realloc(d->v, cap * sizeof *p);
    if (!p) {
      run->oom = 1;
      pthread_mutex_unlock(&run->lock);
      return;
    }
    d->v = p;
    d->cap = cap;
  }
  d->v[d->n++] = latency_ns;
  pthread_mutex_unlock(&run->lock);
}

int tl__run_fact(tl__run *run, const char *key, const char *value, const char *evidence) {
  char full[TL_TAG_KEY_MAX + 8];
  if ((size_t)snprintf(full, sizeof full, "probe.%s", key) >= sizeof full)
    return TL_EINVAL;
  return tl__host_set(&run->probe_facts, full, value, evidence);
}

void tl__run_missed(tl__run *run, int index, int64_t missed) {
  if (run->d[index].measured <= run->view.opts->warmup)
    return; /* missed by a warm-up sample, which is not stored either */
  pthread_mutex_lock(&run->lock);
  run->d[index].missed += missed;
  pthread_mutex_unlock(&run->lock);
}

/* Sleeps on the monotonic clock until until_ns, in slices short enough that
 * a stop asked for just before a slice began is noticed within 100 ms. */
static int sleep_until(int64_t until_ns, const tl__run *run) {
  for (;;) {
    if (stop_requested || (run && tl__run_stopping(run)))
      return TL_EINTR;
    int64_t left = until_ns - tl__os_mono_ns();
    if (left <= 0)
      return TL_OK;
    tl__os_sleep(0, left < 100000000 ? left : 100000000);
  }
}

void tl__run_pause(tl__run *run, int64_t ns) { sleep_until(tl__os_mono_ns() + ns, run); }

int tl_collect_wait_until(uint64_t until_hr) {
  int64_t left = (int64_t)(until_hr - uv_hrtime());
  return sleep_until(tl__os_mono_ns() + (left > 0 ? left : 0), NULL);
}

/* ======================================================================== */
/* Writer thread                                                             */

/* Moves new samples to the store writers and commits them. Called with the
 * lock held; the lock is released around the disk work. */
static int flush_locked(tl__run *run) {
  int err = TL_OK;
  for (size_t i = 0; i < run->view.delay_count && err == TL_OK; i++) {
    delay_state *d = &run->d[i];
    if (!d->writer)
      continue;
    size_t from = d->flushed, to = d->n;
    int64_t missed = d->missed - d->missed_flushed;
    /* The samples in [from, to) are never moved by the measuring thread
     * except by realloc, so copy them out while holding the lock. */
    int64_t *copy = NULL;
    if (to > from && !(copy = malloc((to - from) * sizeof *copy)))
      return TL_ENOMEM;
    if (copy)
      memcpy(copy, d->v + from, (to - from) * sizeof *copy);
    pthread_mutex_unlock(&run->lock);
    int added = 1;
    if (copy) {
      err = tl_writer_add(d->writer, copy, to - from);
      added = err == TL_OK;
      free(copy);
    }
    if (added) {
      tl_writer_add_missed(d->writer, missed);
      err = tl_writer_flush(d->writer);
    }
    pthread_mutex_lock(&run->lock);
    if (added) {
      /* The writer holds them now; after a failed flush they stay buffered
       * there and tl_writer_end() tries again. */
      d->flushed = to;
      d->missed_flushed += missed;
    }
  }
  return err;
}

static void show_progress(tl__run *run) {
  int64_t done = 0, total = 0;
  for (size_t i = 0; i < run->view.delay_count; i++) {
    done += (int64_t)run->d[i].n;
    total += run->view.opts->count;
  }
  double secs = (double)(uv_hrtime() - run->start_hr) / 1e9;
  if (total)
    fprintf(stderr, "\r%s: %" PRId64 "/%" PRId64 " samples, %.0f/s, %.1fs elapsed   ",
            tl_progname(), done, total, secs > 0 ? (double)done / secs : 0.0, secs);
  else
    fprintf(stderr, "\r%s: %" PRId64 " samples, %.0f/s, %.1fs of %.1fs   ", tl_progname(), done,
            secs > 0 ? (double)done / secs : 0.0, secs, (double)run->view.opts->duration_ns / 1e9);
  fflush(stderr);
}

static void *writer_main(void *arg) {
  tl__run *run = arg;
  const tl_collect_opts *o = run->view.opts;
  tl__tune_release_self();
  pthread_mutex_lock(&run->lock);
  while (!run->writer_done) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    int64_t ns = until.tv_nsec + (int64_t)o->flush_ms * 1000000;
    until.tv_sec += (time_t)(ns / 1000000000);
    until.tv_nsec = (long)(ns % 1000000000);
    pthread_cond_timedwait(&run->wake_writer, &run->lock, &until);
    if (run->writer_done)
      break;
    if (run->store && !run->write_failed && flush_locked(run) != TL_OK) {
      snprintf(run->write_err, sizeof run->write_err, "%s", tl_store_errmsg(run->store));
      run->write_failed = 1;
      if (run->wake)
        run->wake(run->wake_arg);
    }
    if (o->progress)
      show_progress(run);
  }
  pthread_mutex_unlock(&run->lock);
  return NULL;
}

/* ======================================================================== */
/* The run                                                                   */

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static void summarize(const delay_state *d, int64_t delay_ns, tl_collect_result *r) {
  r->p50_ns = r->p90_ns = r->p99_ns = r->max_ns = 0;
  r->delay_ns = delay_ns;
  r->samples = (int64_t)d->n;
  if (!d->n)
    return;
  int64_t *s = malloc(d->n * sizeof *s);
  if (!s)
    return;
  memcpy(s, d->v, d->n * sizeof *s);
  qsort(s, d->n, sizeof *s, cmp_i64);
  int64_t n = (int64_t)d->n;
  r->p50_ns = s[tl_rank(50, n) - 1];
  r->p90_ns = s[tl_rank(90, n) - 1];
  r->p99_ns = s[tl_rank(99, n) - 1];
  r->max_ns = s[n - 1];
  free(s);
}

int tl_collect_run(tl_store *store, const tl_session_spec *spec, const tl_collect_opts *opts,
                   tl_collect_result *results, char *errbuf, size_t errlen) {
  char why[TL_WHY_MAX];
  int err = tl_collect_opts_check(opts, why, sizeof why);
  if (err) {
    return tl_fail(errbuf, errlen, err, "%s", why);
  }
  const tl__probe *probe = tl__probe_lookup(opts->probe);
  if (opts->flush_ms <= 0 || (!store && !opts->dry_run)) {
    return tl_fail(errbuf, errlen, TL_EINVAL, "%s", "incomplete collection options");
  }
  if (results)
    memset(results, 0, opts->delay_count * sizeof *results);

  /* The user's tags plus those tl records for the options that shape the
   * data; a user tag may not claim one of tl's keys. */
  tl__opt_tags otags;
  tl__opts_tags(opts, &otags);
  size_t ntags = spec->tag_count + otags.n;
  const char **tag_keys = malloc((ntags + 1) * sizeof *tag_keys);
  const char **tag_values = malloc((ntags + 1) * sizeof *tag_values);
  tl__run *run = calloc(1, sizeof *run);
  if (!tag_keys || !tag_values || !run) {
    free(tag_keys);
    free(tag_values);
    free(run);
    return tl_fail(errbuf, errlen, TL_ENOMEM, "%s", "out of memory");
  }
  for (size_t i = 0; i < spec->tag_count; i++) {
    tag_keys[i] = spec->tag_keys[i];
    tag_values[i] = spec->tag_values[i];
    for (size_t k = 0; k < otags.n && err == TL_OK; k++)
      if (strcmp(spec->tag_keys[i], otags.keys[k]) == 0) {
        err = tl_fail(errbuf, errlen, TL_EINVAL,
                      "tag '%s' is recorded by tl from the options; use another key", otags.keys[k]);
      }
  }
  for (size_t k = 0; k < otags.n; k++) {
    tag_keys[spec->tag_count + k] = otags.keys[k];
    tag_values[spec->tag_count + k] = otags.values[k];
  }
  /* The measuring thread's CPU, priority and memory lock come first: a
   * refusal is an error before any session exists. */
  tl__tune tune;
  memset(&tune, 0, sizeof tune);
  if (err == TL_OK)
    err = tl__tune_apply(&tune, opts, errbuf, errlen);
  if (err) {
    free(tag_keys);
    free(tag_values);
    free(run);
    return err;
  }
  tl__load *load = NULL;
  run->view.opts = opts;
  run->view.delays_ns = opts->delays_ns;
  run->view.delay_count = opts->delay_count;
  run->store = opts->dry_run ? NULL : store;
  pthread_mutex_init(&run->lock, NULL);
  pthread_cond_init(&run->wake_writer, NULL);

  char uuid[37];
  for (size_t i = 0; i < opts->delay_count && err == TL_OK && run->store; i++) {
    tl_session_spec s = *spec;
    s.probe = probe->flags & TL__PROBE_PREFIX ? opts->probe : probe->info.name;
    s.tag_keys = tag_keys;
    s.tag_values = tag_values;
    s.tag_count = ntags;
    s.delay_ns = opts->delays_ns[i];
    s.warmup = opts->warmup;
    err = tl_writer_begin(store, &s, &run->d[i].writer, uuid);
    if (err == TL_OK && results)
      snprintf(results[i].session_uuid, sizeof results[i].session_uuid, "%s", uuid);
  }
  if (err) {
    err = tl_fail(errbuf, errlen, err, "%s", tl_store_errmsg(store));
    goto fail_sessions;
  }

  /* The writer thread must not take the signals meant for the measuring
   * thread, so it starts with them blocked. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  pthread_t writer;
  int started = pthread_create(&writer, NULL, writer_main, run) == 0;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (!started) {
    err = tl_fail(errbuf, errlen, TL_ESYS, "%s", "cannot start the writer thread");
    goto fail_sessions;
  }

  err = tl__load_start(opts->load_cpu, opts->load_mem, &load, errbuf, errlen);
  if (err) {
    pthread_mutex_lock(&run->lock);
    run->writer_done = 1;
    pthread_cond_signal(&run->wake_writer);
    pthread_mutex_unlock(&run->lock);
    pthread_join(writer, NULL);
    goto fail_sessions;
  }

  run->start_hr = uv_hrtime();
  if (opts->count <= 0)
    run->deadline_hr = run->start_hr + (uint64_t)opts->duration_ns;
  current_run = run;
  char perr[512] = "";
  int probe_err = stop_requested ? TL_OK : probe->run(run, perr, sizeof perr);
  current_run = NULL;
  tl__load_stop(load);

  pthread_mutex_lock(&run->lock);
  run->writer_done = 1;
  pthread_cond_signal(&run->wake_writer);
  pthread_mutex_unlock(&run->lock);
  pthread_join(writer, NULL);
  if (opts->progress)
    fputc('\n', stderr);

  int interrupted = stop_requested || probe_err || run->oom || run->write_failed;
  const char *status = interrupted ? "interrupted" : "complete";
  int write_err = TL_OK;
  if (run->store) {
    pthread_mutex_lock(&run->lock);
    if (!run->write_failed)
      write_err = flush_locked(run);
    pthread_mutex_unlock(&run->lock);
  }
  if (run->store) { /* the load at the end, so a busy host shows; not worth failing the run */
    tl_writer *writers[TL_MAX_DELAYS];
    for (size_t i = 0; i < opts->delay_count; i++)
      writers[i] = run->d[i].writer;
    (void)tl__host_record_end(writers, opts->delay_count);
    for (size_t i = 0; i < opts->delay_count && run->probe_facts.count; i++)
      if (writers[i] &&
          tl_writer_add_facts(writers[i], run->probe_facts.facts, run->probe_facts.count) !=
              TL_OK &&
          !write_err)
        write_err = TL_EIO; /* a fact the probe learnt is data too: never dropped silently */
  }
  for (size_t i = 0; i < opts->delay_count; i++) {
    int e = tl_writer_end(run->d[i].writer, status); /* retries a failed flush */
    run->d[i].writer = NULL;
    if (e && !write_err)
      write_err = e;
    if (results)
      summarize(&run->d[i], opts->delays_ns[i], &results[i]);
  }
  if (write_err || run->write_failed) {
    err = tl_fail(errbuf, errlen, write_err ? write_err : TL_EIO, "%s",
                  run->write_err[0] ? run->write_err : tl_store_errmsg(store));
  } else if (probe_err) {
    err = tl_fail(errbuf, errlen, probe_err, "%s", perr);
  } else if (run->oom) {
    err = tl_fail(errbuf, errlen, TL_ENOMEM, "%s", "out of memory keeping samples");
  } else if (stop_requested) {
    err = tl_fail(errbuf, errlen, TL_EINTR, "%s", "stopped by a signal");
  }
  goto done;

fail_sessions:
  for (size_t i = 0; i < opts->delay_count; i++)
    tl_writer_end(run->d[i].writer, "interrupted");
done:
  tl__tune_restore(&tune);
  free(tag_keys);
  free(tag_values);
  for (size_t i = 0; i < opts->delay_count; i++)
    free(run->d[i].v);
  tl__host_clear(&run->probe_facts);
  pthread_cond_destroy(&run->wake_writer);
  pthread_mutex_destroy(&run->lock);
  free(run);
  return err;
}

/* ======================================================================== */
/* The closing sentence                                                      */

void tl_collect_summary(const char *probe, const tl_collect_result *r, size_t n, int pct, char *buf,
                        size_t len) {
  int64_t value[TL_MAX_DELAYS], delay[TL_MAX_DELAYS];
  n = n < TL_MAX_DELAYS ? n : TL_MAX_DELAYS;
  for (size_t i = 0; i < n; i++) {
    value[i] = pct == 50 ? r[i].p50_ns : pct == 99 ? r[i].p99_ns : r[i].p90_ns;
    delay[i] = r[i].delay_ns;
  }
  tl_percent_sentence(pct, probe, value, delay, n, buf, len);
}
