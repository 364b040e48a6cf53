/* store.c: opening, migrating and checking a tl database, and reading
 * sessions and samples back.
 *
 * The database runs in WAL mode with synchronous=FULL: a committed batch of
 * samples survives a crash of the collector, of the OS and a power loss, and
 * readers (tlreport) see a consistent snapshot while a collector writes.
 * Every statement binds its parameters; no user text is ever pasted into SQL. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "base_internal.h"
#include "sqlite_internal.h"

/* 'tldb' in the database header, so that tl can tell its files apart. */
enum { TL_APPLICATION_ID = 0x746c6462 };
/* A 'running' session whose collector has not committed for this long is
 * taken as dead. The collector commits at least every few seconds. */

int tl__store_fail(tl_store *s, int err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->errmsg, sizeof s->errmsg, fmt, ap);
  va_end(ap);
  return err;
}

/* statvfs of the folder that holds path. */
static int parent_statvfs(const char *path, struct statvfs *vfs) {
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (!slash)
    snprintf(dir, sizeof dir, ".");
  else
    slash[slash == dir] = '\0';
  return statvfs(dir, vfs);
}

static int on_readonly_fs(const char *path) {
  struct statvfs vfs;
  return parent_statvfs(path, &vfs) == 0 && (vfs.f_flag & ST_RDONLY);
}

/* Whether a write to the database at path failed for want of space: its
 * file system is (nearly) full, or the database or its WAL reached the
 * process's file-size limit. SQLite does not always keep the errno of a
 * failed write (a rollback after it may clear it), so an I/O error is
 * checked against the facts. */
