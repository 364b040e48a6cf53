/* dist.c: exact nearest-rank percentiles over any number of samples with
 * little memory, for a group of sessions and for each of its sessions in the
 * same passes (a sweep).
 *
 * Pass 1 reads every sample once for the count, extremes and sums of each
 * session and a log-linear histogram (2048 sub-buckets per power of two,
 * fine enough that the bucket of a rank in timer data holds few enough
 * samples to collect at once). A session's histogram lives only while its
 * samples go by: its ranks are located when it ends, then it is added to the
 * group's. Each requested rank then lies in one known bucket [lo, hi] with a
 * known number of samples below it. Each further pass either collects the
 * samples of [lo, hi] and picks the rank exactly (when few enough fall
 * there), or splits [lo, hi] into 4096 linear buckets to narrow it further:
 * the exact-rank engine (rank.h) that the summaries use too. Typical timer
 * data needs two passes, however many ranks are asked.
 *
 * Over a store, pass 1 reads no sample: each session's stored summary
 * (tl_store_summaries) has its count, extremes, sums, histogram (the same
 * layout) and its own percentiles at the usual levels, so a group's ranks
 * are located at once, and the next pass reads only what they need. The
 * group's histogram then also gives the tail above any value, with its
 * time past another (tl_sweep_tail), so that the report's causes need not
 * read every summary again.
 *
 * The passes after the first skip, verified but undecoded, every stored
 * block whose min..max (kept in the block's row) misses all the ranges still
 * open for its session and for the group. The group's ranges that are whole
 * log buckets count per value in one table (sweep_fast.c: one look-up and
 * one count a sample, without a branch); the others, and the sessions' own,
 * take their samples through a bitmap of the buckets they lie in and a list
 * per bucket, so that the cost of a sample stays the same whatever the
 * number of ranks. A caller may have the same pass count the values of
 * buckets it names, or see every sample (the page's histogram: report/
 * chart.c). A store's samples are read on two threads (scan_threaded.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sweep_internal.h"

static void moments_add(moments *to, const moments *p) {
  if (!p->count)
    return;
  to->min = to->count && to->min < p->min ? to->min : p->min;
  to->max = to->count && to->max > p->max ? to->max : p->max;
  to->count += p->count;
  to->sum += p->sum;
  to->sumsq += p->sumsq;
}

/* The index of the target of rank in set, added when new; SIZE_MAX when
 * out of memory. A set's targets are added together (a session's when it
 * ends, the group's after pass 1), so they stay contiguous. */
static size_t target_add(tl_sweep *w, size_t set, int64_t rank) {
  for (size_t k = w->tfirst[set]; k < w->tend[set]; k++)
    if (w->t[k].rank == rank)
      return k;
  if (w->tend[set] == w->tfirst[set])
    w->tfirst[set] = w->tend[set] = w->nt;
  if (w->tend[set] != w->nt)
    return SIZE_MAX; /* not contiguous: a caller's mistake */
  if (w->nt == w->tcap) {
    size_t cap = w->tcap ? 2 * w->tcap : 64;
    target *t = realloc(w->t, cap * sizeof *t);
    if (!t)
      return SIZE_MAX;
    w->t = t;
    w->tcap = cap;
  }
  target *x = &w->t[w->nt];
  memset(x, 0, sizeof *x);
  x->set = set;
  x->rank = rank;
  w->tend[set] = ++w->nt;
  return w->nt - 1;
}

/* Finds the log bucket of each target of set in hist[0..len), the counts
 * of buckets first... */
static void locate(tl_sweep *w, size_t set, const int64_t *hist, size_t first, size_t len) {
  for (size_t k = w->tfirst[set]; k < w->tend[set]; k++) {
    target *x = &w->t[k];
    if (!x->r.inside && !x->r.done) /* not located already */
      tl__rank_locate(&x->r, x->rank, hist, first, len);
  }
}

/* The end of a session's samples in pass 1: its ranks are located in its own
 * histogram, which is then added to the group's and cleared. */
