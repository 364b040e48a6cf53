/* test_collect_cli.c: tlcollect's probe and collection options end to end:
 * bad values are usage errors that touch no database, a signal stops a
 * sleeping or child-driven probe promptly, a stalled periodic probe counts
 * its missed periods, and --repeat makes separate, interruptible runs. */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "support.h"
#include "tl_store.h"

typedef tl_test_fixture fixture;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Starts tlcollect with argv (NULL-terminated, after the program name) and
 * its output to /dev/null. */
static pid_t start(char *const args[]) {
  char *argv[32] = {TLCOLLECT};
  for (int i = 0; args[i] && i < 30; i++)
    argv[i + 1] = args[i];
  return tl_test_start(argv, NULL);
}

static int exit_status(pid_t pid) {
  int st;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static tl_session_list sessions(const char *db) {
  tl_store *s;
  assert_int_equal(tl_store_open(&s, db, TL_STORE_READONLY), TL_OK);
  tl_filter flt;
  tl_filter_init(&flt);
  tl_session_list l;
  assert_int_equal(tl_store_sessions(s, &flt, &l), TL_OK);
  tl_store_close(s);
  return l;
}

static int exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* Each bad value: exit status 2, one line naming the option, no database. */
static void bad_values(void **state) {
  fixture *f = *state;
  static const char *cases[][4] = {
      {"--interval", "0", "--probe", "periodic"},
      {"--interval", "5us", "--probe", "periodic"},
      {"--interval", "abc", "--probe", "periodic"},
      {"--interval", "11s", "--probe", "periodic"},
      {"--interval", "1ms", "--probe", "uv"},
      {"--delays", "5", "--probe", "periodic"},
      {"--gap", "1ms", "--probe", "periodic"},
      {"--concurrency", "0", "--probe", "uv"},
      {"--concurrency", "-3", "--probe", "uv"},
      {"--concurrency", "10001", "--probe", "uv"},
      {"--concurrency", "4", "--probe", "nanosleep"},
      {"--cpu", "-1", "--probe", "uv"},
      {"--cpu", "4000", "--probe", "uv"},
      {"--cpu", "x", "--probe", "uv"},
      {"--priority", "0", "--probe", "uv"},
      {"--priority", "100", "--probe", "uv"},
      {"--qos", "fast", "--probe", "uv"},
      {"--qos", "unspecified", "--probe", "uv"}, /* read, never asked for */
      {"--load", "cpu:0", "--probe", "uv"},
      {"--load", "gpu:2", "--probe", "uv"},
      {"--load", "cpu:", "--probe", "uv"},
      {"--load", "mem:99999", "--probe", "uv"},
      {"--repeat", "0", "--probe", "uv"},
      {"--every", "1h", "--probe", "uv"}, /* without --repeat */
      {"--every", "10ms", "--repeat", "2"},
      {"--probe", "uv,", "--count", "1"},
      {"--probe", "uv,uv", "--count", "1"},
      {"--probe", "exec:", "--count", "1"},
      {"--probe", "cyclic", "--count", "1"},
      {"--delays", "0.5", "--probe", "settimeout"},
      {"--arm-from", "loop", "--probe", "uv"},
      {"--arm-from", "io", "--probe", "uv"},
      {"--arm-from", "timer", "--probe", "nanosleep"},
      {"--browser-mode", "nested", "--probe", "uv"},
      {"--browser-mode", "nest", "--probe", "browser"},
      {"--delays", "0.0000001", "--probe", "nanosleep"}, /* 0.1 ns: not rounded to 0 */
      {"--delays", "1.5ns", "--probe", "nanosleep"},
      {"--duration", "10ns", "--probe", "uv"},   /* no sample could be measured */
      {"--duration", "100ms", "--delays", "50"}, /* nor after the warm-up */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *argv[] = {TLCOLLECT,
                    "--db",
                    f->db,
                    "-q",
                    (char *)cases[i][0],
                    (char *)cases[i][1],
                    (char *)cases[i][2],
                    (char *)cases[i][3],
                    NULL};
    char *out, *err;
    int rc = tl_test_run(argv, NULL, &out, &err);
    if (rc != 2 || !strstr(err, "tlcollect: error: --") ||
        strchr(err, '\n') != err + strlen(err) - 1)
      fail_msg("%s %s %s %s: status %d, '%s'", cases[i][0], cases[i][1], cases[i][2], cases[i][3],
               rc, err);
    assert_false(exists(f->db));
    free(out);
    free(err);
  }
}

static void node_missing_is_clear(void **state) {
  fixture *f = *state;
  char *argv[] = {TLCOLLECT, "--db", f->db, "--probe", "node", "--count", "1", NULL};
  char *env[] = {"PATH=/nonexistent", NULL};
  char *out, *err;
  assert_int_equal(tl_test_run(argv, env, &out, &err), 1);
  assert_non_null(strstr(err, "'node' was not found in PATH"));
  assert_false(exists(f->db));
  free(out);
  free(err);
}

/* Without a browser (PATH has node only), the browser probe says what to
 * install, before any database is touched. */
static void browser_missing_is_clear(void **state) {
  fixture *f = *state;
  char *node_dir = tl_test_path(f->dir, "nodeonly");
  char *node_link = tl_test_path(node_dir, "node");
  assert_int_equal(mkdir(node_dir, 0755), 0);
  if (symlink("/usr/bin/node", node_link) || access("/usr/bin/node", X_OK)) {
    free(node_dir);
    free(node_link);
    tl_test_skip("no /usr/bin/node (Node.js)");
  }
  char path[4200];
  snprintf(path, sizeof path, "PATH=%s", node_dir);
  char *argv[] = {TLCOLLECT, "--db", f->db, "--probe", "browser", "--count", "1", NULL};
  char *env[] = {path, NULL};
  char *out, *err;
  assert_int_equal(tl_test_run(argv, env, &out, &err), 1);
  assert_non_null(strstr(err, "--probe browser: no chromium, chromium-browser or google-chrome"));
  assert_false(exists(f->db));
  free(out);
  free(err);
  free(node_dir);
  free(node_link);
}

/* Where SCHED_FIFO or mlockall is not permitted, tlcollect says so and what
 * to grant, instead of measuring without it. The test makes it not
 * permitted: no real-time or locked-memory allowance, and when running as
 * root, the unprivileged user nobody, with a copy of tlcollect it can reach. */
static void without_rt_or_memlock(void *who) {
  struct rlimit zero = {0, 0};
#ifdef RLIMIT_RTPRIO /* Linux's real-time allowance */
  setrlimit(RLIMIT_RTPRIO, &zero);
#endif
  setrlimit(RLIMIT_MEMLOCK, &zero);
  tl_test_drop_privileges(who);
}

static void refused_settings_are_errors(void **state) {
  fixture *f = *state;
  static const char *cases[][3] = {{"--priority", "50", "cannot use SCHED_FIFO"},
                                   {"--mlock", NULL, "cannot lock memory"}};
  size_t n_cases = 2;
#if defined(__SANITIZE_ADDRESS__)
  n_cases = 1; /* AddressSanitizer turns mlockall into a no-op that succeeds */
#endif
  char *tlcollect = tl_test_reachable_program(f->dir, TLCOLLECT, "tlcollect");
  assert_non_null(tlcollect);
  void *who = (void *)tl_test_unprivileged();
  for (size_t i = 0; i < n_cases; i++) {
    char *argv[] = {tlcollect, "--dry-run",         "--probe",           "nanosleep", "--count",
                    "1",       (char *)cases[i][0], (char *)cases[i][1], NULL};
    char *err;
    int rc = tl_test_run_with(argv, NULL, without_rt_or_memlock, who, NULL, &err);
    if (rc != 1 || !strstr(err, cases[i][2]) || !strstr(err, "(run as root"))
      fail_msg("%s: exit %d, '%s'", cases[i][0], rc, err);
    free(err);
  }
  free(tlcollect);
}

/* --qos is macOS's: elsewhere a one-line error that says so, before any
 * database exists; on macOS the class is recorded as the session's tag. */
static void qos_only_where_there_are_classes(void **state) {
  fixture *f = *state;
  char *argv[] = {TLCOLLECT, "--db", f->db,   "-q",      "--probe", "nanosleep",
                  "--count", "1",    "--qos", "utility", NULL};
  char *out, *err;
  int rc = tl_test_run(argv, NULL, &out, &err);
#ifdef __APPLE__
  assert_int_equal(rc, 0);
  assert_true(exists(f->db));
#else
  if (rc != 1 || !strstr(err, "tlcollect: error: --qos: QoS classes are macOS's") ||
      strchr(err, '\n') != err + strlen(err) - 1)
    fail_msg("--qos utility: status %d, '%s'", rc, err);
  assert_false(exists(f->db));
#endif
  free(out);
  free(err);
}

static void list_probes_names_all(void **state) {
  (void)state;
  char *argv[] = {TLCOLLECT, "--list-probes", NULL};
  char *out;
  assert_int_equal(tl_test_run(argv, NULL, &out, NULL), 0);
  static const char *names[] = {"settimeout ", "uv ",   "nanosleep ", "periodic ",
                                "timerfd ",    "node ", "exec:CMD "};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    assert_non_null(strstr(out, names[i]));
  /* The clock named is the one this system's collector reads. */
  const char *clock =
#ifdef __APPLE__
      "mach_continuous_time";
#else
      "CLOCK_MONOTONIC";
#endif
  assert_string_equal(tl_os_timing_here()->clock, clock);
  const char *line = strstr(out, "\nnanosleep ");
  assert_non_null(line);
  char want[64];
  snprintf(want, sizeof want, "clock (%s)", clock);
  assert_true(strstr(line, want) && strstr(line, want) < strchr(line + 1, '\n'));
  assert_null(strchr(out, '{')); /* every placeholder replaced */
  free(out);
}

/* SIGINT while the probe sleeps for 30 s: tlcollect stops at once, exits 3
 * and leaves an 'interrupted' session. */
static void stop_during_long_sleep(fixture *f, const char *probe, const char *delay) {
  char *args[] = {"--db",    f->db, "--probe",  (char *)probe, "--delays", (char *)delay,
                  "--count", "3",   "--warmup", "0",           NULL};
  pid_t pid = start(args);
  /* Wait until the session exists, so the probe is asleep. */
  for (int i = 0; i < 100 && !exists(f->db); i++)
    usleep(50000);
  usleep(500000);
  double t0 = now_s();
  kill(pid, SIGINT);
  assert_int_equal(exit_status(pid), 3);
  double took = now_s() - t0;
  if (took > 3.0)
    fail_msg("%s: took %.1f s to stop", probe, took);
  tl_session_list l = sessions(f->db);
  assert_int_equal(l.count, 1);
  assert_string_equal(l.items[0].status, "interrupted");
  tl_session_list_free(&l);
}

static void sigint_stops_nanosleep(void **state) {
  stop_during_long_sleep(*state, "nanosleep", "30s");
}

static void sigint_stops_periodic(void **state) {
  fixture *f = *state;
  char *args[] = {"--db", f->db, "--probe", "periodic", "--interval", "5s", "--count", "3", NULL};
  pid_t pid = start(args);
  for (int i = 0; i < 100 && !exists(f->db); i++)
    usleep(50000);
  usleep(500000);
  double t0 = now_s();
  kill(pid, SIGINT);
  assert_int_equal(exit_status(pid), 3);
  assert_true(now_s() - t0 < 3.0);
}

static void sigint_stops_exec_child(void **state) {
  stop_during_long_sleep(*state, "exec:" TL_FIXTURES "/probe.sh", "30s");
}

/* A version 2 child, told the whole plan, is stopped at once too. */
static void sigint_stops_v2_child(void **state) {
  stop_during_long_sleep(*state, "exec:" TL_FIXTURES "/probe2.sh", "30s");
}

/* The node probe streams its samples back while it measures: interrupted
 * mid-run, tlcollect exits 3 and every sample received is stored. */
static void sigint_keeps_node_samples(void **state) {
  fixture *f = *state;
  if (access("/usr/bin/node", X_OK) && access("/usr/local/bin/node", X_OK)) {
    tl_test_skip("node is not installed (Node.js)");
  }
  char *args[] = {"--db",       f->db, "--probe",  "node", "--delays", "1",
                  "--duration", "1m",  "--warmup", "0",    NULL};
  pid_t pid = start(args);
  for (int i = 0; i < 200 && !exists(f->db); i++)
    usleep(50000);
  usleep(2000000);
  kill(pid, SIGINT);
  assert_int_equal(exit_status(pid), 3);
  tl_session_list l = sessions(f->db);
  assert_int_equal(l.count, 1);
  assert_string_equal(l.items[0].status, "interrupted");
  if (l.items[0].sample_count < 10)
    fail_msg("only %lld samples of 1 ms timers kept", (long long)l.items[0].sample_count);
  tl_session_list_free(&l);
}

/* The collector stopped for 200 ms (SIGSTOP) misses about 200 periods of
 * 1 ms; they are counted, not hidden in one slow sample. */
static void stalled_periodic_counts_missed_periods(void **state) {
  fixture *f = *state;
  char *args[] = {"--db", f->db, "--probe", "periodic", "--duration", "2s", "-q", NULL};
  pid_t pid = start(args);
  for (int i = 0; i < 100 && !exists(f->db); i++)
    usleep(50000);
  usleep(300000);
  kill(pid, SIGSTOP);
  usleep(200000);
  kill(pid, SIGCONT);
  assert_int_equal(exit_status(pid), 0);
  tl_session_list l = sessions(f->db);
  assert_int_equal(l.count, 1);
  assert_string_equal(l.items[0].status, "complete");
  assert_int_equal(l.items[0].delay_ns, 1000000);
  if (l.items[0].missed_periods < 150)
    fail_msg("only %lld missed periods", (long long)l.items[0].missed_periods);
  /* Samples plus missed periods account for the time the session ran and
   * no more (a missed period counted twice would pass it by the stall's
   * 200): not the 2 s alone, since the last sample may wake past them, late
   * on a loaded machine, and count the periods it passed. */
  int64_t ran_periods = (l.items[0].ended_ns - l.items[0].started_ns) / 1000000;
  if (l.items[0].sample_count + l.items[0].missed_periods > ran_periods + 1)
    fail_msg("%lld samples and %lld missed periods of 1 ms in %lld ms",
             (long long)l.items[0].sample_count, (long long)l.items[0].missed_periods,
             (long long)ran_periods);
  tl_session_list_free(&l);
}

static void repeat_makes_separate_runs(void **state) {
  fixture *f = *state;
  char *argv[] = {TLCOLLECT,  "--db",    f->db,     "--probe", "uv,nanosleep",
                  "--delays", "0",       "--count", "5",       "--repeat",
                  "2",        "--every", "1s",      "-q",      NULL};
  double t0 = now_s();
  assert_int_equal(tl_test_run(argv, NULL, NULL, NULL), 0);
  assert_true(now_s() - t0 >= 1.0);
  tl_session_list l = sessions(f->db);
  assert_int_equal(l.count, 4); /* 2 runs x 2 probes */
  assert_string_equal(l.items[0].run_uuid, l.items[1].run_uuid);
  assert_string_not_equal(l.items[0].run_uuid, l.items[2].run_uuid);
  assert_string_equal(l.items[2].run_uuid, l.items[3].run_uuid);
  assert_string_equal(l.items[0].probe, "uv");
  assert_string_equal(l.items[1].probe, "nanosleep");
  tl_session_list_free(&l);
}

static void repeat_wait_is_interruptible(void **state) {
  fixture *f = *state;
  char *args[] = {"--db", f->db,      "--probe", "uv",      "--delays", "0", "--count",
                  "5",    "--repeat", "3",       "--every", "1h",       NULL};
  pid_t pid = start(args);
  for (int i = 0; i < 100 && !exists(f->db); i++)
    usleep(50000);
  usleep(500000);
  double t0 = now_s();
  kill(pid, SIGTERM);
  assert_int_equal(exit_status(pid), 3);
  assert_true(now_s() - t0 < 3.0);
  tl_session_list l = sessions(f->db);
  assert_int_equal(l.count, 1);
  assert_string_equal(l.items[0].status, "complete");
  tl_session_list_free(&l);
}

/* --load is the one value option meant to repeat: a CPU and a memory load
 * together, recorded in one tag. */
static void cpu_and_memory_load_together(void **state) {
  fixture *f = *state;
  char *argv[] = {TLCOLLECT,  "--db",   f->db,     "--probe", "nanosleep",
                  "--delays", "1ms",    "--count", "5",       "--load",
                  "cpu:1",    "--load", "mem:1",   "-q",      NULL};
  char *out, *err;
  assert_int_equal(tl_test_run(argv, NULL, &out, &err), 0);
  assert_string_equal(err, "");
  free(out);
  free(err);
  tl_session_list l = sessions(f->db);
  assert_int_equal(l.count, 1);
  assert_int_equal(l.items[0].sample_count, 5);
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, TL_STORE_READONLY), TL_OK);
  tl_fact_row *rows;
  size_t n;
  assert_int_equal(tl_store_tags(s, l.items[0].id, &rows, &n), TL_OK);
  int found = 0;
  for (size_t i = 0; i < n; i++)
    if (strcmp(rows[i].key, "load") == 0) {
      assert_string_equal(rows[i].value, "cpu:1,mem:1");
      found = 1;
    }
  assert_true(found);
  tl_fact_rows_free(rows, n);
  tl_store_close(s);
  tl_session_list_free(&l);
}

