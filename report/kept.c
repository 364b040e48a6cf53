/* kept.c: the samples the statistics keep of a group, in bounded memory,
 * and the session bootstrap over them. A large group is reduced to at most
 * TL_STATS_KEEP samples by a seeded reservoir per session (in proportion to
 * the session's size) and pooled in order with each sample's session; the
 * values quoted stay the exact ones of the whole data (store/dist.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats_internal.h"

/* ======================================================================== */
/* Samples of a group in bounded memory                                      */

void tl__sset_free(tl__sset *x) {
  if (!x->borrowed) {
    free(x->s);
    if (x->pool != x->buf)
      free(x->pool);
    free(x->buf);
    free(x->tag);
  }
  memset(x, 0, sizeof *x);
}

/* Keeping a uniform sample of a session in cap slots, in one pass.
 *
 * The session's size is known beforehand (the count its row records), so
 * each sample is kept with the same chance p, a little under cap / n, and
 * the gap to the next kept sample is drawn at once (geometric): one draw per
 * kept sample, and the kept samples are a uniform sample of the session
 * whatever their number. Should the slots fill up all the same (a session
 * larger than its row says), the rest goes through Algorithm L (Li, 1994), a
 * reservoir with a few draws per replaced sample; small sessions whose
 * every sample fits take them all, then continue the same way. */
static void keep_next(tl__sess *s) {
  double skip = floor(log(tl__rng_unit(&s->r)) / s->log_q);
  s->next = skip < 0x1p62 ? s->n + (int64_t)skip + 1 : INT64_MAX;
}

static void replace_next(tl__sess *s) {
  double skip = floor(log(tl__rng_unit(&s->r)) / log1p(-s->w));
  s->next = skip < 0x1p62 ? s->n + (int64_t)skip + 1 : INT64_MAX;
}

/* The slots are full at sample s->n: from now on a reservoir. Its weight is
 * the largest of the kept samples' random keys, the cap-th smallest of n
 * uniform keys: a Beta(cap, n - cap + 1) draw (after the first cap samples,
 * the largest of cap keys, as in Algorithm L). */
static void reservoir_start(tl__sess *s) {
  s->w = tl__rng_beta(&s->r, (double)s->cap, (double)(s->n - (int64_t)s->cap + 1));
  replace_next(s);
}

enum {
  /* Slots from which a session keeps each sample with a fixed chance: four
   * standard deviations under cap costs at most half of them there. */
  KEEP_BY_CHANCE = 64,
};

/* Readies s (cap slots, expected samples) before its first sample. A
 * session of many slots keeps each sample with the same chance, four
 * standard deviations under cap / expected so that its slots almost never
 * fill: one draw per kept sample. A session of fewer slots would keep far
 * fewer than its share that way (at 19 slots, 1.6 samples, and one session
 * in five none, so that the session bootstrap lost whole sessions), so it
 * fills its slots and goes on as a reservoir: exactly min(cap, n) samples,
 * a uniform sample of the session, at a few draws per replaced sample
 * (which is why sessions of many slots keep by chance). */
static void keep_start(tl__sess *s, int64_t expected) {
  s->n = 0;
  s->m = 0;
  s->log_q = 0; /* every sample while there is room */
  double p = (double)s->cap / (double)expected * (1 - 4 / sqrt((double)s->cap));
  if ((int64_t)s->cap < expected && s->cap >= KEEP_BY_CHANCE && p > 0) {
    s->log_q = log1p(-p);
    keep_next(s);
  }
}

static void reservoir_add(tl__sess *s, const int64_t *v, size_t n) {
  int64_t base = s->n, end = s->n + (int64_t)n;
  if (s->log_q == 0 && s->m < s->cap) {
    size_t take = s->cap - s->m < n ? s->cap - s->m : n;
    memcpy(s->v + s->m, v, take * sizeof *v);
    s->m += take;
    s->n += (int64_t)take;
    if (s->m == s->cap)
      reservoir_start(s);
  }
  if (s->m == s->cap || s->log_q != 0)
    while (s->next <= end) {
      int64_t x = v[s->next - base - 1];
      s->n = s->next;
      if (s->m < s->cap) {
        s->v[s->m++] = x;
        if (s->m < s->cap)
          keep_next(s);
        else
          reservoir_start(s);
      } else {
        s->v[tl__rng_below(&s->r, s->cap)] = x;
        s->w *= exp(log(tl__rng_unit(&s->r)) / (double)s->cap);
        replace_next(s);
      }
    }
  s->n = end;
}

