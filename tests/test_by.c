/* test_by.c: comparing by what the machine is. The importer's start time,
 * host facts and reproducing command line; memory size classes; and, on a
 * database of imported droplets of 512 MB to 4 GB and 1 to 4 CPUs whose
 * tail shortens with memory, tlreport --by: groups, order, numbers (against
 * an independent computation from tlstore export), the trend sentence, the
 * unknown group and bad keys. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report_internal.h"
#include "support.h"
#include "support_store.h"
#include "tl_store.h"

typedef tl_test_fixture fixture;

/* Runs a program with up to 38 arguments (NULL-terminated). */
static int run(char **out, char **err, const char *prog, ...) {
  char *argv[40];
  size_t n = 0;
  argv[n++] = (char *)prog;
  va_list ap;
  va_start(ap, prog);
  const char *a;
  while (n < 39 && (a = va_arg(ap, const char *)) != NULL)
    argv[n++] = (char *)a;
  va_end(ap);
  argv[n] = NULL;
  return tl_test_run(argv, NULL, out, err);
}

/* ======================================================================== */
/* Sizes and size classes                                                    */

static void sizes_and_classes(void **state) {
  (void)state;
  int64_t b;
  assert_int_equal(tl_size_parse("512M", &b, NULL, 0), TL_OK);
  assert_int_equal(b, 512LL << 20);
  assert_int_equal(tl_size_parse("1.5GiB", &b, NULL, 0), TL_OK);
  assert_int_equal(b, 3LL << 29);
  assert_int_equal(tl_size_parse("2048MB", &b, NULL, 0), TL_OK);
  assert_int_equal(b, 2LL << 30);
  assert_int_equal(tl_size_parse("1073741824", &b, NULL, 0), TL_OK);
  assert_int_equal(b, 1LL << 30);
  const char *bad[] = {"", "G", "-1G", "1X", "1.G", "0", "1.5", "99999999999T", "1G ", " 1G"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_equal(tl_size_parse(bad[i], &b, NULL, 0), TL_EINVAL);

  /* What droplets report: a little less than what they are sold as. */
  static const struct {
    int64_t bytes;
    const char *cls;
  } cases[] = {{481LL << 20, "512M"},
               {512LL << 20, "512M"},
               {(1LL << 30) - (41LL << 20), "1G"},
               {1LL << 30, "1G"},
               {(1LL << 30) + 1, "1.5G"},
               {(2LL << 30) - (90LL << 20), "2G"},
               {3900LL << 20, "4G"},
               {(3LL << 30) - (50LL << 20), "3G"},
               {8LL << 30, "8G"},
               {700LL << 20, "768M"},
               {1, "64M"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char name[16];
    int64_t cls = tl_memory_class(cases[i].bytes, name, sizeof name);
    assert_string_equal(name, cases[i].cls);
    assert_true(cls >= cases[i].bytes);
  }
}

/* Spearman's rho and its interval against values worked out by hand. */
static void rank_correlation(void **state) {
  (void)state;
  tl__rank_corr r;
  const double x[] = {1, 2, 3, 4, 5, 6}, down[] = {60, 50, 40, 30, 20, 10};
  assert_int_equal(tl__spearman(x, down, 6, &r), TL_OK);
  assert_true(fabs(r.rho + 1) < 1e-12 && r.hi < 0 && r.lo >= -1);
  /* Ties take their mean rank: x ranks 1.5 1.5 3.5 3.5 5.5 5.5, y 1..6:
   * rho = 16 / sqrt(16 * 17.5) = 0.9562. */
  const double xt[] = {1, 1, 2, 2, 3, 3}, y[] = {1, 2, 3, 4, 5, 6};
  assert_int_equal(tl__spearman(xt, y, 6, &r), TL_OK);
  assert_true(fabs(r.rho - 16 / sqrt(16 * 17.5)) < 1e-9);
  /* Fisher's z: tanh(atanh(rho) +- 1.96 sqrt(1.06 / 3)). */
  double z = atanh(r.rho), se = sqrt(1.06 / 3);
  assert_true(fabs(r.lo - tanh(z - 1.959964 * se)) < 1e-9);
  assert_true(fabs(r.hi - tanh(z + 1.959964 * se)) < 1e-9);
  assert_true(r.lo > 0 && r.hi < 1);
  /* Too few pairs, or a side that does not vary: nothing to say. */
  assert_int_equal(tl__spearman(x, down, 3, &r), TL_OK);
  assert_true(isnan(r.rho) && isnan(r.lo) && isnan(r.hi));
  const double flat[] = {7, 7, 7, 7, 7, 7};
  assert_int_equal(tl__spearman(flat, y, 6, &r), TL_OK);
  assert_true(isnan(r.rho));
}

/* ======================================================================== */
/* The trend's error rates over many random draws                            */

static uint64_t rng = 88172645463325252ULL;
static double uniform(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}

static double gauss(void) { return sqrt(-2 * log(uniform())) * cos(6.283185307179586 * uniform()); }

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* The nearest-rank percentile of v[0..n), sorted. */
static int64_t nearest_rank(const int64_t *v, size_t n, double pct) {
  size_t rank = (size_t)ceil(pct / 100 * (double)n);
  return v[rank ? rank - 1 : 0];
}

/* A comparison in memory as tl_compare leaves it for the trend: sessions of
 * settimeout(50) on hosts that record their memory, each with its own p50,
 * p90 and p99. */
enum { FAKE_MAX = 160, DRAW_SAMPLES = 400 };
typedef struct {
  tl_comparison c;
  tl_session items[FAKE_MAX];
  tl_session_detail d[FAKE_MAX];
  int64_t own[FAKE_MAX][3]; /* each session's p50, p90 and p99 */
  tl_fact_row fact[FAKE_MAX];
  char mem[FAKE_MAX][24], host[FAKE_MAX][48];
  int64_t v[DRAW_SAMPLES];
} fake;

/* A draw: values memory sizes from 512M up, hosts a value, sessions a host.
 * Value m's lateness is exponential with mean step^m ms; each host scales it
 * by its own exp(host_sd * N(0,1)), and each session by its own
 * exp(0.3 * N(0,1)), as sessions of one host drift from run to run. */
static void fake_draw(fake *f, size_t values, size_t hosts, size_t sessions, double step,
                      double host_sd) {
  memset(&f->c, 0, sizeof f->c);
  f->c.by = "memory";
  static tl__by memory;
  char err[TL_WHY_MAX];
  assert_int_equal(tl__by_parse("memory", &memory, err, sizeof err), TL_OK);
  f->c.by_keys = &memory;
  f->c.sessions.items = f->items;
  f->c.details = f->d;
  size_t n = 0;
  for (size_t m = 0; m < values; m++)
    for (size_t h = 0; h < hosts; h++) {
      double host_scale = exp(host_sd * gauss());
      for (size_t s = 0; s < sessions && n < FAKE_MAX; s++, n++) {
        double mean_ns = pow(step, (double)m) * 1e6 * host_scale * exp(0.3 * gauss());
        for (size_t i = 0; i < DRAW_SAMPLES; i++)
          f->v[i] = 50000000 + (int64_t)(-log(uniform()) * mean_ns);
        qsort(f->v, DRAW_SAMPLES, sizeof f->v[0], cmp_i64);
        snprintf(f->mem[n], sizeof f->mem[n], "%lld", (long long)((512LL << 20) << m));
        snprintf(f->host[n], sizeof f->host[n], "h%zu-%zu", m, h);
        f->fact[n] = (tl_fact_row){"mem.total_bytes", f->mem[n], ""};
        f->items[n] = (tl_session){.label = "fleet",
                                   .probe = "settimeout",
                                   .delay_ns = 50000000,
                                   .host_fingerprint = f->host[n],
                                   .hostname = f->host[n]};
        tl_session_detail *d = &f->d[n];
        memset(d, 0, sizeof *d);
        d->facts = &f->fact[n];
        d->fact_count = 1;
        d->count = DRAW_SAMPLES;
        d->pct_count = 3;
        static const double pcts[3] = {50, 90, 99};
        d->pcts = pcts;
        d->pct_ns = f->own[n];
        for (size_t k = 0; k < 3; k++)
          d->pct_ns[k] = nearest_rank(f->v, DRAW_SAMPLES, pcts[k]);
      }
    }
  f->c.sessions.count = n;
}

/* How many of draws draws claim a trend at p90 (claims[0]) and p99: any
 * trend when step is 1, else one of the tail getting shorter. */
static void trend_claims(size_t draws, size_t values, size_t hosts, size_t sessions, double step,
                         double host_sd, size_t claims[2], int *by_host) {
  fake *f = calloc(1, sizeof *f);
  assert_non_null(f);
  claims[0] = claims[1] = 0;
  for (size_t d = 0; d < draws; d++) {
    fake_draw(f, values, hosts, sessions, step, host_sd);
    tl__by_trend t;
    assert_int_equal(tl__by_trend_of(&f->c, "settimeout", 50000000, NULL, &t), TL_OK);
    assert_int_equal(t.sessions, values * hosts * sessions);
    assert_int_equal(t.values, values);
    *by_host = t.by_host;
    for (size_t w = 0; w < 2; w++)
      claims[w] += !isnan(t.r[w].rho) && (t.r[w].hi < 0 || (step == 1.0 && t.r[w].lo > 0));
  }
  free(f);
}

static void trend_error_rates(void **state) {
  (void)state;
  enum { DRAWS = 400 };
  size_t claims[2];
  int by_host;
  /* No trend: every memory size the same, sessions drifting. One host a
   * value with 3 and with 10 sessions, and 3 hosts a value that differ
   * among themselves: at most 1 in 20 draws claims a trend. Over 4,000
   * draws each, 4.9, 4.0 and 4.8 % did; over 400, a count above 20 + 3
   * standard deviations of a 5 % rate says the rate is above 5 %. */
  enum { MAX_FALSE_ALARMS = DRAWS / 20 + 13 };
  static const struct {
    size_t hosts, sessions;
    double host_sd;
    int by_host;
  } twins[] = {{1, 3, 0, 0}, {1, 10, 0, 0}, {3, 3, 0.5, 1}};
  for (size_t i = 0; i < sizeof twins / sizeof twins[0]; i++) {
    trend_claims(DRAWS, 4, twins[i].hosts, twins[i].sessions, 1.0, twins[i].host_sd, claims,
                 &by_host);
    assert_int_equal(by_host, twins[i].by_host);
    fprintf(stderr, "no trend, %zu host(s) x %zu sessions a value: %zu and %zu of %d claimed\n",
            twins[i].hosts, twins[i].sessions, claims[0], claims[1], DRAWS);
    assert_true(claims[0] <= MAX_FALSE_ALARMS && claims[1] <= MAX_FALSE_ALARMS);
  }
  /* A real trend (each doubling of memory cuts the lateness to 0.7 of
   * itself): found at least 9 times in 10, with sessions and with hosts. */
  trend_claims(DRAWS, 4, 1, 5, 0.7, 0, claims, &by_host);
  fprintf(stderr, "trend 0.7, 1 host x 5 sessions a value: %zu and %zu of %d found\n", claims[0],
          claims[1], DRAWS);
  assert_true(claims[0] >= DRAWS * 9 / 10 && claims[1] >= DRAWS * 9 / 10);
  trend_claims(DRAWS, 4, 3, 3, 0.5, 0.3, claims, &by_host);
  assert_true(by_host);
  fprintf(stderr, "trend 0.5, 3 hosts x 3 sessions a value: %zu and %zu of %d found\n", claims[0],
          claims[1], DRAWS);
  assert_true(claims[0] >= DRAWS * 9 / 10 && claims[1] >= DRAWS * 9 / 10);
}

/* ======================================================================== */
/* The importer's start time, host facts and command line                    */

static void import_start_facts_command_line(void **state) {
  fixture *f = *state;
  char *csv = tl_test_path(f->dir, "drop 1.csv");
  assert_int_equal(tl_test_write_file(csv, "1000\n2000\n3000\n", 15), 0);
  char *out, *err;
  assert_int_equal(run(&out, &err, TLSTORE, "--db", f->db, "import", "--format", "csv", "--label",
                       "d1", "--probe", "settimeout", "--delay", "50", "--unit", "us", "--host",
                       "drop1", "--start", "2026-10-01T10:00:00Z", "--fact", "memory=1G", "--fact",
                       "cpus=2", "--fact", "cloud=digital ocean", csv, NULL),
                   0);
  free(out);
  free(err);

  tl_session_list list;
  tl_store *s = tl_test_sessions(f->db, 1, &list);
  const tl_session *x = &list.items[0];
  int64_t start;
  assert_int_equal(tl_date_parse("2026-10-01T10:00:00Z", &start, NULL, 0), TL_OK);
  assert_int_equal(x->started_ns, start);
  assert_string_equal(x->hostname, "drop1");
  /* No local folder, every option that shaped the session, quoted. */
  assert_string_equal(x->command_line,
                      "tlstore import --format csv --label d1 --probe settimeout --delay 50ms "
                      "--unit us --host drop1 --start 2026-10-01T10:00:00Z --fact memory=1G "
                      "--fact cpus=2 --fact 'cloud=digital ocean' 'drop 1.csv'");
  tl_fact_row *facts;
  size_t nf;
  assert_int_equal(tl_store_facts(s, x->id, &facts, &nf), TL_OK);
  assert_string_equal(tl_fact_rows_get(facts, nf, "mem.total_bytes"), "1073741824");
  assert_string_equal(tl_fact_rows_get(facts, nf, "cpu.logical"), "2");
  assert_string_equal(tl_fact_rows_get(facts, nf, "cloud"), "digital ocean");
  assert_string_equal(tl_fact_rows_get(facts, nf, "hostname"), "drop1");
  tl_fact_rows_free(facts, nf);
  tl_session_list_free(&list);
  tl_store_close(s);

  /* tlstore hosts shows the exact memory and its size class. */
  assert_int_equal(run(&out, &err, TLSTORE, "--db", f->db, "hosts", NULL), 0);
  assert_non_null(strstr(out, "memory       1.0 GiB (1073741824 bytes; size class 1G)\n"));
  assert_non_null(strstr(out, "cpus         2\n"));
  assert_non_null(strstr(out, "1 session, 2026-10-01T10:00:00Z .. 2026-10-01T10:00:00Z"));
  free(out);
  free(err);

  /* Hostile or malformed facts and dates: one line, exit 2, nothing stored. */
  static const char *const bad[][2] = {
      {"--fact", "memory=lots"}, {"--fact", "cpus=0"},       {"--fact", "cpus=2.5"},
      {"--fact", "nosuch=1"},    {"--fact", "vm=a\x1b[2Jb"}, {"--fact", "vm="},
      {"--fact", "memory"},      {"--fact", "hostname=x"},   {"--start", "2026-02-30"},
      {"--start", "yesterday"},  {"--start", "1969-12-31"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int rc = run(&out, &err, TLSTORE, "--db", f->db, "import", "--format", "csv", "--label", "d2",
                 "--probe", "settimeout", "--delay", "50", bad[i][0], bad[i][1], csv, NULL);
    assert_int_equal(rc, 2);
    assert_true(tl_test_one_line(err));
    assert_int_equal(tl_test_unsafe_at(err), -1);
    free(out);
    free(err);
  }
  assert_int_equal(run(&out, &err, TLSTORE, "--db", f->db, "import", "--format", "csv", "--label",
                       "d2", "--probe", "settimeout", "--delay", "50", "--fact", "cpus=1", "--fact",
                       "cpus=2", csv, NULL),
                   2);
  assert_non_null(strstr(err, "twice"));
  free(out);
  free(err);
  assert_int_equal(run(&out, &err, TLSTORE, "--db", f->db, "sessions", "--label", "d2", NULL), 0);
  assert_null(strstr(out, "d2 "));
  free(out);
  free(err);

  /* The library refuses what the program would: a bad fact stores nothing. */
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  tl_import_opts o;
  tl_import_opts_init(&o);
  const char *facts_bad[] = {"memory=1G", "memory=2G"};
  o.label = "d3", o.probe = "settimeout", o.delay_ns = 1000000;
  o.facts = facts_bad, o.fact_count = 2;
  FILE *in = fopen(csv, "rb");
  assert_non_null(in);
  assert_int_equal(tl_store_import(s, in, &o, NULL, NULL, NULL, NULL, NULL), TL_EINVAL);
  fclose(in);
  tl_filter flt;
  tl_filter_init(&flt);
  assert_int_equal(tl_store_sessions(s, &flt, &list), TL_OK);
  assert_int_equal(list.count, 1);
  tl_session_list_free(&list);
  tl_store_close(s);
  free(csv);
}

/* ======================================================================== */
/* tlreport --by on droplets of four sizes                                   */

/* Four hosts, as droplets report themselves (a little less memory than
 * they are sold with), three sessions each; the tail shortens with memory.
 * One more session records no memory at all. */
static const struct {
  const char *label, *memory, *cpus, *cls;
  double tail_ms; /* mean lateness */
} hosts[] = {
    {"d512", "481M", "1", "512M", 2.0},
    {"d1g", "985M", "1", "1G", 1.0},
    {"d2g", "1945M", "2", "2G", 0.5},
    {"d4g", "3932M", "4", "4G", 0.25},
};
enum { HOSTS = 4, SESSIONS = 3, SAMPLES = 3000 };

static void import_one(const fixture *f, const char *label, const char *memory, const char *cpus,
                       double tail_ms, int day) {
  char name[64], start[32];
  snprintf(name, sizeof name, "%s-%d.csv", label, day);
  snprintf(start, sizeof start, "2026-11-0%dT12:00:00Z", day + 1);
  char *path = tl_test_path(f->dir, name);
  FILE *out = fopen(path, "w");
  assert_non_null(out);
  fputs("latency_ns\n", out);
  for (int i = 0; i < SAMPLES; i++)
    fprintf(out, "%lld\n", 50000000LL + (long long)(-log(uniform()) * tail_ms * 1e6));
  assert_int_equal(fclose(out), 0);
  char mem[32], cpu[32];
  snprintf(mem, sizeof mem, "memory=%s", memory ? memory : "");
  snprintf(cpu, sizeof cpu, "cpus=%s", cpus);
  char *o, *e;
  int rc = memory ? run(&o, &e, TLSTORE, "--db", f->db, "import", "--format", "csv", "--label",
                        label, "--probe", "settimeout", "--delay", "50", "--host", label, "--start",
                        start, "--fact", mem, "--fact", cpu, path, NULL)
                  : run(&o, &e, TLSTORE, "--db", f->db, "import", "--format", "csv", "--label",
                        label, "--probe", "settimeout", "--delay", "50", "--host", label, "--start",
                        start, "--fact", cpu, path, NULL);
  if (rc)
    fprintf(stderr, "%s", e);
  assert_int_equal(rc, 0);
  free(o);
  free(e);
  free(path);
}

static void build_droplets(const fixture *f) {
  for (int d = 0; d < SESSIONS; d++)
    for (int h = 0; h < HOSTS; h++)
      import_one(f, hosts[h].label, hosts[h].memory, hosts[h].cpus, hosts[h].tail_ms, d);
  import_one(f, "nomem", NULL, "2", 0.3, 0);
}

/* The nearest-rank percentile of a label's samples, from tlstore export. */
static int64_t exported_pct(const fixture *f, const char *label, double pct) {
  char *o, *e;
  assert_int_equal(
      run(&o, &e, TLSTORE, "--db", f->db, "export", "--format", "csv", "--label", label, NULL), 0);
  size_t n = 0, cap = 1 << 14;
  int64_t *v = malloc(cap * sizeof *v);
  assert_non_null(v);
  for (char *line = strchr(o, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
    const char *end = strchr(line + 1, '\n'), *last = end ? end : line + strlen(line);
    while (last > line && *last != ',')
      last--;
    assert_true(*last == ',');
    if (n == cap)
      assert_non_null(v = realloc(v, (cap *= 2) * sizeof *v));
    v[n++] = strtoll(last + 1, NULL, 10);
  }
  qsort(v, n, sizeof *v, cmp_i64);
  size_t rank = (size_t)ceil(pct / 100 * (double)n);
  int64_t r = v[rank ? rank - 1 : 0];
  free(v);
  free(o);
  free(e);
  return r;
}

/* The "ns" of percentile pct in the JSON object of a group (the first
 * "percentiles" after at). */
static int64_t json_pct(const char *at, double pct) {
  const char *p = strstr(at, "\"percentiles\": [");
  assert_non_null(p);
  char want[32];
  snprintf(want, sizeof want, "{\"p\": %g, \"ns\": ", pct);
  const char *q = strstr(p, want);
  assert_non_null(q);
  return strtoll(q + strlen(want), NULL, 10);
}

static void by_memory_page_json_check(void **state) {
  fixture *f = *state;
  build_droplets(f);
  char *o, *e;

  /* JSON: the groups in order, each one's numbers those of its label's
   * samples exported and ranked here, and the trend. */
  assert_int_equal(run(&o, &e, TLREPORT, "--db", f->db, "--by", "memory", "--format", "json", NULL),
                   0);
  assert_non_null(strstr(o, "\"labels\": [\"512M\", \"1G\", \"2G\", \"4G\", \"memory unknown\"]"));
  assert_non_null(strstr(o, "\"by\": \"memory\""));
  for (int h = 0; h < HOSTS; h++) {
    char key[64];
    snprintf(key, sizeof key, "{\"label\": \"%s\", \"probe\": \"settimeout\"", hosts[h].cls);
    const char *g = strstr(o, key);
    assert_non_null(g);
    assert_non_null(strstr(g, "\"sessions\": 3"));
    static const double pcts[] = {50, 90, 99};
    for (size_t k = 0; k < 3; k++)
      assert_int_equal(json_pct(g, pcts[k]), exported_pct(f, hosts[h].label, pcts[k]));
  }
  const char *unk = strstr(o, "{\"label\": \"memory unknown\", \"probe\": \"settimeout\"");
  assert_non_null(unk);
  assert_int_equal(json_pct(unk, 90), exported_pct(f, "nomem", 90));
  /* Sessions keep their own label and say their group. */
  assert_non_null(strstr(o, "\"label\": \"d512\", \"group\": \"512M\""));
  assert_non_null(strstr(o, "\"label\": \"nomem\", \"group\": \"memory unknown\""));
  const char *tr = strstr(o, "\"by_trend\": [");
  assert_non_null(tr);
  assert_non_null(strstr(tr, "\"sessions\": 12, \"unit\": \"session\", \"units\": 12, "
                             "\"values\": 4,\n   \"p90\": {\"spearman\": -"));
  for (const char *ci = strstr(tr, "\"ci95\": ["), *end = strstr(tr, "\"by_confounds\"");
       ci && ci < end; ci = strstr(ci + 1, "\"ci95\": [")) {
    double lo = strtod(ci + 9, NULL), hi = strtod(strchr(ci, ',') + 1, NULL);
    assert_true(lo < hi && hi < 0);
  }
  assert_non_null(strstr(tr, "the tail gets shorter as memory grows"));
  /* CPUs rise with memory on these droplets (the unknown group aside). */
  assert_non_null(strstr(o, "{\"fact\": \"cpus\", \"sentence\": \"CPUs rise with memory on these "
                            "hosts (1, 1, 2, 4): memory and CPUs cannot be told apart here.\"}"));
  free(o);
  free(e);

  /* The page: the answer first, then the groups section with the exact
   * values, the lateness by memory in order, and the unknown group named. */
  assert_int_equal(run(&o, &e, TLREPORT, "--db", f->db, "--by", "memory", NULL), 0);
  assert_non_null(strstr(o, "# Timer latency by memory: 512M, 1G, 2G, 4G, memory unknown\n"));
  assert_non_null(strstr(o, "## By memory\n"));
  assert_non_null(strstr(o, "| 512M | 3 | d512 | d512 | 504365056 |\n"));
  assert_non_null(strstr(o, "| memory unknown | 1 | nomem | nomem | unknown |\n"));
  const char *lt = strstr(o, "Lateness by memory, setTimeout(50) (95% intervals):");
  assert_non_null(lt);
  assert_true(lt < strstr(o, "## By memory"));
  const char *r512 = strstr(lt, "\n| 512M | 3 | 1 | "), *r1 = strstr(lt, "\n| 1G | 3 | 1 | "),
             *r2 = strstr(lt, "\n| 2G | 3 | 1 | "), *r4 = strstr(lt, "\n| 4G | 3 | 1 | ");
  assert_true(r512 && r1 && r2 && r4 && r512 < r1 && r1 < r2 && r2 < r4);
  /* p90 and p99 lateness of 512M, from the exported samples. */
  char want[64];
  const char *row_end = strchr(r512 + 1, '\n');
  for (int k = 0; k < 2; k++) {
    snprintf(want, sizeof want, "| %.3f (",
             (double)(exported_pct(f, "d512", k ? 99 : 90) - 50000000) / 1e6);
    const char *cell = strstr(r512, want);
    assert_true(cell && cell < row_end);
  }
  assert_non_null(
      strstr(o, "- setTimeout(50): the tail gets shorter as memory grows: Spearman -0."));
  assert_non_null(strstr(o, "over 12 sessions on 4 values, one host each. At p90, "));
  free(o);
  free(e);

  /* --check against the biggest droplet: the smallest ones are later. */
  assert_int_equal(
      run(&o, &e, TLREPORT, "--db", f->db, "--by", "memory", "--check", "--baseline", "4G", NULL),
      1);
  assert_non_null(strstr(o, "regression: 512M settimeout 50 ms p90"));
  assert_non_null(strstr(o, "above 4G"));
  assert_null(strstr(o, "regression: 4G "));
  free(o);
  free(e);
  /* ... and the bigger ones against the smallest pass, asked as people
   * write sizes (1024M is 1G). */
  assert_int_equal(run(&o, &e, TLREPORT, "--db", f->db, "--by", "memory", "--check", "--baseline",
                       "512m", "--compare", "1024M,4g", NULL),
                   0);
  assert_non_null(strstr(o, "ok: no regression"));
  free(o);
  free(e);
}

static void by_keys_crossed_and_bad(void **state) {
  fixture *f = *state;
  build_droplets(f);
  char *o, *e;
  /* CPUs by count, in numeric order; the page names what differs inside a
   * group. */
  assert_int_equal(run(&o, &e, TLREPORT, "--db", f->db, "--by", "cpus", NULL), 0);
  assert_non_null(strstr(o, "# Timer latency by cpus: 1 CPU, 2 CPUs, 4 CPUs\n"));
  assert_non_null(strstr(o, "- Inside **1 CPU** differ: labels d512, d1g; memory 512M, 1G.\n"));
  assert_non_null(
      strstr(o, "- Inside **2 CPUs** differ: labels d2g, nomem; memory 2G, unknown.\n"));
  /* ... and the answer, first, that memory goes with the CPU count. */
  assert_non_null(strstr(o, "- **Memory differs between the groups (1 CPU: 512M, 1G; 2 CPUs: 2G; 4 "
                            "CPUs: 4G): part of what changes with the number of CPUs may come "
                            "from memory.**\n"));
  free(o);
  free(e);
  /* Two keys crossed, the values asked in an order of one's own. */
  assert_int_equal(run(&o, &e, TLREPORT, "--db", f->db, "--by", "memory,cpus", "--compare",
                       "4G/4,512M/1,unknown/2", "--format", "json", NULL),
                   0);
  assert_non_null(
      strstr(o, "\"labels\": [\"4G / 4 CPUs\", \"512M / 1 CPU\", \"memory unknown / 2 CPUs\"]"));
  assert_null(strstr(o, "\"by_trend\""));
  free(o);
  free(e);
  /* A value no session has: one line naming the values. */
  assert_int_equal(run(&o, &e, TLREPORT, "--db", f->db, "--by", "memory", "--compare", "8G", NULL),
                   1);
  assert_true(tl_test_one_line(e));
  assert_non_null(strstr(e, "no session has memory '8G'; the values are: 512M, 1G, 2G, 4G, "
                            "memory unknown"));
  free(o);
  free(e);
  /* A bad key, or one no session records (beside one they do): one line
   * listing the keys there are. */
  static const char *const bad[] = {"ram", "vm",  "tag:load", "memory,vm", "memory,cpus,vm",
                                    "",    "tag:"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_equal(run(&o, &e, TLREPORT, "--db", f->db, "--by", bad[i], NULL), 2);
    assert_true(tl_test_one_line(e));
    if (i < 4)
      assert_non_null(strstr(e, "; the database has: cpus, memory, hostname"));
    free(o);
    free(e);
  }
  /* --by help: the keys with the sessions of each value. */
  assert_int_equal(run(&o, &e, TLREPORT, "--db", f->db, "--by", "help", NULL), 0);
  assert_non_null(strstr(o, "  memory        512M: 3, 1G: 3, 2G: 3, 4G: 3, memory unknown: 1\n"));
  assert_non_null(strstr(o, "  cpus          1 CPU: 6, 2 CPUs: 4, 4 CPUs: 3\n"));
  free(o);
  free(e);
  /* HTML: the chart of lateness by memory; a site: compare.html by memory,
   * the label pages as ever. */
  assert_int_equal(run(&o, &e, TLREPORT, "--db", f->db, "--by", "memory", "--format", "html", NULL),
                   0);
  assert_non_null(strstr(o, "<title>p50, p90 and p99 lateness by memory, setTimeout(50)</title>"));
  free(o);
  free(e);
  /* A collected host (a hex fingerprint gets a page) that says its facts. */
  tl_store *st;
  assert_int_equal(tl_store_open(&st, f->db, 0), TL_OK);
  static const tl_fact facts[] = {{"mem.total_bytes", "1029128192", ""}, {"cpu.logical", "2", ""}};
  tl_session_spec spec = {.run_uuid = "r",
                          .label = "dhex",
                          .probe = "settimeout",
                          .delay_ns = 50000000,
                          .command_line = "tlcollect",
                          .host_fingerprint = "0123456789abcdef",
                          .hostname = "hexhost",
                          .libuv_version = "1",
                          .facts = facts,
                          .fact_count = 2};
  tl_writer *w;
  char uuid[37];
  const int64_t v[] = {50100000, 50200000, 50300000};
  assert_int_equal(tl_writer_begin(st, &spec, &w, uuid), TL_OK);
  assert_int_equal(tl_writer_add(w, v, 3), TL_OK);
  assert_int_equal(tl_writer_end(w, "complete"), TL_OK);
  tl_store_close(st);
  char *site = tl_test_path(f->dir, "site");
  assert_int_equal(run(&o, &e, TLREPORT, "--db", f->db, "--by", "memory", "--site", site, NULL), 0);
  free(o);
  free(e);
  char *page = tl_test_path(site, "compare.html");
  char *html = tl_test_read_file(page, NULL);
  assert_non_null(html);
  assert_non_null(strstr(html, "By memory"));
  free(html);
  free(page);
  page = tl_test_path(site, "label-d512.html");
  html = tl_test_read_file(page, NULL);
  assert_non_null(html);
  free(html);
  free(page);
  page = tl_test_path(site, "host-0123456789abcdef.html");
  html = tl_test_read_file(page, NULL);
  assert_non_null(html);
  /* A line of what was recorded, each with its group, and one of what was
   * not: a few lines, even on a phone. */
  assert_non_null(strstr(html, "<strong>cpus</strong> 2 (2 CPUs)"));
  assert_non_null(strstr(html, "<strong>memory</strong> 1029128192 (1G)"));
  const char *unknown = strstr(html, "<p>Not recorded: ");
  assert_non_null(unknown);
  assert_non_null(strstr(unknown, "vm"));
  assert_true(strstr(unknown, "vm") < strstr(unknown, "</p>"));
  assert_null(strstr(html, "<strong>vm</strong>"));
  free(html);
  free(page);
  free(site);
}

/* ======================================================================== */
/* What else changes with memory: the answer says it first                   */

/* A fleet of one label: 4 memory sizes, 2 hosts each, 3 sessions a host,
 * the tail halving with each doubling of memory and every session drifting
 * by its own factor. With cpus_rise, the small droplets have 1 CPU and the
 * big ones 2; without, each size has a host of 1 CPU and one of 2. The
 * samples stay here for the test's own computation. */
enum { FLEET_MEM = 4, FLEET_HOSTS = 2, FLEET_SESSIONS = 3, FLEET_SAMPLES = 1000 };
typedef struct {
  int64_t v[FLEET_MEM][FLEET_HOSTS][FLEET_SESSIONS][FLEET_SAMPLES]; /* sorted */
  int cpus[FLEET_MEM][FLEET_HOSTS];
} fleet;

static const char *const fleet_memory[FLEET_MEM] = {"481M", "985M", "1945M", "3932M"};
static const char *const fleet_class[FLEET_MEM] = {"512M", "1G", "2G", "4G"};

static fleet *build_fleet(const fixture *f, int cpus_rise) {
  fleet *fl = calloc(1, sizeof *fl);
  assert_non_null(fl);
  for (int m = 0; m < FLEET_MEM; m++)
    for (int h = 0; h < FLEET_HOSTS; h++) {
      fl->cpus[m][h] = cpus_rise ? 1 + (m >= 2) : 1 + h;
      for (int s = 0; s < FLEET_SESSIONS; s++) {
        int64_t *v = fl->v[m][h][s];
        double mean_ns = 2e6 * pow(0.5, m) * exp(0.3 * gauss());
        char name[64], host[32], start[32], mem[32], cpu[32];
        snprintf(name, sizeof name, "fleet-%d-%d-%d.csv", m, h, s);
        snprintf(host, sizeof host, "m%d-h%d", m, h);
        snprintf(start, sizeof start, "2026-11-0%dT1%d:00:00Z", s + 1, m);
        snprintf(mem, sizeof mem, "memory=%s", fleet_memory[m]);
        snprintf(cpu, sizeof cpu, "cpus=%d", fl->cpus[m][h]);
        char *path = tl_test_path(f->dir, name);
        FILE *out = fopen(path, "w");
        assert_non_null(out);
        fputs("latency_ns\n", out);
        for (int i = 0; i < FLEET_SAMPLES; i++) {
          v[i] = 50000000 + (int64_t)(-log(uniform()) * mean_ns);
          fprintf(out, "%lld\n", (long long)v[i]);
        }
        assert_int_equal(fclose(out), 0);
        qsort(v, FLEET_SAMPLES, sizeof *v, cmp_i64);
        char *o, *e;
        assert_int_equal(run(&o, &e, TLSTORE, "--db", f->db, "import", "--format", "csv", "--label",
                             "fleet", "--probe", "settimeout", "--delay", "50", "--host", host,
                             "--start", start, "--fact", mem, "--fact", cpu, path, NULL),
                         0);
        free(o);
        free(e);
        free(path);
      }
    }
  return fl;
}

/* Spearman's rho worked out here: average ranks by counting, then
 * Pearson's r of the ranks. */
static double own_spearman(const double *x, const double *y, size_t n) {
  double rx[64], ry[64];
  for (size_t i = 0; i < n; i++) {
    double bx = 0, ex = 0, by = 0, ey = 0;
    for (size_t k = 0; k < n; k++) {
      bx += x[k] < x[i], ex += x[k] == x[i];
      by += y[k] < y[i], ey += y[k] == y[i];
    }
    rx[i] = bx + (ex + 1) / 2, ry[i] = by + (ey + 1) / 2;
  }
  double m = ((double)n + 1) / 2, sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < n; i++)
    sxy += (rx[i] - m) * (ry[i] - m), sxx += (rx[i] - m) * (rx[i] - m),
        syy += (ry[i] - m) * (ry[i] - m);
  return sxy / sqrt(sxx * syy);
}

/* Over the hosts with cpus (0: all), the Spearman rho between memory and
 * each session's p90 lateness or, by_host (where hosts share a size), each
 * host's median session. */
static double fleet_rho(const fleet *fl, int cpus, int by_host) {
  double x[FLEET_MEM * FLEET_HOSTS * FLEET_SESSIONS], y[FLEET_MEM * FLEET_HOSTS * FLEET_SESSIONS];
  size_t n = 0;
  for (int m = 0; m < FLEET_MEM; m++)
    for (int h = 0; h < FLEET_HOSTS; h++) {
      if (cpus && fl->cpus[m][h] != cpus)
        continue;
      int64_t p90[FLEET_SESSIONS];
      for (int s = 0; s < FLEET_SESSIONS; s++) {
        p90[s] = nearest_rank(fl->v[m][h][s], FLEET_SAMPLES, 90) - 50000000;
        if (!by_host)
          x[n] = m, y[n++] = (double)p90[s];
      }
      qsort(p90, FLEET_SESSIONS, sizeof *p90, cmp_i64);
      if (by_host)
        x[n] = m, y[n++] = (double)p90[FLEET_SESSIONS / 2];
    }
  return own_spearman(x, y, n);
}

/* The p90 lateness of every sample of a memory size, in ms. */
static double fleet_p90_ms(const fleet *fl, int m) {
  enum { ALL = FLEET_HOSTS * FLEET_SESSIONS * FLEET_SAMPLES };
  int64_t *all = malloc(ALL * sizeof *all);
  assert_non_null(all);
  memcpy(all, fl->v[m], sizeof fl->v[m]);
  qsort(all, ALL, sizeof *all, cmp_i64);
  double r = (double)(nearest_rank(all, ALL, 90) - 50000000) / 1e6;
  free(all);
  return r;
}

/* A lateness as a sentence says it: "4.71 ms", "572.5 µs", "57.25 µs". */
static void say_ms(double ms, char *buf, size_t len) {
  if (ms >= 1)
    snprintf(buf, len, "%.*f ms", ms >= 100 ? 1 : 2, ms);
  else
    snprintf(buf, len, "%.*f \xC2\xB5s", ms >= 0.1 ? 1 : ms >= 0.001 ? 2 : 3, ms * 1000);
}

/* The answer's bullets: the text from the answer's lead to the first
 * table. */
static char *answer_of(const char *page) {
  const char *from = strstr(page, "How the tail changes with memory");
  assert_non_null(from);
  const char *to = strstr(from, "\n| ");
  assert_non_null(to);
  return strndup(from, (size_t)(to - from));
}

static void fleet_checks(const fixture *f, const fleet *fl, int cpus_rise) {
  char *o, *e, want[256];
  assert_int_equal(run(&o, &e, TLREPORT, "--db", f->db, "--by", "memory", "--format", "json", NULL),
                   0);
  const char *at = strstr(o, "\"unit\": \"host\", \"units\": 8, \"values\": 4,\n   \"p90\": "
                             "{\"spearman\": ");
  assert_non_null(at);
  double rho = strtod(strstr(at, "\"spearman\": ") + 12, NULL);
  assert_true(fabs(rho - fleet_rho(fl, 0, 1)) < 6e-5);
  assert_true(rho < -0.8);
  if (!cpus_rise)
    assert_non_null(strstr(o, "\"by_confounds\": []"));
  free(o);
  free(e);

  assert_int_equal(run(&o, &e, TLREPORT, "--db", f->db, "--by", "memory", NULL), 0);
  char *answer = answer_of(o);
  const char *first = strstr(answer, "\n- ");
  assert_non_null(first);
  const char *confound = "\n- **CPUs rise with memory on these hosts (1, 1, 2, 2): memory and "
                         "CPUs cannot be told apart here.**\n";
  snprintf(want, sizeof want,
           "\n- setTimeout(50): the tail gets shorter as memory grows: "
           "Spearman %.2f (95%% interval ",
           fleet_rho(fl, 0, 1));
  const char *trend = strstr(answer, want);
  assert_non_null(trend);
  assert_non_null(strstr(trend, "over 8 hosts on 4 values (each host counted once, by the median "
                                "of its sessions; 24 sessions in all). At p90, "));
  /* ... from the smallest size's p90 lateness to the largest's. */
  char small[32], big[32];
  say_ms(fleet_p90_ms(fl, 0), small, sizeof small);
  say_ms(fleet_p90_ms(fl, FLEET_MEM - 1), big, sizeof big);
  snprintf(want, sizeof want, "At p90, %s late at 512M and %s at 4G.\n", small, big);
  assert_non_null(strstr(trend, want));
  if (cpus_rise) {
    /* The confound first, then the trend, then memory within 1 CPU. */
    assert_ptr_equal(first, strstr(answer, confound));
    snprintf(want, sizeof want, "\n  - Within cpus=1 (512M, 1G): ");
    const char *in1 = strstr(trend, want);
    assert_non_null(in1);
    snprintf(want, sizeof want, "Spearman %.2f (95%% interval ", fleet_rho(fl, 1, 1));
    assert_non_null(strstr(in1, want));
    assert_non_null(strstr(in1, "over 4 hosts on 2 values"));
  } else {
    assert_ptr_equal(first, trend);
    assert_null(strstr(answer, "CPUs"));
    assert_null(strstr(answer, "Within"));
  }
  free(answer);
  /* The ranking of the sizes as labels comes after the answer. */
  const char *ranking = strstr(o, "Each group against the others, as labels are compared:");
  assert_non_null(ranking);
  assert_true(strstr(o, "- setTimeout(50): the tail gets") < ranking);
  assert_true(strstr(o, "## Summary") < strstr(o, "How the tail changes with memory"));
  /* Each size's p90 lateness, as the test ranks its samples. */
  for (int m = 0; m < FLEET_MEM; m++) {
    snprintf(want, sizeof want, "\n| %s | 6 | 2 | %.3f (", fleet_class[m], fleet_p90_ms(fl, m));
    assert_non_null(strstr(o, want));
  }
  free(o);
  free(e);

  /* Crossed: memory within each CPU count, the groups named by both. */
  assert_int_equal(run(&o, &e, TLREPORT, "--db", f->db, "--by", "memory,cpus", NULL), 0);
  assert_non_null(strstr(o, "How the tail changes with memory and the number of CPUs"));
  snprintf(want, sizeof want, "  - Within cpus=1 (512M, 1G%s): ", cpus_rise ? "" : ", 2G, 4G");
  assert_non_null(strstr(o, want));
  /* Each of those hosts alone on its size now: sessions are the units. */
  snprintf(want, sizeof want, "Spearman %.2f (95%% interval ", fleet_rho(fl, 1, cpus_rise));
  assert_non_null(strstr(strstr(o, "  - Within cpus=1 ("), want));
  assert_non_null(
      strstr(o, cpus_rise ? "\n| 512M / 1 CPU | 6 | 2 | " : "\n| 512M / 1 CPU | 3 | 1 | "));
  free(o);
  free(e);
}

static void by_memory_cpus_rise(void **state) {
  fixture *f = *state;
  fleet *fl = build_fleet(f, 1);
  fleet_checks(f, fl, 1);
  free(fl);
}

static void by_memory_cpus_apart(void **state) {
  fixture *f = *state;
  fleet *fl = build_fleet(f, 0);
  fleet_checks(f, fl, 0);
  free(fl);
}

/* Facts and tags are hostile: escaped on every page, safe on a terminal. */
static void by_hostile_values(void **state) {
  fixture *f = *state;
  tl_store *st;
  assert_int_equal(tl_store_open(&st, f->db, 0), TL_OK);
  static const tl_fact facts[] = {{"vm", "<script>alert(1)</script>\x1b[2J", ""},
                                  {"mem.total_bytes", "12abc", ""}};
  static const char *keys[] = {"load"}, *values[] = {"<b>busy</b>"};
  for (int i = 0; i < 2; i++) {
    tl_session_spec spec = {.run_uuid = "r",
                            .label = i ? "calm" : "evil",
                            .probe = "settimeout",
                            .delay_ns = 1000000,
                            .command_line = "tlcollect",
                            .host_fingerprint = "0123456789abcdef",
                            .hostname = "h",
                            .libuv_version = "1",
                            .tag_keys = keys,
                            .tag_values = values,
                            .tag_count = (size_t)(1 - i),
                            .facts = facts,
                            .fact_count = i ? 0 : 2};
    tl_writer *w;
    char uuid[37];
    const int64_t v[] = {1100000, 1200000, 1300000, 1400000};
    assert_int_equal(tl_writer_begin(st, &spec, &w, uuid), TL_OK);
    assert_int_equal(tl_writer_add(w, v, 4), TL_OK);
    assert_int_equal(tl_writer_end(w, "complete"), TL_OK);
  }
  tl_store_close(st);
  char *o, *e;
  assert_int_equal(run(&o, &e, TLREPORT, "--db", f->db, "--by", "vm", "--format", "html", NULL), 0);
  assert_null(strstr(o, "<script>"));
  assert_null(strchr(o, '\x1b'));
  assert_non_null(strstr(o, "&lt;script&gt;"));
  free(o);
  free(e);
  assert_int_equal(run(&o, &e, TLREPORT, "--db", f->db, "--by", "tag:load", NULL), 0);
  assert_null(strstr(o, "<b>busy"));
  assert_non_null(strstr(o, "load unknown"));
  free(o);
  free(e);
  assert_int_equal(run(&o, &e, TLREPORT, "--db", f->db, "--by", "vm", "--by", "cpus", NULL), 2);
  free(o);
  free(e);
  char *argv[] = {TLREPORT, "--db", f->db, "--by", "help", NULL};
  assert_int_equal(tl_test_run(argv, NULL, &o, &e), 0);
  assert_int_equal(tl_test_unsafe_at(o), -1);
  assert_non_null(
      strstr(o, "  vm            <script>alert(1)</script>\\x1b[2J: 1, vm unknown: 1\n"));
  /* Memory that is no number is unknown, never a wrong group. */
  assert_null(strstr(o, "  memory "));
  assert_non_null(strstr(o, "Keys no session records: os, kernel, arch, cpu, cpus, memory,"));
  free(o);
  free(e);
  assert_int_equal(
      run(&o, &e, TLREPORT, "--db", f->db, "--by", "vm", "--compare", "\x1b[31mx", NULL), 1);
  assert_true(tl_test_one_line(e));
  assert_int_equal(tl_test_unsafe_at(e), -1);
  free(o);
  free(e);
}

/* What changes with the key is database text too: escaped in the answer. */
static void by_answer_escapes(void **state) {
  fixture *f = *state;
  tl_store *st;
  assert_int_equal(tl_store_open(&st, f->db, 0), TL_OK);
  static const char *keys[] = {"load"}, *busy[] = {"busy"}, *idle[] = {"idle"};
  for (int i = 0; i < 2; i++) {
    const tl_fact facts[] = {{"kernel.release", i ? "6.1" : "<img src=x onerror=alert(1)>*k*", ""}};
    tl_session_spec spec = {.run_uuid = "r",
                            .label = i ? "calm" : "evil",
                            .probe = "settimeout",
                            .delay_ns = 1000000,
                            .command_line = "tlcollect",
                            .host_fingerprint = i ? "0123456789abcdef" : "fedcba9876543210",
                            .hostname = "h",
                            .libuv_version = "1",
                            .tag_keys = keys,
                            .tag_values = i ? idle : busy,
                            .tag_count = 1,
                            .facts = facts,
                            .fact_count = 1};
    tl_writer *w;
    char uuid[37];
    const int64_t v[] = {1100000, 1200000, 1300000, 1400000};
    assert_int_equal(tl_writer_begin(st, &spec, &w, uuid), TL_OK);
    assert_int_equal(tl_writer_add(w, v, 4), TL_OK);
    assert_int_equal(tl_writer_end(w, "complete"), TL_OK);
  }
  tl_store_close(st);
  char *o, *e;
  assert_int_equal(
      run(&o, &e, TLREPORT, "--db", f->db, "--by", "tag:load", "--format", "html", NULL), 0);
  assert_non_null(strstr(o, "The kernel changes with tag load on these hosts (&lt;img"));
  assert_null(strstr(o, "<img"));
  free(o);
  free(e);
  assert_int_equal(run(&o, &e, TLREPORT, "--db", f->db, "--by", "tag:load", NULL), 0);
  assert_non_null(strstr(o, "The kernel changes with tag load on these hosts (\\<img src=x "
                            "onerror=alert(1)\\>\\*k\\*, 6.1)"));
  /* A text key has no trend: the list of what changes with it ends, and
   * the table of each value follows. */
  assert_non_null(strstr(o, "How the tail changes with tag load:\n\n- **"));
  assert_non_null(strstr(o, "cannot be told apart here.**\n\nLateness by tag:load, "));
  free(o);
  free(e);
}

/* Each delay's table counts the hosts of its own sessions: two sizes of two
 * hosts, each measuring two delays, so that a host's first session is of one
 * delay only. */
static void by_hosts_of_each_delay(void **state) {
  fixture *f = *state;
  tl_store *st;
  assert_int_equal(tl_store_open(&st, f->db, 0), TL_OK);
  static const char *const fingerprint[4] = {"0000000000000001", "0000000000000002",
                                             "0000000000000003", "0000000000000004"};
  for (int h = 0; h < 4; h++)
    for (int d = 0; d < 2; d++) {
      /* 481M and 985M, as droplets of 512M and 1G report themselves */
      const tl_fact facts[] = {{"mem.total_bytes", h < 2 ? "504365056" : "1032847360", ""}};
      tl_session_spec spec = {.run_uuid = "r",
                              .label = "droplet",
                              .probe = "settimeout",
                              .delay_ns = d ? 50000000 : 0,
                              .command_line = "tlcollect",
                              .host_fingerprint = fingerprint[h],
                              .hostname = fingerprint[h],
                              .libuv_version = "1",
                              .facts = facts,
                              .fact_count = 1};
      tl_writer *w;
      char uuid[37];
      int64_t v[200];
      for (int i = 0; i < 200; i++)
        v[i] = spec.delay_ns + 100000 * (h + 1) + 1000 * i;
      assert_int_equal(tl_writer_begin(st, &spec, &w, uuid), TL_OK);
      assert_int_equal(tl_writer_add(w, v, 200), TL_OK);
      assert_int_equal(tl_writer_end(w, "complete"), TL_OK);
    }
  tl_store_close(st);
  char *o, *e;
  int rc = run(&o, &e, TLREPORT, "--db", f->db, "--by", "memory", NULL);
  if (rc)
    fprintf(stderr, "%s", e);
  assert_int_equal(rc, 0);
  const char *delay0 = strstr(o, "Lateness by memory, setTimeout(0)");
  const char *delay50 = strstr(o, "Lateness by memory, setTimeout(50)");
  assert_non_null(delay0);
  assert_non_null(delay50);
  for (const char *table = delay0; table; table = table == delay0 ? delay50 : NULL) {
    const char *end = strstr(table, "\n\n- ");
    const char *small = strstr(table, "\n| 512M | 2 | 2 | "),
               *big = strstr(table, "\n| 1G | 2 | 2 | ");
    assert_non_null(small);
    assert_non_null(big);
    assert_true(!end || (small < end && big < end));
  }
  free(o);
  free(e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sizes_and_classes),
      cmocka_unit_test(rank_correlation),
      cmocka_unit_test(trend_error_rates),
      cmocka_unit_test_setup_teardown(import_start_facts_command_line, tl_test_setup,
                                      tl_test_teardown),
      cmocka_unit_test_setup_teardown(by_memory_page_json_check, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(by_keys_crossed_and_bad, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(by_memory_cpus_rise, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(by_memory_cpus_apart, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(by_hostile_values, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(by_answer_escapes, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(by_hosts_of_each_delay, tl_test_setup, tl_test_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
