/* bench_store: how fast the store ingests samples and how small it keeps
 * them, against a plain one-row-per-sample SQLite table measured in the same
 * run. The sample data is real: a settimeout session collected first on
 * this machine, replayed as often as needed.
 *
 * Usage: bench_store [DIR] [SAMPLES]   (default /tmp and 5000000) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>
#include <uv.h>

#include "tl_collect.h"

enum { RUNS = 5, REAL = 3000 };

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void die(const char *what, tl_store *s) {
  fprintf(stderr, "bench_store: %s: %s\n", what, s ? tl_store_errmsg(s) : "failed");
  exit(1);
}

static long long file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (long long)st.st_size : 0;
}

static void remove_db(const char *path) {
  char p[4200];
  unlink(path);
  snprintf(p, sizeof p, "%s-wal", path);
  unlink(p);
  snprintf(p, sizeof p, "%s-shm", path);
  unlink(p);
}

typedef struct {
  int64_t *v;
  size_t n;
} samples;

static int keep(void *ctx, const int64_t *v, size_t n) {
  samples *s = ctx;
  memcpy(s->v + s->n, v, n * sizeof *v);
  s->n += n;
  return 0;
}

/* A real settimeout(0) session on this machine. */
static samples collect_real(const char *path, double *bytes_per_sample) {
  remove_db(path);
  tl_store *s;
  tl_host *h = NULL;
  if (tl_store_open(&s, path, 0) || tl_host_detect(&h))
    die("open", s);
  size_t nf;
  const tl_fact *facts = tl_host_facts(h, &nf);
  tl_session_spec spec = {.run_uuid = "bench",
                          .label = "bench",
                          .command_line = "bench_store",
                          .host_fingerprint = tl_host_fingerprint(h),
                          .hostname = tl_host_hostname(h),
                          .libuv_version = uv_version_string(),
                          .facts = facts,
                          .fact_count = nf};
  tl_collect_opts o;
  tl_collect_opts_init(&o);
  o.delays_ns[0] = 0;
  o.delay_count = 1;
  o.count = REAL;
  char err[512];
  if (tl_collect_run(s, &spec, &o, NULL, err, sizeof err))
    die(err, NULL);
  tl_store_stats st;
  tl_filter f;
  tl_filter_init(&f);
  tl_session_list list;
  samples real = {malloc(REAL * sizeof(int64_t)), 0};
  if (tl_store_info(s, &st) || tl_store_sessions(s, &f, &list) ||
      tl_store_scan(s, list.items[0].id, keep, &real))
    die("read back", s);
  *bytes_per_sample = (double)st.sample_bytes / (double)st.samples;
  tl_session_list_free(&list);
  tl_host_free(h);
  tl_store_close(s);
  return real;
}

/* Writes n samples (the real ones, cycled) as one session through the
 * writer, committing every batch samples. Returns samples per second. */
static double ingest_tl(const char *path, const samples *real, size_t n, size_t batch,
                        double *bytes_per_sample) {
  remove_db(path);
  tl_store *s;
  if (tl_store_open(&s, path, 0))
    die("open", s);
  tl_session_spec spec = {.run_uuid = "bench",
                          .label = "bench",
                          .probe = "settimeout",
                          .command_line = "bench_store",
                          .host_fingerprint = "bench",
                          .hostname = "bench",
                          .libuv_version = uv_version_string()};
  int64_t *buf = malloc(batch * sizeof *buf);
  tl_writer *w;
  char uuid[37];
  double t0 = now_s();
  if (tl_writer_begin(s, &spec, &w, uuid))
    die("begin", s);
  for (size_t at = 0; at < n; at += batch) {
    size_t k = n - at < batch ? n - at : batch;
    for (size_t i = 0; i < k; i++)
      buf[i] = real->v[(at + i) % real->n];
    if (tl_writer_add(w, buf, k) || tl_writer_flush(w))
      die("write", s);
  }
  if (tl_writer_end(w, "complete"))
    die("end", s);
  double t = now_s() - t0;
  tl_store_close(s);
  *bytes_per_sample = (double)file_size(path) / (double)n;
  free(buf);
  return (double)n / t;
}

typedef struct {
  const samples *real;
  size_t at, wrong;
} verify_ctx;

