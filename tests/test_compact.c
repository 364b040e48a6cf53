/* test_compact.c: small sessions stored compactly. A session summary's
 * stored form (version 2, and version 1 still read) round-trips every shape
 * of histogram, also read sparsely (the buckets with samples listed, no
 * other written), and refuses damage; a fleet of 1,000-sample imports keeps
 * its summaries under a bound per sample and its host facts once per host;
 * a file of schema version 5 (facts per session) migrates to fact sets with
 * every session's facts unchanged; a merge keeps them shared; a file of
 * schema version 6 gets its UUIDs as bytes and loses its index of runs,
 * every row reading the same. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sqlite_internal.h"
#include "support.h"

typedef tl_test_fixture fixture;

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t next_rand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* ======================================================================== */
/* The summary's stored form                                                 */

/* A summary of a random shape in m, its histogram in hist: buckets from a
 * random minimum, dense or sparse, counts of one or huge. Count, sums and
 * percentiles need only be consistent with the histogram's layout. */
static void random_summary(int shape, tl_summary *m, int64_t *hist) {
  memset(m, 0, sizeof *m);
  m->hist = hist;
  if (shape == 0)
    return; /* no samples */
  static const int64_t lows[] = {0, 5, 2047, 1000000, 50000000, INT64_MAX / 4};
  m->min_ns = lows[next_rand() % 6] + (int64_t)(next_rand() % 1000);
  int64_t span = shape == 1 ? 0 : (int64_t)(next_rand() % (shape == 2 ? 100 : 100000000));
  if (shape == 3)
    span = INT64_MAX - m->min_ns; /* to the largest latency */
  m->max_ns = m->min_ns + span;
  m->hist_first = tl_summary_bucket(m->min_ns);
  m->hist_len = tl_summary_bucket(m->max_ns) - m->hist_first + 1;
  memset(hist, 0, m->hist_len * sizeof *hist);
  int dense = next_rand() % 2;
  for (size_t b = 0; b < m->hist_len; b++) {
    int filled = b == 0 || b == m->hist_len - 1 || (dense ? next_rand() % 4 : !(next_rand() % 50));
    if (!filled)
      continue;
    uint64_t r = next_rand();
    hist[b] = r % 3 ? 1 : r % 5 ? (int64_t)(r >> 40) % 20 + 1 : (int64_t)(r >> 20);
    m->count += hist[b];
  }
  m->sum = (unsigned __int128)next_rand() << 40 | next_rand();
  m->sumsq = (unsigned __int128)next_rand() << 64 | next_rand();
  int64_t at = m->min_ns;
  for (size_t k = 0; k < TL_SUMMARY_PCTS; k++)
    m->pct_ns[k] = at += (int64_t)(next_rand() % (uint64_t)((m->max_ns - at) / 4 + 1));
}

/* Version 1 as docs/schema.md lays it out, written here from the text. */
static size_t encode_v1(const tl_summary *m, uint8_t *out) {
  memset(out, 0, 108);
  out[0] = 1;
  out[1] = TL_SUMMARY_SUB_BITS;
  out[2] = TL_SUMMARY_PCTS;
  uint64_t fixed[] = {(uint64_t)m->count,        (uint64_t)m->min_ns,      (uint64_t)m->max_ns,
                      (uint64_t)m->sum,          (uint64_t)(m->sum >> 64), (uint64_t)m->sumsq,
                      (uint64_t)(m->sumsq >> 64)};
  for (size_t i = 0; i < 7 + TL_SUMMARY_PCTS; i++)
    for (int b = 0; b < 8; b++)
      out[8 + 8 * i + (size_t)b] =
          (uint8_t)((i < 7 ? fixed[i] : (uint64_t)m->pct_ns[i - 7]) >> (8 * b));
  size_t at = 108, nz = 0, prev = 0;
  for (size_t b = 0; b < m->hist_len; b++)
    if (m->hist[b]) {
      at += tl_varint_put(out + at, nz++ ? b - prev : 0);
      at += tl_varint_put(out + at, (uint64_t)m->hist[b]);
      prev = b;
    }
  for (int b = 0; b < 4; b++)
    out[104 + b] = (uint8_t)(nz >> (8 * b));
  uint32_t crc = tl_crc32c(tl_crc32c(0, out, 4), out + 8, at - 8);
  for (int b = 0; b < 4; b++)
    out[4 + b] = (uint8_t)(crc >> (8 * b));
  return at;
}

