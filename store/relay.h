/* relay.h: work handed from the thread that reads a store to a second
 * thread, a batch at a time, so that on two cores the reading and the work
 * on what was read overlap (relay.c). The samples' reading (scan_threaded.c)
 * and the summaries' (summary.c) use it; internal to store/.
 *
 * The reading thread fills tl__relay_fill's batch and submits it; the
 * worker runs it while the reader fills the other one, batches in the
 * order submitted. The first error of a run is kept: later batches are only
 * emptied, and every later call returns it. */
#ifndef TL_RELAY_H
#define TL_RELAY_H

#include <pthread.h>

#include "store_internal.h"

/* Runs a batch on the worker: 0, or an error that ends the work. */
typedef int (*tl__relay_run_fn)(void *ctx, void *batch);
/* Empties a batch for its next filling, run or not. */
typedef void (*tl__relay_empty_fn)(void *batch);

typedef struct {
  tl__relay_run_fn run;
  tl__relay_empty_fn empty;
  void *ctx;
  void *batch[2];
  void *fill;     /* the batch the reading thread fills */
  void *pending;  /* handed to the worker, not yet taken */
  int busy, quit; /* the worker runs a batch; no more will come */
  int was_busy;   /* the last submit found the worker still at its batch */
  int err;        /* the work's first error */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  pthread_t thread;
} tl__relay;

/* Starts the worker over two empty batches, first to be filled first:
 * TL_OK, or TL_ENOMEM when no thread could be had (r is then not
 * started). */
int tl__relay_start(tl__relay *r, tl__relay_run_fn run, tl__relay_empty_fn empty, void *ctx,
                    void *first, void *second);

/* The batch to fill: the reading thread's own until it submits it. */
static inline void *tl__relay_fill(const tl__relay *r) { return r->fill; }

/* Hands the filled batch to the worker (has_work 0: it is empty, and only
 * the wait is wanted) once the worker is idle; the other batch is then the
 * one to fill. Returns the work's error so far. r->was_busy then says
 * whether the reading thread had to wait: which of the two is behind. */
int tl__relay_submit(tl__relay *r, int has_work);

/* Submits as tl__relay_submit, then waits until the worker has run every
 * batch: the reading thread may then touch what the work touches. */
int tl__relay_drain(tl__relay *r, int has_work);

/* Drains, then ends the worker: r may be started again. Returns the work's
 * first error. */
int tl__relay_stop(tl__relay *r, int has_work);

#endif
