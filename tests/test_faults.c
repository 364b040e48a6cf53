/* test_faults.c: what happens when things go wrong around the database: a
 * collector killed with SIGKILL, a full disk, a read-only file or folder, a
 * lock held by another writer, and files that are not tl databases, are cut
 * short, corrupted or come from a newer tl. Each must end with every
 * committed sample kept, a one-line error that says what to do, a non-zero
 * exit, no session left half-written, and no crash. */
#define _GNU_SOURCE /* unshare, CLONE_NEWNS */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mount.h>
#include <sys/prctl.h>
#endif
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "sqlite_internal.h" /* the connection, to read its durability settings */
#include "support.h"
#include "support_store.h"
#include "tl_report.h"
#include "tl_store.h"

typedef tl_test_fixture fixture;

/* ======================================================================== */
/* Helpers                                                                   */

/* A short real collection into db; fails the test if it does not succeed.
 * The uv probe at delay 0 makes thousands of samples a second. */
static void collect_with(const char *db, const char *label, const char *probe, const char *delays,
                         const char *count) {
  char *out, *err;
  char *a[] = {TLCOLLECT,     "--db",        (char *)db, "--label",      (char *)label,
               "--probe",     (char *)probe, "--delays", (char *)delays, "--count",
               (char *)count, "-q",          NULL};
  int rc = tl_test_run(a, NULL, &out, &err);
  if (rc != 0)
    fail_msg("collecting into %s: exit %d: %s", db, rc, err);
  free(out);
  free(err);
}

static void collect(const char *db, const char *label, const char *count) {
  collect_with(db, label, "settimeout", "0,1", count);
}

/* What a session holds, read back through the library. */
typedef struct {
  int64_t id, count, ended_ns;
  char status[16];
  int64_t *v; /* decoded samples, count of them */
  size_t n;
} snap;

static int grab(void *ctx, const int64_t *v, size_t n) {
  snap *s = ctx;
  s->v = realloc(s->v, (s->n + n) * sizeof *v);
  memcpy(s->v + s->n, v, n * sizeof *v);
  s->n += n;
  return 0;
}

/* Every session of db, oldest first, read-only (which recovers nothing). */
static size_t snapshot(const char *db, snap *out, size_t max) {
  tl_store *s = NULL;
  assert_int_equal(tl_store_open(&s, db, TL_STORE_READONLY), TL_OK);
  tl_filter f;
  tl_filter_init(&f);
  tl_session_list list;
  assert_int_equal(tl_store_sessions(s, &f, &list), TL_OK);
  assert_true(list.count <= max);
  for (size_t i = 0; i < list.count; i++) {
    snap *x = &out[i];
    memset(x, 0, sizeof *x);
    x->id = list.items[i].id;
    x->count = list.items[i].sample_count;
    x->ended_ns = list.items[i].ended_ns;
    snprintf(x->status, sizeof x->status, "%s", list.items[i].status);
    assert_int_equal(tl_store_scan(s, x->id, grab, x), TL_OK);
  }
  size_t n = list.count;
  tl_session_list_free(&list);
  tl_store_close(s);
  return n;
}

static void snap_free(snap *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(s[i].v);
}

/* Runs a program and checks the shape of a failure: the expected exit status,
 * one line on stderr holding want (when not NULL), nothing raw. Returns
 * stderr (caller frees). */
static char *expect_failure(char *const argv[], char *const env[], void (*prepare)(void *),
                            void *arg, int status, const char *want) {
  char *out, *err;
  int rc = tl_test_run_with(argv, env, prepare, arg, &out, &err);
  if (rc != status || !tl_test_one_line(err) || (want && !strstr(err, want)) ||
      tl_test_unsafe_at(err) >= 0)
    fail_msg("%s %s: exit %d (want %d), stderr '%s' (want one line with '%s')", argv[0],
             argv[1] ? argv[1] : "", rc, status, err, want ? want : "");
  free(out);
  return err;
}

/* db holds one session, with this status and count (-1: any), every
 * sample of which reads back. */
static void expect_one_session(const char *db, const char *status, int64_t count) {
  snap s[2];
  size_t n = snapshot(db, s, 2);
  assert_int_equal(n, 1);
  assert_string_equal(s[0].status, status);
  if (count >= 0)
    assert_int_equal(s[0].count, count);
  assert_int_equal((int64_t)s[0].n, s[0].count);
  snap_free(s, n);
}

static void tlstore_check_ok(const char *db) {
  char *out, *err;
  char *a[] = {TLSTORE, "--db", (char *)db, "check", NULL};
  int rc = tl_test_run(a, NULL, &out, &err);
  if (rc != 0 || strcmp(out, "ok\n") != 0)
    fail_msg("tlstore check: exit %d: %s%s", rc, out, err);
  free(out);
  free(err);
}

/* ======================================================================== */
/* kill -9                                                                   */

static int64_t committed(const char *db) { return tl_test_stats(db).samples; }

/* The collector is stopped (SIGSTOP) so that what it has committed cannot
 * change while the test reads it, then killed: exactly those samples must
 * be there afterwards, byte for byte, and the next writable open marks the
 * sessions 'interrupted'. */
static void kill9_keeps_every_committed_sample(void **state) {
  fixture *f = *state;
  char *a[] = {TLCOLLECT,  "--db", f->db,     "--label", "k9",
               "--delays", "1,2",  "--count", "1000000", NULL};
  pid_t pid = tl_test_start(a, NULL);
  int64_t n = 0;
  for (int i = 0; i < 150 && n < 40; i++) {
    usleep(100000);
    n = committed(f->db);
  }
  assert_true(n >= 40);
  usleep(300000); /* let it be in the middle of something */
  assert_int_equal(kill(pid, SIGSTOP), 0);
  int st;
  assert_int_equal(waitpid(pid, &st, WUNTRACED), pid);
  assert_true(WIFSTOPPED(st));

  snap before[4], after[4];
  size_t nb = snapshot(f->db, before, 4);
  assert_int_equal(nb, 2);
  assert_int_equal(kill(pid, SIGKILL), 0);
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);

  /* Read-only: nothing recovered yet, nothing lost; the sessions read as
   * 'interrupted' since their collector is gone. */
  size_t na = snapshot(f->db, after, 4);
  assert_int_equal(na, nb);
  for (size_t i = 0; i < na; i++) {
    assert_string_equal(before[i].status, "running");
    assert_string_equal(after[i].status, "interrupted");
    assert_int_equal(after[i].count, before[i].count);
    assert_int_equal(after[i].n, (size_t)before[i].count);
    assert_memory_equal(after[i].v, before[i].v, before[i].n * sizeof(int64_t));
  }
  snap_free(after, na);

  /* tlstore check opens the database for writing: the consistency holds
   * and the dead collector's sessions are recognised. */
  tlstore_check_ok(f->db);
  na = snapshot(f->db, after, 4);
  for (size_t i = 0; i < na; i++) {
    assert_string_equal(after[i].status, "interrupted");
    assert_int_equal(after[i].count, before[i].count);
    assert_memory_equal(after[i].v, before[i].v, before[i].n * sizeof(int64_t));
    assert_true(after[i].ended_ns > 0);
  }
  snap_free(after, na);
  snap_free(before, nb);

  /* And tlreport reads the survivors. */
  char *out, *err;
  char *r[] = {TLREPORT, "--db", f->db, NULL};
  assert_int_equal(tl_test_run(r, NULL, &out, &err), 0);
  assert_non_null(strstr(out, "\n| k9 | "));
  free(out);
  free(err);
}

/* ======================================================================== */
/* Memory                                                                    */

#if defined(__SANITIZE_ADDRESS__)
#define TL_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TL_TEST_ASAN 1
#endif
#endif

#ifndef TL_TEST_ASAN
static void limit_data(void *arg) {
  struct rlimit rl = {*(rlim_t *)arg, *(rlim_t *)arg};
  if (setrlimit(RLIMIT_DATA, &rl) != 0)
    _exit(126);
}
#endif

/* Five million samples (40 MB of them) under a 64 MiB limit on the
 * collector's data: the samples handed to the writer are released, so the
 * memory a session needs does not grow with its length. */
static void memory_bounded(void **state) {
#ifdef TL_TEST_ASAN
  (void)state;
  tl_test_skip_part("AddressSanitizer's shadow memory does not fit a data limit");
#else
  fixture *f = *state;
  rlim_t limit = 64 << 20;
  char *a[] = {TLCOLLECT,  "--db", f->db,     "--label", "long", "--probe", "uv",
               "--delays", "0",    "--count", "5000000", "-q",   NULL};
  char *out, *err;
  int rc = tl_test_run_with(a, NULL, limit_data, &limit, &out, &err);
  if (rc != 0)
    fail_msg("5M samples under a 64 MiB data limit: exit %d, '%s'", rc, err);
  free(out);
  free(err);
  expect_one_session(f->db, "complete", 5000000);
#endif
}

/* ======================================================================== */
/* A report's memory grows with its groups, not its sessions                 */

#ifndef TL_TEST_ASAN
/* Imports sessions [from, to) of a small fleet into db: 100 hosts of two
 * sizes, a session of a few samples an hour each, one label and delay (so
 * one group whatever the number of sessions), as `tlstore import` by a
 * script would. */
