/* session.c: what every backend shares about sessions, above them all:
 * failure messages on the handle, whether a 'running' session's collector
 * is gone, the filter and the lists that tl_store_sessions and the other
 * readers hand out (and free), and the scan of a session's samples, which
 * decodes and verifies the blocks any backend's scan_blocks reads. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "store_internal.h"

/* ======================================================================== */
/* Failures, time and stale sessions                                         */

int tl__store_fail(tl_store *s, int err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->errmsg, sizeof s->errmsg, fmt, ap);
  va_end(ap);
  return err;
}

int64_t tl__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

const char *tl_store_errmsg(const tl_store *s) { return s ? s->errmsg : "out of memory"; }

/* A 'running' session is stale when its collector cannot still be writing
 * it. On this host (same hostname) that is known for sure: the pid no
 * longer exists, or it now names a process that started after the session
 * did (the pid was reused). While the collector lives, its session is never
 * stale, however long since its last commit: another program may hold the
 * write lock for minutes, and the collector stores everything once it is
 * free. Only a session from another host, whose process cannot be seen, is
 * judged by its heartbeat (last commit) being older than stale_ns. */
int tl__session_gone(const char *hostname, int64_t pid, int64_t started_ns, int64_t heartbeat_ns,
                     int64_t stale_ns) {
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  if (!hostname || strcmp(hostname, host) != 0 || pid <= 0)
    return tl__now_ns() - heartbeat_ns > stale_ns;
  if (pid == (int64_t)getpid())
    return 0;
  /* kill(pid, 0) fails with ESRCH only when no such process exists. */
  if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
    return 1;
  /* A collector starts before its session; the margin covers the boot
   * time's rounding to whole seconds. */
  int64_t born = tl__process_started_ns((long)pid);
  return born > 0 && born > started_ns + 2000000000LL;
}

int64_t tl__stale_ns(void) {
  const char *env = getenv("TL_STALE_SECONDS");
  char *end;
  double sec = env && *env ? strtod(env, &end) : 0;
  if (!env || !*env || *end || !(sec > 0) || sec > 1e9)
    return TL_STALE_DEFAULT_NS;
  return (int64_t)(sec * 1e9);
}

int tl__session_settle(tl_store *s, tl_strpool *pool, tl_session *x, int64_t pid,
                       int64_t heartbeat_ns) {
  if (strcmp(x->status, "running") != 0 ||
      !tl__session_gone(x->hostname, pid, x->started_ns, heartbeat_ns, tl__stale_ns()))
    return TL_OK;
  x->status = tl_strpool_get(pool, "interrupted");
  x->ended_ns = heartbeat_ns;
  return x->status ? TL_OK : tl__store_fail(s, TL_ENOMEM, "out of memory listing sessions");
}

/* ======================================================================== */
/* Filters and lists                                                         */

void tl_filter_init(tl_filter *f) {
  memset(f, 0, sizeof *f);
  f->delay_ns = -1;
}

void tl__session_free(tl_session *x) {
  free(x->uuid);
  free(x->run_uuid);
  free(x->label);
  free(x->probe);
  free(x->hostname);
  free(x->host_fingerprint);
  free(x->status);
  free(x->command_line);
  free(x->tl_version);
  free(x->libuv_version);
}

void tl_session_list_free(tl_session_list *list) {
  if (!list)
    return;
  for (size_t i = 0; !list->strings && i < list->count; i++)
    tl__session_free(&list->items[i]);
  tl_strpool_free(list->strings);
  free(list->items);
  list->items = NULL;
  list->count = 0;
  list->strings = NULL;
}

void tl_session_list_keep(tl_session_list *list, const char *keep) {
  size_t kept = 0;
  for (size_t i = 0; i < list->count; i++)
    if (keep[i])
      list->items[kept++] = list->items[i];
    else if (!list->strings)
      tl__session_free(&list->items[i]);
  list->count = kept;
  if (!kept) /* an empty list holds nothing, as one read empty */
    tl_session_list_free(list);
}

