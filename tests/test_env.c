/* test_env.c: the programs in the system around them. Where the database
 * goes (--db, TL_DB, XDG_DATA_HOME, HOME) and the clear error when the home
 * cannot hold it; GNU option forms and "--"; tlcollect's output without a
 * terminal (timestamped start and end lines, no progress) and with one
 * (progress, no log lines), under a pseudo-terminal. */
#define _XOPEN_SOURCE 700
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "support.h"

typedef tl_test_fixture fixture;

static int exists(const char *dir, const char *rel) {
  char *p = tl_test_path(dir, rel);
  int ok = access(p, F_OK) == 0;
  free(p);
  return ok;
}

/* A tiny collection with the environment given ("K=V" strings; TL_DB and
 * XDG_DATA_HOME are cleared unless given). Returns the exit status. */
static int collect(char **err, const char *e1, const char *e2, const char *e3) {
  char *env[] = {"TL_DB=", "XDG_DATA_HOME=", (char *)e1, (char *)e2, (char *)e3, NULL};
  char *a[] = {TLCOLLECT, "--label", "env", "--delays", "0", "--count", "2", "--quiet", NULL};
  char *out;
  int rc = tl_test_run(a, env, &out, err);
  free(out);
  return rc;
}

static char *env_of(const char *name, const char *dir, const char *rel) {
  char *s = malloc(8192);
  snprintf(s, 8192, "%s=%s%s%s", name, dir, rel ? "/" : "", rel ? rel : "");
  return s;
}

static void database_location(void **state) {
  fixture *f = *state;
  char *err, *home = env_of("HOME", f->dir, "home"), *xdg = env_of("XDG_DATA_HOME", f->dir, "xdg"),
             *tldb = env_of("TL_DB", f->dir, "from-env.db");
  /* HOME alone: ~/.local/share/tl/tl.db, folders created. */
  assert_int_equal(collect(&err, home, NULL, NULL), 0);
  free(err);
  assert_true(exists(f->dir, "home/.local/share/tl/tl.db"));
  /* XDG_DATA_HOME wins over HOME. */
  assert_int_equal(collect(&err, home, xdg, NULL), 0);
  free(err);
  assert_true(exists(f->dir, "xdg/tl/tl.db"));
  /* A relative XDG_DATA_HOME is ignored, as the XDG spec says. */
  assert_int_equal(collect(&err, home, "XDG_DATA_HOME=relative/xdg", NULL), 0);
  free(err);
  assert_false(exists(".", "relative/xdg"));
  /* TL_DB wins over both (its folder must exist: it is the user's path). */
  assert_int_equal(collect(&err, home, xdg, tldb), 0);
  free(err);
  assert_true(exists(f->dir, "from-env.db"));
  /* And the other programs read the same place. */
  char *out;
  char *env[] = {"XDG_DATA_HOME=", home, tldb, NULL};
  char *a[] = {TLSTORE, "labels", NULL};
  assert_int_equal(tl_test_run(a, env, &out, &err), 0);
  assert_string_equal(out, "env\n");
  free(out);
  free(err);
  char *env2[] = {"TL_DB=", xdg, home, NULL};
  char *b[] = {TLREPORT, "--compare", "env", NULL};
  assert_int_equal(tl_test_run(b, env2, &out, &err), 0);
  assert_true(tl_test_has_row(out, "env", "1 | 2"));
  free(out);
  free(err);
  free(home);
  free(xdg);
  free(tldb);
}

/* CI runs as root, for whom no folder is read-only: a home below a regular
 * file makes mkdir fail (ENOTDIR) for everyone. */
