/* bench_codec: the sample block codecs side by side on real timer data:
 * bytes a sample of the blocks and encode and decode speed (samples a
 * second, median of RUNS) for codec 2 (bit packing with exceptions), codec 3
 * (prefix-coded bit lengths) and tl's choice between them, in blocks of
 * 1,000 samples (a fleet's sessions) and of TL_BLOCK_MAX (long sessions).
 * The samples are settimeout(0) latencies collected first on this machine,
 * replayed in order as often as needed; every decoded block is compared
 * with its samples.
 *
 * Usage: bench_codec [DIR] [SAMPLES] [REAL]   (default /tmp, 4000000, 20000) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "codec_internal.h"

enum { RUNS = 5, CODECS = 3 };

typedef struct {
  double encode, decode, bytes;
} speed;

/* Encodes v[0..n) in blocks of size samples, then decodes them all. */
static speed run(int codec, const int64_t *v, size_t n, size_t size, uint8_t *enc, tl_block *b,
                 int64_t *out) {
  size_t blocks = (n + size - 1) / size, bytes = 0;
  double t0 = bench_now_s();
  for (size_t k = 0; k < blocks; k++) {
    size_t at = k * size, cnt = n - at < size ? n - at : size;
    uint8_t *p = enc + k * tl_block_bound(size);
    b[k] = (tl_block){.seq = (int64_t)k, .count = (int64_t)cnt, .data = p};
    b[k].len = tl_block_encode_as(codec, v + at, cnt, b[k].seq, p, &b[k].min_ns, &b[k].max_ns);
    b[k].codec = p[1];
    bytes += b[k].len;
  }
  speed r = {(double)n / (bench_now_s() - t0), 0, (double)bytes / (double)n};
  t0 = bench_now_s();
  for (size_t k = 0; k < blocks; k++)
    if (tl_block_decode(&b[k], out + k * size, NULL))
      bench_die("decode", NULL);
  r.decode = (double)n / (bench_now_s() - t0);
  if (memcmp(out, v, n * sizeof *v))
    bench_die("decoded samples differ", NULL);
  return r;
}

static void compare(const int64_t *v, size_t n, size_t size) {
  static const int codecs[CODECS] = {TL_CODEC_PACKED, TL_CODEC_PREFIX, TL_CODEC_DEFAULT};
  size_t blocks = (n + size - 1) / size;
  uint8_t *enc = malloc(blocks * tl_block_bound(size));
  tl_block *b = malloc(blocks * sizeof *b);
  int64_t *out = malloc(n * sizeof *out);
  if (!enc || !b || !out)
    bench_die("out of memory", NULL);
  double enc_s[CODECS][RUNS], dec_s[CODECS][RUNS], bytes[CODECS] = {0};
  for (int r = 0; r < RUNS; r++)
    for (int c = 0; c < CODECS; c++) { /* interleaved, so that drift hits each alike */
      speed s = run(codecs[c], v, n, size, enc, b, out);
      enc_s[c][r] = s.encode;
      dec_s[c][r] = s.decode;
      bytes[c] = s.bytes;
    }
  printf("\nblocks of %zu samples, %zu samples, median of %d runs\n", size, n, RUNS);
  printf("  %-28s %12s %12s %12s\n", "", "codec 2", "codec 3", "tl's choice");
  printf("  %-28s %12.3f %12.3f %12.3f\n", "bytes a sample (blocks)", bytes[0], bytes[1], bytes[2]);
  printf("  %-28s", "encode, ns a sample");
  for (int c = 0; c < CODECS; c++)
    printf(" %12.2f", 1e9 / bench_median(enc_s[c], RUNS));
  printf("\n  %-28s", "decode, ns a sample");
  for (int c = 0; c < CODECS; c++)
    printf(" %12.2f", 1e9 / bench_median(dec_s[c], RUNS));
  printf("\n");
  free(enc);
  free(b);
  free(out);
}

int main(int argc, char **argv) {
  tl_set_progname("bench_codec");
  const char *dir = argc > 1 ? argv[1] : "/tmp";
  size_t n = argc > 2 ? (size_t)strtoull(argv[2], NULL, 10) : 4000000;
  size_t real_n = argc > 3 ? (size_t)strtoull(argv[3], NULL, 10) : 20000;
  char path[4096];
  snprintf(path, sizeof path, "%s/tl-bench-codec.db", dir);
  printf("collecting %zu real settimeout(0) samples on this machine...\n", real_n);
  bench_samples real = bench_collect_real(path, real_n, NULL);
  bench_remove_db(path);
  int64_t *v = malloc(n * sizeof *v);
  if (!v || !real.n)
    bench_die("no samples", NULL);
  for (size_t i = 0; i < n; i++)
    v[i] = real.v[i % real.n];
  compare(v, n, 1000);
  compare(v, n, TL_BLOCK_MAX);
  free(v);
  free(real.v);
  return 0;
}
