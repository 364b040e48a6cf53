/* probe_sleep.c: the probes that sleep the measuring thread itself, without
 * an event loop.
 *
 * nanosleep: a relative clock_nanosleep(CLOCK_MONOTONIC) for the delay. The
 *   clock (CLOCK_MONOTONIC) starts just before the call and stops when it
 *   returns; the stored sample is that elapsed time, so the lateness (wake
 *   time minus the requested end) is sample - delay.
 * periodic: wake-ups on an absolute schedule, start + k * interval, with
 *   TIMER_ABSTIME, the way cyclictest measures. Each wake is compared with
 *   its scheduled instant: the stored sample is interval + (wake - scheduled),
 *   the time since the period began, so sample - interval is exactly
 *   cyclictest's latency. A wake-up that comes one or more whole periods
 *   late has let those periods' instants pass unmeasured: the probe counts
 *   them as missed periods (stored in sessions.missed_periods) and resumes at
 *   the next instant still ahead, instead of firing a burst of catch-up
 *   wake-ups. So a stall never hides as one slow sample: it is one slow
 *   sample plus the number of periods it swallowed. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "collect_internal.h"

int tl__probe_nanosleep(tl__run *run, char *err, size_t errlen) {
  const struct tl__run_view *v = tl__run_view(run);
  int i;
  while ((i = tl__run_next(run)) >= 0) {
    int64_t t0 = tl__os_mono_ns();
    int rc = tl__os_sleep(0, v->delays_ns[i]);
    /* A signal handler ran (EINTR): stop if asked, otherwise sleep out the
     * rest of the same request so the sample still measures one delay. */
    while (rc == EINTR && !tl__run_stopping(run))
      rc = tl__os_sleep(1, t0 + v->delays_ns[i]);
    int64_t t1 = tl__os_mono_ns();
    if (rc == EINTR)
      break;
    if (rc) {
      snprintf(err, errlen, "clock_nanosleep: %s", strerror(rc));
      return TL_ESYS;
    }
    tl__run_record(run, i, t1 - t0);
    if (v->opts->gap_ns > 0)
      tl__run_pause(run, v->opts->gap_ns);
  }
  return TL_OK;
}

int tl__probe_periodic(tl__run *run, char *err, size_t errlen) {
  const struct tl__run_view *v = tl__run_view(run);
  int i = tl__run_next(run);
  if (i < 0)
    return TL_OK;
  int64_t period = v->delays_ns[i];
  int64_t next = tl__os_mono_ns() + period;
  for (int64_t pauses = tl__run_pauses(run); i >= 0; i = tl__run_next(run)) {
    if (tl__run_pauses(run) != pauses) { /* waited for the writer: not a missed period */
      pauses = tl__run_pauses(run);
      next = tl__os_mono_ns() + period;
    }
    int rc;
    while ((rc = tl__os_sleep(1, next)) == EINTR && !tl__run_stopping(run))
      ;
    int64_t wake = tl__os_mono_ns();
    if (rc == EINTR)
      break;
    if (rc) {
      snprintf(err, errlen, "clock_nanosleep: %s", strerror(rc));
      return TL_ESYS;
    }
    int64_t late = wake - next;
    tl__run_record(run, i, period + late);
    int64_t missed = late >= period ? late / period : 0;
    if (missed)
      tl__run_missed(run, i, missed);
    next += (missed + 1) * period;
  }
  return TL_OK;
}
