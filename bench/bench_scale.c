/* bench_scale: results at scale. Builds databases of 1, 10 and 100 million
 * samples (3 labels x 2 delays, sessions of a million samples, real
 * settimeout(0) samples collected first on this machine and replayed) through
 * the store writer, then measures:
 *   - tlreport --compare over each (wall time and peak memory of the real
 *     program, median of runs), to show how time grows with the data;
 *   - the same percentiles from the sqlite3 shell over a plain
 *     one-row-per-sample table of 10 million samples (the baseline);
 *   - ingest through tlstore's merge and import paths.
 *
 * Usage: bench_scale DIR TLREPORT SQLITE3 [MAX_MILLIONS [keep]]   (default 100;
 * keep: stop after the report timings and leave the databases in DIR) */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>
#include <uv.h>

#include "bench_util.h"
#include "codec_internal.h"
#include "tl_report.h"
#include "tl_store.h"

/* The page is timed more often than the rest: a run takes well under a
 * second, and its median steadies on a shared machine. */
enum { RUNS = 3, REPORT_RUNS = 9, REAL = 3000, SESSION = 1000000 };
static const char *const labels[3] = {"vbox", "macos", "droplet"};
static const int64_t delays[2] = {0, 50000000};

static int64_t sample_at(const bench_samples *real, int label, int delay, size_t i) {
  int64_t v = real->v[(i * 7 + (i >> 12)) % real->n];
  return v + delays[delay] + label * 150000 + (int64_t)((i * 2654435761u) % 997);
}

/* A database of total samples: 3 labels x 2 delays, sessions of SESSION,
 * blocks in codec. Returns the seconds spent in the writer (each session's
 * samples are laid out first, so that only the store is timed). */
static double build_db(const char *path, const bench_samples *real, size_t total, int codec) {
  bench_remove_db(path);
  tl_store *s;
  if (tl_store_open(&s, path, 0) || tl_store_set_codec(s, codec))
    bench_die("open", s);
  size_t per_group = total / 6;
  int64_t *buf = malloc(SESSION * sizeof *buf);
  double t = 0;
  for (int l = 0; l < 3; l++)
    for (int d = 0; d < 2; d++)
      for (size_t at = 0; at < per_group; at += SESSION) {
        size_t n = per_group - at < SESSION ? per_group - at : SESSION;
        tl_session_spec spec = {.run_uuid = "bench",
                                .label = labels[l],
                                .probe = "settimeout",
                                .delay_ns = delays[d],
                                .command_line = "bench_scale",
                                .host_fingerprint = labels[l],
                                .hostname = labels[l],
                                .libuv_version = uv_version_string()};
        tl_writer *w;
        char uuid[37];
        for (size_t i = 0; i < n; i++)
          buf[i] = sample_at(real, l, d, at + i);
        double t0 = bench_now_s();
        if (tl_writer_begin(s, &spec, &w, uuid) || tl_writer_add(w, buf, n) ||
            tl_writer_end(w, "complete"))
          bench_die("write", s);
        t += bench_now_s() - t0;
      }
  free(buf);
  tl_store_close(s);
  return t;
}

/* The page's wall time, median of REPORT_RUNS; *cpu (user and system) and
 * *rss (peak) are medians too. */
static double time_report(const char *tlreport, const char *db, double *cpu, double *rss) {
  char dbarg[4200];
  snprintf(dbarg, sizeof dbarg, "%s", db);
  char *argv[] = {(char *)tlreport, "--compare", "vbox,macos,droplet", "--db", dbarg, NULL};
  double t[REPORT_RUNS], c[REPORT_RUNS], r[REPORT_RUNS];
  for (int i = 0; i < REPORT_RUNS; i++)
    t[i] = bench_run(argv, 0, &c[i], &r[i]);
  *cpu = bench_median(c, REPORT_RUNS);
  *rss = bench_median(r, REPORT_RUNS);
  return bench_median(t, REPORT_RUNS);
}

/* The cost of the block checksums, measured on the database at path in
 * this run: every block read through the store as a report reads it (the
 * checksum verified, then decoded), and the CRC32C of the same blocks
 * alone. *read_s and *crc_s are medians of RUNS passes, seconds. */
typedef struct {
  double crc_s;
} crc_ctx;

