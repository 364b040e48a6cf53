/* test_rank.c: the summary writer and the sweep run one exact-rank engine
 * (store/rank.c) by different roads: the writer watches the ranks while the
 * samples go by, a recomputed summary reads the blocks again, the sweep of
 * a store locates them in the summaries' histograms and takes the samples
 * through its fast counts or its lists, and the sweep of values in memory
 * builds its own histogram. On many random draws of many shapes, and counts
 * at the edges (1, 2, a block, a block and one, the samples held before the
 * windows, a batch of the threaded reader, and a count large enough that a
 * range is narrowed), every road gives the nearest-rank value of a sort. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "store_internal.h"
#include "support.h"
#include "support_store.h"

enum { SHAPES = 5 };

static int cmp(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static uint64_t next(uint64_t *x) {
  *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
  return *x;
}

/* n samples of a shape: a timer's tight cluster with a slow tail, a few
 * tied values, spikes of seconds over a cluster, one value, and every
 * sample distinct in one wide log bucket (whose ranges are narrowed when
 * more than a range's memory falls there). */
static void draw(int64_t *v, size_t n, int shape, uint64_t *x) {
  for (size_t i = 0; i < n; i++) {
    uint64_t r = next(x);
    if (shape == 0)
      v[i] = 1000000 + (int64_t)(r % 4000) + (r % 100 == 0 ? (int64_t)(r % 3000000) : 0);
    else if (shape == 1)
      v[i] = 50000 + (int64_t)(r % 3) * 1000;
    else if (shape == 2)
      v[i] = r % 500 == 0 ? (int64_t)(r >> 26) : 60000 + (int64_t)(r % 700);
    else if (shape == 3)
      v[i] = 42;
    else
      v[i] = ((int64_t)1 << 40) + (int64_t)(r % ((uint64_t)1 << 29));
  }
}

/* In batches of a size drawn per session, so that the writer's summary
 * sees boundaries anywhere. */
static int64_t write_session(tl_store *st, const int64_t *v, size_t n, uint64_t *x) {
  tl_session_spec spec = tl_test_spec("a");
  return tl_test_write_session(st, &spec, v, n, 1 + (size_t)(next(x) % 20000));
}

static int keep_summary(void *ctx, size_t index, const tl_summary *m) {
  (void)index;
  memcpy(ctx, m->pct_ns, sizeof m->pct_ns);
  return 0;
}

/* Every road's values at the summaries' levels, and the sweep's at the
 * first and last rank and a session's own levels that no summary holds,
 * against the sorted samples. */
static void check_roads(tl_store *st, int64_t id, const int64_t *sorted, size_t n, int shape) {
  int64_t n64 = (int64_t)n, stored[TL_SUMMARY_PCTS], want[TL_SUMMARY_PCTS];
  for (size_t k = 0; k < TL_SUMMARY_PCTS; k++)
    want[k] = sorted[tl_rank(tl_summary_pcts[k], n64) - 1];
  assert_int_equal(tl_store_summaries(st, &id, 1, keep_summary, stored), TL_OK);
  tl__summarizer *z = tl__summarizer_new();
  assert_non_null(z);
  const tl_summary *again;
  assert_int_equal(tl__summary_compute(st, z, id, &again), TL_OK);
  tl_dist mem;
  assert_int_equal(tl_dist_of_values(sorted, n, tl_summary_pcts, TL_SUMMARY_PCTS, &mem), TL_OK);
  const double own[] = {0.5, 50.5, 99.95};
  tl_sweep *w = tl_sweep_store(st, &id, 1, own, 3);
  assert_non_null(w);
  assert_int_equal(tl_sweep_first(w, NULL, NULL), TL_OK);
  size_t at[TL_SUMMARY_PCTS + 2];
  for (size_t k = 0; k < TL_SUMMARY_PCTS; k++)
    assert_true((at[k] = tl_sweep_want(w, tl_rank(tl_summary_pcts[k], n64))) != SIZE_MAX);
  assert_true((at[TL_SUMMARY_PCTS] = tl_sweep_want(w, 1)) != SIZE_MAX);
  assert_true((at[TL_SUMMARY_PCTS + 1] = tl_sweep_want(w, n64)) != SIZE_MAX);
  assert_int_equal(tl_sweep_finish(w), TL_OK);
  for (size_t k = 0; k < TL_SUMMARY_PCTS; k++) {
    if (stored[k] != want[k] || again->pct_ns[k] != want[k] || mem.pct_ns[k] != want[k] ||
        tl_sweep_value(w, at[k]) != want[k])
      fail_msg("n %zu shape %d p%g: sort %lld, writer %lld, summary %lld, memory %lld, sweep %lld",
               n, shape, tl_summary_pcts[k], (long long)want[k], (long long)stored[k],
               (long long)again->pct_ns[k], (long long)mem.pct_ns[k],
               (long long)tl_sweep_value(w, at[k]));
  }
  assert_int_equal(tl_sweep_value(w, at[TL_SUMMARY_PCTS]), sorted[0]);
  assert_int_equal(tl_sweep_value(w, at[TL_SUMMARY_PCTS + 1]), sorted[n - 1]);
  for (size_t k = 0; k < 3; k++)
    assert_int_equal(tl_sweep_session_value(w, 0, k), sorted[tl_rank(own[k], n64) - 1]);
  tl_sweep_close(w);
  tl__summarizer_free(z);
}

static void writer_and_sweep_agree(void **state) {
  tl_test_fixture *f = *state;
  tl_store *st;
  assert_int_equal(tl_store_open(&st, f->db, 0), TL_OK);
  const size_t counts[] = {1,
                           2,
                           3,
                           TL_BLOCK_MAX - 1,
                           TL_BLOCK_MAX,
                           TL_BLOCK_MAX + 1,
                           2 * TL_BLOCK_MAX - 1,
                           2 * TL_BLOCK_MAX,
                           2 * TL_BLOCK_MAX + 1,
                           3 * TL_BLOCK_MAX,
                           64 * TL_BLOCK_MAX,
                           64 * TL_BLOCK_MAX + 1,
                           1100000};
  enum { NCOUNTS = sizeof counts / sizeof *counts };
  uint64_t x = 0x9e3779b97f4a7c15ULL;
  int64_t *v = malloc(counts[NCOUNTS - 1] * sizeof *v);
  assert_non_null(v);
  size_t draws = 0;
  for (size_t c = 0; c < NCOUNTS; c++)
    for (int shape = 0; shape < SHAPES; shape++) {
      size_t n = counts[c];
      /* More draws where they are cheap; the largest count only where a
       * range is narrowed (every sample in one bucket) or a timer's. */
      int rounds = n <= 3 * TL_BLOCK_MAX ? 6 : n < 1000000 ? 2 : shape == 0 || shape == 4;
      for (int round = 0; round < rounds; round++, draws++) {
        draw(v, n, shape, &x);
        int64_t id = write_session(st, v, n, &x);
        qsort(v, n, sizeof *v, cmp);
        check_roads(st, id, v, n, shape);
      }
    }
  printf("test_rank: %zu draws agree\n", draws);
  assert_true(draws > 300);
  free(v);
  tl_store_close(st);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(writer_and_sweep_agree, tl_test_setup, tl_test_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
