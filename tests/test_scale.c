/* test_scale.c: many hosts, one database: merge (idempotence, conflicts,
 * all or nothing), import of good and bad files, the export round trip,
 * prune and delete, two collectors writing at once, and exact percentiles
 * over many sessions and blocks (the block-skipping path) and everything a
 * comparison computes against a plain sort of the raw samples done here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "sqlite_internal.h"
#include "support.h"
#include "tl_report.h"

typedef tl_test_fixture fixture;

static tl_store *open_db(const char *dir, const char *name) {
  char *path = tl_test_path(dir, name);
  tl_store *s = NULL;
  assert_int_equal(tl_store_open(&s, path, 0), TL_OK);
  free(path);
  return s;
}

static void add_session(tl_store *s, const char *label, const char *host, int64_t delay_ns,
                        const int64_t *v, size_t n, char uuid[37]) {
  static const char *keys[] = {"site"}, *values[] = {"lab, \"2\""};
  tl_fact facts[] = {{"cpu.model", "Test CPU", "/proc/cpuinfo"}};
  tl_session_spec spec = {.run_uuid = "run",
                          .label = label,
                          .probe = "settimeout",
                          .delay_ns = delay_ns,
                          .command_line = "tlcollect",
                          .host_fingerprint = host,
                          .hostname = host,
                          .libuv_version = "1.44.2",
                          .tag_keys = keys,
                          .tag_values = values,
                          .tag_count = 1,
                          .facts = facts,
                          .fact_count = 1};
  tl_writer *w;
  assert_int_equal(tl_writer_begin(s, &spec, &w, uuid), TL_OK);
  assert_int_equal(tl_writer_add(w, v, n), TL_OK);
  assert_int_equal(tl_writer_end(w, "complete"), TL_OK);
}

static int64_t count_samples(tl_store *s) {
  tl_store_stats st;
  assert_int_equal(tl_store_info(s, &st), TL_OK);
  return st.samples;
}

static int64_t lcg(uint64_t *x) {
  *x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
  return (int64_t)(*x >> 33);
}

/* ======================================================================== */

static void merge_idempotent_and_conflict(void **state) {
  fixture *f = *state;
  int64_t v[10000];
  uint64_t x = 1;
  for (int i = 0; i < 10000; i++)
    v[i] = 1000000 + lcg(&x) % 300000;
  char ua[37], ub[37], uc[37];
  tl_store *a = open_db(f->dir, "a.db"), *b = open_db(f->dir, "b.db");
  add_session(a, "vbox", "host-a", 0, v, 10000, ua); /* 3 blocks */
  add_session(b, "droplet", "host-b", 0, v, 500, ub);
  tl_store_close(a);
  tl_store_close(b);
  char *pa = tl_test_path(f->dir, "a.db"), *pb = tl_test_path(f->dir, "b.db");
  const char *both[] = {pa, pb};

  tl_store *t = open_db(f->dir, "t.db");
  tl_merge_stats st;
  assert_int_equal(tl_store_merge(t, both, 2, &st), TL_OK);
  assert_int_equal(st.sessions_added, 2);
  assert_int_equal(st.samples_added, 10500);
  assert_int_equal(st.hosts_added, 2);
  assert_int_equal(count_samples(t), 10500);
  /* Twice: nothing changes. */
  assert_int_equal(tl_store_merge(t, both, 2, &st), TL_OK);
  assert_int_equal(st.sessions_added, 0);
  assert_int_equal(st.sessions_present, 2);
  assert_int_equal(count_samples(t), 10500);
  assert_int_equal(tl_store_check(t, NULL, NULL), TL_OK);
  /* Samples, tags and facts came along unchanged. */
  tl_filter fl;
  tl_filter_init(&fl);
  tl_session_list list;
  assert_int_equal(tl_store_sessions(t, &fl, &list), TL_OK);
  assert_int_equal(list.count, 2);
  assert_string_equal(list.items[0].uuid, ua);
  tl_fact_row *rows;
  size_t nrows;
  assert_int_equal(tl_store_tags(t, list.items[0].id, &rows, &nrows), TL_OK);
  assert_int_equal(nrows, 1);
  assert_string_equal(rows[0].value, "lab, \"2\"");
  tl_fact_rows_free(rows, nrows);
  tl_session_list_free(&list);

  /* A third file with a new session and one that conflicts with a: the
   * merge fails naming the session, and leaves the target as it was. */
  tl_store *c = open_db(f->dir, "c.db");
  add_session(c, "macos", "host-c", 0, v, 100, uc);
  tl_store_close(c);
  char *pc = tl_test_path(f->dir, "c.db");
  a = open_db(f->dir, "a.db");
  assert_int_equal(
      sqlite3_exec(tl__sqlite_db(a), "UPDATE sessions SET missed_periods = 1", NULL, NULL, NULL),
      SQLITE_OK);
  tl_store_close(a);
  const char *bad[] = {pc, pa};
  assert_int_equal(tl_store_merge(t, bad, 2, &st), TL_ECONFLICT);
  assert_non_null(strstr(tl_store_errmsg(t), ua));
  assert_non_null(strstr(tl_store_errmsg(t), "a.db"));
  assert_int_equal(count_samples(t), 10500); /* c's session was rolled back too */
  /* A different sample in the same UUID is a conflict as well. */
  a = open_db(f->dir, "a.db");
  int64_t other[3] = {5, 6, 7}, lo, hi;
  uint8_t blk[TL_BLOCK_HEADER + 16 + 30]; /* tl_block_bound(3) */
  size_t blen = tl_block_encode(other, 3, 0, blk, &lo, &hi);
  sqlite3_stmt *up;
  assert_int_equal(
      sqlite3_exec(tl__sqlite_db(a), "UPDATE sessions SET missed_periods = 0", NULL, NULL, NULL),
      SQLITE_OK);
  assert_int_equal(sqlite3_prepare_v2(tl__sqlite_db(a),
                                      "UPDATE sample_blocks SET count = 3, min_ns = ?, max_ns = ?, "
                                      "data = ? WHERE session_id = 1 AND seq = 0",
                                      -1, &up, NULL),
                   SQLITE_OK);
  sqlite3_bind_int64(up, 1, lo);
  sqlite3_bind_int64(up, 2, hi);
  sqlite3_bind_blob(up, 3, blk, (int)blen, SQLITE_STATIC);
  assert_int_equal(sqlite3_step(up), SQLITE_DONE);
  sqlite3_finalize(up);
  assert_int_equal(sqlite3_exec(tl__sqlite_db(a),
                                "UPDATE sessions SET sample_count = (SELECT sum(count) FROM "
                                "sample_blocks b WHERE b.session_id = sessions.id)",
                                NULL, NULL, NULL),
                   SQLITE_OK);
  tl_store_close(a);
  const char *only_a[] = {pa};
  assert_int_equal(tl_store_merge(t, only_a, 1, &st), TL_ECONFLICT);
  assert_non_null(strstr(tl_store_errmsg(t), "differs"));
  /* A corrupt source is refused, naming the file, the session and the
   * block, before anything is compared or copied: a changed min, one
   * flipped bit, a block gone, a count that does not add up. */
  static const char *const damage[] = {
      "UPDATE sample_blocks SET min_ns = min_ns - 1 WHERE seq = 1",
      ("UPDATE sample_blocks SET data = substr(data, 1, 20) || CASE WHEN substr(data, 21, 1) = "
       "x'ff' THEN x'fe' ELSE x'ff' END || substr(data, 22) WHERE seq = 1"),
      "DELETE FROM sample_blocks WHERE seq = 2",
      "UPDATE sessions SET sample_count = sample_count + 1 WHERE label = 'dmg'",
  };
  static const char *const said[] = {"block 1: checksum mismatch", "block 1: checksum mismatch",
                                     "lost", "lost"};
  for (size_t k = 0; k < sizeof damage / sizeof *damage; k++) {
    char *pd = tl_test_path(f->dir, "d.db");
    assert_int_equal(tl_test_copy_file(pb, pd), 0);
    tl_store *d = open_db(f->dir, "d.db");
    tl_session_spec spec = {.run_uuid = "r",
                            .label = "dmg",
                            .probe = "settimeout",
                            .command_line = "x",
                            .host_fingerprint = "hd",
                            .hostname = "hd",
                            .libuv_version = ""};
    tl_writer *wr;
    char ud[37];
    assert_int_equal(tl_writer_begin(d, &spec, &wr, ud), TL_OK);
    assert_int_equal(tl_writer_add(wr, v, 10000), TL_OK);
    assert_int_equal(tl_writer_end(wr, "complete"), TL_OK);
    assert_int_equal(sqlite3_exec(tl__sqlite_db(d), damage[k], NULL, NULL, NULL), SQLITE_OK);
    tl_store_close(d);
    const char *only_d[] = {pd};
    assert_int_equal(tl_store_merge(t, only_d, 1, &st), TL_ECORRUPT);
    assert_non_null(strstr(tl_store_errmsg(t), "d.db"));
    assert_non_null(strstr(tl_store_errmsg(t), ud));
    assert_non_null(strstr(tl_store_errmsg(t), said[k]));
    assert_non_null(strstr(tl_store_errmsg(t), "nothing was merged"));
    assert_int_equal(count_samples(t), 10500);
    free(pd);
  }
  /* Not a tl database, and a missing file: errors, nothing merged. */
  char *junk = tl_test_path(f->dir, "junk.db");
  assert_int_equal(tl_test_write_file(junk, "hello", 5), 0);
  const char *j[] = {pc, junk};
  assert_int_not_equal(tl_store_merge(t, j, 2, &st), TL_OK);
  assert_int_equal(count_samples(t), 10500);
  tl_store_close(t);
  free(pa);
  free(pb);
  free(pc);
  free(junk);
}

