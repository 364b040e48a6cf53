/* test_cli.c: the programs end to end: store info and check, an interrupted
 * collection, and bad input on every option (a one-line error and exit
 * status 2, never a crash). The report's own tests are in test_report.c. */
#include <ctype.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "support.h"
#include "support_store.h"
#include "tl_store.h"

typedef tl_test_fixture fixture;

static void add_session(tl_store *s, const char *label, int64_t delay_ns, const int64_t *v,
                        size_t n) {
  static const char *keys[] = {"note"}, *values[] = {"<b>bold</b> & \"quoted\""};
  tl_session_spec spec = {
      .run_uuid = "run",
      .label = label,
      .probe = "settimeout",
      .delay_ns = delay_ns,
      .command_line = "tlcollect",
      .host_fingerprint = "feedfacefeedface",
      .hostname = "golden",
      .libuv_version = "1.44.2",
      .tag_keys = keys,
      .tag_values = values,
      .tag_count = 1,
  };
  tl_writer *w;
  char uuid[37];
  assert_int_equal(tl_writer_begin(s, &spec, &w, uuid), TL_OK);
  assert_int_equal(tl_writer_add(w, v, n), TL_OK);
  assert_int_equal(tl_writer_end(w, "complete"), TL_OK);
}

/* A small database for the store tests; the report tests build their own
 * (test_report.c). */
static void build_golden_db(const char *path) {
  tl_store *s;
  assert_int_equal(tl_store_open(&s, path, 0), TL_OK);
  int64_t v[1000];
  for (int i = 0; i < 1000; i++)
    v[i] = (int64_t)(1000 - i) * 10000; /* 0.01 .. 10.00 ms, descending */
  add_session(s, "vbox", 0, v, 1000);
  const int64_t a[] = {50200000, 50100000}, b[] = {60000000, 50300000, 50400000};
  add_session(s, "vbox", 50000000, a, 2);
  add_session(s, "vbox", 50000000, b, 3);
  const int64_t m[] = {3000000, 1000000, 2000000};
  add_session(s, "macos", 0, m, 3);
  tl_store_close(s);
}

static void store_info_and_check(void **state) {
  fixture *f = *state;
  build_golden_db(f->db);
  char *out, *err;
  char *a1[] = {TLSTORE, "--db", f->db, "info", NULL};
  assert_int_equal(tl_test_run(a1, NULL, &out, &err), 0);
  assert_non_null(strstr(out, "sessions:       4\n"));
  assert_non_null(strstr(out, "samples:        1008"));
  assert_non_null(strstr(out, "hosts:          1\n"));
  free(out);
  free(err);
  char *a2[] = {TLSTORE, "--db", f->db, "check", NULL};
  assert_int_equal(tl_test_run(a2, NULL, &out, &err), 0);
  assert_string_equal(out, "ok\n");
  free(out);
  free(err);
  /* Not a database: one line, exit 1. */
  char *junk = tl_test_path(f->dir, "junk.db");
  assert_int_equal(tl_test_write_file(junk, "0123456789abcdef0123456789abcdef", 32), 0);
  char *a3[] = {TLSTORE, "--db", junk, "check", NULL};
  assert_int_equal(tl_test_run(a3, NULL, &out, &err), 1);
  assert_non_null(strstr(err, "not a tl database"));
  assert_non_null(strchr(err, '\n'));
  assert_ptr_equal(strchr(err, '\n'), err + strlen(err) - 1);
  free(junk);
  free(out);
  free(err);
}

static void interrupted_collection(void **state) {
  fixture *f = *state;
  char *collect[] = {TLCOLLECT,  "--db", f->db,     "--label", "sig",
                     "--delays", "1,2",  "--count", "1000000", NULL};
  pid_t pid = tl_test_start(collect, NULL);
  /* Wait until samples are committed, then interrupt. */
  int64_t stored = 0;
  for (int i = 0; i < 100 && stored < 20; i++) {
    usleep(100000);
    stored = tl_test_stats(f->db).samples;
  }
  assert_true(stored >= 20);
  kill(pid, SIGINT);
  int st;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 3);

  tl_session_list list;
  tl_store *s = tl_test_sessions(f->db, 2, &list);
  for (size_t i = 0; i < list.count; i++) {
    assert_string_equal(list.items[i].status, "interrupted");
    assert_true(list.items[i].sample_count >= 10);
    assert_true(list.items[i].ended_ns > 0);
  }
  tl_session_list_free(&list);
  tl_store_close(s);
  char *out, *err;
  char *a[] = {TLSTORE, "--db", f->db, "check", NULL};
  assert_int_equal(tl_test_run(a, NULL, &out, &err), 0);
  free(out);
  free(err);
}

