/* codec.c: sample blocks. A block holds up to TL_BLOCK_MAX latencies, in
 * order: a small header, then the samples in the encoding its codec names.
 *
 * The header (TL_BLOCK_HEADER bytes, integers little-endian):
 *   byte 0     header version, TL_BLOCK_VERSION (1)
 *   byte 1     codec of the payload: TL_CODEC_VARINT (1), TL_CODEC_PACKED (2)
 *              or TL_CODEC_PREFIX (3)
 *   bytes 2-3  sample count, 1..TL_BLOCK_MAX
 *   bytes 4-7  CRC32C of bytes 0-3, then seq, min_ns and max_ns (8 bytes
 *              each), then the payload
 * seq, min_ns and max_ns live in their own columns, where queries use them
 * without decoding; the checksum binds them to the data, so a flipped bit
 * anywhere in a block, a changed min or max, or a block stored under another
 * number is a mismatch, never a wrong sample. A new codec gets a new id and
 * keeps this header; a new header layout gets a new version.
 *
 * CRC32C (Castagnoli) because it finds every error of up to 3 bits and every
 * burst of up to 32 bits in a block of this size, and because x86-64
 * (SSE4.2) and 64-bit ARM compute it in hardware at several bytes a cycle,
 * well under the cost of decoding the same bytes. Elsewhere a table-driven
 * software version (slicing by 8) gives the same result.
 *
 * Codec 1 writes each sample as the unsigned LEB128 varint of
 * (latency - block min). Timer latencies cluster tightly above their
 * requested delay, so most samples take 2 or 3 bytes.
 *
 * Codec 2 packs the same differences d = latency -
 * block min at a fixed width of b bits (frame of reference), and patches the
 * few samples that need more (the exceptions, the rare slow wake-ups) from a
 * list after them. Its payload:
 *   byte 0     b, 0..L, where L = bit length of (max_ns - min_ns)
 *   bytes 1-2  e, the number of exceptions, 0..count
 *   then       the low b bits of every d, in sample order, packed densely
 *              from bit 0 of each byte upwards: ceil(count * b / 8) bytes
 *   then       the e exceptions, each its position in the block (P bits,
 *              P = bit length of count - 1) and d >> b (L - b bits, never 0),
 *              positions increasing, packed the same way: ceil(e * (P + L - b)
 *              / 8) bytes, and nothing after
 * The encoder picks the b that makes the payload smallest, from the
 * histogram of the differences' bit lengths. The decoder unpacks 8 samples
 * (b bytes) at a time with fixed shifts, without a branch per sample, and
 * then adds the exceptions' high parts; every width, count, position and
 * value is checked against the block, so no payload makes it read or write
 * out of bounds. Timer data takes 17-18 bits a sample this way, against
 * 24 for the varints.
 *
 * Codec 3 (codec_prefix.c) codes each difference's bit length through a
 * prefix code made for the block, then its bits below the highest: 16-17
 * bits a sample of timer data. tl writes each block in the smaller of
 * codecs 2 and 3, and reads all three forever. */
#include <pthread.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TL_CRC_X86 1
#include <nmmintrin.h>
#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#define TL_CRC_ARM 1
#include <arm_acle.h>
#endif

#include "store_internal.h"

/* ======================================================================== */
/* CRC32C                                                                    */

static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_table_init(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++)
      c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1; /* the reflected Castagnoli polynomial */
    crc_table[0][i] = c;
  }
  for (int t = 1; t < 8; t++)
    for (int i = 0; i < 256; i++)
      crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
}

static uint32_t crc_soft(uint32_t c, const uint8_t *p, size_t n) {
  pthread_once(&crc_once, crc_table_init);
  for (; n >= 8; n -= 8, p += 8) {
    uint32_t a =
        c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
    c = crc_table[7][a & 0xff] ^ crc_table[6][(a >> 8) & 0xff] ^ crc_table[5][(a >> 16) & 0xff] ^
        crc_table[4][a >> 24] ^ crc_table[3][p[4]] ^ crc_table[2][p[5]] ^ crc_table[1][p[6]] ^
        crc_table[0][p[7]];
  }
  while (n--)
    c = (c >> 8) ^ crc_table[0][(c ^ *p++) & 0xff];
  return c;
}