/* ======================================================================== */

typedef struct {
  int64_t lines[16];
  size_t n;
} bad_lines;

static void on_bad(void *ctx, int64_t line, const char *why) {
  bad_lines *b = ctx;
  assert_true(why && *why);
  if (b->n < 16)
    b->lines[b->n++] = line;
}

static int import_text(tl_store *s, const char *text, tl_samples_format fmt, int skip_bad,
                       bad_lines *bl, int64_t *got) {
  FILE *in = fmemopen((void *)text, strlen(text), "r");
  tl_import_opts o;
  tl_import_opts_init(&o);
  o.format = fmt;
  o.label = "node";
  o.probe = "settimeout";
  o.delay_ns = 0;
  o.skip_bad = skip_bad;
  int rc = tl_store_import(s, in, &o, on_bad, bl, NULL, got, NULL);
  fclose(in);
  return rc;
}

static void import_good_and_bad(void **state) {
  fixture *f = *state;
  tl_store *s = open_db(f->dir, "i.db");
  bad_lines bl = {0};
  int64_t got = 0;
  /* Bare numbers, a header with units, quoting, blank lines, comments. */
  assert_int_equal(import_text(s, "1000\n2000\r\n\n3000", TL_SAMPLES_CSV, 0, &bl, &got), TL_OK);
  assert_int_equal(got, 3);
  assert_int_equal(import_text(s, "run,latency_ms\n# note\na,1.5\nb,\"2\"\nc,0.000001\n",
                               TL_SAMPLES_CSV, 0, &bl, &got),
                   TL_OK);
  assert_int_equal(got, 3);
  assert_int_equal(
      import_text(s, "{\"latency_ns\": 5}\n7\n{\"x\":{\"y\":[1,\"}\"]},\"latency_us\":2}\n",
                  TL_SAMPLES_JSONL, 0, &bl, &got),
      TL_OK);
  assert_int_equal(got, 3);
  assert_int_equal(bl.n, 0);
  assert_int_equal(count_samples(s), 9);
  /* Bad rows: reported with their line numbers, nothing imported. */
  assert_int_equal(import_text(s, "1\nabc\n3\n-4\n5\n1e3\n99999999999999999999999\n",
                               TL_SAMPLES_CSV, 0, &bl, &got),
                   TL_EINVAL);
  assert_int_equal(bl.n, 4);
  assert_int_equal(bl.lines[0], 2);
  assert_int_equal(bl.lines[1], 4);
  assert_int_equal(bl.lines[2], 6);
  assert_int_equal(bl.lines[3], 7);
  assert_int_equal(count_samples(s), 9);
  /* With skip_bad the good ones go in. */
  bl.n = 0;
  assert_int_equal(import_text(s, "1\nabc\n3\n", TL_SAMPLES_CSV, 1, &bl, &got), TL_OK);
  assert_int_equal(got, 2);
  assert_int_equal(bl.n, 1);
  assert_int_equal(count_samples(s), 11);
  bl.n = 0;
  assert_int_equal(import_text(s, "{\"latency_ns\": \"5\"}\n{\"latency\":1}\n{bad\n[1]\n",
                               TL_SAMPLES_JSONL, 0, &bl, &got),
                   TL_EINVAL);
  assert_int_equal(bl.n, 4);
  /* Empty input and a header alone hold no samples. */
  assert_int_equal(import_text(s, "", TL_SAMPLES_CSV, 0, &bl, &got), TL_EINVAL);
  assert_int_equal(import_text(s, "latency_ns\n", TL_SAMPLES_CSV, 0, &bl, &got), TL_EINVAL);
  assert_int_equal(count_samples(s), 11);
  assert_int_equal(tl_store_check(s, NULL, NULL), TL_OK);
  tl_store_close(s);
}

typedef struct {
  const int64_t *want;
  size_t n, at;
} expect_samples;

static int same_samples(void *ctx, const int64_t *v, size_t n) {
  expect_samples *e = ctx;
  assert_true(e->at + n <= e->n);
  assert_memory_equal(v, e->want + e->at, n * sizeof *v);
  e->at += n;
  return 0;
}

/* RFC 4180 quoting: a quoted field may hold commas, doubled quotes and
 * blanks; the latency column is found by field, not by comma. What tlstore
 * export writes for a probe named exec:node -e "setTimeout(f, 0)". */