int tl__session_list_add(tl_session_list *list, size_t *cap, tl_session **out) {
  if (!list->strings && !(list->strings = tl_strpool_new()))
    return TL_ENOMEM;
  if (list->count == *cap) {
    size_t more = *cap ? *cap * 2 : 16;
    tl_session *p = realloc(list->items, more * sizeof *p);
    if (!p)
      return TL_ENOMEM;
    list->items = p;
    *cap = more;
  }
  *out = &list->items[list->count++];
  memset(*out, 0, sizeof **out);
  return TL_OK;
}

void tl__session_list_reserve(tl_session_list *list, size_t *cap, size_t n) {
  if (n <= *cap)
    return;
  tl_session *p = realloc(list->items, n * sizeof *p);
  if (p) {
    list->items = p;
    *cap = n;
  }
}

void tl__session_list_fit(tl_session_list *list) {
  if (!list->count) { /* room reserved for rows that never came */
    free(list->items);
    list->items = NULL;
    return;
  }
  tl_session *p = realloc(list->items, list->count * sizeof *p);
  if (p)
    list->items = p;
}

int tl__host_names_add(tl__host_names *h, tl_strpool *pool, int64_t id, const char *hostname,
                       size_t hostname_len, const char *fingerprint, size_t fingerprint_len) {
  if (h->count == h->cap) {
    size_t more = h->cap ? h->cap * 2 : 16;
    tl__host_name *p = realloc(h->items, more * sizeof *p);
    if (!p)
      return TL_ENOMEM;
    h->items = p;
    h->cap = more;
  }
  tl__host_name *x = &h->items[h->count];
  x->id = id;
  x->hostname = tl_strpool_get_len(pool, hostname, hostname_len);
  x->fingerprint = tl_strpool_get_len(pool, fingerprint, fingerprint_len);
  if (!x->hostname || !x->fingerprint)
    return TL_ENOMEM;
  h->count++;
  return TL_OK;
}

static int by_host_id(const void *a, const void *b) {
  const tl__host_name *x = a, *y = b;
  return (x->id > y->id) - (x->id < y->id);
}

void tl__host_names_ready(tl__host_names *h) {
  for (size_t i = 1; i < h->count; i++)
    if (h->items[i - 1].id > h->items[i].id) { /* the query asks in order; a file is not trusted */
      qsort(h->items, h->count, sizeof *h->items, by_host_id);
      return;
    }
}

const tl__host_name *tl__host_names_find(const tl__host_names *h, int64_t id) {
  const tl__host_name key = {id, NULL, NULL};
  return h->count ? bsearch(&key, h->items, h->count, sizeof *h->items, by_host_id) : NULL;
}

void tl__host_names_free(tl__host_names *h) {
  free(h->items);
  *h = (tl__host_names){NULL, 0, 0};
}

static int by_start(const void *a, const void *b) {
  const tl_session *x = a, *y = b;
  if (x->started_ns != y->started_ns)
    return x->started_ns < y->started_ns ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

void tl__session_list_order(tl_session_list *list) {
  for (size_t i = 1; i < list->count; i++)
    if (by_start(&list->items[i - 1], &list->items[i]) > 0) {
      qsort(list->items, list->count, sizeof *list->items, by_start);
      return;
    }
}

void tl_strings_free(char **strings, size_t count) {
  for (size_t i = 0; i < count; i++)
    free(strings[i]);
  free(strings);
}

void tl_fact_rows_free(tl_fact_row *rows, size_t count) {
  for (size_t i = 0; i < count; i++) {
    free(rows[i].key);
    free(rows[i].value);
    free(rows[i].evidence);
  }
  free(rows);
}

const char *tl_fact_rows_get(const tl_fact_row *rows, size_t count, const char *key) {
  for (size_t i = 0; i < count; i++)
    if (strcmp(rows[i].key, key) == 0)
      return rows[i].value;
  return NULL;
}

void tl_host_rows_free(tl_host_row *rows, size_t count) {
  for (size_t i = 0; i < count; i++) {
    free(rows[i].fingerprint);
    free(rows[i].hostname);
    tl_fact_rows_free(rows[i].facts, rows[i].fact_count);
  }
  free(rows);
}
