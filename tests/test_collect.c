/* test_collect.c: real collections through the collector library, checked
 * sample by sample in the database. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <uv.h>

#include "collect_fixture.h"
#include "support.h"
#include "tl_collect.h"

typedef tl_collect_fixture fixture;

static tl_session_spec spec_of(fixture *f, const char *label) {
  size_t n;
  const tl_fact *facts = tl_host_facts(f->host, &n);
  tl_session_spec s = {
      .run_uuid = "run-test",
      .label = label,
      .command_line = "test_collect",
      .host_fingerprint = tl_host_fingerprint(f->host),
      .hostname = tl_host_hostname(f->host),
      .libuv_version = uv_version_string(),
      .facts = facts,
      .fact_count = n,
  };
  return s;
}

typedef struct {
  int64_t n, min, max;
} span;

static int measure(void *ctx, const int64_t *v, size_t n) {
  span *s = ctx;
  for (size_t i = 0; i < n; i++) {
    if (s->n == 0 || v[i] < s->min)
      s->min = v[i];
    if (s->n == 0 || v[i] > s->max)
      s->max = v[i];
    s->n++;
  }
  return 0;
}

/* Runs probe at 0 ms and 5 ms with the given counts; checks what is stored. */
static void collect_and_check(fixture *f, const char *probe, int64_t count, int64_t floor0_ns) {
  tl_collect_opts o;
  tl_collect_opts_init(&o);
  o.probe = probe;
  o.delays_ns[0] = 0;
  o.delays_ns[1] = 5000000;
  o.delay_count = 2;
  o.count = count;
  o.warmup = 2;
  o.flush_ms = 20; /* several commits during the run */
  tl_session_spec spec = spec_of(f, probe);
  tl_collect_result r[2];
  char err[256];
  assert_int_equal(tl_collect_run(f->store, &spec, &o, r, err, sizeof err), TL_OK);
  assert_int_equal(r[0].samples, count);
  assert_int_equal(r[1].samples, count);
  assert_true(r[0].p50_ns <= r[0].p90_ns && r[0].p90_ns <= r[0].p99_ns &&
              r[0].p99_ns <= r[0].max_ns);

  tl_filter flt;
  tl_filter_init(&flt);
  flt.probe = probe;
  tl_session_list list;
  assert_int_equal(tl_store_sessions(f->store, &flt, &list), TL_OK);
  assert_int_equal(list.count, 2);
  for (size_t i = 0; i < 2; i++) {
    tl_session *s = &list.items[i];
    assert_string_equal(s->status, "complete");
    assert_string_equal(s->label, probe);
    assert_string_equal(s->run_uuid, "run-test");
    assert_string_equal(s->libuv_version, uv_version_string());
    assert_string_equal(s->hostname, tl_host_hostname(f->host));
    assert_int_equal(s->warmup, 2);
    assert_int_equal(s->sample_count, count);
    span sp = {0, 0, 0};
    assert_int_equal(tl_store_scan(f->store, s->id, measure, &sp), TL_OK);
    assert_int_equal(sp.n, count);
    /* A 5 ms timer cannot come back in under ~4 ms, whatever the clock's
     * skew against the loop's cached time; a 0 ms timer not below floor. */
    if (s->delay_ns == 5000000)
      assert_true(sp.min >= 4000000);
    else
      assert_true(sp.min >= floor0_ns);
    assert_true(sp.max < 2000000000LL);
  }
  tl_fact_row *rows;
  size_t n;
  assert_int_equal(tl_store_facts(f->store, list.items[0].id, &rows, &n), TL_OK);
  int has_kernel = 0;
  for (size_t i = 0; i < n; i++)
    has_kernel |= strcmp(rows[i].key, "kernel.release") == 0;
  assert_true(has_kernel);
  tl_fact_rows_free(rows, n);
  tl_session_list_free(&list);
  assert_int_equal(tl_store_check(f->store, NULL, NULL), TL_OK);
}

static void settimeout_collects(void **state) {
  /* setTimeout(0) is a 1 ms timer; against the cached loop time it can fire
   * a little early on the real clock, but not by a whole millisecond. */
  collect_and_check(*state, "settimeout", 200, 0);
}

