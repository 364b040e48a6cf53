/* support_codec.c: helpers for the block codec tests (see
 * support_codec.h). */
#include "support_codec.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "store_internal.h"

int tl_test_decode_crafted(int codec, const uint8_t *payload, size_t len, size_t n, int64_t min,
                           int64_t max, int64_t *back) {
  uint8_t *block = malloc(TL_BLOCK_HEADER + len);
  assert_non_null(block);
  if (len)
    memcpy(block + TL_BLOCK_HEADER, payload, len);
  size_t blen = tl__block_seal(block, codec, n, 0, min, max, len);
  tl_block b = {.count = (int64_t)n,
                .min_ns = min,
                .max_ns = max,
                .codec = codec,
                .data = block,
                .len = blen};
  int err = tl_block_decode(&b, back, NULL);
  if (err == TL_OK)
    for (size_t i = 0; i < n; i++)
      assert_true(back[i] >= min && back[i] <= max);
  free(block);
  return err;
}
