/* test_probes.c: every probe collects a short session through the collector
 * library, checked in the database; the exec: probe's failure modes (a child
 * killed mid-run, malformed output) leave 'interrupted' sessions with the
 * samples received and no process or descriptor behind; option checks
 * reject bad combinations. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>
#include <uv.h>

#include "collect_fixture.h"
#include "collect_internal.h"
#include "support.h"

#define FIXTURE_PROBE "exec:" TL_FIXTURES "/probe.sh"
#define FIXTURE_PROBE2 "exec:" TL_FIXTURES "/probe2.sh"

typedef tl_collect_fixture fixture;

static tl_session_spec spec_of(fixture *f) {
  return tl_collect_fixture_spec(f, "run-probes", "probes", "test_probes");
}

static tl_collect_opts opts_of(const char *probe, int64_t count) {
  tl_collect_opts o;
  tl_collect_opts_init(&o);
  o.probe = probe;
  o.count = count;
  o.warmup = 0;
  o.flush_ms = 20;
  return o;
}

/* The sessions of one probe, oldest first; checks count, status and that
 * every stored sample is at least floor_ns[i] for session i. */
static void check_sessions(fixture *f, const char *probe, const char *status, size_t sessions,
                           int64_t count, const int64_t *floor_ns, tl_session_list *out) {
  tl_filter flt;
  tl_filter_init(&flt);
  flt.probe = probe;
  assert_int_equal(tl_store_sessions(f->store, &flt, out), TL_OK);
  assert_int_equal(out->count, sessions);
  for (size_t i = 0; i < out->count; i++) {
    tl_session *s = &out->items[i];
    assert_string_equal(s->status, status);
    assert_string_equal(s->probe, probe);
    assert_int_equal(s->sample_count, count);
    tl_test_span sp = {0, 0, 0};
    assert_int_equal(tl_store_scan(f->store, s->id, tl_test_measure, &sp), TL_OK);
    assert_int_equal(sp.n, count);
    if (floor_ns && count)
      assert_true(sp.min >= floor_ns[i]);
    if (count)
      assert_true(sp.max < 5000000000LL);
  }
}

/* Runs the exec probe on one delay (0) of up to 10 samples; returns what
 * tl_collect_run returns, its error in err. */
static int run_one_delay(fixture *f, const char *probe, char *err, size_t len) {
  tl_collect_opts o = opts_of(probe, 10);
  o.delays_ns[0] = 0;
  o.delay_count = 1;
  tl_session_spec spec = spec_of(f);
  err[0] = '\0';
  return tl_collect_run(f->store, &spec, &o, NULL, err, len);
}

static const char *tag_of(fixture *f, int64_t session_id, const char *key, char *buf, size_t len) {
  tl_fact_row *rows;
  size_t n;
  assert_int_equal(tl_store_tags(f->store, session_id, &rows, &n), TL_OK);
  const char *found = NULL;
  for (size_t i = 0; i < n; i++)
    if (strcmp(rows[i].key, key) == 0) {
      snprintf(buf, len, "%s", rows[i].value);
      found = buf;
    }
  tl_fact_rows_free(rows, n);
  return found;
}

static const char *fact_of(fixture *f, int64_t session_id, const char *key, char *buf, size_t len) {
  tl_fact_row *rows;
  size_t n;
  assert_int_equal(tl_store_facts(f->store, session_id, &rows, &n), TL_OK);
  const char *v = tl_fact_rows_get(rows, n, key);
  if (v)
    snprintf(buf, len, "%s", v);
  tl_fact_rows_free(rows, n);
  return v ? buf : NULL;
}

static int open_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  if (!d)
    return -1;
  int n = 0;
  while (readdir(d))
    n++;
  closedir(d);
  return n;
}

