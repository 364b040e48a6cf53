/* bench_weeks: reports over runs accumulating for weeks, the use tl exists
 * for. A run every 3 hours of 3 labels x 2 delays, 1,000 samples a session
 * (real settimeout(0) samples collected first on this machine and replayed,
 * each session shifted a little by the hour of the day and by chance, so
 * that sessions differ as real ones do). The database grows from one month
 * (1,440 sessions) to three months (4,320) and a year (17,520); for each it
 * measures, median of runs, the wall and CPU time of the real programs:
 *   - tlreport --compare vbox,macos,droplet (the default page);
 *   - tlreport --check --baseline vbox (what a scheduled job runs);
 * next to the baseline measured in the same run: the same samples stored in
 * 6 large sessions (one per label and delay), which is what the report costs
 * when only the samples count. The growth per session is the difference of
 * the two CPU times divided by the number of sessions (CPU time: on a shared
 * machine the steadier figure).
 *
 * Usage: bench_weeks DIR TLREPORT [MONTHS [keep]]   (MONTHS: largest
 * database, 1, 3 or 12; default 12; keep: leave it in DIR/weeks.db, for
 * profiling) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>
#include <uv.h>

#include "bench_util.h"
#include "tl_report.h"

enum { RUNS = 3, REAL = 3000, PER_SESSION = 1000, RUNS_PER_DAY = 8 };
static const char *const labels[3] = {"vbox", "macos", "droplet"};
static const int64_t delays[2] = {0, 50000000};
static const int64_t HOUR_NS = 3600LL * 1000000000LL;
static const int64_t START_NS = 1764547200LL * 1000000000LL; /* 2025-12-01 UTC */

/* Sample i of run r of a label and delay: a real sample, shifted by the
 * label and delay, by the hour of the day (up to 6%) and per session. */
static int64_t sample_at(const bench_samples *real, size_t run, int label, int delay, size_t i) {
  size_t k = run * 6 + (size_t)label * 2 + (size_t)delay;
  int64_t v = real->v[(i * 7 + k * 131) % real->n];
  int64_t hour = (int64_t)(run % RUNS_PER_DAY) * 3;
  int64_t by_hour = v * (hour < 12 ? hour : 24 - hour) / 200;
  int64_t by_session = (int64_t)((k * 2654435761u) % 4001) - 2000;
  return v + by_hour + by_session + delays[delay] + label * 150000 +
         (int64_t)((i * 2654435761u) % 997);
}

static tl_session_spec spec_of(int label, int delay) {
  tl_session_spec spec = {.run_uuid = "bench",
                          .label = labels[label],
                          .probe = "settimeout",
                          .delay_ns = delays[delay],
                          .command_line = "bench_weeks",
                          .host_fingerprint = labels[label],
                          .hostname = labels[label],
                          .libuv_version = uv_version_string()};
  return spec;
}

/* Dates the sessions a run every 3 hours from START_NS, in the order they
 * were written (the writer stamps them with the time of writing). */
