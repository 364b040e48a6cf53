/* collect.c: the session runner. It hands delays to a probe in interleaved
 * order and queues every measured sample in chunks; a writer thread hands
 * the chunks to the store writers, commits them, and releases them for
 * reuse. The measuring thread never waits on the disk: it takes a mutex only
 * to append a sample. Memory stays bounded whatever the session's length:
 * when QUEUE_CHUNKS chunks wait for the writer (a slow disk, a lock held by
 * another process), the runner pauses between samples, never inside one,
 * until the writer catches up (see tl__run_next). A lock is waited out; a
 * stop (signal or failed write) ends the run at the probe's next chance;
 * whatever was measured is committed and the sessions are marked
 * 'interrupted'. The closing sentence is computed from the stored samples
 * (summary.c). A dry run does the same into a scratch database of its own
 * in $TMPDIR, removed before tl_collect_run returns, so that it too runs in
 * bounded memory and its sentence is exactly a stored run's. */
#include <dirent.h>
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

#include "causes_internal.h"

static volatile sig_atomic_t stop_requested;
static tl__run *volatile current_run;

enum {
  CHUNK_SAMPLES = TL__RUN_CHUNK_SAMPLES, /* 128 KiB */
  QUEUE_CHUNKS = TL__RUN_QUEUE_CHUNKS,   /* 8 MiB waiting for the writer: the runner pauses */
  WAKE_CHUNKS = 16,                      /* the writer starts early once this many wait */
  LOCK_PATIENCE_S = 600,                 /* after the run, how long a held lock is waited out */
};

/* Samples in arrival order. */
typedef struct chunk {
  struct chunk *next;
  size_t n;
  int64_t v[CHUNK_SAMPLES];
  tl__cause_cell cause[CHUNK_SAMPLES]; /* what the thread read around each sample */
} chunk;

typedef struct {
  chunk *head, *tail; /* kept samples not yet released, oldest first */
  size_t taken;       /* samples of head already handed to the writer */
  int64_t kept;       /* samples kept (after warm-up) */
  int64_t measured;   /* including warm-up */
  int64_t issued;     /* handed out by tl__run_next (some may be in flight) */
  int64_t missed, missed_flushed;
  int64_t handed; /* samples handed to the store writer */
  int stuck;      /* the store writer holds samples a flush could not commit */
  tl_writer *writer;
  int64_t session_id;
  tl__cause_keep keep; /* causes of the slowest samples handed over, until committed */
} delay_state;

