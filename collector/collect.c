/* collect.c: a run's life (tl_collect_run): the options checked, the
 * measuring thread tuned, one session per delay begun, the writer thread
 * and the probe started (run.c keeps the run they share), and at the end
 * every session ended, 'complete' or 'interrupted', with whatever was
 * measured committed. The closing sentence is computed from the stored
 * samples (summary.c). A dry run does the same into a scratch database of
 * its own in $TMPDIR, removed before tl_collect_run returns, so that it too
 * runs in bounded memory and its sentence is exactly a stored run's. */
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

#include "run_internal.h"

void tl_collect_opts_init(tl_collect_opts *o) {
  memset(o, 0, sizeof *o);
  o->probe = "settimeout";
  o->warmup = 5;
  o->flush_ms = 1000;
  o->cpu = -1;
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

/* What one tl_collect_run holds from its start to its end, beyond the run
 * the probe sees: the sessions' tags, the tuning to undo, the scratch
 * database of a dry run. */
typedef struct {
  const tl_collect_opts *opts;
  const tl__probe *probe;
  tl__opt_tags otags; /* tl's own tags: the sessions' tags point into it */
  const char **tag_keys, **tag_values;
  size_t ntags;
  tl__tune tune;
  char scratch_dir[4096];
  tl_store *scratch;
  int started_probe;
} run_setup;

/* The user's tags plus those tl records for the options that shape the
 * data into su's tag arrays; a user tag may not claim one of tl's keys. */
static int run_tags(run_setup *su, const tl_session_spec *spec, char *errbuf, size_t errlen) {
  const tl__opt_tags *otags = &su->otags;
  tl__opts_tags(su->opts, &su->otags);
  su->ntags = spec->tag_count + otags->n;
  su->tag_keys = malloc((su->ntags + 1) * sizeof *su->tag_keys);
  su->tag_values = malloc((su->ntags + 1) * sizeof *su->tag_values);
  if (!su->tag_keys || !su->tag_values)
    return tl_fail(errbuf, errlen, TL_ENOMEM, "%s", "out of memory");
  int err = TL_OK;
  for (size_t i = 0; i < spec->tag_count; i++) {
    su->tag_keys[i] = spec->tag_keys[i];
    su->tag_values[i] = spec->tag_values[i];
    for (size_t k = 0; k < otags->n && err == TL_OK; k++)
      if (strcmp(spec->tag_keys[i], otags->keys[k]) == 0) {
        err =
            tl_fail(errbuf, errlen, TL_EINVAL,
                    "tag '%s' is recorded by tl from the options; use another key", otags->keys[k]);
      }
  }
  for (size_t k = 0; k < otags->n; k++) {
    su->tag_keys[spec->tag_count + k] = otags->keys[k];
    su->tag_values[spec->tag_count + k] = otags->values[k];
  }
  return err;
}

/* A new run on store with its locks, and the runner's state the probe reads. */
static void run_init(tl__run *run, tl_store *store, const run_setup *su,
                     tl__cause_cell *cause_tail) {
  const tl_collect_opts *opts = su->opts;
  run->cause_tail = cause_tail;
  run->view.opts = opts;
  run->view.delays_ns = opts->delays_ns;
  run->view.delay_count = opts->delay_count;
  run->view.arm_from = tl__arm_from(opts);
  run->view.browser_mode = tl__browser_mode(opts);
  run->store = store;
  pthread_mutex_init(&run->lock, NULL);
  pthread_cond_init(&run->wake_writer, NULL);
  pthread_cond_init(&run->room, NULL);
}

/* One session per delay, each with its writer; their UUIDs into results. */
static int begin_sessions(tl__run *run, const tl_session_spec *spec, const run_setup *su,
                          tl_collect_result *results) {
  const tl_collect_opts *opts = su->opts;
  char uuid[37];
  int err = TL_OK;
  for (size_t i = 0; i < opts->delay_count && err == TL_OK; i++) {
    tl_session_spec s = *spec;
    s.probe = su->probe->flags & TL__PROBE_PREFIX ? opts->probe : su->probe->name;
    s.tag_keys = su->tag_keys;
    s.tag_values = su->tag_values;
    s.tag_count = su->ntags;
    s.delay_ns = opts->delays_ns[i];
    s.warmup = opts->warmup;
    err = tl_writer_begin(run->store, &s, &run->d[i].writer, uuid);
    if (err == TL_OK)
      run->d[i].session_id = tl_writer_session_id(run->d[i].writer);
    if (err == TL_OK && results)
      snprintf(results[i].session_uuid, sizeof results[i].session_uuid, "%s", uuid);
  }
  return err;
}

/* Starts the writer thread. It must not take the signals meant for the
 * measuring thread, so it starts with them blocked. */
static int start_writer(tl__run *run, pthread_t *writer) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  int started = pthread_create(writer, NULL, tl__run_writer_main, run) == 0;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return started;
}

