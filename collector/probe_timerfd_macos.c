/* probe_timerfd_macos.c: the timerfd probe on macOS, which has no timerfd:
 * it says so (probe_timerfd_linux.c is the probe). */
#include <stdio.h>

#include "collect_internal.h"

int tl__probe_timerfd(tl__run *run, char *err, size_t errlen) {
  (void)run;
  snprintf(err, errlen, "the timerfd probe needs Linux (timerfd is not available on macOS)");
  return TL_EUNAVAIL;
}