#if TL_CRC_X86 || TL_CRC_ARM
/* The CPU's instruction takes 8 bytes a step, but each step waits about
 * three cycles for the one before: so blocks are read in stripes of three
 * lanes whose CRCs run side by side, then joined. The CRC (without its
 * inversions) is linear: that of a message followed by CRC_LANE more bytes
 * is the CRC of those bytes alone, xor that of the message followed by
 * CRC_LANE zeros, which is a table look-up a byte of the message's CRC. */
enum { CRC_LANE = 128 };
static uint32_t lane_shift[4][256]; /* by byte j of a CRC: its part past CRC_LANE zeros */
static pthread_once_t lane_once = PTHREAD_ONCE_INIT;

static void lane_shift_init(void) {
  static const uint8_t zeros[CRC_LANE];
  uint32_t bit[32];
  for (int b = 0; b < 32; b++)
    bit[b] = crc_soft(1u << b, zeros, CRC_LANE);
  for (int j = 0; j < 4; j++)
    for (int v = 0; v < 256; v++) {
      uint32_t z = 0;
      for (int k = 0; k < 8; k++)
        z ^= (v >> k & 1) ? bit[8 * j + k] : 0;
      lane_shift[j][v] = z;
    }
}

static uint32_t past_lane(uint32_t c) {
  return lane_shift[0][c & 0xff] ^ lane_shift[1][(c >> 8) & 0xff] ^
         lane_shift[2][(c >> 16) & 0xff] ^ lane_shift[3][c >> 24];
}
#endif

#if TL_CRC_X86
#define CRC_HW __attribute__((target("sse4.2,crc32")))
CRC_HW static inline uint32_t crc_word(uint32_t c, const uint8_t *p) {
  uint64_t w;
  memcpy(&w, p, 8);
  return (uint32_t)_mm_crc32_u64(c, w);
}
CRC_HW static inline uint32_t crc_byte(uint32_t c, uint8_t b) { return _mm_crc32_u8(c, b); }

#elif TL_CRC_ARM
#define CRC_HW
static inline uint32_t crc_word(uint32_t c, const uint8_t *p) {
  uint64_t w;
  memcpy(&w, p, 8);
  return __crc32cd(c, w);
}
static inline uint32_t crc_byte(uint32_t c, uint8_t b) { return __crc32cb(c, b); }
#endif

#if TL_CRC_X86 || TL_CRC_ARM
CRC_HW static uint32_t crc_hw(uint32_t c, const uint8_t *p, size_t n) {
  if (n >= 3 * CRC_LANE)
    pthread_once(&lane_once, lane_shift_init);
  for (; n >= 3 * CRC_LANE; n -= 3 * CRC_LANE, p += 3 * CRC_LANE) {
    uint32_t a = c, b = 0, d = 0;
    for (size_t i = 0; i < CRC_LANE; i += 8) {
      a = crc_word(a, p + i);
      b = crc_word(b, p + CRC_LANE + i);
      d = crc_word(d, p + 2 * CRC_LANE + i);
    }
    c = past_lane(past_lane(a) ^ b) ^ d;
  }
  for (; n >= 8; n -= 8, p += 8)
    c = crc_word(c, p);
  while (n--)
    c = crc_byte(c, *p++);
  return c;
}
#endif

uint32_t tl_crc32c(uint32_t crc, const void *data, size_t n) {
  const uint8_t *p = data;
  crc = ~crc;
#if TL_CRC_X86
  if (tl__cpu_features() & TL__CPU_CRC32C)
    return ~crc_hw(crc, p, n);
#elif TL_CRC_ARM
  return ~crc_hw(crc, p, n);
#endif
  return ~crc_soft(crc, p, n);
}

/* ======================================================================== */
/* The header                                                                */

static void put_le64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

/* The checksum of a block: its first 4 header bytes, the columns it belongs
 * with, and the payload. */
static uint32_t block_crc(const uint8_t *head, int64_t seq, int64_t min, int64_t max,
                          const uint8_t *payload, size_t len) {
  uint8_t cols[28];
  memcpy(cols, head, 4);
  put_le64(cols + 4, (uint64_t)seq);
  put_le64(cols + 12, (uint64_t)min);
  put_le64(cols + 20, (uint64_t)max);
  return tl_crc32c(tl_crc32c(0, cols, sizeof cols), payload, len);
}

