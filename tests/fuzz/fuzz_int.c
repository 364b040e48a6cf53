/* fuzz_int.c: tl_int_parse. A parsed number lies in [min, max] and prints
 * back as the same digits (no sign tricks, spaces or trailing bytes). */
#include <stdio.h>

#include "fuzz.h"
#include "tl_store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const struct {
    int64_t min, max;
  } uses[] = {{1, 1000000000}, {0, 1000000}, {INT64_MIN, INT64_MAX}};
  char *s = tl_fuzz_cstr(data, size);
  for (size_t i = 0; i < sizeof uses / sizeof uses[0]; i++) {
    int64_t v = 0;
    char why[TL_WHY_MAX] = "";
    int rc = tl_int_parse(s, uses[i].min, uses[i].max, &v, why, sizeof why);
    if (rc != TL_OK) {
      TL_FUZZ_ASSERT(rc == TL_EINVAL && why[0]);
      continue;
    }
    TL_FUZZ_ASSERT(v >= uses[i].min && v <= uses[i].max);
    char back[32];
    snprintf(back, sizeof back, "%lld", (long long)v);
    /* strtoll takes a leading '+' and zeros; the value must still match. */
    int64_t again = 0;
    TL_FUZZ_ASSERT(tl_int_parse(back, uses[i].min, uses[i].max, &again, NULL, 0) == TL_OK);
    TL_FUZZ_ASSERT(again == v);
  }
  free(s);
  return 0;
}
