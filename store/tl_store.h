/* tl_store.h: the one door into tl's results database. What every tl
 * program shares without a database (errors, messages, validation, paths)
 * is tl_base.h, which this header includes.
 *
 * A tl database is a SQLite file. tl_store_open() creates or upgrades it with
 * the migrations compiled in from schema/, and refuses files that are not tl
 * databases or come from a newer tl. Every write is a transaction: a killed
 * writer leaves the database as of its last commit. */
#ifndef TL_STORE_H
#define TL_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tl_base.h"

/* ------------------------------------------------------------------------ */
/* Host keys: the host facts a person names by a short word (hostkey.c)      */

typedef enum {
  TL_KEY_TEXT,  /* compared as text, in natural order ("5.15" before "6.1") */
  TL_KEY_COUNT, /* a whole number (cpus) */
  TL_KEY_BYTES, /* a size in bytes, grouped by size class (memory) */
} tl_key_kind;

typedef struct {
  const char *name; /* the word: "memory", "cpus", "vm" ... */
  const char *fact; /* the stored fact: "mem.total_bytes" ... */
  tl_key_kind kind;
  const char *about; /* a few words for listings */
  const char *limit; /* a fact that may lower it (a cgroup's limit), or NULL */
  const char *unit;  /* a count's unit in a group's name ("2 CPUs"), or NULL: a bare number */
  int session_field; /* the session's own column (its host name), not a recorded fact */
} tl_host_key;

/* Every host key, in the order listings show them. */
const tl_host_key *tl_host_keys(size_t *count);
/* The key of that name, or NULL. */
const tl_host_key *tl_host_key_find(const char *name);
/* "KEY=VALUE" as a person gives it to tlstore import --fact (memory=1G,
 * cpus=2, vm=kvm ...): the key (hostname is refused: --host says it) and
 * the value as tl stores it (bytes for memory), validated, into value. */
int tl_host_fact_parse(const char *arg, const tl_host_key **key, char *value, size_t len, char *why,
                       size_t whylen);
/* The size class of a machine with this much memory, in bytes, and its name
 * ("512M", "1G", "1.5G") into name (may be NULL): the smallest of 2^k and
 * 1.5 x 2^k bytes (from 64 MiB) at or above bytes. A machine sold as 1 GB
 * reports a little less than 1 GiB, and lands in the 1G class. */
int64_t tl_memory_class(int64_t bytes, char *name, size_t len);

/* ------------------------------------------------------------------------ */
/* The store                                                                 */

typedef struct tl_store tl_store;
enum { TL_LEFT_OUT_MAX = 64 }; /* damaged sessions one handle leaves out at most */

enum {
  TL_STORE_READONLY = 1 << 0, /* open for reading only; never creates */
  TL_STORE_NOCREATE = 1 << 1, /* fail with TL_ENOTFOUND if the file is missing */
  TL_STORE_SERVER = 1 << 2,   /* path is a PostgreSQL connection string (URI or key=value) */
};

/* Whether path names a PostgreSQL server ("postgresql://..." or
 * "postgres://...") rather than a SQLite file. */
int tl_store_is_server(const char *path);

/* Opens (and creates, unless a flag says otherwise) the database at path,
 * applying pending migrations. A server (tl_store_is_server, or the flag
 * TL_STORE_SERVER) is reached through libpq: its password comes from
 * ~/.pgpass or PGPASSWORD, and a connection string that holds one is
 * refused (TL_EINVAL), so that it never shows in a process list or a
 * message. Opening a server that has no tl tables creates them unless
 * TL_STORE_READONLY; a server holds only finished sessions, pushed from
 * files (tl_store_push), and cannot be collected, merged or imported into
 * (TL_EUNAVAIL). On failure *out is still set when memory
 * allowed, so that tl_store_errmsg() can say what went wrong; close it. */
int tl_store_open(tl_store **out, const char *path, int flags);
/* Closes the store; NULL is fine. */
void tl_store_close(tl_store *store);
/* The message of the last failure on this handle ("" when none). */
const char *tl_store_errmsg(const tl_store *store);
/* Schema version of the open database and of this tl. */
int tl_store_schema_version(tl_store *store);
int tl_schema_latest(void);

/* Sessions left 'running' by a collector that is gone (same host, process no
 * longer alive, or no heartbeat for stale_ns) are marked 'interrupted'.
 * tl_store_open() calls this with a default; *count may be NULL. */
int tl_store_recover_stale(tl_store *store, int64_t stale_ns, int *count);

/* A named fact about a host, with where it was read from. */
typedef struct {
  const char *key; /* "cpu.model", "kernel.release", "vm" ... */
  const char *value;
  const char *evidence; /* "/proc/cpuinfo", "cpuid 0x40000000" ... or "" */
} tl_fact;

/* What a collector declares when it starts a session. */
typedef struct {
  const char *run_uuid; /* groups the sessions of one tlcollect run */
  const char *label;
  const char *probe;
  int64_t delay_ns;
  int32_t warmup;
  const char *command_line;
  const char *host_fingerprint;
  const char *hostname;
  const char *libuv_version;
  const char *const *tag_keys; /* tag_count validated key=value pairs */
  const char *const *tag_values;
  size_t tag_count;
  const tl_fact *facts;
  size_t fact_count;
  int64_t started_ns; /* when it started (an import's --start); 0: now */
} tl_session_spec;

