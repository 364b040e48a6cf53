/* dist.c: exact nearest-rank percentiles over any number of samples with
 * little memory.
 *
 * Pass 1 reads every sample once for count, min, max, mean and a log-linear
 * histogram (2048 sub-buckets per power of two, fine enough that the bucket
 * of a rank in timer data holds few enough samples to collect at once). Each requested rank then
 * lies in one known bucket [lo, hi] with a known number of samples below it.
 * Each further pass either collects the samples of [lo, hi] and picks the
 * rank exactly (when few enough fall there), or splits [lo, hi] into 4096
 * linear buckets to narrow it further. Typical timer data needs two passes.
 * The passes after the first skip, undecoded, every stored block whose
 * min..max (kept in the block's row) misses all the ranges still open. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"

enum {
  SUB_BITS = 11,
  SUB = 1 << SUB_BITS,
  LOG_BUCKETS = (64 - SUB_BITS + 1) * SUB,
  LINEAR_BUCKETS = 4096,
  COLLECT_LIMIT = 1 << 20, /* samples gathered in memory for one rank */
};

static size_t log_index(int64_t v) {
  uint64_t u = (uint64_t)v;
  if (u < SUB)
    return (size_t)u;
  int e = 63 - __builtin_clzll(u);
  return (size_t)(e - SUB_BITS + 1) * SUB + (size_t)((u >> (e - SUB_BITS)) & (SUB - 1));
}

static void log_bounds(size_t idx, int64_t *lo, int64_t *hi) {
  if (idx < SUB) {
    *lo = *hi = (int64_t)idx;
    return;
  }
  int e = (int)(idx / SUB) + SUB_BITS - 1;
  uint64_t sub = idx % SUB;
  uint64_t l = (SUB + sub) << (e - SUB_BITS);
  *lo = (int64_t)l;
  *hi = (int64_t)(l + ((uint64_t)1 << (e - SUB_BITS)) - 1);
}

typedef struct {
  int64_t rank;   /* 1-based rank in the whole set */
  int64_t lo, hi; /* the answer lies in [lo, hi] */
  int64_t below;  /* samples < lo */
  int64_t inside; /* samples in [lo, hi] */
  int done;
  int64_t value;
  int collect; /* this pass: gather values (1) or histogram (0) */
  int64_t *vals;
  size_t n;
  int64_t *hist;  /* LINEAR_BUCKETS counts */
  uint64_t width; /* linear bucket width */
  int32_t next;   /* the next open target in the same log bucket, or -1 */
} target;

/* What pass 1 learns about a set of samples. */
struct tl__pass1 {
  int64_t count, min, max;
  unsigned __int128 sum, sumsq; /* exact: values are below 2^63 */
  int64_t log_hist[LOG_BUCKETS];
};

typedef struct {
  tl__pass1 *p1;
  target *t;
  size_t nt;
  int pass1;
  int32_t *first; /* after pass 1, per log bucket: its first open target, or -1 */
  int oom;
} pass_ctx;

static int on_values(void *arg, const int64_t *v, size_t n) {
  pass_ctx *c = arg;
  if (c->pass1) {
    tl__pass1 *p = c->p1;
    if (!n)
      return 0;
    int64_t lo = p->count ? p->min : v[0], hi = p->count ? p->max : v[0];
    unsigned __int128 sum = 0, sumsq = 0;
    int64_t *hist = p->log_hist;
    for (size_t i = 0; i < n; i++) {
      int64_t x = v[i];
      lo = x < lo ? x : lo;
      hi = x > hi ? x : hi;
      sum += (uint64_t)x;
      sumsq += (unsigned __int128)((uint64_t)x) * (uint64_t)x;
      hist[log_index(x)]++;
    }
    p->min = lo;
    p->max = hi;
    p->count += (int64_t)n;
    p->sum += sum;
    p->sumsq += sumsq;
    return 0;
  }
  /* Every open range lies inside one log bucket, so a value only needs
   * checking against the targets of its own bucket, however many there are. */
  for (size_t i = 0; i < n; i++) {
    int64_t x = v[i];
    for (int32_t k = c->first[log_index(x)]; k >= 0; k = c->t[k].next) {
      target *t = &c->t[k];
      if (x < t->lo || x > t->hi)
        continue;
      if (t->collect) {
        if (t->n < (size_t)t->inside)
          t->vals[t->n++] = x;
      } else {
        t->hist[(uint64_t)(x - t->lo) / t->width]++;
      }
    }
  }
  return 0;
}

