/* test_codec_prefix.c: codec 3, the bit lengths of the samples prefix-coded:
 * round trips of timer-like, random and extreme blocks, the payload's bytes
 * against its description written out bit by bit, payloads crafted with a
 * correct checksum that must still be refused, blocks under any prefix code
 * (not only the encoder's) and the encoder's choice of the smaller of codecs
 * 2 and 3. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "store_internal.h"
#include "support_codec.h"

static uint64_t next_random(uint64_t *x) {
  *x ^= *x << 13;
  *x ^= *x >> 7;
  *x ^= *x << 17;
  return *x;
}

static int64_t v[TL_BLOCK_MAX], back[TL_BLOCK_MAX];
static uint8_t buf[TL_BLOCK_HEADER + 40 + TL_BLOCK_MAX * 10];

static unsigned bits_of(uint64_t x) { return x ? 64u - (unsigned)__builtin_clzll(x) : 0; }

static void put_bit_by_bit(uint8_t *p, uint64_t *at, uint64_t value, unsigned width) {
  for (unsigned i = 0; i < width; i++, ++*at)
    if (value >> i & 1)
      p[*at / 8] |= (uint8_t)(1u << (*at % 8));
}

/* The code lengths at a payload's start (symbols 0..L) into len and their
 * canonical codes into code, as docs/schema.md describes them: shorter
 * codes first, then by symbol. */
static void reference_codes(const uint8_t *lengths, unsigned L, unsigned *len, unsigned *code) {
  unsigned c = 0;
  for (unsigned s = 0; s <= L; s++)
    len[s] = (lengths[s / 2] >> (4 * (s & 1))) & 0xf;
  for (unsigned l = 1; l <= 15; l++, c <<= 1)
    for (unsigned s = 0; s <= L; s++)
      if (len[s] == l)
        code[s] = c++;
}

/* The stream of codec 3 for v[0..n) with the code lengths the encoder put
 * at the payload's start, written from docs/schema.md one bit at a time:
 * canonical codes (shorter first, then by symbol), each from its first
 * bit, then the bits below the highest. Returns the payload's size. */
static size_t reference_payload(const uint8_t *lengths, size_t n, int64_t lo, unsigned L,
                                uint8_t *out) {
  size_t head = (L + 2) / 2;
  memset(out, 0, head + (size_t)n * 10);
  memcpy(out, lengths, head);
  unsigned len[65], code[65];
  reference_codes(lengths, L, len, code);
  uint64_t at = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t d = (uint64_t)v[i] - (uint64_t)lo;
    unsigned s = bits_of(d);
    assert_true(len[s] > 0);
    for (unsigned b = len[s]; b-- > 0;) /* the code's first (highest) bit first */
      put_bit_by_bit(out + head, &at, code[s] >> b & 1, 1);
    if (s >= 2)
      put_bit_by_bit(out + head, &at, d & (~(uint64_t)0 >> (65 - s)), s - 1);
  }
  return head + (size_t)((at + 7) / 8);
}

/* Encodes v[0..n) in codec (into a buffer of exactly tl_block_bound(n)
 * bytes, for the sanitizers), decodes and compares; returns its size. */
static size_t round_trip_as(int codec, size_t n) {
  int64_t lo, hi;
  uint8_t *exact = malloc(tl_block_bound(n));
  assert_non_null(exact);
  size_t len = tl_block_encode_as(codec, v, n, 9, exact, &lo, &hi);
  assert_true(len <= tl_block_bound(n));
  memcpy(buf, exact, len);
  free(exact);
  tl_block b = {.seq = 9,
                .count = (int64_t)n,
                .min_ns = lo,
                .max_ns = hi,
                .codec = buf[1],
                .data = buf,
                .len = len};
  const char *why = NULL;
  if (tl_block_decode(&b, back, &why) != TL_OK)
    fail_msg("codec %d, n %zu: %s", buf[1], n, why);
  assert_memory_equal(v, back, n * sizeof *v);
  return len;
}

/* Codec 3's round trip, its bytes against the reference, and the default
 * encoder's choice: the smaller of codecs 2 and 3 (2 on a tie). */