typedef struct tl_writer tl_writer;

/* Starts a session (status 'running') and returns a writer that appends its
 * samples. uuid_out receives the new session's UUID (37 bytes). */
int tl_writer_begin(tl_store *store, const tl_session_spec *spec, tl_writer **out,
                    char uuid_out[37]);
/* Buffers samples in memory; nothing touches the disk. */
int tl_writer_add(tl_writer *w, const int64_t *latency_ns, size_t n);
/* Adds to the session's count of missed periods (periodic probes). */
void tl_writer_add_missed(tl_writer *w, int64_t missed);
/* Commits the buffered samples in one transaction. On failure the samples
 * stay buffered, so a later flush can still store them. */
int tl_writer_flush(tl_writer *w);
/* Flushes, sets the status ('complete' or 'interrupted') and end time, and
 * frees the writer, even on failure. When the flush fails the session is
 * still ended, as 'interrupted' with the samples committed before, and the
 * flush's error is returned. */
int tl_writer_end(tl_writer *w, const char *status);
/* The id of the writer's session, for tl_store_scan. */
int64_t tl_writer_session_id(const tl_writer *w);
/* Samples added so far (stored or buffered). */
int64_t tl_writer_count(const tl_writer *w);
/* Adds host facts to the session, replacing facts of the same key, in one
 * transaction (the load at the end of a session, say). */
int tl_writer_add_facts(tl_writer *w, const tl_fact *facts, size_t n);

/* ------------------------------------------------------------------------ */
/* Reading                                                                   */

/* One session as stored. Strings are owned by the list they came in. */
typedef struct {
  int64_t id;
  char *uuid;
  char *run_uuid;
  char *label;
  char *probe;
  char *hostname;
  char *host_fingerprint;
  char *status;
  char *command_line;
  char *tl_version;
  char *libuv_version;
  int64_t delay_ns;
  int64_t warmup;
  int64_t started_ns;
  int64_t ended_ns; /* 0 while running */
  int64_t sample_count;
  int64_t missed_periods;
} tl_session;

typedef struct {
  tl_session *items;
  size_t count;
  /* The items' strings, when the list holds them in a pool (every list
   * tl_store_sessions makes that holds a session: a session then costs
   * its row and the strings it alone has); NULL when each string is
   * malloc'd on its own, and in an empty list, which holds nothing. */
  tl_strpool *strings;
} tl_session_list;

/* Which sessions a query covers; zero fields match everything. */
typedef struct {
  const char *const *labels; /* label_count labels, any of them */
  size_t label_count;
  const char *probe;
  int64_t delay_ns;            /* -1 for any delay */
  int64_t since_ns, until_ns;  /* started in [since, until); 0 for open */
  const char *host;            /* hostname or fingerprint prefix */
  const char *const *tag_keys; /* all of these key=value pairs */
  const char *const *tag_values;
  size_t tag_count;
  const char *status; /* NULL: any */
  /* Sessions that record one of these host facts (fact_key_count of them),
   * and that carry the tag key has_tag, with a value other than "" and
   * "unknown"; none given: any session. */
  const char *const *fact_keys;
  size_t fact_key_count;
  const char *has_tag;
  /* At most this many sessions, in no set order (0: all, oldest first): for
   * what one session answers, such as whether some session records a fact,
   * without listing every session. */
  size_t limit;
} tl_filter;

void tl_filter_init(tl_filter *f);

/* A filter made from command-line options, with room for the labels and
 * tags it points to (which point into the option values: keep them alive). */
enum { TL_FILTER_LABELS_MAX = 64, TL_FILTER_TAGS_MAX = 32 };
typedef struct {
  tl_filter f;
  const char *labels[TL_FILTER_LABELS_MAX];
  const char *tag_keys[TL_FILTER_TAGS_MAX], *tag_values[TL_FILTER_TAGS_MAX];
  char tag_bufs[TL_FILTER_TAGS_MAX][TL_TAG_KEY_MAX + TL_TAG_VALUE_MAX + 2];
} tl_filter_args;
void tl_filter_args_init(tl_filter_args *a);
/* The filter option --name with value v: label and tag (both repeatable),
 * probe, delay (a bare number is ms), since, until, host, status. Returns 1
 * when taken, 0 when name is no filter option, TL_EINVAL with a one-line
 * reason in why for a bad value (the caller names the option). */
int tl_filter_option(tl_filter_args *a, const char *name, const char *v, char *why, size_t whylen);

/* Sessions matching the filter, oldest first. Free with tl_session_list_free. */
int tl_store_sessions(tl_store *store, const tl_filter *filter, tl_session_list *out);
void tl_session_list_free(tl_session_list *list);
/* Keeps the sessions whose keep[i] is non-zero, in order, and frees what
 * only the others held (all of it when none is kept). */
void tl_session_list_keep(tl_session_list *list, const char *keep);

/* Damaged sessions. A read that finds a session's samples damaged fails
 * with TL_ECORRUPT naming it; tl_store_damaged_session then gives its id (0
 * when the failure named none). tl_store_leave_out makes every later
 * tl_store_sessions of this handle leave that session out, which is how
 * tlreport --skip-damaged compares the others (at most TL_LEFT_OUT_MAX). */