struct tl__run {
  struct tl__run_view view;
  delay_state d[TL_MAX_DELAYS];
  size_t rr; /* round-robin position */
  uint64_t start_hr, deadline_hr;
  int64_t issued, measured; /* of all delays, for the samples in flight */
  int64_t pauses;           /* times the runner waited for the writer */
  int oom;
  int write_failed;
  int locked_out; /* the last flush found the database locked */
  pthread_mutex_t lock;
  pthread_cond_t wake_writer;
  pthread_cond_t room;  /* the writer released chunks */
  atomic_size_t queued; /* chunks holding samples the writer has not released */
  size_t queued_peak;   /* the most chunks queued at once (under the lock) */
  chunk *pool;          /* released chunks, for reuse */
  int writer_done;
  tl_store *store;
  char write_err[512];
  void (*volatile wake)(void *); /* read by a signal handler */
  void *volatile wake_arg;
  tl_host probe_facts;        /* learnt by the probe while running; the measuring thread's own */
  void *probe_state;          /* from the probe's start to its run */
  tl__causes causes;          /* the measuring thread's reads around each sample */
  tl__counter_clock counters; /* the host's counters, read by the writer thread */
  tl__cause_cell *cause_tail; /* the causes of the tail samples being flushed */
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
static void *writer_main(void *arg) {
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
static int flush_rest(tl__run *run) {
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

/* ======================================================================== */
/* The closing sentence's numbers                                            */

typedef struct {
  tl_store *store;
  const delay_state *d;
} replay_src;

/* The session as stored. */
static int replay(void *arg, tl_samples_cb fn, void *ctx) {
  replay_src *src = arg;
  return tl_store_scan(src->store, src->d->session_id, fn, ctx);
}

/* ======================================================================== */
/* A dry run's scratch database                                              */

/* Removes the scratch folder and everything in it (the database and the
 * -wal and -shm files SQLite keeps next to it). */
static void scratch_remove(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    char path[4400];
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
        (size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < sizeof path)
      unlink(path);
  }
  if (d)
    closedir(d);
  rmdir(dir);
}

/* Makes a fresh folder in $TMPDIR (else /tmp) with a new database in it;
 * the caller closes the store and calls scratch_remove(dir). On failure
 * nothing is left behind and err says what to do. */
static int scratch_open(char *dir, size_t len, tl_store **out, char *err, size_t errlen) {
  const char *tmp = getenv("TMPDIR");
  if (!tmp || *tmp != '/')
    tmp = "/tmp";
  *out = NULL;
  if ((size_t)snprintf(dir, len, "%s/tl-dry-run-XXXXXX", tmp) >= len)
    return tl_fail(err, errlen, TL_EINVAL, "--dry-run: TMPDIR is too long");
  if (!mkdtemp(dir))
    return tl_fail(err, errlen, TL_ESYS,
                   "--dry-run: cannot make a scratch folder in %s: %s (set TMPDIR to a "
                   "writable folder)",
                   tmp, strerror(errno));
  char path[4400];
  snprintf(path, sizeof path, "%s/dry-run.db", dir);
  int rc = tl_store_open(out, path, 0);
  if (rc) {
    tl_fail(err, errlen, rc, "--dry-run: %s", tl_store_errmsg(*out));
    tl_store_close(*out);
    *out = NULL;
    scratch_remove(dir);
  }
  return rc;
}

/* ======================================================================== */
/* The run                                                                   */

static void free_chunks(chunk *c) {
  while (c) {
    chunk *next = c->next;
    free(c);
    c = next;
  }
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
  tl__cause_cell *cause_tail = malloc(CHUNK_SAMPLES * sizeof *cause_tail);
  if (!tag_keys || !tag_values || !run || !cause_tail) {
    free(tag_keys);
    free(tag_values);
    free(run);
    free(cause_tail);
    return tl_fail(errbuf, errlen, TL_ENOMEM, "%s", "out of memory");
  }
  for (size_t i = 0; i < spec->tag_count; i++) {
    tag_keys[i] = spec->tag_keys[i];
    tag_values[i] = spec->tag_values[i];
    for (size_t k = 0; k < otags.n && err == TL_OK; k++)
      if (strcmp(spec->tag_keys[i], otags.keys[k]) == 0) {
        err =
            tl_fail(errbuf, errlen, TL_EINVAL,
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
    free(cause_tail);
    return err;
  }
  char scratch_dir[4096] = "";
  tl_store *scratch = NULL;
  if (opts->dry_run &&
      (err = scratch_open(scratch_dir, sizeof scratch_dir, &scratch, errbuf, errlen)) != TL_OK) {
    tl__tune_restore(&tune);
    free(tag_keys);
    free(tag_values);
    free(run);
    free(cause_tail);
    return err;
  }
  if (scratch)
    store = scratch;
  run->cause_tail = cause_tail;
  tl__load *load = NULL;
  run->view.opts = opts;
  run->view.delays_ns = opts->delays_ns;
  run->view.delay_count = opts->delay_count;
  run->store = store;
  pthread_mutex_init(&run->lock, NULL);
  pthread_cond_init(&run->wake_writer, NULL);
  pthread_cond_init(&run->room, NULL);

  /* A probe that cannot start (a child that is not found, exits at once or
   * does not say hello) fails here, before any session exists. */
  int started_probe = 0;
  if (probe->start && !stop_requested) {
    current_run = run;
    err = probe->start(run, errbuf, errlen);
    current_run = NULL;
    if (err == TL_EINTR)
      tl_fail(errbuf, errlen, err, "%s", "stopped by a signal");
    if (err)
      goto done;
    started_probe = 1;
  }

  char uuid[37];
  for (size_t i = 0; i < opts->delay_count && err == TL_OK; i++) {
    tl_session_spec s = *spec;
    s.probe = probe->flags & TL__PROBE_PREFIX ? opts->probe : probe->name;
    s.tag_keys = tag_keys;
    s.tag_values = tag_values;
    s.tag_count = ntags;
    s.delay_ns = opts->delays_ns[i];
    s.warmup = opts->warmup;
    err = tl_writer_begin(store, &s, &run->d[i].writer, uuid);
    if (err == TL_OK)
      run->d[i].session_id = tl_writer_session_id(run->d[i].writer);
    if (err == TL_OK && results)
      snprintf(results[i].session_uuid, sizeof results[i].session_uuid, "%s", uuid);
  }
  if (err) {
    err = tl_fail(errbuf, errlen, err, "%s", tl_store_errmsg(store));
    goto fail_sessions;
  }

  /* The host's counters from now to the end, read by the writer thread. */
  tl__counter_clock_open(&run->counters, tl__os_mono_ns());

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
  int probe_err = TL_OK;
  tl__causes_open(&run->causes, probe->flags, opts->concurrency, opts->no_causes);
  tl__run_fact(run, "causes",
               run->causes.self  ? tl__self_measures()
               : opts->no_causes ? "not attributed: --no-causes"
               : (probe->flags & TL__PROBE_CAUSES)
                   ? "not attributed: more than one timer in flight"
                   : "what the child sends with its samples (runq=, nivcsw=, migrated=); "
                     "not attributed where it sends none",
               "what the measuring thread read about itself around each sample");
  if (stop_requested && started_probe)
    probe->abandon(run);
  else if (!stop_requested)
    probe_err = probe->run(run, perr, sizeof perr);
  tl__causes_close(&run->causes);
  started_probe = 0;
  current_run = NULL;
  tl__load_stop(load);

  pthread_mutex_lock(&run->lock);
  run->writer_done = 1;
  pthread_cond_signal(&run->wake_writer);
  pthread_mutex_unlock(&run->lock);
  pthread_join(writer, NULL);
  if (opts->progress)
    fputc('\n', stderr);

  int write_err = !run->write_failed ? flush_rest(run) : TL_OK;
  int interrupted = stop_requested || probe_err || run->oom || run->write_failed || write_err;
  const char *status = interrupted ? "interrupted" : "complete";
  if (write_err)
    snprintf(run->write_err, sizeof run->write_err, "%s", tl_store_errmsg(store));
  if (!write_err) { /* the load at the end, so a busy host shows; not worth failing the run */
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
  int ended = 1;
  for (size_t i = 0; i < opts->delay_count; i++) {
    int e = tl_writer_end(run->d[i].writer, status); /* retries a failed flush */
    run->d[i].writer = NULL;
    ended &= e == TL_OK;
    if (e && !write_err)
      write_err = e;
  }
  /* The causes not yet stored and the counters, the same host-wide rows on
   * every session of the run, once the sessions have their final status:
   * like the load, not worth failing the run for. */
  tl__counter_clock_tick(&run->counters, tl__os_mono_ns());
  for (size_t i = 0; i < opts->delay_count && ended && !write_err; i++) {
    (void)tl__cause_keep_store(&run->d[i].keep, store, run->d[i].session_id);
    (void)tl__counter_clock_store(&run->counters, store, run->d[i].session_id);
  }
  /* The closing sentence's numbers come from the samples as stored, which
   * also tells how many could not be stored. */
  int64_t kept = 0, stored = 0;
  int counted = 1;
  for (size_t i = 0; i < opts->delay_count; i++) {
    tl_collect_result r = {.delay_ns = opts->delays_ns[i]};
    replay_src src = {run->store, &run->d[i]};
    char serr[256];
    kept += run->d[i].kept;
    if (!run->d[i].handed) {
      r.samples = 0; /* nothing reached the store: nothing to read back */
    } else if (tl__summarize(replay, &src, &r, serr, sizeof serr) != TL_OK) {
      counted = 0;
      if (!write_err && !run->write_failed)
        err = tl_fail(errbuf, errlen, TL_EIO, "reading the stored samples back: %s",
                      tl_store_errmsg(store));
    }
    stored += r.samples;
    if (results) {
      snprintf(r.session_uuid, sizeof r.session_uuid, "%s", results[i].session_uuid);
      if (scratch)
        r.session_uuid[0] = '\0'; /* a dry run's sessions are gone with the scratch database */
      r.queued_peak = (int64_t)run->queued_peak * CHUNK_SAMPLES;
      results[i] = r;
    }
  }
  if (write_err || run->write_failed) {
    const char *cause = run->write_err[0] ? run->write_err : tl_store_errmsg(store);
    int e = write_err ? write_err : TL_EIO;
    if (counted && stored < kept)
      err = tl_fail(errbuf, errlen, e, "%s; %lld of %lld samples could not be stored", cause,
                    (long long)(kept - stored), (long long)kept);
    else
      err = tl_fail(errbuf, errlen, e, "%s", cause);
  } else if (err) {
    /* reading back failed; the message is set */
  } else if (probe_err) {
    err = tl_fail(errbuf, errlen, probe_err, "%s", perr);
  } else if (run->oom) {
    err = tl_fail(errbuf, errlen, TL_ENOMEM, "%s", "out of memory keeping samples");
  } else if (stop_requested) {
    err = tl_fail(errbuf, errlen, TL_EINTR, "%s", "stopped by a signal");
  }
  goto done;

fail_sessions:
  if (started_probe)
    probe->abandon(run);
  for (size_t i = 0; i < opts->delay_count; i++)
    tl_writer_end(run->d[i].writer, "interrupted");
done:
  tl__tune_restore(&tune);
  free(tag_keys);
  free(tag_values);
  for (size_t i = 0; i < opts->delay_count; i++) {
    free_chunks(run->d[i].head);
    tl__cause_keep_free(&run->d[i].keep);
  }
  free_chunks(run->pool);
  tl__counter_clock_close(&run->counters);
  free(run->cause_tail);
  tl__host_clear(&run->probe_facts);
  if (scratch) {
    tl_store_close(scratch);
    scratch_remove(scratch_dir);
  }
  pthread_cond_destroy(&run->room);
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
