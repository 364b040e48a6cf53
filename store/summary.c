/* summary.c: a summary per session, so that a report can learn a session's
 * count, extremes, sums, histogram and own percentiles without reading its
 * samples.
 *
 * A summary is computed from the session's samples (one pass for the
 * count, extremes, sums and a log-linear histogram, then passes over only
 * the blocks that may hold the few buckets of the percentiles' ranks, by
 * the exact-rank engine (rank.h), which the windows of summary_watch.c
 * usually spare), and stored as a blob (summary_blob.c: a version byte and
 * a CRC32C, docs/schema.md) in session_summaries when the session ends, is
 * merged, imported or pushed, or by migration 3. Every read verifies the
 * checksum, the layout and the count against the session's sample_count; a
 * session without one (running, or damaged) has its summary computed on the
 * fly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rank.h"
#include "relay.h"
#include "summary_internal.h"

/* Slots of the map of the ranges a pass reads. */
enum { MARKS = 1 << 16 };

/* ======================================================================== */
/* The summarizer's state                                                    */

struct tl__summarizer {
  tl_summary sum;
  int64_t *hist;               /* TL_SUMMARY_BUCKETS, zero outside [hist_first, +hist_len) */
  tl__rank t[TL_SUMMARY_PCTS]; /* the percentiles' ranks (rank.h) */
  int64_t lo, hi;              /* the span of the open targets' ranges, this pass */
  /* Which slots of 2^shift values from lo hold a range the pass reads:
   * most samples lie in none, and one look tells (slot `outside`, never
   * marked, for the samples beyond). */
  unsigned shift;
  size_t outside;
  uint8_t marks[MARKS + 1];
  int64_t decoded[TL_BLOCK_MAX];
  tl__watch w; /* the ranks' windows while the samples go by */
};

/* ======================================================================== */
/* Computing                                                                 */

tl__summarizer *tl__summarizer_new(void) {
  tl__summarizer *z = calloc(1, sizeof *z);
  if (z && !(z->hist = calloc(TL_SUMMARY_BUCKETS, sizeof *z->hist))) {
    free(z);
    z = NULL;
  }
  if (z)
    tl__watch_clear(&z->w);
  return z;
}

void tl__summarizer_free(tl__summarizer *z) {
  if (!z)
    return;
  free(z->hist);
  for (size_t k = 0; k < TL_SUMMARY_PCTS; k++) {
    tl__rank_free(&z->t[k]);
    free(z->w.win[k].count);
    free(z->w.win[k].vals);
  }
  free(z);
}

/* Every sample added lies between the extremes, so their buckets bound
 * what is to clear, whether or not the summary was finished. */
static void clear(tl__summarizer *z) {
  if (z->sum.count) {
    size_t from = tl_summary_bucket(z->sum.min_ns), to = tl_summary_bucket(z->sum.max_ns);
    memset(z->hist + from, 0, (to - from + 1) * sizeof *z->hist);
  }
  memset(&z->sum, 0, sizeof z->sum);
  tl__watch_clear(&z->w);
}

/* Adds n samples to the count, extremes, sums and histogram, and hands the
 * few in a watched bucket to their window: noted in the histogram's loop
 * without a branch (one look-up a sample), taken after it. */