/* Runs a test whole with each build of the summary's decoding loop this
 * CPU runs (cpu.c): the baseline's, and LZCNT's where the CPU has it. */
static void with_each_decoder_build(void (*test)(void)) {
  static const unsigned builds[] = {0, TL__CPU_LZCNT};
  tl__cpu_features_allow(~0u);
  size_t n = tl__cpu_features() & TL__CPU_LZCNT ? 2 : 1;
  if (n == 1)
    print_message("this CPU has no LZCNT: only the baseline build of the decoder runs\n");
  for (size_t i = 0; i < n; i++) {
    tl__cpu_features_allow(builds[i]);
    test();
  }
  tl__cpu_features_allow(~0u);
}

static void summary_forms_round_trip_as(void) {
  static int64_t hist[TL_SUMMARY_BUCKETS], back[TL_SUMMARY_BUCKETS], sparse[TL_SUMMARY_BUCKETS];
  static uint32_t nz_at[TL_SUMMARY_BUCKETS];
  uint8_t *blob = malloc(40 * TL_SUMMARY_BUCKETS);
  for (int round = 0; round < 600; round++) {
    tl_summary m, got;
    const char *why;
    random_summary(round % 5, &m, hist);
    size_t len = tl__summary_encode(&m, blob);
    assert_true(len <= tl__summary_bound(&m));
    assert_int_equal(blob[0], 2);
    assert_int_equal(tl__summary_decode(blob, len, back, &got, &why), TL_OK);
    assert_true(tl__summary_equal(&m, &got));
    len = encode_v1(&m, blob);
    assert_int_equal(tl__summary_decode(blob, len, back, &got, &why), TL_OK);
    assert_true(tl__summary_equal(&m, &got));
    assert_null(got.nz_at);
    /* Both forms again into a cleared histogram, listing the buckets with
     * samples: the same summary, and nothing written but those. */
    for (int form = 0; form < 2; form++) {
      len = form ? encode_v1(&m, blob) : tl__summary_encode(&m, blob);
      memset(sparse, 0, sizeof sparse);
      assert_int_equal(tl__summary_decode_sparse(blob, len, sparse, nz_at, &got, &why), TL_OK);
      assert_true(tl__summary_equal(&m, &got));
      assert_ptr_equal(got.nz_at, nz_at);
      size_t nz = 0;
      for (size_t b = 0; b < got.hist_len; b++)
        if (got.hist[b]) {
          assert_true(nz < got.nz && got.nz_at[nz] == b);
          nz++;
        }
      assert_int_equal(nz, got.nz);
      for (size_t b = got.hist_len; b < TL_SUMMARY_BUCKETS; b++)
        assert_int_equal(sparse[b], 0);
    }
  }
  free(blob);
}

static void summary_forms_round_trip(void **state) {
  (void)state;
  with_each_decoder_build(summary_forms_round_trip_as);
}

/* In either form, any flipped bit, any cut, and (checksum made right again)
 * any changed byte is refused or, for the last, decodes to a summary whose
 * histogram still adds up to its count: never read past the blob, never a
 * crash. */
static void summary_damage_refused_as(void) {
  static int64_t hist[TL_SUMMARY_BUCKETS], back[TL_SUMMARY_BUCKETS];
  uint8_t blob[4096], bad[4096];
  for (int round = 0; round < 120; round++) {
    tl_summary m, got;
    const char *why;
    do
      random_summary(2, &m, hist);
    while (tl__summary_bound(&m) > sizeof blob); /* bounds version 1's too */
    size_t len = round % 2 ? encode_v1(&m, blob) : tl__summary_encode(&m, blob);
    for (size_t i = 0; i < len; i++) {
      memcpy(bad, blob, len);
      bad[i] ^= (uint8_t)(1u << (next_rand() % 8));
      assert_int_equal(tl__summary_decode(bad, len, back, &got, &why), TL_ECORRUPT);
      assert_int_equal(tl__summary_decode(blob, i, back, &got, &why), TL_ECORRUPT);
      bad[i] = (uint8_t)next_rand();
      uint32_t crc = tl_crc32c(tl_crc32c(0, bad, 4), bad + 8, len - 8);
      for (int b = 0; b < 4; b++)
        bad[4 + b] = (uint8_t)(crc >> (8 * b));
      if (i >= 8 && tl__summary_decode(bad, len, back, &got, &why) == TL_OK) {
        int64_t total = 0;
        for (size_t b = 0; b < got.hist_len; b++)
          total += got.hist[b];
        assert_int_equal(total, got.count);
      }
    }
  }
}

