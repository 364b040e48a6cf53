/* test_parse.c: validation of user input: labels, tags, durations, whole
 * numbers, dates and lists, good and bad. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tl_store.h"

static void labels(void **state) {
  (void)state;
  char why[TL_WHY_MAX];
  assert_int_equal(tl_label_check("droplet", why, sizeof why), TL_OK);
  assert_int_equal(tl_label_check("vbox-6.1_guest.2", why, sizeof why), TL_OK);
  assert_int_equal(tl_label_check("", why, sizeof why), TL_EINVAL);
  assert_string_equal(why, "label is empty");
  assert_int_equal(tl_label_check("-x", why, sizeof why), TL_EINVAL);
  assert_int_equal(tl_label_check("a b", why, sizeof why), TL_EINVAL);
  assert_int_equal(tl_label_check("<script>", why, sizeof why), TL_EINVAL);
  assert_int_equal(tl_label_check("a\nb", why, sizeof why), TL_EINVAL);
  assert_int_equal(tl_label_check("caf\xc3\xa9", why, sizeof why), TL_EINVAL);
  char longl[TL_LABEL_MAX + 2];
  memset(longl, 'a', sizeof longl - 1);
  longl[sizeof longl - 1] = '\0';
  assert_int_equal(tl_label_check(longl, why, sizeof why), TL_EINVAL);
  longl[TL_LABEL_MAX] = '\0';
  assert_int_equal(tl_label_check(longl, why, sizeof why), TL_OK);
  assert_int_equal(tl_label_check(NULL, why, sizeof why), TL_EINVAL);
}

static void tags(void **state) {
  (void)state;
  char buf[512], why[TL_WHY_MAX];
  const char *k, *v;
  assert_int_equal(tl_tag_parse("load=idle", buf, &k, &v, why, sizeof why), TL_OK);
  assert_string_equal(k, "load");
  assert_string_equal(v, "idle");
  assert_int_equal(tl_tag_parse("note=a=b c", buf, &k, &v, why, sizeof why), TL_OK);
  assert_string_equal(v, "a=b c");
  assert_int_equal(tl_tag_parse("empty=", buf, &k, &v, why, sizeof why), TL_OK);
  assert_string_equal(v, "");
  assert_int_equal(tl_tag_parse("novalue", buf, &k, &v, why, sizeof why), TL_EINVAL);
  assert_int_equal(tl_tag_parse("=x", buf, &k, &v, why, sizeof why), TL_EINVAL);
  assert_int_equal(tl_tag_parse("k=line\nbreak", buf, &k, &v, why, sizeof why), TL_EINVAL);
  assert_int_equal(tl_tag_parse("k=\x1b[31m", buf, &k, &v, why, sizeof why), TL_EINVAL);
  assert_int_equal(tl_tag_parse("k=\xff\xfe", buf, &k, &v, why, sizeof why), TL_EINVAL);
  assert_string_equal(why, "tag value is not valid UTF-8");
  assert_int_equal(tl_tag_parse("k=<script>alert(1)</script>", buf, &k, &v, why, sizeof why),
                   TL_OK);
  assert_int_equal(tl_tag_parse("k=caf\xc3\xa9", buf, &k, &v, why, sizeof why), TL_OK);
  /* Overlong encoding of '/' is not UTF-8. */
  assert_int_equal(tl_tag_parse("k=\xc0\xaf", buf, &k, &v, why, sizeof why), TL_EINVAL);
}

static void durations(void **state) {
  (void)state;
  char why[TL_WHY_MAX];
  int64_t ns;
  const int64_t MS = 1000000, MAX = INT64_MAX;
  assert_int_equal(tl_duration_parse("50", MS, MAX, &ns, why, sizeof why), TL_OK);
  assert_int_equal(ns, 50 * MS);
  assert_int_equal(tl_duration_parse("1.5ms", MS, MAX, &ns, why, sizeof why), TL_OK);
  assert_int_equal(ns, 1500000);
  assert_int_equal(tl_duration_parse("20us", MS, MAX, &ns, why, sizeof why), TL_OK);
  assert_int_equal(ns, 20000);
  assert_int_equal(tl_duration_parse("30s", MS, MAX, &ns, why, sizeof why), TL_OK);
  assert_int_equal(ns, 30000000000LL);
  assert_int_equal(tl_duration_parse("10m", MS, MAX, &ns, why, sizeof why), TL_OK);
  assert_int_equal(ns, 600000000000LL);
  assert_int_equal(tl_duration_parse("2h", MS, MAX, &ns, why, sizeof why), TL_OK);
  assert_int_equal(ns, 7200000000000LL);
  assert_int_equal(tl_duration_parse("0", MS, MAX, &ns, why, sizeof why), TL_OK);
  assert_int_equal(ns, 0);
  /* Whole nanoseconds, exactly; anything finer is refused, never rounded. */
  assert_int_equal(tl_duration_parse("0.000001ms", MS, MAX, &ns, why, sizeof why), TL_OK);
  assert_int_equal(ns, 1);
  assert_int_equal(tl_duration_parse("1.000000001s", MS, MAX, &ns, why, sizeof why), TL_OK);
  assert_int_equal(ns, 1000000001);
  assert_int_equal(tl_duration_parse("0.5m", MS, MAX, &ns, why, sizeof why), TL_OK);
  assert_int_equal(ns, 30000000000LL);
  assert_int_equal(tl_duration_parse("2.50000000000000000s", MS, MAX, &ns, why, sizeof why), TL_OK);
  assert_int_equal(ns, 2500000000LL);
  assert_int_equal(tl_duration_parse("0.0000001ms", MS, MAX, &ns, why, sizeof why), TL_EINVAL);
  assert_non_null(strstr(why, "whole number of nanoseconds"));
  const char *bad[] = {"",
                       "-1",
                       "ms",
                       "1e3",
                       "0x10",
                       "1.2.3",
                       "5 ms",
                       "5mss",
                       " 5",
                       "5x",
                       "99999999999999999999",
                       "NaN",
                       "inf",
                       "0.5ns",
                       "0.0000001",
                       "1.0000000000001s",
                       "0.33333333333333h"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ns = -7;
    assert_int_equal(tl_duration_parse(bad[i], MS, MAX, &ns, why, sizeof why), TL_EINVAL);
    assert_int_equal(ns, -7);
  }
  assert_int_equal(tl_duration_parse("25h", MS, 24LL * 3600 * 1000000000LL, &ns, why, sizeof why),
                   TL_EINVAL);
  assert_int_equal(tl_duration_parse("9223372036854775807s", MS, MAX, &ns, why, sizeof why),
                   TL_EINVAL);
}