static int crc_block(void *arg, const tl_block *b) {
  crc_ctx *c = arg;
  double t0 = bench_now_s();
  volatile uint32_t sink = tl_crc32c(0, b->data, b->len);
  (void)sink;
  c->crc_s += bench_now_s() - t0;
  return 0;
}

static int64_t decode_sink;

static int decode_block(void *arg, const tl_block *b) {
  int64_t *v = arg;
  if (tl_block_decode(b, v, NULL))
    return TL_ECORRUPT;
  decode_sink += v[b->count - 1];
  return 0;
}

static void checksum_cost(const char *path, double *read_s, double *crc_s) {
  tl_store *s;
  if (tl_store_open(&s, path, TL_STORE_READONLY))
    bench_die("open", s);
  tl_filter f;
  tl_filter_init(&f);
  tl_session_list list;
  if (tl_store_sessions(s, &f, &list))
    bench_die("sessions", s);
  int64_t *ids = malloc(list.count * sizeof *ids), *v = malloc(TL_BLOCK_MAX * sizeof *v);
  for (size_t i = 0; i < list.count; i++)
    ids[i] = list.items[i].id;
  double r[RUNS], c[RUNS];
  for (int k = 0; k < RUNS; k++) {
    double t0 = bench_now_s();
    if (tl_store_scan_blocks(s, ids, list.count, NULL, decode_block, v))
      bench_die("read", s);
    r[k] = bench_now_s() - t0;
    crc_ctx cc = {0};
    if (tl_store_scan_blocks(s, ids, list.count, NULL, crc_block, &cc))
      bench_die("read", s);
    c[k] = cc.crc_s;
  }
  *read_s = bench_median(r, RUNS);
  *crc_s = bench_median(c, RUNS);
  free(ids);
  free(v);
  tl_session_list_free(&list);
  tl_store_close(s);
}

/* The cost of exactness: the page's percentiles (p50, p90, p99, p99.9) of
 * each of the 6 groups, in this process, three ways: exact (tl_dist_compute,
 * which reads the stored summaries and then the blocks that hold the ranks),
 * and lossy from a log-linear histogram alone, HdrHistogram's way (each
 * value the top of its bucket, 1/2048 relative error at most): from the
 * stored summaries' histograms (no sample read), and built in one pass over
 * the samples. Medians of RUNS; *err the largest relative error of the lossy
 * values against the exact ones. */
enum { PAGE_PCTS = 4 };
static const double page_pcts[PAGE_PCTS] = {50, 90, 99, 99.9};

typedef struct {
  int64_t *hist; /* TL_SUMMARY_BUCKETS */
  int64_t count;
} lossy;

static int lossy_add_summary(void *arg, size_t i, const tl_summary *m) {
  (void)i;
  lossy *h = arg;
  for (size_t b = 0; b < m->hist_len; b++)
    h->hist[m->hist_first + b] += m->hist[b];
  h->count += m->count;
  return 0;
}

static int lossy_add_samples(void *arg, const int64_t *v, size_t n) {
  lossy *h = arg;
  for (size_t i = 0; i < n; i++)
    h->hist[tl_summary_bucket(v[i])]++;
  h->count += (int64_t)n;
  return 0;
}

static void lossy_values(const lossy *h, int64_t *out) {
  for (int k = 0; k < PAGE_PCTS; k++) {
    int64_t rank = tl_rank(page_pcts[k], h->count), cum = 0, lo, hi;
    size_t b = 0;
    while (cum + h->hist[b] < rank)
      cum += h->hist[b++];
    tl_summary_bucket_bounds(b, &lo, &hi);
    out[k] = hi;
  }
}