/* Samples of the session-th session of the set ctx. */
static int reservoir_cb(void *ctx, size_t session, const int64_t *v, size_t n) {
  tl__sset *x = ctx;
  reservoir_add(&x->s[session], v, n);
  return 0;
}

/* Sorts v, made of the sorted runs v[run[i]..run[i+1]) (i < runs), carrying
 * each sample's tag along, by merging the runs a pair at a time (vt and tt
 * as large as v): the sessions' samples are sorted already, so the pool
 * need not be sorted again from scratch. */
static void pool_merge(int64_t *v, uint32_t *tag, int64_t *vt, uint32_t *tt, size_t *run,
                       size_t runs) {
  int64_t *src = v, *dst = vt;
  uint32_t *tsrc = tag, *tdst = tt;
  while (runs > 1) {
    size_t out = 0;
    for (size_t r = 0; r < runs; r += 2) {
      /* An odd run out (no partner) is copied as it is. */
      size_t a = run[r], am = run[r + 1], b = am, bm = r + 1 < runs ? run[r + 2] : am, at = a;
      while (a < am && b < bm) {
        size_t from = src[b] < src[a] ? b++ : a++;
        dst[at] = src[from];
        tdst[at++] = tsrc[from];
      }
      for (; a < am; a++, at++)
        dst[at] = src[a], tdst[at] = tsrc[a];
      for (; b < bm; b++, at++)
        dst[at] = src[b], tdst[at] = tsrc[b];
      run[out++] = run[r];
    }
    run[out] = run[runs];
    runs = out;
    int64_t *t = src;
    src = dst;
    dst = t;
    uint32_t *u = tsrc;
    tsrc = tdst;
    tdst = u;
  }
  if (src != v) {
    memcpy(v, src, run[1] * sizeof *v);
    memcpy(tag, tsrc, run[1] * sizeof *tag);
  }
}

/* LSD radix sort of the n 32-bit keys k of key_bits bits, with tmp as
 * large: one pass counts the three digits of every key, and a digit that
 * every key shares takes no pass (keys of up to 24 bits take two passes of
 * 12-bit digits, wider ones three of 11). Returns the array (k or tmp) that
 * holds the sorted keys. */
static uint32_t *sort_keys(uint32_t *k, uint32_t *tmp, size_t n, int key_bits) {
  enum { DIGITS = 3, MOST = 1 << 12 };
  int width = key_bits <= 24 ? 12 : 11;
  uint32_t mask = ((uint32_t)1 << width) - 1;
  uint32_t count[DIGITS][MOST] = {{0}};
  for (size_t j = 0; j < n; j++) {
    uint32_t v = k[j];
    count[0][v & mask]++;
    count[1][(v >> width) & mask]++;
    count[2][(v >> 2 * width) & mask]++;
  }
  uint32_t *src = k, *dst = tmp;
  for (int d = 0; d < DIGITS; d++) {
    uint32_t *c = count[d], sum = 0;
    int shift = d * width, shared = 0;
    for (uint32_t b = 0; b <= mask && !shared; b++)
      shared = c[b] == n;
    if (shared)
      continue;
    for (uint32_t b = 0; b <= mask; b++) {
      uint32_t here = c[b];
      c[b] = sum;
      sum += here;
    }
    for (size_t j = 0; j < n; j++) {
      uint32_t v = src[j];
      dst[c[(v >> shift) & mask]++] = v;
    }
    uint32_t *t = src;
    src = dst;
    dst = t;
  }
  return src;
}