static void collect_end_to_end(void **state) {
  fixture *f = *state;
  char *out, *err;
  char *a[] = {TLCOLLECT, "--db",    f->db, "--label", "e2e",       "--delays",
               "0,5",     "--count", "30",  "--tag",   "load=idle", NULL};
  assert_int_equal(tl_test_run(a, NULL, &out, &err), 0);
  assert_non_null(strstr(out, "e2e: 90 percent of calls took up to "));
  assert_non_null(strstr(out, "(for setTimeout(0) and setTimeout(5) respectively)\n"));
  /* Not a terminal: no progress, a start and an end line (see test_env). */
  assert_null(strchr(err, '\r'));
  assert_non_null(strstr(err, " tlcollect: end: complete, 60 samples stored in "));
  free(out);
  free(err);
  tl_session_list list;
  tl_store *s = tl_test_sessions(f->db, 2, &list);
  assert_int_equal(list.items[0].sample_count, 30);
  assert_non_null(strstr(list.items[0].command_line, "--label e2e --delays 0,5"));
  tl_fact_row *rows;
  size_t n;
  assert_int_equal(tl_store_tags(s, list.items[0].id, &rows, &n), TL_OK);
  assert_int_equal(n, 2); /* the user's tag and where each timer was armed */
  assert_string_equal(tl_fact_rows_get(rows, n, "load"), "idle");
  assert_string_equal(tl_fact_rows_get(rows, n, "arm_from"), "timer");
  tl_fact_rows_free(rows, n);
  tl_session_list_free(&list);
  tl_store_close(s);
}

/* tlreport --check end to end: exit 1 with one line per regression when a
 * label is clearly worse than the baseline by more than allowed, 0 when
 * the threshold covers it. Three sessions a label, each a little apart, so
 * that run-to-run variation is measured. */
static void regression_check_exit_status(void **state) {
  fixture *f = *state;
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  int64_t base[2000], worse[2000];
  for (int run = 0; run < 3; run++) {
    for (int i = 0; i < 2000; i++) {
      base[i] = 10000000 + run * 30000 + (int64_t)((i * 7919) % 2000) * 1000; /* 10 to 12 ms */
      worse[i] = base[i] * 6 / 5;                                             /* 20% slower */
    }
    add_session(s, "base", 0, base, 2000);
    add_session(s, "worse", 0, worse, 2000);
  }
  tl_store_close(s);
  char *out, *err;
  char *a1[] = {TLREPORT,    "--db",       f->db,           "--check", "--baseline", "base",
                "--compare", "base,worse", "--percentiles", "50,90",   NULL};
  assert_int_equal(tl_test_run(a1, NULL, &out, &err), 1);
  assert_non_null(strstr(out, "regression: worse settimeout 0 ms p50 is "));
  assert_non_null(strstr(out, "regression: worse settimeout 0 ms p90 is "));
  assert_null(strstr(out, "regression: base"));
  assert_string_equal(err, "");
  free(out);
  free(err);
  char *a2[] = {TLREPORT,    "--db",       f->db,           "--check", "--baseline",       "base",
                "--compare", "base,worse", "--percentiles", "50,90",   "--max-regression", "25%",
                NULL};
  assert_int_equal(tl_test_run(a2, NULL, &out, &err), 0);
  assert_null(strstr(out, "regression:"));
  free(out);
  free(err);
  /* An unknown baseline names the labels there are. */
  char *a3[] = {TLREPORT, "--db", f->db, "--check", "--baseline", "nosuch", NULL};
  assert_int_equal(tl_test_run(a3, NULL, &out, &err), 1);
  assert_non_null(strstr(err, "base, worse"));
  free(out);
  free(err);
}

/* Every option with empty, negative, huge, non-numeric, duplicated and
 * unknown values: exit 2 and exactly one line on stderr naming the option. */