static void import_fleet(const char *db, int from, int to) {
  tl_store *s;
  assert_int_equal(tl_store_open(&s, db, 0), TL_OK);
  for (int i = from; i < to; i++) {
    int h = i % 100;
    char csv[64], host[32];
    snprintf(csv, sizeof csv, "%d\n%d\n%d\n", 1000 + i % 97, 2000 + i % 89, 3000 + h);
    snprintf(host, sizeof host, "droplet-%03d", h);
    tl_test_import_fleet_session(s, csv, host, h % 2 ? "memory=2G" : "memory=1G",
                                 h % 2 ? "cpus=2" : "cpus=1", i / 100);
  }
  tl_store_close(s);
}

/* The most memory (KiB) argv held, run to success with its output dropped. */
static long peak_kib(char *const argv[]) {
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    int fd = open("/dev/null", O_WRONLY);
    dup2(fd, 1);
    dup2(fd, 2);
#ifdef PR_SET_THP_DISABLE
    /* In 4 KiB pages: the heap's 2 MiB pages made the peak of one page over
     * one file vary by 2-4 MiB from run to run, a fifth of the bound. */
    prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
#endif
    execv(argv[0], argv);
    _exit(127);
  }
  int status;
  struct rusage ru;
  assert_int_equal(wait4(pid, &status, 0, &ru), pid);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    fail_msg("%s: status %d", argv[0], status);
  return ru.ru_maxrss;
}
#endif

enum { FLEET_FEW = 2000, FLEET_MANY = 10000, BYTES_A_SESSION = 1536 };

/* Each output of tlreport over 2,000 and then 10,000 sessions of one group:
 * the 8,000 more may cost at most 1.5 KiB each, all told (the session
 * list, what the page says of each, the statistics' share). A page held in
 * memory (JSON is a kilobyte a session) or a per-session structure of the
 * size of a distribution breaks it. */
static void memory_grows_with_groups(void **state) {
#ifdef TL_TEST_ASAN
  (void)state;
  tl_test_skip_part("AddressSanitizer's shadow memory and quarantine hide the program's own");
#else
  fixture *f = *state;
  char *site = tl_test_path(f->dir, "site");
  char *md[] = {TLREPORT, "--db", f->db, NULL, NULL};
  char *json[] = {TLREPORT, "--db", f->db, "--format", "json", NULL};
  char *html[] = {TLREPORT, "--db", f->db, "--format", "html", NULL};
  char *by[] = {TLREPORT, "--db", f->db, "--by", "memory", NULL};
  char *site_a[] = {TLREPORT, "--db", f->db, "--force", "--site", site, NULL};
  char *const *runs[] = {md, json, html, by, site_a};
  enum { RUNS = sizeof runs / sizeof runs[0] };
  long few[RUNS];
  import_fleet(f->db, 0, FLEET_FEW);
  for (size_t r = 0; r < RUNS; r++)
    few[r] = peak_kib(runs[r]);
  import_fleet(f->db, FLEET_FEW, FLEET_MANY);
  for (size_t r = 0; r < RUNS; r++) {
    long many = peak_kib(runs[r]);
    double each = (double)(many - few[r]) * 1024.0 / (FLEET_MANY - FLEET_FEW);
    if (getenv("TL_TEST_SHOW"))
      fprintf(stderr, "%s %s: %ld %ld KiB: %.0f B\n", runs[r][3] ? runs[r][3] : "",
              runs[r][4] ? runs[r][4] : "", few[r], many, each);
    if (each > BYTES_A_SESSION)
      fail_msg("%s %s: %ld KiB at %d sessions, %ld at %d: %.0f bytes a session more",
               runs[r][3] ? runs[r][3] : "(the page)", runs[r][4] ? runs[r][4] : "", few[r],
               FLEET_FEW, many, FLEET_MANY, each);
  }
  free(site);
#endif
}

/* ======================================================================== */
/* Disk full                                                                 */

/* A file-size limit makes every write past it fail with EFBIG, as a full
 * disk fails with ENOSPC; it needs no privileges, so it works as root in a
 * container too. SIGXFSZ is ignored so that the write fails instead of the
 * signal killing the process (the disposition survives exec). */
static void set_file_size_limit(rlim_t limit, void (*on_sigxfsz)(int)) {
  struct rlimit rl = {limit, limit};
  signal(SIGXFSZ, on_sigxfsz);
  if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
    _exit(126);
}

static void limit_file_size(void *arg) { set_file_size_limit(*(rlim_t *)arg, SIG_IGN); }

static void disk_full_ends_sessions_cleanly(void **state) {
  fixture *f = *state;
  collect(f->db, "before", "20");
  /* The uv probe at delay 0 produces samples as fast as the loop turns, so
   * the limit is reached within a second or two. The limit sits a little
   * above what the file (and its WAL) hold already: a few 64 KiB pages. */
  struct stat st;
  assert_int_equal(stat(f->db, &st), 0);
  rlim_t limit = (rlim_t)st.st_size + 8 * 65536;
  char *a[] = {TLCOLLECT,  "--db", f->db,        "--label", "full", "--probe", "uv",
               "--delays", "0",    "--duration", "60s",     "-q",   NULL};
  char *err = expect_failure(a, NULL, limit_file_size, &limit, 1, "free some space");
  assert_non_null(strstr(err, "full"));
  free(err);

  /* The earlier sessions are intact; the new one ended as 'interrupted'
   * with the samples it committed, and the whole file checks out. */
  snap s[8];
  size_t n = snapshot(f->db, s, 8);
  assert_int_equal(n, 3);
  assert_string_equal(s[0].status, "complete");
  assert_int_equal(s[0].count, 20);
  assert_string_equal(s[2].status, "interrupted");
  assert_int_equal((int64_t)s[2].n, s[2].count);
  snap_free(s, n);
  tlstore_check_ok(f->db);

  /* A limit so small that not even a session can start: no session at all
   * is left behind, and the message is the same. */
  limit = 1024;
  char *b[] = {TLCOLLECT, "--db", f->db, "--label", "tiny", "--count", "5", "-q", NULL};
  err = expect_failure(b, NULL, limit_file_size, &limit, 1, "free some space");
  free(err);
  n = snapshot(f->db, s, 8);
  for (size_t i = 0; i < n; i++)
    assert_string_not_equal(s[i].status, "running");
  snap_free(s, n);
  tlstore_check_ok(f->db);
}

/* The limit as a shell's `ulimit -f` sets it: SIGXFSZ keeps its default
 * action, which kills a process that writes past the limit unless it
 * ignores the signal itself. */
static void limit_file_size_only(void *arg) { set_file_size_limit(*(rlim_t *)arg, SIG_DFL); }

/* `(ulimit -f 2000; tlcollect ...)`: tlcollect is not killed by SIGXFSZ but
 * fails with the one-line error, exit 1, and the sessions end 'interrupted'
 * with every sample they committed. */
static void file_size_limit_signal(void **state) {
  fixture *f = *state;
  /* Room for the new file's tables and indexes in the WAL (a 64 KiB frame
   * each page, about 1 MiB) and a first commit of samples, not much more. */
  rlim_t limit = 2400 * 1024;
  char *a[] = {TLCOLLECT,  "--db", f->db,        "--label", "f",  "--probe", "uv",
               "--delays", "0,1",  "--duration", "30s",     "-q", NULL};
  char *err = expect_failure(a, NULL, limit_file_size_only, &limit, 1, "free some space");
  free(err);
  snap s[4];
  size_t n = snapshot(f->db, s, 4);
  assert_int_equal(n, 2);
  for (size_t i = 0; i < n; i++) {
    assert_string_equal(s[i].status, "interrupted");
    assert_true(s[i].count > 0);
    assert_int_equal((int64_t)s[i].n, s[i].count);
  }
  snap_free(s, n);
  tlstore_check_ok(f->db);
}

/* The limit above which a page cannot be written: over SQLite's shared
 * memory file (32 KiB, which a reader writes) and under the page. */
enum { PAGE_LIMIT = 40 << 10 };

static int not_the_database(const struct dirent *e) {
  return strncmp(e->d_name, "tl.db", 5) != 0 && e->d_name[0] != '.';
}

/* Every file in dir but the database's (and . and ..), as one text: each
 * one's name then its bytes, in the order of their names. A temporary file
 * left behind shows too (".tl-report-..."), as does any change. */
static char *folder_text(const char *dir) {
  struct dirent **names;
  int n = scandir(dir, &names, not_the_database, alphasort);
  assert_true(n >= 0);
  char *text = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&text, &len);
  assert_non_null(m);
  DIR *d = opendir(dir); /* the hidden ones, by name only */
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
      fprintf(m, "hidden %s\n", e->d_name);
  if (d)
    closedir(d);
  for (int i = 0; i < n; i++) {
    char *path = tl_test_path(dir, names[i]->d_name);
    size_t flen = 0;
    char *bytes = tl_test_read_file(path, &flen);
    fprintf(m, "== %s %zu\n", names[i]->d_name, bytes ? flen : 0);
    if (bytes)
      fwrite(bytes, 1, flen, m);
    free(bytes);
    free(path);
    free(names[i]);
  }
  free(names);
  fclose(m);
  return text;
}

