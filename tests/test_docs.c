/* test_docs.c: the documentation cannot drift from the programs. Every long
 * option a program lists in --help appears in its man page (rendered from
 * docs/PROG.1.md) and in its README section; every tlstore command in
 * --help appears in tlstore(1) and the README, and every option in that
 * command's own --help in the command's entry of tlstore(1) and in the
 * README; each man page documents the exit statuses; the systemd units and
 * the cron line hold arguments that tlcollect accepts. Also checks mangen's
 * roff: the title line and the two slips of cmark's man renderer it mends. */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support.h"

/* The rendered man page of prog with roff's "\-" turned back into "-", so
 * that options read as typed. malloc'ed. */
static char *man_text(const char *prog) {
  char path[4096];
  snprintf(path, sizeof path, "%s/docs/%s.1", TL_BINARY_DIR, prog);
  char *s = tl_test_read_file(path, NULL);
  if (!s)
    fail_msg("%s is missing: the man page was not rendered", path);
  char *w = s;
  for (const char *r = s; *r; r++) {
    if (r[0] == '\\' && r[1] == '-')
      r++;
    *w++ = *r;
  }
  *w = '\0';
  return s;
}

/* The README section "## title" up to the next "## ", malloc'ed. */
static char *readme_section(const char *title) {
  char *readme = tl_test_read_file(TL_SOURCE_DIR "/README.md", NULL);
  assert_non_null(readme);
  char head[64];
  snprintf(head, sizeof head, "\n## %s\n", title);
  char *at = strstr(readme, head);
  if (!at)
    fail_msg("README.md has no section '## %s'", title);
  char *end = strstr(at + strlen(head), "\n## ");
  size_t n = end ? (size_t)(end - at) : strlen(at);
  char *s = malloc(n + 1);
  memcpy(s, at, n);
  s[n] = '\0';
  free(readme);
  return s;
}

static int word_char(char c) { return isalnum((unsigned char)c) || c == '-' || c == '_'; }

/* Whether word occurs in text as a whole word (not inside --count-x). */
static int has_word(const char *text, const char *word) {
  size_t n = strlen(word);
  for (const char *p = text; (p = strstr(p, word)) != NULL; p++)
    if ((p == text || !word_char(p[-1]) || word[0] == '-') && !word_char(p[n]))
      return 1;
  return 0;
}

/* Each "--long-option" in text, in turn: calls fn(option, ctx). */
static void each_long_option(const char *text, void (*fn)(const char *, void *), void *ctx) {
  for (const char *p = text; (p = strstr(p, "--")) != NULL;) {
    if ((p > text && word_char(p[-1])) || !islower((unsigned char)p[2])) {
      p += 2;
      continue;
    }
    char opt[64];
    size_t n = 2;
    while (n < sizeof opt - 1 &&
           (islower((unsigned char)p[n]) || isdigit((unsigned char)p[n]) || p[n] == '-'))
      n++;
    memcpy(opt, p, n);
    opt[n] = '\0';
    fn(opt, ctx);
    p += n;
  }
}

typedef struct {
  const char *prog;   /* the program whose docs these are */
  const char *what;   /* whose --help: "tlstore" or "tlstore export" */
  const char *man;    /* the part of its man page that must name each option */
  const char *readme; /* its README section */
  int seen;
} doc_ctx;

static void option_documented(const char *opt, void *arg) {
  doc_ctx *c = arg;
  c->seen++;
  if (!has_word(c->man, opt))
    fail_msg("%s --help lists %s, but docs/%s.1.md does not describe it%s", c->what, opt, c->prog,
             strcmp(c->what, c->prog) ? " (in the command's entry, or FILTERS for its filters)"
                                      : "");
  if (!has_word(c->readme, opt))
    fail_msg("%s --help lists %s, but the README's '## %s' section does not", c->what, opt,
             c->prog);
}

/* The man page section ".SH\nTITLE" of man up to the next one: its start,
 * and its length in *len; fails the test when there is none. */
