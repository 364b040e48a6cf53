/* os_macos.c: the collector's OS-specific pieces on macOS. macOS has no
 * thread-to-CPU pinning and no timerfd, so those say so clearly; instead a
 * thread's QoS class decides where it runs (performance or efficiency cores
 * on Apple Silicon). The clock is libuv's. */
#include <errno.h>
#include <limits.h>
#include <mach/mach_time.h>
#include <pthread.h>
#include <pthread/qos.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* collect_internal.h spells the classes out for the other OSes. */
_Static_assert(TL_QOS_UNSPECIFIED == QOS_CLASS_UNSPECIFIED &&
                   TL_QOS_BACKGROUND == QOS_CLASS_BACKGROUND &&
                   TL_QOS_UTILITY == QOS_CLASS_UTILITY && TL_QOS_DEFAULT == QOS_CLASS_DEFAULT &&
                   TL_QOS_USER_INITIATED == QOS_CLASS_USER_INITIATED &&
                   TL_QOS_USER_INTERACTIVE == QOS_CLASS_USER_INTERACTIVE,
               "TL_QOS_* are <sys/qos.h>'s values");

int tl__os_qos_get(void) { return (int)qos_class_self(); }

int tl__os_qos_set(int cls, char *err, size_t errlen) {
  int rc = pthread_set_qos_class_self_np((qos_class_t)cls, 0);
  if (rc) {
    const char *name = tl__qos_name(cls);
    snprintf(err, errlen, "--qos %s: cannot put the measuring thread in that class: %s",
             name ? name : "?", strerror(rc));
    return rc == EPERM ? TL_EPERM : TL_ESYS;
  }
  return TL_OK;
}

/* libuv keeps uv_hrtime, and so the loop's time, in mach_continuous_time
 * (ticks since boot, sleep included) times numer / denom of the timebase
 * (src/unix/darwin.c since libuv 1.39). tl's own clocks are the same
 * expression, so a probe's clock and the loop's agree to the nanosecond;
 * CLOCK_MONOTONIC on macOS only counts whole microseconds. */
static mach_timebase_info_data_t timebase;
static pthread_once_t timebase_once = PTHREAD_ONCE_INIT;

static void timebase_init(void) {
  if (mach_timebase_info(&timebase) != KERN_SUCCESS || timebase.denom == 0)
    timebase.numer = timebase.denom = 1;
}

int64_t tl__os_mono_ns(void) {
  pthread_once(&timebase_once, timebase_init);
  return (int64_t)(mach_continuous_time() * timebase.numer / timebase.denom);
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