static void alarm_in_30s(void *arg) {
  (void)arg;
  alarm(30); /* kept across exec: a hung run dies instead of hanging the suite */
}

/* A dry run of millions of samples: its writer thread once spun holding the
 * lock and starved the measuring thread for good. */
static void dry_run_of_millions_ends(void **state) {
  (void)state;
  char *a[] = {TLCOLLECT, "--dry-run",  "--probe", "uv", "--delays",
               "0",       "--duration", "2s",      "-q", NULL};
  char *out, *err;
  int rc = tl_test_run_with(a, NULL, alarm_in_30s, NULL, &out, &err);
  if (rc != 0)
    fail_msg("a 2 s dry run of uv at 0 ms: status %d, '%s'", rc, err);
  free(out);
  free(err);
}

/* A version 2 child that sends three samples and then nothing, without
 * exiting: tlcollect does not hang but ends with one line and exit 1, the
 * three samples stored ('interrupted'). */
static void silent_v2_child_ends(void **state) {
  fixture *f = *state;
  char *a[] = {TLCOLLECT,
               "--db",
               f->db,
               "--probe",
               "exec:echo hello 2; read plan; printf 'sample 5\\nsample 6\\nsample 7\\n'; "
               "exec sleep 600",
               "--delays",
               "0",
               "--count",
               "10",
               "--warmup",
               "0",
               "-q",
               NULL};
  char *env[] = {"TL_TEST_PROBE_SILENCE_MS=300", "PATH=/usr/local/bin:/usr/bin:/bin", NULL};
  char *out, *err;
  int rc = tl_test_run_with(a, env, alarm_in_30s, NULL, &out, &err);
  if (rc != 1 || !tl_test_one_line(err) || !strstr(err, "no sample for"))
    fail_msg("a silent version 2 child: status %d, '%s'", rc, err);
  free(out);
  free(err);
  tl_store *s = NULL;
  tl_store_stats st = {0};
  assert_int_equal(tl_store_open(&s, f->db, TL_STORE_READONLY), TL_OK);
  assert_int_equal(tl_store_info(s, &st), TL_OK);
  tl_store_close(s);
  assert_int_equal(st.samples, 3);
}