static void unusable_home(void **state) {
  fixture *f = *state;
  char *file = tl_test_path(f->dir, "file");
  assert_int_equal(tl_test_write_file(file, "x", 1), 0);
  char *home = env_of("HOME", f->dir, "file/home"), *err;
  assert_int_equal(collect(&err, home, NULL, NULL), 1);
  char want[8192];
  snprintf(want, sizeof want, "database %s/file/home/.local/share/tl/tl.db", f->dir);
  if (!strstr(err, want) || !strstr(err, "--db") || !strstr(err, "tlcollect: error: "))
    fail_msg("the message should name the path and --db: '%s'", err);
  assert_ptr_equal(strchr(err, '\n'), err + strlen(err) - 1); /* one line */
  free(err);
  /* A file where the tl folder should be: named too, nothing written. */
  char *home2 = env_of("HOME", f->dir, "h2");
  char *dirs[] = {"/bin/mkdir", "-p", NULL, NULL};
  dirs[2] = tl_test_path(f->dir, "h2/.local/share");
  assert_int_equal(tl_test_run(dirs, NULL, NULL, NULL), 0);
  char *tlfile = tl_test_path(f->dir, "h2/.local/share/tl");
  assert_int_equal(tl_test_write_file(tlfile, "", 0), 0);
  assert_int_equal(collect(&err, home2, NULL, NULL), 1);
  snprintf(want, sizeof want, "cannot create folder %s/h2/.local/share/tl: ", f->dir);
  if (!strstr(err, want) || !strstr(err, "--db"))
    fail_msg("the message should name the folder and --db: '%s'", err);
  free(err);
  free(dirs[2]);
  free(tlfile);
  free(home2);
  free(home);
  free(file);
}

/* --option=value, abbreviations, and "--" ending the options. */
static void gnu_options_and_dashes(void **state) {
  fixture *f = *state;
  char *db = tl_test_path(f->dir, "g.db"), dbopt[4200], *out, *err;
  snprintf(dbopt, sizeof dbopt, "--db=%s", db);
  char *a[] = {TLCOLLECT, dbopt, "--label=gnu", "--delays=0", "--cou=3", "-q", "--", NULL};
  assert_int_equal(tl_test_run(a, NULL, &out, &err), 0);
  assert_string_equal(err, "");
  free(out);
  free(err);
  char *b[] = {TLSTORE, "--db", db, "--", "labels", NULL};
  assert_int_equal(tl_test_run(b, NULL, &out, &err), 0);
  assert_string_equal(out, "gnu\n");
  free(out);
  free(err);
  char *c[] = {TLREPORT, dbopt, "--", NULL};
  assert_int_equal(tl_test_run(c, NULL, &out, &err), 0);
  assert_true(tl_test_has_row(out, "gnu", "1 | 3"));
  free(out);
  free(err);
  /* After "--" an option is an operand, which these programs do not take:
   * a usage error, nothing measured. */
  const char *const after[][6] = {
      {TLCOLLECT, dbopt, "--", "--count", "3", NULL},
      {TLREPORT, dbopt, "--", "--compare", NULL},
      {TLSTORE, "--", "--db", NULL},
      {TLSTORE, "--db", db, "labels", "extra", NULL},
  };
  for (size_t i = 0; i < sizeof after / sizeof after[0]; i++) {
    assert_int_equal(tl_test_run((char *const *)after[i], NULL, &out, &err), 2);
    assert_string_equal(out, "");
    assert_non_null(strstr(err, "error:"));
    free(out);
    free(err);
  }
  char *d[] = {TLSTORE, "--db", db, "info", NULL};
  assert_int_equal(tl_test_run(d, NULL, &out, &err), 0);
  assert_non_null(strstr(out, "sessions:       1\n")); /* nothing was added */
  free(out);
  free(err);
  free(db);
}

/* Without a terminal: the closing sentence on stdout, on stderr exactly a
 * start and an end line with ISO UTC timestamps, no progress. */
