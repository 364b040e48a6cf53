/* test_causes.c: what tl records about why samples were late. The cgroup
 * limits on fixture trees of cgroup v1 and v2 hosts (tests/fixtures/cgroups),
 * every counter parser (/proc/stat, PSI, cpu.stat v1 and v2, schedstat) on
 * fixture files and on broken text, the bounded counter series, the
 * thread's own reads on this machine, the compact form causes are stored
 * in, and --by cpus / memory using the smaller of the host's value and the
 * limit. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "causes_internal.h"
#include "support.h"
#include "tl_report.h"

static const tl_group_causes *causes_of_label(const tl_comparison *c, const char *label);

/* ======================================================================== */
/* Fixture trees                                                             */

static tl__host_env fixture(const char *name) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/cgroups/%s/root", TL_FIXTURES, name);
  tl__host_env env;
  memset(&env, 0, sizeof env);
  env.root_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  assert_true(env.root_fd >= 0);
  return env;
}

static char *fixture_text(const char *name, const char *path) {
  tl__host_env env = fixture(name);
  char *text = NULL;
  assert_int_equal(tl__host_read(&env, path, &text, NULL), 0);
  close(env.root_fd);
  return text;
}

static const char *fact(const tl_host *h, const char *key) {
  const char *v = tl_host_get(h, key);
  return v ? v : "(missing)";
}

static tl_host *limits_of(const char *name) {
  tl__host_env env = fixture(name);
  tl_host *h = calloc(1, sizeof *h);
  assert_non_null(h);
  assert_int_equal(tl__host_detect_limits(&env, h), TL_OK);
  close(env.root_fd);
  return h;
}

/* ======================================================================== */
/* Limits                                                                    */

static void v1_quota_cpuset_and_memory(void **state) {
  (void)state;
  tl__host_env env = fixture("v1-quota");
  tl__cgroup cg;
  assert_int_equal(tl__cgroup_find(&env, &cg), TL_OK);
  close(env.root_fd);
  assert_int_equal(cg.version, 1);
  assert_string_equal(cg.cpu_dir, "sys/fs/cgroup/cpu/tl-test");
  assert_string_equal(cg.cpuset_dir, "sys/fs/cgroup/cpuset");
  assert_string_equal(cg.memory_dir, "sys/fs/cgroup/memory/tl-test");
  tl_host *h = limits_of("v1-quota");
  assert_string_equal(fact(h, "cgroup.version"), "1");
  assert_string_equal(fact(h, "cgroup.cpu_quota"), "0.2");
  assert_string_equal(fact(h, "cgroup.cpuset"), "0-1");
  assert_string_equal(fact(h, "cgroup.cpus"), "1"); /* 0.2 CPU rounds up to 1 */
  /* the parent's "no limit" (2^63 - 4096) is none; the child's 512 MiB is the limit */
  assert_string_equal(fact(h, "cgroup.memory_limit_bytes"), "536870912");
  assert_string_equal(fact(h, "cpu.steal_seen"), "yes");
  tl_host_free(h);
}

static void v2_container_namespace(void **state) {
  (void)state;
  tl_host *h = limits_of("v2-container");
  assert_string_equal(fact(h, "cgroup.version"), "2");
  assert_string_equal(fact(h, "cgroup.cpu_quota"), "1.5");
  assert_string_equal(fact(h, "cgroup.cpuset"), "0-3");
  assert_string_equal(fact(h, "cgroup.cpus"), "2");
  assert_string_equal(fact(h, "cgroup.memory_limit_bytes"), "none");
  assert_string_equal(fact(h, "cpu.steal_seen"), "no");
  tl_host_free(h);
}

static void v2_limit_on_a_parent(void **state) {
  (void)state;
  tl__host_env env = fixture("v2-slice");
  tl__cgroup cg;
  assert_int_equal(tl__cgroup_find(&env, &cg), TL_OK);
  close(env.root_fd);
  assert_string_equal(cg.cpu_dir, "sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope");
  tl_host *h = limits_of("v2-slice");
  assert_string_equal(fact(h, "cgroup.cpu_quota"), "0.5"); /* from user.slice */
  assert_string_equal(fact(h, "cgroup.cpus"), "1");
  assert_string_equal(fact(h, "cgroup.memory_limit_bytes"), "1073741824");
  assert_string_equal(fact(h, "cpu.steal_seen"), "unknown"); /* no /proc/stat there */
  tl_host_free(h);
}

static void no_cgroup_is_unknown(void **state) {
  (void)state;
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/hosts/empty", TL_FIXTURES);
  tl__host_env env;
  memset(&env, 0, sizeof env);
  env.root_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  assert_true(env.root_fd >= 0);
  tl_host *h = calloc(1, sizeof *h);
  assert_int_equal(tl__host_detect_limits(&env, h), TL_OK);
  close(env.root_fd);
  assert_string_equal(fact(h, "cgroup.version"), "unknown");
  assert_string_equal(fact(h, "cgroup.cpu_quota"), "unknown");
  assert_string_equal(fact(h, "cgroup.memory_limit_bytes"), "unknown");
  tl_host_free(h);
}

static void cpu_max_and_lists(void **state) {
  (void)state;
  int64_t q, p;
  assert_int_equal(tl__parse_cpu_max("max 100000\n", &q, &p), TL_OK);
  assert_int_equal(q, -1);
  assert_int_equal(p, 100000);
  assert_int_equal(tl__parse_cpu_max("20000 100000", &q, &p), TL_OK);
  assert_int_equal(q, 20000);
  assert_int_equal(tl__parse_cpu_max("", &q, &p), TL_EINVAL);
  assert_int_equal(tl__parse_cpu_max("20000", &q, &p), TL_EINVAL);
  assert_int_equal(tl__parse_cpu_max("20000 0", &q, &p), TL_EINVAL);
  assert_int_equal(tl__parse_cpu_max("-5 100000", &q, &p), TL_EINVAL);
  assert_int_equal(tl__cpu_list_count("0-3,8,10-11\n"), 7);
  assert_int_equal(tl__cpu_list_count("3-1"), -1);
  assert_int_equal(tl__cpu_list_count("a"), -1);
}

