/* support_store.h: what the tests that link the store library share (see
 * support.h for the rest). */
#ifndef TL_TEST_SUPPORT_STORE_H
#define TL_TEST_SUPPORT_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "tl_store.h"

/* A collector on this host (spec's hostname is replaced by this host's)
 * that commits the n samples v to db and dies without ending its session,
 * which stays 'running' in the file while its process is gone. Returns 0
 * when the samples were committed, -1 otherwise. */
int tl_test_die_mid_session(const char *db, tl_session_spec spec, const int64_t *v, size_t n);

/* What the database at db holds so far (tl_store_info), opened read-only;
 * all zero while it cannot be opened or read (a collector still creating
 * it). */
tl_store_stats tl_test_stats(const char *db);

/* Opens db read-only and lists every session into list, oldest first,
 * failing the test unless there are count of them. Returns the open store
 * (free the list, then close it). */
tl_store *tl_test_sessions(const char *db, size_t count, tl_session_list *list);

/* Runs sql (one or more statements) on the file db through SQLite itself,
 * as a damaged or hand-edited file would be; fails the test, saying why,
 * unless it succeeds. */
void tl_test_exec_sql(const char *db, const char *sql);

/* Flips the last bit of each sample block of the sessions the SQL
 * condition which selects (over sessions, e.g. "id = 2") in the file db,
 * so that their checksums fail; fails the test unless a block changed. */
void tl_test_flip_block_bits(const char *db, const char *which);

/* A session spec with every field set to a fixed value (label, probe
 * settimeout, host h), for tests that only care about the samples. */
tl_session_spec tl_test_spec(const char *label);

/* Writes the n samples v to st as one complete session of spec, in batches
 * of at most batch samples (0: all at once); returns its id. */
int64_t tl_test_write_session(tl_store *st, const tl_session_spec *spec, const int64_t *v, size_t n,
                              size_t batch);

/* Imports the CSV text csv into s as one complete session of label "fleet"
 * (settimeout, 50 ms) on host, with the facts memory and cpus ("key=value"),
 * started hour hours after 2026-10-01 00:00 UTC, as `tlstore import` by a
 * fleet's script would; fails the test otherwise. */
void tl_test_import_fleet_session(tl_store *s, const char *csv, const char *host,
                                  const char *memory, const char *cpus, int64_t hour);

/* Writes to st twelve sessions s0 ... s11 on the hosts web (fingerprint
 * aa11), db (aa12) and cache (bb21) in turn; and checks that
 * tl_store_sessions of s (which holds them, a file or a server they were
 * pushed to) names each session's own host, and selects by a hostname or a
 * fingerprint's prefix exactly the sessions of the hosts it names. */
void tl_test_add_host_sessions(tl_store *st);
void tl_test_assert_host_names(tl_store *s);

/* Writes to st the sessions r0 ... r7, which record the host facts
 * mem.total_bytes, cgroup.memory_limit_bytes or cpu.logical, or the tags
 * load or zone, with a value, with "" or "unknown", or not at all, some of
 * them changed by facts added later; and checks that tl_store_sessions of
 * s (which holds them, a file or a server they were pushed to) selects by
 * fact_keys, has_tag and limit exactly the sessions their own facts and
 * tags say. */
void tl_test_add_recording_sessions(tl_store *st);
void tl_test_assert_recorded_filter(tl_store *s);

/* Fails the test unless the fact or tag rows a[0..na) and b[0..nb) are the
 * same, key, value and evidence, in the same order. */
void tl_test_assert_same_rows(const tl_fact_row *a, size_t na, const tl_fact_row *b, size_t nb);

/* A fresh store tl.db in a temporary folder, for cmocka's setup and
 * teardown (the state is a tl_test_store). The folder is in /dev/shm where
 * there is one: the tests that use it store hundreds of small sessions, and
 * durability is not what they test. */
typedef struct {
  char *dir, *db;
  tl_store *s;
} tl_test_store;
int tl_test_store_setup(void **state);
int tl_test_store_teardown(void **state);

#endif
