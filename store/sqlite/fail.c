/* fail.c: a SQLite failure made a tl error with a message that says what
 * failed and what to do: a full disk, a read-only folder or file system,
 * a -shm or -wal file left unwritable, a busy or damaged file. Opening a
 * file asks the same questions of it before SQLite does. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "sqlite_internal.h"

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

int tl__sqlite_on_readonly_fs(const char *path) {
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
const char tl__sqlite_sidecar_hint[] =
    " (left by a program that read the database while it was read-only: make it writable with "
    "chmod u+w, or remove it when no tl program is using the database)";

/* Whether path-shm or path-wal exists and cannot be written while path
 * can; then names it in buf ("PATH-shm is read-only"). */
int tl__sqlite_readonly_sidecar(const char *path, char *buf, size_t len) {
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

const char *tl__sqlite_special_kind(mode_t mode) {
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
    else if (s->path && tl__sqlite_readonly_sidecar(s->path, sidecar, sizeof sidecar)) {
      /* The database is writable, but a -shm or -wal file left behind by
       * an older tl reading it while it was read-only is not. */
      detail = sidecar;
      hint = tl__sqlite_sidecar_hint;
    } else
      hint = " (make the file and its folder writable, or use --db)";
    break;
  case SQLITE_CANTOPEN:
    err = TL_EIO;
    hint = " (check that the file and its folder exist and are accessible, or use --db)";
    if (sys == EROFS || (s->path && tl__sqlite_on_readonly_fs(s->path))) {
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
