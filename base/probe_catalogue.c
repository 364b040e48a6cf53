/* probe_catalogue.c: the catalogue of probes every part of tl shares: each probe's
 * name, how people write its call, where its clock starts and stops (for
 * tlcollect --list-probes) and what it measured (for a page's "How it was
 * measured"), and the delay it really arms. The collector adds how to run
 * each one; the report and the store read only this. */
#include <string.h>

#include "tl_base.h"

static const tl_probe_about catalogue[] = {
    {"settimeout", "setTimeout",
     "libuv timer with Node.js setTimeout semantics: delays below 1 ms become 1 ms, armed "
     "against the loop's cached time; clock from the scheduling call to the callback "
     "(uv_hrtime); --arm-from timer|immediate",
     "a libuv timer with the semantics of Node.js setTimeout: a delay below 1 ms "
     "becomes 1 ms and the timer is armed against the loop's cached time; the "
     "clock runs from the scheduling call to the start of the callback "
     "(uv_hrtime). It is libuv's floor under Node: no JavaScript, timer lists or "
     "garbage collector.",
     1000000, 1},
    {"uv", NULL,
     "libuv timer armed after uv_update_time(), 0 means 0; clock from the scheduling call to "
     "the callback (uv_hrtime). At 0 ms a timer re-armed in its callback (--arm-from timer) "
     "may run in the same pass over the timers without crossing the loop (libuv 1.44 does; "
     "stored as the fact probe.uv.zero_timer_same_pass); --arm-from immediate arms from a "
     "check callback, so every sample crosses the loop",
     "a libuv timer armed after uv_update_time(), where 0 means 0; the clock runs from "
     "the scheduling call to the start of the callback (uv_hrtime). At 0 ms a timer "
     "re-armed in its own callback may run again in the same pass over the timers, "
     "with no trip through the loop (the session fact "
     "probe.uv.zero_timer_same_pass says whether its libuv does); sessions tagged "
     "arm_from=immediate armed each timer from the loop's check phase, so every "
     "sample crossed the loop.",
     0, 1},
    {"nanosleep", NULL,
     "relative {sleep} in the measuring thread; clock ({clock}) from just before the call to its "
     "return; lateness = sample - delay",
     "a relative sleep of the measuring thread on the monotonic clock that libuv's "
     "uv_hrtime reads (tlcollect --list-probes names the call and the clock on each "
     "system); latency is the wake-up time minus the requested end.",
     0, 0},
    {"periodic", NULL,
     "cyclictest-style wake-ups every --interval (default 1ms) sleeping to each instant with "
     "{sleep_until} on {clock}; "
     "sample = wake - (scheduled instant - interval), so sample - interval is "
     "cyclictest's latency; whole periods overrun are counted as missed periods",
     "periodic wake-ups on an absolute schedule (start + k x interval), as "
     "cyclictest measures; latency is the wake-up time minus the scheduled "
     "instant, and whole periods overrun are counted as missed.",
     0, 0},
    {"timerfd", NULL,
     "Linux only: a timerfd armed for the delay (0 arms 1 ns) and waited for with epoll_wait; "
     "clock (CLOCK_MONOTONIC) from just before timerfd_settime to epoll_wait's return",
     "a Linux timerfd armed for the delay and waited on with epoll_wait; latency "
     "is the wake-up time minus the expiry.",
     0, 0},
    {"node", NULL,
     "Node.js setTimeout in a node child process (share/tl/probes/tl-node-probe.js), each "
     "timer armed from the previous callback as a script timing itself does (--arm-from "
     "timer|immediate|io); clock (process.hrtime) from just before setTimeout to the start of "
     "the callback, inside node",
     "the real Node.js setTimeout in a child process, timed inside Node with "
     "process.hrtime the way a script times itself (each timer armed from the previous "
     "callback, or where the session's arm_from tag says) and streamed back to tl: Node "
     "itself, where settimeout is libuv's floor under it.",
     1000000, 1},
    {"browser", NULL,
     "timers in a headless Chromium tab (share/tl/probes/tl-browser-probe.js, driven over the "
     "DevTools protocol), the page cross-origin isolated for a 5 us clock; --browser-mode "
     "nested (setTimeout chained in its callback: clamped to 4 ms past five levels), timeout "
     "(armed from a message task: no clamp), message (MessageChannel), raf "
     "(requestAnimationFrame) or background (nested, in a hidden tab); clock "
     "(performance.now) from just before arming to the callback, inside the page",
     "timers in a headless Chromium tab, timed inside the page with "
     "performance.now() (the page cross-origin isolated, for a 5 us clock); the "
     "session's browser_mode tag says which: nested setTimeout (clamped to 4 ms past "
     "five levels), setTimeout armed from a message task, MessageChannel, "
     "requestAnimationFrame, or nested in a hidden tab.",
     0, 1},
    {"exec:CMD", NULL,
     "any program speaking tl's probe protocol (README, 'Writing a probe'), run with /bin/sh -c "
     "CMD; the program's own clock, from arming its timer to the callback",
     "an outside program that measured its own timer and streamed the samples to tl "
     "over tl's line protocol; what it measured is defined by that program.",
     0, 0},
};

const tl_probe_about *tl_probe_catalogue(size_t *count) {
  *count = sizeof catalogue / sizeof catalogue[0];
  return catalogue;
}

const tl_probe_about *tl_probe_about_find(const char *name) {
  if (!name)
    return NULL;
  for (size_t i = 0; i < sizeof catalogue / sizeof catalogue[0]; i++) {
    const char *n = catalogue[i].name;
    const char *colon = strchr(n, ':');
    if (colon ? strncmp(n, name, (size_t)(colon - n) + 1) == 0 &&
                    tl_probe_name_check(name, NULL, 0) == TL_OK
              : strcmp(n, name) == 0)
      return &catalogue[i];
  }
  return NULL;
}

int64_t tl_probe_armed_ns(const char *probe, int64_t delay_ns) {
  const tl_probe_about *p = tl_probe_about_find(probe);
  return p && delay_ns < p->floor_ns ? p->floor_ns : delay_ns;
}

void tl_probe_summary(const tl_probe_about *p, char *buf, size_t len) {
  const tl_os_timing *os = tl_os_timing_here();
  static const char *const names[] = {"{clock}", "{sleep}", "{sleep_until}"};
  const char *values[] = {os->clock, os->sleep, os->sleep_until};
  size_t at = 0;
  if (!len)
    return;
  for (const char *s = p->summary; *s && at + 1 < len;) {
    size_t k = 0;
    while (k < 3 && strncmp(s, names[k], strlen(names[k])) != 0)
      k++;
    const char *put = k < 3 ? values[k] : s;
    size_t n = k < 3 ? strlen(put) : 1;
    n = n < len - 1 - at ? n : len - 1 - at;
    memcpy(buf + at, put, n);
    at += n;
    s += k < 3 ? strlen(names[k]) : 1;
  }
  buf[at] = '\0';
}
