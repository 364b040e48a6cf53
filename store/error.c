/* error.c: tl's error messages and the one-line message helpers shared by
 * the three programs. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tl_store.h"

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

static const char *progname = "tl";

void tl_set_progname(const char *name) {
  const char *slash = name ? strrchr(name, '/') : NULL;
  if (name)
    progname = slash ? slash + 1 : name;
}

const char *tl_progname(void) { return progname; }

static void vmessage(const char *kind, const char *fmt, va_list ap) {
  fprintf(stderr, "%s: %s: ", progname, kind);
  vfprintf(stderr, fmt, ap);
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