typedef int (*source_fn)(void *src, tl_samples_cb cb, void *ctx);

/* The k-th smallest (0-based) of v[0..n), reordering v: Hoare's selection
 * with a median-of-three pivot, linear on average, where a sort would be
 * n log n. */
static int64_t select_kth(int64_t *v, size_t n, size_t k) {
  size_t lo = 0, hi = n - 1;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int64_t a = v[lo], b = v[mid], c = v[hi];
    int64_t pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
    size_t i = lo, j = hi;
    while (i <= j) {
      while (v[i] < pivot)
        i++;
      while (v[j] > pivot)
        j--;
      if (i <= j) {
        int64_t t = v[i];
        v[i] = v[j];
        v[j] = t;
        i++;
        if (j == 0)
          break;
        j--;
      }
    }
    /* Now v[lo..j] <= pivot <= v[i..hi], and anything between equals it. */
    if (k <= j && j != (size_t)-1 && j >= lo)
      hi = j;
    else if (k >= i)
      lo = i;
    else
      return v[k];
  }
  return v[k];
}

tl__pass1 *tl__pass1_new(void) { return calloc(1, sizeof(tl__pass1)); }

void tl__pass1_free(tl__pass1 *p) { free(p); }

/* Adds what pass 1 learnt of a set to that of a larger one. */
static void pass1_add(tl__pass1 *to, const tl__pass1 *p) {
  if (!p->count)
    return;
  to->min = to->count && to->min < p->min ? to->min : p->min;
  to->max = to->count && to->max > p->max ? to->max : p->max;
  to->count += p->count;
  to->sum += p->sum;
  to->sumsq += p->sumsq;
  for (size_t b = 0; b < LOG_BUCKETS; b++)
    to->log_hist[b] += p->log_hist[b];
}

/* The distribution without its percentiles (pct_count 0) into out, and the
 * exact value at pcts[k] into vals[k], for any number of percentiles: every
 * rank is found in the same passes, so asking for more costs little. With
 * known, pass 1 is skipped and known taken as its result; otherwise pass 1
 * runs and, with add_to, its result is also added there. */