static const char *man_section(const char *man, const char *title, size_t *len) {
  char head[64];
  snprintf(head, sizeof head, "\n.SH\n%s\n", title);
  const char *at = strstr(man, head);
  if (!at)
    fail_msg("the man page '%.*s' has no %s section", (int)strcspn(man, "\n"), man, title);
  const char *end = strstr(at + strlen(head), "\n.SH\n");
  *len = end ? (size_t)(end - at) : strlen(at);
  return at;
}

/* Where tlstore(1) documents the options of the command name: its entry
 * under COMMANDS, FILTERS when the entry takes them, and OPTIONS (--help).
 * malloc'ed. */
static char *command_docs(const char *man, const char *name) {
  size_t n_cmds, n_opts, n_filters, n_entry;
  const char *cmds = man_section(man, "COMMANDS", &n_cmds);
  const char *opts = man_section(man, "OPTIONS", &n_opts);
  const char *filters = man_section(man, "FILTERS", &n_filters);
  char head[80];
  snprintf(head, sizeof head, "\n.PP\n\\f[B]%s\\f[]", name);
  const char *entry = strstr(cmds, head);
  if (!entry || entry >= cmds + n_cmds)
    fail_msg("docs/tlstore.1.md has no entry **%s** under COMMANDS", name);
  const char *end = strstr(entry, "\n.RE\n");
  n_entry = end ? (size_t)(end - entry) : strlen(entry);
  char *s = malloc(n_entry + n_opts + n_filters + 1);
  memcpy(s, entry, n_entry);
  s[n_entry] = '\0';
  if (strstr(s, "FILTERS"))
    strncat(s, filters, n_filters);
  strncat(s, opts, n_opts);
  return s;
}

/* prog's --help (args before --help, e.g. a tlstore command), malloc'ed.
 * The database is one that does not exist, so that a command that took
 * --help for something else could not touch a real one. */
static int help_of(const char *path, const char *command, char **out) {
  char *err;
  char *a[] = {(char *)path, (char *)command, "--help", NULL};
  if (!command) {
    a[1] = "--help";
    a[2] = NULL;
  }
  char *env[] = {"TL_DB=/nonexistent/tl-test/tl.db", NULL};
  int rc = tl_test_run(a, env, out, &err);
  free(err);
  return rc;
}

static void help_options_in_man_pages_and_readme(void **state) {
  (void)state;
  const char *progs[][2] = {{"tlcollect", TLCOLLECT}, {"tlstore", TLSTORE}, {"tlreport", TLREPORT}};
  for (size_t i = 0; i < 3; i++) {
    char *help;
    assert_int_equal(help_of(progs[i][1], NULL, &help), 0);
    doc_ctx c = {progs[i][0], progs[i][0], man_text(progs[i][0]), readme_section(progs[i][0]), 0};
    each_long_option(help, option_documented, &c);
    assert_true(c.seen >= 3); /* at least --db, --help, --version */
    free(help);
    free((char *)c.man);
    free((char *)c.readme);
  }
}

typedef struct {
  const char *prog, *help;
  int seen;
} help_ctx;

static void option_in_help(const char *opt, void *arg) {
  help_ctx *c = arg;
  c->seen++;
  if (!has_word(c->help, opt))
    fail_msg("docs/%s.1.md describes %s under OPTIONS, but %s --help does not list it", c->prog,
             opt, c->prog);
}

/* The other way: every option a man page's OPTIONS section describes (its
 * terms, the bold lines after .PP) is in the program's --help, where a user
 * looks first. */
static void man_page_options_in_help(void **state) {
  (void)state;
  const char *progs[][2] = {{"tlcollect", TLCOLLECT}, {"tlstore", TLSTORE}, {"tlreport", TLREPORT}};
  for (size_t i = 0; i < 3; i++) {
    char *help, *man = man_text(progs[i][0]);
    assert_int_equal(help_of(progs[i][1], NULL, &help), 0);
    help_ctx c = {progs[i][0], help, 0};
    size_t len;
    const char *opts = man_section(man, "OPTIONS", &len), *end = opts + len;
    for (const char *p = opts; (p = strstr(p, "\n.PP\n\\f[B]-")) != NULL && p < end; p += 4) {
      char term[512];
      const char *line = p + 5; /* after "\n.PP\n" */
      snprintf(term, sizeof term, "%.*s", (int)strcspn(line, "\n"), line);
      each_long_option(term, option_in_help, &c);
    }
    assert_true(c.seen >= 3); /* at least --db or --label, --help, --version */
    free(help);
    free(man);
  }
}

