/* fuzz_text.c: tl_fput_safe, the last step before user text and host facts
 * reach a terminal. Whatever goes in, what comes out is valid UTF-8 without
 * C0 (not even a newline), DEL or C1 control characters or the bidirectional
 * formatting characters, and text that was already safe comes out
 * unchanged. */
#include <stdio.h>

#include "fuzz.h"
#include "tl_store.h"

/* 1 when s is valid UTF-8 free of control characters. Written apart from
 * the store's own UTF-8 code so that it can judge it. */
static int safe(const unsigned char *s, size_t len) {
  for (size_t i = 0; i < len;) {
    unsigned c = s[i];
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7f)
        return 0;
      i++;
      continue;
    }
    size_t n = c >= 0xc2 && c <= 0xdf   ? 2
               : c >= 0xe0 && c <= 0xef ? 3
               : c >= 0xf0 && c <= 0xf4 ? 4
                                        : 0;
    if (!n || i + n > len)
      return 0;
    unsigned cp = c & (n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07);
    for (size_t k = 1; k < n; k++) {
      if ((s[i + k] & 0xc0) != 0x80)
        return 0;
      cp = cp << 6 | (s[i + k] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff) || cp <= 0x9f)
      return 0;
    /* Bidirectional formatting: they reorder the text that follows. */
    if (cp == 0x61c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
        (cp >= 0x2066 && cp <= 0x2069))
      return 0;
    i += n;
  }
  return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *s = tl_fuzz_cstr(data, size);
  char *out = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&out, &len);
  if (!f)
    abort();
  tl_fput_safe(f, s);
  fclose(f);
  TL_FUZZ_ASSERT(safe((const unsigned char *)out, len));
  if (safe((const unsigned char *)s, strlen(s)))
    TL_FUZZ_ASSERT(strcmp(out, s) == 0);
  free(out);
  free(s);
  return 0;
}