/* ======================================================================== */
/* Counter parsers                                                           */

static void proc_stat_sums_the_cpus(void **state) {
  (void)state;
  char *text = fixture_text("v1-quota", "proc/stat");
  tl__counters c;
  assert_int_equal(tl__parse_proc_stat(text, 100, &c), TL_OK);
  assert_int_equal(c.steal_ns, (640 + 621) * INT64_C(10000000)); /* the 1,261 ticks */
  assert_int_equal(c.irq_ns, 0);
  assert_int_equal(c.softirq_ns, (4211 + 2102) * INT64_C(10000000));
  assert_int_equal(c.ctxt, 372010244);
  assert_int_equal(c.procs_running, 3);
  free(text);
  /* A kernel without the steal column (before 2.6.11) has none; junk is refused. */
  assert_int_equal(tl__parse_proc_stat("cpu0 1 2 3 4 5 6 7\nctxt 9\n", 100, &c), TL_OK);
  assert_int_equal(c.steal_ns, 0);
  assert_int_equal(c.irq_ns, 60000000);
  assert_int_equal(tl__parse_proc_stat("cpu0 x\nnothing\n", 100, &c), TL_EINVAL);
  assert_int_equal(c.procs_running, -1);
}

static void psi_some_total(void **state) {
  (void)state;
  char *text = fixture_text("v2-container", "proc/pressure/cpu");
  int64_t us = 0;
  assert_int_equal(tl__parse_psi_cpu(text, &us), TL_OK);
  assert_int_equal(us, 98234112);
  free(text);
  assert_int_equal(tl__parse_psi_cpu("full avg10=0.00 total=5\n", &us), TL_EINVAL);
  assert_int_equal(tl__parse_psi_cpu("some avg10=1.0\n", &us), TL_EINVAL);
}

static void cpu_stat_v1_and_v2(void **state) {
  (void)state;
  tl__counters c;
  char *v1 = fixture_text("v1-quota", "sys/fs/cgroup/cpu/tl-test/cpu.stat");
  assert_int_equal(tl__parse_cpu_stat(v1, &c), TL_OK);
  assert_int_equal(c.nr_periods, 83);
  assert_int_equal(c.nr_throttled, 81);
  assert_int_equal(c.throttled_ns, INT64_C(6474521230));
  free(v1);
  char *v2 = fixture_text("v2-container", "sys/fs/cgroup/cpu.stat");
  assert_int_equal(tl__parse_cpu_stat(v2, &c), TL_OK);
  assert_int_equal(c.nr_periods, 412);
  assert_int_equal(c.nr_throttled, 37);
  assert_int_equal(c.throttled_ns, INT64_C(1822150000)); /* usec to ns */
  free(v2);
  assert_int_equal(tl__parse_cpu_stat("usage_usec 5\n", &c), TL_EINVAL);
}

static void schedstat_fields(void **state) {
  (void)state;
  int64_t run, wait;
  char *text = fixture_text("v1-quota", "proc/thread-self/schedstat");
  assert_int_equal(tl__parse_schedstat(text, &run, &wait), TL_OK);
  assert_int_equal(run, 48213077);
  assert_int_equal(wait, 2611934); /* the second field: runnable, waiting for a CPU */
  free(text);
  assert_int_equal(tl__parse_schedstat("1823432 912345 77\n", &run, &wait), TL_OK);
  assert_int_equal(run, 1823432);
  assert_int_equal(wait, 912345);
  assert_int_equal(tl__parse_schedstat("12\n", &run, &wait), TL_EINVAL);
  assert_int_equal(tl__parse_schedstat("", &run, &wait), TL_EINVAL);
  assert_int_equal(tl__parse_schedstat("-1 2 3", &run, &wait), TL_EINVAL);
}

static void counters_read_on_a_fixture(void **state) {
  (void)state;
  tl__host_env env = fixture("v2-container");
  tl__cgroup cg;
  assert_int_equal(tl__cgroup_find(&env, &cg), TL_OK);
  tl__counters c;
  tl__counters_read(&env, &cg, &c);
  close(env.root_fd);
  assert_int_equal(c.ctxt, 5012);
  assert_int_equal(c.psi_some_us, 98234112);
  assert_int_equal(c.nr_throttled, 37);
  assert_int_equal(c.freq_khz, -1); /* no cpufreq there */
}

/* ======================================================================== */
/* The bounded series                                                        */

static void series_differences_and_bound(void **state) {
  (void)state;
  tl__counter_series *s = malloc(sizeof *s);
  assert_non_null(s);
  tl__counter_series_init(s, 0, 1000);
  tl__counters c;
  memset(&c, 0xff, sizeof c);
  /* A week of seconds: the rows stay bounded and still add up. */
  const int64_t seconds = 7 * 24 * 3600;
  for (int64_t t = 0; t <= seconds; t++) {
    c.ctxt = 100 * t;
    c.nr_periods = 10 * t;
    c.nr_throttled = t % 2 ? c.nr_throttled : t / 2; /* grows every other second */
    c.procs_running = t == 5000 ? 40 : 2;
    tl__counter_series_add(s, t * INT64_C(1000000000), &c);
  }
  tl__counter_series_finish(s);
  assert_true(s->n <= TL_COUNTER_ROWS_MAX);
  assert_true(s->n >= TL_COUNTER_ROWS_MAX / 2);
  int64_t ctxt = 0, periods = 0, span = 0, most = 0;
  for (size_t i = 0; i < s->n; i++) {
    ctxt += s->rows[i].ctxt;
    periods += s->rows[i].nr_periods;
    span += s->rows[i].span_ms;
    if (s->rows[i].procs_running > most)
      most = s->rows[i].procs_running;
    assert_int_equal(s->rows[i].steal_ns, -1); /* never readable: stays unknown */
    if (i)
      assert_true(s->rows[i].t_ms > s->rows[i - 1].t_ms);
  }
  assert_int_equal(ctxt, 100 * seconds);
  assert_int_equal(periods, 10 * seconds);
  assert_int_equal(span, seconds * 1000);
  assert_int_equal(most, 40); /* a level keeps its peak through merges */
  free(s);
}