/* The commands listed under "Commands:" in tlstore --help: each in tlstore(1)
 * as a bold term and in the README's tlstore section; and the options each
 * command lists in its own --help. */
static void store_commands_documented(void **state) {
  (void)state;
  char *help, *man = man_text("tlstore"), *readme = readme_section("tlstore");
  assert_int_equal(help_of(TLSTORE, NULL, &help), 0);
  char *at = strstr(help, "\nCommands:\n");
  assert_non_null(at);
  at += strlen("\nCommands:\n");
  int commands = 0;
  while (at[0] == ' ') {
    char name[64], bold[80];
    /* A command starts two spaces in; deeper lines continue the one above. */
    if (at[2] == ' ' || at[2] == '[') {
      at = strchr(at, '\n');
      if (!at)
        break;
      at++;
      continue;
    }
    if (sscanf(at, " %63[a-z0-9-]", name) != 1)
      fail_msg("cannot read a command name in tlstore --help at '%.20s'", at);
    snprintf(bold, sizeof bold, "\\f[B]%s\\f[]", name);
    if (!strstr(man, bold))
      fail_msg("tlstore --help lists the command %s; docs/tlstore.1.md has no **%s**", name, name);
    if (!has_word(readme, name))
      fail_msg("tlstore --help lists the command %s; the README's tlstore section does not", name);
    /* Every command answers --help, and each option it lists there is
     * documented: a command's option added later without docs fails here. */
    char *sub;
    if (help_of(TLSTORE, name, &sub) != 0)
      fail_msg("tlstore %s --help fails", name);
    char *entry = command_docs(man, name), what[80];
    snprintf(what, sizeof what, "tlstore %s", name);
    doc_ctx c = {"tlstore", what, entry, readme, 0};
    each_long_option(sub, option_documented, &c);
    free(entry);
    if (c.seen < 1) /* at least its --help */
      fail_msg("tlstore %s --help lists no options", name);
    free(sub);
    commands++;
    at = strchr(at, '\n');
    if (!at)
      break;
    at++;
  }
  assert_true(commands >= 3);
  free(help);
  free(man);
  free(readme);
}

/* Each page has an EXIT STATUS section naming the statuses the programs use. */
static void exit_statuses_documented(void **state) {
  (void)state;
  const char *progs[] = {"tlcollect", "tlstore", "tlreport"};
  for (size_t i = 0; i < 3; i++) {
    char *man = man_text(progs[i]);
    char *at = strstr(man, "\n.SH\nEXIT STATUS\n");
    if (!at)
      fail_msg("%s(1) has no EXIT STATUS section", progs[i]);
    int top = i == 0 ? 3 : 2; /* only tlcollect is ever interrupted */
    for (int st = 0; st <= top; st++) {
      char item[32];
      snprintf(item, sizeof item, "\\f[B]%d\\f[]", st);
      if (!strstr(at, item))
        fail_msg("%s(1) does not explain exit status %d", progs[i], st);
    }
    free(man);
  }
}

