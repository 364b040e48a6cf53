/* store_internal.h: what the store's own files share and nobody else sees. */
#ifndef TL_STORE_INTERNAL_H
#define TL_STORE_INTERNAL_H

#include <stdio.h>
#include <string.h>

#include "base_internal.h"
#include "codec_internal.h"
#include "tl_store.h"

typedef struct tl_store_ops tl_store_ops;
typedef int (*tl__summary_blob_cb)(void *ctx, size_t index, const char *uuid, int64_t sample_count,
                                   const uint8_t *blob, size_t len);

/* What every handle holds, whichever backend it opened: a backend's own
 * handle type embeds this first (tl_sqlite in sqlite_internal.h, tl_pg in
 * pg_internal.h), so that a tl_store * is also a pointer to it. */
struct tl_store {
  const tl_store_ops *ops; /* the backend: tl__sqlite_ops or tl__pg_ops */
  char *path;              /* the file, or the server's address (never a password) */
  int readonly;
  int codec;                         /* of the blocks it writes; 0 for TL_CODEC_DEFAULT */
  char errmsg[512];                  /* last failure, "" when none */
  int64_t damaged_id;                /* the session of the last TL_ECORRUPT read, or 0 */
  int64_t left_out[TL_LEFT_OUT_MAX]; /* sessions tl_store_sessions no longer lists */
  size_t left_out_count;
  size_t writers_open; /* sessions being written; each keeps room to end */
};

/* One row of label_delays; a non-zero return stops the rows with it. */
typedef int (*tl__label_delay_cb)(void *ctx, const char *label, int64_t delay_ns, int64_t sessions,
                                  int64_t samples);
/* One row of the causes (causes.c) of the session ids[index] of a read:
 * its kind, the index of its first sample, how many it holds and its blob. */
typedef int (*tl__cause_row_cb)(void *ctx, size_t index, int kind, int64_t first_index,
                                int64_t count, const uint8_t *data, size_t len);
/* The kinds a read of causes asks for, one bit a kind (1 << kind); every
 * kind, whatever its number, with TL__CAUSE_KINDS_ALL. */
#define TL__CAUSE_KINDS_ALL (-1)

/* The query of label_delays, the same for both backends but for how labels
 * sort (COLLATE: "" for SQLite, whose default is bytewise). Sessions are
 * numbered in tl_store_sessions' order, so that a delay's place is that of
 * its first session. */
#define TL__LABEL_DELAYS_SQL(COLLATE)                                                              \
  "SELECT label, delay_ns, count(*), sum(sample_count) FROM (SELECT s.label " COLLATE              \
  " AS label, s.delay_ns, s.sample_count, row_number() OVER (ORDER BY s.started_ns, s.id) AS "     \
  "place FROM sessions s JOIN hosts h ON h.id = s.host_id) x GROUP BY label, delay_ns ORDER BY "   \
  "label, min(place)"

/* What a backend does: one table per backend, filled in its own folder
 * (sqlite/ for a SQLite file, pg/ for a PostgreSQL server), in the manner
 * of curl's vtls or SQLite's VFS. Every store operation is an entry. The
 * public functions of the same names (backend.c) check what is shared and
 * call these, so nothing above store/ sees which backend runs. Each entry
 * has the contract of its public function in tl_store.h and leaves its
 * error message on the handle. A backend that cannot do something leaves
 * the entry NULL: backend.c refuses it, in one place, with a message that
 * says what can. */
struct tl_store_ops {
  const char *name; /* "SQLite file", "PostgreSQL server" */
  int server;       /* 1: holds only finished sessions, pushed from files */

  /* Opening and closing */
  /* Opens a handle whose ops are self; *out is set even on failure. */
  int (*open)(const tl_store_ops *self, tl_store **out, const char *path, int flags);
  void (*close)(tl_store *s); /* frees s and everything it holds */
  int (*schema_version)(tl_store *s);