/* ======================================================================== */
/* The thread's own reads, on this machine                                   */

static void self_reads_move_with_a_busy_cpu(void **state) {
  (void)state;
  tl__self *s = tl__self_open();
  assert_non_null(s);
  tl__self_mark a, b;
  tl__self_read(s, &a);
  tl__self_read(s, &b);
#ifdef __linux__
  if (a.runq_wait_ns < 0) {
    tl__self_close(s);
    tl_test_skip("this kernel has no /proc/thread-self/schedstat (CONFIG_SCHED_INFO off)");
  }
  assert_true(b.runq_wait_ns >= a.runq_wait_ns);
  assert_true(a.nivcsw >= 0 && b.nivcsw >= a.nivcsw);
  assert_true(a.cpu >= 0);
#else
  assert_int_equal(a.runq_wait_ns, -1);
#endif
  tl__self_close(s);
}

#ifdef __linux__
/* The wait in /proc/thread-self/schedstat, read afresh. */
static int64_t schedstat_now(int fd) {
  char buf[96];
  ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  assert_true(n > 0);
  buf[n] = '\0';
  int64_t run, wait;
  assert_int_equal(tl__parse_schedstat(buf, &run, &wait), TL_OK);
  return wait;
}
#endif

/* The schedstat file is read again only when the thread was switched out
 * since: with a busy process on the same CPU preempting it, every read
 * still sees at least the wait the file shows just before it, and the wait
 * and the involuntary switches grow. */
static void self_reads_follow_preemption(void **state) {
  (void)state;
#ifndef __linux__
  tl_test_skip("run-queue wait is read on Linux only");
#else
  int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    tl_test_skip("this kernel has no /proc/thread-self/schedstat (CONFIG_SCHED_INFO off)");
  cpu_set_t was, one;
  sched_getaffinity(0, sizeof was, &was);
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu(), &one);
  assert_int_equal(sched_setaffinity(0, sizeof one, &one), 0);
  pid_t busy = fork();
  assert_true(busy >= 0);
  if (busy == 0)
    for (volatile unsigned long spin = 0;; spin++)
      ;
  tl__self *s = tl__self_open();
  assert_non_null(s);
  tl__self_mark first, m;
  tl__self_read(s, &first);
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  long reads = 0, stale = 0;
  do {
    int64_t before = schedstat_now(fd);
    tl__self_read(s, &m);
    stale += m.runq_wait_ns < before;
    reads++;
    clock_gettime(CLOCK_MONOTONIC, &t);
  } while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 300000000L);
  kill(busy, SIGKILL);
  waitpid(busy, NULL, 0);
  sched_setaffinity(0, sizeof was, &was);
  tl__self_close(s);
  close(fd);
  print_message("%ld reads beside a busy process: wait grew %.1f ms, %lld involuntary switches\n",
                reads, (double)(m.runq_wait_ns - first.runq_wait_ns) / 1e6,
                (long long)(m.nivcsw - first.nivcsw));
  assert_int_equal(stale, 0);
  assert_true(m.runq_wait_ns - first.runq_wait_ns >= 10000000); /* shared the CPU: waited */
  assert_true(m.nivcsw > first.nivcsw);
#endif
}

/* ======================================================================== */
/* The compact form of causes                                                */

static void causes_round_trip(void **state) {
  (void)state;
  enum { N = 500 };
  tl_cause in[N], out[N];
  uint32_t seed = 27;
  int64_t index = 1000;
  for (size_t i = 0; i < N; i++) {
    seed = seed * 1103515245u + 12345u;
    index += 1 + seed % 60;
    in[i] = (tl_cause){index, (int64_t)(seed % 90000) * 1000, (int64_t)(seed % 7000) * 1000,
                       (int32_t)(seed % 5), (int32_t)(seed >> 7 & 1)};
    if (i % 50 == 0)
      in[i].runq_wait_ns = in[i].nivcsw = in[i].migrated = -1; /* not measured */
  }
  uint8_t *buf = malloc(tl_causes_bound(N));
  size_t len = tl_causes_encode(in, N, buf);
  assert_true(len <= tl_causes_bound(N));
  assert_true(len < N * 8); /* compact: a few bytes each */
  assert_int_equal(tl_causes_decode(buf, len, out, N), N);
  for (size_t i = 0; i < N; i++) {
    assert_int_equal(out[i].index, in[i].index);
    assert_int_equal(out[i].latency_ns, in[i].latency_ns);
    assert_int_equal(out[i].runq_wait_ns, in[i].runq_wait_ns);
    assert_int_equal(out[i].nivcsw, in[i].nivcsw);
    assert_int_equal(out[i].migrated, in[i].migrated);
  }
  /* Every cut or flipped byte is refused or decodes to what fits; never a crash. */
  for (size_t cut = 0; cut < len; cut++)
    assert_true(tl_causes_decode(buf, cut, out, N) < N);
  assert_int_equal(tl_causes_decode(buf, len, out, N - 1), -1);
  free(buf);
}

/* ======================================================================== */
/* --by cpus and memory: the smaller of the host's and the limit             */

static void effective_value_takes_the_limit(void **state) {
  (void)state;
  const tl_host_key *cpus = tl_host_key_find("cpus"), *mem = tl_host_key_find("memory");
  assert_non_null(cpus);
  assert_non_null(mem);
  char buf[32];
  tl_fact_row limited[] = {{"cgroup.cpus", "1", ""},
                           {"cgroup.memory_limit_bytes", "536870912", ""},
                           {"cpu.logical", "2", ""},
                           {"mem.total_bytes", "25769803776", ""}};
  assert_string_equal(tl_host_key_value(cpus, limited, 4, buf, sizeof buf), "1");
  assert_string_equal(tl_host_key_value(mem, limited, 4, buf, sizeof buf), "536870912");
  tl_fact_row loose[] = {{"cgroup.cpus", "8", ""},
                         {"cgroup.memory_limit_bytes", "none", ""},
                         {"cpu.logical", "2", ""},
                         {"mem.total_bytes", "25769803776", ""}};
  assert_string_equal(tl_host_key_value(cpus, loose, 4, buf, sizeof buf), "2");
  assert_string_equal(tl_host_key_value(mem, loose, 4, buf, sizeof buf), "25769803776");
  tl_fact_row old[] = {{"cpu.logical", "4", ""}}; /* recorded before tl knew limits */
  assert_string_equal(tl_host_key_value(cpus, old, 1, buf, sizeof buf), "4");
  assert_null(tl_host_key_value(mem, old, 1, buf, sizeof buf));
  assert_string_equal(tl_host_key_find("quota")->fact, "cgroup.cpu_quota");
}

