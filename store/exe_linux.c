/* exe_linux.c: the base layer's pieces that differ on Linux (and other
 * systems with /proc/self/exe and clock_nanosleep): the path of the running
 * executable, for tl_data_path(), and how tl times here. */
#include <unistd.h>

#include "base_internal.h"

int tl__exe_path(char *buf, size_t len) {
  if (len < 2)
    return TL_EINVAL;
  ssize_t n = readlink("/proc/self/exe", buf, len - 1);
  if (n < 0)
    return TL_ESYS;
  if ((size_t)n >= len - 1)
    return TL_EINVAL; /* possibly truncated */
  buf[n] = '\0';
  return TL_OK;
}

/* collector/os_linux.c reads and sleeps on CLOCK_MONOTONIC, as libuv's
 * uv_hrtime does. */
const tl_os_timing *tl_os_timing_here(void) {
  static const tl_os_timing linux_timing = {"CLOCK_MONOTONIC", "clock_nanosleep(CLOCK_MONOTONIC)",
                                            "clock_nanosleep(TIMER_ABSTIME)"};
  return &linux_timing;
}
