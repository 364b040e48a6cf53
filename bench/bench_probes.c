/* bench_probes: the collector's measured quality, each figure next to a
 * baseline measured in the same run on the same machine:
 *
 *   cost      the uv probe at 0 ms (p50) against a minimal libuv loop that
 *             only schedules and times a timer; their ratio is the
 *             collector's own cost (target: p50 under 2 us)
 *   storage   p99 of a 20,000-sample uv 0 ms session stored in a database
 *             against the same with --dry-run: storing must not perturb
 *   periodic  the periodic probe against cyclictest (rt-tests), both at
 *             1 ms, SCHED_OTHER, untuned: median and p99 of the latency
 *             (wake minus scheduled instant)
 *   node      agreement: the node probe against a plain Node.js script that
 *             measures the same way (bench/node-plain.js), at 0, 1 and 50 ms,
 *             interleaved rounds, p50 and p90 lateness (sample - delay);
 *             target: within 5 % or 10 us, whichever is larger. settimeout
 *             (libuv's floor under Node) is printed beside them
 *   causes    the per-sample cause reads (run-queue wait, switches, CPU)
 *             against none (--no-causes), interleaved rounds: p50 and p90
 *             lateness of nanosleep 1 ms and uv 0 ms, the uv sample rate,
 *             and the bytes a sample of the causes beside the samples' own;
 *             target: within 2 % or 2 us
 *
 * Usage: bench_probes DIR [cost|storage|periodic|node|causes]...  (default: all)
 * Figures are medians over a few alternating rounds; machines are noisy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>
#include <uv.h>

#include "tl_collect.h"

static const char *dir;
static int no_causes; /* collect() with --no-causes */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static int64_t pct_of(int64_t *v, size_t n, double pct) {
  qsort(v, n, sizeof *v, cmp_i64);
  return v[tl_rank(pct, (int64_t)n) - 1];
}

static int64_t median3(int64_t *v, int n) { return pct_of(v, (size_t)n, 50); }

static void die(const char *what) {
  fprintf(stderr, "bench_probes: %s\n", what);
  exit(1);
}

/* One tl collection; results for each delay. store_path NULL: --dry-run. */
static void collect(const char *probe, const int64_t *delays, size_t nd, int64_t count,
                    int64_t interval_ns, const char *store_path, int flush_ms,
                    tl_collect_result *r) {
  tl_store *store = NULL;
  tl_host *host = NULL;
  if (tl_host_detect(&host))
    die("host detection failed");
  if (store_path) {
    unlink(store_path);
    if (tl_store_open(&store, store_path, 0))
      die(tl_store_errmsg(store));
  }
  size_t nf;
  const tl_fact *facts = tl_host_facts(host, &nf);
  tl_session_spec spec = {.run_uuid = "bench",
                          .label = "bench",
                          .command_line = "bench_probes",
                          .host_fingerprint = tl_host_fingerprint(host),
                          .hostname = tl_host_hostname(host),
                          .libuv_version = uv_version_string(),
                          .facts = facts,
                          .fact_count = nf};
  tl_collect_opts o;
  tl_collect_opts_init(&o);
  o.probe = probe;
  memcpy(o.delays_ns, delays, nd * sizeof *delays);
  o.delay_count = nd;
  o.count = count;
  o.interval_ns = interval_ns;
  o.dry_run = store_path == NULL;
  o.no_causes = no_causes;
  if (flush_ms)
    o.flush_ms = flush_ms;
  char err[600];
  if (tl_collect_run(store, &spec, &o, r, err, sizeof err))
    die(err);
  tl_store_close(store);
  tl_host_free(host);
}

/* ======================================================================== */
/* cost: the uv probe against a minimal libuv loop                           */

typedef struct {
  uv_loop_t loop;
  uv_timer_t timer;
  int64_t *v;
  size_t n, want;
  uint64_t t0;
} bare;

static void bare_arm(bare *b);

static void bare_fire(uv_timer_t *t) {
  uint64_t t1 = uv_hrtime();
  bare *b = t->data;
  b->v[b->n++] = (int64_t)(t1 - b->t0);
  if (b->n < b->want)
    bare_arm(b);
  else
    uv_close((uv_handle_t *)&b->timer, NULL);
}

