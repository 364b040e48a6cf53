/* tune.c: the measuring thread's settings: --cpu (pinning, through the OS
 * file), --qos (macOS, through the OS file), --priority (SCHED_FIFO) and
 * --mlock. Each is applied to the thread
 * that runs the probe, refused with a clear error rather than silently
 * skipped, and undone after the run. Threads tl starts for itself (writer,
 * load) release what they inherited, so they never share the pinned CPU or
 * the real-time priority by accident. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "collect_internal.h"

int tl__tune_apply(tl__tune *t, const tl_collect_opts *o, char *err, size_t errlen) {
  memset(t, 0, sizeof *t);
  struct sched_param sp;
  pthread_getschedparam(pthread_self(), &t->old_policy, &sp);
  t->old_priority = sp.sched_priority;
  if (o->cpu >= 0) {
    int rc = tl__os_pin_self(o->cpu, err, errlen);
    if (rc)
      return rc;
    t->pinned = 1;
  }
  if (o->qos) {
    t->old_qos = tl__os_qos_get();
    int rc = tl__os_qos_set(tl__qos_parse(o->qos), err, errlen);
    if (rc) {
      tl__tune_restore(t);
      return rc;
    }
    t->qos_set = 1;
  }
  if (o->priority > 0) {
    memset(&sp, 0, sizeof sp);
    sp.sched_priority = o->priority;
    int rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
    if (rc) {
      snprintf(err, errlen,
               "--priority %d: cannot use SCHED_FIFO: %s (run as root, or grant CAP_SYS_NICE or "
               "an RLIMIT_RTPRIO of at least %d, e.g. in /etc/security/limits.conf)",
               (int)o->priority, strerror(rc), (int)o->priority);
      tl__tune_restore(t);
      return rc == EPERM ? TL_EPERM : TL_ESYS;
    }
    t->fifo = 1;
  }
  if (o->mlock) {
    if (mlockall(MCL_CURRENT | MCL_FUTURE)) {
      int e = errno;
      snprintf(err, errlen,
               "--mlock: cannot lock memory: %s (run as root, grant CAP_IPC_LOCK or raise "
               "RLIMIT_MEMLOCK with ulimit -l)",
               strerror(e));
      tl__tune_restore(t);
      return e == EPERM ? TL_EPERM : TL_ESYS;
    }
    t->locked = 1;
  }
  return TL_OK;
}

void tl__tune_restore(tl__tune *t) {
  if (t->locked)
    munlockall();
  if (t->fifo) {
    struct sched_param sp;
    memset(&sp, 0, sizeof sp);
    sp.sched_priority = t->old_priority;
    pthread_setschedparam(pthread_self(), t->old_policy, &sp);
  }
  if (t->qos_set) {
    char err[160]; /* a class the thread had can be had again */
    tl__os_qos_set(t->old_qos > TL_QOS_UNSPECIFIED ? t->old_qos : TL_QOS_DEFAULT, err, sizeof err);
  }
  if (t->pinned)
    tl__os_unpin_self();
  memset(t, 0, sizeof *t);
}

void tl__tune_release_self(void) {
  int policy;
  struct sched_param sp;
  if (pthread_getschedparam(pthread_self(), &policy, &sp) == 0 && policy != SCHED_OTHER) {
    memset(&sp, 0, sizeof sp);
    pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
  }
  int qos = tl__os_qos_get();
  if (qos > TL_QOS_UNSPECIFIED && qos != TL_QOS_DEFAULT) {
    char err[160];
    tl__os_qos_set(TL_QOS_DEFAULT, err, sizeof err);
  }
  tl__os_unpin_self();
}
