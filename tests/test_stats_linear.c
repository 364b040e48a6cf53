/* test_stats_linear.c: Woodruff's interval over sessions, which replaces the
 * session bootstrap for groups of TL_STATS_LINEAR_SESSIONS sessions or more,
 * judged by its error rates over many random groups whose sessions differ
 * from each other (each session's latencies scaled by its own factor): it
 * covers the population's percentile about 95% of the time where an
 * interval over the samples alone (ignoring that they come in sessions)
 * covers it far less often, its width is the bootstrap's on the same
 * groups, and a group at the threshold takes it and says so, built by hand
 * and through the store. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "report_internal.h"
#include "stats_internal.h"
#include "support.h"
#include "support_stats.h"
#include "support_store.h"
#include "tl_report.h"

enum {
  FACTORS = 16,     /* a session's factor is one of these, each as likely */
  BASE_NS = 1000000 /* before its factor, a sample is uniform in [0, 1 ms) */
};

static const double PCTS[] = {50, 90};
enum { NP = 2 };

/* The factor of each kind of session: 1 - spread to 1 + spread. */
static double factor(size_t k, double spread) {
  return 1 - spread + 2 * spread * (double)k / (FACTORS - 1);
}

/* The population's p quantile (0 < p < 1): where the mixture of uniforms on
 * [0, f_k BASE_NS) reaches p, by bisection. */
static double population_quantile(double p, double spread) {
  double lo = 0, hi = (1 + spread) * BASE_NS;
  for (int it = 0; it < 200; it++) {
    double mid = (lo + hi) / 2, cdf = 0;
    for (size_t k = 0; k < FACTORS; k++) {
      double top = factor(k, spread) * BASE_NS;
      cdf += (mid < top ? mid / top : 1) / FACTORS;
    }
    if (cdf < p)
      lo = mid;
    else
      hi = mid;
  }
  return (lo + hi) / 2;
}

