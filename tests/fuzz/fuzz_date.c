/* fuzz_date.c: tl_date_parse. A parsed date formats back to the text it came
 * from (the date-only form at midnight), so nothing is silently normalised
 * (no 31 April, no 24:00). */
#include <stdio.h>

#include "fuzz.h"
#include "tl_store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *s = tl_fuzz_cstr(data, size);
  int64_t ns = -1;
  char why[TL_WHY_MAX] = "";
  int rc = tl_date_parse(s, &ns, why, sizeof why);
  if (rc == TL_OK) {
    TL_FUZZ_ASSERT(ns >= 0);
    char back[32], want[32];
    tl_date_format(ns, back, sizeof back);
    snprintf(want, sizeof want,
             strlen(s) == 10 ? "%s"
                               "T00:00:00Z"
                             : "%s",
             s);
    TL_FUZZ_ASSERT(strcmp(back, want) == 0);
  } else {
    TL_FUZZ_ASSERT(rc == TL_EINVAL && why[0]);
  }
  free(s);
  return 0;
}
