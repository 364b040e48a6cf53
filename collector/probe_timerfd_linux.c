/* probe_timerfd_linux.c: the timerfd probe (timerfd + epoll_wait), Linux
 * alone; macOS says it has none (probe_timerfd_macos.c). It sits apart from
 * os_linux.c so that the OS layer, which the run itself uses for its clock
 * and its sleeps, never calls back into the run. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "collect_internal.h"

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
