/* probes.c: the timer probes and their registry.
 *
 * settimeout: what Node.js setTimeout(fn, d) does on libuv. A delay below
 *   1 ms becomes 1 ms, the timer is armed against the loop's cached time
 *   (uv_now, last updated when the loop woke), and the clock runs from the
 *   scheduling call (uv_hrtime) to the start of the callback. Because the
 *   cached time can lag the real time, a callback may fire a little before
 *   the requested delay on the high-resolution clock; that is stored as
 *   measured.
 * uv: the same loop, but uv_update_time() refreshes the loop time before
 *   arming, and a delay of 0 means 0. A 0 ms timer re-armed in its own
 *   callback may run again in the same pass over the timers (libuv 1.44
 *   does), never crossing the loop; whether this libuv does is measured at
 *   the start and stored as the session fact probe.uv.zero_timer_same_pass.
 * Both keep --concurrency timers in flight on the one loop, and arm each
 * next timer from where --arm-from says: in the timer's callback (timer,
 * the default) or in a check callback after the loop's poll (immediate,
 * Node's setImmediate), so that every sample crosses the loop. The other
 * probes live in probe_sleep.c, probe_child.c and the OS files; the
 * registry at the end of this file lists them all. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "collect_internal.h"

/* ======================================================================== */
/* libuv timer probes                                                        */

/* One timer in flight; --concurrency N keeps N of them on the loop at once,
 * each timed on its own. */
typedef struct uv_probe uv_probe;
typedef struct {
  uv_timer_t timer;
  uv_check_t check; /* --arm-from immediate: arms the next timer */
  uv_idle_t idle;   /* meanwhile keeps the poll from blocking, as Node's setImmediate does */
  uv_probe *p;
  int index; /* delay being measured */
  uint64_t t0;
} uv_slot;

struct uv_probe {
  uv_loop_t loop;
  uv_slot *slots;
  int nslots;
  int active; /* slots with a timer in flight or about to be */
  uv_timer_t gap;
  uv_async_t wake;
  tl__run *run;
  int node_semantics; /* settimeout: 1 ms floor, cached loop time */
  int from_check;     /* --arm-from immediate */
  int closing;
};

static void arm(uv_slot *s);

static void close_all(uv_probe *p) {
  if (p->closing)
    return;
  p->closing = 1;
  for (int i = 0; i < p->nslots; i++) {
    uv_close((uv_handle_t *)&p->slots[i].timer, NULL);
    uv_close((uv_handle_t *)&p->slots[i].check, NULL);
    uv_close((uv_handle_t *)&p->slots[i].idle, NULL);
  }
  uv_close((uv_handle_t *)&p->gap, NULL);
  uv_close((uv_handle_t *)&p->wake, NULL);
}

static void on_idle(uv_idle_t *i) { (void)i; }

static void on_check(uv_check_t *c) {
  uv_slot *s = c->data;
  uv_check_stop(c);
  uv_idle_stop(&s->idle);
  arm(s);
}

/* Arms the slot's next timer from the context --arm-from chose. */
static void arm_next(uv_slot *s) {
  if (s->p->from_check && !s->p->closing) {
    uv_idle_start(&s->idle, on_idle);
    uv_check_start(&s->check, on_check);
  } else {
    arm(s);
  }
}

static void on_gap(uv_timer_t *t) { arm_next(t->data); }
static void on_retry(uv_timer_t *t) { arm(t->data); }

static void on_timer(uv_timer_t *t) {
  uint64_t t1 = uv_hrtime();
  uv_slot *s = t->data;
  uv_probe *p = s->p;
  tl__run_record(p->run, s->index, (int64_t)(t1 - s->t0));
  int64_t gap_ns = tl__run_view(p->run)->opts->gap_ns;
  if (gap_ns > 0 && !p->closing) {
    p->gap.data = s; /* only with one slot: --gap excludes --concurrency */
    uv_timer_start(&p->gap, on_gap, (uint64_t)((gap_ns + 999999) / 1000000), 0);
  } else {
    arm_next(s);
  }
}

/* Starts the slot's next measured timer. When the run is over the slot goes
 * idle, and the last slot to go idle closes the loop's handles so that
 * uv_run returns; on a stop they close at once. */
