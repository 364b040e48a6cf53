/* exe_macos.c: the base layer's pieces that differ on macOS: the path of the
 * running executable, for tl_data_path() (_NSGetExecutablePath may return
 * a path through symlinks or with "..", so it is resolved with realpath()),
 * how tl times here, the heap (macOS offers no huge pages on request
 * for it), and when a process started (sysctl KERN_PROC_PID). */
#include <limits.h>
#include <mach-o/dyld.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/sysctl.h>
#include <sys/types.h>

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

int64_t tl__process_started_ns(long pid) {
  int mib[4] = {CTL_KERN, KERN_PROC, KERN_PROC_PID, (int)pid};
  struct kinfo_proc info;
  size_t len = sizeof info;
  if (sysctl(mib, 4, &info, &len, NULL, 0) != 0 || len == 0)
    return 0;
  const struct timeval *t = &info.kp_proc.p_starttime;
  return (int64_t)t->tv_sec * 1000000000LL + (int64_t)t->tv_usec * 1000;
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