  /* Reading */
  int (*read_begin)(tl_store *s);
  void (*read_end)(tl_store *s);
  int (*read_cache)(tl_store *s, int64_t bytes);
  int (*sessions)(tl_store *s, const tl_filter *f, tl_session_list *out);
  /* Whether a session of that UUID is there, without listing them all. */
  int (*has_session)(tl_store *s, const char *uuid, int *has);
  int (*labels)(tl_store *s, char ***labels, size_t *count);
  /* Each (label, delay) with its sessions and samples, to cb: sorted by
   * label, then by the place of the delay's first session in the order of
   * sessions (tl_store_label_summaries puts them together). */
  int (*label_delays)(tl_store *s, tl__label_delay_cb cb, void *ctx);
  int (*scan_blocks)(tl_store *s, const int64_t *ids, size_t n, tl_block_filter_cb filter,
                     tl_block_cb fn, void *ctx);
  int (*facts)(tl_store *s, int64_t session_id, tl_fact_row **rows, size_t *count);
  int (*tags)(tl_store *s, int64_t session_id, tl_fact_row **rows, size_t *count);
  /* tl_store_details_of in a few statements; NULL: session by session
   * (tl__details_one_by_one). */
  int (*details_of)(tl_store *s, const int64_t *ids, size_t n, tl_details_cb fn, void *ctx);
  int (*hosts)(tl_store *s, tl_host_row **rows, size_t *count);
  /* Calls fn with the stored summary of each session (blob NULL when it has
   * none; sample_count -1 when the session is not there), in order. */
  int (*summary_blobs)(tl_store *s, const int64_t *ids, size_t n, tl__summary_blob_cb fn,
                       void *ctx);
  /* Calls fn with each row of the kinds asked (a mask, TL__CAUSE_KINDS_ALL)
   * of the causes of the sessions ids[0..n), session by session in that
   * order, then by kind and first_index; in a few statements, never one a
   * session (a report reads every session's). None from a store older than
   * the causes. A failed read is an error, never fewer rows. */
  int (*cause_rows)(tl_store *s, const int64_t *ids, size_t n, int64_t kinds, tl__cause_row_cb fn,
                    void *ctx);

  /* Writing */
  /* A new 'running' session; the writer it returns is the backend's own
   * (tl_writer_add and the rest act on it). */
  int (*writer_begin)(tl_store *s, const tl_session_spec *spec, tl_writer **out, char uuid_out[37]);
  /* A write transaction for about bytes of data beside the samples (causes,
   * counters), refused when it would take the room kept for ending the
   * sessions; write_end commits it when err is TL_OK, else rolls it back,
   * and returns the error. */
  int (*write_begin)(tl_store *s, size_t bytes, const char *doing);
  int (*write_end)(tl_store *s, int err, const char *doing);
  /* Inside write_begin: replaces the row (session, kind, first) of causes. */
  int (*put_cause_row)(tl_store *s, int64_t session_id, int kind, int64_t first, int64_t count,
                       const uint8_t *data, size_t len, const char *doing);
  int (*recover_stale)(tl_store *s, int64_t stale_ns, int *count);
  int (*import)(tl_store *s, FILE *in, const tl_import_opts *o, tl_bad_row_cb on_bad, void *ctx,
                char uuid_out[37], int64_t *imported, int64_t *bad_rows);
  int (*merge)(tl_store *d, const char *const *paths, size_t n, tl_merge_stats *stats);
  /* The entry of the store that receives: sends the finished sessions of
   * local it lacks. */
  int (*push)(tl_store *server, tl_store *local, const tl_push_opts *opts, tl_push_stats *st);

  /* Upkeep */
  int (*info)(tl_store *s, tl_store_stats *stats);
  int (*check)(tl_store *s, tl_problem_cb report, void *ctx);
  int (*delete_session)(tl_store *s, const char *uuid);
  int (*prune)(tl_store *s, int64_t before_ns, const char *label, int64_t *sessions,
               int64_t *samples);
  int (*vacuum)(tl_store *s);
};

extern const tl_store_ops tl__sqlite_ops;
#ifdef TL_WITH_POSTGRESQL
extern const tl_store_ops tl__pg_ops;
#endif

/* The check of the sessions shared by the backends (check.c), in one pass
 * over each session's blocks. TL__CHECK_SAMPLES: every session's blocks
 * pass their checksums and decode, are numbered 0, 1, 2 ... and add up to
 * the count the session records (the same reading a report does, so
 * whatever would stop a report shows here). TL__CHECK_SUMMARIES: every
 * stored summary decodes, holds its session's sample_count and equals the
 * summary of its blocks. Each problem goes to report (those of the samples
 * first, then those of the summaries, each in the order of the sessions)
 * and adds to *problems; the result is TL_OK unless the store failed. */
