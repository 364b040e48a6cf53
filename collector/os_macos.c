/* os_macos.c: the collector's OS-specific pieces on macOS. macOS has no
 * thread-to-CPU pinning and no timerfd, so those say so clearly; the
 * executable's path comes from _NSGetExecutablePath. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "collect_internal.h"

int tl__os_cpu_usable(int cpu) {
  (void)cpu;
  return TL_EUNAVAIL;
}

int tl__os_pin_self(int cpu, char *err, size_t errlen) {
  snprintf(err, errlen, "--cpu %d: macOS cannot pin a thread to a CPU (leave out --cpu)", cpu);
  return TL_EUNAVAIL;
}

void tl__os_unpin_self(void) {}

int64_t tl__os_mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* macOS has no clock_nanosleep: an absolute sleep is a relative nanosleep
 * to the instant, computed just before sleeping. */
int tl__os_sleep(int absolute, int64_t ns) {
  if (absolute) {
    ns -= tl__os_mono_ns();
    if (ns <= 0)
      return 0;
  }
  struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
  return nanosleep(&ts, NULL) ? errno : 0;
}

int tl__os_timerfd_available(void) { return 0; }

int tl__probe_timerfd(tl__run *run, char *err, size_t errlen) {
  (void)run;
  snprintf(err, errlen, "the timerfd probe needs Linux (timerfd is not available on macOS)");
  return TL_EUNAVAIL;
}
