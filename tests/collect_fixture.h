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

/* A session of this host (its fingerprint, name and facts) for the
 * collector to fill in; command_line names the test that wrote it. */
tl_session_spec tl_collect_fixture_spec(const tl_collect_fixture *f, const char *run_uuid,
                                        const char *label, const char *command_line);

/* The count, least and greatest of the samples a scan passes to
 * tl_test_measure (a tl_store_scan callback; start from {0, 0, 0}). */
typedef struct {
  int64_t n, min, max;
} tl_test_span;
int tl_test_measure(void *span, const int64_t *v, size_t n);

#endif