static void add_samples(tl__summarizer *z, const int64_t *v, size_t n) {
  tl_summary *m = &z->sum;
  tl__watch *w = &z->w;
  const uint8_t *marked = w->marked;
  int64_t *hist = z->hist;
  int64_t lo = m->count ? m->min_ns : v[0], hi = m->count ? m->max_ns : v[0];
  unsigned __int128 sum = 0, sumsq = 0;
  uint16_t hit[TL_BLOCK_MAX + 1];
  for (size_t at = 0; at < n; at += TL_BLOCK_MAX) {
    const int64_t *p = v + at;
    size_t len = n - at < TL_BLOCK_MAX ? n - at : TL_BLOCK_MAX, hits = 0;
    for (size_t i = 0; i < len; i++) {
      int64_t x = p[i];
      lo = x < lo ? x : lo;
      hi = x > hi ? x : hi;
      sum += (uint64_t)x;
      sumsq += (unsigned __int128)(uint64_t)x * (uint64_t)x;
    }
    /* Apart, so that neither loop runs out of registers. */
    for (size_t i = 0; i < len; i++) {
      int64_t x = p[i];
      size_t b = tl_summary_bucket(x);
      hist[b]++;
      hit[hits] = (uint16_t)i;
      hits += marked[b];
    }
    for (size_t k = 0; k < hits; k++)
      tl__watch_take(w, p[hit[k]]);
  }
  m->min_ns = lo;
  m->max_ns = hi;
  m->count += (int64_t)n;
  m->sum += sum;
  m->sumsq += sumsq;
}

static int first_pass(void *arg, const int64_t *v, size_t n) {
  tl__summarizer *z = arg;
  tl__watch *w = &z->w;
  if (w->state == TL__WATCH_HOLDING && n) {
    size_t take = TL__WATCH_AFTER - w->nheld < n ? TL__WATCH_AFTER - w->nheld : n;
    memcpy(w->held + w->nheld, v, take * sizeof *v);
    w->nheld += take;
    add_samples(z, v, take);
    v += take;
    n -= take;
    if (w->nheld == TL__WATCH_AFTER)
      tl__watch_start(w);
  }
  if (n)
    add_samples(z, v, n);
  return 0;
}

/* Marks the slots of the ranges the next pass reads (the open targets that
 * read for themselves). */
static void marks_setup(tl__summarizer *z) {
  uint64_t span = (uint64_t)z->hi - (uint64_t)z->lo;
  z->shift = 0;
  while ((span >> z->shift) >= MARKS)
    z->shift++;
  z->outside = (size_t)(span >> z->shift) + 1;
  memset(z->marks, 0, z->outside + 1);
  for (size_t k = 0; k < TL_SUMMARY_PCTS; k++) {
    const tl__rank *t = &z->t[k];
    if (!tl__rank_takes(t))
      continue;
    uint64_t to = ((uint64_t)t->hi - (uint64_t)z->lo) >> z->shift;
    for (uint64_t at = ((uint64_t)t->lo - (uint64_t)z->lo) >> z->shift; at <= to; at++)
      z->marks[at] = 1;
  }
}

static int gather(void *arg, const int64_t *v, size_t n) {
  tl__summarizer *z = arg;
  const uint64_t lo = (uint64_t)z->lo, outside = z->outside;
  const unsigned shift = z->shift;
  const uint8_t *marks = z->marks;
  for (size_t i = 0; i < n; i++) {
    /* Without a branch but for the rare sample in a marked slot: one past
     * the range reads slot `outside` or the last one, and the exact test
     * below tells. */
    uint64_t slot = ((uint64_t)v[i] - lo) >> shift;
    if (!marks[slot < outside ? slot : outside])
      continue;
    int64_t x = v[i];
    for (size_t k = 0; k < TL_SUMMARY_PCTS; k++) {
      tl__rank *t = &z->t[k];
      if (tl__rank_takes(t) && x >= t->lo && x <= t->hi)
        tl__rank_take(t, x);
    }
  }
  return 0;
}

typedef struct {
  tl_store *store;
  tl__summarizer *z;
  tl_samples_cb fn;
} rescan;

static int overlaps(void *arg, const tl_block *b) {
  const tl__summarizer *z = ((rescan *)arg)->z;
  return b->max_ns >= z->lo && b->min_ns <= z->hi;
}

static int rescan_block(void *arg, const tl_block *b) {
  rescan *r = arg;
  const char *why;
  if (tl_block_decode(b, r->z->decoded, &why))
    return tl__block_fail(r->store, b, why);
  return r->fn(r->z, r->z->decoded, (size_t)b->count);
}

static int changed(tl_store *s, int64_t session_id) {
  return tl__store_fail(s, TL_ECORRUPT, "%s: session %lld changed while it was summarised", s->path,
                        (long long)session_id);
}

