/* support_codec.h: what the block codec tests share (linked into those
 * that read the store's internal headers). */
#ifndef TL_TEST_SUPPORT_CODEC_H
#define TL_TEST_SUPPORT_CODEC_H

#include <stddef.h>
#include <stdint.h>

/* Decodes payload (len bytes) as a block of codec, sealed with a correct
 * checksum as a crafted database would hold it: only the decoder's own
 * checks stand between it and memory. The payload is copied to a buffer of
 * its exact size, so that the sanitizers see any read past it. The n
 * samples go to back; a decode that succeeds must keep each within [min,
 * max], which fails the test otherwise. Returns the decoder's result. */
int tl_test_decode_crafted(int codec, const uint8_t *payload, size_t len, size_t n, int64_t min,
                           int64_t max, int64_t *back);

#endif