static void cost_of_exactness(const char *path, double *exact_s, double *summ_s, double *pass_s,
                              double *err) {
  tl_store *s;
  if (tl_store_open(&s, path, TL_STORE_READONLY))
    bench_die("open", s);
  int64_t *ids[6];
  size_t n[6] = {0};
  for (int g = 0; g < 6; g++) {
    tl_filter f;
    tl_filter_init(&f);
    const char *label[1] = {labels[g / 2]};
    f.labels = label;
    f.label_count = 1;
    f.delay_ns = delays[g % 2];
    tl_session_list list;
    if (tl_store_sessions(s, &f, &list))
      bench_die("sessions", s);
    ids[g] = malloc(list.count * sizeof *ids[g] + 1);
    for (size_t i = 0; i < list.count; i++)
      ids[g][n[g]++] = list.items[i].id;
    tl_session_list_free(&list);
  }
  lossy h = {calloc(TL_SUMMARY_BUCKETS, sizeof *h.hist), 0};
  int64_t exact[6][PAGE_PCTS], approx[6][PAGE_PCTS], approx2[6][PAGE_PCTS];
  double te[RUNS], ts[RUNS], tp[RUNS];
  for (int r = 0; r < RUNS; r++) {
    double t0 = bench_now_s();
    for (int g = 0; g < 6; g++) {
      tl_dist d;
      if (tl_dist_compute(s, ids[g], n[g], page_pcts, PAGE_PCTS, &d))
        bench_die("exact percentiles", s);
      memcpy(exact[g], d.pct_ns, sizeof exact[g]);
    }
    te[r] = bench_now_s() - t0;
    t0 = bench_now_s();
    for (int g = 0; g < 6; g++) {
      memset(h.hist, 0, TL_SUMMARY_BUCKETS * sizeof *h.hist);
      h.count = 0;
      if (tl_store_summaries(s, ids[g], n[g], lossy_add_summary, &h))
        bench_die("summaries", s);
      lossy_values(&h, approx[g]);
    }
    ts[r] = bench_now_s() - t0;
    t0 = bench_now_s();
    for (int g = 0; g < 6; g++) {
      memset(h.hist, 0, TL_SUMMARY_BUCKETS * sizeof *h.hist);
      h.count = 0;
      for (size_t i = 0; i < n[g]; i++)
        if (tl_store_scan(s, ids[g][i], lossy_add_samples, &h))
          bench_die("samples", s);
      lossy_values(&h, approx2[g]);
    }
    tp[r] = bench_now_s() - t0;
  }
  *err = 0;
  for (int g = 0; g < 6; g++)
    for (int k = 0; k < PAGE_PCTS; k++) {
      if (approx[g][k] != approx2[g][k])
        fprintf(stderr, "bench_scale: the two lossy histograms disagree\n");
      double e = (double)(approx[g][k] - exact[g][k]) / (double)exact[g][k];
      *err = e > *err ? e : *err;
    }
  *exact_s = bench_median(te, RUNS);
  *summ_s = bench_median(ts, RUNS);
  *pass_s = bench_median(tp, RUNS);
  free(h.hist);
  for (int g = 0; g < 6; g++)
    free(ids[g]);
  tl_store_close(s);
}

