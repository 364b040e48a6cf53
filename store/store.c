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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store_internal.h"

/* 'tldb' in the database header, so that tl can tell its files apart. */
enum { TL_APPLICATION_ID = 0x746c6462 };
/* A 'running' session whose collector has not committed for this long is
 * taken as dead. The collector commits at least every few seconds. */
#define TL_STALE_DEFAULT_NS (10LL * 60 * 1000000000LL)

int tl__store_fail(tl_store *s, int err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->errmsg, sizeof s->errmsg, fmt, ap);
  va_end(ap);
  return err;
}

int tl__store_sqlfail(tl_store *s, int rc, const char *doing) {
  int err;
  const char *hint = "";
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
    hint = " (another tl process holds the database; try again when it is done)";
    break;
  case SQLITE_FULL:
    err = TL_EFULL;
    hint = " (free some space, or use --db on another disk)";
    break;
  case SQLITE_READONLY:
    err = TL_EREADONLY;
    hint = " (make the file and its folder writable, or use --db)";
    break;
  case SQLITE_CANTOPEN:
    err = TL_EIO;
    hint = " (check that the folder exists and is writable, or use --db)";
    break;
  case SQLITE_PERM:
  case SQLITE_AUTH:
    err = TL_EPERM;
    break;
  case SQLITE_IOERR:
    err = TL_EIO;
    break;
  default:
    err = TL_ESQL;
  }
  const char *detail = s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc);
  return tl__store_fail(s, err, "%s: %s: %s%s", s->path ? s->path : "database", doing, detail,
                        hint);
}

int64_t tl__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int tl__uuid4(char out[37]) {
  unsigned char b[16];
  size_t got = 0;
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    while (got < sizeof b) {
      ssize_t r = read(fd, b + got, sizeof b - got);
      if (r <= 0)
        break;
      got += (size_t)r;
    }
    close(fd);
  }
  if (got < sizeof b)
    sqlite3_randomness((int)sizeof b, b); /* SQLite's own CSPRNG-seeded PRNG */
  b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
  b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
  snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
           b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
           b[15]);
  return TL_OK;
}

/* ======================================================================== */
/* Paths                                                                     */

int tl_store_default_path(char *buf, size_t len) {
  const char *env = getenv("TL_DB");
  int n;
  if (env && *env) {
    n = snprintf(buf, len, "%s", env);
  } else if ((env = getenv("XDG_DATA_HOME")) && *env == '/') {
    n = snprintf(buf, len, "%s/tl/tl.db", env);
  } else if ((env = getenv("HOME")) && *env) {
    n = snprintf(buf, len, "%s/.local/share/tl/tl.db", env);
  } else {
    return TL_ENOTFOUND;
  }
  return n < 0 || (size_t)n >= len ? TL_EINVAL : TL_OK;
}

int tl_store_make_parent(const char *path, char *why, size_t whylen) {
  char dir[PATH_MAX];
  if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir) {
    snprintf(why, whylen, "path is too long");
    return TL_EINVAL;
  }
  char *slash = strrchr(dir, '/');
  if (!slash || slash == dir)
    return TL_OK;
  *slash = '\0';
  for (char *p = dir + 1; *p; p++) {
    if (*p != '/')
      continue;
    *p = '\0';
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
      goto fail;
    *p = '/';
  }
  if (mkdir(dir, 0755) != 0 && errno != EEXIST)
    goto fail;
  return TL_OK;
fail:
  snprintf(why, whylen, "cannot create folder %s: %s", dir, strerror(errno));
  return errno == EACCES || errno == EROFS ? TL_EPERM : TL_EIO;
}

/* ======================================================================== */
/* Opening and migrating                                                     */

int tl_schema_latest(void) { return (int)tl__migration_count; }

static int pragma_int(tl_store *s, const char *sql, int *out) {
  sqlite3_stmt *st;
  int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
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
  int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
  return rc == SQLITE_OK ? TL_OK : tl__store_sqlfail(s, rc, doing);
}

