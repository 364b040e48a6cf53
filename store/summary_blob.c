/* summary_blob.c: a session summary's stored form (docs/schema.md,
 * "Session summaries"). Version 2, written since: a version byte, the
 * layout, the histogram's two code orders, a CRC32C, then varints of the
 * count, extremes, sums and percentiles (each above the last), then the
 * histogram's non-empty buckets as a bit stream of Exp-Golomb codes of their
 * gaps and counts: about a third of version 1's bytes for a session of 1,000
 * samples, whose summary cost a quarter as much as its samples. Version 1
 * (fixed 8-byte fields, varint gaps and counts) is read forever. Decoding
 * verifies all of it. */
#include <stdlib.h>
#include <string.h>

#include "summary_internal.h"

enum {
  HEAD = 8,                         /* version, layout, levels, orders, CRC32C */
  V1_FIXED = HEAD + 3 * 8 + 2 * 16, /* + count, min, max, sum, sumsq */
  V1_LEVELS = V1_FIXED + TL_SUMMARY_PCTS * 8,
  ORDER_MAX = 15, /* an Exp-Golomb order fits in 4 bits */
};

static uint64_t get64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static uint32_t checksum(const uint8_t *blob, size_t len) {
  return tl_crc32c(tl_crc32c(0, blob, 4), blob + HEAD, len - HEAD);
}

/* ======================================================================== */
/* Exp-Golomb codes, most significant bit first                              */

/* Order k codes v >= 0 as w = v + 2^k in its n bits after n - k - 1 zero
 * bits: small values (a gap of one bucket, a count of one) take k + 1 bits,
 * and a rare large one grows only with twice its bit length. */
typedef struct {
  uint8_t *out;
  size_t at;    /* bytes written */
  uint64_t acc; /* pending bits, the latest lowest */
  int n;        /* how many */
} bit_writer;

static void put_bits(bit_writer *w, uint64_t v, int n) {
  if (n > 32) {
    put_bits(w, v >> 32, n - 32);
    n = 32;
    v &= 0xffffffffu;
  }
  w->acc = (w->acc << n) | v;
  w->n += n;
  while (w->n >= 8) {
    w->n -= 8;
    w->out[w->at++] = (uint8_t)(w->acc >> w->n);
  }
}

static void flush_bits(bit_writer *w) {
  if (w->n)
    w->out[w->at++] = (uint8_t)(w->acc << (8 - w->n));
  w->n = 0;
}

static int bit_length(uint64_t v) { return v ? 64 - __builtin_clzll(v) : 0; }

/* v + 2^k, as 65 bits when it carries out of 64: only a count near 2^64,
 * which no session has, but the code stays total. */
static int eg_bits(uint64_t v, int k) {
  uint64_t w = v + (1ULL << k);
  int n = w < v ? 65 : bit_length(w);
  return 2 * n - k - 1;
}

static void put_eg(bit_writer *w, uint64_t v, int k) {
  uint64_t x = v + (1ULL << k);
  int n = x < v ? 65 : bit_length(x);
  put_bits(w, 0, n - k - 1 > 32 ? 32 : n - k - 1);
  if (n - k - 1 > 32)
    put_bits(w, 0, n - k - 1 - 32);
  if (n == 65) {
    put_bits(w, 1, 1);
    n = 64;
  }
  put_bits(w, x, n);
}

typedef struct {
  const uint8_t *p;
  size_t len;  /* bytes */
  uint64_t at; /* bits read */
} bit_reader;

