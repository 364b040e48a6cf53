/* causes.c: why samples were late, as stored beside them (the migration
 * NNNN_causes.sql): one table, session_causes, with rows of four kinds.
 *
 * Kind 0 holds what the measuring thread read about itself around a
 * session's slowest samples (run-queue wait, involuntary switches, a
 * migration). The collector keeps the slowest 3 per hundred of each piece
 * it stores, because a report explains the tail (the samples above p99)
 * and most samples' causes are zero or tiny. Every sample's causes would
 * cost 3 bytes or more a sample; the kept ones, as unsigned varints (index
 * delta, latency and wait in microseconds, the switches and the migration
 * in one number), cost about 4 bytes each: 0.12 bytes a sample measured.
 * Kind 1 holds the totals over every sample, kind 2 the per-second counters
 * (counters.c in the collector makes them), kind 3 every sample's run-queue
 * wait summed by latency band (tl_cause_band), for the samples above p90:
 * a few hundred bytes a session, whatever its length. Each blob ends with
 * a CRC32C. One table,
 * not three: a SQLite page is 64 KiB here, and every table costs a page in
 * every file. tlstore push sends the rows as they are (pg/pg_push.c), so a
 * report from a server splits the tail as the file's does. */
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

/* ======================================================================== */
/* The compact form                                                          */

enum { CAUSES_VERSION = 1 };

/* ns to whole microseconds, rounded; -1 (not measured) stays apart as 0. */
static uint64_t us_or_none(int64_t ns) { return ns < 0 ? 0 : (uint64_t)((ns + 500) / 1000) + 1; }

int tl_cause_band(int64_t value_ns) {
  uint64_t us = value_ns <= 0 ? 0 : ((uint64_t)value_ns + 500) / 1000;
  if (us < 16)
    return (int)us;
  int octave = 63 - __builtin_clzll(us); /* 4 and up */
  int band = 16 + (octave - 4) * 8 + (int)((us >> (octave - 3)) & 7);
  return band < TL_CAUSE_BANDS ? band : TL_CAUSE_BANDS - 1;
}

void tl_cause_band_bounds(int band, int64_t *lo_ns, int64_t *hi_ns) {
  if (band < 16) {
    *lo_ns = band ? band * INT64_C(1000) - 500 : 0;
    *hi_ns = band * INT64_C(1000) + 500;
    return;
  }
  int octave = 4 + (band - 16) / 8, sub = (band - 16) % 8;
  int64_t lo_us = (int64_t)(8 + sub) << (octave - 3), width = INT64_C(1) << (octave - 3);
  *lo_ns = lo_us * 1000 - 500; /* values round to the microsecond */
  *hi_ns = band == TL_CAUSE_BANDS - 1 ? INT64_MAX : (lo_us + width) * 1000 - 500;
}

size_t tl_causes_bound(size_t n) { return 1 + TL_VARINT_MAX + n * 4 * TL_VARINT_MAX + 4; }

size_t tl_causes_encode(const tl_cause *c, size_t n, uint8_t *out) {
  size_t at = 0;
  out[at++] = CAUSES_VERSION;
  at += tl_varint_put(out + at, n);
  int64_t prev = 0;
  for (size_t i = 0; i < n; i++) {
    at += tl_varint_put(out + at, (uint64_t)(c[i].index - prev));
    prev = c[i].index;
    at += tl_varint_put(out + at, (uint64_t)((c[i].latency_ns + 500) / 1000));
    at += tl_varint_put(out + at, us_or_none(c[i].runq_wait_ns));
    uint64_t sw = c[i].nivcsw < 0 ? 0 : (uint64_t)c[i].nivcsw + 1;
    at += tl_varint_put(out + at, sw << 2 | (uint64_t)(c[i].migrated < 0 ? 0
                                                       : c[i].migrated   ? 2
                                                                         : 1));
  }
  uint32_t crc = tl_crc32c(0, out, at);
  memcpy(out + at, &crc, 4);
  return at + 4;
}

