/* test_protocol.c: the child-probe line parser on good and malformed
 * input, including bytes no child should send. The parser is the one door
 * for text from another program, so it is tested directly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "collect_internal.h"

static int parse(const char *s, tl__msg *m, char *why) {
  return tl__protocol_parse_line(s, strlen(s), m, why, TL_WHY_MAX);
}

static void good_lines(void **state) {
  (void)state;
  tl__msg m;
  char why[TL_WHY_MAX];
  assert_int_equal(parse("hello 1", &m, why), TL_OK);
  assert_int_equal(m.kind, TL__MSG_HELLO);
  assert_int_equal(m.value, 1);
  assert_int_equal(parse("sample 0", &m, why), TL_OK);
  assert_int_equal(m.kind, TL__MSG_SAMPLE);
  assert_int_equal(m.value, 0);
  assert_int_equal(parse("sample 50123456", &m, why), TL_OK);
  assert_int_equal(m.value, 50123456);
  assert_int_equal(parse("sample 9223372036854775807", &m, why), TL_OK);
  assert_int_equal(m.value, INT64_MAX);
  assert_int_equal(parse("sample 17\r", &m, why), TL_OK); /* CRLF from Windows-style writers */
  assert_int_equal(m.value, 17);
  assert_int_equal(m.runq_ns, -1); /* no causes sent: not attributed */
  assert_int_equal(m.migrated, -1);
  /* Version 2's optional causes, any of them, in any order. */
  assert_int_equal(parse("sample 1050000 runq=42000", &m, why), TL_OK);
  assert_int_equal(m.value, 1050000);
  assert_int_equal(m.runq_ns, 42000);
  assert_int_equal(m.nivcsw, -1);
  assert_int_equal(parse("sample 9 migrated=1 nivcsw=3 runq=0", &m, why), TL_OK);
  assert_int_equal(m.runq_ns, 0);
  assert_int_equal(m.nivcsw, 3);
  assert_int_equal(m.migrated, 1);
  assert_int_equal(parse("", &m, why), TL_OK);
  assert_int_equal(m.kind, TL__MSG_SKIP);
  assert_int_equal(parse("# sample 12 is a comment", &m, why), TL_OK);
  assert_int_equal(m.kind, TL__MSG_SKIP);
  assert_int_equal(parse("error no clock here", &m, why), TL_OK);
  assert_int_equal(m.kind, TL__MSG_ERROR);
  assert_int_equal(m.text_len, strlen("no clock here"));
  assert_memory_equal(m.text, "no clock here", m.text_len);
  assert_int_equal(parse("error", &m, why), TL_OK);
  assert_int_equal(m.text_len, 0);
  assert_int_equal(parse("hello 2", &m, why), TL_OK);
  assert_int_equal(m.kind, TL__MSG_HELLO);
  assert_int_equal(m.value, 2);
  assert_int_equal(parse("fact node.version v20.1.0 (LTS)", &m, why), TL_OK);
  assert_int_equal(m.kind, TL__MSG_FACT);
  assert_int_equal(m.key_len, strlen("node.version"));
  assert_memory_equal(m.key, "node.version", m.key_len);
  assert_int_equal(m.text_len, strlen("v20.1.0 (LTS)"));
  assert_memory_equal(m.text, "v20.1.0 (LTS)", m.text_len);
  assert_int_equal(parse("fact clock_ns ", &m, why), TL_OK); /* an empty value */
  assert_int_equal(m.text_len, 0);
  char longest[8 + TL__PROTOCOL_FACT_VALUE_MAX + 2];
  snprintf(longest, sizeof longest, "fact k %0*d", TL__PROTOCOL_FACT_VALUE_MAX, 7);
  assert_int_equal(parse(longest, &m, why), TL_OK);
  assert_int_equal(m.text_len, TL__PROTOCOL_FACT_VALUE_MAX);
  strcat(longest, "8");
  assert_int_equal(parse(longest, &m, why), TL_EINVAL);
  assert_non_null(strstr(why, "at most 256 bytes"));
}

/* Version 2's plan line, as tl writes it, and what it refuses to write. */
static void plan_lines(void **state) {
  (void)state;
  char buf[TL__PROTOCOL_LINE_MAX + 2];
  const int64_t d[] = {0, 1000000, 50000000};
  int n = tl__protocol_plan(buf, sizeof buf, d, 3, 3005, 0);
  assert_int_equal(n, (int)strlen("plan 0,1000000,50000000 3005 0\n"));
  assert_string_equal(buf, "plan 0,1000000,50000000 3005 0\n");
  n = tl__protocol_plan(buf, sizeof buf, d, 1, 0, 250000);
  assert_string_equal(buf, "plan 0 0 250000\n");
  assert_int_equal(n, (int)strlen(buf));
  const int64_t neg[] = {5, -1};
  assert_int_equal(tl__protocol_plan(buf, sizeof buf, neg, 2, 1, 0), -1);
  assert_int_equal(tl__protocol_plan(buf, sizeof buf, d, 0, 1, 0), -1);
  assert_int_equal(tl__protocol_plan(buf, sizeof buf, d, 1, -1, 0), -1);
  assert_int_equal(tl__protocol_plan(buf, sizeof buf, d, 1, 1, -1), -1);
  /* Too small a buffer: refused, never cut. */
  char small[12];
  assert_int_equal(tl__protocol_plan(small, sizeof small, d, 3, 3005, 0), -1);
  /* The longest plan tl can send (32 delays of 19 digits) fits one line. */
  int64_t big[TL_MAX_DELAYS];
  for (size_t i = 0; i < TL_MAX_DELAYS; i++)
    big[i] = INT64_MAX - (int64_t)i;
  n = tl__protocol_plan(buf, sizeof buf, big, TL_MAX_DELAYS, INT64_MAX, INT64_MAX);
  assert_true(n > 0 && n <= TL__PROTOCOL_LINE_MAX + 1);
}

