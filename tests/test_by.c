/* test_by.c: comparing by what the machine is. The importer's start time,
 * host facts and reproducing command line; memory size classes; and, on a
 * database of imported droplets of 512 MB to 4 GB and 1 to 4 CPUs whose
 * tail shortens with memory, tlreport --by: groups, order, numbers (against
 * an independent computation from tlstore export), the trend sentence, the
 * unknown group and bad keys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support.h"
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

  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, TL_STORE_READONLY), TL_OK);
  tl_filter flt;
  tl_filter_init(&flt);
  tl_session_list list;
  assert_int_equal(tl_store_sessions(s, &flt, &list), TL_OK);
  assert_int_equal(list.count, 1);
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
  tl_filter_init(&flt);
  assert_int_equal(tl_store_sessions(s, &flt, &list), TL_OK);
  assert_int_equal(list.count, 1);
  tl_session_list_free(&list);
  tl_store_close(s);
  free(csv);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sizes_and_classes),
      cmocka_unit_test_setup_teardown(import_start_facts_command_line, tl_test_setup,
                                      tl_test_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