/* A page, a site or a page to standard output whose writing fails part way
 * (a file-size limit stands in for a full disk): what was there before is
 * left byte for byte, no temporary file stays behind, and no part of the
 * page is printed. Pages are written as they are made, never held whole in
 * memory, so only the rename of a whole file may replace one. */
/* In a child under a file size limit: a page whose last write is the one
 * the limit stops. stdio then holds nothing more to flush, and keeps only
 * that a write failed; the error must still name the limit. */
static void write_to_the_limit(void *arg) {
  const char *path = arg;
  set_file_size_limit(10000, SIG_IGN);
  char err[4352] = "", line[101];
  FILE *out;
  memset(line, 'x', 100);
  line[100] = '\0';
  tl_report_file *f = tl_report_file_open(path, 0, &out, err, sizeof err);
  if (!f) {
    fprintf(stderr, "%s\n", err);
    _exit(2);
  }
  for (int i = 0; i < 90; i++)
    fputs(line, out);
  static char last[6000];
  memset(last, 'y', sizeof last);
  fwrite(last, 1, sizeof last, out);
  int rc = tl_report_file_place(f, NULL, err, sizeof err);
  fprintf(stderr, "%s\n", err);
  _exit(rc == TL_OK ? 3 : strstr(err, "File too large") ? 0 : 1);
}

static void failed_last_write_says_why(void **state) {
  fixture *f = *state;
  char *page = tl_test_path(f->dir, "page.html");
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0)
    write_to_the_limit(page);
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  assert_int_equal(access(page, F_OK), -1); /* nothing placed */
  free(page);
}

static void failed_write_keeps_the_old_page(void **state) {
  fixture *f = *state;
  static const char *const labels[] = {"a", "b", "c"};
  for (size_t i = 0; i < 3; i++)
    collect_with(f->db, labels[i], "uv", "0,1", "50");
  char *page = tl_test_path(f->dir, "page.html"), *site = tl_test_path(f->dir, "site");
  char *w_page[] = {TLREPORT, "--db", f->db, "--format", "html", "-o", page, NULL};
  char *w_site[] = {TLREPORT, "--db", f->db, "--site", site, NULL};
  char *w_out[] = {TLREPORT, "--db", f->db, "--format", "html", NULL};
  char *const *writers[] = {w_page, w_site};
  for (size_t i = 0; i < 2; i++) {
    char *out, *err;
    if (tl_test_run(writers[i], NULL, &out, &err) != 0)
      fail_msg("%s: %s", writers[i][3], err);
    free(out);
    free(err);
  }
  size_t len;
  free(tl_test_read_file(page, &len));
  if (len <= PAGE_LIMIT)
    fail_msg("the page (%zu bytes) must be larger than the limit", len);
  char *before = folder_text(f->dir);
  char *site_before = folder_text(site);

  /* Under the limit: every writer fails with one line naming the cause. */
  rlim_t limit = PAGE_LIMIT;
  for (size_t i = 0; i < 2; i++)
    free(expect_failure(writers[i], NULL, limit_file_size, &limit, 1, "File too large"));
  char *env[] = {NULL, NULL};
  char tmpdir[4200];
  snprintf(tmpdir, sizeof tmpdir, "TMPDIR=%s", f->dir);
  env[0] = tmpdir;
  char *out, *err;
  int rc = tl_test_run_with(w_out, env, limit_file_size, &limit, &out, &err);
  if (rc != 1 || !strstr(err, "File too large") || out[0])
    fail_msg("to standard output: exit %d, %zu bytes out, '%s'", rc, strlen(out), err);
  free(out);
  free(err);

  char *after = folder_text(f->dir), *site_after = folder_text(site);
  assert_string_equal(before, after); /* no page changed, nothing left beside */
  assert_string_equal(site_before, site_after);
  assert_null(strstr(after, "hidden"));
  assert_null(strstr(site_after, "hidden"));
  free(before);
  free(after);
  free(site_before);
  free(site_after);
  free(page);
  free(site);
}

/* A real full file system: a 256 KiB tmpfs mounted in a private mount
 * namespace of the child, which then runs a shell: tlcollect, then tlstore
 * check and sqlite3 on what is left, all inside the namespace. Mounting
 * needs CAP_SYS_ADMIN; without it the file-size limit above stands in. */
static void mount_tmpfs(void *dir) {
#ifdef __linux__
  if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
      mount("tmpfs", dir, "tmpfs", 0, "size=2m") != 0)
    _exit(125);
#else
  (void)dir;
  _exit(125);
#endif
}

static void mount_tmpfs_large(void *dir) {
#ifdef __linux__
  if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
      mount("tmpfs", dir, "tmpfs", 0, "size=16m") != 0)
    _exit(125);
#else
  (void)dir;
  _exit(125);
#endif
}

static void tmpfs_full(void **state) {
  fixture *f = *state;
  char *mnt = tl_test_path(f->dir, "small");
  assert_int_equal(mkdir(mnt, 0755), 0);
  char *db = tl_test_path(mnt, "tl.db");
  char *a[] = {"/bin/sh",
               "-c",
               "\"$1\" --db \"$3\" --probe uv --delays 0 --duration 60s -q; echo \"exit=$?\"; "
               "\"$2\" --db \"$3\" check; echo \"check=$?\"; "
               "sqlite3 \"$3\" \"SELECT 'status=' || group_concat(status) FROM sessions\"",
               "sh",
               TLCOLLECT,
               TLSTORE,
               db,
               NULL};
  char *out, *err;
  int rc = tl_test_run_with(a, NULL, mount_tmpfs, mnt, &out, &err);
  if (rc == 125) {
    tl_test_skip_part("no tmpfs (mounting needs CAP_SYS_ADMIN); disk_full_ends_sessions_cleanly "
                      "covers a full disk with a file-size limit");
  } else {
    if (rc != 0 || !strstr(out, "exit=1\n") || !strstr(out, "ok\ncheck=0\n") ||
        !strstr(out, "status=interrupted\n") || !tl_test_one_line(err) ||
        !strstr(err, "free some space"))
      fail_msg("on a full tmpfs: exit %d, stdout '%s', stderr '%s'", rc, out, err);
  }
  free(out);
  free(err);
  free(db);
  free(mnt);
}

/* A tmpfs that a database already lives on, filled by another file until
 * about 1.5 MB is left: the collector's sessions start, their samples soon
 * no longer fit, and even then they end 'interrupted', not 'running'. */
/* A collector of one session per delay on a disk with 1.5 MiB left: it
 * fails with a one-line error, and every session it began ends (the
 * statuses start with want), none left 'running': the room kept free must
 * end them all. */
static void nearly_full(void **state, const char *delays, const char *want) {
  fixture *f = *state;
  char *mnt = tl_test_path(f->dir, "small");
  assert_int_equal(mkdir(mnt, 0755), 0);
  char *db = tl_test_path(mnt, "tl.db");
  char *a[] = {"/bin/sh",
               "-c",
               "cd \"$4\" && \"$1\" --db \"$3\" --label kept --delays 0 --count 3 -q && "
               "{ dd if=/dev/zero of=fill bs=64k 2>/dev/null; truncate -s -1536K fill; } && "
               "\"$1\" --db \"$3\" --label f --probe uv --delays \"$5\" --duration 10s -q; "
               "echo \"exit=$?\"; "
               "sqlite3 \"$3\" \"SELECT 'status=' || group_concat(status) FROM sessions\"; "
               "\"$2\" --db \"$3\" check; echo \"check=$?\"",
               "sh",
               TLCOLLECT,
               TLSTORE,
               db,
               mnt,
               (char *)delays,
               NULL};
  char *out, *err;
  int rc = tl_test_run_with(a, NULL, mount_tmpfs_large, mnt, &out, &err);
  char want_line[128];
  snprintf(want_line, sizeof want_line, "status=%s", want);
  if (rc == 125) {
    tl_test_skip_part("no tmpfs (mounting needs CAP_SYS_ADMIN)");
  } else {
    if (rc != 0 || !strstr(out, "exit=1\n") || !strstr(out, want_line) || strstr(out, "running") ||
        !strstr(out, "ok\ncheck=0\n") || !tl_test_one_line(err) || !strstr(err, "free some space"))
      fail_msg("on a nearly full tmpfs (delays %s): exit %d, stdout '%s', stderr '%s'", delays, rc,
               out, err);
  }
  free(out);
  free(err);
  free(db);
  free(mnt);
}

static void tmpfs_nearly_full(void **state) {
  nearly_full(state, "0,1", "complete,interrupted,interrupted\n");
}

/* More sessions than the room left can end: those that cannot begin are
 * refused, and those that began end. */
static void tmpfs_nearly_full_many_delays(void **state) {
  nearly_full(state, "0,1,2,5,10,20", "complete,interrupted");
}

/* However little room the disk has left when a session starts, from none
 * to enough for all its samples, the session ends with every sample it
 * committed: the facts written at its end (the load, the probe's) must not
 * spend the frames kept for its final status. Each step starts from the same
 * database and leaves 16 KiB more free, so the few sizes where that went
 * wrong (the samples just fit, then the facts took the rest) are among them. */