/* The next 57 bits or more, topmost first; zero past the end. */
static inline uint64_t peek_bits(const bit_reader *r) {
  uint64_t v = 0;
  size_t byte = (size_t)(r->at / 8);
  if (byte + 8 <= r->len) {
    memcpy(&v, r->p + byte, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap64(v);
#endif
  } else {
    for (size_t i = 0; i < 8; i++)
      v = v << 8 | (byte + i < r->len ? r->p[byte + i] : 0);
  }
  return v << (r->at % 8);
}

static uint64_t get_bits(bit_reader *r, int n) {
  if (n > 32) {
    uint64_t hi = get_bits(r, n - 32);
    return hi << 32 | get_bits(r, 32);
  }
  uint64_t v = n ? peek_bits(r) >> (64 - n) : 0;
  r->at += (uint64_t)n;
  return v;
}

/* 0 when the code runs past the end or holds no 64-bit value. */
static int get_eg(bit_reader *r, int k, uint64_t *v) {
  /* Most codes are short: read from one window. */
  uint64_t w = peek_bits(r);
  int z = w ? __builtin_clzll(w) : 64, n = z + k + 1;
  if (z + n <= 57) {
    r->at += (uint64_t)(z + n);
    *v = ((w << z) >> (64 - n)) - (1ULL << k);
    return r->at <= (uint64_t)r->len * 8;
  }
  int zeros = 0;
  for (;;) {
    uint64_t next = peek_bits(r);
    int lead = next ? __builtin_clzll(next) : 57;
    zeros += lead;
    r->at += (uint64_t)lead;
    if (next || zeros > 64 || r->at > (uint64_t)r->len * 8)
      break;
  }
  n = zeros + k + 1;
  if (n > 65 || r->at + (uint64_t)n > (uint64_t)r->len * 8)
    return 0;
  uint64_t top = n == 65 ? get_bits(r, 1) : 0, x = get_bits(r, n == 65 ? 64 : n);
  /* x - 2^k, with the 65th bit (top) carrying. */
  if (top ? x >= (1ULL << k) : x < (1ULL << k))
    return 0;
  *v = x - (1ULL << k);
  return 1;
}

/* ======================================================================== */
/* Writing (version 2)                                                       */

/* The orders of the gaps' and the counts' codes that take the fewest bits
 * (one pass, every order at once); the number of non-empty buckets. */
static size_t best_orders(const tl_summary *m, int *kg, int *kc) {
  size_t gap_bits[ORDER_MAX + 1] = {0}, count_bits[ORDER_MAX + 1] = {0}, nz = 0, prev = 0;
  for (size_t b = 0; b < m->hist_len; b++) {
    if (!m->hist[b])
      continue;
    for (int k = 0; k <= ORDER_MAX; k++) {
      if (nz)
        gap_bits[k] += (size_t)eg_bits(b - prev - 1, k);
      count_bits[k] += (size_t)eg_bits((uint64_t)m->hist[b] - 1, k);
    }
    nz++;
    prev = b;
  }
  *kg = *kc = 0;
  for (int k = 1; k <= ORDER_MAX; k++) {
    *kg = gap_bits[k] < gap_bits[*kg] ? k : *kg;
    *kc = count_bits[k] < count_bits[*kc] ? k : *kc;
  }
  return nz;
}

size_t tl__summary_bound(const tl_summary *m) {
  size_t nz = 0;
  for (size_t b = 0; b < m->hist_len; b++)
    nz += m->hist[b] != 0;
  /* Varints of TL_VARINT_MAX bytes at most, two codes of 17 bytes at most a bucket. */
  return HEAD + TL_VARINT_MAX * (4 + 2 * 2 + TL_SUMMARY_PCTS) + 34 * nz + 8;
}

static size_t put_u128(uint8_t *out, unsigned __int128 v) {
  size_t n = tl_varint_put(out, (uint64_t)v);
  return n + tl_varint_put(out + n, (uint64_t)(v >> 64));
}

size_t tl__summary_encode(const tl_summary *m, uint8_t *out) {
  int kg, kc;
  size_t nz = best_orders(m, &kg, &kc);
  out[0] = TL_SUMMARY_VERSION;
  out[1] = TL_SUMMARY_SUB_BITS;
  out[2] = TL_SUMMARY_PCTS;
  out[3] = (uint8_t)(kg | kc << 4);
  size_t at = HEAD;
  at += tl_varint_put(out + at, (uint64_t)m->count);
  at += tl_varint_put(out + at, (uint64_t)m->min_ns);
  at += tl_varint_put(out + at, (uint64_t)(m->max_ns - m->min_ns));
  at += put_u128(out + at, m->sum);
  at += put_u128(out + at, m->sumsq);
  for (size_t k = 0; k < TL_SUMMARY_PCTS; k++)
    at += tl_varint_put(out + at, (uint64_t)(m->pct_ns[k] - (k ? m->pct_ns[k - 1] : m->min_ns)));
  at += tl_varint_put(out + at, nz);
  bit_writer w = {out, at, 0, 0};
  for (size_t b = 0, prev = 0, i = 0; b < m->hist_len; b++) {
    if (!m->hist[b])
      continue;
    if (i++)
      put_eg(&w, b - prev - 1, kg);
    put_eg(&w, (uint64_t)m->hist[b] - 1, kc);
    prev = b;
  }
  flush_bits(&w);
  uint32_t crc = checksum(out, w.at);
  for (int i = 0; i < 4; i++)
    out[4 + i] = (uint8_t)(crc >> (8 * i));
  return w.at;
}

/* ======================================================================== */
/* Reading (versions 1 and 2)                                                */

/* Count, extremes and percentiles that can be a session's: in order,
 * between its extremes, all 0 for no samples. */
static int possible(const tl_summary *m) {
  if (m->count < 0 || m->min_ns < 0 || m->max_ns < m->min_ns)
    return 0;
  for (size_t k = 0; k < TL_SUMMARY_PCTS; k++)
    if (m->count ? m->pct_ns[k] < (k ? m->pct_ns[k - 1] : m->min_ns) || m->pct_ns[k] > m->max_ns
                 : m->pct_ns[k] != 0)
      return 0;
  return 1;
}

/* Lays out m's histogram in hist, from min_ns's bucket to max_ns's: cleared
 * first, unless nz_at is to list the buckets written (hist is then all
 * zeros already). */
static void histogram_span(tl_summary *m, int64_t *hist, uint32_t *nz_at) {
  m->hist = hist;
  m->nz_at = nz_at;
  if (!m->count)
    return;
  m->hist_first = tl_summary_bucket(m->min_ns);
  m->hist_len = tl_summary_bucket(m->max_ns) - m->hist_first + 1;
  if (!nz_at)
    memset(hist, 0, m->hist_len * sizeof *hist);
}

/* tl_varint_get, with the one- and two-byte forms (most of a summary's
 * numbers) read in line. */
static inline int varint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
  const uint8_t *q = *p;
  if (end - q >= 2 && q[0] < 0x80) {
    *v = q[0];
    *p = q + 1;
    return 1;
  }
  if (end - q >= 2 && q[1] < 0x80 && q[1]) {
    *v = (uint64_t)(q[0] & 0x7f) | (uint64_t)q[1] << 7;
    *p = q + 2;
    return 1;
  }
  return tl_varint_get(p, end, v);
}