size_t tl__block_seal(uint8_t *out, int codec, size_t n, int64_t seq, int64_t min, int64_t max,
                      size_t payload_len) {
  out[0] = TL_BLOCK_VERSION;
  out[1] = (uint8_t)codec;
  out[2] = (uint8_t)(n & 0xff);
  out[3] = (uint8_t)(n >> 8);
  uint32_t crc = block_crc(out, seq, min, max, out + TL_BLOCK_HEADER, payload_len);
  for (int i = 0; i < 4; i++)
    out[4 + i] = (uint8_t)(crc >> (8 * i));
  return TL_BLOCK_HEADER + payload_len;
}

/* ======================================================================== */
/* Codec 1: LEB128 varints                                                   */

static size_t varint_encode(const int64_t *v, size_t n, int64_t lo, uint8_t *out) {
  size_t at = 0;
  for (size_t i = 0; i < n; i++)
    at += tl_varint_put(out + at, (uint64_t)v[i] - (uint64_t)lo);
  return at;
}

static int varint_decode(const uint8_t *in, size_t len, int64_t min, int64_t max, int64_t *out,
                         size_t n) {
  if (max < min)
    return TL_ECORRUPT;
  uint64_t span = (uint64_t)max - (uint64_t)min, base = (uint64_t)min;
  const uint8_t *p = in, *end = in + len;
  size_t i = 0;
  /* Fast path while a whole varint surely fits: timer samples take 1 to 3
   * bytes, read without the general loop. A zero last byte is a longer form
   * than the encoder writes, so the block was altered. */
  while (i < n && end - p >= 10) {
    uint64_t d = p[0];
    if (d < 0x80) {
      p += 1;
    } else if (p[1] < 0x80) {
      if (p[1] == 0)
        return TL_ECORRUPT;
      d = (d & 0x7f) | (uint64_t)p[1] << 7;
      p += 2;
    } else if (p[2] < 0x80) {
      if (p[2] == 0)
        return TL_ECORRUPT;
      d = (d & 0x7f) | (uint64_t)(p[1] & 0x7f) << 7 | (uint64_t)p[2] << 14;
      p += 3;
    } else if (!tl_varint_get(&p, end, &d)) {
      return TL_ECORRUPT;
    }
    if (d > span)
      return TL_ECORRUPT;
    out[i++] = (int64_t)(base + d);
  }
  for (; i < n; i++) {
    uint64_t d;
    if (!tl_varint_get(&p, end, &d) || d > span)
      return TL_ECORRUPT;
    out[i] = (int64_t)(base + d);
  }
  return p == end ? TL_OK : TL_ECORRUPT;
}

/* ======================================================================== */
/* Codec 2: bit packing with patched exceptions                              */

static unsigned bit_length(uint64_t x) { return x ? 64u - (unsigned)__builtin_clzll(x) : 0; }

/* The width bits at bit off of p, which holds len bytes; the caller
 * checked that they lie below len * 8, and nothing past len is read. */
static uint64_t get_bits(const uint8_t *p, size_t len, uint64_t off, unsigned width) {
  if (!width)
    return 0;
  size_t at = (size_t)(off >> 3);
  unsigned sh = (unsigned)(off & 7);
  uint64_t w = 0;
  if (at + 8 <= len)
    w = tl__load_le64(p + at);
  else
    for (size_t i = at; i < len; i++)
      w |= (uint64_t)p[i] << (8 * (i - at));
  w >>= sh;
  if (sh + width > 64) /* then byte at + 8 holds the last bits, and is inside */
    w |= (uint64_t)p[at + 8] << (64 - sh);
  return w & (~(uint64_t)0 >> (64 - width));
}

static size_t packed_bytes(size_t count, unsigned width) { return (count * width + 7) / 8; }

/* Payload bytes of n samples at width b, with e exceptions of pw + L - b
 * bits each. */
static size_t packed_size(size_t n, unsigned b, size_t e, unsigned pw, unsigned L) {
  return 3 + packed_bytes(n, b) + packed_bytes(e, pw + L - b);
}

/* Appends the width low bits of values to a bit stream: whole 64-bit words
 * at a time, little-endian. */
