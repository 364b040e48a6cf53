/* collect_fixture.c: see collect_fixture.h. */
#include <stdlib.h>

#include <uv.h>

#include "collect_fixture.h"
#include "support.h"

int tl_collect_setup(void **state) {
  tl_collect_fixture *f = calloc(1, sizeof *f);
  f->dir = tl_test_tmpdir();
  f->db = tl_test_path(f->dir, "tl.db");
  *state = f;
  if (tl_store_open(&f->store, f->db, 0) || tl_host_detect(&f->host))
    return -1;
  return 0;
}

int tl_collect_teardown(void **state) {
  tl_collect_fixture *f = *state;
  tl_store_close(f->store);
  tl_host_free(f->host);
  tl_test_rmdir(f->dir);
  free(f->dir);
  free(f->db);
  free(f);
  return 0;
}

tl_session_spec tl_collect_fixture_spec(const tl_collect_fixture *f, const char *run_uuid,
                                        const char *label, const char *command_line) {
  size_t n;
  const tl_fact *facts = tl_host_facts(f->host, &n);
  tl_session_spec s = {
      .run_uuid = run_uuid,
      .label = label,
      .command_line = command_line,
      .host_fingerprint = tl_host_fingerprint(f->host),
      .hostname = tl_host_hostname(f->host),
      .libuv_version = uv_version_string(),
      .facts = facts,
      .fact_count = n,
  };
  return s;
}

int tl_test_measure(void *span, const int64_t *v, size_t n) {
  tl_test_span *s = span;
  for (size_t i = 0; i < n; i++) {
    if (s->n == 0 || v[i] < s->min)
      s->min = v[i];
    if (s->n == 0 || v[i] > s->max)
      s->max = v[i];
    s->n++;
  }
  return 0;
}
