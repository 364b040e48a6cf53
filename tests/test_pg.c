/* test_pg.c: a PostgreSQL server as a store. tlstore push sends a file's
 * finished sessions, and the server then answers tlreport and tlstore with
 * the same bytes as the file; a session's summary goes as the file holds
 * it where its samples bear it out and is made again from them where not;
 * pushing is idempotent, a session is on the server whole or not at all,
 * 32 pushers at once lose and double nothing, and every fault
 * (unreachable, refused, wrong password, a database of another program, a
 * newer schema, a role without the right, a server restarted or a Ctrl-C
 * mid-push) is a one-line error without the password, exit 1, the file
 * untouched, and the next push completes the work.
 *
 * Needs a server: scripts/pg-test-server starts a throwaway one and sets
 * TL_TEST_PG_HOST (its socket folder) and TL_TEST_PG_USER (a role that may
 * create databases and roles). Without them the test is skipped (exit 77),
 * unless TL_TEST_PG_REQUIRED=1, as in CI, where that is a failure. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <libpq-fe.h>
#include <sqlite3.h>

#include "codec_internal.h"
#include "support.h"
#include "support_store.h"
#include "tl_store.h"

static const char *pg_host, *pg_user;

typedef struct {
  char *dir;      /* temporary folder for the files */
  char name[64];  /* the test's own database on the server */
  char url[1024]; /* postgresql://USER@/NAME?host=HOST */
} fixture;

/* ======================================================================== */
/* The server                                                                */

static void make_url(char *buf, size_t len, const char *user, const char *db) {
  snprintf(buf, len, "postgresql://%s@/%s?host=%s", user, db, pg_host);
}

/* Runs sql in database db as the test's role; the first value of the first
 * row as a number (0 when none). Fails the test on an error. */