/* Tells the writer thread to finish what is queued, and waits for it. */
static void stop_writer(tl__run *run, pthread_t writer) {
  pthread_mutex_lock(&run->lock);
  run->writer_done = 1;
  pthread_cond_signal(&run->wake_writer);
  pthread_mutex_unlock(&run->lock);
  pthread_join(writer, NULL);
}

/* The measuring itself: the probe's run, with the thread's own reads around
 * each sample. Returns the probe's error (its message in perr). */
static int measure(tl__run *run, run_setup *su, char *perr, size_t perrlen) {
  const tl_collect_opts *opts = su->opts;
  const tl__probe *probe = su->probe;
  run->start_hr = uv_hrtime();
  if (opts->count <= 0)
    run->deadline_hr = run->start_hr + (uint64_t)opts->duration_ns;
  tl__run_set_current(run);
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
  if (tl__run_stop_requested() && su->started_probe)
    probe->abandon(run);
  else if (!tl__run_stop_requested())
    probe_err = probe->run(run, perr, perrlen);
  tl__causes_close(&run->causes);
  su->started_probe = 0;
  tl__run_set_current(NULL);
  return probe_err;
}

/* After the writer thread: the rest of the samples flushed, the facts of the
 * end of the run added, every session ended with its status, then the
 * causes and counters stored. Returns the first write error. */
static int end_sessions(tl__run *run, int probe_err) {
  const tl_collect_opts *opts = run->view.opts;
  int write_err = !run->write_failed ? tl__run_flush_rest(run) : TL_OK;
  int interrupted =
      tl__run_stop_requested() || probe_err || run->oom || run->write_failed || write_err;
  const char *status = interrupted ? "interrupted" : "complete";
  if (write_err)
    snprintf(run->write_err, sizeof run->write_err, "%s", tl_store_errmsg(run->store));
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
    (void)tl__cause_keep_store(&run->d[i].keep, run->store, run->d[i].session_id);
    (void)tl__counter_clock_store(&run->counters, run->store, run->d[i].session_id);
  }
  return write_err;
}

/* The closing sentence's numbers come from the samples as stored, which
 * also tells how many could not be stored (*kept against *stored; *counted
 * is 0 when some could not be read back). */
static int read_back(tl__run *run, int write_err, int dry_run, tl_collect_result *results,
                     int64_t *kept, int64_t *stored, int *counted, char *errbuf, size_t errlen) {
  const tl_collect_opts *opts = run->view.opts;
  int err = TL_OK;
  *kept = *stored = 0;
  *counted = 1;
  for (size_t i = 0; i < opts->delay_count; i++) {
    tl_collect_result r = {.delay_ns = opts->delays_ns[i]};
    replay_src src = {run->store, &run->d[i]};
    char serr[256];
    *kept += run->d[i].kept;
    if (!run->d[i].handed) {
      r.samples = 0; /* nothing reached the store: nothing to read back */
    } else if (tl__summarize(replay, &src, &r, serr, sizeof serr) != TL_OK) {
      *counted = 0;
      if (!write_err && !run->write_failed)
        err = tl_fail(errbuf, errlen, TL_EIO, "reading the stored samples back: %s",
                      tl_store_errmsg(run->store));
    }
    *stored += r.samples;
    if (results) {
      snprintf(r.session_uuid, sizeof r.session_uuid, "%s", results[i].session_uuid);
      if (dry_run)
        r.session_uuid[0] = '\0'; /* a dry run's sessions are gone with the scratch database */
      r.queued_peak = (int64_t)run->queued_peak * CHUNK_SAMPLES;
      results[i] = r;
    }
  }
  return err;
}

/* Ends a started run: the writer stopped, the sessions ended, the samples
 * read back, and the run's one error chosen, the first cause first. */
static int finish_run(tl__run *run, pthread_t writer, int probe_err, const char *perr,
                      const run_setup *su, tl_collect_result *results, char *errbuf,
                      size_t errlen) {
  stop_writer(run, writer);
  if (su->opts->progress)
    fputc('\n', stderr);
  int write_err = end_sessions(run, probe_err);
  int64_t kept, stored;
  int counted;
  int err = read_back(run, write_err, su->scratch != NULL, results, &kept, &stored, &counted,
                      errbuf, errlen);
  if (write_err || run->write_failed) {
    const char *cause = run->write_err[0] ? run->write_err : tl_store_errmsg(run->store);
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
  } else if (tl__run_stop_requested()) {
    err = tl_fail(errbuf, errlen, TL_EINTR, "%s", "stopped by a signal");
  }
  return err;
}

/* The sessions begun, the writer thread and the load started, the probe
 * run, and everything ended: the part of a run after the probe started. */
