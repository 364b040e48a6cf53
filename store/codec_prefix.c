/* codec_prefix.c: codec 3 of sample blocks, the bit lengths of the
 * differences coded through a canonical prefix (Huffman) code. codec.c owns
 * the block around it (header, checksum, the choice of codec); this file
 * owns the payload only.
 *
 * Each sample is d = latency - block min, as in codec 2. Its symbol is the
 * bit length s of d (0..L, L = bit length of max_ns - min_ns), written as
 * the symbol's code, then, for s >= 2, the s - 1 bits of d below its
 * highest set bit (that bit is implied). Timer data spreads over a few bit
 * lengths with a long tail, so the common lengths take 1-3 bits of code
 * where codec 2 spends the width of the block's slowest common sample on
 * every one. The payload:
 *   first ceil((L + 1) / 2) bytes  the code length of each symbol 0..L, 0
 *                 (absent) to PREFIX_MAX_LEN, 4 bits each: symbol k in the
 *                 low half of byte k / 2 when k is even, the high half when
 *                 odd; a spare high half is 0
 *   then          for each sample in order its code, then its low bits,
 *                 packed from bit 0 of each byte upwards to the payload's
 *                 last byte, filled with zero bits
 * The codes are canonical (as in DEFLATE): shorter codes first, and among
 * one length the smaller symbol first; a code is written from its first
 * bit, so that the decoder looks up the next PREFIX_MAX_LEN bits in one
 * table. The lengths may leave codes unused (a block of one symbol gives it
 * the length 1), never more codes than fit. The decoder refuses any length
 * above PREFIX_MAX_LEN, lengths that do not form a prefix code, a code that
 * no symbol has, a sample above max_ns, a stream that runs past the payload
 * or ends before its last byte. */
#include <string.h>

#include "store_internal.h"

/* The encoder's limit on a code's length: it keeps the decoder's table at
 * 4096 entries at most, and costs timer data nothing measurable (its
 * codes rarely pass 10 bits). */
enum { PREFIX_MAX_LEN = 12, PREFIX_SYMBOLS = 65 };

static unsigned bit_length(uint64_t x) { return x ? 64u - (unsigned)__builtin_clzll(x) : 0; }

static size_t lengths_bytes(unsigned L) { return (L + 2) / 2; }

/* The bits of a difference of symbol (bit length) s written after its code:
 * those below its highest set bit, which is implied. */
static unsigned low_count(unsigned s) { return s ? s - 1 : 0; }

/* ======================================================================== */
/* The code                                                                  */

/* Huffman code lengths of the nsym weights w (0: absent) into len, by
 * merging the two lightest nodes until one is left (nsym <= 65, so the
 * quadratic search costs little beside a block's samples). Returns the
 * longest length. */
static unsigned huffman_lengths(const uint64_t *w, unsigned nsym, uint8_t *len) {
  uint64_t weight[2 * PREFIX_SYMBOLS];
  int parent[2 * PREFIX_SYMBOLS], live[2 * PREFIX_SYMBOLS];
  unsigned nodes = nsym, present = 0;
  for (unsigned s = 0; s < nsym; s++) {
    weight[s] = w[s];
    live[s] = w[s] != 0;
    parent[s] = -1;
    present += w[s] != 0;
    len[s] = 0;
  }
  if (present == 1) {
    for (unsigned s = 0; s < nsym; s++)
      len[s] = w[s] ? 1 : 0;
    return 1;
  }
  for (unsigned left = present; left > 1; left--) {
    int a = -1, b = -1;
    for (unsigned k = 0; k < nodes; k++) {
      if (!live[k])
        continue;
      if (a < 0 || weight[k] < weight[a]) {
        b = a;
        a = (int)k;
      } else if (b < 0 || weight[k] < weight[b]) {
        b = (int)k;
      }
    }
    weight[nodes] = weight[a] + weight[b];
    live[nodes] = 1;
    parent[nodes] = -1;
    live[a] = live[b] = 0;
    parent[a] = parent[b] = (int)nodes++;
  }
  /* A parent is made after its children: depths from the root down. */
  uint8_t depth[2 * PREFIX_SYMBOLS];
  unsigned longest = 0;
  for (unsigned k = nodes; k-- > 0;) {
    depth[k] = parent[k] < 0 ? 0 : (uint8_t)(depth[parent[k]] + 1);
    if (k < nsym && w[k]) {
      len[k] = depth[k];
      longest = depth[k] > longest ? depth[k] : longest;
    }
  }
  return longest;
}

