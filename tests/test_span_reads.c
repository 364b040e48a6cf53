/* test_span_reads.c: a file's blocks and stored summaries of sessions
 * asked close together, which it reads a span of ids a statement, come as
 * those of each session asked alone, in the order asked; a session the
 * sessions table lacks fails the blocks' read naming it, after the blocks
 * of the sessions before it, and is said to have no summary in its turn.
 * The samples' read on two threads hands over the same as one by one. */
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
#include "support_store.h"
#include "tl_store.h"

static uint64_t next_random(uint64_t *x) {
  *x ^= *x << 13;
  *x ^= *x >> 7;
  *x ^= *x << 17;
  return *x;
}

/* What a read hands over, a line a block or a summary. */
typedef struct {
  char *text;
  size_t len, cap;
} block_lines;

static int log_block(void *ctx, const tl_block *b) {
  block_lines *l = ctx;
  if (l->len + 256 > l->cap) {
    l->cap = l->cap * 2 + 4096;
    l->text = realloc(l->text, l->cap);
    assert_non_null(l->text);
  }
  l->len += (size_t)snprintf(l->text + l->len, l->cap - l->len,
                             "%lld %lld %lld %lld %lld %d %zu %08x\n", (long long)b->session_id,
                             (long long)b->seq, (long long)b->count, (long long)b->min_ns,
                             (long long)b->max_ns, b->codec, b->len, tl_crc32c(0, b->data, b->len));
  return TL_OK;
}

/* Every block but the odd ones of sessions with several. */
static int even_blocks(void *ctx, const tl_block *b) {
  (void)ctx;
  return b->seq % 2 == 0;
}

/* What scanning ids[0..n) hands over, and its error. */
static int scan_lines(tl_store *s, const int64_t *ids, size_t n, block_lines *l) {
  l->len = 0;
  if (l->text)
    l->text[0] = '\0';
  return tl_store_scan_blocks(s, ids, n, even_blocks, log_block, l);
}

/* The lines of ids[0..n) each scanned alone, stopping before `until`
 * (none: -1). */
static void lines_one_by_one(tl_store *s, const int64_t *ids, size_t n, int64_t until,
                             block_lines *all) {
  block_lines one = {NULL, 0, 0};
  all->len = 0;
  for (size_t i = 0; i < n && ids[i] != until; i++) {
    assert_int_equal(scan_lines(s, ids + i, 1, &one), TL_OK);
    if (all->len + one.len + 1 > all->cap) {
      all->cap = (all->len + one.len + 1) * 2;
      all->text = realloc(all->text, all->cap);
      assert_non_null(all->text);
    }
    memcpy(all->text + all->len, one.text ? one.text : "", one.len);
    all->len += one.len;
  }
  if (all->text)
    all->text[all->len] = '\0';
  free(one.text);
}

enum { SPAN_SESSIONS = 60 };

/* Sessions of 0 to 3 blocks and every one asked alone, all in order, with
 * a third left out (a span with gaps), and far apart (one by one); each way
 * the same blocks in the same order. */