/* The exact values of every target: each pass reads only the blocks that
 * overlap an open range, for all of them at once (timer data needs one). */
static int resolve_all(tl_store *s, tl__summarizer *z, int64_t session_id) {
  int err = TL_OK;
  for (;;) {
    size_t open = tl__rank_open_set(z->t, sizeof *z->t, TL_SUMMARY_PCTS, 0, 0);
    for (size_t k = 0, seen = 0; k < TL_SUMMARY_PCTS && !err; k++) {
      tl__rank *x = &z->t[k];
      if (x->done)
        continue;
      z->lo = seen && z->lo < x->lo ? z->lo : x->lo;
      z->hi = seen && z->hi > x->hi ? z->hi : x->hi;
      seen = 1;
      if (tl__rank_takes(x))
        err = tl__rank_alloc(x);
    }
    if (err || !open)
      break;
    marks_setup(z);
    rescan r = {s, z, gather};
    if ((err = tl_store_scan_blocks(s, &session_id, 1, overlaps, rescan_block, &r)))
      break;
    /* Backwards: a shared range is narrowed for its owner only after the
     * targets that read it. */
    for (size_t k = TL_SUMMARY_PCTS; k-- > 0 && !err;) {
      tl__rank *x = &z->t[k];
      if (!x->done && tl__rank_resolve(x, x->same == SIZE_MAX ? x : &z->t[x->same]))
        err = changed(s, session_id);
    }
    for (size_t k = 0; k < TL_SUMMARY_PCTS; k++)
      tl__rank_free(&z->t[k]);
  }
  for (size_t k = 0; k < TL_SUMMARY_PCTS; k++)
    tl__rank_free(&z->t[k]);
  return err;
}

void tl__summary_begin(tl__summarizer *z) { clear(z); }

void tl__summary_add(tl__summarizer *z, const int64_t *v, size_t n) {
  if (n)
    first_pass(z, v, n);
}

void tl__summary_totals(const tl__summarizer *z, tl_summary *saved) { *saved = z->sum; }

void tl__summary_take_back(tl__summarizer *z, const tl_summary *saved, const int64_t *v, size_t n) {
  for (size_t i = 0; i < n; i++)
    z->hist[tl_summary_bucket(v[i])]--;
  z->sum = *saved;
  /* Those samples come again: the windows would count them twice. */
  tl__watch_stop(&z->w);
}

int tl__summary_compute(tl_store *s, tl__summarizer *z, int64_t session_id,
                        const tl_summary **out) {
  clear(z);
  rescan r = {s, z, first_pass};
  int err = tl_store_scan_blocks(s, &session_id, 1, NULL, rescan_block, &r);
  return err ? err : tl__summary_finish(s, z, session_id, out);
}

/* The percentiles' ranks located in the histogram, narrowed by the windows
 * the samples went through. */
static void locate_ranks(tl__summarizer *z) {
  tl_summary *m = &z->sum;
  if (!m->count)
    m->hist_first = m->hist_len = 0;
  else {
    m->hist_first = tl_summary_bucket(m->min_ns);
    m->hist_len = tl_summary_bucket(m->max_ns) - m->hist_first + 1;
  }
  m->hist = z->hist + m->hist_first;
  /* A session whose samples are all held has each rank's value at its
   * place among them, sorted, without the walk. */
  const int64_t *sorted = m->count ? tl__watch_all_sorted(&z->w, m->count) : NULL;
  /* The ranks rise with the percentiles: one walk up the histogram finds
   * every one's bucket, as tl__rank_locate would. */
  int64_t cum = 0;
  size_t b = 0;
  for (size_t k = 0; k < TL_SUMMARY_PCTS; k++) {
    tl__rank *x = &z->t[k];
    memset(x, 0, sizeof *x); /* its memory was freed after the last session */
    x->done = !m->count;
    if (x->done)
      continue;
    int64_t rank = tl_rank(tl_summary_pcts[k], m->count);
    if (sorted) {
      x->lo = x->hi = sorted[rank - 1];
      continue;
    }
    while (b < m->hist_len && cum + m->hist[b] < rank)
      cum += m->hist[b++];
    if (b < m->hist_len) {
      tl_summary_bucket_bounds(m->hist_first + b, &x->lo, &x->hi);
      x->want = rank - cum;
      x->inside = m->hist[b];
    }
    x->lo = x->lo > m->min_ns ? x->lo : m->min_ns;
    x->hi = x->hi < m->max_ns ? x->hi : m->max_ns;
    int64_t v;
    if (tl__watch_value(&z->w, x->lo, x->hi, x->want, x->inside, &v))
      x->lo = x->hi = v;
  }
}