static void mangen_title_and_mending(void **state) {
  (void)state;
  char *dir = tl_test_tmpdir(), *out_path = tl_test_path(dir, "sample.7");
  char *out, *err;
  char *a[] = {TL_MANGEN, "sample", "7", "9.9.9", TL_FIXTURES "/mangen.md", out_path, NULL};
  assert_int_equal(tl_test_run(a, NULL, &out, &err), 0);
  free(out);
  free(err);
  char *roff = tl_test_read_file(out_path, NULL);
  assert_non_null(roff);
  const char *title = ".TH \"SAMPLE\" \"7\" \"\" \"tl 9.9.9\" \"tl manual\"\n";
  assert_memory_equal(roff, title, strlen(title));
  assert_non_null(strstr(roff, "\nsample \\- a page that needs mending\n"));
  /* A hard break is a request on its own line, not text. */
  assert_non_null(strstr(roff, "First line\n.PD 0\n"));
  /* Code lines that look like requests are escaped; others are not. */
  assert_non_null(strstr(roff, "\n\\&.dangerous request\n\\&'another\nplain\n"));
  free(roff);
  /* Bad use: missing input, wrong arguments. */
  char *b[] = {TL_MANGEN, "sample", "7", "9.9.9", "/nonexistent.md", out_path, NULL};
  assert_int_equal(tl_test_run(b, NULL, &out, &err), 1);
  assert_non_null(strstr(err, "/nonexistent.md"));
  free(out);
  free(err);
  char *c[] = {TL_MANGEN, "sample", NULL};
  assert_int_equal(tl_test_run(c, NULL, &out, &err), 2);
  free(out);
  free(err);
  tl_test_rmdir(dir);
  free(out_path);
  free(dir);
}

/* Runs tlcollect with the arguments of a documented command line (words
 * separated by spaces, up to a shell redirection), shortened to a dry run of
 * two samples: the documented options must parse. */
static void documented_command_runs(const char *where, const char *line) {
  char copy[1024], *argv[40];
  size_t n = 0;
  snprintf(copy, sizeof copy, "%s", line);
  argv[n++] = TLCOLLECT;
  char *save, *word = strtok_r(copy, " ", &save); /* the program's path */
  assert_non_null(strstr(word, "/tlcollect"));
  while ((word = strtok_r(NULL, " ", &save)) != NULL && word[0] != '>' && n < 30)
    argv[n++] = word;
  const char *shorten[] = {"--dry-run", "--quiet", "--delays", "0", "--count", "2"};
  for (size_t i = 0; i < 6; i++)
    argv[n++] = (char *)shorten[i];
  argv[n] = NULL;
  char *out, *err;
  int rc = tl_test_run(argv, NULL, &out, &err);
  if (rc != 0)
    fail_msg("%s: tlcollect refuses '%s' (exit %d): %s", where, line, rc, err);
  free(out);
  free(err);
}

static void scheduled_collection_documented(void **state) {
  (void)state;
  char *unit = tl_test_read_file(TL_SOURCE_DIR "/docs/systemd/tl-collect.service", NULL);
  char *timer = tl_test_read_file(TL_SOURCE_DIR "/docs/systemd/tl-collect.timer", NULL);
  char *guide = tl_test_read_file(TL_SOURCE_DIR "/docs/systemd/README.md", NULL);
  assert_non_null(unit);
  assert_non_null(timer);
  assert_non_null(guide);
  char line[1024];
  const char *exec = strstr(unit, "\nExecStart=");
  assert_non_null(exec);
  assert_int_equal(sscanf(exec, "\nExecStart=%1023[^\n]", line), 1);
  documented_command_runs("tl-collect.service", line);
  assert_non_null(strstr(unit, "\nType=oneshot\n"));
  assert_non_null(strstr(timer, "\nOnCalendar=hourly\n"));
  assert_non_null(strstr(timer, "\nWantedBy=timers.target\n"));
  /* The cron line: minute, hour and three stars, then the command. */
  const char *cron = strstr(guide, "\n17 * * * * ");
  assert_non_null(cron);
  assert_int_equal(sscanf(cron, "\n17 * * * * %1023[^\n]", line), 1);
  documented_command_runs("the cron line", line);
  free(guide);
  free(timer);
  free(unit);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(help_options_in_man_pages_and_readme),
      cmocka_unit_test(man_page_options_in_help),
      cmocka_unit_test(store_commands_documented),
      cmocka_unit_test(exit_statuses_documented),
      cmocka_unit_test(mangen_title_and_mending),
      cmocka_unit_test(scheduled_collection_documented),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