enum { TL__CHECK_SAMPLES = 1, TL__CHECK_SUMMARIES = 2 };
int tl__check_sessions(tl_store *s, int what, tl_problem_cb report, void *ctx, int *problems);

/* The migrations compiled in from schema/ (tl_schema.c, generated). */
extern const char *const tl__migrations[];
extern const size_t tl__migration_count;

/* Block internals (codec.c). tl__block_seal writes the header of a block
 * whose payload_len bytes of codec data already follow it at
 * out + TL_BLOCK_HEADER, and returns the block's whole size; every codec
 * ends its encoder with it. */
size_t tl__block_seal(uint8_t *out, int codec, size_t n, int64_t seq, int64_t min, int64_t max,
                      size_t payload_len);
/* Codec 3 (codec_prefix.c): plan finds the code of a block from how many
 * of its samples' differences have each bit length 0..L (L that of max -
 * min) and returns the payload's size, which encode then writes into out
 * (that many bytes); decode reads n samples from a payload of len bytes,
 * TL_ECORRUPT when it is not one the encoder writes for [min, max]. */
typedef struct {
  unsigned L;      /* bit length of max - min */
  uint8_t len[65]; /* code length of each bit length 0..L, 0 when absent */
  size_t size;     /* payload bytes */
} tl__prefix_plan_t;
size_t tl__prefix_plan(const uint32_t *count, unsigned L, tl__prefix_plan_t *plan);
size_t tl__prefix_encode(const int64_t *v, size_t n, int64_t lo, const tl__prefix_plan_t *plan,
                         uint8_t *out);
int tl__prefix_decode(const uint8_t *in, size_t len, int64_t min, int64_t max, int64_t *out,
                      size_t n);
/* A block of schema version 1 (codec 1 data without a header) as a sealed
 * block in out (tl_block_bound(count) bytes), or 0 when it does not decode
 * to count samples between min and max, which then stays as it is and fails
 * its checksum when read. scratch holds TL_BLOCK_MAX values. */
size_t tl__block_upgrade_v1(const uint8_t *in, size_t len, int64_t seq, int64_t count, int64_t min,
                            int64_t max, int64_t *scratch, uint8_t *out);

/* The filter of tl_store_sessions as SQL (query.c). A dialect says how
 * a backend's SQL differs: param is the mark of a numbered parameter ('?'
 * for ?1, '$' for $1); running_cols the two columns that judge a
 * 'running' session (its collector's pid and its heartbeat); facts the
 * table or view of every host fact of a session (session_id, key, value);
 * order the rows' order without a limit, which tl_store_sessions makes
 * the sessions' start then id where it is not already (a file lists them
 * by id, in which its rows lie: sorting 288,000 wide rows in SQL took a
 * third of the listing). */
typedef struct {
  char param;
  const char *running_cols;
  const char *facts;
  const char *order;
} tl__sql_dialect;
enum { TL__SQL_PARAMS_MAX = 400 };
typedef struct {
  const char *text; /* NULL: the number */
  int64_t num;
} tl__sql_value;
/* The query and its parameters, params[0] being number 1. Its columns are
 * those of tl_session from id to missed_periods in the struct's order,
 * but for the host, which comes as its id (TL__SQ_HOST_ID: a fleet's rows
 * would send each host's name and fingerprint again, and the server's join
 * and copies of them took a tenth of its listing), then the pid and the
 * heartbeat. */
