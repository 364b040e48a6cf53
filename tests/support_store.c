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
