/* test_codec.c: codec 2, the bit-packed blocks with patched exceptions that
 * tl writes (with codec 3, test_codec_prefix.c): round trips of every shape of data and block size,
 * payloads crafted with a correct checksum that must still be refused, the varints of every stored
 * form, and blocks of codec 1 read, checked and merged next to codec 2 ones. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "store_internal.h"
#include "support.h"
#include "support_codec.h"

static uint64_t next_random(uint64_t *x) {
  *x ^= *x << 13;
  *x ^= *x >> 7;
  *x ^= *x << 17;
  return *x;
}

static int64_t v[TL_BLOCK_MAX], back[TL_BLOCK_MAX]; /* in and out of every block */
static uint8_t buf[TL_BLOCK_HEADER + 16 + TL_BLOCK_MAX * 10];

static unsigned bits_of(uint64_t x) { return x ? 64u - (unsigned)__builtin_clzll(x) : 0; }

static void put_bit_by_bit(uint8_t *p, uint64_t *at, uint64_t value, unsigned width) {
  for (unsigned i = 0; i < width; i++, ++*at)
    if (value >> i & 1)
      p[*at / 8] |= (uint8_t)(1u << (*at % 8));
}

/* Codec 2's payload of v[0..n), written one bit at a time from its
 * description in codec.c (and docs/schema.md): the bytes every tl writes
 * and reads, so the fast encoder must produce exactly these. */
static size_t reference_payload(size_t n, uint8_t *out) {
  int64_t lo = v[0], hi = v[0];
  for (size_t i = 1; i < n; i++) {
    lo = v[i] < lo ? v[i] : lo;
    hi = v[i] > hi ? v[i] : hi;
  }
  unsigned L = bits_of((uint64_t)hi - (uint64_t)lo), pw = bits_of(n - 1), b = L;
  /* The smallest payload; the full width (no exceptions) on a tie with it,
   * else the narrowest width. */
  size_t e_of[65] = {0}, size[65], best;
  for (unsigned k = 0; k <= L; k++) {
    for (size_t i = 0; i < n; i++)
      e_of[k] += bits_of((uint64_t)v[i] - (uint64_t)lo) > k;
    size[k] = 3 + (n * k + 7) / 8 + (e_of[k] * (pw + L - k) + 7) / 8;
  }
  best = size[L];
  for (unsigned k = 0; k < L; k++)
    if (size[k] < best) {
      best = size[k];
      b = k;
    }
  memset(out, 0, best);
  out[0] = (uint8_t)b;
  out[1] = (uint8_t)(e_of[b] & 0xff);
  out[2] = (uint8_t)(e_of[b] >> 8);
  uint64_t at = 0, mask = b ? ~(uint64_t)0 >> (64 - b) : 0;
  for (size_t i = 0; i < n; i++)
    put_bit_by_bit(out + 3, &at, ((uint64_t)v[i] - (uint64_t)lo) & mask, b);
  uint8_t *ex = out + 3 + (n * b + 7) / 8;
  at = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t d = (uint64_t)v[i] - (uint64_t)lo;
    if (b < 64 && d >> b) {
      put_bit_by_bit(ex, &at, i, pw);
      put_bit_by_bit(ex, &at, d >> b, L - b);
    }
  }
  return best;
}

/* Encodes v[0..n) in codec 2 (into a buffer of exactly tl_block_bound(n)
 * bytes, for the sanitizers), checks the bytes against the reference,
 * decodes them and compares; returns the payload's exception count. */
static size_t round_trip_n(size_t n) {
  int64_t lo, hi;
  uint8_t *exact = malloc(tl_block_bound(n));
  assert_non_null(exact);
  size_t len = tl_block_encode_as(TL_CODEC_PACKED, v, n, 5, exact, &lo, &hi);
  assert_true(len <= tl_block_bound(n));
  memcpy(buf, exact, len);
  free(exact);
  static uint8_t want[16 + TL_BLOCK_MAX * 10];
  size_t want_len = reference_payload(n, want);
  assert_int_equal(len, TL_BLOCK_HEADER + want_len);
  assert_memory_equal(buf + TL_BLOCK_HEADER, want, want_len);
  assert_int_equal(buf[1], TL_CODEC_PACKED);
  tl_block b = {.seq = 5,
                .count = (int64_t)n,
                .min_ns = lo,
                .max_ns = hi,
                .codec = TL_CODEC_PACKED,
                .data = buf,
                .len = len};
  const char *why = NULL;
  if (tl_block_decode(&b, back, &why) != TL_OK)
    fail_msg("n %zu: %s", n, why);
  assert_memory_equal(v, back, n * sizeof *v);
  for (size_t i = 0; i < n; i++) {
    assert_true(lo <= v[i] && v[i] <= hi);
  }
  return (size_t)buf[TL_BLOCK_HEADER + 1] | (size_t)buf[TL_BLOCK_HEADER + 2] << 8;
}

