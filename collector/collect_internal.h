/* collect_internal.h: how the session runner and the probes talk, and how
 * host detection is split between common code and one file per OS. */
#ifndef TL_COLLECT_INTERNAL_H
#define TL_COLLECT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "tl_collect.h"

/* ------------------------------------------------------------------------ */
/* Probes                                                                    */

/* The runner's side of a collection, as a probe sees it. A probe loops:
 *   while ((i = tl__run_next(run)) >= 0) { measure run->delays_ns[i];
 *                                         tl__run_record(run, i, latency); }
 * in whatever shape its timer needs (callbacks for libuv, a plain loop for
 * clock_nanosleep). tl__run_next returns -1 when the run is over: the counts
 * are reached, the duration is up, or tl_collect_stop() was called. */
typedef struct tl__run tl__run;

struct tl__run_view {
  const tl_collect_opts *opts;
  const int64_t *delays_ns;
  size_t delay_count;
};

const struct tl__run_view *tl__run_view(const tl__run *run);
int tl__run_next(tl__run *run);
void tl__run_record(tl__run *run, int index, int64_t latency_ns);
/* Periods the probe found it had skipped (periodic probes). */
void tl__run_missed(tl__run *run, int index, int64_t missed);
/* Non-zero once a stop was asked for (signal or error). */
int tl__run_stopping(const tl__run *run);
/* A handle a uv probe may wake with uv_async_send() to notice a stop. */
void tl__run_set_wakeup(tl__run *run, void (*wake)(void *), void *arg);

typedef struct {
  tl_probe_info info;
  /* Measures until tl__run_next says stop. Returns TL_OK or an error with a
   * one-line message in err. */
  int (*run)(tl__run *run, char *err, size_t errlen);
} tl__probe;

const tl__probe *tl__probe_lookup(const char *name);

/* ------------------------------------------------------------------------ */
/* Host detection                                                            */

enum { TL_HOST_MAX_FACTS = 128 };

struct tl_host {
  tl_fact facts[TL_HOST_MAX_FACTS];
  size_t count;
  char fingerprint[65];
};

/* Adds or replaces a fact; copies the strings. */
int tl__host_set(tl_host *h, const char *key, const char *value, const char *evidence);
/* Fills in what the running OS can tell (host_linux.c, host_macos.c ...). */
int tl__host_detect_os(tl_host *h);

#endif