static void malformed_lines(void **state) {
  (void)state;
  static const char *bad[] = {
      "sample",                     /* no value */
      "sample ",                    /* empty value */
      "sample -5",                  /* negative */
      "sample +5",                  /* sign */
      "sample 1.5",                 /* fraction */
      "sample 12ms",                /* unit */
      "sample  12",                 /* two spaces */
      "sample 12 ",                 /* trailing space */
      "sample 12 runq=",            /* a cause without a value */
      "sample 12 runq=-5",          /* negative */
      "sample 12 runq=5 ",          /* trailing space after a cause */
      "sample 12 runq=5  nivcsw=1", /* two spaces */
      "sample 12 steal=5",          /* a cause tl does not know */
      "sample 12 migrated=2",       /* migrated is 0 or 1 */
      "sample 0x10",                /* hex */
      "sample 9223372036854775808", /* INT64_MAX + 1 */
      "sample 99999999999999999999",
      "sample 1e9",
      "Sample 12",  /* case matters */
      "sampel 12",  /* typo */
      " sample 12", /* leading space */
      "hello",
      "hello 3", /* unsupported version */
      "hello 0",
      "fact",                                      /* no key */
      "fact node.version",                         /* no value */
      "fact  v1",                                  /* empty key */
      "fact Node.version v1",                      /* capitals */
      "fact node/version v1",                      /* a character keys do not take */
      "fact a23456789012345678901234567890123 v1", /* a key of 33 */
      "fact k \x1b[31mred",
      "hello one",
      "measure 5", /* a request, not an answer */
      "12",
      "sample\t12",
      "sample 1\x1b[2J",
      ("error \x07"
       "bell"), /* the escape ends at the literal's end */
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    tl__msg m;
    char why[TL_WHY_MAX] = "";
    if (parse(bad[i], &m, why) != TL_EINVAL)
      fail_msg("accepted: '%s'", bad[i]);
    assert_true(strlen(why) > 0);
  }
}

static void embedded_nul_and_length(void **state) {
  (void)state;
  tl__msg m;
  char why[TL_WHY_MAX];
  /* A NUL inside: the length says where the line ends, not the NUL. */
  assert_int_equal(tl__protocol_parse_line("sample 1\0002", 10, &m, why, sizeof why), TL_EINVAL);
  /* Only len bytes are read: "sample 12" cut to "sample 1". */
  assert_int_equal(tl__protocol_parse_line("sample 12", 8, &m, why, sizeof why), TL_OK);
  assert_int_equal(m.value, 1);
  /* Too long. */
  size_t n = TL__PROTOCOL_LINE_MAX + 10;
  char *big = malloc(n);
  memset(big, '#', n);
  assert_int_equal(tl__protocol_parse_line(big, n, &m, why, sizeof why), TL_EINVAL);
  assert_non_null(strstr(why, "too long"));
  free(big);
  /* A lone CR is an empty line; why may be NULL. */
  assert_int_equal(tl__protocol_parse_line("\r", 1, &m, NULL, 0), TL_OK);
  assert_int_equal(m.kind, TL__MSG_SKIP);
  assert_int_equal(tl__protocol_parse_line("x", 1, &m, NULL, 0), TL_EINVAL);
}

/* Every prefix of every good and bad line, and random bytes, parse without
 * reading outside the line (run under the sanitizers in CI). */
static void every_prefix_and_random_bytes(void **state) {
  (void)state;
  static const char *lines[] = {"hello 1", "hello 2", "sample 9223372036854775807",
                                "error x", "# c",     "fact node.version v20"};
  tl__msg m;
  for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
    size_t n = strlen(lines[i]);
    for (size_t k = 0; k <= n; k++) {
      char *copy = malloc(k ? k : 1); /* exactly k bytes, no NUL: ASan catches overreads */
      memcpy(copy, lines[i], k);
      tl__protocol_parse_line(copy, k, &m, NULL, 0);
      free(copy);
    }
  }
  unsigned seed = 12345;
  for (int round = 0; round < 20000; round++) {
    size_t n = (size_t)(rand_r(&seed) % 40);
    char *b = malloc(n ? n : 1);
    for (size_t k = 0; k < n; k++)
      b[k] = (char)(rand_r(&seed) % 4 == 0 ? "sample 0123456789\r#"[rand_r(&seed) % 19]
                                           : rand_r(&seed) % 256);
    int rc = tl__protocol_parse_line(b, n, &m, NULL, 0);
    assert_true(rc == TL_OK || rc == TL_EINVAL);
    if (rc == TL_OK && m.kind == TL__MSG_SAMPLE)
      assert_true(m.value >= 0);
    free(b);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(good_lines),
      cmocka_unit_test(plan_lines),
      cmocka_unit_test(malformed_lines),
      cmocka_unit_test(embedded_nul_and_length),
      cmocka_unit_test(every_prefix_and_random_bytes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
