/* test_summary.c: the closing sentence's numbers (count, p50, p90, p99, max)
 * computed in bounded memory by reading the samples again (summary.c) are
 * exactly those of sorting every sample, nearest rank, on data shaped to
 * take each path: exact buckets, collected buckets, buckets split several
 * times, ties, the ends of the int64 range. Samples that change between
 * readings are an error, never a wrong number. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "collect_internal.h"

typedef struct {
  const int64_t *v;
  size_t n;
  int passes;
  int change_after; /* from this pass on, one sample differs (0: never) */
} memory_src;

static int replay_memory(void *arg, tl_samples_cb fn, void *ctx) {
  memory_src *m = arg;
  m->passes++;
  for (size_t at = 0; at < m->n; at += TL_BLOCK_MAX) {
    size_t k = m->n - at < TL_BLOCK_MAX ? m->n - at : TL_BLOCK_MAX;
    int64_t block[TL_BLOCK_MAX];
    memcpy(block, m->v + at, k * sizeof *block);
    if (m->change_after && m->passes >= m->change_after && at == 0)
      block[0] = 5; /* a sample leaves the range being narrowed */
    int rc = fn(ctx, block, k);
    if (rc)
      return rc;
  }
  return TL_OK;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static uint64_t rng = 88172645463325252ULL;
static uint64_t next_rand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* Checks tl__summarize against a sort of a copy. */
static void check_exact(const int64_t *v, size_t n) {
  memory_src m = {v, n, 0, 0};
  tl_collect_result r;
  char err[128];
  assert_int_equal(tl__summarize(replay_memory, &m, &r, err, sizeof err), TL_OK);
  assert_int_equal(r.samples, (int64_t)n);
  assert_true(m.passes <= 7);
  if (!n)
    return;
  int64_t *s = malloc(n * sizeof *s);
  memcpy(s, v, n * sizeof *s);
  qsort(s, n, sizeof *s, cmp_i64);
  assert_int_equal(r.p50_ns, s[tl_rank(50, (int64_t)n) - 1]);
  assert_int_equal(r.p90_ns, s[tl_rank(90, (int64_t)n) - 1]);
  assert_int_equal(r.p99_ns, s[tl_rank(99, (int64_t)n) - 1]);
  assert_int_equal(r.max_ns, s[n - 1]);
  free(s);
}

static void small_and_empty(void **state) {
  (void)state;
  int64_t one[] = {7}, two[] = {3000000, 1}, some[999];
  check_exact(NULL, 0);
  check_exact(one, 1);
  check_exact(two, 2);
  for (size_t i = 0; i < 999; i++)
    some[i] = (int64_t)(next_rand() % 5000000);
  check_exact(some, 999);
  check_exact(some, 1000 - 1 - 900); /* rank rounding at other sizes */
}

/* Shapes of real timer data and worse, large enough that a rank's bucket
 * holds more samples than are ever collected at once. */
static void shapes(void **state) {
  (void)state;
  size_t n = 1000000;
  int64_t *v = malloc(n * sizeof *v);
  /* uv at 0 ms: tens of ns, every value its own bucket */
  for (size_t i = 0; i < n; i++)
    v[i] = 30 + (int64_t)(next_rand() % 90);
  check_exact(v, n);
  /* setTimeout(1): 1.0x ms, most samples in a few wide buckets */
  for (size_t i = 0; i < n; i++)
    v[i] = 1000000 + (int64_t)(next_rand() % 200000);
  check_exact(v, n);
  /* ties: one value a million times over, in a wide bucket */
  for (size_t i = 0; i < n; i++)
    v[i] = i % 3 ? 1000000007 : (int64_t)(next_rand() % 3000000000ULL);
  check_exact(v, n);
  /* log-uniform over the whole range, and the top of int64 */
  for (size_t i = 0; i < n; i++)
    v[i] = (int64_t)(next_rand() >> (1 + next_rand() % 63));
  check_exact(v, n);
  for (size_t i = 0; i < n; i++)
    v[i] = INT64_MAX - (int64_t)(next_rand() % 1000000);
  check_exact(v, n);
  free(v);
}

/* Samples that differ from one reading to the next cannot be summarized:
 * an error, not a number. */
static void changing_samples_are_an_error(void **state) {
  (void)state;
  size_t n = 600000;
  int64_t *v = malloc(n * sizeof *v);
  for (size_t i = 0; i < n; i++)
    v[i] = 1000000 + (int64_t)(i % 3);
  memory_src m = {v, n, 0, 2};
  tl_collect_result r;
  char err[128] = "";
  int rc = tl__summarize(replay_memory, &m, &r, err, sizeof err);
  assert_int_not_equal(rc, TL_OK);
  assert_non_null(strstr(err, "differ"));
  free(v);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(small_and_empty),
      cmocka_unit_test(shapes),
      cmocka_unit_test(changing_samples_are_an_error),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