static double cpu_seconds(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static void no_children_left(void) {
  errno = 0;
  assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
  assert_int_equal(errno, ECHILD);
}

/* ------------------------------------------------------------------------ */

/* clock_nanosleep never returns before the requested end: every sample is
 * at least its delay, sub-millisecond delays included. */
static void nanosleep_collects(void **state) {
  fixture *f = *state;
  tl_collect_opts o = opts_of("nanosleep", 30);
  const int64_t d[] = {0, 200000, 2000000};
  memcpy(o.delays_ns, d, sizeof d);
  o.delay_count = 3;
  tl_session_spec spec = spec_of(f);
  tl_collect_result r[3];
  char err[256];
  assert_int_equal(tl_collect_run(f->store, &spec, &o, r, err, sizeof err), TL_OK);
  tl_session_list l;
  check_sessions(f, "nanosleep", "complete", 3, 30, d, &l);
  assert_int_equal(l.items[1].delay_ns, 200000);
  tl_session_list_free(&l);
}

static void timerfd_collects(void **state) {
  fixture *f = *state;
  tl_collect_opts o = opts_of("timerfd", 30);
  const int64_t d[] = {0, 300000, 2000000};
  memcpy(o.delays_ns, d, sizeof d);
  o.delay_count = 3;
  tl_session_spec spec = spec_of(f);
  char err[256];
  assert_int_equal(tl_collect_run(f->store, &spec, &o, NULL, err, sizeof err), TL_OK);
  tl_session_list l;
  const int64_t floor[] = {1, 300000, 2000000};
  check_sessions(f, "timerfd", "complete", 3, 30, floor, &l);
  tl_session_list_free(&l);
}

/* Every wake-up is at or after its scheduled instant, so every sample is at
 * least the interval; the interval is the session's delay and a tag. */
static void periodic_collects(void **state) {
  fixture *f = *state;
  tl_collect_opts o = opts_of("periodic", 300);
  o.interval_ns = 500000;
  assert_int_equal(tl_collect_fixed_delay(&o), 500000);
  o.delays_ns[0] = 500000;
  o.delay_count = 1;
  o.warmup = 3;
  tl_session_spec spec = spec_of(f);
  char err[256];
  uint64_t t0 = uv_hrtime();
  assert_int_equal(tl_collect_run(f->store, &spec, &o, NULL, err, sizeof err), TL_OK);
  uint64_t took = uv_hrtime() - t0;
  tl_session_list l;
  const int64_t floor[] = {500000};
  check_sessions(f, "periodic", "complete", 1, 300, floor, &l);
  /* 303 periods of 0.5 ms: at least 150 ms; missed periods only add. */
  assert_true(took >= 150000000ULL);
  assert_true(l.items[0].missed_periods >= 0);
  char buf[64];
  assert_non_null(tag_of(f, l.items[0].id, "interval_ns", buf, sizeof buf));
  assert_string_equal(buf, "500000");
  tl_session_list_free(&l);
}

/* Skips the calling case (test) unless probe's program is here. */
static void need(const char *test, const char *probe) {
  tl__child_paths p;
  char err[512];
  if (tl__child_locate(probe, &p, err, sizeof err) != TL_OK)
    tl_test_skip_case(test, err);
}

/* The node probe speaks version 2: told the plan once, it arms each timer
 * from the previous callback and streams its samples back; where it armed
 * them is a tag, node's version a fact. */
static void node_collects(void **state) {
  fixture *f = *state;
  need(__func__, "node");
  tl_collect_opts o = opts_of("node", 15);
  o.delays_ns[0] = 0;
  o.delays_ns[1] = 5000000;
  o.delay_count = 2;
  o.warmup = 2;
  tl_session_spec spec = spec_of(f);
  char err[512];
  assert_int_equal(tl_collect_run(f->store, &spec, &o, NULL, err, sizeof err), TL_OK);
  tl_session_list l;
  /* Node's timers count from the loop's cached time, like settimeout: a
   * 5 ms timer may fire a little early on the real clock, never 1 ms. */
  const int64_t floor[] = {0, 4000000};
  check_sessions(f, "node", "complete", 2, 15, floor, &l);
  char buf[300];
  for (size_t i = 0; i < l.count; i++) {
    assert_string_equal(tag_of(f, l.items[i].id, "arm_from", buf, sizeof buf), "timer");
    assert_non_null(fact_of(f, l.items[i].id, "probe.node.version", buf, sizeof buf));
    assert_int_equal(buf[0], 'v');
    assert_non_null(fact_of(f, l.items[i].id, "probe.node.libuv", buf, sizeof buf));
  }
  tl_session_list_free(&l);
  no_children_left();
}

/* Each arming context collects and is recorded; a --duration run ends when
 * the time is up, with the child stopped by closing its stdin. */
static void node_contexts_and_duration(void **state) {
  fixture *f = *state;
  need(__func__, "node");
  static const char *contexts[] = {"immediate", "io"};
  tl_session_spec spec = spec_of(f);
  char err[512], buf[64];
  tl_collect_opts o = opts_of("node", 10);
  o.delays_ns[0] = 1000000;
  o.delay_count = 1;
  for (size_t k = 0; k < 2; k++) {
    o.arm_from = contexts[k];
    assert_int_equal(tl_collect_run(f->store, &spec, &o, NULL, err, sizeof err), TL_OK);
  }
  tl_session_list l;
  /* Armed outside a timer callback, node counts from a loop time that may
   * be older still: no floor. */
  check_sessions(f, "node", "complete", 2, 10, NULL, &l);
  for (size_t k = 0; k < 2; k++)
    assert_string_equal(tag_of(f, l.items[k].id, "arm_from", buf, sizeof buf), contexts[k]);
  tl_session_list_free(&l);
  o.arm_from = NULL;
  o.count = 0;
  o.duration_ns = 1500000000;
  uint64_t t0 = uv_hrtime();
  assert_int_equal(tl_collect_run(f->store, &spec, &o, NULL, err, sizeof err), TL_OK);
  double secs = (double)(uv_hrtime() - t0) / 1e9;
  if (secs > 20) /* node's start plus 1.5 s, not a hang until a kill */
    fail_msg("a 1.5 s run took %.1f s", secs);
  tl_filter flt;
  tl_filter_init(&flt);
  flt.probe = "node";
  assert_int_equal(tl_store_sessions(f->store, &flt, &l), TL_OK);
  assert_int_equal(l.count, 3);
  assert_string_equal(l.items[2].status, "complete");
  assert_true(l.items[2].sample_count >= 10); /* 1 ms timers for 1.5 s */
  tl_session_list_free(&l);
  no_children_left();
}

/* The exec probe, a child killed after n samples: an error that says so
 * and how the child ended, one 'interrupted' session with the n samples
 * received, the child reaped, no descriptor left open, a clean check. */
static void assert_killed_after(fixture *f, const char *probe, int64_t n) {
  int fds = open_fds();
  char err[512], after[32];
  assert_int_not_equal(run_one_delay(f, probe, err, sizeof err), TL_OK);
  snprintf(after, sizeof after, "after %lld samples", (long long)n);
  assert_non_null(strstr(err, after));
  /* dash reports its child's SIGKILL as status 137 (128 + 9). */
  assert_true(strstr(err, "killed by signal 9") || strstr(err, "status 137"));
  tl_session_list l;
  check_sessions(f, probe, "interrupted", 1, n, NULL, &l);
  tl_session_list_free(&l);
  no_children_left();
  assert_int_equal(open_fds(), fds);
  assert_int_equal(tl_store_check(f->store, NULL, NULL), TL_OK);
}

/* The exec probe, whose output goes wrong after n samples: TL_EINVAL with
 * said in the error, the n samples kept in one 'interrupted' session. */
static void assert_malformed(fixture *f, const char *probe, const char *said, int64_t n) {
  char err[512];
  assert_int_equal(run_one_delay(f, probe, err, sizeof err), TL_EINVAL);
  if (!strstr(err, said))
    fail_msg("'%s' said '%s', want '%s'", probe, err, said);
  tl_session_list l;
  check_sessions(f, probe, "interrupted", 1, n, NULL, &l);
  tl_session_list_free(&l);
}

/* A version 2 child measures the plan: delays interleaved in its order,
 * exactly count samples each, its fact kept. */
static void exec_v2_collects(void **state) {
  fixture *f = *state;
  int fds = open_fds();
  tl_collect_opts o = opts_of(FIXTURE_PROBE2, 5);
  o.delays_ns[0] = 0;
  o.delays_ns[1] = 20000000;
  o.delay_count = 2;
  o.warmup = 1;
  tl_session_spec spec = spec_of(f);
  char err[512], buf[64];
  assert_int_equal(tl_collect_run(f->store, &spec, &o, NULL, err, sizeof err), TL_OK);
  tl_session_list l;
  const int64_t floor[] = {0, 20000000};
  check_sessions(f, FIXTURE_PROBE2, "complete", 2, 5, floor, &l);
  assert_string_equal(fact_of(f, l.items[0].id, "probe.fixture.shell", buf, sizeof buf), "sh");
  assert_null(tag_of(f, l.items[0].id, "arm_from", buf, sizeof buf));
  tl_session_list_free(&l);
  no_children_left();
  assert_int_equal(open_fds(), fds);
}

/* Killed in the middle of a batch (half a line written): every complete
 * sample received is kept, the half line is not, the session is
 * 'interrupted' and the error says how the child ended. */
static void exec_v2_killed_mid_batch(void **state) {
  assert_killed_after(*state, FIXTURE_PROBE2 " die 6", 6);
}

/* hello (1), fact (2), a batch of four samples (3-6), then a line that is
 * not a sample: line 7, the four samples kept. */
static void exec_v2_malformed(void **state) {
  fixture *f = *state;
  assert_malformed(f, FIXTURE_PROBE2 " extra", "line 7 of its output: unknown message", 4);
  /* A fact tl cannot take, and a version tl does not speak. */
  char err[512];
  assert_int_equal(run_one_delay(f, "exec:echo hello 2; echo fact Bad.Key x", err, sizeof err),
                   TL_EINVAL);
  assert_non_null(strstr(err, "line 2 of its output: a fact's key"));
  assert_int_equal(run_one_delay(f, "exec:echo hello 3", err, sizeof err), TL_EINVAL);
  assert_non_null(strstr(err, "line 1 of its output: unsupported protocol version"));
  no_children_left();
}

/* A version 2 child that says hello and then nothing, or stops after three
 * samples without exiting, does not hang the run: once it has sent no
 * sample for twice the plan's longest delay plus a slack (shortened here by
 * TL_TEST_PROBE_SILENCE_MS) the run ends with one clear error and the
 * session 'interrupted' with every sample received; in a --duration run
 * too, which used to end 'complete'. */
static void exec_v2_silent(void **state) {
  fixture *f = *state;
  setenv("TL_TEST_PROBE_SILENCE_MS", "300", 1);
  const char *stops = "exec:echo hello 2; read plan; printf 'sample 5\\nsample 6\\nsample 7\\n'; "
                      "exec sleep 600";
  tl_collect_opts o = opts_of(stops, 10);
  o.delays_ns[0] = 0;
  o.delay_count = 1;
  tl_session_spec spec = spec_of(f);
  char err[512] = "";
  assert_int_equal(tl_collect_run(f->store, &spec, &o, NULL, err, sizeof err), TL_EIO);
  if (!strstr(err, "no sample for") || !strstr(err, "after 3 samples") || strchr(err, '\n'))
    fail_msg("a child silent after 3 samples: '%s'", err);
  tl_session_list l;
  check_sessions(f, stops, "interrupted", 1, 3, NULL, &l);
  tl_session_list_free(&l);

  const char *mute = "exec:echo hello 2; exec sleep 600";
  o = opts_of(mute, 0);
  o.delays_ns[0] = 1000000;
  o.delay_count = 1;
  o.duration_ns = 3000000000LL;
  assert_int_equal(tl_collect_run(f->store, &spec, &o, NULL, err, sizeof err), TL_EIO);
  assert_non_null(strstr(err, "no sample for"));
  check_sessions(f, mute, "interrupted", 1, 0, NULL, &l);
  tl_session_list_free(&l);
  unsetenv("TL_TEST_PROBE_SILENCE_MS");
  no_children_left();
}

/* A version 2 child that streams n made-up samples as fast as a pipe takes
 * them, then creates the file done (so a test can tell it has written
 * everything). */
static void streaming_probe(char *buf, size_t len, long n, const char *done) {
  snprintf(buf, len,
           "exec:echo hello 2; read plan; awk 'BEGIN { for (i = 0; i < %ld; i++) "
           "printf \"sample %%d\\n\", (i * 7919) %% 1000003 }'; touch '%s'",
           n, done);
}

typedef struct {
  tl_store *store;
  const tl_session_spec *spec;
  const tl_collect_opts *opts;
  tl_collect_result result;
  int rc;
  char err[512];
} background_run;

static void *collect_in_background(void *arg) {
  background_run *b = arg;
  b->rc = tl_collect_run(b->store, b->spec, b->opts, &b->result, b->err, sizeof b->err);
  return NULL;
}

static int64_t count_rows(const char *db, const char *table) {
  sqlite3 *c;
  char sql[128];
  int64_t n = -1;
  snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
  sqlite3_stmt *st = NULL;
  if (sqlite3_open_v2(db, &c, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
      sqlite3_prepare_v2(c, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(c);
  return n;
}

/* Another connection holds the write lock while a version 2 child streams
 * three million samples: tl stops reading the child's pipe once the queue
 * is full (the child blocks in its write, between samples), so what waits
 * in memory stays within the queue's bound instead of growing to every
 * sample; once the lock is gone every sample is stored. */
static void exec_v2_paused_while_locked(void **state) {
  fixture *f = *state;
  enum { N = 3000000 };
  char *done = tl_test_path(f->dir, "streamed");
  char probe[1024];
  streaming_probe(probe, sizeof probe, N, done);
  tl_collect_opts o = opts_of(probe, N);
  o.delays_ns[0] = 0;
  o.delay_count = 1;
  tl_session_spec spec = spec_of(f);
  background_run b = {.store = f->store, .spec = &spec, .opts = &o};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, collect_in_background, &b), 0);
  for (int i = 0; i < 200 && count_rows(f->db, "sessions") < 1; i++)
    usleep(20000);
  sqlite3 *holder;
  assert_int_equal(sqlite3_open(f->db, &holder), SQLITE_OK);
  sqlite3_busy_timeout(holder, 5000);
  assert_int_equal(sqlite3_exec(holder, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
  /* Until the child has written everything, or for 5 s when it is made to
   * wait (a million samples are read well within that). */
  for (int i = 0; i < 50 && access(done, F_OK) != 0; i++)
    usleep(100000);
  assert_int_equal(sqlite3_exec(holder, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(holder);
  assert_int_equal(pthread_join(t, NULL), 0);
  if (b.rc != TL_OK)
    fail_msg("streaming while locked: %s", b.err);
  printf("queued at most %lld samples while locked (of %d)\n", (long long)b.result.queued_peak, N);
  assert_true(b.result.queued_peak <= (TL__RUN_QUEUE_CHUNKS + 1) * TL__RUN_CHUNK_SAMPLES);
  assert_int_equal(b.result.samples, N);
  tl_session_list l;
  check_sessions(f, probe, "complete", 1, N, NULL, &l);
  tl_session_list_free(&l);
  no_children_left();
  free(done);
}

/* A dry run of 1.5 million samples (more than the writer's queue holds)
 * holds no more of them in memory than a stored run: its samples go to a
 * scratch database in $TMPDIR, gone afterwards, and its closing numbers
 * and sentence are exactly those of a stored run of the same samples. */
static void dry_run_bounded_and_exact(void **state) {
  fixture *f = *state;
  enum { N = 1500000 };
  char *tmp = tl_test_path(f->dir, "tmp");
  assert_int_equal(mkdir(tmp, 0700), 0);
  char *old_tmp = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
  setenv("TMPDIR", tmp, 1);
  char *done = tl_test_path(f->dir, "streamed");
  char probe[1024];
  streaming_probe(probe, sizeof probe, N, done);
  tl_collect_opts o = opts_of(probe, N);
  o.delays_ns[0] = 0;
  o.delay_count = 1;
  tl_session_spec spec = spec_of(f);
  tl_collect_result dry, stored;
  char err[512];
  o.dry_run = 1;
  if (tl_collect_run(NULL, &spec, &o, &dry, err, sizeof err) != TL_OK)
    fail_msg("dry run: %s", err);
  printf("a dry run of %d samples held at most %lld in memory\n", N, (long long)dry.queued_peak);
  assert_true(dry.queued_peak <= (TL__RUN_QUEUE_CHUNKS + 1) * TL__RUN_CHUNK_SAMPLES);
  assert_int_equal(tl_test_entries(tmp), 0);
  assert_string_equal(dry.session_uuid, "");
  tl_store_stats st;
  assert_int_equal(tl_store_info(f->store, &st), TL_OK);
  assert_int_equal(st.sessions, 0);
  o.dry_run = 0;
  if (tl_collect_run(f->store, &spec, &o, &stored, err, sizeof err) != TL_OK)
    fail_msg("stored run: %s", err);
  assert_int_equal(dry.samples, N);
  assert_int_equal(stored.samples, N);
  assert_int_equal(dry.p50_ns, stored.p50_ns);
  assert_int_equal(dry.p90_ns, stored.p90_ns);
  assert_int_equal(dry.p99_ns, stored.p99_ns);
  assert_int_equal(dry.max_ns, stored.max_ns);
  char a[512], b[512];
  tl_collect_summary("uv", &dry, 1, 90, a, sizeof a);
  tl_collect_summary("uv", &stored, 1, 90, b, sizeof b);
  assert_string_equal(a, b);
  if (old_tmp)
    setenv("TMPDIR", old_tmp, 1);
  else
    unsetenv("TMPDIR");
  free(old_tmp);
  free(done);
  free(tmp);
  no_children_left();
}

/* The program name in PATH, into out; 0 when it is not there. */
static int in_path(const char *name, char *out, size_t len) {
  const char *path = getenv("PATH");
  while (path && *path) {
    size_t n = strcspn(path, ":");
    if (n && (size_t)snprintf(out, len, "%.*s/%s", (int)n, path, name) < len &&
        access(out, X_OK) == 0)
      return 1;
    path += n + (path[n] == ':');
  }
  return 0;
}

/* Go's timers through the shipped probe script, built once with Debian's
 * go (skipped without it): time.Sleep and <-time.After, each a session
 * with Go's version as a fact. */
static void go_collects(void **state) {
  fixture *f = *state;
  char go[4096];
  if (!in_path("go", go, sizeof go)) {
    tl_test_skip("go is not installed (apt-get install golang-go)");
  }
  char cmd[8192];
  snprintf(cmd, sizeof cmd,
           "cd '%s' && GOCACHE=\"${GOCACHE:-%s/gocache}\" GOPATH=\"${GOPATH:-%s/gopath}\" "
           "'%s' build -o go-probe '%s/probes/go-probe.go' >&2",
           f->dir, f->dir, f->dir, go, TL_SOURCE_DIR);
  assert_int_equal(system(cmd), 0);
  static const char *modes[] = {"sleep", "after"};
  char probes[2][4200], err[512], buf[64];
  tl_session_spec spec = spec_of(f);
  for (int k = 0; k < 2; k++) {
    snprintf(probes[k], sizeof probes[k], "exec:'%s/go-probe' %s", f->dir, modes[k]);
    tl_collect_opts o = opts_of(probes[k], 20);
    o.delays_ns[0] = 0;
    o.delays_ns[1] = 2000000;
    o.delay_count = 2;
    assert_int_equal(tl_collect_run(f->store, &spec, &o, NULL, err, sizeof err), TL_OK);
    tl_session_list l;
    const int64_t floor[] = {0, 2000000}; /* Go's monotonic clock: never early */
    check_sessions(f, probes[k], "complete", 2, 20, floor, &l);
    assert_string_equal(fact_of(f, l.items[0].id, "probe.go.timer", buf, sizeof buf), modes[k]);
    assert_non_null(fact_of(f, l.items[1].id, "probe.go.version", buf, sizeof buf));
    assert_memory_equal(buf, "go1.", 4);
    tl_session_list_free(&l);
  }
  no_children_left();
}

typedef struct {
  int64_t v[64];
  size_t n;
} in_order;

static int keep_in_order(void *ctx, const int64_t *v, size_t n) {
  in_order *o = ctx;
  for (size_t i = 0; i < n && o->n < 64; i++)
    o->v[o->n++] = v[i];
  return 0;
}

/* One browser session of the mode; its samples in the order measured. */
static int64_t browser_session(fixture *f, const char *mode, int64_t count, in_order *samples) {
  tl_collect_opts o = opts_of("browser", count);
  o.delay_count = 1;
  o.browser_mode = mode;
  tl_session_spec spec = spec_of(f);
  char err[512], buf[300];
  if (tl_collect_run(f->store, &spec, &o, NULL, err, sizeof err) != TL_OK)
    fail_msg("browser %s: %s", mode, err);
  tl_filter flt;
  tl_filter_init(&flt);
  flt.probe = "browser";
  tl_session_list l;
  assert_int_equal(tl_store_sessions(f->store, &flt, &l), TL_OK);
  assert_true(l.count > 0);
  tl_session *s = &l.items[l.count - 1];
  int64_t id = s->id;
  assert_string_equal(s->status, "complete");
  assert_int_equal(s->sample_count, count);
  assert_string_equal(tag_of(f, id, "browser_mode", buf, sizeof buf), mode);
  /* A real browser, a cross-origin isolated page and its 5 us clock. */
  assert_non_null(fact_of(f, id, "probe.browser.version", buf, sizeof buf));
  assert_non_null(strstr(buf, "Chrome/"));
  assert_string_equal(fact_of(f, id, "probe.browser.cross_origin_isolated", buf, sizeof buf),
                      "true");
  assert_non_null(fact_of(f, id, "probe.browser.clock_resolution_ns", buf, sizeof buf));
  long long res = atoll(buf);
  if (res <= 0 || res > 20000)
    fail_msg("performance.now() moves in steps of %lld ns, not the isolated page's 5 us", res);
  samples->n = 0;
  assert_int_equal(tl_store_scan(f->store, id, keep_in_order, samples), TL_OK);
  assert_int_equal(samples->n, count);
  tl_session_list_free(&l);
  return id;
}

/* setTimeout(0) in a real Chromium tab: chained in its own callback, past
 * five levels of nesting every timer takes at least 4 ms (the HTML
 * standard's clamp); armed from a message task instead, nesting never builds
 * up and a timer can take far less. A hidden tab is throttled. Skipped
 * without node or Chromium. */
static void browser_clamps_nested_timers(void **state) {
  fixture *f = *state;
  need(__func__, "browser");
  in_order s;
  browser_session(f, "nested", 20, &s);
  for (size_t i = 8; i < s.n; i++) /* levels 1-5, and a margin for how they are counted */
    if (s.v[i] < 4000000)
      fail_msg("nested setTimeout(0) number %zu took %lld ns, under the 4 ms clamp", i + 1,
               (long long)s.v[i]);
  browser_session(f, "timeout", 20, &s);
  int64_t fastest = s.v[0];
  for (size_t i = 1; i < s.n; i++)
    fastest = s.v[i] < fastest ? s.v[i] : fastest;
  assert_true(fastest < 4000000);
  browser_session(f, "message", 10, &s);
  char buf[64];
  int64_t id = browser_session(f, "background", 9, &s);
  assert_string_equal(fact_of(f, id, "probe.browser.visibility", buf, sizeof buf), "hidden");
  assert_true(s.v[8] >= 100000000); /* about 1 s: timers of hidden tabs wake once a second */
  no_children_left();
}

/* uv says what its 0 ms samples are: whether this libuv runs a re-armed 0 ms
 * timer in the same pass is a fact of the session; arming from the check
 * phase makes every sample cross the loop. */
static void uv_zero_says_what_it_measures(void **state) {
  fixture *f = *state;
  tl_collect_opts o = opts_of("uv", 200);
  o.delay_count = 1;
  tl_session_spec spec = spec_of(f);
  char err[256], buf[64];
  assert_int_equal(tl_collect_run(f->store, &spec, &o, NULL, err, sizeof err), TL_OK);
  o.arm_from = "immediate";
  assert_int_equal(tl_collect_run(f->store, &spec, &o, NULL, err, sizeof err), TL_OK);
  tl_session_list l;
  check_sessions(f, "uv", "complete", 2, 200, NULL, &l);
  const char *same = fact_of(f, l.items[0].id, "probe.uv.zero_timer_same_pass", buf, sizeof buf);
  assert_non_null(same);
  assert_true(strcmp(same, "yes") == 0 || strcmp(same, "no") == 0);
  /* libuv before 1.45 runs it in the same pass (Debian 12 ships 1.44). */
  if (uv_version() < ((1 << 16) | (45 << 8)))
    assert_string_equal(same, "yes");
  assert_string_equal(tag_of(f, l.items[0].id, "arm_from", buf, sizeof buf), "timer");
  assert_string_equal(tag_of(f, l.items[1].id, "arm_from", buf, sizeof buf), "immediate");
  tl_session_list_free(&l);
}

/* The shipped fixture program times sleep(1) with date(1). */
static void exec_collects(void **state) {
  fixture *f = *state;
  int fds = open_fds();
  tl_collect_opts o = opts_of(FIXTURE_PROBE, 4);
  o.delays_ns[0] = 0;
  o.delays_ns[1] = 20000000;
  o.delay_count = 2;
  tl_session_spec spec = spec_of(f);
  char err[512];
  assert_int_equal(tl_collect_run(f->store, &spec, &o, NULL, err, sizeof err), TL_OK);
  tl_session_list l;
  const int64_t floor[] = {0, 20000000};
  check_sessions(f, FIXTURE_PROBE, "complete", 2, 4, floor, &l);
  tl_session_list_free(&l);
  no_children_left();
  assert_int_equal(open_fds(), fds);
}

/* A child killed mid-run: an error that says so, 'interrupted' sessions with
 * the samples received, the child reaped, no descriptor left open. */
static void exec_child_killed(void **state) {
  assert_killed_after(*state, FIXTURE_PROBE " die 3", 3);
}

/* hello (line 1), a comment (2), three samples (3-5), then garbage: line 6. */
static void exec_malformed_line(void **state) {
  assert_malformed(*state, FIXTURE_PROBE " garbage 3", "line 6 of its output", 3);
  no_children_left();
}

static void exec_not_a_probe(void **state) {
  fixture *f = *state;
  tl_collect_opts o = opts_of("exec:echo nonsense", 5);
  o.delay_count = 1;
  tl_session_spec spec = spec_of(f);
  char err[512] = "";
  assert_int_equal(tl_collect_run(f->store, &spec, &o, NULL, err, sizeof err), TL_EINVAL);
  assert_non_null(strstr(err, "line 1 of its output"));
  /* A program that does not exist is refused before anything starts; one
   * the shell cannot find says so and exits 127. */
  o.probe = "exec:/nonexistent/tl-probe";
  assert_int_equal(tl_collect_run(f->store, &spec, &o, NULL, err, sizeof err), TL_EUNAVAIL);
  assert_non_null(strstr(err, "'/nonexistent/tl-probe' was not found"));
  o.probe = "exec:command /nonexistent/tl-probe";
  assert_int_not_equal(tl_collect_run(f->store, &spec, &o, NULL, err, sizeof err), TL_OK);
  assert_non_null(strstr(err, "status 127"));
  /* None of them got as far as a session. */
  tl_store_stats st;
  assert_int_equal(tl_store_info(f->store, &st), TL_OK);
  assert_int_equal(st.sessions, 0);
  no_children_left();
}

/* N timers in flight: still exactly count samples per delay. */
static void concurrency_counts_exactly(void **state) {
  fixture *f = *state;
  tl_collect_opts o = opts_of("uv", 100);
  o.delays_ns[0] = 0;
  o.delays_ns[1] = 2000000;
  o.delay_count = 2;
  o.concurrency = 8;
  o.warmup = 3;
  tl_session_spec spec = spec_of(f);
  char err[256];
  assert_int_equal(tl_collect_run(f->store, &spec, &o, NULL, err, sizeof err), TL_OK);
  tl_session_list l;
  const int64_t floor[] = {0, 1000000};
  check_sessions(f, "uv", "complete", 2, 100, floor, &l);
  char buf[64];
  assert_non_null(tag_of(f, l.items[0].id, "concurrency", buf, sizeof buf));
  assert_string_equal(buf, "8");
  tl_session_list_free(&l);
  /* More timers in flight than samples to take. */
  o.concurrency = 50;
  o.count = 5;
  o.probe = "settimeout";
  assert_int_equal(tl_collect_run(f->store, &spec, &o, NULL, err, sizeof err), TL_OK);
  check_sessions(f, "settimeout", "complete", 2, 5, NULL, &l);
  tl_session_list_free(&l);
}

/* The load threads run during the session and are named in its tags, with
 * the user's own tags kept alongside. */
static void load_and_settings_are_tagged(void **state) {
  fixture *f = *state;
  tl_collect_opts o = opts_of("nanosleep", 20);
  o.delays_ns[0] = 10000000; /* 200 ms in all, asleep: the CPU time is the load's */
  o.delay_count = 1;
  o.load_cpu = 2;
  o.load_mem = 1;
  o.cpu = 0;
  static const char *keys[] = {"site"}, *values[] = {"lab"};
  tl_session_spec spec = spec_of(f);
  spec.tag_keys = keys;
  spec.tag_values = values;
  spec.tag_count = 1;
  char err[256];
  double cpu0 = cpu_seconds();
  assert_int_equal(tl_collect_run(f->store, &spec, &o, NULL, err, sizeof err), TL_OK);
  double used = cpu_seconds() - cpu0;
  /* Three busy threads for 200 ms; even on a crowded machine they get some
   * of it, while a sleeping probe alone uses next to nothing. */
  if (used < 0.05)
    fail_msg("the load threads used only %.3f s of CPU", used);
  tl_session_list l;
  check_sessions(f, "nanosleep", "complete", 1, 20, NULL, &l);
  char buf[64];
  assert_string_equal(tag_of(f, l.items[0].id, "load", buf, sizeof buf), "cpu:2,mem:1");
  assert_string_equal(tag_of(f, l.items[0].id, "cpu", buf, sizeof buf), "0");
  assert_string_equal(tag_of(f, l.items[0].id, "site", buf, sizeof buf), "lab");
  assert_null(tag_of(f, l.items[0].id, "priority", buf, sizeof buf));
  tl_session_list_free(&l);
  /* A user tag may not pose as one of tl's. */
  keys[0] = "load";
  assert_int_equal(tl_collect_run(f->store, &spec, &o, NULL, err, sizeof err), TL_EINVAL);
  assert_non_null(strstr(err, "tag 'load'"));
  keys[0] = "site";
}

/* SCHED_FIFO where permitted (root here): recorded as a tag, and the
 * calling thread gets its old policy back afterwards. */
static void priority_applied_and_restored(void **state) {
  fixture *f = *state;
  tl_collect_opts o = opts_of("nanosleep", 5);
  o.delays_ns[0] = 100000;
  o.delay_count = 1;
  o.priority = 10;
  o.mlock = 1;
  tl_session_spec spec = spec_of(f);
  char err[512];
  int rc = tl_collect_run(f->store, &spec, &o, NULL, err, sizeof err);
  if (rc == TL_EPERM) {
    tl_test_skip(err);
  }
  assert_int_equal(rc, TL_OK);
  int policy;
  struct sched_param sp;
  assert_int_equal(pthread_getschedparam(pthread_self(), &policy, &sp), 0);
  assert_int_equal(policy, SCHED_OTHER);
  tl_session_list l;
  check_sessions(f, "nanosleep", "complete", 1, 5, NULL, &l);
  char buf[64];
  assert_string_equal(tag_of(f, l.items[0].id, "priority", buf, sizeof buf), "fifo:10");
  assert_string_equal(tag_of(f, l.items[0].id, "mlock", buf, sizeof buf), "1");
  tl_session_list_free(&l);
}

static void expect_bad(tl_collect_opts *o, const char *needle) {
  char why[TL_WHY_MAX] = "";
  int rc = tl_collect_opts_check(o, why, sizeof why);
  if (rc == TL_OK || !strstr(why, needle))
    fail_msg("expected an error naming '%s', got %d '%s'", needle, rc, why);
}

static void options_are_checked(void **state) {
  (void)state;
  tl_collect_opts o = opts_of("uv", 10);
  o.delay_count = 1;
  char why[TL_WHY_MAX];
  assert_int_equal(tl_collect_opts_check(&o, why, sizeof why), TL_OK);
  o.delays_ns[0] = 500000;
  expect_bad(&o, "whole milliseconds");
  o.delays_ns[0] = 0;
  o.interval_ns = 1000000;
  expect_bad(&o, "--interval");
  o.interval_ns = 0;
  o.concurrency = 20000;
  expect_bad(&o, "--concurrency");
  o.concurrency = 2;
  o.gap_ns = 1000000;
  expect_bad(&o, "--gap");
  o.gap_ns = 0;
  o.probe = "nanosleep";
  expect_bad(&o, "--concurrency");
  o.concurrency = 0;
  o.cpu = 4096;
  expect_bad(&o, "--cpu 4096");
  o.cpu = -1;
  o.priority = 100;
  expect_bad(&o, "--priority");
  o.priority = 0;
  o.load_cpu = -1;
  expect_bad(&o, "--load");
  o.load_cpu = 0;
  o.probe = "periodic";
  expect_bad(&o, "--interval, not --delays"); /* delays[0] is 0, not the interval */
  o.delays_ns[0] = 1000000;
  assert_int_equal(tl_collect_opts_check(&o, why, sizeof why), TL_OK);
  o.gap_ns = 1000000;
  expect_bad(&o, "--gap");
  o.gap_ns = 0;
  o.interval_ns = 5000; /* below 10 us */
  o.delays_ns[0] = 5000;
  expect_bad(&o, "--interval");
  o.probe = "exec:";
  expect_bad(&o, "unknown probe");
  o.probe = "exec:a\nb";
  expect_bad(&o, "unknown probe");
  o.probe = "nosuch";
  expect_bad(&o, "unknown probe");
  o.probe = "exec:true";
  o.delay_count = 0;
  expect_bad(&o, "--delays");
  o.delay_count = 1;
  o.delays_ns[0] = 0;
  o.interval_ns = 0;
  o.arm_from = "immediate";
  expect_bad(&o, "--arm-from: only the node, uv and settimeout");
  o.probe = "uv";
  assert_int_equal(tl_collect_opts_check(&o, why, sizeof why), TL_OK);
  o.arm_from = "io";
  expect_bad(&o, "--arm-from: the uv probe takes timer,immediate");
  o.arm_from = "time";
  expect_bad(&o, "--arm-from");
  o.arm_from = NULL;
  o.browser_mode = "nested";
  expect_bad(&o, "--browser-mode: only the browser probe");
  o.probe = "browser";
  o.browser_mode = "nest";
  expect_bad(&o, "--browser-mode: one of nested,timeout,message,raf,background");
  o.browser_mode = "raf";
  o.delays_ns[0] = 16000000;
  expect_bad(&o, "--browser-mode raf: measures 0 ms only");
}

int main(void) {
  if (getenv("TL_TEST_FILTER")) /* run one of them: TL_TEST_FILTER=exec_v2_collects */
    cmocka_set_test_filter(getenv("TL_TEST_FILTER"));
#define T(fn) cmocka_unit_test_setup_teardown(fn, tl_collect_setup, tl_collect_teardown)
  const struct CMUnitTest tests[] = {
      T(nanosleep_collects),
      T(timerfd_collects),
      T(periodic_collects),
      T(node_collects),
      T(node_contexts_and_duration),
      T(exec_collects),
      T(exec_v2_collects),
      T(exec_v2_killed_mid_batch),
      T(exec_v2_malformed),
      T(exec_v2_paused_while_locked),
      T(exec_v2_silent),
      T(dry_run_bounded_and_exact),
      T(go_collects),
      T(browser_clamps_nested_timers),
      T(uv_zero_says_what_it_measures),
      T(exec_child_killed),
      T(exec_malformed_line),
      T(exec_not_a_probe),
      T(concurrency_counts_exactly),
      T(load_and_settings_are_tagged),
      T(priority_applied_and_restored),
      cmocka_unit_test(options_are_checked),
  };
#undef T
  return cmocka_run_group_tests(tests, NULL, NULL);
}