int64_t tl_store_damaged_session(const tl_store *store);
int tl_store_leave_out(tl_store *store, int64_t session_id);

/* Distinct labels in the database, sorted; free with tl_strings_free. */
int tl_store_labels(tl_store *store, char ***labels, size_t *count);
void tl_strings_free(char **strings, size_t count);

/* One label as tlstore info shows it: its sessions, their samples, and the
 * requested delays in the order of each delay's first session (oldest
 * first, as tl_store_sessions lists them). */
typedef struct {
  char *label;
  int64_t sessions, samples;
  int64_t *delays_ns;
  size_t delay_count;
} tl_label_summary;
/* Every label's summary, sorted by label, from one query whatever the number
 * of sessions. Free with tl_label_summaries_free (which accepts NULL). */
int tl_store_label_summaries(tl_store *store, tl_label_summary **out, size_t *count);
void tl_label_summaries_free(tl_label_summary *rows, size_t count);

/* Calls fn with the samples of the session in order, a block at a time
 * (at most TL_BLOCK_MAX values per call). A non-zero return from fn stops
 * the scan and is returned. */
enum { TL_BLOCK_MAX = 4096 };
typedef int (*tl_samples_cb)(void *ctx, const int64_t *latency_ns, size_t n);
int tl_store_scan(tl_store *store, int64_t session_id, tl_samples_cb fn, void *ctx);

/* One stored block of samples, still encoded (see the blocks below). data
 * and session_uuid are valid only during the callback that receives them. */
typedef struct {
  int64_t session_id, seq;
  const char *session_uuid; /* for messages */
  int64_t count;            /* 1..TL_BLOCK_MAX samples */
  int64_t min_ns, max_ns;
  int codec; /* TL_CODEC_* */
  const uint8_t *data;
  size_t len;
} tl_block;
/* Decides from a block's header (data is NULL) whether to read it: non-zero
 * to read, 0 to skip without decoding. */
typedef int (*tl_block_filter_cb)(void *ctx, const tl_block *b);
typedef int (*tl_block_cb)(void *ctx, const tl_block *b);

/* Calls fn with each block of the n sessions, session by session in the
 * order given and in sample order within each, skipping the blocks that
 * filter (may be NULL) refuses. The caller decodes with tl_block_decode
 * (which verifies the block's checksum), which lets it skip, split or
 * parallelise work. A block with an impossible count, min or max, a missing
 * block, or blocks that do not add up to the session's sample_count are
 * TL_ECORRUPT naming the session; a non-zero return from fn stops the scan. */
int tl_store_scan_blocks(tl_store *store, const int64_t *session_ids, size_t n,
                         tl_block_filter_cb filter, tl_block_cb fn, void *ctx);

/* A summary of a session (summary.c, its percentiles and buckets
 * summary_buckets.c; its stored form is in docs/schema.md):
 * count, extremes, exact sums, its own exact nearest-rank values at
 * tl_summary_pcts, and a log-linear histogram: exact below 2^SUB_BITS ns,
 * then 2^SUB_BITS buckets per power of two (tl_summary_bucket). */
enum { TL_SUMMARY_SUB_BITS = 11, TL_SUMMARY_PCTS = 5, TL_SUMMARY_VERSION = 2 };
enum { TL_SUMMARY_BUCKETS = (64 - TL_SUMMARY_SUB_BITS + 1) << TL_SUMMARY_SUB_BITS };
extern const double tl_summary_pcts[TL_SUMMARY_PCTS]; /* 50, 90, 99, 99.9, 99.99 */
typedef struct {
  int64_t count, min_ns, max_ns; /* 0 when the session has no samples */
  unsigned __int128 sum, sumsq;  /* of the samples and of their squares, exact */
  int64_t pct_ns[TL_SUMMARY_PCTS];
  size_t hist_first, hist_len; /* the buckets from min_ns's to max_ns's */
  const int64_t *hist;         /* hist_len counts, of buckets hist_first... */
  /* When not NULL, the offsets in hist of its nz non-zero counts, in order:
   * a reader may visit only those (a long tail's span is mostly zeros). */
  const uint32_t *nz_at;
  size_t nz;
} tl_summary;
/* The histogram bucket of a latency, and the latencies [lo, hi] it holds
 * (inline: a report computes it for every sample it reads). */
static inline size_t tl_summary_bucket(int64_t latency_ns) {
  enum { SUB = 1 << TL_SUMMARY_SUB_BITS };
  uint64_t u = (uint64_t)latency_ns;
  if (u < SUB)
    return (size_t)u;
  int e = 63 - __builtin_clzll(u);
  return (size_t)(e - TL_SUMMARY_SUB_BITS + 1) * SUB +
         (size_t)((u >> (e - TL_SUMMARY_SUB_BITS)) & (SUB - 1));
}
void tl_summary_bucket_bounds(size_t bucket, int64_t *lo, int64_t *hi);
/* Calls fn with the summary of each of the n sessions, in the order given
 * (index: its place in ids); the summary is valid during the call. A stored
 * summary is verified (checksum, layout, count against the session's
 * sample_count; TL_ECORRUPT naming the session otherwise); a session without
 * one (running, or on a server) is summarised from its samples. A non-zero
 * return from fn stops and is returned. */