typedef struct {
  char sql[4096];
  size_t len;
  int overflow;
  tl__sql_value params[TL__SQL_PARAMS_MAX];
  int n;
} tl__session_query;
/* The query's columns by place, where both backends read them. */
enum {
  TL__SQ_ID,
  TL__SQ_UUID,
  TL__SQ_RUN_UUID,
  TL__SQ_LABEL,
  TL__SQ_PROBE,
  TL__SQ_HOST_ID,
  TL__SQ_STATUS,
  TL__SQ_COMMAND_LINE,
  TL__SQ_TL_VERSION,
  TL__SQ_LIBUV_VERSION,
  TL__SQ_DELAY_NS,
  TL__SQ_WARMUP,
  TL__SQ_STARTED_NS,
  TL__SQ_ENDED_NS,
  TL__SQ_SAMPLE_COUNT,
  TL__SQ_MISSED_PERIODS,
  TL__SQ_PID,
  TL__SQ_HEARTBEAT_NS
};
/* TL_EINVAL ("filter is too large") when it does not fit. */
int tl__session_query_build(tl_store *s, const tl__sql_dialect *d, const tl_filter *f,
                            tl__session_query *q);
/* The hosts a listing's rows name by id, read first in the same snapshot
 * (TL__HOST_NAMES_SQL: id, hostname, fingerprint), their strings in the
 * listing's pool. A row whose host is not among them (a file whose foreign
 * keys were not enforced) is left out, as a join leaves it. */
#define TL__HOST_NAMES_SQL "SELECT id, hostname, fingerprint FROM hosts ORDER BY id"
typedef struct {
  int64_t id;
  char *hostname, *fingerprint;
} tl__host_name;
typedef struct {
  tl__host_name *items;
  size_t count, cap;
} tl__host_names;
/* TL_ENOMEM, or TL_OK. */
int tl__host_names_add(tl__host_names *h, tl_strpool *pool, int64_t id, const char *hostname,
                       size_t hostname_len, const char *fingerprint, size_t fingerprint_len);
/* After the last add: the hosts in order of id, for look-ups. */
void tl__host_names_ready(tl__host_names *h);
/* The host of id, or NULL. */
const tl__host_name *tl__host_names_find(const tl__host_names *h, int64_t id);
void tl__host_names_free(tl__host_names *h);
/* A 'running' session whose collector is gone (tl__session_gone) made
 * 'interrupted', ended at its last heartbeat: what every reader shows,
 * even where no write could record it yet. */
/* tl_store_details_of through the facts and tags of one session at a time. */
int tl__details_one_by_one(tl_store *s, const int64_t *ids, size_t n, tl_details_cb fn, void *ctx);
int tl__session_settle(tl_store *s, tl_strpool *pool, tl_session *x, int64_t pid,
                       int64_t heartbeat_ns);
/* A new zeroed item at the end of a list a backend fills, whose strings go
 * in its pool (made here with the first); TL_ENOMEM. *cap is the room the
 * items have. tl__session_list_fit then frees the room left over. */
int tl__session_list_add(tl_session_list *list, size_t *cap, tl_session **out);
/* Room for n items up front, when there is memory for it (a hint: adding
 * grows the list past it): a list grown by doubling copies itself and
 * faults in fresh pages at each step. */
void tl__session_list_reserve(tl_session_list *list, size_t *cap, size_t n);
void tl__session_list_fit(tl_session_list *list);
/* Puts the items in order of start, then id, unless they are already. */
void tl__session_list_order(tl_session_list *list);

/* TL_OK when entry (whether s's backend has the entry for doing) is true;
 * otherwise TL_EUNAVAIL with a message that doing (a phrase: "merging")
 * needs a database file. Every refusal of a backend goes through it. */
int tl__store_can(tl_store *s, int entry, const char *doing);

