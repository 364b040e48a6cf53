/* fuzz_block.c: the sample block codecs, the one decoder that reads bytes
 * from the database file. The input is an 18-byte prefix (min and span as
 * little-endian 64-bit numbers, n as 16 bits) and the payload, tried as the
 * payload of each codec (1, varints; 2, bit packing with exceptions; 3,
 * prefix-coded bit lengths).
 *   - The payload sealed with a correct header: tl_block_decode never reads
 *     past len and never writes past n values; what it accepts lies in
 *     [min, max] and survives an encode/decode round trip in the same codec,
 *     and for codec 1 encodes back to the same payload when the block's own
 *     min is min. Any one bit flipped in the sealed block, or a different
 *     seq, min or max, fails its checksum.
 *   - The input as it is, header and all: never a crash.
 *   - The input as raw samples: they survive a round trip in each codec and
 *     in tl's own choice between codecs 2 and 3, which is the smaller. */
#include "fuzz.h"
#include "store_internal.h"

static uint64_t le64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--)
    v = v << 8 | p[i];
  return v;
}

enum { CODECS = 3 };
static const int codecs[CODECS] = {TL_CODEC_VARINT, TL_CODEC_PACKED, TL_CODEC_PREFIX};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int64_t out[TL_BLOCK_MAX], again[TL_BLOCK_MAX];
  static uint8_t enc[TL_BLOCK_HEADER + 16 + TL_BLOCK_MAX * 10];
  if (size >= 18) {
    int64_t min = (int64_t)(le64(data) >> 1); /* latencies are never negative */
    uint64_t span = le64(data + 8);
    int64_t max = span > (uint64_t)(INT64_MAX - min) ? INT64_MAX : min + (int64_t)span;
    size_t n = 1 + (size_t)((data[16] | data[17] << 8) % TL_BLOCK_MAX);
    const uint8_t *in = data + 18;
    size_t len = size - 18;
    int64_t seq = (int64_t)(size % 7);
    for (int c = 0; c < CODECS; c++) {
      int codec = codecs[c];
      uint8_t *sealed = malloc(TL_BLOCK_HEADER + len); /* exact size: ASan sees an overread */
      memcpy(sealed + TL_BLOCK_HEADER, in, len);
      size_t blen = tl__block_seal(sealed, codec, n, seq, min, max, len);
      tl_block b = {.seq = seq,
                    .count = (int64_t)n,
                    .min_ns = min,
                    .max_ns = max,
                    .codec = codec,
                    .data = sealed,
                    .len = blen};
      TL_FUZZ_ASSERT(tl_block_verify(&b, NULL) == TL_OK);
      if (tl_block_decode(&b, out, NULL) == TL_OK) {
        int64_t lo, hi;
        for (size_t i = 0; i < n; i++)
          TL_FUZZ_ASSERT(out[i] >= min && out[i] <= max);
        size_t elen = tl_block_encode_as(codec, out, n, seq, enc, &lo, &hi);
        TL_FUZZ_ASSERT(elen <= tl_block_bound(n) && lo >= min && hi <= max);
        tl_block e = {.seq = seq,
                      .count = (int64_t)n,
                      .min_ns = lo,
                      .max_ns = hi,
                      .codec = codec,
                      .data = enc,
                      .len = elen};
        TL_FUZZ_ASSERT(tl_block_decode(&e, again, NULL) == TL_OK);
        TL_FUZZ_ASSERT(memcmp(out, again, n * sizeof *out) == 0);
        if (lo == min && codec == TL_CODEC_VARINT)
          TL_FUZZ_ASSERT(elen == blen && memcmp(enc + TL_BLOCK_HEADER, in, len) == 0);
      }
      /* One bit flipped anywhere, or the block taken for another one. */
      size_t bit = (size_t)(le64(data + 8) % (blen * 8));
      sealed[bit / 8] ^= (uint8_t)(1u << (bit % 8));
      TL_FUZZ_ASSERT(tl_block_decode(&b, out, NULL) == TL_ECORRUPT);
      sealed[bit / 8] ^= (uint8_t)(1u << (bit % 8));
      b.seq++;
      TL_FUZZ_ASSERT(tl_block_verify(&b, NULL) == TL_ECORRUPT);
      b.seq--;
      b.min_ns ^= 1;
      TL_FUZZ_ASSERT(tl_block_verify(&b, NULL) == TL_ECORRUPT);
      free(sealed);
    }

    /* The input taken as a whole block, header included, in the codec its
     * header names. */
    uint8_t *raw = malloc(size);
    memcpy(raw, data, size);
    tl_block r = {.seq = 0,
                  .count = (int64_t)n,
                  .min_ns = min,
                  .max_ns = max,
                  .codec = len > 1 ? raw[19] : TL_CODEC_VARINT,
                  .data = raw + 18,
                  .len = len};
    if (tl_block_decode(&r, out, NULL) == TL_OK)
      for (size_t i = 0; i < n; i++)
        TL_FUZZ_ASSERT(out[i] >= min && out[i] <= max);
    free(raw);
  }
  /* Raw samples: the input as non-negative 64-bit values. */
  size_t n = size / 8 < TL_BLOCK_MAX ? size / 8 : TL_BLOCK_MAX;
  size_t size_of[CODECS + 1];
  for (int c = 0; n && c <= CODECS; c++) {
    int64_t lo, hi;
    int codec = c < CODECS ? codecs[c] : TL_CODEC_DEFAULT;
    for (size_t i = 0; i < n; i++)
      out[i] = (int64_t)(le64(data + 8 * i) >> 1);
    size_t elen = tl_block_encode_as(codec, out, n, 3, enc, &lo, &hi);
    TL_FUZZ_ASSERT(elen <= tl_block_bound(n));
    TL_FUZZ_ASSERT(enc[1] == (codec ? codec : size_of[2] < size_of[1] ? 3 : 2));
    size_of[c] = elen;
    if (codec == TL_CODEC_DEFAULT)
      TL_FUZZ_ASSERT(elen == (size_of[1] < size_of[2] ? size_of[1] : size_of[2]));
    tl_block e = {.seq = 3,
                  .count = (int64_t)n,
                  .min_ns = lo,
                  .max_ns = hi,
                  .codec = enc[1],
                  .data = enc,
                  .len = elen};
    TL_FUZZ_ASSERT(tl_block_decode(&e, again, NULL) == TL_OK);
    TL_FUZZ_ASSERT(memcmp(out, again, n * sizeof *out) == 0);
  }
  return 0;
}
