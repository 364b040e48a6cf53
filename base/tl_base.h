/* tl_base.h: what every part of tl shares and that needs no database: error
 * codes and one-line messages, the command-line helpers of the three
 * programs, writing user text safely (terminal, JSON), validation of what a
 * user supplies (labels, tags, durations, dates, lists, sizes), a pool of
 * strings kept once each, where tl's files are (the shipped files, the
 * default database), the words tl quotes percentiles in, and varints.
 *
 * The store, the collector and the report build on it; it knows none of
 * them. */
#ifndef TL_BASE_H
#define TL_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */

/* XX(name, value, message). Every tl function that can fail returns 0 or one
 * of these negative codes; details go to the handle's error message. */
#define TL_ERRNO_MAP(XX)                                                                           \
  XX(EINVAL, -1, "invalid argument")                                                               \
  XX(ENOMEM, -2, "out of memory")                                                                  \
  XX(EIO, -3, "input/output error")                                                                \
  XX(ENOTDB, -4, "file is not a tl database")                                                      \
  XX(ECORRUPT, -5, "database is corrupt")                                                          \
  XX(ENEWER, -6, "database was written by a newer tl")                                             \
  XX(EBUSY, -7, "database is locked by another process")                                           \
  XX(EFULL, -8, "disk is full")                                                                    \
  XX(EREADONLY, -9, "database is read-only")                                                       \
  XX(ENOTFOUND, -10, "not found")                                                                  \
  XX(ECONFLICT, -11, "conflicting data")                                                           \
  XX(EINTR, -12, "interrupted")                                                                    \
  XX(EUNAVAIL, -13, "not available on this system")                                                \
  XX(ESQL, -14, "database error")                                                                  \
  XX(ESYS, -15, "system call failed")                                                              \
  XX(EPERM, -16, "permission denied")

typedef enum {
  TL_OK = 0,
#define XX(name, value, msg) TL_##name = value,
  TL_ERRNO_MAP(XX)
#undef XX
} tl_err;

/* A static description of a tl error code, never NULL. */
const char *tl_strerror(int err);
/* Formats the reason for a failure into the caller's buf (when buf is not
 * NULL and len > 0) and returns err: "return tl_fail(why, whylen, TL_EINVAL,
 * "...", ...);" is how a function that reports into a buffer fails. */
