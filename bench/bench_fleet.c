/* bench_fleet: a fleet's runs, as a person with many droplets stores them.
 * Hosts of four sizes (512M/1 CPU, 1G/1 CPU, 2G/2 CPUs, 4G/2 CPUs), two
 * delays, a session of 1,000 samples an hour per host and delay, each
 * stored as `tlstore import --host --start --fact memory=.. --fact cpus=..`
 * stores it (tl_store_import, one store handle for the whole build: the
 * programs' start-up is not what is measured). Samples are synthetic and
 * reproducible: a floor and a long tail that grow as the host shrinks and
 * vary by the hour of the day and per session.
 *
 * build: writes DAYS days of HOSTS hosts (default 200) into DB (a new
 *        file), saying the import rate as it goes, at the start (the first
 *        2,000 sessions) and at the end (the last 2,000), the bytes the
 *        process wrote to disk per import (/proc/self/io), and the file's
 *        size per sample, whole and by table (SQLite's dbstat table, or
 *        the length of every row where it is not compiled in).
 * time:  runs the reports (default page, --by memory, --by hostname, --check,
 *        --by memory --check --baseline 512M, JSON, HTML, --site) on the
 *        last 1, 7 and 30 days of a DAYS-day fleet file (those it holds,
 *        --since) and tlstore check on the whole, and prints wall and CPU
 *        time, peak RSS and the growth per session, next to one host's
 *        year (1 host, 365 days: 17,520 sessions, built in DIR unless
 *        given).
 *
 * build takes the blocks' codec as a fifth argument (0, tl's own choice,
 * the default; 2 or 3 to compare them).
 *
 * Usage: bench_fleet build DB DAYS [HOSTS [CODEC]]
 *        bench_fleet time DIR DB TLREPORT TLSTORE DAYS [YEAR_DB] */
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "codec_internal.h"
#include "tl_report.h"

enum { PER_SESSION = 1000, SIZES = 4 };
static const int64_t HOUR_NS = 3600LL * 1000000000LL;
static const int64_t START_NS = 1790812800LL * 1000000000LL; /* 2026-10-01 UTC */
static const int64_t delays_ns[2] = {0, 50000000};
static const struct {
  const char *memory, *cpus;
  int slow; /* how much slower than the largest size, in per cent */
} sizes[SIZES] = {{"512M", "1", 60}, {"1G", "1", 35}, {"2G", "2", 12}, {"4G", "2", 0}};

static uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

/* Sample i of the session of host h, delay d, hour t: lateness in ns. */
static int64_t sample_at(size_t h, int d, size_t t, size_t i) {
  uint64_t r = mix(((uint64_t)h << 40) ^ ((uint64_t)t << 12) ^ ((uint64_t)d << 11) ^ i);
  int slow = sizes[h % SIZES].slow;
  int64_t hour = (int64_t)(t % 24), by_hour = hour < 12 ? hour : 24 - hour;
  int64_t floor_ns = 40000 + 400 * slow + 1500 * by_hour + (int64_t)(mix(h * 7919 + t) % 3000);
  /* A long tail: 1 in 2^k samples is at least 2^k times the floor. */
  int k = __builtin_ctzll(r | (1ULL << 20));
  int64_t tail = (int64_t)((r >> 24) % (uint64_t)(floor_ns << (k > 10 ? 10 : k)));
  /* A Node-style 0 ms timer waits 1 ms. */
  return (d == 0 ? 1000000 : delays_ns[d]) + floor_ns + tail * (100 + slow) / 100;
}

/* Bytes this process has written to disk so far, -1 where unknown. */
static long long written_bytes(void) {
  FILE *f = fopen("/proc/self/io", "r");
  long long v = -1;
  char line[128];
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "write_bytes: %lld", &v) == 1)
      break;
  if (f)
    fclose(f);
  return v;
}

/* Bytes a table takes with its indexes, whole pages (SQLite's dbstat). */
static void print_by_table(const char *path, double samples) {
  sqlite3 *db;
  sqlite3_stmt *st = NULL;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
      sqlite3_prepare_v2(db,
                         "SELECT coalesce(m.tbl_name, d.name), sum(d.pgsize) FROM dbstat d "
                         "LEFT JOIN sqlite_schema m ON m.name = d.name GROUP BY 1 ORDER BY 2 DESC",
                         -1, &st, NULL) == SQLITE_OK) {
    printf("  bytes a sample by table, with its indexes:");
    while (sqlite3_step(st) == SQLITE_ROW)
      printf(" %s %.3f", sqlite3_column_text(st, 0), sqlite3_column_double(st, 1) / samples);
    printf("\n");
  } else {
    printf("  bytes by table: this SQLite has no dbstat table (SQLITE_ENABLE_DBSTAT_VTAB)\n");
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
}