static int verify(void *ctx, const int64_t *v, size_t n) {
  verify_ctx *c = ctx;
  for (size_t i = 0; i < n; i++, c->at++)
    c->wrong += v[i] != c->real->v[c->at % c->real->n];
  return 0;
}

/* Reads the last ingest back: every sample must come out as it went in. */
static int recovered_exactly(const char *path, const samples *real, size_t n) {
  tl_store *s;
  tl_filter f;
  tl_filter_init(&f);
  tl_session_list list;
  verify_ctx c = {real, 0, 0};
  if (tl_store_open(&s, path, TL_STORE_READONLY) || tl_store_sessions(s, &f, &list) ||
      list.count != 1 || tl_store_scan(s, list.items[0].id, verify, &c))
    die("read back", s);
  tl_session_list_free(&list);
  tl_store_close(s);
  return c.at == n && c.wrong == 0;
}

/* The baseline: one row per sample in a plain table, prepared statement,
 * one transaction per batch, same pragmas as tl. */
static double ingest_plain(const char *path, const samples *real, size_t n, size_t batch,
                           double *bytes_per_sample) {
  remove_db(path);
  sqlite3 *db;
  sqlite3_stmt *st;
  if (sqlite3_open(path, &db) != SQLITE_OK ||
      sqlite3_exec(db,
                   "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                   "CREATE TABLE samples (session_id INTEGER, seq INTEGER, latency_ns INTEGER)",
                   NULL, NULL, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "INSERT INTO samples VALUES (1, ?, ?)", -1, &st, NULL) != SQLITE_OK)
    die("baseline", NULL);
  double t0 = now_s();
  for (size_t at = 0; at < n; at += batch) {
    size_t k = n - at < batch ? n - at : batch;
    sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    for (size_t i = 0; i < k; i++) {
      sqlite3_bind_int64(st, 1, (sqlite3_int64)(at + i));
      sqlite3_bind_int64(st, 2, real->v[(at + i) % real->n]);
      sqlite3_step(st);
      sqlite3_reset(st);
    }
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
      die("baseline commit", NULL);
  }
  double t = now_s() - t0;
  sqlite3_finalize(st);
  sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
  sqlite3_close(db);
  *bytes_per_sample = (double)file_size(path) / (double)n;
  return (double)n / t;
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "/tmp";
  size_t n = argc > 2 ? (size_t)strtoull(argv[2], NULL, 10) : 5000000;
  const size_t batch = 100000;
  char path[4096], plain[4096];
  snprintf(path, sizeof path, "%s/tl-bench-store.db", dir);
  snprintf(plain, sizeof plain, "%s/tl-bench-plain.db", dir);

  double real_bps;
  printf("collecting %d real settimeout(0) samples on this machine...\n", REAL);
  samples real = collect_real(path, &real_bps);

  double tl_rate[RUNS], plain_rate[RUNS], tl_bps = 0, plain_bps = 0;
  for (int r = 0; r < RUNS; r++) {
    tl_rate[r] = ingest_tl(path, &real, n, batch, &tl_bps);
    plain_rate[r] = ingest_plain(plain, &real, n, batch, &plain_bps);
  }
  double tl_med = median(tl_rate, RUNS), plain_med = median(plain_rate, RUNS);
  printf("\nstore ingest, %zu samples in batches of %zu, median of %d runs\n", n, batch, RUNS);
  printf("  %-34s %14.0f samples/s\n", "tl (sample blocks)", tl_med);
  printf("  %-34s %14.0f samples/s\n", "baseline (one row per sample)", plain_med);
  printf("  %-34s %14.1fx\n", "ratio tl / baseline", tl_med / plain_med);
  printf("\nbytes per stored sample\n");
  printf("  %-34s %14.2f\n", "tl, encoded samples (real session)", real_bps);
  printf("  %-34s %14.2f\n", "tl, whole file", tl_bps);
  printf("  %-34s %14.2f\n", "baseline, whole file", plain_bps);
  printf("  %-34s %14.1fx\n", "ratio baseline / tl", plain_bps / tl_bps);
  printf("  %-34s %14s\n", "tl, every sample read back exactly",
         recovered_exactly(path, &real, n) ? "yes" : "NO");
  remove_db(path);
  remove_db(plain);
  free(real.v);
  return 0;
}