static void whole_numbers(void **state) {
  (void)state;
  char why[TL_WHY_MAX];
  int64_t v;
  assert_int_equal(tl_int_parse("1000", 1, 100000, &v, why, sizeof why), TL_OK);
  assert_int_equal(v, 1000);
  const char *bad[] = {
      "", "0", "-5", "abc", "12abc", "1.5", " 3", "100001", "99999999999999999999999"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_equal(tl_int_parse(bad[i], 1, 100000, &v, why, sizeof why), TL_EINVAL);
  assert_int_equal(tl_int_parse(NULL, 1, 2, &v, why, sizeof why), TL_EINVAL);
}

static void dates(void **state) {
  (void)state;
  char why[TL_WHY_MAX], buf[32];
  int64_t ns;
  assert_int_equal(tl_date_parse("1970-01-01", &ns, why, sizeof why), TL_OK);
  assert_int_equal(ns, 0);
  assert_int_equal(tl_date_parse("2026-11-12", &ns, why, sizeof why), TL_OK);
  tl_date_format(ns, buf, sizeof buf);
  assert_string_equal(buf, "2026-11-12T00:00:00Z");
  assert_int_equal(tl_date_parse("2024-02-29T23:59:59Z", &ns, why, sizeof why), TL_OK);
  assert_int_equal(ns, 1709251199LL * 1000000000LL);
  /* The last second 64-bit nanoseconds can hold. */
  assert_int_equal(tl_date_parse("2262-04-11T23:47:16Z", &ns, why, sizeof why), TL_OK);
  assert_int_equal(ns, 9223372036LL * 1000000000LL);
  const char *bad[] = {"",
                       "2026-13-01",
                       "2026-02-30",
                       "2025-02-29",
                       "2026-1-1",
                       "26-11-12",
                       "2026-11-12T25:00:00Z",
                       "2026-11-12 10:00:00",
                       "1969-12-31",
                       "2026-11-12T10:00:00",
                       "yesterday",
                       "2262-04-11T23:47:17Z", /* past int64 nanoseconds */
                       "9999-12-31T23:59:59Z"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_equal(tl_date_parse(bad[i], &ns, why, sizeof why), TL_EINVAL);
}

static void lists(void **state) {
  (void)state;
  char why[TL_WHY_MAX];
  char *items[4];
  size_t n;
  char a[] = "vbox,macos,droplet";
  assert_int_equal(tl_list_split(a, items, 4, &n, why, sizeof why), TL_OK);
  assert_int_equal(n, 3);
  assert_string_equal(items[2], "droplet");
  char b[] = "a,,b", c[] = "a,b,a", d[] = "", e[] = "a,b,c,d,e", f[] = "a,";
  assert_int_equal(tl_list_split(b, items, 4, &n, why, sizeof why), TL_EINVAL);
  assert_int_equal(tl_list_split(c, items, 4, &n, why, sizeof why), TL_EINVAL);
  assert_string_equal(why, "'a' is given twice");
  assert_int_equal(tl_list_split(d, items, 4, &n, why, sizeof why), TL_EINVAL);
  assert_int_equal(tl_list_split(e, items, 4, &n, why, sizeof why), TL_EINVAL);
  assert_int_equal(tl_list_split(f, items, 4, &n, why, sizeof why), TL_EINVAL);
}

static void ranks(void **state) {
  (void)state;
  assert_int_equal(tl_rank(50, 1), 1);
  assert_int_equal(tl_rank(50, 4), 2);
  assert_int_equal(tl_rank(50, 5), 3);
  assert_int_equal(tl_rank(90, 1000), 900);
  assert_int_equal(tl_rank(99.9, 1000), 999);
  assert_int_equal(tl_rank(100, 7), 7);
  assert_int_equal(tl_rank(0, 7), 1);
  assert_int_equal(tl_rank(90, 11), 10);
}

/* The nearest rank by its definition, for a percentile given as num / den
 * percent: the smallest r with r / n >= num / (100 den), found by bisection
 * on exact 128-bit comparisons, so it shares no arithmetic with tl_rank. */
static int64_t rank_by_definition(uint64_t num, uint64_t den, int64_t n) {
  __extension__ typedef unsigned __int128 u128;
  int64_t lo = 1, hi = n;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if ((u128)mid * den * 100 >= (u128)num * (uint64_t)n)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

static void ranks_exact_at_any_count(void **state) {
  (void)state;
  /* Past about 2^24 samples a double's 99.9 (a hair above 999/1000) times n
   * crosses an integer: the rank must still be the decimal percentile's. */
  const struct {
    double pct;
    uint64_t num, den;
  } pcts[] = {{50, 50, 1},          {90, 90, 1},        {99, 99, 1},
              {99.9, 999, 10},      {99.99, 9999, 100}, {99.999, 99999, 1000},
              {0.1, 1, 10},         {33.3, 333, 10},    {99.99999, 9999999, 100000},
              {1e-9, 1, 1000000000}};
  const int64_t base[] = {(1LL << 24) + 1, 143856000,     (1LL << 32) + 7, (1LL << 53) - 3,
                          (1LL << 53) + 5, INT64_MAX / 2, INT64_MAX};
  for (size_t b = 0; b < sizeof base / sizeof *base; b++)
    for (int64_t d = 0; d < 1000; d += 37)
      for (size_t k = 0; k < sizeof pcts / sizeof *pcts; k++) {
        int64_t n = base[b] - d;
        assert_int_equal(tl_rank(pcts[k].pct, n), rank_by_definition(pcts[k].num, pcts[k].den, n));
      }
  assert_int_equal(tl_rank(99.9, 143856000), 143712144);
  assert_int_equal(tl_rank(99.9, 1000000000000), 999000000000);
}

static void safe_output(void **state) {
  (void)state;
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  tl_fput_safe(f, "ok \x1b[2J\xff caf\xc3\xa9\n");
  fclose(f);
  assert_string_equal(buf, "ok \\x1b[2J\\xff caf\xc3\xa9\\x0a");
  free(buf);
}

/* C1 controls (U+0080..U+009F; U+009B is CSI on many terminals) are as
 * dangerous as ESC: refused in tag values, escaped on output. U+00A0 and
 * beyond are ordinary text. */
static void c1_controls(void **state) {
  (void)state;
  char tag[512], why[TL_WHY_MAX];
  const char *k, *v;
  assert_int_equal(tl_tag_parse("k=\xc2\x9b"
                                "31m",
                                tag, &k, &v, why, sizeof why),
                   TL_EINVAL);
  assert_string_equal(why, "tag value holds a control character");
  assert_int_equal(tl_tag_parse("k=a\xc2\x80", tag, &k, &v, why, sizeof why), TL_EINVAL);
  assert_int_equal(tl_tag_parse("k=\xc2\x9f", tag, &k, &v, why, sizeof why), TL_EINVAL);
  assert_int_equal(tl_tag_parse("k=\xc2\xa0\xc2\xbf", tag, &k, &v, why, sizeof why), TL_OK);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  tl_fput_safe(f, "a\xc2\x9b"
                  "2Jb\xc2\x85\xc2\xa0\x7f\xc2");
  fclose(f);
  assert_string_equal(buf, "a\\xc2\\x9b"
                           "2Jb\\xc2\\x85\xc2\xa0\\x7f\\xc2");
  free(buf);
}

/* The command line a session records: plain words as they are, anything
 * else in single quotes that a POSIX shell reads back as the same word. */
static void command_line_join(void **state) {
  (void)state;
  const char *argv[] = {"tlcollect", "--probe", "exec:python3 probe.py", "-t", "k=it's",
                        "",          "a/b,c"};
  char *s = tl_command_line(7, argv);
  assert_non_null(s);
  assert_string_equal(s, "tlcollect --probe 'exec:python3 probe.py' -t 'k=it'\\''s' '' a/b,c");
  free(s);
  const char *one[] = {"$HOME;rm"};
  s = tl_command_line(1, one);
  assert_string_equal(s, "'$HOME;rm'");
  free(s);
  s = tl_command_line(0, one);
  assert_string_equal(s, "");
  free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(labels),
      cmocka_unit_test(command_line_join),
      cmocka_unit_test(tags),
      cmocka_unit_test(durations),
      cmocka_unit_test(whole_numbers),
      cmocka_unit_test(dates),
      cmocka_unit_test(lists),
      cmocka_unit_test(ranks),
      cmocka_unit_test(ranks_exact_at_any_count),
      cmocka_unit_test(safe_output),
      cmocka_unit_test(c1_controls),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
