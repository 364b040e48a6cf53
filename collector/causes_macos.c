/* causes_macos.c: what the measuring thread reads about itself on macOS.
 * macOS tells an unprivileged process neither a thread's run-queue wait nor
 * the CPU it runs on, so those stay "not attributed". Involuntary context
 * switches are counted for the whole process (getrusage RUSAGE_SELF): the
 * measuring thread is the one that wakes most often, but the writer thread
 * counts too, so a sample's count is an upper bound. */
#include <stdlib.h>
#include <sys/resource.h>

#include "causes_internal.h"

struct tl__self {
  int unused;
};

tl__self *tl__self_open(void) { return calloc(1, sizeof(tl__self)); }

void tl__self_close(tl__self *s) { free(s); }

void tl__self_read(tl__self *s, tl__self_mark *m) {
  (void)s;
  m->runq_wait_ns = -1;
  m->cpu = -1;
  struct rusage ru;
  m->nivcsw = getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_nivcsw : -1;
}

const char *tl__self_measures(void) {
  return "involuntary switches of the whole process (getrusage RUSAGE_SELF); run-queue wait and "
         "migrations are not attributed on macOS";
}