int64_t tl_causes_decode(const uint8_t *data, size_t len, tl_cause *out, size_t max) {
  if (len < 6 || data[0] != CAUSES_VERSION)
    return -1;
  uint32_t crc;
  memcpy(&crc, data + len - 4, 4);
  if (tl_crc32c(0, data, len - 4) != crc)
    return -1;
  const uint8_t *p = data + 1, *end = data + len - 4;
  uint64_t n, idx, lat, runq, sw;
  if (!tl_varint_get(&p, end, &n) || n > max)
    return -1;
  int64_t prev = 0;
  for (uint64_t i = 0; i < n; i++) {
    if (!tl_varint_get(&p, end, &idx) || !tl_varint_get(&p, end, &lat) ||
        !tl_varint_get(&p, end, &runq) || !tl_varint_get(&p, end, &sw) || idx > INT64_MAX / 2 ||
        lat > INT64_MAX / 2000 || runq > INT64_MAX / 2000 || (sw >> 2) > INT32_MAX || (sw & 3) == 3)
      return -1;
    prev += (int64_t)idx;
    out[i] = (tl_cause){prev, (int64_t)lat * 1000, runq ? (int64_t)(runq - 1) * 1000 : -1,
                        (sw >> 2) ? (int32_t)((sw >> 2) - 1) : -1,
                        (sw & 3) ? (int32_t)((sw & 3) - 1) : -1};
  }
  return p == end ? (int64_t)n : -1;
}

/* ======================================================================== */
/* Sums and counters: rows of varints (value + 1, so that -1 is 0)         */

enum { KIND_CAUSES = 0, KIND_SUMS = 1, KIND_COUNTERS = 2, KIND_BANDS = 3, COUNTER_FIELDS = 12 };

static size_t encode_values(const int64_t *v, size_t n, uint8_t *out) {
  size_t at = 0;
  out[at++] = CAUSES_VERSION;
  for (size_t i = 0; i < n; i++)
    at += tl_varint_put(out + at, v[i] < 0 ? 0 : (uint64_t)v[i] + 1);
  uint32_t crc = tl_crc32c(0, out, at);
  memcpy(out + at, &crc, 4);
  return at + 4;
}

/* Exactly n values, or -1. */
static int decode_values(const uint8_t *data, size_t len, int64_t *v, size_t n) {
  if (len < 5 || data[0] != CAUSES_VERSION)
    return -1;
  uint32_t crc;
  memcpy(&crc, data + len - 4, 4);
  if (tl_crc32c(0, data, len - 4) != crc)
    return -1;
  const uint8_t *p = data + 1, *end = data + len - 4;
  for (size_t i = 0; i < n; i++) {
    uint64_t x;
    if (!tl_varint_get(&p, end, &x) || x > INT64_MAX)
      return -1;
    v[i] = (int64_t)x - 1;
  }
  return p == end ? 0 : -1;
}

static void counter_values(const tl_counter_row *r, int64_t *v) {
  const int64_t f[COUNTER_FIELDS] = {r->t_ms,          r->span_ms,      r->steal_ns,
                                     r->irq_ns,        r->softirq_ns,   r->ctxt,
                                     r->procs_running, r->psi_some_us,  r->nr_periods,
                                     r->nr_throttled,  r->throttled_ns, r->freq_khz};
  memcpy(v, f, sizeof f);
}

/* ======================================================================== */
/* Writing                                                                   */

/* A write transaction beside the samples, on a backend that writes them. */
static int write_begin(tl_store *s, size_t bytes, const char *doing) {
  int err = tl__store_can(s, s->ops->write_begin && s->ops->put_cause_row, doing);
  return err ? err : s->ops->write_begin(s, bytes, doing);
}

static int write_end(tl_store *s, int err, const char *doing) {
  return s->ops->write_end ? s->ops->write_end(s, err, doing) : err;
}

/* Calls fn with each row of kind of one session, by first_index. */
static int each_row(tl_store *s, int64_t session_id, int kind, tl__cause_row_cb fn, void *ctx) {
  int err = s->ops->cause_rows(s, &session_id, 1, INT64_C(1) << kind, fn, ctx);
  if (err == TL_ECORRUPT)
    tl__store_fail(s, err, "%s: the causes of session %lld are damaged" TL__CHECK_HINT, s->path,
                   (long long)session_id);
  return err;
}

static int read_sums(void *ctx, size_t index, int kind, int64_t first, int64_t count,
                     const uint8_t *data, size_t len) {
  (void)index;
  (void)kind;
  (void)first;
  (void)count;
  int64_t v[4];
  if (decode_values(data, len, v, 4))
    return TL_ECORRUPT;
  tl_cause_sums *sums = ctx;
  sums->samples = v[0];
  sums->runq_wait_ns = v[1];
  sums->nivcsw = v[2];
  sums->migrations = v[3];
  return TL_OK;
}