/* The baseline table: one row per sample, same data as the 10M database. */
static void build_plain(const char *path, const bench_samples *real, size_t total) {
  bench_remove_db(path);
  sqlite3 *db;
  sqlite3_stmt *st;
  if (sqlite3_open(path, &db) != SQLITE_OK ||
      sqlite3_exec(db,
                   "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF;"
                   "CREATE TABLE sessions (id INTEGER PRIMARY KEY, label TEXT, delay_ns INTEGER);"
                   "CREATE TABLE samples (session_id INTEGER, seq INTEGER, latency_ns INTEGER);"
                   "BEGIN",
                   NULL, NULL, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "INSERT INTO samples VALUES (?, ?, ?)", -1, &st, NULL) != SQLITE_OK)
    bench_die("baseline", NULL);
  size_t per_group = total / 6;
  int64_t sid = 0;
  for (int l = 0; l < 3; l++)
    for (int d = 0; d < 2; d++)
      for (size_t at = 0; at < per_group; at += SESSION) {
        size_t n = per_group - at < SESSION ? per_group - at : SESSION;
        char sql[200];
        snprintf(sql, sizeof sql, "INSERT INTO sessions VALUES (%lld, '%s', %lld)",
                 (long long)++sid, labels[l], (long long)delays[d]);
        sqlite3_exec(db, sql, NULL, NULL, NULL);
        for (size_t i = 0; i < n; i++) {
          sqlite3_bind_int64(st, 1, sid);
          sqlite3_bind_int64(st, 2, (sqlite3_int64)i);
          sqlite3_bind_int64(st, 3, sample_at(real, l, d, at + i));
          sqlite3_step(st);
          sqlite3_reset(st);
        }
      }
  sqlite3_finalize(st);
  if (sqlite3_exec(db, "COMMIT; PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL) != SQLITE_OK)
    bench_die("baseline commit", NULL);
  sqlite3_close(db);
}

/* Exact nearest-rank p50, p90, p99 per label and delay in plain SQL. */
static const char plain_query[] =
    "WITH r AS (SELECT s.label, s.delay_ns, x.latency_ns AS v, row_number() OVER "
    "(PARTITION BY s.label, s.delay_ns ORDER BY x.latency_ns) AS rn, count(*) OVER "
    "(PARTITION BY s.label, s.delay_ns) AS n FROM samples x JOIN sessions s ON s.id = "
    "x.session_id) SELECT label, delay_ns, n, min(v), max(CASE WHEN rn = (50 * n + 99) / 100 "
    "THEN v END), max(CASE WHEN rn = (90 * n + 99) / 100 THEN v END), max(CASE WHEN rn = "
    "(99 * n + 99) / 100 THEN v END), max(v) FROM r GROUP BY label, delay_ns;";

/* Checks that tl and the sqlite3 shell give the same exact numbers. */
static int results_agree(const char *sqlite3_shell, const char *plain, const char *tl_db) {
  char cmd[9000];
  snprintf(cmd, sizeof cmd, "'%s' '%s' \"%s\"", sqlite3_shell, plain, plain_query);
  FILE *p = popen(cmd, "r");
  tl_store *s;
  if (!p || tl_store_open(&s, tl_db, TL_STORE_READONLY))
    bench_die("agreement check", NULL);
  tl_compare_opts o;
  tl_compare_opts_init(&o);
  tl_comparison c;
  char err[512];
  if (tl_compare(s, &o, &c, err, sizeof err))
    bench_die(err, NULL);
  char line[512];
  int rows = 0, same = 1;
  while (fgets(line, sizeof line, p)) {
    char label[64];
    long long d, n, mn, p50, p90, p99, mx;
    if (sscanf(line, "%63[^|]|%lld|%lld|%lld|%lld|%lld|%lld|%lld", label, &d, &n, &mn, &p50, &p90,
               &p99, &mx) != 8)
      continue;
    rows++;
    int found = 0;
    for (size_t i = 0; i < c.group_count; i++) {
      const tl_group *g = &c.groups[i];
      if (strcmp(g->label, label) || g->delay_ns != d)
        continue;
      found = 1;
      same &= g->dist.count == n && g->dist.min_ns == mn && g->dist.max_ns == mx &&
              g->dist.pct_ns[0] == p50 && g->dist.pct_ns[1] == p90 && g->dist.pct_ns[2] == p99;
    }
    same &= found;
  }
  pclose(p);
  tl_comparison_free(&c);
  tl_store_close(s);
  return same && rows == 6;
}

/* Ingest through merge: a 10M database merged into an empty one. */
static double ingest_merge(const char *dir, const char *src, size_t n) {
  char dst[4096];
  snprintf(dst, sizeof dst, "%s/merged.db", dir);
  double r[RUNS];
  for (int i = 0; i < RUNS; i++) {
    bench_remove_db(dst);
    tl_store *s;
    tl_merge_stats st;
    if (tl_store_open(&s, dst, 0))
      bench_die("open", s);
    double t0 = bench_now_s();
    if (tl_store_merge(s, &src, 1, &st))
      bench_die("merge", s);
    r[i] = (double)st.samples_added / (bench_now_s() - t0);
    tl_store_close(s);
    if ((size_t)st.samples_added != n)
      bench_die("merge lost samples", NULL);
  }
  bench_remove_db(dst);
  return bench_median(r, RUNS);
}

/* Ingest through import: a CSV of n latencies, one per line, stored in
 * codec. */
static double ingest_import(const char *dir, const bench_samples *real, size_t n, int codec) {
  char csv[4096], dst[4096];
  snprintf(csv, sizeof csv, "%s/import.csv", dir);
  snprintf(dst, sizeof dst, "%s/imported.db", dir);
  FILE *f = fopen(csv, "w");
  if (!f)
    bench_die("csv", NULL);
  fputs("latency_ns\n", f);
  for (size_t i = 0; i < n; i++)
    fprintf(f, "%lld\n", (long long)sample_at(real, 0, 0, i));
  fclose(f);
  double r[RUNS];
  for (int i = 0; i < RUNS; i++) {
    bench_remove_db(dst);
    tl_store *s;
    if (tl_store_open(&s, dst, 0) || tl_store_set_codec(s, codec))
      bench_die("open", s);
    tl_import_opts o;
    tl_import_opts_init(&o);
    o.label = "imported";
    o.probe = "settimeout";
    FILE *in = fopen(csv, "rb");
    int64_t got = 0;
    double t0 = bench_now_s();
    if (tl_store_import(s, in, &o, NULL, NULL, NULL, &got, NULL))
      bench_die("import", s);
    r[i] = (double)got / (bench_now_s() - t0);
    fclose(in);
    tl_store_close(s);
  }
  bench_remove_db(dst);
  unlink(csv);
  return bench_median(r, RUNS);
}

int main(int argc, char **argv) {
  tl_set_progname("bench_scale");
  if (argc < 4) {
    fprintf(stderr, "usage: bench_scale DIR TLREPORT SQLITE3 [MAX_MILLIONS]\n");
    return 2;
  }
  const char *dir = argv[1], *tlreport = argv[2], *sqlite3_shell = argv[3];
  size_t max_m = argc > 4 ? (size_t)strtoull(argv[4], NULL, 10) : 100;
  int keep_dbs = argc > 5 && strcmp(argv[5], "keep") == 0; /* for profiling */
  printf("collecting %d real settimeout(0) samples on this machine...\n", REAL);
  char real_path[4096];
  snprintf(real_path, sizeof real_path, "%s/real.db", dir);
  bench_samples real = bench_collect_real(real_path, REAL, NULL);
  bench_remove_db(real_path);

  printf("\ntlreport --compare vbox,macos,droplet (2 delays, p50/p90/p99 exact), median of %d\n",
         REPORT_RUNS);
  printf("  %12s %10s %12s %10s %12s %14s %10s %10s %8s %8s\n", "samples", "build s", "report s",
         "cpu s", "peak MiB", "ns per sample", "read s", "crc s", "of read", "of rep.");
  char path[4096], ten[4096];
  snprintf(ten, sizeof ten, "%s/scale-10.db", dir);
  double exact_s[3] = {0}, summ_s[3] = {0}, pass_s[3] = {0}, err[3] = {0}, page_s[3] = {0};
  size_t sizes = 0;
  for (size_t m = 1; m <= max_m; m *= 10, sizes++) {
    snprintf(path, sizeof path, "%s/scale-%zu.db", dir, m);
    double build = build_db(path, &real, m * 1000000, TL_CODEC_DEFAULT);
    double cpu, rss, t = time_report(tlreport, path, &cpu, &rss), read_s, crc_s;
    checksum_cost(path, &read_s, &crc_s);
    printf("  %12zu %10.2f %12.3f %10.3f %12.1f %14.2f %10.3f %10.4f %7.1f%% %7.1f%%\n",
           m * 1000000, build, t, cpu, rss, t * 1e9 / (double)(m * 1000000), read_s, crc_s,
           100 * crc_s / read_s, 100 * crc_s / t);
    fflush(stdout);
    page_s[sizes] = t;
    cost_of_exactness(path, &exact_s[sizes], &summ_s[sizes], &pass_s[sizes], &err[sizes]);
    if (m != 10 && !keep_dbs)
      bench_remove_db(path);
  }
  printf("\ngrowth of the page per sample, between sizes: ");
  for (size_t i = 1; i < sizes; i++)
    printf("%s%.2f ns (%dM to %dM)", i > 1 ? ", " : "",
           (page_s[i] - page_s[i - 1]) * 1e9 / (9.0 * 1e6 * (i == 1 ? 1 : 10)), i == 1 ? 1 : 10,
           i == 1 ? 10 : 100);
  printf("\n\nthe cost of exactness: p50, p90, p99 and p99.9 of the 6 groups in one process, "
         "median of %d\n",
         RUNS);
  printf("  %12s %12s %16s %16s %12s %10s\n", "samples", "exact s", "lossy, stored s",
         "lossy, 1 pass s", "exact/lossy", "lossy err");
  for (size_t i = 0; i < sizes; i++)
    printf("  %12.0f %12.4f %16.4f %16.4f %11.1fx %9.3f%%\n",
           1e6 * (i == 0   ? 1
                  : i == 1 ? 10
                           : 100),
           exact_s[i], summ_s[i], pass_s[i], exact_s[i] / pass_s[i], 100 * err[i]);
  printf("  (lossy: the top of each percentile's bucket of a log-linear histogram, 2048 buckets "
         "per power of two, as HdrHistogram with 3 significant digits; 'stored' adds the "
         "summaries' histograms and reads no sample, '1 pass' builds it from every sample)\n");
  fflush(stdout);
  if (keep_dbs)
    return 0;

  printf("\nbaseline: the same percentiles by the sqlite3 shell, plain table, 10M samples\n");
  char plain[4096];
  snprintf(plain, sizeof plain, "%s/plain.db", dir);
  build_plain(plain, &real, 10000000);
  char *sq[] = {(char *)sqlite3_shell, plain, (char *)plain_query, NULL};
  /* The baseline takes about a minute: one run, against tl's median. */
  double cpu_tl, rss_tl, rss_sq;
  double sq_med = bench_run(sq, 0, NULL, &rss_sq),
         tl_med = time_report(tlreport, ten, &cpu_tl, &rss_tl);
  printf("  %-40s %10.3f s %10.1f MiB\n", "tl (tlreport --compare)", tl_med, rss_tl);
  printf("  %-40s %10.3f s %10.1f MiB\n", "sqlite3 shell, window functions (1 run)", sq_med,
         rss_sq);
  printf("  %-40s %10.1fx\n", "ratio sqlite3 / tl", sq_med / tl_med);
  printf("  %-40s %s\n", "same count, min, p50, p90, p99, max",
         results_agree(sqlite3_shell, plain, ten) ? "yes" : "NO");
  bench_remove_db(plain);

  printf("\ningest, 10M samples, median of %d, in what tl writes (the smaller "
         "of codecs 2 and 3 for each block) and codec 1 (what it wrote first); the share of the "
         "time spent on block checksums (the CRC32C of every block, which "
         "merge verifies and import writes, measured here)\n",
         RUNS);
  double read_s, crc_s;
  checksum_cost(ten, &read_s, &crc_s);
  /* The merge copies blocks as they are: its codec 1 source is the same
   * database written in codec 1. */
  char ten1[4096];
  snprintf(ten1, sizeof ten1, "%s/scale-10-codec1.db", dir);
  double write_s[2], runs[2][RUNS];
  for (int i = 0; i < RUNS; i++) { /* alternately, so that both see the same machine */
    runs[0][i] = build_db(ten1, &real, 10000000, TL_CODEC_VARINT);
    runs[1][i] = build_db(ten, &real, 10000000, TL_CODEC_DEFAULT);
  }
  write_s[0] = bench_median(runs[0], RUNS);
  write_s[1] = bench_median(runs[1], RUNS);
  double merge_rate[2] = {ingest_merge(dir, ten, 9999996), ingest_merge(dir, ten1, 9999996)};
  bench_remove_db(ten1);
  double import_rate[2] = {ingest_import(dir, &real, 10000000, TL_CODEC_DEFAULT),
                           ingest_import(dir, &real, 10000000, TL_CODEC_VARINT)};
  printf("  %-40s %14s %14s %7s %7s\n", "samples/s", "tl", "codec 1", "tl / 1", "crc");
  printf("  %-40s %14.0f %14.0f %7.2f\n", "the writer (sessions of 1M)", 10000000 / write_s[1],
         10000000 / write_s[0], write_s[0] / write_s[1]);
  printf("  %-40s %14.0f %14.0f %7.2f %6.1f%%\n", "tlstore merge", merge_rate[0], merge_rate[1],
         merge_rate[0] / merge_rate[1], 100 * crc_s / (9999996 / merge_rate[0]));
  printf("  %-40s %14.0f %14.0f %7.2f %6.1f%%\n", "tlstore import (CSV, one per line)",
         import_rate[0], import_rate[1], import_rate[0] / import_rate[1],
         100 * crc_s / (10000000 / import_rate[0]));
  bench_remove_db(ten);
  free(real.v);
  return 0;
}
