/* test_report.c: tlreport end to end on a database built here with known
 * samples: the Markdown page against a golden file checked by hand, the
 * JSON parsed and its numbers checked, the HTML through tidy, the static
 * site (relative links that resolve, byte-identical reruns, nothing written
 * outside it), hostile text escaped everywhere, the filters, and the rules
 * for replacing files. */
#include <ctype.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmark.h>
#include <cmocka.h>
#include <sqlite3.h>

#include "support.h"
#include "support_store.h"
#include "tl_report.h"
#include "tl_store.h"

typedef tl_test_fixture fixture;

#define HOSTILE "<script>alert(1)</script>"

typedef struct {
  const char *fingerprint, *hostname, *os, *kernel, *cpu, *vm, *clock;
} host;

static const host vbox_host = {"aaaa000000000001",
                               "vbox-guest",
                               "Debian GNU/Linux 12 (bookworm)",
                               "6.1.0-18-amd64",
                               "Intel(R) Core(TM) i7-8565U <img src=x>",
                               "virtualbox",
                               "tsc"};
static const host mac_host = {"bbbb000000000002", "mac",  "macOS 14.1", "23.1.0",
                              "Apple M1",         "none", "unknown"};

static void add_session(tl_store *s, const char *run, const char *label, const host *h,
                        int64_t delay_ns, const int64_t *v, size_t n) {
  static const char *keys[] = {"note"}, *values[] = {HOSTILE};
  const tl_fact facts[] = {
      {"hostname", h->hostname, "uname"},
      {"os.name", h->os, "/etc/os-release"},
      {"kernel.release", h->kernel, "uname"},
      {"cpu.model", h->cpu, "/proc/cpuinfo"},
      {"cpu.logical", "4", "sysconf"},
      {"mem.total_bytes", "8589934592", "sysinfo"},
      {"vm", h->vm, "cpuid"},
      {"clocksource.current", h->clock, "/sys"},
  };
  tl_session_spec spec = {
      .run_uuid = run,
      .label = label,
      .probe = "settimeout",
      .delay_ns = delay_ns,
      .command_line = "tlcollect --label vbox --tag 'note=" HOSTILE "' ```",
      .host_fingerprint = h->fingerprint,
      .hostname = h->hostname,
      .libuv_version = "1.44.2",
      .tag_keys = keys,
      .tag_values = values,
      .tag_count = 1,
      .facts = facts,
      .fact_count = sizeof facts / sizeof facts[0],
  };
  tl_writer *w;
  char uuid[37];
  assert_int_equal(tl_writer_begin(s, &spec, &w, uuid), TL_OK);
  if (n) /* a session may have no samples */
    assert_int_equal(tl_writer_add(w, v, n), TL_OK);
  assert_int_equal(tl_writer_end(w, "complete"), TL_OK);
}

/* Session i (by id) starts at 2026-11-01T10:00:00Z + i hours and lasts a
 * minute, so that pages do not depend on when the test runs. */
static void hourly_sessions(const char *path) {
  sqlite3 *db;
  assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
  assert_int_equal(sqlite3_exec(db,
                                "UPDATE sessions SET started_ns = 1793527200000000000 + id * "
                                "3600000000000, ended_ns = 1793527200000000000 + id * "
                                "3600000000000 + 60000000000",
                                NULL, NULL, NULL),
                   SQLITE_OK);
  sqlite3_close(db);
}

/* The data behind tests/golden/compare.md; its numbers are worked out in
 * tests/golden/README.md. Session i starts at 2026-11-01T10:00:00Z + i hours,
 * so the page does not depend on when the test runs. */
static void build_golden_db(const char *path) {
  tl_store *s;
  assert_int_equal(tl_store_open(&s, path, 0), TL_OK);
  int64_t v[1000];
  for (int i = 0; i < 1000; i++)
    v[i] = (int64_t)(1000 - i) * 10000; /* 0.01 .. 10.00 ms, descending */
  add_session(s, "run1", "vbox", &vbox_host, 0, v, 1000);
  const int64_t a[] = {50200000, 50100000}, b[] = {60000000, 50300000, 50400000};
  add_session(s, "run1", "vbox", &vbox_host, 50000000, a, 2);
  add_session(s, "run2", "vbox", &vbox_host, 50000000, b, 3);
  const int64_t m[] = {3000000, 1000000, 2000000};
  add_session(s, "run3", "macos", &mac_host, 0, m, 3);
  tl_store_close(s);
  hourly_sessions(path);
}

/* Not inlined: GCC 12 at -O2 takes the strings it returns for pointers into
 * its own locals (a false -Wdangling-pointer). */
__attribute__((noinline)) static char *run_report(char *const argv[], int expect, char **err_out) {
  char *out, *err;
  int rc = tl_test_run(argv, NULL, &out, &err);
  if (rc != expect)
    fail_msg("tlreport exit %d, expected %d: %s", rc, expect, err);
  if (err_out)
    *err_out = err;
  else
    free(err);
  return out;
}

/* ======================================================================== */
/* Markdown                                                                  */

static void markdown_matches_golden(void **state) {
  fixture *f = *state;
  build_golden_db(f->db);
  char *argv[] = {TLREPORT, "--db", f->db, "--compare", "vbox,macos", NULL};
  char *err, *out = run_report(argv, 0, &err);
  /* TL_GOLDEN_UPDATE=1 rewrites the golden file; check it by hand after. */
  if (getenv("TL_GOLDEN_UPDATE"))
    tl_test_write_file(TL_SOURCE_DIR "/tests/golden/compare.md", out, strlen(out));
  char *golden = tl_test_read_file(TL_SOURCE_DIR "/tests/golden/compare.md", NULL);
  assert_non_null(golden);
  assert_string_equal(out, golden);
  assert_string_equal(err, "");
  /* What is unknown for every label is said once, then what only one lacks. */
  assert_non_null(strstr(out, "- Unknown for every label (not recorded, so not compared): CPU "
                              "frequency governor, kernel preemption model.\n- Also unknown for "
                              "**macos**: clocksource.\n"));
  assert_null(strstr(out, "Unknown for **vbox**"));
  /* Hostile text is escaped: raw markup appears only inside the fenced code
   * blocks that quote each run's exact command line. */
  for (const char *p = strchr(out, '\n'); (p = strchr(p, '<')); p++) {
    const char *line = p;
    while (line[-1] != '\n')
      line--;
    if (strncmp(line, "tlcollect ", 10) == 0)
      assert_true(strncmp(line - 7, "````sh\n", 7) == 0);
    else if (p[-1] != '\\')
      fail_msg("unescaped '<' in: %.60s", line);
  }
  free(out);
  free(err);

  /* -o writes the same bytes but for the charts (files beside it, linked
   * under a heading of their own, instead of one line saying how to get
   * them), and may replace its own output. */
  char *file = tl_test_path(f->dir, "page.md");
  char *argv2[] = {TLREPORT, "--db", f->db, "--compare", "vbox,macos", "-o", file, NULL};
  for (int i = 0; i < 2; i++) {
    free(run_report(argv2, 0, NULL));
    char *written = tl_test_read_file(file, NULL);
    assert_non_null(written);
    static const char link[] = " \xC2\xB7 [Charts](#charts)";
    char *toc = strstr(written, link);
    assert_non_null(toc);
    memmove(toc, toc + strlen(link), strlen(toc + strlen(link)) + 1);
    char *charts = strstr(written, "## Charts\n"), *next = charts ? strstr(charts, "\n## ") : NULL;
    static const char line[] = "Charts: written beside the page as SVG files with `-o FILE.md`, "
                               "or inline with `--format html`.\n";
    if (!charts || !next) {
      fail_msg("no Charts section followed by another in %s", file);
    } else {
      memmove(charts + strlen(line), next, strlen(next) + 1);
      memcpy(charts, line, strlen(line));
    }
    assert_string_equal(written, golden);
    free(written);
  }
  free(golden);
  free(file);
}

/* Markdown carries its charts: -o page.md writes page-1.svg ... beside it,
 * each a standalone SVG (well-formed XML, tl's marker first, so that the
 * next run may replace it) linked as an image from the page; the page's
 * links name exactly the files written. */
