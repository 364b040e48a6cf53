/* summary_blob.c: a session summary's stored form (docs/schema.md,
 * "Session summaries"): a version byte, the layout, a CRC32C, the count,
 * extremes, sums and percentiles, and the histogram's non-empty buckets as
 * varints of their gaps and counts. Decoding verifies all of it. */
#include <stdlib.h>
#include <string.h>

#include "summary_internal.h"

enum {
  HEAD = 8,                      /* version, layout, levels, 0, CRC32C */
  FIXED = HEAD + 3 * 8 + 2 * 16, /* + count, min, max, sum, sumsq */
  LEVELS = FIXED + TL_SUMMARY_PCTS * 8,
};

static void put64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static uint32_t checksum(const uint8_t *blob, size_t len) {
  return tl_crc32c(tl_crc32c(0, blob, 4), blob + HEAD, len - HEAD);
}

size_t tl__summary_bound(const tl_summary *m) {
  size_t nz = 0;
  for (size_t b = 0; b < m->hist_len; b++)
    nz += m->hist[b] != 0;
  return LEVELS + 8 + nz * 20;
}

size_t tl__summary_encode(const tl_summary *m, uint8_t *out) {
  out[0] = TL_SUMMARY_VERSION;
  out[1] = TL_SUMMARY_SUB_BITS;
  out[2] = TL_SUMMARY_PCTS;
  out[3] = 0;
  put64(out + 8, (uint64_t)m->count);
  put64(out + 16, (uint64_t)m->min_ns);
  put64(out + 24, (uint64_t)m->max_ns);
  put64(out + 32, (uint64_t)m->sum);
  put64(out + 40, (uint64_t)(m->sum >> 64));
  put64(out + 48, (uint64_t)m->sumsq);
  put64(out + 56, (uint64_t)(m->sumsq >> 64));
  for (size_t k = 0; k < TL_SUMMARY_PCTS; k++)
    put64(out + FIXED + 8 * k, (uint64_t)m->pct_ns[k]);
  size_t at = LEVELS, nz = 0;
  uint8_t *count_at = out + at;
  at += 4;
  size_t prev = m->hist_first;
  for (size_t b = 0; b < m->hist_len; b++) {
    if (!m->hist[b])
      continue;
    nz++;
    at += tl__varint_put(out + at, m->hist_first + b - prev);
    at += tl__varint_put(out + at, (uint64_t)m->hist[b]);
    prev = m->hist_first + b;
  }
  for (int i = 0; i < 4; i++)
    count_at[i] = (uint8_t)(nz >> (8 * i));
  uint32_t crc = checksum(out, at);
  for (int i = 0; i < 4; i++)
    out[4 + i] = (uint8_t)(crc >> (8 * i));
  return at;
}

int tl__summary_decode(const uint8_t *blob, size_t len, int64_t *hist, tl_summary *m,
                       const char **why) {
  memset(m, 0, sizeof *m);
  *why = "too short";
  if (len < LEVELS + 4)
    return TL_ECORRUPT;
  *why = "unknown summary version";
  if (blob[0] != TL_SUMMARY_VERSION || blob[1] != TL_SUMMARY_SUB_BITS ||
      blob[2] != TL_SUMMARY_PCTS || blob[3] != 0)
    return TL_ECORRUPT;
  *why = "checksum mismatch";
  uint32_t crc = (uint32_t)blob[4] | (uint32_t)blob[5] << 8 | (uint32_t)blob[6] << 16 |
                 (uint32_t)blob[7] << 24;
  if (crc != checksum(blob, len))
    return TL_ECORRUPT;
  *why = "impossible values";
  m->count = (int64_t)get64(blob + 8);
  m->min_ns = (int64_t)get64(blob + 16);
  m->max_ns = (int64_t)get64(blob + 24);
  m->sum = (unsigned __int128)get64(blob + 40) << 64 | get64(blob + 32);
  m->sumsq = (unsigned __int128)get64(blob + 56) << 64 | get64(blob + 48);
  for (size_t k = 0; k < TL_SUMMARY_PCTS; k++)
    m->pct_ns[k] = (int64_t)get64(blob + FIXED + 8 * k);
  if (m->count < 0 || m->min_ns < 0 || m->max_ns < m->min_ns)
    return TL_ECORRUPT;
  for (size_t k = 0; k < TL_SUMMARY_PCTS; k++)
    if (m->count ? m->pct_ns[k] < (k ? m->pct_ns[k - 1] : m->min_ns) || m->pct_ns[k] > m->max_ns
                 : m->pct_ns[k] != 0)
      return TL_ECORRUPT;
  const uint8_t *p = blob + LEVELS + 4, *end = blob + len;
  uint64_t nz = (uint64_t)blob[LEVELS] | (uint64_t)blob[LEVELS + 1] << 8 |
                (uint64_t)blob[LEVELS + 2] << 16 | (uint64_t)blob[LEVELS + 3] << 24;
  *why = "bad histogram";
  if (!m->count) {
    m->hist = hist;
    return nz == 0 && p == end && m->min_ns == 0 && m->max_ns == 0 ? TL_OK : TL_ECORRUPT;
  }
  m->hist_first = tl_summary_bucket(m->min_ns);
  m->hist_len = tl_summary_bucket(m->max_ns) - m->hist_first + 1;
  m->hist = hist;
  memset(hist, 0, m->hist_len * sizeof *hist);
  uint64_t at = m->hist_first, total = 0;
  for (uint64_t i = 0; i < nz; i++) {
    uint64_t gap, c;
    if (!tl__varint_get(&p, end, &gap) || !tl__varint_get(&p, end, &c) || (i && !gap) || !c ||
        c > (uint64_t)m->count - total || gap >= m->hist_len ||
        at + gap >= m->hist_first + m->hist_len)
      return TL_ECORRUPT;
    at += gap;
    if (i == 0 && at != m->hist_first)
      return TL_ECORRUPT;
    hist[at - m->hist_first] = (int64_t)c;
    total += c;
  }
  if (p != end || total != (uint64_t)m->count || at != m->hist_first + m->hist_len - 1)
    return TL_ECORRUPT;
  return TL_OK;
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
