/* pq.c: loads libpq when a server is first opened (pq.h says why), and
 * fills the table the backend calls through. dlopen and dlsym are POSIX, so
 * this serves Linux and macOS alike; only the file name differs, and CMake
 * gives it (TL_LIBPQ_FILE) with the folder of the libpq tl was built
 * against (TL_LIBPQ_DIR), tried first: Homebrew's libpq is not on the
 * loader's search path. The two lists in pq.h agree or tl does not build: a
 * function missing from the table does not compile, one not redirected does
 * not link. */
#define TL_PQ_LOADER 1
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pq.h"
#include "tl_base.h"

#ifndef TL_LIBPQ_FILE
#define TL_LIBPQ_FILE "libpq.so.5"
#endif

tl__pq_api tl__pq;

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static int loaded;

/* Fills the table from handle: the first symbol missing, or NULL. */
static const char *fill(void *handle, tl__pq_api *api) {
#define TL_PQ_FILL(name)                                                                           \
  {                                                                                                \
    void *sym = dlsym(handle, #name);                                                              \
    if (!sym)                                                                                      \
      return #name;                                                                                \
    memcpy(&api->name, &sym, sizeof sym); /* ISO C has no object-to-function cast */               \
  }
  TL_PQ_FUNCTIONS(TL_PQ_FILL)
#undef TL_PQ_FILL
  return NULL;
}

/* Loads the first of names[0..n) that opens: TL_OK once it has every
 * function, else a reason in why. */
static int load_first(const char *const *names, size_t n, char *why, size_t whylen) {
  for (size_t i = 0; i < n; i++) {
    void *handle = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!handle)
      continue;
    tl__pq_api api;
    const char *missing = fill(handle, &api);
    if (!missing) {
      tl__pq = api; /* the handle stays open for the life of the process */
      return TL_OK;
    }
    dlclose(handle);
    return tl_fail(why, whylen, TL_EUNAVAIL, "%s has no %s: it is not a usable libpq", names[i],
                   missing);
  }
  return tl_fail(why, whylen, TL_EUNAVAIL,
                 "reaching a PostgreSQL server needs libpq, and %s cannot be loaded (Debian: "
                 "apt-get install libpq5; macOS: brew install libpq; or set TL_LIBPQ to the "
                 "library's path)",
                 names[n - 1]);
}

int tl__pq_load(char *why, size_t whylen) {
  pthread_mutex_lock(&load_lock);
  int err = TL_OK;
  if (!loaded) {
    const char *own = getenv("TL_LIBPQ");
#ifdef TL_LIBPQ_DIR
    const char *const built[] = {TL_LIBPQ_DIR "/" TL_LIBPQ_FILE, TL_LIBPQ_FILE};
#else
    const char *const built[] = {TL_LIBPQ_FILE};
#endif
    err = own && *own ? load_first(&own, 1, why, whylen)
                      : load_first(built, sizeof built / sizeof *built, why, whylen);
    loaded = err == TL_OK;
  }
  pthread_mutex_unlock(&load_lock);
  return err;
}