static void date_sessions(const char *path) {
  sqlite3 *db;
  char sql[400];
  snprintf(sql, sizeof sql,
           "UPDATE sessions SET started_ns = %lld + ((id - 1) / 6) * %lld, ended_ns = %lld + "
           "((id - 1) / 6) * %lld + 60000000000, heartbeat_ns = %lld + ((id - 1) / 6) * %lld",
           (long long)START_NS, (long long)(3 * HOUR_NS), (long long)START_NS,
           (long long)(3 * HOUR_NS), (long long)START_NS, (long long)(3 * HOUR_NS));
  if (sqlite3_open(path, &db) != SQLITE_OK || sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
    bench_die("dating the sessions", NULL);
  sqlite3_close(db);
}

/* Appends the runs [from, to) to the database at path, a session each. */
static double add_runs(const char *path, const bench_samples *real, size_t from, size_t to) {
  tl_store *s;
  if (tl_store_open(&s, path, 0))
    bench_die("open", s);
  int64_t buf[PER_SESSION];
  double t0 = bench_now_s();
  for (size_t run = from; run < to; run++)
    for (int l = 0; l < 3; l++)
      for (int d = 0; d < 2; d++) {
        tl_session_spec spec = spec_of(l, d);
        tl_writer *w;
        char uuid[37];
        for (size_t i = 0; i < PER_SESSION; i++)
          buf[i] = sample_at(real, run, l, d, i);
        if (tl_writer_begin(s, &spec, &w, uuid) || tl_writer_add(w, buf, PER_SESSION) ||
            tl_writer_end(w, "complete"))
          bench_die("write", s);
      }
  double t = bench_now_s() - t0;
  tl_store_close(s);
  date_sessions(path);
  return t;
}

/* The same samples as runs [0, runs), in one session per label and delay. */
static void build_flat(const char *path, const bench_samples *real, size_t runs) {
  bench_remove_db(path);
  tl_store *s;
  if (tl_store_open(&s, path, 0))
    bench_die("open", s);
  int64_t buf[PER_SESSION];
  for (int l = 0; l < 3; l++)
    for (int d = 0; d < 2; d++) {
      tl_session_spec spec = spec_of(l, d);
      tl_writer *w;
      char uuid[37];
      if (tl_writer_begin(s, &spec, &w, uuid))
        bench_die("write", s);
      for (size_t run = 0; run < runs; run++) {
        for (size_t i = 0; i < PER_SESSION; i++)
          buf[i] = sample_at(real, run, l, d, i);
        if (tl_writer_add(w, buf, PER_SESSION) || (run % 1000 == 999 && tl_writer_flush(w)))
          bench_die("write", s);
      }
      if (tl_writer_end(w, "complete"))
        bench_die("write", s);
    }
  tl_store_close(s);
}

typedef struct {
  double wall, cpu; /* medians, seconds */
} timing;

static timing median_of_runs(char *const argv[], int ok_status) {
  double w[RUNS], c[RUNS];
  for (int i = 0; i < RUNS; i++)
    w[i] = bench_run(argv, ok_status, &c[i], NULL);
  timing t = {bench_median(w, RUNS), bench_median(c, RUNS)};
  return t;
}

/* The page and the check over db. */
static void time_both(const char *tlreport, const char *db, timing *page, timing *check) {
  char *pg[] = {(char *)tlreport, "--compare", "vbox,macos,droplet", "--db", (char *)db, NULL};
  char *ck[] = {(char *)tlreport, "--check", "--baseline", "vbox", "--db", (char *)db, NULL};
  *page = median_of_runs(pg, 0);
  *check = median_of_runs(ck, 1);
}

static void print_row(const char *what, const char *span, size_t sessions, timing t, timing flat) {
  printf("  %-8s %-6s %8zu %9.3f %9.3f | %9.3f %9.3f | %6.2f %11.1f\n", span, what, sessions,
         t.wall, t.cpu, flat.wall, flat.cpu, t.cpu / flat.cpu,
         (t.cpu - flat.cpu) * 1e6 / (double)sessions);
}

int main(int argc, char **argv) {
  tl_set_progname("bench_weeks");
  if (argc < 3) {
    fprintf(stderr, "usage: bench_weeks DIR TLREPORT [MONTHS]\n");
    return 2;
  }
  const char *dir = argv[1], *tlreport = argv[2];
  int max_months = argc > 3 ? atoi(argv[3]) : 12;
  int keep_db = argc > 4 && strcmp(argv[4], "keep") == 0;
  printf("collecting %d real settimeout(0) samples on this machine...\n", REAL);
  char real_path[4096], path[4096], flat[4096];
  snprintf(real_path, sizeof real_path, "%s/real.db", dir);
  bench_samples real = bench_collect_real(real_path, REAL, NULL);
  bench_remove_db(real_path);
  snprintf(path, sizeof path, "%s/weeks.db", dir);
  snprintf(flat, sizeof flat, "%s/flat.db", dir);
  bench_remove_db(path);

  printf("\na run every 3 hours, 3 labels x 2 delays, %d samples a session; median of %d\n",
         PER_SESSION, RUNS);
  printf("page: tlreport --compare vbox,macos,droplet; check: tlreport --check --baseline vbox\n");
  printf("baseline: the same samples in 6 sessions (one per label and delay), same run;\n");
  printf("ratio and growth per session from CPU time (steadier than wall on a shared machine)\n");
  printf("  %-8s %-6s %8s %9s %9s | %9s %9s | %6s %11s\n", "span", "", "sessions", "wall s",
         "cpu s", "6 s. wall", "6 s. cpu", "ratio", "us/session");
  static const struct {
    const char *name;
    int months;
    size_t days;
  } spans[] = {{"1 month", 1, 30}, {"3 months", 3, 90}, {"1 year", 12, 365}};
  size_t runs_done = 0;
  for (size_t i = 0; i < sizeof spans / sizeof *spans && spans[i].months <= max_months; i++) {
    size_t runs = spans[i].days * RUNS_PER_DAY, sessions = runs * 6;
    double build = add_runs(path, &real, runs_done, runs);
    runs_done = runs;
    build_flat(flat, &real, runs);
    timing page, check, flat_page, flat_check;
    time_both(tlreport, path, &page, &check);
    time_both(tlreport, flat, &flat_page, &flat_check);
    print_row("page", spans[i].name, sessions, page, flat_page);
    print_row("check", "", sessions, check, flat_check);
    printf("  %-8s %-6s %8s %9.1f s to write the sessions, %zu samples\n", "", "build", "", build,
           sessions * PER_SESSION);
    fflush(stdout);
    bench_remove_db(flat);
  }
  if (!keep_db)
    bench_remove_db(path);
  free(real.v);
  return 0;
}
