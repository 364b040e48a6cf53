/* fuzz_dbfile.c: whole database files, damaged. A small tl database (two
 * sessions, 10,300 samples, tags and host facts) is made once; each input is
 * a list of changes to its bytes, 6 bytes each:
 *   byte 0      where: even, inside a sample block's data (byte 1 picks the
 *               block); odd, anywhere in the file (bytes 1-3 the offset)
 *   byte 4      what: 0 xor with byte 5, 1 set to byte 5, 2 set to 0xff,
 *               3 copy the 8 bytes 64 further on
 *   byte 5      the value
 * The damaged file is opened read-only, checked, read sample by sample and
 * reported on. Nothing may crash or hang, and when tlstore check passes,
 * every session reads back exactly its original samples and the report's
 * distribution (count, min, max, percentiles) is the original one: a damage
 * check misses must not change a number. */
#include <stdio.h>
#include <unistd.h>

#include "codec_internal.h"
#include "fuzz.h"
#include "tl_report.h"
#include "tl_store.h"

enum { SESSIONS = 2 };
static const size_t sizes[SESSIONS] = {10000, 300};
static const double pcts[] = {50, 90, 99, 99.9};

static char path[64];
static uint8_t *seed;
static size_t seed_len;
static int64_t *orig[SESSIONS];
static tl_dist orig_dist;
static size_t block_at[8], block_len[8], blocks;

typedef struct {
  int64_t *v;
  size_t n, cap;
} got;

static int take(void *ctx, const int64_t *v, size_t n) {
  got *g = ctx;
  if (g->n + n > g->cap)
    return 1; /* more samples than the session had: a wrong number */
  memcpy(g->v + g->n, v, n * sizeof *v);
  g->n += n;
  return 0;
}

static void make_seed(void) {
  snprintf(path, sizeof path, "/tmp/tl-fuzz-db-%ld.db", (long)getpid());
  unlink(path);
  tl_store *s;
  TL_FUZZ_ASSERT(tl_store_open(&s, path, 0) == TL_OK);
  static const char *keys[] = {"load"}, *values[] = {"idle"};
  static const tl_fact facts[] = {{"cpu.model", "Test CPU", "/proc/cpuinfo"}};
  uint64_t x = 1;
  for (int k = 0; k < SESSIONS; k++) {
    tl_session_spec spec = {.run_uuid = "run",
                            .label = k ? "b" : "a",
                            .probe = "settimeout",
                            .delay_ns = 1000000,
                            .command_line = "tlcollect",
                            .host_fingerprint = "f",
                            .hostname = "h",
                            .libuv_version = "1",
                            .tag_keys = keys,
                            .tag_values = values,
                            .tag_count = 1,
                            .facts = facts,
                            .fact_count = 1};
    orig[k] = malloc(sizes[k] * sizeof(int64_t));
    for (size_t i = 0; i < sizes[k]; i++) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      orig[k][i] = 1000000 + (int64_t)(x >> 40) % 400000 + (i % 997 == 0 ? 50000000 : 0);
    }
    tl_writer *w;
    char uuid[37];
    TL_FUZZ_ASSERT(tl_writer_begin(s, &spec, &w, uuid) == TL_OK);
    TL_FUZZ_ASSERT(tl_writer_add(w, orig[k], sizes[k]) == TL_OK);
    TL_FUZZ_ASSERT(tl_writer_end(w, "complete") == TL_OK);
  }
  int64_t ids[SESSIONS] = {1, 2};
  TL_FUZZ_ASSERT(tl_dist_compute(s, ids, SESSIONS, pcts, 4, &orig_dist) == TL_OK);
  tl_store_close(s);
  FILE *f = fopen(path, "rb");
  TL_FUZZ_ASSERT(f && fseek(f, 0, SEEK_END) == 0);
  seed_len = (size_t)ftell(f);
  rewind(f);
  seed = malloc(seed_len);
  TL_FUZZ_ASSERT(fread(seed, 1, seed_len, f) == seed_len);
  fclose(f);
  /* Where the blocks' data lie in the file: their headers, found by the
   * bytes the encoder wrote. */
  for (int k = 0; k < SESSIONS; k++)
    for (size_t at = 0; at < sizes[k] && blocks < 8; at += TL_BLOCK_MAX) {
      size_t n = sizes[k] - at < TL_BLOCK_MAX ? sizes[k] - at : TL_BLOCK_MAX;
      static uint8_t enc[TL_BLOCK_HEADER + TL_BLOCK_MAX * 10];
      int64_t lo, hi;
      size_t len = tl_block_encode(orig[k] + at, n, (int64_t)(at / TL_BLOCK_MAX), enc, &lo, &hi);
      for (size_t off = 0; off + len <= seed_len; off++)
        if (memcmp(seed + off, enc, len) == 0) {
          block_at[blocks] = off;
          block_len[blocks++] = len;
          break;
        }
    }
  TL_FUZZ_ASSERT(blocks == 4);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!seed)
    make_seed();
  uint8_t *file = malloc(seed_len);
  memcpy(file, seed, seed_len);
  for (size_t i = 0; i + 6 <= size; i += 6) {
    const uint8_t *c = data + i;
    size_t at;
    if (c[0] % 2 == 0) {
      size_t b = c[1] % blocks;
      at = block_at[b] + ((size_t)c[2] << 8 | c[3]) % block_len[b];
    } else {
      at = ((size_t)c[1] << 16 | (size_t)c[2] << 8 | c[3]) % seed_len;
    }
    switch (c[4] % 4) {
    case 0:
      file[at] ^= c[5];
      break;
    case 1:
      file[at] = c[5];
      break;
    case 2:
      file[at] = 0xff;
      break;
    default:
      if (at + 72 <= seed_len)
        memmove(file + at, file + at + 64, 8);
    }
  }
  char side[80];
  snprintf(side, sizeof side, "%s-wal", path);
  unlink(side);
  snprintf(side, sizeof side, "%s-shm", path);
  unlink(side);
  FILE *f = fopen(path, "wb");
  TL_FUZZ_ASSERT(f && fwrite(file, 1, seed_len, f) == seed_len && fclose(f) == 0);
  free(file);

  tl_store *s = NULL;
  if (tl_store_open(&s, path, TL_STORE_READONLY) == TL_OK) {
    int ok = tl_store_check(s, NULL, NULL) == TL_OK;
    int64_t ids[SESSIONS] = {1, 2};
    for (int k = 0; k < SESSIONS; k++) {
      got g = {malloc(sizes[k] * sizeof(int64_t)), 0, sizes[k]};
      int err = tl_store_scan(s, ids[k], take, &g);
      if (ok) /* check passed: the samples are the original ones */
        TL_FUZZ_ASSERT(err == TL_OK && g.n == sizes[k] &&
                       memcmp(g.v, orig[k], sizes[k] * sizeof(int64_t)) == 0);
      free(g.v);
    }
    tl_dist d;
    int err = tl_dist_compute(s, ids, SESSIONS, pcts, 4, &d);
    if (ok)
      TL_FUZZ_ASSERT(err == TL_OK && d.count == orig_dist.count && d.min_ns == orig_dist.min_ns &&
                     d.max_ns == orig_dist.max_ns &&
                     memcmp(d.pct_ns, orig_dist.pct_ns, sizeof d.pct_ns) == 0);
  }
  tl_store_close(s);
  return 0;
}
