/* relay.c: work handed from the thread that reads a store to a second one,
 * a batch at a time (relay.h). Two batches alternate under one mutex: the
 * reader fills one while the worker runs the other, and a batch passes
 * between them only through it, so neither touches a batch the other
 * holds. */
#include <stddef.h>

#include "relay.h"

static void *worker(void *arg) {
  tl__relay *r = arg;
  pthread_mutex_lock(&r->mu);
  for (;;) {
    while (!r->pending && !r->quit)
      pthread_cond_wait(&r->cv, &r->mu);
    if (!r->pending)
      break;
    void *b = r->pending;
    r->pending = NULL;
    r->busy = 1;
    int err = r->err;
    pthread_mutex_unlock(&r->mu);
    /* After an error the rest are only emptied. */
    if (!err)
      err = r->run(r->ctx, b);
    r->empty(b);
    pthread_mutex_lock(&r->mu);
    if (err && !r->err)
      r->err = err;
    r->busy = 0;
    pthread_cond_broadcast(&r->cv);
  }
  pthread_mutex_unlock(&r->mu);
  return NULL;
}

int tl__relay_start(tl__relay *r, tl__relay_run_fn run, tl__relay_empty_fn empty, void *ctx,
                    void *first, void *second) {
  *r = (tl__relay){.run = run, .empty = empty, .ctx = ctx, .batch = {first, second}, .fill = first};
  if (pthread_mutex_init(&r->mu, NULL) != 0)
    return TL_ENOMEM;
  if (pthread_cond_init(&r->cv, NULL) != 0) {
    pthread_mutex_destroy(&r->mu);
    return TL_ENOMEM;
  }
  if (pthread_create(&r->thread, NULL, worker, r) != 0) {
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    return TL_ENOMEM;
  }
  return TL_OK;
}

int tl__relay_submit(tl__relay *r, int has_work) {
  pthread_mutex_lock(&r->mu);
  r->was_busy = r->pending || r->busy;
  while (r->pending || r->busy)
    pthread_cond_wait(&r->cv, &r->mu);
  int err = r->err;
  if (!err && has_work) {
    r->pending = r->fill;
    r->fill = r->fill == r->batch[0] ? r->batch[1] : r->batch[0];
    pthread_cond_broadcast(&r->cv);
  }
  pthread_mutex_unlock(&r->mu);
  return err;
}

int tl__relay_drain(tl__relay *r, int has_work) {
  int err = tl__relay_submit(r, has_work);
  pthread_mutex_lock(&r->mu);
  while (r->pending || r->busy)
    pthread_cond_wait(&r->cv, &r->mu);
  err = r->err ? r->err : err;
  pthread_mutex_unlock(&r->mu);
  return err;
}

int tl__relay_stop(tl__relay *r, int has_work) {
  int err = tl__relay_drain(r, has_work);
  pthread_mutex_lock(&r->mu);
  r->quit = 1;
  pthread_cond_broadcast(&r->cv);
  pthread_mutex_unlock(&r->mu);
  pthread_join(r->thread, NULL);
  pthread_cond_destroy(&r->cv);
  pthread_mutex_destroy(&r->mu);
  return err;
}