typedef struct {
  uint8_t *p;
  uint64_t acc;
  unsigned fill; /* bits in acc, < 64 */
} bit_writer;

static void store_le64(uint8_t *p, uint64_t v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  memcpy(p, &v, 8);
}

static inline void bits_put(bit_writer *w, uint64_t v, unsigned width) {
  w->acc |= v << w->fill; /* v < 2^width, width <= 63 */
  w->fill += width;
  if (w->fill >= 64) {
    store_le64(w->p, w->acc);
    w->p += 8;
    w->fill -= 64;
    w->acc = w->fill ? v >> (width - w->fill) : 0;
  }
}

/* Writes what is left, and returns the stream's end. */
static uint8_t *bits_end(bit_writer *w) {
  for (unsigned i = 0; i < w->fill; i += 8)
    *w->p++ = (uint8_t)(w->acc >> i);
  return w->p;
}

/* Packs groups of 8 differences (v - base) & mask of b bits into b bytes,
 * the mirror of unpack_groups: built in registers with fixed shifts, then
 * stored as whole words. Each store may write up to 7 zero bytes past its
 * group, which the next one (or the caller) writes over; the block bound
 * leaves room for them. Called with a constant b, each width compiles to
 * its own straight-line loop. */
static inline __attribute__((always_inline)) void
pack_groups(const int64_t *v, unsigned b, uint64_t base, size_t groups, uint8_t *out) {
  uint64_t mask = ((uint64_t)1 << b) - 1;
  for (size_t g = 0; g < groups; g++, v += 8, out += b) {
    uint64_t w[8] = {0};
    for (unsigned j = 0; j < 8; j++) {
      uint64_t d = ((uint64_t)v[j] - base) & mask;
      unsigned at = j * b, sh = at & 63;
      w[at >> 6] |= d << sh;
      if (sh + b > 64)
        w[(at >> 6) + 1] |= d >> (64 - sh);
    }
    for (unsigned k = 0; k < (b + 7) / 8; k++)
      store_le64(out + 8 * k, w[k]);
  }
}

/* Case lists made by macros, which clang-format cannot lay out stably. */
/* clang-format off */
#define PACK_CASE(B)                                                                               \
  case B:                                                                                          \
    pack_groups(v, B, base, groups, out);                                                          \
    break;
#define PACK_CASES_8(B)                                                                            \
  PACK_CASE(B) PACK_CASE(B + 1) PACK_CASE(B + 2) PACK_CASE(B + 3) PACK_CASE(B + 4)                 \
  PACK_CASE(B + 5) PACK_CASE(B + 6) PACK_CASE(B + 7)

static void pack_any(const int64_t *v, unsigned b, uint64_t base, size_t groups, uint8_t *out) {
  switch (b) {
    PACK_CASES_8(1)
    PACK_CASES_8(9)
    PACK_CASES_8(17)
    PACK_CASES_8(25)
    PACK_CASES_8(33)
    PACK_CASES_8(41)
    PACK_CASES_8(49)
    PACK_CASE(57) PACK_CASE(58) PACK_CASE(59) PACK_CASE(60) PACK_CASE(61) PACK_CASE(62)
    PACK_CASE(63)
  default: /* 0: nothing to pack */
    break;
  }
}
/* clang-format on */

/* How many differences v - base have each bit length 0..64. */
static void length_counts(const int64_t *v, size_t n, uint64_t base, uint32_t out[65]) {
  uint32_t count[4][65] = {{0}}; /* four tables, so that no count waits for the last */
  size_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int j = 0; j < 4; j++)
      count[j][bit_length((uint64_t)v[i + j] - base)]++;
  for (; i < n; i++)
    count[0][bit_length((uint64_t)v[i] - base)]++;
  for (int k = 0; k <= 64; k++)
    out[k] = count[0][k] + count[1][k] + count[2][k] + count[3][k];
}

/* The width that makes codec 2's payload smallest, from the counts of the
 * bit lengths: the samples longer than b are the exceptions. Its size into
 * *size and its exception count into *e. */