int tl__summary_finish(tl_store *s, tl__summarizer *z, int64_t session_id, const tl_summary **out) {
  tl_summary *m = &z->sum;
  locate_ranks(z);
  int err = resolve_all(s, z, session_id);
  for (size_t k = 0; k < TL_SUMMARY_PCTS && m->count; k++)
    m->pct_ns[k] = z->t[k].value;
  *out = m;
  return err;
}

int tl__summary_finish_quick(tl__summarizer *z, const tl_summary **out) {
  tl_summary *m = &z->sum;
  locate_ranks(z);
  for (size_t k = 0; k < TL_SUMMARY_PCTS; k++)
    if (tl__rank_open(&z->t[k]))
      return 1;
  for (size_t k = 0; k < TL_SUMMARY_PCTS && m->count; k++)
    m->pct_ns[k] = z->t[k].value;
  *out = m;
  return 0;
}

/* ======================================================================== */
/* Reading stored summaries                                                  */

typedef struct {
  tl_store *s;
  tl__summarizer *z; /* its hist all zeros between sessions */
  uint32_t *nz_at;   /* TL_SUMMARY_BUCKETS, a decoded histogram's buckets */
  const int64_t *ids;
  tl_summary_cb fn;
  void *ctx;
} summaries_ctx;

static int summaries_begin(summaries_ctx *c, tl_store *s, const int64_t *ids, tl_summary_cb fn,
                           void *ctx) {
  *c = (summaries_ctx){
      s, tl__summarizer_new(), malloc(TL_SUMMARY_BUCKETS * sizeof *c->nz_at), ids, fn, ctx};
  return c->z && c->nz_at ? TL_OK : tl__store_fail(s, TL_ENOMEM, "out of memory reading summaries");
}

static void summaries_end(summaries_ctx *c) {
  tl__summarizer_free(c->z);
  free(c->nz_at);
}

/* Session i's stored summary, verified, to fn: fn's error, or TL_ECORRUPT
 * with *why when the summary is damaged. Touches no store. */
/* A stored summary into m, its buckets into hist and nz_at (only those with
 * samples are written: a long tail spans thousands of empty ones), held
 * against the session's sample_count: TL_OK, or TL_ECORRUPT with *why and
 * hist all zeros again. */
static int decode_verified(const uint8_t *blob, size_t len, int64_t sample_count, int64_t *hist,
                           uint32_t *nz_at, tl_summary *m, const char **why) {
  int bad = tl__summary_decode_sparse(blob, len, hist, nz_at, m, why);
  if (!bad && m->count != sample_count) {
    bad = TL_ECORRUPT;
    *why = "its count differs from the session's";
  }
  if (bad)
    memset(hist, 0, m->hist_len * sizeof *hist);
  return bad ? TL_ECORRUPT : TL_OK;
}

static int stored_summary(summaries_ctx *c, size_t i, int64_t sample_count, const uint8_t *blob,
                          size_t len, const char **why) {
  tl__summarizer *z = c->z;
  tl_summary stored;
  if (decode_verified(blob, len, sample_count, z->hist, c->nz_at, &stored, why))
    return TL_ECORRUPT;
  *why = NULL;
  int err = c->fn(c->ctx, i, &stored);
  for (size_t k = 0; k < stored.nz; k++)
    z->hist[stored.nz_at[k]] = 0;
  return err;
}