/* A dry run keeps its samples in a scratch database in $TMPDIR: gone after
 * a stop (SIGINT) and after an error as after a complete run. */
static void dry_run_leaves_nothing(void **state) {
  fixture *f = *state;
  char *tmp = tl_test_path(f->dir, "tmp");
  assert_int_equal(mkdir(tmp, 0700), 0);
  char *old_tmp = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
  setenv("TMPDIR", tmp, 1);
  char *args[] = {"--dry-run", "--probe",  "nanosleep", "--delays", "30s", "--count",
                  "3",         "--warmup", "0",         "-q",       NULL};
  pid_t pid = start(args);
  for (int i = 0; i < 100 && tl_test_entries(tmp) == 0; i++)
    usleep(50000);
  assert_int_equal(tl_test_entries(tmp), 1);
  usleep(300000);
  kill(pid, SIGINT);
  assert_int_equal(exit_status(pid), 3);
  assert_int_equal(tl_test_entries(tmp), 0);
  char *bad[] = {"--dry-run", "--probe", "exec:echo nonsense", "--count", "3", "-q", NULL};
  assert_int_equal(exit_status(start(bad)), 1);
  char *good[] = {"--dry-run", "--probe", "uv", "--delays", "0", "--count", "300", "-q", NULL};
  assert_int_equal(exit_status(start(good)), 0);
  assert_int_equal(tl_test_entries(tmp), 0);
  if (old_tmp)
    setenv("TMPDIR", old_tmp, 1);
  else
    unsetenv("TMPDIR");
  free(old_tmp);
  free(tmp);
}