static void session_end(tl_sweep *w) {
  size_t s = w->cur;
  w->cur = SIZE_MAX;
  if (s == SIZE_MAX || !w->m[s].count)
    return;
  const moments *m = &w->m[s];
  for (size_t k = 0; k < w->snp; k++) {
    size_t h = target_add(w, s, tl_rank(w->spcts[k], m->count));
    w->oom |= h == SIZE_MAX;
    w->sat[s * w->snp + k] = h;
  }
  size_t from = log_index(m->min), to = log_index(m->max);
  locate(w, s, w->shist + from, from, to - from + 1);
  for (size_t b = from; b <= to; b++) {
    w->ghist[b] += w->shist[b];
    w->shist[b] = 0;
  }
}

static void pass1_values(tl_sweep *w, size_t session, const int64_t *v, size_t n) {
  moments *m = &w->m[session];
  int64_t lo = m->count ? m->min : v[0], hi = m->count ? m->max : v[0];
  unsigned __int128 sum = 0, sumsq = 0;
  int64_t *hist = w->shist ? w->shist : w->ghist;
  for (size_t i = 0; i < n; i++) {
    int64_t x = v[i];
    lo = x < lo ? x : lo;
    hi = x > hi ? x : hi;
    sum += (uint64_t)x;
    sumsq += (unsigned __int128)((uint64_t)x) * (uint64_t)x;
    hist[log_index(x)]++;
  }
  m->min = lo;
  m->max = hi;
  m->count += (int64_t)n;
  m->sum += sum;
  m->sumsq += sumsq;
}

/* Puts target k at the front of its bucket's list of takers. */
static void push(tl_sweep *w, size_t k) {
  target *t = &w->t[k];
  size_t b = log_index(t->r.lo);
  t->next = w->head[b];
  w->head[b] = (int32_t)k;
  w->slow++;
  tl__sweep_mark_slow(w, b, 1);
  w->bits[b / 64] |= (uint64_t)1 << (b % 64);
}

/* Unmarks the ranges of the session marked last: they lie at the front of
 * their lists in push order, so are popped in reverse. */
static void marks_drop(tl_sweep *w) {
  size_t old = w->bits_for;
  w->bits_for = SIZE_MAX;
  if (old == SIZE_MAX)
    return;
  for (size_t k = w->tend[old]; k-- > w->tfirst[old];) {
    if (!tl__sweep_taker(&w->t[k]))
      continue;
    size_t b = log_index(w->t[k].r.lo);
    w->head[b] = w->t[k].next;
    w->slow--;
    if (w->head[b] < 0) {
      w->bits[b / 64] &= ~((uint64_t)1 << (b % 64));
      tl__sweep_mark_slow(w, b, 0);
    }
  }
}

/* Marks the ranges of session instead of the previous one's. */
static void marks_switch(tl_sweep *w, size_t session) {
  marks_drop(w);
  for (size_t k = w->tfirst[session]; k < w->tend[session]; k++)
    if (tl__sweep_taker(&w->t[k]))
      push(w, k);
  w->bits_for = session;
}

/* The taps of the first pass after pass 1: the caller's tap of that pass,
 * and pass 1's when pass 1 read summaries. */
static int finish_tap(void *arg, size_t session, const int64_t *v, size_t n) {
  tl_sweep *w = arg;
  int err = w->next_tap ? w->next_tap(w->next_tap_ctx, session, v, n) : 0;
  return !err && w->tap ? w->tap(w->tap_ctx, session, v, n) : err;
}

static int on_segment(void *arg, size_t session, const int64_t *v, size_t n) {
  tl_sweep *w = arg;
  if (!n)
    return 0;
  if (!w->first_done) {
    if (w->shist && session != w->cur) {
      session_end(w);
      w->cur = session;
    }
    pass1_values(w, session, v, n);
    return 0;
  }
  if (session != w->bits_for)
    marks_switch(w, session);
  if (w->fast) {
    tl__sweep_count_fast(w, v, n);
    return 0;
  }
  if (!w->slow)
    return 0;
  const uint64_t *bits = w->bits;
  for (size_t i = 0; i < n; i++) {
    size_t b = log_index(v[i]);
    if (bits[b / 64] >> (b % 64) & 1)
      tl__sweep_take(w, b, v[i]);
  }
  return 0;
}

/* After pass 1, only blocks that may hold a sample of an open range (or any
 * block, while values are counted or a tap sees them). */