static void round_trip_n(size_t n) {
  size_t len3 = round_trip_as(TL_CODEC_PREFIX, n);
  assert_int_equal(buf[1], TL_CODEC_PREFIX);
  static uint8_t want[40 + TL_BLOCK_MAX * 10];
  int64_t lo = v[0], hi = v[0];
  for (size_t i = 1; i < n; i++) {
    lo = v[i] < lo ? v[i] : lo;
    hi = v[i] > hi ? v[i] : hi;
  }
  unsigned L = bits_of((uint64_t)hi - (uint64_t)lo);
  size_t want_len = reference_payload(buf + TL_BLOCK_HEADER, n, lo, L, want);
  assert_int_equal(len3, TL_BLOCK_HEADER + want_len);
  assert_memory_equal(buf + TL_BLOCK_HEADER, want, want_len);
  size_t len2 = round_trip_as(TL_CODEC_PACKED, n);
  size_t chosen = round_trip_as(TL_CODEC_DEFAULT, n);
  assert_int_equal(chosen, len3 < len2 ? len3 : len2);
  assert_int_equal(buf[1], len3 < len2 ? TL_CODEC_PREFIX : TL_CODEC_PACKED);
}

/* Timer-like data: a tight cluster above 1 ms and a rare slow tail. */
static int64_t timer_sample(uint64_t *x) {
  uint64_t r = next_random(x);
  int64_t ns = 1000000 + (int64_t)(r % 60000);
  if (r % 100 < 3)
    ns += (int64_t)(next_random(x) % 100000000);
  return ns;
}

/* A random number of bit length s (0..63). */
static int64_t of_length(unsigned s, uint64_t *x) {
  if (s < 2)
    return s;
  return (int64_t)(((uint64_t)1 << (s - 1)) | (next_random(x) >> (65 - s)));
}

static void round_trips(void **state) {
  (void)state;
  uint64_t x = 0x2545f4914f6cdd1du;
  for (size_t n = 1; n <= TL_BLOCK_MAX; n += n < 200 ? 1 : 97 + (n % 7)) {
    for (size_t i = 0; i < n; i++)
      v[i] = timer_sample(&x);
    round_trip_n(n);
    /* Geometric spreads: many bit lengths, long codes for the rare ones. */
    for (size_t i = 0; i < n; i++)
      v[i] = (int64_t)((next_random(&x) >> 1) >> (next_random(&x) % 64));
    round_trip_n(n);
  }
  round_trip_n(TL_BLOCK_MAX);
  /* All equal (only symbol 0), one sample, the extremes. */
  for (size_t i = 0; i < TL_BLOCK_MAX; i++)
    v[i] = 123456789;
  round_trip_n(TL_BLOCK_MAX);
  round_trip_n(1);
  v[0] = INT64_MAX;
  round_trip_n(1);
  for (size_t i = 0; i < TL_BLOCK_MAX; i++)
    v[i] = i % 3 ? INT64_MAX - (int64_t)(i % 7) : (int64_t)(i % 5);
  round_trip_n(TL_BLOCK_MAX);
  round_trip_n(2);
  /* Every bit length at once, 0 to 63 (a spread of 2^63 or more, length
   * 64, needs a negative latency), with skewed counts that stretch the
   * code past its 12-bit limit before it is flattened. */
  for (size_t i = 0; i < TL_BLOCK_MAX; i++)
    v[i] = of_length((unsigned)__builtin_ctzll(next_random(&x) | (1ull << 63)), &x);
  for (unsigned s = 0; s < 64; s++)
    v[s] = of_length(s, &x);
  round_trip_n(TL_BLOCK_MAX);
  round_trip_n(64);
  /* Near 2^63: every difference small, every value huge. */
  for (size_t i = 0; i < 1000; i++)
    v[i] = INT64_MAX - (int64_t)(next_random(&x) % 70000);
  round_trip_n(1000);
}

/* Timer data takes fewer bytes in codec 3 than in codec 2, and tl writes
 * it so; data of one uniform width stays in codec 2. */
