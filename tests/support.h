/* support.h: what the tests share: temporary folders, running the built
 * programs, and reading files. cmocka must be included before this. */
#ifndef TL_TEST_SUPPORT_H
#define TL_TEST_SUPPORT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The fixture most tests share: a fresh temporary folder and the path of a
 * database in it (not created), removed afterwards. For
 * cmocka_unit_test_setup_teardown(test, tl_test_setup, tl_test_teardown). */
typedef struct {
  char *dir, *db;
} tl_test_fixture;
int tl_test_setup(void **state);
int tl_test_teardown(void **state);

/* SQL of a sessions.uuid or run_uuid column (named c) as text, whichever
 * way the file stores it (16 bytes or text): the expression docs/schema.md
 * gives for SQL of one's own. */
#define TL_TEST_UUID_TEXT(c)                                                                       \
  "CASE typeof(" c ") WHEN 'blob' THEN lower(substr(hex(" c "), 1, 8) || '-' || substr(hex(" c     \
  "), 9, 4) || '-' || substr(hex(" c "), 13, 4) || '-' || substr(hex(" c "), 17, 4) || '-' || "    \
  "substr(hex(" c "), 21)) ELSE " c " END"

/* A fresh temporary folder (removed by tl_test_rmdir); path owned by caller. */
char *tl_test_tmpdir(void);
void tl_test_rmdir(const char *path);
/* dir + "/" + name, malloc'ed. */
char *tl_test_path(const char *dir, const char *name);
/* How many entries the folder holds ("." and ".." not counted); -1 when it
 * cannot be read. */
int tl_test_entries(const char *dir);

/* Runs argv (argv[0] a path) with stdin from /dev/null; captures stdout and
 * stderr (malloc'ed, NUL-terminated, may be NULL when not wanted) and returns
 * the exit status, or 128 + signal number. env: extra "K=V" entries, NULL
 * terminated, or NULL. */
int tl_test_run(char *const argv[], char *const env[], char **out, char **err);
/* The same, with prepare(arg) called in the child just before exec (to set a
 * resource limit, drop privileges ...); prepare may be NULL. */
int tl_test_run_with(char *const argv[], char *const env[], void (*prepare)(void *), void *arg,
                     char **out, char **err);

/* Starts argv (argv[0] a path) in the background, stdin from /dev/null,
 * stdout and stderr into the file out_path (NULL: /dev/null); returns its
 * pid, for the caller to signal and wait for. */
pid_t tl_test_start(char *const argv[], const char *out_path);

/* The offset of the first byte of s that must not reach a terminal raw: a C0
 * control other than newline and tab, DEL, a C1 control (U+0080..U+009F) or
 * a byte that is not valid UTF-8; -1 when there is none. */
long tl_test_unsafe_at(const char *s);
/* Exactly one line: non-empty, one newline, at the end. */
int tl_test_one_line(const char *s);

/* The whole file, malloc'ed and NUL-terminated; NULL if unreadable. */
char *tl_test_read_file(const char *path, size_t *len);
int tl_test_write_file(const char *path, const void *data, size_t len);
/* Copies a file byte for byte, keeping nothing but the data; 0 on success. */
int tl_test_copy_file(const char *from, const char *to);

/* Permissions do not bind root, so a test of a refused permission runs the
 * program as an unprivileged user when it runs as root. */
typedef struct {
  uid_t uid;
  gid_t gid;
} tl_test_creds;
/* 'nobody' when the tests run as root, NULL otherwise (chmod and rlimits bind
 * an ordinary user already). */
const tl_test_creds *tl_test_unprivileged(void);
/* A prepare function for tl_test_run_with: drops to the tl_test_creds at arg
 * (no change when arg is NULL); exits 126 if that fails. */
void tl_test_drop_privileges(void *arg);
/* Copies program into dir as name, and opens dir and the copy to every user:
 * the unprivileged user can then run it wherever the build tree lives (a
 * clone under a mode-700 home). Returns the copy's path, malloc'ed. */
char *tl_test_reachable_program(const char *dir, const char *program, const char *name);

/* Whether the Markdown page holds a table row of label whose last cells are
 * tail ("1 | 2": sessions and samples in the lateness tables). */
int tl_test_has_row(const char *page, const char *label, const char *tail);

/* Skips the running cmocka case, saying why: one line now, and the case
 * with its reason in the summary line the program prints when it ends (and
 * in $TL_TEST_SKIP_LOG, which ctest's skipped_cases test lists). Does not
 * return. */
#define tl_test_skip(why) tl_test_skip_case(__func__, why)
void tl_test_skip_case(const char *test, const char *why) __attribute__((noreturn));
/* The same for a part of a case that cannot run here: said and counted
 * alike, and the case goes on. */
#define tl_test_skip_part(why) tl_test_note_skip(__func__, why)
void tl_test_note_skip(const char *test, const char *why);

/* Reading JSON: a strict checker of RFC 8259 syntax and the few steps a
 * test takes through a document. Each returns a pointer into the text, or
 * NULL when it is not there or not JSON. */
const char *tl_test_json_ws(const char *p);                      /* past white space */
const char *tl_test_json_string(const char *p);                  /* the end of the string at p */
const char *tl_test_json_value(const char *p, int depth);        /* the end of the value at p */
const char *tl_test_json_member(const char *p, const char *key); /* of the object at p */
const char *tl_test_json_element(const char *p, size_t i);       /* of the array at p */
size_t tl_test_json_count(const char *p);                        /* elements of the array */
int tl_test_json_valid(const char *s); /* s is one JSON value and nothing else */

#endif
