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

#include "bench_util.h"

enum { RUNS = 5, REAL = 3000 };

/* Writes n samples (the real ones, cycled) as one session through the
 * writer, committing every batch samples. Returns samples per second. */
static double ingest_tl(const char *path, const bench_samples *real, size_t n, size_t batch,
                        double *bytes_per_sample) {
  bench_remove_db(path);
  tl_store *s;
  if (tl_store_open(&s, path, 0))
    bench_die("open", s);
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
  double t0 = bench_now_s();
  if (tl_writer_begin(s, &spec, &w, uuid))
    bench_die("begin", s);
  for (size_t at = 0; at < n; at += batch) {
    size_t k = n - at < batch ? n - at : batch;
    for (size_t i = 0; i < k; i++)
      buf[i] = real->v[(at + i) % real->n];
    if (tl_writer_add(w, buf, k) || tl_writer_flush(w))
      bench_die("write", s);
  }
  if (tl_writer_end(w, "complete"))
    bench_die("end", s);
  double t = bench_now_s() - t0;
  tl_store_close(s);
  *bytes_per_sample = (double)bench_file_size(path) / (double)n;
  free(buf);
  return (double)n / t;
}

typedef struct {
  const bench_samples *real;
  size_t at, wrong;
} verify_ctx;

static int verify(void *ctx, const int64_t *v, size_t n) {
  verify_ctx *c = ctx;
  for (size_t i = 0; i < n; i++, c->at++)
    c->wrong += v[i] != c->real->v[c->at % c->real->n];
  return 0;
}

/* Reads the last ingest back: every sample must come out as it went in. */
static int recovered_exactly(const char *path, const bench_samples *real, size_t n) {
  tl_store *s;
  tl_filter f;
  tl_filter_init(&f);
  tl_session_list list;
  verify_ctx c = {real, 0, 0};
  if (tl_store_open(&s, path, TL_STORE_READONLY) || tl_store_sessions(s, &f, &list) ||
      list.count != 1 || tl_store_scan(s, list.items[0].id, verify, &c))
    bench_die("read back", s);
  tl_session_list_free(&list);
  tl_store_close(s);
  return c.at == n && c.wrong == 0;
}

/* The baseline: one row per sample in a plain table, prepared statement,
 * one transaction per batch, same pragmas as tl. */
static double ingest_plain(const char *path, const bench_samples *real, size_t n, size_t batch,
                           double *bytes_per_sample) {
  bench_remove_db(path);
  sqlite3 *db;
  sqlite3_stmt *st;
  if (sqlite3_open(path, &db) != SQLITE_OK ||
      sqlite3_exec(db,
                   "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                   "CREATE TABLE samples (session_id INTEGER, seq INTEGER, latency_ns INTEGER)",
                   NULL, NULL, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "INSERT INTO samples VALUES (1, ?, ?)", -1, &st, NULL) != SQLITE_OK)
    bench_die("baseline", NULL);
  double t0 = bench_now_s();
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
      bench_die("baseline commit", NULL);
  }
  double t = bench_now_s() - t0;
  sqlite3_finalize(st);
  sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
  sqlite3_close(db);
  *bytes_per_sample = (double)bench_file_size(path) / (double)n;
  return (double)n / t;
}

int main(int argc, char **argv) {
  tl_set_progname("bench_store");
  const char *dir = argc > 1 ? argv[1] : "/tmp";
  size_t n = argc > 2 ? (size_t)strtoull(argv[2], NULL, 10) : 5000000;
  const size_t batch = 100000;
  char path[4096], plain[4096];
  snprintf(path, sizeof path, "%s/tl-bench-store.db", dir);
  snprintf(plain, sizeof plain, "%s/tl-bench-plain.db", dir);

  double real_bps;
  printf("collecting %d real settimeout(0) samples on this machine...\n", REAL);
  bench_samples real = bench_collect_real(path, REAL, &real_bps);

  double tl_rate[RUNS], plain_rate[RUNS], tl_bps = 0, plain_bps = 0;
  for (int r = 0; r < RUNS; r++) {
    tl_rate[r] = ingest_tl(path, &real, n, batch, &tl_bps);
    plain_rate[r] = ingest_plain(plain, &real, n, batch, &plain_bps);
  }
  double tl_med = bench_median(tl_rate, RUNS), plain_med = bench_median(plain_rate, RUNS);
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
  bench_remove_db(path);
  bench_remove_db(plain);
  free(real.v);
  return 0;
}