static void import_quoted_csv(void **state) {
  fixture *f = *state;
  tl_store *s = open_db(f->dir, "q.db");
  bad_lines bl = {0};
  int64_t got = 0;
  assert_int_equal(import_text(s,
                               "label,probe,delay_ns,latency_ns\n"
                               "x,\"exec:node -e \"\"setTimeout(f, 0)\"\"\",0,1200345\n"
                               "x,\"a,b,\"\"c\"\",,d\" ,0,1100777\n"
                               "\"x,y\",\",\",\"0\",\"1999999\"\n",
                               TL_SAMPLES_CSV, 0, &bl, &got),
                   TL_OK);
  assert_int_equal(got, 3);
  assert_int_equal(bl.n, 0);
  int64_t want[] = {1200345, 1100777, 1999999};
  expect_samples e = {want, 3, 0};
  assert_int_equal(tl_store_scan(s, 1, same_samples, &e), TL_OK);
  assert_int_equal(e.at, 3);
  /* An unterminated quote and text after a closing quote are bad rows. */
  assert_int_equal(
      import_text(s, "a,latency_ns\n\"x,5\n\"y\"z,6\n7,8\n", TL_SAMPLES_CSV, 0, &bl, &got),
      TL_EINVAL);
  assert_int_equal(bl.n, 2);
  assert_int_equal(bl.lines[0], 2);
  assert_int_equal(bl.lines[1], 3);
  tl_store_close(s);
}

/* A last line with no newline is a bad row however long it is: 5 KB, and
 * longer than the 1 MiB read chunk, and exactly two chunks. */
static void import_long_last_line(void **state) {
  fixture *f = *state;
  tl_store *s = open_db(f->dir, "l.db");
  const size_t lengths[] = {5000, (1 << 20) + 5000, 2 << 20};
  for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++) {
    char *text = malloc(lengths[k] + 16);
    strcpy(text, "1\n2\n");
    memset(text + 4, '7', lengths[k]);
    text[4 + lengths[k]] = '\0';
    bad_lines bl = {0};
    int64_t got = -1;
    int rc = import_text(s, text, TL_SAMPLES_CSV, 0, &bl, &got);
    if (rc != TL_EINVAL || bl.n != 1 || bl.lines[0] != 3)
      fail_msg("a last line of %zu bytes: rc %d, %zu bad rows", lengths[k], rc, bl.n);
    assert_int_equal(got, 0);
    free(text);
  }
  tl_store_close(s);
}

/* Bare integers of every length from 1 to 16 digits, leading zeros, the
 * largest latency accepted and the smallest refused, in a unit, over more
 * than one read chunk: each read as the general parser reads it (the
 * common line takes a path of its own, 8 bytes at a time). */
static void import_every_digit_line(void **state) {
  fixture *f = *state;
  enum { LINES = 150000 };
  const int64_t max_us = 30LL * 86400 * 1000000; /* 30 days */
  char *text = malloc((size_t)LINES * 20 + 64), *p = text;
  int64_t *want = malloc(LINES * sizeof *want);
  size_t n = 0, first_bad = 0;
  uint64_t x = 7;
  p += sprintf(p, "latency_us\n");
  for (size_t i = 0; i < LINES; i++) {
    int digits = 1 + (int)(i % 16);
    char line[24];
    for (int d = 0; d < digits; d++)
      line[d] = (char)('0' + (d == 0 && i % 5 == 0 ? 0 : (int)((uint64_t)lcg(&x) % 10)));
    line[digits] = '\0';
    int64_t v = strtoll(line, NULL, 10);
    if (i % 1000 == 7)
      v = max_us + (int64_t)(i / 1000 % 2); /* accepted, then refused */
    if (i % 1000 == 7)
      snprintf(line, sizeof line, "%lld", (long long)v);
    p += sprintf(p, "%s\n", line);
    if (v <= max_us)
      want[n++] = v * 1000;
    else if (!first_bad)
      first_bad = i + 2; /* its line, after the header */
  }
  tl_store *s = open_db(f->dir, "digits.db");
  bad_lines bl = {0};
  int64_t got = 0;
  assert_int_equal(import_text(s, text, TL_SAMPLES_CSV, 1, &bl, &got), TL_OK);
  assert_int_equal(got, (int64_t)n);
  assert_int_equal(bl.n, 16); /* the refused ones, as many as on_bad keeps */
  assert_int_equal(bl.lines[0], (int64_t)first_bad);
  expect_samples e = {want, n, 0};
  assert_int_equal(tl_store_scan(s, 1, same_samples, &e), TL_OK);
  assert_int_equal(e.at, n);
  assert_int_equal(tl_store_check(s, NULL, NULL), TL_OK);
  tl_store_close(s);
  free(want);
  free(text);
}

/* The row parser on hostile input: never a crash, always a clear answer. */
static void import_parser_hostile(void **state) {
  (void)state;
  char why[TL_WHY_MAX];
  int64_t v;
  size_t col;
  int64_t unit;
  const char *lines[] = {"",
                         " ",
                         "\"",
                         "\"\"",
                         ",,,",
                         "{",
                         "}",
                         "{\"latency_ns\"",
                         "{\"a\":}",
                         "{\"latency_ns\":1,\"latency_ns\":2}",
                         "\xff\xfe",
                         "1\x01",
                         "{\"latency_ns\":-1}",
                         "{\"latency_ns\":1.5}",
                         "0x10",
                         "1 2",
                         "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["};
  for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
    for (int fmt = TL_SAMPLES_CSV; fmt <= TL_SAMPLES_JSONL; fmt++) {
      int rc = tl__import_parse_line((tl_samples_format)fmt, lines[i], strlen(lines[i]), 0, 1, &v,
                                     why, sizeof why);
      assert_true(rc == 0 || rc == 1 || rc == TL_EINVAL);
      if (rc == TL_EINVAL)
        assert_true(why[0] != '\0');
    }
  /* Random bytes. */
  uint64_t x = 7;
  char buf[64];
  for (int i = 0; i < 20000; i++) {
    size_t n = (size_t)(lcg(&x) % sizeof buf);
    for (size_t k = 0; k < n; k++)
      buf[k] = "0123456789{}[]\",:.- latency_nsmu\\e"[lcg(&x) % 35];
    for (int fmt = TL_SAMPLES_CSV; fmt <= TL_SAMPLES_JSONL; fmt++) {
      int rc = tl__import_parse_line((tl_samples_format)fmt, buf, n, (size_t)(i % 3), 1000, &v, why,
                                     sizeof why);
      assert_true(rc == 0 || rc == 1 || rc == TL_EINVAL);
      if (rc == 1)
        assert_true(v >= 0);
    }
  }
  assert_int_equal(tl__import_parse_header("a,latency_us", 12, &col, &unit, why, sizeof why),
                   TL_OK);
  assert_int_equal(col, 1);
  assert_int_equal(unit, 1000);
  assert_int_equal(tl__import_parse_header("a,b", 3, &col, &unit, why, sizeof why), TL_EINVAL);
  assert_int_equal(tl__import_parse_line(TL_SAMPLES_CSV, "x,250", 5, 1, 1, &v, why, sizeof why), 1);
  assert_int_equal(v, 250);
  assert_int_equal(tl__import_parse_line(TL_SAMPLES_CSV, "250", 3, 1, 1, &v, why, sizeof why),
                   TL_EINVAL);
}