/* Version 1's nz buckets: varints of each one's gap after the last (none
 * before the first, the span's) and of its samples, each bucket not past the
 * maximum's and no more samples than the count. The sizes are held in locals:
 * a store to hist may alias m's, which would be read again every bucket. */
static int v1_buckets(const uint8_t **pp, const uint8_t *end, uint64_t nz, tl_summary *m,
                      int64_t *hist, uint32_t *nz_at, uint64_t *at_out, uint64_t *total_out) {
  const uint8_t *p = *pp;
  const uint64_t len = m->hist_len, count = (uint64_t)m->count;
  uint64_t at = 0, total = 0;
  size_t written = 0;
  int ok = 1;
  for (uint64_t i = 0; i < nz && ok; i++) {
    uint64_t gap, c;
    ok = varint(&p, end, &gap) && varint(&p, end, &c) && (i ? gap : !gap) && c &&
         c <= count - total && gap < len && at + gap < len;
    if (!ok)
      break;
    at += gap;
    hist[at] = (int64_t)c;
    if (nz_at)
      nz_at[written++] = (uint32_t)at;
    total += c;
  }
  m->nz = written;
  *pp = p;
  *at_out = at;
  *total_out = total;
  return ok;
}

static int decode_v1(const uint8_t *blob, size_t len, int64_t *hist, uint32_t *nz_at, tl_summary *m,
                     const char **why) {
  *why = "too short";
  if (len < V1_LEVELS + 4)
    return TL_ECORRUPT;
  *why = "impossible values";
  m->count = (int64_t)get64(blob + 8);
  m->min_ns = (int64_t)get64(blob + 16);
  m->max_ns = (int64_t)get64(blob + 24);
  m->sum = (unsigned __int128)get64(blob + 40) << 64 | get64(blob + 32);
  m->sumsq = (unsigned __int128)get64(blob + 56) << 64 | get64(blob + 48);
  for (size_t k = 0; k < TL_SUMMARY_PCTS; k++)
    m->pct_ns[k] = (int64_t)get64(blob + V1_FIXED + 8 * k);
  if (!possible(m))
    return TL_ECORRUPT;
  const uint8_t *p = blob + V1_LEVELS + 4, *end = blob + len;
  uint64_t nz = (uint64_t)blob[V1_LEVELS] | (uint64_t)blob[V1_LEVELS + 1] << 8 |
                (uint64_t)blob[V1_LEVELS + 2] << 16 | (uint64_t)blob[V1_LEVELS + 3] << 24;
  *why = "bad histogram";
  histogram_span(m, hist, nz_at);
  if (!m->count)
    return nz == 0 && p == end && m->min_ns == 0 && m->max_ns == 0 ? TL_OK : TL_ECORRUPT;
  uint64_t at = 0, total = 0;
  if (!v1_buckets(&p, end, nz, m, hist, nz_at, &at, &total))
    return TL_ECORRUPT;
  return p == end && total == (uint64_t)m->count && at == m->hist_len - 1 ? TL_OK : TL_ECORRUPT;
}

