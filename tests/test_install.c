/* test_install.c: `cmake --install` into a temporary prefix, then the
 * installed programs run from there (version, a tiny collection, a report),
 * the man pages, the shipped probe scripts and the bash completion are in
 * their places, tl_data_path() finds shipped files under the prefix (and
 * never in the build tree once installed), and the installed completion
 * offers options, tlstore's commands, probes and the database's labels. */
#include <dirent.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "support.h"

static char *prefix;

/* Path under the prefix, malloc'ed. */
static char *in_prefix(const char *rel) { return tl_test_path(prefix, rel); }

static int install_once(void **state) {
  (void)state;
  prefix = tl_test_tmpdir();
  if (!prefix)
    return -1;
  char *out, *err;
  char *a[] = {TL_CMAKE, "--install", TL_BINARY_DIR, "--prefix", prefix, NULL};
  int rc = tl_test_run(a, NULL, &out, &err);
  if (rc != 0)
    fprintf(stderr, "cmake --install failed (%d): %s%s\n", rc, out, err);
  free(out);
  free(err);
  return rc == 0 ? 0 : -1;
}

static int remove_prefix(void **state) {
  (void)state;
  tl_test_rmdir(prefix);
  free(prefix);
  return 0;
}

static void assert_file(const char *rel) {
  char *p = in_prefix(rel);
  struct stat st;
  if (stat(p, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
    fail_msg("%s is not installed", p);
  free(p);
}

/* Runs an installed program (name under bin/) with the arguments given. */
static int run_installed(const char *name, char **out, char **err, ...) {
  char *argv[16];
  size_t n = 0;
  argv[n++] = in_prefix(name);
  va_list ap;
  va_start(ap, err);
  for (char *a; n < 15 && (a = va_arg(ap, char *)) != NULL;)
    argv[n++] = a;
  va_end(ap);
  argv[n] = NULL;
  int rc = tl_test_run(argv, NULL, out, err);
  free(argv[0]);
  return rc;
}

static void installed_programs_run(void **state) {
  (void)state;
  char *out, *err;
  const char *progs[] = {"bin/tlcollect", "bin/tlstore", "bin/tlreport"};
  for (size_t i = 0; i < 3; i++) {
    assert_int_equal(run_installed(progs[i], &out, &err, "--version", NULL), 0);
    assert_non_null(strstr(out, TL_VERSION_STRING));
    assert_string_equal(err, "");
    free(out);
    free(err);
  }
  char *db = in_prefix("study.db");
  assert_int_equal(run_installed("bin/tlcollect", &out, &err, "--db", db, "--label", "installed",
                                 "--delays", "0", "--count", "5", "--quiet", NULL),
                   0);
  free(out);
  free(err);
  assert_int_equal(run_installed("bin/tlreport", &out, &err, "--db", db, NULL), 0);
  assert_true(tl_test_has_row(out, "installed", "1 | 5"));
  free(out);
  free(err);
  assert_int_equal(run_installed("bin/tlstore", &out, &err, "--db", db, "labels", NULL), 0);
  assert_string_equal(out, "installed\n");
  free(out);
  free(err);
  free(db);
}

/* The installed tlcollect runs the node probe with the installed script: a
 * copy of the build tree's script elsewhere is never read (with Node.js; the
 * test is skipped without it). */
static void installed_node_probe(void **state) {
  (void)state;
  if (system("command -v node >/dev/null 2>&1") != 0) {
    tl_test_skip("node is not installed (Node.js)");
  }
  char *db = in_prefix("node.db");
  char *out, *err;
  int rc = run_installed("bin/tlcollect", &out, &err, "--db", db, "--label", "node", "--probe",
                         "node", "--delays", "0", "--count", "3", "--warmup", "0", "--quiet", NULL);
  if (rc != 0)
    fail_msg("installed tlcollect --probe node: exit %d, '%s'", rc, err);
  free(out);
  free(err);
  /* Without the installed script, the node probe is unavailable: the source
   * tree's copy is not a fallback for an installed program. */
  char *script = in_prefix("share/tl/probes/tl-node-probe.js");
  char *moved = in_prefix("tl-node-probe.js.away");
  assert_int_equal(rename(script, moved), 0);
  rc = run_installed("bin/tlcollect", &out, &err, "--db", db, "--probe", "node", "--count", "1",
                     "--quiet", NULL);
  assert_int_equal(rename(moved, script), 0);
  if (rc != 1 || !strstr(err, "tl-node-probe.js"))
    fail_msg("installed tlcollect without its script: exit %d, '%s'", rc, err);
  free(out);
  free(err);
  free(script);
  free(moved);
  free(db);
}

/* The README's 'exec:python3 asyncio-probe.py' works from any folder: the
 * argument names no file here, so the installed tlcollect runs the shipped
 * copy and records it as the tag exec_shipped (with Python, else the same
 * with node and the node probe's script; skipped with neither). */
static void installed_exec_finds_shipped_probe(void **state) {
  (void)state;
  const char *probe = "exec:python3 asyncio-probe.py", *script = "asyncio-probe.py";
  if (system("command -v python3 >/dev/null 2>&1") != 0) {
    probe = "exec:node tl-node-probe.js";
    script = "tl-node-probe.js";
    if (system("command -v node >/dev/null 2>&1") != 0)
      tl_test_skip("neither python3 nor node is installed");
  }
  char *db = in_prefix("exec.db");
  char *out, *err;
  int rc = run_installed("bin/tlcollect", &out, &err, "--db", db, "--probe", probe, "--delays",
                         "0,1", "--count", "3", "--quiet", NULL);
  if (rc != 0)
    fail_msg("installed tlcollect --probe '%s': exit %d, '%s'", probe, rc, err);
  free(out);
  free(err);
  char rel[128], real[PATH_MAX];
  snprintf(rel, sizeof rel, "share/tl/probes/%s", script);
  char *shipped = in_prefix(rel);
  assert_non_null(realpath(shipped, real));
  /* Both sessions (delays 0 and 1) carry the shipped path, as the installed
   * tlstore lists them. */
  char tag[PATH_MAX + 16];
  snprintf(tag, sizeof tag, "exec_shipped=%s", real);
  assert_int_equal(
      run_installed("bin/tlstore", &out, &err, "--db", db, "sessions", "--tag", tag, NULL), 0);
  size_t lines = 0;
  for (const char *p = out; (p = strchr(p, '\n')); p++)
    lines++;
  if (lines != 3) /* the heading and two sessions */
    fail_msg("sessions tagged %s: '%s'", tag, out);
  free(out);
  free(err);
  free(shipped);
  free(db);
}

static void man_pages_and_completion_installed(void **state) {
  (void)state;
  const char *pages[][2] = {
      {"tlcollect", "TLCOLLECT"}, {"tlstore", "TLSTORE"}, {"tlreport", "TLREPORT"}};
  for (size_t i = 0; i < 3; i++) {
    char rel[128], head[64];
    snprintf(rel, sizeof rel, "share/man/man1/%s.1", pages[i][0]);
    assert_file(rel);
    char *p = in_prefix(rel), *text = tl_test_read_file(p, NULL);
    snprintf(head, sizeof head, ".TH \"%s\" \"1\" ", pages[i][1]);
    assert_non_null(text);
    assert_memory_equal(text, head, strlen(head));
    assert_non_null(strstr(text, "\n.SH\nNAME\n"));
    assert_non_null(strstr(text, "\n.SH\nEXIT STATUS\n"));
    free(text);
    free(p);

    snprintf(rel, sizeof rel, "share/bash-completion/completions/%s", pages[i][0]);
    assert_file(rel);
    p = in_prefix(rel);
    text = tl_test_read_file(p, NULL);
    assert_non_null(strstr(text, "\ncomplete -F _tl_complete tlcollect tlstore tlreport\n"));
    free(text);
    free(p);
  }
}

/* What the README's Install table and the pages name is installed: the
 * SQLite extension, and the documents a report page or man page points to
 * (docs/NAME.md is installed as DOCDIR/NAME.md). */
static void extension_and_documents_installed(void **state) {
  (void)state;
  assert_file(TL_INSTALL_LIBDIR "/tl/tl_sqlite.so");
  const char *docs[] = {"statistics.md", "report-json.md", "schema.md", "scheduling.md"};
  for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
    char rel[256];
    snprintf(rel, sizeof rel, "%s/%s", TL_INSTALL_DOCDIR, docs[i]);
    assert_file(rel);
  }
}

/* Every file of the source tree's probes/ is installed under share/tl/probes
 * with the same bytes. */
static void shipped_probes_installed(void **state) {
  (void)state;
  DIR *d = opendir(TL_SOURCE_DIR "/probes");
  if (!d)
    tl_test_skip("no shipped probe scripts in this tree");
  int files = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    char src[4096], rel[1024];
    struct stat st;
    snprintf(src, sizeof src, "%s/probes/%s", TL_SOURCE_DIR, e->d_name);
    if (stat(src, &st) != 0 || !S_ISREG(st.st_mode))
      continue;
    snprintf(rel, sizeof rel, "share/tl/probes/%s", e->d_name);
    char *dst = in_prefix(rel);
    char *a = tl_test_read_file(src, NULL), *b = tl_test_read_file(dst, NULL);
    if (!b)
      fail_msg("%s is not installed as %s", src, dst);
    assert_string_equal(a, b);
    free(a);
    free(b);
    free(dst);
    files++;
  }
  closedir(d);
  assert_true(files > 0);
}

