/* cli.c: what the three programs share on their command lines: the usage
 * error, the database path, options that may be given only once, the end
 * of every program (tl_cli_finish), the command line a session records, and
 * the frame of a program made of commands (tlstore). */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tl_base.h"

/* The command tl_cli_run_commands runs, for usage errors that point to its
 * own help; NULL outside one. */
static const char *current_command;

int tl_usage_error(const char *what, const char *why) {
  if (current_command)
    tl_errorf("%s: %s: %s (see %s %s --help)", current_command, what, why, tl_progname(),
              current_command);
  else
    tl_errorf("%s: %s (see %s --help)", what, why, tl_progname());
  return TL_EXIT_USAGE;
}

int tl_cli_option_error(const char *name, const char *why) {
  char opt[80];
  snprintf(opt, sizeof opt, "--%s", name);
  return tl_usage_error(opt, why);
}

int tl_cli_db_path(const char *given, char *buf, size_t len) {
  if (given) {
    if ((size_t)snprintf(buf, len, "%s", given) < len)
      return TL_EXIT_OK;
    return tl_usage_error("--db", "path is too long");
  }
  if (tl_default_db_path(buf, len) == TL_OK)
    return TL_EXIT_OK;
  tl_errorf("no default database path: HOME is not set; use --db PATH or TL_DB");
  return TL_EXIT_FAILURE;
}

/* The stream whose writes failed first, and why (tl_write_failed). */
static FILE *failed_stream;
static int failed_errno;

int tl_write_failed(FILE *f, int errnum) {
  if (!failed_stream) {
    failed_stream = f;
    failed_errno = errnum;
  }
  return TL_EIO;
}

int tl_cli_finish(int status) {
  errno = 0;
  int failed = fflush(stdout) != 0 || ferror(stdout);
  int why = errno ? errno : failed_stream == stdout ? failed_errno : 0;
  /* A closed stdout that was never written to is no failure (EBADF). */
  if (fclose(stdout) != 0 && !failed && errno != EBADF) {
    failed = 1;
    why = errno;
  }
  if (!failed)
    return status;
  tl_errorf("writing standard output: %s", why ? strerror(why) : "input/output error");
  return status == TL_EXIT_OK ? TL_EXIT_FAILURE : status;
}

const char *tl_cli_option_name(const struct option *longopts, int c) {
  for (const struct option *o = longopts; o->name; o++)
    if (o->val == c)
      return o->name;
  return "";
}

int tl_cli_once(const struct option *longopts, int c, unsigned char given[TL_CLI_OPTS],
                const int *repeatable) {
  for (const int *r = repeatable; r && *r; r++)
    if (*r == c)
      return TL_EXIT_OK;
  if (c < 0 || c >= TL_CLI_OPTS)
    return TL_EXIT_OK;
  for (const struct option *o = longopts; o->name; o++) {
    if (o->val != c || !o->has_arg || !given[c]++)
      continue;
    char name[64];
    snprintf(name, sizeof name, "--%s", o->name);
    return tl_usage_error(name, "given twice");
  }
  return TL_EXIT_OK;
}

/* Whether a is text a terminal and a database can hold as it is: valid
 * UTF-8 without control characters. */
static int printable_text(const char *a) {
  const unsigned char *p = (const unsigned char *)a;
  size_t left = strlen(a);
  while (left) {
    size_t n = tl_utf8_len(p, left);
    if (!n || tl_control_len(p, n))
      return 0;
    p += n;
    left -= n;
  }
  return 1;
}

/* a in bash's $'...' quoting: its bytes that are not printable text as
 * \xNN, so that the line is valid UTF-8 and still gives back the same
 * bytes when pasted into a shell. */