static void log_lines_without_terminal(void **state) {
  fixture *f = *state;
  char *db = tl_test_path(f->dir, "l.db"), *out, *err;
  char *a[] = {TLCOLLECT, "--db", db, "--label", "cron", "--delays", "0,2", "--count", "4", NULL};
  assert_int_equal(tl_test_run(a, NULL, &out, &err), 0);
  assert_non_null(strstr(out, "cron: 90 percent of calls took up to "));
  int y, mo, d, h, mi, s;
  char rest[5000];
  assert_int_equal(
      sscanf(err, "%4d-%2d-%2dT%2d:%2d:%2dZ tlcollect: %4999[^\n]", &y, &mo, &d, &h, &mi, &s, rest),
      7);
  assert_true(y >= 2024 && mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h <= 23);
  char want[5000];
  snprintf(want, sizeof want,
           "start: label cron, probe settimeout, delays 0,2 ms, 4 samples each, database %s", db);
  assert_string_equal(rest, want);
  const char *second = strchr(err, '\n') + 1;
  assert_int_equal(sscanf(second, "%4d-%2d-%2dT%2d:%2d:%2dZ tlcollect: %4999[^\n]", &y, &mo, &d, &h,
                          &mi, &s, rest),
                   7);
  assert_non_null(strstr(rest, "end: complete, 8 samples stored in "));
  assert_string_equal(strchr(second, '\n'), "\n"); /* two lines, nothing else */
  free(out);
  free(err);
  /* The start line names the probe that runs, and a bare --duration is
   * read as seconds, with a warning that says so. */
  char *u[] = {TLCOLLECT, "--db",     db,  "--label",    "cron", "--probe",
               "uv",      "--delays", "0", "--duration", "1",    NULL};
  assert_int_equal(tl_test_run(u, NULL, &out, &err), 0);
  assert_non_null(strstr(err, "tlcollect: warning: --duration 1 means 1s"));
  assert_non_null(strstr(err, "start: label cron, probe uv, delays 0 ms, for 1 s, database "));
  free(out);
  free(err);
  /* --quiet: nothing at all. */
  char *b[] = {TLCOLLECT, "--db", db, "--delays", "0", "--count", "2", "--quiet", NULL};
  assert_int_equal(tl_test_run(b, NULL, &out, &err), 0);
  assert_string_equal(out, "");
  assert_string_equal(err, "");
  free(out);
  free(err);
  /* A failure is logged as such, with the error line and status 1. */
  char *bad = tl_test_path(f->dir, "not-a-db");
  assert_int_equal(tl_test_write_file(bad, "this is text, not SQLite", 24), 0);
  char *c[] = {TLCOLLECT, "--db", bad, "--delays", "0", "--count", "2", NULL};
  assert_int_equal(tl_test_run(c, NULL, &out, &err), 1);
  assert_non_null(strstr(err, "tlcollect: error: "));
  assert_null(strstr(err, "end: complete"));
  free(out);
  free(err);
  free(bad);
  free(db);
}

/* With stderr on a (pseudo-)terminal: progress lines, and no log lines. */
static void progress_on_terminal(void **state) {
  fixture *f = *state;
  int master = posix_openpt(O_RDWR | O_NOCTTY);
  char *slave_name =
      master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0 ? ptsname(master) : NULL;
  if (!slave_name)
    tl_test_skip("no pseudo-terminals here");
  char *db = tl_test_path(f->dir, "t.db");
  pid_t pid = fork();
  if (pid == 0) {
    int slave = open(slave_name, O_RDWR);
    if (slave < 0)
      _exit(126);
    int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    dup2(slave, 2);
    execl(TLCOLLECT, TLCOLLECT, "--db", db, "--delays", "0", "--duration", "1500ms", (char *)NULL);
    _exit(127);
  }
  char buf[65536];
  size_t len = 0;
  for (;;) {
    struct pollfd p = {master, POLLIN, 0};
    if (poll(&p, 1, 10000) <= 0)
      break;
    ssize_t r = read(master, buf + len, sizeof buf - 1 - len);
    if (r <= 0)
      break; /* EIO once the child has closed the terminal */
    len += (size_t)r;
  }
  buf[len] = '\0';
  int st;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  close(master);
  if (WIFEXITED(st) && WEXITSTATUS(st) == 126)
    tl_test_skip("the pseudo-terminal could not be opened");
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  if (!strstr(buf, "\rtlcollect: ") || !strstr(buf, "samples, "))
    fail_msg("no progress on the terminal: '%s'", buf);
  assert_null(strstr(buf, "tlcollect: start:"));
  assert_null(strstr(buf, "tlcollect: end:"));
  free(db);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(database_location, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(unusable_home, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(gnu_options_and_dashes, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(log_lines_without_terminal, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(progress_on_terminal, tl_test_setup, tl_test_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