typedef int (*tl_summary_cb)(void *ctx, size_t index, const tl_summary *summary);
int tl_store_summaries(tl_store *store, const int64_t *session_ids, size_t n, tl_summary_cb fn,
                       void *ctx);

/* A read snapshot: between begin and end every read on this handle sees the
 * database as it was at begin, even while a collector commits. end may be
 * called without begin. */
int tl_store_read_begin(tl_store *store);
void tl_store_read_end(tl_store *store);
/* Lets the handle keep up to bytes of the database it read in memory (0:
 * its usual amount), for a reader that reads the same parts again and
 * again; a store that keeps nothing itself (a server) ignores it. */
int tl_store_read_cache(tl_store *store, int64_t bytes);

/* Host facts of a session, as key/value/evidence triples. */
typedef struct {
  char *key, *value, *evidence;
} tl_fact_row;
int tl_store_facts(tl_store *store, int64_t session_id, tl_fact_row **rows, size_t *count);
int tl_store_tags(tl_store *store, int64_t session_id, tl_fact_row **rows, size_t *count);
/* The facts and tags of the sessions session_ids[0..n), each as tl_store_facts and
 * tl_store_tags give it, in a few statements when the sessions are many (a report reads every
 * session's): fn gets each session in turn, by its place in session_ids, with rows that live
 * until it returns (none for an id no session has), and must not use the store (a server's next
 * statement may be on its way). A non-zero return of fn stops the read and is returned, as is a
 * failure of the store. */
typedef int (*tl_details_cb)(void *ctx, size_t index, const tl_fact_row *facts, size_t nfacts,
                             const tl_fact_row *tags, size_t ntags);
int tl_store_details_of(tl_store *store, const int64_t *session_ids, size_t n, tl_details_cb fn,
                        void *ctx);
void tl_fact_rows_free(tl_fact_row *rows, size_t count);

/* A host in the database, with the facts of its latest session. */
typedef struct {
  char *fingerprint, *hostname;
  int64_t first_seen_ns, last_seen_ns;
  int64_t sessions;          /* sessions collected on it */
  int64_t latest_session_id; /* 0 when it has none */
  tl_fact_row *facts;        /* of the latest session, sorted by key */
  size_t fact_count;
} tl_host_row;

/* Every host, most recently seen first. Free with tl_host_rows_free. */
int tl_store_hosts(tl_store *store, tl_host_row **rows, size_t *count);
void tl_host_rows_free(tl_host_row *rows, size_t count);
/* The value of key among rows, or NULL. */
const char *tl_fact_rows_get(const tl_fact_row *rows, size_t count, const char *key);
/* The value a session has under key k, from its facts: the recorded fact,
 * or, for a key with a limit (cpus, memory), the limit when it is smaller
 * (a 2-CPU host whose cgroup leaves 1 CPU has 1). Points into facts or
 * into buf; NULL when the fact was not recorded. */
const char *tl_host_key_value(const tl_host_key *k, const tl_fact_row *facts, size_t n, char *buf,
                              size_t len);
/* The value of a session with host name hostname and facts under key k:
 * its host name for the key that is the session's own column (hostname),
 * else tl_host_key_value. */
const char *tl_host_key_of(const tl_host_key *k, const char *hostname, const tl_fact_row *facts,
                           size_t n, char *buf, size_t len);

/* ------------------------------------------------------------------------ */
/* Maintenance                                                               */

typedef struct {
  int schema_version;
  int schema_latest;  /* the version this tl writes, for this kind of store */
  int64_t file_bytes; /* of the file, or of the server's database */
  int64_t hosts, sessions, samples, blocks;
  int64_t sample_bytes; /* size of the encoded sample data */
} tl_store_stats;

int tl_store_info(tl_store *store, tl_store_stats *stats);

/* Integrity and schema checks. Each problem found is passed to report (may be
 * NULL); returns TL_OK when none, TL_ECORRUPT otherwise. */
typedef void (*tl_problem_cb)(void *ctx, const char *problem);
int tl_store_check(tl_store *store, tl_problem_cb report, void *ctx);

/* Deletes one session (its samples, tags and facts) by UUID. TL_ENOTFOUND
 * if there is none; TL_EINVAL if it is still running. */
int tl_store_delete(tl_store *store, const char *uuid);

/* Deletes the sessions started before before_ns (of one label, when label is
 * not NULL), except running ones, in one transaction. Counts may be NULL. */
int tl_store_prune(tl_store *store, int64_t before_ns, const char *label, int64_t *sessions,
                   int64_t *samples);
/* tlstore prune's options as a person gives them: --before DATE (required)
 * and --label L. Zero-initialise. */
typedef struct {
  int64_t before_ns;
  int have_before;   /* whether --before was given */
  const char *label; /* NULL: every label */
} tl_prune_args;
/* The prune option --name with value v (listing.c): 1 when taken, 0 when
 * name is no prune option, TL_EINVAL with a one-line reason in why for a
 * bad value (the caller names the option). */
int tl_prune_option(tl_prune_args *a, const char *name, const char *v, char *why, size_t whylen);

/* Rebuilds the file to give the space of deleted data back to the system. */
int tl_store_vacuum(tl_store *store);

/* ------------------------------------------------------------------------ */
/* Merging, importing, exporting                                             */