static int block_wanted(void *arg, size_t session, int64_t min, int64_t max) {
  const tl_sweep *w = arg;
  if (!w->first_done || w->asking || w->tap || w->next_tap)
    return 1;
  size_t sets[2] = {session, w->ns};
  for (size_t i = 0; i < 2; i++)
    for (size_t k = w->tfirst[sets[i]]; k < w->tend[sets[i]]; k++) {
      const tl__rank *t = &w->t[k].r;
      if (!t->done && max >= t->lo && min <= t->hi)
        return 1;
    }
  return 0;
}

static void sweep_free(tl_sweep *w);

/* NULL when out of memory; spcts are valid percentiles. */
static tl_sweep *sweep_new(source_fn source, void *src, size_t ns, const double *spcts,
                           size_t snp) {
  tl_sweep *w = calloc(1, sizeof *w);
  if (!w)
    return NULL;
  w->source = source;
  w->src = src;
  w->ns = ns;
  w->snp = snp;
  w->cur = w->bits_for = SIZE_MAX;
  w->m = calloc(ns + 1, sizeof *w->m);
  w->tfirst = calloc(ns + 1, sizeof *w->tfirst);
  w->tend = calloc(ns + 1, sizeof *w->tend);
  w->ghist = calloc(LOG_BUCKETS, sizeof *w->ghist);
  int ok = w->m && w->tfirst && w->tend && w->ghist;
  if (ok && snp) {
    w->spcts = malloc(snp * sizeof *w->spcts);
    w->sat = malloc(ns * snp * sizeof *w->sat + 1);
    w->sgiven = calloc(ns * snp + 1, sizeof *w->sgiven);
    w->shist = calloc(LOG_BUCKETS, sizeof *w->shist);
    ok = w->spcts && w->sat && w->sgiven && w->shist;
    if (ok) {
      memcpy(w->spcts, spcts, snp * sizeof *spcts);
      memset(w->sat, 0xff, ns * snp * sizeof *w->sat); /* no target: its value reads 0 */
    }
  }
  if (!ok) {
    sweep_free(w);
    return NULL;
  }
  return w;
}

static void sweep_free(tl_sweep *w) {
  if (!w)
    return;
  for (size_t k = 0; k < w->nt; k++)
    tl__rank_free(&w->t[k].r);
  free(w->t);
  free(w->m);
  free(w->tfirst);
  free(w->tend);
  free(w->ghist);
  free(w->gclamp);
  free(w->shist);
  free(w->spcts);
  free(w->sat);
  free(w->sgiven);
  free(w->bits);
  free(w->head);
  tl__sweep_fast_free(w);
  free(w->asked);
  free(w->asked_at);
  free(w->values);
  free(w);
}

/* Notes how far the midpoint of sum's top bucket moves when the bucket is
 * held at the session's maximum, times its samples (tl_sweep_tail). */
static void clamp_note(tl_sweep *w, const tl_summary *sum) {
  size_t last = sum->hist_len;
  if (sum->nz_at)
    last = sum->nz ? sum->nz_at[sum->nz - 1] + 1 : 0;
  while (last && !sum->hist[last - 1])
    last--;
  if (!last)
    return;
  size_t b = sum->hist_first + last - 1;
  int64_t lo, hi, moved;
  log_bounds(b, &lo, &hi);
  if (b > log_index(sum->max_ns) || lo > sum->max_ns) {
    w->tail_unknown = 1; /* a bucket above the maximum: no midpoint to hold */
    return;
  }
  if (hi <= sum->max_ns)
    return;
  if (!w->gclamp && !(w->gclamp = calloc(LOG_BUCKETS, sizeof *w->gclamp))) {
    w->tail_unknown = 1;
    return;
  }
  int64_t shift = (lo + (sum->max_ns - lo) / 2) - (lo + (hi - lo) / 2);
  if (__builtin_mul_overflow(sum->hist[last - 1], shift, &moved) ||
      __builtin_add_overflow(w->gclamp[b], moved, &w->gclamp[b]))
    w->tail_unknown = 1;
}

/* Pass 1 from a session's summary: its moments, its own percentiles where
 * the summary holds them (located in its histogram otherwise), and its
 * histogram added to the group's. */