/* Says why session i's summary is damaged, and which it is (for tlreport
 * --skip-damaged). */
static int damaged_summary(summaries_ctx *c, size_t i, const char *uuid, const char *why) {
  c->s->damaged_id = c->ids[i];
  return tl__store_fail(c->s, TL_ECORRUPT, "%s: session %.36s: summary: %s" TL__CHECK_HINT,
                        c->s->path, uuid, why);
}

/* One session's stored summary, verified, or (none stored) computed. */
static int one_summary(void *arg, size_t i, const char *uuid, int64_t sample_count,
                       const uint8_t *blob, size_t len) {
  summaries_ctx *c = arg;
  if (!blob) {
    const tl_summary *m;
    int err = tl__summary_compute(c->s, c->z, c->ids[i], &m);
    if (err)
      return err;
    err = c->fn(c->ctx, i, m);
    memset(c->z->hist + m->hist_first, 0, m->hist_len * sizeof *c->z->hist);
    return err;
  }
  const char *why;
  int err = stored_summary(c, i, sample_count, blob, len, &why);
  return why ? damaged_summary(c, i, uuid, why) : err;
}

int tl_store_summaries(tl_store *s, const int64_t *ids, size_t n, tl_summary_cb fn, void *ctx) {
  summaries_ctx c;
  int err = summaries_begin(&c, s, ids, fn, ctx);
  if (!err)
    err = s->ops->summary_blobs(s, ids, n, one_summary, &c);
  summaries_end(&c);
  return err;
}

/* ------------------------------------------------------------------------ */
/* On two threads: this one reads the blobs, a worker runs fn                */

/* The worker decodes the summaries too, but for this thread's share: over
 * a fleet's month the worker's decoding took twice this thread's reading,
 * which then waited half the time. A batch of stored summaries as read:
 * each row's blob in data, or, for a row this thread decoded, its numbers
 * in the row and its non-empty buckets (offset, count) in bucket_at and
 * bucket_count. A blob larger than the batch is decoded, and fn run, by
 * this thread in its turn. */
enum { BLOB_ROWS = 2048, BLOB_BYTES = 1 << 18, BATCH_BUCKETS = 1 << 17 };
_Static_assert((size_t)BATCH_BUCKETS >= (size_t)TL_SUMMARY_BUCKETS,
               "a decoded summary fits an empty batch");

typedef struct {
  size_t index;
  int64_t sample_count;
  size_t at, len; /* the blob, in data; decoded: its buckets, from bucket_at[at] */
  int decoded;
  tl_summary sum; /* decoded: its numbers (the worker sets hist and nz_at) */
  char uuid[37];
} blob_row;

typedef struct {
  size_t rows, bytes, buckets;
  blob_row row[BLOB_ROWS];
  uint8_t data[BLOB_BYTES];
  uint32_t bucket_at[BATCH_BUCKETS];
  uint32_t bucket_count[BATCH_BUCKETS]; /* this thread decodes sessions of up to 2^32 - 1 samples */
} blob_batch;

/* This thread's share of the decoding, in eighths of the rows. */
enum { SHARE_STEPS = 8 };

typedef struct {
  summaries_ctx c; /* the worker's while it holds a batch, else this thread's */
  tl__relay relay;
  const char *why; /* row bad's summary is damaged (found by either thread) */
  blob_row bad;
  int share;       /* this thread's share, in eighths */
  int paced;       /* share follows which thread waits for the other */
  unsigned turn;   /* the row's turn, for the share */
  int64_t *hist;   /* this thread's histogram (zeros between rows) and buckets */
  uint32_t *nz_at; /* for the rows it decodes */
  blob_batch batch[2];
} summaries_relay;

/* A summary this thread decoded, to fn from the worker's histogram: its
 * buckets copied in, then cleared. */