static unsigned packed_width(const uint32_t *count, size_t n, unsigned L, size_t *size, size_t *e) {
  unsigned pw = bit_length(n - 1);
  size_t longer[66]; /* longer[k]: samples of bit length k or more */
  longer[65] = 0;
  for (int k = 64; k >= 0; k--)
    longer[k] = longer[k + 1] + count[k];
  unsigned b = L;
  size_t best = packed_size(n, L, 0, pw, L);
  for (unsigned k = 0; k < L; k++) {
    size_t sz = packed_size(n, k, longer[k + 1], pw, L);
    if (sz < best) {
      best = sz;
      b = k;
    }
  }
  *size = best;
  *e = b < L ? longer[b + 1] : 0;
  return b;
}

/* Codec 2's payload at width b with e exceptions. */
static size_t packed_write(const int64_t *v, size_t n, int64_t lo, int64_t hi, unsigned b, size_t e,
                           uint8_t *out) {
  uint64_t base = (uint64_t)lo;
  unsigned L = bit_length((uint64_t)hi - base), pw = bit_length(n - 1);
  size_t i;
  out[0] = (uint8_t)b;
  out[1] = (uint8_t)(e & 0xff);
  out[2] = (uint8_t)(e >> 8);
  uint64_t mask = ((uint64_t)1 << b) - 1; /* b <= 63 */
  /* The low bits of every sample: whole groups of 8, then the rest. */
  size_t groups = n / 8;
  pack_any(v, b, base, groups, out + 3);
  bit_writer low = {out + 3 + groups * b, 0, 0};
  for (i = groups * 8; i < n; i++)
    bits_put(&low, ((uint64_t)v[i] - base) & mask, b);
  bit_writer ex = {bits_end(&low), 0, 0};
  if (!e)
    return (size_t)(ex.p - out);
  /* The exceptions' positions, noted without a branch (the slot is
   * overwritten until one is kept), then each with its high bits. */
  uint16_t at[TL_BLOCK_MAX + 1];
  size_t k = 0;
  for (i = 0; i < n; i++) {
    at[k] = (uint16_t)i;
    k += (((uint64_t)v[i] - base) >> b) != 0;
  }
  unsigned hw = L - b;
  for (size_t x = 0; x < k; x++) {
    bits_put(&ex, at[x], pw);
    bits_put(&ex, ((uint64_t)v[at[x]] - base) >> b, hw);
  }
  return (size_t)(bits_end(&ex) - out);
}

static size_t packed_encode(const int64_t *v, size_t n, int64_t lo, int64_t hi, uint8_t *out) {
  uint32_t count[65];
  size_t size, e;
  length_counts(v, n, (uint64_t)lo, count);
  unsigned b = packed_width(count, n, bit_length((uint64_t)hi - (uint64_t)lo), &size, &e);
  return packed_write(v, n, lo, hi, b, e, out);
}

/* Unpacks groups of 8 samples of b bits (b bytes each) with fixed shifts:
 * the loads of the last group end before end. b <= 56, so one 8-byte load
 * holds each sample. Called with a constant b, each width compiles to its
 * own straight-line loop. */
static inline __attribute__((always_inline)) void
unpack_groups(const uint8_t *p, unsigned b, uint64_t base, size_t groups, int64_t *out) {
  uint64_t mask = ((uint64_t)1 << b) - 1;
  for (size_t g = 0; g < groups; g++, p += b, out += 8)
    for (unsigned j = 0; j < 8; j++)
      out[j] = (int64_t)(base + ((tl__load_le64(p + (j * b >> 3)) >> (j * b & 7)) & mask));
}

/* Case lists made by macros, which clang-format cannot lay out stably. */
/* clang-format off */
#define UNPACK_CASE(B)                                                                             \
  case B:                                                                                          \
    unpack_groups(p, B, base, groups, out);                                                        \
    break;
#define UNPACK_CASES_8(B)                                                                          \
  UNPACK_CASE(B) UNPACK_CASE(B + 1) UNPACK_CASE(B + 2) UNPACK_CASE(B + 3) UNPACK_CASE(B + 4)      \
  UNPACK_CASE(B + 5) UNPACK_CASE(B + 6) UNPACK_CASE(B + 7)

static void unpack_any(const uint8_t *p, unsigned b, uint64_t base, size_t groups, int64_t *out) {
  switch (b) {
    UNPACK_CASES_8(1)
    UNPACK_CASES_8(9)
    UNPACK_CASES_8(17)
    UNPACK_CASES_8(25)
    UNPACK_CASES_8(33)
    UNPACK_CASES_8(41)
    UNPACK_CASES_8(49) /* up to 56 */
  default:
    break;
  }
}
/* clang-format on */

