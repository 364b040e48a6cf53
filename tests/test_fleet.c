/* test_fleet.c: pages over many hosts. Which session comes first with a key
 * (tl__first_same, which replaced scans of the sessions before each one)
 * and each label's sessions (tl__label_sessions) against brute-force
 * scans; lists that fold with a count; and the page of a label measured on
 * 60 hosts with long names, whose host list used to be cut at a 1 KiB
 * buffer without a word, and whose host table folds by size
 * class; the step test on a series longer
 * than it tests point by point (a fleet's sessions), by its error rates;
 * the page's last sections written on a second thread, byte for byte as
 * on one; and a site's thousands of temporary files. */
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "report_internal.h"
#include "support.h"
#include "support_store.h"
#include "tl_store.h"

typedef tl_test_fixture fixture;

static const char *pair_key(const void *ctx, size_t i, int part) {
  const char *const(*keys)[2] = ctx;
  return keys[i][part];
}

/* Random keys of two parts drawn from few values, some items without a key,
 * a third of the parts copies of their word (the same key at another
 * address, more of them than the addresses tl__first_same remembers); in
 * every fourth round the second part is one of 1,000 words, thousands of
 * distinct keys, through which the table of keys grows: the first index of
 * each equals a scan of the items before it. */
static void first_same_against_a_scan(void **state) {
  (void)state;
  static const char *const words[] = {"a", "b", "ab", "", "ba", "a\xff"};
  enum { N = 3000, MANY = 1000 };
  static const char *keys[N][2];
  static char copy[N][2][8], many[MANY][8];
  static size_t first[N];
  for (int k = 0; k < MANY; k++)
    snprintf(many[k], sizeof many[k], "w%d", k);
  uint64_t r = 12345;
  for (int round = 0; round < 20; round++) {
    size_t n = (size_t)round * 150 + (size_t)round % 3;
    for (size_t i = 0; i < n; i++) {
      r = r * 6364136223846793005ULL + 1442695040888963407ULL;
      keys[i][0] = (r >> 40) % 17 == 0 ? NULL : words[(r >> 33) % 6];
      keys[i][1] = round % 4 == 3 ? many[(r >> 20) % MANY] : words[(r >> 20) % (round % 2 ? 6 : 2)];
      for (int k = 0; k < 2; k++)
        if (keys[i][k] && (r >> (50 + 4 * k)) % 3 == 0)
          keys[i][k] = strcpy(copy[i][k], keys[i][k]);
    }
    int parts = 1 + round % 2;
    assert_int_equal(tl__first_same(n, parts, pair_key, keys, first), TL_OK);
    for (size_t i = 0; i < n; i++) {
      size_t want = SIZE_MAX;
      for (size_t k = 0; k <= i && keys[i][0] && want == SIZE_MAX; k++)
        if (keys[k][0] && strcmp(keys[k][0], keys[i][0]) == 0 &&
            (parts == 1 || strcmp(keys[k][1], keys[i][1]) == 0))
          want = k;
      assert_int_equal(first[i], want);
    }
  }
  assert_int_equal(tl__first_same(0, 1, pair_key, keys, first), TL_OK);
  assert_int_equal(tl__first_same(1, 3, pair_key, keys, first), TL_EINVAL);
}

/* Each label's sessions, as the page asks for them (tl__label_sessions),
 * against a scan of the list: random lists over a few names, some sessions
 * of a label not compared, a label without sessions, a name asked twice
 * (both get its sessions), labels asked in an order of their own. */
static void label_sessions_against_a_scan(void **state) {
  (void)state;
  static const char *const names[] = {"vbox", "macos", "droplet", "droplet-2", "", "v\xffx"};
  enum { N = 2000 };
  static tl_session items[N];
  static char copy[N][16];
  uint64_t r = 99;
  for (int round = 0; round < 12; round++) {
    size_t n = (size_t)round * 160 + (size_t)round % 5;
    for (size_t i = 0; i < n; i++) {
      r = r * 6364136223846793005ULL + 1442695040888963407ULL;
      /* A label's string at another address now and then, as an unpooled list has. */
      const char *name = names[(r >> 33) % 6];
      items[i].label = (r >> 45) % 3 ? (char *)name : strcpy(copy[i], name);
    }
    char *asked[7] = {"droplet", "vbox", "none", "", "v\xffx", "vbox", "macos"};
    tl_comparison c = {0};
    c.sessions.items = items;
    c.sessions.count = n;
    c.labels = asked;
    c.label_count = (size_t)(round % 7) + 1;
    assert_int_equal(tl__label_sessions_make(&c), TL_OK);
    for (size_t l = 0; l < c.label_count; l++) {
      size_t got, k = 0;
      const size_t *at = tl__label_sessions(&c, l, &got);
      for (size_t i = 0; i < n; i++)
        if (strcmp(items[i].label, asked[l]) == 0) {
          assert_true(k < got);
          assert_int_equal(at[k++], i);
        }
      assert_int_equal(got, k);
      assert_int_equal(tl__label_session_count(&c, l), k);
    }
    tl__label_sessions_free(&c);
    assert_null(c.label_sessions);
  }
}