/* The next varint as a non-negative int64 no larger than max. */
static int get_upto(const uint8_t **p, const uint8_t *end, uint64_t max, int64_t *out) {
  uint64_t v;
  if (!varint(p, end, &v) || v > max)
    return 0;
  *out = (int64_t)v;
  return 1;
}

static int get_u128(const uint8_t **p, const uint8_t *end, unsigned __int128 *out) {
  uint64_t lo, hi;
  if (!varint(p, end, &lo) || !varint(p, end, &hi))
    return 0;
  *out = (unsigned __int128)hi << 64 | lo;
  return 1;
}

/* Count, extremes, sums and percentiles: the varints of version 2. */
static int v2_numbers(const uint8_t **p, const uint8_t *end, tl_summary *m) {
  int64_t span;
  if (!get_upto(p, end, INT64_MAX, &m->count) || !get_upto(p, end, INT64_MAX, &m->min_ns) ||
      !get_upto(p, end, (uint64_t)(INT64_MAX - m->min_ns), &span) || !get_u128(p, end, &m->sum) ||
      !get_u128(p, end, &m->sumsq))
    return 0;
  m->max_ns = m->min_ns + span;
  int64_t prev = m->min_ns, step;
  for (size_t k = 0; k < TL_SUMMARY_PCTS; k++) {
    if (!get_upto(p, end, (uint64_t)(m->max_ns - prev), &step))
      return 0;
    prev = m->pct_ns[k] = prev + step;
  }
  return 1;
}

/* A window of the stream: w holds the bits from r->at on, topmost first,
 * of which the first `got` are read and shifted out; 57 of them were read
 * from the stream, the rest are zeros. */
typedef struct {
  uint64_t w;
  int got;
} window;

static inline void window_load(bit_reader *r, window *x) {
  r->at += (uint64_t)x->got;
  x->w = peek_bits(r);
  x->got = 0;
}