/* Copies the file at from to to, keeping it executable. */
static void copy_program(const char *from, const char *to) {
  char *argv[] = {"/usr/bin/env", "cp", (char *)from, (char *)to, NULL};
  assert_int_equal(tl_test_run(argv, NULL, NULL, NULL), 0);
}

static void data_path_under_prefix(void **state) {
  (void)state;
  char *bin = in_prefix("bin/tl_datapath"), *dir = in_prefix("share/tl/probes"),
       *file = in_prefix("share/tl/probes/hello.js");
  copy_program(TL_DATAPATH, bin);
  char *mk[] = {"/usr/bin/env", "mkdir", "-p", dir, NULL};
  assert_int_equal(tl_test_run(mk, NULL, NULL, NULL), 0);
  assert_int_equal(tl_test_write_file(file, "x\n", 2), 0);

  char *out, *err;
  char *a[] = {bin, "probes/hello.js", NULL};
  assert_int_equal(tl_test_run(a, NULL, &out, &err), 0);
  char want[4200], real[4096];
  assert_non_null(realpath(prefix, real));
  snprintf(want, sizeof want, "%s/share/tl/probes/hello.js\n", real);
  assert_string_equal(out, want);
  free(out);
  free(err);
  /* Installed, it must not fall back to the tree it was built from. */
  char *b[] = {bin, "README.md", NULL};
  assert_int_equal(tl_test_run(b, NULL, &out, &err), 1);
  assert_string_equal(out, "");
  free(out);
  free(err);
  /* Nothing outside share/tl. */
  const char *bad[] = {"../../etc/passwd", "/etc/passwd", "probes/../../bin/tl_datapath", ""};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char *c[] = {bin, (char *)bad[i], NULL};
    assert_int_equal(tl_test_run(c, NULL, &out, &err), 1);
    assert_string_equal(out, "");
    free(out);
    free(err);
  }
  /* From the build tree, the source tree stands in for share/tl. */
  char *d[] = {TL_DATAPATH, "README.md", NULL};
  assert_int_equal(tl_test_run(d, NULL, &out, &err), 0);
  assert_non_null(realpath(TL_SOURCE_DIR "/README.md", real));
  strcat(real, "\n");
  assert_string_equal(out, real);
  free(out);
  free(err);
  free(bin);
  free(dir);
  free(file);
}

