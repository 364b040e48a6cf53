/* output.c: putting pages on disk. Every file is written to a temporary
 * file beside it and renamed into place, so a failed write never leaves
 * half a page; a file that tl did not write is not replaced without force,
 * and links are never followed. The static site's pages are written the
 * same way (site_write.c). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report_internal.h"

/* ======================================================================== */
/* Writing one file                                                          */

/* Non-zero when the first line of the open file holds TL_REPORT_MARKER. */
static int is_tl_output(int fd) {
  char buf[512];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  if (n <= 0)
    return n == 0; /* an empty file holds nothing to lose */
  buf[n] = '\0';
  char *nl = strchr(buf, '\n');
  if (nl)
    *nl = '\0';
  return strstr(buf, TL_REPORT_MARKER) != NULL;
}

static int errf(char *err, size_t errlen, int code, const char *what, const char *name) {
  snprintf(err, errlen, "%s %s", name, what);
  return code;
}

/* Whether name inside dirfd may be replaced (see tl_report_file_open);
 * *mode receives the permissions the new file gets: those of the file it
 * replaces when that file is the user's own, so that a private page stays
 * private, or TL__NEW_FILE (another user's mode, a world-writable 0666 say, is
 * not theirs to pass on). */
int tl__output_check(int dirfd, const char *name, const char *shown, int force, mode_t *mode,
                     char *err, size_t errlen) {
  struct stat st;
  *mode = TL__NEW_FILE;
  if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISDIR(st.st_mode))
      return errf(err, errlen, TL_ECONFLICT, "is a folder (name a file)", shown);
    if (S_ISLNK(st.st_mode) && !force)
      return errf(err, errlen, TL_ECONFLICT,
                  "is a symbolic link; tl does not follow it (remove it, or --force to replace "
                  "the link itself)",
                  shown);
    if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
      return errf(err, errlen, TL_ECONFLICT, "is not a regular file", shown);
    if (S_ISREG(st.st_mode) && !force) {
      int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
      int ours = fd >= 0 && is_tl_output(fd);
      if (fd >= 0)
        close(fd);
      if (!ours)
        return errf(err, errlen, TL_ECONFLICT,
                    "exists and was not written by tlreport (choose another name, or --force to "
                    "replace it)",
                    shown);
    }
    if (S_ISREG(st.st_mode) && st.st_uid == geteuid())
      *mode = st.st_mode & 0777;
  } else if (errno != ENOENT) {
    snprintf(err, errlen, "cannot inspect %s: %s", shown, strerror(errno));
    return TL_EIO;
  }
  return TL_OK;
}

/* The number in the next temporary file's name. A site keeps a temporary
 * file for each of its pages and charts until all are written (a fleet's
 * Markdown site: thousands), so the names go on from the last one taken
 * rather than starting again at 0, where they would run out. */
static atomic_uint next_temp;

/* Opens a new temporary file in dirfd, named in tmp, with the given mode
 * (TL__NEW_FILE: 0644 less the umask), for a page to be written into as it is
 * made. NULL with err set (and *rc the error) when it cannot be made. */
FILE *tl__output_temp_open(int dirfd, const char *shown, mode_t mode, char tmp[64], int *rc,
                           char *err, size_t errlen) {
  int fd = -1;
  /* Names taken by others (a crashed run's leftovers) are passed over. */
  for (unsigned tries = 0; tries < 1000 && fd < 0; tries++) {
    snprintf(tmp, 64, ".tl-report-%ld-%u.tmp", (long)getpid(), atomic_fetch_add(&next_temp, 1));
    fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                mode == TL__NEW_FILE ? 0644 : mode);
    if (fd < 0 && errno != EEXIST)
      break;
  }
  if (fd < 0) {
    snprintf(err, errlen, "cannot write beside %s: %s", shown, strerror(errno));
    *rc = errno == EACCES || errno == EPERM ? TL_EPERM : TL_EIO;
    return NULL;
  }
  FILE *f = NULL; /* exactly the old mode, whatever the umask */
  if (mode == TL__NEW_FILE || fchmod(fd, mode) == 0)
    f = fdopen(fd, "w");
  if (!f) {
    snprintf(err, errlen, "writing %s failed: %s", shown, strerror(errno));
    close(fd);
    unlinkat(dirfd, tmp, 0);
    *rc = TL_EIO;
  }
  return f;
}

