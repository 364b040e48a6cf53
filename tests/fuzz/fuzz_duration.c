/* fuzz_duration.c: tl_duration_parse with the units and limits the programs
 * use. A parsed duration lies in [0, max]; a refusal says why. */
#include "fuzz.h"
#include "tl_store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const struct {
    int64_t unit, max;
  } uses[] = {
      {1000000000LL, 366LL * 86400 * 1000000000LL}, /* --duration */
      {1000000LL, 3600LL * 1000000000LL},           /* --gap */
      {1000000LL, 24LL * 3600 * 1000000000LL},      /* --delays, --delay */
      {1, INT64_MAX},
  };
  char *s = tl_fuzz_cstr(data, size);
  for (size_t i = 0; i < sizeof uses / sizeof uses[0]; i++) {
    int64_t ns = -1;
    char why[TL_WHY_MAX] = "";
    int rc = tl_duration_parse(s, uses[i].unit, uses[i].max, &ns, why, sizeof why);
    if (rc == TL_OK)
      TL_FUZZ_ASSERT(ns >= 0 && ns <= uses[i].max);
    else
      TL_FUZZ_ASSERT(rc == TL_EINVAL && why[0] && ns == -1);
  }
  free(s);
  return 0;
}