static int packed_decode(const uint8_t *in, size_t len, int64_t min, int64_t max, int64_t *out,
                         size_t n) {
  if (max < min || len < 3 || n < 1 || n > TL_BLOCK_MAX)
    return TL_ECORRUPT;
  uint64_t span = (uint64_t)max - (uint64_t)min, base = (uint64_t)min;
  unsigned L = bit_length(span), pw = bit_length(n - 1), b = in[0];
  size_t e = (size_t)in[1] | (size_t)in[2] << 8;
  /* The encoder's widths and counts only: an exception needs b < L, and
   * there are no more exceptions than samples. */
  if (b > L || e > n || (e && b == L))
    return TL_ECORRUPT;
  unsigned hw = L - b;
  size_t low_len = packed_bytes(n, b), ex_len = packed_bytes(e, pw + hw);
  if (len != 3 + low_len + ex_len)
    return TL_ECORRUPT;
  const uint8_t *low = in + 3, *ex = low + low_len;
  size_t avail = len - 3; /* bytes from low to the payload's end */
  /* Whole groups while their 8-byte loads stay inside the payload; the
   * rest (and widths a load cannot hold) bit by bit. */
  size_t groups = b && b <= 56 ? n / 8 : 0;
  if (groups && groups * b + 8 > avail)
    groups = avail >= 8 + b ? (avail - 8) / b : 0;
  unpack_any(low, b, base, groups, out);
  for (size_t i = groups * 8; i < n; i++)
    out[i] = (int64_t)(base + get_bits(low, low_len, (uint64_t)i * b, b));
  /* Unpatched samples lie below 2^b; only at b == L can that pass max. */
  if (b == L && L && span != (~(uint64_t)0 >> (64 - L)))
    for (size_t i = 0; i < n; i++)
      if ((uint64_t)out[i] - base > span)
        return TL_ECORRUPT;
  uint64_t xoff = 0;
  size_t next = 0; /* the lowest position the next exception may have */
  for (size_t k = 0; k < e; k++, xoff += pw + hw) {
    uint64_t pos = get_bits(ex, ex_len, xoff, pw), high = get_bits(ex, ex_len, xoff + pw, hw);
    if (pos < next || pos >= n || high == 0)
      return TL_ECORRUPT;
    uint64_t d = ((uint64_t)out[pos] - base) | high << b;
    if (d > span)
      return TL_ECORRUPT;
    out[pos] = (int64_t)(base + d);
    next = (size_t)pos + 1;
  }
  return TL_OK;
}

/* ======================================================================== */
/* Blocks                                                                    */

/* Codec 3 forced on one sample of 64 bits takes 33 + 10 bytes. */
size_t tl_block_bound(size_t n) { return TL_BLOCK_HEADER + 40 + n * 10; }

/* The payload in codec 2 or 3, whichever is smaller (codec 2 when equal,
 * as it decodes faster); its codec into *codec. Both sizes come from one
 * count of the bit lengths, and only the smaller is written. */
static size_t smaller_encode(const int64_t *v, size_t n, int64_t lo, int64_t hi, uint8_t *out,
                             int *codec) {
  uint32_t count[65];
  size_t packed, e;
  unsigned L = bit_length((uint64_t)hi - (uint64_t)lo);
  length_counts(v, n, (uint64_t)lo, count);
  unsigned b = packed_width(count, n, L, &packed, &e);
  tl__prefix_plan_t plan;
  if (tl__prefix_plan(count, L, &plan) >= packed) {
    *codec = TL_CODEC_PACKED;
    return packed_write(v, n, lo, hi, b, e, out);
  }
  *codec = TL_CODEC_PREFIX;
  return tl__prefix_encode(v, n, lo, &plan, out);
}