static void markdown_charts_beside_the_page(void **state) {
  fixture *f = *state;
  build_golden_db(f->db);
  char *dir = tl_test_path(f->dir, "out");
  assert_int_equal(mkdir(dir, 0755), 0);
  char *file = tl_test_path(dir, "my page.md");
  char *a[] = {TLREPORT, "--db", f->db, "-o", file, NULL};
  for (int run = 0; run < 2; run++) {
    free(run_report(a, 0, NULL));
    char *md = tl_test_read_file(file, NULL);
    assert_non_null(md);
    size_t links = 0;
    for (const char *p = md; (p = strstr(p, "](my%20page-")); p++) {
      char name[64];
      int n = 0;
      assert_int_equal(sscanf(p, "](my%%20page-%d.svg)", &n), 1);
      assert_true(p[-1] != '\n'); /* an image: ![title](...) */
      snprintf(name, sizeof name, "my page-%d.svg", n);
      char *svg = tl_test_path(dir, name);
      char *data = tl_test_read_file(svg, NULL);
      if (!data)
        fail_msg("%s is linked but was not written", name);
      assert_true(strncmp(data, "<!-- tl-report", 14) == 0);
      assert_non_null(strstr(data, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
      assert_non_null(strstr(data, "<style>"));
      if (access("/usr/bin/xmllint", X_OK) == 0) {
        char *x[] = {"/usr/bin/xmllint", "--noout", svg, NULL};
        char *err;
        if (tl_test_run(x, NULL, NULL, &err) != 0)
          fail_msg("%s is not well-formed: %s", name, err);
        free(err);
      }
      free(data);
      free(svg);
      links++;
    }
    /* Per delay a percentile chart and a trend, and a histogram per label. */
    assert_int_equal(links, 2 * 2 + 3);
    assert_int_equal(tl_test_entries(dir), (int)links + 1);
    assert_non_null(strstr(md, "\n## Charts\n"));
    assert_null(strstr(md, "--format html`"));
    free(md);
  }
  /* A page with fewer charts takes the extra ones away, tl's only. */
  char *mine = tl_test_path(dir, "my page-12.svg");
  assert_int_equal(tl_test_write_file(mine, "mine\n", 5), 0);
  char *fewer[] = {TLREPORT, "--db", f->db, "-o", file, "--compare", "vbox", NULL};
  free(run_report(fewer, 0, NULL));
  char *md = tl_test_read_file(file, NULL);
  size_t links = 0;
  for (const char *p = md; (p = strstr(p, "](my%20page-")); p++)
    links++;
  assert_true(links > 0 && links < 7);
  for (size_t n = 1; n <= 7; n++) {
    char name[64];
    snprintf(name, sizeof name, "my page-%zu.svg", n);
    char *svg = tl_test_path(dir, name);
    if ((access(svg, F_OK) == 0) != (n <= links))
      fail_msg("%s: %s after a page of %zu charts", name, n <= links ? "missing" : "left", links);
    free(svg);
  }
  assert_int_equal(access(mine, F_OK), 0);
  assert_int_equal(tl_test_entries(dir), (int)links + 2);
  free(md);
  free(mine);
  free(file);
  free(dir);
}

/* The CSV file x.csv in dir: 600 values in µs, from 1000 to 1299. */
static char *csv_in(const char *dir) {
  char *csv = tl_test_path(dir, "x.csv");
  char data[8000];
  size_t at = 0;
  for (int i = 0; i < 600; i++)
    at += (size_t)snprintf(data + at, sizeof data - at, "%d\n", 1000 + (i * 37) % 300);
  assert_int_equal(tl_test_write_file(csv, data, at), 0);
  return csv;
}

/* Imports csv into db as a session of label (probe uv, delay 1 ms), from
 * the host named from when given. */
static void import_csv(const char *db, const char *csv, const char *label, const char *from) {
  char *a[] = {TLSTORE,       "--db",    (char *)db,  "import",
               "--format",    "csv",     (char *)csv, "--label",
               (char *)label, "--probe", "uv",        "--delay",
               "1ms",         "--unit",  "us",        from ? "--host" : NULL,
               (char *)from,  NULL};
  char *out, *err;
  if (tl_test_run(a, NULL, &out, &err) != 0)
    fail_msg("importing %s: %s", csv, err);
  free(out);
  free(err);
}

/* A host page holds what the store selects for its host: the sessions
 * whose fingerprint begins with the host's, and those whose hostname is it.
 * A second host named as the first's fingerprint measured the same label,
 * so the first's page takes its sessions too, as `tlreport --host` with
 * that fingerprint does; a third host's page holds its own alone. */
static void host_pages_hold_what_the_store_selects(void **state) {
  fixture *f = *state;
  static const host named_as_vbox = {
      "dddd000000000004", "aaaa000000000001", "Debian", "6.1", "cpu", "none", "tsc"};
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  int64_t v[4] = {1100000, 1200000, 1300000, 1400000};
  add_session(s, "run-1", "shared", &vbox_host, 0, v, 4);
  add_session(s, "run-2", "shared", &named_as_vbox, 0, v, 4);
  add_session(s, "run-3", "shared", &mac_host, 0, v, 4);
  tl_store_close(s);
  char *dir = tl_test_path(f->dir, "site");
  char *b[] = {TLREPORT, "--db", f->db, "--site", dir, NULL};
  free(run_report(b, 0, NULL));
  char *first = tl_test_path(dir, "host-aaaa000000000001.html");
  char *page = tl_test_read_file(first, NULL);
  assert_non_null(page);
  char *h[] = {TLREPORT, "--db", f->db, "--host", "aaaa000000000001", "--format", "html", NULL};
  char *want = run_report(h, 0, NULL);
  /* Both hosts' sessions (their fingerprints shown), on the page and in
   * the store's selection alike. */
  assert_non_null(strstr(want, "dddd0000"));
  assert_non_null(strstr(page, "dddd0000"));
  assert_non_null(strstr(page, "vbox-guest"));
  assert_null(strstr(page, "bbbb0000"));
  char *third = tl_test_path(dir, "host-bbbb000000000002.html");
  char *other = tl_test_read_file(third, NULL);
  assert_non_null(other);
  assert_non_null(strstr(other, "bbbb0000"));
  assert_null(strstr(other, "dddd0000"));
  assert_null(strstr(other, "vbox-guest"));
  free(other);
  free(third);
  free(want);
  free(page);
  free(first);
  free(dir);
}

/* Each page of a site of several labels and hosts holds its own: a host
 * page the labels its host measured (in whatever order they began) and a
 * label page the hosts that measured it, whichever sessions came between. */
static void site_pages_hold_their_labels_and_hosts(void **state) {
  fixture *f = *state;
  static const host third = {"cccc000000000003", "third", "Debian", "6.1", "cpu", "none", "tsc"};
  const host *hosts[] = {&vbox_host, &mac_host, &third};
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  int64_t v[4] = {1100000, 1200000, 1300000, 1400000};
  static const struct {
    const char *label;
    int host;
  } runs[] = {{"alpha", 0}, {"beta", 1}, {"gamma", 2}, {"beta", 0}, {"alpha", 2}, {"beta", 1}};
  for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
    char run[16];
    snprintf(run, sizeof run, "run-%zu", i);
    add_session(s, run, runs[i].label, hosts[runs[i].host], 0, v, 4);
  }
  tl_store_close(s);
  char *dir = tl_test_path(f->dir, "site");
  char *b[] = {TLREPORT, "--db", f->db, "--site", dir, NULL};
  free(run_report(b, 0, NULL));
  static const char *const labels[] = {"alpha", "beta", "gamma"};
  static const char *const shown[] = {"aaaa0000", "bbbb0000", "cccc0000"};
  /* measured[l][h]: whether host h measured label l. */
  static const int measured[3][3] = {{1, 0, 1}, {1, 1, 0}, {0, 0, 1}};
  for (int h = 0; h < 3; h++) {
    char name[64];
    snprintf(name, sizeof name, "host-%s.html", hosts[h]->fingerprint);
    char *path = tl_test_path(dir, name), *page = tl_test_read_file(path, NULL);
    assert_non_null(page);
    for (int l = 0; l < 3; l++)
      if ((strstr(page, labels[l]) != NULL) != measured[l][h])
        fail_msg("%s: %s %s", name, labels[l], measured[l][h] ? "missing" : "shown");
    free(page);
    free(path);
  }
  for (int l = 0; l < 3; l++) {
    char name[64];
    snprintf(name, sizeof name, "label-%s.html", labels[l]);
    char *path = tl_test_path(dir, name), *page = tl_test_read_file(path, NULL);
    assert_non_null(page);
    for (int h = 0; h < 3; h++)
      if ((strstr(page, shown[h]) != NULL) != measured[l][h])
        fail_msg("%s: host %s %s", name, shown[h], measured[l][h] ? "missing" : "shown");
    free(page);
    free(path);
  }
  free(dir);
}

/* Imported data is described as imported, with its --probe as given, never
 * with the definition of a probe tl runs; hosts of which only the name is
 * known are one line, not rows of "unknown"; the matrix of differences
 * holds each pair once. */
static void imported_data_said_so(void **state) {
  fixture *f = *state;
  char *csv = csv_in(f->dir);
  static const char *const labels[] = {"one", "two", "three"};
  for (int l = 0; l < 3; l++)
    import_csv(f->db, csv, labels[l], NULL);
  /* Imported hosts get site pages too, linked from their rows; one whose
   * name begins another's ("db", "db2") gets none, as the store would select
   * both for it. */
  static const char *const hosts[] = {"db", "db2", "web"};
  for (int l = 0; l < 3; l++) {
    char label[16];
    snprintf(label, sizeof label, "on-%s", hosts[l]);
    import_csv(f->db, csv, label, hosts[l]);
  }
  char *dir = tl_test_path(f->dir, "site");
  char *b[] = {TLREPORT, "--db", f->db, "--site", dir, NULL};
  free(run_report(b, 0, NULL));
  char *index = tl_test_path(dir, "index.html");
  char *html = tl_test_read_file(index, NULL);
  assert_non_null(html);
  assert_non_null(strstr(html, "<a href=\"host-imported-web.html\">web</a>"));
  assert_non_null(strstr(html, "<a href=\"host-imported-db2.html\">db2</a>"));
  assert_null(strstr(html, "host-imported-db.html"));
  char *web = tl_test_path(dir, "host-imported-web.html");
  char *page = tl_test_read_file(web, NULL);
  assert_non_null(page);
  assert_non_null(strstr(page, "<h1>Timer latency on host web</h1>"));
  assert_null(strstr(page, "on-db")); /* only web's label */
  char *db = tl_test_path(dir, "host-imported-db.html");
  assert_int_equal(access(db, F_OK), -1);
  free(db);
  free(page);
  free(web);
  free(html);
  free(index);
  free(dir);
  char *r[] = {TLREPORT, "--db", f->db, "--compare", "one,two,three", NULL};
  char *md = run_report(r, 0, NULL);
  assert_non_null(strstr(md, "- **uv**: imported with `tlstore import --probe uv`: measured by "
                             "another tool, not by tl"));
  const tl_probe_about *uv = tl_probe_about_find("uv");
  assert_non_null(uv);
  assert_null(strstr(md, uv->definition));
  assert_null(strstr(md, "| host | labels |"));
  assert_non_null(strstr(md, "Of the hosts only their names are known: imported (one)."));
  /* Three labels (in the order asked): two rows and two columns, each pair once. */
  const char *m = strstr(md, "| minus | one | two |\n|---|--:|--:|\n| two | ");
  assert_non_null(m);
  const char *end = strstr(m, "\n\n");
  const char *three = strstr(m, "\n| three | ");
  assert_true(end && three && three < end);
  const char *one = strstr(m, "\n| one | ");
  assert_true(!one || one > end);
  free(md);
  free(csv);
}

static void filters_and_errors(void **state) {
  fixture *f = *state;
  build_golden_db(f->db);
  char *err, *out;
  char *a1[] = {TLREPORT, "--db", f->db, "--compare", "vbox,droplet", NULL};
  out = run_report(a1, 1, &err);
  assert_string_equal(out, "");
  assert_string_equal(err, "tlreport: error: unknown label 'droplet'; the database has: macos, "
                           "vbox\n");
  free(out);
  free(err);
  /* Filters that match nothing are errors, not empty pages. */
  static const char *const nothing[][4] = {
      {"--delay", "7", NULL},
      {"--since", "2030-01-01", NULL},
      {"--probe", "exec:python3 probe.py", NULL},
      {"--tag", "note=other", NULL},
  };
  for (size_t i = 0; i < sizeof nothing / sizeof nothing[0]; i++) {
    char *a[] = {TLREPORT, "--db", f->db, (char *)nothing[i][0], (char *)nothing[i][1], NULL};
    out = run_report(a, 1, &err);
    assert_non_null(strstr(err, "no session matches"));
    assert_string_equal(out, "");
    free(out);
    free(err);
  }
  /* A label the host filter leaves without sessions is named. */
  char *a2[] = {TLREPORT, "--db", f->db, "--compare", "vbox,macos", "--host", "bbbb", NULL};
  out = run_report(a2, 1, &err);
  assert_non_null(strstr(err, "no session of label 'vbox' matches"));
  free(out);
  free(err);
  /* --delay and --host keep only what they name. */
  char *a3[] = {TLREPORT, "--db", f->db, "--delay", "50ms", "--host", "vbox-guest", NULL};
  out = run_report(a3, 0, NULL);
  /* Lateness: 50.30 ms at p50 is 0.300 ms past the 50 ms. */
  assert_non_null(strstr(out, "| vbox | 0.300 | 10.00 | 10.00 | 10.00 | 10.00 | 0.100 |"));
  assert_non_null(strstr(out, "| 2 | 5 |\n"));
  assert_null(strstr(out, "macos"));
  free(out);
  /* --last 1: only the newest 50 ms session of vbox (50.3, 50.4, 60.0). */
  char *a4[] = {TLREPORT, "--db", f->db, "--last", "1", "--delay", "50", NULL};
  out = run_report(a4, 0, NULL);
  assert_non_null(strstr(out, "| vbox | 0.400 | 10.00 | 10.00 | 10.00 | 10.00 | 0.300 |"));
  assert_non_null(strstr(out, "| 1 | 3 |\n"));
  free(out);
  /* --baseline: differences of lateness against it, and their ratio: macos
   * p50 is 1.00 ms late, vbox's 4.00 ms: -3.00 ms, 0.25 times. */
  char *a5[] = {TLREPORT, "--db", f->db, "--baseline", "vbox", "--delay", "0", NULL};
  out = run_report(a5, 0, NULL);
  assert_non_null(strstr(out, "Against **vbox**"));
  /* One session each: no interval, no verdict, and what would settle it. */
  assert_non_null(strstr(out, "| macos | -3.00\xC2\xA0ms (0.25\xC3\x97) (1 session each: too few "
                              "to tell; collect 5 a label) | -6.00\xC2\xA0ms (0.25\xC3\x97) ("));
  assert_non_null(strstr(out, "| vbox | 0.000\xC2\xA0ms (1.00\xC3\x97) |"));
  free(out);
  char *a6[] = {TLREPORT, "--db", f->db, "--baseline", "nosuch", NULL};
  out = run_report(a6, 1, &err);
  assert_non_null(strstr(err, "baseline 'nosuch' is not among the compared labels"));
  free(out);
  free(err);
  /* --percentiles changes the columns; the maximum stays. */
  char *a7[] = {TLREPORT, "--db", f->db, "--percentiles", "75,99.99", NULL};
  out = run_report(a7, 0, NULL);
  assert_non_null(strstr(out, "| label | p75 (ms) | p99.99 (ms) | max (ms) |"));
  free(out);
}

/* "Read with care": a label measured on two hosts, a probe option (tag)
 * that differs between labels (labels of one session too), a kernel that
 * changed within a label, and a busy host are each named; agreeing sessions
 * give the all-clear line. */
static void add_plain(tl_store *s, const char *label, const char *fp, const char *kernel,
                      const char *tag, const char *load) {
  const char *keys[] = {"concurrency"}, *values[] = {tag};
  const tl_fact facts[] = {
      {"kernel.release", kernel, "uname"},      {"cpu.logical", "2", "sysconf"},
      {"load.start", load, "/proc/loadavg"},    {"clocksource.current", "tsc", "sysfs"},
      {"cpu.governor", "performance", "sysfs"}, {"kernel.preempt", "PREEMPT_DYNAMIC", "uname -v"}};
  tl_session_spec spec = {.run_uuid = fp,
                          .label = label,
                          .probe = "uv",
                          .delay_ns = 1000000,
                          .command_line = "tlcollect",
                          .host_fingerprint = fp,
                          .hostname = fp,
                          .libuv_version = "1.44.2",
                          .tag_keys = keys,
                          .tag_values = values,
                          .tag_count = 1,
                          .facts = facts,
                          .fact_count = 6};
  tl_writer *w;
  char uuid[37];
  const int64_t v[] = {1100000, 1200000};
  assert_int_equal(tl_writer_begin(s, &spec, &w, uuid), TL_OK);
  assert_int_equal(tl_writer_add(w, v, 2), TL_OK);
  assert_int_equal(tl_writer_end(w, "complete"), TL_OK);
}

static void confounds(void **state) {
  fixture *f = *state;
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  add_plain(s, "mixed", "aaaa", "6.1.0", "1", "0.10 0.20 0.30");
  add_plain(s, "mixed", "bbbb", "6.5.0", "1", "0.10");
  add_plain(s, "busy", "cccc", "6.1.0", "8", "3.00 2.00 1.00"); /* 1.5 per CPU */
  add_plain(s, "calm", "dddd", "6.1.0", "1", "0.00");
  add_plain(s, "calm2", "eeee", "6.1.0", "1", "0.00");
  add_plain(s, "busy2", "ffff", "6.1.0", "8", "3.00");
  add_plain(s, "busy3", "ffff", "6.1.0", "8", "1.50");
  tl_store_close(s);
  char *a[] = {TLREPORT, "--db", f->db, "--compare", "mixed,busy", NULL};
  char *out = run_report(a, 0, NULL);
  const char *care = strstr(out, "### Read with care\n");
  assert_non_null(care);
  assert_non_null(strstr(care, "- **mixed** mixes 2 different hosts: aaaa (aaaa), bbbb (bbbb).\n"));
  assert_non_null(strstr(care, "- Within **mixed**, the kernel differs between sessions: "
                               "6.1.0, 6.5.0.\n"));
  assert_non_null(strstr(care, "- The tag concurrency differs between labels: mixed 1; busy 8.\n"));
  assert_non_null(strstr(care, "- **busy** was measured on a busy host: load average 3.00 on 2 "
                               "CPUs during a session.\n"));
  assert_null(strstr(care, "**mixed** was measured on a busy host"));
  free(out);
  char *b[] = {TLREPORT, "--db", f->db, "--compare", "calm,calm2", NULL};
  out = run_report(b, 0, NULL);
  assert_non_null(strstr(out, "### Read with care\n\nNothing found"));
  free(out);
  /* What is the same for every busy label is said once. */
  char *c[] = {TLREPORT, "--db", f->db, "--compare", "busy,busy2,busy3", NULL};
  out = run_report(c, 0, NULL);
  assert_non_null(strstr(out,
                         "- **busy**, **busy2** and **busy3** were measured on busy hosts, the "
                         "highest load average during a session: busy 3.00 on 2 CPUs, busy2 "
                         "3.00 on 2 CPUs, busy3 1.50 on 2 CPUs.\n"));
  free(out);
  char *d[] = {TLREPORT, "--db", f->db, "--compare", "busy,busy2", NULL};
  out = run_report(d, 0, NULL);
  assert_non_null(strstr(out, "- **busy** and **busy2** were measured on busy hosts: load average "
                              "3.00 on 2 CPUs during a session.\n"));
  assert_null(strstr(out, "**busy2** was measured"));
  free(out);
  /* Labels of one session each, the first of the list among them: each
   * session's value counts between labels. */
  char *e[] = {TLREPORT, "--db", f->db, "--compare", "busy,calm", NULL};
  out = run_report(e, 0, NULL);
  assert_non_null(strstr(out, "- The tag concurrency differs between labels: busy 8; calm 1.\n"));
  free(out);
}

/* ======================================================================== */
/* JSON                                                                      */

static void json_output(void **state) {
  fixture *f = *state;
  build_golden_db(f->db);
  char *a[] = {TLREPORT,   "--db", f->db,        "--compare", "vbox,macos",
               "--format", "json", "--baseline", "vbox",      NULL};
  char *out = run_report(a, 0, NULL);
  const char *end = tl_test_json_value(out, 0);
  if (!end || *tl_test_json_ws(end))
    fail_msg("not JSON at byte %ld", end ? (long)(end - out) : -1L);
  assert_non_null(strstr(out, "{\"format\": \"tl-report\", \"version\": 1,\n"));
  assert_non_null(strstr(out, "\"baseline\": \"vbox\""));
  /* The page's numbers (tests/golden/README.md): vbox 0 ms. */
  assert_non_null(strstr(out, "\"label\": \"vbox\", \"probe\": \"settimeout\", \"delay_ns\": 0, "
                              "\"sessions\": 1,\n   \"distribution\": {\"samples\": 1000, "
                              "\"min_ns\": 10000, \"max_ns\": 10000000, \"mean_ns\": "
                              "5005000.000"));
  assert_non_null(strstr(out, "\"percentiles\": [{\"p\": 50, \"ns\": 5000000}, {\"p\": 90, "
                              "\"ns\": 9000000}, {\"p\": 99, \"ns\": 9900000}, {\"p\": 99.9, "
                              "\"ns\": 9990000}]"));
  assert_non_null(strstr(out, "\"vs_baseline\": {\"min\": 100.000, \"p50\": 0.400"));
  /* Lateness: armed for 1 ms at setTimeout(0); macos p50 1.00 ms late against
   * vbox's 4.00 ms, p90 2.00 against 8.00. */
  assert_non_null(strstr(out, "\"armed_ns\": 1000000"));
  assert_non_null(strstr(out, "\"percentiles\": [{\"p\": 50, \"ns\": 4000000}, {\"p\": 90, "
                              "\"ns\": 8000000}"));
  assert_non_null(strstr(out,
                         "\"vs_baseline_lateness\": {\"p50\": {\"diff_ns\": -3000000, "
                         "\"ratio\": 0.250}, \"p90\": {\"diff_ns\": -6000000, \"ratio\": 0.250}"));
  /* Hostile text is a plain JSON string. */
  assert_non_null(strstr(out, "\"note\": \"" HOSTILE "\""));
  free(out);
}

/* ------------------------------------------------------------------------ */
/* The statistics in the JSON, read back with the checker above              */

/* The value at a path such as "groups.0.stats.few" (numbers index arrays);
 * fails the test when there is none. */
__attribute__((format(printf, 2, 3))) static const char *json_at(const char *root, const char *fmt,
                                                                 ...) {
  char path[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(path, sizeof path, fmt, ap);
  va_end(ap);
  char walk[sizeof path];
  memcpy(walk, path, sizeof path);
  const char *p = root;
  for (char *seg = strtok(walk, "."); seg && p; seg = strtok(NULL, "."))
    p = isdigit((unsigned char)*seg) ? tl_test_json_element(p, strtoul(seg, NULL, 10))
                                     : tl_test_json_member(p, seg);
  if (!p)
    fail_msg("no value at %s", path);
  return p;
}

static int json_is_null(const char *p) { return strncmp(p, "null", 4) == 0; }

static int64_t json_int(const char *p) {
  char *end;
  long long v = strtoll(p, &end, 10);
  if (end == p || *end == '.' || *end == 'e' || *end == 'E')
    fail_msg("not an integer: %.20s", p);
  return v;
}

/* -1 for null (the statistics' "unknown"), else the integer. */
static int64_t json_ns(const char *p) { return json_is_null(p) ? -1 : json_int(p); }

static int json_bool(const char *p) {
  if (strncmp(p, "true", 4) && strncmp(p, "false", 5))
    fail_msg("not a boolean: %.20s", p);
  return *p == 't';
}

/* A number written from a double: within its printed precision of want. */
static void assert_real(const char *p, double want, double abs_tol, double rel_tol) {
  if (!isfinite(want)) {
    assert_true(json_is_null(p));
    return;
  }
  char *end;
  double v = strtod(p, &end);
  if (end == p || fabs(v - want) > abs_tol + rel_tol * fabs(want))
    fail_msg("%.30s is not %.17g", p, want);
}

/* tl_fput_json(s), as a string (len: its length). */
static char *json_of(const char *s, size_t *len) {
  char *buf = NULL;
  FILE *m = open_memstream(&buf, len);
  assert_non_null(m);
  tl_fput_json(m, s);
  assert_int_equal(fclose(m), 0);
  return buf;
}

/* The string at p is exactly tl_fput_json(want). */
static void assert_json_string(const char *p, const char *want) {
  size_t len;
  char *buf = json_of(want, &len);
  const char *end = tl_test_json_string(p);
  assert_non_null(end);
  if ((size_t)(end - p) != len || memcmp(p, buf, len) != 0)
    fail_msg("JSON string %.*s, expected %s", (int)(end - p), p, buf);
  free(buf);
}

/* The comparison and statistics tlreport --compare labels makes, in process. */
static void stats_of(const char *db, const char *const *labels, size_t nl, tl_comparison *cmp,
                     tl_stats *st) {
  tl_store *s;
  char err[512];
  assert_int_equal(tl_store_open(&s, db, TL_STORE_READONLY), TL_OK);
  tl_compare_opts o;
  tl_compare_opts_init(&o);
  o.labels = labels;
  o.label_count = nl;
  if (tl_compare(s, &o, cmp, err, sizeof err) || tl_stats_compute(s, cmp, st, err, sizeof err))
    fail_msg("%s", err);
  tl_store_close(s);
}

/* Every statistic of the JSON page equals what tl_stats_compute found. */
static void assert_json_stats(const char *out, const tl_comparison *cmp, const tl_stats *st) {
  char line[1024];
  assert_int_equal(tl_test_json_count(json_at(out, "groups")), cmp->group_count);
  for (size_t i = 0; i < cmp->group_count; i++) {
    const tl_group *g = &cmp->groups[i];
    const tl_group_stats *gs = &st->groups[i];
    const char *s = json_at(out, "groups.%zu.stats", i);
    if (!g->dist.count) { /* nothing to bound */
      assert_true(json_is_null(json_at(s, "ci_method")));
      assert_int_equal(tl_test_json_count(json_at(s, "percentiles")), 0);
    } else {
      assert_json_string(json_at(s, "ci_method"),
                         gs->method == TL_CI_SESSIONS ? "sessions" : "order");
      assert_int_equal(tl_test_json_count(json_at(s, "percentiles")), g->dist.pct_count);
    }
    for (size_t k = 0; k < g->dist.pct_count && g->dist.count; k++) {
      const tl_pct_stats *p = &gs->pct[k];
      const char *e = json_at(s, "percentiles.%zu", k);
      assert_real(json_at(e, "p"), g->dist.pcts[k], 0, 1e-9);
      assert_int_equal(json_ns(json_at(e, "lo_ns")), p->lo_ns);
      assert_int_equal(json_ns(json_at(e, "hi_ns")), p->hi_ns);
      assert_int_equal(json_int(json_at(e, "above")), p->above);
      assert_int_equal(json_bool(json_at(e, "few")), p->few);
      assert_int_equal(json_int(json_at(e, "needed")), p->needed);
      assert_int_equal(json_int(json_at(e, "spread_ns")), p->spread_ns);
    }
    assert_int_equal(tl_test_json_count(json_at(s, "series")), gs->session_count);
    for (size_t k = 0; k < gs->session_count; k++) {
      assert_int_equal(json_int(json_at(s, "series.%zu.started_ns", k)), gs->started_ns[k]);
      assert_int_equal(json_ns(json_at(s, "series.%zu.p90_ns", k)), gs->series_ns[0][k]);
      assert_int_equal(json_ns(json_at(s, "series.%zu.p99_ns", k)), gs->series_ns[1][k]);
    }
    assert_int_equal(tl_test_json_count(json_at(s, "changes")), gs->change_count);
    for (size_t k = 0; k < gs->change_count; k++) {
      const tl_change *c = &gs->changes[k];
      const char *e = json_at(s, "changes.%zu", k);
      assert_real(json_at(e, "p"), c->pct, 0, 1e-9);
      assert_int_equal(json_int(json_at(e, "session")), c->session_index);
      assert_int_equal(json_int(json_at(e, "at_ns")), c->at_ns);
      assert_real(json_at(e, "before_ns"), c->before_ns, 0.0006, 0);
      assert_real(json_at(e, "after_ns"), c->after_ns, 0.0006, 0);
      assert_real(json_at(e, "p_value"), c->p_value, 0, 1e-5);
      tl_change_sentence(g, c, line, sizeof line);
      assert_json_string(json_at(e, "sentence"), line);
    }
  }
  assert_int_equal(tl_test_json_count(json_at(out, "pairs")), st->pair_count);
  for (size_t i = 0; i < st->pair_count; i++) {
    const tl_pair_stats *p = &st->pairs[i];
    const char *e = json_at(out, "pairs.%zu", i);
    assert_int_equal(json_int(json_at(e, "a")), p->a);
    assert_int_equal(json_int(json_at(e, "b")), p->b);
    assert_json_string(json_at(e, "a_label"), cmp->groups[p->a].label);
    assert_json_string(json_at(e, "b_label"), cmp->groups[p->b].label);
    assert_int_equal(json_int(json_at(e, "delay_ns")), cmp->groups[p->a].delay_ns);
    assert_int_equal(json_int(json_at(e, "sessions_a")), p->sessions_a);
    assert_int_equal(json_int(json_at(e, "sessions_b")), p->sessions_b);
    assert_int_equal(json_bool(json_at(e, "decided")), p->decided);
    const tl_dist *d = &cmp->groups[p->a].dist;
    assert_int_equal(tl_test_json_count(json_at(e, "percentiles")), d->pct_count);
    for (size_t k = 0; k < d->pct_count; k++) {
      const char *q = json_at(e, "percentiles.%zu", k);
      assert_real(json_at(q, "p"), d->pcts[k], 0, 1e-9);
      assert_int_equal(json_int(json_at(q, "diff_ns")), p->diff_ns[k]);
      /* No interval without run-to-run variation to measure. */
      if (p->decided) {
        assert_int_equal(json_int(json_at(q, "lo_ns")), p->lo_ns[k]);
        assert_int_equal(json_int(json_at(q, "hi_ns")), p->hi_ns[k]);
      } else {
        assert_true(json_is_null(json_at(q, "lo_ns")) && json_is_null(json_at(q, "hi_ns")));
      }
      assert_int_equal(json_int(json_at(q, "sessions_needed")), p->sessions_needed[k]);
      assert_int_equal(json_bool(json_at(q, "clear")), p->clear[k]);
      assert_int_equal(json_bool(json_at(q, "spread_over")), p->spread_over[k]);
      tl_pair_sentence(cmp, st, p, k, line, sizeof line);
      assert_json_string(json_at(q, "sentence"), line);
    }
    const char *mw = json_at(e, "mann_whitney");
    assert_real(json_at(mw, "u"), p->mw.u, 0.0006, 0);
    assert_real(json_at(mw, "z"), p->mw.z, 1e-12, 1e-5);
    assert_real(json_at(mw, "p_value"), p->mw.p_value, 1e-300, 1e-5);
    assert_real(json_at(mw, "a_below_b"), p->mw.a_below_b, 1e-12, 1e-5);
  }
}

static void assert_json(const char *out) {
  const char *end = tl_test_json_value(out, 0);
  if (!end || *tl_test_json_ws(end))
    fail_msg("not JSON at byte %ld", end ? (long)(end - out) : -1L);
  /* UTF-8 throughout, and no nan or inf where a number should be. */
  for (const unsigned char *p = (const unsigned char *)out; *p;) {
    size_t n = tl_utf8_len(p, strlen((const char *)p));
    if (!n)
      fail_msg("not UTF-8 at byte %ld", (long)((const char *)p - out));
    p += n;
  }
  assert_null(strstr(out, "nan"));
  assert_null(strstr(out, "inf"));
}

/* Sessions of n samples: 1.0 to 1.9 ms, with the top 15% near tail_ns (so
 * that p90 lies there). */
static void add_level(tl_store *s, const char *label, int64_t tail_ns, size_t n) {
  int64_t v[400] = {0}; /* n may be 0: nothing is read then, but say so to the compiler */
  assert_true(n <= sizeof v / sizeof v[0]);
  for (size_t i = 0; i < n; i++)
    v[i] = i % 20 >= 17 ? tail_ns + (int64_t)(i * 7919 % 1000) * 100
                        : 1000000 + (int64_t)(i * 104729 % 900) * 1000;
  add_session(s, "run1", label, &vbox_host, 0, v, n);
}

/* steady: twelve sessions of 200 samples whose p90 steps from about 3 to
 * about 4 ms at the seventh; twin: the same samples (no clear difference);
 * one: a single session of 50 samples; empty: a session without samples.
 * Session i starts i hours after 2026-11-01T10:00:00Z. */
static void build_stats_db(const char *path) {
  tl_store *s;
  assert_int_equal(tl_store_open(&s, path, 0), TL_OK);
  for (int d = 0; d < 12; d++) {
    add_level(s, "steady", d < 6 ? 3000000 : 4000000, 200);
    add_level(s, "twin", d < 6 ? 3000000 : 4000000, 200);
  }
  add_level(s, "one", 2500000, 50);
  add_level(s, "empty", 0, 0);
  tl_store_close(s);
  hourly_sessions(path);
}

static size_t group_of(const tl_comparison *c, const char *label) {
  for (size_t i = 0; i < c->group_count; i++)
    if (strcmp(c->groups[i].label, label) == 0)
      return i;
  fail_msg("no group %s", label);
  return 0;
}

/* Best is marked only where the difference is clear: two labels of the same
 * samples get no bold value and no winner; a label clearly less late than
 * another gets both, and the later one is said to be later by how much. */
static void best_only_where_clear(void **state) {
  fixture *f = *state;
  build_stats_db(f->db);
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  for (int d = 0; d < 12; d++)
    add_level(s, "late", 8000000, 200);
  tl_store_close(s);
  char *a[] = {TLREPORT, "--db", f->db, "--compare", "steady,twin", NULL};
  char *out = run_report(a, 0, NULL);
  assert_non_null(
      strstr(out, "- setTimeout(0): no clear difference at p90 between steady and twin"));
  /* The step of p90 from about 3 to about 4 ms at the seventh session is
   * in the summary's "What changed over time". */
  assert_non_null(strstr(out, "- steady got worse on 2026-11-01: p90 +"));
  /* ... and marked on the trend chart of the HTML page. */
  char *c[] = {TLREPORT, "--db", f->db, "--compare", "steady,twin", "--format", "html", NULL};
  char *html = run_report(c, 0, NULL);
  assert_non_null(strstr(html, "stroke-dasharray=\"6 4\"><title>p90 lateness of steady at 0 ms"));
  free(html);
  /* ... and flagged on the site's index. */
  char *dir = tl_test_path(f->dir, "site");
  char *d[] = {TLREPORT, "--db", f->db, "--compare", "steady,twin", "--site", dir, NULL};
  free(run_report(d, 0, NULL));
  char *index = tl_test_path(dir, "index.html");
  html = tl_test_read_file(index, NULL);
  assert_non_null(html);
  assert_non_null(strstr(html, "<td data-h=\"changes\">\xE2\x9A\x91 worse 2026-11-01: p90 +"));
  free(html);
  free(index);
  free(dir);
  const char *table = strstr(out, "## Lateness by delay");
  assert_non_null(table);
  const char *end = strstr(table, "## How sure");
  assert_non_null(end);
  for (const char *b = table; (b = strstr(b, "**")) && b < end; b++)
    fail_msg("marked best without a clear difference: %.80s", b - 20);
  free(out);
  char *b[] = {TLREPORT, "--db", f->db, "--compare", "steady,late", NULL};
  out = run_report(b, 0, NULL);
  assert_non_null(strstr(out, "- setTimeout(0): **steady** is the least late at p90 ("));
  assert_non_null(strstr(out, "; late is "));
  assert_non_null(strstr(out, "| steady | "));
  table = strstr(out, "| steady | ");
  assert_non_null(strstr(table, "| **"));
  assert_true(strstr(table, "| **") < strstr(table, "| late | "));
  free(out);
}

/* A fixture in memory-backed storage where there is one: for tests that
 * store thousands of small sessions, whose durability is not the point. */
static int memory_setup(void **state) {
  const char *old = getenv("TMPDIR");
  char *saved = old ? strdup(old) : NULL;
  if (access("/dev/shm", W_OK) == 0)
    setenv("TMPDIR", "/dev/shm", 1);
  int rc = tl_test_setup(state);
  if (saved)
    setenv("TMPDIR", saved, 1);
  else
    unsetenv("TMPDIR");
  free(saved);
  return rc;
}

/* Three months of runs every three hours, 3 labels x 2 delays: 4,320
 * sessions. The page's length depends on the labels and delays, not on the
 * sessions: the Markdown stays under 500 lines, and the HTML folds the
 * session list and the command lines into <details>. */
static void months_of_runs_fold(void **state) {
  fixture *f = *state;
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  static const char *const labels[] = {"vbox", "macos", "droplet"};
  const host *hosts[] = {&vbox_host, &mac_host, &vbox_host};
  int64_t v[20];
  for (int run = 0; run < 720; run++)
    for (int l = 0; l < 3; l++) {
      char id[32];
      snprintf(id, sizeof id, "run-%d-%d", l, run);
      for (int d = 0; d < 2; d++) {
        for (int i = 0; i < 20; i++)
          v[i] = d * 50000000 + 1000000 + (l + 1) * 100000 + i * 10000 + (run % 7) * 1000;
        add_session(s, id, labels[l], hosts[l], d * 50000000, v, 20);
      }
    }
  tl_store_close(s);
  sqlite3 *db;
  assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
  assert_int_equal(sqlite3_exec(db,
                                "UPDATE sessions SET started_ns = 1785542400000000000 + "
                                "((id - 1) / 6) * 10800000000000, ended_ns = "
                                "1785542400000000000 + ((id - 1) / 6) * 10800000000000 + "
                                "60000000000",
                                NULL, NULL, NULL),
                   SQLITE_OK);
  sqlite3_close(db);
  char *a[] = {TLREPORT, "--db", f->db, NULL};
  char *out = run_report(a, 0, NULL);
  size_t lines = 0;
  for (const char *p = out; (p = strchr(p, '\n')); p++)
    lines++;
  if (lines >= 500 || getenv("TL_SHOW"))
    fprintf(stderr, "%s", out);
  assert_true(lines < 500);
  /* Sessions summarized per label: how many, over which dates, runs, statuses. */
  assert_non_null(strstr(out, "| vbox | 1440 | 720 | 2026-08-01 | 2026-10-29 | 1440 complete |"));
  free(out);
  char *file = tl_test_path(f->dir, "page.html");
  char *b[] = {TLREPORT, "--db", f->db, "--format", "html", "-o", file, NULL};
  free(run_report(b, 0, NULL));
  char *html = tl_test_read_file(file, NULL);
  assert_non_null(html);
  /* Every session is still on the HTML page, folded. */
  const char *fold = strstr(html, "<details><summary>All 4320 sessions</summary>");
  assert_non_null(fold);
  assert_true(strstr(fold, "</details>") != NULL);
  free(html);
  free(file);
}

/* The coordinates of an SVG line's points (attr: its `points="...`), each
 * "x,y" and at most max of them, into x (NULL: not wanted) and y; how many
 * there are. */
static size_t points_xys(const char *attr, double *x, double *y, size_t max) {
  assert_non_null(attr);
  assert_true(strncmp(attr, "points=\"", 8) == 0);
  size_t n = 0;
  for (const char *p = attr + 8; *p != '"'; n++) {
    double at;
    assert_true(n < max);
    assert_int_equal(sscanf(p, "%lf,%lf", x ? &x[n] : &at, &y[n]), 2);
    while (*p != ' ' && *p != '"')
      p++;
    p += *p == ' ';
  }
  return n;
}

static size_t points_ys(const char *attr, double *y, size_t max) {
  return points_xys(attr, NULL, y, max);
}

/* The y coordinates of the points of the first thick (p90) line of svg. */
static size_t p90_line_ys(const char *svg, double *y, size_t max) {
  const char *at = strstr(svg, "<polyline class=\"line\" stroke-width=\"2.5\"");
  assert_non_null(at);
  return points_ys(strstr(at, "points=\""), y, max);
}

/* A label of more sessions than the trend shows apart is folded a point a
 * day, each the median of the day's sessions' p90: a day of 18 sessions 1
 * ms late and 6 sessions 9 ms late lies with a day all 1 ms late, not with
 * a day all 3 ms late (its mean), and its whisker reaches 9 ms. */
static void trend_folds_days_to_medians(void **state) {
  fixture *f = *state;
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  int64_t v[20];
  for (int k = 0; k < 72; k++) {
    int day = k / 24, late_ms = day == 1 ? 1 : day == 2 ? 3 : k % 4 == 3 ? 9 : 1;
    for (int i = 0; i < 20; i++)
      v[i] = (1 + late_ms) * 1000000; /* setTimeout(0) waits 1 ms */
    char id[32];
    snprintf(id, sizeof id, "run-%d", k);
    add_session(s, id, "vbox", &vbox_host, 0, v, 20);
  }
  tl_store_close(s);
  sqlite3 *db;
  assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
  assert_int_equal(sqlite3_exec(db,
                                "UPDATE sessions SET started_ns = 1785542400000000000 + (id - 1) "
                                "* 3600000000000, ended_ns = 1785542400000000000 + (id - 1) * "
                                "3600000000000 + 60000000000",
                                NULL, NULL, NULL),
                   SQLITE_OK);
  sqlite3_close(db);
  char *page = tl_test_path(f->dir, "trend.md"), *chart = tl_test_path(f->dir, "trend-2.svg");
  char *a[] = {TLREPORT, "--db", f->db, "-o", page, NULL};
  free(run_report(a, 0, NULL));
  char *svg = tl_test_read_file(chart, NULL);
  assert_non_null(svg);
  assert_non_null(strstr(svg, "the median of each day&#39;s sessions"));
  double y[4];
  assert_int_equal(p90_line_ys(svg, y, 4), 3);
  assert_true(y[0] == y[1]);
  assert_true(y[2] < y[1]); /* later: higher up */
  /* The first day's whisker, from 1 to 9 ms, reaches above the third day's 3 ms. */
  const char *whisker = strstr(svg, "<line class=\"line\" x1=");
  assert_non_null(whisker);
  double x1, y1, x2, y2;
  assert_int_equal(sscanf(whisker,
                          "<line class=\"line\" x1=\"%lf\" y1=\"%lf\" x2=\"%lf\" y2=\"%lf\"", &x1,
                          &y1, &x2, &y2),
                   4);
  assert_true(y1 == y[0] && y2 < y[2]);
  free(svg);
  free(chart);
  free(page);
}

/* The points of each thick (p90) line of svg, in order: line k's at
 * x[k][i], y[k][i], n[k] of them; how many lines. */
static size_t p90_lines(const char *svg, double x[][8], double y[][8], size_t *n, size_t max) {
  size_t lines = 0;
  for (const char *at = svg; (at = strstr(at, "<polyline class=\"line\" stroke-width=\"2.5\""));
       at++, lines++) {
    assert_true(lines < max);
    n[lines] = points_xys(strstr(at, "points=\""), x[lines], y[lines], 8);
  }
  return lines;
}

/* Each label's trend line holds its own sessions, whose starts interleave
 * with the others', in the order of the labels asked: three labels of four
 * sessions each, started in turn an hour apart, each label later than the
 * last by a step and each of its sessions later than the one before. */
static void trend_lines_keep_their_labels(void **state) {
  fixture *f = *state;
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  static const char *labels[] = {"alpha", "beta", "gamma"};
  int64_t v[20];
  for (int k = 0; k < 12; k++) {
    for (int i = 0; i < 20; i++) /* 1 ms to wait, then 1, 4 or 16 ms late, rising */
      v[i] = 1000000 + (1000000LL << (2 * (k % 3))) * (10 + k / 3) / 10;
    char id[32];
    snprintf(id, sizeof id, "run-%d", k);
    add_session(s, id, labels[k % 3], &vbox_host, 0, v, 20);
  }
  tl_store_close(s);
  hourly_sessions(f->db);
  char *page = tl_test_path(f->dir, "trend.md"), *chart = tl_test_path(f->dir, "trend-2.svg");
  char *a[] = {TLREPORT, "--db", f->db, "--compare", "gamma,alpha,beta", "-o", page, NULL};
  free(run_report(a, 0, NULL));
  char *svg = tl_test_read_file(chart, NULL);
  assert_non_null(svg);
  double x[3][8], y[3][8];
  size_t n[3];
  assert_int_equal(p90_lines(svg, x, y, n, 3), 3);
  /* Lines in the order asked: gamma (16 ms), alpha (1 ms), beta (4 ms). */
  size_t order[3] = {1, 2, 0}; /* alpha, beta, gamma: lowest line (largest y) first */
  for (size_t k = 0; k < 3; k++) {
    assert_int_equal(n[k], 4);
    for (size_t i = 1; i < 4; i++) {
      assert_true(x[k][i] > x[k][i - 1]); /* later */
      assert_true(y[k][i] < y[k][i - 1]); /* and later still */
    }
  }
  for (size_t i = 0; i < 4; i++) {
    /* Started in turn: alpha, then beta, then gamma, each round. */
    assert_true(x[order[0]][i] < x[order[1]][i]);
    assert_true(x[order[1]][i] < x[order[2]][i]);
    /* Each label above the one before it at every point. */
    assert_true(y[order[0]][i] > y[order[1]][i]);
    assert_true(y[order[1]][i] > y[order[2]][i]);
  }
  free(svg);
  free(chart);
  free(page);
}

/* tl_html_escape(s), as a string. */
static char *html_of(const char *s) {
  char *buf = NULL;
  size_t len;
  FILE *m = open_memstream(&buf, &len);
  assert_non_null(m);
  tl_html_escape(m, s);
  assert_int_equal(fclose(m), 0);
  return buf;
}

/* HTML text: the five characters with entities, controls (C0, DEL, C1,
 * bidi) dropped, bytes that are not UTF-8 as U+FFFD, everything else as it
 * is, wherever it falls in a run of plain text. */
static void html_escape_each_kind(void **state) {
  (void)state;
  static const char *const cases[][2] = {
      {"", ""},
      {"plain text, 1 ms (p99)", "plain text, 1 ms (p99)"},
      {"a&b<c>d\"e'f", "a&amp;b&lt;c&gt;d&quot;e&#39;f"},
      {"&<>\"'", "&amp;&lt;&gt;&quot;&#39;"},
      {"tab\there\x01\x1b[2J\x7f.", "tabhere[2J."},
      {"C1 \xc2\x85 bidi \xe2\x80\xae end", "C1  bidi  end"},
      {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
      {"bad \xff\xfe byte\xc3", "bad \xEF\xBF\xBD\xEF\xBF\xBD byte\xEF\xBF\xBD"},
      {"<script>alert('x')</script>", "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char *got = html_of(cases[i][0]);
    assert_string_equal(got, cases[i][1]);
    free(got);
  }
}

/* The JSON page carries the statistics of the Markdown page, number for
 * number, byte-identical from run to run. */
static void json_statistics(void **state) {
  fixture *f = *state;
  build_stats_db(f->db);
  const char *labels[] = {"steady", "twin", "one", "empty"};
  char *a[] = {TLREPORT,   "--db", f->db, "--compare", "steady,twin,one,empty",
               "--format", "json", NULL};
  char *out = run_report(a, 0, NULL);
  assert_json(out);
  tl_comparison cmp;
  tl_stats st;
  stats_of(f->db, labels, 4, &cmp, &st);
  assert_json_stats(out, &cmp, &st);

  /* The data exercises what the JSON must say: a planted change, a series
   * value that rests on too few samples, an unbounded interval, a single
   * session, and a pair with no clear difference. */
  size_t steady = group_of(&cmp, "steady"), one = group_of(&cmp, "one");
  const tl_group_stats *gs = &st.groups[steady];
  assert_int_equal(gs->method, TL_CI_SESSIONS);
  assert_true(gs->change_count >= 1);
  assert_int_equal(gs->changes[0].session_index, 6);
  assert_int_equal(gs->series_ns[1][0], -1); /* p99 of 200 samples */
  assert_true(json_is_null(json_at(out, "groups.%zu.stats.series.0.p99_ns", steady)));
  assert_json_string(json_at(out, "groups.%zu.stats.ci_method", steady), "sessions");
  assert_int_equal(json_int(json_at(out, "groups.%zu.stats.changes.0.session", steady)), 6);

  const tl_group_stats *os = &st.groups[one];
  assert_json_string(json_at(out, "groups.%zu.stats.ci_method", one), "order");
  assert_int_equal(tl_test_json_count(json_at(out, "groups.%zu.stats.series", one)), 1);
  assert_int_equal(tl_test_json_count(json_at(out, "groups.%zu.stats.changes", one)), 0);
  size_t last = cmp.groups[one].dist.pct_count - 1; /* p99.9 of 50 samples */
  assert_int_equal(os->pct[last].hi_ns, -1);
  assert_true(json_is_null(json_at(out, "groups.%zu.stats.percentiles.%zu.hi_ns", one, last)));
  assert_true(json_bool(json_at(out, "groups.%zu.stats.percentiles.%zu.few", one, last)));
  for (size_t k = 0; k <= last; k++)
    assert_int_equal(json_int(json_at(out, "groups.%zu.stats.percentiles.%zu.spread_ns", one, k)),
                     0);

  /* A group whose one session has no samples: no method, no intervals,
   * and a series entry with nulls. */
  size_t empty = group_of(&cmp, "empty");
  assert_int_equal(cmp.groups[empty].dist.count, 0);
  assert_true(json_is_null(json_at(out, "groups.%zu.stats.ci_method", empty)));
  assert_int_equal(tl_test_json_count(json_at(out, "groups.%zu.stats.percentiles", empty)), 0);
  assert_true(json_is_null(json_at(out, "groups.%zu.stats.series.0.p90_ns", empty)));
  for (size_t i = 0; i < st.pair_count; i++)
    assert_true(st.pairs[i].a != empty && st.pairs[i].b != empty);

  int twins = 0;
  for (size_t i = 0; i < st.pair_count; i++) {
    const tl_pair_stats *p = &st.pairs[i];
    if (strcmp(cmp.groups[p->a].label, "steady") || strcmp(cmp.groups[p->b].label, "twin"))
      continue;
    twins++;
    for (size_t k = 0; k <= last; k++) {
      assert_false(p->clear[k]);
      assert_false(json_bool(json_at(out, "pairs.%zu.percentiles.%zu.clear", i, k)));
      assert_int_equal(json_int(json_at(out, "pairs.%zu.percentiles.%zu.diff_ns", i, k)), 0);
      assert_non_null(strstr(json_at(out, "pairs.%zu.percentiles.%zu.sentence", i, k),
                             "\"no clear difference between steady and twin"));
    }
  }
  assert_int_equal(twins, 1);

  /* Same database, same bytes. */
  char *again = run_report(a, 0, NULL);
  assert_string_equal(again, out);
  free(again);
  tl_stats_free(&st);
  tl_comparison_free(&cmp);
  free(out);
}

/* tl_fput_json against each piece's escape worked out here, over strings
 * of random pieces: printable runs, quotes and backslashes, control bytes,
 * UTF-8 of two to four bytes, C1 and bidi controls (escaped, inert) and
 * bytes that are not UTF-8 (U+FFFD), so that each piece meets every other
 * at a run's ends. */
static void json_string_piece_by_piece(void **state) {
  (void)state;
  static const char *const piece[][2] = {{"plain text ", "plain text "},
                                         {"a", "a"},
                                         {"~", "~"},
                                         {"\"", "\\\""},
                                         {"\\", "\\\\"},
                                         {"\x01", "\\u0001"},
                                         {"\x1f", "\\u001f"},
                                         {"\x7f", "\\u007f"},
                                         {"\n", "\\u000a"},
                                         {"\xc3\xa9", "\xc3\xa9"},
                                         {"\xe2\x82\xac", "\xe2\x82\xac"},
                                         {"\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80"},
                                         {"\xc2\x85", "\\u0085"},
                                         {"\xe2\x80\xae", "\\u202e"},
                                         {"\xff", "\\ufffd"},
                                         {"\x80", "\\ufffd"}};
  enum { PIECES = sizeof piece / sizeof piece[0] };
  uint64_t r = 0x9e3779b97f4a7c15ULL;
  for (int round = 0; round < 3000; round++) {
    char in[512] = "", want[1024] = "\"";
    r ^= r << 13, r ^= r >> 7, r ^= r << 17;
    for (int k = (int)(r % 30); k > 0; k--) {
      r ^= r << 13, r ^= r >> 7, r ^= r << 17;
      strcat(in, piece[r % PIECES][0]);
      strcat(want, piece[r % PIECES][1]);
    }
    strcat(want, "\"");
    size_t len;
    char *buf = json_of(in, &len);
    assert_string_equal(buf, want);
    free(buf);
  }
}

/* A label no tl program would accept (quotes, backslash, control
 * characters, bytes that are not UTF-8) leaves the statistics valid JSON. */
static void json_statistics_hostile_label(void **state) {
  fixture *f = *state;
  build_golden_db(f->db);
  static const char bad[] = "q\"uote\\back\x01\x1f\x7f\n\xff\xc3(</script>";
  sqlite3 *db;
  sqlite3_stmt *stmt;
  assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
  assert_int_equal(sqlite3_prepare_v2(db, "UPDATE sessions SET label = ? WHERE label = 'macos'", -1,
                                      &stmt, NULL),
                   SQLITE_OK);
  sqlite3_bind_text(stmt, 1, bad, -1, SQLITE_STATIC);
  assert_int_equal(sqlite3_step(stmt), SQLITE_DONE);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  char *a[] = {TLREPORT, "--db", f->db, "--format", "json", NULL};
  char *out = run_report(a, 0, NULL);
  assert_json(out);
  tl_comparison cmp;
  tl_stats st;
  stats_of(f->db, NULL, 0, &cmp, &st);
  assert_true(st.pair_count >= 1);
  assert_json_stats(out, &cmp, &st);
  /* The sentence names the label, escaped: the quote and backslash kept,
   * the controls as \u escapes, the broken bytes as U+FFFD. */
  const char *s = json_at(out, "pairs.0.percentiles.0.sentence");
  const char *end = tl_test_json_string(s);
  char *text = strndup(s, (size_t)(end - s));
  assert_non_null(strstr(text, "q\\\"uote\\\\back\\u0001\\u001f\\u007f\\u000a\\ufffd\\ufffd("));
  free(text);
  tl_stats_free(&st);
  tl_comparison_free(&cmp);
  free(out);
}

/* ======================================================================== */
/* HTML and the site                                                         */

static int have(const char *path) { return access(path, X_OK) == 0; }

/* tidy -errors -q prints nothing and exits 0 for a clean page. */
static void assert_tidy(const char *file) {
  if (!have("/usr/bin/tidy")) {
    tl_test_skip_part("no /usr/bin/tidy (.ci/run installs it): the page is not checked by tidy");
    return;
  }
  char *out, *err;
  char *a[] = {"/usr/bin/tidy", "-errors", "-q", (char *)file, NULL};
  int rc = tl_test_run(a, NULL, &out, &err);
  if (rc != 0)
    fail_msg("tidy on %s: exit %d: %s", file, rc, err);
  free(out);
  free(err);
}

static void assert_escaped(const char *html, int has_tags) {
  /* The page has no script at all; the hostile tag and image show as text. */
  for (const char *p = html; (p = strchr(p, '<')); p++)
    if (strncasecmp(p, "<script", 7) == 0 || strncasecmp(p, "<img", 4) == 0)
      fail_msg("raw markup from user text: %.60s", p);
  if (has_tags)
    assert_non_null(strstr(html, "&lt;script&gt;alert(1)&lt;/script&gt;"));
}

/* The text of the first element after `from` whose tag starts with
 * `open`, into buf ("" when there is none before `end`). */
static void text_after(const char *from, const char *end, const char *open, char *buf, size_t len) {
  const char *p = strstr(from, open);
  buf[0] = '\0';
  if (!p || (end && p > end))
    return;
  p = strchr(p, '>') + 1;
  size_t n = strcspn(p, "<");
  snprintf(buf, len, "%.*s", (int)(n < len ? n : len - 1), p);
}

/* Charts at the data's scale: 2,000 samples 100 to 300 µs late and 30
 * spikes of 20 ms (p99 among them). The histogram spans the bulk in µs
 * and counts the spikes in its overflow bar; the percentile and trend
 * charts put lateness on a log axis that reaches from µs to the spikes. */
static void charts_at_the_data_scale(void **state) {
  fixture *f = *state;
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  int64_t v[2030];
  for (int i = 0; i < 2000; i++)
    v[i] = 1000000 + 100000 + (int64_t)(i * 7919 % 2000) * 100;
  for (int i = 2000; i < 2030; i++)
    v[i] = 1000000 + 20000000;
  add_session(s, "run1", "spiky", &vbox_host, 1000000, v, 2030);
  tl_store_close(s);
  char *file = tl_test_path(f->dir, "page.html");
  char *a[] = {TLREPORT, "--db", f->db, "--format", "html", "-o", file, NULL};
  free(run_report(a, 0, NULL));
  char *html = tl_test_read_file(file, NULL);
  assert_non_null(html);
  const char *hist = strstr(html, "<title>Histogram, spiky,");
  assert_non_null(hist);
  const char *end = strstr(hist, "</svg>");
  /* The bulk in µs, not 20 ms of mostly empty axis. */
  assert_non_null(strstr(hist, ">Lateness (\xC2\xB5s)</text>"));
  assert_true(strstr(hist, ">Lateness (\xC2\xB5s)</text>") < end);
  assert_non_null(strstr(hist, "30 samples beyond that, up to 20.00 ms late"));
  /* The overflow bar's count, and y ticks short enough for the margin. */
  assert_non_null(strstr(hist, "text-anchor=\"end\">30</text>"));
  char tick[64];
  text_after(hist, end, "<text x=\"66.0\"", tick, sizeof tick);
  assert_true(strlen(tick) > 0);
  assert_true(strlen(tick) <= 7); /* ">1.2k" and the like, never "150000" */
  /* The percentile chart on a log axis from 100 µs or less up to 20 ms or more. */
  const char *spec = strstr(html, "<title>Lateness by percentile,");
  assert_non_null(spec);
  const char *send = strstr(spec, "</svg>");
  const char *t100 = strstr(spec, ">100 \xC2\xB5s</text>"), *t10 = strstr(spec, ">10 ms</text>");
  assert_true(t100 && t100 < send && t10 && t10 < send);
  assert_non_null(strstr(spec, ">Lateness (log scale)</text>"));
  free(html);
  free(file);
}

static void html_page(void **state) {
  fixture *f = *state;
  build_golden_db(f->db);
  char *file = tl_test_path(f->dir, "page.html");
  char *a[] = {TLREPORT, "--db", f->db, "--format", "html", "-o", file, NULL};
  free(run_report(a, 0, NULL));
  char *html = tl_test_read_file(file, NULL);
  assert_non_null(html);
  assert_true(strncmp(html, "<!DOCTYPE html><!-- tl-report", 29) == 0);
  assert_escaped(html, 1);
  assert_non_null(strstr(html, "&lt;img src=x&gt;"));
  /* Charts: the answer box's dots per delay, a percentile spectrum and a trend
   * per delay, and a histogram per label and delay. */
  size_t svgs = 0;
  for (const char *p = html; (p = strstr(p, "<svg ")); p++)
    svgs++;
  assert_int_equal(svgs, 2 + 2 * 2 + 3);
  assert_non_null(strstr(
      html, "<title>Lateness of setTimeout(0): p50, p90 and p99 with 95% intervals</title>"));
  /* The answer box comes first, and every section has its anchor. */
  const char *box = strstr(html, "<section class=\"answer\" id=\"summary\">");
  assert_non_null(box);
  assert_true(box < strstr(html, "id=\"lateness-by-delay\""));
  assert_non_null(strstr(html, "href=\"#how-it-was-measured\""));
  assert_non_null(strstr(html, "<h2 id=\"how-it-was-measured\">"));
  assert_non_null(strstr(html, "<title>Lateness by percentile, setTimeout(0)</title>"));
  /* vbox's curve at 0 ms stops at p99, the highest percentile its 1,000
   * samples put 10 above: 7 points (0, 25, 50, 75, 90, 95, 99); macos's 3
   * samples give its minimum only. */
  const char *spec = strstr(html, "<title>Lateness by percentile, setTimeout(0)</title>");
  const char *line = strstr(spec, "<g class=\"s1\"><polyline"); /* vbox, the second label */
  assert_non_null(line);
  const char *pts = strstr(line, "points=\"") + 8;
  size_t points = 1;
  for (const char *q = pts; *q != '"'; q++)
    points += *q == ' ';
  assert_int_equal(points, 7);
  assert_non_null(strstr(html, "prefers-color-scheme:dark"));
  /* Nothing is fetched from elsewhere: the only URL is the SVG namespace. */
  size_t urls = 0, ns = 0;
  for (const char *p = html; (p = strstr(p, "http")); p++)
    urls++;
  for (const char *p = html; (p = strstr(p, "http://www.w3.org/2000/svg")); p++)
    ns++;
  assert_int_equal(urls, ns);
  assert_tidy(file);
  free(html);
  free(file);
}

/* Every href="..." of a page names a file of the site. */
static void assert_links(const char *dir, const char *page, size_t *count) {
  char *path = tl_test_path(dir, page);
  char *html = tl_test_read_file(path, NULL);
  assert_non_null(html);
  for (const char *p = html; (p = strstr(p, "href=\"")); p++) {
    p += 6;
    const char *q = strchr(p, '"');
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)(q - p), p);
    if (strchr(name, '/') || strchr(name, ':'))
      fail_msg("%s: link %s is not a relative name in the site", page, name);
    if (name[0] == '#') { /* an anchor of this page */
      char id[300];
      snprintf(id, sizeof id, "id=\"%s\"", name + 1);
      if (!strstr(html, id))
        fail_msg("%s: anchor %s is not on the page", page, name);
      (*count)++;
      continue;
    }
    char *target = tl_test_path(dir, name);
    if (access(target, R_OK) != 0)
      fail_msg("%s: link %s does not resolve", page, name);
    free(target);
    (*count)++;
  }
  assert_escaped(html, strcmp(page, "index.html") != 0);
  assert_tidy(path);
  free(html);
  free(path);
}

static const char *const site_pages[] = {
    "index.html",
    "compare.html",
    "label-vbox.html",
    "label-macos.html",
    "host-aaaa000000000001.html",
    "host-bbbb000000000002.html",
};

/* The style class (0..6) of label's series on a page: of its histograms,
 * its legend entries and its index sparkline; -1 when the page has none,
 * -2 when two of them differ. */
static int label_style(const char *html, const char *label) {
  int style = -1;
  char title[128], legend[128], spark[128];
  snprintf(title, sizeof title, "<title>Histogram, %s, ", label);
  snprintf(legend, sizeof legend, "text-anchor=\"start\">%s</text>", label);
  snprintf(spark, sizeof spark, "\">%s</a>", label);
  for (const char *p = html; (p = strstr(p, title)); p++) {
    const char *g = strstr(p, "<g class=\"s");
    int k = g ? g[11] - '0' : -2;
    style = style == -1 || style == k ? k : -2;
  }
  /* A legend entry: the <g class="sN"> just before the label's text. */
  for (const char *p = html; (p = strstr(p, legend)); p++) {
    const char *g = p;
    while (g > html && strncmp(g, "<g class=\"s", 11) != 0)
      g--;
    int k = g > html ? g[11] - '0' : -2;
    style = style == -1 || style == k ? k : -2;
  }
  for (const char *p = html; (p = strstr(p, spark)); p++) {
    const char *l = strstr(p, "class=\"line s");
    const char *row = strstr(p, "</tr>");
    if (!l || (row && l > row))
      continue;
    int k = l[13] - '0';
    style = style == -1 || style == k ? k : -2;
  }
  return style;
}

/* One colour and marker per label across every page of a site: vbox's on
 * the comparison, its label page, its host's page and the index is one,
 * macos's another, though macos is the only label of its own pages. */
static void one_colour_per_label(void **state) {
  fixture *f = *state;
  build_golden_db(f->db);
  char *dir = tl_test_path(f->dir, "site");
  char *a[] = {TLREPORT, "--db", f->db, "--site", dir, NULL};
  free(run_report(a, 0, NULL));
  static const char *const labels[] = {"vbox", "macos"};
  int style[2] = {-1, -1}, seen[2] = {0, 0};
  for (size_t i = 0; i < sizeof site_pages / sizeof *site_pages; i++) {
    char *path = tl_test_path(dir, site_pages[i]);
    char *html = tl_test_read_file(path, NULL);
    assert_non_null(html);
    for (int l = 0; l < 2; l++) {
      int k = label_style(html, labels[l]);
      if (k == -2)
        fail_msg("%s: %s has two colours on one page", site_pages[i], labels[l]);
      if (k < 0)
        continue;
      if (style[l] >= 0 && style[l] != k)
        fail_msg("%s: %s is s%d here, s%d elsewhere", site_pages[i], labels[l], k, style[l]);
      style[l] = k;
      seen[l]++;
    }
    free(html);
    free(path);
  }
  /* compare, label and host pages, and vbox's sparkline on the index */
  assert_true(seen[0] >= 4 && seen[1] >= 3);
  assert_int_not_equal(style[0], style[1]);
  free(dir);
}

/* The pages of a Markdown site (--site DIR --format md), as a reader
 * publishes them on GitHub: every relative link of every page, before and
 * after cmark renders it, names a page or an SVG file of the site; each
 * page links its charts as images; one colour per label across the
 * pages' chart files, as in the HTML site. */
static const char *const md_site_pages[] = {
    "index.md",
    "compare.md",
    "label-vbox.md",
    "label-macos.md",
    "host-aaaa000000000001.md",
    "host-bbbb000000000002.md",
};

/* Checks every link of rendered HTML (attr: "src=\"" or "href=\"") names
 * a file of dir; returns how many. */
static size_t rendered_links(const char *dir, const char *page, const char *html,
                             const char *attr) {
  size_t n = 0, at = strlen(attr);
  for (const char *p = html; (p = strstr(p, attr)); p++) {
    p += at;
    const char *q = strchr(p, '"');
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)(q - p), p);
    if (name[0] == '#')
      continue; /* GitHub makes a heading's anchor from its text */
    if (strchr(name, '/') || strchr(name, ':'))
      fail_msg("%s: link %s is not a relative name in the site", page, name);
    char *target = tl_test_path(dir, name);
    if (access(target, R_OK) != 0)
      fail_msg("%s: %s links %s, which was not written", page, attr, name);
    free(target);
    n++;
  }
  return n;
}

