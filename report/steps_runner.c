/* steps_runner.c: the search for lasting changes (tl_steps_find) of a
 * comparison's series, run on a worker thread while the statistics go on
 * with the next group.
 *
 * The search costs the same for every series and does not depend on the
 * others (each has its own seed), so its order cannot change an answer.
 * Jobs are queued in the order they are added; the worker takes them one
 * at a time under one mutex, and so does the thread that waits for them
 * (it would only sleep), so a job's fields pass between the threads only
 * through it. When no thread can be started a job runs as it is
 * added, with the same results. A job owns copies of its series, freed as
 * soon as it has run; the queue holds at most max_points points waiting
 * (unless one series is longer), and adding more waits for the worker. */
#include <stdlib.h>
#include <string.h>

#include "stats_internal.h"

/* Finds the job's changes, as indexes into the series the points came
 * from, and frees its copies; only frees them when run is 0. */
static void job_run(tl__steps_job *j, int run) {
  j->found = 0;
  j->rc = run ? tl_steps_find(j->x, j->n, &j->opts, j->steps, TL__STEPS_MAX, &j->found) : TL_OK;
  for (size_t i = 0; i < j->found; i++)
    j->steps[i].index = j->at[j->steps[i].index];
  free(j->x);
  free(j->at);
  j->x = NULL;
  j->at = NULL;
}

/* Takes the job at the head of the queue and runs it, with r->mu held on
 * entry and on return. */
static void run_next(tl__steps_runner *r) {
  tl__steps_job *j = r->head;
  r->head = j->next;
  if (!r->head)
    r->tail = NULL;
  /* After an error or a stop, the rest only give back their memory. */
  int run = !r->err && !r->quit;
  pthread_mutex_unlock(&r->mu);
  job_run(j, run);
  pthread_mutex_lock(&r->mu);
  if (j->rc && !r->err)
    r->err = j->rc;
  r->points -= j->n;
  r->pending--;
  pthread_cond_broadcast(&r->cv);
}

static void *worker(void *arg) {
  tl__steps_runner *r = arg;
  pthread_mutex_lock(&r->mu);
  for (;;) {
    while (!r->head && !r->quit)
      pthread_cond_wait(&r->cv, &r->mu);
    if (!r->head)
      break;
    run_next(r);
  }
  pthread_mutex_unlock(&r->mu);
  return NULL;
}

void tl__steps_runner_start(tl__steps_runner *r, int threaded) {
  memset(r, 0, sizeof *r);
  r->max_points = TL__STEPS_QUEUE_POINTS;
  if (!threaded || pthread_mutex_init(&r->mu, NULL) != 0)
    return;
  if (pthread_cond_init(&r->cv, NULL) != 0) {
    pthread_mutex_destroy(&r->mu);
    return;
  }
  if (pthread_create(&r->th, NULL, worker, r) != 0) {
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    return;
  }
  r->threaded = 1;
}

int tl__steps_runner_add(tl__steps_runner *r, tl__steps_job *j) {
  j->next = NULL;
  if (!r->threaded) {
    job_run(j, !r->err);
    if (j->rc && !r->err)
      r->err = j->rc;
    return r->err;
  }
  pthread_mutex_lock(&r->mu);
  while (r->pending && !r->err && r->points + j->n > r->max_points)
    pthread_cond_wait(&r->cv, &r->mu);
  if (r->tail)
    r->tail->next = j;
  else
    r->head = j;
  r->tail = j;
  r->pending++;
  r->points += j->n;
  int err = r->err;
  pthread_cond_broadcast(&r->cv);
  pthread_mutex_unlock(&r->mu);
  return err;
}

int tl__steps_runner_wait(tl__steps_runner *r) {
  if (!r->threaded)
    return r->err;
  pthread_mutex_lock(&r->mu);
  /* A waiting thread has nothing else to do: it takes queued jobs too. */
  while (r->head)
    run_next(r);
  while (r->pending)
    pthread_cond_wait(&r->cv, &r->mu);
  int err = r->err;
  pthread_mutex_unlock(&r->mu);
  return err;
}

void tl__steps_runner_stop(tl__steps_runner *r) {
  if (!r->threaded)
    return;
  pthread_mutex_lock(&r->mu);
  r->quit = 1;
  pthread_cond_broadcast(&r->cv);
  pthread_mutex_unlock(&r->mu);
  pthread_join(r->th, NULL);
  pthread_cond_destroy(&r->cv);
  pthread_mutex_destroy(&r->mu);
  r->threaded = 0;
}