typedef struct {
  int64_t sessions_added, sessions_present; /* present: same UUID, same content */
  int64_t samples_added;
  int64_t hosts_added;
  int64_t sessions_running;   /* still being collected: left for a later merge */
  int64_t sessions_completed; /* copied before they ended, now replaced whole */
} tl_merge_stats;

/* Copies the hosts, sessions, tags, facts and samples of the tl databases at
 * paths (opened read-only) into store, in one transaction: all of it or,
 * on any error, nothing. A session whose UUID is already in store is
 * skipped when its content is the same, and is TL_ECONFLICT naming the
 * session and the file otherwise. A session still running (its collector
 * alive) is not copied, so that no part of it is taken; a copy taken
 * before its session ended is replaced by the ended one. stats may be
 * NULL. */
int tl_store_merge(tl_store *store, const char *const *paths, size_t n, tl_merge_stats *stats);

typedef enum { TL_SAMPLES_CSV = 1, TL_SAMPLES_JSONL, TL_SAMPLES_HGRM } tl_samples_format;

/* Parses "csv", "jsonl" or "hgrm" (TL_EINVAL otherwise). */
int tl_samples_format_parse(const char *s, tl_samples_format *out);

enum { TL_IMPORT_FACTS_MAX = 16 };
typedef struct {
  tl_samples_format format; /* TL_SAMPLES_CSV or TL_SAMPLES_JSONL */
  const char *label;        /* the session's label, probe and requested delay */
  const char *probe;
  int64_t delay_ns;
  int64_t unit_ns;          /* unit of bare numbers: 1 (ns, default), 1000, 1000000 */
  const char *hostname;     /* host to record; NULL: "imported" */
  const char *source;       /* file name; its last part goes into the command line */
  int skip_bad;             /* import the good rows of a file with bad ones */
  int64_t started_ns;       /* when the samples were measured; 0: now */
  const char *const *facts; /* fact_count "KEY=VALUE" host facts (tl_host_fact_parse) */
  size_t fact_count;
} tl_import_opts;

void tl_import_opts_init(tl_import_opts *o);

/* tlstore import's options as a person gives them, gathered into opts. */
typedef struct {
  tl_import_opts opts;
  const char *facts[TL_IMPORT_FACTS_MAX];
} tl_import_args;
/* Everything unset: no format, no delay (the options a person must give). */
void tl_import_args_init(tl_import_args *a);
/* The import option --name with value v (NULL for a flag): format (csv or
 * jsonl), label, probe, delay (a bare number is ms), unit (ns, us, ms),
 * host, start, fact (repeatable), skip-bad. Returns 1 when taken, 0 when
 * name is no import option, TL_EINVAL with a one-line reason in why. */
int tl_import_option(tl_import_args *a, const char *name, const char *v, char *why, size_t whylen);
/* The first option an import needs and lacks ("format", "label", "probe",
 * "delay"), with the values it takes in why; NULL when none is missing. */
const char *tl_import_missing(const tl_import_args *a, char *why, size_t whylen);

/* A row that could not be read: its 1-based line number and why. */
typedef void (*tl_bad_row_cb)(void *ctx, int64_t line, const char *why);

/* Reads latencies from in (formats in the README) into one new session,
 * in one transaction. The session starts at started_ns, carries the host
 * facts given (a bad one is TL_EINVAL) and records as its command line the
 * tlstore import that reproduces it, with the file's name and no folders. Every bad row is passed
 * to bad (may be NULL); with any bad row and no skip_bad nothing is stored and the result is
 * TL_EINVAL. A file without a single sample is TL_EINVAL too. uuid_out (37 bytes, may be NULL)
 * receives the session's UUID; *imported and *bad_rows may be NULL. */
int tl_store_import(tl_store *store, FILE *in, const tl_import_opts *opts, tl_bad_row_cb bad,
                    void *ctx, char uuid_out[37], int64_t *imported, int64_t *bad_rows);

/* Writes the raw samples of the sessions matching filter to out, oldest
 * session first and in measured order, as CSV (header
 * "label,probe,delay_ns,latency_ns") or JSON lines. Streams: memory does not
 * grow with the number of samples. *count (may be NULL) receives how many.
 * TL_SAMPLES_HGRM writes their HdrHistogram percentile distribution instead
 * ("hgrm": values in milliseconds, each an exact nearest-rank percentile, all
 * from one read snapshot; *count is left alone); no matching sample is
 * TL_ENOTFOUND. out is not flushed: its caller flushes it and sees why a last write failed
 * (tl_cli_finish for stdout). A write that failed already is TL_EIO. */
int tl_store_export(tl_store *store, const tl_filter *filter, tl_samples_format format, FILE *out,
                    int64_t *count);

/* ------------------------------------------------------------------------ */
/* Exact distributions                                                       */

enum { TL_MAX_PCTS = 16 };

/* The distribution of the samples of a set of sessions. */
typedef struct {
  int64_t count;
  int64_t min_ns, max_ns;
  double mean_ns, stddev_ns; /* population standard deviation */
  size_t pct_count;
  double pcts[TL_MAX_PCTS];    /* requested percentiles, 0..100 */
  int64_t pct_ns[TL_MAX_PCTS]; /* their exact nearest-rank values */
} tl_dist;

/* Computes the distribution of all samples of the given sessions. With no
 * samples, count is 0 and the rest is zero. Errors leave a message on the
 * store. */