static void lists_fold_with_a_count(void **state) {
  (void)state;
  tl__fold l;
  tl__fold_init(&l, 3);
  assert_string_equal(tl__fold_text(&l, "hosts"), "");
  tl__fold_add(&l, "a");
  tl__fold_add(&l, "b");
  tl__fold_add(&l, "c");
  assert_string_equal(tl__fold_text(&l, "hosts"), "a, b, c");
  char item[600];
  memset(item, 'x', sizeof item - 1);
  item[sizeof item - 1] = '\0';
  for (int i = 0; i < 147; i++)
    tl__fold_add(&l, item);
  assert_int_equal(l.count, 150);
  assert_string_equal(tl__fold_text(&l, "hosts"), "a, b, c and 147 more hosts");
  assert_string_equal(tl__fold_text(&l, "hosts"), "a, b, c and 147 more hosts");
  tl__fold_free(&l);
  /* Long items are kept whole. */
  tl__fold_init(&l, 10);
  for (int i = 0; i < 10; i++)
    tl__fold_add(&l, item);
  assert_int_equal(strlen(tl__fold_text(&l, "hosts")), 10 * (sizeof item - 1) + 9 * 2);
  tl__fold_free(&l);
}

enum { HOSTS = 60 };

/* One session of a few samples on each of HOSTS hosts with long names. */
static void build_hosts(const fixture *f) {
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  for (int h = 0; h < HOSTS; h++) {
    char csv[64], host[64];
    snprintf(csv, sizeof csv, "%d\n%d\n%d\n", 1000 + h, 2000 + h, 3000 + h);
    snprintf(host, sizeof host, "a-droplet-with-a-long-name-%03d", h);
    /* Two sizes, each a little under what it was sold as, as machines report. */
    char memory[64];
    snprintf(memory, sizeof memory, "memory=%lld", h % 2 ? 2000000000LL - h : 1000000000LL - h);
    tl_test_import_fleet_session(s, csv, host, memory, h % 2 ? "cpus=2" : "cpus=1", h);
  }
  tl_store_close(s);
}

/* "Read with care" names the first hosts whole and counts the rest. */
static void host_list_folds_with_a_count(void **state) {
  fixture *f = *state;
  build_hosts(f);
  static const char *const formats[] = {"markdown", "html"};
  for (size_t k = 0; k < 2; k++) {
    char *argv[] = {TLREPORT, "--db", f->db, "--format", (char *)formats[k], NULL};
    char *out, *err;
    assert_int_equal(tl_test_run(argv, NULL, &out, &err), 0);
    const char *line = strstr(out, "mixes 60 different hosts: ");
    assert_non_null(line);
    const char *end = strchr(line, '\n');
    assert_non_null(end);
    size_t shown = 0;
    for (int h = 0; h < HOSTS; h++) {
      char host[64];
      snprintf(host, sizeof host, "a-droplet-with-a-long-name-%03d (imported)", h);
      const char *at = strstr(line, host);
      shown += at && at < end;
    }
    char tail[64];
    snprintf(tail, sizeof tail, " and %zu more hosts.", HOSTS - shown);
    assert_true(shown >= 10 && shown < HOSTS);
    assert_true((size_t)(end - line) > strlen(tail));
    if (k == 0)
      assert_memory_equal(end - strlen(tail), tail, strlen(tail));
    else
      assert_non_null(strstr(line, tail));
    free(out);
    free(err);
  }
}

static double normal(uint64_t *r) {
  double u[2];
  for (int k = 0; k < 2; k++) {
    *r = *r * 6364136223846793005ULL + 1442695040888963407ULL;
    u[k] = ((double)(*r >> 11) + 0.5) * 0x1.0p-53;
  }
  return sqrt(-2 * log(u[0])) * cos(6.283185307179586 * u[1]);
}

