/* sqlite_internal.h: what the SQLite backend's files share: its handle
 * type, its entries of the table of operations (store_internal.h) and the
 * helpers its writers have in common. Nothing outside this folder sees
 * SQLite. */
#ifndef TL_SQLITE_INTERNAL_H
#define TL_SQLITE_INTERNAL_H

#include <sqlite3.h>
#include <sys/types.h>

#include "store_internal.h"

/* A SQLite file's handle: the common one first, so that the tl_store * the
 * callers hold is this. */
typedef struct {
  tl_store base;
  sqlite3 *db; /* NULL until the file opens */
  /* A file's queries of a session's facts and tags, prepared at first use
   * (a report asks them of every session) and finalized before db closes. */
  sqlite3_stmt *facts_st, *tags_st;
  sqlite3_stmt *causes_st; /* the rows of a session's causes, the same way */
} tl_sqlite;

static inline tl_sqlite *tl__sqlite(tl_store *s) { return (tl_sqlite *)s; }
static inline sqlite3 *tl__sqlite_db(tl_store *s) { return ((tl_sqlite *)s)->db; }

/* Maps a SQLite result code to a tl error and records sqlite's message with
 * what was being done (fail.c). */
int tl__store_sqlfail(tl_store *s, int rc, const char *doing);
/* What fail.c asks of a file, which opening it asks too: whether the file
 * system that holds path is read-only; whether path-shm or path-wal cannot
 * be written while path can (then named in buf); what a file that is not a
 * regular one is ("a FIFO"); and what to do about such a -shm or -wal. */
int tl__sqlite_on_readonly_fs(const char *path);
int tl__sqlite_readonly_sidecar(const char *path, char *buf, size_t len);
const char *tl__sqlite_special_kind(mode_t mode);
extern const char tl__sqlite_sidecar_hint[];

/* uuid.c: a session's UUID and its run's as stored (16 bytes when tl made
 * them, else text). Binds text as stored, with its own copy; the text of
 * column i (buf when it was stored as bytes; "" for NULL), valid until the
 * next step; tl_uuid_blob(text), for the migration, the stored form. */
int tl__bind_uuid(sqlite3_stmt *st, int i, const char *text);
const char *tl__column_uuid(sqlite3_stmt *st, int i, char buf[37]);
void tl__uuid_blob_fn(sqlite3_context *cx, int argc, sqlite3_value **argv);

/* read.c: how many of ids[0..n), at most TL__SPAN_MAX, ascend and fill at
 * least half of the span of their ids, as a report's sessions mostly do (ids
 * follow the writes), so that one statement over the span (the rows of
 * sessions not asked passed over) reads them for less than one statement
 * each; 0 when fewer than 2. */
enum { TL__SPAN_MAX = 4096 };
size_t tl__sqlite_dense_run(const int64_t *ids, size_t n);

/* The entries of tl__sqlite_ops (ops.c), by the file that holds them. */
/* store.c: opening, closing, stale sessions */
int tl__sqlite_open(const tl_store_ops *self, tl_store **out, const char *path, int flags);
void tl__sqlite_close(tl_store *s);
int tl__sqlite_schema_version(tl_store *s);
int tl__sqlite_recover_stale(tl_store *s, int64_t stale_ns, int *count);
/* Finalizes the statements the handle keeps prepared, before db closes. */
void tl__sqlite_forget_statements(tl_store *s);
/* read.c: reading sessions, samples and details; info and check */
int tl__sqlite_sessions(tl_store *s, const tl_filter *f, tl_session_list *out);
int tl__sqlite_has_session(tl_store *s, const char *uuid, int *has);
int tl__sqlite_labels(tl_store *s, char ***labels, size_t *count);
int tl__sqlite_label_delays(tl_store *s, tl__label_delay_cb cb, void *ctx);
int tl__sqlite_scan_blocks(tl_store *s, const int64_t *ids, size_t n, tl_block_filter_cb filter,
                           tl_block_cb fn, void *ctx);
int tl__sqlite_read_begin(tl_store *s);
void tl__sqlite_read_end(tl_store *s);
int tl__sqlite_read_cache(tl_store *s, int64_t bytes);
int tl__sqlite_facts(tl_store *s, int64_t session_id, tl_fact_row **rows, size_t *count);
int tl__sqlite_tags(tl_store *s, int64_t session_id, tl_fact_row **rows, size_t *count);
int tl__sqlite_details_of(tl_store *s, const int64_t *ids, size_t n, tl_details_cb fn, void *ctx);
int tl__sqlite_hosts(tl_store *s, tl_host_row **rows, size_t *count);
int tl__sqlite_info(tl_store *s, tl_store_stats *stats);
int tl__sqlite_check(tl_store *s, tl_problem_cb report, void *ctx);
/* integrity.c: SQLite's own check of the file's pages, started on a
 * connection and a thread of its own (NULL when it cannot have them) and
 * ended by tl__integrity_end, which waits for it; or run now on s's own
 * connection. Both report what it found (problems counted): TL_ECORRUPT
 * when the check itself failed, or an error, its message on s. */