static void arm(uv_slot *s) {
  uv_probe *p = s->p;
  if (p->closing)
    return;
  int index = tl__run_next(p->run);
  if (index == TL__RUN_WAIT) { /* the slot's timer, unmeasured, asks again in 1 ms */
    uv_timer_start(&s->timer, on_retry, 1, 0);
    return;
  }
  if (index < 0) {
    if (--p->active == 0 || tl__run_stopping(p->run))
      close_all(p);
    return;
  }
  s->index = index;
  uint64_t ms = (uint64_t)(tl__run_view(p->run)->delays_ns[index] / 1000000);
  if (p->node_semantics) {
    if (ms < 1)
      ms = 1;
  } else {
    uv_update_time(&p->loop);
  }
  s->t0 = uv_hrtime();
  uv_timer_start(&s->timer, on_timer, ms, 0);
}

static void on_wake(uv_async_t *a) {
  uv_probe *p = a->data;
  if (tl__run_stopping(p->run))
    close_all(p);
}

static void wake_async(void *arg) { uv_async_send(arg); }

/* Does a 0 ms timer re-armed in its own callback run again before the loop
 * reaches its check phase, that is in the same pass over the timers? */
typedef struct {
  uv_timer_t timer;
  uv_check_t check;
  int checks, same;
} same_pass;

static void same_pass_timer(uv_timer_t *t) {
  same_pass *sp = t->data;
  if (sp->same == -1) {
    /* The first firing: re-arm as the uv probe does. */
    sp->same = -2;
    uv_update_time(t->loop);
    uv_timer_start(t, same_pass_timer, 0, 0);
    return;
  }
  sp->same = sp->checks == 0; /* no check phase between the two firings */
  uv_close((uv_handle_t *)&sp->timer, NULL);
  uv_close((uv_handle_t *)&sp->check, NULL);
}

static void same_pass_check(uv_check_t *c) {
  same_pass *sp = c->data;
  sp->checks++;
}

/* 1 yes, 0 no, -1 when the loop cannot be started. */
static int zero_timer_same_pass(void) {
  uv_loop_t loop;
  same_pass sp;
  memset(&sp, 0, sizeof sp);
  sp.same = -1;
  if (uv_loop_init(&loop))
    return -1;
  uv_timer_init(&loop, &sp.timer);
  uv_check_init(&loop, &sp.check);
  sp.timer.data = sp.check.data = &sp;
  uv_check_start(&sp.check, same_pass_check);
  uv_timer_start(&sp.timer, same_pass_timer, 0, 0);
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  return sp.same;
}

static int run_uv(tl__run *run, int node_semantics, char *err, size_t errlen) {
  uv_probe p;
  memset(&p, 0, sizeof p);
  p.run = run;
  p.node_semantics = node_semantics;
  p.from_check = strcmp(tl__run_view(run)->arm_from, "immediate") == 0;
  if (!node_semantics) {
    int same = zero_timer_same_pass();
    if (same >= 0)
      tl__run_fact(run, "uv.zero_timer_same_pass", same ? "yes" : "no",
                   "a 0 ms timer re-armed in its callback, checked before measuring");
  }
  int32_t c = tl__run_view(run)->opts->concurrency;
  p.nslots = c > 1 ? c : 1;
  p.slots = calloc((size_t)p.nslots, sizeof *p.slots);
  if (!p.slots) {
    snprintf(err, errlen, "out of memory for %d timers", p.nslots);
    return TL_ENOMEM;
  }
  int rc = uv_loop_init(&p.loop);
  if (rc) {
    snprintf(err, errlen, "cannot start a libuv loop: %s", uv_strerror(rc));
    free(p.slots);
    return TL_ESYS;
  }
  for (int i = 0; i < p.nslots; i++) {
    uv_timer_init(&p.loop, &p.slots[i].timer);
    uv_check_init(&p.loop, &p.slots[i].check);
    uv_idle_init(&p.loop, &p.slots[i].idle);
    p.slots[i].timer.data = p.slots[i].check.data = &p.slots[i];
    p.slots[i].p = &p;
  }
  uv_timer_init(&p.loop, &p.gap);
  rc = uv_async_init(&p.loop, &p.wake, on_wake);
  if (rc) {
    snprintf(err, errlen, "cannot start a libuv loop: %s", uv_strerror(rc));
    for (int i = 0; i < p.nslots; i++) {
      uv_close((uv_handle_t *)&p.slots[i].timer, NULL);
      uv_close((uv_handle_t *)&p.slots[i].check, NULL);
      uv_close((uv_handle_t *)&p.slots[i].idle, NULL);
    }
    uv_close((uv_handle_t *)&p.gap, NULL);
    uv_run(&p.loop, UV_RUN_DEFAULT);
    uv_loop_close(&p.loop);
    free(p.slots);
    return TL_ESYS;
  }
  p.wake.data = &p;
  tl__run_set_wakeup(run, wake_async, &p.wake);
  p.active = p.nslots;
  for (int i = 0; i < p.nslots; i++)
    arm(&p.slots[i]);
  uv_run(&p.loop, UV_RUN_DEFAULT);
  tl__run_set_wakeup(run, NULL, NULL);
  rc = uv_loop_close(&p.loop);
  free(p.slots);
  if (rc) {
    snprintf(err, errlen, "libuv loop did not close: %s", uv_strerror(rc));
    return TL_ESYS;
  }
  return TL_OK;
}