int tl_dist_compute(tl_store *store, const int64_t *session_ids, size_t n, const double *pcts,
                    size_t pct_count, tl_dist *out);

/* The same over values in memory (sorts a copy); for tests and small sets. */
int tl_dist_of_values(const int64_t *values, size_t n, const double *pcts, size_t pct_count,
                      tl_dist *out);

/* A sweep: exact values at any number of ranks of a group of sessions, and
 * at given percentiles of each of its sessions, found in the same passes.
 * Use: tl_sweep_store, tl_sweep_first (pass 1: counts, extremes, sums),
 * then tl_sweep_want for each rank of the group and optionally
 * tl_sweep_count_values or tl_sweep_tap, then tl_sweep_finish (usually one more pass), then read
 * the values; tl_sweep_close. Errors leave a message on the store. */
typedef struct tl_sweep tl_sweep;
/* Which session of the sweep values belong to (its index in the list). */
typedef int (*tl_sweep_session_cb)(void *ctx, size_t session, const int64_t *v, size_t n);

/* A sweep over the sessions ids[0..n) (not copied), finding each session's
 * own values at session_pcts[0..session_np) (valid percentiles, may be 0).
 * NULL when out of memory. */
tl_sweep *tl_sweep_store(tl_store *store, const int64_t *ids, size_t n, const double *session_pcts,
                         size_t session_np);
void tl_sweep_close(tl_sweep *w);
/* Pass 1; tap (may be NULL) also sees every sample, session by session in
 * stored order, on one of the pass's two threads. */
int tl_sweep_first(tl_sweep *w, tl_sweep_session_cb tap, void *tap_ctx);
/* tl_sweep_first of ws[0..n) (tap taps[k], tap_ctxs[k]), sweeps of one store:
 * their summaries read in one reading, a summary that several sweeps' lists
 * name (in the same order) read once for all of them. */
int tl_sweep_first_all(tl_sweep *const *ws, size_t n, const tl_sweep_session_cb *taps,
                       void *const *tap_ctxs);
/* tl_dist_compute, while tap (may be NULL) sees every sample of the
 * sessions as tl_sweep_first's does: one reading of the samples for both. */
int tl_dist_compute_tap(tl_store *store, const int64_t *session_ids, size_t n, const double *pcts,
                        size_t pct_count, tl_sweep_session_cb tap, void *tap_ctx, tl_dist *out);
/* After pass 1: count, min, max, mean and stddev (pct_count 0) of session
 * set, or of the group for set n; its sample count. */
void tl_sweep_dist(const tl_sweep *w, size_t set, tl_dist *out);
int64_t tl_sweep_count(const tl_sweep *w, size_t set);
/* Asks for the group's value at a 1-based rank (1..count); returns its
 * handle, or SIZE_MAX when out of memory or out of range. */
size_t tl_sweep_want(tl_sweep *w, int64_t rank);
/* The top of the group's histogram bucket that holds rank (within 1/2048
 * above the value there, and at most the maximum): a bound known after
 * pass 1. */
int64_t tl_sweep_bucket_top(const tl_sweep *w, int64_t rank);
/* After pass 1 from a store's summaries: the group's samples in the
 * buckets wholly above above_ns (tl_summary_bucket) into *samples, and the
 * sum of their time past from_ns into *past_ns, each at its bucket's
 * midpoint, a session's top bucket held at the session's maximum: what
 * summing each session's buckets gives, without reading them again. 1, or
 * 0 when not known (pass 1 read samples, or the sum passes 2^63). */
int tl_sweep_tail(const tl_sweep *w, int64_t above_ns, int64_t from_ns, int64_t *samples,
                  int64_t *past_ns);
/* After pass 1: the group's log-linear histogram (tl_summary_bucket), the
 * counts of *len buckets from *first (the minimum's to the maximum's). */
const int64_t *tl_sweep_hist(const tl_sweep *w, size_t *first, size_t *len);
/* Has the next pass also count the group's samples of the log buckets
 * buckets[0..n) value by value (a chart's buckets that straddle the edge of
 * a bin): 1, or 0 when those are over 65,536 values (256 KiB of counts,
 * what a core keeps close) and nothing is asked. tl_sweep_values then gives
 * the counts of one of them (from its lowest value), NULL for another;
 * TL_ECORRUPT from tl_sweep_finish when they disagree with the histogram. */
int tl_sweep_count_values(tl_sweep *w, const size_t *buckets, size_t n);
const uint32_t *tl_sweep_values(const tl_sweep *w, size_t bucket);
/* Has the next pass (run by tl_sweep_finish, which then reads every block)
 * also hand every sample to tap, session by session in stored order, on
 * one of the pass's two threads. */
void tl_sweep_tap(tl_sweep *w, tl_sweep_session_cb tap, void *ctx);
/* Runs the passes that find every asked value. */
int tl_sweep_finish(tl_sweep *w);
/* tl_sweep_finish of ws[0..n), sweeps of the same store after pass 1 over
 * their sessions, in shared passes: each session read once a pass for all
 * of them (a report's groups interleave in the file; a session that several
 * sweeps list, in the same order, is handed to each). Each finds what it
 * finds alone. */
int tl_sweep_finish_all(tl_sweep *const *ws, size_t n);
/* The group's value of a handle; session's value at session_pcts[k] (0
 * when the session has no samples). */