int tl__sweep_from_summary(void *arg, size_t s, const tl_summary *sum) {
  tl_sweep *w = arg;
  moments *m = &w->m[s];
  m->count = sum->count;
  m->min = sum->min_ns;
  m->max = sum->max_ns;
  m->sum = sum->sum;
  m->sumsq = sum->sumsq;
  if (!m->count)
    return 0;
  /* A percentile the summary holds takes no target: a fleet's group has
   * hundreds of thousands of sessions, and a target is 150 bytes. */
  for (size_t k = 0; k < w->snp; k++) {
    size_t j = 0;
    while (j < TL_SUMMARY_PCTS && tl_summary_pcts[j] != w->spcts[k])
      j++;
    size_t h =
        j < TL_SUMMARY_PCTS ? SUMMARY_VALUE : target_add(w, s, tl_rank(w->spcts[k], m->count));
    if (h == SIZE_MAX)
      return TL_ENOMEM;
    size_t at = s * w->snp + k;
    w->sat[at] = h == SUMMARY_VALUE ? (uint64_t)sum->pct_ns[j] : h;
    w->sgiven[at] = h == SUMMARY_VALUE;
  }
  locate(w, s, sum->hist, sum->hist_first, sum->hist_len);
  /* Read once: the counts' stores could otherwise be the summary's fields. */
  int64_t *to = w->ghist + sum->hist_first;
  const int64_t *from = sum->hist;
  const uint32_t *nz_at = sum->nz_at;
  size_t nz = sum->nz, len = sum->hist_len;
  if (nz_at)
    for (size_t k = 0; k < nz; k++)
      to[nz_at[k]] += from[nz_at[k]];
  else
    for (size_t b = 0; b < len; b++)
      to[b] += from[b];
  clamp_note(w, sum);
  return 0;
}

int tl__sweep_first_end(tl_sweep *w, int err, tl_sweep_session_cb tap, void *tap_ctx) {
  if (w->store) {
    /* No pass over the samples: a tap sees them in the next pass, which
     * then reads every block. */
    w->tap = tap;
    w->tap_ctx = tap_ctx;
  }
  w->first_done = 1;
  for (size_t s = 0; s < w->ns; s++)
    moments_add(&w->m[w->ns], &w->m[s]);
  if (!err && w->oom)
    err = TL_ENOMEM;
  return err;
}

int tl_sweep_first(tl_sweep *w, tl_sweep_session_cb tap, void *tap_ctx) {
  int err;
  if (w->store) {
    err = tl__store_summaries_threaded(w->store, w->ids, w->ns, tl__sweep_from_summary, w,
                                       TL__SHARE_PACED);
  } else {
    reading r = {
        .wanted = block_wanted, .cb = on_segment, .ctx = w, .tap = tap, .tap_ctx = tap_ctx};
    err = w->source(w->src, &r);
    session_end(w); /* the last session's */
  }
  return tl__sweep_first_end(w, err, tap, tap_ctx);
}

void tl_sweep_dist(const tl_sweep *w, size_t set, tl_dist *out) {
  memset(out, 0, sizeof *out);
  const moments *m = &w->m[set];
  if (!m->count)
    return;
  out->count = m->count;
  out->min_ns = m->min;
  out->max_ns = m->max;
  long double mean = (long double)m->sum / m->count;
  long double var = (long double)m->sumsq / m->count - mean * mean;
  out->mean_ns = (double)mean;
  out->stddev_ns = var > 0 ? sqrt((double)var) : 0.0;
}

int64_t tl_sweep_count(const tl_sweep *w, size_t set) { return w->m[set].count; }

size_t tl_sweep_want(tl_sweep *w, int64_t rank) {
  const moments *g = &w->m[w->ns];
  if (rank < 1 || rank > g->count)
    return SIZE_MAX;
  size_t h = target_add(w, w->ns, rank);
  size_t first = log_index(g->min); /* none below */
  if (h != SIZE_MAX)
    locate(w, w->ns, w->ghist + first, first, log_index(g->max) - first + 1);
  return h;
}

int64_t tl_sweep_bucket_top(const tl_sweep *w, int64_t rank) {
  int64_t cum = 0, lo = 0, hi = 0;
  for (size_t b = 0; b < LOG_BUCKETS; b++) {
    cum += w->ghist[b];
    if (cum >= rank) {
      log_bounds(b, &lo, &hi);
      break;
    }
  }
  return hi < w->m[w->ns].max ? hi : w->m[w->ns].max;
}