static void tmpfs_any_room_left(void **state) {
  fixture *f = *state;
  char *mnt = tl_test_path(f->dir, "small");
  assert_int_equal(mkdir(mnt, 0755), 0);
  char *a[] = {
      "/bin/sh",
      "-c",
      "cd \"$3\" && \"$1\" --db base.db --label kept --delays 0 --count 3 -q || exit 9; "
      "k=480; while [ $k -le 1264 ]; do "
      "rm -f t.db t.db-wal t.db-shm; cp base.db t.db || exit 9; "
      "{ dd if=/dev/zero of=fill bs=64k 2>/dev/null; truncate -s -${k}K fill; } || exit 9; "
      "\"$1\" --db t.db --label f --probe uv --delays 0 --count 5000 -q 2>/dev/null; "
      "echo \"free=${k}K exit=$? $(sqlite3 t.db \"SELECT group_concat(status || ':' || "
      "sample_count) FROM sessions\") $(\"$2\" --db t.db check 2>&1)\"; "
      "rm -f fill; k=$((k + 16)); done",
      "sh",
      TLCOLLECT,
      TLSTORE,
      mnt,
      NULL};
  char *out, *err;
  int rc = tl_test_run_with(a, NULL, mount_tmpfs_large, mnt, &out, &err);
  if (rc == 125) {
    tl_test_skip_part("no tmpfs (mounting needs CAP_SYS_ADMIN)");
  } else {
    /* 50 sizes, each with check ok and: exit 0 and all 5000 samples stored
     * (room enough), or exit 1 and the session not started, ended
     * 'interrupted' with no samples, or 'complete' with all of them (a fact
     * at the end found no room). */
    int lines = 0, bad = 0, complete = 0;
    for (const char *l = out; (l = strstr(l, "free=")); l++) {
      lines++;
      const char *eol = strchr(l, '\n');
      char line[256];
      snprintf(line, sizeof line, "%.*s", (int)(eol ? (size_t)(eol - l) : strlen(l)), l);
      int ok = strstr(line, " ok") && (strstr(line, "exit=0 complete:3,complete:5000 ") ||
                                       strstr(line, "exit=1 complete:3 ") ||
                                       strstr(line, "exit=1 complete:3,interrupted:0 ") ||
                                       strstr(line, "exit=1 complete:3,complete:5000 "));
      if (!ok)
        printf("wrong: %s\n", line), bad++;
      complete += strstr(line, "exit=0 ") != NULL;
    }
    /* The range runs from no room for a session to room for all of it. */
    if (rc != 0 || lines != 50 || bad || !complete || !strstr(out, "exit=1 complete:3 "))
      fail_msg("with little room left: exit %d, %d of %d sizes wrong, stderr '%s'", rc, bad, lines,
               err);
  }
  free(out);
  free(err);
  free(mnt);
}