static void blocks_by_span_as_one_by_one(void **state) {
  tl_test_fixture *f = *state;
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  int64_t ids[SPAN_SESSIONS], asked[SPAN_SESSIONS];
  int64_t *v = malloc(3 * TL_BLOCK_MAX * sizeof *v);
  assert_non_null(v);
  uint64_t x = 0x2545f4914f6cdd1du;
  for (int k = 0; k < SPAN_SESSIONS; k++) {
    size_t n = k % 7 == 3 ? 0 : k % 5 == 1 ? 2 * TL_BLOCK_MAX + 17 : 1 + next_random(&x) % 900;
    for (size_t i = 0; i < n; i++)
      v[i] = 50000 + (int64_t)(next_random(&x) % 300000);
    tl_session_spec spec = tl_test_spec("span");
    ids[k] = tl_test_write_session(s, &spec, v, n, 0);
  }
  free(v);
  block_lines want = {NULL, 0, 0}, got = {NULL, 0, 0};
  lines_one_by_one(s, ids, SPAN_SESSIONS, -1, &want);
  assert_int_equal(scan_lines(s, ids, SPAN_SESSIONS, &got), TL_OK);
  assert_string_equal(got.text, want.text);
  size_t n = 0;
  for (int k = 0; k < SPAN_SESSIONS; k++)
    if (k % 3 != 1)
      asked[n++] = ids[k];
  lines_one_by_one(s, asked, n, -1, &want);
  assert_int_equal(scan_lines(s, asked, n, &got), TL_OK);
  assert_string_equal(got.text, want.text);
  n = 0;
  for (int k = 0; k < SPAN_SESSIONS; k += 7)
    asked[n++] = ids[k];
  lines_one_by_one(s, asked, n, -1, &want);
  assert_int_equal(scan_lines(s, asked, n, &got), TL_OK);
  assert_string_equal(got.text, want.text);
  tl_store_close(s);

  /* A session row gone (its blocks left): first, in the middle and last of
   * a span, the read fails naming it, after the blocks of the sessions
   * before it. */
  static const int gone[] = {20, 0, SPAN_SESSIONS - 1};
  int was_gone[SPAN_SESSIONS] = {0};
  for (size_t g = 0; g < sizeof gone / sizeof *gone; g++) {
    int64_t lost = ids[gone[g]];
    char sql[128];
    snprintf(sql, sizeof sql, "PRAGMA foreign_keys = OFF; DELETE FROM sessions WHERE id = %lld",
             (long long)lost);
    tl_test_exec_sql(f->db, sql);
    assert_int_equal(tl_store_open(&s, f->db, TL_STORE_READONLY), TL_OK);
    n = 0;
    for (int k = 0; k < SPAN_SESSIONS; k++)
      if (!was_gone[k]) /* those gone before are not asked */
        asked[n++] = ids[k];
    was_gone[gone[g]] = 1;
    lines_one_by_one(s, asked, n, lost, &want);
    s->damaged_id = 0;
    assert_int_equal(scan_lines(s, asked, n, &got), TL_ECORRUPT);
    char said[96];
    snprintf(said, sizeof said, "session %lld is missing from the sessions table", (long long)lost);
    assert_non_null(strstr(tl_store_errmsg(s), said));
    assert_int_equal(s->damaged_id, lost);
    assert_string_equal(got.text, want.text);
    tl_store_close(s);
  }

  /* A session whose blocks no longer add up, in the middle of a span and
   * last: its error (the sessions gone above not asked). */
  n = 0;
  for (int k = 0; k < SPAN_SESSIONS; k++)
    if (!was_gone[k])
      asked[n++] = ids[k];
  const int64_t short_of[] = {asked[n / 2], asked[n - 1]};
  for (size_t i = 0; i < 2; i++) {
    char sql[160];
    snprintf(sql, sizeof sql, "UPDATE sessions SET sample_count = sample_count + 1 WHERE id = %lld",
             (long long)short_of[i]);
    tl_test_exec_sql(f->db, sql);
    assert_int_equal(tl_store_open(&s, f->db, TL_STORE_READONLY), TL_OK);
    assert_int_equal(scan_lines(s, asked, n, &got), TL_ECORRUPT);
    tl_session_list list;
    tl_filter flt;
    tl_filter_init(&flt);
    assert_int_equal(tl_store_sessions(s, &flt, &list), TL_OK);
    const char *uuid = NULL;
    for (size_t k = 0; k < list.count; k++)
      if (list.items[k].id == short_of[i])
        uuid = list.items[k].uuid;
    assert_non_null(uuid);
    assert_non_null(strstr(tl_store_errmsg(s), uuid));
    tl_session_list_free(&list);
    tl_store_close(s);
    snprintf(sql, sizeof sql, "UPDATE sessions SET sample_count = sample_count - 1 WHERE id = %lld",
             (long long)short_of[i]);
    tl_test_exec_sql(f->db, sql);
  }
  free(want.text);
  free(got.text);
}

/* The stored summaries a read hands over, a line each. */
static int log_blob(void *ctx, size_t index, const char *uuid, int64_t sample_count,
                    const uint8_t *blob, size_t len) {
  block_lines *l = ctx;
  if (l->len + 128 > l->cap) {
    l->cap = l->cap * 2 + 4096;
    l->text = realloc(l->text, l->cap);
    assert_non_null(l->text);
  }
  l->len +=
      (size_t)snprintf(l->text + l->len, l->cap - l->len, "%zu %s %lld %zu %08x\n", index, uuid,
                       (long long)sample_count, len, blob ? tl_crc32c(0, blob, len) : 0);
  return TL_OK;
}

/* The stored summaries of ids[0..n) read at once and each alone (its
 * place then 0, here its place in ids): the same lines. */
