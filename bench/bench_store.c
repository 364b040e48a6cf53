/* bench_store: how fast the store ingests samples and how small it keeps
 * them, in the block codec tl writes (2) and the one before it (1), against
 * a plain one-row-per-sample SQLite table, all measured in the same run; and
 * how fast each codec encodes and decodes. The sample data is real: a
 * settimeout session collected first on this machine, replayed as often as
 * needed.
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
#include "codec_internal.h"

enum { RUNS = 5, REAL = 3000 };

/* Writes n samples (the real ones, cycled) as one session through the
 * writer in codec, committing every batch samples. Returns samples per
 * second. */
static double ingest_tl(const char *path, int codec, const bench_samples *real, size_t n,
                        size_t batch, double *bytes_per_sample) {
  bench_remove_db(path);
  tl_store *s;
  if (tl_store_open(&s, path, 0) || tl_store_set_codec(s, codec))
    bench_die("open", s);
  tl_session_spec spec = {.run_uuid = "bench",
                          .label = "bench",
                          .probe = "settimeout",
                          .command_line = "bench_store",
                          .host_fingerprint = "bench",
                          .hostname = "bench",
                          .libuv_version = uv_version_string()};
  /* The replayed samples are laid out first, so that only the store is
   * timed. */
  int64_t *all = malloc(n * sizeof *all);
  if (!all)
    bench_die("out of memory", NULL);
  for (size_t i = 0; i < n; i++)
    all[i] = real->v[i % real->n];
  tl_writer *w;
  char uuid[37];
  double t0 = bench_now_s();
  if (tl_writer_begin(s, &spec, &w, uuid))
    bench_die("begin", s);
  for (size_t at = 0; at < n; at += batch) {
    size_t k = n - at < batch ? n - at : batch;
    if (tl_writer_add(w, all + at, k) || tl_writer_flush(w))
      bench_die("write", s);
  }
  if (tl_writer_end(w, "complete"))
    bench_die("end", s);
  double t = bench_now_s() - t0;
  tl_store_close(s);
  *bytes_per_sample = (double)bench_file_size(path) / (double)n;
  free(all);
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

/* Encodes the real samples, cycled to n, in blocks of TL_BLOCK_MAX, then
 * decodes them: samples per second each way, and bytes per sample. */
typedef struct {
  double encode, decode, bytes;
} codec_speed;

static codec_speed codec_run(int codec, const bench_samples *real, size_t n) {
  size_t blocks = (n + TL_BLOCK_MAX - 1) / TL_BLOCK_MAX;
  int64_t *v = malloc(n * sizeof *v), *out = malloc(TL_BLOCK_MAX * sizeof *out);
  uint8_t *enc = malloc(blocks * tl_block_bound(TL_BLOCK_MAX));
  tl_block *b = malloc(blocks * sizeof *b);
  if (!v || !out || !enc || !b)
    bench_die("out of memory", NULL);
  for (size_t i = 0; i < n; i++)
    v[i] = real->v[i % real->n];
  codec_speed r = {0, 0, 0};
  size_t bytes = 0;
  double t0 = bench_now_s();
  for (size_t k = 0; k < blocks; k++) {
    size_t at = k * TL_BLOCK_MAX, cnt = n - at < TL_BLOCK_MAX ? n - at : TL_BLOCK_MAX;
    uint8_t *p = enc + k * tl_block_bound(TL_BLOCK_MAX);
    b[k] = (tl_block){.seq = (int64_t)k, .count = (int64_t)cnt, .codec = codec, .data = p};
    b[k].len = tl_block_encode_as(codec, v + at, cnt, b[k].seq, p, &b[k].min_ns, &b[k].max_ns);
    b[k].codec = p[1]; /* the one written: the default picks per block */
    bytes += b[k].len;
  }
  r.encode = (double)n / (bench_now_s() - t0);
  t0 = bench_now_s();
  int64_t sum = 0;
  for (size_t k = 0; k < blocks; k++) {
    if (tl_block_decode(&b[k], out, NULL))
      bench_die("decode", NULL);
    sum += out[b[k].count - 1];
  }
  r.decode = (double)n / (bench_now_s() - t0);
  for (size_t k = 0; k < blocks; k++) { /* every sample came back */
    tl_block_decode(&b[k], out, NULL);
    if (memcmp(out, v + k * TL_BLOCK_MAX, (size_t)b[k].count * sizeof *out))
      bench_die("decoded samples differ", NULL);
  }
  r.bytes = (double)bytes / (double)n;
  if (sum == 42) /* keeps the decode from being optimised away */
    printf(" ");
  free(v);
  free(out);
  free(enc);
  free(b);
  return r;
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

/* One row of the table: v for tl, codec 2 and codec 1, and tl's over codec 1. */
static void print_row(const char *what, int decimals, const double v[3]) {
  printf("  %-38s", what);
  for (int c = 0; c < 3; c++)
    printf(" %14.*f", decimals, v[c]);
  printf(" %8.2f\n", v[0] / v[2]);
}

int main(int argc, char **argv) {
  tl_set_progname("bench_store");
  const char *dir = argc > 1 ? argv[1] : "/tmp";
  size_t n = argc > 2 ? (size_t)strtoull(argv[2], NULL, 10) : 5000000;
  const size_t batch = 100000;
  char path[4096], plain[4096];
  snprintf(path, sizeof path, "%s/tl-bench-store.db", dir);
  snprintf(plain, sizeof plain, "%s/tl-bench-plain.db", dir);

  printf("collecting %d real settimeout(0) samples on this machine...\n", REAL);
  bench_samples real = bench_collect_real(path, REAL, NULL);

  /* What tl writes (the smaller of codecs 2 and 3, block by block), codec 2
   * alone, and codec 1, interleaved. */
  enum { NC = 3 };
  static const int codecs[NC] = {TL_CODEC_DEFAULT, TL_CODEC_PACKED, TL_CODEC_VARINT};
  static const char *const names[NC] = {"tl (2 or 3)", "codec 2", "codec 1"};
  double rate[NC][RUNS], bps[NC] = {0}, plain_rate[RUNS], plain_bps = 0;
  double enc[NC][RUNS], dec[NC][RUNS], enc_bps[NC] = {0};
  for (int r = 0; r < RUNS; r++) {
    for (int c = 0; c < NC; c++) {
      codec_speed cs = codec_run(codecs[c], &real, n);
      enc[c][r] = cs.encode;
      dec[c][r] = cs.decode;
      enc_bps[c] = cs.bytes;
      rate[c][r] = ingest_tl(path, codecs[c], &real, n, batch, &bps[c]);
      if (c > 0 && !recovered_exactly(path, &real, n))
        bench_die("samples of an older codec did not read back", NULL);
    }
    plain_rate[r] = ingest_plain(plain, &real, n, batch, &plain_bps);
  }
  /* The last ingest in each older codec was read back above; tl's below. */
  double med[NC], enc_med[NC], dec_med[NC];
  for (int c = 0; c < NC; c++) {
    med[c] = bench_median(rate[c], RUNS);
    enc_med[c] = bench_median(enc[c], RUNS);
    dec_med[c] = bench_median(dec[c], RUNS);
  }
  double plain_med = bench_median(plain_rate, RUNS);
  int exact = ingest_tl(path, TL_CODEC_DEFAULT, &real, n, batch, &bps[0]) > 0 &&
              recovered_exactly(path, &real, n);
  printf("\n%zu real samples (%d collected, replayed), median of %d runs; tl writes the smaller "
         "of codecs 2 and 3 for each block, and wrote codec 2, then codec 1, before\n",
         n, REAL, RUNS);
  double dgb[NC], dsg[NC];
  for (int c = 0; c < NC; c++) {
    dgb[c] = dec_med[c] * enc_bps[c] / 1e9;
    dsg[c] = dec_med[c] * 8 / 1e9;
  }
  printf("  %-38s %14s %14s %14s %8s\n", "", names[0], names[1], names[2], "tl / 1");
  print_row("bytes per sample, encoded blocks", 2, enc_bps);
  print_row("bytes per sample, whole file", 2, bps);
  print_row("encode, samples/s", 0, enc_med);
  print_row("decode, samples/s", 0, dec_med);
  print_row("decode, GB/s of blocks read", 2, dgb);
  print_row("decode, GB/s of samples (8 B each)", 2, dsg);
  print_row("writer ingest, samples/s (batch 100k)", 0, med);
  printf("\nbaseline: one row per sample in a plain SQLite table, same pragmas\n");
  printf("  %-36s %14.0f samples/s, tl ingests %.1fx as fast\n", "ingest", plain_med,
         med[0] / plain_med);
  printf("  %-36s %14.2f bytes/sample, %.1fx codec 2's\n", "whole file", plain_bps,
         plain_bps / bps[0]);
  printf("  %-36s %14s\n", "tl, every sample read back exactly", exact ? "yes" : "NO");
  bench_remove_db(path);
  bench_remove_db(plain);
  free(real.v);
  return 0;
}
