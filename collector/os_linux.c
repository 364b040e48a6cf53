/* os_linux.c: what tl's collector needs from Linux alone: pinning a thread
 * to a CPU (sched_setaffinity), the path of the running executable
 * (/proc/self/exe) and whether there is a timerfd (the probe that uses it
 * is probe_timerfd_linux.c). Everything else in the collector is POSIX or
 * libuv. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collect_internal.h"

/* The mask the process had before the first pin, to undo pinning. */
static cpu_set_t original_mask;
static int have_original;

int tl__os_cpu_usable(int cpu) {
  if (cpu < 0 || cpu >= CPU_SETSIZE)
    return 0;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set))
    return 0;
  if (have_original)
    set = original_mask;
  return CPU_ISSET(cpu, &set) ? 1 : 0;
}

int tl__os_pin_self(int cpu, char *err, size_t errlen) {
  if (!tl__os_cpu_usable(cpu)) {
    snprintf(err, errlen, "--cpu %d: not an online CPU this process may use (see nproc)", cpu);
    return TL_EINVAL;
  }
  cpu_set_t set;
  if (!have_original && sched_getaffinity(0, sizeof original_mask, &original_mask) == 0)
    have_original = 1;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set)) {
    snprintf(err, errlen, "--cpu %d: cannot pin the measuring thread: %s", cpu, strerror(errno));
    return TL_ESYS;
  }
  return TL_OK;
}

void tl__os_unpin_self(void) {
  if (have_original)
    sched_setaffinity(0, sizeof original_mask, &original_mask);
}

int tl__os_qos_get(void) { return -1; }

int tl__os_qos_set(int cls, char *err, size_t errlen) {
  (void)cls;
  snprintf(err, errlen, "--qos: QoS classes are macOS's (on Linux use --priority or --cpu)");
  return TL_EUNAVAIL;
}

int64_t tl__os_mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int tl__os_sleep(int absolute, int64_t ns) {
  struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
  return clock_nanosleep(CLOCK_MONOTONIC, absolute ? TIMER_ABSTIME : 0, &ts, NULL);
}

/* ======================================================================== */
/* timerfd (the probe is probe_timerfd_linux.c)                              */

int tl__os_timerfd_available(void) { return 1; }