/* A series of 24,000 points is tested in bins: a step of 0.3 of the
 * noise's spread is found where it is, to within 1 % of the series, in every draw,
 * and a series without one gives (almost) no step. */
static void long_series_steps(void **state) {
  (void)state;
  enum { N = 24000, DRAWS = 12, AT = 15001 };
  double *x = malloc(N * sizeof *x);
  assert_non_null(x);
  uint64_t r = 99;
  size_t found = 0, false_alarms = 0;
  for (int d = 0; d < DRAWS; d++) {
    for (size_t i = 0; i < N; i++)
      x[i] = 10 * normal(&r) + (i >= AT ? 3 : 0);
    tl_step steps[8];
    size_t count;
    tl_step_opts o = {.seed = (uint64_t)d + 1};
    assert_int_equal(tl_steps_find(x, N, &o, steps, 8, &count), TL_OK);
    for (size_t k = 0; k < count; k++)
      if (steps[k].index + 250 >= AT && steps[k].index <= AT + 250 && steps[k].p_value <= 0.01)
        found++;
    for (size_t i = 0; i < N; i++)
      x[i] = 10 * normal(&r);
    assert_int_equal(tl_steps_find(x, N, &o, steps, 8, &count), TL_OK);
    false_alarms += count > 0;
  }
  assert_int_equal(found, DRAWS);
  assert_true(false_alarms <= 1);
  free(x);
}

/* The host table of many hosts: a row for each kind of host, with its
 * count, in Markdown; every host still listed in HTML, folded. */
static void host_table_folds_by_size_class(void **state) {
  fixture *f = *state;
  build_hosts(f);
  char *argv[] = {TLREPORT, "--db", f->db, NULL};
  char *out, *err;
  assert_int_equal(tl_test_run(argv, NULL, &out, &err), 0);
  assert_non_null(strstr(out, "60 hosts, one row for the hosts alike"));
  assert_non_null(strstr(out, "| 30 hosts: a-droplet-with-a-long-name-000, "
                              "a-droplet-with-a-long-name-002, a-droplet-with-a-long-name-004 "
                              "and 27 more hosts | fleet | unknown | 1 | 1G |"));
  assert_non_null(strstr(out, "| 30 hosts: a-droplet-with-a-long-name-001, "
                              "a-droplet-with-a-long-name-003, a-droplet-with-a-long-name-005 "
                              "and 27 more hosts | fleet | unknown | 2 | 2G |"));
  assert_null(strstr(out, "| a-droplet-with-a-long-name-007 |"));
  free(out);
  free(err);
  char *html[] = {TLREPORT, "--db", f->db, "--format", "html", NULL};
  assert_int_equal(tl_test_run(html, NULL, &out, &err), 0);
  assert_non_null(strstr(out, "<details><summary>All 60 hosts</summary>"));
  for (int h = 0; h < HOSTS; h++) {
    char cell[64];
    snprintf(cell, sizeof cell, "<td>a-droplet-with-a-long-name-%03d</td>", h);
    assert_non_null(strstr(out, cell));
  }
  free(out);
  free(err);
}

/* Sections that write prose and a heading, for sections_as_on_one_thread;
 * the later ones note the thread they ran on. */
static pthread_t ran_on;
static void prose_open(tl__page *p) { fputs("A paragraph left open,\n", tl__prose(p)); }
static void list_open(tl__page *p) { fputs("- and a list *left* open\n", tl__prose(p)); }
static void later_heading(tl__page *p) {
  ran_on = pthread_self();
  tl__heading(p, "later", "Later");
  fputs("- a list of its own\n", tl__prose(p));
}
static void later_fails(tl__page *p) {
  fputs("Its last words, with `code`.\n", tl__prose(p));
  p->failed = TL_ENOMEM;
}

/* The page's bytes from sections written in order, on one thread (later =
 * count) or with those from later on written on a second thread. */
static char *sections_bytes(const tl_comparison *c, tl_format format, const tl__section_fn *sec,
                            size_t count, size_t later, int *failed) {
  tl_page_opts o;
  tl_page_opts_init(&o);
  o.format = format;
  char *text = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&text, &len);
  assert_non_null(m);
  tl__page p = {.c = c, .o = &o, .out = m};
  tl__write_sections(&p, sec, count, later);
  tl__prose_flush(&p);
  *failed = p.failed;
  assert_int_equal(fclose(m), 0);
  return text;
}