static void markdown_site(void **state) {
  fixture *f = *state;
  build_golden_db(f->db);
  char *dir = tl_test_path(f->dir, "site");
  char *a[] = {TLREPORT, "--db", f->db, "--site", dir, "--format", "md", NULL};
  free(run_report(a, 0, NULL));
  static const char *const labels[] = {"vbox", "macos"};
  int style[2] = {-1, -1}, seen[2] = {0, 0};
  size_t images = 0, pages = 0, files = 0;
  for (size_t i = 0; i < sizeof md_site_pages / sizeof *md_site_pages; i++) {
    char *path = tl_test_path(dir, md_site_pages[i]);
    char *md = tl_test_read_file(path, NULL);
    if (!md)
      fail_msg("%s was not written", md_site_pages[i]);
    assert_true(strncmp(md, "<!-- tl-report", 14) == 0);
    assert_non_null(strstr(md, "[All labels and hosts](index.md)"));
    char *html = cmark_markdown_to_html(md, strlen(md), CMARK_OPT_DEFAULT);
    assert_non_null(html);
    size_t img = rendered_links(dir, md_site_pages[i], html, "<img src=\"");
    pages += rendered_links(dir, md_site_pages[i], html, "href=\"");
    /* Each label's style in each chart file: one per page. */
    int k[2] = {-1, -1};
    for (const char *p = html; (p = strstr(p, "<img src=\"")); p++) {
      char name[256];
      assert_int_equal(sscanf(p + 10, "%255[^\"]", name), 1);
      char *svg = tl_test_path(dir, name);
      char *data = tl_test_read_file(svg, NULL);
      assert_non_null(data);
      assert_true(strncmp(data, "<!-- tl-report", 14) == 0);
      assert_non_null(strstr(data, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
      for (int l = 0; l < 2; l++) {
        int here = label_style(data, labels[l]);
        if (here == -1)
          continue;
        k[l] = k[l] == -1 || k[l] == here ? here : -2;
      }
      if (i == 0) /* the index: a row's sparkline follows the label's link */
        for (int l = 0; l < 2; l++) {
          char row[64];
          snprintf(row, sizeof row, "[%s](label-%s.md) | ", labels[l], labels[l]);
          const char *line = strstr(data, "class=\"line s");
          for (const char *r = md; line && (r = strstr(r, row)); r++) {
            const char *end = strchr(r, '\n'), *at = strstr(r, name);
            if (at && at < end)
              k[l] = k[l] == -1 || k[l] == line[13] - '0' ? line[13] - '0' : -2;
          }
        }
      free(data);
      free(svg);
    }
    for (int l = 0; l < 2; l++) {
      if (k[l] == -2)
        fail_msg("%s: %s has two colours on one page", md_site_pages[i], labels[l]);
      if (k[l] < 0)
        continue;
      if (style[l] >= 0 && style[l] != k[l])
        fail_msg("%s: %s is s%d here, s%d elsewhere", md_site_pages[i], labels[l], k[l], style[l]);
      style[l] = k[l];
      seen[l]++;
    }
    if (i > 0 && !img)
      fail_msg("%s links no chart", md_site_pages[i]);
    images += img;
    files++;
    free(html);
    free(md);
    free(path);
  }
  assert_int_equal(files, 6);
  assert_true(images >= 6 + 5 + 3);
  assert_true(pages >= 6 * 2); /* every page's way back to the index and comparison */
  assert_true(seen[0] >= 4 && seen[1] >= 3);
  assert_int_not_equal(style[0], style[1]);
  /* Markdown only: no HTML page beside it. */
  char *html_page = tl_test_path(dir, "index.html");
  assert_int_not_equal(access(html_page, F_OK), 0);
  free(html_page);
  /* A chart an earlier run wrote that this one does not goes with it (a
   * page of fewer charts); a file of the user's stays. */
  char *chart = tl_test_path(dir, "compare-1.svg"), *stale = tl_test_path(dir, "compare-40.svg"),
       *theirs = tl_test_path(dir, "compare-41.svg");
  size_t len;
  char *data = tl_test_read_file(chart, &len);
  assert_int_equal(tl_test_write_file(stale, data, len), 0);
  assert_int_equal(tl_test_write_file(theirs, "mine\n", 5), 0);
  free(run_report(a, 0, NULL));
  assert_int_not_equal(access(stale, F_OK), 0);
  assert_int_equal(access(theirs, F_OK), 0);
  assert_int_equal(access(chart, F_OK), 0);
  free(data);
  free(chart);
  free(stale);
  free(theirs);
  /* JSON is no site. */
  char *j[] = {TLREPORT, "--db", f->db, "--site", dir, "--format", "json", NULL};
  char *err;
  free(run_report(j, 2, &err));
  assert_non_null(strstr(err, "--site"));
  free(err);
  free(dir);
}

/* A label that cycles through the values of --by (a droplet resized each
 * run between 512M and 1G, far apart in lateness) has an index sparkline
 * of its trend: the median of each day's sessions, flat here, not the
 * sawtooth of one point a session. Its imports are listed once per
 * command, not once per import. */
static void index_trend_under_by(void **state) {
  fixture *f = *state;
  char *csv[2] = {tl_test_path(f->dir, "slow.csv"), tl_test_path(f->dir, "fast.csv")};
  for (int k = 0; k < 2; k++) {
    char data[2000];
    size_t at = 0;
    for (int i = 0; i < 50; i++)
      at += (size_t)snprintf(data + at, sizeof data - at, "%d\n", (k ? 1200 : 3000) + i);
    assert_int_equal(tl_test_write_file(csv[k], data, at), 0);
  }
  for (int day = 0; day < 6; day++)
    for (int run = 0; run < 4; run++) {
      char start[32];
      snprintf(start, sizeof start, "2026-11-%02dT%02d:00:00Z", day + 1, run * 6);
      char *a[] = {TLSTORE,
                   "--db",
                   f->db,
                   "import",
                   "--format",
                   "csv",
                   csv[run % 2],
                   "--label",
                   "drop",
                   "--probe",
                   "uv",
                   "--delay",
                   "1ms",
                   "--unit",
                   "us",
                   "--start",
                   start,
                   "--fact",
                   run % 2 ? "memory=1G" : "memory=512M",
                   NULL};
      char *out, *err;
      if (tl_test_run(a, NULL, &out, &err) != 0)
        fail_msg("import: %s", err);
      free(out);
      free(err);
    }
  /* Its 24 imports are two commands (one per size), each once with what
   * its other imports change. */
  char *m[] = {TLREPORT, "--db", f->db, NULL};
  char *md = run_report(m, 0, NULL);
  size_t blocks = 0;
  for (const char *p = md; (p = strstr(p, "```sh\ntlstore import ")); p++)
    blocks++;
  assert_int_equal(blocks, 2);
  assert_non_null(strstr(md, " on imported, 12 imports from 2026-11-01 to 2026-11-06 (UTC), the "
                             "first:"));
  assert_non_null(strstr(md, "The others differ from it only in `--start`.\n"));
  free(md);
  for (int by = 0; by < 2; by++) {
    char *dir = tl_test_path(f->dir, by ? "by" : "plain");
    char *a[] = {TLREPORT, "--db", f->db, "--site", dir, by ? "--by" : NULL, "memory", NULL};
    free(run_report(a, 0, NULL));
    char *index = tl_test_path(dir, "index.html");
    char *html = tl_test_read_file(index, NULL);
    assert_non_null(html);
    const char *spark = strstr(html, "<svg class=\"spark\"");
    assert_non_null(spark);
    double y[64];
    size_t n = points_ys(strstr(spark, "points=\""), y, 64), flat = 0;
    for (size_t k = 0; k < n; k++)
      flat += y[k] == 12.0;
    if (by) {
      assert_non_null(strstr(spark, "the median p90 lateness of each of the last 6 days"));
      assert_int_equal(n, 6);
      assert_int_equal(flat, 6);
    } else { /* by label alone: a point a session, the sizes' zigzag as it is */
      assert_non_null(strstr(spark, "p90 lateness of the last 24 sessions"));
      assert_int_equal(n, 24);
      assert_int_equal(flat, 0);
    }
    free(html);
    free(index);
    free(dir);
  }
  free(csv[0]);
  free(csv[1]);
}

/* The names in dir, one a line, without SQLite's -wal and -shm files. */
static char *list_dir(const char *dir) {
  char *out;
  char *ls[] = {"/bin/ls", "-A", (char *)dir, NULL};
  tl_test_run(ls, NULL, &out, NULL);
  char *w = out;
  for (char *line = out; *line;) {
    char *nl = strchr(line, '\n');
    size_t n = nl ? (size_t)(nl - line + 1) : strlen(line);
    if (strncmp(line, "tl.db-", 6) != 0) {
      memmove(w, line, n);
      w += n;
    }
    line += n;
  }
  *w = '\0';
  return out;
}

/* With --last, each host page keeps that host's newest sessions, not those
 * of the whole site: alpha's and beta's alternate, so the site's last two
 * are one of each, while each host page holds two of its host's. */
static void site_last_per_host(void **state) {
  fixture *f = *state;
  char *csv = csv_in(f->dir);
  static const char *const hosts[] = {"alpha", "beta", "alpha", "beta"};
  for (int k = 0; k < 4; k++)
    import_csv(f->db, csv, "x", hosts[k]);
  char *dir = tl_test_path(f->dir, "site");
  char *a[] = {TLREPORT, "--db", f->db, "--last", "2", "--site", dir, NULL};
  free(run_report(a, 0, NULL));
  for (int k = 0; k < 2; k++) {
    char name[64], h1[64];
    snprintf(name, sizeof name, "host-imported-%s.html", hosts[k]);
    snprintf(h1, sizeof h1, "<h1>Timer latency on host %s</h1>", hosts[k]);
    char *path = tl_test_path(dir, name);
    char *page = tl_test_read_file(path, NULL);
    assert_non_null(page);
    assert_non_null(strstr(page, h1));
    assert_non_null(strstr(page, "x: p90 is 269.0 µs late (2 sessions)."));
    free(page);
    free(path);
  }
  free(dir);
  free(csv);
}

static void site(void **state) {
  fixture *f = *state;
  build_golden_db(f->db);
  char *dir = tl_test_path(f->dir, "site");
  char *a[] = {TLREPORT, "--db", f->db, "--site", dir, NULL};
  free(run_report(a, 0, NULL));
  size_t links = 0;
  char *first[6];
  for (size_t i = 0; i < 6; i++) {
    assert_links(dir, site_pages[i], &links);
    char *p = tl_test_path(dir, site_pages[i]);
    first[i] = tl_test_read_file(p, NULL);
    free(p);
  }
  assert_true(links > 20);
  /* The index says each label's recent p90 lateness per delay, the median
   * of its last sessions' p90s: vbox's 50 ms sessions {50.1, 50.2} and
   * {50.3, 50.4, 60.0} have p90s 0.20 and 10.00 ms late, median 5.10 ms; they
   * make a sparkline; no lasting change with so few. It answers first. */
  assert_non_null(strstr(first[0], "<th class=\"n\">recent p90 late</th>"));
  const char *answer = strstr(first[0], "<li>setTimeout(50): vbox 5.10 ms.</li>");
  assert_non_null(answer);
  assert_true(answer < strstr(first[0], "<h2>Labels</h2>"));
  assert_non_null(strstr(first[0], "<td><a href=\"label-vbox.html\">vbox</a></td><td "
                                   "data-h=\"delay\">setTimeout(50)</td><td class=\"n\" "
                                   "data-h=\"recent p90 late\">5.10 ms</td><td data-h=\"last "
                                   "sessions\"><svg class=\"spark\""));
  assert_non_null(strstr(first[0], "</svg></td><td data-h=\"changes\">none</td></tr>"));
  /* A second run gives the same bytes. */
  free(run_report(a, 0, NULL));
  for (size_t i = 0; i < 6; i++) {
    char *p = tl_test_path(dir, site_pages[i]);
    char *again = tl_test_read_file(p, NULL);
    assert_string_equal(again, first[i]);
    free(again);
    free(first[i]);
    free(p);
  }
  /* Nothing else was written, inside or beside the site. */
  char *out = list_dir(f->dir);
  assert_string_equal(out, "site\ntl.db\n");
  free(out);
  out = list_dir(dir);
  assert_string_equal(out, "compare.html\nhost-aaaa000000000001.html\nhost-bbbb000000000002.html\n"
                           "index.html\nlabel-macos.html\nlabel-vbox.html\n");
  free(out);
  free(dir);
}

/* A page of one label, or of one host, speaks of that label alone: no
 * comparison wording, no "only vbox:". */
static void one_label_pages(void **state) {
  fixture *f = *state;
  build_golden_db(f->db);
  char *dir = tl_test_path(f->dir, "site");
  char *a[] = {TLREPORT, "--db", f->db, "--site", dir, NULL};
  free(run_report(a, 0, NULL));
  char *b[] = {TLREPORT, "--db", f->db, "--compare", "vbox", NULL};
  char *md = run_report(b, 0, NULL);
  const char *pages[] = {"label-vbox.html", "host-aaaa000000000001.html"};
  char *text[3] = {md, NULL, NULL};
  for (size_t i = 0; i < 2; i++) {
    char *path = tl_test_path(dir, pages[i]);
    text[i + 1] = tl_test_read_file(path, NULL);
    assert_non_null(text[i + 1]);
    free(path);
  }
  for (size_t i = 0; i < 3 && getenv("TL_DUMP_ONE_LABEL"); i++)
    fprintf(stderr, "==== %zu\n%s\n", i, text[i]);
  for (size_t i = 0; i < 3; i++) {
    assert_null(strstr(text[i], "each other label"));
    assert_null(strstr(text[i], "only vbox"));
    assert_null(strstr(text[i], "so not compared"));
    assert_null(strstr(text[i], "clearly the least late"));
    assert_non_null(strstr(text[i], "vbox: p90 is "));
  }
  /* A host page opens with the host's facts, first in its contents too. */
  const char *facts = strstr(text[2], "id=\"host-facts\"");
  assert_non_null(facts);
  assert_true(facts < strstr(text[2], "id=\"summary\""));
  const char *toc = strstr(text[2], "href=\"#host-facts\"");
  assert_non_null(toc);
  assert_true(toc < strstr(text[2], "href=\"#summary\""));
  assert_null(strstr(text[1], "host-facts"));
  for (size_t i = 0; i < 3; i++)
    free(text[i]);
  free(dir);
}

/* A label that tl would refuse (written by another program into the
 * database) is still escaped everywhere, and never becomes a file name. */
static void hostile_label(void **state) {
  fixture *f = *state;
  build_golden_db(f->db);
  sqlite3 *db;
  assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
  assert_int_equal(sqlite3_exec(db,
                                "UPDATE sessions SET label = '../<b onclick=alert(1)>x|*' "
                                "WHERE label = 'macos'",
                                NULL, NULL, NULL),
                   SQLITE_OK);
  sqlite3_close(db);
  char *a[] = {TLREPORT, "--db", f->db, NULL};
  char *out = run_report(a, 0, NULL);
  assert_non_null(strstr(out, "On ../\\<b onclick=alert(1)\\>x\\|\\*, 90 percent"));
  assert_non_null(strstr(out, "| ../\\<b onclick=alert(1)\\>x\\|\\* | 1.00 | 2.00 |"));
  free(out);
  char *dir = tl_test_path(f->dir, "site");
  char *b[] = {TLREPORT, "--db", f->db, "--site", dir, NULL};
  free(run_report(b, 0, NULL));
  size_t links = 0;
  assert_links(dir, "compare.html", &links);
  assert_links(dir, "index.html", &links);
  char *path = tl_test_path(dir, "compare.html");
  char *html = tl_test_read_file(path, NULL);
  assert_non_null(strstr(html, "../&lt;b onclick=alert(1)&gt;x|*"));
  assert_null(strstr(html, "<b onclick"));
  free(html);
  free(path);
  out = list_dir(dir);
  assert_string_equal(out, "compare.html\nhost-aaaa000000000001.html\nhost-bbbb000000000002.html\n"
                           "index.html\nlabel-vbox.html\n");
  free(out);
  out = list_dir(f->dir);
  assert_string_equal(out, "site\ntl.db\n");
  free(out);
  free(dir);
}

/* -o and --site replace only tl's own files, never follow a link, and leave
 * nothing behind when they refuse. */
static void replacing_files(void **state) {
  fixture *f = *state;
  build_golden_db(f->db);
  char *mine = tl_test_path(f->dir, "notes.md");
  assert_int_equal(tl_test_write_file(mine, "my notes\n", 9), 0);
  char *err;
  char *a[] = {TLREPORT, "--db", f->db, "-o", mine, NULL};
  free(run_report(a, 1, &err));
  assert_non_null(strstr(err, "was not written by tlreport"));
  free(err);
  char *kept = tl_test_read_file(mine, NULL);
  assert_string_equal(kept, "my notes\n");
  free(kept);
  char *listed = list_dir(f->dir); /* and none of its charts written */
  assert_string_equal(listed, "notes.md\ntl.db\n");
  free(listed);
  char *b[] = {TLREPORT, "--db", f->db, "-o", mine, "--force", NULL};
  free(run_report(b, 0, NULL));
  kept = tl_test_read_file(mine, NULL);
  assert_true(strncmp(kept, "<!-- tl-report", 14) == 0);
  free(kept);

  /* A link inside the site that points outside: refused, target untouched;
   * with --force the link itself is replaced. */
  char *dir = tl_test_path(f->dir, "site");
  char *outside = tl_test_path(f->dir, "outside.txt");
  assert_int_equal(tl_test_write_file(outside, "precious\n", 9), 0);
  assert_int_equal(mkdir(dir, 0755), 0);
  char *link = tl_test_path(dir, "index.html");
  assert_int_equal(symlink(outside, link), 0);
  char *c[] = {TLREPORT, "--db", f->db, "--site", dir, NULL};
  free(run_report(c, 1, &err));
  assert_non_null(strstr(err, "symbolic link"));
  free(err);
  char *d[] = {TLREPORT, "--db", f->db, "--site", dir, "--force", NULL};
  free(run_report(d, 0, NULL));
  kept = tl_test_read_file(outside, NULL);
  assert_string_equal(kept, "precious\n");
  free(kept);
  struct stat st;
  assert_int_equal(lstat(link, &st), 0);
  assert_true(S_ISREG(st.st_mode));
  /* No temporary file is left behind. */
  char *out = list_dir(f->dir);
  assert_string_equal(out, "notes-1.svg\nnotes-2.svg\nnotes-3.svg\nnotes-4.svg\nnotes-5.svg\n"
                           "notes-6.svg\nnotes-7.svg\nnotes.md\noutside.txt\nsite\ntl.db\n");
  free(out);
  free(link);
  free(outside);
  free(dir);
  free(mine);
}

/* Without the bullet lines that name the left-out session. */
static char *without_left_out(char *page) {
  char *w = page;
  for (char *line = page; *line;) {
    char *nl = strchr(line, '\n');
    size_t n = nl ? (size_t)(nl - line + 1) : strlen(line);
    if (!strstr(line, "Left out") || (nl && strstr(line, "Left out") > nl)) {
      memmove(w, line, n);
      w += n;
    }
    line += n;
  }
  *w = '\0';
  return page;
}

/* One block of one session damaged: by default the report fails naming the
 * session and block; with --skip-damaged the session is left out, every
 * format says which and why, and the numbers are exactly those of a report
 * over the database without that session. */
static void skip_damaged_session(void **state) {
  fixture *f = *state;
  build_golden_db(f->db);
  char *clean = tl_test_path(f->dir, "clean.db");
  assert_int_equal(tl_test_copy_file(f->db, clean), 0);
  sqlite3 *db;
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
  assert_int_equal(
      sqlite3_prepare_v2(db, "SELECT " TL_TEST_UUID_TEXT("uuid") " FROM sessions WHERE id = 2", -1,
                         &st, NULL),
      SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  char uuid[40];
  snprintf(uuid, sizeof uuid, "%s", (const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  sqlite3_close(db);
  /* One bit of its only block flipped: the block's checksum fails. */
  tl_test_flip_block_bits(f->db, "id = 2");
  char *del[] = {TLSTORE, "--db", clean, "delete", uuid, NULL};
  char *out, *err;
  assert_int_equal(tl_test_run(del, NULL, &out, &err), 0);
  free(out);
  free(err);

  char want[256];
  snprintf(want, sizeof want, "session %s, block 0: checksum mismatch", uuid);
  char *a[] = {TLREPORT, "--db", f->db, NULL};
  free(run_report(a, 1, &err));
  assert_true(tl_test_one_line(err));
  assert_non_null(strstr(err, want));
  free(err);

  static const char *const formats[] = {"md", "html", "json"};
  for (size_t i = 0; i < 3; i++) {
    char *b[] = {TLREPORT, "--db", f->db, "--skip-damaged", "--format", (char *)formats[i], NULL};
    char *c[] = {TLREPORT, "--db", clean, "--format", (char *)formats[i], NULL};
    char *skipped = run_report(b, 0, NULL), *expected = run_report(c, 0, NULL);
    char said[512];
    if (i < 2) {
      snprintf(said, sizeof said,
               "Left out</strong>: session %s of <strong>vbox</strong> (started "
               "2026-11-01T12:00:00Z): its samples failed verification: ",
               uuid);
      if (i == 0)
        snprintf(said, sizeof said,
                 "- **Left out**: session %s of **vbox** (started 2026-11-01T12:00:00Z): its "
                 "samples failed verification: ",
                 uuid);
      if (!strstr(skipped, said) || !strstr(skipped, "block 0: checksum mismatch"))
        fail_msg("%s page does not say '%s'", formats[i], said);
      assert_string_equal(without_left_out(skipped), expected);
    } else {
      snprintf(said, sizeof said,
               "\"left_out\": [\n  {\"uuid\": \"%s\", \"label\": \"vbox\", \"started_ns\": ", uuid);
      assert_non_null(strstr(skipped, said));
      assert_non_null(strstr(skipped, "block 0: checksum mismatch"));
      assert_non_null(strstr(expected, "\"left_out\": [],"));
      assert_string_equal(strstr(skipped, "\"groups\""), strstr(expected, "\"groups\""));
    }
    free(skipped);
    free(expected);
  }
  /* The site: every comparison page and the index say so. */
  char *dir = tl_test_path(f->dir, "site");
  char *d[] = {TLREPORT, "--db", f->db, "--site", dir, "--skip-damaged", NULL};
  free(run_report(d, 0, NULL));
  static const char *const pages[] = {"index.html", "compare.html", "label-vbox.html",
                                      "host-aaaa000000000001.html"};
  for (size_t i = 0; i < 4; i++) {
    char *p = tl_test_path(dir, pages[i]);
    char *html = tl_test_read_file(p, NULL);
    if (!html || !strstr(html, uuid) || !strstr(html, "checksum mismatch"))
      fail_msg("%s does not name the session left out", pages[i]);
    free(html);
    free(p);
  }
  /* --check says first which session it left out, and why; its findings
   * and exit status are those of the store without that session. Without
   * --skip-damaged, the check fails naming the block. */
  char *k[] = {TLREPORT, "--db", f->db, "--check", "--skip-damaged", NULL};
  char *kc[] = {TLREPORT, "--db", clean, "--check", NULL};
  char *kd[] = {TLREPORT, "--db", f->db, "--check", NULL};
  char *kout, *kerr, *cout, *cerr, left[256];
  int krc = tl_test_run(k, NULL, &kout, &kerr), crc = tl_test_run(kc, NULL, &cout, &cerr);
  assert_int_equal(krc, crc);
  assert_true(krc == 0 || krc == 1);
  assert_string_equal(kerr, "");
  snprintf(left, sizeof left,
           "left out: session %s of vbox (started 2026-11-01T12:00:00Z): its samples failed "
           "verification: ",
           uuid);
  char *first_end = strchr(kout, '\n');
  assert_non_null(first_end);
  *first_end = 0;
  if (strncmp(kout, left, strlen(left)) != 0 || !strstr(kout, want))
    fail_msg("the check's first line does not say '%s...%s': %s", left, want, kout);
  assert_string_equal(first_end + 1, cout);
  assert_non_null(strstr(cout, "check")); /* its summary line */
  free(kout);
  free(kerr);
  free(cout);
  free(cerr);
  free(run_report(kd, 1, &err));
  assert_true(tl_test_one_line(err));
  assert_non_null(strstr(err, want));
  free(err);
  free(dir);
  free(clean);
}

/* A percentile is printed as given, never rounded to 6 digits (99.99999 is
 * not p100) nor in exponent form (0.0000001 is not p1e-07), in every format. */
static void odd_percentiles(void **state) {
  fixture *f = *state;
  build_golden_db(f->db);
  static const char *const formats[] = {"md", "html", "json"};
  for (size_t i = 0; i < 3; i++) {
    char *a[] = {
        TLREPORT,           "--db", f->db, "--percentiles", "0.0000001,99.99999,12.5", "--format",
        (char *)formats[i], NULL};
    char *out = run_report(a, 0, NULL);
    if (i < 2) {
      assert_non_null(strstr(out, "p0.0000001 ("));
      assert_non_null(strstr(out, "p99.99999 ("));
      assert_non_null(strstr(out, "p12.5 ("));
      assert_null(strstr(out, "p100"));
    } else {
      assert_non_null(strstr(out, "{\"p\": 0.0000001, \"ns\": "));
      assert_non_null(strstr(out, "{\"p\": 99.99999, \"ns\": "));
      assert_non_null(strstr(out, "{\"p\": 99.99999, \"lo_ns\": "));
    }
    /* Only where a percentile is written: a session's random UUID may hold "1e-". */
    assert_null(strstr(out, "p1e-"));
    assert_null(strstr(out, "\"p\": 1e-"));
    free(out);
  }
  char *err;
  char *b[] = {TLREPORT, "--db", f->db, "--percentiles", "1e-10", NULL};
  free(run_report(b, 2, &err));
  assert_non_null(strstr(err, "--percentiles: each must be a number from 0.000000001 to 100"));
  free(err);
  char buf[TL_PCT_LEN];
  assert_string_equal(tl_format_pct(50, buf, sizeof buf), "50");
  assert_string_equal(tl_format_pct(99.9, buf, sizeof buf), "99.9");
  assert_string_equal(tl_format_pct(TL_PCT_MIN, buf, sizeof buf), "0.000000001");
  assert_string_equal(tl_format_pct(100.0 / 3, buf, sizeof buf), "33.333333333333336");
}

/* -o over a page keeps the page's permissions (a private page stays
 * private, none is widened); a new page gets the usual 0644 less the umask. */
static void replacing_keeps_the_mode(void **state) {
  fixture *f = *state;
  build_golden_db(f->db);
  char *page = tl_test_path(f->dir, "page.md");
  char *a[] = {TLREPORT, "--db", f->db, "-o", page, NULL};
  free(run_report(a, 0, NULL));
  mode_t mask = umask(022);
  umask(mask);
  struct stat st;
  assert_int_equal(stat(page, &st), 0);
  assert_int_equal(st.st_mode & 07777, 0644 & ~mask);
  static const mode_t modes[] = {0600, 0640, 0400, 0664};
  for (size_t i = 0; i < sizeof modes / sizeof *modes; i++) {
    assert_int_equal(chmod(page, modes[i]), 0);
    free(run_report(a, 0, NULL));
    assert_int_equal(stat(page, &st), 0);
    if ((st.st_mode & 07777) != modes[i])
      fail_msg("-o over a %04o page left it %04o", (unsigned)modes[i],
               (unsigned)(st.st_mode & 07777));
  }
  free(page);
}

/* A --site that is refused (here: its index is someone else's file, and the
 * index is the page written last) changes nothing: every page keeps its
 * bytes and its modification time, and no temporary file is left. */
static void refused_site_changes_nothing(void **state) {
  fixture *f = *state;
  build_golden_db(f->db);
  char *dir = tl_test_path(f->dir, "site");
  char *a[] = {TLREPORT, "--db", f->db, "--site", dir, NULL};
  free(run_report(a, 0, NULL));
  char *index = tl_test_path(dir, "index.html");
  assert_int_equal(tl_test_write_file(index, "my own index\n", 13), 0);
  char *before[6];
  const struct timespec old[2] = {{1000000000, 0}, {1000000000, 0}};
  for (size_t i = 0; i < 6; i++) {
    char *p = tl_test_path(dir, site_pages[i]);
    before[i] = tl_test_read_file(p, NULL);
    assert_int_equal(utimensat(AT_FDCWD, p, old, 0), 0);
    free(p);
  }
  /* Other start times make other pages. */
  hourly_sessions(f->db);
  char *err;
  free(run_report(a, 1, &err));
  assert_non_null(strstr(err, "index.html exists and was not written by tlreport"));
  free(err);
  for (size_t i = 0; i < 6; i++) {
    char *p = tl_test_path(dir, site_pages[i]);
    char *now = tl_test_read_file(p, NULL);
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    if (strcmp(now, before[i]) != 0 || st.st_mtime != 1000000000)
      fail_msg("a refused --site changed %s", site_pages[i]);
    free(now);
    free(before[i]);
    free(p);
  }
  char *out = list_dir(dir);
  assert_string_equal(out, "compare.html\nhost-aaaa000000000001.html\nhost-bbbb000000000002.html\n"
                           "index.html\nlabel-macos.html\nlabel-vbox.html\n");
  free(out);
  /* Refused into a new folder: no folder is left either. */
  char *fresh = tl_test_path(f->dir, "fresh");
  char *b[] = {TLREPORT, "--db", f->db, "--site", fresh, "--compare", "nosuch", NULL};
  free(run_report(b, 1, NULL));
  assert_int_equal(access(fresh, F_OK), -1);
  free(fresh);
  free(index);
  free(dir);
}

/* ======================================================================== */
/* In a real browser                                                         */

/* Loaded by headless Chromium: opens index.html of the site in a frame,
 * follows every link to every page, and writes what it found on each
 * (heading, SVG charts drawn and visible, scripts) into the DOM, which
 * --dump-dom prints. A link that does not resolve loads no page. */
static const char harness[] =
    "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>harness</title></head><body>"
    "<pre id=\"r\">RUNNING</pre><script>\n"
    "const base = '%s/';\n"
    "const todo = ['index.html'], seen = new Set(todo), out = [];\n"
    "const frame = document.createElement('iframe');\n"
    "frame.style.width = '1000px'; frame.style.height = '800px';\n"
    "document.body.appendChild(frame);\n"
    "function next() {\n"
    "  if (!todo.length) { document.getElementById('r').textContent = 'RESULT' + "
    "out.join('') + 'END'; return; }\n"
    "  frame.src = base + todo[0];\n"
    "}\n"
    "frame.onload = () => {\n"
    "  const page = todo.shift();\n"
    "  try {\n"
    "    const d = frame.contentDocument, w = frame.contentWindow;\n"
    "    const svgs = [...d.querySelectorAll('svg')];\n"
    "    const visible = svgs.filter(s => { const b = s.getBoundingClientRect(), "
    "c = w.getComputedStyle(s); return b.width > 100 && b.height > 100 && c.display !== 'none' "
    "&& c.visibility !== 'hidden' && s.querySelectorAll('polyline, rect').length > 0; });\n"
    "    const h1 = d.querySelector('h1') ? 1 : 0;\n"
    "    out.push(`[${page} h1=${h1} svg=${svgs.length} visible=${visible.length} "
    "script=${d.querySelectorAll('script').length}]`);\n"
    "    for (const a of d.querySelectorAll('a[href]')) {\n"
    "      const h = a.getAttribute('href');\n"
    "      if (!h.startsWith('#') && !seen.has(h)) { seen.add(h); todo.push(h); }\n"
    "    }\n"
    "  } catch (e) { out.push(`[${page} error]`); }\n"
    "  next();\n"
    "};\n"
    "next();\n"
    "</script></body></html>\n";

static void site_in_chromium(void **state) {
  fixture *f = *state;
  const char *chromium = "/usr/bin/chromium";
  if (!have(chromium))
    tl_test_skip("no /usr/bin/chromium (.ci/run installs it)");
  build_golden_db(f->db);
  char *dir = tl_test_path(f->dir, "site");
  char *a[] = {TLREPORT, "--db", f->db, "--site", dir, NULL};
  free(run_report(a, 0, NULL));
  char page[8192], url[4200];
  snprintf(url, sizeof url, "file://%s", dir);
  snprintf(page, sizeof page, harness, url);
  char *file = tl_test_path(f->dir, "harness.html");
  assert_int_equal(tl_test_write_file(file, page, strlen(page)), 0);
  char *profile = tl_test_path(f->dir, "profile");
  char profile_arg[4200], target[4200];
  snprintf(profile_arg, sizeof profile_arg, "--user-data-dir=%s", profile);
  snprintf(target, sizeof target, "file://%s", file);
  char *b[] = {(char *)chromium,
               "--headless",
               "--no-sandbox",
               "--disable-gpu",
               "--disable-background-networking",
               "--disable-component-update",
               "--disable-sync",
               "--no-first-run",
               profile_arg,
               "--allow-file-access-from-files",
               "--virtual-time-budget=5000",
               "--enable-logging=stderr",
               "--v=0",
               "--dump-dom",
               target,
               NULL};
  char *out, *err;
  assert_int_equal(tl_test_run(b, NULL, &out, &err), 0);
  char *r = strstr(out, "RESULT[");
  char *end = r ? strstr(r, "]END") : NULL;
  if (!end)
    fail_msg("the harness did not finish: %.300s", out);
  if (getenv("TL_SHOW"))
    fprintf(stderr, "%s\n", r);
  end[1] = '\0'; /* the page's own script text follows */
  /* Every page was reached through links, rendered, and its charts drawn. */
  assert_non_null(strstr(r, "[index.html h1=1 svg=1 visible=0 script=0]"));
  assert_non_null(strstr(r, "[compare.html h1=1 svg=9 visible=9 script=0]"));
  assert_non_null(strstr(r, "[label-vbox.html h1=1 svg=8 visible=8 script=0]"));
  assert_non_null(strstr(r, "[label-macos.html h1=1 svg=4 visible=4 script=0]"));
  assert_non_null(strstr(r, "[host-aaaa000000000001.html h1=1 svg=8 visible=8 script=0]"));
  assert_non_null(strstr(r, "[host-bbbb000000000002.html h1=1 svg=4 visible=4 script=0]"));
  if (strstr(r, "error]"))
    fail_msg("a page did not load: %.600s", r);
  size_t pages = 0;
  for (const char *p = r; (p = strstr(p, " h1=")); p++)
    pages++;
  assert_int_equal(pages, 6);
  /* Nothing on the console: no script, no failed load, no CSS error. */
  if (strstr(err, ":CONSOLE"))
    fail_msg("console: %.300s", strstr(err, ":CONSOLE"));
  free(out);
  free(err);
  free(profile);
  free(file);
  free(dir);
}

/* The pages as a reader sees them, in headless Chromium driven by
 * puppeteer-core (tests/browser/check.js), at 1280 and 390 px: no table
 * wider than its container (1280) or the screen (390), the p90 of every
 * lateness table on screen, no two chart texts overlapping and none cut by
 * its chart's edge, the answer box within the first 800 px; on the
 * comparison, a label's, a host's, a --by and the index page. Skipped when
 * node, chromium or the npm package is missing, unless TL_BROWSER_REQUIRED
 * is set (.ci/run installs them and sets it, so CI always runs this). */
static void page_in_browser(void **state) {
  fixture *f = *state;
  const char *chromium = "/usr/bin/chromium", *node = "/usr/bin/node";
  const char *module = TL_SOURCE_DIR "/tests/browser/node_modules/puppeteer-core/package.json";
  if (!have(chromium) || !have(node) || access(module, R_OK) != 0) {
    if (getenv("TL_BROWSER_REQUIRED"))
      fail_msg("the browser test needs %s, %s and `npm ci --prefix tests/browser`", chromium, node);
    tl_test_skip("no chromium, node or puppeteer-core (npm ci --prefix tests/browser)");
  }
  build_golden_db(f->db);
  /* A third label with a long name, so that names meet the charts' edges,
   * and a few spikes of 20 ms, so that the charts' tails span decades and
   * its histogram has an overflow bar. */
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  int64_t v[400];
  for (int i = 0; i < 400; i++)
    v[i] = 50000000 + 300000 + (int64_t)(i * 7919 % 400) * 5000 + (i % 97 == 5 ? 20000000 : 0);
  add_session(s, "run9", "a-rather-long-label-name", &vbox_host, 50000000, v, 400);
  /* and a fourth, so that a matrix of differences has three labels */
  for (int i = 0; i < 400; i++)
    v[i] += 100000;
  add_session(s, "run10", "another-label", &vbox_host, 50000000, v, 400);
  /* Sessions enough for a verdict at 50 ms, which the first screen must
   * show with its interval and sessions. */
  const char *runs[2][2] = {{"run11", "run12"}, {"run13", "run14"}};
  for (int r = 0; r < 2; r++) {
    for (int i = 0; i < 400; i++)
      v[i] = 50000000 + 350000 + r * 20000 + (int64_t)(i * 7919 % 400) * 5000;
    add_session(s, runs[r][0], "a-rather-long-label-name", &vbox_host, 50000000, v, 400);
    for (int i = 0; i < 400; i++)
      v[i] = 50000000 + 3000000 + r * 200000 + (int64_t)(i * 7919 % 400) * 20000;
    add_session(s, runs[r][1], "vbox", &vbox_host, 50000000, v, 400);
  }
  tl_store_close(s);
  char *dir = tl_test_path(f->dir, "site");
  char *a[] = {TLREPORT, "--db", f->db, "--site", dir, NULL};
  free(run_report(a, 0, NULL));
  char *by = tl_test_path(f->dir, "by.html");
  char *c[] = {TLREPORT, "--db", f->db, "--by", "clocksource", "--format", "html", "-o", by, NULL};
  free(run_report(c, 0, NULL));
  /* and the charts of a Markdown site's comparison, files of their own */
  char *md = tl_test_path(f->dir, "md");
  char *m[] = {TLREPORT, "--db", f->db, "--site", md, "--format", "md", NULL};
  free(run_report(m, 0, NULL));
  enum { HTML_PAGES = 5, SVGS = 7 };
  char *pages[HTML_PAGES + SVGS];
  pages[0] = tl_test_path(dir, "compare.html");
  pages[1] = tl_test_path(dir, "label-vbox.html");
  pages[2] = tl_test_path(dir, "host-aaaa000000000001.html");
  pages[3] = tl_test_path(dir, "index.html");
  pages[4] = by;
  for (int i = 0; i < SVGS; i++) {
    char name[32];
    snprintf(name, sizeof name, "compare-%d.svg", i + 1);
    pages[HTML_PAGES + i] = tl_test_path(md, name);
    assert_int_equal(access(pages[HTML_PAGES + i], R_OK), 0);
  }
  char *b[3 + HTML_PAGES + SVGS + 1] = {(char *)node, TL_SOURCE_DIR "/tests/browser/check.js",
                                        (char *)chromium};
  for (int i = 0; i < HTML_PAGES + SVGS; i++)
    b[3 + i] = pages[i];
  char *out, *err;
  int rc = tl_test_run(b, NULL, &out, &err);
  if (rc != 0 || getenv("TL_SHOW"))
    fprintf(stderr, "%s%s", out, err);
  assert_int_equal(rc, 0);
  assert_non_null(strstr(out, "compare.html at 390 px"));
  assert_non_null(strstr(out, "index.html at 390 px"));
  assert_non_null(strstr(out, "by.html at 390 px"));
  assert_non_null(strstr(out, "compare-7.svg at 390 px"));
  assert_non_null(strstr(out, "label-vbox.html at 390 px: the first p90 figure"));
  assert_non_null(strstr(out, "host-aaaa000000000001.html at 390 px: the first p90 figure"));
  assert_non_null(strstr(out, "\nok\n"));
  free(out);
  free(err);
  for (int i = 0; i < HTML_PAGES + SVGS; i++)
    free(pages[i]);
  free(md);
  free(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(markdown_matches_golden, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(markdown_charts_beside_the_page, tl_test_setup,
                                      tl_test_teardown),
      cmocka_unit_test_setup_teardown(imported_data_said_so, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(host_pages_hold_what_the_store_selects, tl_test_setup,
                                      tl_test_teardown),
      cmocka_unit_test_setup_teardown(site_pages_hold_their_labels_and_hosts, tl_test_setup,
                                      tl_test_teardown),
      cmocka_unit_test_setup_teardown(site_last_per_host, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(filters_and_errors, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(confounds, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(json_output, tl_test_setup, tl_test_teardown),
      cmocka_unit_test(json_string_piece_by_piece),
      cmocka_unit_test_setup_teardown(best_only_where_clear, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(months_of_runs_fold, memory_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(trend_folds_days_to_medians, memory_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(trend_lines_keep_their_labels, memory_setup,
                                      tl_test_teardown),
      cmocka_unit_test(html_escape_each_kind),
      cmocka_unit_test_setup_teardown(json_statistics, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(json_statistics_hostile_label, tl_test_setup,
                                      tl_test_teardown),
      cmocka_unit_test_setup_teardown(html_page, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(charts_at_the_data_scale, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(site, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(one_colour_per_label, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(markdown_site, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(index_trend_under_by, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(one_label_pages, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(hostile_label, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(replacing_files, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(replacing_keeps_the_mode, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(odd_percentiles, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(skip_damaged_session, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(refused_site_changes_nothing, tl_test_setup,
                                      tl_test_teardown),
      cmocka_unit_test_setup_teardown(site_in_chromium, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(page_in_browser, tl_test_setup, tl_test_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
