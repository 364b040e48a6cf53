/* scan_threaded.c: a store's samples read on two threads, for the sweep
 * (dist.c) and tl_store_scan_threaded.
 *
 * Reading the store takes two threads (relay.h): this one steps the store
 * through the blocks into a batch, the relay's worker counts the previous
 * batch. Only the worker touches the sweep. A batch remembers where each
 * session's samples start in it.
 *
 * Each block is decoded on one thread or the other, whichever is ahead:
 * this one decodes some into the batch's values and hands the others on
 * as stored, for the worker to decode just before it counts them. How many
 * follows which thread waits for the other: from a file, where the reading
 * is the larger half, the worker decodes about one block in five; from a
 * server, where this thread also waits on the server, about five in eight.
 * A block the worker decodes is counted from its own cache instead of
 * crossing from this thread's (8 bytes a sample against about 2.3 stored). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "relay.h"
#include "sweep_internal.h"

enum {
  BATCH_VALUES = 64 * TL_BLOCK_MAX,
  BATCH_SEGMENTS = 256,
  BATCH_STORED = 1024,     /* blocks handed on as stored, at most */
  BATCH_BYTES = 1024 << 10 /* and their bytes */
};

/* A block handed on as stored: its bytes at the batch's bytes + at, its
 * values to go to v + to. */
typedef struct {
  tl_block b;
  size_t at, to;
} stored_block;

typedef struct {
  size_t n, segs, nstored, bytes;
  size_t seg_at[BATCH_SEGMENTS];
  size_t seg_session[BATCH_SEGMENTS];
  stored_block stored[BATCH_STORED];
  int64_t v[BATCH_VALUES];
  uint8_t data[BATCH_BYTES];
} batch;

/* The worker's share of the decoding, in eighths of the blocks: one more
 * after a batch it was waiting for, one less after one it was late for. */
enum { SHARE_STEPS = 8 };

struct tl__store_src {
  tl_store *store;
  const int64_t *ids;
  size_t n;
  size_t at; /* index in ids of the session being read */
  reading r;
  tl__relay relay;
  int64_t bad_session;  /* where a block failed to decode */
  int64_t worker_bad;   /* where a block failed on the worker: an earlier one */
  unsigned share, turn; /* the worker's share (eighths), and this block's turn */
  batch batches[2];
};

/* Every block is read: one the pass does not want is only verified, not
 * decoded, so that a damaged block is found wherever it lies. */
static int block_filter(void *arg, const tl_block *b) {
  tl__store_src *s = arg;
  while (s->at < s->n && s->ids[s->at] != b->session_id)
    s->at++;
  return 1;
}

/* The number of values of the batch's stretch i. */
static size_t stretch_len(const batch *b, size_t i) {
  return (i + 1 < b->segs ? b->seg_at[i + 1] : b->n) - b->seg_at[i];
}

/* Decodes the batch's stored blocks from *next whose values start before
 * upto, on the worker. */
static int decode_stored(tl__store_src *s, batch *b, size_t *next, size_t upto) {
  for (; *next < b->nstored && b->stored[*next].to < upto; ++*next) {
    stored_block *k = &b->stored[*next];
    k->b.data = b->data + k->at;
    if (tl_block_decode(&k->b, b->v + k->to, NULL)) {
      s->worker_bad = k->b.session_id;
      return TL_ECORRUPT;
    }
  }
  return TL_OK;
}

/* The batch's stretches to the counts and to the tap, stretch by stretch
 * or part by part, each session's in stored order, a stored block decoded
 * just before its stretch. The tap takes each stretch just after the
 * counts, from the cache: a reservoir reads a few of a session's samples
 * here and there, and read first, each of those was a miss (the kept
 * samples' reservoirs, 0.5 s of the counting thread over the 30-day
 * fleet). */
static int batch_run(void *arg, void *filled) {
  tl__store_src *s = arg;
  batch *b = filled;
  const reading *r = &s->r;
  size_t next = 0;
  /* Parts take the stretches out of order: everything first. */
  if (r->part && decode_stored(s, b, &next, SIZE_MAX))
    return TL_ECORRUPT;
  for (uint32_t p = 0; p < (r->part ? r->parts : 1); p++)
    for (size_t i = 0; i < b->segs; i++) {
      size_t session = b->seg_session[i], at = b->seg_at[i], n = stretch_len(b, i);
      if (decode_stored(s, b, &next, at + n))
        return TL_ECORRUPT;
      if (r->part && r->part[session] != p)
        continue;
      int err = r->cb(r->ctx, session, b->v + at, n);
      if (!err && r->tap)
        err = r->tap(r->tap_ctx, session, b->v + at, n);
      if (err)
        return err;
    }
  return 0;
}