static int decoded_summary(summaries_ctx *c, const blob_batch *b, const blob_row *r) {
  int64_t *hist = c->z->hist;
  const uint32_t *at = b->bucket_at + r->at;
  const uint32_t *count = b->bucket_count + r->at;
  for (size_t k = 0; k < r->len; k++)
    hist[at[k]] = count[k];
  tl_summary m = r->sum;
  m.hist = hist;
  m.nz_at = at;
  m.nz = r->len;
  int err = c->fn(c->ctx, r->index, &m);
  for (size_t k = 0; k < r->len; k++)
    hist[at[k]] = 0;
  return err;
}

static int blobs_run(void *arg, void *filled) {
  summaries_relay *t = arg;
  const blob_batch *b = filled;
  for (size_t k = 0; k < b->rows; k++) {
    const blob_row *r = &b->row[k];
    int err = r->decoded ? decoded_summary(&t->c, b, r)
                         : stored_summary(&t->c, r->index, r->sample_count, b->data + r->at, r->len,
                                          &t->why);
    if (t->why)
      t->bad = *r;
    if (err)
      return err;
  }
  return TL_OK;
}

static void blobs_empty(void *filled) {
  blob_batch *b = filled;
  b->rows = b->bytes = b->buckets = 0;
}

/* Hands the batch to the worker; while paced, this thread takes one more
 * eighth of the decoding when it had to wait, one less when it did not. */
static int submit_blobs(summaries_relay *t) {
  int err = tl__relay_submit(&t->relay, 1);
  if (t->paced && t->relay.was_busy)
    t->share += t->share < SHARE_STEPS;
  else if (t->paced)
    t->share -= t->share > 0;
  return err;
}

/* Row i's summary decoded on this thread, which would otherwise wait for
 * the worker: the worker only copies its buckets in for fn. A damaged one
 * is reported after the rows before it, so the first damaged is named. */
static int decode_here(summaries_relay *t, size_t i, const char *uuid, int64_t sample_count,
                       const uint8_t *blob, size_t len) {
  tl_summary m;
  const char *why;
  int bad = decode_verified(blob, len, sample_count, t->hist, t->nz_at, &m, &why);
  blob_batch *b = tl__relay_fill(&t->relay);
  int err = TL_OK;
  if (bad) {
    err = tl__relay_drain(&t->relay, b->rows > 0);
    if (err) /* the worker's, on a row before */
      return err;
    t->why = why;
    t->bad = (blob_row){.index = i};
    snprintf(t->bad.uuid, sizeof t->bad.uuid, "%s", uuid);
    return TL_ECORRUPT;
  }
  if (b->rows == BLOB_ROWS || b->buckets + m.nz > BATCH_BUCKETS) {
    err = submit_blobs(t);
    b = tl__relay_fill(&t->relay);
  }
  if (!err) {
    blob_row *r = &b->row[b->rows];
    *r = (blob_row){.index = i,
                    .sample_count = sample_count,
                    .at = b->buckets,
                    .len = m.nz,
                    .decoded = 1,
                    .sum = m};
    r->sum.hist = NULL;
    r->sum.nz_at = NULL;
    b->rows++;
  }
  for (size_t k = 0; k < m.nz; k++) {
    uint32_t at = m.nz_at[k];
    if (!err) {
      b->bucket_at[b->buckets + k] = at;
      b->bucket_count[b->buckets + k] = (uint32_t)t->hist[at];
    }
    t->hist[at] = 0;
  }
  if (!err)
    b->buckets += m.nz;
  return err;
}