static void bare_arm(bare *b) {
  uv_update_time(&b->loop);
  b->t0 = uv_hrtime();
  uv_timer_start(&b->timer, bare_fire, 0, 0);
}

/* The p50 of n 0 ms timers timed by the smallest possible libuv program. */
static int64_t bare_p50(size_t n) {
  bare b;
  memset(&b, 0, sizeof b);
  b.v = malloc(n * sizeof *b.v);
  b.want = n;
  uv_loop_init(&b.loop);
  uv_timer_init(&b.loop, &b.timer);
  b.timer.data = &b;
  bare_arm(&b);
  uv_run(&b.loop, UV_RUN_DEFAULT);
  uv_loop_close(&b.loop);
  int64_t p = pct_of(b.v, n, 50);
  free(b.v);
  return p;
}

static void bench_cost(void) {
  enum { ROUNDS = 5, N = 20000 };
  int64_t tl[ROUNDS], base[ROUNDS];
  const int64_t zero = 0;
  for (int i = 0; i < ROUNDS; i++) {
    tl_collect_result r;
    collect("uv", &zero, 1, N, 0, NULL, 0, &r);
    tl[i] = r.p50_ns;
    base[i] = bare_p50(N);
  }
  int64_t a = median3(tl, ROUNDS), b = median3(base, ROUNDS);
  printf("uv probe 0 ms p50: %.2f us   minimal libuv loop p50: %.2f us   ratio %.2f   "
         "(target: p50 under 2 us; %d x %d samples)\n",
         (double)a / 1e3, (double)b / 1e3, b ? (double)a / (double)b : 0.0, ROUNDS, N);
}

/* ======================================================================== */
/* storage: stored against --dry-run                                         */

static void bench_storage(void) {
  enum { ROUNDS = 3, N = 20000 };
  char path[4096];
  snprintf(path, sizeof path, "%s/bench_probes.db", dir);
  /* A 0 ms session is over in milliseconds, before the writer's first
   * commit (1 s); the third column commits every millisecond, so that the
   * writer thread really works while the probe measures. */
  int64_t stored[ROUNDS], busy[ROUNDS], dry[ROUNDS];
  const int64_t zero = 0;
  for (int i = 0; i < ROUNDS; i++) {
    tl_collect_result r;
    collect("uv", &zero, 1, N, 0, path, 0, &r);
    stored[i] = r.p99_ns;
    collect("uv", &zero, 1, N, 0, path, 1, &r);
    busy[i] = r.p99_ns;
    collect("uv", &zero, 1, N, 0, NULL, 0, &r);
    dry[i] = r.p99_ns;
  }
  int64_t a = median3(stored, ROUNDS), c = median3(busy, ROUNDS), b = median3(dry, ROUNDS);
  printf("uv 0 ms p99, stored: %.2f us   stored, committing every 1 ms: %.2f us   --dry-run: "
         "%.2f us   ratios %.2f, %.2f   (%d x %d samples)\n",
         (double)a / 1e3, (double)c / 1e3, (double)b / 1e3, b ? (double)a / (double)b : 0.0,
         b ? (double)c / (double)b : 0.0, ROUNDS, N);
}

/* ======================================================================== */
/* periodic: against cyclictest                                              */

/* cyclictest -v -N prints "thread: cycle: latency_ns" per wake-up. Returns
 * the number of latencies read, 0 when cyclictest is not installed. */
static size_t run_cyclictest(int loops, int64_t *v) {
  int fds[2];
  if (pipe(fds))
    return 0;
  pid_t pid = fork();
  if (pid == 0) {
    char l[32];
    snprintf(l, sizeof l, "-l%d", loops);
    dup2(fds[1], 1);
    close(fds[0]);
    int null = open("/dev/null", 1);
    dup2(null, 2);
    execlp("cyclictest", "cyclictest", "-i1000", "-d0", l, "-q", "-v", "-N", "--policy=other",
           "--default-system", (char *)NULL);
    _exit(127);
  }
  close(fds[1]);
  FILE *f = fdopen(fds[0], "r");
  char line[256];
  size_t n = 0;
  while (f && fgets(line, sizeof line, f)) {
    long long t, c, lat;
    if (sscanf(line, " %lld: %lld: %lld", &t, &c, &lat) == 3 && n < (size_t)loops)
      v[n++] = lat;
  }
  if (f)
    fclose(f);
  int st;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? n : 0;
}