int tl_sweep_tail(const tl_sweep *w, int64_t above_ns, int64_t from_ns, int64_t *samples,
                  int64_t *past_ns) {
  *samples = *past_ns = 0;
  const moments *g = &w->m[w->ns];
  if (!w->store || !w->first_done || w->tail_unknown || above_ns < 0)
    return 0;
  if (!g->count || above_ns >= g->max)
    return 1;
  int64_t n = 0, sum = 0;
  for (size_t b = log_index(above_ns) + 1; b <= log_index(g->max); b++) {
    if (!w->ghist[b])
      continue;
    int64_t lo, hi, past;
    log_bounds(b, &lo, &hi);
    if (__builtin_sub_overflow(lo + (hi - lo) / 2, from_ns, &past) ||
        __builtin_mul_overflow(w->ghist[b], past, &past) ||
        __builtin_add_overflow(past, w->gclamp ? w->gclamp[b] : 0, &past) ||
        __builtin_add_overflow(sum, past, &sum))
      return 0;
    n += w->ghist[b];
  }
  *samples = n;
  *past_ns = sum;
  return 1;
}

const int64_t *tl_sweep_hist(const tl_sweep *w, size_t *first, size_t *len) {
  const moments *g = &w->m[w->ns];
  *first = g->count ? log_index(g->min) : 0;
  *len = g->count ? log_index(g->max) - *first + 1 : 0;
  return w->ghist + *first;
}

int tl_sweep_count_values(tl_sweep *w, const size_t *buckets, size_t n) {
  uint64_t need = 0;
  for (size_t i = 0; i < n; i++)
    need += tl__sweep_bucket_width(buckets[i]);
  if (need > VALUES_ASKED_MAX)
    return 0;
  size_t *asked = realloc(w->asked, (n + 1) * sizeof *asked);
  if (asked)
    w->asked = asked;
  uint32_t *at = realloc(w->asked_at, (n + 1) * sizeof *at);
  if (at)
    w->asked_at = at;
  if (!asked || !at) {
    w->oom = 1; /* tl_sweep_finish says so */
    return 1;
  }
  memcpy(w->asked, buckets, n * sizeof *buckets);
  memset(w->asked_at, 0, n * sizeof *at);
  w->nasked = n;
  w->asking = 1;
  return 1;
}

const uint32_t *tl_sweep_values(const tl_sweep *w, size_t bucket) {
  for (size_t i = 0; i < w->nasked && w->values; i++)
    if (w->asked[i] == bucket && w->asked_at[i])
      return w->values + w->asked_at[i];
  return NULL;
}

void tl_sweep_tap(tl_sweep *w, tl_sweep_session_cb tap, void *ctx) {
  w->next_tap = tap;
  w->next_tap_ctx = ctx;
}

/* Sets up w's next pass: *needed 0 when every asked value is known (and
 * nothing else wants a pass), the pass's memory then freed. */
int tl__sweep_pass_begin(tl_sweep *w, int *needed) {
  *needed = 0;
  int err = w->oom ? TL_ENOMEM : TL_OK;
  if (!err && !w->bits) {
    w->bits = calloc(BITMAP_WORDS, sizeof *w->bits);
    w->head = malloc(LOG_BUCKETS * sizeof *w->head);
    if (!w->bits || !w->head)
      err = TL_ENOMEM;
    else
      memset(w->head, 0xff, LOG_BUCKETS * sizeof *w->head);
  }
  size_t open = 0;
  /* The group's few ranges count where counting takes little, even where
   * collecting would take less: they then count in the fast table, and
   * no sample need be picked out for a list. */
  for (size_t set = 0; set <= w->ns && !err; set++)
    if (w->tend[set] > w->tfirst[set])
      open += tl__rank_open_set(&w->t[w->tfirst[set]].r, sizeof *w->t,
                                w->tend[set] - w->tfirst[set], w->tfirst[set], set == w->ns);
  if (!err)
    err = tl__sweep_fast_setup(w);
  for (size_t k = 0; k < w->nt && !err; k++)
    if (tl__sweep_taker(&w->t[k]))
      err = tl__rank_alloc(&w->t[k].r);
  if ((!open && !w->asking && !w->tap && !w->next_tap) || err) {
    for (size_t k = 0; k < w->nt; k++)
      tl__rank_free(&w->t[k].r);
    tl__sweep_fast_free(w);
    return err;
  }
  for (size_t k = w->tfirst[w->ns]; k < w->tend[w->ns]; k++)
    if (tl__sweep_taker(&w->t[k]) && !w->t[k].r.count_lent)
      push(w, k);
  tl__sweep_pick_plan(w);
  w->bits_for = SIZE_MAX;
  *needed = 1;
  return TL_OK;
}