/* Timer-like data: a tight cluster above 1 ms and a rare slow tail. */
static int64_t timer_sample(uint64_t *x) {
  uint64_t r = next_random(x);
  int64_t ns = 1000000 + (int64_t)(r % 60000);
  if (r % 100 < 3)
    ns += (int64_t)(next_random(x) % 100000000);
  return ns;
}

static void round_trips(void **state) {
  (void)state;
  uint64_t x = 0x9e3779b97f4a7c15u;
  /* Every block size up to 300, then a dense sample up to the largest. */
  for (size_t n = 1; n <= TL_BLOCK_MAX; n += n < 300 ? 1 : 37 + (n % 5)) {
    for (size_t i = 0; i < n; i++)
      v[i] = timer_sample(&x);
    round_trip_n(n);
    /* Uniform in a random width: no exceptions are worth it. */
    unsigned bits = (unsigned)(next_random(&x) % 63);
    for (size_t i = 0; i < n; i++)
      v[i] = (int64_t)(next_random(&x) >> 1 & ((((uint64_t)1) << bits) - 1));
    round_trip_n(n);
  }
  round_trip_n(TL_BLOCK_MAX);

  /* Timer data has exceptions, and takes far fewer bytes than varints. */
  for (size_t i = 0; i < TL_BLOCK_MAX; i++)
    v[i] = timer_sample(&x);
  assert_true(round_trip_n(TL_BLOCK_MAX) > 0);
  int64_t lo, hi;
  uint8_t old[TL_BLOCK_HEADER + 16 + TL_BLOCK_MAX * 10];
  size_t packed = tl_block_encode(v, TL_BLOCK_MAX, 0, buf, &lo, &hi);
  size_t varint = tl_block_encode_as(TL_CODEC_VARINT, v, TL_BLOCK_MAX, 0, old, &lo, &hi);
  assert_true(packed * 5 < varint * 4);

  /* All equal (no bits at all), one value, and the extremes. */
  for (size_t i = 0; i < TL_BLOCK_MAX; i++)
    v[i] = 123456789;
  assert_int_equal(round_trip_n(TL_BLOCK_MAX), 0);
  assert_int_equal(buf[TL_BLOCK_HEADER], 0);
  v[0] = 0;
  round_trip_n(1);
  v[0] = INT64_MAX;
  round_trip_n(1);
  for (size_t i = 0; i < TL_BLOCK_MAX; i++)
    v[i] = i % 3 ? INT64_MAX - (int64_t)(i % 7) : (int64_t)(i % 5);
  round_trip_n(TL_BLOCK_MAX);
  round_trip_n(2);
  /* One sample at the largest spread among small ones: one exception of
   * 63 bits' reach. */
  for (size_t i = 0; i < TL_BLOCK_MAX; i++)
    v[i] = (int64_t)(i % 4);
  v[777] = INT64_MAX;
  assert_int_equal(round_trip_n(TL_BLOCK_MAX), 1);
  v[0] = INT64_MAX;
  assert_int_equal(round_trip_n(TL_BLOCK_MAX), 2);
  /* Every width from 0 to 63 bits, each with a few wider exceptions. */
  for (unsigned bits = 0; bits < 63; bits++) {
    for (size_t i = 0; i < 1000; i++)
      v[i] = (int64_t)(next_random(&x) & ((((uint64_t)1) << bits) - 1));
    v[10] = v[500] = v[999] = INT64_MAX >> (bits / 2);
    round_trip_n(1000);
  }
}