int tl__flush_failure(FILE *f) {
  errno = 0;
  int flushed = fflush(f) == 0;
  if (flushed && !ferror(f))
    return 0;
  if (!flushed && errno)
    return errno;
  /* stdio keeps only that an earlier write failed, not why, and drops what
   * it could not write. The same write again, at the end of a file that is
   * removed anyway, fails the same way: a size limit, a full disk. */
  static const char probe[1 << 16];
  struct stat st;
  int fd = fileno(f);
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    return EIO;
  off_t end = st.st_size;
  for (int i = 0; i < 2; i++) {
    errno = 0;
    ssize_t n = pwrite(fd, probe, sizeof probe, end);
    if (n < 0)
      return errno ? errno : EIO;
    end += n;
  }
  return EIO;
}

/* Ends the temporary file f of tl__output_temp_open: flushed, synced and closed, or,
 * when rc (the making's result) or any of that fails, removed. Returns rc
 * or the failure, with err set for the latter. */
int tl__output_temp_close(int dirfd, FILE *f, const char *tmp, const char *shown, int rc, char *err,
                          size_t errlen) {
  int saved = 0, failed = rc, why = tl__flush_failure(f);
  if (!failed && why)
    failed = saved = why;
  if (!failed && fsync(fileno(f)) != 0)
    failed = saved = errno;
  if (fclose(f) != 0 && !failed)
    failed = saved = errno;
  if (!failed)
    return TL_OK;
  unlinkat(dirfd, tmp, 0);
  if (rc)
    return rc;
  snprintf(err, errlen, "writing %s failed: %s", shown, strerror(saved));
  return saved == ENOSPC ? TL_EFULL : TL_EIO;
}

/* Writes data to a new temporary file in dirfd, named in tmp, synced and
 * closed, with the given mode. On failure nothing is left behind and err
 * says why. */
int tl__output_write_temp(int dirfd, const char *shown, const char *data, size_t len, mode_t mode,
                          char tmp[64], char *err, size_t errlen) {
  int rc = TL_OK;
  FILE *f = tl__output_temp_open(dirfd, shown, mode, tmp, &rc, err, errlen);
  if (!f)
    return rc;
  fwrite(data, 1, len, f);
  return tl__output_temp_close(dirfd, f, tmp, shown, TL_OK, err, errlen);
}

/* Moves the written temporary file over name. */
int tl__output_put_in_place(int dirfd, const char *tmp, const char *name, const char *shown,
                            char *err, size_t errlen) {
  if (renameat(dirfd, tmp, dirfd, name) == 0)
    return TL_OK;
  int saved = errno;
  unlinkat(dirfd, tmp, 0);
  snprintf(err, errlen, "writing %s failed: %s", shown, strerror(saved));
  return TL_EIO;
}

/* Opens the folder dir to write in. A symbolic link there is followed only
 * when it is the user's own (or root's): one of another user's, in a
 * shared folder such as /tmp, would send the pages wherever that user
 * chose, and not every system refuses that (fs.protected_symlinks). -1
 * with err set when it cannot be opened or is refused. */