static int looks_full(const char *path) {
  struct statvfs vfs;
  if (parent_statvfs(path, &vfs) == 0 && (uint64_t)vfs.f_bavail * vfs.f_frsize < 1024 * 1024)
    return 1;
  struct rlimit rl;
  if (getrlimit(RLIMIT_FSIZE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
    return 0;
  char wal[PATH_MAX + 8];
  snprintf(wal, sizeof wal, "%s-wal", path);
  const char *files[] = {path, wal};
  for (size_t i = 0; i < 2; i++) {
    struct stat st;
    if (stat(files[i], &st) == 0 && (uint64_t)st.st_size + 65536 >= (uint64_t)rl.rlim_cur)
      return 1;
  }
  return 0;
}

/* What to do about a -shm or -wal file that cannot be written. */
static const char sidecar_hint[] =
    " (left by a program that read the database while it was read-only: make it writable with "
    "chmod u+w, or remove it when no tl program is using the database)";

/* Whether path-shm or path-wal exists and cannot be written while path
 * can; then names it in buf ("PATH-shm is read-only"). */
static int readonly_sidecar(const char *path, char *buf, size_t len) {
  if (access(path, W_OK) != 0)
    return 0;
  static const char *const ext[] = {"-shm", "-wal"};
  for (size_t i = 0; i < 2; i++) {
    char side[PATH_MAX + 8];
    snprintf(side, sizeof side, "%s%s", path, ext[i]);
    if (access(side, F_OK) == 0 && access(side, W_OK) != 0) {
      snprintf(buf, len, "%s is read-only", side);
      return 1;
    }
  }
  return 0;
}

/* Whether path-wal or path-shm exists and is not a regular file; then
 * names it and says what it is in buf. */
static const char *special_kind(mode_t mode);
static int sidecar_not_a_file(const char *path, char *buf, size_t len) {
  static const char *const ext[] = {"-wal", "-shm"};
  for (size_t i = 0; i < 2; i++) {
    char side[PATH_MAX + 8];
    struct stat st;
    snprintf(side, sizeof side, "%s%s", path, ext[i]);
    if (lstat(side, &st) == 0 && !S_ISREG(st.st_mode)) {
      snprintf(buf, len, "%s is %s", side,
               S_ISDIR(st.st_mode) ? "a folder" : special_kind(st.st_mode));
      return 1;
    }
  }
  return 0;
}

int tl__store_sqlfail(tl_store *s, int rc, const char *doing) {
  char sidecar[PATH_MAX + 32];
  int err;
  const char *hint = "";
  /* The OS error behind an I/O failure tells a full disk (or a file-size
   * limit) from a broken one. */
  int sys = tl__sqlite_db(s) ? sqlite3_system_errno(tl__sqlite_db(s)) : 0;
  const char *detail = tl__sqlite_db(s) ? sqlite3_errmsg(tl__sqlite_db(s)) : sqlite3_errstr(rc);
  switch (rc & 0xff) {
  case SQLITE_NOMEM:
    err = TL_ENOMEM;
    break;
  case SQLITE_NOTADB:
    err = TL_ENOTDB;
    break;
  case SQLITE_CORRUPT:
    err = TL_ECORRUPT;
    hint = " (run 'tlstore check'; restore from a copy if it fails)";
    break;
  case SQLITE_BUSY:
  case SQLITE_LOCKED:
    err = TL_EBUSY;
    hint = " (another process is writing to it; try again when it is done)";
    break;
  case SQLITE_FULL:
    err = TL_EFULL;
    hint = " (free some space, or use --db on another disk)";
    break;
  case SQLITE_READONLY:
    err = TL_EREADONLY;
    if (rc == SQLITE_READONLY_DIRECTORY || rc == SQLITE_READONLY_CANTINIT ||
        rc == SQLITE_READONLY_CANTLOCK)
      hint = " (tl keeps its -wal and -shm files next to the database: make the folder "
             "writable, or copy the database to a writable folder and use --db)";
    else if (s->path && readonly_sidecar(s->path, sidecar, sizeof sidecar)) {
      /* The database is writable, but a -shm or -wal file left behind by
       * an older tl reading it while it was read-only is not. */
      detail = sidecar;
      hint = sidecar_hint;
    } else
      hint = " (make the file and its folder writable, or use --db)";
    break;
  case SQLITE_CANTOPEN:
    err = TL_EIO;
    hint = " (check that the file and its folder exist and are accessible, or use --db)";
    if (sys == EROFS || (s->path && on_readonly_fs(s->path))) {
      err = TL_EREADONLY;
      detail = "its file system is read-only";
      hint = " (copy the database to a writable disk, or use --db)";
    }
    break;
  case SQLITE_PERM:
  case SQLITE_AUTH:
    err = TL_EPERM;
    break;
  case SQLITE_IOERR:
    err = TL_EIO;
    if (sys == ENOSPC || sys == EFBIG ||
#ifdef EDQUOT
        sys == EDQUOT ||
#endif
        (!sys && s->path && looks_full(s->path))) {
      err = TL_EFULL;
      hint = " (the disk is full or a file-size limit was reached: free some space, or use "
             "--db on another disk)";
    } else if (sys == EROFS) {
      err = TL_EREADONLY;
      hint = " (the file system is read-only: use --db on a writable one)";
    }
    break;
  default:
    err = TL_ESQL;
  }
  if (rc == SQLITE_READONLY_DIRECTORY || rc == SQLITE_READONLY_CANTINIT ||
      rc == SQLITE_READONLY_CANTLOCK)
    detail = "its folder is read-only";
  if ((rc & 0xff) == SQLITE_IOERR && sys)
    return tl__store_fail(s, err, "%s: %s: %s: %s%s", s->path ? s->path : "database", doing, detail,
                          strerror(sys), hint);
  return tl__store_fail(s, err, "%s: %s: %s%s", s->path ? s->path : "database", doing, detail,
                        hint);
}

int64_t tl__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ======================================================================== */
/* Opening and migrating                                                     */

int tl_schema_latest(void) { return (int)tl__migration_count; }

static int pragma_int(tl_store *s, const char *sql, int *out) {
  sqlite3_stmt *st;
  int rc = sqlite3_prepare_v2(tl__sqlite_db(s), sql, -1, &st, NULL);
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
      *out = sqlite3_column_int(st, 0);
      rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
  }
  return rc == SQLITE_OK || rc == SQLITE_DONE ? TL_OK : tl__store_sqlfail(s, rc, "reading header");
}

static int exec(tl_store *s, const char *sql, const char *doing) {
  int rc = sqlite3_exec(tl__sqlite_db(s), sql, NULL, NULL, NULL);
  return rc == SQLITE_OK ? TL_OK : tl__store_sqlfail(s, rc, doing);
}

/* tl_block_upgrade_v1(seq, count, min_ns, max_ns, data), for migration 2:
 * the block with its header, or data unchanged when it does not decode. */
static void block_upgrade_fn(sqlite3_context *cx, int argc, sqlite3_value **argv) {
  (void)argc;
  const uint8_t *in = sqlite3_value_blob(argv[4]);
  size_t len = (size_t)sqlite3_value_bytes(argv[4]);
  int64_t count = sqlite3_value_int64(argv[1]);
  int64_t *scratch = sqlite3_malloc(TL_BLOCK_MAX * sizeof *scratch);
  uint8_t *out = sqlite3_malloc((int)tl_block_bound(TL_BLOCK_MAX));
  if (!scratch || !out) {
    sqlite3_free(scratch);
    sqlite3_free(out);
    sqlite3_result_error_nomem(cx);
    return;
  }
  size_t n = in ? tl__block_upgrade_v1(in, len, sqlite3_value_int64(argv[0]), count,
                                       sqlite3_value_int64(argv[2]), sqlite3_value_int64(argv[3]),
                                       scratch, out)
                : 0;
  if (n)
    sqlite3_result_blob(cx, out, (int)n, SQLITE_TRANSIENT);
  else
    sqlite3_result_value(cx, argv[4]);
  sqlite3_free(scratch);
  sqlite3_free(out);
}

/* tl_session_summary(session_id), for migration 3: the session's summary
 * as stored (docs/schema.md), or NULL when its blocks do not read back
 * whole. Runs on the connection that applies the migration (s). */
typedef struct {
  tl_store *s;
  tl__summarizer *z;
} summary_fn_ctx;

static void session_summary_fn(sqlite3_context *cx, int argc, sqlite3_value **argv) {
  (void)argc;
  summary_fn_ctx *c = sqlite3_user_data(cx);
  const tl_summary *m;
  int err = tl__summary_compute(c->s, c->z, sqlite3_value_int64(argv[0]), &m);
  c->s->errmsg[0] = '\0';
  if (err == TL_ECORRUPT) {
    sqlite3_result_null(cx);
    return;
  }
  uint8_t *blob = err ? NULL : sqlite3_malloc64(tl__summary_bound(m));
  if (!blob) {
    sqlite3_result_error_nomem(cx);
    return;
  }
  sqlite3_result_blob64(cx, blob, tl__summary_encode(m, blob), sqlite3_free);
}

static int migrate(tl_store *s, int from) {
  summary_fn_ctx sctx = {s, tl__summarizer_new()};
  if (!sctx.z)
    return tl__store_fail(s, TL_ENOMEM, "out of memory upgrading the schema");
  int rc =
      sqlite3_create_function(tl__sqlite_db(s), "tl_block_upgrade_v1", 5,
                              SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_DIRECTONLY, NULL,
                              block_upgrade_fn, NULL, NULL) == SQLITE_OK &&
              sqlite3_create_function(tl__sqlite_db(s), "tl_session_summary", 1,
                                      SQLITE_UTF8 | SQLITE_DIRECTONLY, &sctx, session_summary_fn,
                                      NULL, NULL) == SQLITE_OK
          ? TL_OK
          : tl__store_sqlfail(s, sqlite3_errcode(tl__sqlite_db(s)), "starting the schema upgrade");
  if (rc == TL_OK)
    rc = exec(s, "BEGIN IMMEDIATE", "starting the schema upgrade");
  /* Another process may have migrated while we waited for the lock. */
  if (rc == TL_OK)
    rc = pragma_int(s, "PRAGMA user_version", &from);
  for (int v = from; rc == TL_OK && v < (int)tl__migration_count; v++) {
    char sql[64];
    rc = exec(s, tl__migrations[v], "applying a schema migration");
    snprintf(sql, sizeof sql, "PRAGMA user_version = %d", v + 1);
    if (rc == TL_OK)
      rc = exec(s, sql, "recording the schema version");
  }
  if (rc == TL_OK && from == 0) {
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA application_id = %d", TL_APPLICATION_ID);
    rc = exec(s, sql, "marking the file as a tl database");
  }
  if (rc == TL_OK)
    rc = exec(s, "COMMIT", "committing the schema upgrade");
  else
    sqlite3_exec(tl__sqlite_db(s), "ROLLBACK", NULL, NULL, NULL);
  /* The function's context lives on this stack frame only. */
  sqlite3_create_function(tl__sqlite_db(s), "tl_session_summary", 1, SQLITE_UTF8, NULL, NULL, NULL,
                          NULL);
  tl__summarizer_free(sctx.z);
  return rc;
}

static int check_identity(tl_store *s, int *version) {
  int app = 0, tables = 0;
  int rc = pragma_int(s, "PRAGMA application_id", &app);
  if (rc == TL_OK)
    rc = pragma_int(s, "PRAGMA user_version", version);
  if (rc == TL_OK)
    rc = pragma_int(s, "SELECT count(*) FROM sqlite_schema", &tables);
  if (rc != TL_OK)
    return rc;
  if (app != TL_APPLICATION_ID && (app != 0 || tables > 0))
    return tl__store_fail(s, TL_ENOTDB,
                          "%s is a SQLite database of another program, not a tl database", s->path);
  if (*version > (int)tl__migration_count)
    return tl__store_fail(s, TL_ENEWER,
                          "%s has schema version %d, newer than this tl understands (%d): "
                          "upgrade tl to read it",
                          s->path, *version, (int)tl__migration_count);
  return TL_OK;
}

static int fail_write_protected(tl_store *s) {
  return tl__store_fail(s, TL_EREADONLY,
                        "%s is read-only: tl cannot write to it (make the file writable, or use "
                        "--db)",
                        s->path);
}

static const char *special_kind(mode_t mode) {
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}

static int wal_in_use(const char *path) {
  char wal[PATH_MAX + 8];
  struct stat st;
  snprintf(wal, sizeof wal, "%s-wal", path);
  return stat(wal, &st) == 0 && st.st_size > 0;
}

/* Opens path again as an immutable file: a "file:" URI, with the
 * characters a URI gives meaning to escaped. */
static int reopen_immutable(tl_store *s, const char *path) {
  size_t len = strlen(path);
  char *uri = malloc(len * 3 + 32), *p = uri;
  if (!uri)
    return tl__store_fail(s, TL_ENOMEM, "out of memory");
  p += sprintf(p, "file:");
  for (const unsigned char *c = (const unsigned char *)path; *c; c++)
    p += strchr("?#%", *c) || *c < 0x21 || *c >= 0x7f ? sprintf(p, "%%%02X", *c)
                                                      : sprintf(p, "%c", *c);
  sprintf(p, "?immutable=1");
  tl__sqlite_forget_statements(s);
  sqlite3_close_v2(tl__sqlite_db(s));
  tl__sqlite(s)->db = NULL;
  int rc = sqlite3_open_v2(uri, &tl__sqlite(s)->db,
                           SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, NULL);
  free(uri);
  if (rc != SQLITE_OK)
    return tl__store_sqlfail(s, rc, "opening");
  sqlite3_extended_result_codes(tl__sqlite_db(s), 1);
  s->errmsg[0] = '\0';
  return TL_OK;
}

int tl__sqlite_open(tl_store **out, const char *path, int flags) {
  *out = NULL;
  tl_sqlite *file = calloc(1, sizeof *file);
  if (!file)
    return TL_ENOMEM;
  tl_store *s = &file->base;
  *out = s;
  s->ops = &tl__sqlite_ops;
  s->path = strdup(path);
  if (!s->path)
    return TL_ENOMEM;
  s->readonly = !!(flags & TL_STORE_READONLY);

  struct stat st;
  int exists = stat(path, &st) == 0;
  if (!exists) {
    if (errno == ENOENT && (flags & (TL_STORE_READONLY | TL_STORE_NOCREATE)))
      return tl__store_fail(s, TL_ENOTFOUND,
                            "%s does not exist (collect with tlcollect first, or use --db)", path);
  } else if (S_ISDIR(st.st_mode)) {
    return tl__store_fail(s, TL_EINVAL, "%s is a folder, not a database file", path);
  } else if (!S_ISREG(st.st_mode)) {
    /* SQLite would block forever on a FIFO, and leave a -journal file next
     * to /dev/null: a database is a regular file, anything else is refused
     * before it is touched. */
    return tl__store_fail(s, TL_EINVAL, "%s is %s, not a database file", path,
                          special_kind(st.st_mode));
  } else if (st.st_size == 0 && (flags & (TL_STORE_READONLY | TL_STORE_NOCREATE)) &&
             !wal_in_use(path)) {
    /* Only a collector (or a merge or import into it) makes an empty file
     * a database; a command that looks must not grow it into one. */
    return tl__store_fail(s, TL_ENOTDB, "%s is empty, not a tl database", path);
  }

  /* SQLite's -wal and -shm beside it must be files: a folder (or a FIFO)
   * there would fail later as "read-only" or "unable to open". */
  char bad_side[PATH_MAX + 32];
  if (exists && sidecar_not_a_file(path, bad_side, sizeof bad_side))
    return tl__store_fail(s, TL_EINVAL,
                          "%s: SQLite keeps the database's write-ahead log and its index there, "
                          "so it must be a file or absent (remove it when no tl program is using "
                          "the database)",
                          bad_side);
  /* Before SQLite opens it (and makes -wal and -shm files at its mode). */
  if (!s->readonly && exists && access(path, W_OK) != 0 && errno == EACCES)
    return fail_write_protected(s);
  /* A -shm or -wal an older tl left read-only: named now, since SQLite,
   * which opens it read-only, also makes an empty one writable for its
   * owner, and the failure that follows would no longer show the cause. */
  char sidecar[PATH_MAX + 32];
  if (!s->readonly && exists && readonly_sidecar(path, sidecar, sizeof sidecar))
    return tl__store_fail(s, TL_EREADONLY, "%s%s", sidecar, sidecar_hint);
  /* A file nobody may write (no write permission bits) and without a WAL
   * to replay cannot change under a reader: read it as it is, so that no
   * -wal and -shm files are left behind at its mode, which would stop a
   * writer once the file is made writable again. */
  int version = 0, err;
  if (s->readonly && exists && !(st.st_mode & 0222) && !wal_in_use(path)) {
    err = reopen_immutable(s, path);
    if (err)
      return err;
  } else {
    int oflags = s->readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    int rc = sqlite3_open_v2(path, &tl__sqlite(s)->db, oflags | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK)
      return tl__store_sqlfail(s, rc, "opening");
    sqlite3_extended_result_codes(tl__sqlite_db(s), 1);
  }
  sqlite3_busy_timeout(tl__sqlite_db(s), 5000);

  err = check_identity(s, &version);
  if (err && s->readonly && on_readonly_fs(path) && !wal_in_use(path)) {
    /* A read-only medium (an archive, a read-only mount): SQLite cannot make
     * the -shm file that WAL mode reads through, and nobody can write here,
     * so read the file as it is. Not when a -wal file holds commits the
     * file itself lacks. */
    err = reopen_immutable(s, path);
    if (err == TL_OK)
      err = check_identity(s, &version);
  }
  if (err == TL_ENOTDB && !strstr(s->errmsg, "another program"))
    tl__store_fail(s, TL_ENOTDB, "%s is not a tl database (not a SQLite file)", path);
  if (err)
    return err;
  /* SQLite quietly opens a write-protected file read-only; a writer should
   * hear about it now rather than when its first session starts. */
  if (!s->readonly && sqlite3_db_readonly(tl__sqlite_db(s), "main") == 1)
    return fail_write_protected(s);
  if (!s->readonly) {
    /* A new file gets large pages: a sample block (about 12 KiB) then sits
     * in one page instead of a chain of overflow pages, which makes reading
     * many blocks several times cheaper. Only an empty file can take it. */
    if (version == 0)
      err = exec(s, "PRAGMA page_size=65536", "setting the page size");
    /* journal_mode needs a write lock the first time; WAL persists after. */
    if (err == TL_OK)
      err = exec(s, "PRAGMA journal_mode=WAL", "switching to WAL mode");
    if (err == TL_OK)
      err = exec(s, "PRAGMA synchronous=FULL", "setting synchronous mode");
    /* On macOS fsync() stops at the drive's cache; F_FULLFSYNC does not.
     * Elsewhere the pragma changes nothing. */
    if (err == TL_OK)
      err = exec(s, "PRAGMA fullfsync=ON", "setting fullfsync");
  }
  if (err == TL_OK)
    err = exec(s, "PRAGMA foreign_keys=ON", "enabling foreign keys");
  if (err)
    return err;
  if (version < (int)tl__migration_count) {
    if (s->readonly) {
      if (version == 0)
        return tl__store_fail(s, TL_ENOTDB, "%s is empty, not a tl database", path);
      return tl__store_fail(s, TL_EREADONLY,
                            "%s has schema version %d and needs an upgrade to %d: open it "
                            "once with tlstore info (read-write)",
                            path, version, (int)tl__migration_count);
    }
    if ((err = migrate(s, version)))
      return err;
  }
  /* Recovery is housekeeping: when it cannot run now (another writer holds
   * the lock, the disk is full) the next writable open tries again. */
  if (!s->readonly && tl__sqlite_recover_stale(s, tl__stale_ns(), NULL) != TL_OK)
    s->errmsg[0] = '\0';
  return TL_OK;
}

void tl__sqlite_close(tl_store *s) {
  if (!s)
    return;
  tl__sqlite_forget_statements(s);
  sqlite3_close_v2(tl__sqlite_db(s));
  free(s->path);
  free(s);
}

const char *tl_store_errmsg(const tl_store *s) { return s ? s->errmsg : "out of memory"; }

int tl__sqlite_schema_version(tl_store *s) {
  int v = 0;
  return pragma_int(s, "PRAGMA user_version", &v) == TL_OK ? v : -1;
}

/* ======================================================================== */
/* Stale sessions                                                            */

/* A 'running' session is stale when its collector cannot still be writing
 * it. On this host (same hostname) that is known for sure: the pid no
 * longer exists, or it now names a process that started after the session
 * did (the pid was reused). While the collector lives, its session is never
 * stale, however long since its last commit: another program may hold the
 * write lock for minutes, and the collector stores everything once it is
 * free. Only a session from another host, whose process cannot be seen, is
 * judged by its heartbeat (last commit) being older than stale_ns. The
 * sessions found are updated in one transaction, and only while they are
 * still 'running', so two processes recovering at once agree. */
int tl__session_gone(const char *hostname, int64_t pid, int64_t started_ns, int64_t heartbeat_ns,
                     int64_t stale_ns) {
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  if (!hostname || strcmp(hostname, host) != 0 || pid <= 0)
    return tl__now_ns() - heartbeat_ns > stale_ns;
  if (pid == (int64_t)getpid())
    return 0;
  /* kill(pid, 0) fails with ESRCH only when no such process exists. */
  if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
    return 1;
  /* A collector starts before its session; the margin covers the boot
   * time's rounding to whole seconds. */
  int64_t born = tl__process_started_ns((long)pid);
  return born > 0 && born > started_ns + 2000000000LL;
}

int64_t tl__stale_ns(void) {
  const char *env = getenv("TL_STALE_SECONDS");
  char *end;
  double sec = env && *env ? strtod(env, &end) : 0;
  if (!env || !*env || *end || !(sec > 0) || sec > 1e9)
    return TL_STALE_DEFAULT_NS;
  return (int64_t)(sec * 1e9);
}

int tl__sqlite_recover_stale(tl_store *s, int64_t stale_ns, int *count) {
  sqlite3_stmt *sel = NULL, *upd = NULL;
  int64_t dead_ids[64];
  size_t n_dead = 0;
  int rc = sqlite3_prepare_v2(tl__sqlite_db(s),
                              "SELECT s.id, s.pid, s.heartbeat_ns, h.hostname, s.started_ns "
                              "FROM sessions s "
                              "JOIN hosts h ON h.id = s.host_id WHERE s.status = 'running' "
                              "ORDER BY s.id",
                              -1, &sel, NULL);
  while (rc == SQLITE_OK && (rc = sqlite3_step(sel)) == SQLITE_ROW) {
    rc = SQLITE_OK;
    int64_t id = sqlite3_column_int64(sel, 0);
    if (!tl__session_gone((const char *)sqlite3_column_text(sel, 3), sqlite3_column_int64(sel, 1),
                          sqlite3_column_int64(sel, 4), sqlite3_column_int64(sel, 2), stale_ns))
      continue;
    if (n_dead == sizeof dead_ids / sizeof dead_ids[0])
      break; /* the rest on the next open */
    dead_ids[n_dead++] = id;
  }
  sqlite3_finalize(sel);
  if (rc != SQLITE_DONE && rc != SQLITE_OK)
    return tl__store_sqlfail(s, rc, "looking for stale sessions");
  if (!n_dead)
    return TL_OK; /* the common case takes no write lock */

  int n = 0, lost = TL_OK;
  rc = sqlite3_exec(tl__sqlite_db(s), "BEGIN IMMEDIATE", NULL, NULL, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_prepare_v2(tl__sqlite_db(s),
                            "UPDATE sessions SET status = 'interrupted', ended_ns = heartbeat_ns "
                            "WHERE id = ? AND status = 'running'",
                            -1, &upd, NULL);
  for (size_t i = 0; i < n_dead && rc == SQLITE_OK && !lost; i++) {
    sqlite3_bind_int64(upd, 1, dead_ids[i]);
    rc = sqlite3_step(upd);
    sqlite3_reset(upd);
    if (rc == SQLITE_DONE) {
      int changed = sqlite3_changes(tl__sqlite_db(s));
      n += changed;
      rc = SQLITE_OK;
      /* Marked interrupted: summarised in the same transaction (a session
       * whose summary cannot be made is summarised when read). */
      if (changed && (lost = tl__summary_put_ended(s, dead_ids[i], NULL)) &&
          !sqlite3_get_autocommit(tl__sqlite_db(s)))
        lost = TL_OK; /* only the summary failed: the session still ends */
    }
  }
  sqlite3_finalize(upd);
  if (lost) /* a failure (a full disk) that ended the whole transaction */
    return lost;
  if (rc == SQLITE_OK)
    rc = sqlite3_exec(tl__sqlite_db(s), "COMMIT", NULL, NULL, NULL);
  if (rc != SQLITE_OK) {
    int err = tl__store_sqlfail(s, rc, "recovering stale sessions");
    sqlite3_exec(tl__sqlite_db(s), "ROLLBACK", NULL, NULL, NULL);
    return err;
  }
  if (count)
    *count = n;
  return TL_OK;
}

const tl_store_ops tl__sqlite_ops = {
    .name = "SQLite file",
    .open = tl__sqlite_open,
    .close = tl__sqlite_close,
    .schema_version = tl__sqlite_schema_version,
    .read_begin = tl__sqlite_read_begin,
    .read_end = tl__sqlite_read_end,
    .sessions = tl__sqlite_sessions,
    .has_session = tl__sqlite_has_session,
    .labels = tl__sqlite_labels,
    .label_delays = tl__sqlite_label_delays,
    .scan_blocks = tl__sqlite_scan_blocks,
    .facts = tl__sqlite_facts,
    .tags = tl__sqlite_tags,
    .hosts = tl__sqlite_hosts,
    .summary_blobs = tl__sqlite_summary_blobs,
    .cause_rows = tl__sqlite_cause_rows,
    .writer_begin = tl__sqlite_writer_begin,
    .write_begin = tl__sqlite_write_begin,
    .write_end = tl__sqlite_write_end,
    .put_cause_row = tl__sqlite_put_cause_row,
    .recover_stale = tl__sqlite_recover_stale,
    .import = tl__sqlite_import,
    .merge = tl__sqlite_merge,
    .info = tl__sqlite_info,
    .check = tl__sqlite_check,
    .delete_session = tl__sqlite_delete,
    .prune = tl__sqlite_prune,
    .vacuum = tl__sqlite_vacuum,
};
