/* test_tail_counted.c: the tail a group's first pass counts from its
 * sessions' summaries (tl_sweep_tail), which the report's causes take
 * instead of reading every summary again, is what a read of each summary
 * gives: the samples above a value and their time past another, each at
 * its bucket's midpoint held at its session's maximum. Over many random
 * values, on sessions with long tails, ties at bucket edges and one
 * sample; and through a whole comparison, each group's split tail equal to
 * the direct read at its own p50, p90 and p99. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support.h"
#include "tl_report.h"
#include "tl_store.h"

enum { SESSIONS = 48 };

static uint64_t next_random(uint64_t *x) {
  *x ^= *x << 13;
  *x ^= *x >> 7;
  *x ^= *x << 17;
  return *x;
}

/* A latency: mostly near 60 µs, some far out (to 40 ms), some on the edge
 * of a histogram bucket. */
static int64_t latency(uint64_t *x) {
  uint64_t r = next_random(x);
  switch (r % 16) {
  case 0:
    return (int64_t)(200000 + next_random(x) % 40000000);
  case 1: {
    int64_t lo, hi;
    tl_summary_bucket_bounds(tl_summary_bucket((int64_t)(50000 + next_random(x) % 900000)), &lo,
                             &hi);
    return r & 32 ? lo : hi;
  }
  default:
    return (int64_t)(55000 + next_random(x) % 10000);
  }
}

/* SESSIONS sessions in two labels (one of a single sample), ids in ids. */
static void make_sessions(tl_store *s, int64_t *ids) {
  uint64_t x = 0x9e3779b97f4a7c15u;
  int64_t *v = malloc(5000 * sizeof *v);
  assert_non_null(v);
  for (int k = 0; k < SESSIONS; k++) {
    tl_session_spec spec = {.run_uuid = "00000000-0000-4000-8000-000000000045",
                            .label = k % 2 ? "a" : "b",
                            .probe = "nanosleep",
                            .delay_ns = 50000,
                            .command_line = "t",
                            .host_fingerprint = "ab",
                            .hostname = "h"};
    tl_writer *w;
    char uuid[37];
    assert_int_equal(tl_writer_begin(s, &spec, &w, uuid), TL_OK);
    ids[k] = tl_writer_session_id(w);
    size_t n = k == 3 ? 1 : 100 + next_random(&x) % 4900;
    for (size_t i = 0; i < n; i++)
      v[i] = latency(&x);
    assert_int_equal(tl_writer_add(w, v, n), TL_OK);
    assert_int_equal(tl_writer_end(w, "complete"), TL_OK);
  }
  free(v);
}

/* The direct read: every session's summary, its buckets wholly above
 * `above`, summed one by one as the causes' tail sums them (in double,
 * held at INT64_MAX) and as exact integers. */
typedef struct {
  int64_t above, from;
  int64_t samples, past_ns, past_exact;
} direct;

static int add_session(void *arg, size_t index, const tl_summary *m) {
  (void)index;
  direct *d = arg;
  for (size_t k = 0; k < m->hist_len; k++) {
    int64_t lo, hi, n = m->hist[k];
    tl_summary_bucket_bounds(m->hist_first + k, &lo, &hi);
    if (!n || lo <= d->above)
      continue;
    hi = hi > m->max_ns ? m->max_ns : hi;
    int64_t mid = lo + (hi - lo) / 2;
    d->samples += n;
    double sum = (double)d->past_ns + (double)n * (double)(mid - d->from);
    d->past_ns = sum >= 0x1p63 ? INT64_MAX : (int64_t)sum;
    d->past_exact += n * (mid - d->from);
  }
  return 0;
}

static direct read_directly(tl_store *s, const int64_t *ids, size_t n, int64_t above,
                            int64_t from) {
  direct d = {above, from, 0, 0, 0};
  assert_int_equal(tl_store_summaries(s, ids, n, add_session, &d), TL_OK);
  return d;
}

/* tl_sweep_tail against the direct read at random values, and at values
 * the samples take (a bucket's edges among them). */
static void sweep_tail_is_the_direct_read(void **state) {
  tl_test_fixture *f = *state;
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  int64_t ids[SESSIONS];
  make_sessions(s, ids);
  uint64_t x = 12345;
  for (size_t first = 0; first < SESSIONS; first += SESSIONS / 4) {
    size_t n = first ? SESSIONS - first : SESSIONS; /* the whole set, then tails of it */
    tl_sweep *w = tl_sweep_store(s, ids + first, n, NULL, 0);
    assert_non_null(w);
    assert_int_equal(tl_sweep_first(w, NULL, NULL), TL_OK);
    size_t nonempty = 0;
    for (int i = 0; i < 300; i++) {
      int64_t above = i % 3 ? latency(&x) : (int64_t)(next_random(&x) % 50000000);
      int64_t from = i % 5 ? (int64_t)(next_random(&x) % 60000) : above;
      if (i == 0)
        above = 0;
      int64_t samples, past;
      assert_int_equal(tl_sweep_tail(w, above, from, &samples, &past), 1);
      direct d = read_directly(s, ids + first, n, above, from);
      assert_int_equal(samples, d.samples);
      assert_int_equal(past, d.past_exact);
      assert_int_equal(past, d.past_ns); /* far below 2^53: the double sums are exact */
      nonempty += samples > 0;
    }
    assert_true(nonempty > 150); /* most values leave a tail to count */
    tl_sweep_close(w);
  }
  tl_store_close(s);
}

/* Each group's tail in a comparison's causes is the direct read at the
 * group's own p50, p90 and p99. */
static void comparison_tail_is_the_direct_read(void **state) {
  tl_test_fixture *f = *state;
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  int64_t ids[SESSIONS];
  make_sessions(s, ids);
  tl_compare_opts o;
  tl_compare_opts_init(&o);
  tl_comparison c;
  char err[256];
  int rc = tl_compare(s, &o, &c, err, sizeof err);
  if (rc)
    fail_msg("%s", err);
  assert_int_equal(c.group_count, 2);
  assert_non_null(c.causes);
  for (size_t g = 0; g < c.group_count; g++) {
    const tl_group *gr = &c.groups[g];
    const tl_dist *d = &gr->dist;
    assert_int_equal(d->pct_count, 4); /* 50, 90, 99, 99.9 */
    direct d99 = read_directly(s, gr->session_ids, gr->session_count, d->pct_ns[2], d->pct_ns[0]);
    direct d90 = read_directly(s, gr->session_ids, gr->session_count, d->pct_ns[1], d->pct_ns[0]);
    assert_true(d99.samples > 0 && d90.samples > d99.samples);
    assert_int_equal(c.causes[g].tail_samples, d99.samples);
    assert_int_equal(c.causes[g].tail_ns, d99.past_ns);
    assert_int_equal(c.causes[g].at90.tail_samples, d90.samples);
    assert_int_equal(c.causes[g].at90.tail_ns, d90.past_ns);
  }
  tl_comparison_free(&c);
  tl_store_close(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(sweep_tail_is_the_direct_read, tl_test_setup,
                                      tl_test_teardown),
      cmocka_unit_test_setup_teardown(comparison_tail_is_the_direct_read, tl_test_setup,
                                      tl_test_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