static int compute(source_fn source, void *src, const double *pcts, size_t np, tl_dist *out,
                   int64_t *vals, const tl__pass1 *known, tl__pass1 *add_to) {
  memset(out, 0, sizeof *out);
  memset(vals, 0, np * sizeof *vals);
  for (size_t i = 0; i < np; i++)
    if (!(pcts[i] >= 0 && pcts[i] <= 100))
      return TL_EINVAL;

  pass_ctx c;
  memset(&c, 0, sizeof c);
  tl__pass1 *own = known ? NULL : tl__pass1_new();
  target *t = calloc(np ? np : 1, sizeof *t);
  c.p1 = own;
  c.t = t;
  c.nt = np;
  c.pass1 = 1;
  int err = !t || (!known && !own) ? TL_ENOMEM : TL_OK;
  if (!err && !known)
    err = source(src, on_values, &c);
  if (!err && add_to && own)
    pass1_add(add_to, own);
  const tl__pass1 *p = known ? known : own;
  if (err || p->count == 0) {
    free(t);
    tl__pass1_free(own);
    return err;
  }
  out->count = p->count;
  out->min_ns = p->min;
  out->max_ns = p->max;
  long double mean = (long double)p->sum / p->count;
  long double var = (long double)p->sumsq / p->count - mean * mean;
  out->mean_ns = (double)mean;
  out->stddev_ns = var > 0 ? sqrt((double)var) : 0.0;

  for (size_t k = 0; k < np; k++) {
    t[k].rank = tl_rank(pcts[k], p->count);
    int64_t cum = 0;
    for (size_t b = 0; b < LOG_BUCKETS; b++) {
      if (cum + p->log_hist[b] >= t[k].rank) {
        log_bounds(b, &t[k].lo, &t[k].hi);
        t[k].below = cum;
        t[k].inside = p->log_hist[b];
        break;
      }
      cum += p->log_hist[b];
    }
  }
  tl__pass1_free(own);
  c.pass1 = 0;
  c.first = malloc(LOG_BUCKETS * sizeof *c.first);
  if (!c.first) {
    free(t);
    return TL_ENOMEM;
  }

  for (;;) {
    size_t open = 0;
    for (size_t k = 0; k < np && !err; k++) {
      target *x = &t[k];
      if (x->done)
        continue;
      if (x->lo == x->hi) {
        x->done = 1;
        x->value = x->lo;
        continue;
      }
      open++;
      x->collect = x->inside <= COLLECT_LIMIT;
      x->n = 0;
      if (x->collect) {
        x->vals = malloc((size_t)x->inside * sizeof *x->vals);
        if (!x->vals)
          err = TL_ENOMEM;
      } else {
        uint64_t span = (uint64_t)x->hi - (uint64_t)x->lo + 1;
        x->width = (span + LINEAR_BUCKETS - 1) / LINEAR_BUCKETS;
        x->hist = calloc(LINEAR_BUCKETS, sizeof *x->hist);
        if (!x->hist)
          err = TL_ENOMEM;
      }
    }
    if (!open || err)
      break;
    memset(c.first, 0xff, LOG_BUCKETS * sizeof *c.first);
    for (size_t k = np; k-- > 0;) {
      if (t[k].done)
        continue;
      size_t b = log_index(t[k].lo);
      t[k].next = c.first[b];
      c.first[b] = (int32_t)k;
    }
    err = source(src, on_values, &c);
    for (size_t k = 0; k < np; k++) {
      target *x = &t[k];
      if (x->done)
        continue;
      if (!err && x->collect) {
        if ((int64_t)x->n != x->inside) {
          err = TL_ECORRUPT; /* the data changed between passes */
        } else {
          x->value = select_kth(x->vals, x->n, (size_t)(x->rank - x->below - 1));
          x->done = 1;
        }
      } else if (!err) {
        int64_t cum = x->below;
        for (size_t b = 0; b < LINEAR_BUCKETS; b++) {
          if (cum + x->hist[b] >= x->rank) {
            int64_t lo = x->lo + (int64_t)(b * x->width);
            int64_t hi = lo + (int64_t)x->width - 1;
            x->hi = hi < x->hi ? hi : x->hi;
            x->lo = lo;
            x->below = cum;
            x->inside = x->hist[b];
            break;
          }
          cum += x->hist[b];
        }
      }
      free(x->vals);
      free(x->hist);
      x->vals = NULL;
      x->hist = NULL;
    }
    if (err)
      break;
  }
  for (size_t k = 0; k < np; k++)
    vals[k] = t[k].value;
  free(c.first);
  free(t);
  return err;
}

/* compute() into a tl_dist, for at most TL_MAX_PCTS percentiles. */
static int compute_dist(source_fn source, void *src, const double *pcts, size_t np, tl_dist *out) {
  if (np > TL_MAX_PCTS) {
    memset(out, 0, sizeof *out);
    return TL_EINVAL;
  }
  int64_t vals[TL_MAX_PCTS];
  int err = compute(source, src, pcts, np, out, vals, NULL, NULL);
  out->pct_count = np;
  memcpy(out->pcts, pcts, np * sizeof *pcts);
  memcpy(out->pct_ns, vals, np * sizeof *vals);
  return err;
}