/* The bands row: (band, samples, wait in microseconds) for each band with
 * samples, count the number of bands. Adds to sums. */
static int read_bands(void *ctx, size_t index, int kind, int64_t first, int64_t count,
                      const uint8_t *data, size_t len) {
  (void)index;
  (void)kind;
  (void)first;
  tl_cause_sums *sums = ctx;
  if (count <= 0 || count > TL_CAUSE_BANDS)
    return TL_ECORRUPT;
  int64_t v[3 * TL_CAUSE_BANDS];
  if (decode_values(data, len, v, 3 * (size_t)count))
    return TL_ECORRUPT;
  for (int64_t i = 0; i < count; i++) {
    int64_t band = v[3 * i], n = v[3 * i + 1], us = v[3 * i + 2];
    if (band < 0 || band >= TL_CAUSE_BANDS || n < 0 || us < 0 || us > INT64_MAX / 1000)
      return TL_ECORRUPT;
    sums->band_samples[band] += n;
    sums->band_wait_ns[band] += us * 1000;
  }
  return TL_OK;
}

/* Adds sums' bands to the session's bands row. */
static int add_bands(tl_store *s, int64_t session_id, const tl_cause_sums *sums, uint8_t *blob,
                     const char *doing) {
  tl_cause_sums *had = calloc(1, sizeof *had);
  if (!had)
    return tl__store_fail(s, TL_ENOMEM, "out of memory %s", doing);
  int err = each_row(s, session_id, KIND_BANDS, read_bands, had);
  int64_t v[3 * TL_CAUSE_BANDS];
  size_t k = 0;
  for (int b = 0; b < TL_CAUSE_BANDS; b++) {
    int64_t n = had->band_samples[b] + sums->band_samples[b];
    if (!n)
      continue;
    v[k++] = b;
    v[k++] = n;
    v[k++] = (had->band_wait_ns[b] + sums->band_wait_ns[b] + 500) / 1000;
  }
  free(had);
  if (err == TL_OK && k)
    err = s->ops->put_cause_row(s, session_id, KIND_BANDS, 0, (int64_t)(k / 3), blob,
                                encode_values(v, k, blob), doing);
  return err;
}

int tl_store_add_causes(tl_store *s, int64_t session_id, const tl_cause *c, size_t n,
                        const tl_cause_sums *sums) {
  const char *doing = "storing the causes of late samples";
  size_t room = tl_causes_bound(n ? n : 1), bands = 1 + 3 * TL_CAUSE_BANDS * TL_VARINT_MAX + 4;
  uint8_t *blob = malloc(room > bands ? room : bands);
  if (!blob)
    return tl__store_fail(s, TL_ENOMEM, "out of memory %s", doing);
  int err = write_begin(s, n * 8 + 64, doing);
  if (err == TL_OK && n) {
    size_t len = tl_causes_encode(c, n, blob);
    err =
        s->ops->put_cause_row(s, session_id, KIND_CAUSES, c[0].index, (int64_t)n, blob, len, doing);
  }
  if (err == TL_OK && sums && sums->samples) {
    tl_cause_sums had;
    memset(&had, 0, sizeof had);
    err = each_row(s, session_id, KIND_SUMS, read_sums, &had);
    int64_t v[4] = {had.samples + sums->samples, had.runq_wait_ns + sums->runq_wait_ns,
                    had.nivcsw + sums->nivcsw, had.migrations + sums->migrations};
    if (err == TL_OK)
      err = s->ops->put_cause_row(s, session_id, KIND_SUMS, 0, 1, blob, encode_values(v, 4, blob),
                                  doing);
    if (err == TL_OK)
      err = add_bands(s, session_id, sums, blob, doing);
  }
  free(blob);
  return write_end(s, err, doing);
}

int tl_store_set_counters(tl_store *s, int64_t session_id, const tl_counter_row *rows, size_t n) {
  const char *doing = "storing the session's counters";
  uint8_t *blob = malloc(1 + n * COUNTER_FIELDS * TL_VARINT_MAX + 4);
  int64_t *v = malloc((n ? n : 1) * COUNTER_FIELDS * sizeof *v);
  int err = blob && v ? write_begin(s, n * 32 + 64, doing)
                      : tl__store_fail(s, TL_ENOMEM, "out of memory %s", doing);
  if (err == TL_OK) {
    for (size_t i = 0; i < n; i++)
      counter_values(&rows[i], v + i * COUNTER_FIELDS);
    size_t len = encode_values(v, n * COUNTER_FIELDS, blob);
    err = s->ops->put_cause_row(s, session_id, KIND_COUNTERS, 0, (int64_t)n, blob, len, doing);
  }
  free(blob);
  free(v);
  return write_end(s, err, doing);
}