static int run_settimeout(tl__run *run, char *err, size_t errlen) {
  return run_uv(run, 1, err, errlen);
}

static int run_uvtimer(tl__run *run, char *err, size_t errlen) {
  return run_uv(run, 0, err, errlen);
}

/* ======================================================================== */
/* Registry                                                                  */

static const tl__probe probes[] = {
    {"settimeout", run_settimeout, TL__PROBE_CONCURRENT | TL__PROBE_CAUSES, "timer,immediate", NULL,
     NULL},
    {"uv", run_uvtimer, TL__PROBE_CONCURRENT | TL__PROBE_CAUSES, "timer,immediate", NULL, NULL},
    {"nanosleep", tl__probe_nanosleep, TL__PROBE_CAUSES, NULL, NULL, NULL},
    {"periodic", tl__probe_periodic, TL__PROBE_PERIODIC | TL__PROBE_CAUSES, NULL, NULL, NULL},
    {"timerfd", tl__probe_timerfd, TL__PROBE_CAUSES, NULL, NULL, NULL},
    {"node", tl__probe_child_run, 0, "timer,immediate,io", tl__probe_node_start,
     tl__probe_child_abandon},
    {"browser", tl__probe_child_run, 0, NULL, tl__probe_browser_start, tl__probe_child_abandon},
    {"exec:CMD", tl__probe_child_run, TL__PROBE_PREFIX, NULL, tl__probe_exec_start,
     tl__probe_child_abandon},
};

static tl_probe_info infos[sizeof probes / sizeof probes[0]];
static char summaries[sizeof probes / sizeof probes[0]][1024];

/* What --list-probes shows comes from the catalogue (tl_base.h), where the
 * report reads what the same probes measured, with this system's clock. */
const tl_probe_info *tl_probes(size_t *count) {
  *count = sizeof probes / sizeof probes[0];
  for (size_t i = 0; i < *count; i++) {
    const tl_probe_about *about = tl_probe_about_find(probes[i].name);
    summaries[i][0] = '\0';
    if (about)
      tl_probe_summary(about, summaries[i], sizeof summaries[i]);
    infos[i] = (tl_probe_info){probes[i].name, summaries[i], about ? about->ms_only : 0};
  }
  return infos;
}

const tl__probe *tl__probe_lookup(const char *name) {
  for (size_t i = 0; name && i < sizeof probes / sizeof probes[0]; i++) {
    const tl__probe *p = &probes[i];
    if (p->flags & TL__PROBE_PREFIX) {
      size_t plen = strcspn(p->name, ":") + 1; /* "exec:" */
      if (strncmp(p->name, name, plen) == 0 && tl_probe_name_check(name, NULL, 0) == TL_OK)
        return p;
    } else if (strcmp(p->name, name) == 0) {
      return p;
    }
  }
  return NULL;
}

const char *tl__arm_from(const tl_collect_opts *o) {
  const tl__probe *p = tl__probe_lookup(o->probe);
  if (!p || !p->arm_contexts)
    return NULL;
  /* Every probe with contexts lists "timer" first: chained timers are how
   * code that measures itself usually arms them. */
  return o->arm_from ? o->arm_from : "timer";
}

const char *tl__browser_mode(const tl_collect_opts *o) {
  return o->browser_mode ? o->browser_mode : "nested";
}

const tl_probe_info *tl_probe_find(const char *name) {
  const tl__probe *p = tl__probe_lookup(name);
  size_t n;
  return p ? &tl_probes(&n)[p - probes] : NULL;
}