static size_t payload_encode(int *codec, const int64_t *v, size_t n, int64_t lo, int64_t hi,
                             uint8_t *out) {
  uint32_t count[65];
  tl__prefix_plan_t plan;
  switch (*codec) {
  case TL_CODEC_VARINT:
    return varint_encode(v, n, lo, out);
  case TL_CODEC_PACKED:
    return packed_encode(v, n, lo, hi, out);
  case TL_CODEC_PREFIX:
    length_counts(v, n, (uint64_t)lo, count);
    tl__prefix_plan(count, bit_length((uint64_t)hi - (uint64_t)lo), &plan);
    return tl__prefix_encode(v, n, lo, &plan, out);
  default:
    return smaller_encode(v, n, lo, hi, out, codec);
  }
}

size_t tl_block_encode_as(int codec, const int64_t *v, size_t n, int64_t seq, uint8_t *out,
                          int64_t *min, int64_t *max) {
  int64_t lo = v[0], hi = v[0];
  for (size_t i = 1; i < n; i++) {
    lo = v[i] < lo ? v[i] : lo;
    hi = v[i] > hi ? v[i] : hi;
  }
  size_t len = payload_encode(&codec, v, n, lo, hi, out + TL_BLOCK_HEADER);
  *min = lo;
  *max = hi;
  return tl__block_seal(out, codec, n, seq, lo, hi, len);
}

size_t tl_block_encode(const int64_t *v, size_t n, int64_t seq, uint8_t *out, int64_t *min,
                       int64_t *max) {
  return tl_block_encode_as(TL_CODEC_DEFAULT, v, n, seq, out, min, max);
}

int tl_block_verify(const tl_block *b, const char **why) {
  const char *dummy;
  if (!why)
    why = &dummy;
  *why = NULL;
  if (b->count < 1 || b->count > TL_BLOCK_MAX || b->min_ns < 0 || b->max_ns < b->min_ns) {
    *why = "impossible count, min or max";
    return TL_ECORRUPT;
  }
  if (!b->data || b->len < TL_BLOCK_HEADER || b->data[0] != TL_BLOCK_VERSION) {
    *why = "no valid block header";
    return TL_ECORRUPT;
  }
  const uint8_t *h = b->data;
  if (h[1] != b->codec || b->codec < TL_CODEC_VARINT || b->codec > TL_CODEC_PREFIX) {
    *why = "unknown codec";
    return TL_ECORRUPT;
  }
  if ((int64_t)(h[2] | h[3] << 8) != b->count) {
    *why = "sample count differs from its header";
    return TL_ECORRUPT;
  }
  uint32_t want =
      (uint32_t)h[4] | (uint32_t)h[5] << 8 | (uint32_t)h[6] << 16 | (uint32_t)h[7] << 24;
  if (block_crc(h, b->seq, b->min_ns, b->max_ns, h + TL_BLOCK_HEADER, b->len - TL_BLOCK_HEADER) !=
      want) {
    *why = "checksum mismatch";
    return TL_ECORRUPT;
  }
  return TL_OK;
}

int tl_block_decode(const tl_block *b, int64_t *out, const char **why) {
  int err = tl_block_verify(b, why);
  if (err)
    return err;
  const uint8_t *p = b->data + TL_BLOCK_HEADER;
  size_t len = b->len - TL_BLOCK_HEADER, n = (size_t)b->count;
  int err2 = b->codec == TL_CODEC_VARINT ? varint_decode(p, len, b->min_ns, b->max_ns, out, n)
             : b->codec == TL_CODEC_PACKED
                 ? packed_decode(p, len, b->min_ns, b->max_ns, out, n)
                 : tl__prefix_decode(p, len, b->min_ns, b->max_ns, out, n);
  if (err2) {
    if (why)
      *why = "samples do not decode";
    return TL_ECORRUPT;
  }
  return TL_OK;
}

size_t tl__block_upgrade_v1(const uint8_t *in, size_t len, int64_t seq, int64_t count, int64_t min,
                            int64_t max, int64_t *scratch, uint8_t *out) {
  if (count < 1 || count > TL_BLOCK_MAX || min < 0 || max < min ||
      varint_decode(in, len, min, max, scratch, (size_t)count))
    return 0;
  /* Codec 1 still: the migration gives the block a header and leaves its
   * codec column as it is. */
  int64_t lo, hi;
  size_t n = tl_block_encode_as(TL_CODEC_VARINT, scratch, (size_t)count, seq, out, &lo, &hi);
  return lo == min && hi == max ? n : 0;
}