int tl_fail(char *buf, size_t len, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ------------------------------------------------------------------------ */
/* Varints (varint.c)                                                        */

/* Unsigned LEB128, as the store writes its numbers: the bytes of v (1 to
 * TL_VARINT_MAX), and v into out, returning them. */
enum { TL_VARINT_MAX = 10 };
size_t tl_varint_len(uint64_t v);
size_t tl_varint_put(uint8_t *out, uint64_t v);
/* The varint at *p (before end) into *v, moving *p past it: 1, or 0 (*p
 * left) when it runs past end or is not the shortest form of a 64-bit
 * value. */
int tl_varint_get(const uint8_t **p, const uint8_t *end, uint64_t *v);

/* ------------------------------------------------------------------------ */
/* Messages                                                                  */

/* The program name used as the prefix of every message ("tlstore: ..."). */
void tl_set_progname(const char *name);
const char *tl_progname(void);
/* One line on stderr: "PROG: error: ...". A trailing newline is added; the
 * text is written through tl_fput_safe, so a newline or control character in
 * it (from a path or option value) shows as \xNN and the message stays one
 * line. */
void tl_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tl_warnf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Exit codes shared by the three programs (documented in the README). */
enum { TL_EXIT_OK = 0, TL_EXIT_FAILURE = 1, TL_EXIT_USAGE = 2, TL_EXIT_INTERRUPTED = 3 };

/* ------------------------------------------------------------------------ */
/* Command-line helpers (cli.c), shared by tlcollect, tlstore and tlreport   */

struct option;              /* <getopt.h> */
enum { TL_CLI_OPTS = 512 }; /* option values (getopt's val) stay below this */

/* "PROG: error: WHAT: WHY (see PROG --help)" on stderr, or inside a command
 * of tl_cli_run_commands "PROG: error: COMMAND: WHAT: WHY (see PROG COMMAND
 * --help)"; returns TL_EXIT_USAGE, so that a caller can return it. */
int tl_usage_error(const char *what, const char *why);
/* The usage error of a bad value of the option --name (name without
 * "--"): tl_usage_error("--name", why). */
int tl_cli_option_error(const char *name, const char *why);
/* The database a program uses: given (its --db) when not NULL, else
 * tl_default_db_path(). Prints the error and returns TL_EXIT_FAILURE (or
 * TL_EXIT_USAGE for an over-long --db) when there is none; TL_EXIT_OK. */
int tl_cli_db_path(const char *given, char *buf, size_t len);
/* Call for each option c that getopt_long returns: an option with a value
 * given a second time is a usage error (a mistake, not "the last one wins"),
 * unless c is in repeatable (0-terminated, may be NULL). given holds the
 * counts, zeroed by the caller. Returns TL_EXIT_OK or TL_EXIT_USAGE. */
int tl_cli_once(const struct option *longopts, int c, unsigned char given[TL_CLI_OPTS],
                const int *repeatable);

/* The end of every tl program: flushes and closes standard output, so that
 * output lost to a full disk, a closed pipe or /dev/full is a failure, not
 * exit 0. When writing failed it prints "PROG: error: writing standard
 * output: REASON" and returns TL_EXIT_FAILURE (or status, when that is a
 * failure already); otherwise status. Use as "return
 * tl_cli_finish(run(argc, argv));". Code that writes to stdout leaves its
 * write errors to this: it checks ferror(stdout) before reporting one. */
int tl_cli_finish(int status);
/* Remembers errnum (errno after a failed fwrite) as why writing to f failed,
 * the first reason given for f: a write that bypassed f's buffer leaves no
 * data behind for tl_cli_finish's flush to fail on again. Returns TL_EIO. */
int tl_write_failed(FILE *f, int errnum);

/* The name (without "--") of the long option getopt_long returns as c, or
 * "" when longopts has none. */
const char *tl_cli_option_name(const struct option *longopts, int c);

/* A program made of commands ("tlstore [--db PATH] COMMAND [OPTIONS]"):
 * each command is described once, in a table, and its help, its getopt_long
 * table and the checks every command shares are made from that. */

/* One option of a command: its long name (without "--"), its value as the
 * help shows it ("DATE"; NULL: a flag), one line of help, and whether it
 * may be given more than once (a value option given twice is otherwise a
 * usage error). */
typedef struct {
  const char *name;
  const char *arg;
  const char *help;
  int repeatable;
} tl_cli_option;

/* What a command's run gets: the database path, its arguments (argv[0] is
 * the command's name) and its getopt_long table. */
typedef struct {
  const char *db;
  int argc;
  char **argv;
  const struct option *longopts;
} tl_cli_args;

typedef struct {
  const char *name;
  const char *args;                 /* what follows the name in a usage line */
  const char *about;                /* what it does, one line, lower case */
  const tl_cli_option *options;     /* up to {NULL}; NULL: none */
  int operands;                     /* the most operands it takes; -1: any */
  int (*run)(const tl_cli_args *a); /* returns the exit status; NULL: help */
} tl_cli_command;

typedef struct {
  const char *usage_head, *usage_tail; /* PROG --help: around the list of commands */
  const tl_cli_command *commands;
  size_t count;
} tl_cli_program;

/* Runs PROG [--db PATH] [-h] [-V] COMMAND [OPTIONS] [OPERANDS]: --db may
 * also follow the command; COMMAND --help and help COMMAND print the
 * command's help; an option the command does not take, a value option given
 * twice or an operand too many is a usage error pointing to the command's
 * help; all of that before the database is looked at. Then run, with getopt
 * started afresh (tl_cli_next). Ends through tl_cli_finish and returns the
 * exit status. */
int tl_cli_run_commands(const tl_cli_program *p, int argc, char **argv);
/* The next option of the running command, as getopt_long returns it (optarg
 * holds its value); -1 after the last, when optind is the first operand. */
int tl_cli_next(const tl_cli_args *a);
/* The usage error of an option c that tl_cli_next returned and the command
 * does not take. */
int tl_cli_bad_option(const tl_cli_args *a, int c);
/* Hands every option of the running command to take, as (ctx, its name
 * without "--", its value or NULL for a flag, why, whylen): take returns 1
 * when it took the option, 0 when the command has no such option and
 * TL_EINVAL with a one-line reason in why for a bad value. Returns -1 when
 * every option was taken, else the exit status of the usage error said. */
typedef int (*tl_cli_take_cb)(void *ctx, const char *name, const char *value, char *why,
                              size_t whylen);
int tl_cli_take_options(const tl_cli_args *a, tl_cli_take_cb take, void *ctx);

/* The arguments as one command line, each shell-quoted when it needs it
 * (so that a person can paste it back): an argument that is not valid
 * UTF-8 or holds a control character in bash's $'...' form with \xNN
 * escapes, so that the line is always printable UTF-8 (a server that
 * stores text in UTF-8 accepts it). Malloc'd; NULL when out of memory. */
char *tl_command_line(int argc, const char *const *argv);

/* Writes s (NULL: "") to f as a JSON string: quotes, backslashes and control
 * characters escaped, each byte that is not part of valid UTF-8 as U+FFFD. */
void tl_fput_json(FILE *f, const char *s);

/* The length (1 to 4) of the valid UTF-8 sequence at s, which has len bytes
 * left, or 0 when the bytes there are not one (overlong forms, surrogates
 * and values past U+10FFFF included). */
size_t tl_utf8_len(const unsigned char *s, size_t len);
/* The length of the control character at s: 1 for C0 and DEL, 2 for C1
 * (U+0080 to U+009F, on which a terminal may act), 2 or 3 for a
 * bidirectional formatting character (U+061C, U+200E, U+200F,
 * U+202A..U+202E, U+2066..U+2069, which reorder the text after them), 0
 * for anything else. */
size_t tl_control_len(const unsigned char *s, size_t len);

/* Writes s to f with control characters (C0, DEL and the C1 range
 * U+0080..U+009F) and bytes that are not valid UTF-8 shown as \xNN, so that
 * user text or host facts cannot drive the terminal. */
void tl_fput_safe(FILE *f, const char *s);

/* ------------------------------------------------------------------------ */
/* Validating user input                                                     */
/* Each parser returns TL_OK, or TL_EINVAL with a one-line reason in why
 * (which may be NULL). None of them reads past the end of its input. */

enum { TL_LABEL_MAX = 64, TL_TAG_KEY_MAX = 64, TL_TAG_VALUE_MAX = 256, TL_WHY_MAX = 256 };

/* A label: 1 to 64 characters of [A-Za-z0-9._-], starting with a letter or
 * digit. Labels name environments ("vbox", "macos", "droplet"). */
int tl_label_check(const char *label, char *why, size_t whylen);
/* A host name given on the command line (tlstore import --host): 1 to 253
 * characters of the same set, starting with a letter or digit. */
int tl_host_name_check(const char *name, char *why, size_t whylen);

/* A tag "key=value": key like a label, value 0..256 bytes of printable UTF-8
 * (no C0, DEL or C1 control characters). key and value point into a copy owned by the
 * caller's buffer buf (at least strlen(s) + 1 bytes). */
int tl_tag_parse(const char *s, char *buf, const char **key, const char **value, char *why,
                 size_t whylen);
/* The same rules for a key and value held apart (a database's tags). */
int tl_tag_check(const char *key, const char *value, char *why, size_t whylen);

/* A duration such as "250ms", "30s", "10m", "2h", "1.5ms", "20us", "100ns".
 * A bare number takes default_unit_ns (for example 1000000 for ms).
 * Result in nanoseconds, 0 .. max_ns. */
int tl_duration_parse(const char *s, int64_t default_unit_ns, int64_t max_ns, int64_t *out_ns,
                      char *why, size_t whylen);

/* The longest delay tl measures, stores or filters on: 24 hours. */
#define TL_DELAY_MAX_NS (24LL * 3600 * 1000000000LL)
/* A requested delay as people write it ("50", "1ms", "250us"): a bare number
 * is milliseconds; 0 .. TL_DELAY_MAX_NS. */
int tl_delay_parse(const char *s, int64_t *out_ns, char *why, size_t whylen);

/* A probe name as sessions store it: a name like a label ("settimeout"), or
 * "exec:" followed by a command of 1 to 1024 printable bytes. Says nothing of
 * whether this tl can run that probe (tl_collect.h knows). */
int tl_probe_name_check(const char *name, char *why, size_t whylen);

/* A whole number in [min, max]. */
int tl_int_parse(const char *s, int64_t min, int64_t max, int64_t *out, char *why, size_t whylen);

/* A date "YYYY-MM-DD" or "YYYY-MM-DDTHH:MM:SSZ" (UTC), to unix nanoseconds. */
int tl_date_parse(const char *s, int64_t *out_ns, char *why, size_t whylen);
/* Formats unix nanoseconds as "YYYY-MM-DDTHH:MM:SSZ" (buf at least 21 bytes). */
void tl_date_format(int64_t ns, char *buf, size_t len);

/* A comma-separated list, split in place into at most max items; empty items
 * and duplicates are errors. Items point into s, which is modified. */
int tl_list_split(char *s, char **items, size_t max, size_t *count, char *why, size_t whylen);

/* A size in bytes: "512M", "1G", "1.5GiB", "2048MB", "1073741824". K, M, G
 * and T are powers of 1024 (what a machine's memory is counted in). */
int tl_size_parse(const char *s, int64_t *bytes, char *why, size_t whylen);

/* ------------------------------------------------------------------------ */
/* The probes: one catalogue of what each one times (probe_catalogue.c)      */

typedef struct {
  const char *name;       /* "settimeout" ...; "exec:CMD" stands for every exec: name */
  const char *call;       /* the call as a sentence names it ("setTimeout"); NULL: name */
  const char *summary;    /* one line for --list-probes: where its clock starts and stops;
                             {clock} and the like stand for this system's names
                             (tl_probe_summary) */
  const char *definition; /* what its samples are, for a page's "How it was measured"
                             (about sessions of any system) */
  int64_t floor_ns;       /* a shorter requested delay is armed as this (Node's 1 ms); 0: none */
  int ms_only;            /* requested delays must be whole milliseconds */
} tl_probe_about;

/* How tl times on this system: the clock its own probes and pauses read (the
 * one libuv's uv_hrtime keeps, so that a probe's clock and the loop's agree)
 * and the calls that sleep on it. Set by the base layer's file for this OS
 * (exe_linux.c, exe_macos.c), matching the collector's os_*.c. */
typedef struct {
  const char *clock;       /* "CLOCK_MONOTONIC" (Linux), "mach_continuous_time" (macOS) */
  const char *sleep;       /* a relative sleep on it: "clock_nanosleep(CLOCK_MONOTONIC)" ... */
  const char *sleep_until; /* a sleep to an instant: "clock_nanosleep(TIMER_ABSTIME)" ... */
} tl_os_timing;
const tl_os_timing *tl_os_timing_here(void);

/* For a program that reads a whole database and exits (tlreport, tlstore):
 * gives its threads one heap and lets that heap fault in 2 MiB pages where
 * the system offers them on request (Linux's transparent huge pages with
 * glibc's malloc; elsewhere it does nothing). Call it first thing in main.
 * Returns whether the huge pages took effect. */
int tl_heap_huge_pages(void);

/* Every probe this tl knows, in the order listings show them. */
const tl_probe_about *tl_probe_catalogue(size_t *count);
/* The entry of a stored probe name ("exec:python3 x.py" finds "exec:CMD"),
 * or NULL for a name this tl does not know. */
const tl_probe_about *tl_probe_about_find(const char *name);
/* The delay the probe really armed for a requested one: 1 ms for a Node-style
 * setTimeout(0), the request itself for the others. Lateness is measured
 * from it. */
int64_t tl_probe_armed_ns(const char *probe, int64_t delay_ns);
/* The probe's --list-probes line for this system: its summary with
 * {clock}, {sleep} and {sleep_until} replaced by tl_os_timing_here()'s
 * names, into buf (cut to len). */
void tl_probe_summary(const tl_probe_about *p, char *buf, size_t len);

/* ------------------------------------------------------------------------ */
/* Shipped files                                                             */

/* The path of a file tl ships, such as "probes/settimeout.js": the installed
 * copy <prefix>/share/tl/<relative>, found from the running program's own
 * location (<prefix>/bin), or, for a program still in its build tree, the
 * source tree's copy. relative must not be absolute or contain "..".
 * TL_ENOTFOUND when neither exists, TL_EINVAL when buf is too small. */
int tl_data_path(const char *relative, char *buf, size_t len);

/* ------------------------------------------------------------------------ */
/* Percentiles                                                               */

/* The nearest-rank percentile: the 1-based rank of the smallest sample that
 * at least pct percent of n samples are at or below, ceil(pct / 100 * n),
 * at least 1. pct is in [0, 100]; n > 0. tl quotes every percentile this way:
 * it is always one of the measured samples, never an interpolation. */
int64_t tl_rank(double pct, int64_t n);

/* A latency in milliseconds with enough digits for its size: "50.57 ms",
 * "0.117 ms", "0.0021 ms". */
void tl_format_ms(double ns, char *buf, size_t len);

/* A requested delay in milliseconds, exactly and without an exponent:
 * "0", "50", "0.25", "86400000", "0.000001" (1 ns). */
void tl_format_delay_ms(int64_t delay_ns, char *buf, size_t len);

/* A percentile exactly as given and without an exponent, the fewest decimals
 * that read back as the same number: "50", "99.9", "99.99999", "0.0000001".
 * pct is 0 or in [TL_PCT_MIN, 100]. Returns buf. TL_PCT(p) gives one for a
 * single call's arguments: printf("p%s", TL_PCT(p)). */
#define TL_PCT_MIN 1e-9
enum { TL_PCT_LEN = 48 };
const char *tl_format_pct(double pct, char *buf, size_t len);
#define TL_PCT(p) tl_format_pct((p), (char[TL_PCT_LEN]){0}, TL_PCT_LEN)

/* "90 percent of calls took up to 1.17 ms and 50.57 ms (for setTimeout(0)
 * and setTimeout(50) respectively)": value_ns[i] is the pct percentile at
 * delay_ns[i] of probe. Plain text, truncated to len. */
void tl_percent_sentence(double pct, const char *probe, const int64_t *value_ns,
                         const int64_t *delay_ns, size_t n, char *buf, size_t len);

/* ------------------------------------------------------------------------ */
/* Strings kept once                                                          */

/* Strings kept once each, for lists of many sessions that repeat them
 * (strpool.c): a session's strings live in the pool of the list it came in
 * (tl_store.h). tl_strpool_get gives the pool's copy of s, made at first sight,
 * or NULL when out of memory; the copies live until tl_strpool_free.
 * tl_strpool_add copies len bytes of s into the pool without looking for
 * an equal string, nor letting later calls find it: for strings that are
 * never repeated (a session's UUIDs). */
typedef struct tl_strpool tl_strpool;
tl_strpool *tl_strpool_new(void);
char *tl_strpool_get(tl_strpool *pool, const char *s);
char *tl_strpool_get_len(tl_strpool *pool, const char *s, size_t len);
char *tl_strpool_add(tl_strpool *pool, const char *s, size_t len);
/* For strings that may each be new (a listing's command lines: each import
 * names its own start and file): looked up as tl_strpool_get_len does while
 * the look-ups find them, copied as tl_strpool_add does once fewer than 1
 * in 16 of at least 1,024 did (every 16th still looked up). Equal strings
 * so kept may then be different copies: never compare them by pointer.
 * *odds starts zeroed, one for each run of such strings. */
typedef struct {
  uint64_t looked, found, skipped;
} tl_strpool_odds;
char *tl_strpool_get_maybe(tl_strpool *pool, tl_strpool_odds *odds, const char *s, size_t len);
void tl_strpool_free(tl_strpool *pool);

/* A hash of len bytes for tables of strings, eight bytes a step (a byte a
 * step was a fifth of the cost of asking which of a fleet's sessions share
 * a run or a command line), continuing from seed (0 to start). The length
 * is mixed in, so a key of several strings is hashed by giving each one's
 * hash as the next one's seed. Not for strings chosen to collide: a report
 * made of them is only slower. */
uint64_t tl_hash_bytes(uint64_t seed, const void *bytes, size_t len);

/* ------------------------------------------------------------------------ */
/* Paths                                                                     */

/* The default database path: $TL_DB, else $XDG_DATA_HOME/tl/tl.db, else
 * ~/.local/share/tl/tl.db. TL_ENOTFOUND when none can be formed (no HOME),
 * TL_EINVAL when buf is too small. */
int tl_default_db_path(char *buf, size_t len);
/* Creates the folders above path (mode 0755) that do not exist yet. On
 * failure a reason naming the folder goes to why. */
int tl_make_parent_dir(const char *path, char *why, size_t whylen);

/* A random version-4 UUID, lower-case with hyphens, into out (37 bytes). */
int tl_uuid4(char out[37]);
/* Whether s is a UUID as tl writes them: 36 characters, hexadecimal digits
 * in groups of 8-4-4-4-12 joined by hyphens. */
int tl_uuid_valid(const char *s);

#endif