static uint64_t next(uint64_t *r) {
  *r = *r * 6364136223846793005ULL + 1442695040888963407ULL;
  return *r >> 11;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Session i's samples, uniform on [0, f BASE_NS) with the session's own
 * factor f, each also put in pooled. */
typedef struct {
  uint64_t r;
  double spread;
  size_t per;
  int64_t *pooled;
} clustered_fill;

static void fill_clustered(void *ctx, size_t i, int64_t *v, size_t per) {
  clustered_fill *c = ctx;
  double f = factor(next(&c->r) % FACTORS, c->spread);
  for (size_t j = 0; j < per; j++) {
    double u = ((double)(next(&c->r) >> 1) + 0.5) * 0x1.0p-52;
    v[j] = (int64_t)(u * f * BASE_NS);
    c->pooled[i * c->per + j] = v[j];
  }
}

/* One group of ns sessions of per samples, each session's samples uniform
 * on [0, f BASE_NS) with its own factor f: its samples kept as a comparison
 * keeps them (tl__kept), its exact percentiles and each session's own values
 * worked out here, its statistics in out (tl__gcalc_run, which picks the
 * method by the number of sessions; free with tl__gcalc_free, then
 * tl__kept_free(*kept): out borrows its samples). all: every sample, sorted
 * (ns x per; NULL: not wanted). */
static void clustered_group(size_t ns, size_t per, double spread, uint64_t seed, int64_t *all,
                            tl__gcalc *out, tl__kept **kept) {
  clustered_fill c = {seed, spread, per, all ? all : malloc(ns * per * sizeof *all)};
  assert_non_null(c.pooled);
  tl_test_group t;
  tl_test_group_make(&t, ns, per, PCTS, NP, fill_clustered, &c);
  qsort(c.pooled, ns * per, sizeof *c.pooled, cmp_i64);
  tl_dist dist;
  memset(&dist, 0, sizeof dist);
  dist.count = (int64_t)(ns * per);
  dist.pct_count = NP;
  for (size_t q = 0; q < NP; q++) {
    dist.pcts[q] = PCTS[q];
    dist.pct_ns[q] = c.pooled[tl_rank(PCTS[q], dist.count) - 1];
  }
  assert_int_equal(
      tl__gcalc_run(NULL, &t.cmp, t.ids, ns, PCTS, NP, &dist, 0, seed ^ 0x5eed, 0, t.kept, out),
      TL_OK);
  *kept = t.kept;
  if (!all)
    free(c.pooled);
  tl_test_group_free(&t);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Over many groups of 300 sessions whose factors spread their percentiles
 * by a factor of three: Woodruff's interval (forced below its threshold)
 * covers the population's p50 and p90 about 95% of the time; the order
 * statistics over the samples, which treat them as independent, cover it
 * far less often (so a variance that ignored the sessions, or none at all,
 * would fail the band); and its width is close to the session bootstrap's
 * on the same groups. */
static void covers_like_the_bootstrap(void **state) {
  (void)state;
  enum { DRAWS = 200, SESSIONS = 300, PER = 40 };
  const double spread = 0.5;
  double truth[NP], *ratio = malloc(DRAWS * NP * sizeof *ratio);
  int64_t *all = malloc(SESSIONS * PER * sizeof *all);
  assert_true(ratio && all);
  for (size_t q = 0; q < NP; q++)
    truth[q] = population_quantile(PCTS[q] / 100, spread);
  size_t linear = 0, boot = 0, naive = 0, asked = 0;
  for (size_t d = 0; d < DRAWS; d++) {
    tl__gcalc g;
    tl__kept *k;
    clustered_group(SESSIONS, PER, spread, 0x9e3779b97f4a7c15ULL * (d + 1), all, &g, &k);
    assert_int_equal(g.method, TL_CI_SESSIONS);
    assert_false(g.linear); /* below the threshold: the bootstrap */
    assert_non_null(g.rep);
    tl_pct_stats by_boot[NP];
    memcpy(by_boot, g.pct, sizeof by_boot);
    assert_int_equal(tl__session_interval(&g, PCTS, NP, 1), TL_OK);
    assert_true(g.linear);
    assert_null(g.rep);
    for (size_t q = 0; q < NP; q++) {
      const tl_pct_stats *p = &g.pct[q], *b = &by_boot[q];
      int64_t est = g.dist.pct_ns[q];
      assert_true(p->lo_ns <= est && est <= p->hi_ns && p->lo_ns < p->hi_ns);
      linear += p->lo_ns <= truth[q] && truth[q] <= p->hi_ns;
      boot += b->lo_ns <= truth[q] && truth[q] <= b->hi_ns;
      int64_t lo, hi;
      assert_int_equal(tl_order_stat_ci(SESSIONS * PER, PCTS[q], TL__CONF, &lo, &hi), TL_OK);
      naive += all[lo - 1] <= truth[q] && truth[q] <= all[hi - 1];
      ratio[asked++] = (double)(p->hi_ns - p->lo_ns) / (double)(b->hi_ns - b->lo_ns);
    }
    tl__gcalc_free(&g);
    tl__kept_free(k);
  }
  qsort(ratio, asked, sizeof *ratio, cmp_double);
  double median = ratio[asked / 2];
  fprintf(stderr,
          "%zu intervals: Woodruff's covers %zu, the bootstrap %zu, order statistics over "
          "the samples %zu; median width ratio Woodruff / bootstrap %.3f\n",
          asked, linear, boot, naive, median);
  /* About 95% (380 of 400; the two percentiles of a draw are not independent,
   * so the band is wide): 90% to 98.5%. */
  assert_true(linear * 1000 >= asked * 900 && linear * 1000 <= asked * 985);
  /* The sessions' effect is strong enough that ignoring it fails the band. */
  assert_true(naive * 1000 < asked * 800);
  assert_true(median >= 0.8 && median <= 1.25);
  free(all);
  free(ratio);
}

/* A group at the threshold, through the path the statistics take, uses
 * Woodruff's interval: every sample kept, and, above the memory the
 * statistics keep, a reservoir of each session (whose kept samples stand for
 * more); each interval holds the estimate and has a width. */
static void large_groups_take_it(void **state) {
  (void)state;
  const struct {
    size_t sessions, per;
  } sizes[] = {{TL_STATS_LINEAR_SESSIONS, 20}, {TL_STATS_LINEAR_SESSIONS + 4000, 30}};
  for (size_t c = 0; c < 2; c++) {
    tl__gcalc g;
    tl__kept *k;
    clustered_group(sizes[c].sessions, sizes[c].per, 0.5, 0x1234567ULL + c, NULL, &g, &k);
    assert_int_equal(g.method, TL_CI_SESSIONS);
    assert_true(g.linear);
    assert_null(g.rep);
    assert_int_equal(g.set.exact, c == 0); /* the second is reduced */
    for (size_t q = 0; q < NP; q++) {
      const tl_pct_stats *p = &g.pct[q];
      int64_t est = g.dist.pct_ns[q];
      if (!(p->lo_ns <= est && est <= p->hi_ns && p->lo_ns < p->hi_ns))
        fail_msg("%zu sessions: p%g %lld not in (%lld to %lld)", sizes[c].sessions, PCTS[q],
                 (long long)est, (long long)p->lo_ns, (long long)p->hi_ns);
    }
    tl__gcalc_free(&g);
    tl__kept_free(k);
  }
}

/* Runs sql on db with the binds a and b (each when not negative). */
static int64_t exec_ids(sqlite3 *db, const char *sql, int64_t a, int64_t b) {
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
  sqlite3_bind_int64(st, 1, a);
  if (b >= 0)
    sqlite3_bind_int64(st, 2, b);
  assert_int_equal(sqlite3_step(st), SQLITE_DONE);
  sqlite3_finalize(st);
  return sqlite3_last_insert_rowid(db);
}

/* Through the store, as a page computes it: a label with
 * TL_STATS_LINEAR_SESSIONS sessions takes Woodruff's interval, each holding
 * the pooled p50 and p90 with a width, and its section says so. A session
 * written through the store costs a durable commit, so WRITTEN of them are
 * written and copied in one transaction to make the rest (each value then
 * comes 40 times over: runs of ties shorter than the intervals span). */
static void store_group_takes_it(void **state) {
  tl_test_store *f = *state;
  enum { PER = 8, WRITTEN = 250 };
  tl_session_spec spec = tl_test_spec("big");
  uint64_t r = 0x5eed;
  int64_t first[WRITTEN];
  for (size_t i = 0; i < WRITTEN; i++) {
    int64_t v[PER];
    for (size_t j = 0; j < PER; j++)
      v[j] = (int64_t)((double)(next(&r) % BASE_NS) * factor(i % FACTORS, 0.5));
    first[i] = tl_test_write_session(f->s, &spec, v, PER, 0);
  }
  sqlite3 *db;
  assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
  sqlite3_busy_timeout(db, 5000);
  assert_int_equal(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
  for (int64_t c = WRITTEN; c < TL_STATS_LINEAR_SESSIONS; c++) {
    int64_t from = first[c % WRITTEN];
    int64_t to = exec_ids(
        db,
        "INSERT INTO sessions (uuid, run_uuid, host_id, label, probe, delay_ns, warmup, "
        "started_ns, ended_ns, heartbeat_ns, pid, status, sample_count, missed_periods, "
        "tl_version, libuv_version, command_line, fact_set_id) SELECT substr(uuid, 1, 24) || "
        "printf('%012x', ?2), run_uuid, host_id, label, probe, delay_ns, warmup, started_ns + ?2, "
        "ended_ns + ?2, heartbeat_ns + ?2, pid, status, sample_count, missed_periods, "
        "tl_version, libuv_version, command_line, fact_set_id FROM sessions WHERE id = ?1",
        from, c);
    exec_ids(db,
             "INSERT INTO sample_blocks SELECT ?2, seq, count, min_ns, max_ns, codec, data "
             "FROM sample_blocks WHERE session_id = ?1",
             from, to);
    exec_ids(db,
             "INSERT INTO session_summaries SELECT ?2, data FROM session_summaries "
             "WHERE session_id = ?1",
             from, to);
    exec_ids(db,
             "INSERT INTO session_causes SELECT ?2, kind, first_index, count, data "
             "FROM session_causes WHERE session_id = ?1",
             from, to);
  }
  assert_int_equal(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(db);
  const char *labels[] = {"big"};
  tl_compare_opts o;
  tl_compare_opts_init(&o);
  o.labels = labels;
  o.label_count = 1;
  o.pcts[0] = 50;
  o.pcts[1] = 90;
  o.pct_count = 2;
  tl_comparison cmp;
  tl_stats st;
  char err[512];
  assert_int_equal(tl_compare(f->s, &o, &cmp, err, sizeof err), TL_OK);
  assert_int_equal(tl_stats_compute(f->s, &cmp, &st, err, sizeof err), TL_OK);
  assert_int_equal(st.group_count, 1);
  const tl_group *g = &cmp.groups[0];
  const tl_group_stats *gs = &st.groups[0];
  assert_int_equal(g->session_count, TL_STATS_LINEAR_SESSIONS);
  assert_int_equal(gs->method, TL_CI_SESSIONS);
  assert_true(gs->linear);
  for (size_t k = 0; k < g->dist.pct_count; k++) {
    const tl_pct_stats *p = &gs->pct[k];
    int64_t est = g->dist.pct_ns[k];
    if (!(p->lo_ns <= est && est <= p->hi_ns && p->lo_ns < p->hi_ns))
      fail_msg("p%g %lld not in (%lld to %lld)", g->dist.pcts[k], (long long)est,
               (long long)p->lo_ns, (long long)p->hi_ns);
  }
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  assert_int_equal(tl__stats_markdown(&cmp, &st, m), TL_OK);
  fclose(m);
  assert_non_null(strstr(buf, "from Woodruff's interval over its sessions (10000)"));
  free(buf);
  tl_stats_free(&st);
  tl_comparison_free(&cmp);
}

/* The page names the method each group's intervals came from. */
static void page_says_which(void **state) {
  (void)state;
  tl_group groups[2];
  tl_group_stats gs[2];
  memset(groups, 0, sizeof groups);
  memset(gs, 0, sizeof gs);
  tl_comparison cmp;
  memset(&cmp, 0, sizeof cmp);
  cmp.groups = groups;
  cmp.group_count = 2;
  tl_stats st;
  memset(&st, 0, sizeof st);
  st.groups = gs;
  st.group_count = 2;
  for (size_t i = 0; i < 2; i++) {
    groups[i].label = i ? "b" : "a";
    groups[i].probe = "uv";
    groups[i].dist.count = 1000000;
    groups[i].session_count = 20000;
    gs[i].method = TL_CI_SESSIONS;
    gs[i].linear = 1;
  }
  char buf[160];
  assert_true(tl__stats_ci_method(&cmp, &st, buf, sizeof buf));
  assert_string_equal(buf, "Woodruff's interval over its sessions (20000 each)");
  gs[1].linear = 0; /* a mix: each row says its own */
  assert_false(tl__stats_ci_method(&cmp, &st, buf, sizeof buf));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(covers_like_the_bootstrap),
      cmocka_unit_test(large_groups_take_it),
      cmocka_unit_test_setup_teardown(store_group_takes_it, tl_test_store_setup,
                                      tl_test_store_teardown),
      cmocka_unit_test(page_says_which),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