/* ======================================================================== */

static char *run_tlstore(const char *db, const char *const *args, int expect) {
  char *argv[16];
  size_t n = 0;
  argv[n++] = TLSTORE;
  argv[n++] = "--db";
  argv[n++] = (char *)db;
  for (size_t i = 0; args[i]; i++)
    argv[n++] = (char *)args[i];
  argv[n] = NULL;
  char *out = NULL, *err = NULL;
  int rc = tl_test_run(argv, NULL, &out, &err);
  if (rc != expect)
    fprintf(stderr, "tlstore %s: status %d: %s\n", args[0], rc, err);
  assert_int_equal(rc, expect);
  free(err);
  return out;
}

static void export_round_trip(void **state) {
  fixture *f = *state;
  tl_store *s = open_db(f->dir, "src.db");
  int64_t v[9000];
  uint64_t x = 3;
  for (int i = 0; i < 9000; i++)
    v[i] = lcg(&x) % 100000000;
  char u[37];
  add_session(s, "vbox", "h1", 50000000, v, 9000, u);
  add_session(s, "vbox", "h2", 50000000, v + 100, 50, u);
  add_session(s, "macos", "h1", 0, v, 10, u);
  tl_store_close(s);
  char *src = tl_test_path(f->dir, "src.db");
  const char *fmts[] = {"csv", "jsonl"};
  for (int k = 0; k < 2; k++) {
    char *dst = tl_test_path(f->dir, k ? "rt-jsonl.db" : "rt-csv.db");
    char *file = tl_test_path(f->dir, k ? "out.jsonl" : "out.csv");
    const char *ex[] = {"export", "--format", fmts[k], "--label", "vbox", NULL};
    char *first = run_tlstore(src, ex, 0);
    assert_int_equal(tl_test_write_file(file, first, strlen(first)), 0);
    const char *im[] = {"import",  "--format",   fmts[k],   file, "--label", "vbox",
                        "--probe", "settimeout", "--delay", "50", NULL};
    free(run_tlstore(dst, im, 0));
    char *again = run_tlstore(dst, ex, 0);
    assert_string_equal(first, again);
    /* The expected text is built here from the raw samples. */
    size_t lines = 0;
    for (char *p = first; *p; p++)
      lines += *p == '\n';
    assert_int_equal(lines, 9050 + (k ? 0 : 1));
    char want[128];
    snprintf(want, sizeof want,
             k ? "{\"label\":\"vbox\",\"probe\":\"settimeout\",\"delay_ns\":50000000,"
                 "\"latency_ns\":%lld}\n"
               : "vbox,settimeout,50000000,%lld\n",
             (long long)v[0]);
    assert_non_null(strstr(first, want));
    free(first);
    free(again);
    free(dst);
    free(file);
  }
  /* hgrm: HdrHistogram's layout, exact values. */
  const char *hg[] = {"export", "--format", "hgrm", "--label", "macos", NULL};
  char *h = run_tlstore(src, hg, 0);
  assert_non_null(strstr(h, "       Value   Percentile   TotalCount 1/(1-Percentile)\n\n"));
  assert_non_null(strstr(h, "#[Max     = "));
  assert_non_null(strstr(h, "Total count    =           10]"));
  int64_t sorted[10];
  memcpy(sorted, v, sizeof sorted);
  for (int i = 0; i < 10; i++)
    for (int j = i + 1; j < 10; j++)
      if (sorted[j] < sorted[i]) {
        int64_t t = sorted[i];
        sorted[i] = sorted[j];
        sorted[j] = t;
      }
  char line[128];
  snprintf(line, sizeof line, "%12.6f %12f %12d", (double)sorted[9] / 1e6, 1.0, 10);
  assert_non_null(strstr(h, line));
  snprintf(line, sizeof line, "%12.6f %12f %12d", (double)sorted[0] / 1e6, 0.0, 1);
  assert_non_null(strstr(h, line));
  free(h);
  /* Usage errors do not touch the database. */
  char *none = tl_test_path(f->dir, "none.db");
  const char *u1[] = {"export", "--format", "xml", NULL};
  free(run_tlstore(none, u1, 2));
  const char *u2[] = {"import", "--format", "csv", "x.csv", "--label", "a", NULL};
  free(run_tlstore(none, u2, 2));
  const char *u3[] = {"delete", "not-a-uuid", NULL};
  free(run_tlstore(none, u3, 2));
  const char *u4[] = {"prune", "--before", "yesterday", NULL};
  free(run_tlstore(none, u4, 2));
  const char *u5[] = {"sessions", "--status", "sleeping", NULL};
  free(run_tlstore(none, u5, 2));
  const char *u6[] = {"merge", "missing.db", NULL};
  free(run_tlstore(none, u6, 1));
  const char *u7[] = {"merge", NULL};
  free(run_tlstore(none, u7, 2));
  const char *u8[] = {"import",  "--format", "hgrm",    "x", "--label", "a",
                      "--probe", "p",        "--delay", "0", NULL};
  free(run_tlstore(none, u8, 2));
  assert_int_not_equal(access(none, F_OK), 0);
  /* merge through the program: the same file twice adds nothing. */
  char *m = tl_test_path(f->dir, "m.db");
  const char *mg[] = {"merge", src, NULL};
  char *o1 = run_tlstore(m, mg, 0), *o2 = run_tlstore(m, mg, 0);
  assert_non_null(strstr(o1, "merged 3 sessions (9060 samples, 2 new hosts); 0 already present"));
  assert_non_null(strstr(o2, "merged 0 sessions (0 samples, 0 new hosts); 3 already present"));
  free(o1);
  free(o2);
  free(m);
  free(none);
  free(src);
}

/* ======================================================================== */

static void prune_and_delete(void **state) {
  fixture *f = *state;
  tl_store *s = open_db(f->dir, "p.db");
  int64_t v[] = {1, 2, 3};
  char u1[37], u2[37], u3[37];
  add_session(s, "old", "h", 0, v, 3, u1);
  add_session(s, "keep", "h", 0, v, 2, u2);
  add_session(s, "old", "h", 1, v, 1, u3);
  /* Back-date the first two sessions. */
  assert_int_equal(sqlite3_exec(tl__sqlite_db(s),
                                "UPDATE sessions SET started_ns = 1000 WHERE label = 'old' "
                                "AND delay_ns = 0; UPDATE sessions SET started_ns = 1000 WHERE "
                                "label = 'keep'",
                                NULL, NULL, NULL),
                   SQLITE_OK);
  int64_t ns = 0, nsamp = 0;
  assert_int_equal(tl_store_prune(s, 2000, "old", &ns, &nsamp), TL_OK);
  assert_int_equal(ns, 1);
  assert_int_equal(nsamp, 3);
  assert_int_equal(count_samples(s), 3);
  assert_int_equal(tl_store_delete(s, u1), TL_ENOTFOUND);
  assert_int_equal(tl_store_delete(s, u3), TL_OK);
  assert_int_equal(count_samples(s), 2);
  assert_int_equal(tl_store_prune(s, 2000, NULL, &ns, &nsamp), TL_OK);
  assert_int_equal(ns, 1);
  assert_int_equal(count_samples(s), 0);
  /* Nothing dangles. */
  int64_t rows = -1;
  sqlite3_stmt *st;
  sqlite3_prepare_v2(
      tl__sqlite_db(s),
      "SELECT (SELECT count(*) FROM sample_blocks) + (SELECT count(*) FROM "
      "session_tags) + (SELECT count(*) FROM host_facts) + (SELECT count(*) FROM fact_sets)",
      -1, &st, NULL);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  rows = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  assert_int_equal(rows, 0);
  assert_int_equal(tl_store_vacuum(s), TL_OK);
  assert_int_equal(tl_store_check(s, NULL, NULL), TL_OK);
  tl_store_close(s);
}