static void bad_arguments(void **state) {
  fixture *f = *state;
  static const char *const cases[][8] = {
      {TLCOLLECT, "--count", "", NULL},
      {TLCOLLECT, "--count", "-5", NULL},
      {TLCOLLECT, "--count", "0", NULL},
      {TLCOLLECT, "--count", "abc", NULL},
      {TLCOLLECT, "--count", "99999999999999999999", NULL},
      {TLCOLLECT, "--count", "10", "--duration", "5s", NULL},
      {TLCOLLECT, "--duration", "0s", NULL},
      {TLCOLLECT, "--duration", "5 parsecs", NULL},
      {TLCOLLECT, "--delays", "", NULL},
      {TLCOLLECT, "--delays", "0,,50", NULL},
      {TLCOLLECT, "--delays", "50,50", NULL},
      {TLCOLLECT, "--delays", "-1", NULL},
      {TLCOLLECT, "--delays", "1.5", NULL},
      {TLCOLLECT, "--delays", "25h", NULL},
      {TLCOLLECT, "--label", "", NULL},
      {TLCOLLECT, "--label", "<script>alert(1)</script>", NULL},
      {TLCOLLECT, "--label", "a", "--label", "b", NULL},
      {TLCOLLECT, "--probe", "nosuch", NULL},
      {TLCOLLECT, "--warmup", "-1", NULL},
      {TLCOLLECT, "--gap", "2x", NULL},
      {TLCOLLECT, "--tag", "novalue", NULL},
      {TLCOLLECT, "--tag", "k=1", "--tag", "k=2", NULL},
      {TLCOLLECT, "--db", "", NULL},
      {TLCOLLECT, "--bogus", NULL},
      {TLCOLLECT, "--count", NULL},
      {TLCOLLECT, "extra", NULL},
      {TLREPORT, "--compare", "", NULL},
      {TLREPORT, "--compare", "a,a", NULL},
      {TLREPORT, "--compare", "a b", NULL},
      {TLREPORT, "--since", "yesterday", NULL},
      {TLREPORT, "--since", "2026-02-30", NULL},
      {TLREPORT, "--since", "2026-11-02", "--until", "2026-11-01", NULL},
      {TLREPORT, "--percentiles", "50,101", NULL},
      {TLREPORT, "--percentiles", "0", NULL},
      {TLREPORT, "--percentiles", "nan", NULL},
      {TLREPORT, "--delay", "x", NULL},
      {TLREPORT, "--tag", "=v", NULL},
      {TLREPORT, "--host", "", NULL},
      {TLREPORT, "-o", "", NULL},
      {TLREPORT, "--nope", NULL},
      {TLREPORT, "--max-regression", "10%", NULL},
      {TLREPORT, "--check", "--max-regression", "abc", NULL},
      {TLREPORT, "--check", "--max-regression", "-5%", NULL},
      {TLREPORT, "--check", "-o", "x.md", NULL},
      {TLREPORT, "--check", "--site", "dir", NULL},
      {TLREPORT, "--format", "pdf", NULL},
      {TLREPORT, "--format", "html", "--format", "md", NULL},
      {TLREPORT, "--last", "0", NULL},
      {TLREPORT, "--last", "-3", NULL},
      {TLREPORT, "--last", "many", NULL},
      {TLREPORT, "--baseline", "<b>", NULL},
      {TLREPORT, "--compare", "a,b", "--baseline", "c", NULL},
      {TLREPORT, "--probe", "bad name", NULL},
      {TLREPORT, "--probe", "exec:", NULL},
      {TLREPORT, "--site", "", NULL},
      {TLREPORT, "--site", "d", "-o", "f", NULL},
      {TLREPORT, "--site", "d", "--format", "json", NULL},
      {TLSTORE, NULL},
      {TLSTORE, "frobnicate", NULL},
      {TLSTORE, "info", "extra", NULL},
      {TLSTORE, "--db", "", "info", NULL},
      /* Each value option: empty, negative, huge, non-numeric, duplicated. */
      {TLCOLLECT, "--count", "1000000001", NULL},
      {TLCOLLECT, "--count", "1.5", NULL},
      {TLCOLLECT, "--count", " 5", NULL},
      {TLCOLLECT, "--count", "5x", NULL},
      {TLCOLLECT, "--count", "0x10", NULL},
      {TLCOLLECT, "-n", "5", "--count", "6", NULL},
      {TLCOLLECT, "--duration", "", NULL},
      {TLCOLLECT, "--duration", "-5s", NULL},
      {TLCOLLECT, "--duration", "367d", NULL},
      {TLCOLLECT, "--duration", "99999999999999999999999s", NULL},
      {TLCOLLECT, "--duration", "1e3s", NULL},
      {TLCOLLECT, "--duration", "5s", "--duration", "6s", NULL},
      {TLCOLLECT, "--delays", "abc", NULL},
      {TLCOLLECT, "--delays", "0,", NULL},
      {TLCOLLECT, "--delays", "1,1ms", NULL},
      {TLCOLLECT, "--delays", "0", "-d", "50", NULL},
      {TLCOLLECT, "--delays",
       "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33",
       NULL},
      {TLCOLLECT, "--label", "-x", NULL},
      {TLCOLLECT, "--label", "a b", NULL},
      {TLCOLLECT, "--label", "\x1b]0;owned\x07", NULL},
      {TLCOLLECT, "--label", "caf\xc3\xa9", NULL},
      {TLCOLLECT, "--label",
       "x123456789012345678901234567890123456789012345678901234567890123456789", NULL},
      {TLCOLLECT, "--probe", "", NULL},
      {TLCOLLECT, "--probe", "uv", "--probe", "settimeout", NULL},
      {TLCOLLECT, "--warmup", "", NULL},
      {TLCOLLECT, "--warmup", "1000001", NULL},
      {TLCOLLECT, "--warmup", "five", NULL},
      {TLCOLLECT, "--warmup", "1", "--warmup", "2", NULL},
      {TLCOLLECT, "--gap", "", NULL},
      {TLCOLLECT, "--gap", "-1ms", NULL},
      {TLCOLLECT, "--gap", "2h", NULL},
      {TLCOLLECT, "--gap", "1ms", "--gap", "2ms", NULL},
      {TLCOLLECT, "--tag", "", NULL},
      {TLCOLLECT, "--tag", "k=\x1b[31m", NULL},
      {TLCOLLECT, "--tag",
       "k=\xc2\x9b"
       "31m",
       NULL},
      {TLCOLLECT, "--tag", "k=\xff\xfe", NULL},
      {TLCOLLECT, "--tag", "k=line\nbreak", NULL},
      {TLCOLLECT, "--tag", "<script>=x", NULL},
      {TLCOLLECT, "--db", "a.db", "--db", "b.db", NULL},
      {TLCOLLECT, "--bogus\x1b[2J", NULL},
      {TLCOLLECT, "-Z", NULL},
      {TLREPORT, "--compare", "a", "--compare", "b", NULL},
      {TLREPORT, "--compare", "<script>", NULL},
      {TLREPORT, "--probe", "", NULL},
      {TLREPORT, "--probe", "a", "--probe", "b", NULL},
      {TLREPORT, "--delay", "", NULL},
      {TLREPORT, "--delay", "-1", NULL},
      {TLREPORT, "--delay", "99999999999999999999", NULL},
      {TLREPORT, "--delay", "1", "--delay", "2", NULL},
      {TLREPORT, "--since", "", NULL},
      {TLREPORT, "--since", "9999-12-31", NULL},
      {TLREPORT, "--since", "2026-01-01", "--since", "2026-01-02", NULL},
      {TLREPORT, "--until", "2026-01-01T00:00:00", NULL},
      {TLREPORT, "--until", "2026-01-01", "--until", "2026-01-02", NULL},
      {TLREPORT, "--host", "a", "--host", "b", NULL},
      {TLREPORT, "--tag", "", NULL},
      {TLREPORT, "--tag", "k=\x1b[2J", NULL},
      {TLREPORT, "--percentiles", "", NULL},
      {TLREPORT, "--percentiles", "-50", NULL},
      {TLREPORT, "--percentiles", "1e999", NULL},
      {TLREPORT, "--percentiles", "50,50", NULL},
      {TLREPORT, "--percentiles", "50", "--percentiles", "90", NULL},
      {TLREPORT, "-o", "a.md", "--output", "b.md", NULL},
      {TLREPORT, "--db", "a.db", "--db", "b.db", NULL},
      {TLREPORT, "extra", NULL},
      {TLSTORE, "--db", "a.db", "--db", "b.db", "info", NULL},
      {TLSTORE, "--bogus", "info", NULL},
      {TLSTORE, "check", "--bogus", NULL},
      {TLSTORE, "\x1b[2J", NULL},
  };
  char env[4200];
  snprintf(env, sizeof env, "TL_DB=%s", f->db);
  char *envs[] = {env, NULL};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *out, *err;
    int rc = tl_test_run((char *const *)cases[i], envs, &out, &err);
    if (rc != 2 || !tl_test_one_line(err) || !strstr(err, "error:") || tl_test_unsafe_at(err) >= 0)
      fail_msg("case %zu (%s %s): exit %d, stderr '%s'", i, cases[i][1] ? cases[i][1] : "",
               cases[i][1] && cases[i][2] ? cases[i][2] : "", rc, err);
    assert_string_equal(out, "");
    free(out);
    free(err);
  }
  /* Nothing was created by any of them. */
  assert_int_not_equal(access(f->db, F_OK), 0);
}