/* Sorts the samples of x (each session's, one session after another in
 * x->buf) into x->pool with their sessions in x->tag, and sorts each
 * session's own. When a sample less the smallest and its session's number
 * fit in one key, one radix sort of the keys (32-bit ones when they fit,
 * in the tags' array: half the bytes to move), then each session takes its
 * samples back in order; otherwise each session is sorted and the sessions
 * are merged. */
static int pool_sort(tl__sset *x) {
  size_t m = x->m;
  int64_t lo = m ? x->buf[0] : 0, hi = lo;
  for (size_t j = 1; j < m; j++) {
    lo = x->buf[j] < lo ? x->buf[j] : lo;
    hi = x->buf[j] > hi ? x->buf[j] : hi;
  }
  int bits = 0, span_bits = 0;
  while (bits < 32 && ((size_t)1 << bits) < x->ns)
    bits++;
  uint64_t span = (uint64_t)hi - (uint64_t)lo;
  while (span_bits < 64 && span >> span_bits)
    span_bits++;
  if (bits < 32 && span < (UINT64_C(1) << (63 - bits))) {
    int narrow = bits + span_bits <= 32 && m <= UINT32_MAX;
    int64_t *wide = x->pool;
    uint32_t *key = x->tag, *tmp = narrow ? malloc((m ? m : 1) * sizeof *tmp) : NULL;
    int64_t **put = malloc((x->ns ? x->ns : 1) * sizeof *put); /* where each session's next goes */
    int rc = put && (tmp || !narrow) ? TL_OK : TL_ENOMEM;
    for (size_t i = 0, at = 0; i < x->ns && !rc; i++)
      for (size_t j = 0; j < x->s[i].m; j++, at++) {
        uint64_t k = (((uint64_t)x->s[i].v[j] - (uint64_t)lo) << bits) | i;
        if (narrow)
          key[at] = (uint32_t)k;
        else
          wide[at] = (int64_t)k;
      }
    if (!rc && narrow)
      key = sort_keys(key, tmp, m, bits + span_bits);
    else if (!rc)
      rc = tl_sort_i64(wide, m);
    for (size_t i = 0; i < x->ns && !rc; i++)
      put[i] = x->s[i].v;
    uint64_t mask = ((uint64_t)1 << bits) - 1;
    for (size_t j = 0; j < m && !rc; j++) {
      uint64_t k = narrow ? key[j] : (uint64_t)wide[j];
      uint32_t t = (uint32_t)(k & mask);
      int64_t v = (int64_t)((k >> bits) + (uint64_t)lo);
      x->tag[j] = t;
      x->pool[j] = v;
      *put[t]++ = v;
    }
    free(put);
    free(tmp);
    return rc;
  }
  int64_t *vt = malloc((m ? m : 1) * sizeof *vt);
  uint32_t *tt = malloc((m ? m : 1) * sizeof *tt);
  size_t *run = malloc((x->ns + 1) * sizeof *run);
  int rc = vt && tt && run ? TL_OK : TL_ENOMEM;
  for (size_t i = 0; i < x->ns && !rc; i++)
    rc = tl_sort_i64(x->s[i].v, x->s[i].m);
  if (!rc) {
    if (x->pool != x->buf)
      memcpy(x->pool, x->buf, m * sizeof *x->pool);
    run[0] = 0;
    for (size_t i = 0; i < x->ns; i++) {
      run[i + 1] = run[i] + x->s[i].m;
      for (size_t j = run[i]; j < run[i + 1]; j++)
        x->tag[j] = (uint32_t)i;
    }
    pool_merge(x->pool, x->tag, vt, tt, run, x->ns);
  }
  free(vt);
  free(tt);
  free(run);
  return rc;
}

/* Readies x to keep samples of the sessions ids[0..nids): every sample when
 * the group has at most TL_STATS_KEEP, otherwise a reservoir per session
 * sized in proportion to the session. Samples then go to reservoir_add
 * session by session, and sset_finish sorts them. at: where each session is
 * in cmp's list (a group's session_at), or NULL to look them up. */