/* ======================================================================== */
/* Stored and read back                                                      */

static void store_round_trip(void **state) {
  tl_test_fixture *f = *state;
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  tl_session_spec spec = {.run_uuid = "00000000-0000-4000-8000-000000000027",
                          .label = "x",
                          .probe = "nanosleep",
                          .delay_ns = 1000000,
                          .command_line = "t",
                          .host_fingerprint = "ab",
                          .hostname = "h"};
  tl_writer *w;
  char uuid[37];
  assert_int_equal(tl_writer_begin(s, &spec, &w, uuid), TL_OK);
  int64_t id = tl_writer_session_id(w);
  tl_cause a[] = {{5, 2000000, 1500000, 2, 0}, {9, 3000000, -1, -1, -1}};
  tl_cause b[] = {{40, 7000000, 6000000, 1, 1}};
  tl_cause_sums s1 = {100, 9000000, 4, 1, {0}, {0}}, s2 = {50, 1000000, 1, 0, {0}, {0}};
  s1.band_samples[40] = 60;
  s1.band_wait_ns[40] = 7000000;
  s2.band_samples[40] = 5;
  s2.band_wait_ns[40] = 1000000;
  s2.band_samples[TL_CAUSE_BANDS - 1] = 1;
  assert_int_equal(tl_store_add_causes(s, id, a, 2, &s1), TL_OK);
  assert_int_equal(tl_store_add_causes(s, id, b, 1, &s2), TL_OK);
  tl_counter_row rows[3];
  for (int i = 0; i < 3; i++)
    rows[i] = (tl_counter_row){(i + 1) * 1000, 1000,   10 * i, -1, 5, 100 + i, 3, -1, 10, 9,
                               i * 7,          2400000};
  assert_int_equal(tl_store_set_counters(s, id, rows, 3), TL_OK);
  assert_int_equal(tl_store_set_counters(s, id, rows, 2), TL_OK); /* replaces */
  assert_int_equal(tl_writer_end(w, "complete"), TL_OK);
  tl_cause *c;
  size_t n;
  tl_cause_sums sums;
  assert_int_equal(tl_store_causes(s, id, &c, &n, &sums), TL_OK);
  assert_int_equal(n, 3);
  assert_int_equal(c[0].index, 5);
  assert_int_equal(c[0].runq_wait_ns, 1500000);
  assert_int_equal(c[1].runq_wait_ns, -1);
  assert_int_equal(c[2].index, 40);
  assert_int_equal(c[2].migrated, 1);
  assert_int_equal(sums.samples, 150);
  assert_int_equal(sums.runq_wait_ns, 10000000);
  assert_int_equal(sums.nivcsw, 5);
  assert_int_equal(sums.band_samples[40], 65); /* the bands add up too */
  assert_int_equal(sums.band_wait_ns[40], 8000000);
  assert_int_equal(sums.band_samples[TL_CAUSE_BANDS - 1], 1);
  assert_int_equal(sums.band_samples[39], 0);
  free(c);
  tl_counter_row *r;
  assert_int_equal(tl_store_counters(s, id, &r, &n), TL_OK);
  assert_int_equal(n, 2);
  assert_int_equal(r[1].t_ms, 2000);
  assert_int_equal(r[1].steal_ns, 10);
  assert_int_equal(r[1].irq_ns, -1);
  assert_int_equal(r[1].ctxt, 101);
  assert_int_equal(r[1].freq_khz, 2400000);
  free(r);
  /* A session without any: nothing, and no error. */
  assert_int_equal(tl_store_causes(s, id + 1, &c, &n, &sums), TL_OK);
  assert_int_equal(n, 0);
  assert_int_equal(sums.samples, 0);
  /* Deleting the session takes its causes and counters with it. */
  assert_int_equal(tl_store_delete(s, uuid), TL_OK);
  assert_int_equal(tl_store_causes(s, id, &c, &n, &sums), TL_OK);
  assert_int_equal(n + (size_t)sums.samples, 0);
  assert_int_equal(tl_store_counters(s, id, &r, &n), TL_OK);
  assert_int_equal(n, 0);
  tl_store_close(s);
}

/* A session with samples, causes and counters in the file at path. */
static void session_with_causes(const char *path, const char *uuid, char *session_uuid) {
  tl_store *s;
  assert_int_equal(tl_store_open(&s, path, 0), TL_OK);
  tl_session_spec spec = {.run_uuid = uuid,
                          .label = "m",
                          .probe = "nanosleep",
                          .delay_ns = 1000000,
                          .command_line = "t",
                          .host_fingerprint = "cd",
                          .hostname = "h"};
  tl_writer *w;
  assert_int_equal(tl_writer_begin(s, &spec, &w, session_uuid), TL_OK);
  int64_t id = tl_writer_session_id(w);
  int64_t lat[100];
  for (int i = 0; i < 100; i++)
    lat[i] = 50000 + i * 1000;
  assert_int_equal(tl_writer_add(w, lat, 100), TL_OK);
  assert_int_equal(tl_writer_end(w, "complete"), TL_OK);
  tl_cause kept[] = {{97, 147000, 90000, 1, 0}, {99, 149000, 120000, 2, 1}};
  tl_cause_sums sums = {100, 300000, 5, 1, {0}, {0}};
  /* After the session ended, as tlcollect stores the last of them. */
  assert_int_equal(tl_store_add_causes(s, id, kept, 2, &sums), TL_OK);
  tl_counter_row rows[2] = {{1000, 1000, 7, 8, 9, 100, 3, 40, 10, 9, 55000, 2400000},
                            {2000, 1000, 1, 2, 3, 200, 1, 0, 10, 0, 0, 2300000}};
  assert_int_equal(tl_store_set_counters(s, id, rows, 2), TL_OK);
  tl_store_close(s);
}