static void bench_periodic(void) {
  enum { N = 3000 };
  const int64_t interval = 1000000;
  tl_collect_result r;
  collect("periodic", &interval, 1, N, interval, NULL, 0, &r);
  int64_t *v = malloc(N * sizeof *v);
  size_t n = run_cyclictest(N, v);
  printf("periodic 1 ms: median %.1f us  p99 %.1f us", (double)(r.p50_ns - interval) / 1e3,
         (double)(r.p99_ns - interval) / 1e3);
  if (n) {
    int64_t c50 = pct_of(v, n, 50), c99 = pct_of(v, n, 99);
    printf("   cyclictest: median %.1f us  p99 %.1f us   (%d wake-ups each, SCHED_OTHER)\n",
           (double)c50 / 1e3, (double)c99 / 1e3, N);
  } else {
    printf("   cyclictest: not installed (apt-get install rt-tests)\n");
  }
  free(v);
}

/* ======================================================================== */
/* node: agreement with a plain Node.js script                               */

#ifndef TL_BENCH_DIR
#define TL_BENCH_DIR "bench"
#endif

enum { NODE_DELAYS = 3, NODE_ROUNDS = 10, NODE_N = 300, NODE_WARMUP = 5 };
static const int64_t node_delays[NODE_DELAYS] = {0, 1000000, 50000000};

/* p50 and p90 lateness of one round of the plain script, per delay; 0 when
 * node or the script cannot run. */
static int run_plain(int64_t p50[NODE_DELAYS], int64_t p90[NODE_DELAYS]) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "node '%s/node-plain.js' 0,1,50 %d %d", TL_BENCH_DIR, NODE_N,
           NODE_WARMUP);
  FILE *f = popen(cmd, "r");
  if (!f)
    return 0;
  int64_t *v[NODE_DELAYS];
  size_t n[NODE_DELAYS] = {0};
  for (int i = 0; i < NODE_DELAYS; i++)
    if (!(v[i] = malloc(NODE_N * sizeof *v[i])))
      die("out of memory");
  long long d, ns;
  while (fscanf(f, "%lld %lld", &d, &ns) == 2)
    for (int i = 0; i < NODE_DELAYS; i++)
      if (d * 1000000 == node_delays[i] && n[i] < NODE_N)
        v[i][n[i]++] = ns - node_delays[i];
  int ok = pclose(f) == 0;
  for (int i = 0; i < NODE_DELAYS; i++) {
    ok = ok && n[i] == NODE_N;
    if (ok) {
      p50[i] = pct_of(v[i], n[i], 50);
      p90[i] = pct_of(v[i], n[i], 90);
    }
    free(v[i]);
  }
  return ok;
}

static int agrees(int64_t a, int64_t base) {
  int64_t diff = a > base ? a - base : base - a;
  int64_t mag = base < 0 ? -base : base;
  return diff <= 10000 || (double)diff <= 0.05 * (double)mag;
}