enum { TL__INTEGRITY_LINES = 100 }; /* the findings it stops at, SQLite's default */
typedef struct tl__integrity tl__integrity;
tl__integrity *tl__integrity_start(tl_store *s);
int tl__integrity_end(tl_store *s, tl__integrity *in, tl_problem_cb report, void *ctx,
                      int *problems);
int tl__integrity_now(tl_store *s, tl_problem_cb report, void *ctx, int *problems);
/* store.c: a second connection to s's file, read-only, opened as s's own
 * reads it (immutable when s's is); no message left on s. */
int tl__sqlite_open_reader(tl_store *s, sqlite3 **out);
/* admin.c: deleting, pruning, vacuuming */
int tl__sqlite_delete(tl_store *s, const char *uuid);
int tl__sqlite_prune(tl_store *s, int64_t before_ns, const char *label, int64_t *sessions,
                     int64_t *samples);
int tl__sqlite_vacuum(tl_store *s);
/* writer.c: a session being collected */
int tl__sqlite_writer_begin(tl_store *s, const tl_session_spec *spec, tl_writer **out,
                            char uuid_out[37]);
/* causes.c: the rows of session_causes */
int tl__sqlite_cause_rows(tl_store *s, const int64_t *ids, size_t n, int64_t kinds,
                          tl__cause_row_cb fn, void *ctx);
int tl__sqlite_write_begin(tl_store *s, size_t bytes, const char *doing);
int tl__sqlite_write_end(tl_store *s, int err, const char *doing);
int tl__sqlite_put_cause_row(tl_store *s, int64_t session_id, int kind, int64_t first,
                             int64_t count, const uint8_t *data, size_t len, const char *doing);
/* import.c, merge.c */
int tl__sqlite_import(tl_store *s, FILE *in, const tl_import_opts *o, tl_bad_row_cb on_bad,
                      void *ctx, char uuid_out[37], int64_t *imported, int64_t *bad_rows);
int tl__sqlite_merge(tl_store *d, const char *const *paths, size_t n, tl_merge_stats *stats);
/* summary.c: session_summaries */
int tl__sqlite_summary_blobs(tl_store *s, const int64_t *ids, size_t n, tl__summary_blob_cb fn,
                             void *ctx);

/* Whether bytes of new data can be committed and still leave the room kept
 * for ending the sessions (writer.c): what is written beside the samples
 * (their causes, counters) must never take it. */
int tl__sqlite_room_for(const tl_store *s, size_t bytes);

/* Computes and stores (replacing) the summary of a session, inside the
 * caller's write transaction. tl__summary_put_ended does it in a savepoint
 * of its own and leaves the transaction as it was when it fails, so that a
 * session still ends when its summary cannot be made (it is then computed
 * when read); fed, when not NULL, has had every sample of the session added
 * already (tl__summary_add), so that only the percentiles' ranks are read. */
int tl__summary_put(tl_store *s, tl__summarizer *z, int64_t session_id);
/* Stores m as the summary of session_id of the file s (replacing). */
int tl__summary_write(tl_store *s, int64_t session_id, const tl_summary *m);
/* Stores an encoded summary as it is (one tl__summary_decode accepted). */
int tl__summary_write_blob(tl_store *s, int64_t session_id, const uint8_t *blob, size_t len);
int tl__summary_put_ended(tl_store *s, int64_t session_id, tl__summarizer *fed);
/* facts.c: inside the caller's write transaction, the number of the fact
 * set of a new session of host_id with facts[0..n): the host's latest when
 * it holds the same facts, else a new one; *id 0 for no facts. */
int tl__fact_set_for(tl_store *s, int64_t host_id, const tl_fact *facts, size_t n, int64_t *id);
/* The rows (key, value, evidence) st gives for session_id, copied into
 * *facts (free with tl__facts_free). */
int tl__fact_rows(tl_store *s, sqlite3_stmt *st, int64_t session_id, tl_fact **facts, size_t *n);
void tl__facts_free(tl_fact *facts, size_t n);
/* Migration 6: adds sessions.fact_set_id unless there, and moves every
 * session's facts into fact sets. */
int tl__facts_column(tl_store *s);
int tl__facts_into_sets(tl_store *s);
/* Inside the caller's write transaction: records the host and a new
 * session with its tags and facts, its status 'running' (a collector's) or
 * 'complete' (an import's, whose transaction holds all of it: it never
 * enters the index of running sessions); uuid_out gets its UUID. */
int tl__session_insert(tl_store *s, const tl_session_spec *spec, const char *status,
                       char uuid_out[37], int64_t *session_id);

#endif