/* The next code of order k from the window, when it lies there whole.
 * Always in line: each build of histogram_codes has its own. */
static inline __attribute__((always_inline)) int window_eg(window *x, int k, uint64_t *v) {
  int z = x->w ? __builtin_clzll(x->w) : 64, n = z + k + 1;
  if (x->got + z + n > 57)
    return 0;
  *v = ((x->w << z) >> (64 - n)) - (1ULL << k);
  x->w <<= z + n;
  x->got += z + n;
  return 1;
}

/* The next code of order k, from the window, from the next one, or (a long
 * code) by get_eg; 0 when there is none. */
static inline __attribute__((always_inline)) int next_eg(bit_reader *r, window *x, int k,
                                                         uint64_t *v) {
  if (window_eg(x, k, v))
    return 1;
  window_load(r, x);
  if (window_eg(x, k, v))
    return 1;
  int ok = get_eg(r, k, v);
  window_load(r, x);
  return ok;
}

/* The histogram's nz buckets from their codes, read a window of 57 bits at
 * a time (a few codes each) without a check a code: one that runs past the
 * end reads zeros, and the end's check (a whole number of bytes read)
 * fails. */
static inline __attribute__((always_inline)) int histogram_codes_in(bit_reader *r, int kg, int kc,
                                                                    uint64_t nz, tl_summary *m,
                                                                    int64_t *hist, uint32_t *nz_at,
                                                                    uint64_t *at, uint64_t *total) {
  const uint64_t len = m->hist_len;
  uint64_t b = 0, left = (uint64_t)m->count, gap, c;
  size_t found = m->nz; /* m->nz in a register: a store to hist could be one to m */
  window x = {0, 0};
  window_load(r, &x);
  /* The first bucket is the first of the span: a count, no gap. */
  if (!next_eg(r, &x, kc, &c) || c >= left)
    return 0;
  hist[0] = (int64_t)(c + 1);
  left -= c + 1;
  if (nz_at)
    nz_at[found++] = 0;
  for (uint64_t i = 1; i < nz; i++) {
    if (!next_eg(r, &x, kg, &gap) || !next_eg(r, &x, kc, &c))
      return 0;
    /* Past the last bucket, or more samples than are left. */
    if (gap >= len - b - 1 || c >= left)
      return 0;
    b += gap + 1;
    hist[b] = (int64_t)(c + 1);
    left -= c + 1;
    if (nz_at)
      nz_at[found++] = (uint32_t)b;
  }
  m->nz = found;
  r->at += (uint64_t)x.got;
  *at = b;
  *total = (uint64_t)m->count - left;
  return 1;
}