static int sset_prepare(const tl_comparison *cmp, const int64_t *ids, const size_t *at_list,
                        size_t nids, uint64_t seed, tl__sset *x) {
  memset(x, 0, sizeof *x);
  x->s = calloc(nids ? nids : 1, sizeof *x->s);
  if (!x->s)
    return TL_ENOMEM;
  x->ns = nids;
  int64_t total = 0;
  size_t from = 0;
  for (size_t i = 0; i < nids; i++) {
    ptrdiff_t at = at_list ? (ptrdiff_t)at_list[i] : tl__session_index(cmp, ids[i], &from);
    const tl_session *s = at < 0 ? NULL : &cmp->sessions.items[at];
    x->s[i].d = at < 0 || !cmp->details ? NULL : &cmp->details[at];
    x->s[i].id = ids[i];
    x->s[i].started_ns = s ? s->started_ns : 0;
    /* FNV-1a of the UUID: the same draws from a file and from a server. */
    uint64_t key = 0xcbf29ce484222325ULL;
    for (const char *u = s ? s->uuid : ""; *u; u++)
      key = (key ^ (unsigned char)*u) * 0x100000001b3ULL;
    x->s[i].key = s ? key : (uint64_t)ids[i];
    x->s[i].n = s && s->sample_count > 0 ? s->sample_count : 1; /* expected, for sizing */
    total += x->s[i].n;
  }
  size_t cap_total = 0;
  for (size_t i = 0; i < nids; i++) {
    tl__sess *s = &x->s[i];
    if (total <= TL_STATS_KEEP)
      s->cap = (size_t)s->n;
    else
      s->cap = (size_t)((double)TL_STATS_KEEP * (double)s->n / (double)total) + 1;
    cap_total += s->cap;
  }
  x->buf = malloc((cap_total ? cap_total : 1) * sizeof *x->buf);
  if (!x->buf) {
    tl__sset_free(x);
    return TL_ENOMEM;
  }
  size_t at = 0;
  for (size_t i = 0; i < nids; i++) {
    tl__sess *s = &x->s[i];
    s->v = x->buf + at;
    at += s->cap;
    s->r.s = seed ^ (s->key * 0xd6e8feb86659fd93ULL);
    keep_start(s, s->n);
  }
  return TL_OK;
}

/* Closes the gaps left by sessions smaller than expected, then sorts what
 * each session kept and the pool of them all. */
static int sset_finish(tl__sset *x) {
  x->exact = 1;
  x->n = 0;
  size_t at = 0;
  for (size_t i = 0; i < x->ns; i++) {
    tl__sess *s = &x->s[i];
    x->exact &= (int64_t)s->m == s->n;
    x->n += s->n;
    if (s->v != x->buf + at)
      memmove(x->buf + at, s->v, s->m * sizeof *x->buf);
    s->v = x->buf + at;
    at += s->m;
  }
  x->m = at;
  /* A single session's samples, once sorted, are the pool itself. */
  x->pool = x->ns == 1 ? x->buf : malloc((at ? at : 1) * sizeof *x->pool);
  x->tag = malloc((at ? at : 1) * sizeof *x->tag);
  if (!x->pool || !x->tag)
    return TL_ENOMEM;
  return pool_sort(x);
}

/* Loads the sessions ids[0..nids) into x by reading them, and with dist
 * their distribution at pcts[0..np) from the same reading. Errors leave a
 * message on the store. */
int tl__sset_load_dist(tl_store *store, const tl_comparison *cmp, const int64_t *ids, size_t nids,
                       uint64_t seed, const double *pcts, size_t np, tl_dist *dist, tl__sset *x) {
  int rc = sset_prepare(cmp, ids, NULL, nids, seed, x);
  /* One scan for them all: a scan's thread and statement cost per call. */
  if (!rc && dist)
    rc = tl_dist_compute_tap(store, ids, nids, pcts, np, reservoir_cb, x, dist);
  else if (!rc)
    rc = tl_store_scan_threaded(store, ids, nids, reservoir_cb, x);
  if (!rc)
    rc = sset_finish(x);
  if (rc)
    tl__sset_free(x);
  return rc;
}

int tl__sset_load(tl_store *store, const tl_comparison *cmp, const int64_t *ids, size_t nids,
                  uint64_t seed, tl__sset *x) {
  return tl__sset_load_dist(store, cmp, ids, nids, seed, NULL, 0, NULL, x);
}

