/* run.c: the run as a probe and the writer thread see it. The runner hands
 * delays to the probe in interleaved order (tl__run_next) and queues every
 * measured sample in chunks; a writer thread hands the chunks to the store
 * writers, commits them, and releases them for reuse. The measuring thread
 * never waits on the disk: it takes a mutex only to append a sample. Memory
 * stays bounded whatever the session's length: when QUEUE_CHUNKS chunks wait
 * for the writer (a slow disk, a lock held by another process), the runner
 * pauses between samples, never inside one, until the writer catches up. A
 * lock is waited out; a stop (signal or failed write) ends the run at the
 * probe's next chance. A run's life around this is collect.c's. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <uv.h>

#include "run_internal.h"

static volatile sig_atomic_t stop_requested;
static tl__run *volatile current_run;

int tl__run_stop_requested(void) { return stop_requested; }

void tl__run_set_current(tl__run *run) { current_run = run; }

const struct tl__run_view *tl__run_view(const tl__run *run) { return &run->view; }

int tl__run_stopping(const tl__run *run) { return stop_requested || run->oom || run->write_failed; }

int64_t tl__run_pauses(const tl__run *run) { return run->pauses; }

void *tl__run_probe_state(const tl__run *run) { return run->probe_state; }

void tl__run_set_probe_state(tl__run *run, void *state) { run->probe_state = state; }

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

static int run_over(const tl__run *run) {
  return tl__run_stopping(run) || (run->deadline_hr && uv_hrtime() >= run->deadline_hr);
}

/* Back-pressure: with QUEUE_CHUNKS waiting for the writer, no new sample
 * starts. A probe with samples still in flight (--concurrency) is told to
 * try again (TL__RUN_WAIT), so that no sample in flight includes the wait;
 * with none in flight the runner waits here, between samples, until the
 * writer releases chunks. Returns 0 to go on, -1 when the run is over. */
static int wait_for_room(tl__run *run) {
  if (run->issued > run->measured)
    return TL__RUN_WAIT;
  pthread_mutex_lock(&run->lock);
  run->pauses++;
  pthread_cond_signal(&run->wake_writer);
  while (atomic_load(&run->queued) >= QUEUE_CHUNKS && !run_over(run)) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 100000000; /* a stop or the deadline is seen within 100 ms */
    if (until.tv_nsec >= 1000000000) {
      until.tv_sec++;
      until.tv_nsec -= 1000000000;
    }
    pthread_cond_timedwait(&run->room, &run->lock, &until);
  }
  pthread_mutex_unlock(&run->lock);
  return run_over(run) ? -1 : 0;
}

int tl__run_next(tl__run *run) {
  if (run_over(run))
    return -1;
  if (run->store && atomic_load_explicit(&run->queued, memory_order_relaxed) >= QUEUE_CHUNKS) {
    int rc = wait_for_room(run);
    if (rc)
      return rc;
  }
  size_t n = run->view.delay_count;
  for (size_t k = 0; k < n; k++) {
    size_t i = (run->rr + k) % n;
    if (!delay_done(run, i)) {
      run->rr = (i + 1) % n;
      run->d[i].issued++;
      run->issued++;
      tl__causes_before(&run->causes); /* last: nothing after it before the timer is armed */
      return (int)i;
    }
  }
  return -1;
}

/* A chunk for the tail of d's queue, from the pool or new; NULL when out of
 * memory. Called with the lock held. */
static chunk *add_chunk_locked(tl__run *run, delay_state *d) {
  chunk *c = run->pool;
  if (c)
    run->pool = c->next;
  else if (!(c = malloc(sizeof *c)))
    return NULL;
  c->next = NULL;
  c->n = 0;
  if (d->tail)
    d->tail->next = c;
  else
    d->head = c;
  d->tail = c;
  size_t queued = atomic_fetch_add(&run->queued, 1) + 1;
  if (queued > run->queued_peak)
    run->queued_peak = queued;
  if (queued == WAKE_CHUNKS)
    pthread_cond_signal(&run->wake_writer);
  return c;
}

/* Queues one sample with its causes. */
static void record(tl__run *run, int index, int64_t latency_ns, tl__cause_cell cause) {
  delay_state *d = &run->d[index];
  run->measured++;
  if (d->measured++ < run->view.opts->warmup)
    return;
  if (latency_ns < 0)
    latency_ns = 0; /* a monotonic clock never runs back; a probe bug must not poison the store */
  pthread_mutex_lock(&run->lock);
  chunk *c = d->tail;
  if (!c || c->n == CHUNK_SAMPLES)
    c = add_chunk_locked(run, d);
  if (c) {
    c->cause[c->n] = cause;
    c->v[c->n++] = latency_ns;
    d->kept++;
  } else {
    run->oom = 1;
  }
  pthread_mutex_unlock(&run->lock);
}

