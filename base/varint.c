/* varint.c: unsigned LEB128 varints, 7 bits a byte from the lowest, the
 * high bit set on every byte but the last: how the store writes its numbers
 * (codec 1's samples, the causes, the summaries) and how the report packs
 * its kept samples' gaps. */
#include "tl_base.h"

size_t tl_varint_len(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}

size_t tl_varint_put(uint8_t *out, uint64_t v) {
  size_t n = 0;
  while (v >= 0x80) {
    out[n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  out[n++] = (uint8_t)v;
  return n;
}

int tl_varint_get(const uint8_t **p, const uint8_t *end, uint64_t *v) {
  const uint8_t *at = *p;
  uint64_t d = 0;
  for (unsigned shift = 0;; shift += 7) {
    if (at == end || shift > 63)
      return 0;
    uint8_t b = *at++;
    /* Only the shortest form is accepted: a trailing zero byte or bits past
     * 64 mean the bytes were altered. */
    if ((shift && b == 0) || (shift == 63 && b > 1))
      return 0;
    d |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80))
      break;
  }
  *v = d;
  *p = at;
  return 1;
}