static char *put_ansi_c(char *p, const char *a) {
  const unsigned char *c = (const unsigned char *)a;
  size_t left = strlen(a);
  p += sprintf(p, "$'");
  while (left) {
    size_t n = tl_utf8_len(c, left);
    if (n && !tl_control_len(c, n) && *c != '\\' && *c != '\'') {
      memcpy(p, c, n);
      p += n;
    } else if (n == 1 && (*c == '\\' || *c == '\'')) {
      *p++ = '\\';
      *p++ = (char)*c;
    } else {
      n = n ? n : 1;
      for (size_t k = 0; k < n; k++)
        p += sprintf(p, "\\x%02x", c[k]);
    }
    c += n;
    left -= n;
  }
  *p++ = '\'';
  return p;
}

char *tl_command_line(int argc, const char *const *argv) {
  size_t len = 1;
  for (int i = 0; i < argc; i++)
    len += strlen(argv[i]) * 4 + 4;
  char *s = malloc(len), *p = s;
  if (!s)
    return NULL;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    int plain = *a != '\0';
    for (const char *c = a; *c; c++)
      if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.,:=/+@%", *c))
        plain = 0;
    if (i)
      *p++ = ' ';
    if (plain) {
      p += sprintf(p, "%s", a);
      continue;
    }
    if (!printable_text(a)) {
      p = put_ansi_c(p, a);
      continue;
    }
    *p++ = '\'';
    for (const char *c = a; *c; c++) {
      if (*c == '\'')
        p += sprintf(p, "'\\''");
      else
        *p++ = *c;
    }
    *p++ = '\'';
  }
  *p = '\0';
  return s;
}

/* ======================================================================== */
/* Programs with commands (tlstore COMMAND ...)                              */

/* The short options of every command: only -h; ':' to tell a missing value
 * from an unknown option. */
#define COMMAND_SHORTOPTS ":h"
/* A command's options are numbered from FIRST_COMMAND_OPT in the order of
 * its table (getopt_long's val). */
enum { MAX_COMMAND_OPTS = 32, FIRST_COMMAND_OPT = 256 };

int tl_cli_next(const tl_cli_args *a) {
  return getopt_long(a->argc, a->argv, COMMAND_SHORTOPTS, a->longopts, NULL);
}

int tl_cli_bad_option(const tl_cli_args *a, int c) {
  if (c == ':')
    return tl_usage_error(a->argv[optind - 1], "needs a value");
  if (optopt > 0 && optopt < 256 && isgraph(optopt)) {
    /* A short option, maybe one of a cluster ("-xv"): name only it. */
    char name[3] = {'-', (char)optopt, '\0'};
    return tl_usage_error(name, "unknown option");
  }
  return tl_usage_error(a->argv[optind - 1], "unknown option");
}

int tl_cli_take_options(const tl_cli_args *a, tl_cli_take_cb take, void *ctx) {
  char why[TL_WHY_MAX];
  int c;
  while ((c = tl_cli_next(a)) != -1) {
    const char *name = tl_cli_option_name(a->longopts, c);
    int r = take(ctx, name, optarg, why, sizeof why);
    if (r < 0)
      return tl_cli_option_error(name, why);
    if (r == 0)
      return tl_cli_bad_option(a, c);
  }
  return -1;
}

/* "  TERM" with text from column 25, or on the next line when TERM is too
 * wide: the layout of every help in tl. */
static void help_line(const char *term, const char *arg, const char *text) {
  int n = printf("  %s%s%s", term, arg && *arg ? " " : "", arg ? arg : "");
  printf("%*s%s\n", n < 25 ? 25 - n : 0, n < 25 ? "" : "\n                         ", text);
}

static void print_usage(const tl_cli_program *p) {
  fputs(p->usage_head, stdout);
  for (size_t i = 0; i < p->count; i++)
    help_line(p->commands[i].name, p->commands[i].args, p->commands[i].about);
  fputs(p->usage_tail, stdout);
}

static void print_command_help(const tl_cli_command *cmd) {
  printf("Usage: %s [--db PATH] %s%s%s\n", tl_progname(), cmd->name, *cmd->args ? " " : "",
         cmd->args);
  printf("%c%s.\n\nOptions:\n", toupper((unsigned char)cmd->about[0]), cmd->about + 1);
  char term[64];
  for (const tl_cli_option *o = cmd->options; o && o->name; o++) {
    snprintf(term, sizeof term, "    --%s", o->name);
    help_line(term, o->arg, o->help);
  }
  help_line("-h, --help", NULL, "show this help and exit");
}

