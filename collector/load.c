/* load.c: background load that tl runs itself during a session (--load
 * cpu:N, --load mem:N), so "idle against loaded" on one host is one command.
 * cpu threads spin on integer arithmetic; mem threads stream through a
 * buffer of 64 MiB each (bigger than any cache), writing every cache line,
 * which loads the memory bus and the caches the measuring thread shares. The
 * threads run at normal priority on any CPU (they drop a pinned CPU or a
 * real-time priority inherited from the measuring thread) and stop when the
 * session ends. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect_internal.h"

enum { MEM_BYTES = 64 << 20, LINE = 64 };

struct tl__load {
  atomic_int stop;
  size_t n;
  pthread_t *threads;
};

static void *spin_main(void *arg) {
  tl__load *l = arg;
  tl__tune_release_self();
  volatile uint64_t x = 88172645463325252ULL;
  while (!atomic_load_explicit(&l->stop, memory_order_relaxed))
    for (int i = 0; i < 4096; i++) { /* xorshift: the ALU stays busy */
      uint64_t v = x;
      v ^= v << 13;
      v ^= v >> 7;
      v ^= v << 17;
      x = v;
    }
  return NULL;
}

static void *mem_main(void *arg) {
  tl__load *l = arg;
  tl__tune_release_self();
  unsigned char *buf = malloc(MEM_BYTES);
  if (!buf)
    return NULL; /* less load, not a failed session */
  unsigned char k = 0;
  while (!atomic_load_explicit(&l->stop, memory_order_relaxed)) {
    for (size_t i = 0; i < MEM_BYTES; i += LINE)
      buf[i] = k;
    k++;
    /* keep the compiler from dropping the stores */
    __asm__ __volatile__("" : : "r"(buf) : "memory");
  }
  free(buf);
  return NULL;
}

int tl__load_start(int cpu_threads, int mem_threads, tl__load **out, char *err, size_t errlen) {
  *out = NULL;
  if (cpu_threads <= 0 && mem_threads <= 0)
    return TL_OK;
  tl__load *l = calloc(1, sizeof *l);
  size_t total =
      (size_t)(cpu_threads > 0 ? cpu_threads : 0) + (size_t)(mem_threads > 0 ? mem_threads : 0);
  if (!l || !(l->threads = calloc(total, sizeof *l->threads))) {
    free(l);
    snprintf(err, errlen, "out of memory starting the load threads");
    return TL_ENOMEM;
  }
  atomic_init(&l->stop, 0);
  /* Signals are for the measuring thread (a SIGINT must interrupt its
   * sleep), so the load threads start with them blocked. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  int rc = 0;
  for (size_t i = 0; i < total && rc == 0; i++) {
    rc = pthread_create(&l->threads[i], NULL, (int)i < cpu_threads ? spin_main : mem_main, l);
    if (rc == 0)
      l->n++;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc) {
    snprintf(err, errlen, "--load: cannot start load thread %zu: %s", l->n + 1, strerror(rc));
    tl__load_stop(l);
    return TL_ESYS;
  }
  *out = l;
  return TL_OK;
}

void tl__load_stop(tl__load *l) {
  if (!l)
    return;
  atomic_store(&l->stop, 1);
  for (size_t i = 0; i < l->n; i++)
    pthread_join(l->threads[i], NULL);
  free(l->threads);
  free(l);
}
