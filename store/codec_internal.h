/* codec_internal.h: the stored forms of samples and causes, byte by byte:
 * sample blocks (their header, checksum and codecs) and the compact form of
 * a session's causes. The store's own files use them; tests, benchmarks and
 * fuzzers that judge the formats ask for them (tl_internals(... store
 * base)). No tl program outside the store needs them, so tl_store.h does not
 * show them. */
#ifndef TL_CODEC_INTERNAL_H
#define TL_CODEC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "tl_store.h"

/* ------------------------------------------------------------------------ */
/* Sample blocks                                                             */

/* A block is a TL_BLOCK_HEADER-byte header (version, codec, count and a
 * CRC32C over the header, the block's seq, min_ns and max_ns and its
 * payload; docs/schema.md) followed by the codec's payload. */
enum { TL_BLOCK_HEADER = 8, TL_BLOCK_VERSION = 1 };
enum {
  TL_CODEC_DEFAULT = 0, /* what new blocks use: the smaller of codecs 2 and 3, block by block */
  TL_CODEC_VARINT = 1,  /* LEB128 varints of (latency - min_ns) */
  TL_CODEC_PACKED = 2,  /* (latency - min_ns) bit-packed, with patched exceptions */
  TL_CODEC_PREFIX = 3   /* the bit length of (latency - min_ns) prefix-coded, then its low bits */
};

/* CRC32C (Castagnoli) of n bytes, continuing from crc (0 to start). */
uint32_t tl_crc32c(uint32_t crc, const void *data, size_t n);

/* Encodes n (1..TL_BLOCK_MAX) non-negative latencies as block number seq of
 * its session; out must hold tl_block_bound(n) bytes. Returns the block's
 * size (header included) and sets min and max. */
size_t tl_block_bound(size_t n);
size_t tl_block_encode(const int64_t *v, size_t n, int64_t seq, uint8_t *out, int64_t *min,
                       int64_t *max);
/* The same in a given codec (TL_CODEC_VARINT, TL_CODEC_PACKED or
 * TL_CODEC_PREFIX; anything else is TL_CODEC_DEFAULT, which writes the
 * smaller of codecs 2 and 3, codec 2 when equal). tl writes
 * TL_CODEC_DEFAULT; the others stay for comparisons. */
size_t tl_block_encode_as(int codec, const int64_t *v, size_t n, int64_t seq, uint8_t *out,
                          int64_t *min, int64_t *max);
/* The codec of the blocks this handle writes from now on (the writer,
 * import), TL_CODEC_DEFAULT until set; for benchmarks and tests that
 * compare codecs. TL_EINVAL for an unknown codec. */
int tl_store_set_codec(tl_store *store, int codec);
/* Checks b's header and checksum against its seq, count, min_ns, max_ns and
 * codec: TL_OK, or TL_ECORRUPT with *why (why may be NULL) set to a static
 * reason ("checksum mismatch", "unknown codec" ...). */
int tl_block_verify(const tl_block *b, const char **why);
/* tl_block_verify, then decodes the block's count samples into out (room
 * for TL_BLOCK_MAX). TL_ECORRUPT with *why when either fails. */
int tl_block_decode(const tl_block *b, int64_t *out, const char **why);

/* ------------------------------------------------------------------------ */
/* Causes                                                                    */

/* The compact form causes are stored in: at most
 * tl_causes_bound(n) bytes; decode returns the count, or -1 when bad. */
size_t tl_causes_bound(size_t n);
size_t tl_causes_encode(const tl_cause *c, size_t n, uint8_t *out);
int64_t tl_causes_decode(const uint8_t *data, size_t len, tl_cause *out, size_t max);

#endif