tl__kept *tl__kept_new(const tl_comparison *cmp, const tl_group *g, const char *what,
                       size_t *budget) {
  tl__kept *k = malloc(sizeof *k);
  if (!k)
    return NULL;
  uint64_t seed = tl__group_seed(g->label, g->probe, g->delay_ns, what);
  if (sset_prepare(cmp, g->session_ids, g->session_at, g->session_count, seed, &k->set)) {
    free(k);
    return NULL;
  }
  size_t cap = 0;
  for (size_t i = 0; i < k->set.ns; i++)
    cap += k->set.s[i].cap;
  /* The samples, the pool and its tags. */
  size_t bytes = cap * (2 * sizeof(int64_t) + sizeof(uint32_t));
  if (bytes > *budget) {
    tl__kept_free(k);
    return NULL;
  }
  *budget -= bytes;
  k->bytes = bytes;
  return k;
}

void tl__kept_give_back(tl__kept *k, size_t *budget) {
  if (k)
    *budget += k->bytes;
  tl__kept_free(k);
}

tl__kept *tl__kept_part(const tl__kept *k, size_t from, size_t to) {
  const tl__sset *x = k ? &k->set : NULL;
  if (!x || !x->exact || from >= to || to > x->ns)
    return NULL;
  tl__kept *p = calloc(1, sizeof *p);
  if (!p)
    return NULL;
  tl__sset *y = &p->set;
  size_t ns = to - from, m = 0;
  for (size_t i = from; i < to; i++)
    m += x->s[i].m;
  y->ns = ns;
  y->s = malloc(ns * sizeof *y->s);
  y->buf = malloc((m ? m : 1) * sizeof *y->buf);
  y->pool = ns == 1 ? y->buf : malloc((m ? m : 1) * sizeof *y->pool);
  y->tag = malloc((m ? m : 1) * sizeof *y->tag);
  if (!y->s || !y->buf || !y->pool || !y->tag) {
    tl__kept_free(p);
    return NULL;
  }
  for (size_t i = 0, at = 0; i < ns; i++) {
    y->s[i] = x->s[from + i];
    memcpy(y->buf + at, y->s[i].v, y->s[i].m * sizeof *y->buf);
    y->s[i].v = y->buf + at;
    at += y->s[i].m;
    y->n += y->s[i].n;
  }
  y->m = m;
  y->exact = 1;
  /* The pool keeps its order: the samples of these sessions, renumbered. */
  size_t at = 0;
  for (size_t j = 0; j < x->m && ns > 1; j++)
    if (x->tag[j] - from < ns) {
      y->pool[at] = x->pool[j];
      y->tag[at++] = (uint32_t)(x->tag[j] - from);
    }
  if (ns == 1)
    memset(y->tag, 0, m * sizeof *y->tag);
  return p;
}

int tl__kept_add(void *kept, size_t session, const int64_t *v, size_t n) {
  return reservoir_cb(&((tl__kept *)kept)->set, session, v, n);
}

int tl__kept_finish(tl__kept *k) { return sset_finish(&k->set); }

void tl__kept_values(tl__kept *k, const int64_t *ranks, const int64_t *values, size_t n) {
  n = n < 2 * TL_MAX_PCTS ? n : 2 * TL_MAX_PCTS;
  memcpy(k->set.known_rank, ranks, n * sizeof *ranks);
  memcpy(k->set.known_value, values, n * sizeof *values);
  k->set.known = n;
}

void tl__kept_free(tl__kept *k) {
  if (!k)
    return;
  tl__sset_free(&k->set);
  free(k);
}