/* ------------------------------------------------------------------------ */
/* tlstore COMMAND --help                                                    */

/* Every tlstore command with the options its help must list. */
static const struct {
  const char *name;
  const char *options[12];
} store_commands[] = {
    {"info", {NULL}},
    {"check", {NULL}},
    {"labels", {NULL}},
    {"hosts", {NULL}},
    {"sessions",
     {"--label", "--probe", "--delay", "--since", "--until", "--host", "--tag", "--status", NULL}},
    {"export",
     {"--format", "--label", "--probe", "--delay", "--since", "--until", "--host", "--tag",
      "--status", NULL}},
    {"import",
     {"--format", "--label", "--probe", "--delay", "--unit", "--host", "--start", "--fact",
      "--skip-bad", NULL}},
    {"merge", {NULL}},
    {"delete", {NULL}},
    {"prune", {"--before", "--label", NULL}},
    {"vacuum", {NULL}},
    {"help", {NULL}},
};
enum { N_STORE_COMMANDS = sizeof store_commands / sizeof store_commands[0] };

/* Runs tlstore with up to five arguments (NULL-terminated) and env (may be
 * NULL); stdout and stderr malloc'ed. */
static int run_store(char *const *env, char **out, char **err, const char *a1, const char *a2,
                     const char *a3, const char *a4, const char *a5) {
  char *a[] = {TLSTORE, (char *)a1, (char *)a2, (char *)a3, (char *)a4, (char *)a5, NULL};
  return tl_test_run(a, env, out, err);
}