/* The causes and counters in the file at path of its only session. */
static void expect_merged_causes(const char *path) {
  tl_store *s;
  assert_int_equal(tl_store_open(&s, path, TL_STORE_READONLY), TL_OK);
  tl_session_list l;
  tl_filter flt;
  tl_filter_init(&flt);
  assert_int_equal(tl_store_sessions(s, &flt, &l), TL_OK);
  assert_int_equal(l.count, 1);
  tl_cause *c;
  size_t n;
  tl_cause_sums sums;
  assert_int_equal(tl_store_causes(s, l.items[0].id, &c, &n, &sums), TL_OK);
  assert_int_equal(n, 2);
  assert_int_equal(c[1].index, 99);
  assert_int_equal(c[1].runq_wait_ns, 120000);
  assert_int_equal(c[1].migrated, 1);
  assert_int_equal(sums.samples, 100);
  assert_int_equal(sums.runq_wait_ns, 300000);
  free(c);
  tl_counter_row *r;
  assert_int_equal(tl_store_counters(s, l.items[0].id, &r, &n), TL_OK);
  assert_int_equal(n, 2);
  assert_int_equal(r[0].nr_throttled, 9);
  assert_int_equal(r[0].throttled_ns, 55000);
  assert_int_equal(r[1].freq_khz, 2300000);
  free(r);
  tl_session_list_free(&l);
  tl_store_close(s);
}

/* tlstore merge carries a session's causes and counters; merging again
 * adds nothing twice, and a source whose causes are damaged is refused
 * with nothing merged. */
static void merge_keeps_causes(void **state) {
  tl_test_fixture *f = *state;
  char *src = tl_test_path(f->dir, "src.db"), *dst = tl_test_path(f->dir, "dst.db");
  char uuid[37];
  session_with_causes(src, "00000000-0000-4000-8000-000000000271", uuid);
  const char *from[] = {src};
  tl_store *d;
  for (int round = 0; round < 2; round++) {
    assert_int_equal(tl_store_open(&d, dst, 0), TL_OK);
    tl_merge_stats ms;
    assert_int_equal(tl_store_merge(d, from, 1, &ms), TL_OK);
    assert_int_equal(ms.sessions_added, round == 0);
    assert_int_equal(ms.sessions_present, round == 1);
    tl_store_close(d);
    expect_merged_causes(dst);
  }
  /* A damaged counters blob in a second source: refused, the file unchanged. */
  char *bad = tl_test_path(f->dir, "bad.db");
  char uuid2[37];
  session_with_causes(bad, "00000000-0000-4000-8000-000000000272", uuid2);
  sqlite3 *db;
  assert_int_equal(sqlite3_open(bad, &db), SQLITE_OK);
  assert_int_equal(sqlite3_exec(db,
                                "UPDATE session_causes SET data = zeroblob(length(data)) "
                                "WHERE kind = 2",
                                NULL, NULL, NULL),
                   SQLITE_OK);
  sqlite3_close(db);
  const char *both[] = {src, bad};
  assert_int_equal(tl_store_open(&d, dst, 0), TL_OK);
  assert_int_equal(tl_store_merge(d, both, 2, NULL), TL_ECORRUPT);
  assert_non_null(strstr(tl_store_errmsg(d), "nothing was merged"));
  tl_store_close(d);
  expect_merged_causes(dst);
  free(bad);
  free(src);
  free(dst);
}

/* Every value lies in its band; bands grow with the value, each at most
 * an eighth of a doubling wide above 16 us. */
static void bands_hold_their_values(void **state) {
  (void)state;
  int prev = 0;
  for (int64_t v = 0; v < INT64_C(4000000000000); v = v < 100000 ? v + 97 : v + v / 37) {
    int b = tl_cause_band(v);
    int64_t lo, hi;
    tl_cause_band_bounds(b, &lo, &hi);
    assert_true(b >= prev && b < TL_CAUSE_BANDS);
    assert_true(lo <= v && v < hi);
    if (lo > 16000)
      assert_true((double)(hi - lo) <= 0.125 * (double)lo + 1000);
    prev = b;
  }
  assert_int_equal(tl_cause_band(INT64_MAX), TL_CAUSE_BANDS - 1);
  assert_int_equal(tl_cause_band(-5), 0);
}

/* One session of label in the file: n samples, the slowest tenth 600 us
 * later than the rest; each of those waited for a CPU wait_us, as the
 * bands the collector stores say. */
static void banded_session(tl_store *s, const char *label, int64_t wait_us) {
  tl_session_spec spec = {.run_uuid = "00000000-0000-4000-8000-000000000290",
                          .label = label,
                          .probe = "nanosleep",
                          .delay_ns = 1000000,
                          .command_line = "t",
                          .host_fingerprint = "ef",
                          .hostname = "h"};
  tl_writer *w;
  char uuid[37];
  assert_int_equal(tl_writer_begin(s, &spec, &w, uuid), TL_OK);
  int64_t id = tl_writer_session_id(w);
  enum { N = 2000 };
  int64_t v[N];
  tl_cause_sums *sums = calloc(1, sizeof *sums);
  assert_non_null(sums);
  uint32_t seed = 90;
  for (int i = 0; i < N; i++) {
    seed = seed * 1103515245u + 12345u;
    int slow = i % 10 == 0;
    v[i] = 1080000 + (int64_t)(seed % 20000) + (slow ? 600000 : 0);
    int64_t wait = slow ? wait_us * 1000 : 0;
    sums->samples++;
    sums->runq_wait_ns += wait;
    sums->band_samples[tl_cause_band(v[i])]++;
    sums->band_wait_ns[tl_cause_band(v[i])] += wait;
  }
  assert_int_equal(tl_writer_add(w, v, N), TL_OK);
  assert_int_equal(tl_writer_end(w, "complete"), TL_OK);
  assert_int_equal(tl_store_add_causes(s, id, NULL, 0, sums), TL_OK);
  free(sums);
}