/* cmd's getopt_long table, with --help, into out (MAX_COMMAND_OPTS + 2).
 * An option past MAX_COMMAND_OPTS would be left out (and test_cli's check
 * that every option in a command's help is taken would fail). */
static void command_longopts(const tl_cli_command *cmd, struct option *out) {
  size_t n = 0;
  for (const tl_cli_option *o = cmd->options; o && o->name && n < MAX_COMMAND_OPTS; o++, n++)
    out[n] = (struct option){o->name, o->arg ? required_argument : no_argument, NULL,
                             FIRST_COMMAND_OPT + (int)n};
  out[n++] = (struct option){"help", no_argument, NULL, 'h'};
  out[n] = (struct option){NULL, 0, NULL, 0};
}

/* Starts getopt afresh, in its permuting mode, so that options may follow
 * a command's operands (glibc: optind 0; BSD: optreset). */
static void getopt_restart(void) {
#ifdef __GLIBC__
  optind = 0;
#else
  optreset = 1;
  optind = 1;
#endif
}

/* A first pass over a command's arguments, before anything else: --help
 * prints the command's help; an option it does not take, or a value option
 * given twice (unless marked repeatable), is a usage error. None
 * of that needs the database. Returns the exit status, or -1 to go on. */
static int command_pass(const tl_cli_command *cmd, const tl_cli_args *a) {
  int repeatable[MAX_COMMAND_OPTS + 1], n = 0;
  for (int i = 0; cmd->options && cmd->options[i].name && i < MAX_COMMAND_OPTS; i++)
    if (cmd->options[i].repeatable)
      repeatable[n++] = FIRST_COMMAND_OPT + i;
  repeatable[n] = 0;
  unsigned char given[TL_CLI_OPTS] = {0};
  getopt_restart();
  int c;
  while ((c = tl_cli_next(a)) != -1) {
    if (c == 'h') {
      print_command_help(cmd);
      return TL_EXIT_OK;
    }
    if (c == ':' || c == '?')
      return tl_cli_bad_option(a, c);
    if (tl_cli_once(a->longopts, c, given, repeatable))
      return TL_EXIT_USAGE;
  }
  if (cmd->operands >= 0 && a->argc - optind > cmd->operands)
    return tl_usage_error(a->argv[optind + cmd->operands], "unexpected argument");
  return -1;
}

/* The long option a "--name[=value]" argument names in longopts: the exact
 * name, else the first it abbreviates (getopt_long reports an ambiguous one
 * later); NULL for none. */
static const struct option *long_option(const struct option *longopts, const char *arg) {
  size_t len = strcspn(arg + 2, "=");
  const struct option *prefix = NULL;
  for (const struct option *o = longopts; o->name; o++) {
    if (strncmp(o->name, arg + 2, len) != 0)
      continue;
    if (o->name[len] == '\0')
      return o;
    if (!prefix)
      prefix = o;
  }
  return prefix;
}

/* --db may also follow the command ("tlstore merge --db all.db a.db"), as it
 * may anywhere in tlcollect and tlreport: takes "--db PATH" or "--db=PATH"
 * out of the command's arguments (argv[0] is the command name) into *db.
 * Values of the command's other options are passed over, and "--" ends the
 * options. Returns the exit status of a usage error, or -1 to go on. */
static int take_db_option(const struct option *longopts, int *argc, char **argv, const char **db) {
  int out = 1;
  for (int i = 1; i < *argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--") == 0) {
      while (i < *argc)
        argv[out++] = argv[i++];
      break;
    }
    int is_db = strcmp(a, "--db") == 0 || strncmp(a, "--db=", 5) == 0;
    if (!is_db) {
      argv[out++] = argv[i];
      const struct option *o = a[0] == '-' && a[1] == '-' ? long_option(longopts, a) : NULL;
      if (o && o->has_arg == required_argument && !strchr(a, '=') && i + 1 < *argc)
        argv[out++] = argv[++i];
      continue;
    }
    const char *v = a[4] == '=' ? a + 5 : (i + 1 < *argc ? argv[++i] : NULL);
    if (!v)
      return tl_usage_error("--db", "needs a value");
    if (!*v)
      return tl_usage_error("--db", "empty path");
    if (*db)
      return tl_usage_error("--db", "given twice");
    *db = v;
  }
  argv[out] = NULL;
  *argc = out;
  return -1;
}