/* A crafted payload of this test's codec (support_codec.h). */
static int decode_crafted(const uint8_t *payload, size_t len, size_t n, int64_t min, int64_t max) {
  return tl_test_decode_crafted(TL_CODEC_PACKED, payload, len, n, min, max, back);
}

static void crafted_payloads(void **state) {
  (void)state;
  /* Three samples 0, 5, 3 between min 0 and max 5: L = 3 bits, positions
   * of 2 bits. */
  const uint8_t plain[] = {3, 0, 0, 0xe8, 0x00}; /* b = 3: 0 | 5 << 3 | 3 << 6 */
  assert_int_equal(decode_crafted(plain, sizeof plain, 3, 0, 5), TL_OK);
  assert_int_equal(back[0], 0);
  assert_int_equal(back[1], 5);
  assert_int_equal(back[2], 3);
  /* b = 2 and one exception: sample 1 is low 1, high 1. */
  const uint8_t patched[] = {2, 1, 0, 0x34, 0x05}; /* lows 0 | 1 << 2 | 3 << 4; pos 1 | 1 << 2 */
  assert_int_equal(decode_crafted(patched, sizeof patched, 3, 0, 5), TL_OK);
  assert_int_equal(back[1], 5);
  assert_int_equal(back[2], 3);

  static const struct {
    uint8_t p[8];
    size_t len;
    const char *what;
  } bad[] = {
      {{3, 0, 0, 0xf8, 0x00}, 5, "a sample above max at the full width (7 > 5)"},
      {{4, 0, 0, 0xe8, 0x00}, 5, "a width above the spread's"},
      {{255, 0, 0, 0xe8, 0x00}, 5, "an impossible width"},
      {{3, 1, 0, 0xe8, 0x00, 0x05}, 6, "an exception at the full width"},
      {{2, 4, 0, 0x34, 0x05, 0, 0}, 7, "more exceptions than samples"},
      {{2, 0xff, 0xff, 0x34, 0x05}, 5, "65535 exceptions"},
      {{2, 1, 0, 0x34, 0x07}, 5, "an exception past the block (position 3)"},
      {{2, 1, 0, 0x34, 0x01}, 5, "an exception with no high part"},
      {{2, 2, 0, 0x34, 0x2d}, 5, "the same position twice"},
      {{2, 1, 0, 0x34, 0x06}, 5, "a patched sample above max (3 | 4)"},
      {{3, 0, 0, 0xe8, 0x00, 0x00}, 6, "a trailing byte"},
      {{3, 0, 0, 0xe8}, 4, "a truncated payload"},
      {{3, 0}, 2, "no room for the counts"},
      {{0}, 0, "an empty payload"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof *bad; k++)
    if (decode_crafted(bad[k].p, bad[k].len, 3, 0, 5) != TL_ECORRUPT)
      fail_msg("accepted %s", bad[k].what);

  /* Random payloads behind plausible widths and counts, at every size:
   * never a crash or a read past the payload, and what decodes lies
   * between min and max. */
  uint64_t x = 42;
  uint8_t *p = malloc(40000);
  assert_non_null(p);
  for (int round = 0; round < 3000; round++) {
    size_t n = 1 + (size_t)(next_random(&x) % TL_BLOCK_MAX);
    int64_t min = (int64_t)(next_random(&x) >> 40);
    int64_t max = min + (int64_t)(next_random(&x) >> (1 + next_random(&x) % 63));
    if (max < min)
      max = INT64_MAX;
    size_t len = (size_t)(next_random(&x) % (n * 3 + 40));
    for (size_t i = 0; i < len; i++)
      p[i] = (uint8_t)next_random(&x);
    if (len >= 3) {
      p[0] = (uint8_t)(next_random(&x) % 66);
      size_t e = next_random(&x) % 4 ? next_random(&x) % (n / 8 + 2) : next_random(&x) % 65536;
      p[1] = (uint8_t)e;
      p[2] = (uint8_t)(e >> 8);
    }
    decode_crafted(p, len, n, min, max);
  }
  free(p);
}

typedef struct {
  int64_t *v;
  size_t n;
} collected;

static int collect(void *ctx, const int64_t *vals, size_t n) {
  collected *c = ctx;
  memcpy(c->v + c->n, vals, n * sizeof *vals);
  c->n += n;
  return 0;
}

/* One session of n timer-like samples written through the writer in the
 * given codec; its id. */
static int64_t write_session(tl_store *s, int codec, const int64_t *samples, size_t n) {
  tl_session_spec spec = {.run_uuid = "run",
                          .label = codec == TL_CODEC_VARINT ? "old" : "new",
                          .probe = "settimeout",
                          .command_line = "test_codec",
                          .host_fingerprint = "0123456789abcdef",
                          .hostname = "testhost",
                          .libuv_version = "1.44.2"};
  assert_int_equal(tl_store_set_codec(s, codec), TL_OK);
  tl_writer *w;
  char uuid[37];
  assert_int_equal(tl_writer_begin(s, &spec, &w, uuid), TL_OK);
  /* In uneven batches, so the open block is rewritten as it grows. */
  for (size_t at = 0; at < n;) {
    size_t k = n - at < 3001 ? n - at : 3001;
    assert_int_equal(tl_writer_add(w, samples + at, k), TL_OK);
    assert_int_equal(tl_writer_flush(w), TL_OK);
    at += k;
  }
  int64_t id = tl_writer_session_id(w);
  assert_int_equal(tl_writer_end(w, "complete"), TL_OK);
  return id;
}

/* The integer sql gives over the database at path, with the one at other
 * (may be NULL) attached as o. */
static int64_t query_in(const char *path, const char *other, const char *sql) {
  sqlite3 *db;
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
  if (other) {
    assert_int_equal(sqlite3_prepare_v2(db, "ATTACH ? AS o", -1, &st, NULL), SQLITE_OK);
    sqlite3_bind_text(st, 1, other, -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
  }
  assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  int64_t r = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return r;
}

static int64_t query_int(const char *path, const char *sql) { return query_in(path, NULL, sql); }

/* The varints every stored form writes its numbers in (tl_varint_*, base):
 * each length from 1 to 10 bytes round trips at its edges, its length as
 * written, one after another; a longer form than the shortest, bits past
 * 64 and a varint cut short are refused, leaving the place as it was. */
static void varints(void **state) {
  (void)state;
  uint8_t b[16 * 40];
  uint64_t vals[40], got;
  size_t n = 0, at = 0;
  vals[n++] = 0;
  for (unsigned k = 7; k < 64; k += 7) { /* each length's edges: 2^k - 1 and 2^k */
    vals[n++] = ((uint64_t)1 << k) - 1;
    vals[n++] = (uint64_t)1 << k;
  }
  vals[n++] = UINT64_MAX;
  for (size_t i = 0; i < n; i++) {
    size_t len = tl_varint_put(b + at, vals[i]);
    assert_int_equal(len, tl_varint_len(vals[i]));
    unsigned bits = 64 - (unsigned)__builtin_clzll(vals[i] | 1);
    assert_int_equal(len, (bits + 6) / 7);
    at += len;
  }
  const uint8_t *p = b, *end = b + at;
  for (size_t i = 0; i < n; i++) {
    assert_true(tl_varint_get(&p, end, &got));
    assert_true(got == vals[i]);
  }
  assert_ptr_equal(p, end);
  assert_false(tl_varint_get(&p, end, &got)); /* nothing left */
  static const struct {
    uint8_t bytes[11];
    size_t len;
  } bad[] = {
      {{0x80, 0x00}, 2},                                                  /* 0 in two bytes */
      {{0xff, 0x80, 0x00}, 3},                                            /* a zero last byte */
      {{0x80}, 1},                                                        /* cut short */
      {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}, 10}, /* bit 64 */
      {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x81, 0x01}, 11}, /* 11 bytes */
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    p = bad[i].bytes;
    got = 7;
    assert_false(tl_varint_get(&p, bad[i].bytes + bad[i].len, &got));
    assert_ptr_equal(p, bad[i].bytes);
    assert_true(got == 7);
  }
}