static size_t upper_bound(const int64_t *v, size_t n, int64_t x) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (v[mid] <= x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* The weighted count of samples up to the pooled value at mid: session i
 * stands for w[i] copies (w NULL: one) of its n samples, each kept sample
 * for n / m of them. */
static double sset_count(const tl__sset *x, const double *w, size_t mid) {
  double c = 0;
  for (size_t i = 0; i < x->ns; i++) {
    const tl__sess *s = &x->s[i];
    double wi = w ? w[i] : 1;
    if (wi > 0 && s->m)
      c += wi * (double)s->n / (double)s->m * (double)upper_bound(s->v, s->m, x->pool[mid]);
  }
  return c;
}

/* The smallest kept value at which the weighted count of samples reaches
 * rank. */
int64_t tl__sset_at(const tl__sset *x, const double *w, double rank) {
  if (x->exact && !w) {
    size_t r = rank < 1 ? 1 : (size_t)ceil(rank - 1e-9);
    return x->pool[(r > x->m ? x->m : r) - 1];
  }
  size_t lo = 0, hi = x->m - 1;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (sset_count(x, w, mid) >= rank - 1e-6)
      hi = mid;
    else
      lo = mid + 1;
  }
  return x->pool[lo];
}

/* ======================================================================== */
/* The session bootstrap, without searching every session                  */

/* A replicate of the session bootstrap asks for the smallest pooled value at
 * which the resampled sessions' weighted count reaches a rank. tl__sset_at finds
 * it by a binary search over the pool whose every step is a binary search in
 * every session: sessions x log(pool) x log(session) per replicate and
 * percentile, which made a month of runs (240 sessions a group) cost
 * seconds. tl__boot_at finds the same value from a table made once per group:
 * the pool cut at marks, with every session's count below each mark. The
 * weight below a mark is then one product of its row and the replicate's
 * weights; a bisection over the marks finds the last one below the rank,
 * and a walk from it adds each pooled sample's weight until the rank is
 * reached. The sums are tl__sset_at's in another order: equal while every
 * sample is kept (whole numbers), within rounding otherwise, far inside the
 * 1e-6 both allow. */

enum {
  BOOT_ROWS = 1u << 20, /* counts in the table of marks at most (4 MiB) */
};

int tl__stats_boot_search;

void tl__boot_free(tl__boot *bt) {
  free(bt->unit);
  free(bt->per);
  free(bt->w);
  free(bt->mark);
  free(bt->row);
  free(bt->below);
  free(bt->below_gen);
  memset(bt, 0, sizeof *bt);
}

/* Marks the pool every step samples (about half the number of
 * sessions, or more when the table would pass BOOT_ROWS: a mark visited
 * costs a product over the sessions, a sample walked one addition) and
 * counts each session's kept samples below every mark. */
int tl__boot_init(const tl__sset *x, tl__boot *bt) {
  memset(bt, 0, sizeof *bt);
  bt->x = x;
  size_t m = x->m, ns = x->ns ? x->ns : 1, step = ns / 2 > 16 ? ns / 2 : 16;
  if (m / step + 2 > BOOT_ROWS / ns)
    step = m / (BOOT_ROWS / ns > 2 ? BOOT_ROWS / ns - 2 : 1) + 1;
  size_t most = m / step + 2;
  bt->unit = malloc(ns * sizeof *bt->unit);
  bt->per = malloc(ns * sizeof *bt->per);
  bt->w = malloc(ns * sizeof *bt->w);
  bt->mark = malloc(most * sizeof *bt->mark);
  bt->row = malloc(most * ns * sizeof *bt->row);
  bt->below = malloc(most * sizeof *bt->below);
  bt->below_gen = calloc(most, sizeof *bt->below_gen);
  if (!bt->unit || !bt->per || !bt->w || !bt->mark || !bt->row || !bt->below || !bt->below_gen) {
    tl__boot_free(bt);
    return TL_ENOMEM;
  }
  for (size_t i = 0; i < x->ns; i++)
    bt->per[i] = x->s[i].m ? (double)x->s[i].n / (double)x->s[i].m : 0;
  memset(bt->row, 0, ns * sizeof *bt->row);
  bt->mark[0] = 0;
  size_t t = 0;
  for (size_t j = 0; j < m;) {
    size_t next = j + step < m ? j + step : m;
    while (next < m && x->pool[next] == x->pool[next - 1])
      next++;
    float *r = bt->row + (t + 1) * ns;
    memcpy(r, r - ns, ns * sizeof *r);
    for (; j < next; j++)
      r[x->tag[j]] += 1;
    bt->mark[++t] = next;
  }
  bt->marks = t;
  return TL_OK;
}

