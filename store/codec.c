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

int tl_block_decode(const uint8_t *in, size_t len, int64_t min, int64_t max, int64_t *out,
                    size_t n) {
  if (max < min)
    return TL_ECORRUPT;
  uint64_t span = (uint64_t)max - (uint64_t)min;
  const uint8_t *p = in, *end = in + len;
  for (size_t i = 0; i < n; i++) {
    uint64_t d = 0;
    unsigned shift = 0;
    for (;;) {
      if (p == end || shift > 63)
        return TL_ECORRUPT;
      uint8_t b = *p++;
      /* Only the encoder's own (shortest) form is accepted: a trailing zero
       * byte or bits past 64 mean the block was altered. */
      if ((shift && b == 0) || (shift == 63 && b > 1))
        return TL_ECORRUPT;
      d |= (uint64_t)(b & 0x7f) << shift;
      if (!(b & 0x80))
        break;
      shift += 7;
    }
    if (d > span)
      return TL_ECORRUPT;
    out[i] = (int64_t)((uint64_t)min + d);
  }
  return p == end ? TL_OK : TL_ECORRUPT;
}
