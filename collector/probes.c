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
 *   arming, and a delay of 0 means 0 (the timer runs on the next loop
 *   iteration). */
#include <string.h>

#include <uv.h>

#include "collect_internal.h"

/* ======================================================================== */
/* libuv timer probes                                                        */

typedef struct {
  uv_loop_t loop;
  uv_timer_t timer;
  uv_timer_t gap;
  uv_async_t wake;
  tl__run *run;
  int node_semantics; /* settimeout: 1 ms floor, cached loop time */
  int index;          /* delay being measured */
  uint64_t t0;
} uv_probe;

static void arm(uv_probe *p);

static void close_all(uv_probe *p) {
  if (uv_is_closing((uv_handle_t *)&p->timer))
    return;
  uv_close((uv_handle_t *)&p->timer, NULL);
  uv_close((uv_handle_t *)&p->gap, NULL);
  uv_close((uv_handle_t *)&p->wake, NULL);
}

static void on_gap(uv_timer_t *t) { arm(t->data); }

static void on_timer(uv_timer_t *t) {
  uint64_t t1 = uv_hrtime();
  uv_probe *p = t->data;
  tl__run_record(p->run, p->index, (int64_t)(t1 - p->t0));
  int64_t gap_ns = tl__run_view(p->run)->opts->gap_ns;
  if (gap_ns > 0)
    uv_timer_start(&p->gap, on_gap, (uint64_t)((gap_ns + 999999) / 1000000), 0);
  else
    arm(p);
}

/* Starts the next measured timer, or closes the loop's handles when the run
 * is over so that uv_run returns. */
static void arm(uv_probe *p) {
  int index = tl__run_next(p->run);
  if (index < 0) {
    close_all(p);
    return;
  }
  p->index = index;
  uint64_t ms = (uint64_t)(tl__run_view(p->run)->delays_ns[index] / 1000000);
  if (p->node_semantics) {
    if (ms < 1)
      ms = 1;
  } else {
    uv_update_time(&p->loop);
  }
  p->t0 = uv_hrtime();
  uv_timer_start(&p->timer, on_timer, ms, 0);
}

static void on_wake(uv_async_t *a) {
  uv_probe *p = a->data;
  if (tl__run_stopping(p->run))
    close_all(p);
}

static void wake_async(void *arg) { uv_async_send(arg); }

static int run_uv(tl__run *run, int node_semantics, char *err, size_t errlen) {
  uv_probe p;
  memset(&p, 0, sizeof p);
  p.run = run;
  p.node_semantics = node_semantics;
  int rc = uv_loop_init(&p.loop);
  if (rc) {
    snprintf(err, errlen, "cannot start a libuv loop: %s", uv_strerror(rc));
    return TL_ESYS;
  }
  uv_timer_init(&p.loop, &p.timer);
  uv_timer_init(&p.loop, &p.gap);
  p.timer.data = p.gap.data = &p;
  rc = uv_async_init(&p.loop, &p.wake, on_wake);
  if (rc) {
    snprintf(err, errlen, "cannot start a libuv loop: %s", uv_strerror(rc));
    uv_close((uv_handle_t *)&p.timer, NULL);
    uv_close((uv_handle_t *)&p.gap, NULL);
    uv_run(&p.loop, UV_RUN_DEFAULT);
    uv_loop_close(&p.loop);
    return TL_ESYS;
  }
  p.wake.data = &p;
  tl__run_set_wakeup(run, wake_async, &p.wake);
  arm(&p);
  uv_run(&p.loop, UV_RUN_DEFAULT);
  tl__run_set_wakeup(run, NULL, NULL);
  rc = uv_loop_close(&p.loop);
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
    {{"settimeout",
      "libuv timer with Node.js setTimeout semantics: delays below 1 ms become 1 ms, armed "
      "against the loop's cached time; clock from the scheduling call to the callback "
      "(uv_hrtime)",
      1},
     run_settimeout},
    {{"uv",
      "libuv timer armed after uv_update_time(), 0 means 0; clock from the scheduling call to "
      "the callback (uv_hrtime)",
      1},
     run_uvtimer},
};

static tl_probe_info infos[sizeof probes / sizeof probes[0]];

const tl_probe_info *tl_probes(size_t *count) {
  *count = sizeof probes / sizeof probes[0];
  for (size_t i = 0; i < *count; i++)
    infos[i] = probes[i].info;
  return infos;
}

const tl__probe *tl__probe_lookup(const char *name) {
  for (size_t i = 0; name && i < sizeof probes / sizeof probes[0]; i++)
    if (strcmp(probes[i].info.name, name) == 0)
      return &probes[i];
  return NULL;
}

const tl_probe_info *tl_probe_find(const char *name) {
  const tl__probe *p = tl__probe_lookup(name);
  return p ? &p->info : NULL;
}
