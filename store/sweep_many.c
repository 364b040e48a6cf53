/* sweep_many.c: the passes of several sweeps over one store in one reading,
 * the first (their summaries) and those over the samples.
 *
 * A report's groups (a label and delay each, or a --by value) take their
 * sessions from the same stretch of the file: a fleet's hourly sessions
 * interleave, so that every page of sample blocks holds some of each group.
 * Swept one after another, each group would read every page again; swept
 * together, each pass reads each session once, in an order that keeps every
 * sweep's own (their lists merged, the lowest session id of the sweeps'
 * next ones first, so that the file is read about in order), and hands its
 * samples to the sweep that asked. A session that several sweeps list (a
 * group and its earlier sessions, for the check) is read once and handed to
 * each of them. What each sweep finds is what tl_sweep_finish finds alone. */
#include <stdint.h>
#include <stdlib.h>

#include "sweep_internal.h"

/* A shared pass's working arrays. A session of the reading goes to one or
 * more hands, a sweep that lists it each. */
typedef struct {
  tl_sweep *const *ws; /* the sweeps */
  int64_t *ids;        /* the sessions of the reading, each once, */
  size_t *hands;       /* per session of the reading: its first hand (and one
                          past the last: its count) */
  uint32_t *first;     /* per session of the reading: its first hand's sweep */
  uint32_t *owner;     /* per hand: its sweep */
  size_t *local;       /* and the session's index in that sweep */
  reading *r;          /* per sweep: how its pass reads (passes after the first) */
  int *needed;         /* per sweep: it takes part in the pass */
  size_t *cursor;      /* per sweep: for merge_sessions */
} many;

/* m's arrays for n sweeps of total sessions, with readings when asked;
 * TL_ENOMEM when out of memory (many_free frees what was had). */
static int many_alloc(many *m, tl_sweep *const *ws, size_t n, size_t total, int readings) {
  *m = (many){ws,
              malloc((total + 1) * sizeof *m->ids),
              malloc((total + 1) * sizeof *m->hands),
              malloc((total + 1) * sizeof *m->first),
              malloc((total + 1) * sizeof *m->owner),
              malloc((total + 1) * sizeof *m->local),
              readings ? malloc(n * sizeof *m->r) : NULL,
              malloc(n * sizeof *m->needed),
              malloc(n * sizeof *m->cursor)};
  return m->ids && m->hands && m->first && m->owner && m->local && (m->r || !readings) &&
                 m->needed && m->cursor
             ? TL_OK
             : TL_ENOMEM;
}

static void many_free(many *m) {
  free(m->ids);
  free(m->hands);
  free(m->first);
  free(m->owner);
  free(m->local);
  free(m->r);
  free(m->needed);
  free(m->cursor);
}

/* A block is read when any of its session's sweeps wants it; the others
 * are handed its samples too, which a sweep's pass takes as any other. */
static int many_wanted(void *arg, size_t at, int64_t min, int64_t max) {
  const many *m = arg;
  for (size_t h = m->hands[at]; h < m->hands[at + 1]; h++) {
    const reading *r = &m->r[m->owner[h]];
    if (!r->wanted || r->wanted(r->ctx, m->local[h], min, max))
      return 1;
  }
  return 0;
}

static int many_segment(void *arg, size_t at, const int64_t *v, size_t n) {
  const many *m = arg;
  int err = TL_OK;
  for (size_t h = m->hands[at]; h < m->hands[at + 1] && !err; h++) {
    const reading *r = &m->r[m->owner[h]];
    err = r->cb(r->ctx, m->local[h], v, n);
  }
  return err;
}

static int many_tap(void *arg, size_t at, const int64_t *v, size_t n) {
  const many *m = arg;
  int err = TL_OK;
  for (size_t h = m->hands[at]; h < m->hands[at + 1] && !err; h++) {
    const reading *r = &m->r[m->owner[h]];
    err = r->tap ? r->tap(r->tap_ctx, m->local[h], v, n) : TL_OK;
  }
  return err;
}

static int many_summary(void *arg, size_t at, const tl_summary *sum) {
  const many *m = arg;
  int err = TL_OK;
  for (size_t h = m->hands[at]; h < m->hands[at + 1] && !err; h++)
    err = tl__sweep_from_summary(m->ws[m->owner[h]], m->local[h], sum);
  return err;
}

/* The sessions of the n sweeps whose pass is needed, into m's ids (with
 * their hands): each sweep's in its own order, the sweeps merged by session
 * id, a session that the next ones of several sweeps name once for all of
 * them. Returns how many. */