static const tl_cli_command *find_command(const tl_cli_program *p, const char *name) {
  for (size_t i = 0; i < p->count; i++)
    if (strcmp(p->commands[i].name, name) == 0)
      return &p->commands[i];
  return NULL;
}

/* PROG help [COMMAND] */
static int run_help(const tl_cli_program *p, const tl_cli_args *a) {
  if (a->argc > 2)
    return tl_usage_error(a->argv[2], "unexpected argument");
  if (a->argc < 2) {
    print_usage(p);
    return TL_EXIT_OK;
  }
  const tl_cli_command *cmd = find_command(p, a->argv[1]);
  if (!cmd)
    return tl_usage_error(a->argv[1], "unknown command");
  print_command_help(cmd);
  return TL_EXIT_OK;
}

/* The program's own options, before the command; *at receives the index of
 * the command's name. Returns the exit status, or -1 to go on. */
static int program_options(const tl_cli_program *p, int argc, char **argv, const char **db,
                           int *at) {
  enum { OPT_DB = 256 };
  static const struct option longopts[] = {
      {"db", required_argument, NULL, OPT_DB},
      {"help", no_argument, NULL, 'h'},
      {"version", no_argument, NULL, 'V'},
      {NULL, 0, NULL, 0},
  };
  opterr = 0;
  unsigned char given[TL_CLI_OPTS] = {0};
  int c;
  /* '+': stop at the command; its own options follow it. */
  while ((c = getopt_long(argc, argv, "+:hV", longopts, NULL)) != -1) {
    if (tl_cli_once(longopts, c, given, NULL))
      return TL_EXIT_USAGE;
    switch (c) {
    case OPT_DB:
      if (!*optarg)
        return tl_usage_error("--db", "empty path");
      *db = optarg;
      break;
    case 'h':
      print_usage(p);
      return TL_EXIT_OK;
    case 'V':
      printf("%s %s\n", tl_progname(), TL_VERSION);
      return TL_EXIT_OK;
    case ':':
      return tl_usage_error(argv[optind - 1], "needs a value");
    default:
      return tl_usage_error(argv[optind - 1], "unknown option");
    }
  }
  if (optind >= argc)
    return tl_usage_error("command", "missing");
  *at = optind;
  return -1;
}

static int run_commands(const tl_cli_program *p, int argc, char **argv) {
  const char *db = NULL;
  int at = 0;
  int status = program_options(p, argc, argv, &db, &at);
  if (status >= 0)
    return status;
  const tl_cli_command *cmd = find_command(p, argv[at]);
  if (!cmd)
    return tl_usage_error(argv[at], "unknown command");
  current_command = cmd->run ? cmd->name : NULL; /* help's errors point to PROG --help */

  /* The command's arguments, from its name on. */
  struct option longopts[MAX_COMMAND_OPTS + 2];
  command_longopts(cmd, longopts);
  tl_cli_args a = {.argc = argc - at, .argv = argv + at, .longopts = longopts};
  status = take_db_option(longopts, &a.argc, a.argv, &db);
  if (status >= 0)
    return status;
  status = command_pass(cmd, &a);
  if (status >= 0)
    return status;
  if (!cmd->run)
    return run_help(p, &a);
  char path[4096];
  status = tl_cli_db_path(db, path, sizeof path);
  if (status)
    return status;
  a.db = path;
  getopt_restart();
  return cmd->run(&a);
}

int tl_cli_run_commands(const tl_cli_program *p, int argc, char **argv) {
  return tl_cli_finish(run_commands(p, argc, argv));
}