int64_t tl_sweep_value(const tl_sweep *w, size_t handle);
int64_t tl_sweep_session_value(const tl_sweep *w, size_t session, size_t k);

/* Sorts v[0..n) ascending (a radix sort: samples are often millions);
 * TL_ENOMEM when its buffer cannot be allocated. */
int tl_sort_i64(int64_t *v, size_t n);
/* Hands every sample of the sessions, in stored order, to cb with the
 * session's index in session_ids, like tl_store_scan, but decoding on this
 * thread while cb runs on another (one thread for all the sessions). */
int tl_store_scan_threaded(tl_store *store, const int64_t *session_ids, size_t n,
                           tl_sweep_session_cb cb, void *ctx);

/* ------------------------------------------------------------------------ */
/* Listings: what tlstore info, labels, hosts and sessions print (listing.c) */
/* Each writes plain text to out, user text made safe for a terminal, and    */
/* returns TL_OK or an error with its message on the handle. out is not      */
/* flushed; a failed write shows in ferror(out).                             */

/* The database (path as given), its schema, size and counts, then one line
 * per label: sessions, samples and delays (tl_store_label_summaries). */
int tl_store_write_info(tl_store *store, const char *path, FILE *out);
/* The labels, one per line (tl_store_labels). */
int tl_store_write_labels(tl_store *store, FILE *out);
/* One block per host: fingerprint, hostname, sessions and dates, then the
 * facts tlreport --by groups on (tl_host_keys), as its latest session saw
 * them; sizes with their size class. */
int tl_store_write_hosts(tl_store *store, FILE *out);
/* A table of the sessions matching filter, oldest first: uuid, label,
 * probe, delay, host, start, status, samples. */
int tl_store_write_sessions(tl_store *store, const tl_filter *filter, FILE *out);

/* ------------------------------------------------------------------------ */
/* Pushing to a server                                                       */

typedef struct {
  int64_t sessions_total;   /* finished sessions in the file */
  int64_t sessions_done;    /* of those, handled so far */
  int64_t sessions_pushed;  /* sent now */
  int64_t sessions_present; /* on the server already */
  int64_t samples_pushed;
  int64_t sessions_removed; /* deleted from the file after the server had them */
} tl_push_stats;

typedef struct {
  int remove_pushed;        /* delete each session from the file once the server has it */
  const volatile int *stop; /* when it becomes non-zero the push stops (TL_EINTR) */
  int on_signals; /* SIGINT and SIGTERM stop it as *stop does; the handlers are restored after */
  void (*progress)(void *ctx, const tl_push_stats *st); /* after each session; may be NULL */
  void *ctx;
} tl_push_opts;

/* Sends every finished session (complete or interrupted) of the file local
 * that server does not have, by UUID, each in one transaction of its own:
 * the server shows a session whole or not at all, two pushers of the same
 * session store it once, and a push that stops (an error, a lost server,
 * *stop) leaves the sessions sent so far, so the next push completes the
 * work. A session present on the server with another sample count is
 * TL_ECONFLICT. The file is only read, except that remove_pushed deletes
 * the sessions the server has. On failure the message is on server's
 * handle; st (may be NULL) counts what was done either way. */
int tl_store_push(tl_store *local, tl_store *server, const tl_push_opts *opts, tl_push_stats *st);

/* ------------------------------------------------------------------------ */
/* What the tlstore commands say (listing.c), as the listings above          */

/* The integrity check (tl_store_check): "problem: ..." per problem, or
 * "ok"; TL_ECORRUPT when there were problems (the message says they are
 * listed). */
int tl_store_write_check(tl_store *store, FILE *out);

/* What a tlstore command says once it has worked (its result line). */
void tl_store_write_imported(FILE *out, const char *uuid, int64_t samples, int64_t bad_rows);
void tl_store_write_merged(FILE *out, const tl_merge_stats *st);
void tl_store_write_pushed(FILE *out, const tl_push_stats *st, int removed);
/* path is the database's: a file is told how to shrink. */
void tl_store_write_pruned(FILE *out, const char *path, int64_t sessions, int64_t samples);
/* Messages on stderr while a command works: a bad row of the import source
 * (a tl_bad_row_cb, ctx the source's name) and the push progress line,
 * rewritten in place (a tl_push_opts.progress). */
void tl_store_say_bad_row(void *source, int64_t line, const char *why);
void tl_store_say_push_progress(void *ctx, const tl_push_stats *st);

/* Opens the database at path for a command (a write-protected one
 * read-only, which suits commands that only read; not with the flag
 * TL_STORE_SERVER), or says why not in one line on stderr; NULL on
 * failure. */
tl_store *tl_store_open_or_say(const char *path, int flags);
/* Closes store at the end of a command, first saying its error when err
 * is set; returns the exit status. NULL (tl_store_open_or_say failed, and
 * said why) is TL_EXIT_FAILURE. */
int tl_store_close_saying(tl_store *store, int err);

/* The sources of tlstore merge, checked before the target is opened (or
 * created): at least one, each a file name (not an option, not empty) that
 * can be read. Returns TL_EXIT_OK, or says why in one line on stderr and
 * returns the exit status (TL_EXIT_USAGE, TL_EXIT_FAILURE). */