/* Readies a replicate that counts session i count[i] times. */
void tl__boot_weigh(tl__boot *bt, const uint32_t *count) {
  /* The factor tl__sset_at multiplies a session's count by (it divides after
   * multiplying: the same while every sample is kept, within a rounding
   * otherwise). */
  for (size_t i = 0; i < bt->x->ns; i++)
    bt->unit[i] = (double)count[i] * bt->per[i];
  if (++bt->gen == 0) { /* after 2^32 replicates, every mark's weight is old again */
    memset(bt->below_gen, 0, (bt->marks + 1) * sizeof *bt->below_gen);
    bt->gen = 1;
  }
}

/* tl__sset_at for the replicate, its counts as weights. */
static int64_t boot_search(tl__boot *bt, const uint32_t *count, double rank) {
  for (size_t i = 0; i < bt->x->ns; i++)
    bt->w[i] = (double)count[i];
  return tl__sset_at(bt->x, bt->w, rank);
}

/* The replicate's weight below mark t: exact while every sample is kept
 * (whole numbers), otherwise the same products as tl__sset_at's summed in
 * another order. Eight sums side by side, so that it vectorizes and the
 * additions overlap. */
static double weight_below(const tl__boot *bt, size_t t) {
  const float *r = bt->row + t * bt->x->ns;
  const double *u = bt->unit;
  size_t ns = bt->x->ns, i = 0;
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
  for (; i + 8 <= ns; i += 8) {
    s0 += u[i] * (double)r[i];
    s1 += u[i + 1] * (double)r[i + 1];
    s2 += u[i + 2] * (double)r[i + 2];
    s3 += u[i + 3] * (double)r[i + 3];
    s4 += u[i + 4] * (double)r[i + 4];
    s5 += u[i + 5] * (double)r[i + 5];
    s6 += u[i + 6] * (double)r[i + 6];
    s7 += u[i + 7] * (double)r[i + 7];
  }
  for (; i < ns; i++)
    s0 += u[i] * (double)r[i];
  return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
}

/* weight_below, each mark's worked out once a replicate: the searches of
 * its percentiles visit the same few marks, a product over every session
 * each. */
static double boot_below(tl__boot *bt, size_t t) {
  if (bt->below_gen[t] != bt->gen) {
    bt->below[t] = weight_below(bt, t);
    bt->below_gen[t] = bt->gen;
  }
  return bt->below[t];
}

/* tl__sset_at(x, w, rank) for the weights of the last tl__boot_weigh, percentile k:
 * the last mark below the rank by bisection (first between the marks
 * earlier replicates of k started from, when those are few), then a walk
 * from it, adding each sample's weight. Should rounding keep the walk from
 * the rank (not while every sample is kept), tl__sset_at answers. */
int64_t tl__boot_at(tl__boot *bt, const uint32_t *count, double rank, size_t k) {
  const tl__sset *x = bt->x;
  double need = rank - 1e-6;
  size_t lo = 0, hi = bt->marks; /* the weight below lo is under need */
  int hi_ok = 0;                 /* the weight below hi is known to reach it */
  if (tl__stats_boot_search)
    return boot_search(bt, count, rank);
  if (bt->seen[k] && (bt->seen_hi[k] - bt->seen_lo[k]) * 8 < bt->marks) {
    size_t a = bt->seen_lo[k], b = bt->seen_hi[k] + 1;
    if (a > 0 && boot_below(bt, a) >= need)
      hi = a, hi_ok = 1;
    else
      lo = a;
    if (!hi_ok && b < hi) {
      if (boot_below(bt, b) >= need)
        hi = b, hi_ok = 1;
      else
        lo = b;
    }
  }
  if (!hi_ok && boot_below(bt, hi) < need)
    return boot_search(bt, count, rank);
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (boot_below(bt, mid) < need)
      lo = mid;
    else
      hi = mid;
  }
  bt->seen_lo[k] = !bt->seen[k] || lo < bt->seen_lo[k] ? lo : bt->seen_lo[k];
  bt->seen_hi[k] = !bt->seen[k] || lo > bt->seen_hi[k] ? lo : bt->seen_hi[k];
  bt->seen[k] = 1;
  double c = boot_below(bt, lo);
  const double *unit = bt->unit;
  const uint32_t *tag = x->tag;
  size_t j = bt->mark[lo];
  /* Eight samples at a time while they stay below the rank (their sum
   * adds in parallel), then one value at a time. */
  for (; j + 8 <= x->m; j += 8) {
    double eight = ((unit[tag[j]] + unit[tag[j + 1]]) + (unit[tag[j + 2]] + unit[tag[j + 3]])) +
                   ((unit[tag[j + 4]] + unit[tag[j + 5]]) + (unit[tag[j + 6]] + unit[tag[j + 7]]));
    if (c + eight >= need)
      break;
    c += eight;
  }
  while (j < x->m) {
    int64_t v = x->pool[j];
    do
      c += unit[tag[j]];
    while (++j < x->m && x->pool[j] == v);
    if (c >= need)
      return v;
  }
  return boot_search(bt, count, rank);
}