/* Above p90, the time past p50 is split by each session's wait by band:
 * the label whose slowest tenth waited for a CPU is blamed on the wait, the
 * one whose slowest tenth did not wait is not; above p99, where no sample
 * was kept one by one, all of it stays not attributed. */
static void p90_split_from_bands(void **state) {
  tl_test_fixture *f = *state;
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  banded_session(s, "waited", 580);
  banded_session(s, "calm", 0);
  tl_compare_opts o;
  tl_compare_opts_init(&o);
  tl_comparison c;
  char err[256];
  assert_int_equal(tl_compare(s, &o, &c, err, sizeof err), TL_OK);
  const tl_group_causes *waited = causes_of_label(&c, "waited"),
                        *calm = causes_of_label(&c, "calm");
  assert_non_null(waited);
  assert_non_null(calm);
  const tl_tail_split *a = &waited->at90, *b = &calm->at90;
  assert_true(a->known && b->known);
  assert_true(a->tail_samples >= 150 && a->tail_samples <= 200);
  assert_true(a->measured_samples >= a->tail_samples * 9 / 10);
  assert_true(a->cpu_wait_ns >= a->tail_ns / 100 * 85); /* 580 of about 610 us past p50 */
  assert_true(a->cpu_wait_ns <= a->tail_ns);
  assert_int_equal(a->throttled_ns, 0);
  assert_int_equal(b->cpu_wait_ns, 0);
  assert_int_equal(b->not_attributed_ns, b->tail_ns);
  assert_int_equal(waited->measured_samples, 0);
  assert_int_equal(waited->not_attributed_ns, waited->tail_ns);
  tl_comparison_free(&c);
  /* The page says it of p90, as the p99 has nothing measured. */
  tl_store_close(s);
  char *argv[] = {TLREPORT, "--db", f->db, NULL};
  char *page;
  assert_int_equal(tl_test_run(argv, NULL, &page, NULL), 0);
  assert_non_null(strstr(page, "% of the time past p90 of"));
  assert_non_null(strstr(page, "| waited | nanosleep 1 ms | p90 |"));
  free(page);
  char *json_argv[] = {TLREPORT, "--db", f->db, "--format", "json", NULL};
  assert_int_equal(tl_test_run(json_argv, NULL, &page, NULL), 0);
  assert_non_null(strstr(page, "\"p90\": {\"above\": 90, \"tail_samples\": "));
  free(page);
  char *html_argv[] = {TLREPORT, "--db", f->db, "--format", "html", NULL};
  assert_int_equal(tl_test_run(html_argv, NULL, &page, NULL), 0);
  assert_non_null(strstr(page, "waited, nanosleep 1 ms, p90</text>"));
  free(page);
}

/* A real collection keeps causes for every sample's sums and for the
 * slowest few per cent; --no-causes and a child probe keep none. */
static void collection_keeps_the_slowest(void **state) {
  tl_test_fixture *f = *state;
  char *a[] = {TLCOLLECT, "--db", f->db, "-l",   "c",  "-p", "nanosleep",
               "-d",      "0.2",  "-n",  "2000", "-q", NULL};
  assert_int_equal(tl_test_run(a, NULL, NULL, NULL), 0);
  char *b[] = {TLCOLLECT, "--db", f->db, "-l",  "off",         "-p", "nanosleep",
               "-d",      "0.2",  "-n",  "500", "--no-causes", "-q", NULL};
  assert_int_equal(tl_test_run(b, NULL, NULL, NULL), 0);
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, TL_STORE_READONLY), TL_OK);
  tl_session_list l;
  tl_filter flt;
  tl_filter_init(&flt);
  assert_int_equal(tl_store_sessions(s, &flt, &l), TL_OK);
  assert_int_equal(l.count, 2);
  tl_cause *c;
  size_t n;
  tl_cause_sums sums;
  assert_int_equal(tl_store_causes(s, l.items[0].id, &c, &n, &sums), TL_OK);
  if (sums.samples == 0) {
    tl_test_skip_part("no per-sample causes can be read here");
  } else {
    assert_int_equal(sums.samples, 2000);
    assert_true(n >= 60 && n <= 2000 * 3 / 100 + 10); /* 3 % of each piece, rounded up */
    /* A wait lies inside its own sample, unless the thread was preempted
     * between reading its wake-up clock and its own state (a busy host):
     * rare, never most. */
    size_t outside = 0;
    for (size_t i = 0; i < n; i++) {
      assert_true(c[i].index >= 0 && c[i].index < 2000);
      assert_true(c[i].runq_wait_ns >= 0);
      outside += c[i].runq_wait_ns > c[i].latency_ns + 1000;
      if (i)
        assert_true(c[i].index > c[i - 1].index);
    }
    assert_true(outside * 10 <= n);
  }
  free(c);
  tl_counter_row *r;
  assert_int_equal(tl_store_counters(s, l.items[0].id, &r, &n), TL_OK);
  assert_true(n >= 1); /* a second or more */
  free(r);
  assert_int_equal(tl_store_causes(s, l.items[1].id, &c, &n, &sums), TL_OK);
  assert_int_equal(n, 0);
  assert_int_equal(sums.samples, 0);
  tl_session_list_free(&l);
  tl_store_close(s);

  /* The contents list the section "Why the tail is long" exactly where the
   * page has it: with kept causes, and with counters alone (--no-causes:
   * all of it not attributed). */
  static const char toc[] = "[Why the tail is long](#why-the-tail-is-long)";
  for (int k = 0; k < 2; k++) {
    char *argv[] = {TLREPORT, "--db", f->db, "--compare", k ? "off" : "c", NULL};
    char *page;
    assert_int_equal(tl_test_run(argv, NULL, &page, NULL), 0);
    assert_non_null(strstr(page, "\n## Why the tail is long\n"));
    assert_non_null(strstr(page, toc));
    /* The session's counters beside the list of sessions: one row. */
    const char *host = strstr(page, "### What the host was doing\n");
    assert_non_null(host);
    assert_true(host > strstr(page, "## Hosts and sessions"));
    assert_non_null(strstr(host, "| started (UTC) | label | host | seconds | steal ms/s |"));
    assert_non_null(strstr(host, k ? "| off |" : "| c |"));
    free(page);
  }
  /* And in JSON, on the session. */
  char *json_argv[] = {TLREPORT, "--db", f->db, "--compare", "c", "--format", "json", NULL};
  char *json;
  assert_int_equal(tl_test_run(json_argv, NULL, &json, NULL), 0);
  const char *counters = strstr(json, "\"counters\": {\"intervals\": ");
  assert_non_null(counters);
  assert_true(counters > strstr(json, "\"sessions\": ["));
  assert_non_null(strstr(counters, "\"switches_per_s\": {\"median\": "));
  free(json);
  /* Imported samples have neither: no section, no link. */
  char *csv = tl_test_path(f->dir, "in.csv");
  assert_int_equal(tl_test_write_file(csv, "1000\n2000\n3000\n", 15), 0);
  char *imp[] = {TLSTORE,   "--db", f->db,     "import", "--format", "csv", csv,
                 "--label", "imp",  "--probe", "uv",     "--delay",  "0",   NULL};
  assert_int_equal(tl_test_run(imp, NULL, NULL, NULL), 0);
  char *argv[] = {TLREPORT, "--db", f->db, "--compare", "imp", NULL};
  char *page;
  assert_int_equal(tl_test_run(argv, NULL, &page, NULL), 0);
  assert_null(strstr(page, "## Why the tail is long"));
  assert_null(strstr(page, toc));
  free(page);
  free(csv);
}

