/* base_internal.h: what the base layer's files (and the store, which builds
 * on them) share beyond tl_base.h. */
#ifndef TL_BASE_INTERNAL_H
#define TL_BASE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "tl_base.h"

/* Length of the longest valid UTF-8 prefix of s. */
size_t tl__utf8_valid_prefix(const unsigned char *s, size_t len);
/* Printable UTF-8 of at most max bytes, no control characters. */
int tl__text_check(const char *what, const char *s, size_t max, char *why, size_t whylen);

/* The absolute path of the running executable (exe_linux.c, exe_macos.c). */
int tl__exe_path(char *buf, size_t len);

/* When process pid started, Unix time in nanoseconds (whole to a second or
 * better); 0 when it cannot be told (no such process, or the system does not
 * say). Tells a collector from an unrelated process that reused its pid. */
int64_t tl__process_started_ns(long pid);

#endif
