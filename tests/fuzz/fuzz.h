/* fuzz.h: what the fuzz targets share. Each target is one
 * LLVMFuzzerTestOneInput over one parser; it checks the parser's promises
 * (range, round trip, no control characters out) and abort()s when one is
 * broken, so that libFuzzer and the corpus replay both report it. */
#ifndef TL_FUZZ_H
#define TL_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as a C string (bytes after a NUL are dropped, as a command line
 * would drop them); free() it. */
static inline char *tl_fuzz_cstr(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (!s)
    abort();
  memcpy(s, data, size);
  s[size] = '\0';
  return s;
}

/* abort() with the promise that was broken; the sanitizers and libFuzzer
 * print the stack. */
#define TL_FUZZ_ASSERT(cond)                                                                       \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      abort();                                                                                     \
  } while (0)

#endif