/* ======================================================================== */
/* A CPU quota, for real                                                     */

/* A cgroup of our own with a 0.2-CPU quota: v1's cpu hierarchy or v2's
 * unified one. */
typedef struct {
  char dir[256];
  char procs[300];
} quota_cgroup;

static int write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t n = write(fd, text, strlen(text));
  int saved = errno;
  close(fd);
  errno = saved;
  return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* Makes the cgroup, or says why it cannot be made here. */
static const char *quota_cgroup_make(quota_cgroup *q) {
  if (geteuid() != 0)
    return "not root: making a cgroup needs root";
  char quota[300];
  if (access("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", F_OK) == 0) {
    snprintf(q->dir, sizeof q->dir, "/sys/fs/cgroup/cpu/tl-test-%d", (int)getpid());
    snprintf(quota, sizeof quota, "%s/cpu.cfs_quota_us", q->dir);
    if (mkdir(q->dir, 0755) || write_file(quota, "20000"))
      return "the v1 cpu controller refused a cgroup with a quota";
  } else if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0) {
    write_file("/sys/fs/cgroup/cgroup.subtree_control", "+cpu");
    snprintf(q->dir, sizeof q->dir, "/sys/fs/cgroup/tl-test-%d", (int)getpid());
    snprintf(quota, sizeof quota, "%s/cpu.max", q->dir);
    if (mkdir(q->dir, 0755) || write_file(quota, "20000 100000"))
      return "no cpu controller in cgroup v2 here (cpu.max cannot be written)";
  } else {
    return "no cpu controller mounted";
  }
  snprintf(q->procs, sizeof q->procs, "%s/cgroup.procs", q->dir);
  return NULL;
}

static void quota_cgroup_join(void *arg) {
  const quota_cgroup *q = arg;
  char pid[32];
  snprintf(pid, sizeof pid, "%d", (int)getpid());
  if (write_file(q->procs, pid))
    _exit(125);
}

/* The cgroup goes whatever happened: its processes are gone first. */
static void quota_cgroup_remove(const quota_cgroup *q) {
  for (int tries = 0; tries < 50 && rmdir(q->dir) != 0 && errno == EBUSY; tries++)
    usleep(20000);
}

static const tl_group_causes *causes_of_label(const tl_comparison *c, const char *label) {
  for (size_t i = 0; c->causes && i < c->group_count; i++)
    if (strcmp(c->groups[i].label, label) == 0)
      return &c->causes[i];
  return NULL;
}

/* The test: a busy co-tenant beside tlcollect in a cgroup limited to
 * 0.2 CPU. The quota is a fact, at least 80 % of the time past p99 is
 * waiting for a CPU (throttled), and an idle session beside it is not blamed
 * on throttling. */
