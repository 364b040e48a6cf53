/* causes_linux.c: what the measuring thread reads about itself on Linux,
 * around each sample and outside its timed interval: the second field of
 * /proc/thread-self/schedstat (nanoseconds spent runnable, waiting for a
 * CPU), getrusage(RUSAGE_THREAD)'s involuntary context switches, and
 * sched_getcpu(). The schedstat file stays open and is read again with
 * pread from offset 0, which makes the kernel print it afresh: one system
 * call instead of three. It must be opened by the thread it describes
 * (thread-self is resolved at open). The schedstat file is read only when
 * the thread was switched out since it was last read (getrusage's
 * voluntary or involuntary switches grew): a thread waits for a CPU only
 * after it slept (a voluntary switch) or was preempted (an involuntary
 * one), so unchanged counts mean an unchanged wait. A 0 ms timer that
 * never sleeps then costs a getrusage a sample, about half a pread of
 * schedstat, which the kernel formats afresh. None of this needs
 * privileges. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "causes_internal.h"

struct tl__self {
  int schedstat_fd;             /* -1: the kernel has no schedstats (CONFIG_SCHED_INFO off) */
  int64_t read_wait_ns;         /* the wait schedstat said when last read (-1: not read) */
  long read_nvcsw, read_nivcsw; /* the switches getrusage counted then */
};

tl__self *tl__self_open(void) {
  tl__self *s = malloc(sizeof *s);
  if (!s)
    return NULL;
  s->schedstat_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
  s->read_wait_ns = -1;
  return s;
}

void tl__self_close(tl__self *s) {
  if (!s)
    return;
  if (s->schedstat_fd >= 0)
    close(s->schedstat_fd);
  free(s);
}

/* The run-queue wait from the schedstat file, -1 when unreadable. */
static int64_t schedstat_wait(const tl__self *s) {
  char buf[96];
  ssize_t n = s->schedstat_fd >= 0 ? pread(s->schedstat_fd, buf, sizeof buf - 1, 0) : -1;
  int64_t run, wait;
  if (n <= 0)
    return -1;
  buf[n] = '\0';
  return tl__parse_schedstat(buf, &run, &wait) == TL_OK ? wait : -1;
}

void tl__self_read(tl__self *s, tl__self_mark *m) {
  struct rusage ru;
  int counted = getrusage(RUSAGE_THREAD, &ru) == 0;
  m->nivcsw = counted ? ru.ru_nivcsw : -1;
  if (counted && s->read_wait_ns >= 0 && ru.ru_nvcsw == s->read_nvcsw &&
      ru.ru_nivcsw == s->read_nivcsw) {
    m->runq_wait_ns = s->read_wait_ns; /* never switched out since: no wait either */
  } else {
    m->runq_wait_ns = schedstat_wait(s);
    s->read_wait_ns = counted ? m->runq_wait_ns : -1;
    s->read_nvcsw = counted ? ru.ru_nvcsw : 0;
    s->read_nivcsw = counted ? ru.ru_nivcsw : 0;
  }
  m->cpu = sched_getcpu();
}

const char *tl__self_measures(void) {
  return "run-queue wait (/proc/thread-self/schedstat), involuntary switches "
         "(getrusage RUSAGE_THREAD), migrations (sched_getcpu)";
}