/* Runs the installed completion in bash: script is bash code run after
 * sourcing it, with a comp() helper that completes the given words (the last
 * one is the word under the cursor) and prints the candidates one per line.
 * The installed bin/ comes first in PATH. */
static char *complete_with(const char *script, const char *db) {
  char *path_env = malloc(8192), *db_env = malloc(4200), *code = malloc(8192);
  snprintf(path_env, 8192, "PATH=%s/bin:%s", prefix, getenv("PATH") ? getenv("PATH") : "/usr/bin");
  snprintf(db_env, 4200, "TL_DB=%s", db);
  snprintf(code, 8192,
           "source '%s/share/bash-completion/completions/tlcollect' || exit 9\n"
           "comp() { COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); COMPREPLY=();\n"
           "  _tl_complete \"$1\" \"${COMP_WORDS[COMP_CWORD]}\" \"${COMP_WORDS[COMP_CWORD-1]}\";\n"
           "  printf '%%s\\n' \"${COMPREPLY[@]}\" | sort; }\n%s",
           prefix, script);
  char *argv[] = {"/usr/bin/env", "bash", "--norc", "--noprofile", "-c", code, NULL};
  char *env[] = {path_env, db_env, NULL};
  char *out, *err;
  int rc = tl_test_run(argv, env, &out, &err);
  if (rc != 0 || *err)
    fail_msg("bash exited %d: %s", rc, err);
  free(err);
  free(code);
  free(db_env);
  free(path_env);
  return out;
}

