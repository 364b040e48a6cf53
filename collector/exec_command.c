/* exec_command.c: the command line an exec:CMD probe runs. CMD goes to
 * /bin/sh -c as given, with one help: an argument naming one of the probe
 * scripts tl ships (share/tl/probes/, found with tl_data_path) that is not in
 * the current folder is replaced by the shipped copy, so that the README's
 * 'exec:python3 asyncio-probe.py' works from any folder. The shipped paths
 * used are recorded as the session tag exec_shipped, so that a run can be
 * repeated exactly. A command that names a program which does not exist is
 * refused here, before anything starts, with one line that says so. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect_internal.h"

static int is_file(const char *path, int exec) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && (!exec || access(path, X_OK) == 0);
}

int tl__find_in_path(const char *name, char *out, size_t len) {
  const char *path = getenv("PATH");
  while (path && *path) {
    size_t n = strcspn(path, ":");
    if (n && (size_t)snprintf(out, len, "%.*s/%s", (int)n, path, name) < len && is_file(out, 1))
      return 1;
    path += n + (path[n] == ':');
  }
  return 0;
}

/* Bytes the shell takes literally in a word; a word of other bytes (quotes,
 * $, globs, redirections ...) is left to the shell untouched. */
static const char plain_bytes[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                  "-_.,+@%:/";

static int is_plain(const char *w, size_t n) {
  if (n == 0)
    return 0;
  for (size_t i = 0; i < n; i++)
    if (!strchr(plain_bytes, w[i]) || w[i] == '\0')
      return 0;
  return 1;
}

/* Words /bin/sh runs without looking in PATH. */
static int is_shell_word(const char *w) {
  static const char *const words[] = {
      ".",        ":",     "[",     "alias",  "break", "case",   "cd",       "command",
      "continue", "echo",  "eval",  "exec",   "exit",  "export", "false",    "for",
      "getopts",  "if",    "kill",  "printf", "pwd",   "read",   "readonly", "return",
      "set",      "shift", "test",  "times",  "trap",  "true",   "type",     "ulimit",
      "umask",    "unset", "until", "wait",   "while", "{",      "!"};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    if (strcmp(words[i], w) == 0)
      return 1;
  return 0;
}

/* Is the command's program (a plain first word) there? */
static int check_program(const char *cmd, const char *w, size_t n, char *why, size_t whylen) {
  char name[4096], found[4096];
  if (n >= sizeof name)
    return TL_OK;
  memcpy(name, w, n);
  name[n] = '\0';
  if (is_shell_word(name))
    return TL_OK;
  if (strchr(name, '/')) {
    if (is_file(name, 1))
      return TL_OK;
    return tl_fail(why, whylen, TL_EUNAVAIL, "--probe exec:%.80s: '%s' %s", cmd, name,
                   access(name, F_OK) == 0 ? "is not an executable file" : "was not found");
  }
  if (tl__find_in_path(name, found, sizeof found))
    return TL_OK;
  return tl_fail(why, whylen, TL_EUNAVAIL, "--probe exec:%.80s: '%s' was not found in PATH", cmd,
                 name);
}

/* Appends s (n bytes) to out at *at; 0, or -1 when it does not fit. */
static int put(char *out, size_t len, size_t *at, const char *s, size_t n) {
  if (*at + n >= len)
    return -1;
  memcpy(out + *at, s, n);
  *at += n;
  out[*at] = '\0';
  return 0;
}

/* The shipped copy of the argument w (n bytes), into path; 0 when there is
 * none or the argument names a file here. */
static int shipped_copy(const char *w, size_t n, char *path, size_t len) {
  char name[256], rel[300];
  if (memchr(w, '/', n) || n >= sizeof name)
    return 0;
  memcpy(name, w, n);
  name[n] = '\0';
  if (access(name, F_OK) == 0 || errno != ENOENT)
    return 0;
  snprintf(rel, sizeof rel, "probes/%s", name);
  return tl_data_path(rel, path, len) == TL_OK;
}

int tl__exec_command(const char *cmd, tl__exec_resolved *out, char *why, size_t whylen) {
  size_t at = 0, shipped_at = 0;
  out->command[0] = out->shipped[0] = '\0';
  /* Only the plain words up to the first one the shell would read
   * specially (a quote, $, ;, a redirection ...): after it, a word may be
   * inside quotes, and the rest goes to the shell as it is. */
  const char *s = cmd;
  for (int word = 0; *s; word++) {
    size_t blanks = strspn(s, " \t");
    if (put(out->command, sizeof out->command, &at, s, blanks))
      goto too_long;
    s += blanks;
    size_t n = strcspn(s, " \t");
    if (!n)
      break;
    char path[4096];
    if (!is_plain(s, n)) {
      if (put(out->command, sizeof out->command, &at, s, strlen(s)))
        goto too_long;
      break;
    }
    if (word == 0) {
      int err = check_program(cmd, s, n, why, whylen);
      if (err)
        return err;
    } else if (shipped_copy(s, n, path, sizeof path)) {
      /* Quoted for the shell: an install prefix may hold any byte but NUL. */
      if (put(out->command, sizeof out->command, &at, "'", 1))
        goto too_long;
      for (const char *c = path; *c; c++)
        if (put(out->command, sizeof out->command, &at, *c == '\'' ? "'\\''" : c,
                *c == '\'' ? 4 : 1))
          goto too_long;
      if (put(out->command, sizeof out->command, &at, "'", 1) ||
          (shipped_at && put(out->shipped, sizeof out->shipped, &shipped_at, ",", 1)) ||
          put(out->shipped, sizeof out->shipped, &shipped_at, path, strlen(path)))
        goto too_long;
      s += n;
      continue;
    }
    if (put(out->command, sizeof out->command, &at, s, n))
      goto too_long;
    s += n;
  }
  return TL_OK;
too_long:
  return tl_fail(why, whylen, TL_EINVAL,
                 "--probe exec:%.80s: the command is too long once the shipped probes are found",
                 cmd);
}