static void quota_tail_is_cpu_wait(void **state) {
  tl_test_fixture *f = *state;
  quota_cgroup q;
  const char *why = quota_cgroup_make(&q);
  if (why) {
    if (q.dir[0])
      rmdir(q.dir);
    tl_test_skip(why);
  }
  pid_t busy = fork();
  if (busy < 0) {
    quota_cgroup_remove(&q);
    fail_msg("fork: %s", strerror(errno));
  }
  if (busy == 0) {
    quota_cgroup_join(&q);
    for (volatile unsigned long spin = 0;; spin++)
      ;
  }
  char *a[] = {TLCOLLECT, "--db", f->db,        "-l", "quota", "-p", "nanosleep",
               "-d",      "1",    "--duration", "6s", "-q",    NULL};
  int rc_quota = tl_test_run_with(a, NULL, quota_cgroup_join, &q, NULL, NULL);
  kill(busy, SIGKILL);
  waitpid(busy, NULL, 0);
  quota_cgroup_remove(&q);
  assert_int_equal(rc_quota, 0);
  char *b[] = {TLCOLLECT, "--db", f->db,        "-l", "idle", "-p", "nanosleep",
               "-d",      "1",    "--duration", "3s", "-q",   NULL};
  assert_int_equal(tl_test_run(b, NULL, NULL, NULL), 0);

  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, TL_STORE_READONLY), TL_OK);
  tl_compare_opts o;
  tl_compare_opts_init(&o);
  tl_comparison c;
  char err[256];
  assert_int_equal(tl_compare(s, &o, &c, err, sizeof err), TL_OK);
  const tl_group_causes *quota = causes_of_label(&c, "quota");
  const tl_group_causes *idle = causes_of_label(&c, "idle");
  assert_non_null(quota);
  assert_non_null(idle);
  print_message("quota: %lld tail samples, %.1f %% CPU wait, %.1f %% throttled, %lld of %lld "
                "periods throttled; idle: %.1f %% CPU wait, %.1f %% throttled\n",
                (long long)quota->tail_samples,
                100.0 * (double)quota->cpu_wait_ns / (double)quota->tail_ns,
                100.0 * (double)quota->throttled_ns / (double)quota->tail_ns,
                (long long)quota->throttled_periods, (long long)quota->periods,
                idle->tail_ns ? 100.0 * (double)idle->cpu_wait_ns / (double)idle->tail_ns : 0.0,
                idle->tail_ns ? 100.0 * (double)idle->throttled_ns / (double)idle->tail_ns : 0.0);
  assert_string_equal(quota->quota, "0.2");
  assert_true(quota->known && quota->tail_samples > 0);
  assert_true(quota->cpu_wait_ns >= quota->tail_ns / 10 * 8);
  assert_true(quota->throttled_periods > 0);
  assert_true(quota->throttled_ns > 0);
  assert_int_equal(idle->throttled_ns, 0);
  assert_true(strcmp(idle->quota, "0.2") != 0);
  /* Above p90 too, from the bands. */
  print_message("above p90: quota %.1f %% CPU wait (%lld of %lld measured), idle %.1f %% "
                "throttled\n",
                100.0 * (double)quota->at90.cpu_wait_ns / (double)quota->at90.tail_ns,
                (long long)quota->at90.measured_samples, (long long)quota->at90.tail_samples,
                idle->at90.tail_ns
                    ? 100.0 * (double)idle->at90.throttled_ns / (double)idle->at90.tail_ns
                    : 0.0);
  assert_true(quota->at90.known && quota->at90.tail_samples > quota->tail_samples);
  assert_true(quota->at90.cpu_wait_ns >= quota->at90.tail_ns / 10 * 8);
  assert_true(quota->at90.throttled_ns > 0);
  assert_int_equal(idle->at90.throttled_ns, 0);
  /* Each session's counters, as its page shows them: the quota's session
   * was throttled, the idle one beside it not. */
  assert_non_null(c.counters);
  for (size_t i = 0; i < c.sessions.count; i++) {
    const tl_session_counters *sc = &c.counters[i];
    assert_true(sc->known && sc->intervals >= 2);
    if (strcmp(c.sessions.items[i].label, "quota") == 0) {
      assert_true(sc->throttled > 0 && sc->throttled <= sc->periods);
      assert_true(sc->throttled_ns > 0);
    } else {
      assert_true(sc->throttled <= 0);
    }
  }
  tl_comparison_free(&c);
  /* --by cpus: the 0.2-CPU session counts as 1 CPU (the quota rounded up),
   * apart from the idle one on the host's CPUs (unless the host has one). */
  o.by = "cpus";
  assert_int_equal(tl_compare(s, &o, &c, err, sizeof err), TL_OK);
  int one = 0;
  for (size_t i = 0; i < c.group_count; i++)
    one += strcmp(c.groups[i].label, "1 CPU") == 0;
  assert_int_equal(one, 1);
  assert_true(c.group_count == 2 || sysconf(_SC_NPROCESSORS_CONF) == 1);
  tl_comparison_free(&c);
  tl_store_close(s);
}

/* The node probe sends its own run-queue wait with each sample (protocol
 * 2's optional runq=), so its tail is attributed too. */
static void node_sends_its_run_queue_wait(void **state) {
  tl_test_fixture *f = *state;
  if (access("/usr/bin/node", X_OK) || access("/proc/thread-self/schedstat", R_OK)) {
    tl_test_skip("no /usr/bin/node, or no /proc/thread-self/schedstat");
  }
  char *a[] = {TLCOLLECT, "--db", f->db, "-l",  "n",  "-p", "node",
               "-d",      "1",    "-n",  "300", "-q", NULL};
  assert_int_equal(tl_test_run(a, NULL, NULL, NULL), 0);
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, TL_STORE_READONLY), TL_OK);
  tl_cause *c;
  size_t n;
  tl_cause_sums sums;
  assert_int_equal(tl_store_causes(s, 1, &c, &n, &sums), TL_OK);
  assert_int_equal(sums.samples, 300);
  assert_true(n >= 9);
  for (size_t i = 0; i < n; i++) {
    assert_true(c[i].runq_wait_ns >= 0);
    assert_int_equal(c[i].migrated, -1); /* not sent: not measured */
  }
  free(c);
  tl_store_close(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(v1_quota_cpuset_and_memory),
      cmocka_unit_test(v2_container_namespace),
      cmocka_unit_test(v2_limit_on_a_parent),
      cmocka_unit_test(no_cgroup_is_unknown),
      cmocka_unit_test(cpu_max_and_lists),
      cmocka_unit_test(proc_stat_sums_the_cpus),
      cmocka_unit_test(psi_some_total),
      cmocka_unit_test(cpu_stat_v1_and_v2),
      cmocka_unit_test(schedstat_fields),
      cmocka_unit_test(counters_read_on_a_fixture),
      cmocka_unit_test(series_differences_and_bound),
      cmocka_unit_test(self_reads_move_with_a_busy_cpu),
      cmocka_unit_test(self_reads_follow_preemption),
      cmocka_unit_test(causes_round_trip),
      cmocka_unit_test(effective_value_takes_the_limit),
      cmocka_unit_test_setup_teardown(store_round_trip, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(merge_keeps_causes, tl_test_setup, tl_test_teardown),
      cmocka_unit_test(bands_hold_their_values),
      cmocka_unit_test_setup_teardown(p90_split_from_bands, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(collection_keeps_the_slowest, tl_test_setup,
                                      tl_test_teardown),
      cmocka_unit_test_setup_teardown(quota_tail_is_cpu_wait, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(node_sends_its_run_queue_wait, tl_test_setup,
                                      tl_test_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