static int migrate(tl_store *s, int from) {
  int rc = exec(s, "BEGIN IMMEDIATE", "starting the schema upgrade");
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
    return exec(s, "COMMIT", "committing the schema upgrade");
  sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
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

int tl_store_open(tl_store **out, const char *path, int flags) {
  *out = NULL;
  tl_store *s = calloc(1, sizeof *s);
  if (!s)
    return TL_ENOMEM;
  *out = s;
  s->path = strdup(path);
  if (!s->path)
    return TL_ENOMEM;
  s->readonly = !!(flags & TL_STORE_READONLY);

  struct stat st;
  if (stat(path, &st) != 0) {
    if (errno == ENOENT && (flags & (TL_STORE_READONLY | TL_STORE_NOCREATE)))
      return tl__store_fail(s, TL_ENOTFOUND,
                            "%s does not exist (collect with tlcollect first, or use --db)", path);
  } else if (S_ISDIR(st.st_mode)) {
    return tl__store_fail(s, TL_EINVAL, "%s is a folder, not a database file", path);
  }

  int oflags = s->readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  int rc = sqlite3_open_v2(path, &s->db, oflags | SQLITE_OPEN_NOMUTEX, NULL);
  if (rc != SQLITE_OK)
    return tl__store_sqlfail(s, rc, "opening");
  sqlite3_extended_result_codes(s->db, 1);
  sqlite3_busy_timeout(s->db, 5000);

  int version = 0;
  int err = check_identity(s, &version);
  if (err == TL_ENOTDB && !strstr(s->errmsg, "another program"))
    tl__store_fail(s, TL_ENOTDB, "%s is not a tl database (not a SQLite file)", path);
  if (err)
    return err;
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
  if (!s->readonly)
    return tl_store_recover_stale(s, TL_STALE_DEFAULT_NS, NULL);
  return TL_OK;
}

void tl_store_close(tl_store *s) {
  if (!s)
    return;
  sqlite3_close_v2(s->db);
  free(s->path);
  free(s);
}

const char *tl_store_errmsg(const tl_store *s) { return s ? s->errmsg : "out of memory"; }

int tl_store_schema_version(tl_store *s) {
  int v = 0;
  return pragma_int(s, "PRAGMA user_version", &v) == TL_OK ? v : -1;
}

/* ======================================================================== */
/* Stale sessions                                                            */

int tl_store_recover_stale(tl_store *s, int64_t stale_ns, int *count) {
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  sqlite3_stmt *sel = NULL, *upd = NULL;
  int n = 0;
  int rc = sqlite3_prepare_v2(s->db,
                              "SELECT s.id, s.pid, s.heartbeat_ns, h.hostname FROM sessions s "
                              "JOIN hosts h ON h.id = s.host_id WHERE s.status = 'running'",
                              -1, &sel, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_prepare_v2(s->db,
                            "UPDATE sessions SET status = 'interrupted', ended_ns = heartbeat_ns "
                            "WHERE id = ? AND status = 'running'",
                            -1, &upd, NULL);
  int64_t now = tl__now_ns();
  while (rc == SQLITE_OK && (rc = sqlite3_step(sel)) == SQLITE_ROW) {
    rc = SQLITE_OK;
    int64_t id = sqlite3_column_int64(sel, 0);
    long pid = (long)sqlite3_column_int64(sel, 1);
    int64_t beat = sqlite3_column_int64(sel, 2);
    const char *h = (const char *)sqlite3_column_text(sel, 3);
    int same_host = h && strcmp(h, host) == 0;
    int dead = now - beat > stale_ns;
    /* On this host a missing process settles it at once. kill(pid, 0)
     * fails with ESRCH only when no such process exists. */
    if (same_host && pid > 0 && pid != (long)getpid() && kill((pid_t)pid, 0) != 0 && errno == ESRCH)
      dead = 1;
    if (!dead)
      continue;
    sqlite3_bind_int64(upd, 1, id);
    rc = sqlite3_step(upd);
    sqlite3_reset(upd);
    if (rc == SQLITE_DONE) {
      n += sqlite3_changes(s->db);
      rc = SQLITE_OK;
    }
  }
  sqlite3_finalize(sel);
  sqlite3_finalize(upd);
  if (count)
    *count = n;
  return rc == SQLITE_DONE || rc == SQLITE_OK
             ? TL_OK
             : tl__store_sqlfail(s, rc, "recovering stale sessions");
}