/* Records a message on the store and returns err. */
int tl__store_fail(tl_store *s, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Records "PATH: session UUID, block SEQ: why (run 'tlstore check')" and
 * returns TL_ECORRUPT. */
#define TL__CHECK_HINT " (run 'tlstore check')"
int tl__block_fail(tl_store *s, const tl_block *b, const char *why);

/* What every backend's scan_blocks checks of a session's blocks as it reads
 * them in order (verify.c): each block's number follows the last and its
 * count, min and max are possible (tl__block_run_next, before the block is
 * handed over; it also sets b->session_uuid), and at the end they hold the
 * sample_count the session records, read in the same snapshot as the
 * blocks (tl__block_run_end). Either fails with TL_ECORRUPT naming the
 * session. */
typedef struct {
  int64_t id;       /* the session's */
  const char *uuid; /* the session's, for messages */
  int64_t recorded; /* its sample_count */
  int64_t held, next_seq;
} tl__block_run;
/* Frees the strings of one session of a list. */
void tl__session_free(tl_session *x);

int tl__block_run_next(tl_store *s, tl__block_run *r, tl_block *b);
int tl__block_run_end(tl_store *s, const tl__block_run *r);

/* Summaries (summary.c). A summarizer holds the memory of computing one
 * (a histogram of TL_SUMMARY_BUCKETS counts), reused from session to session. */
typedef struct tl__summarizer tl__summarizer;
tl__summarizer *tl__summarizer_new(void);
void tl__summarizer_free(tl__summarizer *z);
/* The summary of a session from its stored blocks (verified as a report
 * reads them); *out lives in z until its next use. */
int tl__summary_compute(tl_store *s, tl__summarizer *z, int64_t session_id, const tl_summary **out);
/* The same in steps, for a caller that reads the samples anyway: begin,
 * add every sample of the session in any order, then finish, which reads
 * from s only the blocks that hold the percentiles' ranks. */
void tl__summary_begin(tl__summarizer *z);
void tl__summary_add(tl__summarizer *z, const int64_t *v, size_t n);
/* For a caller that adds samples before it knows they are stored: the
 * totals before, then, if they were not stored, the samples v[0..n) added
 * since taken back. */
void tl__summary_totals(const tl__summarizer *z, tl_summary *saved);
void tl__summary_take_back(tl__summarizer *z, const tl_summary *saved, const int64_t *v, size_t n);
int tl__summary_finish(tl_store *s, tl__summarizer *z, int64_t session_id, const tl_summary **out);
/* finish without reading any block: 0 with *out when the samples added
 * settle every percentile (the usual case), 1 when some need their blocks
 * read again (tl__summary_compute does). */
int tl__summary_finish_quick(tl__summarizer *z, const tl_summary **out);
/* tl_store_summaries with fn run on a second thread while this one reads
 * the next: the same calls in the same order, the same errors. fn must not
 * touch the store. This thread decodes share eighths of the summaries
 * (0..8) and the worker the rest, or, with TL__SHARE_PACED, as many as
 * keep either from waiting on the other (tests fix the share). */
enum { TL__SHARE_PACED = -1 };
int tl__store_summaries_threaded(tl_store *s, const int64_t *ids, size_t n, tl_summary_cb fn,
                                 void *ctx, int share);
/* The stored form: at most tl__summary_bound(m) bytes. Decoding verifies the
 * version, checksum and layout (TL_ECORRUPT with a static *why) and puts the
 * histogram's counts into hist (room for TL_SUMMARY_BUCKETS). */
size_t tl__summary_bound(const tl_summary *m);
size_t tl__summary_encode(const tl_summary *m, uint8_t *out);
int tl__summary_decode(const uint8_t *blob, size_t len, int64_t *hist, tl_summary *m,
                       const char **why);
/* The same into a hist that is all zeros, without clearing its span: only
 * the buckets with samples are written, their offsets listed in nz_at (room
 * for TL_SUMMARY_BUCKETS) and m->nz_at. After a failure, m's span may hold
 * some of them. */
int tl__summary_decode_sparse(const uint8_t *blob, size_t len, int64_t *hist, uint32_t *nz_at,
                              tl_summary *m, const char **why);
int tl__summary_equal(const tl_summary *a, const tl_summary *b);
/* A session's summary for a copy of it (tlstore merge, tlstore push): the
 * source's stored one, byte for byte, when it decodes and agrees in count,
 * extremes and sum with the samples the copy reads and verifies anyway
 * (tlstore check holds the rest against them); otherwise, when there is
 * none or it is damaged or disagrees, one made from those samples. begin
 * reads the stored one of session_id in src; add is handed every sample of
 * the session as the copy reads it; finish gives the blob to store, which
 * lives in p until its next begin. Failures leave a message on src. */
typedef struct tl__summary_pick tl__summary_pick;
tl__summary_pick *tl__summary_pick_new(void);
void tl__summary_pick_free(tl__summary_pick *p);
int tl__summary_pick_begin(tl__summary_pick *p, tl_store *src, int64_t session_id);
void tl__summary_pick_add(tl__summary_pick *p, const int64_t *v, size_t n);
int tl__summary_pick_finish(tl__summary_pick *p, tl_store *src, int64_t session_id,
                            const uint8_t **blob, size_t *len);
/* tl__check_sessions(s, TL__CHECK_SUMMARIES, ...). */
int tl__check_summaries(tl_store *s, tl_problem_cb report, void *ctx, int *problems);

/* A heartbeat older than this marks a 'running' session from another host
 * stale (one from this host is judged by its process alone). */
#define TL_STALE_DEFAULT_NS (10LL * 60 * 1000000000LL)
/* The stale limit: TL_STALE_SECONDS from the environment when it is a
 * positive number (tests set a short one), else TL_STALE_DEFAULT_NS. */
int64_t tl__stale_ns(void);

/* Whether a 'running' session's collector is gone (tl__session_gone's
 * comment in session.c says when): every reader, and tlstore push and merge,
 * show such a session 'interrupted', even where no write can mark it so (a
 * full disk, a read-only file), and every one of them agrees. */
int tl__session_gone(const char *hostname, int64_t pid, int64_t started_ns, int64_t heartbeat_ns,
                     int64_t stale_ns);

/* Unix time now, nanoseconds. */
int64_t tl__now_ns(void);

/* Import rows (import.c), kept apart from any I/O so they can be fuzzed.
 * tl__import_parse_line reads one line (without its newline) of a CSV or
 * JSON-lines file: 1 and *out_ns for a sample, 0 for a line without one
 * (blank, or a '#' comment in CSV), TL_EINVAL with a reason in why.
 * column is the CSV field that holds the latency, unit_ns the unit of bare
 * numbers. tl__import_parse_header reads a CSV header line: TL_OK and the
 * latency column and its unit, or TL_EINVAL. */
int tl__import_parse_line(tl_samples_format format, const char *line, size_t len, size_t column,
                          int64_t unit_ns, int64_t *out_ns, char *why, size_t whylen);
int tl__import_parse_header(const char *line, size_t len, size_t *column, int64_t *unit_ns,
                            char *why, size_t whylen);

/* An import (import.c) as every backend that stores one does it. The plan
 * is the new session, made from the options and checked (the format, the
 * unit, the host facts: TL_EINVAL with the message on s); it records as
 * its command line the tlstore import that makes it again. */
typedef struct {
  tl_session_spec spec; /* points into the rest */
  char run_uuid[37];
  char fingerprint[300];
  tl_fact facts[TL_IMPORT_FACTS_MAX + 1];
  char values[TL_IMPORT_FACTS_MAX + 1][TL_TAG_VALUE_MAX + 1];
  char *command_line;
} tl__import_plan;
int tl__import_plan_make(tl_store *s, const tl_import_opts *o, tl__import_plan *p);
void tl__import_plan_free(tl__import_plan *p);
/* Takes n (at most TL_BLOCK_MAX) samples read, in order. */
typedef int (*tl__import_sink)(void *ctx, const int64_t *v, size_t n);
/* Reads the whole input, in large chunks, through the row parser: every
 * sample to sink, every bad row to on_bad (may be NULL) and counted in
 * *bad_rows. TL_EINVAL when a row was bad (unless o->skip_bad) or no row
 * held a sample; the caller then stores nothing. */
int tl__import_read(tl_store *s, FILE *in, const tl_import_opts *o, tl_bad_row_cb on_bad, void *ctx,
                    tl__import_sink sink, void *sink_ctx, int64_t *bad_rows);

/* tl_store_export's hgrm format (hgrm.c). */
int tl__write_hgrm(tl_store *s, const tl_filter *f, FILE *out);

/* What the CPU offers beyond tl's baseline (cpu.c), a set of TL__CPU_*;
 * 0 where it is all baseline (not x86-64). */
enum { TL__CPU_CRC32C = 1, TL__CPU_LZCNT = 2 };
unsigned tl__cpu_features(void);
/* From now on, only those of set: the tests run both builds of a loop so.
 * Not while other threads decode. */
void tl__cpu_features_allow(unsigned set);

/* The 8 bytes at p as a little-endian integer, wherever p points (the
 * block codec's words, the import's digits). */
static inline uint64_t tl__load_le64(const void *p) {
  uint64_t w;
  memcpy(&w, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  w = __builtin_bswap64(w);
#endif
  return w;
}

#endif
