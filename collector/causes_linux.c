/* causes_linux.c: what the measuring thread reads about itself on Linux,
 * around each sample and outside its timed interval: the second field of
 * /proc/thread-self/schedstat (nanoseconds spent runnable, waiting for a
 * CPU), getrusage(RUSAGE_THREAD)'s involuntary context switches, and
 * sched_getcpu(). The schedstat file stays open and is read again with
 * pread from offset 0, which makes the kernel print it afresh: one system
 * call instead of three. It must be opened by the thread it describes
 * (thread-self is resolved at open). None of this needs privileges. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "causes_internal.h"

struct tl__self {
  int schedstat_fd; /* -1: the kernel has no schedstats (CONFIG_SCHED_INFO off) */
};

tl__self *tl__self_open(void) {
  tl__self *s = malloc(sizeof *s);
  if (!s)
    return NULL;
  s->schedstat_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
  return s;
}

void tl__self_close(tl__self *s) {
  if (!s)
    return;
  if (s->schedstat_fd >= 0)
    close(s->schedstat_fd);
  free(s);
}

void tl__self_read(tl__self *s, tl__self_mark *m) {
  m->runq_wait_ns = m->nivcsw = -1;
  m->cpu = -1;
  char buf[96];
  ssize_t n = s->schedstat_fd >= 0 ? pread(s->schedstat_fd, buf, sizeof buf - 1, 0) : -1;
  int64_t run;
  if (n > 0) {
    buf[n] = '\0';
    if (tl__parse_schedstat(buf, &run, &m->runq_wait_ns) != TL_OK)
      m->runq_wait_ns = -1;
  }
  struct rusage ru;
  if (getrusage(RUSAGE_THREAD, &ru) == 0)
    m->nivcsw = ru.ru_nivcsw;
  m->cpu = sched_getcpu();
}

const char *tl__self_measures(void) {
  return "run-queue wait (/proc/thread-self/schedstat), involuntary switches "
         "(getrusage RUSAGE_THREAD), migrations (sched_getcpu)";
}
