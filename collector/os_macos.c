/* os_macos.c: the collector's OS-specific pieces on macOS. macOS has no
 * thread-to-CPU pinning and no timerfd, so those say so clearly; instead a
 * thread's QoS class decides where it runs (performance or efficiency cores
 * on Apple Silicon). The clock is libuv's. Host detection's calls are here
 * too: sysctlbyname(3), uname(3), gethostuuid(2) and pmset(1), handed to
 * host_macos.c (which decides what the answers mean) through tl__host_env;
 * CPUID on Intel Macs is tl__host_cpuid in host_env.c. */
/* sysctlbyname and gethostuuid are Darwin extensions to POSIX: the build
 * defines _DARWIN_C_SOURCE for Apple targets (CMakeLists.txt, tl_warnings). */
#include <errno.h>
#include <limits.h>
#include <mach/mach_time.h>
#include <pthread.h>
#include <pthread/qos.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysctl.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <uuid/uuid.h>

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

/* ------------------------------------------------------------------------ */
/* Host detection: the real calls behind tl__host_env                        */

static int real_sysctl(const tl__host_env *env, const char *name, void *buf, size_t *len) {
  (void)env;
  return sysctlbyname(name, buf, len, NULL, 0);
}

/* pmset's output, from its fixed path; the answer is parsed in
 * host_macos.c. */
static int real_pmset(const tl__host_env *env, const char *arg, char *out, size_t len) {
  (void)env;
  char cmd[64];
  snprintf(cmd, sizeof cmd, "/usr/bin/pmset -g %s 2>/dev/null", arg);
  FILE *p = popen(cmd, "r");
  if (!p)
    return -1;
  size_t n = fread(out, 1, len - 1, p);
  out[n] = '\0';
  return pclose(p) == 0 && n > 0 ? 0 : -1;
}

static int real_host_uuid(const tl__host_env *env, char out[37]) {
  (void)env;
  uuid_t id;
  struct timespec wait = {1, 0};
  if (gethostuuid(id, &wait) != 0)
    return -1;
  uuid_unparse_upper(id, out);
  return 0;
}

int tl__host_detect_os(const tl__host_env *env, tl_host *h) {
  return tl__host_detect_macos(env, h);
}

int tl__host_detect_load(const tl__host_env *env, tl_host *h, const char *when) {
  return tl__host_detect_macos_load(env, h, when);
}

int tl__host_env_default(tl__host_env *env) {
  int err = tl__host_env_open(env);
  if (err)
    return err;
  env->sysctl = real_sysctl;
  env->host_uuid = real_host_uuid;
  env->pmset = real_pmset;
  env->libc = "libSystem";
  return TL_OK;
}