/* Code lengths of at most PREFIX_MAX_LEN bits: while the Huffman code is
 * longer, the weights are halved (each kept at 1 or more), which flattens
 * the rare symbols' tail; 65 equal weights need only 7 bits. */
static void limited_lengths(const uint64_t *count, unsigned nsym, uint8_t *len) {
  uint64_t w[PREFIX_SYMBOLS];
  memcpy(w, count, nsym * sizeof *w);
  while (huffman_lengths(w, nsym, len) > PREFIX_MAX_LEN)
    for (unsigned s = 0; s < nsym; s++)
      w[s] = w[s] ? (w[s] + 1) / 2 : 0;
}

/* The low n bits of v (n <= 16) in reverse order: four swaps, where a loop
 * over the bits took about a twentieth of decoding a block. */
static unsigned reversed(unsigned v, unsigned n) {
  v = (v >> 1 & 0x5555u) | (v & 0x5555u) << 1;
  v = (v >> 2 & 0x3333u) | (v & 0x3333u) << 2;
  v = (v >> 4 & 0x0f0fu) | (v & 0x0f0fu) << 4;
  v = (v >> 8 & 0x00ffu) | (v & 0x00ffu) << 8;
  return v >> (16 - n);
}

/* The canonical code of each symbol of length len[s], its bits reversed so
 * that its first bit is bit 0 (the order the stream is read in). */
static void canonical_codes(const uint8_t *len, unsigned nsym, uint16_t *code) {
  unsigned per_len[PREFIX_MAX_LEN + 1] = {0}, next[PREFIX_MAX_LEN + 1];
  for (unsigned s = 0; s < nsym; s++)
    per_len[len[s]]++;
  per_len[0] = 0;
  unsigned c = 0;
  for (unsigned l = 1; l <= PREFIX_MAX_LEN; l++) {
    c = (c + per_len[l - 1]) << 1;
    next[l] = c;
  }
  for (unsigned s = 0; s < nsym; s++) {
    code[s] = 0;
    if (!len[s])
      continue;
    code[s] = reversed(next[len[s]]++, len[s]);
  }
}

/* ======================================================================== */
/* Encoding                                                                  */

size_t tl__prefix_plan(const uint32_t *count, unsigned L, tl__prefix_plan_t *plan) {
  uint64_t weight[PREFIX_SYMBOLS], bits = 0;
  for (unsigned s = 0; s <= L; s++)
    weight[s] = count[s];
  limited_lengths(weight, L + 1, plan->len);
  for (unsigned s = 0; s <= L; s++)
    bits += weight[s] * (plan->len[s] + low_count(s));
  plan->L = L;
  plan->size = lengths_bytes(L) + (size_t)((bits + 7) / 8);
  return plan->size;
}

typedef struct {
  uint8_t *p;
  uint64_t acc;
  unsigned fill; /* bits in acc, < 64 */
} bit_writer;

/* Appends the low width bits of v (v < 2^width, width <= 63). */
static inline void put_bits(bit_writer *w, uint64_t v, unsigned width) {
  w->acc |= v << w->fill;
  w->fill += width;
  if (w->fill >= 64) {
    uint64_t le = w->acc;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    le = __builtin_bswap64(le);
#endif
    memcpy(w->p, &le, 8);
    w->p += 8;
    w->fill -= 64;
    w->acc = w->fill ? v >> (width - w->fill) : 0;
  }
}

size_t tl__prefix_encode(const int64_t *v, size_t n, int64_t lo, const tl__prefix_plan_t *plan,
                         uint8_t *out) {
  unsigned L = plan->L;
  size_t head = lengths_bytes(L);
  memset(out, 0, head);
  for (unsigned s = 0; s <= L; s++)
    out[s / 2] |= (uint8_t)(plan->len[s] << (4 * (s & 1)));
  uint16_t code[PREFIX_SYMBOLS];
  canonical_codes(plan->len, L + 1, code);
  bit_writer w = {out + head, 0, 0};
  for (size_t i = 0; i < n; i++) {
    uint64_t d = (uint64_t)v[i] - (uint64_t)lo;
    unsigned s = bit_length(d), l = plan->len[s], x = low_count(s);
    uint64_t low = s >= 2 ? d & (~(uint64_t)0 >> (65 - s)) : 0; /* the x bits below the highest */
    if (l + x <= 63) { /* code and low bits in one put: all but the rare huge sample */
      put_bits(&w, code[s] | low << l, l + x);
    } else {
      put_bits(&w, code[s], l);
      put_bits(&w, low, x);
    }
  }
  for (unsigned i = 0; i < w.fill; i += 8)
    *w.p++ = (uint8_t)(w.acc >> i);
  return (size_t)(w.p - out);
}

