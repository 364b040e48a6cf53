/* base_internal.h: what the base layer's files (and the store, which builds
 * on them) share beyond tl_base.h. */
#ifndef TL_BASE_INTERNAL_H
#define TL_BASE_INTERNAL_H

#include <stddef.h>

#include "tl_base.h"

/* Length of the longest valid UTF-8 prefix of s. */
size_t tl__utf8_valid_prefix(const unsigned char *s, size_t len);
/* Printable UTF-8 of at most max bytes, no control characters. */
int tl__text_check(const char *what, const char *s, size_t max, char *why, size_t whylen);

/* The absolute path of the running executable (exe_linux.c, exe_macos.c). */
int tl__exe_path(char *buf, size_t len);

#endif