static void uv_collects(void **state) { collect_and_check(*state, "uv", 200, 0); }

static void single_delay(void **state) {
  fixture *f = *state;
  tl_collect_opts o;
  tl_collect_opts_init(&o);
  o.probe = "uv";
  o.delays_ns[0] = 0;
  o.delay_count = 1;
  o.count = 20;
  o.warmup = 0;
  tl_session_spec spec = spec_of(f, "single");
  tl_collect_result r[1];
  char err[256];
  assert_int_equal(tl_collect_run(f->store, &spec, &o, r, err, sizeof err), TL_OK);
  assert_int_equal(r[0].samples, 20);
  assert_int_equal(strlen(r[0].session_uuid), 36);
}

static void dry_run_stores_nothing(void **state) {
  fixture *f = *state;
  tl_collect_opts o;
  tl_collect_opts_init(&o);
  o.probe = "uv";
  o.delays_ns[0] = 0;
  o.delay_count = 1;
  o.count = 50;
  o.dry_run = 1;
  tl_session_spec spec = spec_of(f, "dry");
  tl_collect_result r[1];
  char err[256];
  assert_int_equal(tl_collect_run(NULL, &spec, &o, r, err, sizeof err), TL_OK);
  assert_int_equal(r[0].samples, 50);
  tl_store_stats st;
  assert_int_equal(tl_store_info(f->store, &st), TL_OK);
  assert_int_equal(st.sessions, 0);
}

static void duration_mode(void **state) {
  fixture *f = *state;
  tl_collect_opts o;
  tl_collect_opts_init(&o);
  o.probe = "settimeout";
  o.delays_ns[0] = 0;
  o.delay_count = 1;
  o.duration_ns = 100000000; /* 100 ms of 1 ms timers */
  o.warmup = 0;
  tl_session_spec spec = spec_of(f, "timed");
  tl_collect_result r[1];
  char err[256];
  uint64_t t0 = uv_hrtime();
  assert_int_equal(tl_collect_run(f->store, &spec, &o, r, err, sizeof err), TL_OK);
  uint64_t took = uv_hrtime() - t0;
  assert_true(r[0].samples > 5 && r[0].samples <= 101);
  assert_true(took >= 100000000ULL);
}

static void bad_options(void **state) {
  fixture *f = *state;
  tl_collect_opts o;
  tl_collect_opts_init(&o);
  tl_session_spec spec = spec_of(f, "bad");
  char err[256];
  o.delay_count = 1;
  o.count = 10;
  o.probe = "nosuchprobe";
  assert_int_equal(tl_collect_run(f->store, &spec, &o, NULL, err, sizeof err), TL_EINVAL);
  assert_non_null(strstr(err, "unknown probe"));
  o.probe = "uv";
  o.count = 0; /* neither a count nor a duration */
  assert_int_equal(tl_collect_run(f->store, &spec, &o, NULL, err, sizeof err), TL_EINVAL);
  o.count = 10;
  spec.label = "no spaces allowed";
  assert_int_equal(tl_collect_run(f->store, &spec, &o, NULL, err, sizeof err), TL_EINVAL);
  tl_store_stats st;
  assert_int_equal(tl_store_info(f->store, &st), TL_OK);
  assert_int_equal(st.sessions, 0);
}

