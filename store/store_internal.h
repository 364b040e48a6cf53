/* store_internal.h: what the store's own files share and nobody else sees. */
#ifndef TL_STORE_INTERNAL_H
#define TL_STORE_INTERNAL_H

#include <sqlite3.h>

#include "tl_store.h"

struct tl_store {
  sqlite3 *db;
  char *path;
  int readonly;
  char errmsg[512]; /* last failure, "" when none */
};

/* The migrations compiled in from schema/ (tl_schema.c, generated). */
extern const char *const tl__migrations[];
extern const size_t tl__migration_count;

/* Records a message on the store and returns err. */
int tl__store_fail(tl_store *s, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Maps a SQLite result code to a tl error and records sqlite's message with
 * what was being done. */
int tl__store_sqlfail(tl_store *s, int rc, const char *doing);

/* Length of the longest valid UTF-8 prefix of s. */
size_t tl__utf8_valid_prefix(const unsigned char *s, size_t len);
/* Printable UTF-8 of at most max bytes, no control characters. */
int tl__text_check(const char *what, const char *s, size_t max, char *why, size_t whylen);

/* Unix time now, nanoseconds. */
int64_t tl__now_ns(void);
/* A random version-4 UUID in out (37 bytes). */
int tl__uuid4(char out[37]);

/* The absolute path of the running executable (exe_linux.c, exe_macos.c). */
int tl__exe_path(char *buf, size_t len);

/* Inside the caller's write transaction: records the host and a new
 * 'running' session with its tags and facts; uuid_out gets its UUID. */
int tl__session_insert(tl_store *s, const tl_session_spec *spec, char uuid_out[37],
                       int64_t *session_id);

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

#endif
