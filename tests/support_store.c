/* support_store.c: helpers for the tests that link the store library (see
 * support_store.h); tests/CMakeLists.txt links it into those only. */
#include "support_store.h"

#include "support.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

void tl_test_exec_sql(const char *db, const char *sql) {
  sqlite3 *h;
  assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
  char *why = NULL;
  if (sqlite3_exec(h, sql, NULL, NULL, &why) != SQLITE_OK)
    fail_msg("%s: %s", sql, why ? why : "?");
  sqlite3_close(h);
}

void tl_test_flip_block_bits(const char *db, const char *which) {
  char sql[512];
  snprintf(sql, sizeof sql,
           "UPDATE sample_blocks SET data = substr(data, 1, length(data) - 1) || CASE WHEN "
           "substr(data, -1, 1) = x'01' THEN x'03' ELSE x'01' END WHERE session_id IN (SELECT id "
           "FROM sessions WHERE %s)",
           which);
  sqlite3 *h;
  assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
  assert_int_equal(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
  assert_true(sqlite3_changes(h) > 0);
  sqlite3_close(h);
}

int tl_test_die_mid_session(const char *db, tl_session_spec spec, const int64_t *v, size_t n) {
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  spec.hostname = host;
  pid_t pid = fork();
  if (pid == 0) {
    tl_store *s;
    tl_writer *w;
    char uuid[37];
    int ok = tl_store_open(&s, db, 0) == TL_OK && tl_writer_begin(s, &spec, &w, uuid) == TL_OK &&
             tl_writer_add(w, v, n) == TL_OK && tl_writer_flush(w) == TL_OK;
    _exit(ok ? 0 : 1); /* no tl_writer_end, no close: the process is gone */
  }
  int st;
  if (pid < 0 || waitpid(pid, &st, 0) != pid)
    return -1;
  return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

tl_store_stats tl_test_stats(const char *db) {
  tl_store *s = NULL;
  tl_store_stats st = {0};
  if (tl_store_open(&s, db, TL_STORE_READONLY) != TL_OK || tl_store_info(s, &st) != TL_OK)
    memset(&st, 0, sizeof st);
  tl_store_close(s);
  return st;
}

tl_store *tl_test_sessions(const char *db, size_t count, tl_session_list *list) {
  tl_store *s;
  assert_int_equal(tl_store_open(&s, db, TL_STORE_READONLY), TL_OK);
  tl_filter all;
  tl_filter_init(&all);
  assert_int_equal(tl_store_sessions(s, &all, list), TL_OK);
  assert_int_equal(list->count, count);
  return s;
}

tl_session_spec tl_test_spec(const char *label) {
  tl_session_spec spec = {.run_uuid = "r",
                          .label = label,
                          .probe = "settimeout",
                          .command_line = "t",
                          .host_fingerprint = "f",
                          .hostname = "h",
                          .libuv_version = "1"};
  return spec;
}

int64_t tl_test_write_session(tl_store *st, const tl_session_spec *spec, const int64_t *v, size_t n,
                              size_t batch) {
  tl_writer *w;
  char uuid[37];
  assert_int_equal(tl_writer_begin(st, spec, &w, uuid), TL_OK);
  int64_t id = tl_writer_session_id(w);
  for (size_t at = 0; at < n;) {
    size_t k = batch && batch < n - at ? batch : n - at;
    assert_int_equal(tl_writer_add(w, v + at, k), TL_OK);
    at += k;
  }
  assert_int_equal(tl_writer_end(w, "complete"), TL_OK);
  return id;
}

void tl_test_import_fleet_session(tl_store *s, const char *csv, const char *host,
                                  const char *memory, const char *cpus, int64_t hour) {
  const char *facts[] = {memory, cpus};
  FILE *in = fmemopen((void *)csv, strlen(csv), "r");
  assert_non_null(in);
  tl_import_opts o;
  tl_import_opts_init(&o);
  o.format = TL_SAMPLES_CSV;
  o.label = "fleet";
  o.probe = "settimeout";
  o.delay_ns = 50000000;
  o.hostname = host;
  o.started_ns = 1790812800LL * 1000000000LL + hour * 3600LL * 1000000000LL;
  o.facts = facts;
  o.fact_count = 2;
  assert_int_equal(tl_store_import(s, in, &o, NULL, NULL, NULL, NULL, NULL), TL_OK);
  fclose(in);
}

int tl_test_store_setup(void **state) {
  if (access("/dev/shm", W_OK) == 0)
    setenv("TMPDIR", "/dev/shm", 1);
  tl_test_store *f = calloc(1, sizeof *f);
  *state = f;
  if (!f)
    return -1;
  f->dir = tl_test_tmpdir();
  f->db = f->dir ? tl_test_path(f->dir, "tl.db") : NULL;
  return f->db && tl_store_open(&f->s, f->db, 0) == TL_OK ? 0 : -1;
}

int tl_test_store_teardown(void **state) {
  tl_test_store *f = *state;
  if (!f)
    return 0;
  tl_store_close(f->s);
  if (f->dir)
    tl_test_rmdir(f->dir);
  free(f->dir);
  free(f->db);
  free(f);
  return 0;
}

/* ======================================================================== */
/* Sessions on several hosts                                                 */

/* The hosts of tl_test_add_host_sessions: two fingerprints share a prefix. */
static const struct {
  const char *name, *fingerprint;
} hosts[] = {{"web", "aa11"}, {"db", "aa12"}, {"cache", "bb21"}};
enum { HOSTS = 3, HOST_SESSIONS = 12 };

void tl_test_add_host_sessions(tl_store *st) {
  static const int64_t v[] = {1000000, 1200000};
  /* Host i % 3: each session's host differs from the one before. */
  for (int i = 0; i < HOST_SESSIONS; i++) {
    char label[8];
    snprintf(label, sizeof label, "s%d", i);
    tl_session_spec spec = tl_test_spec(label);
    spec.hostname = hosts[i % HOSTS].name;
    spec.host_fingerprint = hosts[i % HOSTS].fingerprint;
    spec.started_ns = 1790812800LL * 1000000000LL + (int64_t)i * 1000000000LL;
    tl_test_write_session(st, &spec, v, 2, 0);
  }
}

/* The sessions tl_store_sessions lists with host set to who: each on its
 * own host, as its label says; as a mask of the sessions. */
static unsigned listed_on(tl_store *s, const char *who) {
  tl_filter f;
  tl_filter_init(&f);
  f.host = who;
  tl_session_list list;
  assert_int_equal(tl_store_sessions(s, &f, &list), TL_OK);
  unsigned mask = 0;
  for (size_t k = 0; k < list.count; k++) {
    const tl_session *x = &list.items[k];
    int i = atoi(x->label + 1);
    assert_true(i >= 0 && i < HOST_SESSIONS);
    assert_string_equal(x->hostname, hosts[i % HOSTS].name);
    assert_string_equal(x->host_fingerprint, hosts[i % HOSTS].fingerprint);
    assert_false(mask & 1u << i); /* no session twice */
    mask |= 1u << i;
  }
  tl_session_list_free(&list);
  return mask;
}

/* The sessions of the hosts whose bits are in which, as a mask. */
static unsigned sessions_of(unsigned which) {
  unsigned mask = 0;
  for (int i = 0; i < HOST_SESSIONS; i++)
    if (which & 1u << (i % HOSTS))
      mask |= 1u << i;
  return mask;
}

void tl_test_assert_host_names(tl_store *s) {
  assert_int_equal(listed_on(s, NULL), sessions_of(7));
  assert_int_equal(listed_on(s, "db"), sessions_of(2));
  assert_int_equal(listed_on(s, "aa1"), sessions_of(3)); /* a prefix of two fingerprints */
  assert_int_equal(listed_on(s, "bb21"), sessions_of(4));
  assert_int_equal(listed_on(s, "cache"), sessions_of(4));
  assert_int_equal(listed_on(s, "nowhere"), 0);
}

/* ======================================================================== */
/* The filter of sessions that record a fact                                 */

#define MEM "mem.total_bytes"
#define LIM "cgroup.memory_limit_bytes"

void tl_test_add_recording_sessions(tl_store *st) {
  static const int64_t v[] = {1000000, 1200000, 1100000};
  /* Label rN: what session N records (and, for 5 and 6, what is added to
   * its facts later, which wins over what it started with). */
  static const struct {
    const char *fact, *value, *later, *tag, *tag_value;
  } rows[] = {
      {MEM, "1073741824", NULL, "load", "idle"},
      {MEM, "unknown", NULL, "load", "unknown"},
      {MEM, "", NULL, NULL, NULL},
      {LIM, "536870912", NULL, "load", "busy"},
      {NULL, NULL, NULL, NULL, NULL},
      {MEM, "1073741824", "unknown", NULL, NULL},
      {MEM, "unknown", "4294967296", NULL, NULL},
      {"cpu.logical", "2", NULL, "zone", "eu"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    char label[8];
    snprintf(label, sizeof label, "r%zu", i);
    tl_session_spec spec = tl_test_spec(label);
    tl_fact fact = {rows[i].fact, rows[i].value, ""};
    spec.facts = &fact;
    spec.fact_count = rows[i].fact != NULL;
    spec.tag_keys = &rows[i].tag;
    spec.tag_values = &rows[i].tag_value;
    spec.tag_count = rows[i].tag != NULL;
    spec.started_ns = 1790812800LL * 1000000000LL + (int64_t)i * 1000000000LL;
    tl_writer *w;
    char uuid[37];
    assert_int_equal(tl_writer_begin(st, &spec, &w, uuid), TL_OK);
    assert_int_equal(tl_writer_add(w, v, 3), TL_OK);
    tl_fact later = {rows[i].fact, rows[i].later, ""};
    if (rows[i].later)
      assert_int_equal(tl_writer_add_facts(w, &later, 1), TL_OK);
    assert_int_equal(tl_writer_end(w, "complete"), TL_OK);
  }
}

/* Whether rows hold key with a value other than "" and "unknown". */
static int records(const tl_fact_row *rows, size_t n, const char *key) {
  const char *v = tl_fact_rows_get(rows, n, key);
  return v && *v && strcmp(v, "unknown") != 0;
}

/* The labels of the sessions of s that f's facts and tag select, by reading
 * each session's own facts and tags, "r0,r3" in the order of sessions. */
static void labels_by_hand(tl_store *s, const tl_filter *f, char *buf, size_t len) {
  tl_filter all = *f;
  all.fact_key_count = 0;
  all.has_tag = NULL;
  all.limit = 0;
  tl_session_list list;
  assert_int_equal(tl_store_sessions(s, &all, &list), TL_OK);
  size_t at = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < list.count; i++) {
    tl_fact_row *facts, *tags;
    size_t nf, nt;
    assert_int_equal(tl_store_facts(s, list.items[i].id, &facts, &nf), TL_OK);
    assert_int_equal(tl_store_tags(s, list.items[i].id, &tags, &nt), TL_OK);
    int fact = !f->fact_key_count, tag = !f->has_tag || records(tags, nt, f->has_tag);
    for (size_t k = 0; k < f->fact_key_count; k++)
      fact |= records(facts, nf, f->fact_keys[k]);
    if (fact && tag)
      at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? "," : "", list.items[i].label);
    tl_fact_rows_free(facts, nf);
    tl_fact_rows_free(tags, nt);
  }
  tl_session_list_free(&list);
}

/* The labels tl_store_sessions gives for f, "r0,r3", sorted. */
static void labels_listed(tl_store *s, const tl_filter *f, char *buf, size_t len) {
  tl_session_list list;
  assert_int_equal(tl_store_sessions(s, f, &list), TL_OK);
  char picked[16] = "";
  for (size_t i = 0; i < list.count; i++) {
    const char *l = list.items[i].label;
    assert_true(l[0] == 'r' && l[1] >= '0' && l[1] <= '9' && !l[2]);
    assert_null(strchr(picked, l[1])); /* no session twice */
    picked[strlen(picked)] = l[1];
  }
  tl_session_list_free(&list);
  size_t at = 0;
  buf[0] = '\0';
  for (char d = '0'; d <= '9'; d++)
    if (strchr(picked, d))
      at += (size_t)snprintf(buf + at, len - at, "%sr%c", at ? "," : "", d);
}

void tl_test_assert_recorded_filter(tl_store *s) {
  static const char *const mem_or_limit[] = {MEM, LIM}, *const mem[] = {MEM},
                           *const cpus[] = {"cpu.logical"}, *const none[] = {"no.such.fact"},
                           *const r0_r5[] = {"r0", "r5", "r6"};
  static const struct {
    const char *const *facts;
    size_t n;
    const char *tag;
    const char *const *labels;
    size_t nlabels;
    const char *want;
  } cases[] = {
      {mem_or_limit, 2, NULL, NULL, 0, "r0,r3,r6"},
      {mem, 1, NULL, NULL, 0, "r0,r6"},
      {cpus, 1, NULL, NULL, 0, "r7"},
      {none, 1, NULL, NULL, 0, ""},
      {NULL, 0, "load", NULL, 0, "r0,r3"},
      {NULL, 0, "zone", NULL, 0, "r7"},
      {NULL, 0, "no_such_tag", NULL, 0, ""},
      {mem, 1, "load", NULL, 0, "r0"},
      {mem_or_limit, 2, NULL, r0_r5, 3, "r0,r6"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tl_filter f;
    tl_filter_init(&f);
    f.fact_keys = cases[i].facts;
    f.fact_key_count = cases[i].n;
    f.has_tag = cases[i].tag;
    f.labels = cases[i].labels;
    f.label_count = cases[i].nlabels;
    char want[64], got[64];
    labels_by_hand(s, &f, want, sizeof want);
    assert_string_equal(want, cases[i].want);
    labels_listed(s, &f, got, sizeof got);
    if (strcmp(got, want) != 0)
      fail_msg("case %zu: the store selects %s; the sessions' facts say %s", i, got, want);
    /* With a limit, that many of them (or all there are), no others. */
    for (f.limit = 1; f.limit <= 4; f.limit++) {
      labels_listed(s, &f, got, sizeof got);
      size_t n = 0, of = *want ? 1 : 0;
      for (const char *c = got; *c; c++)
        n += *c == ',';
      for (const char *c = want; *c; c++)
        of += *c == ',';
      assert_int_equal(*got ? n + 1 : 0, of < f.limit ? of : f.limit);
      for (const char *c = got; *c; c += strcspn(c, ","), c += *c == ',') {
        char one[8];
        snprintf(one, sizeof one, "%.*s", (int)strcspn(c, ","), c);
        if (!strstr(want, one))
          fail_msg("case %zu, limit %zu: %s is not among %s", i, f.limit, one, want);
      }
    }
  }
}

void tl_test_assert_same_rows(const tl_fact_row *a, size_t na, const tl_fact_row *b, size_t nb) {
  assert_int_equal(na, nb);
  for (size_t i = 0; i < na; i++) {
    assert_string_equal(a[i].key, b[i].key);
    assert_string_equal(a[i].value, b[i].value);
    assert_string_equal(a[i].evidence, b[i].evidence);
  }
}
