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

static uint64_t rng = 88172645463325252ULL;
static double uniform(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}

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

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
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
  assert_non_null(strstr(tr, "\"sessions\": 12, \"values\": 4, \"spearman\": -"));
  const char *ci = strstr(tr, "\"ci95\": [");
  assert_non_null(ci);
  double lo = strtod(ci + 9, NULL);
  double hi = strtod(strchr(ci, ',') + 1, NULL);
  assert_true(lo < hi && hi < 0);
  assert_non_null(strstr(tr, "the tail gets shorter as memory grows"));
  free(o);
  free(e);

  /* The page: the groups section with the exact values, the lateness by
   * memory in order, the sentence, and the unknown group named. */
  assert_int_equal(run(&o, &e, TLREPORT, "--db", f->db, "--by", "memory", NULL), 0);
  assert_non_null(strstr(o, "# Timer latency by memory: 512M, 1G, 2G, 4G, memory unknown\n"));
  assert_non_null(strstr(o, "## By memory\n"));
  assert_non_null(strstr(o, "| 512M | 3 | d512 | d512 | 504365056 |\n"));
  assert_non_null(strstr(o, "| memory unknown | 1 | nomem | nomem | unknown |\n"));
  const char *lt = strstr(o, "### Lateness by memory, setTimeout(50)");
  assert_non_null(lt);
  const char *r512 = strstr(lt, "\n| 512M | 3 | "), *r1 = strstr(lt, "\n| 1G | 3 | "),
             *r2 = strstr(lt, "\n| 2G | 3 | "), *r4 = strstr(lt, "\n| 4G | 3 | ");
  assert_true(r512 && r1 && r2 && r4 && r512 < r1 && r1 < r2 && r2 < r4);
  /* p90 lateness of 512M, from the exported samples. */
  char want[64];
  snprintf(want, sizeof want, "| %.3f (", (double)(exported_pct(f, "d512", 90) - 50000000) / 1e6);
  const char *row_end = strchr(r512 + 1, '\n');
  const char *cell = strstr(r512, want);
  assert_true(cell && cell < row_end);
  assert_non_null(strstr(o, "For setTimeout(50), the tail gets shorter as memory grows: the rank "
                            "correlation (Spearman) between memory and each session's p99 "
                            "lateness is -0."));
  assert_non_null(strstr(o, "12 sessions on 4 values)."));
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
  /* A bad key, or one no session records: one line listing the keys there are. */
  static const char *const bad[] = {"ram", "vm", "tag:load", "memory,cpus,vm", "", "tag:"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_equal(run(&o, &e, TLREPORT, "--db", f->db, "--by", bad[i], NULL), 2);
    assert_true(tl_test_one_line(e));
    if (i < 3)
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
  /* (data-h: each cell's header, for a phone's folded table) */
  assert_non_null(strstr(html, "<tr><td>hexhost</td><td data-h=\"key\">memory</td><td "
                               "data-h=\"recorded\">1029128192</td><td data-h=\"group "
                               "(--by)\">1G</td>"));
  assert_non_null(strstr(html, "<tr><td>hexhost</td><td data-h=\"key\">cpus</td><td "
                               "data-h=\"recorded\">2</td><td data-h=\"group (--by)\">2 CPUs</td>"));
  assert_non_null(strstr(html, "<tr><td>hexhost</td><td data-h=\"key\">vm</td><td "
                               "data-h=\"recorded\">-</td><td data-h=\"group (--by)\">unknown</td>"));
  free(html);
  free(page);
  free(site);
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sizes_and_classes),
      cmocka_unit_test(rank_correlation),
      cmocka_unit_test_setup_teardown(import_start_facts_command_line, tl_test_setup,
                                      tl_test_teardown),
      cmocka_unit_test_setup_teardown(by_memory_page_json_check, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(by_keys_crossed_and_bad, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(by_hostile_values, tl_test_setup, tl_test_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