static void bench_node(void) {
  tl_collect_opts probe_check;
  tl_collect_opts_init(&probe_check);
  probe_check.probe = "node";
  probe_check.delay_count = 1;
  probe_check.count = 1;
  char why[256];
  if (tl_collect_opts_check(&probe_check, why, sizeof why)) {
    printf("node: %s\n", why);
    return;
  }
  /* [round][delay], lateness in ns. */
  int64_t pl50[NODE_ROUNDS][NODE_DELAYS], pl90[NODE_ROUNDS][NODE_DELAYS];
  int64_t nd50[NODE_ROUNDS][NODE_DELAYS], nd90[NODE_ROUNDS][NODE_DELAYS];
  int64_t st50[NODE_ROUNDS][NODE_DELAYS], st90[NODE_ROUNDS][NODE_DELAYS];
  /* Short rounds, the order reversed every other round, so that a change in
   * the host's load falls on all three alike. */
  for (int r = 0; r < NODE_ROUNDS; r++) {
    for (int step = 0; step < 3; step++) {
      int which = r % 2 ? 2 - step : step;
      tl_collect_result res[NODE_DELAYS];
      if (which == 0 && !run_plain(pl50[r], pl90[r])) {
        printf("node: the plain script did not run (%s/node-plain.js)\n", TL_BENCH_DIR);
        return;
      }
      if (which == 0)
        continue;
      collect(which == 1 ? "node" : "settimeout", node_delays, NODE_DELAYS, NODE_N, 0, NULL, 0,
              res);
      for (int i = 0; i < NODE_DELAYS; i++) {
        (which == 1 ? nd50 : st50)[r][i] = res[i].p50_ns - node_delays[i];
        (which == 1 ? nd90 : st90)[r][i] = res[i].p90_ns - node_delays[i];
      }
    }
  }
  printf("lateness (sample - delay), median of %d interleaved rounds of %d samples per delay "
         "(%d in all); target: node within 5 %% or 10 us of the plain script\n",
         NODE_ROUNDS, NODE_N, NODE_ROUNDS * NODE_N);
  printf("delay   plain script p50 / p90     node probe p50 / p90       settimeout p50 / p90\n");
  for (int i = 0; i < NODE_DELAYS; i++) {
    int64_t a[NODE_ROUNDS], b[NODE_ROUNDS], c[NODE_ROUNDS], d[NODE_ROUNDS], e[NODE_ROUNDS],
        g[NODE_ROUNDS];
    for (int r = 0; r < NODE_ROUNDS; r++) {
      a[r] = pl50[r][i], b[r] = pl90[r][i], c[r] = nd50[r][i], d[r] = nd90[r][i];
      e[r] = st50[r][i], g[r] = st90[r][i];
    }
    int64_t p50 = median3(a, NODE_ROUNDS), p90 = median3(b, NODE_ROUNDS);
    int64_t n50 = median3(c, NODE_ROUNDS), n90 = median3(d, NODE_ROUNDS);
    int64_t s50 = median3(e, NODE_ROUNDS), s90 = median3(g, NODE_ROUNDS);
    printf("%2d ms   %8.1f / %8.1f us     %8.1f / %8.1f us     %8.1f / %8.1f us   %s\n",
           (int)(node_delays[i] / 1000000), (double)p50 / 1e3, (double)p90 / 1e3, (double)n50 / 1e3,
           (double)n90 / 1e3, (double)s50 / 1e3, (double)s90 / 1e3,
           agrees(n50, p50) && agrees(n90, p90) ? "agree" : "DIFFER");
  }
}

/* ======================================================================== */
/* causes: the per-sample reads against none                                 */

enum { CAUSE_ROUNDS = 10, CAUSE_N = 3000, CAUSE_RATE_N = 500000 };

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One number from a query of the database at path (0 when none). */
static double query_number(const char *path, const char *sql) {
  sqlite3 *db;
  sqlite3_stmt *st;
  double v = 0;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
      sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
    if (sqlite3_step(st) == SQLITE_ROW)
      v = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return v;
}

static int within(int64_t a, int64_t base) {
  int64_t diff = a > base ? a - base : base - a;
  int64_t mag = base < 0 ? -base : base;
  return diff <= 2000 || (double)diff <= 0.02 * (double)mag;
}

