/* test_check.c: tlstore check over many sessions, which it reads in batches
 * in one pass over each session's blocks for both the samples and the
 * summaries: every damaged block and every wrong summary is reported, once,
 * wherever it lies (first, last or next to another in a batch, across the
 * batches, in a session of several blocks, in a session without blocks
 * beside it), the samples' problems first, each group in the order of the
 * sessions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "support.h"
#include "support_store.h"

typedef tl_test_fixture fixture;

enum { SESSIONS = 1100, BIG = 9000, SMALL = 1000 };

/* Session i's samples: none for every 50th from 7, BIG of a wide spread for
 * every 10th (several blocks, drifting, so that the pass over them cannot
 * settle their percentiles),
 * else SMALL. */
static size_t samples_of(size_t i, int64_t *v, uint64_t *x) {
  size_t n = i % 50 == 7 ? 0 : i % 10 == 0 ? BIG : SMALL;
  for (size_t k = 0; k < n; k++) {
    *x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
    int64_t r = (int64_t)(*x >> 20) % 200000;
    /* The big ones drift, so that their first samples foretell little. */
    v[k] = 50000 + r + (i % 10 == 0 ? (int64_t)k * 5000 : 0) + (r % 97 == 0 ? 3000000 : 0);
  }
  return n;
}

typedef struct {
  char msg[64][300];
  size_t n;
} problems;

static void keep(void *ctx, const char *problem) {
  problems *p = ctx;
  if (p->n < 64)
    snprintf(p->msg[p->n], sizeof p->msg[p->n], "%s", problem);
  p->n++;
}

/* The index of the session a problem names. */
static size_t session_of(const tl_session_list *list, const int64_t *ids, const char *msg) {
  for (size_t i = 0; i < SESSIONS; i++)
    for (size_t j = 0; j < list->count; j++)
      if (list->items[j].id == ids[i] && strncmp(msg, "session ", 8) == 0 &&
          strncmp(msg + 8, list->items[j].uuid, 36) == 0)
        return i;
  fail_msg("'%s' names no session", msg);
  return SIZE_MAX;
}

static void every_damage_once_in_order(void **state) {
  fixture *f = *state;
  int64_t *v = malloc(BIG * sizeof *v), ids[SESSIONS];
  uint64_t x = 42;
  tl_store *s = NULL;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  tl_session_spec spec = tl_test_spec("c");
  for (size_t i = 0; i < SESSIONS; i++)
    ids[i] = tl_test_write_session(s, &spec, v, samples_of(i, v, &x), 0);
  problems p = {.n = 0};
  assert_int_equal(tl_store_check(s, keep, &p), TL_OK);
  assert_int_equal(p.n, 0);
  tl_store_close(s);
  free(v);

  char sql[4096];
  snprintf(sql, sizeof sql,
           /* Samples: a block that fails its checksum (a session of one
            * block), a lost middle block (of three, the last session but one
            * of the first batch), a count the blocks do not hold (with the
            * summary's count then wrong too). */
           "UPDATE sample_blocks SET data = zeroblob(length(data)) WHERE session_id = %lld;"
           "DELETE FROM sample_blocks WHERE session_id = %lld AND seq = 1;"
           "UPDATE sessions SET sample_count = sample_count + 1 WHERE id = %lld;"
           /* Summaries that decode but are another session's (of as many
            * samples): beside a damaged session, after one, across a batch,
            * of sessions of several blocks; and one that does not decode,
            * in the last session. */
           "UPDATE session_summaries SET data = (SELECT data FROM session_summaries WHERE "
           "session_id = %lld) WHERE session_id = %lld;"
           "UPDATE session_summaries SET data = (SELECT data FROM session_summaries WHERE "
           "session_id = %lld) WHERE session_id = %lld;"
           "UPDATE session_summaries SET data = (SELECT data FROM session_summaries WHERE "
           "session_id = %lld) WHERE session_id = %lld;"
           "UPDATE session_summaries SET data = zeroblob(length(data)) WHERE session_id = %lld;",
           (long long)ids[3], (long long)ids[510], (long long)ids[1030], (long long)ids[6],
           (long long)ids[4], (long long)ids[512], (long long)ids[511], (long long)ids[530],
           (long long)ids[520], (long long)ids[SESSIONS - 1]);
  tl_test_exec_sql(f->db, sql);

  static const size_t samples[] = {3, 510, 1030}, summaries[] = {4, 511, 520, 1030, SESSIONS - 1};
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  p.n = 0;
  assert_int_equal(tl_store_check(s, keep, &p), TL_ECORRUPT);
  tl_filter filter;
  tl_filter_init(&filter);
  tl_session_list list;
  assert_int_equal(tl_store_sessions(s, &filter, &list), TL_OK);
  size_t want = sizeof samples / sizeof *samples + sizeof summaries / sizeof *summaries;
  if (p.n != want) {
    for (size_t k = 0; k < p.n && k < 64; k++)
      print_message("problem: %s\n", p.msg[k]);
    fail_msg("%zu problems, not %zu", p.n, want);
  }
  for (size_t k = 0; k < want; k++) {
    int of_summary = k >= sizeof samples / sizeof *samples;
    size_t at = of_summary ? summaries[k - sizeof samples / sizeof *samples] : samples[k];
    if (session_of(&list, ids, p.msg[k]) != at || !strstr(p.msg[k], ": summary: ") != !of_summary)
      fail_msg("problem %zu: '%s', not of session %zu's %s", k, p.msg[k], at,
               of_summary ? "summary" : "samples");
  }
  assert_non_null(strstr(p.msg[1], "block 1: missing"));
  assert_non_null(strstr(p.msg[4], "it differs from the session's samples"));
  assert_non_null(strstr(p.msg[6], "its count differs from the session's"));
  tl_session_list_free(&list);
  tl_store_close(s);
}

/* SQLite's integrity check runs beside the pass over the sessions, but its
 * findings still come first: an index whose definition no longer matches
 * its entries (a row missing from it for each session), then the block
 * that fails its checksum, which the pass finds long before the integrity
 * check ends. */
static void integrity_findings_first(void **state) {
  fixture *f = *state;
  int64_t v[SMALL];
  uint64_t x = 7;
  tl_store *s = NULL;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  tl_session_spec spec = tl_test_spec("c");
  enum { FEW = 5 };
  int64_t ids[FEW];
  for (size_t i = 0; i < FEW; i++)
    ids[i] = tl_test_write_session(s, &spec, v, samples_of(1, v, &x), 0);
  tl_store_close(s);
  tl_test_exec_sql(f->db,
                   "PRAGMA writable_schema = ON; UPDATE sqlite_schema SET sql = 'CREATE INDEX "
                   "sessions_label ON sessions(delay_ns, label)' WHERE name = 'sessions_label'");
  char which[64];
  snprintf(which, sizeof which, "id = %lld", (long long)ids[FEW - 1]);
  tl_test_flip_block_bits(f->db, which);
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  problems p = {.n = 0};
  assert_int_equal(tl_store_check(s, keep, &p), TL_ECORRUPT);
  tl_store_close(s);
  if (p.n != FEW + 1)
    for (size_t k = 0; k < p.n && k < 64; k++)
      print_message("problem: %s\n", p.msg[k]);
  assert_int_equal(p.n, FEW + 1);
  for (size_t k = 0; k < FEW; k++)
    assert_non_null(strstr(p.msg[k], "integrity: row "));
  assert_non_null(strstr(p.msg[FEW], "block 0: checksum mismatch"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(every_damage_once_in_order, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(integrity_findings_first, tl_test_setup, tl_test_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