static void blobs_as_one_by_one(tl_store *s, const int64_t *ids, size_t n) {
  block_lines all = {NULL, 0, 0}, each = {NULL, 0, 0}, one = {NULL, 0, 0};
  assert_int_equal(s->ops->summary_blobs(s, ids, n, log_blob, &all), TL_OK);
  for (size_t i = 0; i < n; i++) {
    one.len = 0;
    assert_int_equal(s->ops->summary_blobs(s, ids + i, 1, log_blob, &one), TL_OK);
    assert_true(one.len > 2 && one.text[0] == '0' && one.text[1] == ' ');
    if (each.len + one.len + 32 > each.cap) {
      each.cap = (each.len + one.len + 32) * 2;
      each.text = realloc(each.text, each.cap);
      assert_non_null(each.text);
    }
    each.len += (size_t)sprintf(each.text + each.len, "%zu%.*s", i, (int)one.len - 1, one.text + 1);
  }
  assert_non_null(all.text);
  assert_non_null(each.text);
  assert_string_equal(all.text, each.text);
  free(all.text);
  free(each.text);
  free(one.text);
}

/* Sessions with a summary, one without (deleted), one gone from the
 * table, asked all in order, with gaps, with ids of no session before,
 * inside and after, and far apart. */
static void summary_blobs_by_span_as_one_by_one(void **state) {
  tl_test_fixture *f = *state;
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  int64_t ids[SPAN_SESSIONS], asked[SPAN_SESSIONS + 8];
  int64_t v[300];
  uint64_t x = 0x9fb21c651e98df25u;
  for (int k = 0; k < SPAN_SESSIONS; k++) {
    size_t n = k % 9 == 4 ? 0 : 1 + next_random(&x) % 300;
    for (size_t i = 0; i < n; i++)
      v[i] = 1000 + (int64_t)(next_random(&x) % 100000);
    tl_session_spec spec = tl_test_spec("sum");
    ids[k] = tl_test_write_session(s, &spec, v, n, 0);
  }
  tl_store_close(s);
  char sql[160];
  snprintf(sql, sizeof sql,
           "DELETE FROM session_summaries WHERE session_id = %lld; PRAGMA foreign_keys = OFF; "
           "DELETE FROM sessions WHERE id = %lld",
           (long long)ids[10], (long long)ids[30]);
  tl_test_exec_sql(f->db, sql);
  assert_int_equal(tl_store_open(&s, f->db, TL_STORE_READONLY), TL_OK);
  blobs_as_one_by_one(s, ids, SPAN_SESSIONS);
  size_t n = 0;
  asked[n++] = ids[0] - 1;
  for (int k = 0; k < SPAN_SESSIONS; k++)
    if (k % 4 != 2)
      asked[n++] = ids[k];
  asked[n++] = ids[SPAN_SESSIONS - 1] + 1;
  blobs_as_one_by_one(s, asked, n);
  n = 0;
  for (int k = 0; k < SPAN_SESSIONS; k += 9)
    asked[n++] = ids[k];
  blobs_as_one_by_one(s, asked, n);
  tl_store_close(s);
}

/* ------------------------------------------------------------------------ */
/* The threaded scan: each block decoded on whichever thread is ahead        */

/* The samples handed over, in the order handed, each session's after its
 * index (-1 - index; a session's samples may come in several calls); slow:
 * the callback takes its time, so that the worker is behind. */
typedef struct {
  int64_t *v;
  size_t n, cap, last;
  int slow;
} handed;

static void hand(handed *h, size_t session, const int64_t *v, size_t n) {
  if (h->n + n + 1 > h->cap) {
    h->cap = (h->n + n + 1) * 2;
    h->v = realloc(h->v, h->cap * sizeof *h->v);
    assert_non_null(h->v);
  }
  if (!h->n || h->last != session)
    h->v[h->n++] = -1 - (int64_t)session;
  h->last = session;
  memcpy(h->v + h->n, v, n * sizeof *v);
  h->n += n;
}

static int hand_threaded(void *ctx, size_t session, const int64_t *v, size_t n) {
  handed *h = ctx;
  volatile int64_t sum = 0;
  for (int pass = 0; pass < (h->slow ? 40 : 0); pass++)
    for (size_t i = 0; i < n; i++)
      sum += v[i];
  hand(h, session, v, n);
  return 0;
}

typedef struct {
  handed *h;
  size_t session;
} handed_one;

static int hand_one(void *ctx, const int64_t *v, size_t n) {
  handed_one *o = ctx;
  hand(o->h, o->session, v, n);
  return 0;
}

/* What scanning ids[0..n) one by one hands over, to the first of stop. */
static void one_by_one(tl_store *s, const int64_t *ids, size_t n, int64_t stop, handed *h) {
  h->n = 0;
  for (size_t i = 0; i < n && ids[i] != stop; i++) {
    handed_one o = {h, i};
    assert_int_equal(tl_store_scan(s, ids[i], hand_one, &o), TL_OK);
  }
}

enum { THREADED_SESSIONS = 700 };