static void bench_causes(void) {
  static const char *const probes[] = {"nanosleep", "uv"};
  static const int64_t delays[] = {1000000, 0};
  char path[2][4200];
  snprintf(path[0], sizeof path[0], "%s/causes-off.db", dir);
  snprintf(path[1], sizeof path[1], "%s/causes-on.db", dir);
  printf("lateness (sample - delay), median of %d interleaved rounds of %d samples, stored; "
         "target: with causes within 2 %% or 2 us of without\n",
         CAUSE_ROUNDS, CAUSE_N);
  printf("probe          without p50 / p90          with p50 / p90\n");
  for (int k = 0; k < 2; k++) {
    int64_t l50[2][CAUSE_ROUNDS], l90[2][CAUSE_ROUNDS];
    for (int r = 0; r < CAUSE_ROUNDS; r++)
      for (int step = 0; step < 2; step++) {
        int on = r % 2 ? 1 - step : step; /* the order reversed every other round */
        tl_collect_result res;
        no_causes = !on;
        collect(probes[k], &delays[k], 1, CAUSE_N, 0, path[on], 0, &res);
        int64_t armed = tl_probe_armed_ns(probes[k], delays[k]);
        l50[on][r] = res.p50_ns - armed;
        l90[on][r] = res.p90_ns - armed;
      }
    int64_t a = median3(l50[0], CAUSE_ROUNDS), b = median3(l90[0], CAUSE_ROUNDS);
    int64_t c = median3(l50[1], CAUSE_ROUNDS), d = median3(l90[1], CAUSE_ROUNDS);
    printf("%-10s %2d ms %7.1f / %7.1f us     %7.1f / %7.1f us   %s\n", probes[k],
           (int)(delays[k] / 1000000), (double)a / 1e3, (double)b / 1e3, (double)c / 1e3,
           (double)d / 1e3, within(c, a) && within(d, b) ? "agree" : "DIFFER");
  }
  /* The rate: uv 0 ms as fast as it goes, with and without, interleaved. */
  double rate[2][CAUSE_ROUNDS / 2];
  int64_t zero = 0;
  for (int r = 0; r < CAUSE_ROUNDS / 2; r++)
    for (int step = 0; step < 2; step++) {
      int on = r % 2 ? 1 - step : step;
      tl_collect_result res;
      no_causes = !on;
      double t0 = now_s();
      collect("uv", &zero, 1, CAUSE_RATE_N, 0, path[on], 0, &res);
      rate[on][r] = (double)CAUSE_RATE_N / (now_s() - t0);
    }
  no_causes = 0;
  double r0[CAUSE_ROUNDS / 2], r1[CAUSE_ROUNDS / 2];
  for (int r = 0; r < CAUSE_ROUNDS / 2; r++)
    r0[r] = rate[0][r], r1[r] = rate[1][r];
  qsort(r0, CAUSE_ROUNDS / 2, sizeof *r0, cmp_double);
  qsort(r1, CAUSE_ROUNDS / 2, sizeof *r1, cmp_double);
  double m0 = r0[CAUSE_ROUNDS / 4], m1 = r1[CAUSE_ROUNDS / 4];
  printf("uv 0 ms sample rate, %d samples a session (wall time, setup included), median of %d: "
         "without %.0f/s, with %.0f/s (ratio %.3f)\n",
         CAUSE_RATE_N, CAUSE_ROUNDS / 2, m0, m1, m1 / m0);
  /* Bytes a sample, from the last uv session of each file. */
  const char *samples_sql = "SELECT CAST(sum(length(data)) AS REAL) / (SELECT sample_count FROM "
                            "sessions ORDER BY id DESC LIMIT 1) FROM sample_blocks WHERE "
                            "session_id = (SELECT max(id) FROM sessions)";
  const char *causes_sql = "SELECT CAST(sum(length(data)) AS REAL) / (SELECT sample_count FROM "
                           "sessions ORDER BY id DESC LIMIT 1) FROM session_causes WHERE "
                           "session_id = (SELECT max(id) FROM sessions)";
  printf("bytes a sample (uv 0 ms, %d samples, blobs without page overhead): samples %.3f "
         "(without causes %.3f), causes %.3f (target: at most 0.3)\n",
         CAUSE_RATE_N, query_number(path[1], samples_sql), query_number(path[0], samples_sql),
         query_number(path[1], causes_sql));
  for (int i = 0; i < 2; i++)
    unlink(path[i]);
}

int main(int argc, char **argv) {
  dir = argc > 1 ? argv[1] : "/tmp";
  tl_set_progname("bench_probes");
  int all = argc <= 2;
  for (int pass = 0; pass < 5; pass++) {
    static const char *names[] = {"cost", "storage", "periodic", "node", "causes"};
    static void (*fns[])(void) = {bench_cost, bench_storage, bench_periodic, bench_node,
                                  bench_causes};
    int want = all;
    for (int i = 2; i < argc; i++)
      want |= strcmp(argv[i], names[pass]) == 0;
    if (want) {
      printf("-- %s\n", names[pass]);
      fflush(stdout);
      fns[pass]();
      fflush(stdout);
    }
  }
  return 0;
}