/* ======================================================================== */
/* Reading, many sessions at a time                                          */

typedef struct {
  tl_cause *items;
  size_t n, cap;
} cause_list;

static int read_causes(void *ctx, size_t index, int kind, int64_t first, int64_t count,
                       const uint8_t *data, size_t len) {
  (void)index;
  (void)kind;
  (void)first;
  cause_list *l = ctx;
  if (count <= 0 || (size_t)count > len)
    return TL_ECORRUPT;
  if (l->n + (size_t)count > l->cap) {
    size_t cap = (l->n + (size_t)count) * 2;
    tl_cause *more = realloc(l->items, cap * sizeof *more);
    if (!more)
      return TL_ENOMEM;
    l->items = more;
    l->cap = cap;
  }
  if (tl_causes_decode(data, len, l->items + l->n, (size_t)count) != count)
    return TL_ECORRUPT;
  l->n += (size_t)count;
  return TL_OK;
}

/* A session's counters: one row of them at most. The memory is kept from
 * session to session. */
typedef struct {
  tl_counter_row *rows;
  size_t n, cap;
  int seen;   /* the session's row was read */
  int64_t *v; /* cap * COUNTER_FIELDS values, decoded */
} counter_list;

static int read_counters(void *ctx, size_t index, int kind, int64_t first, int64_t count,
                         const uint8_t *data, size_t len) {
  (void)index;
  (void)kind;
  (void)first;
  counter_list *l = ctx;
  if (count <= 0 || (size_t)count > len || l->seen)
    return TL_ECORRUPT;
  l->seen = 1;
  if ((size_t)count > l->cap) {
    tl_counter_row *rows = realloc(l->rows, (size_t)count * sizeof *rows);
    if (rows)
      l->rows = rows;
    int64_t *v = realloc(l->v, (size_t)count * COUNTER_FIELDS * sizeof *v);
    if (v)
      l->v = v;
    if (!rows || !v)
      return TL_ENOMEM;
    l->cap = (size_t)count;
  }
  if (decode_values(data, len, l->v, (size_t)count * COUNTER_FIELDS))
    return TL_ECORRUPT;
  for (int64_t i = 0; i < count; i++) {
    const int64_t *f = l->v + i * COUNTER_FIELDS;
    l->rows[i] =
        (tl_counter_row){f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10], f[11]};
  }
  l->n = (size_t)count;
  return TL_OK;
}

/* A read of many sessions' rows (causes or counters): the rows of the
 * session at `at` gather here, and it is handed over when a later one's
 * rows come, or the read ends; a session without rows is handed over
 * empty. A damaged row makes its session damaged, not the read. */
typedef struct {
  tl_store *s;
  const int64_t *ids;
  size_t at;
  int bad; /* TL_ECORRUPT: a row of the session at `at` is damaged */
  cause_list causes;
  tl_cause_sums *sums; /* 5 KiB: cleared after a session that wrote in it */
  int sums_used;
  counter_list counters;
  tl_causes_cb on_causes; /* one of the two */
  tl_counters_cb on_counters;
  void *ctx;
} batch;

static int hand_over(batch *b) {
  if (b->bad) {
    tl__store_fail(b->s, b->bad, "%s: the causes of session %lld are damaged" TL__CHECK_HINT,
                   b->s->path, (long long)b->ids[b->at]);
    b->causes.n = b->counters.n = 0;
    memset(b->sums, 0, sizeof *b->sums);
  }
  int err = b->on_causes
                ? b->on_causes(b->ctx, b->at, b->bad, b->causes.items, b->causes.n, b->sums)
                : b->on_counters(b->ctx, b->at, b->bad, b->counters.rows, b->counters.n);
  b->causes.n = b->counters.n = 0;
  b->counters.seen = 0;
  if (b->sums_used) /* a fleet's sessions mostly have no causes: nothing to clear */
    memset(b->sums, 0, sizeof *b->sums);
  b->sums_used = 0;
  b->bad = TL_OK;
  b->at++;
  return err;
}

/* Hands over every session before index. */
static int hand_over_to(batch *b, size_t index) {
  int err = TL_OK;
  while (err == TL_OK && b->at < index)
    err = hand_over(b);
  return err;
}

