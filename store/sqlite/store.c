/* store.c: opening, migrating and closing a tl database file, and marking
 * the sessions whose collector is gone.
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
/* Whether path-wal or path-shm exists and is not a regular file; then
 * names it and says what it is in buf. */
static int sidecar_not_a_file(const char *path, char *buf, size_t len) {
  static const char *const ext[] = {"-wal", "-shm"};
  for (size_t i = 0; i < 2; i++) {
    char side[PATH_MAX + 8];
    struct stat st;
    snprintf(side, sizeof side, "%s%s", path, ext[i]);
    if (lstat(side, &st) == 0 && !S_ISREG(st.st_mode)) {
      snprintf(buf, len, "%s is %s", side,
               S_ISDIR(st.st_mode) ? "a folder" : tl__sqlite_special_kind(st.st_mode));
      return 1;
    }
  }
  return 0;
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
                                      NULL, NULL) == SQLITE_OK &&
              sqlite3_create_function(tl__sqlite_db(s), "tl_uuid_blob", 1,
                                      SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_DIRECTONLY, NULL,
                                      tl__uuid_blob_fn, NULL, NULL) == SQLITE_OK
          ? TL_OK
          : tl__store_sqlfail(s, sqlite3_errcode(tl__sqlite_db(s)), "starting the schema upgrade");
  if (rc == TL_OK)
    rc = exec(s, "BEGIN IMMEDIATE", "starting the schema upgrade");
  /* Another process may have migrated while we waited for the lock. */
  if (rc == TL_OK)
    rc = pragma_int(s, "PRAGMA user_version", &from);
  for (int v = from; rc == TL_OK && v < (int)tl__migration_count; v++) {
    char sql[64];
    /* Migration 6 needs sessions.fact_set_id first (SQLite cannot add a
     * column only if missing), then moves the facts into sets. */
    if (v + 1 == 6)
      rc = tl__facts_column(s);
    if (rc == TL_OK)
      rc = exec(s, tl__migrations[v], "applying a schema migration");
    if (rc == TL_OK && v + 1 == 6)
      rc = tl__facts_into_sets(s);
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

static int wal_in_use(const char *path) {
  char wal[PATH_MAX + 8];
  struct stat st;
  snprintf(wal, sizeof wal, "%s-wal", path);
  return stat(wal, &st) == 0 && st.st_size > 0;
}

/* path as an immutable file's "file:" URI, with the characters a URI gives
 * meaning to escaped; malloc'ed, NULL when out of memory. */
static char *immutable_uri(const char *path) {
  size_t len = strlen(path);
  char *uri = malloc(len * 3 + 32), *p = uri;
  if (!uri)
    return NULL;
  p += sprintf(p, "file:");
  for (const unsigned char *c = (const unsigned char *)path; *c; c++)
    p += strchr("?#%", *c) || *c < 0x21 || *c >= 0x7f ? sprintf(p, "%%%02X", *c)
                                                      : sprintf(p, "%c", *c);
  sprintf(p, "?immutable=1");
  return uri;
}

int tl__sqlite_open_reader(tl_store *s, sqlite3 **out) {
  *out = NULL;
  const char *name = tl__sqlite_db(s) ? sqlite3_db_filename(tl__sqlite_db(s), "main") : NULL;
  if (!name || !*name)
    return TL_EINVAL;
  int immutable = sqlite3_uri_boolean(name, "immutable", 0);
  char *uri = immutable ? immutable_uri(s->path) : NULL;
  if (immutable && !uri)
    return TL_ENOMEM;
  int flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | (uri ? SQLITE_OPEN_URI : 0);
  int rc = sqlite3_open_v2(uri ? uri : s->path, out, flags, NULL);
  free(uri);
  if (rc != SQLITE_OK) {
    sqlite3_close_v2(*out);
    *out = NULL;
    return TL_EIO;
  }
  sqlite3_extended_result_codes(*out, 1);
  sqlite3_busy_timeout(*out, 5000);
  return TL_OK;
}

/* Opens path again as an immutable file. */
static int reopen_immutable(tl_store *s, const char *path) {
  char *uri = immutable_uri(path);
  if (!uri)
    return tl__store_fail(s, TL_ENOMEM, "out of memory");
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

/* TL_OK when the file at path (st: its stat, NULL when there is none)
 * can be opened as flags ask; else why not, before SQLite touches it. */
static int refuse_unfit(tl_store *s, const char *path, int flags, const struct stat *st) {
  if (!st) {
    if (errno == ENOENT && (flags & (TL_STORE_READONLY | TL_STORE_NOCREATE)))
      return tl__store_fail(s, TL_ENOTFOUND,
                            "%s does not exist (collect with tlcollect first, or use --db)", path);
  } else if (S_ISDIR(st->st_mode)) {
    return tl__store_fail(s, TL_EINVAL, "%s is a folder, not a database file", path);
  } else if (!S_ISREG(st->st_mode)) {
    /* SQLite would block forever on a FIFO, and leave a -journal file next
     * to /dev/null: a database is a regular file, anything else is refused
     * before it is touched. */
    return tl__store_fail(s, TL_EINVAL, "%s is %s, not a database file", path,
                          tl__sqlite_special_kind(st->st_mode));
  } else if (st->st_size == 0 && (flags & (TL_STORE_READONLY | TL_STORE_NOCREATE)) &&
             !wal_in_use(path)) {
    /* Only a collector (or a merge or import into it) makes an empty file
     * a database; a command that looks must not grow it into one. */
    return tl__store_fail(s, TL_ENOTDB, "%s is empty, not a tl database", path);
  }

  /* SQLite's -wal and -shm beside it must be files: a folder (or a FIFO)
   * there would fail later as "read-only" or "unable to open". */
  char bad_side[PATH_MAX + 32];
  if (st && sidecar_not_a_file(path, bad_side, sizeof bad_side))
    return tl__store_fail(s, TL_EINVAL,
                          "%s: SQLite keeps the database's write-ahead log and its index there, "
                          "so it must be a file or absent (remove it when no tl program is using "
                          "the database)",
                          bad_side);
  /* Before SQLite opens it (and makes -wal and -shm files at its mode). */
  if (!s->readonly && st && access(path, W_OK) != 0 && errno == EACCES)
    return fail_write_protected(s);
  /* A -shm or -wal an older tl left read-only: named now, since SQLite,
   * which opens it read-only, also makes an empty one writable for its
   * owner, and the failure that follows would no longer show the cause. */
  char sidecar[PATH_MAX + 32];
  if (!s->readonly && st && tl__sqlite_readonly_sidecar(path, sidecar, sizeof sidecar))
    return tl__store_fail(s, TL_EREADONLY, "%s%s", sidecar, tl__sqlite_sidecar_hint);
  return TL_OK;
}

/* The settings of every connection; a writer's also make the file WAL,
 * fully synchronous, and give a new one large pages. */
static int set_pragmas(tl_store *s, int version) {
  int err = TL_OK;
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
  return err;
}

int tl__sqlite_open(const tl_store_ops *self, tl_store **out, const char *path, int flags) {
  *out = NULL;
  tl_sqlite *file = calloc(1, sizeof *file);
  if (!file)
    return TL_ENOMEM;
  tl_store *s = &file->base;
  *out = s;
  s->ops = self;
  s->path = strdup(path);
  if (!s->path)
    return TL_ENOMEM;
  s->readonly = !!(flags & TL_STORE_READONLY);

  struct stat st;
  int exists = stat(path, &st) == 0;
  int err = refuse_unfit(s, path, flags, exists ? &st : NULL);
  if (err)
    return err;
  /* A file nobody may write (no write permission bits) and without a WAL
   * to replay cannot change under a reader: read it as it is, so that no
   * -wal and -shm files are left behind at its mode, which would stop a
   * writer once the file is made writable again. */
  int version = 0;
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
  if (err && s->readonly && tl__sqlite_on_readonly_fs(path) && !wal_in_use(path)) {
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
  if (err == TL_OK)
    err = set_pragmas(s, version);
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

void tl__sqlite_forget_statements(tl_store *s) {
  sqlite3_finalize(tl__sqlite(s)->facts_st);
  sqlite3_finalize(tl__sqlite(s)->tags_st);
  sqlite3_finalize(tl__sqlite(s)->causes_st);
  tl__sqlite(s)->facts_st = tl__sqlite(s)->tags_st = tl__sqlite(s)->causes_st = NULL;
}

void tl__sqlite_close(tl_store *s) {
  if (!s)
    return;
  tl__sqlite_forget_statements(s);
  sqlite3_close_v2(tl__sqlite_db(s));
  free(s->path);
  free(s);
}

int tl__sqlite_schema_version(tl_store *s) {
  int v = 0;
  return pragma_int(s, "PRAGMA user_version", &v) == TL_OK ? v : -1;
}

/* ======================================================================== */
/* Stale sessions                                                            */

/* The sessions whose collector is gone (tl__session_gone) are marked
 * 'interrupted' in one transaction, and only while they are still
 * 'running', so two processes recovering at once agree. */
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

int tl__sqlite_read_cache(tl_store *s, int64_t bytes) {
  /* SQLite's cache is in KiB when negative; -2000 is its default. */
  char sql[64];
  snprintf(sql, sizeof sql, "PRAGMA cache_size = %lld",
           bytes > 0 ? -(long long)(bytes >> 10) : -2000LL);
  int rc = sqlite3_exec(tl__sqlite_db(s), sql, NULL, NULL, NULL);
  return rc == SQLITE_OK ? TL_OK : tl__store_sqlfail(s, rc, "sizing the read cache");
}
