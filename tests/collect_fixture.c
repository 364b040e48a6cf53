/* collect_fixture.c: see collect_fixture.h. */
#include <stdlib.h>

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