static void summary_sentence(void **state) {
  (void)state;
  tl_collect_result r[2];
  memset(r, 0, sizeof r);
  r[0].delay_ns = 0;
  r[0].p90_ns = 1170000;
  r[1].delay_ns = 50000000;
  r[1].p90_ns = 50570000;
  char buf[256];
  tl_collect_summary("settimeout", r, 2, 90, buf, sizeof buf);
  assert_string_equal(buf, "90 percent of calls took up to 1.17 ms and 50.57 ms (for "
                           "setTimeout(0) and setTimeout(50) respectively)");
  tl_collect_summary("uv", r, 1, 90, buf, sizeof buf);
  assert_string_equal(buf, "90 percent of calls took up to 1.17 ms (for uv(0))");
  /* Below a millisecond the digits that matter stay, as on the report. */
  r[0].p99_ns = 117000;
  r[1].p99_ns = 2100;
  tl_collect_summary("uv", r, 2, 99, buf, sizeof buf);
  assert_string_equal(buf, "99 percent of calls took up to 0.117 ms and 0.00210 ms (for uv(0) and "
                           "uv(50) respectively)");
  /* Delays exactly, never with an exponent: a day, a quarter and a
   * millionth of a millisecond. */
  r[0].delay_ns = 86400000000000LL;
  r[1].delay_ns = 250000;
  tl_collect_summary("settimeout", r, 2, 90, buf, sizeof buf);
  assert_non_null(strstr(buf, "(for setTimeout(86400000) and setTimeout(0.25) respectively)"));
  r[0].delay_ns = 1;
  tl_collect_summary("nanosleep", r, 1, 90, buf, sizeof buf);
  assert_non_null(strstr(buf, "(for nanosleep(0.000001))"));
}

static void host_facts(void **state) {
  fixture *f = *state;
  assert_int_equal(strlen(tl_host_fingerprint(f->host)), 16);
  assert_non_null(tl_host_get(f->host, "kernel.release"));
  assert_non_null(tl_host_get(f->host, "arch"));
  char label[TL_LABEL_MAX + 1], why[TL_WHY_MAX];
  tl_host_default_label(f->host, label, sizeof label);
  assert_int_equal(tl_label_check(label, why, sizeof why), TL_OK);
  /* Detecting twice gives the same fingerprint. */
  tl_host *again;
  assert_int_equal(tl_host_detect(&again), TL_OK);
  assert_string_equal(tl_host_fingerprint(again), tl_host_fingerprint(f->host));
  tl_host_free(again);
}

/* One catalogue: every probe the collector runs is described there (what
 * --list-probes shows is the catalogue's summary), the catalogue holds no
 * probe the collector cannot run, and exec: names of any command find the
 * exec:CMD entry. */
static void catalogue_matches_collector(void **state) {
  (void)state;
  size_t n, m;
  const tl_probe_info *probes = tl_probes(&n);
  const tl_probe_about *about = tl_probe_catalogue(&m);
  assert_int_equal(n, m);
  for (size_t i = 0; i < n; i++) {
    const tl_probe_about *a = tl_probe_about_find(probes[i].name);
    assert_non_null(a);
    assert_string_equal(a->name, about[i].name);
    assert_string_equal(probes[i].summary, a->summary);
    assert_int_equal(probes[i].ms_only, a->ms_only);
    assert_true(strlen(a->definition) > 20);
  }
  const tl_probe_about *e = tl_probe_about_find("exec:python3 probes/asyncio-probe.py");
  assert_non_null(e);
  assert_string_equal(e->name, "exec:CMD");
  assert_null(tl_probe_about_find("exec:"));
  assert_null(tl_probe_about_find("nosuch"));
  assert_int_equal(tl_probe_armed_ns("settimeout", 0), 1000000);
  assert_int_equal(tl_probe_armed_ns("node", 250000), 1000000);
  assert_int_equal(tl_probe_armed_ns("uv", 0), 0);
  assert_int_equal(tl_probe_armed_ns("settimeout", 50000000), 50000000);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(catalogue_matches_collector),
      cmocka_unit_test_setup_teardown(settimeout_collects, tl_collect_setup, tl_collect_teardown),
      cmocka_unit_test_setup_teardown(uv_collects, tl_collect_setup, tl_collect_teardown),
      cmocka_unit_test_setup_teardown(single_delay, tl_collect_setup, tl_collect_teardown),
      cmocka_unit_test_setup_teardown(dry_run_stores_nothing, tl_collect_setup,
                                      tl_collect_teardown),
      cmocka_unit_test_setup_teardown(duration_mode, tl_collect_setup, tl_collect_teardown),
      cmocka_unit_test_setup_teardown(bad_options, tl_collect_setup, tl_collect_teardown),
      cmocka_unit_test(summary_sentence),
      cmocka_unit_test_setup_teardown(host_facts, tl_collect_setup, tl_collect_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