/* Whether help has an option line for opt: "      --opt" or "  -h, --opt",
 * followed by its value or the text. */
static int help_lists(const char *help, const char *opt) {
  for (const char *p = help; (p = strstr(p, opt)) != NULL; p++) {
    size_t n = strlen(opt);
    const char *line = p;
    while (line > help && line[-1] != '\n')
      line--;
    int at_start = (size_t)(p - line) == 6 && strncmp(line, "      ", 6) == 0;
    int after_short = (size_t)(p - line) == 6 && line[0] == ' ' && line[2] == '-';
    if ((at_start || after_short) && (p[n] == ' ' || p[n] == '\n'))
      return 1;
  }
  return 0;
}

static void store_command_help(void **state) {
  fixture *f = *state;
  char *missing = tl_test_path(f->dir, "missing/tl.db"), *junk = f->db;
  const char *junk_text = "not a database, and must stay so\n";
  assert_int_equal(tl_test_write_file(junk, junk_text, strlen(junk_text)), 0);
  char env_missing[4200];
  snprintf(env_missing, sizeof env_missing, "TL_DB=%s", missing);
  char *envs[] = {env_missing, NULL}, *no_home[] = {"HOME=", "TL_DB=", NULL};
  char *top, *out, *err;
  assert_int_equal(run_store(NULL, &top, &err, "--help", NULL, NULL, NULL, NULL), 0);
  free(err);
  for (size_t i = 0; i < N_STORE_COMMANDS; i++) {
    const char *name = store_commands[i].name;
    char head[128], item[64];
    snprintf(head, sizeof head, "Usage: tlstore [--db PATH] %s", name);
    snprintf(item, sizeof item, "\n  %s ", name);
    if (!strstr(top, item))
      fail_msg("tlstore --help does not list the command %s", name);
    char *help;
    int rc = run_store(NULL, &help, &err, "--db", missing, name, "--help", NULL);
    if (rc != 0 || *err)
      fail_msg("tlstore %s --help: exit %d, stderr '%s'", name, rc, err);
    free(err);
    if (strncmp(help, head, strlen(head)) != 0)
      fail_msg("tlstore %s --help starts '%.60s'", name, help);
    assert_true(help_lists(help, "--help"));
    for (const char *const *o = store_commands[i].options; *o; o++)
      if (!help_lists(help, *o))
        fail_msg("tlstore %s --help does not list %s:\n%s", name, *o, help);
    /* -h, "help COMMAND", TL_DB and no default database path at all: the
     * same help; a file that is no database is not even looked at. */
    struct {
      char **env;
      const char *a[5];
    } same[] = {
        {NULL, {"--db", missing, name, "-h", NULL}},
        {NULL, {"--db", missing, "help", name, NULL}},
        {envs, {name, "--help", NULL}},
        {no_home, {name, "--help", NULL}},
        {NULL, {"--db", junk, name, "--help", NULL}},
        {NULL, {"--db", missing, name, "extra", "--help"}},
    };
    for (size_t k = 0; k < sizeof same / sizeof same[0]; k++) {
      rc = run_store(same[k].env, &out, &err, same[k].a[0], same[k].a[1], same[k].a[2],
                     same[k].a[3], same[k].a[4]);
      if (rc != 0 || strcmp(out, help) != 0 || *err)
        fail_msg("tlstore %s, case %zu: exit %d, stdout '%.60s', stderr '%s'", name, k, rc, out,
                 err);
      free(out);
      free(err);
    }
    /* Each option the help lists is one the command takes, with a value
     * when the help shows one. */
    for (const char *p = help; (p = strstr(p, "\n      --")) != NULL;) {
      char opt[64], value[64] = "";
      p += 7;
      assert_int_equal(sscanf(p, "%63[a-z0-9-]", opt), 1);
      if (p[strlen(opt)] == ' ' && isupper((unsigned char)p[strlen(opt) + 1]))
        assert_int_equal(sscanf(p + strlen(opt) + 1, "%63[A-Za-z=_]", value), 1);
      rc = run_store(NULL, &out, &err, "--db", missing, name, opt, *value ? NULL : "--help");
      if (*value) {
        /* No value: a usage error naming the option. */
        if (rc != 2 || !tl_test_one_line(err) || !strstr(err, opt))
          fail_msg("tlstore %s %s (no value): exit %d, stderr '%s'", name, opt, rc, err);
      } else if (rc != 0 || strcmp(out, help) != 0) {
        fail_msg("tlstore %s %s --help: exit %d, stderr '%s'", name, opt, rc, err);
      }
      free(out);
      free(err);
      if (*value) {
        char *a[] = {TLSTORE, "--db", missing, (char *)name, opt, value, "--help", NULL};
        rc = tl_test_run(a, NULL, &out, &err);
        if (rc != 0 || strcmp(out, help) != 0)
          fail_msg("tlstore %s %s %s --help: exit %d, stderr '%s'", name, opt, value, rc, err);
        free(out);
        free(err);
      }
    }
    free(help);
  }
  /* "help" alone is the top-level help. */
  assert_int_equal(run_store(NULL, &out, &err, "--db", missing, "help", NULL, NULL), 0);
  assert_string_equal(out, top);
  free(out);
  free(err);
  /* Nothing was created, and the file that is no database is as it was. */
  assert_int_not_equal(access(missing, F_OK), 0);
  char *dir = tl_test_path(f->dir, "missing");
  assert_int_not_equal(access(dir, F_OK), 0);
  char *after = tl_test_read_file(junk, NULL);
  assert_string_equal(after, junk_text);
  char *journal = tl_test_path(f->dir, "tl.db-journal"), *wal = tl_test_path(f->dir, "tl.db-wal");
  assert_int_not_equal(access(journal, F_OK), 0);
  assert_int_not_equal(access(wal, F_OK), 0);
  free(wal);
  free(journal);
  free(after);
  free(dir);
  free(top);
  free(missing);
}