static int histogram_codes_plain(bit_reader *r, int kg, int kc, uint64_t nz, tl_summary *m,
                                 int64_t *hist, uint32_t *nz_at, uint64_t *at, uint64_t *total) {
  return histogram_codes_in(r, kg, kc, nz, m, hist, nz_at, at, total);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* The same built for LZCNT (cpu.c): each code's leading zeros lie on the
 * chain from one code to the next, and the baseline's BSR took a third of
 * decoding a fleet session's summary. */
__attribute__((target("lzcnt"))) static int histogram_codes_lzcnt(bit_reader *r, int kg, int kc,
                                                                  uint64_t nz, tl_summary *m,
                                                                  int64_t *hist, uint32_t *nz_at,
                                                                  uint64_t *at, uint64_t *total) {
  return histogram_codes_in(r, kg, kc, nz, m, hist, nz_at, at, total);
}
#define HAVE_LZCNT_BUILD 1
#endif

static int histogram_codes(bit_reader *r, int kg, int kc, uint64_t nz, tl_summary *m, int64_t *hist,
                           uint32_t *nz_at, uint64_t *at, uint64_t *total) {
#ifdef HAVE_LZCNT_BUILD
  if (tl__cpu_features() & TL__CPU_LZCNT)
    return histogram_codes_lzcnt(r, kg, kc, nz, m, hist, nz_at, at, total);
#endif
  return histogram_codes_plain(r, kg, kc, nz, m, hist, nz_at, at, total);
}

static int decode_v2(const uint8_t *blob, size_t len, int64_t *hist, uint32_t *nz_at, tl_summary *m,
                     const char **why) {
  const uint8_t *p = blob + HEAD, *end = blob + len;
  int kg = blob[3] & 15, kc = blob[3] >> 4;
  uint64_t nz;
  *why = "impossible values";
  if (!v2_numbers(&p, end, m) || !varint(&p, end, &nz))
    return TL_ECORRUPT;
  if (m->count == 0 && (m->min_ns || m->max_ns))
    return TL_ECORRUPT;
  for (size_t k = 0; k < TL_SUMMARY_PCTS && !m->count; k++)
    if (m->pct_ns[k])
      return TL_ECORRUPT;
  *why = "bad histogram";
  histogram_span(m, hist, nz_at);
  if (!m->count)
    return nz == 0 && p == end ? TL_OK : TL_ECORRUPT;
  if (nz == 0 || nz > m->hist_len)
    return TL_ECORRUPT;
  bit_reader r = {p, (size_t)(end - p), 0};
  uint64_t at = 0, total = 0;
  if (!histogram_codes(&r, kg, kc, nz, m, hist, nz_at, &at, &total))
    return TL_ECORRUPT;
  /* Nothing after the codes but the last byte's zero bits. */
  if ((r.at + 7) / 8 != r.len || (r.at % 8 && (p[r.len - 1] & (0xff >> (r.at % 8)))))
    return TL_ECORRUPT;
  return total == (uint64_t)m->count && at == m->hist_len - 1 ? TL_OK : TL_ECORRUPT;
}

static int decode(const uint8_t *blob, size_t len, int64_t *hist, uint32_t *nz_at, tl_summary *m,
                  const char **why) {
  memset(m, 0, sizeof *m);
  m->hist = hist;
  *why = "too short";
  if (len < HEAD)
    return TL_ECORRUPT;
  *why = "unknown summary version";
  if ((blob[0] != 1 && blob[0] != 2) || blob[1] != TL_SUMMARY_SUB_BITS ||
      blob[2] != TL_SUMMARY_PCTS || (blob[0] == 1 && blob[3] != 0))
    return TL_ECORRUPT;
  *why = "checksum mismatch";
  uint32_t crc = (uint32_t)blob[4] | (uint32_t)blob[5] << 8 | (uint32_t)blob[6] << 16 |
                 (uint32_t)blob[7] << 24;
  if (crc != checksum(blob, len))
    return TL_ECORRUPT;
  int err = blob[0] == 1 ? decode_v1(blob, len, hist, nz_at, m, why)
                         : decode_v2(blob, len, hist, nz_at, m, why);
  if (err == TL_OK && !possible(m)) {
    *why = "impossible values";
    err = TL_ECORRUPT;
  }
  return err;
}

int tl__summary_decode(const uint8_t *blob, size_t len, int64_t *hist, tl_summary *m,
                       const char **why) {
  return decode(blob, len, hist, NULL, m, why);
}

int tl__summary_decode_sparse(const uint8_t *blob, size_t len, int64_t *hist, uint32_t *nz_at,
                              tl_summary *m, const char **why) {
  return decode(blob, len, hist, nz_at, m, why);
}

int tl__summary_equal(const tl_summary *a, const tl_summary *b) {
  if (a->count != b->count || a->min_ns != b->min_ns || a->max_ns != b->max_ns ||
      a->sum != b->sum || a->sumsq != b->sumsq || a->hist_first != b->hist_first ||
      a->hist_len != b->hist_len)
    return 0;
  for (size_t k = 0; k < TL_SUMMARY_PCTS; k++)
    if (a->pct_ns[k] != b->pct_ns[k])
      return 0;
  return a->hist_len == 0 || memcmp(a->hist, b->hist, a->hist_len * sizeof *a->hist) == 0;
}