static void encoder_picks_smaller(void **state) {
  (void)state;
  uint64_t x = 99;
  int64_t lo, hi;
  static uint8_t b2[TL_BLOCK_HEADER + 40 + TL_BLOCK_MAX * 10];
  for (size_t i = 0; i < 1000; i++)
    v[i] = timer_sample(&x);
  size_t len2 = tl_block_encode_as(TL_CODEC_PACKED, v, 1000, 0, b2, &lo, &hi);
  size_t len = tl_block_encode(v, 1000, 0, buf, &lo, &hi);
  assert_int_equal(buf[1], TL_CODEC_PREFIX);
  assert_true(len < len2);
  for (size_t i = 0; i < 1000; i++)
    v[i] = (int64_t)(next_random(&x) & 0xfffff);
  len2 = tl_block_encode_as(TL_CODEC_PACKED, v, 1000, 0, b2, &lo, &hi);
  len = tl_block_encode(v, 1000, 0, buf, &lo, &hi);
  assert_int_equal(buf[1], TL_CODEC_PACKED);
  assert_int_equal(len, len2);
  assert_memory_equal(buf, b2, len);
}

/* A crafted payload of this test's codec (support_codec.h). */
static int decode_crafted(const uint8_t *payload, size_t len, size_t n, int64_t min, int64_t max) {
  return tl_test_decode_crafted(TL_CODEC_PREFIX, payload, len, n, min, max, back);
}