static int relay_summary(void *arg, size_t i, const char *uuid, int64_t sample_count,
                         const uint8_t *blob, size_t len) {
  summaries_relay *t = arg;
  blob_batch *b = tl__relay_fill(&t->relay);
  if (!blob || len > BLOB_BYTES) {
    /* Computed (which reads the store), or too large: here, in its turn. */
    int err = tl__relay_drain(&t->relay, b->rows > 0);
    return err ? err : one_summary(&t->c, i, uuid, sample_count, blob, len);
  }
  if (t->turn++ % SHARE_STEPS < (unsigned)t->share && sample_count <= UINT32_MAX)
    return decode_here(t, i, uuid, sample_count, blob, len);
  if (b->rows == BLOB_ROWS || b->bytes + len > BLOB_BYTES) {
    int err = submit_blobs(t);
    if (err)
      return err;
    b = tl__relay_fill(&t->relay);
  }
  blob_row *r = &b->row[b->rows++];
  *r = (blob_row){.index = i, .sample_count = sample_count, .at = b->bytes, .len = len};
  snprintf(r->uuid, sizeof r->uuid, "%s", uuid);
  memcpy(b->data + b->bytes, blob, len);
  b->bytes += len;
  return TL_OK;
}

static void relay_free(summaries_relay *t) {
  summaries_end(&t->c);
  free(t->hist);
  free(t->nz_at);
  free(t);
}

int tl__store_summaries_threaded(tl_store *s, const int64_t *ids, size_t n, tl_summary_cb fn,
                                 void *ctx, int share) {
  summaries_relay *t = malloc(sizeof *t);
  if (!t)
    return tl__store_fail(s, TL_ENOMEM, "out of memory reading summaries");
  t->why = NULL;
  /* From a server, whose own process reads and sends the rows meanwhile,
   * this thread's share slowed the 30-day fleet's pass on two cores (1.15 s
   * against 0.95): the worker decodes them all. */
  if (share < 0 && tl_store_is_server(s->path))
    share = 0;
  t->paced = share < 0;
  t->share = share < 0 ? 0 : share > SHARE_STEPS ? SHARE_STEPS : share;
  t->turn = 0;
  /* This thread's histogram, had whether or not it decodes a row, so that
   * its cost stays fixed; without the memory the worker decodes them all. */
  t->hist = t->share || t->paced ? calloc(TL_SUMMARY_BUCKETS, sizeof *t->hist) : NULL;
  t->nz_at = t->hist ? malloc(TL_SUMMARY_BUCKETS * sizeof *t->nz_at) : NULL;
  if (!t->nz_at)
    t->share = t->paced = 0;
  blobs_empty(&t->batch[0]);
  blobs_empty(&t->batch[1]);
  int err = summaries_begin(&t->c, s, ids, fn, ctx);
  if (err || n < 2 ||
      tl__relay_start(&t->relay, blobs_run, blobs_empty, t, &t->batch[0], &t->batch[1])) {
    /* Too few to share, or no second thread: the same, on this one. */
    if (!err)
      err = s->ops->summary_blobs(s, ids, n, one_summary, &t->c);
    relay_free(t);
    return err;
  }
  err = s->ops->summary_blobs(s, ids, n, relay_summary, t);
  const blob_batch *last = tl__relay_fill(&t->relay);
  int werr = tl__relay_stop(&t->relay, last->rows > 0);
  /* The first damaged row in the sessions' order: the reading stopped at
   * it or after, and each thread reports one only after the rows before. */
  if (t->why)
    err = damaged_summary(&t->c, t->bad.index, t->bad.uuid, t->why);
  else if (werr)
    err = werr;
  relay_free(t);
  return err;
}

/* ======================================================================== */
/* A copy's summary                                                          */

/* What a copy reads of the samples to verify them gives count, extremes and
 * sum without the cost of a summary; a stored one is held against them. */
static void tally(tl_summary *t, const int64_t *v, size_t n) {
  if (!n)
    return;
  int64_t lo = t->count ? t->min_ns : v[0], hi = t->count ? t->max_ns : v[0];
  unsigned __int128 sum = 0;
  for (size_t i = 0; i < n; i++) {
    lo = v[i] < lo ? v[i] : lo;
    hi = v[i] > hi ? v[i] : hi;
    sum += (uint64_t)v[i];
  }
  t->min_ns = lo;
  t->max_ns = hi;
  t->count += (int64_t)n;
  t->sum += sum;
}