static size_t merge_sessions(many *m, size_t n) {
  tl_sweep *const *ws = m->ws;
  const int *needed = m->needed;
  size_t *cursor = m->cursor, total = 0, at = 0;
  for (size_t k = 0; k < n; k++) {
    total += needed[k] ? ws[k]->ns : 0;
    cursor[k] = needed[k] ? 0 : ws[k]->ns;
  }
  for (size_t h = 0; h < total; at++) {
    size_t best = n;
    for (size_t k = 0; k < n; k++)
      if (cursor[k] < ws[k]->ns &&
          (best == n || ws[k]->ids[cursor[k]] < ws[best]->ids[cursor[best]]))
        best = k;
    int64_t id = ws[best]->ids[cursor[best]];
    m->ids[at] = id;
    m->hands[at] = h;
    m->first[at] = (uint32_t)best;
    for (size_t k = best; k < n; k++)
      if (cursor[k] < ws[k]->ns && ws[k]->ids[cursor[k]] == id) {
        m->owner[h] = (uint32_t)k;
        m->local[h++] = cursor[k]++;
      }
  }
  m->hands[at] = total;
  return at;
}

/* Sets up the next pass of every sweep (needed[k]: sweep k takes part);
 * 0 when none needs one. On an error, none is left set up. */
static int passes_begin(tl_sweep *const *ws, size_t n, int *needed, reading *r, int *any) {
  *any = 0;
  for (size_t k = 0; k < n; k++) {
    int err = tl__sweep_pass_begin(ws[k], &needed[k]);
    if (err) {
      while (k-- > 0)
        if (needed[k])
          tl__sweep_pass_end(ws[k], err);
      return err;
    }
    if (needed[k]) {
      tl__sweep_pass_reading(ws[k], &r[k]);
      *any = 1;
    }
  }
  return TL_OK;
}

/* The sweeps of one store, none past pass 1, at most UINT32_MAX of them:
 * the store, or NULL. */
static tl_store *common_store(tl_sweep *const *ws, size_t n, int first_done, size_t *sessions) {
  tl_store *store = ws[0]->store;
  *sessions = 0;
  for (size_t k = 0; k < n; k++) {
    if (!store || ws[k]->store != store || ws[k]->first_done != first_done || n > UINT32_MAX)
      return NULL;
    *sessions += ws[k]->ns;
  }
  return store;
}

int tl_sweep_first_all(tl_sweep *const *ws, size_t n, const tl_sweep_session_cb *taps,
                       void *const *tap_ctxs) {
  if (n == 1)
    return tl_sweep_first(ws[0], taps[0], tap_ctxs[0]);
  size_t total;
  tl_store *store = n ? common_store(ws, n, 0, &total) : NULL;
  if (!store)
    return n ? TL_EINVAL : TL_OK;
  many m;
  int err = many_alloc(&m, ws, n, total, 0);
  for (size_t k = 0; k < n && !err; k++)
    m.needed[k] = 1;
  if (!err)
    err = tl__store_summaries_threaded(store, m.ids, merge_sessions(&m, n), many_summary, &m,
                                       TL__SHARE_PACED);
  else
    tl__store_fail(store, err, "out of memory reading summaries");
  for (size_t k = 0; k < n; k++) {
    int e = tl__sweep_first_end(ws[k], err, taps[k], tap_ctxs[k]);
    err = err ? err : e;
  }
  many_free(&m);
  return err;
}

int tl_sweep_finish_all(tl_sweep *const *ws, size_t n) {
  if (n == 1)
    return tl_sweep_finish(ws[0]);
  if (!n)
    return TL_OK;
  size_t total;
  tl_store *store = common_store(ws, n, 1, &total);
  if (!store)
    return TL_EINVAL;
  store->errmsg[0] = '\0'; /* a failure of the samples' reading leaves its own message */
  many m;
  int err = many_alloc(&m, ws, n, total, 1), any = 1;
  while (!err && !(err = passes_begin(ws, n, m.needed, m.r, &any)) && any) {
    size_t count = merge_sessions(&m, n);
    int taps = 0;
    for (size_t k = 0; k < n; k++)
      taps |= m.needed[k] && m.r[k].tap;
    tl__store_src *src = tl__store_src_open(store, m.ids, count);
    reading r = {.wanted = many_wanted,
                 .cb = many_segment,
                 .ctx = &m,
                 .tap = taps ? many_tap : NULL,
                 .tap_ctx = &m,
                 .part = m.first,
                 .parts = (uint32_t)n};
    err = src ? tl__store_src_scan(src, &r) : TL_ENOMEM;
    tl__store_src_close(src);
    for (size_t k = 0; k < n; k++)
      if (m.needed[k]) {
        int e = tl__sweep_pass_end(ws[k], err);
        err = err ? err : e;
      }
  }
  if (err == TL_ECORRUPT && !store->errmsg[0]) {
    for (size_t k = 0; k < n; k++)
      m.needed[k] = 1;
    err = tl__sweep_explain_disagreement(store, merge_sessions(&m, n)); /* each once */
  }
  many_free(&m);
  return err;
}
