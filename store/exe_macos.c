/* exe_macos.c: the base layer's pieces that differ on macOS: the path of the
 * running executable, for tl_data_path() (_NSGetExecutablePath may return
 * a path through symlinks or with "..", so it is resolved with realpath()),
 * how tl times here, and the heap (macOS offers no huge pages on request
 * for it). */
#include <limits.h>
#include <mach-o/dyld.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "base_internal.h"

int tl__exe_path(char *buf, size_t len) {
  char raw[PATH_MAX], real[PATH_MAX];
  uint32_t size = sizeof raw;
  if (_NSGetExecutablePath(raw, &size) != 0)
    return TL_EINVAL;
  if (!realpath(raw, real))
    return TL_ESYS;
  int n = snprintf(buf, len, "%s", real);
  return n < 0 || (size_t)n >= len ? TL_EINVAL : TL_OK;
}

/* collector/os_macos.c reads mach_continuous_time, as libuv's uv_hrtime
 * does (CLOCK_MONOTONIC counts only whole microseconds here), and sleeps
 * with nanosleep, since macOS has no clock_nanosleep. */
const tl_os_timing *tl_os_timing_here(void) {
  static const tl_os_timing macos_timing = {"mach_continuous_time", "nanosleep",
                                            "a relative nanosleep"};
  return &macos_timing;
}

int tl_heap_huge_pages(void) { return 0; }
