/* verify.c: what every backend's reads check, above them all. A session's
 * blocks are numbered 0, 1, 2 ... with possible counts, minimums and
 * maximums, and add up to the count the session records (tl__block_run);
 * the scan decodes each block and verifies its checksum; tlstore check
 * reads every session that way (check.c). A failure names the session and the block
 * and leaves it as the damaged one, for tlreport --skip-damaged. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

int tl__block_fail(tl_store *s, const tl_block *b, const char *why) {
  s->damaged_id = b->session_id;
  return tl__store_fail(s, TL_ECORRUPT, "%s: session %s, block %lld: %s" TL__CHECK_HINT, s->path,
                        b->session_uuid ? b->session_uuid : "?", (long long)b->seq, why);
}

int tl__block_run_next(tl_store *s, tl__block_run *r, tl_block *b) {
  b->session_uuid = r->uuid;
  if (b->seq != r->next_seq) {
    b->seq = r->next_seq;
    return tl__block_fail(s, b, "missing");
  }
  r->next_seq++;
  if (b->count < 1 || b->count > TL_BLOCK_MAX || b->max_ns < b->min_ns || b->min_ns < 0)
    return tl__block_fail(s, b, "impossible count, min or max");
  r->held += b->count;
  return TL_OK;
}

int tl__block_run_end(tl_store *s, const tl__block_run *r) {
  if (r->held == r->recorded)
    return TL_OK;
  s->damaged_id = r->id;
  return tl__store_fail(s, TL_ECORRUPT,
                        "%s: session %s: its blocks hold %lld samples, the session records %lld: "
                        "a block was lost" TL__CHECK_HINT,
                        s->path, r->uuid, (long long)r->held, (long long)r->recorded);
}

typedef struct {
  tl_store *store;
  tl_samples_cb fn;
  void *ctx;
  int64_t values[TL_BLOCK_MAX];
} decode_ctx;

static int decode_block(void *arg, const tl_block *b) {
  decode_ctx *d = arg;
  const char *why;
  if (tl_block_decode(b, d->values, &why))
    return tl__block_fail(d->store, b, why);
  return d->fn(d->ctx, d->values, (size_t)b->count);
}

int tl_store_scan(tl_store *s, int64_t session_id, tl_samples_cb fn, void *ctx) {
  decode_ctx *d = malloc(sizeof *d);
  if (!d)
    return tl__store_fail(s, TL_ENOMEM, "out of memory reading samples");
  d->store = s;
  d->fn = fn;
  d->ctx = ctx;
  int err = tl_store_scan_blocks(s, &session_id, 1, NULL, decode_block, d);
  free(d);
  return err;
}