static int page_size(tl_store *s) {
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_prepare_v2(tl__sqlite_db(s), "PRAGMA page_size", -1, &st, NULL),
                   SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  int n = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  return n;
}

/* A database with the 4 KiB pages of earlier tl versions gets 64 KiB pages
 * from vacuum, every sample kept, and stays in WAL mode. */
static void vacuum_upgrades_pages(void **state) {
  fixture *f = *state;
  char *path = tl_test_path(f->dir, "old.db");
  sqlite3 *raw;
  assert_int_equal(sqlite3_open(path, &raw), SQLITE_OK);
  assert_int_equal(sqlite3_exec(raw,
                                "PRAGMA page_size=4096; PRAGMA journal_mode=WAL;"
                                "PRAGMA application_id = 1953260642",
                                NULL, NULL, NULL),
                   SQLITE_OK);
  sqlite3_close(raw);
  tl_store *s = open_db(f->dir, "old.db");
  assert_int_equal(page_size(s), 4096);
  int64_t v[10000];
  for (int i = 0; i < 10000; i++)
    v[i] = 1000000 + i % 777;
  char u[37];
  add_session(s, "a", "h", 0, v, 10000, u);
  assert_int_equal(tl_store_vacuum(s), TL_OK);
  assert_int_equal(page_size(s), 65536);
  assert_int_equal(count_samples(s), 10000);
  assert_int_equal(tl_store_check(s, NULL, NULL), TL_OK);
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_prepare_v2(tl__sqlite_db(s), "PRAGMA journal_mode", -1, &st, NULL),
                   SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
  sqlite3_finalize(st);
  tl_store_close(s);
  free(path);
}

/* ======================================================================== */

static void concurrent_collectors(void **state) {
  fixture *f = *state;
  char *db = tl_test_path(f->dir, "shared.db");
  tl_store *s = NULL;
  assert_int_equal(tl_store_open(&s, db, 0), TL_OK);
  tl_store_close(s);
  pid_t pids[2];
  for (int i = 0; i < 2; i++) {
    pids[i] = fork();
    if (pids[i] == 0) {
      char *argv[] = {TLCOLLECT, "--db", db,        "--label", i ? "two" : "one", "--delays", "0",
                      "--count", "3000", "--quiet", NULL};
      execv(argv[0], argv);
      _exit(127);
    }
  }
  /* Read while they write: each report sees one consistent snapshot. */
  for (int k = 0; k < 5; k++) {
    char *argv[] = {TLREPORT, "--db", db, NULL};
    char *out = NULL;
    int rc = tl_test_run(argv, NULL, &out, NULL);
    assert_true(rc == 0 || rc == 1); /* 1 before the first session exists */
    free(out);
  }
  for (int i = 0; i < 2; i++) {
    int st;
    waitpid(pids[i], &st, 0);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
  }
  assert_int_equal(tl_store_open(&s, db, 0), TL_OK);
  tl_filter fl;
  tl_filter_init(&fl);
  tl_session_list list;
  assert_int_equal(tl_store_sessions(s, &fl, &list), TL_OK);
  assert_int_equal(list.count, 2);
  for (size_t i = 0; i < 2; i++) {
    assert_string_equal(list.items[i].status, "complete");
    assert_int_equal(list.items[i].sample_count, 3000);
  }
  tl_session_list_free(&list);
  assert_int_equal(count_samples(s), 6000);
  assert_int_equal(tl_store_check(s, NULL, NULL), TL_OK);
  tl_store_close(s);
  free(db);
}

/* A reader inside tl_store_read_begin/end sees the database as it was at
 * begin, while another connection commits more samples. */
static void read_snapshot(void **state) {
  fixture *f = *state;
  tl_store *w = open_db(f->dir, "snap.db"), *r = open_db(f->dir, "snap.db");
  int64_t v[5000];
  for (int i = 0; i < 5000; i++)
    v[i] = 1000 + i;
  char u[37];
  add_session(w, "a", "h", 0, v, 5000, u);
  int64_t ids[] = {1};
  const double p[] = {50, 100};
  tl_dist before, during, after;
  assert_int_equal(tl_store_read_begin(r), TL_OK);
  assert_int_equal(tl_dist_compute(r, ids, 1, p, 2, &before), TL_OK);
  /* The writer adds a session and removes a block of the first. */
  tl_session_spec spec = {.run_uuid = "run",
                          .label = "a",
                          .probe = "settimeout",
                          .command_line = "x",
                          .host_fingerprint = "h",
                          .hostname = "h",
                          .libuv_version = ""};
  tl_writer *wr;
  assert_int_equal(tl_writer_begin(w, &spec, &wr, u), TL_OK);
  assert_int_equal(tl_writer_add(wr, v, 100), TL_OK);
  assert_int_equal(tl_writer_end(wr, "complete"), TL_OK);
  assert_int_equal(sqlite3_exec(tl__sqlite_db(w),
                                "DELETE FROM sample_blocks WHERE session_id = 1 AND seq = 0", NULL,
                                NULL, NULL),
                   SQLITE_OK);
  tl_filter fl;
  tl_filter_init(&fl);
  tl_session_list list;
  assert_int_equal(tl_store_sessions(r, &fl, &list), TL_OK);
  assert_int_equal(list.count, 1); /* the new session is not visible yet */
  tl_session_list_free(&list);
  assert_int_equal(tl_dist_compute(r, ids, 1, p, 2, &during), TL_OK);
  assert_int_equal(during.count, before.count);
  assert_int_equal(during.pct_ns[0], before.pct_ns[0]);
  tl_store_read_end(r);
  assert_int_equal(tl_store_sessions(r, &fl, &list), TL_OK);
  assert_int_equal(list.count, 2);
  tl_session_list_free(&list);
  /* Now the lost block shows: an error naming it, never fewer samples. */
  assert_int_equal(tl_dist_compute(r, ids, 1, p, 2, &after), TL_ECORRUPT);
  assert_non_null(strstr(tl_store_errmsg(r), "block 0: missing"));
  tl_store_close(r);
  tl_store_close(w);
}

/* The decoder's fast path (1 to 3 byte varints) and its general path, mixed
 * in one block and at its end, give back every value. */