void tl__sweep_pass_reading(tl_sweep *w, reading *r) {
  *r = (reading){.wanted = block_wanted,
                 .cb = on_segment,
                 .ctx = w,
                 .tap = w->next_tap || w->tap ? finish_tap : NULL,
                 .tap_ctx = w};
}

/* After the reading of w's pass, which returned err: what it found. */
int tl__sweep_pass_end(tl_sweep *w, int err) {
  if (w->asking && w->fast && !err)
    err = tl__sweep_values_keep(w);
  w->asking = 0;
  w->tap = w->next_tap = NULL;
  marks_drop(w);
  for (size_t k = w->tfirst[w->ns]; k < w->tend[w->ns]; k++)
    if (tl__sweep_taker(&w->t[k]))
      w->head[log_index(w->t[k].r.lo)] = -1;
  memset(w->bits, 0, BITMAP_WORDS * sizeof *w->bits);
  /* Backwards: a range shared by several targets is narrowed for its taker
   * (the first of them) only after the others read it. */
  for (size_t k = w->nt; k-- > 0 && !err;) {
    target *x = &w->t[k];
    if (!x->r.done)
      err = tl__rank_resolve(&x->r, x->r.same == SIZE_MAX ? &x->r : &w->t[x->r.same].r);
  }
  for (size_t k = 0; k < w->nt; k++)
    tl__rank_free(&w->t[k].r);
  tl__sweep_fast_free(w);
  w->slow = 0;
  w->pick_apart = 0;
  return err;
}

static int sweep_passes(tl_sweep *w) {
  int err, needed;
  while (!(err = tl__sweep_pass_begin(w, &needed)) && needed) {
    reading r;
    tl__sweep_pass_reading(w, &r);
    if ((err = tl__sweep_pass_end(w, w->source(w->src, &r))))
      break;
  }
  return err;
}

/* A pass that counted other samples than the stored summaries promised:
 * a summary that disagrees with its samples (its checksum is right, so
 * only the samples tell) or samples that changed while they were read.
 * tlstore check's comparison finds the session, whose id is then left on
 * the store for tlreport --skip-damaged, and the message says which. */
typedef struct {
  char msg[256];
} first_problem;

static void keep_first(void *ctx, const char *problem) {
  first_problem *p = ctx;
  if (!p->msg[0])
    snprintf(p->msg, sizeof p->msg, "%s", problem);
}

static int64_t session_of_problem(tl_store *s, const char *problem) {
  tl_filter f;
  tl_filter_init(&f);
  tl_session_list list;
  int64_t id = 0;
  if (strncmp(problem, "session ", 8) != 0 || tl_store_sessions(s, &f, &list) != TL_OK)
    return 0;
  for (size_t i = 0; i < list.count && !id; i++)
    if (strncmp(problem + 8, list.items[i].uuid, strlen(list.items[i].uuid)) == 0)
      id = list.items[i].id;
  tl_session_list_free(&list);
  return id;
}

int tl__sweep_explain_disagreement(tl_store *s, size_t sessions) {
  first_problem p = {""};
  int problems = 0;
  if (tl__check_summaries(s, keep_first, &p, &problems) == TL_OK && p.msg[0]) {
    int64_t id = session_of_problem(s, p.msg);
    int err = tl__store_fail(s, TL_ECORRUPT, "%s: %s" TL__CHECK_HINT, s->path, p.msg);
    s->damaged_id = id;
    return err;
  }
  return tl__store_fail(s, TL_ECORRUPT,
                        "%s: the samples of %zu session%s changed while they were read, or "
                        "disagree with their summaries" TL__CHECK_HINT,
                        s->path, sessions, sessions == 1 ? "" : "s");
}

int tl_sweep_finish(tl_sweep *w) {
  if (w->store) /* a failure of the samples' reading leaves its own message */
    w->store->errmsg[0] = '\0';
  int err = sweep_passes(w);
  if (err == TL_ECORRUPT && w->store && !w->store->errmsg[0])
    err = tl__sweep_explain_disagreement(w->store, w->ns);
  return err;
}