static int64_t sql(const char *db, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int64_t sql(const char *db, const char *fmt, ...) {
  char q[2048], url[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(q, sizeof q, fmt, ap);
  va_end(ap);
  make_url(url, sizeof url, pg_user, db);
  PGconn *c = PQconnectdb(url);
  if (PQstatus(c) != CONNECTION_OK)
    fail_msg("connecting to %s: %s", url, PQerrorMessage(c));
  PGresult *r = PQexec(c, q);
  ExecStatusType st = PQresultStatus(r);
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
    fail_msg("%s: %s", q, PQerrorMessage(c));
  int64_t v = st == PGRES_TUPLES_OK && PQntuples(r) ? strtoll(PQgetvalue(r, 0, 0), NULL, 10) : 0;
  PQclear(r);
  PQfinish(c);
  return v;
}

static int setup(void **state) {
  static int n;
  fixture *f = calloc(1, sizeof *f);
  f->dir = tl_test_tmpdir();
  snprintf(f->name, sizeof f->name, "tltest_%ld_%d", (long)getpid(), n++);
  sql("postgres", "CREATE DATABASE %s", f->name);
  make_url(f->url, sizeof f->url, pg_user, f->name);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  sql("postgres", "DROP DATABASE IF EXISTS %s WITH (FORCE)", f->name);
  tl_test_rmdir(f->dir);
  free(f->dir);
  free(f);
  return 0;
}

/* ======================================================================== */
/* Files and programs                                                        */

/* Adds n finished sessions of count samples each (label, two tags, two
 * facts) to the file at path, through the library. */
static void add_sessions(const char *path, const char *label, int n, size_t count) {
  tl_store *s = NULL;
  assert_int_equal(tl_store_open(&s, path, 0), TL_OK);
  int64_t *v = malloc(count * sizeof *v);
  for (int k = 0; k < n; k++) {
    for (size_t i = 0; i < count; i++)
      v[i] = 1000000 + (int64_t)((i * 2654435761u + (size_t)k * 7919) % 500000);
    const char *keys[] = {"load", "zone"}, *vals[] = {"idle", "eu-1"};
    tl_fact facts[] = {{"cpu.model", "Test CPU", "/proc/cpuinfo"}, {"vm", "none", ""}};
    tl_session_spec spec = {.run_uuid = "r",
                            .label = label,
                            .probe = "settimeout",
                            .delay_ns = k % 2 ? 1000000 : 0,
                            .command_line = "tlcollect --label x",
                            .host_fingerprint = label,
                            .hostname = label,
                            .libuv_version = "1.44.2",
                            .tag_keys = keys,
                            .tag_values = vals,
                            .tag_count = 2,
                            .facts = facts,
                            .fact_count = 2};
    tl_writer *w;
    char uuid[37];
    assert_int_equal(tl_writer_begin(s, &spec, &w, uuid), TL_OK);
    assert_int_equal(tl_writer_add(w, v, count), TL_OK);
    assert_int_equal(tl_writer_end(w, k % 3 == 2 ? "interrupted" : "complete"), TL_OK);
  }
  free(v);
  tl_store_close(s);
}

static char *file_in(const fixture *f, const char *name) { return tl_test_path(f->dir, name); }

/* Runs a program; returns its exit status, stdout and stderr (free them). */
static int run(char *const argv[], char *const env[], char **out, char **err) {
  return tl_test_run(argv, env, out, err);
}

static int push(const char *db, const char *url, const char *opt, char **out, char **err) {
  char *a[] = {TLSTORE, "--db", (char *)db, "push", (char *)url, (char *)opt, NULL};
  if (opt)
    a[4] = (char *)opt, a[5] = (char *)url;
  return run(a, NULL, out, err);
}

static void push_ok(const char *db, const char *url) {
  char *out, *err;
  int rc = push(db, url, NULL, &out, &err);
  if (rc != 0)
    fail_msg("push: exit %d: %s", rc, err);
  free(out);
  free(err);
}

/* stdout of PROG --db db ARGS..., which must exit 0. */
static char *output_of(const char *prog, const char *db, ...) {
  char *a[16] = {(char *)prog, "--db", (char *)db};
  int n = 3;
  va_list ap;
  va_start(ap, db);
  for (const char *x; n < 15 && (x = va_arg(ap, const char *));)
    a[n++] = (char *)x;
  va_end(ap);
  a[n] = NULL;
  char *out, *err;
  int rc = run(a, NULL, &out, &err);
  if (rc != 0)
    fail_msg("%s %s: exit %d: %s", prog, a[3], rc, err);
  free(err);
  return out;
}

static int64_t server_sessions(const fixture *f) {
  return sql(f->name, "SELECT count(*) FROM sessions");
}

static int64_t file_sessions(const char *db) {
  tl_store *s = NULL;
  assert_int_equal(tl_store_open(&s, db, TL_STORE_READONLY), TL_OK);
  tl_filter flt;
  tl_filter_init(&flt);
  tl_session_list l;
  assert_int_equal(tl_store_sessions(s, &flt, &l), TL_OK);
  int64_t n = (int64_t)l.count;
  tl_session_list_free(&l);
  tl_store_close(s);
  return n;
}

/* The server passes tlstore check: every session there is whole. */
static void server_checks_ok(const fixture *f) {
  char *out = output_of(TLSTORE, f->url, "check", NULL);
  assert_string_equal(out, "ok\n");
  free(out);
}

/* ======================================================================== */
/* Tests                                                                     */

/* The same answers from the server as from the file it was pushed from. */
static void same_bytes_from_file_and_server(void **state) {
  fixture *f = *state;
  char *db = file_in(f, "a.db");
  char *a[] = {TLCOLLECT, "--db", db,      "--label",   "vbox", "--delays", "0,1",
               "--count", "300",  "--tag", "load=idle", "-q",   NULL};
  char *out, *err;
  assert_int_equal(run(a, NULL, &out, &err), 0);
  free(out);
  free(err);
  add_sessions(db, "droplet", 4, 5000);
  add_sessions(db, "macos", 3, 9000);

  assert_int_equal(push(db, f->url, NULL, &out, &err), 0);
  assert_non_null(strstr(out, "pushed 9 sessions"));
  free(out);
  free(err);
  /* Again, to TL_PUSH_URL: nothing is sent twice. */
  char env_url[1100];
  snprintf(env_url, sizeof env_url, "TL_PUSH_URL=%s", f->url);
  char *env[] = {env_url, NULL};
  char *again[] = {TLSTORE, "--db", db, "push", NULL};
  assert_int_equal(run(again, env, &out, &err), 0);
  assert_non_null(strstr(out, "pushed 0 sessions (0 samples); 9 already on the server"));
  free(out);
  free(err);
  assert_int_equal(server_sessions(f), 9);
  server_checks_ok(f);

  static const char *const views[][4] = {
      {TLREPORT, NULL},
      {TLREPORT, "--format", "json", NULL},
      {TLREPORT, "--compare", "vbox,droplet,macos", NULL},
      {TLSTORE, "sessions", NULL},
      {TLSTORE, "sessions", "--tag", "zone=eu-1"},
      {TLSTORE, "labels", NULL},
      {TLSTORE, "hosts", NULL},
      {TLSTORE, "export", "--format", "csv"},
      {TLSTORE, "export", "--format", "hgrm"},
  };
  for (size_t i = 0; i < sizeof views / sizeof views[0]; i++) {
    char *x = output_of(views[i][0], db, views[i][1], views[i][2], views[i][3], NULL);
    char *y = output_of(views[i][0], f->url, views[i][1], views[i][2], views[i][3], NULL);
    if (strcmp(x, y) != 0)
      fail_msg("%s %s: the server's output differs from the file's", views[i][0],
               views[i][1] ? views[i][1] : "");
    assert_true(strlen(x) > 10);
    free(x);
    free(y);
  }
  /* Every session went with its summary; a damaged one is found by check,
   * and a session without one is summarised from its samples: the same
   * page as the file's. */
  assert_int_equal(sql(f->name, "SELECT count(*) FROM session_summaries"), 9);
  sql(f->name, "CREATE TABLE saved AS SELECT * FROM session_summaries; UPDATE session_summaries "
               "SET data = overlay(data placing '\\xff'::bytea from 10 for 1) WHERE session_id "
               "= (SELECT min(session_id) FROM session_summaries)");
  char *chk[] = {TLSTORE, "--db", f->url, "check", NULL};
  assert_int_equal(run(chk, NULL, &out, &err), 1);
  if (!strstr(out, "summary: checksum mismatch"))
    fail_msg("check of a damaged summary said: %s%s", out, err);
  free(out);
  free(err);
  sql(f->name, "DELETE FROM session_summaries WHERE session_id = (SELECT min(session_id) FROM "
               "session_summaries)");
  char *x = output_of(TLREPORT, db, "--compare", "vbox,droplet,macos", NULL);
  char *y = output_of(TLREPORT, f->url, "--compare", "vbox,droplet,macos", NULL);
  assert_string_equal(x, y);
  free(x);
  free(y);
  sql(f->name, "DELETE FROM session_summaries; INSERT INTO session_summaries SELECT * FROM saved; "
               "DROP TABLE saved");
  server_checks_ok(f);
  /* The server's info counts what the file holds, and sums up its labels
   * (one query on each backend) the same way, from the table's heading on. */
  char *info = output_of(TLSTORE, f->url, "info", NULL);
  assert_non_null(strstr(info, "sessions:       9\n"));
  char *file_info = output_of(TLSTORE, db, "info", NULL);
  const char *table = strstr(info, "\nlabel "), *file_table = strstr(file_info, "\nlabel ");
  assert_non_null(table);
  assert_non_null(file_table);
  assert_string_equal(table, file_table);
  free(file_info);
  free(info);
  free(db);
}

/* The test's server, read-only, after the sessions add writes to a file
 * are pushed to it. */
static tl_store *server_with(fixture *f, void (*add)(tl_store *)) {
  char *db = file_in(f, "a.db");
  tl_store *s = NULL;
  assert_int_equal(tl_store_open(&s, db, 0), TL_OK);
  add(s);
  tl_store_close(s);
  push_ok(db, f->url);
  free(db);
  assert_int_equal(tl_store_open(&s, f->url, TL_STORE_READONLY), TL_OK);
  return s;
}

/* A server selects the sessions that record a fact or a tag as a file
 * does (tl_test_assert_recorded_filter): from its own table of facts. */
static void recorded_fact_filter(void **state) {
  tl_store *s = server_with(*state, tl_test_add_recording_sessions);
  tl_test_assert_recorded_filter(s);
  tl_store_close(s);
}

#define OPEN_READS                                                                                 \
  "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle " \
  "in transaction%'"

/* A server's listing names each session's own host as a file's does
 * (tl_test_assert_host_names), and outside a read it opens a snapshot of
 * its own and leaves no transaction open; inside one it leaves the
 * caller's open. */
static void sessions_name_their_hosts(void **state) {
  fixture *f = *state;
  tl_store *s = server_with(f, tl_test_add_host_sessions);
  tl_test_assert_host_names(s);
  assert_int_equal(sql(f->name, "%s", OPEN_READS), 0);
  assert_int_equal(tl_store_read_begin(s), TL_OK);
  tl_test_assert_host_names(s);
  assert_int_equal(sql(f->name, "%s", OPEN_READS), 1);
  tl_store_read_end(s);
  assert_int_equal(sql(f->name, "%s", OPEN_READS), 0);
  tl_store_close(s);
}

/* Runs sql (statements without results) on the file at path. */
static void file_sql(const char *path, const char *q) {
  sqlite3 *db;
  char *msg = NULL;
  assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
  if (sqlite3_exec(db, q, NULL, NULL, &msg) != SQLITE_OK)
    fail_msg("%s: %s", q, msg);
  sqlite3_close(db);
}

enum { SUMMARIES = 6 };

/* The UUID and summary (upper-case hex, "" when none) of each session of
 * the file, in the order of their ids; free the strings. */
static void file_summaries(const char *path, char *uuid[SUMMARIES], char *hex[SUMMARIES]) {
  sqlite3 *db;
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
  assert_int_equal(
      sqlite3_prepare_v2(db,
                         "SELECT " TL_TEST_UUID_TEXT(
                             "s.uuid") ", hex(m.data) FROM sessions s LEFT JOIN "
                                       "session_summaries m ON m.session_id = s.id ORDER BY s.id",
                         -1, &st, NULL),
      SQLITE_OK);
  for (int i = 0; i < SUMMARIES; i++) {
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    uuid[i] = strdup((const char *)sqlite3_column_text(st, 0));
    hex[i] = strdup((const char *)sqlite3_column_text(st, 1));
  }
  assert_int_equal(sqlite3_step(st), SQLITE_DONE);
  sqlite3_finalize(st);
  sqlite3_close(db);
}

/* The server's summary of the session uuid in upper-case hex, "" when it
 * has none; free it. */
static char *server_summary(const fixture *f, const char *uuid) {
  PGconn *c = PQconnectdb(f->url);
  if (PQstatus(c) != CONNECTION_OK)
    fail_msg("connecting to %s: %s", f->url, PQerrorMessage(c));
  const char *params[] = {uuid};
  PGresult *r = PQexecParams(c,
                             "SELECT upper(encode(m.data, 'hex')) FROM sessions s JOIN "
                             "session_summaries m ON m.session_id = s.id WHERE s.uuid = $1",
                             1, NULL, params, NULL, NULL, 0);
  if (PQresultStatus(r) != PGRES_TUPLES_OK)
    fail_msg("reading a summary: %s", PQerrorMessage(c));
  char *hex = strdup(PQntuples(r) ? PQgetvalue(r, 0, 0) : "");
  PQclear(r);
  PQfinish(c);
  return hex;
}

/* Gives the summary of the file's session id another sum of squares,
 * checksummed again: a summary whose count, extremes and sum still agree
 * with its samples, but that differs from one made from them. */
static void other_sumsq(const char *path, int64_t id) {
  sqlite3 *db;
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
  assert_int_equal(sqlite3_prepare_v2(db, "SELECT data FROM session_summaries WHERE session_id = ?",
                                      -1, &st, NULL),
                   SQLITE_OK);
  sqlite3_bind_int64(st, 1, id);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  size_t len = (size_t)sqlite3_column_bytes(st, 0);
  uint8_t *b = malloc(len);
  memcpy(b, sqlite3_column_blob(st, 0), len);
  sqlite3_finalize(st);
  /* The low bit of the sum of squares (docs/schema.md, version 2): the
   * first byte of the sixth varint after the 8-byte head. */
  size_t at = 8;
  for (int skip = 0; skip < 5; skip++)
    while (b[at++] & 0x80)
      ;
  b[at] ^= 1;
  uint32_t crc = tl_crc32c(tl_crc32c(0, b, 4), b + 8, len - 8);
  for (int i = 0; i < 4; i++)
    b[4 + i] = (uint8_t)(crc >> (8 * i));
  assert_int_equal(sqlite3_prepare_v2(db,
                                      "UPDATE session_summaries SET data = ? WHERE session_id = ?",
                                      -1, &st, NULL),
                   SQLITE_OK);
  sqlite3_bind_blob(st, 1, b, (int)len, SQLITE_STATIC);
  sqlite3_bind_int64(st, 2, id);
  assert_int_equal(sqlite3_step(st), SQLITE_DONE);
  sqlite3_finalize(st);
  sqlite3_close(db);
  free(b);
}

/* A session's summary goes as the file holds it, byte for byte, when its
 * count, extremes and sum agree with the samples sent; one that is damaged
 * (a flipped bit), disagrees with them (another session's, of the same
 * count or of another) or is missing is made again from them, and equals
 * the one the writer made. Session 3's summary differs from its samples
 * only where that check does not look (tlstore check does): the server
 * holding it shows that it was copied, not made again. */
static void summaries_sent_as_stored_or_made_again(void **state) {
  fixture *f = *state;
  char *db = file_in(f, "a.db");
  add_sessions(db, "vbox", 5, 5000);
  add_sessions(db, "macos", 1, 7000);
  char *uuid[SUMMARIES], *made[SUMMARIES], *stored[SUMMARIES], *again[SUMMARIES];
  file_summaries(db, uuid, made);
  file_sql(db, "UPDATE session_summaries SET data = substr(data, 1, 70) || CASE WHEN "
               "substr(data, 71, 1) = x'01' THEN x'03' ELSE x'01' END || substr(data, 72) "
               "WHERE session_id = 1;"
               "UPDATE session_summaries SET data = (SELECT data FROM session_summaries "
               "WHERE session_id = 3) WHERE session_id = 2;"
               "UPDATE session_summaries SET data = (SELECT data FROM session_summaries "
               "WHERE session_id = 6) WHERE session_id = 4;"
               "DELETE FROM session_summaries WHERE session_id = 6");
  other_sumsq(db, 3);
  file_summaries(db, again, stored);
  /* Sessions 1 to 4 now hold another summary than the one made. */
  for (int i = 0; i < SUMMARIES; i++) {
    assert_string_equal(again[i], uuid[i]);
    free(again[i]);
    if (i < 4)
      assert_string_not_equal(stored[i], made[i]);
  }
  assert_string_equal(stored[4], made[4]);
  assert_string_equal(stored[5], "");

  char *out, *err;
  assert_int_equal(push(db, f->url, NULL, &out, &err), 0);
  assert_non_null(strstr(out, "pushed 6 sessions"));
  free(out);
  free(err);
  assert_int_equal(sql(f->name, "SELECT count(*) FROM session_summaries"), SUMMARIES);
  for (int i = 0; i < SUMMARIES; i++) {
    char *got = server_summary(f, uuid[i]);
    const char *want = i == 2 ? stored[i] : made[i];
    if (strcmp(got, want) != 0)
      fail_msg("session %d (%s): the server's summary is not the %s", i + 1, uuid[i],
               i == 2 ? "file's" : "one made from its samples");
    free(got);
    free(uuid[i]);
    free(made[i]);
    free(stored[i]);
  }
  free(db);
}

/* delete and prune on the server; --remove-pushed empties the file only of
 * what the server has. */
static void delete_prune_and_remove_pushed(void **state) {
  fixture *f = *state;
  char *db = file_in(f, "a.db");
  add_sessions(db, "vbox", 5, 3000);
  char *out, *err;
  assert_int_equal(push(db, f->url, "--remove-pushed", &out, &err), 0);
  assert_non_null(strstr(out, "pushed 5 sessions (15000 samples); 0 already on the server; 5 "
                              "removed from the file"));
  free(out);
  free(err);
  assert_int_equal(file_sessions(db), 0);
  assert_int_equal(server_sessions(f), 5);

  char uuid[40] = "";
  char *list = output_of(TLSTORE, f->url, "sessions", NULL);
  char *line = strchr(list, '\n');
  assert_non_null(line);
  snprintf(uuid, sizeof uuid, "%.36s", line + 1);
  free(list);
  char *del = output_of(TLSTORE, f->url, "delete", uuid, NULL);
  free(del);
  assert_int_equal(server_sessions(f), 4);
  assert_int_equal(sql(f->name, "SELECT count(*) FROM sample_blocks b WHERE NOT EXISTS "
                                "(SELECT 1 FROM sessions s WHERE s.id = b.session_id)"),
                   0);
  char *a[] = {TLSTORE, "--db", f->url, "delete", uuid, NULL};
  assert_int_equal(run(a, NULL, &out, &err), 1);
  assert_true(tl_test_one_line(err));
  free(out);
  free(err);
  /* A block changed on the server fails its checksum: check names it, a
   * report refuses to show a wrong number. */
  sql(f->name, "UPDATE sample_blocks SET data = set_byte(data, 20, get_byte(data, 20) # 1) "
               "WHERE seq = 0 AND session_id = (SELECT min(id) FROM sessions)");
  char *c1[] = {TLSTORE, "--db", f->url, "check", NULL};
  assert_int_equal(run(c1, NULL, &out, &err), 1);
  assert_non_null(strstr(out, "problem: session "));
  assert_true(tl_test_one_line(err));
  free(out);
  free(err);
  char *r1[] = {TLREPORT, "--db", f->url, NULL};
  assert_int_equal(run(r1, NULL, &out, &err), 1);
  assert_true(tl_test_one_line(err));
  assert_non_null(strstr(err, "checksum"));
  free(out);
  free(err);
  char *pr = output_of(TLSTORE, f->url, "prune", "--before", "2200-01-01", NULL);
  assert_non_null(strstr(pr, "deleted 4 sessions (12000 samples)"));
  free(pr);
  assert_int_equal(server_sessions(f), 0);
  free(db);
}

/* A session still being collected stays home until it ends. */
static void running_sessions_wait(void **state) {
  fixture *f = *state;
  char *db = file_in(f, "a.db");
  add_sessions(db, "vbox", 2, 1000);
  tl_store *s = NULL;
  assert_int_equal(tl_store_open(&s, db, 0), TL_OK);
  tl_session_spec spec = {.run_uuid = "r",
                          .label = "vbox",
                          .probe = "settimeout",
                          .command_line = "tlcollect",
                          .host_fingerprint = "vbox",
                          .hostname = "vbox",
                          .libuv_version = "1.44.2"};
  tl_writer *w;
  char uuid[37];
  int64_t v[3] = {5, 6, 7};
  assert_int_equal(tl_writer_begin(s, &spec, &w, uuid), TL_OK);
  assert_int_equal(tl_writer_add(w, v, 3), TL_OK);
  assert_int_equal(tl_writer_flush(w), TL_OK);
  char *out, *err;
  assert_int_equal(push(db, f->url, "--remove-pushed", &out, &err), 0);
  assert_non_null(strstr(out, "pushed 2 sessions (2000 samples)"));
  free(out);
  free(err);
  assert_int_equal(file_sessions(db), 1); /* the running one */
  assert_int_equal(tl_writer_end(w, "complete"), TL_OK);
  assert_int_equal(push(db, f->url, NULL, &out, &err), 0);
  assert_non_null(strstr(out, "pushed 1 session (3 samples)"));
  free(out);
  free(err);
  assert_int_equal(sql(f->name, "SELECT count(*) FROM sessions WHERE uuid = '%s'", uuid), 1);
  tl_store_close(s);
  free(db);
}

/* A session of this host whose collector lives is not pushed, however old
 * its last commit (another program held the file's write lock): push
 * agrees with every reader, and a later push sends it whole. */
static void live_session_waits_however_old_its_heartbeat(void **state) {
  fixture *f = *state;
  char *db = file_in(f, "a.db");
  add_sessions(db, "vbox", 1, 1000);
  tl_store *s = NULL;
  assert_int_equal(tl_store_open(&s, db, 0), TL_OK);
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  tl_session_spec spec = {.run_uuid = "r",
                          .label = "here",
                          .probe = "settimeout",
                          .command_line = "tlcollect",
                          .host_fingerprint = "here",
                          .hostname = host,
                          .libuv_version = "1.44.2"};
  tl_writer *w;
  char uuid[37];
  int64_t v[3] = {5, 6, 7};
  assert_int_equal(tl_writer_begin(s, &spec, &w, uuid), TL_OK);
  assert_int_equal(tl_writer_add(w, v, 3), TL_OK);
  assert_int_equal(tl_writer_flush(w), TL_OK);
  sqlite3 *raw;
  assert_int_equal(sqlite3_open(db, &raw), SQLITE_OK);
  assert_int_equal(sqlite3_exec(raw,
                                "UPDATE sessions SET heartbeat_ns = heartbeat_ns - 3600000000000 "
                                "WHERE status = 'running'",
                                NULL, NULL, NULL),
                   SQLITE_OK);
  sqlite3_close(raw);
  char *out, *err;
  assert_int_equal(push(db, f->url, NULL, &out, &err), 0);
  assert_non_null(strstr(out, "pushed 1 session (1000 samples)"));
  free(out);
  free(err);
  assert_int_equal(sql(f->name, "SELECT count(*) FROM sessions WHERE uuid = '%s'", uuid), 0);
  assert_int_equal(tl_writer_add(w, v, 3), TL_OK);
  assert_int_equal(tl_writer_end(w, "complete"), TL_OK);
  assert_int_equal(push(db, f->url, NULL, &out, &err), 0);
  assert_non_null(strstr(out, "pushed 1 session (6 samples)"));
  free(out);
  free(err);
  tl_store_close(s);
  free(db);
}

/* tlstore check on a server that lost one of tl's tables says which, exit 1,
 * where it said "ok" while every report failed. */
static void check_finds_a_dropped_table(void **state) {
  fixture *f = *state;
  char *db = file_in(f, "a.db");
  add_sessions(db, "vbox", 2, 1000);
  push_ok(db, f->url);
  char *c[] = {TLSTORE, "--db", f->url, "check", NULL};
  char *out, *err;
  assert_int_equal(run(c, NULL, &out, &err), 0);
  free(out);
  free(err);
  sql(f->name, "DROP TABLE session_tags");
  int rc = run(c, NULL, &out, &err);
  if (rc != 1 || !strstr(out, "session_tags") || !tl_test_one_line(err))
    fail_msg("check with session_tags dropped: exit %d, out '%s', err '%s'", rc, out, err);
  free(out);
  free(err);
  free(db);
}

/* A copy of a file taken while a session of another host ran there, pushed
 * once that session is stale: the server then holds fewer samples than the
 * final file. The next push says so and how to mend it, and after that
 * delete on the server the push completes it. */
static void push_of_an_early_copy_says_how_to_mend_it(void **state) {
  fixture *f = *state;
  char *db = file_in(f, "a.db"), *copy = file_in(f, "copy.db");
  tl_store *s = NULL;
  assert_int_equal(tl_store_open(&s, db, 0), TL_OK);
  tl_session_spec spec = {.run_uuid = "r",
                          .label = "vbox",
                          .probe = "settimeout",
                          .command_line = "tlcollect",
                          .host_fingerprint = "vbox",
                          .hostname = "some-other-host",
                          .libuv_version = "1.44.2"};
  tl_writer *w;
  char uuid[37];
  int64_t v[3] = {5, 6, 7};
  assert_int_equal(tl_writer_begin(s, &spec, &w, uuid), TL_OK);
  assert_int_equal(tl_writer_add(w, v, 3), TL_OK);
  assert_int_equal(tl_writer_flush(w), TL_OK);
  sqlite3 *raw;
  char q[4300];
  snprintf(q, sizeof q,
           "VACUUM INTO '%s'; ATTACH '%s' AS c; UPDATE c.sessions SET heartbeat_ns = "
           "heartbeat_ns - 3600000000000",
           copy, copy);
  assert_int_equal(sqlite3_open(db, &raw), SQLITE_OK);
  assert_int_equal(sqlite3_exec(raw, q, NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(raw);
  push_ok(copy, f->url); /* the copy's session is stale: sent, 3 samples */
  assert_int_equal(tl_writer_add(w, v, 3), TL_OK);
  assert_int_equal(tl_writer_end(w, "complete"), TL_OK);
  tl_store_close(s);
  char *out, *err;
  assert_int_equal(push(db, f->url, NULL, &out, &err), 1);
  if (!tl_test_one_line(err) || !strstr(err, "with 3 samples, the file with 6") ||
      !strstr(err, "delete"))
    fail_msg("push over an early copy: '%s'", err);
  free(out);
  free(err);
  char *del[] = {TLSTORE, "--db", f->url, "delete", uuid, NULL};
  assert_int_equal(run(del, NULL, &out, &err), 0);
  free(out);
  free(err);
  push_ok(db, f->url);
  assert_int_equal(sql(f->name, "SELECT sample_count FROM sessions WHERE uuid = '%s'", uuid), 6);
  free(db);
  free(copy);
}

static int wait_exit(pid_t pid);

/* Two push --remove-pushed of one file at once, several times over: both
 * succeed, the server holds every session once and the file none. */
static void concurrent_remove_pushed(void **state) {
  fixture *f = *state;
  char *db = file_in(f, "c.db"), *e1 = file_in(f, "1.err"), *e2 = file_in(f, "2.err");
  for (int round = 0; round < 5; round++) {
    add_sessions(db, "vbox", 12, 2000);
    pid_t pid[2];
    for (int k = 0; k < 2; k++) {
      pid[k] = fork();
      if (pid[k] == 0) {
        if (!freopen("/dev/null", "w", stdout) || !freopen(k ? e2 : e1, "w", stderr))
          _exit(126);
        execl(TLSTORE, TLSTORE, "--db", db, "push", "--remove-pushed", f->url, (char *)NULL);
        _exit(127);
      }
    }
    for (int k = 0; k < 2; k++) {
      int rc = wait_exit(pid[k]);
      if (rc != 0) {
        char *text = tl_test_read_file(k ? e2 : e1, NULL);
        fail_msg("round %d, push %d: exit %d: %s", round, k, rc, text);
      }
    }
    assert_int_equal(file_sessions(db), 0);
    assert_int_equal(server_sessions(f), 12 * (round + 1));
  }
  free(db);
  free(e1);
  free(e2);
}

/* A failing command: exit 1, one line on stderr without secret, nothing on
 * the file changed (same bytes). */
static void fails_cleanly(char *const argv[], char *const env[], const char *db, const char *want,
                          const char *secret) {
  size_t before_len, after_len;
  char *before = tl_test_read_file(db, &before_len);
  char *out, *err;
  int rc = run(argv, env, &out, &err);
  if (rc != 1 || !tl_test_one_line(err) || (want && !strstr(err, want)))
    fail_msg("%s %s %s: exit %d, stderr: %s", argv[1], argv[2], argv[3], rc, err);
  if (secret && (strstr(err, secret) || strstr(out, secret)))
    fail_msg("the password shows: %s", err);
  char *after = tl_test_read_file(db, &after_len);
  assert_true(before_len == after_len && memcmp(before, after, before_len) == 0);
  free(before);
  free(after);
  free(out);
  free(err);
}

static void faults_are_one_line_errors(void **state) {
  fixture *f = *state;
  char *db = file_in(f, "a.db");
  add_sessions(db, "vbox", 3, 2000);
  char url[1024];

  /* A password in the address is refused before anything is sent. */
  snprintf(url, sizeof url, "postgresql://%s:Hunter2pw@/%s?host=%s", pg_user, f->name, pg_host);
  char *p1[] = {TLSTORE, "--db", db, "push", url, NULL};
  fails_cleanly(p1, NULL, db, "~/.pgpass", "Hunter2pw");
  snprintf(url, sizeof url, "host=%s dbname=%s password=Hunter2pw", pg_host, f->name);
  fails_cleanly(p1, NULL, db, "PGPASSWORD", "Hunter2pw");

  /* Nothing listens there; a refused TCP connection. */
  snprintf(url, sizeof url, "postgresql://%s@/%s?host=%s/nosuch", pg_user, f->name, pg_host);
  fails_cleanly(p1, NULL, db, "cannot connect", NULL);
  char *p2[] = {TLSTORE, "--db", db, "push", "postgresql://tl@127.0.0.1:1/tl", NULL};
  fails_cleanly(p2, NULL, db, "cannot connect", NULL);

  /* A wrong password, from PGPASSWORD. */
  sql("postgres", "DO $$BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = "
                  "'tl_password') THEN CREATE ROLE tl_password LOGIN PASSWORD 'right'; END IF; "
                  "END$$");
  snprintf(url, sizeof url, "postgresql://tl_password@/%s?host=%s", f->name, pg_host);
  char *wrong[] = {"PGPASSWORD=Wr0ngSecret", NULL};
  fails_cleanly(p1, wrong, db, "password authentication failed", "Wr0ngSecret");

  /* A database of another program. */
  char other[80];
  snprintf(other, sizeof other, "%s_other", f->name);
  sql("postgres", "CREATE DATABASE %s", other);
  sql(other, "CREATE TABLE invoices (id int)");
  snprintf(url, sizeof url, "postgresql://%s@/%s?host=%s", pg_user, other, pg_host);
  fails_cleanly(p1, NULL, db, "not a tl database", NULL);
  char *r1[] = {TLREPORT, "--db", url, NULL};
  fails_cleanly(r1, NULL, db, "not a tl database", NULL);
  sql("postgres", "DROP DATABASE %s WITH (FORCE)", other);

  /* A newer tl's schema is refused, for reading and for pushing. */
  push_ok(db, f->url);
  int64_t version = sql(f->name, "SELECT version FROM tl_schema");
  sql(f->name, "UPDATE tl_schema SET version = 99");
  char *p3[] = {TLSTORE, "--db", db, "push", f->url, NULL};
  fails_cleanly(p3, NULL, db, "newer than this tl", NULL);
  char *r2[] = {TLSTORE, "--db", f->url, "sessions", NULL};
  fails_cleanly(r2, NULL, db, "newer than this tl", NULL);
  sql(f->name, "UPDATE tl_schema SET version = %lld", (long long)version);

  /* Roles: a reader may not push or delete, a pusher may not read or
   * delete, and neither may create tl's tables. */
  sql("postgres", "DO $$BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'tl_pusher') "
                  "THEN CREATE ROLE tl_pusher LOGIN; CREATE ROLE tl_reader LOGIN; END IF; END$$");
  sql(f->name, "GRANT SELECT ON ALL TABLES IN SCHEMA public TO tl_reader; "
               "GRANT SELECT ON tl_schema, hosts TO tl_pusher; "
               "GRANT SELECT (id, uuid, sample_count) ON sessions TO tl_pusher; "
               "GRANT INSERT ON hosts, sessions, session_tags, host_facts, sample_blocks, "
               "session_summaries, session_causes TO tl_pusher; GRANT UPDATE (hostname, "
               "first_seen, last_seen) ON hosts TO tl_pusher");
  char reader[1024], pusher[1024];
  make_url(reader, sizeof reader, "tl_reader", f->name);
  make_url(pusher, sizeof pusher, "tl_pusher", f->name);
  add_sessions(db, "macos", 2, 1000);
  char *p4[] = {TLSTORE, "--db", db, "push", reader, NULL};
  fails_cleanly(p4, NULL, db, "permission denied", NULL);
  char *r3[] = {TLREPORT, "--db", pusher, NULL};
  fails_cleanly(r3, NULL, db, "permission denied", NULL);
  char *d1[] = {TLSTORE, "--db", pusher, "prune", "--before", "2200-01-01", NULL};
  fails_cleanly(d1, NULL, db, "permission denied", NULL);
  char *d2[] = {TLSTORE, "--db", reader, "prune", "--before", "2200-01-01", NULL};
  fails_cleanly(d2, NULL, db, "permission denied", NULL);
  char empty[80], empty_url[1024];
  snprintf(empty, sizeof empty, "%s_empty", f->name);
  sql("postgres", "CREATE DATABASE %s", empty);
  sql(empty, "REVOKE CREATE ON SCHEMA public FROM PUBLIC");
  make_url(empty_url, sizeof empty_url, "tl_pusher", empty);
  char *p5[] = {TLSTORE, "--db", db, "push", empty_url, NULL};
  fails_cleanly(p5, NULL, db, "database's owner", NULL);
  sql("postgres", "DROP DATABASE %s WITH (FORCE)", empty);

  /* After all that, the push-only role completes the work. */
  char *out, *err;
  assert_int_equal(push(db, pusher, NULL, &out, &err), 0);
  assert_non_null(strstr(out, "pushed 2 sessions (2000 samples); 3 already on the server"));
  free(out);
  free(err);
  assert_int_equal(server_sessions(f), 5);
  char *x = output_of(TLREPORT, db, NULL), *y = output_of(TLREPORT, reader, NULL);
  assert_string_equal(x, y);
  free(x);
  free(y);
  sql(f->name, "REVOKE ALL ON ALL TABLES IN SCHEMA public FROM tl_reader, tl_pusher");
  free(db);
}

/* Starts tlstore push of db to url in the background; stderr to errpath. */
static pid_t push_in_background(const char *db, const char *url, const char *errpath) {
  pid_t pid = fork();
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stdout) || !freopen(errpath, "w", stderr))
      _exit(126);
    execl(TLSTORE, TLSTORE, "--db", db, "push", url, (char *)NULL);
    _exit(127);
  }
  return pid;
}

static int wait_exit(pid_t pid) {
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Waits (up to 60 s) until the server holds at least one session of the
 * push in the background; then the push is still going: the file holds
 * many sessions. */
static void wait_first_session(const fixture *f) {
  for (int i = 0; i < 60000 && server_sessions(f) == 0; i++) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  assert_true(server_sessions(f) > 0);
}

enum { MANY = 120, MANY_SAMPLES = 200000 };

/* A server restarted, and a Ctrl-C, in the middle of a push. */
static void cut_off_pushes_are_completed_by_the_next(void **state) {
  fixture *f = *state;
  char *db = file_in(f, "big.db"), *errpath = file_in(f, "push.err");
  add_sessions(db, "vbox", MANY, MANY_SAMPLES);
  size_t before_len;
  char *before = tl_test_read_file(db, &before_len);
  free(output_of(TLSTORE, f->url, "info", NULL)); /* creates tl's tables */

  for (int round = 0; round < 2; round++) {
    if (round)
      sql(f->name, "TRUNCATE sessions, hosts, session_tags, host_facts, sample_blocks, "
                   "session_summaries, session_causes");
    pid_t pid = push_in_background(db, f->url, errpath);
    wait_first_session(f);
    if (round == 0) {
      char script[4200];
      snprintf(script, sizeof script, "%s/scripts/pg-test-server", TL_SOURCE_DIR);
      char *a[] = {script, "restart", (char *)pg_host, NULL};
      char *out, *err;
      int rc = run(a, NULL, &out, &err);
      if (rc != 0)
        fail_msg("restarting the server: %s", err);
      free(out);
      free(err);
    } else {
      kill(pid, SIGINT);
    }
    assert_int_equal(wait_exit(pid), 1);
    char *err = tl_test_read_file(errpath, NULL);
    if (!tl_test_one_line(err) || !strstr(err, round ? "interrupted" : "connection"))
      fail_msg("round %d: %s", round, err);
    free(err);
    /* Whole sessions only, and not all of them yet. */
    int64_t got = server_sessions(f);
    assert_true(got >= 1 && got < MANY);
    server_checks_ok(f);
    /* The next push sends the rest. */
    push_ok(db, f->url);
    assert_int_equal(server_sessions(f), MANY);
    assert_int_equal(sql(f->name, "SELECT sum(sample_count) FROM sessions"),
                     (int64_t)MANY * MANY_SAMPLES);
    server_checks_ok(f);
  }
  size_t after_len;
  char *after = tl_test_read_file(db, &after_len);
  assert_true(before_len == after_len && memcmp(before, after, before_len) == 0);
  free(before);
  free(after);
  free(errpath);
  free(db);
}

enum { PUSHERS = 32, OWN = 3, SHARED = 4 };

/* 32 pushers at once, each with sessions of its own and the same shared
 * ones, while readers check the server: every session once, whole. */
static void thirty_two_pushers(void **state) {
  fixture *f = *state;
  char *shared = file_in(f, "shared.db");
  add_sessions(shared, "shared", SHARED, 20000);
  char *paths[PUSHERS], *errs[PUSHERS];
  pid_t pids[PUSHERS];
  for (int i = 0; i < PUSHERS; i++) {
    char name[32];
    snprintf(name, sizeof name, "p%d.db", i);
    paths[i] = file_in(f, name);
    snprintf(name, sizeof name, "p%d.err", i);
    errs[i] = file_in(f, name);
    assert_int_equal(tl_test_copy_file(shared, paths[i]), 0);
    snprintf(name, sizeof name, "host%d", i);
    add_sessions(paths[i], name, OWN, 20000);
  }
  int status[PUSHERS];
  for (int i = 0; i < PUSHERS; i++)
    pids[i] = push_in_background(paths[i], f->url, errs[i]);
  /* While they push, every check sees whole sessions only. */
  for (int running = PUSHERS; running > 0;) {
    server_checks_ok(f);
    for (int i = 0; i < PUSHERS; i++) {
      int st;
      if (pids[i] && waitpid(pids[i], &st, WNOHANG) == pids[i]) {
        status[i] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        pids[i] = 0;
        running--;
      }
    }
  }
  for (int i = 0; i < PUSHERS; i++) {
    char *err = tl_test_read_file(errs[i], NULL);
    if (status[i] != 0 || (err && *err))
      fail_msg("pusher %d: exit %d: %s", i, status[i], err ? err : "");
    free(err);
  }
  assert_int_equal(server_sessions(f), PUSHERS * OWN + SHARED);
  assert_int_equal(sql(f->name, "SELECT sum(sample_count) FROM sessions"),
                   (int64_t)(PUSHERS * OWN + SHARED) * 20000);
  assert_int_equal(sql(f->name, "SELECT count(*) FROM hosts"), PUSHERS + 1);
  server_checks_ok(f);
  /* Each file pushed again: all present. */
  char *out, *err;
  assert_int_equal(push(paths[7], f->url, NULL, &out, &err), 0);
  assert_non_null(strstr(out, "pushed 0 sessions (0 samples); 7 already on the server"));
  free(out);
  free(err);
  for (int i = 0; i < PUSHERS; i++) {
    free(paths[i]);
    free(errs[i]);
  }
  free(shared);
}

/* A server does what a store does but what only a file can (collecting,
 * importing, merging, vacuuming, recovering stale sessions, storing causes
 * and counters): each is refused the same way, saying what to do instead,
 * and push wants a file to read and a server to send to. */
static void a_server_refuses_what_only_a_file_does(void **state) {
  fixture *f = *state;
  tl_store *s = NULL;
  assert_int_equal(tl_store_open(&s, f->url, 0), TL_OK);
  char want[1400];
#define REFUSED(call, doing)                                                                       \
  do {                                                                                             \
    assert_int_equal(call, TL_EUNAVAIL);                                                           \
    snprintf(want, sizeof want,                                                                    \
             "%s needs a database file; %s is a server (tlstore push sends the sessions of a "     \
             "file to it)",                                                                        \
             doing, f->url);                                                                       \
    assert_string_equal(tl_store_errmsg(s), want);                                                 \
  } while (0)
  tl_session_spec spec = {.run_uuid = "r",
                          .label = "x",
                          .probe = "settimeout",
                          .host_fingerprint = "h",
                          .hostname = "h"};
  tl_writer *w = (tl_writer *)&spec;
  char uuid[37];
  REFUSED(tl_writer_begin(s, &spec, &w, uuid), "collecting");
  assert_null(w);
  tl_import_opts o;
  tl_import_opts_init(&o);
  o.label = "x";
  o.probe = "p";
  REFUSED(tl_store_import(s, stdin, &o, NULL, NULL, NULL, NULL, NULL), "importing");
  const char *paths[] = {"other.db"};
  REFUSED(tl_store_merge(s, paths, 1, NULL), "merging");
  REFUSED(tl_store_vacuum(s), "vacuuming");
  REFUSED(tl_store_recover_stale(s, 1, NULL), "recovering stale sessions");
  tl_cause c = {0};
  REFUSED(tl_store_add_causes(s, 1, &c, 1, NULL), "storing the causes of late samples");
  tl_counter_row row = {0};
  REFUSED(tl_store_set_counters(s, 1, &row, 1), "storing the session's counters");
#undef REFUSED

  char *path = tl_test_path(f->dir, "a.db");
  add_sessions(path, "a", 1, 100);
  tl_store *file = NULL;
  assert_int_equal(tl_store_open(&file, path, TL_STORE_READONLY), TL_OK);
  tl_push_opts po = {0};
  assert_int_equal(tl_store_push(file, file, &po, NULL), TL_EINVAL);
  assert_string_equal(tl_store_errmsg(file), "tlstore push sends to a PostgreSQL server");
  assert_int_equal(tl_store_push(s, s, &po, NULL), TL_EINVAL);
  assert_string_equal(tl_store_errmsg(s), "tlstore push reads a database file, not a server");
  tl_store_close(file);
  tl_store_close(s);
  free(path);
}

/* ======================================================================== */
/* Reads of many sessions                                                    */

/* Random causes and counters (or none) for every session of the file. */
static void add_causes_to_file(const char *db) {
  tl_store *s = NULL;
  assert_int_equal(tl_store_open(&s, db, 0), TL_OK);
  tl_filter flt;
  tl_filter_init(&flt);
  tl_session_list l;
  assert_int_equal(tl_store_sessions(s, &flt, &l), TL_OK);
  uint64_t x = 0x9e3779b97f4a7c15u;
  for (size_t k = 0; k < l.count; k++) {
    x = x * 6364136223846793005u + 1442695040888963407u;
    size_t n = (size_t)(x >> 60) % 4;
    tl_cause c[3];
    for (size_t i = 0; i < n; i++)
      c[i] = (tl_cause){(int64_t)(i * 9 + k), (int64_t)(2000 + k) * 1000, (int64_t)i * 1000,
                        (int32_t)i, (int32_t)(k % 2)};
    tl_cause_sums sums;
    memset(&sums, 0, sizeof sums);
    sums.samples = (int64_t)(k + 1);
    sums.band_samples[k % TL_CAUSE_BANDS] = 3;
    if (n)
      assert_int_equal(tl_store_add_causes(s, l.items[k].id, c, n, &sums), TL_OK);
    tl_counter_row r[2] = {{1000, 1000, (int64_t)k, 1, 2, 3, 4, 5, 6, 7, 8, 9},
                           {2000, 1000, 1, -1, 2, 3, 4, 5, 6, 7, 8, 0}};
    if (k % 3)
      assert_int_equal(tl_store_set_counters(s, l.items[k].id, r, 1 + k % 2), TL_OK);
  }
  tl_session_list_free(&l);
  tl_store_close(s);
}

/* A file and the server it was pushed to, opened for reading, with their
 * sessions in the same order: places k of the two lists are one session. */
typedef struct {
  tl_store *file, *server;
  tl_session_list lf, ls;
} both_stores;

static void both_open(both_stores *b, const char *db, const char *url, size_t sessions) {
  assert_int_equal(tl_store_open(&b->file, db, TL_STORE_READONLY), TL_OK);
  assert_int_equal(tl_store_open(&b->server, url, TL_STORE_READONLY), TL_OK);
  tl_filter flt;
  tl_filter_init(&flt);
  assert_int_equal(tl_store_sessions(b->file, &flt, &b->lf), TL_OK);
  assert_int_equal(tl_store_sessions(b->server, &flt, &b->ls), TL_OK);
  assert_int_equal(b->lf.count, sessions);
  assert_int_equal(b->ls.count, sessions);
  for (size_t k = 0; k < sessions; k++)
    assert_string_equal(b->ls.items[k].uuid, b->lf.items[k].uuid);
}

static void both_close(both_stores *b) {
  tl_session_list_free(&b->lf);
  tl_session_list_free(&b->ls);
  tl_store_close(b->file);
  tl_store_close(b->server);
}

/* What came for each place of a batched read from the server. */
typedef struct {
  tl_store *file;
  const int64_t *file_ids; /* the file's id of each place, -1 for none */
  size_t calls;
  int damaged;
} batch_seen;

static int same_causes_as_file(void *ctx, size_t index, int err, const tl_cause *c, size_t n,
                               const tl_cause_sums *sums) {
  batch_seen *b = ctx;
  assert_int_equal(index, b->calls++);
  if (err) {
    assert_int_equal(err, TL_ECORRUPT);
    b->damaged++;
    return TL_OK;
  }
  tl_cause *want;
  size_t nwant;
  tl_cause_sums wsums;
  assert_int_equal(tl_store_causes(b->file, b->file_ids[index], &want, &nwant, &wsums), TL_OK);
  assert_int_equal(n, nwant);
  if (n)
    assert_memory_equal(c, want, n * sizeof *c);
  assert_memory_equal(sums, &wsums, sizeof wsums);
  free(want);
  return TL_OK;
}

static int same_counters_as_file(void *ctx, size_t index, int err, const tl_counter_row *r,
                                 size_t n) {
  batch_seen *b = ctx;
  assert_int_equal(index, b->calls++);
  assert_int_equal(err, TL_OK);
  tl_counter_row *want;
  size_t nwant;
  assert_int_equal(tl_store_counters(b->file, b->file_ids[index], &want, &nwant), TL_OK);
  assert_int_equal(n, nwant);
  if (n)
    assert_memory_equal(r, want, n * sizeof *r);
  free(want);
  return TL_OK;
}

/* The server reads the causes and counters of many sessions in a few
 * statements (more than one batch here, with ids repeated, out of order
 * and missing) and gives each what the file gives; a damaged row fails its
 * session and no other. */
static void many_sessions_causes_as_the_file(void **state) {
  fixture *f = *state;
  char *db = file_in(f, "a.db");
  add_sessions(db, "a", 60, 50);
  add_causes_to_file(db);
  push_ok(db, f->url);
  both_stores both;
  both_open(&both, db, f->url, 60);
  tl_store *file = both.file, *server = both.server;
  const tl_session_list ls = both.ls, lf = both.lf;
  enum { ASKED = 2500 };
  int64_t *ids = malloc(ASKED * sizeof *ids), *file_ids = malloc(ASKED * sizeof *file_ids);
  for (size_t i = 0; i < ASKED; i++) {
    size_t k = (i * 37) % ls.count;
    ids[i] = ls.items[k].id;
    file_ids[i] = lf.items[k].id;
  }
  ids[5] = -1; /* no such session: none */
  file_ids[5] = -1;
  batch_seen b = {file, file_ids, 0, 0};
  assert_int_equal(tl_store_causes_of(server, ids, ASKED, same_causes_as_file, &b), TL_OK);
  assert_int_equal(b.calls, ASKED);
  assert_int_equal(b.damaged, 0);
  batch_seen c = {file, file_ids, 0, 0};
  assert_int_equal(tl_store_counters_of(server, ids, ASKED, same_counters_as_file, &c), TL_OK);
  assert_int_equal(c.calls, ASKED);
  /* A few sessions far apart: asked as an array, not as their span. */
  int64_t few[4], few_file[4];
  for (size_t i = 0; i < 4; i++) {
    size_t k = i * 19 + (i == 3 ? 2 : 0); /* 0, 19, 38, 59 */
    few[i] = ls.items[k].id;
    few_file[i] = lf.items[k].id;
  }
  batch_seen e = {file, few_file, 0, 0};
  assert_int_equal(tl_store_causes_of(server, few, 4, same_causes_as_file, &e), TL_OK);
  assert_int_equal(e.calls, 4);
  batch_seen g = {file, few_file, 0, 0};
  assert_int_equal(tl_store_counters_of(server, few, 4, same_counters_as_file, &g), TL_OK);
  assert_int_equal(g.calls, 4);
  /* One damaged row. */
  sql(f->name, "UPDATE session_causes SET data = '\\x0102030405'::bytea WHERE session_id = %lld",
      (long long)ls.items[1].id);
  batch_seen d = {file, file_ids, 0, 0};
  assert_int_equal(tl_store_causes_of(server, ids, 300, same_causes_as_file, &d), TL_OK);
  assert_int_equal(d.calls, 300);
  size_t want = 0;
  for (size_t i = 0; i < 300; i++)
    want += ids[i] == ls.items[1].id;
  assert_true(want > 0);
  assert_int_equal(d.damaged, want);
  free(ids);
  free(file_ids);
  both_close(&both);
  free(db);
}

/* n sessions whose facts and tags differ from one session to the next:
 * none, one or three of each, values naming the session. */
static void add_varied_sessions(const char *path, int n) {
  tl_store *s = NULL;
  assert_int_equal(tl_store_open(&s, path, 0), TL_OK);
  int64_t v[20];
  for (size_t i = 0; i < 20; i++)
    v[i] = 1000000 + (int64_t)i * 1000;
  for (int k = 0; k < n; k++) {
    char a[32], b[32], c[32];
    snprintf(a, sizeof a, "a%d", k);
    snprintf(b, sizeof b, "b%d", k % 7);
    snprintf(c, sizeof c, "host-%d", k % 5);
    /* Keys in an order of bytes (COLLATE "C") no language's order keeps. */
    const char *keys[] = {"Zone", "load", "rack"}, *vals[] = {a, b, c};
    tl_fact facts[] = {{"ram.bytes", a, "/proc/meminfo"}, {"cpu.count", b, ""}, {"VM", c, "dmi"}};
    tl_session_spec spec = {.run_uuid = "r",
                            .label = k % 2 ? "odd" : "even",
                            .probe = "settimeout",
                            .command_line = "tlcollect",
                            .host_fingerprint = c,
                            .hostname = c,
                            .libuv_version = "1.44.2",
                            .tag_keys = keys,
                            .tag_values = vals,
                            .tag_count = (size_t)(k % 3 == 0   ? 0
                                                  : k % 3 == 1 ? 1
                                                               : 3),
                            .facts = facts,
                            .fact_count = (size_t)(k % 4 == 0   ? 0
                                                   : k % 4 == 1 ? 1
                                                                : 3)};
    tl_writer *w;
    char uuid[37];
    assert_int_equal(tl_writer_begin(s, &spec, &w, uuid), TL_OK);
    assert_int_equal(tl_writer_add(w, v, 20), TL_OK);
    assert_int_equal(tl_writer_end(w, "complete"), TL_OK);
  }
  tl_store_close(s);
}

static int same_details_as_file(void *ctx, size_t index, const tl_fact_row *facts, size_t nfacts,
                                const tl_fact_row *tags, size_t ntags) {
  batch_seen *b = ctx;
  assert_int_equal(index, b->calls++);
  tl_fact_row *want;
  size_t nwant;
  assert_int_equal(tl_store_facts(b->file, b->file_ids[index], &want, &nwant), TL_OK);
  tl_test_assert_same_rows(facts, nfacts, want, nwant);
  tl_fact_rows_free(want, nwant);
  assert_int_equal(tl_store_tags(b->file, b->file_ids[index], &want, &nwant), TL_OK);
  tl_test_assert_same_rows(tags, ntags, want, nwant);
  tl_fact_rows_free(want, nwant);
  b->damaged += nfacts > 0 && ntags > 0; /* here: how many had both */
  return TL_OK;
}

static int stop_at_third(void *ctx, size_t index, const tl_fact_row *facts, size_t nfacts,
                         const tl_fact_row *tags, size_t ntags) {
  (void)facts, (void)nfacts, (void)tags, (void)ntags;
  size_t *calls = ctx;
  ++*calls;
  return index == 2 ? TL_EINTR : TL_OK;
}

/* Facts and tags come in the order of their keys' bytes, as from a file,
 * from a server whose keys sort by a language's rules (a database made in
 * the locale en_US, say), in a batch and one session at a time. */
static void details_in_byte_order_on_any_server(void **state) {
  fixture *f = *state;
  if (!sql(f->name, "SELECT count(*) FROM pg_collation WHERE collname = 'en-x-icu'"))
    tl_test_skip("this PostgreSQL has no ICU collation en-x-icu");
  char *db = file_in(f, "a.db");
  add_varied_sessions(db, 12);
  push_ok(db, f->url);
  sql(f->name, "ALTER TABLE host_facts ALTER COLUMN key TYPE text COLLATE \"en-x-icu\"");
  sql(f->name, "ALTER TABLE session_tags ALTER COLUMN key TYPE text COLLATE \"en-x-icu\"");
  both_stores both;
  both_open(&both, db, f->url, 12);
  int64_t ids[12], file_ids[12];
  for (size_t k = 0; k < 12; k++) {
    ids[k] = both.ls.items[k].id;
    file_ids[k] = both.lf.items[k].id;
  }
  batch_seen b = {both.file, file_ids, 0, 0};
  assert_int_equal(tl_store_details_of(both.server, ids, 12, same_details_as_file, &b), TL_OK);
  assert_int_equal(b.calls, 12);
  assert_true(b.damaged > 0); /* sessions with three facts and three tags */
  for (size_t k = 0; k < 12; k++) {
    tl_fact_row *got, *want;
    size_t ngot, nwant;
    assert_int_equal(tl_store_facts(both.server, ids[k], &got, &ngot), TL_OK);
    assert_int_equal(tl_store_facts(both.file, file_ids[k], &want, &nwant), TL_OK);
    tl_test_assert_same_rows(got, ngot, want, nwant);
    tl_fact_rows_free(got, ngot);
    tl_fact_rows_free(want, nwant);
  }
  both_close(&both);
  free(db);
}

/* The server reads the facts and tags of many sessions in a few
 * statements (more than one batch here, with ids repeated, out of order
 * and missing) and gives each session its own, as the file does; a
 * callback's error ends the read and leaves the handle ready. */
static void many_sessions_details_as_the_file(void **state) {
  fixture *f = *state;
  char *db = file_in(f, "a.db");
  add_varied_sessions(db, 90);
  push_ok(db, f->url);
  both_stores both;
  both_open(&both, db, f->url, 90);
  tl_store *file = both.file, *server = both.server;
  const tl_session_list ls = both.ls, lf = both.lf;
  enum { ASKED = 2500 };
  int64_t ids[ASKED], file_ids[ASKED];
  for (size_t i = 0; i < ASKED; i++) {
    size_t k = (i * 37) % ls.count;
    ids[i] = ls.items[k].id;
    file_ids[i] = lf.items[k].id;
  }
  ids[5] = file_ids[5] = -1; /* no such session: none */
  batch_seen b = {file, file_ids, 0, 0};
  assert_int_equal(tl_store_details_of(server, ids, ASKED, same_details_as_file, &b), TL_OK);
  assert_int_equal(b.calls, ASKED);
  assert_true(b.damaged > ASKED / 3); /* sessions with facts and tags */
  size_t calls = 0;
  assert_int_equal(tl_store_details_of(server, ids, ASKED, stop_at_third, &calls), TL_EINTR);
  assert_int_equal(calls, 3);
  /* The next batch's statement, sent ahead, was dropped: the handle reads
   * again as before. */
  batch_seen again = {file, file_ids, 0, 0};
  assert_int_equal(tl_store_details_of(server, ids, ASKED, same_details_as_file, &again), TL_OK);
  assert_int_equal(again.calls, ASKED);
  both_close(&both);
  free(db);
}

/* Rows that a server sends out of order (here a table's session ids made
 * text, so that "10" comes before "2") are refused with a message, never
 * matched to the wrong session. */
static void rows_out_of_order_refused(void **state) {
  fixture *f = *state;
  char *db = file_in(f, "a.db");
  add_varied_sessions(db, 30);
  push_ok(db, f->url);
  /* The ids 1..30, asked by their span, which text orders otherwise. */
  assert_int_equal(sql(f->name, "SELECT min(id) FROM sessions"), 1);
  assert_int_equal(sql(f->name, "SELECT max(id) FROM sessions"), 30);
  int64_t ids[30];
  for (int k = 0; k < 30; k++)
    ids[k] = k + 1;
  tl_store *server;
  assert_int_equal(tl_store_open(&server, f->url, TL_STORE_READONLY), TL_OK);
  size_t calls = 0;
  assert_int_equal(tl_store_details_of(server, ids, 30, stop_at_third, &calls), TL_EINTR);
  assert_int_equal(calls, 3); /* as asked, before */
  tl_store_close(server);
  sql(f->name, "ALTER TABLE host_facts RENAME TO host_facts_kept; CREATE VIEW host_facts AS "
               "SELECT session_id::text AS session_id, key, value, evidence FROM host_facts_kept");
  assert_int_equal(tl_store_open(&server, f->url, TL_STORE_READONLY), TL_OK);
  calls = 0;
  assert_int_equal(tl_store_details_of(server, ids, 30, stop_at_third, &calls), TL_ECORRUPT);
  assert_int_equal(calls, 0);
  assert_non_null(
      strstr(tl_store_errmsg(server), ": the server sent session details out of order"));
  tl_store_close(server);
  free(db);
}

/* Each block a scan gives, as the place of its session in the ids asked
 * and the block's bytes: the same from the file and the server, whose ids
 * differ. */
typedef struct {
  const int64_t *ids;
  size_t n, at;
  char *text;
  size_t len, cap;
} block_log;

static int log_block(void *ctx, const tl_block *b) {
  block_log *l = ctx;
  while (l->at < l->n && l->ids[l->at] != b->session_id)
    l->at++; /* the blocks come in the order of the ids */
  assert_true(l->at < l->n);
  char head[128];
  int n =
      snprintf(head, sizeof head, "%zu %lld %lld %lld %lld %d %zu:", l->at, (long long)b->seq,
               (long long)b->count, (long long)b->min_ns, (long long)b->max_ns, b->codec, b->len);
  size_t need = l->len + (size_t)n + b->len * 2 + 2;
  if (need > l->cap) {
    l->cap = need * 2;
    l->text = realloc(l->text, l->cap);
  }
  memcpy(l->text + l->len, head, (size_t)n);
  l->len += (size_t)n;
  for (size_t i = 0; i < b->len; i++)
    l->len += (size_t)sprintf(l->text + l->len, "%02x", b->data[i]);
  l->text[l->len++] = '\n';
  l->text[l->len] = '\0';
  return TL_OK;
}

typedef struct {
  size_t calls;
  char text[64 * 1024];
  size_t len;
} summary_log;

static int log_summary(void *ctx, size_t index, const tl_summary *m) {
  summary_log *l = ctx;
  assert_int_equal(index, l->calls++);
  l->len += (size_t)snprintf(l->text + l->len, sizeof l->text - l->len, "%zu %lld %lld %lld %lld\n",
                             index, (long long)m->count, (long long)m->min_ns, (long long)m->max_ns,
                             (long long)m->pct_ns[2]);
  assert_true(l->len < sizeof l->text);
  return TL_OK;
}

/* The blocks and summaries of a few sessions, from the file and the server
 * (the same sessions, places k of the two lists). */
static void same_reads(tl_store *file, const tl_session_list *lf, tl_store *server,
                       const tl_session_list *ls, const long *places, size_t n) {
  int64_t fid[64], sid[64];
  assert_true(n <= 64);
  for (size_t i = 0; i < n; i++) {
    fid[i] = lf->items[places[i]].id;
    sid[i] = ls->items[places[i]].id;
  }
  block_log bf = {fid, n, 0, NULL, 0, 0}, bs = {sid, n, 0, NULL, 0, 0};
  assert_int_equal(tl_store_scan_blocks(file, fid, n, NULL, log_block, &bf), TL_OK);
  assert_int_equal(tl_store_scan_blocks(server, sid, n, NULL, log_block, &bs), TL_OK);
  assert_non_null(bf.text);
  assert_string_equal(bs.text, bf.text);
  free(bf.text);
  free(bs.text);
  static summary_log mf, ms;
  memset(&mf, 0, sizeof mf);
  memset(&ms, 0, sizeof ms);
  assert_int_equal(tl_store_summaries(file, fid, n, log_summary, &mf), TL_OK);
  assert_int_equal(tl_store_summaries(server, sid, n, log_summary, &ms), TL_OK);
  assert_int_equal(ms.calls, n);
  assert_string_equal(ms.text, mf.text);
}

/* A server reads the samples and summaries of any set of sessions as the
 * file does, however the ids are asked: in order and close together (by
 * their span), with gaps of sessions not asked, in order and far apart (as
 * an array), out of order and repeated (joined as a table). */
static void samples_and_summaries_of_any_sessions(void **state) {
  fixture *f = *state;
  char *db = file_in(f, "a.db");
  add_sessions(db, "a", 40, 5000); /* two blocks each */
  push_ok(db, f->url);
  both_stores both;
  both_open(&both, db, f->url, 40);
  tl_store *file = both.file, *server = both.server;
  const tl_session_list ls = both.ls, lf = both.lf;
  static const long all[] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13,
                             14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27,
                             28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39};
  static const long gaps[] = {1, 2, 4, 5, 7, 8, 9, 10, 12};     /* by span, 3 6 11 not asked */
  static const long far[] = {0, 17, 39};                        /* as an array */
  static const long mixed[] = {5, 3, 3, 9, 0, 39, 20, 5, 6, 7}; /* joined as a table */
  same_reads(file, &lf, server, &ls, all, sizeof all / sizeof *all);
  same_reads(file, &lf, server, &ls, gaps, sizeof gaps / sizeof *gaps);
  same_reads(file, &lf, server, &ls, far, sizeof far / sizeof *far);
  same_reads(file, &lf, server, &ls, mixed, sizeof mixed / sizeof *mixed);
  both_close(&both);
  free(db);
}

enum { SUMMARIES_ASKED = 2500 }; /* three batches of the server's */
typedef struct {
  size_t calls;
  int64_t v[SUMMARIES_ASKED][3]; /* count, maximum, p99 */
} summary_values;

static int keep_summary_values(void *ctx, size_t index, const tl_summary *m) {
  summary_values *l = ctx;
  assert_int_equal(index, l->calls++);
  l->v[index][0] = m->count;
  l->v[index][1] = m->max_ns;
  l->v[index][2] = m->pct_ns[2];
  return TL_OK;
}

/* A session with no stored summary, in the first of several batches: its
 * summary is made from its blocks, read from the server while the next
 * batch would otherwise be on its way, and every session's is the file's. */
static void summaries_made_again_across_batches(void **state) {
  fixture *f = *state;
  char *db = file_in(f, "a.db");
  add_sessions(db, "a", 30, 300);
  push_ok(db, f->url);
  both_stores both;
  both_open(&both, db, f->url, 30);
  enum { ASKED = SUMMARIES_ASKED };
  static int64_t fid[ASKED], sid[ASKED];
  for (size_t i = 0; i < ASKED; i++) {
    fid[i] = both.lf.items[(i * 7) % 30].id;
    sid[i] = both.ls.items[(i * 7) % 30].id;
  }
  sql(f->name, "DELETE FROM session_summaries WHERE session_id = %lld", (long long)sid[3]);
  static summary_values file, server;
  assert_int_equal(tl_store_summaries(both.file, fid, ASKED, keep_summary_values, &file), TL_OK);
  assert_int_equal(tl_store_summaries(both.server, sid, ASKED, keep_summary_values, &server),
                   TL_OK);
  assert_int_equal(server.calls, ASKED);
  assert_memory_equal(server.v, file.v, sizeof file.v);
  both_close(&both);
  free(db);
}

/* Migration 4: a block that fits in a page stays in its row (reading one
 * from TOAST cost the server twice the time), on a new server and on one
 * upgraded from version 3. */
static void small_blocks_stay_in_their_rows(void **state) {
  fixture *f = *state;
  char *db = file_in(f, "a.db");
  add_sessions(db, "a", 3, 1000); /* one block of about 2.5 kB each */
  push_ok(db, f->url);
  const char *toast = "SELECT pg_relation_size(reltoastrelid) FROM pg_class WHERE relname = "
                      "'sample_blocks'";
  assert_true(sql(f->name, "SELECT min(octet_length(data)) FROM sample_blocks") > 2100);
  assert_int_equal(sql(f->name, "%s", toast), 0);
  /* A server of version 3 moved such blocks to TOAST; opened by its owner,
   * it is upgraded, and what it is sent then stays in the rows. */
  sql(f->name, "ALTER TABLE sample_blocks RESET (toast_tuple_target); UPDATE tl_schema SET "
               "version = 3; DELETE FROM sessions");
  sql(f->name, "VACUUM FULL sample_blocks");
  char *before = output_of(TLSTORE, f->url, "info", NULL);
  free(before);
  assert_int_equal(sql(f->name, "SELECT version FROM tl_schema"), 4);
  push_ok(db, f->url);
  assert_int_equal(sql(f->name, "%s", toast), 0);
  sql(f->name, "ALTER TABLE sample_blocks RESET (toast_tuple_target); DELETE FROM sessions");
  sql(f->name, "VACUUM FULL sample_blocks");
  push_ok(db, f->url);
  assert_true(sql(f->name, "%s", toast) > 0); /* the test can tell */
  free(db);
}

int main(void) {
  pg_host = getenv("TL_TEST_PG_HOST");
  pg_user = getenv("TL_TEST_PG_USER");
  if (!pg_host || !*pg_host || !pg_user || !*pg_user) {
    const char *required = getenv("TL_TEST_PG_REQUIRED");
    fprintf(stderr,
            "test_pg: %s: no PostgreSQL server to test against (start one with "
            "scripts/pg-test-server, which sets TL_TEST_PG_HOST and TL_TEST_PG_USER)\n",
            required && *required == '1' ? "FAILED" : "skipped");
    return required && *required == '1' ? 1 : 77;
  }
  if (getenv("TL_TEST_FILTER"))
    cmocka_set_test_filter(getenv("TL_TEST_FILTER"));
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(same_bytes_from_file_and_server, setup, teardown),
      cmocka_unit_test_setup_teardown(recorded_fact_filter, setup, teardown),
      cmocka_unit_test_setup_teardown(sessions_name_their_hosts, setup, teardown),
      cmocka_unit_test_setup_teardown(details_in_byte_order_on_any_server, setup, teardown),
      cmocka_unit_test_setup_teardown(summaries_sent_as_stored_or_made_again, setup, teardown),
      cmocka_unit_test_setup_teardown(delete_prune_and_remove_pushed, setup, teardown),
      cmocka_unit_test_setup_teardown(running_sessions_wait, setup, teardown),
      cmocka_unit_test_setup_teardown(live_session_waits_however_old_its_heartbeat, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(concurrent_remove_pushed, setup, teardown),
      cmocka_unit_test_setup_teardown(check_finds_a_dropped_table, setup, teardown),
      cmocka_unit_test_setup_teardown(push_of_an_early_copy_says_how_to_mend_it, setup, teardown),
      cmocka_unit_test_setup_teardown(faults_are_one_line_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(cut_off_pushes_are_completed_by_the_next, setup, teardown),
      cmocka_unit_test_setup_teardown(thirty_two_pushers, setup, teardown),
      cmocka_unit_test_setup_teardown(a_server_refuses_what_only_a_file_does, setup, teardown),
      cmocka_unit_test_setup_teardown(many_sessions_causes_as_the_file, setup, teardown),
      cmocka_unit_test_setup_teardown(rows_out_of_order_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(many_sessions_details_as_the_file, setup, teardown),
      cmocka_unit_test_setup_teardown(samples_and_summaries_of_any_sessions, setup, teardown),
      cmocka_unit_test_setup_teardown(summaries_made_again_across_batches, setup, teardown),
      cmocka_unit_test_setup_teardown(small_blocks_stay_in_their_rows, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