static void codec_all_widths(void **state) {
  (void)state;
  int64_t v[TL_BLOCK_MAX], back[TL_BLOCK_MAX], lo, hi;
  uint8_t buf[TL_BLOCK_HEADER + TL_BLOCK_MAX * 10];
  uint64_t x = 99;
  for (int round = 0; round < 50; round++) {
    size_t n = 1 + (size_t)(lcg(&x) % TL_BLOCK_MAX);
    for (size_t i = 0; i < n; i++) {
      int bits = (int)(lcg(&x) % 63); /* deltas of 0 to 62 bits: 1 to 9 bytes */
      int64_t r = (int64_t)(((uint64_t)lcg(&x) << 31) | (uint64_t)lcg(&x)); /* 62 bits */
      v[i] = 5 + (r & (((int64_t)1 << bits) - 1));
    }
    size_t len = tl_block_encode_as(TL_CODEC_VARINT, v, n, 0, buf, &lo, &hi);
    tl_block b = {.count = (int64_t)n,
                  .min_ns = lo,
                  .max_ns = hi,
                  .codec = TL_CODEC_VARINT,
                  .data = buf,
                  .len = len};
    assert_int_equal(tl_block_decode(&b, back, NULL), TL_OK);
    assert_memory_equal(v, back, n * sizeof *v);
    b.len--;
    assert_int_equal(tl_block_decode(&b, back, NULL), TL_ECORRUPT);
  }
}

/* ======================================================================== */