/* A database of codec 1 blocks reads the same numbers as codec 2 ones,
 * passes its check, and a merge copies its blocks as they are. */
static void old_blocks_stay_readable(void **state) {
  tl_test_fixture *f = *state;
  enum { N = 20000 };
  int64_t *samples = malloc(N * sizeof *samples);
  uint64_t x = 7;
  for (size_t i = 0; i < N; i++)
    samples[i] = timer_sample(&x);
  char *old_db = tl_test_path(f->dir, "old.db");
  tl_store *s;
  assert_int_equal(tl_store_open(&s, old_db, 0), TL_OK);
  assert_int_equal(tl_store_set_codec(s, 99), TL_EINVAL);
  write_session(s, TL_CODEC_VARINT, samples, N);
  tl_store_close(s);
  assert_int_equal(query_int(old_db, "SELECT count(*) FROM sample_blocks WHERE codec != 1"), 0);

  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  int64_t new_id = write_session(s, TL_CODEC_DEFAULT, samples, N);
  const char *paths[] = {old_db};
  tl_merge_stats ms;
  assert_int_equal(tl_store_merge(s, paths, 1, &ms), TL_OK);
  assert_int_equal(ms.samples_added, N);
  assert_int_equal(tl_store_check(s, NULL, NULL), TL_OK);
  tl_filter flt;
  tl_filter_init(&flt);
  tl_session_list list;
  assert_int_equal(tl_store_sessions(s, &flt, &list), TL_OK);
  assert_int_equal(list.count, 2);
  for (size_t k = 0; k < list.count; k++) {
    collected c = {malloc(N * sizeof(int64_t)), 0};
    assert_int_equal(tl_store_scan(s, list.items[k].id, collect, &c), TL_OK);
    assert_int_equal(c.n, N);
    assert_memory_equal(c.v, samples, N * sizeof *samples);
    free(c.v);
  }
  tl_session_list_free(&list);
  tl_store_close(s);
  /* The merged blocks kept their codec and bytes; the new ones are smaller. */
  char sql[256];
  snprintf(sql, sizeof sql,
           "SELECT count(*) FROM sample_blocks WHERE codec IN (2, 3) AND session_id = %lld",
           (long long)new_id);
  assert_int_equal(query_int(f->db, sql), (N + TL_BLOCK_MAX - 1) / TL_BLOCK_MAX);
  assert_int_equal(query_int(f->db, "SELECT count(*) FROM sample_blocks WHERE codec = 1"),
                   (N + TL_BLOCK_MAX - 1) / TL_BLOCK_MAX);
  assert_true(query_int(f->db, "SELECT sum(length(data)) FROM sample_blocks WHERE codec != 1") <
              query_int(f->db, "SELECT sum(length(data)) FROM sample_blocks WHERE codec = 1"));
  assert_int_equal(query_in(f->db, old_db,
                            "SELECT count(*) FROM sample_blocks b JOIN o.sample_blocks ob "
                            "ON ob.seq = b.seq AND ob.codec = b.codec AND ob.data = b.data"),
                   (N + TL_BLOCK_MAX - 1) / TL_BLOCK_MAX);
  free(old_db);
  free(samples);
}