static void build(const char *path, size_t days, size_t hosts, int codec) {
  bench_remove_db(path);
  tl_store *s;
  if (tl_store_open(&s, path, 0) || tl_store_set_codec(s, codec))
    bench_die("open", s);
  char *csv = malloc(PER_SESSION * 24);
  if (!csv)
    bench_die("out of memory", NULL);
  double t0 = bench_now_s(), last = t0, edge = t0;
  size_t done = 0, total = days * 24 * hosts * 2;
  long long w0 = written_bytes();
  for (size_t t = 0; t < days * 24; t++)
    for (size_t h = 0; h < hosts; h++)
      for (int d = 0; d < 2; d++) {
        size_t at = 0;
        for (size_t i = 0; i < PER_SESSION; i++)
          at += (size_t)sprintf(csv + at, "%" PRId64 "\n", sample_at(h, d, t, i));
        FILE *in = fmemopen(csv, at, "r");
        char host[32], memory[32], cpus[32];
        snprintf(host, sizeof host, "droplet-%03zu", h);
        snprintf(memory, sizeof memory, "memory=%s", sizes[h % SIZES].memory);
        snprintf(cpus, sizeof cpus, "cpus=%s", sizes[h % SIZES].cpus);
        const char *facts[2] = {memory, cpus};
        tl_import_opts o;
        tl_import_opts_init(&o);
        o.format = TL_SAMPLES_CSV;
        o.label = "droplet";
        o.probe = "settimeout";
        o.delay_ns = delays_ns[d];
        o.hostname = host;
        o.source = "fleet.csv";
        o.started_ns = START_NS + (int64_t)t * HOUR_NS + (int64_t)h * 1000000000LL * 5;
        o.facts = facts;
        o.fact_count = 2;
        if (!in || tl_store_import(s, in, &o, NULL, NULL, NULL, NULL, NULL))
          bench_die("import", s);
        fclose(in);
        ++done;
        if (total >= 4000 && (done == 2000 || done == total - 2000 || done == total)) {
          double now = bench_now_s();
          if (done != total - 2000)
            printf("  %s 2,000 sessions: %.0f sessions/s\n", done == 2000 ? "first" : "last",
                   2000 / (now - edge));
          edge = now;
        }
        if (done % 20000 == 0) {
          double now = bench_now_s();
          printf("  %zu of %zu sessions, %.0f sessions/s\n", done, total, 20000 / (now - last));
          fflush(stdout);
          last = now;
        }
      }
  tl_store_close(s);
  free(csv);
  long long w1 = written_bytes();
  if (w0 >= 0 && w1 >= 0)
    printf("  written to disk: %.0f KB an import (write_bytes of /proc/self/io)\n",
           (double)(w1 - w0) / 1000.0 / (double)total);
  long long bytes = bench_file_size(path);
  printf("built %s: %zu days, %zu hosts, %zu sessions, %zu samples in %.1f s; %lld bytes, %.2f "
         "bytes a sample\n",
         path, days, hosts, total, total * PER_SESSION, bench_now_s() - t0, bytes,
         (double)bytes / (double)(total * PER_SESSION));
  print_by_table(path, (double)(total * PER_SESSION));
}

typedef struct {
  const char *name;
  const char *args[6];
} report;

static const report reports[] = {
    {"page", {NULL}},
    {"--by memory", {"--by", "memory", NULL}},
    {"--by hostname", {"--by", "hostname", NULL}}, /* 200 groups, 25 passes */
    {"--check", {"--check", NULL}},
    /* Every size against the smallest, the year's host's size too. */
    {"--baseline", {"--by", "memory", "--check", "--baseline", "512M", NULL}},
    {"json", {"--format", "json", NULL}},
    {"html", {"--format", "html", NULL}},
    {"--site", {"--site", NULL}}, /* the folder follows */
};

/* Runs tlreport with r's arguments over db since since (NULL: all);
 * returns wall seconds, with CPU seconds and peak RSS. Any other exit than
 * 0 ends the bench (a run that failed is no figure), but a check's 1: a
 * label that got worse, as the fleet's smallest droplets do. */
