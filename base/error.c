/* error.c: tl's error messages and the one-line message helpers shared by
 * the three programs. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tl_base.h"

const char *tl_strerror(int err) {
  switch (err) {
  case TL_OK:
    return "success";
#define XX(name, value, msg)                                                                       \
  case TL_##name:                                                                                  \
    return msg;
    TL_ERRNO_MAP(XX)
#undef XX
  default:
    return "unknown error";
  }
}

int tl_fail(char *buf, size_t len, int err, const char *fmt, ...) {
  if (buf && len) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
  }
  return err;
}

static const char *progname = "tl";

void tl_set_progname(const char *name) {
  const char *slash = name ? strrchr(name, '/') : NULL;
  if (name)
    progname = slash ? slash + 1 : name;
}

const char *tl_progname(void) { return progname; }

/* Messages quote paths, option values and SQLite's words, any of which may
 * hold a newline or an escape sequence: the text goes through tl_fput_safe,
 * so a message is always one line and never drives the terminal. */
static void vmessage(const char *kind, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

static void vmessage(const char *kind, const char *fmt, va_list ap) {
  char text[4096];
  int n = vsnprintf(text, sizeof text, fmt, ap);
  if (n >= (int)sizeof text)
    memcpy(text + sizeof text - 4, "...", 4);
  /* A message that came out empty is a fault of tl's own: saying so beats
   * a bare "error: ". */
  if (n == 0)
    snprintf(text, sizeof text, "%s failed without saying why (a fault of tl: please report it)",
             progname);
  fprintf(stderr, "%s: %s: ", progname, kind);
  tl_fput_safe(stderr, n < 0 ? fmt : text);
  fputc('\n', stderr);
}

void tl_errorf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vmessage("error", fmt, ap);
  va_end(ap);
}

void tl_warnf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vmessage("warning", fmt, ap);
  va_end(ap);
}