static void summary_damage_refused(void **state) {
  (void)state;
  with_each_decoder_build(summary_damage_refused_as);
}

/* ======================================================================== */
/* A fleet of small imports                                                  */

enum { HOSTS = 6, HOURS = 10, PER = 1000 };

/* A timer-like session of PER samples as CSV: a floor and a long tail. */
static char *session_csv(size_t h, size_t t, int d, size_t *len) {
  char *csv = malloc(PER * 24);
  size_t at = 0;
  for (size_t i = 0; i < PER; i++) {
    uint64_t r = next_rand();
    int k = __builtin_ctzll(r | (1ULL << 12));
    int64_t floor_ns = 40000 + 500 * (int64_t)h + 700 * (int64_t)t;
    int64_t v =
        (d ? 50000000 : 1000000) + floor_ns + (int64_t)((r >> 20) % (uint64_t)(floor_ns << k));
    at += (size_t)sprintf(csv + at, "%lld\n", (long long)v);
  }
  *len = at;
  return csv;
}

/* Imports HOSTS x HOURS x 2 sessions as tlstore import --host --start
 * --fact does; the memory fact of host 0 changes at hour `change` (-1:
 * never), which makes it a second set. */
static void import_fleet(tl_store *s, int change) {
  for (size_t t = 0; t < HOURS; t++)
    for (size_t h = 0; h < HOSTS; h++)
      for (int d = 0; d < 2; d++) {
        size_t len;
        char *csv = session_csv(h, t, d, &len);
        FILE *in = fmemopen(csv, len, "r");
        char host[32];
        snprintf(host, sizeof host, "droplet-%zu", h);
        const char *facts[2] = {
            h == 0 && change >= 0 && (int)t >= change ? "memory=2G" : "memory=1G", "cpus=1"};
        tl_import_opts o;
        tl_import_opts_init(&o);
        o.format = TL_SAMPLES_CSV;
        o.label = "droplet";
        o.probe = "settimeout";
        o.delay_ns = d ? 50000000 : 0;
        o.hostname = host;
        o.started_ns = 1790812800LL * 1000000000LL + (int64_t)(t * 3600 + h) * 1000000000LL;
        o.facts = facts;
        o.fact_count = 2;
        assert_int_equal(tl_store_import(s, in, &o, NULL, NULL, NULL, NULL, NULL), TL_OK);
        fclose(in);
        free(csv);
      }
}