/* Enough sessions for several batches (256 sessions a batch at most), of
 * one block mostly and of three now and then. The threaded scan hands over
 * what scanning each session alone does, in the same order, with a worker
 * that keeps up and with one that is behind (the share of blocks it
 * decodes moves each way). With the blocks of two sessions damaged, the
 * scan fails naming the first and hands over the sessions before it and
 * nothing after, wherever the two fall: the first batch hands blocks 0-2
 * and 7-10 to the worker and decodes 3-6 on the reading thread, so that
 * the worker's damage can be the first while the reading thread meets the
 * second sooner. */
static void threaded_scan_as_one_by_one(void **state) {
  tl_test_fixture *f = *state;
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  int64_t ids[THREADED_SESSIONS];
  int64_t *v = malloc(3 * TL_BLOCK_MAX * sizeof *v);
  assert_non_null(v);
  uint64_t x = 0x9e3779b97f4a7c15u;
  for (int k = 0; k < THREADED_SESSIONS; k++) {
    size_t n = k % 50 == 20 ? 2 * TL_BLOCK_MAX + 5 : 1 + next_random(&x) % 400;
    int64_t base = 1000 * (k % 9), spread = k % 4 == 0 ? 5000000 : 300000;
    for (size_t i = 0; i < n; i++)
      v[i] = base + (int64_t)(next_random(&x) % (uint64_t)spread);
    tl_session_spec spec = tl_test_spec("threaded");
    ids[k] = tl_test_write_session(s, &spec, v, n, 0);
  }
  free(v);
  tl_store_close(s);

  assert_int_equal(tl_store_open(&s, f->db, TL_STORE_READONLY), TL_OK);
  handed want = {NULL, 0, 0, 0, 0}, got = {NULL, 0, 0, 0, 0};
  one_by_one(s, ids, THREADED_SESSIONS, -1, &want);
  for (got.slow = 0; got.slow < 2; got.slow++) {
    got.n = 0;
    assert_int_equal(tl_store_scan_threaded(s, ids, THREADED_SESSIONS, hand_threaded, &got), TL_OK);
    assert_int_equal(got.n, want.n);
    assert_memory_equal(got.v, want.v, want.n * sizeof *want.v);
  }
  tl_session_list list;
  tl_filter flt;
  tl_filter_init(&flt);
  assert_int_equal(tl_store_sessions(s, &flt, &list), TL_OK);
  assert_int_equal(list.count, THREADED_SESSIONS);
  tl_store_close(s);

  char damaged[4096];
  snprintf(damaged, sizeof damaged, "%s.damaged", f->db);
  static const int pairs[][2] = {{1, 4},  {0, 2},   {4, 5},     {3, 8},    {2, 9},
                                 {9, 12}, {20, 21}, {300, 301}, {258, 699}};
  for (size_t p = 0; p < sizeof pairs / sizeof *pairs; p++) {
    int64_t first = ids[pairs[p][0]], second = ids[pairs[p][1]];
    char which[96];
    snprintf(which, sizeof which, "id = %lld OR id = %lld", (long long)first, (long long)second);
    assert_int_equal(tl_test_copy_file(f->db, damaged), 0);
    tl_test_flip_block_bits(damaged, which);
    assert_int_equal(tl_store_open(&s, damaged, TL_STORE_READONLY), TL_OK);
    one_by_one(s, ids, THREADED_SESSIONS, first, &want);
    got.n = 0;
    got.slow = 0;
    assert_int_equal(tl_store_scan_threaded(s, ids, THREADED_SESSIONS, hand_threaded, &got),
                     TL_ECORRUPT);
    const char *uuid = NULL;
    for (size_t k = 0; k < list.count; k++)
      if (list.items[k].id == first)
        uuid = list.items[k].uuid;
    assert_non_null(uuid);
    if (!strstr(tl_store_errmsg(s), uuid) || !strstr(tl_store_errmsg(s), "checksum mismatch"))
      fail_msg("sessions %d and %d damaged: '%s', want session %s", pairs[p][0], pairs[p][1],
               tl_store_errmsg(s), uuid);
    assert_int_equal(got.n, want.n);
    assert_memory_equal(got.v, want.v, want.n * sizeof *want.v);
    tl_store_close(s);
  }
  tl_session_list_free(&list);
  free(want.v);
  free(got.v);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(blocks_by_span_as_one_by_one, tl_test_setup,
                                      tl_test_teardown),
      cmocka_unit_test_setup_teardown(threaded_scan_as_one_by_one, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(summary_blobs_by_span_as_one_by_one, tl_test_setup,
                                      tl_test_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
