/* codec.c: sample blocks. A block holds up to TL_BLOCK_MAX latencies, in
 * order, each stored as the unsigned LEB128 varint of (latency - block min).
 * Timer latencies cluster tightly above their requested delay, so most
 * samples take 2 or 3 bytes, and the block's min and max are kept in their
 * own columns where queries can use them without decoding. */
#include <string.h>

#include "tl_store.h"

size_t tl_block_bound(size_t n) { return n * 10; }

size_t tl_block_encode(const int64_t *v, size_t n, uint8_t *out, int64_t *min, int64_t *max) {
  int64_t lo = v[0], hi = v[0];
  for (size_t i = 1; i < n; i++) {
    if (v[i] < lo)
      lo = v[i];
    if (v[i] > hi)
      hi = v[i];
  }
  uint8_t *p = out;
  for (size_t i = 0; i < n; i++) {
    uint64_t d = (uint64_t)v[i] - (uint64_t)lo;
    while (d >= 0x80) {
      *p++ = (uint8_t)(d | 0x80);
      d >>= 7;
    }
    *p++ = (uint8_t)d;
  }
  *min = lo;
  *max = hi;
  return (size_t)(p - out);
}

/* The generic varint reader, for any position; NULL when malformed. */
static const uint8_t *read_varint(const uint8_t *p, const uint8_t *end, uint64_t *out) {
  uint64_t d = 0;
  for (unsigned shift = 0;; shift += 7) {
    if (p == end || shift > 63)
      return NULL;
    uint8_t b = *p++;
    /* Only the encoder's own (shortest) form is accepted: a trailing zero
     * byte or bits past 64 mean the block was altered. */
    if ((shift && b == 0) || (shift == 63 && b > 1))
      return NULL;
    d |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80))
      break;
  }
  *out = d;
  return p;
}

int tl_block_decode(const uint8_t *in, size_t len, int64_t min, int64_t max, int64_t *out,
                    size_t n) {
  if (max < min)
    return TL_ECORRUPT;
  uint64_t span = (uint64_t)max - (uint64_t)min, base = (uint64_t)min;
  const uint8_t *p = in, *end = in + len;
  size_t i = 0;
  /* Fast path while a whole varint surely fits: timer samples take 1 to 3
   * bytes, read without the general loop. A zero last byte is a longer form
   * than the encoder writes, so the block was altered. */
  while (i < n && end - p >= 10) {
    uint64_t d = p[0];
    if (d < 0x80) {
      p += 1;
    } else if (p[1] < 0x80) {
      if (p[1] == 0)
        return TL_ECORRUPT;
      d = (d & 0x7f) | (uint64_t)p[1] << 7;
      p += 2;
    } else if (p[2] < 0x80) {
      if (p[2] == 0)
        return TL_ECORRUPT;
      d = (d & 0x7f) | (uint64_t)(p[1] & 0x7f) << 7 | (uint64_t)p[2] << 14;
      p += 3;
    } else if (!(p = read_varint(p, end, &d))) {
      return TL_ECORRUPT;
    }
    if (d > span)
      return TL_ECORRUPT;
    out[i++] = (int64_t)(base + d);
  }
  for (; i < n; i++) {
    uint64_t d;
    if (!(p = read_varint(p, end, &d)) || d > span)
      return TL_ECORRUPT;
    out[i] = (int64_t)(base + d);
  }
  return p == end ? TL_OK : TL_ECORRUPT;
}