/* ======================================================================== */
/* Decoding                                                                  */

/* A table entry: see read_code. */
static uint32_t entry_make(unsigned l, unsigned s) {
  return (l + low_count(s)) | (63 - low_count(s)) << 8 | (uint32_t)(s > 0) << 31;
}

static inline unsigned entry_taken(uint32_t e) { return e & 0xff; }
static inline unsigned entry_low(uint32_t e) { return 63 - ((e >> 8) & 63); }

/* The difference d of the sample whose code starts at bit 0 of acc, its
 * entry e, when all its bits are there (taken <= 63): its bits shifted to
 * the top of the word, then down by one under the implied highest bit
 * (none for symbol 0, whose d is 0), then down to their place. */
static inline uint64_t sample_of(uint64_t acc, uint32_t e) {
  uint64_t top = acc << ((64 - entry_taken(e)) & 63);
  return (top >> 1 | (uint64_t)(e >> 31) << 63) >> ((e >> 8) & 63);
}

/* The lengths at the payload's start into len (symbols 0..L) and the table
 * of the next `bits` stream bits: each entry, for the code starting there,
 * the bits its sample takes (code and low bits) in bits 0-7, 63 less the
 * count of its low bits in bits 8-13 and whether its symbol is above 0 in
 * bit 31 (entry_make), so that the decoder moves on by the entry's low byte
 * and makes the sample in four operations (sample_of); 0 where no code
 * starts so. 0 when the lengths are not the encoder's kind of code.
 *
 * The table is built by doubling, as DEFLATE's decoders build theirs: a
 * code of length l starts at every 2^l-th entry from its own (the code
 * read from its first bit), so the table of the codes up to length l - 1,
 * copied once after itself, holds them at every entry of the table twice
 * its size, and the codes of length l then take their one entry each. An
 * entry no code starts at keeps entry 0's first 0. A block's table has
 * 1,024 entries or so; one written at a time, with the zeros before them,
 * they were about a tenth of decoding a block of 1,000 samples. */
static int read_code(const uint8_t *in, unsigned L, uint32_t *table, unsigned *bits) {
  uint8_t len[PREFIX_SYMBOLS];
  unsigned longest = 0;
  uint32_t kraft = 0; /* the share of codes used, in units of 2^-PREFIX_MAX_LEN */
  for (unsigned s = 0; s <= L; s++) {
    len[s] = (uint8_t)((in[s / 2] >> (4 * (s & 1))) & 0xf);
    if (len[s] > PREFIX_MAX_LEN)
      return 0;
    if (len[s])
      kraft += 1u << (PREFIX_MAX_LEN - len[s]);
    longest = len[s] > longest ? len[s] : longest;
  }
  if (!(L & 1) && in[L / 2] >> 4) /* the spare half of the last byte */
    return 0;
  if (!longest || kraft > 1u << PREFIX_MAX_LEN)
    return 0;
  uint16_t code[PREFIX_SYMBOLS];
  canonical_codes(len, L + 1, code);
  /* The symbols by length (each length's in symbol order): from[l] up to
   * from[l + 1] in by_len. */
  uint8_t by_len[PREFIX_SYMBOLS];
  unsigned from[PREFIX_MAX_LEN + 2] = {0}, next[PREFIX_MAX_LEN + 1];
  for (unsigned s = 0; s <= L; s++)
    from[len[s] + 1]++;
  for (unsigned l = 1; l <= PREFIX_MAX_LEN + 1; l++)
    from[l] += from[l - 1];
  memcpy(next, from, sizeof next);
  for (unsigned s = 0; s <= L; s++)
    by_len[next[len[s]]++] = (uint8_t)s;
  table[0] = 0;
  for (unsigned l = 1; l <= longest; l++) {
    size_t half = (size_t)1 << (l - 1);
    memcpy(table + half, table, half * sizeof *table);
    for (unsigned k = from[l]; k < from[l + 1]; k++) {
      unsigned s = by_len[k];
      table[code[s]] = entry_make(l, s);
    }
  }
  *bits = longest;
  return 1;
}