static void batch_empty(void *filled) {
  batch *b = filled;
  b->n = b->segs = b->nstored = b->bytes = 0;
}

static int block_decode(void *arg, const tl_block *b) {
  tl__store_src *s = arg;
  if (s->r.wanted && !s->r.wanted(s->r.ctx, s->at, b->min_ns, b->max_ns)) {
    if (tl_block_verify(b, NULL) == TL_OK)
      return TL_OK;
    s->bad_session = b->session_id;
    return TL_ECORRUPT;
  }
  batch *f = tl__relay_fill(&s->relay);
  int new_seg = !f->segs || f->seg_session[f->segs - 1] != s->at;
  if (f->n + (size_t)b->count > BATCH_VALUES || (new_seg && f->segs == BATCH_SEGMENTS)) {
    int err = tl__relay_submit(&s->relay, f->n > 0);
    if (err)
      return err;
    if (s->relay.was_busy)
      s->share -= s->share > 0;
    else
      s->share += s->share < SHARE_STEPS;
    f = tl__relay_fill(&s->relay);
    new_seg = 1;
  }
  /* The worker verifies and decodes it (its count checked here: it says
   * where the next block's values go); its bytes are the store's only until
   * the next block. */
  if (++s->turn % SHARE_STEPS < s->share && b->count >= 1 && b->count <= TL_BLOCK_MAX &&
      f->nstored < BATCH_STORED && b->len <= BATCH_BYTES - f->bytes) {
    stored_block *k = &f->stored[f->nstored++];
    *k = (stored_block){*b, f->bytes, f->n};
    memcpy(f->data + f->bytes, b->data, b->len);
    f->bytes += b->len;
  } else if (tl_block_decode(b, f->v + f->n, NULL)) {
    s->bad_session = b->session_id;
    return TL_ECORRUPT;
  }
  if (new_seg) { /* after the decoding: a damaged block's session has none */
    f->seg_at[f->segs] = f->n;
    f->seg_session[f->segs++] = s->at;
  }
  f->n += (size_t)b->count;
  return TL_OK;
}

static int ignore_values(void *ctx, const int64_t *v, size_t n) {
  (void)ctx;
  (void)v;
  (void)n;
  return 0;
}

int tl__store_src_scan(void *arg, const reading *r) {
  tl__store_src *s = arg;
  s->r = *r;
  s->at = 0;
  s->bad_session = s->worker_bad = 0;
  s->share = SHARE_STEPS / 2;
  s->turn = 0;
  batch_empty(&s->batches[0]);
  batch_empty(&s->batches[1]);
  if (tl__relay_start(&s->relay, batch_run, batch_empty, s, &s->batches[0], &s->batches[1]))
    return TL_ENOMEM;
  int err = tl_store_scan_blocks(s->store, s->ids, s->n, block_filter, block_decode, s);
  const batch *last = tl__relay_fill(&s->relay);
  int werr = tl__relay_stop(&s->relay, last->n > 0);
  if (s->worker_bad) { /* before any block this thread found bad */
    s->bad_session = s->worker_bad;
    err = TL_ECORRUPT;
  }
  if (err == TL_ECORRUPT && s->bad_session) {
    /* Let the store say which block is bad: a plain scan of that session
     * stops at the same block and leaves the message on the handle. */
    tl_store_scan(s->store, s->bad_session, ignore_values, NULL);
  }
  return err ? err : werr;
}

/* A source over the samples of the sessions (ids not copied), or NULL when
 * out of memory; free with src_close. */
tl__store_src *tl__store_src_open(tl_store *store, const int64_t *session_ids, size_t n) {
  tl__store_src *s = malloc(sizeof *s);
  if (!s)
    return NULL;
  memset(s, 0, offsetof(tl__store_src, batches));
  s->store = store;
  s->ids = session_ids;
  s->n = n;
  return s;
}

void tl__store_src_close(void *src) { free(src); }

int tl_store_scan_threaded(tl_store *store, const int64_t *session_ids, size_t n,
                           tl_sweep_session_cb cb, void *ctx) {
  tl__store_src *s = tl__store_src_open(store, session_ids, n);
  if (!s)
    return TL_ENOMEM;
  reading r = {.cb = cb, .ctx = ctx};
  int err = tl__store_src_scan(s, &r);
  tl__store_src_close(s);
  return err;
}
