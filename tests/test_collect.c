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
  return tl_collect_fixture_spec(f, "run-test", label, "test_collect");
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
    tl_test_span sp = {0, 0, 0};
    assert_int_equal(tl_store_scan(f->store, s->id, tl_test_measure, &sp), TL_OK);
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
 * --list-probes shows is the catalogue's summary with this system's clock),
 * the catalogue holds no probe the collector cannot run, and exec: names of
 * any command find the exec:CMD entry. */
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
    char summary[1024];
    tl_probe_summary(a, summary, sizeof summary);
    assert_string_equal(probes[i].summary, summary);
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

/* ------------------------------------------------------------------------ */
/* A whole command (plan.c)                                                  */

static void probe_list_split(void **state) {
  (void)state;
  tl_collect_probe_list l;
  char why[TL_WHY_MAX];
  assert_int_equal(tl_collect_probe_list_parse("settimeout,uv", &l, why, sizeof why), TL_OK);
  assert_int_equal(l.count, 2);
  assert_string_equal(l.names[0], "settimeout");
  assert_string_equal(l.names[1], "uv");
  /* exec:CMD takes the rest of the list, commas and all. */
  assert_int_equal(tl_collect_probe_list_parse("uv,exec:printf a,b", &l, why, sizeof why), TL_OK);
  assert_int_equal(l.count, 2);
  assert_string_equal(l.names[1], "exec:printf a,b");
  static const struct {
    const char *list, *why;
  } bad[] = {
      {"", "empty probe name"},
      {"uv,", "empty probe name in the list"},
      {",uv", "empty probe name in the list"},
      {"uv,,settimeout", "empty probe name in the list"},
      {"uv,uv", "the same probe is given twice"},
      {"nosuch", "unknown probe (see tlcollect --list-probes)"},
      {"uv,settimeout,nanosleep,periodic,uv", "the same probe is given twice"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_equal(tl_collect_probe_list_parse(bad[i].list, &l, why, sizeof why), TL_EINVAL);
    assert_string_equal(why, bad[i].why);
  }
  char many[256] = "";
  for (int i = 0; i <= TL_COLLECT_PROBES_MAX; i++)
    strcat(many, "exec:x,"); /* the first exec: swallows the rest: one probe */
  assert_int_equal(tl_collect_probe_list_parse(many, &l, why, sizeof why), TL_OK);
  assert_int_equal(l.count, 1);
  char too_long[5000];
  memset(too_long, 'a', sizeof too_long - 1);
  too_long[sizeof too_long - 1] = '\0';
  assert_int_equal(tl_collect_probe_list_parse(too_long, &l, why, sizeof why), TL_EINVAL);
  assert_string_equal(why, "list is too long");
}

static void periodic_probe_measures_its_interval(void **state) {
  (void)state;
  tl_collect_opts base, o;
  tl_collect_opts_init(&base);
  base.delays_ns[0] = 0;
  base.delays_ns[1] = 50000000;
  base.delay_count = 2;
  base.interval_ns = 2000000;
  tl_collect_probe_opts(&base, "periodic", &o);
  assert_string_equal(o.probe, "periodic");
  assert_int_equal(o.delay_count, 1);
  assert_int_equal(o.delays_ns[0], 2000000);
  assert_int_equal(o.interval_ns, 2000000);
  /* The other probes keep the delays and take no interval. */
  tl_collect_probe_opts(&base, "uv", &o);
  assert_int_equal(o.delay_count, 2);
  assert_int_equal(o.delays_ns[1], 50000000);
  assert_int_equal(o.interval_ns, 0);
  /* Without --interval the periodic probe runs every 1 ms. */
  base.interval_ns = 0;
  tl_collect_probe_opts(&base, "periodic", &o);
  assert_int_equal(o.delays_ns[0], 1000000);
}

static void repeat_schedule(void **state) {
  (void)state;
  assert_int_equal(tl_collect_repeat_start(1000, 0, 3600000000000LL), 1000);
  assert_int_equal(tl_collect_repeat_start(1000, 1, 3600000000000LL), 3600000001000ULL);
  assert_int_equal(tl_collect_repeat_start(1000, 24, 3600000000000LL), 86400000001000ULL);
  /* Without --every each run follows the last at once. */
  assert_int_equal(tl_collect_repeat_start(1000, 5, 0), 1000);
}

/* The command-line checks, in the order tlcollect reports them. */
static void plan_checks(void **state) {
  (void)state;
  static const struct {
    const char *opts[6]; /* name, value pairs */
    int err;
    const char *why;
  } cases[] = {
      {{"count", "5", "duration", "1s"}, TL_EINVAL, "--count: give --count or --duration"},
      {{"delays", "1,1ms"}, TL_EINVAL, "--delays: the same delay is given twice"},
      {{"probe", "uv,uv"}, TL_EINVAL, "--probe: the same probe is given twice"},
      {{"interval", "2ms"}, TL_EINVAL, "--interval: only the periodic probe takes an interval"},
      {{"probe", "periodic", "delays", "1"}, TL_EINVAL, "--delays: the periodic probe measures"},
      {{"every", "1h"}, TL_EINVAL, "--every: needs --repeat N with N of at least 2"},
      {{"repeat", "2", "every", "1h", "probe", "uv,settimeout"}, TL_OK, ""},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tl_collect_plan p;
    tl_collect_plan_init(&p);
    char why[TL_WHY_MAX] = "";
    for (size_t k = 0; k < 6 && cases[i].opts[k]; k += 2)
      assert_int_equal(
          tl_collect_plan_set(&p, cases[i].opts[k], cases[i].opts[k + 1], why, sizeof why), TL_OK);
    assert_int_equal(tl_collect_plan_check(&p, why, sizeof why), cases[i].err);
    assert_non_null(strstr(why, cases[i].why));
  }
  tl_collect_plan p;
  tl_collect_plan_init(&p);
  char why[TL_WHY_MAX];
  assert_int_equal(tl_collect_plan_set(&p, "every", "500ms", why, sizeof why), TL_EINVAL);
  assert_string_equal(why, "at least 1s");
  assert_int_equal(tl_collect_plan_set(&p, "load", "disk:1", why, sizeof why), TL_EINVAL);
  assert_int_equal(tl_collect_plan_set(&p, "load", "cpu:1", why, sizeof why), TL_OK);
  assert_int_equal(tl_collect_plan_set(&p, "load", "cpu:2", why, sizeof why), TL_EINVAL);
  assert_string_equal(why, "the same kind of load is given twice");
  assert_int_equal(tl_collect_plan_set(&p, "tag", "a=1", why, sizeof why), TL_OK);
  assert_int_equal(tl_collect_plan_set(&p, "tag", "a=2", why, sizeof why), TL_EINVAL);
  assert_string_equal(why, "the same key is given twice");
  assert_int_equal(tl_collect_plan_set(&p, "no-such-option", "1", why, sizeof why), TL_EINVAL);
}

typedef struct {
  int calls;
  int64_t samples;
} seen_results;

static void count_results(void *ctx, const char *probe, const tl_collect_result *r, size_t n) {
  seen_results *s = ctx;
  (void)probe;
  s->calls++;
  for (size_t i = 0; i < n; i++)
    s->samples += r[i].samples;
}

/* --repeat 2 --every 1s with two probes: two runs, the second no earlier
 * than a second after the first, each its own run UUID. */
static void plan_runs_repeat_every(void **state) {
  fixture *f = *state;
  tl_collect_plan p;
  tl_collect_plan_init(&p);
  char why[TL_WHY_MAX];
  static const char *const set[][2] = {{"probe", "uv,settimeout"},
                                       {"delays", "0,1"},
                                       {"count", "3"},
                                       {"warmup", "0"},
                                       {"repeat", "2"},
                                       {"every", "1s"},
                                       {"tag", "k=v"}};
  for (size_t i = 0; i < sizeof set / sizeof set[0]; i++)
    assert_int_equal(tl_collect_plan_set(&p, set[i][0], set[i][1], why, sizeof why), TL_OK);
  assert_int_equal(tl_collect_plan_check(&p, why, sizeof why), TL_OK);
  char what[256];
  tl_collect_plan_describe(&p, what, sizeof what);
  assert_string_equal(what, "probes uv,settimeout, delays 0,1 ms, 3 samples each");
  tl_session_spec spec = spec_of(f, "repeat");
  seen_results seen = {0, 0};
  int64_t samples = -1;
  char err[600];
  uint64_t t0 = uv_hrtime();
  assert_int_equal(
      tl_collect_plan_run(&p, f->store, &spec, count_results, &seen, &samples, err, sizeof err),
      TL_OK);
  assert_true(uv_hrtime() - t0 >= 1000000000ULL);
  assert_int_equal(seen.calls, 4);
  assert_int_equal(seen.samples, 24);
  assert_int_equal(samples, 24);
  tl_filter all;
  tl_filter_init(&all);
  tl_session_list list;
  assert_int_equal(tl_store_sessions(f->store, &all, &list), TL_OK);
  assert_int_equal(list.count, 8);
  for (size_t i = 0; i < list.count; i++) {
    assert_string_equal(list.items[i].status, "complete");
    /* sessions 0-3 are the first run, 4-7 the second */
    int same = strcmp(list.items[i].run_uuid, list.items[0].run_uuid) == 0;
    assert_int_equal(same, i < 4);
  }
  tl_session_list_free(&list);
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
      cmocka_unit_test(probe_list_split),
      cmocka_unit_test(periodic_probe_measures_its_interval),
      cmocka_unit_test(repeat_schedule),
      cmocka_unit_test(plan_checks),
      cmocka_unit_test_setup_teardown(plan_runs_repeat_every, tl_collect_setup,
                                      tl_collect_teardown),
      cmocka_unit_test_setup_teardown(host_facts, tl_collect_setup, tl_collect_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