/* Reads the stream from bit 0 of each byte upwards, 56 bits or more ready
 * after each refill; past the end it takes zero bytes and counts them, so
 * a stream that ran over is found at the end without a read outside. */
typedef struct {
  const uint8_t *p, *end;
  uint64_t acc;
  unsigned nbits;
  size_t over; /* zero bytes taken past the end */
} bit_reader;

static inline void refill(bit_reader *r) {
  if (r->end - r->p >= 8) {
    r->acc |= tl__load_le64(r->p) << r->nbits;
    r->p += (63 - r->nbits) >> 3;
    r->nbits |= 56;
    return;
  }
  while (r->nbits <= 56) {
    uint64_t b = 0;
    if (r->p < r->end)
      b = *r->p++;
    else
      r->over++;
    r->acc |= b << r->nbits;
    r->nbits += 8;
  }
}

static inline uint64_t take_bits(bit_reader *r, unsigned width) { /* width <= 56, ready */
  uint64_t v = r->acc & ((((uint64_t)1) << width) - 1);
  r->acc >>= width;
  r->nbits -= width;
  return v;
}

/* The s - 1 bits of d below its highest: up to 63, so in two reads when
 * they may not all be ready. */
static inline uint64_t low_bits(bit_reader *r, unsigned x) {
  if (x <= 40)
    return take_bits(r, x);
  uint64_t v = take_bits(r, 32);
  refill(r);
  return v | take_bits(r, x - 32) << 32;
}

int tl__prefix_decode(const uint8_t *in, size_t len, int64_t min, int64_t max, int64_t *out,
                      size_t n) {
  if (max < min || n < 1 || n > TL_BLOCK_MAX)
    return TL_ECORRUPT;
  uint64_t span = (uint64_t)max - (uint64_t)min, base = (uint64_t)min;
  unsigned L = bit_length(span), bits;
  size_t head = lengths_bytes(L);
  uint32_t table[1u << PREFIX_MAX_LEN];
  if (len <= head || !read_code(in, L, table, &bits))
    return TL_ECORRUPT;
  bit_reader r = {in + head, in + len, 0, 0, 0};
  uint64_t mask = ((uint64_t)1 << bits) - 1;
  /* Each sample's entry is looked up as soon as the one before it is taken
   * off, before the refill: the next `bits` bits are ready by then (the
   * usual sample takes far fewer than the 56 of a refill), so the refill's
   * load and shift stay off the chain from one look-up to the next. Every
   * sample starts with 56 bits or more ready: both ways end with a refill. */
  refill(&r);
  uint32_t e = table[r.acc & mask];
  for (size_t i = 0; i < n; i++) {
    unsigned taken = entry_taken(e);
    if (!e)
      return TL_ECORRUPT;
    uint64_t d;
    if (taken + bits <= r.nbits) { /* this sample and the next look-up ready */
      d = sample_of(r.acc, e);
      r.acc >>= taken;
      r.nbits -= taken;
      e = table[r.acc & mask];
      refill(&r);
    } else {
      if (taken <= 56) { /* all its bits ready: a refill leaves 56 or more */
        d = sample_of(r.acc, e);
        r.acc >>= taken;
        r.nbits -= taken;
      } else {
        unsigned x = entry_low(e);
        take_bits(&r, taken - x);
        d = ((uint64_t)1 << x) | low_bits(&r, x);
      }
      refill(&r);
      e = table[r.acc & mask];
    }
    if (d > span)
      return TL_ECORRUPT;
    out[i] = (int64_t)(base + d);
  }
  /* Every bit read lies inside the stream, and its last byte holds some. */
  size_t stream = len - head, used = (size_t)(r.p - (in + head)) + r.over;
  uint64_t consumed = (uint64_t)used * 8 - r.nbits;
  return consumed <= (uint64_t)stream * 8 && consumed + 8 > (uint64_t)stream * 8 ? TL_OK
                                                                                 : TL_ECORRUPT;
}