/* The statuses as the file holds them, read without tl. */
static const char *raw_statuses(const char *path, char *buf, size_t len) {
  sqlite3 *db;
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  assert_int_equal(
      sqlite3_prepare_v2(db, "SELECT group_concat(status) FROM sessions", -1, &st, NULL),
      SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  snprintf(buf, len, "%s", (const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  sqlite3_close(db);
  return buf;
}

/* A collector killed while nothing can be written: its session stays
 * 'running' in the file, but every reader shows it 'interrupted' (its
 * process is gone on this host), and check says it could not be marked and
 * why, with exit 1. Once writing works again, check marks it. A file-size
 * limit stands in for the full disk, so this runs everywhere. */
static void stale_session_while_full(void **state) {
  fixture *f = *state;
  collect(f->db, "kept", "3");
  tl_session_spec spec = {.run_uuid = "r",
                          .label = "dead",
                          .probe = "settimeout",
                          .command_line = "tlcollect",
                          .host_fingerprint = "0123456789abcdef",
                          .libuv_version = "1"};
  int64_t v[2] = {1000000, 2000000};
  assert_int_equal(tl_test_die_mid_session(f->db, spec, v, 2), 0);

  /* Room for the 32 KiB -shm a reader rebuilds after a crash, none for a
   * 64 KiB page of the WAL or the file. */
  rlim_t limit = 65536;
  char *out, *err;
  int rc;
  char *l[] = {TLSTORE, "--db", f->db, "sessions", "--label", "dead", NULL};
  rc = tl_test_run_with(l, NULL, limit_file_size, &limit, &out, &err);
  if (rc != 0 || !strstr(out, " interrupted ") || strstr(out, "running"))
    fail_msg("sessions while nothing can be written: '%s%s'", out, err);
  free(out);
  free(err);
  char *r[] = {TLREPORT, "--db", f->db, "--compare", "dead", NULL};
  assert_int_equal(tl_test_run_with(r, NULL, limit_file_size, &limit, &out, &err), 0);
  assert_non_null(strstr(out, "interrupted"));
  free(out);
  free(err);
  char *c[] = {TLSTORE, "--db", f->db, "check", NULL};
  rc = tl_test_run_with(c, NULL, limit_file_size, &limit, &out, &err);
  if (rc != 1 || !strstr(out, "its collector is gone, but it could not be marked 'interrupted'") ||
      !strstr(out, "file-size limit") || !tl_test_one_line(err))
    fail_msg("check while nothing can be written: exit %d, '%s%s'", rc, out, err);
  free(out);
  free(err);
  /* Nothing was written: the file still says 'running'. */
  char raw[64];
  assert_string_equal(raw_statuses(f->db, raw, sizeof raw), "complete,complete,running");
  tlstore_check_ok(f->db);
  assert_string_equal(raw_statuses(f->db, raw, sizeof raw), "complete,complete,interrupted");
}

/* ======================================================================== */
/* Read-only file or folder                                                  */

/* As root the programs run as 'nobody' (tl_test_unprivileged), copied next
 * to the database so that 'nobody' can run them wherever the build tree
 * lives. */
static char *copy_program(const char *dir, const char *from, const char *name) {
  char *to = tl_test_reachable_program(dir, from, name);
  assert_non_null(to);
  return to;
}

static void read_only_file_and_folder(void **state) {
  fixture *f = *state;
  void *who = (void *)tl_test_unprivileged();
  char *ro = tl_test_path(f->dir, "ro");
  assert_int_equal(mkdir(ro, 0755), 0);
  char *db = tl_test_path(ro, "tl.db");
  collect(db, "kept", "20");
  assert_int_equal(chmod(f->dir, 0755), 0);
  char *collect_bin = copy_program(f->dir, TLCOLLECT, "tlcollect");
  char *store_bin = copy_program(f->dir, TLSTORE, "tlstore");
  char *report_bin = copy_program(f->dir, TLREPORT, "tlreport");

  /* A write-protected file in a writable folder: tlcollect refuses at once,
   * tlstore and tlreport still read it. */
  assert_int_equal(chmod(ro, 0777), 0);
  assert_int_equal(chmod(db, 0444), 0);
  char *c1[] = {collect_bin, "--db", db, "--count", "5", "-q", NULL};
  free(expect_failure(c1, NULL, tl_test_drop_privileges, who, 1, "read-only"));
  char *out, *err;
  char *i1[] = {store_bin, "--db", db, "info", NULL};
  assert_int_equal(tl_test_run_with(i1, NULL, tl_test_drop_privileges, who, &out, &err), 0);
  assert_non_null(strstr(out, "sessions:       2\n"));
  free(out);
  free(err);
  char *k1[] = {store_bin, "--db", db, "check", NULL};
  assert_int_equal(tl_test_run_with(k1, NULL, tl_test_drop_privileges, who, &out, &err), 0);
  assert_string_equal(out, "ok\n");
  free(out);
  free(err);
  char *r1[] = {report_bin, "--db", db, NULL};
  assert_int_equal(tl_test_run_with(r1, NULL, tl_test_drop_privileges, who, &out, &err), 0);
  assert_non_null(strstr(out, "| kept |"));
  free(out);
  free(err);

  /* A read-only folder: SQLite keeps its -wal and -shm files beside the
   * database, so even a reader needs the folder; the message says so. */
  char *wal = tl_test_path(ro, "tl.db-wal"), *shm = tl_test_path(ro, "tl.db-shm");
  unlink(wal);
  unlink(shm);
  assert_int_equal(chmod(db, 0644), 0);
  assert_int_equal(chmod(ro, 0555), 0);
  free(expect_failure(c1, NULL, tl_test_drop_privileges, who, 1, "read-only"));
  char *e = expect_failure(r1, NULL, tl_test_drop_privileges, who, 1, "folder");
  assert_non_null(strstr(e, "writable"));
  free(e);

  /* The default path under a folder that cannot be created. */
  char env[4300];
  snprintf(env, sizeof env, "XDG_DATA_HOME=%s/data", ro);
  char *envs[] = {env, "TL_DB=", NULL};
  char *c2[] = {collect_bin, "--count", "5", "-q", NULL};
  free(expect_failure(c2, envs, tl_test_drop_privileges, who, 1, "cannot create folder"));

  /* Nothing was written by any of them. */
  assert_int_equal(chmod(ro, 0755), 0);
  snap s[4];
  size_t n = snapshot(db, s, 4);
  assert_int_equal(n, 2);
  for (size_t i = 0; i < n; i++)
    assert_string_equal(s[i].status, "complete");
  snap_free(s, n);
  free(wal);
  free(shm);
  free(collect_bin);
  free(store_bin);
  free(report_bin);
  free(db);
  free(ro);
}

/* A FIFO would block SQLite's first read forever; /dev/null and /dev/zero
 * would get a -journal file beside them (as root). Every program and every
 * tlstore command refuses a database that is not a regular file at once. */
static void stop_hanging(void *arg) {
  (void)arg;
  alarm(20); /* a hang shows as SIGALRM, not a stuck suite */
}

/* A folder where SQLite keeps its -wal or -shm: every program says so,
 * naming it, rather than "read-only" or "unable to open database file". */
static void sidecar_folders_named(void **state) {
  fixture *f = *state;
  collect(f->db, "kept", "10");
  static const char *const ext[] = {"-wal", "-shm"};
  for (size_t i = 0; i < 2; i++) {
    char side[4200];
    snprintf(side, sizeof side, "%s%s", f->db, ext[i]);
    unlink(side);
    assert_int_equal(mkdir(side, 0755), 0);
    char want[4300];
    snprintf(want, sizeof want, "%s is a folder", side);
    char *s1[] = {TLSTORE, "--db", f->db, "info", NULL};
    char *r1[] = {TLREPORT, "--db", f->db, NULL};
    char *c1[] = {TLCOLLECT, "--db", f->db, "--label", "x", "--count", "5", "-q", NULL};
    free(expect_failure(s1, NULL, NULL, NULL, 1, want));
    free(expect_failure(r1, NULL, NULL, NULL, 1, want));
    free(expect_failure(c1, NULL, NULL, NULL, 1, want));
    assert_int_equal(rmdir(side), 0);
  }
  tlstore_check_ok(f->db);
}

static void special_files_refused(void **state) {
  fixture *f = *state;
  char *fifo = tl_test_path(f->dir, "fifo");
  assert_int_equal(mkfifo(fifo, 0600), 0);
  char *good = tl_test_path(f->dir, "good.db");
  collect(good, "x", "5");
  const char *specials[] = {fifo, "/dev/null", "/dev/zero"};
  const char *said[] = {"is a FIFO", "is a character device", "is a character device"};
  for (size_t k = 0; k < 3; k++) {
    char *db = (char *)specials[k];
    char *runs[][8] = {
        {TLREPORT, "--db", db, NULL},
        {TLCOLLECT, "--db", db, "--count", "3", "-q", NULL},
        {TLSTORE, "--db", db, "info", NULL},
        {TLSTORE, "--db", db, "check", NULL},
        {TLSTORE, "--db", db, "labels", NULL},
        {TLSTORE, "--db", db, "hosts", NULL},
        {TLSTORE, "--db", db, "sessions", NULL},
        {TLSTORE, "--db", db, "export", "--format", "csv", NULL},
        {TLSTORE, "--db", db, "vacuum", NULL},
        {TLSTORE, "--db", db, "prune", "--before", "2020-01-01", NULL},
        {TLSTORE, "--db", db, "merge", good, NULL},
        {TLSTORE, "--db", good, "merge", db, NULL},
    };
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++)
      free(expect_failure(runs[i], NULL, stop_hanging, NULL, 1, said[k]));
  }
  struct stat st;
  assert_int_equal(stat("/dev/null-journal", &st), -1);
  assert_int_equal(stat("/dev/zero-journal", &st), -1);
  free(fifo);
  free(good);
}

/* A command that only looks at a database does not turn an empty file into
 * one (704 KiB of schema); it says the file is empty, as tlreport does. */
static void empty_file_stays_empty(void **state) {
  fixture *f = *state;
  assert_int_equal(tl_test_write_file(f->db, "", 0), 0);
  const char *cmds[] = {"info", "check", "labels", "sessions", "vacuum"};
  for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
    char *a[] = {TLSTORE, "--db", f->db, (char *)cmds[i], NULL};
    free(expect_failure(a, NULL, NULL, NULL, 1, "is empty, not a tl database"));
    struct stat st;
    assert_int_equal(stat(f->db, &st), 0);
    assert_int_equal(st.st_size, 0);
  }
  char *r[] = {TLREPORT, "--db", f->db, NULL};
  free(expect_failure(r, NULL, NULL, NULL, 1, "empty"));
  /* A collector makes it a database. */
  collect(f->db, "x", "3");
}

/* Readers of a write-protected database leave no -wal or -shm file behind
 * at its mode, which would stop the next writer once the file is writable
 * again; one left by an older tl is named in the writer's message. */
static void readers_leave_no_sidecars(void **state) {
  fixture *f = *state;
  void *who = (void *)tl_test_unprivileged();
  char *dir = tl_test_path(f->dir, "w");
  assert_int_equal(mkdir(dir, 0777), 0);
  assert_int_equal(chmod(dir, 0777), 0);
  assert_int_equal(chmod(f->dir, 0755), 0);
  char *db = tl_test_path(dir, "tl.db");
  collect(db, "kept", "10");
  char *collect_bin = copy_program(f->dir, TLCOLLECT, "tlcollect");
  char *store_bin = copy_program(f->dir, TLSTORE, "tlstore");
  char *report_bin = copy_program(f->dir, TLREPORT, "tlreport");
  char *wal = tl_test_path(dir, "tl.db-wal"), *shm = tl_test_path(dir, "tl.db-shm");
  unlink(wal);
  unlink(shm);
  assert_int_equal(chmod(db, 0444), 0);
  char *readers[][6] = {{report_bin, "--db", db, NULL},
                        {store_bin, "--db", db, "check", NULL},
                        {store_bin, "--db", db, "info", NULL},
                        {store_bin, "--db", db, "sessions", NULL},
                        {store_bin, "--db", db, "export", "--format", "csv"}};
  for (size_t i = 0; i < sizeof readers / sizeof *readers; i++) {
    char *argv[7] = {0};
    memcpy(argv, readers[i], sizeof readers[i]);
    char *out, *err;
    int rc = tl_test_run_with(argv, NULL, tl_test_drop_privileges, who, &out, &err);
    if (rc != 0 || access(wal, F_OK) == 0 || access(shm, F_OK) == 0)
      fail_msg("%s %s: exit %d, -wal %s, -shm %s: %s", argv[0], argv[3], rc,
               access(wal, F_OK) == 0 ? "left" : "none", access(shm, F_OK) == 0 ? "left" : "none",
               err);
    free(out);
    free(err);
  }
  assert_int_equal(chmod(db, 0666), 0);
  char *c1[] = {collect_bin, "--db", db, "--count", "3", "-q", NULL};
  char *out, *err;
  assert_int_equal(tl_test_run_with(c1, NULL, tl_test_drop_privileges, who, &out, &err), 0);
  free(out);
  free(err);
  /* A -shm an older tl left at mode 0444. */
  unlink(wal);
  unlink(shm);
  assert_int_equal(tl_test_write_file(shm, "", 0), 0);
  assert_int_equal(chmod(shm, 0444), 0);
  char *e = expect_failure(c1, NULL, tl_test_drop_privileges, who, 1, "tl.db-shm is read-only");
  assert_non_null(strstr(e, "chmod u+w"));
  free(e);
  unlink(shm);
  free(wal);
  free(shm);
  free(collect_bin);
  free(store_bin);
  free(report_bin);
  free(db);
  free(dir);
}

/* A read-only file system, where permissions play no part (root included):
 * the folder is bind-mounted read-only in a private mount namespace of the
 * child. tlcollect refuses; the readers read the file as it is. */
static void mount_read_only(void *arg) {
#ifdef __linux__
  char *const *dirs = arg; /* source, view */
  if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
      mount(dirs[0], dirs[1], NULL, MS_BIND, NULL) != 0 ||
      mount(NULL, dirs[1], NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) != 0)
    _exit(125);
#else
  (void)arg;
  _exit(125);
#endif
}

static void read_only_file_system(void **state) {
  fixture *f = *state;
  char *src = tl_test_path(f->dir, "src"), *view = tl_test_path(f->dir, "view");
  assert_int_equal(mkdir(src, 0755), 0);
  assert_int_equal(mkdir(view, 0755), 0);
  char *db = tl_test_path(src, "tl.db"), *seen = tl_test_path(view, "tl.db");
  collect(db, "kept", "10");
  char *dirs[] = {src, view};
  char *c1[] = {TLCOLLECT, "--db", seen, "--count", "3", "-q", NULL};
  char *out, *err;
  int rc = tl_test_run_with(c1, NULL, mount_read_only, dirs, &out, &err);
  if (rc == 125) {
    tl_test_skip_part("no read-only mount (needs CAP_SYS_ADMIN); read_only_file_and_folder "
                      "covers permissions");
  } else {
    if (rc != 1 || !tl_test_one_line(err) || !strstr(err, "read-only"))
      fail_msg("tlcollect on a read-only file system: exit %d, '%s'", rc, err);
    char *r1[] = {TLREPORT, "--db", seen, NULL};
    char *s1[] = {TLSTORE, "--db", seen, "check", NULL};
    char *const *readers[] = {r1, s1};
    for (size_t i = 0; i < 2; i++) {
      free(out);
      free(err);
      rc = tl_test_run_with(readers[i], NULL, mount_read_only, dirs, &out, &err);
      if (rc != 0 || (i == 0 && !strstr(out, "| kept |")) || (i == 1 && strcmp(out, "ok\n")))
        fail_msg("%s on a read-only file system: exit %d, '%s%s'", readers[i][0], rc, out, err);
    }
  }
  free(out);
  free(err);
  snap sn[4];
  size_t n = snapshot(db, sn, 4);
  assert_int_equal(n, 2);
  snap_free(sn, n);
  free(db);
  free(seen);
  free(src);
  free(view);
}

