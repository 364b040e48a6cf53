/* fuzz_block.c: the sample block codec, the one decoder that reads bytes
 * from the database file. The input is an 18-byte header (min and span as
 * little-endian 64-bit numbers, n as 16 bits) and the encoded data.
 * tl_block_decode never reads past len and never writes past n values; what
 * it accepts lies in [min, max] and encodes back to exactly the same bytes
 * when the block's own min is min. Then the input is reused as raw samples,
 * which must survive an encode/decode round trip. */
#include "fuzz.h"
#include "tl_store.h"

static uint64_t le64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int64_t out[TL_BLOCK_MAX], again[TL_BLOCK_MAX];
  static uint8_t enc[TL_BLOCK_MAX * 10];
  if (size >= 18) {
    int64_t min = (int64_t)(le64(data) >> 1); /* latencies are never negative */
    uint64_t span = le64(data + 8);
    int64_t max = span > (uint64_t)(INT64_MAX - min) ? INT64_MAX : min + (int64_t)span;
    size_t n = 1 + (size_t)((data[16] | data[17] << 8) % TL_BLOCK_MAX);
    const uint8_t *in = data + 18;
    size_t len = size - 18;
    uint8_t *exact = malloc(len ? len : 1); /* so that ASan sees an overread */
    memcpy(exact, in, len);
    if (tl_block_decode(exact, len, min, max, out, n) == TL_OK) {
      int64_t lo, hi;
      for (size_t i = 0; i < n; i++)
        TL_FUZZ_ASSERT(out[i] >= min && out[i] <= max);
      size_t elen = tl_block_encode(out, n, enc, &lo, &hi);
      TL_FUZZ_ASSERT(elen <= tl_block_bound(n) && lo >= min && hi <= max);
      TL_FUZZ_ASSERT(tl_block_decode(enc, elen, lo, hi, again, n) == TL_OK);
      TL_FUZZ_ASSERT(memcmp(out, again, n * sizeof *out) == 0);
      if (lo == min)
        TL_FUZZ_ASSERT(elen == len && memcmp(enc, exact, len) == 0);
    }
    free(exact);
  }
  /* Raw samples: the input as non-negative 64-bit values. */
  size_t n = size / 8 < TL_BLOCK_MAX ? size / 8 : TL_BLOCK_MAX;
  if (n) {
    int64_t lo, hi;
    for (size_t i = 0; i < n; i++)
      out[i] = (int64_t)(le64(data + 8 * i) >> 1);
    size_t elen = tl_block_encode(out, n, enc, &lo, &hi);
    TL_FUZZ_ASSERT(elen <= tl_block_bound(n));
    TL_FUZZ_ASSERT(tl_block_decode(enc, elen, lo, hi, again, n) == TL_OK);
    TL_FUZZ_ASSERT(memcmp(out, again, n * sizeof *out) == 0);
  }
  return 0;
}