static int batch_row(void *ctx, size_t index, int kind, int64_t first, int64_t count,
                     const uint8_t *data, size_t len) {
  batch *b = ctx;
  int err = index < b->at
                ? tl__store_fail(b->s, TL_ECORRUPT, "%s: causes read out of order", b->s->path)
                : hand_over_to(b, index);
  if (err || b->bad)
    return err;
  b->sums_used |= kind == KIND_SUMS || kind == KIND_BANDS;
  if (kind == KIND_SUMS)
    err = read_sums(b->sums, index, kind, first, count, data, len);
  else if (kind == KIND_BANDS)
    err = read_bands(b->sums, index, kind, first, count, data, len);
  else if (kind == KIND_CAUSES)
    err = read_causes(&b->causes, index, kind, first, count, data, len);
  else if (kind == KIND_COUNTERS)
    err = read_counters(&b->counters, index, kind, first, count, data, len);
  if (err == TL_ECORRUPT) {
    b->bad = err;
    err = TL_OK;
  }
  return err;
}

static int read_batch(batch *b, const int64_t *ids, size_t n, int64_t kinds, const char *what) {
  b->ids = ids;
  b->sums = calloc(1, sizeof *b->sums);
  int err = b->sums ? b->s->ops->cause_rows(b->s, ids, n, kinds, batch_row, b) : TL_ENOMEM;
  if (err == TL_OK)
    err = hand_over_to(b, n);
  if (err == TL_ENOMEM)
    tl__store_fail(b->s, err, "out of memory reading %s", what);
  free(b->sums);
  free(b->causes.items);
  free(b->counters.rows);
  free(b->counters.v);
  return err;
}

int tl_store_causes_of(tl_store *s, const int64_t *ids, size_t n, tl_causes_cb fn, void *ctx) {
  batch b = {.s = s, .on_causes = fn, .ctx = ctx};
  return read_batch(&b, ids, n, 1 << KIND_CAUSES | 1 << KIND_SUMS | 1 << KIND_BANDS, "causes");
}

int tl_store_counters_of(tl_store *s, const int64_t *ids, size_t n, tl_counters_cb fn, void *ctx) {
  batch b = {.s = s, .on_counters = fn, .ctx = ctx};
  return read_batch(&b, ids, n, 1 << KIND_COUNTERS, "counters");
}

/* ======================================================================== */
/* Reading one session                                                       */

typedef struct {
  void *items; /* a copy, malloc'd; NULL when none */
  size_t n;
  tl_cause_sums *sums;
} one_read;

static int copy_out(one_read *o, const void *items, size_t n, size_t size) {
  o->n = n;
  if (!n)
    return TL_OK;
  if (!(o->items = malloc(n * size)))
    return TL_ENOMEM;
  memcpy(o->items, items, n * size);
  return TL_OK;
}

static int one_causes(void *ctx, size_t index, int err, const tl_cause *c, size_t n,
                      const tl_cause_sums *sums) {
  (void)index;
  one_read *o = ctx;
  memcpy(o->sums, sums, sizeof *sums);
  return err ? err : copy_out(o, c, n, sizeof *c);
}

static int one_counters(void *ctx, size_t index, int err, const tl_counter_row *rows, size_t n) {
  (void)index;
  return err ? err : copy_out(ctx, rows, n, sizeof *rows);
}

/* Ends a read of one session: a failed read hands over nothing. */
static int one_done(int err, one_read *o, void **out, size_t *n) {
  if (err) {
    free(o->items);
    o->items = NULL;
    o->n = 0;
  }
  *out = o->items;
  *n = o->n;
  return err;
}

int tl_store_causes(tl_store *s, int64_t session_id, tl_cause **out, size_t *n,
                    tl_cause_sums *sums) {
  memset(sums, 0, sizeof *sums);
  one_read o = {NULL, 0, sums};
  int err = tl_store_causes_of(s, &session_id, 1, one_causes, &o);
  if (err)
    memset(sums, 0, sizeof *sums);
  void *items;
  err = one_done(err, &o, &items, n);
  *out = items;
  return err;
}

int tl_store_counters(tl_store *s, int64_t session_id, tl_counter_row **out, size_t *n) {
  one_read o = {NULL, 0, NULL};
  void *items;
  int err = one_done(tl_store_counters_of(s, &session_id, 1, one_counters, &o), &o, &items, n);
  *out = items;
  return err;
}
