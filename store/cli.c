/* cli.c: what the three programs share on their command lines: the usage
 * error, the database path, options that may be given only once, and the
 * command line a session records. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tl_base.h"

int tl_usage_error(const char *what, const char *why) {
  tl_errorf("%s: %s (see %s --help)", what, why, tl_progname());
  return TL_EXIT_USAGE;
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

char *tl_command_line(int argc, const char *const *argv) {
  size_t len = 1;
  for (int i = 0; i < argc; i++)
    len += strlen(argv[i]) * 4 + 3;
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