int64_t tl_sweep_value(const tl_sweep *w, size_t handle) {
  return handle < w->nt ? w->t[handle].r.value : 0;
}

int64_t tl_sweep_session_value(const tl_sweep *w, size_t session, size_t k) {
  size_t at = session * w->snp + k;
  return w->sgiven[at] ? (int64_t)w->sat[at] : tl_sweep_value(w, (size_t)w->sat[at]);
}

tl_sweep *tl_sweep_store(tl_store *store, const int64_t *session_ids, size_t n,
                         const double *session_pcts, size_t session_np) {
  tl__store_src *s = tl__store_src_open(store, session_ids, n);
  tl_sweep *w = s ? sweep_new(tl__store_src_scan, s, n, session_pcts, session_np) : NULL;
  if (!w)
    tl__store_src_close(s);
  else {
    w->store = store;
    w->ids = session_ids;
  }
  return w;
}

void tl_sweep_close(tl_sweep *w) {
  if (!w)
    return;
  tl__store_src_close(w->src);
  sweep_free(w);
}

/* The group's values at pcts of one sweep into out (at most TL_MAX_PCTS),
 * tap seeing every sample. */
static int sweep_dist(tl_sweep *w, const double *pcts, size_t np, tl_sweep_session_cb tap,
                      void *tap_ctx, tl_dist *out) {
  memset(out, 0, sizeof *out);
  if (np > TL_MAX_PCTS)
    return TL_EINVAL;
  for (size_t k = 0; k < np; k++)
    if (!(pcts[k] >= 0 && pcts[k] <= 100))
      return TL_EINVAL;
  if (!w)
    return TL_ENOMEM;
  int err = tl_sweep_first(w, tap, tap_ctx);
  if (err)
    return err;
  size_t handle[TL_MAX_PCTS];
  int64_t count = tl_sweep_count(w, w->ns);
  for (size_t k = 0; k < np && count; k++)
    if ((handle[k] = tl_sweep_want(w, tl_rank(pcts[k], count))) == SIZE_MAX)
      return TL_ENOMEM;
  if (count && (err = tl_sweep_finish(w)))
    return err;
  tl_sweep_dist(w, w->ns, out);
  out->pct_count = np;
  memcpy(out->pcts, pcts, np * sizeof *pcts);
  for (size_t k = 0; k < np && count; k++)
    out->pct_ns[k] = tl_sweep_value(w, handle[k]);
  return TL_OK;
}

int tl_dist_compute_tap(tl_store *store, const int64_t *session_ids, size_t n, const double *pcts,
                        size_t pct_count, tl_sweep_session_cb tap, void *tap_ctx, tl_dist *out) {
  tl_sweep *w = tl_sweep_store(store, session_ids, n, NULL, 0);
  int err = sweep_dist(w, pcts, pct_count, tap, tap_ctx, out);
  tl_sweep_close(w);
  return err;
}

int tl_dist_compute(tl_store *store, const int64_t *session_ids, size_t n, const double *pcts,
                    size_t pct_count, tl_dist *out) {
  return tl_dist_compute_tap(store, session_ids, n, pcts, pct_count, NULL, NULL, out);
}

typedef struct {
  const int64_t *v;
  size_t n;
} mem_src;

static int scan_mem(void *arg, const reading *r) {
  mem_src *m = arg;
  for (size_t at = 0; at < m->n; at += TL_BLOCK_MAX) {
    size_t k = m->n - at < TL_BLOCK_MAX ? m->n - at : TL_BLOCK_MAX;
    int err = r->cb(r->ctx, 0, m->v + at, k);
    if (!err && r->tap)
      err = r->tap(r->tap_ctx, 0, m->v + at, k);
    if (err)
      return err;
  }
  return TL_OK;
}

int tl_dist_of_values(const int64_t *values, size_t n, const double *pcts, size_t pct_count,
                      tl_dist *out) {
  for (size_t i = 0; i < n; i++)
    if (values[i] < 0) {
      memset(out, 0, sizeof *out);
      return TL_EINVAL;
    }
  mem_src m = {values, n};
  tl_sweep *w = sweep_new(scan_mem, &m, 1, NULL, 0);
  int err = sweep_dist(w, pcts, pct_count, NULL, NULL, out);
  sweep_free(w);
  return err;
}