static int run_sessions(tl__run *run, const tl_session_spec *spec, run_setup *su,
                        tl_collect_result *results, char *errbuf, size_t errlen) {
  const tl_collect_opts *opts = su->opts;
  int err = begin_sessions(run, spec, su, results);
  if (err) {
    /* Those that began end now, with no samples, rather than stay 'running'. */
    tl_fail(errbuf, errlen, err, "%s", tl_store_errmsg(run->store));
    for (size_t i = 0; i < su->opts->delay_count; i++) {
      tl_writer_end(run->d[i].writer, "interrupted");
      run->d[i].writer = NULL;
    }
    return err;
  }

  /* The host's counters from now to the end, read by the writer thread. */
  tl__counter_clock_open(&run->counters, tl__os_mono_ns());
  pthread_t writer;
  if (!start_writer(run, &writer))
    return tl_fail(errbuf, errlen, TL_ESYS, "%s", "cannot start the writer thread");
  tl__load *load = NULL;
  err = tl__load_start(opts->load_cpu, opts->load_mem, &load, errbuf, errlen);
  if (err) {
    stop_writer(run, writer);
    return err;
  }
  char perr[512] = "";
  int probe_err = measure(run, su, perr, sizeof perr);
  tl__load_stop(load);
  return finish_run(run, writer, probe_err, perr, su, results, errbuf, errlen);
}

/* Frees what a run holds, removes a dry run's scratch database and undoes
 * the tuning. */
static void run_free(tl__run *run, run_setup *su) {
  tl__tune_restore(&su->tune);
  free(su->tag_keys);
  free(su->tag_values);
  if (!run)
    return;
  for (size_t i = 0; i < su->opts->delay_count; i++) {
    tl__run_free_chunks(run->d[i].head);
    tl__cause_keep_free(&run->d[i].keep);
  }
  tl__run_free_chunks(run->pool);
  tl__counter_clock_close(&run->counters);
  free(run->cause_tail);
  tl__host_clear(&run->probe_facts);
  if (su->scratch) {
    tl_store_close(su->scratch);
    scratch_remove(su->scratch_dir);
  }
  pthread_cond_destroy(&run->room);
  pthread_cond_destroy(&run->wake_writer);
  pthread_mutex_destroy(&run->lock);
  free(run);
}

/* Before any session exists: the tags, then the measuring thread's CPU,
 * priority and memory lock (a refusal is an error before any session
 * exists), then a dry run's scratch database. */
static int run_prepare(run_setup *su, const tl_session_spec *spec, char *errbuf, size_t errlen) {
  int err = run_tags(su, spec, errbuf, errlen);
  if (err)
    return err;
  err = tl__tune_apply(&su->tune, su->opts, errbuf, errlen);
  if (err)
    return err;
  if (su->opts->dry_run)
    err = scratch_open(su->scratch_dir, sizeof su->scratch_dir, &su->scratch, errbuf, errlen);
  return err;
}

int tl_collect_run(tl_store *store, const tl_session_spec *spec, const tl_collect_opts *opts,
                   tl_collect_result *results, char *errbuf, size_t errlen) {
  char why[TL_WHY_MAX];
  int err = tl_collect_opts_check(opts, why, sizeof why);
  if (err) {
    return tl_fail(errbuf, errlen, err, "%s", why);
  }
  run_setup su = {.opts = opts, .probe = tl__probe_lookup(opts->probe)};
  if (opts->flush_ms <= 0 || (!store && !opts->dry_run)) {
    return tl_fail(errbuf, errlen, TL_EINVAL, "%s", "incomplete collection options");
  }
  if (results)
    memset(results, 0, opts->delay_count * sizeof *results);
  tl__run *run = calloc(1, sizeof *run);
  tl__cause_cell *cause_tail = malloc(CHUNK_SAMPLES * sizeof *cause_tail);
  if (!run || !cause_tail) {
    free(run);
    free(cause_tail);
    return tl_fail(errbuf, errlen, TL_ENOMEM, "%s", "out of memory");
  }
  err = run_prepare(&su, spec, errbuf, errlen);
  if (err) {
    free(cause_tail);
    free(run);
    run_free(NULL, &su);
    return err;
  }
  run_init(run, su.scratch ? su.scratch : store, &su, cause_tail);

  /* A probe that cannot start (a child that is not found, exits at once or
   * does not say hello) fails here, before any session exists. */
  if (su.probe->start && !tl__run_stop_requested()) {
    tl__run_set_current(run);
    err = su.probe->start(run, errbuf, errlen);
    tl__run_set_current(NULL);
    if (err == TL_EINTR)
      tl_fail(errbuf, errlen, err, "%s", "stopped by a signal");
    su.started_probe = err == TL_OK;
  }
  if (err == TL_OK)
    err = run_sessions(run, spec, &su, results, errbuf, errlen);
  if (err && su.started_probe) { /* failed before the probe ran */
    su.probe->abandon(run);
    for (size_t i = 0; i < opts->delay_count; i++)
      tl_writer_end(run->d[i].writer, "interrupted");
  }
  run_free(run, &su);
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