/* Exact values at 1-based ranks of the whole group: from the pool when every
 * sample is kept, or those the comparison found, else by the exact
 * distribution machinery (store/dist.c), which takes percentiles: (r - 0.5) / n
 * lands on rank r under tl_rank. */
int tl__sset_values_at_ranks(tl_store *store, const tl__sset *x, const int64_t *ranks, size_t k,
                             int64_t *out) {
  if (x->exact) {
    for (size_t i = 0; i < k; i++)
      out[i] = x->pool[ranks[i] - 1];
    return TL_OK;
  }
  size_t found = 0;
  for (size_t i = 0; i < k; i++)
    for (size_t j = 0; j < x->known; j++)
      if (x->known_rank[j] == ranks[i]) {
        out[i] = x->known_value[j];
        found++;
        break;
      }
  if (found == k)
    return TL_OK;
  int64_t *ids = malloc(x->ns * sizeof *ids);
  if (!ids)
    return TL_ENOMEM;
  for (size_t i = 0; i < x->ns; i++)
    ids[i] = x->s[i].id;
  int rc = TL_OK;
  for (size_t at = 0; at < k && !rc; at += TL_MAX_PCTS) {
    size_t c = k - at < TL_MAX_PCTS ? k - at : TL_MAX_PCTS;
    double p[TL_MAX_PCTS];
    for (size_t i = 0; i < c; i++)
      p[i] = 100.0 * ((double)ranks[at + i] - 0.5) / (double)x->n;
    tl_dist d;
    rc = tl_dist_compute(store, ids, x->ns, p, c, &d);
    for (size_t i = 0; i < c && !rc; i++)
      out[at + i] = d.pct_ns[i];
  }
  free(ids);
  return rc;
}

/* The value at pct among those the comparison computed for the session. */
static int known_value(const tl_session_detail *d, double pct, int64_t *out) {
  for (size_t k = 0; k < d->pct_count; k++)
    if (d->pcts[k] == pct) {
      *out = d->pct_ns[k];
      return 1;
    }
  return 0;
}

/* A session's own exact percentiles: from its samples when all are kept,
 * else from what the comparison computed, else from the store. */
int tl__sess_values(tl_store *store, const tl__sess *s, const double *p, size_t np, int64_t *out) {
  if (!s->n) {
    memset(out, 0, np * sizeof *out);
    return TL_OK;
  }
  if ((int64_t)s->m == s->n) {
    for (size_t k = 0; k < np; k++)
      out[k] = s->v[tl_rank(p[k], s->n) - 1];
    return TL_OK;
  }
  size_t known = 0;
  while (s->d && known < np && known_value(s->d, p[known], &out[known]))
    known++;
  if (known == np)
    return TL_OK;
  tl_dist d;
  int rc = tl_dist_compute(store, &s->id, 1, p, np, &d);
  for (size_t k = 0; k < np && !rc; k++)
    out[k] = d.pct_ns[k];
  return rc;
}