/* An option a command does not take, before or after its operands, and bad
 * uses of help: exit 2, one line naming it, and nothing created. */
static void store_command_bad_options(void **state) {
  fixture *f = *state;
  const char *uuid = "0123abcd-0123-4567-89ab-0123456789ab";
  for (size_t i = 0; i < N_STORE_COMMANDS; i++) {
    const char *name = store_commands[i].name;
    const char *operand = strcmp(name, "delete") == 0   ? uuid
                          : strcmp(name, "merge") == 0  ? "other.db"
                          : strcmp(name, "import") == 0 ? "-"
                                                        : NULL;
    const char *bad[] = {"--bogus", "-Z", "--help=yes", "--\x1b[2Jx"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
      for (int after = 0; after < 2; after++) {
        if (after && !operand)
          continue;
        char *out, *err;
        int rc = run_store(NULL, &out, &err, "--db", f->db, name, after ? operand : bad[k],
                           after ? bad[k] : NULL);
        char shown[16], see[64], tail[64];
        snprintf(shown, sizeof shown, "%.6s", bad[k]);
        /* The error names the command and points to its own help. */
        int help = strcmp(name, "help") == 0;
        snprintf(see, sizeof see, "error: %s%s-", help ? "" : name, help ? "" : ": ");
        snprintf(tail, sizeof tail, "(see tlstore %s%s--help)\n", help ? "" : name,
                 help ? "" : " ");
        size_t len = strlen(err), tail_len = strlen(tail);
        if (rc != 2 || !tl_test_one_line(err) || !strstr(err, see) || len < tail_len ||
            strcmp(err + len - tail_len, tail) != 0 || !strstr(err, k == 3 ? "--\\x1b" : shown) ||
            tl_test_unsafe_at(err) >= 0 || *out)
          fail_msg("tlstore %s %s: exit %d, stderr '%s'", name, bad[k], rc, err);
        free(out);
        free(err);
      }
  }
  /* A value option given twice is a usage error; the filters that may
   * repeat (--label, --tag) are not. */
  const char *twice[][5] = {{"prune", "--before", "2020-01-01", "--before", "2021-01-01"},
                            {"export", "--format", "csv", "--format", "jsonl"},
                            {"sessions", "--probe", "uv", "--probe", "uv"}};
  char env[4200];
  snprintf(env, sizeof env, "TL_DB=%s", f->db);
  char *envs[] = {env, NULL};
  for (size_t k = 0; k < 3; k++) {
    char *out, *err;
    int rc = run_store(envs, &out, &err, twice[k][0], twice[k][1], twice[k][2], twice[k][3],
                       twice[k][4]);
    if (rc != 2 || !tl_test_one_line(err) || !strstr(err, "given twice") || *out)
      fail_msg("tlstore %s %s twice: exit %d, stderr '%s'", twice[k][0], twice[k][1], rc, err);
    free(out);
    free(err);
  }
  const char *help_cases[][2] = {{"frobnicate", NULL}, {"export", "extra"}};
  for (size_t k = 0; k < 2; k++) {
    char *out, *err;
    int rc = run_store(NULL, &out, &err, "--db", f->db, "help", help_cases[k][0], help_cases[k][1]);
    if (rc != 2 || !tl_test_one_line(err) || *out)
      fail_msg("tlstore help %s: exit %d, stderr '%s'", help_cases[k][0], rc, err);
    free(out);
    free(err);
  }
  assert_int_not_equal(access(f->db, F_OK), 0);
}

/* --db may follow the command, as in tlcollect and tlreport: "tlstore merge
 * --db merged.db a.db" merges into merged.db; "--db=PATH" too; a filter's
 * value is never taken for it; before and after the command is "given twice". */
static void store_db_after_command(void **state) {
  fixture *f = *state;
  build_golden_db(f->db);
  char *merged = tl_test_path(f->dir, "merged.db");
  char *out, *err;
  assert_int_equal(run_store(NULL, &out, &err, "merge", "--db", merged, f->db, NULL), 0);
  assert_non_null(strstr(out, "merged 4 sessions"));
  free(out);
  free(err);
  char db_eq[4200];
  snprintf(db_eq, sizeof db_eq, "--db=%s", merged);
  assert_int_equal(run_store(NULL, &out, &err, "sessions", "--label", "macos", db_eq, NULL), 0);
  assert_non_null(strstr(out, "macos"));
  assert_null(strstr(out, "vbox"));
  free(out);
  free(err);
  /* "--db" as the value of --host is a host name, not the option. */
  assert_int_equal(run_store(NULL, &out, &err, "sessions", "--host", "--db", db_eq, NULL), 0);
  assert_null(strstr(out, "vbox"));
  assert_null(strstr(out, "macos"));
  free(out);
  free(err);
  /* import --host is a host name, and its refusal says so. */
  char *imp[] = {TLSTORE,   "--db", merged,    "import", "--format", "csv", "--label", "a",
                 "--probe", "p",    "--delay", "0",      "--host",   "<x>", "-",       NULL};
  if (tl_test_run(imp, NULL, &out, &err) != 2 || !tl_test_one_line(err) ||
      !strstr(err, "--host: host name must start with a letter or digit"))
    fail_msg("import --host '<x>': stderr '%s'", err);
  free(out);
  free(err);
  int rc = run_store(NULL, &out, &err, "--db", merged, "info", "--db", f->db);
  if (rc != 2 || !tl_test_one_line(err) || !strstr(err, "--db") || !strstr(err, "given twice"))
    fail_msg("--db before and after: exit %d, stderr '%s'", rc, err);
  free(out);
  free(err);
  rc = run_store(NULL, &out, &err, "info", "--db", NULL, NULL, NULL);
  if (rc != 2 || !tl_test_one_line(err) || !strstr(err, "needs a value"))
    fail_msg("--db without a value: exit %d, stderr '%s'", rc, err);
  free(out);
  free(err);
  free(merged);
}

/* tlstore and tlreport take the same filter values (one parser): an exec
 * probe name is a filter in both, and a bad value draws the same reason. */
static void filters_agree(void **state) {
  fixture *f = *state;
  build_golden_db(f->db);
  char *out, *err;
  assert_int_equal(
      run_store(NULL, &out, &err, "--db", f->db, "sessions", "--probe", "exec:python3 probe.py"),
      0);
  assert_null(strstr(out, "vbox"));
  free(out);
  free(err);
  const char *bad[][2] = {{"--probe", "exec:"},      {"--probe", "no spaces"}, {"--delay", "25h"},
                          {"--since", "2026-13-01"}, {"--tag", "=x"},          {"--host", ""}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char *serr, *rerr;
    int src = run_store(NULL, &out, &serr, "--db", f->db, "sessions", bad[i][0], bad[i][1]);
    free(out);
    char *ra[] = {TLREPORT, "--db", f->db, (char *)bad[i][0], (char *)bad[i][1], NULL};
    int rrc = tl_test_run(ra, NULL, &out, &rerr);
    free(out);
    /* "tlstore: error: --delay: WHY (see tlstore --help)" and the same
     * from tlreport: equal from the option to the pointer to the help. */
    char *s_at = strstr(serr, bad[i][0]), *r_at = strstr(rerr, bad[i][0]);
    char *s_end = s_at ? strstr(s_at, " (see ") : NULL,
         *r_end = r_at ? strstr(r_at, " (see ") : NULL;
    if (s_end)
      *s_end = '\0';
    if (r_end)
      *r_end = '\0';
    if (src != 2 || rrc != 2 || !s_end || !r_end || strcmp(s_at, r_at) != 0)
      fail_msg("%s '%s': tlstore %d '%s', tlreport %d '%s'", bad[i][0], bad[i][1], src, serr, rrc,
               rerr);
    free(serr);
    free(rerr);
  }
}

/* In the child before exec: standard output to /dev/full, where every
 * write fails with ENOSPC. */
static void stdout_to_full(void *arg) {
  (void)arg;
  int fd = open("/dev/full", O_WRONLY);
  if (fd < 0 || dup2(fd, 1) < 0)
    _exit(126);
}

/* Output that could not be written is a failure: every command that prints,
 * with stdout on a full disk, exits 1 with one line saying so, never 0
 * (tlcollect too: its closing sentence, --list-probes, --host-info). */
static void output_failures(void **state) {
  fixture *f = *state;
  if (access("/dev/full", W_OK) != 0)
    tl_test_skip("no /dev/full to write to");
  build_golden_db(f->db);
  /* Many samples, so that export fails in the middle, not at the end. */
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  static int64_t v[200000];
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
    v[i] = 1000000 + (int64_t)(i % 5000) * 1000;
  add_session(s, "big", 1000000, v, sizeof v / sizeof v[0]);
  tl_store_close(s);
  const char *cases[][6] = {
      {TLSTORE, "info"},
      {TLSTORE, "check"},
      {TLSTORE, "labels"},
      {TLSTORE, "hosts"},
      {TLSTORE, "sessions"},
      {TLSTORE, "sessions", "--label", "vbox"},
      {TLSTORE, "export", "--format", "csv"},
      {TLSTORE, "export", "--format", "jsonl"},
      {TLSTORE, "export", "--format", "hgrm"},
      {TLSTORE, "--help"},
      {TLSTORE, "--version"},
      {TLSTORE, "sessions", "--help"},
      {TLSTORE, "help", "export"},
      {TLREPORT},
      {TLREPORT, "--format", "json"},
      {TLREPORT, "--format", "html"},
      {TLREPORT, "--check"},
      {TLREPORT, "--by", "help"},
      {TLREPORT, "--help"},
      {TLREPORT, "--version"},
      {TLCOLLECT, "--help"},
      {TLCOLLECT, "--version"},
      {TLCOLLECT, "--list-probes"},
      {TLCOLLECT, "--host-info"},
      {TLCOLLECT, "--host-info", "--json"},
      {TLCOLLECT, "--dry-run", "-n", "3", "-d", "0"},
      {TLCOLLECT, "-puv", "-n", "3", "-d", "0"}, /* stored; the closing sentence is lost */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *a[10] = {(char *)cases[i][0], "--db", f->db};
    for (size_t k = 1; k < 6 && cases[i][k]; k++)
      a[2 + k] = (char *)cases[i][k];
    char *err;
    int rc = tl_test_run_with(a, NULL, stdout_to_full, NULL, NULL, &err);
    /* A collection logs its start and end on stderr (not a terminal here):
     * the error is the one line after them. */
    const char *last = err;
    for (const char *nl; strcmp(cases[i][0], TLCOLLECT) == 0 && (nl = strchr(last, '\n')) && nl[1];)
      last = nl + 1;
    if (rc != 1 || !tl_test_one_line(last) ||
        !strstr(last, ": error: writing standard output: No space left on device"))
      fail_msg("case %zu > /dev/full: exit %d, stderr '%s'", i, rc, err);
    free(err);
  }
  /* A command that failed for its own reason says only that. */
  char *a[] = {TLSTORE, "--db", f->db, "delete", "0123abcd-0123-4567-89ab-0123456789ab", NULL};
  char *err;
  assert_int_equal(tl_test_run_with(a, NULL, stdout_to_full, NULL, NULL, &err), 1);
  assert_non_null(strstr(err, "no session"));
  assert_null(strstr(err, "writing standard output"));
  free(err);
}

static void help_and_version(void **state) {
  (void)state;
  const char *progs[] = {TLCOLLECT, TLSTORE, TLREPORT};
  for (size_t i = 0; i < 3; i++) {
    char *out, *err;
    char *a[] = {(char *)progs[i], "--help", NULL};
    assert_int_equal(tl_test_run(a, NULL, &out, &err), 0);
    assert_non_null(strstr(out, "Usage: "));
    assert_non_null(strstr(out, "--db PATH"));
    free(out);
    free(err);
    char *b[] = {(char *)progs[i], "--version", NULL};
    assert_int_equal(tl_test_run(b, NULL, &out, &err), 0);
    assert_non_null(strstr(out, TL_VERSION_STRING));
    free(out);
    free(err);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(store_info_and_check, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(interrupted_collection, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(collect_end_to_end, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(regression_check_exit_status, tl_test_setup,
                                      tl_test_teardown),
      cmocka_unit_test_setup_teardown(bad_arguments, tl_test_setup, tl_test_teardown),
      cmocka_unit_test(help_and_version),
      cmocka_unit_test_setup_teardown(store_command_help, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(store_command_bad_options, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(store_db_after_command, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(filters_agree, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(output_failures, tl_test_setup, tl_test_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
