/* collect_fixture.h: the fixture of the collector's tests (test_collect,
 * test_probes): support.h's temporary folder and database path, with the
 * database open and this host detected. */
#ifndef TL_TEST_COLLECT_FIXTURE_H
#define TL_TEST_COLLECT_FIXTURE_H

#include "tl_collect.h"

typedef struct {
  char *dir, *db;
  tl_store *store;
  tl_host *host;
} tl_collect_fixture;

/* For cmocka_unit_test_setup_teardown(test, tl_collect_setup, tl_collect_teardown). */
int tl_collect_setup(void **state);
int tl_collect_teardown(void **state);

#endif