static int64_t query_i64(tl_store *s, const char *sql) {
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_prepare_v2(tl__sqlite_db(s), sql, -1, &st, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  int64_t v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

/* Every session's facts as one string, in session order. */
static char *all_facts(tl_store *s) {
  tl_filter f;
  tl_filter_init(&f);
  tl_session_list list;
  assert_int_equal(tl_store_sessions(s, &f, &list), TL_OK);
  size_t cap = 1 << 20, at = 0;
  char *out = malloc(cap);
  out[0] = '\0';
  for (size_t i = 0; i < list.count; i++) {
    tl_fact_row *rows;
    size_t n;
    assert_int_equal(tl_store_facts(s, list.items[i].id, &rows, &n), TL_OK);
    for (size_t k = 0; k < n; k++) {
      size_t need = strlen(rows[k].key) + strlen(rows[k].value) + strlen(rows[k].evidence) + 64;
      if (at + need >= cap)
        out = realloc(out, cap *= 2);
      at += (size_t)sprintf(out + at, "%s %s=%s (%s)\n", list.items[i].uuid, rows[k].key,
                            rows[k].value, rows[k].evidence);
    }
    tl_fact_rows_free(rows, n);
  }
  tl_session_list_free(&list);
  return out;
}

/* Summaries cost at most 0.3 bytes a sample (version 1: about 0.6) and
 * each host's facts are stored once while they stay the same: one set per
 * host, two for the host whose memory changed, 3 facts each. */
static void fleet_is_compact(void **state) {
  fixture *f = *state;
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  import_fleet(s, 4);
  int64_t samples = (int64_t)HOSTS * HOURS * 2 * PER;
  assert_int_equal(query_i64(s, "SELECT sum(sample_count) FROM sessions"), samples);
  double summary_bytes =
      (double)query_i64(s, "SELECT sum(length(data)) FROM session_summaries") / (double)samples;
  assert_true(summary_bytes < 0.3);
  assert_int_equal(query_i64(s, "SELECT count(*) FROM host_facts"), 0);
  assert_int_equal(query_i64(s, "SELECT count(DISTINCT host_id || ':' || id) FROM fact_sets"),
                   HOSTS + 1);
  assert_int_equal(query_i64(s, "SELECT count(*) FROM fact_sets"), 3 * (HOSTS + 1));
  /* Read back per session: the host's facts at the session's hour. */
  char *facts = all_facts(s);
  assert_int_equal(query_i64(s, "SELECT count(*) FROM session_facts"), 3 * HOSTS * HOURS * 2);
  assert_non_null(strstr(facts, "mem.total_bytes=2147483648 (tlstore import --fact)"));
  assert_non_null(strstr(facts, "hostname=droplet-5 (tlstore import --host)"));
  free(facts);
  assert_int_equal(tl_store_check(s, NULL, NULL), TL_OK);
  /* A set lost is found by the check. */
  assert_int_equal(
      sqlite3_exec(tl__sqlite_db(s), "DELETE FROM fact_sets WHERE host_id = 2", NULL, NULL, NULL),
      SQLITE_OK);
  assert_int_equal(tl_store_check(s, NULL, NULL), TL_ECORRUPT);
  tl_store_close(s);
}

/* What a fleet's rows and index entries hold, in bytes a sample: the
 * payload of every b-tree cell (SQLite's dbstat), without the slack of
 * whole pages, which a small fleet cannot show. -1 when this SQLite has no
 * dbstat table. */
static double payload_per_sample(sqlite3 *db, int64_t samples) {
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(db, "SELECT sum(payload) FROM dbstat", -1, &st, NULL) != SQLITE_OK)
    return -1;
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  double v = (double)sqlite3_column_int64(st, 0) / (double)samples;
  sqlite3_finalize(st);
  return v;
}

#define UUID_TEXT TL_TEST_UUID_TEXT

/* The rows of every table that holds a session's data, as one string, in
 * key order: blocks byte for byte, summaries, sessions (UUIDs as text),
 * facts and tags. */
static char *all_rows(sqlite3 *db) {
  static const char *const sql =
      "SELECT group_concat(r, char(10)) FROM ("
      "SELECT session_id || ' ' || seq || ' ' || count || ' ' || min_ns || ' ' || max_ns || ' ' || "
      "codec || ' ' || hex(data) AS r FROM sample_blocks "
      "UNION ALL SELECT session_id || ' ' || hex(data) FROM session_summaries "
      "UNION ALL SELECT quote(id) || " UUID_TEXT("uuid") " || ' ' || " UUID_TEXT(
          "run_uuid") " || host_id || label || probe || delay_ns || warmup || started_ns || "
                      "quote(ended_ns) || "
                      "heartbeat_ns || pid || status || sample_count || missed_periods || "
                      "tl_version || "
                      "libuv_version || command_line || quote(fact_set_id) FROM sessions "
                      "UNION ALL SELECT session_id || key || value || evidence FROM session_facts "
                      "UNION ALL SELECT session_id || key || value FROM session_tags)";
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  char *rows = strdup((const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  return rows;
}

/* Schema version 6 as an older tl wrote it: UUIDs as text (one run's
 * written by hand, not a UUID) and an index of runs. */
static const char *const back_to_v6 =
    "BEGIN; UPDATE sessions SET uuid = " UUID_TEXT("uuid") ", run_uuid = " UUID_TEXT(
        "run_uuid") "; UPDATE sessions SET run_uuid = 'Run by hand' WHERE id = 2; "
                    "CREATE INDEX sessions_run ON sessions(run_uuid); PRAGMA user_version = 6; "
                    "COMMIT";

/* Every session of the list reads as a UUID found in rows, is found by it
 * and (the first) deleted by it; returns how many runs were `Run by hand`. */
static int sessions_by_uuid(tl_store *s, const char *rows) {
  tl_filter flt;
  tl_filter_init(&flt);
  tl_session_list list;
  assert_int_equal(tl_store_sessions(s, &flt, &list), TL_OK);
  assert_int_equal(list.count, HOSTS * HOURS * 2);
  int by_hand = 0;
  for (size_t i = 0; i < list.count; i++) {
    by_hand += strcmp(list.items[i].run_uuid, "Run by hand") == 0;
    assert_int_equal(strlen(list.items[i].uuid), 36);
    assert_non_null(strstr(rows, list.items[i].uuid));
    int has = 0;
    assert_int_equal(tl__sqlite_has_session(s, list.items[i].uuid, &has), TL_OK);
    assert_true(has);
  }
  assert_int_equal(tl_store_delete(s, list.items[0].uuid), TL_OK);
  assert_int_equal(tl_store_delete(s, list.items[0].uuid), TL_ENOTFOUND);
  tl_session_list_free(&list);
  return by_hand;
}

/* Migration 7 stores tl's UUIDs as 16 bytes, keeps other text, drops the
 * index of runs and changes nothing else: every row reads the same through
 * SQL and through tl, and the file checks clean. A fleet's rows and index
 * entries then hold under 2.85 bytes a sample (codec 3), 0.1 less than in version 6
 * (the samples here are wider than a timer's). */
static void sessions_compacted(void **state) {
  fixture *f = *state;
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  import_fleet(s, -1);
  int64_t samples = (int64_t)HOSTS * HOURS * 2 * PER;
  assert_int_equal(query_i64(s, "SELECT count(*) FROM sessions WHERE typeof(uuid) = 'blob' AND "
                                "typeof(run_uuid) = 'blob' AND length(uuid) = 16"),
                   HOSTS * HOURS * 2);
  double after = payload_per_sample(tl__sqlite_db(s), samples);
  tl_store_close(s);
  sqlite3 *db;
  assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
  assert_int_equal(sqlite3_exec(db, back_to_v6, NULL, NULL, NULL), SQLITE_OK);
  char *before = all_rows(db);
  double v6 = payload_per_sample(db, samples);
  sqlite3_close(db);

  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  assert_int_equal(tl_store_schema_version(s), 7);
  assert_int_equal(query_i64(s, "SELECT count(*) FROM sqlite_schema WHERE name = 'sessions_run'"),
                   0);
  assert_int_equal(query_i64(s, "SELECT count(*) FROM sessions WHERE typeof(uuid) = 'blob'"),
                   HOSTS * HOURS * 2);
  assert_int_equal(query_i64(s, "SELECT count(*) FROM sessions WHERE typeof(run_uuid) = 'text'"),
                   1);
  char *migrated = all_rows(tl__sqlite_db(s));
  assert_string_equal(before, migrated);
  assert_int_equal(tl_store_check(s, NULL, NULL), TL_OK);
  assert_int_equal(sessions_by_uuid(s, before), 1);
  tl_store_close(s);
  free(before);
  free(migrated);
  if (after < 0) {
    print_message("bytes a sample not measured: this SQLite has no dbstat table\n");
    return;
  }
  print_message("rows and index entries: %.3f bytes a sample, %.3f in schema version 6\n", after,
                v6);
  assert_true(after < 2.85);
  assert_true(v6 - after > 0.09);
}

/* The fleet imported into path in codec (the same samples each time): its
 * rows' and index entries' bytes a sample, -1 without dbstat. */
static double fleet_in(const char *path, int codec) {
  tl_store *s;
  rng = 0x9e3779b97f4a7c15ULL;
  assert_int_equal(tl_store_open(&s, path, 0), TL_OK);
  assert_int_equal(tl_store_set_codec(s, codec), TL_OK);
  import_fleet(s, -1);
  int64_t samples = (int64_t)HOSTS * HOURS * 2 * PER;
  assert_int_equal(query_i64(s, "SELECT sum(sample_count) FROM sessions"), samples);
  assert_int_equal(tl_store_check(s, NULL, NULL), TL_OK);
  double rows = payload_per_sample(tl__sqlite_db(s), samples);
  tl_store_close(s);
  return rows;
}

/* tl writes each block in the smaller of codecs 2 and 3: on a fleet's
 * 1,000-sample sessions codec 3 wins nearly always, and the rows and index
 * entries shrink by 0.15 bytes a sample or more (the whole file's figure
 * needs a fleet of thousands of sessions: bench_fleet). */
static void fleet_prefix_coded(void **state) {
  fixture *f = *state;
  char *packed_db = tl_test_path(f->dir, "packed.db");
  double rows2 = fleet_in(packed_db, TL_CODEC_PACKED);
  double rows = fleet_in(f->db, TL_CODEC_DEFAULT);
  free(packed_db);
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  assert_true(query_i64(s, "SELECT count(*) FROM sample_blocks WHERE codec = 3") >
              HOSTS * HOURS * 2 * 9 / 10);
  assert_int_equal(query_i64(s, "SELECT count(*) FROM sample_blocks WHERE codec NOT IN (2, 3)"), 0);
  tl_store_close(s);
  if (rows < 0) {
    print_message("bytes a sample not measured: this SQLite has no dbstat table\n");
    return;
  }
  print_message("rows and index entries: %.3f bytes a sample, %.3f in codec 2 alone\n", rows,
                rows2);
  assert_true(rows2 - rows > 0.15);
  assert_true(rows < 2.85);
}

/* Back to schema version 5, facts in host_facts per session, as an older tl
 * wrote them: migration 6 puts them in sets and every session reads the
 * same facts; a merge into a new file keeps them shared; deleting every
 * session leaves no set behind. */
static void facts_migrate_and_merge(void **state) {
  fixture *f = *state;
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  import_fleet(s, 7);
  /* A fact added to one session later wins over its set's. */
  assert_int_equal(sqlite3_exec(tl__sqlite_db(s),
                                "INSERT INTO host_facts VALUES (3, 'cpu.logical', '4', 'later')",
                                NULL, NULL, NULL),
                   SQLITE_OK);
  char *before = all_facts(s);
  assert_non_null(strstr(before, "cpu.logical=4 (later)"));
  tl_store_close(s);
  sqlite3 *db;
  assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
  assert_int_equal(sqlite3_exec(db,
                                "BEGIN; CREATE TEMP TABLE all_facts AS SELECT * FROM "
                                "session_facts; DELETE FROM host_facts; INSERT INTO host_facts "
                                "SELECT * FROM all_facts; DROP VIEW session_facts; "
                                "DROP TABLE fact_sets; ALTER TABLE sessions DROP COLUMN "
                                "fact_set_id; PRAGMA user_version = 5; COMMIT",
                                NULL, NULL, NULL),
                   SQLITE_OK);
  sqlite3_close(db);
  assert_int_equal(tl_store_open(&s, f->db, TL_STORE_READONLY), TL_EREADONLY);
  tl_store_close(s);
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  assert_int_equal(tl_store_schema_version(s), tl_schema_latest());
  char *after = all_facts(s);
  assert_string_equal(before, after);
  /* Hosts 2..5 one set each; host 0 one before hour 7, one after; host 1
   * one for its first session (with its own fact), one from its second. */
  assert_int_equal(query_i64(s, "SELECT count(DISTINCT host_id || ':' || id) FROM fact_sets"),
                   HOSTS + 2);
  assert_int_equal(query_i64(s, "SELECT count(*) FROM host_facts"), 0);
  assert_int_equal(tl_store_check(s, NULL, NULL), TL_OK);
  tl_store_close(s);

  char *copy = tl_test_path(f->dir, "copy.db");
  assert_int_equal(tl_store_open(&s, copy, 0), TL_OK);
  const char *paths[] = {f->db};
  assert_int_equal(tl_store_merge(s, paths, 1, NULL), TL_OK);
  char *merged = all_facts(s);
  assert_string_equal(before, merged);
  assert_int_equal(query_i64(s, "SELECT count(DISTINCT host_id || ':' || id) FROM fact_sets"),
                   HOSTS + 2);
  int64_t pruned;
  assert_int_equal(tl_store_prune(s, INT64_MAX, NULL, &pruned, NULL), TL_OK);
  assert_int_equal(pruned, HOSTS * HOURS * 2);
  assert_int_equal(query_i64(s, "SELECT count(*) FROM fact_sets"), 0);
  tl_store_close(s);
  free(copy);
  free(before);
  free(after);
  free(merged);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(summary_forms_round_trip),
      cmocka_unit_test(summary_damage_refused),
      cmocka_unit_test_setup_teardown(fleet_is_compact, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(facts_migrate_and_merge, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(sessions_compacted, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(fleet_prefix_coded, tl_test_setup, tl_test_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
