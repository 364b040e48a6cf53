/* fuzz_list.c: tl_list_split. Accepted items are non-empty, distinct, at
 * most max of them, and joined with ',' give back the input. */
#include "fuzz.h"
#include "tl_store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *s = tl_fuzz_cstr(data, size), *orig = tl_fuzz_cstr(data, size);
  enum { MAX = 16 };
  char *items[MAX];
  size_t count = 0;
  char why[TL_WHY_MAX] = "";
  if (tl_list_split(s, items, MAX, &count, why, sizeof why) == TL_OK) {
    TL_FUZZ_ASSERT(count >= 1 && count <= MAX);
    size_t at = 0;
    for (size_t i = 0; i < count; i++) {
      size_t n = strlen(items[i]);
      TL_FUZZ_ASSERT(n > 0 && !strchr(items[i], ','));
      for (size_t k = 0; k < i; k++)
        TL_FUZZ_ASSERT(strcmp(items[k], items[i]) != 0);
      TL_FUZZ_ASSERT(memcmp(orig + at, items[i], n) == 0);
      at += n;
      TL_FUZZ_ASSERT(orig[at] == (i + 1 < count ? ',' : '\0'));
      at++;
    }
  } else {
    TL_FUZZ_ASSERT(why[0]);
  }
  free(orig);
  free(s);
  return 0;
}