/* The later sections of a page, written on a second thread meanwhile, give
 * the bytes of the sections written one after another: in Markdown and in
 * HTML, where the prose left open before them is closed where it was, with
 * made-up sections and with the page's own over 60 hosts; a later
 * section's failure fails the page. */
static void sections_as_on_one_thread(void **state) {
  fixture *f = *state;
  build_hosts(f);
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, TL_STORE_READONLY), TL_OK);
  tl_compare_opts co;
  tl_compare_opts_init(&co);
  tl_comparison c;
  char err[256];
  assert_int_equal(tl_compare(s, &co, &c, err, sizeof err), TL_OK);
  tl_store_close(s);
  const tl__section_fn made_up[] = {prose_open, list_open, later_heading, later_fails};
  const tl__section_fn own[] = {tl__section_title, tl__host_facts_section, tl__section_hosts,
                                tl__section_method};
  static const tl_format formats[] = {TL_FORMAT_MD, TL_FORMAT_HTML};
  for (int k = 0; k < 2; k++) {
    int failed_one, failed_two;
    ran_on = pthread_self();
    char *one = sections_bytes(&c, formats[k], made_up, 4, 4, &failed_one);
    assert_true(pthread_equal(ran_on, pthread_self()));
    char *two = sections_bytes(&c, formats[k], made_up, 4, 2, &failed_two);
    assert_false(pthread_equal(ran_on, pthread_self()));
    assert_string_equal(one, two);
    assert_int_equal(failed_one, TL_ENOMEM);
    assert_int_equal(failed_two, TL_ENOMEM);
    const char *open = strstr(two, "left"), *later = strstr(two, "Later"),
               *last = strstr(two, "last words");
    assert_true(open && later && last && open < later && later < last);
    if (formats[k] == TL_FORMAT_HTML)
      assert_non_null(strstr(two, "<li>and a list <em>left</em> open</li>\n</ul>\n<h2"));
    free(one);
    free(two);
    for (size_t later_at = 1; later_at <= 4; later_at++) {
      one = sections_bytes(&c, formats[k], own, 4, 4, &failed_one);
      two = sections_bytes(&c, formats[k], own, 4, later_at, &failed_two);
      assert_string_equal(one, two);
      assert_int_equal(failed_one, TL_OK);
      assert_int_equal(failed_two, TL_OK);
      assert_non_null(strstr(two, "60 hosts"));
      assert_non_null(strstr(two, "How it was measured"));
      free(one);
      free(two);
    }
  }
  tl_comparison_free(&c);
}

/* A site keeps a temporary file for each page and chart until every one is
 * written: a fleet's Markdown site, thousands. Each new one gets a name of
 * its own at once, where the names used to start again at 0 and run out
 * after 1,000 ("cannot write beside ...: File exists"). */
static void temporary_files_by_the_thousand(void **state) {
  fixture *f = *state;
  enum { FILES = 2500 };
  int dirfd = open(f->dir, O_RDONLY | O_DIRECTORY);
  assert_true(dirfd >= 0);
  char tmp[64], err[256];
  for (int i = 0; i < FILES; i++) {
    int rc = TL_OK;
    FILE *t = tl__output_temp_open(dirfd, "site/page.md", TL__NEW_FILE, tmp, &rc, err, sizeof err);
    if (!t)
      fail_msg("temporary file %d: %s", i, err);
    assert_int_equal(fclose(t), 0);
  }
  size_t temps = 0;
  DIR *d = opendir(f->dir);
  assert_non_null(d);
  for (struct dirent *e; (e = readdir(d));)
    if (strncmp(e->d_name, ".tl-report-", 11) == 0) {
      temps++;
      assert_int_equal(unlinkat(dirfd, e->d_name, 0), 0);
    }
  closedir(d);
  close(dirfd);
  assert_int_equal(temps, FILES);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(first_same_against_a_scan),
      cmocka_unit_test(lists_fold_with_a_count),
      cmocka_unit_test(label_sessions_against_a_scan),
      cmocka_unit_test(long_series_steps),
      cmocka_unit_test_setup_teardown(host_list_folds_with_a_count, tl_test_setup,
                                      tl_test_teardown),
      cmocka_unit_test_setup_teardown(host_table_folds_by_size_class, tl_test_setup,
                                      tl_test_teardown),
      cmocka_unit_test_setup_teardown(sections_as_on_one_thread, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(temporary_files_by_the_thousand, tl_test_setup,
                                      tl_test_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