/* Import writes codec 2 or 3, and the samples come back. */
static void import_writes_packed(void **state) {
  tl_test_fixture *f = *state;
  char csv[] = "latency_ns\n1000000\n1000500\n999999\n250000000\n1000001\n";
  FILE *in = fmemopen(csv, strlen(csv), "r");
  assert_non_null(in);
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  tl_import_opts o;
  tl_import_opts_init(&o);
  o.label = "imported";
  o.probe = "settimeout";
  int64_t got = 0;
  assert_int_equal(tl_store_import(s, in, &o, NULL, NULL, NULL, &got, NULL), TL_OK);
  fclose(in);
  assert_int_equal(got, 5);
  collected c = {malloc(5 * sizeof(int64_t)), 0};
  assert_int_equal(tl_store_scan(s, 1, collect, &c), TL_OK);
  const int64_t want[] = {1000000, 1000500, 999999, 250000000, 1000001};
  assert_memory_equal(c.v, want, sizeof want);
  free(c.v);
  tl_store_close(s);
  assert_int_equal(query_int(f->db, "SELECT codec IN (2, 3) FROM sample_blocks"), 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(round_trips),
      cmocka_unit_test(crafted_payloads),
      cmocka_unit_test(varints),
      cmocka_unit_test_setup_teardown(old_blocks_stay_readable, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(import_writes_packed, tl_test_setup, tl_test_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