static double time_report(const char *tlreport, const char *db, const char *since, const report *r,
                          const char *site, double *cpu, double *rss) {
  char *argv[16];
  size_t n = 0;
  argv[n++] = (char *)tlreport;
  argv[n++] = "--db";
  argv[n++] = (char *)db;
  if (since) {
    argv[n++] = "--since";
    argv[n++] = (char *)since;
  }
  for (size_t i = 0; r->args[i]; i++)
    argv[n++] = (char *)r->args[i];
  if (strcmp(r->name, "--site") == 0)
    argv[n++] = (char *)site;
  argv[n] = NULL;
  int checks = strcmp(r->name, "--check") == 0 || strcmp(r->name, "--baseline") == 0;
  return bench_run(argv, checks, cpu, rss);
}

/* Each report over the single host's year, then over the fleet's last 1, 7
 * and 30 days (those it holds); growth: the CPU time one more session adds,
 * between one span and the next, and the wall time it adds (for the year,
 * its CPU and wall time per session). */
static void time_all(const char *dir, const char *db, const char *tlreport, const char *tlstore,
                     const char *year_db, size_t days, size_t hosts) {
  static const size_t spans[] = {1, 7, 30};
  char site[4096];
  snprintf(site, sizeof site, "%s/fleet-site", dir);
  printf("  %-14s %6s %9s %9s %9s %9s %11s %11s\n", "report", "days", "sessions", "wall s", "cpu s",
         "RSS MiB", "cpu us/s", "wall us/s");
  for (size_t k = 0; k < sizeof reports / sizeof *reports; k++) {
    double ycpu, yrss,
        ywall = time_report(tlreport, year_db, NULL, &reports[k], site, &ycpu, &yrss);
    printf("  %-14s %6s %9d %9.3f %9.3f %9.1f %11.1f %11.1f\n", reports[k].name, "year", 17520,
           ywall, ycpu, yrss, ycpu * 1e6 / 17520, ywall * 1e6 / 17520);
    double last_cpu = 0, last_wall = 0;
    size_t last_sessions = 0;
    for (size_t i = 0; i < sizeof spans / sizeof *spans && spans[i] <= days; i++) {
      char since[32];
      int64_t since_ns = START_NS + (int64_t)(days - spans[i]) * 24 * HOUR_NS;
      tl_date_format(since_ns, since, sizeof since);
      size_t sessions = spans[i] * 24 * hosts * 2;
      double cpu, rss,
          wall = time_report(tlreport, db, spans[i] < days ? since : NULL, &reports[k], site, &cpu,
                             &rss);
      double more = (double)(sessions - last_sessions);
      double cpu_growth = (cpu - last_cpu) / more, wall_growth = (wall - last_wall) / more;
      printf("  %-14s %6zu %9zu %9.3f %9.3f %9.1f %11.1f %11.1f\n", "", spans[i], sessions, wall,
             cpu, rss, cpu_growth * 1e6, wall_growth * 1e6);
      fflush(stdout);
      last_cpu = cpu;
      last_wall = wall;
      last_sessions = sessions;
    }
  }
  char *check[] = {(char *)tlstore, "--db", (char *)db, "check", NULL};
  double cpu, rss, wall = bench_run(check, 0, &cpu, &rss);
  double all = (double)(days * 24 * hosts * 2);
  printf("  %-14s %6zu %9zu %9.3f %9.3f %9.1f %11.1f %11.1f\n", "tlstore check", days,
         days * 24 * hosts * 2, wall, cpu, rss, cpu * 1e6 / all, wall * 1e6 / all);
  printf("  (cpu us/s and wall us/s: for the year and the first span, the CPU and wall time per "
         "session;\n   after, the CPU and wall time each session more adds: both threads' CPU, and "
         "the time a person waits)\n");
}

int main(int argc, char **argv) {
  tl_set_progname("bench_fleet");
  if (argc >= 4 && strcmp(argv[1], "build") == 0) {
    build(argv[2], (size_t)atoi(argv[3]), argc > 4 ? (size_t)atoi(argv[4]) : 200,
          argc > 5 ? atoi(argv[5]) : TL_CODEC_DEFAULT);
    return 0;
  }
  if (argc >= 7 && strcmp(argv[1], "time") == 0) {
    char year[4096];
    snprintf(year, sizeof year, "%s/year.db", argv[2]);
    if (argc <= 7)
      build(year, 365, 1, TL_CODEC_DEFAULT);
    time_all(argv[2], argv[3], argv[4], argv[5], argc > 7 ? argv[7] : year, (size_t)atoi(argv[6]),
             200);
    return 0;
  }
  fprintf(stderr, "usage: bench_fleet build DB DAYS [HOSTS [CODEC]]\n"
                  "       bench_fleet time DIR DB TLREPORT TLSTORE DAYS [YEAR_DB]\n");
  return 2;
}