/* A child probe that does not start (no such program, an exit before its
 * hello, garbage instead of a hello) is one line naming the command and
 * why, exit status 1, and no session at all: the hello comes before any
 * session is created. With two delays, each case used to leave two
 * 'interrupted' sessions of 0 samples. */
static void child_that_cannot_start_leaves_nothing(void **state) {
  fixture *f = *state;
  static const struct {
    const char *probe, *says;
  } cases[] = {
      {"exec:tl-no-such-program --flag", "'tl-no-such-program' was not found in PATH"},
      {"exec:./no-such-probe.py", "'./no-such-probe.py' was not found"},
      {"exec:exit 3", "exec probe 'exit 3' did not start: it ended before its 'hello' line (it "
                      "exited with status 3)"},
      {"exec:echo garbage here", "exec probe 'echo garbage here': line 1 of its output:"},
      {"exec:echo hello 2 x", "exec probe 'echo hello 2 x': line 1 of its output:"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char probe[128];
    snprintf(probe, sizeof probe, "%s", cases[i].probe);
    char *argv[] = {TLCOLLECT, "--db",    f->db, "--probe", probe, "--delays",
                    "0,1",     "--count", "3",   "-q",      NULL};
    char *out, *err;
    assert_int_equal(tl_test_run(argv, NULL, &out, &err), 1);
    if (!strstr(err, cases[i].says) || !tl_test_one_line(err))
      fail_msg("--probe %s: '%s'", cases[i].probe, err);
    assert_string_equal(out, "");
    if (exists(f->db)) {
      tl_session_list l = sessions(f->db);
      assert_int_equal(l.count, 0);
      tl_session_list_free(&l);
    }
    free(out);
    free(err);
  }
}

/* Sessions of db tagged key=value. */
static size_t tagged(const char *db, const char *key, const char *value) {
  tl_store *s;
  assert_int_equal(tl_store_open(&s, db, TL_STORE_READONLY), TL_OK);
  tl_filter flt;
  tl_filter_init(&flt);
  flt.tag_keys = &key;
  flt.tag_values = &value;
  flt.tag_count = 1;
  tl_session_list l;
  assert_int_equal(tl_store_sessions(s, &flt, &l), TL_OK);
  size_t n = l.count;
  tl_session_list_free(&l);
  tl_store_close(s);
  return n;
}

/* From the build tree, an exec: argument naming a shipped probe that is not
 * in the current folder runs the source tree's copy, tagged exec_shipped; a
 * file of that name in the current folder wins and nothing is tagged. */
static void exec_finds_shipped_probe(void **state) {
  fixture *f = *state;
  const char *interpreter = "python3", *script = "asyncio-probe.py";
  if (system("command -v python3 >/dev/null 2>&1") != 0) {
    interpreter = "node";
    script = "tl-node-probe.js";
    if (system("command -v node >/dev/null 2>&1") != 0)
      tl_test_skip("neither python3 nor node is installed");
  }
  char probe[128], source[4096], shipped[4096], here[4096];
  snprintf(probe, sizeof probe, "exec:%s %s", interpreter, script);
  snprintf(source, sizeof source, "%s/probes/%s", TL_SOURCE_DIR, script);
  assert_non_null(realpath(source, shipped));
  assert_non_null(getcwd(here, sizeof here));
  assert_int_equal(chdir(f->dir), 0);
  char *argv[] = {TLCOLLECT, "--db",    f->db, "--probe", probe, "--delays",
                  "0,1",     "--count", "3",   "-q",      NULL};
  char *out, *err;
  int rc = tl_test_run(argv, NULL, &out, &err);
  if (rc != 0)
    fail_msg("--probe '%s' from %s: exit %d, '%s'", probe, f->dir, rc, err);
  free(out);
  free(err);
  assert_int_equal(tagged(f->db, "exec_shipped", shipped), 2);
  /* A copy in the current folder is what the command names. */
  char *local = tl_test_path(f->dir, script);
  assert_int_equal(tl_test_copy_file(source, local), 0);
  rc = tl_test_run(argv, NULL, &out, &err);
  assert_int_equal(chdir(here), 0);
  if (rc != 0)
    fail_msg("--probe '%s' with a local copy: exit %d, '%s'", probe, rc, err);
  tl_session_list l = sessions(f->db);
  assert_int_equal(l.count, 4);
  tl_session_list_free(&l);
  assert_int_equal(tagged(f->db, "exec_shipped", shipped), 2);
  free(local);
  free(out);
  free(err);
}

int main(void) {
#define T(fn) cmocka_unit_test_setup_teardown(fn, tl_test_setup, tl_test_teardown)
  const struct CMUnitTest tests[] = {
      T(bad_values),
      T(node_missing_is_clear),
      T(browser_missing_is_clear),
      T(child_that_cannot_start_leaves_nothing),
      T(exec_finds_shipped_probe),
      T(list_probes_names_all),
      T(qos_only_where_there_are_classes),
      T(refused_settings_are_errors),
      T(sigint_stops_nanosleep),
      T(sigint_stops_periodic),
      T(sigint_stops_exec_child),
      T(sigint_stops_v2_child),
      T(sigint_keeps_node_samples),
      T(stalled_periodic_counts_missed_periods),
      T(repeat_makes_separate_runs),
      T(repeat_wait_is_interruptible),
      T(cpu_and_memory_load_together),
      T(dry_run_of_millions_ends),
      T(silent_v2_child_ends),
      T(dry_run_leaves_nothing),
  };
#undef T
  return cmocka_run_group_tests(tests, NULL, NULL);
}