int tl__output_open_folder(const char *dir, char *err, size_t errlen) {
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat link, target;
  if (fd < 0 && (errno == ELOOP || errno == ENOTDIR) && lstat(dir, &link) == 0 &&
      S_ISLNK(link.st_mode)) {
    if (link.st_uid != geteuid() && link.st_uid != 0) {
      snprintf(err, errlen,
               "the folder %s is a symbolic link of another user's; tl does not follow it "
               "(name the folder it points to)",
               dir);
      errno = 0;
      return -1;
    }
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    /* The link may have been swapped since lstat: the folder opened must
     * be the one it names now, through a link that is still the user's. */
    struct stat again;
    if (fd >= 0 && (fstat(fd, &target) != 0 || lstat(dir, &again) != 0 ||
                    again.st_ino != link.st_ino || again.st_dev != link.st_dev)) {
      close(fd);
      snprintf(err, errlen, "the folder %s changed while it was opened; try again", dir);
      errno = 0;
      return -1;
    }
  }
  if (fd < 0 && errno)
    snprintf(err, errlen, "cannot open the folder %s: %s", dir, strerror(errno));
  return fd;
}

/* Splits path into its folder (into dir) and its file name (*name, inside
 * path); TL_EINVAL with err set when path names no file or is too long. */
static int split_path(const char *path, char *dir, size_t dirlen, const char **name, char *err,
                      size_t errlen) {
  const char *slash = strrchr(path, '/');
  *name = slash ? slash + 1 : path;
  if (!**name || strcmp(*name, ".") == 0 || strcmp(*name, "..") == 0)
    return errf(err, errlen, TL_EINVAL, "is not a file name", path);
  if (!slash)
    snprintf(dir, dirlen, ".");
  else if (slash == path)
    snprintf(dir, dirlen, "/");
  else if ((size_t)(slash - path) < dirlen)
    snprintf(dir, dirlen, "%.*s", (int)(slash - path), path);
  else
    return errf(err, errlen, TL_EINVAL, "is too long", "path");
  return TL_OK;
}

/* Opens the folder of path to write its file in: returns the folder's
 * descriptor, its name into dir and the file's name (inside path) into
 * *name; -1 with err set (and *rc the error) when path names no file or
 * the folder cannot be opened. */
static int open_folder_of(const char *path, char dir[4096], const char **name, int *rc, char *err,
                          size_t errlen) {
  *rc = split_path(path, dir, 4096, name, err, errlen);
  if (*rc)
    return -1;
  int dirfd = tl__output_open_folder(dir, err, errlen);
  if (dirfd < 0)
    *rc = TL_EIO;
  return dirfd;
}

/* ------------------------------------------------------------------------ */
/* A page written as it is made, with its charts                             */

/* The page goes to a temporary file beside path while it is made, so that
 * memory does not hold it; its charts are then written as the site's are:
 * every name checked first (a refusal writes nothing), each file to a
 * temporary beside its place, and only then renamed into place, the page
 * last, so that it never links a chart that is not there. */
struct tl_report_file {
  int dirfd;
  char dir[4096];
  const char *path, *name; /* name inside path */
  mode_t mode;
  char tmp[64];
  FILE *out;
  int force;
};

tl_report_file *tl_report_file_open(const char *path, int force, FILE **out, char *err,
                                    size_t errlen) {
  tl_report_file *f = calloc(1, sizeof *f);
  if (!f) {
    errf(err, errlen, TL_ENOMEM, "could not be written (out of memory)", path);
    return NULL;
  }
  int rc;
  f->path = path;
  f->force = force;
  f->dirfd = open_folder_of(path, f->dir, &f->name, &rc, err, errlen);
  if (f->dirfd >= 0 && !tl__output_check(f->dirfd, f->name, path, force, &f->mode, err, errlen))
    f->out = tl__output_temp_open(f->dirfd, path, f->mode, f->tmp, &rc, err, errlen);
  if (!f->out) {
    if (f->dirfd >= 0)
      close(f->dirfd);
    free(f);
    return NULL;
  }
  *out = f->out;
  return f;
}

int tl_report_file_restart(tl_report_file *f) {
  if (fflush(f->out) != 0 || ftruncate(fileno(f->out), 0) != 0)
    return TL_EIO;
  rewind(f->out);
  return TL_OK;
}

/* The chart files of a page into their temporary files, then in place. */
typedef struct {
  const char *name, *data;
  size_t len;
  mode_t mode;
  char tmp[64];
  int written;
} chart_file;

