/* fuzz_label.c: tl_label_check. An accepted label is 1-64 characters of
 * [A-Za-z0-9._-] starting with a letter or digit: safe in a file name, a
 * URL, Markdown and HTML without escaping. */
#include "fuzz.h"
#include "tl_store.h"

static int name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *s = tl_fuzz_cstr(data, size);
  char why[TL_WHY_MAX] = "";
  if (tl_label_check(s, why, sizeof why) == TL_OK) {
    size_t n = strlen(s);
    TL_FUZZ_ASSERT(n >= 1 && n <= TL_LABEL_MAX);
    TL_FUZZ_ASSERT(s[0] != '.' && s[0] != '_' && s[0] != '-');
    for (size_t i = 0; i < n; i++)
      TL_FUZZ_ASSERT(name_char(s[i]));
  } else {
    TL_FUZZ_ASSERT(why[0]);
  }
  free(s);
  return 0;
}
