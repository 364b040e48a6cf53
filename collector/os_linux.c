/* os_linux.c: what tl's collector needs from Linux alone: pinning a thread
 * to a CPU (sched_setaffinity), the path of the running executable
 * (/proc/self/exe) and the timerfd probe (timerfd + epoll_wait). Everything
 * else in the collector is POSIX or libuv. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
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
/* timerfd probe                                                             */

int tl__os_timerfd_available(void) { return 1; }

/* One timerfd armed relative for each sample (a delay of 0 is armed for 1 ns,
 * because 0 disarms a timerfd) and waited for with epoll_wait. The clock
 * starts just before timerfd_settime and stops when epoll_wait returns;
 * a signal interrupts epoll_wait with EINTR and the run checks for a stop. */
int tl__probe_timerfd(tl__run *run, char *err, size_t errlen) {
  int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  if (tfd < 0) {
    snprintf(err, errlen, "cannot create a timerfd: %s", strerror(errno));
    return TL_ESYS;
  }
  int ep = epoll_create1(EPOLL_CLOEXEC);
  struct epoll_event ev = {.events = EPOLLIN};
  if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev)) {
    snprintf(err, errlen, "cannot set up epoll: %s", strerror(errno));
    if (ep >= 0)
      close(ep);
    close(tfd);
    return TL_ESYS;
  }
  const struct tl__run_view *v = tl__run_view(run);
  int rc = TL_OK, i;
  while (rc == TL_OK && (i = tl__run_next(run)) >= 0) {
    int64_t d = v->delays_ns[i] > 0 ? v->delays_ns[i] : 1;
    struct itimerspec its = {.it_value = {(time_t)(d / 1000000000), (long)(d % 1000000000)}};
    int64_t t0 = tl__os_mono_ns();
    if (timerfd_settime(tfd, 0, &its, NULL)) {
      snprintf(err, errlen, "timerfd_settime: %s", strerror(errno));
      rc = TL_ESYS;
      break;
    }
    struct epoll_event out;
    int n;
    while ((n = epoll_wait(ep, &out, 1, -1)) < 0 && errno == EINTR && !tl__run_stopping(run))
      ;
    int64_t t1 = tl__os_mono_ns();
    if (n < 0) {
      if (errno != EINTR) {
        snprintf(err, errlen, "epoll_wait: %s", strerror(errno));
        rc = TL_ESYS;
      }
      break; /* stopping */
    }
    uint64_t expirations;
    if (read(tfd, &expirations, sizeof expirations) < 0 && errno != EAGAIN) {
      snprintf(err, errlen, "reading the timerfd: %s", strerror(errno));
      rc = TL_ESYS;
      break;
    }
    tl__run_record(run, i, t1 - t0);
    if (v->opts->gap_ns > 0)
      tl__run_pause(run, v->opts->gap_ns);
  }
  close(ep);
  close(tfd);
  return rc;
}