static int cmp(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

typedef struct {
  int64_t threshold;
  int64_t seen, decoded, values;
} filter_ctx;

static int only_high(void *arg, const tl_block *b) {
  filter_ctx *c = arg;
  assert_null(b->data);
  c->seen++;
  return b->max_ns >= c->threshold;
}

static int count_block(void *arg, const tl_block *b) {
  filter_ctx *c = arg;
  int64_t v[TL_BLOCK_MAX];
  assert_int_equal(tl_block_decode(b, v, NULL), TL_OK);
  for (int64_t i = 0; i < b->count; i++)
    c->values += v[i] >= c->threshold;
  c->decoded++;
  return 0;
}

/* The block scan hands over headers first and reads only accepted blocks. */
static void scan_blocks_filter(void **state) {
  fixture *f = *state;
  tl_store *s = open_db(f->dir, "b.db");
  int64_t *v = malloc(20000 * sizeof *v);
  for (int i = 0; i < 20000; i++)
    v[i] = i; /* ascending: blocks 0..4095, 4096..8191, ... */
  char u[37];
  add_session(s, "x", "h", 0, v, 20000, u);
  add_session(s, "x", "h", 0, v, 100, u);
  int64_t ids[] = {1, 2};
  /* New files have pages large enough for a whole block. */
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_prepare_v2(tl__sqlite_db(s), "PRAGMA page_size", -1, &st, NULL),
                   SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  assert_int_equal(sqlite3_column_int(st, 0), 65536);
  sqlite3_finalize(st);
  filter_ctx c = {.threshold = 12000};
  assert_int_equal(tl_store_scan_blocks(s, ids, 2, only_high, count_block, &c), TL_OK);
  assert_int_equal(c.seen, 5 + 1);
  assert_int_equal(c.decoded, 3); /* 8192..12287, 12288..16383, 16384..19999 */
  assert_int_equal(c.values, 8000);
  /* A refused header is never read; a damaged one is reported. */
  assert_int_equal(sqlite3_exec(tl__sqlite_db(s),
                                "UPDATE sample_blocks SET count = 5000 WHERE seq = 1", NULL, NULL,
                                NULL),
                   SQLITE_OK);
  assert_int_equal(tl_store_scan_blocks(s, ids, 2, only_high, count_block, &c), TL_ECORRUPT);
  free(v);
  tl_store_close(s);
}

/* Many sessions and blocks, shapes that make the narrowing passes skip
 * blocks (sessions in disjoint ranges) and collect across block edges;
 * every percentile checked against a sort done here. */
static void exact_over_sessions(void **state) {
  fixture *f = *state;
  tl_store *s = open_db(f->dir, "e.db");
  enum { SESSIONS = 7, N = 30000 };
  int64_t *all = malloc(SESSIONS * N * sizeof *all), ids[SESSIONS];
  size_t total = 0;
  uint64_t x = 11;
  for (int k = 0; k < SESSIONS; k++) {
    size_t n = N - (size_t)k * 1111;
    int64_t *v = all + total;
    for (size_t i = 0; i < n; i++) {
      if (k % 3 == 0)
        v[i] = 50000000 + k * 1000000 + lcg(&x) % 40000; /* a band of its own */
      else if (k % 3 == 1)
        v[i] = 1000000 + lcg(&x) % 2000 + (i % 997 == 0 ? lcg(&x) % 100000000 : 0);
      else
        v[i] = (int64_t)i * 3; /* sorted: blocks do not overlap */
    }
    char u[37];
    add_session(s, "x", "h", 0, v, n, u);
    total += n;
  }
  tl_filter fl;
  tl_filter_init(&fl);
  tl_session_list list;
  assert_int_equal(tl_store_sessions(s, &fl, &list), TL_OK);
  for (size_t i = 0; i < SESSIONS; i++)
    ids[i] = list.items[i].id;
  tl_session_list_free(&list);
  int64_t *sorted = malloc(total * sizeof *sorted);
  memcpy(sorted, all, total * sizeof *sorted);
  qsort(sorted, total, sizeof *sorted, cmp);
  const double p[] = {0.001, 1, 10, 33.3, 50, 66.7, 90, 99, 99.9, 99.99, 100};
  tl_dist d;
  assert_int_equal(tl_dist_compute(s, ids, SESSIONS, p, 11, &d), TL_OK);
  assert_int_equal(d.count, (int64_t)total);
  assert_int_equal(d.min_ns, sorted[0]);
  assert_int_equal(d.max_ns, sorted[total - 1]);
  for (int k = 0; k < 11; k++)
    assert_int_equal(d.pct_ns[k], sorted[tl_rank(p[k], (int64_t)total) - 1]);
  /* A subset of sessions, in another order. */
  int64_t sub[] = {ids[5], ids[0], ids[3]};
  size_t n0 = N, n3 = N - 3 * 1111, n5 = N - 5 * 1111;
  size_t off3 = (size_t)N * 3 - 1111 * 3, off5 = (size_t)N * 5 - 1111 * 10;
  size_t m = n0 + n3 + n5;
  int64_t *part = malloc(m * sizeof *part);
  memcpy(part, all, n0 * sizeof *part);
  memcpy(part + n0, all + off3, n3 * sizeof *part);
  memcpy(part + n0 + n3, all + off5, n5 * sizeof *part);
  qsort(part, m, sizeof *part, cmp);
  assert_int_equal(tl_dist_compute(s, sub, 3, p, 11, &d), TL_OK);
  assert_int_equal(d.count, (int64_t)m);
  for (int k = 0; k < 11; k++)
    assert_int_equal(d.pct_ns[k], part[tl_rank(p[k], (int64_t)m) - 1]);
  /* A damaged summary is an error that says so, never other numbers. */
  assert_int_equal(sqlite3_exec(tl__sqlite_db(s),
                                "CREATE TABLE saved AS SELECT * FROM session_summaries;"
                                "UPDATE session_summaries SET data = substr(data, 1, 8) || "
                                "x'ff' || substr(data, 10) WHERE session_id = 2",
                                NULL, NULL, NULL),
                   SQLITE_OK);
  assert_int_equal(tl_dist_compute(s, ids, SESSIONS, p, 11, &d), TL_ECORRUPT);
  assert_non_null(strstr(tl_store_errmsg(s), "summary: checksum mismatch"));
  assert_int_equal(sqlite3_exec(tl__sqlite_db(s),
                                "DELETE FROM session_summaries; INSERT INTO session_summaries "
                                "SELECT * FROM saved; DROP TABLE saved",
                                NULL, NULL, NULL),
                   SQLITE_OK);
  /* A damaged block deep in a session is an error that says where, even
   * where no rank needs its samples. */
  assert_int_equal(sqlite3_exec(tl__sqlite_db(s),
                                "UPDATE sample_blocks SET data = x'ffffff' WHERE session_id = 3 "
                                "AND seq = 5",
                                NULL, NULL, NULL),
                   SQLITE_OK);
  assert_int_equal(tl_dist_compute(s, ids, SESSIONS, p, 11, &d), TL_ECORRUPT);
  assert_non_null(strstr(tl_store_errmsg(s), "block 5: no valid block header"));
  free(part);
  free(sorted);
  free(all);
  tl_store_close(s);
}

/* Counts the values of sorted v[0..n) in [lo, hi]. */
static int64_t count_in(const int64_t *v, size_t n, int64_t lo, int64_t hi) {
  int64_t c = 0;
  for (size_t i = 0; i < n; i++)
    c += v[i] >= lo && v[i] <= hi;
  return c;
}

/* Everything a comparison computes from the samples, against a sort of the
 * same samples done here: the group's percentiles and chart points, each
 * session's own, and the histogram. The three sessions make the sweep read
 * its ranges in each of its ways: a sparse band whose samples are collected,
 * a dense 50 ms band counted value by value, and 1.2 million samples spread
 * over 4 ms around 8.6 s, too many to collect and too wide to count, which
 * take a third pass. */
static void comparison_exact_everywhere(void **state) {
  fixture *f = *state;
  tl_store *s = open_db(f->dir, "c.db");
  enum { NC = 30000, NB = 200000, NA = 1200000 };
  const size_t sizes[3] = {NC, NB, NA};
  int64_t *v[3];
  uint64_t x = 5;
  for (int k = 0; k < 3; k++) {
    v[k] = malloc(sizes[k] * sizeof *v[k]);
    for (size_t i = 0; i < sizes[k]; i++) {
      if (k == 0)
        v[k][i] = 900000 + lcg(&x) % 300000 + (i % 501 == 0 ? lcg(&x) % 5000000000 : 0);
      else if (k == 1)
        v[k][i] = 50000000 + lcg(&x) % 20000;
      else
        v[k][i] = ((int64_t)1 << 33) + lcg(&x) % ((int64_t)1 << 22);
    }
    char u[37];
    add_session(s, "x", "h", 0, v[k], sizes[k], u);
  }
  const char *labels[] = {"x"};
  tl_compare_opts o;
  tl_compare_opts_init(&o);
  o.labels = labels;
  o.label_count = 1;
  const double p[] = {0, 1, 10, 50, 90, 99.9, 100};
  memcpy(o.pcts, p, sizeof p);
  o.pct_count = 7;
  tl_comparison c;
  char err[256];
  assert_int_equal(tl_compare(s, &o, &c, err, sizeof err), TL_OK);
  assert_int_equal(c.group_count, 1);
  const tl_group *g = &c.groups[0];
  size_t total = NA + NB + NC;
  int64_t *all = malloc(total * sizeof *all);
  size_t at = 0;
  for (int k = 0; k < 3; k++) {
    memcpy(all + at, v[k], sizes[k] * sizeof *all);
    at += sizes[k];
    qsort(v[k], sizes[k], sizeof *v[k], cmp);
    const tl_session_detail *d = &c.details[k];
    assert_int_equal(d->count, (int64_t)sizes[k]);
    assert_int_equal(d->min_ns, v[k][0]);
    assert_int_equal(d->max_ns, v[k][sizes[k] - 1]);
    /* Its own p50, p90 and p99, then the page's percentiles. */
    assert_int_equal(d->pct_count, 3 + 7);
    static const double own[3] = {50, 90, 99};
    for (size_t j = 0; j < d->pct_count; j++) {
      assert_true(d->pcts[j] == (j < 3 ? own[j] : p[j - 3]));
      assert_int_equal(d->pct_ns[j], v[k][tl_rank(d->pcts[j], (int64_t)sizes[k]) - 1]);
    }
  }
  qsort(all, total, sizeof *all, cmp);
  assert_int_equal(g->dist.count, (int64_t)total);
  for (size_t j = 0; j < 7; j++)
    assert_int_equal(g->dist.pct_ns[j], all[tl_rank(p[j], (int64_t)total) - 1]);
  for (size_t j = 0; j < TL_SPECTRUM_POINTS; j++)
    assert_int_equal(g->spectrum.pct_ns[j], all[tl_rank(tl_spectrum_pcts[j], (int64_t)total) - 1]);
  /* The histogram: every bin but the last holds exactly its samples; the
   * last and the samples above its end hold the rest, and those left out are
   * the slowest 0.1% at most. */
  assert_int_equal(g->hist_lo_ns, all[0]);
  int64_t sum = g->hist_over;
  for (int b = 0; b < TL_HIST_BINS; b++) {
    int64_t lo = g->hist_lo_ns + b * g->hist_width_ns;
    if (b < TL_HIST_BINS - 1)
      assert_int_equal(g->hist[b], count_in(all, total, lo, lo + g->hist_width_ns - 1));
    else
      assert_int_equal(g->hist[b] + g->hist_over, count_in(all, total, lo, INT64_MAX));
    sum += g->hist[b];
  }
  assert_int_equal(sum, (int64_t)total);
  int64_t p999 = all[tl_rank(99.9, (int64_t)total) - 1];
  assert_true(g->hist_over <= count_in(all, total, p999 + 1, INT64_MAX));
  assert_true(g->hist_lo_ns + TL_HIST_BINS * g->hist_width_ns > p999);
  tl_comparison_free(&c);
  free(all);
  for (int k = 0; k < 3; k++)
    free(v[k]);
  tl_store_close(s);
}

/* ======================================================================== */

/* The comparison of the sessions of o (want of them) keeps each set of
 * fact rows once: sessions whose facts are the same share one array,
 * others have their own, and each reads as written. */
enum { FACT_SESSIONS = 12 };
static void fact_rows_shared(tl_store *s, const tl_compare_opts *o, size_t want) {
  tl_comparison c;
  char err[256];
  assert_int_equal(tl_compare(s, o, &c, err, sizeof err), TL_OK);
  assert_int_equal(c.sessions.count, want);
  int index[FACT_SESSIONS];
  for (size_t k = 0; k < c.sessions.count; k++) {
    const tl_session_detail *d = &c.details[k];
    assert_int_equal(d->tag_count, 1);
    int i = index[k] = atoi(d->tags[0].value);
    assert_true(!o->last || i >= 6);
    if (i == 5) {
      assert_int_equal(d->fact_count, 0);
      assert_null(d->facts);
      continue;
    }
    char model[16];
    snprintf(model, sizeof model, "CPU %d", i % 3);
    assert_int_equal(d->fact_count, 2);
    assert_string_equal(d->facts[0].key, "cpu.model");
    assert_string_equal(d->facts[0].value, model);
    assert_string_equal(d->facts[0].evidence, "/proc/cpuinfo");
    assert_string_equal(d->facts[1].key, "mem");
    assert_string_equal(d->facts[1].value, i < 6 ? "1G" : "2G");
  }
  for (size_t k = 0; k < c.sessions.count; k++)
    for (size_t j = 0; j < k; j++) {
      int a = index[k], b = index[j];
      if (a == 5 || b == 5)
        continue;
      int same = a % 3 == b % 3 && (a < 6) == (b < 6);
      assert_int_equal(c.details[k].facts == c.details[j].facts, same);
      assert_ptr_not_equal(c.details[k].tags, c.details[j].tags);
    }
  tl_comparison_free(&c);
}

/* Sessions whose facts are the same share one array of them, read all at
 * once or, for two labels of a file many times larger, one session at a
 * time (each session's strings then freed before the next's are read, at
 * the same places as like as not); sessions dropped by --last leave the
 * rest intact. */
static void comparison_shares_fact_rows(void **state) {
  fixture *f = *state;
  tl_store *s = open_db(f->dir, "facts.db");
  for (int i = 0; i < FACT_SESSIONS; i++) {
    char label[8], host[8], model[16], tagv[8];
    snprintf(label, sizeof label, "l%d", i % 3);
    snprintf(host, sizeof host, "h%d", i % 3);
    snprintf(model, sizeof model, "CPU %d", i % 3);
    snprintf(tagv, sizeof tagv, "%d", i);
    tl_fact facts[] = {{"cpu.model", model, "/proc/cpuinfo"}, {"mem", i < 6 ? "1G" : "2G", ""}};
    const char *keys[] = {"i"}, *values[] = {tagv};
    tl_session_spec spec = {.run_uuid = "run",
                            .label = label,
                            .probe = "settimeout",
                            .command_line = "tlcollect",
                            .host_fingerprint = host,
                            .hostname = host,
                            .tag_keys = keys,
                            .tag_values = values,
                            .tag_count = 1,
                            .facts = i == 5 ? NULL : facts,
                            .fact_count = i == 5 ? 0 : 2};
    tl_writer *w;
    char uuid[37];
    const int64_t v[] = {1000 + i, 2000, 3000};
    assert_int_equal(tl_writer_begin(s, &spec, &w, uuid), TL_OK);
    assert_int_equal(tl_writer_add(w, v, 3), TL_OK);
    assert_int_equal(tl_writer_end(w, "complete"), TL_OK);
  }
  tl_compare_opts o;
  tl_compare_opts_init(&o);
  fact_rows_shared(s, &o, FACT_SESSIONS);
  o.last = 2;
  fact_rows_shared(s, &o, 6);
  /* 8 sessions asked of 72: the store reads them one by one. */
  const int64_t v[] = {5000};
  for (int i = 0; i < 60; i++) {
    char uuid[37];
    add_session(s, "other", "h9", 0, v, 1, uuid);
  }
  const char *two[] = {"l0", "l1"};
  tl_compare_opts_init(&o);
  o.labels = two;
  o.label_count = 2;
  fact_rows_shared(s, &o, 8);
  tl_store_close(s);
}

/* tl_samples() from the sqlite3 shell gives back exactly the samples, of
 * blocks in codec 2 (uniform samples) and codec 3 (a spread of widths). */
static void sqlite_shell_extension(void **state) {
  fixture *f = *state;
  if (access(SQLITE3_SHELL, X_OK) != 0)
    tl_test_skip("no sqlite3 shell (apt-get install sqlite3)");
  tl_store *s = open_db(f->dir, "q.db");
  int64_t v[5000], w[3000];
  uint64_t x = 5;
  int64_t sum_a = 0, sum_b = 0, sum_c = 0;
  for (int i = 0; i < 5000; i++) {
    v[i] = lcg(&x) % 200000000;
    sum_a += v[i];
    sum_b += i < 10 ? v[i] : 0;
  }
  for (int i = 0; i < 3000; i++) {
    w[i] = 1000000 + (int64_t)((lcg(&x) % 5000000) >> (lcg(&x) % 20));
    sum_c += w[i];
  }
  char u[37];
  add_session(s, "a", "h", 0, v, 5000, u); /* two blocks */
  add_session(s, "b", "h", 0, v, 10, u);
  add_session(s, "c", "h", 0, w, 3000, u);
  tl_store_close(s);
  char *db = tl_test_path(f->dir, "q.db");
  char load[4200];
  snprintf(load, sizeof load, ".load %s", TL_SQLITE_EXT);
  char *argv[] = {SQLITE3_SHELL,
                  "-batch",
                  db,
                  load,
                  "SELECT s.label, count(*), sum(x.latency_ns), min(x.seq), max(x.seq) FROM "
                  "sessions s, tl_samples(s.id) x GROUP BY s.label ORDER BY s.label;"
                  "SELECT latency_ns FROM tl_samples(1) WHERE seq IN (0, 4096, 4999) ORDER BY seq;"
                  "SELECT count(*) FROM tl_samples;"
                  "SELECT group_concat(codec) FROM (SELECT codec FROM sample_blocks "
                  "ORDER BY session_id, seq);",
                  NULL};
  char *out = NULL, *err = NULL;
  assert_int_equal(tl_test_run(argv, NULL, &out, &err), 0);
  char want[512];
  snprintf(want, sizeof want,
           "a|5000|%lld|0|4999\nb|10|%lld|0|9\nc|3000|%lld|0|2999\n%lld\n%lld\n%lld\n8010\n"
           "2,2,2,3\n",
           (long long)sum_a, (long long)sum_b, (long long)sum_c, (long long)v[0],
           (long long)v[4096], (long long)v[4999]);
  assert_string_equal(out, want);
  free(out);
  free(err);
  free(db);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(merge_idempotent_and_conflict, tl_test_setup,
                                      tl_test_teardown),
      cmocka_unit_test_setup_teardown(import_quoted_csv, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(import_long_last_line, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(import_good_and_bad, tl_test_setup, tl_test_teardown),
      cmocka_unit_test(import_parser_hostile),
      cmocka_unit_test_setup_teardown(import_every_digit_line, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(export_round_trip, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(prune_and_delete, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(vacuum_upgrades_pages, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(concurrent_collectors, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(scan_blocks_filter, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(read_snapshot, tl_test_setup, tl_test_teardown),
      cmocka_unit_test(codec_all_widths),
      cmocka_unit_test_setup_teardown(exact_over_sessions, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(comparison_exact_everywhere, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(comparison_shares_fact_rows, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(sqlite_shell_extension, tl_test_setup, tl_test_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