int tl_store_check_merge_sources(const char *const *paths, size_t n);
/* The source of tlstore import: the file named, standard input for "-",
 * or NULL after saying why on stderr. Close a file other than stdin. */
FILE *tl_store_open_import_source(const char *file);
/* Opens both ends of tlstore push: the file db (read-only, or writable
 * when remove_pushed) and the server url (NULL: $TL_PUSH_URL). Returns
 * TL_EXIT_OK with both open, or says why in one line on stderr and returns
 * the exit status (TL_EXIT_USAGE for no URL or a db naming a server). */
int tl_store_open_push_ends(const char *db, const char *url, int remove_pushed, tl_store **local,
                            tl_store **server);

/* ------------------------------------------------------------------------ */
/* Why samples were late (causes.c; docs/schema.md, "Causes")               */

/* What the measuring thread read about itself around one sample, outside
 * its timed interval. A field that was not measured is -1. */
typedef struct {
  int64_t index;        /* the sample's place in its session, from 0 */
  int64_t latency_ns;   /* as stored with the samples (to the microsecond here) */
  int64_t runq_wait_ns; /* runnable but waiting for a CPU during the sample */
  int32_t nivcsw;       /* involuntary context switches during the sample */
  int32_t migrated;     /* 1: woke on another CPU than it armed on */
} tl_cause;

/* Latency bands for the run-queue wait of every sample, so that a report
 * can split the time past p50 of the samples above any percentile (p90),
 * not only of the slowest few kept one by one: eight bands a doubling of
 * the sample's value in microseconds (one band a microsecond below 16 us),
 * each 6 to 12 % wide. */
enum { TL_CAUSE_BANDS = 320 };
/* The band of a sample's value (ns), and the values [*lo_ns, *hi_ns) it holds. */
int tl_cause_band(int64_t value_ns);
void tl_cause_band_bounds(int band, int64_t *lo_ns, int64_t *hi_ns);

/* A session's totals over every sample whose causes were read. */
typedef struct {
  int64_t samples; /* samples measured with causes (0: none were) */
  int64_t runq_wait_ns, nivcsw, migrations;
  int64_t band_samples[TL_CAUSE_BANDS]; /* samples whose run-queue wait was read, by band */
  int64_t band_wait_ns[TL_CAUSE_BANDS]; /* and their run-queue wait, summed */
} tl_cause_sums;

/* One interval of a session's counters: the differences over [t_ms - span_ms,
 * t_ms) from the session's start, -1 where not readable. */
typedef struct {
  int64_t t_ms, span_ms;
  int64_t steal_ns, irq_ns, softirq_ns; /* summed over the CPUs */
  int64_t ctxt;                         /* context switches, host-wide */
  int64_t procs_running;                /* the most runnable threads seen */
  int64_t psi_some_us;                  /* CPU pressure: time some task waited */
  int64_t nr_periods, nr_throttled;     /* the cgroup's quota periods, and throttled ones */
  int64_t throttled_ns;
  int64_t freq_khz; /* CPU 0's frequency at the end, 0 when unreadable */
} tl_counter_row;

/* Adds the causes of n of a session's samples (the slowest of those just
 * stored, tl keeps a few per hundred) and adds sums to the session's
 * totals, in one transaction. A server refuses (TL_EUNAVAIL). */
int tl_store_add_causes(tl_store *store, int64_t session_id, const tl_cause *causes, size_t n,
                        const tl_cause_sums *sums);
/* Replaces the session's counters with rows[0..n), in one transaction. */
int tl_store_set_counters(tl_store *store, int64_t session_id, const tl_counter_row *rows,
                          size_t n);
/* The stored causes of the sessions session_ids[0..n), read in a few statements whatever n: fn
 * gets each session in turn, by its place in session_ids, with its kept causes by index and its
 * totals (zero when none), which live until fn returns, and err: TL_OK, or TL_ECORRUPT when a row
 * of the session is damaged (its causes are then empty and the message is on the store); fn must
 * not use the store. A non-zero return of fn stops the read and is returned, as is a failure of
 * the store. A store older than the causes has none: every session comes empty. */
typedef int (*tl_causes_cb)(void *ctx, size_t index, int err, const tl_cause *causes, size_t n,
                            const tl_cause_sums *sums);
int tl_store_causes_of(tl_store *store, const int64_t *session_ids, size_t n, tl_causes_cb fn,
                       void *ctx);
/* The stored counters of many sessions, oldest first, as tl_store_causes_of. */
typedef int (*tl_counters_cb)(void *ctx, size_t index, int err, const tl_counter_row *rows,
                              size_t n);
int tl_store_counters_of(tl_store *store, const int64_t *session_ids, size_t n, tl_counters_cb fn,
                         void *ctx);
/* The stored causes of one session, by index, and its totals (zero when
 * none). *out is malloc'd (NULL when none); the caller frees it. A store
 * older than the causes has none: TL_OK with nothing; a damaged row:
 * TL_ECORRUPT. */
int tl_store_causes(tl_store *store, int64_t session_id, tl_cause **out, size_t *n,
                    tl_cause_sums *sums);
/* The stored counters of a session, oldest first; as tl_store_causes. */
int tl_store_counters(tl_store *store, int64_t session_id, tl_counter_row **out, size_t *n);

#endif /* TL_STORE_H */