/* ======================================================================== */
/* Sources                                                                   */

static int ignore_values(void *ctx, const int64_t *v, size_t n) {
  (void)ctx;
  (void)v;
  (void)n;
  return 0;
}

/* Reading the store takes two threads: this one steps SQLite through the
 * blocks and decodes them into a batch of values, a worker counts the
 * previous batch. The two halves of the work are of similar size, so on two
 * cores a pass takes about half as long. Only the worker touches the pass
 * context; the batches alternate under one mutex. */
enum { BATCH_VALUES = 64 * TL_BLOCK_MAX };

typedef struct {
  size_t n;
  int64_t v[BATCH_VALUES];
} batch;

typedef struct {
  tl_store *store;
  const int64_t *ids;
  size_t n;
  void *ctx; /* of cb: the pass_ctx of compute(), or a plain scan's */
  int all;   /* a plain scan: every block wanted */
  tl_samples_cb cb;
  batch *fill;         /* the batch this thread fills */
  batch *pending;      /* handed to the worker, not yet taken */
  int busy, quit;      /* the worker is counting a batch; no more will come */
  int err;             /* the worker's first error */
  int64_t bad_session; /* where a block failed to decode */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  batch batches[2];
} store_src;

/* After pass 1, only blocks that may hold a sample of an open range. */
static int block_wanted(void *arg, const tl_block *b) {
  const store_src *s = arg;
  const pass_ctx *c = s->ctx;
  if (s->all || c->pass1)
    return 1;
  for (size_t k = 0; k < c->nt; k++) {
    const target *t = &c->t[k];
    if (!t->done && b->max_ns >= t->lo && b->min_ns <= t->hi)
      return 1;
  }
  return 0;
}