static void completion_from_installed_programs(void **state) {
  (void)state;
  char *db = in_prefix("labels.db"), *other = in_prefix("other.db"), *out, *err;
  const char *labels[] = {"vbox", "macos", "droplet"};
  for (size_t i = 0; i < 3; i++) {
    assert_int_equal(run_installed("bin/tlcollect", &out, &err, "--db", db, "--label", labels[i],
                                   "--delays", "0", "--count", "2", "--quiet", NULL),
                     0);
    free(out);
    free(err);
  }
  assert_int_equal(run_installed("bin/tlcollect", &out, &err, "--db", other, "--label", "elsewhere",
                                 "--delays", "0", "--count", "2", "--quiet", NULL),
                   0);
  free(out);
  free(err);

  struct {
    const char *script, *want;
  } cases[] = {
      {"complete -p tlcollect tlstore tlreport\n",
       "complete -F _tl_complete tlcollect\ncomplete -F _tl_complete tlstore\n"
       "complete -F _tl_complete tlreport\n"},
      {"comp tlcollect --pro", "--probe\n"},
      {"comp tlcollect --d", "--db\n--delays\n--dry-run\n--duration\n"},
      {"comp tlcollect --probe ''",
       "browser\nexec:CMD\nnanosleep\nnode\nperiodic\nsettimeout\ntimerfd\nuv\n"},
      {"comp tlcollect -p u", "uv\n"},
      {"comp tlcollect --probe = s", "settimeout\n"},
      {"comp tlcollect --label ''", "droplet\nmacos\nvbox\n"},
      {"comp tlcollect --label m", "macos\n"},
      {"comp tlcollect --count ''", "\n"},
      {"comp tlcollect -- --", "\n"},
      {"comp tlreport --compare vbox,m", "vbox,macos\n"},
      {"comp tlreport --compare vbox,", "vbox,droplet\nvbox,macos\n"},
      {"comp tlreport --compare = macos,vbox,", "macos,vbox,droplet\n"},
      {"comp tlreport -c ''", "droplet\nmacos\nvbox\n"},
      {"comp tlreport --probe ''",
       "browser\nexec:CMD\nnanosleep\nnode\nperiodic\nsettimeout\ntimerfd\nuv\n"},
      {"comp tlstore ''",
       "check\ndelete\nexport\nhelp\nhosts\nimport\ninfo\nlabels\nmerge\nprune\npush\nsessions\n"
       "vacuum\n"},
      {"comp tlstore --db x.db l", "labels\n"},
      {"comp tlstore -- ''",
       "check\ndelete\nexport\nhelp\nhosts\nimport\ninfo\nlabels\nmerge\nprune\npush\nsessions\n"
       "vacuum\n"},
      {"comp tlstore labels ''", "\n"},
      {"comp tlstore frobnicate --", "\n"},
      {"comp tlstore --", "--db\n--help\n--version\n"},
      /* A command's own options, from its --help. */
      {"comp tlstore prune --", "--before\n--help\n--label\n"},
      {"comp tlstore --db x.db export --s", "--since\n--status\n"},
      {"comp tlstore import --format csv --s", "--skip-bad\n--start\n"},
      {"comp tlstore sessions --label vbox --st", "--status\n"},
      {"comp tlstore vacuum --", "--help\n"},
      {"comp tlstore export --label ''", "droplet\nmacos\nvbox\n"},
      {"comp tlstore prune --before ''", "\n"},
      {"comp tlstore import --unit ''", "\n"},
      {"comp tlstore help ex", "export\n"},
      {"comp tlstore help export ''", "\n"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    out = complete_with(cases[i].script, db);
    if (strcmp(out, cases[i].want) != 0)
      fail_msg("case %zu '%s': got '%s', want '%s'", i, cases[i].script, out, cases[i].want);
    free(out);
  }
  /* After each command tlstore lists, exactly the long options of its own
   * --help. */
  char *commands = complete_with("comp tlstore ''", db);
  int n_commands = 0;
  for (char *save, *name = strtok_r(commands, "\n", &save); name;
       name = strtok_r(NULL, "\n", &save), n_commands++) {
    char *help;
    assert_int_equal(run_installed("bin/tlstore", &help, &err, name, "--help", NULL), 0);
    free(err);
    /* An option line has its long option at column 6: "      --label L"
     * or "  -h, --help". */
    char want[2048] = "\n", opt[64];
    for (const char *p = help; (p = strchr(p, '\n')) != NULL;) {
      const char *l = ++p;
      if (strncmp(l, "  ", 2) != 0 || strncmp(l + 6, "--", 2) != 0 ||
          (strncmp(l + 2, "    ", 4) != 0 && !(l[2] == '-' && l[4] == ',' && l[5] == ' ')))
        continue;
      assert_int_equal(sscanf(l + 6, "%63[a-z0-9-]", opt), 1);
      strcat(want, opt);
      strcat(want, "\n");
    }
    free(help);
    char script[128], lined[2048];
    snprintf(script, sizeof script, "comp tlstore %s --", name);
    out = complete_with(script, db);
    snprintf(lined, sizeof lined, "\n%s", out);
    if (!strstr(want, "\n--help\n") || strlen(lined) != strlen(want))
      fail_msg("'%s': got '%s', want the options of its --help '%s'", script, out, want);
    for (char *save2, *o = strtok_r(want, "\n", &save2); o; o = strtok_r(NULL, "\n", &save2)) {
      char item[80];
      snprintf(item, sizeof item, "\n%s\n", o);
      if (!strstr(lined, item))
        fail_msg("'%s': got '%s', which lacks %s", script, out, o);
    }
    free(out);
  }
  assert_int_equal(n_commands, 13);
  free(commands);
  /* --db on the command line wins over TL_DB, in both spellings. */
  char script[8400];
  snprintf(script, sizeof script, "comp tlcollect --db '%s' --label ''", other);
  out = complete_with(script, db);
  assert_string_equal(out, "elsewhere\n");
  free(out);
  snprintf(script, sizeof script, "comp tlreport --db = '%s' -c ''", other);
  out = complete_with(script, db);
  assert_string_equal(out, "elsewhere\n");
  free(out);
  free(other);
  free(db);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(installed_programs_run),
      cmocka_unit_test(installed_node_probe),
      cmocka_unit_test(installed_exec_finds_shipped_probe),
      cmocka_unit_test(man_pages_and_completion_installed),
      cmocka_unit_test(shipped_probes_installed),
      cmocka_unit_test(extension_and_documents_installed),
      cmocka_unit_test(data_path_under_prefix),
      cmocka_unit_test(completion_from_installed_programs),
  };
  return cmocka_run_group_tests(tests, install_once, remove_prefix);
}