static int place_charts(int dirfd, const char *folder, chart_file *files, size_t n, int force,
                        char *err, size_t errlen) {
  int rc = TL_OK;
  char shown[4200];
  for (size_t i = 0; i < n && !rc; i++) {
    snprintf(shown, sizeof shown, "%s/%s", folder, files[i].name);
    rc = tl__output_check(dirfd, files[i].name, shown, force, &files[i].mode, err, errlen);
  }
  for (size_t i = 0; i < n && !rc; i++) {
    snprintf(shown, sizeof shown, "%s/%s", folder, files[i].name);
    rc = tl__output_write_temp(dirfd, shown, files[i].data, files[i].len, files[i].mode,
                               files[i].tmp, err, errlen);
    files[i].written = rc == TL_OK;
  }
  for (size_t i = 0; i < n && !rc; i++) {
    snprintf(shown, sizeof shown, "%s/%s", folder, files[i].name);
    rc = tl__output_put_in_place(dirfd, files[i].tmp, files[i].name, shown, err, errlen);
    files[i].written = 0;
  }
  for (size_t i = 0; i < n; i++)
    if (files[i].written)
      unlinkat(dirfd, files[i].tmp, 0);
  return rc;
}

/* Removes the charts an earlier run wrote beside the Markdown page of stem
 * that this run did not: STEM-N.svg for N past count, each tlreport's. A
 * page with fewer charts than before would otherwise leave some that no
 * page links, and a published site would carry them. */
void tl__output_drop_stale_charts(int dirfd, const char *stem, size_t count) {
  int fd = dup(dirfd);
  DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
  if (!d) {
    if (fd >= 0)
      close(fd);
    return; /* the page is in place; old charts only linger */
  }
  size_t len = strlen(stem);
  for (struct dirent *e; (e = readdir(d));) {
    const char *name = e->d_name;
    char canon[512];
    if (strncmp(name, stem, len) != 0 || name[len] != '-' || name[len + 1] < '1' ||
        name[len + 1] > '9')
      continue;
    unsigned long long n = strtoull(name + len + 1, NULL, 10);
    snprintf(canon, sizeof canon, "%s-%llu.svg", stem, n);
    if (n <= count || strcmp(name, canon) != 0)
      continue;
    int f = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    int ours =
        f >= 0 && fstat(f, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && is_tl_output(f);
    if (f >= 0)
      close(f);
    if (ours)
      unlinkat(dirfd, name, 0);
  }
  closedir(d);
}

int tl_report_file_place(tl_report_file *f, const tl_chart_files *charts, char *err,
                         size_t errlen) {
  int rc = tl__output_temp_close(f->dirfd, f->out, f->tmp, f->path, TL_OK, err, errlen);
  size_t n = charts && !rc ? charts->count : 0;
  chart_file *files = n ? calloc(n, sizeof *files) : NULL;
  if (n && !files)
    rc = errf(err, errlen, TL_ENOMEM, "could not be written (out of memory)", f->path);
  for (size_t i = 0; files && i < n; i++) {
    files[i].name = charts->items[i].name;
    files[i].data = charts->items[i].data;
    files[i].len = charts->items[i].len;
  }
  if (!rc && n)
    rc = place_charts(f->dirfd, f->dir, files, n, f->force, err, errlen);
  /* What is there may have changed while the page was made. */
  mode_t mode;
  if (!rc)
    rc = tl__output_check(f->dirfd, f->name, f->path, f->force, &mode, err, errlen);
  if (!rc)
    rc = tl__output_put_in_place(f->dirfd, f->tmp, f->name, f->path, err, errlen);
  else
    unlinkat(f->dirfd, f->tmp, 0);
  if (!rc && charts)
    tl__output_drop_stale_charts(f->dirfd, charts->stem, charts->count);
  close(f->dirfd);
  free(files);
  free(f);
  return rc;
}

void tl_report_file_discard(tl_report_file *f) {
  if (!f)
    return;
  fclose(f->out);
  unlinkat(f->dirfd, f->tmp, 0);
  close(f->dirfd);
  free(f);
}