static void *worker(void *arg) {
  store_src *s = arg;
  pthread_mutex_lock(&s->mu);
  for (;;) {
    while (!s->pending && !s->quit)
      pthread_cond_wait(&s->cv, &s->mu);
    if (!s->pending)
      break;
    batch *b = s->pending;
    s->pending = NULL;
    s->busy = 1;
    int err = s->err;
    pthread_mutex_unlock(&s->mu);
    if (!err)
      err = s->cb(s->ctx, b->v, b->n);
    pthread_mutex_lock(&s->mu);
    if (err && !s->err)
      s->err = err;
    b->n = 0;
    s->busy = 0;
    pthread_cond_broadcast(&s->cv);
  }
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

/* Hands the filled batch to the worker once it is idle, and continues with
 * the other batch (which the worker has then finished). */
static int submit(store_src *s) {
  pthread_mutex_lock(&s->mu);
  while (s->pending || s->busy)
    pthread_cond_wait(&s->cv, &s->mu);
  int err = s->err;
  if (!err && s->fill->n) {
    s->pending = s->fill;
    s->fill = s->fill == &s->batches[0] ? &s->batches[1] : &s->batches[0];
    pthread_cond_broadcast(&s->cv);
  }
  pthread_mutex_unlock(&s->mu);
  return err;
}

static int block_decode(void *arg, const tl_block *b) {
  store_src *s = arg;
  if (s->fill->n + (size_t)b->count > BATCH_VALUES) {
    int err = submit(s);
    if (err)
      return err;
  }
  batch *f = s->fill;
  if (tl_block_decode(b->data, b->len, b->min_ns, b->max_ns, f->v + f->n, (size_t)b->count)) {
    s->bad_session = b->session_id;
    return TL_ECORRUPT;
  }
  f->n += (size_t)b->count;
  return TL_OK;
}

static int scan_store(void *arg, tl_samples_cb cb, void *ctx) {
  store_src *s = arg;
  s->ctx = ctx;
  s->cb = cb;
  s->fill = &s->batches[0];
  s->pending = NULL;
  s->busy = s->quit = s->err = 0;
  s->batches[0].n = s->batches[1].n = 0;
  pthread_t th;
  if (pthread_create(&th, NULL, worker, s) != 0)
    return TL_ENOMEM;
  int err = tl_store_scan_blocks(s->store, s->ids, s->n, block_wanted, block_decode, s);
  int werr = submit(s);
  pthread_mutex_lock(&s->mu);
  while (s->pending || s->busy)
    pthread_cond_wait(&s->cv, &s->mu);
  s->quit = 1;
  pthread_cond_broadcast(&s->cv);
  werr = s->err ? s->err : werr;
  pthread_mutex_unlock(&s->mu);
  pthread_join(th, NULL);
  if (err == TL_ECORRUPT && s->bad_session) {
    /* Let the store say which block is bad: a plain scan of that session
     * stops at the same block and leaves the message on the handle. */
    tl_store_scan(s->store, s->bad_session, ignore_values, NULL);
  }
  return err ? err : werr;
}

/* A source over the samples of the sessions (ids not copied), or NULL when
 * out of memory; free with src_close. */
static store_src *src_open(tl_store *store, const int64_t *session_ids, size_t n) {
  store_src *s = calloc(1, sizeof *s);
  if (!s)
    return NULL;
  if (pthread_mutex_init(&s->mu, NULL) != 0) {
    free(s);
    return NULL;
  }
  if (pthread_cond_init(&s->cv, NULL) != 0) {
    pthread_mutex_destroy(&s->mu);
    free(s);
    return NULL;
  }
  s->store = store;
  s->ids = session_ids;
  s->n = n;
  return s;
}

static void src_close(store_src *s) {
  pthread_cond_destroy(&s->cv);
  pthread_mutex_destroy(&s->mu);
  free(s);
}

int tl_dist_compute(tl_store *store, const int64_t *session_ids, size_t n, const double *pcts,
                    size_t pct_count, tl_dist *out) {
  store_src *s = src_open(store, session_ids, n);
  if (!s)
    return TL_ENOMEM;
  int err = compute_dist(scan_store, s, pcts, pct_count, out);
  src_close(s);
  return err;
}

int tl__dist_many(tl_store *store, const int64_t *session_ids, size_t n, const double *pcts,
                  size_t pct_count, tl_dist *out, int64_t *values, const tl__pass1 *known,
                  tl__pass1 *add_to) {
  store_src *s = src_open(store, session_ids, n);
  if (!s)
    return TL_ENOMEM;
  int err = compute(scan_store, s, pcts, pct_count, out, values, known, add_to);
  src_close(s);
  return err;
}

int tl__scan(tl_store *store, const int64_t *session_ids, size_t n, tl_samples_cb cb, void *ctx) {
  store_src *s = src_open(store, session_ids, n);
  if (!s)
    return TL_ENOMEM;
  s->all = 1;
  int err = scan_store(s, cb, ctx);
  src_close(s);
  return err;
}

typedef struct {
  const int64_t *v;
  size_t n;
} mem_src;

static int scan_mem(void *arg, tl_samples_cb cb, void *ctx) {
  mem_src *m = arg;
  for (size_t at = 0; at < m->n; at += TL_BLOCK_MAX) {
    size_t k = m->n - at < TL_BLOCK_MAX ? m->n - at : TL_BLOCK_MAX;
    int err = cb(ctx, m->v + at, k);
    if (err)
      return err;
  }
  return TL_OK;
}

int tl_dist_of_values(const int64_t *values, size_t n, const double *pcts, size_t pct_count,
                      tl_dist *out) {
  for (size_t i = 0; i < n; i++)
    if (values[i] < 0)
      return TL_EINVAL;
  mem_src m = {values, n};
  return compute_dist(scan_mem, &m, pcts, pct_count, out);
}
