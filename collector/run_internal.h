/* run_internal.h: the inside of a run, shared by the two files that keep
 * it: run.c (the run as the probe and the writer thread see it: delays
 * handed out, samples queued in chunks, the writer storing them) and
 * collect.c (a run's life: sessions begun, the probe run, everything ended).
 * Probes see only tl__run's functions in collect_internal.h. */
#ifndef TL_RUN_INTERNAL_H
#define TL_RUN_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "causes_internal.h"

enum {
  CHUNK_SAMPLES = TL__RUN_CHUNK_SAMPLES, /* 128 KiB */
  QUEUE_CHUNKS = TL__RUN_QUEUE_CHUNKS,   /* 8 MiB waiting for the writer: the runner pauses */
  WAKE_CHUNKS = 16,                      /* the writer starts early once this many wait */
  LOCK_PATIENCE_S = 600,                 /* after the run, how long a held lock is waited out */
};

/* Samples in arrival order. */
typedef struct chunk {
  struct chunk *next;
  size_t n;
  int64_t v[CHUNK_SAMPLES];
  tl__cause_cell cause[CHUNK_SAMPLES]; /* what the thread read around each sample */
} chunk;

typedef struct {
  chunk *head, *tail; /* kept samples not yet released, oldest first */
  size_t taken;       /* samples of head already handed to the writer */
  int64_t kept;       /* samples kept (after warm-up) */
  int64_t measured;   /* including warm-up */
  int64_t issued;     /* handed out by tl__run_next (some may be in flight) */
  int64_t missed, missed_flushed;
  int64_t handed; /* samples handed to the store writer */
  int stuck;      /* the store writer holds samples a flush could not commit */
  tl_writer *writer;
  int64_t session_id;
  tl__cause_keep keep; /* causes of the slowest samples handed over, until committed */
} delay_state;

struct tl__run {
  struct tl__run_view view;
  delay_state d[TL_MAX_DELAYS];
  size_t rr; /* round-robin position */
  uint64_t start_hr, deadline_hr;
  int64_t issued, measured; /* of all delays, for the samples in flight */
  int64_t pauses;           /* times the runner waited for the writer */
  int oom;
  atomic_int write_failed; /* set by the writer, read by the measuring thread */
  int locked_out;          /* the last flush found the database locked */
  pthread_mutex_t lock;
  pthread_cond_t wake_writer;
  pthread_cond_t room;  /* the writer released chunks */
  atomic_size_t queued; /* chunks holding samples the writer has not released */
  size_t queued_peak;   /* the most chunks queued at once (under the lock) */
  chunk *pool;          /* released chunks, for reuse */
  int writer_done;
  tl_store *store;
  char write_err[512];
  void (*volatile wake)(void *); /* read by a signal handler */
  void *volatile wake_arg;
  tl_host probe_facts;        /* learnt by the probe while running; the measuring thread's own */
  void *probe_state;          /* from the probe's start to its run */
  tl__causes causes;          /* the measuring thread's reads around each sample */
  tl__counter_clock counters; /* the host's counters, read by the writer thread */
  tl__cause_cell *cause_tail; /* the causes of the tail samples being flushed */
};

/* Whether a stop was asked for (tl_collect_stop, from a signal handler). */
int tl__run_stop_requested(void);
/* The run a stop wakes (NULL: none). */
void tl__run_set_current(tl__run *run);
/* The writer thread's body (arg: the run); ends when writer_done is set. */
void *tl__run_writer_main(void *arg);
/* After the writer thread: stores what is left, waiting out a held lock. */
int tl__run_flush_rest(tl__run *run);
/* Frees a list of chunks. */
void tl__run_free_chunks(chunk *c);

#endif