/* ======================================================================== */
/* A lock held longer than the busy timeout                                  */

static void locked_database(void **state) {
  fixture *f = *state;
  collect(f->db, "kept", "10");
  sqlite3 *holder;
  assert_int_equal(sqlite3_open(f->db, &holder), SQLITE_OK);
  assert_int_equal(sqlite3_exec(holder, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
  /* Readers are not blocked by a writer in WAL mode. */
  tlstore_check_ok(f->db);
  /* A second writer waits out the busy timeout (5 s), then says why. */
  char *a[] = {TLCOLLECT, "--db", f->db, "--label", "blocked", "--count", "5", "-q", NULL};
  char *err = expect_failure(a, NULL, NULL, NULL, 1, "locked");
  assert_non_null(strstr(err, "try again"));
  free(err);
  assert_int_equal(sqlite3_exec(holder, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(holder);
  snap s[4];
  size_t n = snapshot(f->db, s, 4);
  assert_int_equal(n, 2); /* no 'blocked' session, not even a started one */
  snap_free(s, n);
  tlstore_check_ok(f->db);
}

/* Sessions in db so far (0 while it cannot be read). */
static int64_t session_count(const char *db) { return tl_test_stats(db).sessions; }

/* Another process holds the write lock for 8 s, past the 5 s busy timeout,
 * while tlcollect measures as fast as it can: the queue fills, measuring
 * pauses, and once the lock is gone every sample is stored, exactly the
 * count asked for, with the session 'complete'. */
static void lock_held_past_busy_timeout(void **state) {
  fixture *f = *state;
  char *log = tl_test_path(f->dir, "collect.log");
  char *a[] = {TLCOLLECT,  "--db", f->db,     "--label", "held", "--probe", "uv",
               "--delays", "0",    "--count", "3000000", "-q",   NULL};
  pid_t pid = tl_test_start(a, log);
  for (int i = 0; i < 100 && session_count(f->db) < 1; i++)
    usleep(50000);
  assert_int_equal(session_count(f->db), 1);
  sqlite3 *holder;
  assert_int_equal(sqlite3_open(f->db, &holder), SQLITE_OK);
  sqlite3_busy_timeout(holder, 5000);
  assert_int_equal(sqlite3_exec(holder, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
  sleep(8);
  assert_int_equal(sqlite3_exec(holder, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(holder);
  int st;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  size_t len;
  char *text = tl_test_read_file(log, &len);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
    fail_msg("tlcollect with the lock held for 8 s: status %d, '%s'", st, text);
  free(text);
  expect_one_session(f->db, "complete", 3000000);
  tlstore_check_ok(f->db);
  free(log);
}

/* A lock held past the stale limit (set to 1 s here through
 * TL_STALE_SECONDS; 10 minutes by default) while the collector lives: every
 * reader and a writable open still see its session 'running', since its
 * process is alive on this host; once the lock is gone the collector stores
 * every sample and ends the session 'complete'. */
static void lock_held_past_stale_limit(void **state) {
  fixture *f = *state;
  setenv("TL_STALE_SECONDS", "1", 1); /* for this process and the collector */
  char *log = tl_test_path(f->dir, "collect.log");
  char *a[] = {TLCOLLECT, "--db",    f->db,  "--label", "held", "--delays",
               "1",       "--count", "4000", "-q",      NULL};
  pid_t pid = tl_test_start(a, log);
  for (int i = 0; i < 100 && committed(f->db) < 100; i++)
    usleep(50000);
  assert_true(committed(f->db) >= 100);
  sqlite3 *holder;
  assert_int_equal(sqlite3_open(f->db, &holder), SQLITE_OK);
  sqlite3_busy_timeout(holder, 5000);
  assert_int_equal(sqlite3_exec(holder, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
  sleep(3);
  expect_one_session(f->db, "running", -1);
  char *r[] = {TLSTORE, "--db", f->db, "sessions", NULL};
  char *out = NULL;
  assert_int_equal(tl_test_run(r, NULL, &out, NULL), 0);
  if (!strstr(out, "running") || strstr(out, "interrupted"))
    fail_msg("tlstore list with the collector alive but locked out: '%s'", out);
  free(out);
  assert_int_equal(sqlite3_exec(holder, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(holder);
  /* A writable open in the moment before the collector's next commit. */
  tl_store *s;
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  tl_store_close(s);
  int st;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  unsetenv("TL_STALE_SECONDS");
  size_t len;
  char *text = tl_test_read_file(log, &len);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
    fail_msg("tlcollect with the lock held past the stale limit: status %d, '%s'", st, text);
  free(text);
  expect_one_session(f->db, "complete", 4000);
  tlstore_check_ok(f->db);
  free(log);
}

/* A lock that is never released: a stop (SIGTERM) gives up waiting, and
 * tlcollect says how many samples it could not store. Once the lock is
 * gone the session shows 'interrupted' with what it committed. */
static void lock_never_released(void **state) {
  fixture *f = *state;
  char *log = tl_test_path(f->dir, "collect.log");
  char *a[] = {TLCOLLECT, "--db",    f->db,     "--label", "held", "--delays",
               "1",       "--count", "1000000", "-q",      NULL};
  pid_t pid = tl_test_start(a, log);
  for (int i = 0; i < 100 && committed(f->db) < 200; i++)
    usleep(50000);
  assert_true(committed(f->db) >= 200);
  sqlite3 *holder;
  assert_int_equal(sqlite3_open(f->db, &holder), SQLITE_OK);
  sqlite3_busy_timeout(holder, 5000);
  assert_int_equal(sqlite3_exec(holder, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
  sleep(2);
  assert_int_equal(kill(pid, SIGTERM), 0);
  int st;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  size_t len;
  char *text = tl_test_read_file(log, &len);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 1 || !tl_test_one_line(text) ||
      !strstr(text, "locked") || !strstr(text, "samples could not be stored"))
    fail_msg("tlcollect stopped while the lock is held: status %d, '%s'", st, text);
  free(text);
  assert_int_equal(sqlite3_exec(holder, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(holder);
  tlstore_check_ok(f->db); /* a writable open: the session's collector is gone */
  expect_one_session(f->db, "interrupted", -1);
  free(log);
}

/* ======================================================================== */
/* Sessions whose summary or sample count is damaged                         */

/* Three imported sessions (a, b of the same values, c of others); returns
 * the uuid of c, the one the damages below hit. */
static void three_imported(const fixture *f, char uuid[37]) {
  char *v = tl_test_path(f->dir, "v.txt"), *w = tl_test_path(f->dir, "w.txt");
  assert_int_equal(tl_test_write_file(v, "1200345\n1100777\n1999999\n", 24), 0);
  assert_int_equal(tl_test_write_file(w, "5000000\n6000000\n7000000\n", 24), 0);
  static const char *const labels[] = {"a", "b", "c"};
  for (int i = 0; i < 3; i++) {
    char *a[] = {TLSTORE,        "--db",       f->db,     "import",
                 "--format",     "csv",        "--label", (char *)labels[i],
                 "--probe",      "settimeout", "--delay", "1ms",
                 i == 2 ? w : v, NULL};
    char *out;
    assert_int_equal(tl_test_run(a, NULL, &out, NULL), 0);
    free(out);
  }
  sqlite3 *db;
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
  assert_int_equal(
      sqlite3_prepare_v2(db, "SELECT " TL_TEST_UUID_TEXT("uuid") " FROM sessions WHERE label = 'c'",
                         -1, &st, NULL),
      SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  snprintf(uuid, 37, "%s", (const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  sqlite3_close(db);
  free(v);
  free(w);
}

/* Each damage of session c: every program that reads it fails with one
 * line naming the file and the session (never an empty "error: "), and
 * tlreport --skip-damaged leaves it out and reports on the rest. */
static void damaged_summaries_and_counts(void **state) {
  fixture *f = *state;
  char *clean = tl_test_path(f->dir, "clean.db");
  char uuid[37];
  {
    fixture g = {f->dir, clean};
    three_imported(&g, uuid);
  }
  static const char *const damages[] = {
      /* A summary whose checksum holds but whose samples are another's. */
      "UPDATE session_summaries SET data = (SELECT data FROM session_summaries m JOIN sessions s "
      "ON s.id = m.session_id WHERE s.label = 'a') WHERE session_id = (SELECT id FROM sessions "
      "WHERE label = 'c')",
      /* A summary that is no summary. */
      "UPDATE session_summaries SET data = zeroblob(length(data)) WHERE session_id = (SELECT id "
      "FROM sessions WHERE label = 'c')",
      /* A sample count that its summary and blocks do not hold. */
      "UPDATE sessions SET sample_count = 4 WHERE label = 'c'",
      /* The same without a summary: only the blocks tell. */
      "DELETE FROM session_summaries WHERE session_id = (SELECT id FROM sessions WHERE label = "
      "'c'); UPDATE sessions SET sample_count = 4 WHERE label = 'c'",
  };
  for (size_t k = 0; k < sizeof damages / sizeof damages[0]; k++) {
    unlink(f->db);
    assert_int_equal(tl_test_copy_file(clean, f->db), 0);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, damages[k], NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    char *site = tl_test_path(f->dir, "site");
    char *report[] = {TLREPORT, "--db", f->db, NULL};
    char *check[] = {TLREPORT, "--db", f->db, "--check", NULL};
    char *site_a[] = {TLREPORT, "--db", f->db, "--site", site, NULL};
    char *hgrm[] = {TLSTORE, "--db", f->db, "export", "--format", "hgrm", NULL};
    char *const *failing[] = {report, check, site_a, hgrm};
    for (size_t i = 0; i < 4; i++) {
      char *err = expect_failure(failing[i], NULL, NULL, NULL, 1, uuid);
      if (!strstr(err, f->db))
        fail_msg("damage %zu, %s %s: '%s' names no file", k, failing[i][0], failing[i][3], err);
      free(err);
    }
    char *skip[] = {TLREPORT, "--db", f->db, "--skip-damaged", NULL};
    char *out, *err;
    int rc = tl_test_run(skip, NULL, &out, &err);
    if (rc != 0 || !strstr(out, "Left out") || !strstr(out, uuid))
      fail_msg("damage %zu: --skip-damaged: exit %d, '%s'", k, rc, err);
    free(out);
    free(err);
    tl_test_rmdir(site);
    free(site);
  }
  free(clean);
}

/* ======================================================================== */
/* Output paths another user controls                                        */

/* In a shared folder, a symbolic link of another user's for --site's folder
 * or -o's folder is not followed (on systems without
 * fs.protected_symlinks that is tl's own rule), and -o over another user's
 * file does not pass that file's mode on to the page that replaces it.
 * Needs root, to own files as another user. */
static void output_paths_of_other_users(void **state) {
  fixture *f = *state;
  const tl_test_creds *other = tl_test_unprivileged();
  if (!other) {
    tl_test_skip("needs root, to make files another user owns");
  }
  collect(f->db, "kept", "50");
  char *target = tl_test_path(f->dir, "target"), *link = tl_test_path(f->dir, "link");
  assert_int_equal(mkdir(target, 0777), 0);
  assert_int_equal(symlink(target, link), 0);
  assert_int_equal(lchown(link, other->uid, other->gid), 0);
  char page[4200];
  snprintf(page, sizeof page, "%s/page.md", link);
  char *site_a[] = {TLREPORT, "--db", f->db, "--site", link, NULL};
  char *out_a[] = {TLREPORT, "--db", f->db, "-o", page, NULL};
  free(expect_failure(site_a, NULL, NULL, NULL, 1, "symbolic link of another user's"));
  free(expect_failure(out_a, NULL, NULL, NULL, 1, "symbolic link of another user's"));
  assert_int_equal(tl_test_entries(target), 0);
  /* The user's own link is theirs to follow. */
  assert_int_equal(lchown(link, getuid(), getgid()), 0);
  char *out;
  assert_int_equal(tl_test_run(out_a, NULL, &out, NULL), 0);
  free(out);
  char *written = tl_test_path(target, "page.md");
  assert_int_equal(access(written, F_OK), 0); /* with its charts beside it */
  free(written);

  /* -o over another user's page (0666) and over the user's own private one
   * (000): the first becomes the user's new file, 0644 less the umask; the
   * second keeps its mode. */
  char *theirs = tl_test_path(f->dir, "theirs.md"), *mine = tl_test_path(f->dir, "mine.md");
  static const char *const marker = "<!-- tl-report -->\n"; /* what tlreport writes first */
  assert_int_equal(tl_test_write_file(theirs, marker, strlen(marker)), 0);
  assert_int_equal(tl_test_write_file(mine, marker, strlen(marker)), 0);
  assert_int_equal(chown(theirs, other->uid, other->gid), 0);
  assert_int_equal(chmod(theirs, 0666), 0);
  assert_int_equal(chmod(mine, 0), 0);
  mode_t mask = umask(022);
  for (int k = 0; k < 2; k++) {
    char *a[] = {TLREPORT, "--db", f->db, "-o", k ? mine : theirs, NULL};
    char *err;
    int rc = tl_test_run(a, NULL, &out, &err);
    if (rc != 0)
      fail_msg("-o %s: exit %d: %s", a[4], rc, err);
    free(out);
    free(err);
  }
  umask(mask);
  struct stat st;
  assert_int_equal(stat(theirs, &st), 0);
  assert_int_equal(st.st_uid, getuid());
  assert_int_equal(st.st_mode & 0777, 0644);
  assert_int_equal(stat(mine, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0);
  free(theirs);
  free(mine);
  free(target);
  free(link);
}

/* ======================================================================== */
/* Files that are not (whole) tl databases                                   */

/* Each program on a bad file: a failure (exit 1) with one line, or for
 * damage SQLite cannot see without looking, a success; never a crash. */
static void no_crash_on(const char *db, int must_fail, int with_collect) {
  char *s1[] = {TLSTORE, "--db", (char *)db, "check", NULL};
  char *r1[] = {TLREPORT, "--db", (char *)db, NULL};
  char *c1[] = {TLCOLLECT, "--db",    (char *)db, "--probe", "uv", "--delays",
                "0",       "--count", "3",        "-q",      NULL};
  char *const *runs[] = {s1, r1, c1};
  for (size_t i = 0; i < (with_collect ? 3u : 2u); i++) {
    char *out, *err;
    int rc = tl_test_run(runs[i], NULL, &out, &err);
    int ok = rc == 0 || (rc == 1 && tl_test_one_line(err));
    if (i == 0 && must_fail)
      ok = rc == 1; /* check lists problems on stdout, then one line */
    if (!ok || tl_test_unsafe_at(err) >= 0 || tl_test_unsafe_at(out) >= 0)
      fail_msg("%s %s on %s: exit %d, stderr '%s'", runs[i][0], runs[i][3] ? runs[i][3] : "", db,
               rc, err);
    free(out);
    free(err);
  }
}

static void not_a_database(void **state) {
  fixture *f = *state;
  static const struct {
    const char *bytes;
    size_t len;
  } files[] = {
      {"hello, this is not a database at all, just some words.\n", 56},
      {"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16},
      {"SQLite format 3", 15}, /* the magic, cut short */
  };
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    assert_int_equal(tl_test_write_file(f->db, files[i].bytes, files[i].len), 0);
    char *s1[] = {TLSTORE, "--db", f->db, "check", NULL};
    free(expect_failure(s1, NULL, NULL, NULL, 1, "not a tl database"));
    char *r1[] = {TLREPORT, "--db", f->db, NULL};
    free(expect_failure(r1, NULL, NULL, NULL, 1, "not a tl database"));
    char *c1[] = {TLCOLLECT, "--db", f->db, "--count", "3", "-q", NULL};
    free(expect_failure(c1, NULL, NULL, NULL, 1, "not a tl database"));
    /* and left as it was */
    size_t len;
    char *now = tl_test_read_file(f->db, &len);
    assert_memory_equal(now, files[i].bytes, files[i].len);
    free(now);
  }
  /* Another program's SQLite database. */
  unlink(f->db);
  sqlite3 *db;
  assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
  assert_int_equal(sqlite3_exec(db, "CREATE TABLE notes(x)", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(db);
  char *c2[] = {TLCOLLECT, "--db", f->db, "--count", "3", "-q", NULL};
  free(expect_failure(c2, NULL, NULL, NULL, 1, "another program"));
  char *r2[] = {TLREPORT, "--db", f->db, NULL};
  free(expect_failure(r2, NULL, NULL, NULL, 1, "another program"));
}

static void newer_database(void **state) {
  fixture *f = *state;
  collect(f->db, "x", "5");
  sqlite3 *db;
  assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
  char sql[64];
  snprintf(sql, sizeof sql, "PRAGMA user_version = %d", tl_schema_latest() + 1);
  assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(db);
  char *s1[] = {TLSTORE, "--db", f->db, "info", NULL};
  char *r1[] = {TLREPORT, "--db", f->db, NULL};
  char *c1[] = {TLCOLLECT, "--db", f->db, "--count", "3", "-q", NULL};
  char *const *runs[] = {s1, r1, c1};
  for (size_t i = 0; i < 3; i++) {
    char *err = expect_failure(runs[i], NULL, NULL, NULL, 1, "newer");
    assert_non_null(strstr(err, "upgrade tl"));
    free(err);
  }
}

static void truncated_database(void **state) {
  fixture *f = *state;
  char *good = tl_test_path(f->dir, "good.db");
  collect_with(good, "x", "uv", "0", "20000");
  struct stat st;
  assert_int_equal(stat(good, &st), 0);
  off_t size = st.st_size;
  assert_true(size > 8192);
  const off_t cuts[] = {10, 100, 1024, 4096, size / 2, size - 4096, size - 1};
  for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
    assert_int_equal(tl_test_copy_file(good, f->db), 0);
    assert_int_equal(truncate(f->db, cuts[i]), 0);
    char *s1[] = {TLSTORE, "--db", f->db, "check", NULL};
    char *out, *err;
    int rc = tl_test_run(s1, NULL, &out, &err);
    if (rc != 1 || !tl_test_one_line(err))
      fail_msg("check of a file cut at %lld: exit %d, '%s%s'", (long long)cuts[i], rc, out, err);
    free(out);
    free(err);
    assert_int_equal(tl_test_copy_file(good, f->db), 0);
    assert_int_equal(truncate(f->db, cuts[i]), 0);
    no_crash_on(f->db, 0, i % 3 == 0);
  }
  free(good);
}

/* Bytes flipped all over the file, page by page: whatever SQLite or tl makes
 * of it, nothing crashes and every error is one line. Damage to the sample
 * data itself is always found by check. */
static void corrupted_database(void **state) {
  fixture *f = *state;
  char *good = tl_test_path(f->dir, "good.db");
  collect_with(good, "x", "uv", "0", "20000");
  size_t len;
  char *bytes = tl_test_read_file(good, &len);
  struct stat st;
  assert_int_equal(stat(good, &st), 0);
  len = (size_t)st.st_size; /* the file holds NULs: take its real size */
  free(bytes);
  bytes = malloc(len);
  FILE *in = fopen(good, "rb");
  assert_int_equal(fread(bytes, 1, len, in), len);
  fclose(in);
  uint32_t seed = 12345;
  for (size_t page = 0; page * 4096 < len; page++) {
    char *copy = malloc(len);
    memcpy(copy, bytes, len);
    for (int k = 0; k < 16; k++) {
      seed = seed * 1103515245u + 12345u;
      size_t at = page * 4096 + (seed >> 8) % 4096;
      if (page == 0 && at < 100)
        at += 100; /* the header has its own test (not_a_database) */
      if (at < len)
        copy[at] = (char)(copy[at] ^ (char)(1 + (seed & 0x7f)));
    }
    assert_int_equal(tl_test_write_file(f->db, copy, len), 0);
    free(copy);
    no_crash_on(f->db, 0, page % 4 == 0);
  }
  /* Sample data that does not decode. */
  assert_int_equal(tl_test_write_file(f->db, bytes, len), 0);
  sqlite3 *db;
  assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
  assert_int_equal(sqlite3_exec(db, "UPDATE sample_blocks SET data = x'ffffff' WHERE rowid = 1",
                                NULL, NULL, NULL),
                   SQLITE_OK);
  sqlite3_close(db);
  no_crash_on(f->db, 1, 1);
  char *r1[] = {TLREPORT, "--db", f->db, NULL};
  free(expect_failure(r1, NULL, NULL, NULL, 1, "block 0: no valid block header"));
  free(bytes);
  free(good);
}

/* Writes n bytes at offset at of table's root page. */
static void write_root_page(const char *path, const char *table, size_t at_page, const void *bytes,
                            size_t n) {
  sqlite3 *db;
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
  assert_int_equal(sqlite3_prepare_v2(db,
                                      "SELECT rootpage, (SELECT page_size FROM pragma_page_size) "
                                      "FROM sqlite_master WHERE name = ?1",
                                      -1, &st, NULL),
                   SQLITE_OK);
  sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  long long root = sqlite3_column_int64(st, 0);
  assert_true(root > 1);
  long long at = (root - 1) * sqlite3_column_int64(st, 1) + (long long)at_page;
  sqlite3_finalize(st);
  sqlite3_close(db);
  int fd = open(path, O_WRONLY);
  assert_true(fd >= 0);
  assert_int_equal(pwrite(fd, bytes, n, (off_t)at), (ssize_t)n);
  close(fd);
}

/* Damages the page type of table's root page, so that reading its rows
 * fails with SQLite's "malformed" while the file still opens. SQLite checks
 * that byte whenever it loads a page, whatever the rows hold; damaged cell
 * pointers were caught only when they pointed outside the 64 KiB page. */
static void damage_root_page(const char *path, const char *table) {
  const char junk = 0x07; /* not one of the four b-tree page types */
  write_root_page(path, table, 0, &junk, 1);
}

/* A source database that opens but cannot be read through is named once in
 * merge's message, not once by the store and again by the merge. */
static void merge_names_a_damaged_source_once(void **state) {
  fixture *f = *state;
  char *src = tl_test_path(f->dir, "src.db");
  collect(src, "x", "5");
  collect(f->db, "y", "5");
  damage_root_page(src, "sessions");
  char *m[] = {TLSTORE, "--db", f->db, "merge", src, NULL};
  char *err = expect_failure(m, NULL, NULL, NULL, 1, NULL);
  char want[4200];
  snprintf(want, sizeof want,
           "tlstore: error: %s: reading the other database: database disk image is malformed "
           "(run 'tlstore check'; restore from a copy if it fails)\n",
           src);
  assert_string_equal(err, want);
  free(err);
  free(src);
}

/* A sessions page whose cell count reads 0 is damage SQLite does not see
 * when it reads: the table just looks empty. Merge finds the rows that its
 * other tables refer to missing and refuses the source, rather than merge
 * "0 sessions" and succeed. */
static void merge_refuses_a_source_that_lost_sessions(void **state) {
  fixture *f = *state;
  char *src = tl_test_path(f->dir, "src.db");
  collect(src, "x", "5");
  const char none[2] = {0, 0}; /* bytes 3-4 of a b-tree page: its cell count */
  write_root_page(src, "sessions", 3, none, sizeof none);
  char *m[] = {TLSTORE, "--db", f->db, "merge", src, NULL};
  free(expect_failure(m, NULL, NULL, NULL, 1, "src.db is damaged"));
  assert_int_equal(session_count(f->db), 0);
  free(src);
}

/* ======================================================================== */
/* Power loss                                                                */

static const char *pragma_text(sqlite3 *db, const char *sql, char *buf, size_t len) {
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  snprintf(buf, len, "%s", (const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  return buf;
}

/* What the README promises about a power loss rests on these settings of
 * every writing connection: WAL, and a sync of the WAL at every commit. */
static void durability_settings(void **state) {
  fixture *f = *state;
  tl_store *s;
  char buf[32];
  assert_int_equal(tl_store_open(&s, f->db, 0), TL_OK);
  assert_string_equal(pragma_text(tl__sqlite_db(s), "PRAGMA journal_mode", buf, sizeof buf), "wal");
  assert_string_equal(pragma_text(tl__sqlite_db(s), "PRAGMA synchronous", buf, sizeof buf),
                      "2"); /* FULL */
  assert_string_equal(pragma_text(tl__sqlite_db(s), "PRAGMA fullfsync", buf, sizeof buf), "1");
  assert_string_equal(pragma_text(tl__sqlite_db(s), "PRAGMA foreign_keys", buf, sizeof buf), "1");
  tl_store_close(s);
}

int main(void) {
  if (getenv("TL_TEST_FILTER")) /* run one of them: TL_TEST_FILTER=locked_database */
    cmocka_set_test_filter(getenv("TL_TEST_FILTER"));
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(durability_settings, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(kill9_keeps_every_committed_sample, tl_test_setup,
                                      tl_test_teardown),
      cmocka_unit_test_setup_teardown(memory_bounded, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(memory_grows_with_groups, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(disk_full_ends_sessions_cleanly, tl_test_setup,
                                      tl_test_teardown),
      cmocka_unit_test_setup_teardown(tmpfs_full, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(file_size_limit_signal, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(failed_last_write_says_why, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(failed_write_keeps_the_old_page, tl_test_setup,
                                      tl_test_teardown),
      cmocka_unit_test_setup_teardown(tmpfs_nearly_full, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(tmpfs_nearly_full_many_delays, tl_test_setup,
                                      tl_test_teardown),
      cmocka_unit_test_setup_teardown(tmpfs_any_room_left, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(stale_session_while_full, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(read_only_file_and_folder, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(readers_leave_no_sidecars, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(special_files_refused, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(empty_file_stays_empty, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(read_only_file_system, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(locked_database, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(lock_held_past_busy_timeout, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(lock_never_released, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(lock_held_past_stale_limit, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(damaged_summaries_and_counts, tl_test_setup,
                                      tl_test_teardown),
      cmocka_unit_test_setup_teardown(output_paths_of_other_users, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(sidecar_folders_named, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(not_a_database, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(newer_database, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(truncated_database, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(corrupted_database, tl_test_setup, tl_test_teardown),
      cmocka_unit_test_setup_teardown(merge_refuses_a_source_that_lost_sessions, tl_test_setup,
                                      tl_test_teardown),
      cmocka_unit_test_setup_teardown(merge_names_a_damaged_source_once, tl_test_setup,
                                      tl_test_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