static void crafted_payloads(void **state) {
  (void)state;
  /* Samples 0, 5, 3 between 0 and 5 (L = 3): lengths 1, 0, 2, 2, so the
   * codes are 0, -, 10, 11; then 0 | 11 01 | 10 1. */
  const uint8_t plain[] = {0x01, 0x22, 0xae};
  assert_int_equal(decode_crafted(plain, sizeof plain, 3, 0, 5), TL_OK);
  assert_int_equal(back[0], 0);
  assert_int_equal(back[1], 5);
  assert_int_equal(back[2], 3);
  /* Samples 0, 3, 2 between 0 and 3 (L = 2, a spare half byte). */
  const uint8_t spare[] = {0x01, 0x01, 0x0e};
  assert_int_equal(decode_crafted(spare, sizeof spare, 3, 0, 3), TL_OK);
  assert_int_equal(back[1], 3);
  assert_int_equal(back[2], 2);
  assert_int_equal(decode_crafted((const uint8_t[]){0x01, 0x11, 0x0e}, 3, 3, 0, 3), TL_ECORRUPT);

  static const struct {
    uint8_t p[6];
    size_t len, n;
    int64_t max;
    const char *what;
  } bad[] = {
      {{0x01, 0x22, 0xae}, 3, 3, 4, "a sample above max (5 > 4)"},
      {{0x0d, 0x22, 0xae}, 3, 3, 5, "a code of 13 bits"},
      {{0x01, 0x21, 0xae}, 3, 3, 5, "more codes than fit (1/2 + 1/2 + 1/4)"},
      {{0x01, 0x02, 0xae}, 3, 3, 5, "a code no symbol has"},
      {{0x00, 0x00, 0xae}, 3, 3, 5, "no code at all"},
      {{0x01, 0x22, 0xae}, 3, 4, 5, "a stream that runs past the payload"},
      {{0x01, 0x22, 0xae, 0x00}, 4, 3, 5, "a trailing byte"},
      {{0x01, 0x22}, 2, 3, 5, "no stream"},
      {{0x01}, 1, 3, 5, "half the lengths"},
      {{0}, 0, 3, 5, "an empty payload"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof *bad; k++)
    if (decode_crafted(bad[k].p, bad[k].len, bad[k].n, 0, bad[k].max) != TL_ECORRUPT)
      fail_msg("accepted %s", bad[k].what);

  /* Random payloads behind plausible code lengths, at every size and
   * spread: never a crash or a read past the payload, and what decodes
   * lies between min and max. */
  uint64_t x = 4242;
  uint8_t *p = malloc(45000);
  assert_non_null(p);
  for (int round = 0; round < 3000; round++) {
    size_t n = 1 + (size_t)(next_random(&x) % TL_BLOCK_MAX);
    int64_t min = (int64_t)(next_random(&x) >> 40);
    int64_t max = min + (int64_t)(next_random(&x) >> (1 + next_random(&x) % 63));
    if (max < min)
      max = INT64_MAX;
    unsigned L = bits_of((uint64_t)max - (uint64_t)min);
    size_t len = (size_t)(next_random(&x) % (n * 4 + 40));
    for (size_t i = 0; i < len; i++)
      p[i] = (uint8_t)next_random(&x);
    for (size_t i = 0; i < (L + 2) / 2 && i < len; i++) /* lengths of 0..7: mostly a code */
      p[i] &= next_random(&x) % 2 ? 0x77 : 0x33;
    decode_crafted(p, len, n, min, max);
  }
  /* Every single bit flipped in real blocks (checksum recomputed): the
   * decoder refuses it or gives samples within the block's range. */
  for (size_t i = 0; i < 300; i++)
    v[i] = timer_sample(&x);
  int64_t lo, hi;
  size_t len = tl_block_encode_as(TL_CODEC_PREFIX, v, 300, 0, buf, &lo, &hi) - TL_BLOCK_HEADER;
  memcpy(p, buf + TL_BLOCK_HEADER, len);
  for (size_t bit = 0; bit < len * 8; bit++) {
    p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    decode_crafted(p, len, 300, lo, hi);
    p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
  }
  free(p);
}

/* The first stream of `bits` bits (read from bit 0) that begins with no
 * code of lengths (symbols 0..L), or 1 << bits when every one does. */
static unsigned first_without_code(const uint8_t *lengths, unsigned L, unsigned bits) {
  unsigned len[65], code[65];
  reference_codes(lengths, L, len, code);
  for (unsigned at = 0; at < 1u << bits; at++) {
    int begun = 0;
    for (unsigned s = 0; s <= L && !begun; s++) {
      unsigned first = 0; /* the stream's first len[s] bits, as a code */
      for (unsigned b = 0; b < len[s]; b++)
        first = first << 1 | (at >> b & 1);
      begun = len[s] && first == code[s];
    }
    if (!begun)
      return at;
  }
  return 1u << bits;
}

/* Blocks under code lengths the encoder would never choose, with room
 * left (codes no symbol has) or none, codes of up to 12 bits, symbols of
 * every length up to 40: each written by the description (reference_payload)
 * decodes to its samples, and a sample whose code no symbol has is
 * refused. The decoder's table holds every such code, and nothing where no
 * code begins. */
static void any_code_decodes(void **state) {
  (void)state;
  uint64_t x = 77;
  for (int round = 0; round < 2000; round++) {
    unsigned L = 1 + (unsigned)(next_random(&x) % 40), present[41], np = 0, longest = 1;
    uint8_t lengths[21] = {0};
    uint32_t room = 1u << 12; /* the codes left, in units of 2^-12 */
    for (unsigned s = 0; s <= L; s++) {
      unsigned len = (unsigned)(next_random(&x) % 13);
      if (!len || (1u << (12 - len)) > room)
        continue;
      room -= 1u << (12 - len);
      longest = len > longest ? len : longest;
      lengths[s / 2] |= (uint8_t)(len << (4 * (s & 1)));
      present[np++] = s;
    }
    if (!np) {
      lengths[0] = 1; /* symbol 0, code 0 */
      present[np++] = 0;
    }
    size_t n = 1 + (size_t)(next_random(&x) % 700);
    for (size_t i = 0; i < n; i++)
      v[i] = of_length(present[next_random(&x) % np], &x);
    static uint8_t payload[40 + TL_BLOCK_MAX * 10];
    size_t len = reference_payload(lengths, n, 0, L, payload);
    int64_t max = (int64_t)(((uint64_t)1 << L) - 1);
    if (decode_crafted(payload, len, n, 0, max) != TL_OK)
      fail_msg("round %d: L %u, %u symbols, room %u: refused", round, L, np, room);
    assert_memory_equal(v, back, n * sizeof *v);
    /* A sample whose stream begins with no code, in as few bytes as hold
     * the bits the decoder looks up. */
    unsigned none = first_without_code(lengths, L, longest);
    if (none == 1u << longest)
      continue;
    size_t head = (L + 2) / 2, stream = none < 256 ? 1 : 2;
    memcpy(payload, lengths, head);
    payload[head] = (uint8_t)none;
    payload[head + 1] = (uint8_t)(none >> 8);
    if (decode_crafted(payload, head + stream, 1, 0, max) != TL_ECORRUPT)
      fail_msg("round %d: L %u: stream %#x, with no code, accepted", round, L, none);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(round_trips),
      cmocka_unit_test(encoder_picks_smaller),
      cmocka_unit_test(crafted_payloads),
      cmocka_unit_test(any_code_decodes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