static int agrees(const tl_summary *stored, const tl_summary *tally) {
  return stored->count == tally->count && stored->min_ns == tally->min_ns &&
         stored->max_ns == tally->max_ns && stored->sum == tally->sum;
}

struct tl__summary_pick {
  tl__summarizer *z; /* makes one, fed the samples when none is kept */
  int64_t *hist;     /* TL_SUMMARY_BUCKETS, for decoding the stored one */
  tl_summary stored; /* decoded, when kept */
  tl_summary tally;  /* of the samples added, when kept */
  int kept;          /* the stored one decodes: it goes if it agrees */
  uint8_t *blob;     /* the stored one's bytes, then those finish gives */
  size_t len, cap;
};

tl__summary_pick *tl__summary_pick_new(void) {
  tl__summary_pick *p = calloc(1, sizeof *p);
  if (p && (!(p->z = tl__summarizer_new()) ||
            !(p->hist = malloc(TL_SUMMARY_BUCKETS * sizeof *p->hist)))) {
    tl__summary_pick_free(p);
    p = NULL;
  }
  return p;
}

void tl__summary_pick_free(tl__summary_pick *p) {
  if (!p)
    return;
  tl__summarizer_free(p->z);
  free(p->hist);
  free(p->blob);
  free(p);
}

/* Room for len bytes in p->blob; 0 when out of memory. */
static int blob_room(tl__summary_pick *p, size_t len) {
  if (len <= p->cap)
    return 1;
  uint8_t *b = realloc(p->blob, len);
  if (!b)
    return 0;
  p->blob = b;
  p->cap = len;
  return 1;
}

/* The stored summary, copied (the source's row is gone once this returns)
 * and decoded: kept when it decodes. */
static int stored_blob(void *ctx, size_t index, const char *uuid, int64_t sample_count,
                       const uint8_t *blob, size_t len) {
  (void)index;
  (void)uuid;
  (void)sample_count;
  tl__summary_pick *p = ctx;
  const char *why;
  if (!blob || tl__summary_decode(blob, len, p->hist, &p->stored, &why) != TL_OK)
    return TL_OK;
  if (!blob_room(p, len))
    return TL_ENOMEM;
  memcpy(p->blob, blob, len);
  p->len = len;
  p->kept = 1;
  return TL_OK;
}

int tl__summary_pick_begin(tl__summary_pick *p, tl_store *src, int64_t session_id) {
  p->kept = 0;
  memset(&p->tally, 0, sizeof p->tally);
  int err = src->ops->summary_blobs(src, &session_id, 1, stored_blob, p);
  if (err == TL_ENOMEM)
    return tl__store_fail(src, err, "out of memory reading a summary");
  if (err == TL_OK && !p->kept)
    tl__summary_begin(p->z);
  return err;
}

void tl__summary_pick_add(tl__summary_pick *p, const int64_t *v, size_t n) {
  if (p->kept)
    tally(&p->tally, v, n);
  else
    tl__summary_add(p->z, v, n);
}

int tl__summary_pick_finish(tl__summary_pick *p, tl_store *src, int64_t session_id,
                            const uint8_t **blob, size_t *len) {
  if (p->kept && agrees(&p->stored, &p->tally)) {
    *blob = p->blob;
    *len = p->len;
    return TL_OK;
  }
  /* Made from the samples: their first pass was the copy's, unless a stored
   * one that disagrees with them had it tallied only, and then it is read
   * again; the percentiles come from the watched windows, or else from the
   * blocks that hold their ranks. */
  const tl_summary *m;
  int err = p->kept ? tl__summary_compute(src, p->z, session_id, &m)
                    : tl__summary_finish(src, p->z, session_id, &m);
  if (err)
    return err;
  if (!blob_room(p, tl__summary_bound(m)))
    return tl__store_fail(src, TL_ENOMEM, "out of memory summarising a session");
  p->len = tl__summary_encode(m, p->blob);
  p->kept = 0;
  *blob = p->blob;
  *len = p->len;
  return TL_OK;
}