void tl__run_record(tl__run *run, int index, int64_t latency_ns) {
  tl__cause_cell cause = tl__causes_after(&run->causes); /* first: the clock was just read */
  record(run, index, latency_ns, cause);
}

void tl__run_record_causes(tl__run *run, int index, int64_t latency_ns, int64_t runq_ns,
                           int64_t nivcsw, int64_t migrated) {
  tl__cause_cell cause = {TL__CAUSE_NONE, 0, -1};
  if (runq_ns >= 0) {
    int64_t us = (runq_ns + 500) / 1000;
    cause.runq_us = us < (int64_t)TL__CAUSE_NONE ? (uint32_t)us : TL__CAUSE_NONE - 1;
  }
  if (nivcsw >= 0)
    cause.nivcsw = (uint16_t)(nivcsw < 0xffff ? nivcsw : 0xffff);
  if (migrated >= 0)
    cause.migrated = (int8_t)(migrated > 0);
  record(run, index, latency_ns, cause);
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

/* Hands n samples to d's store writer, in one call per chunk. */
static int hand_over(delay_state *d, chunk *list, size_t skip, const int64_t *tail,
                     const tl__cause_cell *tail_causes, size_t tail_n) {
  int err = TL_OK;
  for (chunk *c = list; c && err == TL_OK; c = c->next, skip = 0) {
    err = tl_writer_add(d->writer, c->v + skip, c->n - skip);
    if (err == TL_OK)
      tl__cause_keep_piece(&d->keep, d->handed, c->v + skip, c->cause + skip, c->n - skip);
    d->handed += (int64_t)(c->n - skip);
  }
  if (err == TL_OK && tail_n) {
    err = tl_writer_add(d->writer, tail, tail_n);
    if (err == TL_OK)
      tl__cause_keep_piece(&d->keep, d->handed, tail, tail_causes, tail_n);
    d->handed += (int64_t)tail_n;
  }
  return err;
}

/* Moves queued samples to the store writers and commits them: the full
 * chunks, and with whole set the samples of the chunk being filled too.
 * Called with the lock held; the lock is released around the disk work and
 * the chunks handed over go back to the pool. A writer whose last flush
 * failed gets no new samples until a flush succeeds, so that a lock held by
 * another process makes the queue fill (and the runner pause) instead of
 * the store writer's buffer grow. */
static int flush_locked(tl__run *run, int whole, int64_t *tail_buf) {
  int err = TL_OK;
  for (size_t i = 0; i < run->view.delay_count && err == TL_OK; i++) {
    delay_state *d = &run->d[i];
    if (!d->writer)
      continue;
    if (d->stuck) {
      pthread_mutex_unlock(&run->lock);
      err = tl_writer_flush(d->writer);
      pthread_mutex_lock(&run->lock);
      d->stuck = err != TL_OK;
      if (err)
        continue;
    }
    /* The full chunks leave the queue; the measuring thread only appends
     * to the tail, so what is copied from it under the lock is stable. */
    chunk *list = NULL, *last = NULL;
    size_t skip = d->taken, nfull = 0, tail_n = 0;
    for (chunk *c = d->head; c && c != d->tail; c = c->next) {
      last = c;
      nfull++;
    }
    if (last) {
      list = d->head;
      d->head = last->next;
      last->next = NULL;
      d->taken = 0;
    }
    if (whole && d->tail && d->tail->n > d->taken) {
      tail_n = d->tail->n - d->taken;
      memcpy(tail_buf, d->tail->v + d->taken, tail_n * sizeof *tail_buf);
      memcpy(run->cause_tail, d->tail->cause + d->taken, tail_n * sizeof *run->cause_tail);
      d->taken = d->tail->n;
    }
    int64_t missed = d->missed - d->missed_flushed;
    d->missed_flushed = d->missed;
    pthread_mutex_unlock(&run->lock);
    err = hand_over(d, list, list ? skip : 0, tail_buf, run->cause_tail, tail_n);
    if (err == TL_OK) {
      tl_writer_add_missed(d->writer, missed);
      err = tl_writer_flush(d->writer);
      d->stuck = err != TL_OK; /* the samples stay buffered in the store writer */
    }
    /* The causes follow their samples into the file, now and then, in a
     * transaction of their own; one that fails is left out (its samples are
     * "not attributed"), never worth failing the run for. */
    if (err == TL_OK && tl__cause_keep_due(&d->keep, tl__os_mono_ns() / 1000000) &&
        tl__cause_keep_store(&d->keep, run->store, d->session_id) != TL_OK)
      d->keep.failed = 1;
    pthread_mutex_lock(&run->lock);
    if (last) {
      last->next = run->pool;
      run->pool = list;
      atomic_fetch_sub(&run->queued, nfull);
      pthread_cond_broadcast(&run->room);
    }
  }
  return err;
}

static void show_progress(tl__run *run) {
  int64_t done = 0, total = 0;
  for (size_t i = 0; i < run->view.delay_count; i++) {
    done += run->d[i].kept;
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

static int64_t mono_ms(void) { return tl__os_mono_ns() / 1000000; }

/* Every flush_ms the writer commits everything measured so far; in between
 * it is woken to move full chunks once WAKE_CHUNKS wait, or when the runner
 * pauses for room. A lock held by another process is waited out: the
 * samples stay queued and the flush is tried again at the next wake. */
void *tl__run_writer_main(void *arg) {
  tl__run *run = arg;
  const tl_collect_opts *o = run->view.opts;
  tl__tune_release_self();
  int64_t *tail_buf = malloc(CHUNK_SAMPLES * sizeof *tail_buf);
  int64_t due = mono_ms() + o->flush_ms;
  pthread_mutex_lock(&run->lock);
  while (!run->writer_done) {
    int64_t left = due - mono_ms();
    /* Early only when there is storing to do: after a failed write
     * nothing more is stored. */
    int early = run->store && !run->write_failed && atomic_load(&run->queued) >= WAKE_CHUNKS;
    if (left > 0 && !early) {
      struct timespec until;
      clock_gettime(CLOCK_REALTIME, &until);
      int64_t ns = until.tv_nsec + left * 1000000;
      until.tv_sec += (time_t)(ns / 1000000000);
      until.tv_nsec = (long)(ns % 1000000000);
      pthread_cond_timedwait(&run->wake_writer, &run->lock, &until);
    }
    if (run->writer_done)
      break;
    int whole = mono_ms() >= due;
    if (whole) {
      due = mono_ms() + o->flush_ms;
      pthread_mutex_unlock(&run->lock); /* a few small files: not under the lock */
      tl__counter_clock_tick(&run->counters, tl__os_mono_ns());
      pthread_mutex_lock(&run->lock);
    }
    if (run->store && !run->write_failed) {
      int err = tail_buf ? flush_locked(run, whole, tail_buf) : TL_ENOMEM;
      run->locked_out = err == TL_EBUSY;
      if (err && err != TL_EBUSY) {
        snprintf(run->write_err, sizeof run->write_err, "%s",
                 tail_buf ? tl_store_errmsg(run->store) : "out of memory");
        run->write_failed = 1;
        pthread_cond_broadcast(&run->room);
        if (run->wake)
          run->wake(run->wake_arg);
      }
    }
    if (o->progress && whole)
      show_progress(run);
  }
  pthread_mutex_unlock(&run->lock);
  free(tail_buf);
  return NULL;
}

/* After the run: commits what is left, waiting out a lock held by another
 * process for up to LOCK_PATIENCE_S (a signal gives up at once). */
int tl__run_flush_rest(tl__run *run) {
  int64_t *tail_buf = malloc(CHUNK_SAMPLES * sizeof *tail_buf);
  if (!tail_buf)
    return TL_ENOMEM;
  int64_t give_up = mono_ms() + LOCK_PATIENCE_S * 1000LL;
  int said = 0, err;
  pthread_mutex_lock(&run->lock);
  for (;;) {
    if (stop_requested && run->locked_out) {
      err = TL_EBUSY; /* stopped while locked out: give up without waiting once more */
      break;
    }
    err = flush_locked(run, 1, tail_buf);
    run->locked_out = err == TL_EBUSY;
    int left = 0;
    for (size_t i = 0; i < run->view.delay_count; i++) {
      const delay_state *d = &run->d[i];
      left |= d->stuck || (d->head && (d->head != d->tail || d->taken < d->tail->n));
    }
    if ((err == TL_OK && !left) || (err != TL_OK && err != TL_EBUSY))
      break;
    if (stop_requested || mono_ms() >= give_up)
      break;
    if (err == TL_EBUSY)
      tl__os_sleep(0, 100000000); /* the busy timeout has waited already, as a rule */
    if (err == TL_EBUSY && !said && run->view.opts->progress) {
      fprintf(stderr,
              "\n%s: the database is locked by another process; waiting to store the "
              "last samples (Ctrl-C gives up)\n",
              tl_progname());
      said = 1;
    }
  }
  pthread_mutex_unlock(&run->lock);
  free(tail_buf);
  return err;
}

void tl__run_free_chunks(chunk *c) {
  while (c) {
    chunk *next = c->next;
    free(c);
    c = next;
  }
}
