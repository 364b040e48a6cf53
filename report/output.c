/* output.c: putting pages on disk. Every file is written to a temporary
 * file beside it and renamed into place, so a failed write never leaves
 * half a page; a file that tl did not write is not replaced without force,
 * and links are never followed. The static site (--site DIR) is built here
 * from comparisons: every label, each label alone, each host alone. */
#include <errno.h>
#include <fcntl.h>
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

/* The mode of a file that replaces none (or another user's): 0644 less
 * the umask. */
#define NEW_FILE ((mode_t)-1)

/* Whether name inside dirfd may be replaced (see tl_report_file_open);
 * *mode receives the permissions the new file gets: those of the file it
 * replaces when that file is the user's own, so that a private page stays
 * private, or NEW_FILE (another user's mode, a world-writable 0666 say, is
 * not theirs to pass on). */
static int check_target(int dirfd, const char *name, const char *shown, int force, mode_t *mode,
                        char *err, size_t errlen) {
  struct stat st;
  *mode = NEW_FILE;
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

/* Opens a new temporary file in dirfd, named in tmp, with the given mode
 * (NEW_FILE: 0644 less the umask), for a page to be written into as it is
 * made. NULL with err set (and *rc the error) when it cannot be made. */
static FILE *temp_open(int dirfd, const char *shown, mode_t mode, char tmp[64], int *rc, char *err,
                       size_t errlen) {
  int fd = -1;
  for (unsigned i = 0; i < 1000 && fd < 0; i++) {
    snprintf(tmp, 64, ".tl-report-%ld-%u.tmp", (long)getpid(), i);
    fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                mode == NEW_FILE ? 0644 : mode);
    if (fd < 0 && errno != EEXIST)
      break;
  }
  if (fd < 0) {
    snprintf(err, errlen, "cannot write beside %s: %s", shown, strerror(errno));
    *rc = errno == EACCES || errno == EPERM ? TL_EPERM : TL_EIO;
    return NULL;
  }
  FILE *f = NULL; /* exactly the old mode, whatever the umask */
  if (mode == NEW_FILE || fchmod(fd, mode) == 0)
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

/* Ends the temporary file f of temp_open: flushed, synced and closed, or,
 * when rc (the making's result) or any of that fails, removed. Returns rc
 * or the failure, with err set for the latter. */
static int temp_close(int dirfd, FILE *f, const char *tmp, const char *shown, int rc, char *err,
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
static int write_temp(int dirfd, const char *shown, const char *data, size_t len, mode_t mode,
                      char tmp[64], char *err, size_t errlen) {
  int rc = TL_OK;
  FILE *f = temp_open(dirfd, shown, mode, tmp, &rc, err, errlen);
  if (!f)
    return rc;
  fwrite(data, 1, len, f);
  return temp_close(dirfd, f, tmp, shown, TL_OK, err, errlen);
}

/* Moves the written temporary file over name. */
static int put_in_place(int dirfd, const char *tmp, const char *name, const char *shown, char *err,
                        size_t errlen) {
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
static int open_folder(const char *dir, char *err, size_t errlen) {
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
  int dirfd = open_folder(dir, err, errlen);
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
  if (f->dirfd >= 0 && !check_target(f->dirfd, f->name, path, force, &f->mode, err, errlen))
    f->out = temp_open(f->dirfd, path, f->mode, f->tmp, &rc, err, errlen);
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
    rc = check_target(dirfd, files[i].name, shown, force, &files[i].mode, err, errlen);
  }
  for (size_t i = 0; i < n && !rc; i++) {
    snprintf(shown, sizeof shown, "%s/%s", folder, files[i].name);
    rc = write_temp(dirfd, shown, files[i].data, files[i].len, files[i].mode, files[i].tmp, err,
                    errlen);
    files[i].written = rc == TL_OK;
  }
  for (size_t i = 0; i < n && !rc; i++) {
    snprintf(shown, sizeof shown, "%s/%s", folder, files[i].name);
    rc = put_in_place(dirfd, files[i].tmp, files[i].name, shown, err, errlen);
    files[i].written = 0;
  }
  for (size_t i = 0; i < n; i++)
    if (files[i].written)
      unlinkat(dirfd, files[i].tmp, 0);
  return rc;
}

int tl_report_file_place(tl_report_file *f, const tl_chart_files *charts, char *err,
                         size_t errlen) {
  int rc = temp_close(f->dirfd, f->out, f->tmp, f->path, TL_OK, err, errlen);
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
    rc = check_target(f->dirfd, f->name, f->path, f->force, &mode, err, errlen);
  if (!rc)
    rc = put_in_place(f->dirfd, f->tmp, f->name, f->path, err, errlen);
  else
    unlinkat(f->dirfd, f->tmp, 0);
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

/* ======================================================================== */
/* The static site                                                           */

/* The site is written all or nothing: every page's name is known and checked
 * before any page is rendered, each page goes to a temporary file beside its
 * place, and only when every one is written are they renamed into place. A
 * refused or failed run leaves the folder as it was. */

/* A Markdown site (--format md) has the same pages as .md files, each
 * page's charts beside it as PAGE-1.svg ... (PAGE_CHART), which take
 * their places before any page, so that no page links a missing chart. */
typedef enum { PAGE_COMPARE, PAGE_LABEL, PAGE_HOST, PAGE_INDEX, PAGE_CHART } page_kind;

typedef struct {
  page_kind kind;
  size_t at;      /* PAGE_LABEL: index into labels; PAGE_HOST: into sessions */
  char name[128]; /* inside the site */
  mode_t mode;    /* of the page it replaces, or 0 */
  char tmp[64];   /* the temporary file, once written */
  int written;
} site_page;

typedef struct {
  tl_store *store; /* for the statistics of each page */
  int dirfd;
  const char *dir;
  site_page *pages;
  size_t count;
  char *err;
  size_t errlen;
  const tl_comparison *all;     /* every label, by label: the site's colour order */
  const tl_session_list *from;  /* the sessions every page narrows (read once) */
  const tl_comparison *grouped; /* compare.html grouped by --by, or NULL */
  const char **host_fps;        /* the hosts given a page, by fingerprint */
  size_t host_fp_count;
  const char *ext; /* of the pages: "html" or "md" */
  int force;
  tl_stats all_stats; /* of all, once: the comparison page, the index and a lone label's page */
  int have_all_stats;
} site;

static int add_page(site *s, page_kind kind, size_t at, const char *name) {
  site_page *p = realloc(s->pages, (s->count + 1) * sizeof *p);
  if (!p)
    return errf(s->err, s->errlen, TL_ENOMEM, "could not be made (out of memory)", name);
  s->pages = p;
  p += s->count++;
  memset(p, 0, sizeof *p);
  p->kind = kind;
  p->at = at;
  snprintf(p->name, sizeof p->name, "%s", name);
  return TL_OK;
}

/* Every page of the site by label gives a label the colour and marker it
 * has on the comparison of every label; a page grouped by --by keeps its
 * own order (its groups are no labels). */
static void site_styles(const site *s, tl_page_opts *o) {
  o->style_order = (const char *const *)s->all->labels;
  o->style_count = s->all->label_count;
}

/* Writes a file of the site (data, len) to page p's temporary file, once
 * it may replace what is there. */
static int put_file(site *s, site_page *p, const char *data, size_t len, int checked) {
  char shown[4200];
  snprintf(shown, sizeof shown, "%s/%s", s->dir, p->name);
  int rc = checked ? TL_OK
                   : check_target(s->dirfd, p->name, shown, s->force, &p->mode, s->err, s->errlen);
  if (!rc)
    rc = write_temp(s->dirfd, shown, data, len, p->mode, p->tmp, s->err, s->errlen);
  p->written = rc == TL_OK;
  return rc;
}

/* A Markdown page's charts, each a file of the site. */
static int put_charts(site *s, const tl_chart_files *charts) {
  int rc = TL_OK;
  for (size_t i = 0; i < charts->count && !rc; i++) {
    rc = add_page(s, PAGE_CHART, 0, charts->items[i].name);
    if (!rc)
      rc = put_file(s, &s->pages[s->count - 1], charts->items[i].data, charts->items[i].len, 0);
  }
  return rc;
}

/* Renders a comparison (or the index, when index is set) into page at's
 * temporary file, and a Markdown page's charts into theirs. */
static int put_page(site *s, size_t at, const tl_comparison *c, const tl_page_opts *base,
                    const char *title) {
  site_page *p = &s->pages[at];
  char stem[128];
  tl_page_opts o = *base;
  snprintf(stem, sizeof stem, "%.*s", (int)(strlen(p->name) - strlen(s->ext) - 1), p->name);
  tl_chart_files charts = {stem, NULL, 0};
  if (o.format == TL_FORMAT_MD)
    o.charts = &charts;
  o.site_links = 1;
  o.title = title;
  o.host_facts = p->kind == PAGE_HOST;
  if (c != s->grouped)
    site_styles(s, &o);
  o.compare_by = s->grouped ? s->grouped->by : NULL;
  o.host_pages = s->host_fps;
  o.host_page_count = s->host_fp_count;
  tl_stats own, *st = &own;
  memset(&own, 0, sizeof own);
  int rc = TL_OK;
  if (c == s->all && !s->have_all_stats) {
    st = &s->all_stats; /* worked out once for every page of all */
    rc = tl_stats_compute_unranked(s->store, c, st, s->err, s->errlen);
    s->have_all_stats = rc == TL_OK;
  } else if (c == s->all) {
    st = &s->all_stats;
  } else {
    /* the index's changes too; no page of the site says the rank test */
    rc = tl_stats_compute_unranked(s->store, c, st, s->err, s->errlen);
  }
  /* Straight into its temporary file: memory never holds the page. */
  char shown[4200];
  snprintf(shown, sizeof shown, "%s/%s", s->dir, p->name);
  FILE *m = rc ? NULL : temp_open(s->dirfd, shown, p->mode, p->tmp, &rc, s->err, s->errlen);
  if (m) {
    o.stats = st;
    int made = p->kind == PAGE_INDEX ? tl__render_index(c, &o, m) : tl_render(c, &o, m);
    if (ferror(m))
      made = TL_OK; /* a write that failed: temp_close says why */
    else if (made)
      errf(s->err, s->errlen, made, "could not be made", p->name);
    rc = temp_close(s->dirfd, m, p->tmp, shown, made, s->err, s->errlen);
    p->written = rc == TL_OK;
  }
  tl_stats_free(&own);
  if (!rc)
    rc = put_charts(s, &charts); /* p moves when the list grows */
  tl_chart_files_free(&charts);
  return rc;
}

/* Whether session x is one of labels' and, when host is set, one the
 * store's host filter selects: its hostname, or a fingerprint prefix. */
static int narrowed_in(const tl_session *x, const char *const *labels, size_t nl,
                       const char *host) {
  if (host && strcmp(x->hostname, host) != 0 && strncmp(x->host_fingerprint, host, strlen(host)))
    return 0;
  for (size_t l = 0; l < nl; l++)
    if (strcmp(x->label, labels[l]) == 0)
      return 1;
  return 0;
}

/* Session x into list (its room made), its strings in the list's pool. */
static int copy_session(tl_session_list *list, const tl_session *x) {
  tl_session *y = &list->items[list->count++];
  *y = *x;
  char **text[] = {&y->uuid,       &y->run_uuid,         &y->label,  &y->probe,
                   &y->hostname,   &y->host_fingerprint, &y->status, &y->command_line,
                   &y->tl_version, &y->libuv_version};
  for (size_t i = 0; i < sizeof text / sizeof text[0]; i++)
    if (!(*text[i] = tl_strpool_get(list->strings, *text[i])))
      return TL_ENOMEM;
  return TL_OK;
}

/* The sessions of s->from that a page of labels (and host) compares, in
 * their order: what the store would list for that filter, without reading
 * every session again for each of the site's pages. */
static int narrow(const site *s, const char *const *labels, size_t nl, const char *host,
                  tl_session_list *out) {
  const tl_session_list *from = s->from;
  memset(out, 0, sizeof *out);
  size_t n = 0;
  for (size_t i = 0; i < from->count; i++)
    n += narrowed_in(&from->items[i], labels, nl, host);
  if (!n)
    return TL_OK;
  out->items = malloc(n * sizeof *out->items);
  out->strings = tl_strpool_new();
  int rc = out->items && out->strings ? TL_OK : TL_ENOMEM;
  for (size_t i = 0; i < from->count && !rc; i++)
    if (narrowed_in(&from->items[i], labels, nl, host))
      rc = copy_session(out, &from->items[i]);
  if (rc)
    tl_session_list_free(out);
  return rc;
}

/* A comparison of the same sessions narrowed to labels and/or a host. */
static int sub_compare(tl_store *store, const tl_compare_opts *opts, const char *const *labels,
                       size_t nl, const char *host, tl_comparison *out, site *s) {
  tl_compare_opts o = *opts;
  o.labels = labels;
  o.label_count = nl;
  o.baseline = NULL;
  if (host)
    o.filter.host = host;
  tl_session_list list;
  if (narrow(s, labels, nl, host, &list)) {
    memset(out, 0, sizeof *out);
    return errf(s->err, s->errlen, TL_ENOMEM, "could not be made (out of memory)", s->dir);
  }
  int rc = tl__compare_given(store, &o, &list, out, s->err, s->errlen);
  tl_session_list_free(&list); /* emptied when taken over */
  return rc;
}

/* Whether a host page of fp would take in another host's sessions too: the
 * store selects a host by fingerprint prefix, and one imported host's
 * fingerprint may begin another's ("imported:db" and "imported:db2"). */
static int host_ambiguous(const tl_comparison *all, const char *fp) {
  size_t n = strlen(fp);
  for (size_t i = 0; i < all->sessions.count; i++) {
    const char *o = all->sessions.items[i].host_fingerprint;
    if (strncmp(o, fp, n) == 0 && o[n])
      return 1;
  }
  return 0;
}

/* The pages of the site, named from the comparison of every label. */
static int plan_pages(site *s, const tl_comparison *all) {
  s->host_fps = calloc(all->sessions.count + 1, sizeof *s->host_fps);
  if (!s->host_fps)
    return errf(s->err, s->errlen, TL_ENOMEM, "could not be planned (out of memory)", s->dir);
  char name[128];
  snprintf(name, sizeof name, "compare.%s", s->ext);
  int rc = add_page(s, PAGE_COMPARE, 0, name);
  for (size_t i = 0; i < all->label_count && !rc; i++) {
    if (tl_label_check(all->labels[i], NULL, 0) != TL_OK)
      continue; /* only validated labels become file names */
    snprintf(name, sizeof name, "label-%s.%s", all->labels[i], s->ext);
    rc = add_page(s, PAGE_LABEL, i, name);
  }
  /* Each host at its first session, through one hash table. */
  size_t *first = tl__sessions_first(all, TL__SAME_MACHINE);
  if (!first)
    return errf(s->err, s->errlen, TL_ENOMEM, "could not be planned (out of memory)", s->dir);
  for (size_t i = 0; i < all->sessions.count && !rc; i++) {
    const tl_session *x = &all->sessions.items[i];
    if (first[i] == i && tl__host_page(x->host_fingerprint, s->ext, name, sizeof name) == 0 &&
        !host_ambiguous(all, x->host_fingerprint)) {
      rc = add_page(s, PAGE_HOST, i, name);
      s->host_fps[s->host_fp_count++] = x->host_fingerprint;
    }
  }
  free(first);
  snprintf(name, sizeof name, "index.%s", s->ext);
  if (!rc)
    rc = add_page(s, PAGE_INDEX, 0, name);
  return rc;
}

/* Writes page at of the site to its temporary file. */
static int make_page(site *s, size_t at, const tl_compare_opts *opts, const tl_comparison *grouped,
                     const tl_comparison *all, const tl_page_opts *page) {
  const site_page *p = &s->pages[at];
  tl_comparison one;
  char title[512];
  int rc;
  switch (p->kind) {
  case PAGE_COMPARE:
    return put_page(s, at, grouped ? grouped : all, page, NULL);
  case PAGE_INDEX:
    return put_page(s, at, all, page, "Timer latency results");
  case PAGE_LABEL: {
    const char *label = all->labels[p->at];
    snprintf(title, sizeof title, "Timer latency on %s", label);
    /* The page of the only label is the comparison of every label: made
     * once (a fleet's label holds every session). */
    if (all->label_count == 1 && !opts->baseline)
      return put_page(s, at, all, page, title);
    if ((rc = sub_compare(s->store, opts, &label, 1, NULL, &one, s)))
      return rc;
    break;
  }
  default: {
    const tl_session *x = &all->sessions.items[p->at];
    /* The labels measured on this host, in the comparison's order. */
    const char *labels[256];
    size_t nl = 0;
    for (size_t l = 0; l < all->label_count && nl < 256; l++)
      for (size_t j = 0; j < all->sessions.count; j++)
        if (strcmp(all->sessions.items[j].host_fingerprint, x->host_fingerprint) == 0 &&
            strcmp(all->sessions.items[j].label, all->labels[l]) == 0) {
          labels[nl++] = all->labels[l];
          break;
        }
    if ((rc = sub_compare(s->store, opts, labels, nl, x->host_fingerprint, &one, s)))
      return rc;
    snprintf(title, sizeof title, "Timer latency on host %s", x->hostname);
  }
  }
  rc = put_page(s, at, &one, page, title);
  tl_comparison_free(&one);
  return rc;
}

/* The host pages come last. Each reads every database page holding its
 * sessions' summaries and samples, and a fleet's hosts share those pages
 * (sessions of one time, of many hosts): the next host, in the order of
 * their first sessions, needs nearly the same ones. A read cache of what
 * one host page reads (160 MiB: 1,440 sessions, summaries and samples)
 * then saves reading them again from the file; the samples kept for the
 * pages of every label, all written by now, make room for it. */
enum { HOST_PAGES_CACHE = 160 << 20 };

static void before_host_pages(site *s, tl_comparison *grouped, tl_comparison *all) {
  tl__comparison_drop_kept(all);
  if (grouped)
    tl__comparison_drop_kept(grouped);
  (void)tl_store_read_cache(s->store, HOST_PAGES_CACHE); /* without it, only slower */
}

/* The sessions each page of the site narrows: those of the comparison of
 * every label, or, when --last kept only some of them, the store's list
 * again (into listed), since each page keeps its own last ones. */
static int site_sessions(tl_store *store, const tl_compare_opts *by_label, const tl_comparison *all,
                         tl_session_list *listed, const tl_session_list **from, char *err,
                         size_t errlen) {
  *from = &all->sessions;
  if (by_label->last <= 0)
    return TL_OK;
  tl_filter f = by_label->filter;
  f.labels = by_label->labels;
  f.label_count = by_label->label_count;
  int rc = tl_store_sessions(store, &f, listed);
  *from = listed;
  return rc ? tl_fail(err, errlen, rc, "%s", tl_store_errmsg(store)) : TL_OK;
}

int tl_site_write(tl_store *store, const tl_compare_opts *opts, const tl_page_opts *page,
                  const char *dir, int force, size_t *pages, char *err, size_t errlen) {
  if (pages)
    *pages = 0;
  site s;
  memset(&s, 0, sizeof s);
  s.store = store;
  s.dirfd = -1;
  s.dir = dir;
  s.err = err;
  s.errlen = errlen;
  s.ext = page->format == TL_FORMAT_MD ? "md" : "html";
  s.force = force;
  /* With --by, compare.html is grouped by it; the label and host pages and
   * the index stay by label, so that their links hold. */
  tl_compare_opts by_label = *opts;
  tl_comparison grouped, all;
  tl_session_list listed = {0};
  int have_grouped = 0, have_all = 0, made_dir = 0, rc = TL_OK;
  if (opts->by) {
    by_label.by = NULL;
    by_label.labels = NULL;
    by_label.label_count = 0;
    by_label.baseline = NULL;
  }
  /* One read snapshot for every page, so that they agree. */
  if ((rc = tl_store_read_begin(store)))
    return tl_fail(err, errlen, rc, "%s", tl_store_errmsg(store));
  if (opts->by) {
    rc = tl__compare(store, opts, 1, &grouped, err, errlen);
    have_grouped = rc == TL_OK;
  }
  if (!rc) {
    rc = tl__compare(store, &by_label, 1, &all, err, errlen);
    have_all = rc == TL_OK;
  }
  if (!rc)
    rc = site_sessions(store, &by_label, &all, &listed, &s.from, err, errlen);
  if (!rc) {
    s.all = &all;
    s.grouped = have_grouped ? &grouped : NULL;
    rc = plan_pages(&s, &all);
  }
  if (!rc) {
    made_dir = mkdir(dir, 0755) == 0;
    if (!made_dir && errno != EEXIST) {
      snprintf(err, errlen, "cannot create the folder %s: %s", dir, strerror(errno));
      rc = TL_EIO;
    }
  }
  if (!rc && (s.dirfd = open_folder(dir, err, errlen)) < 0)
    rc = TL_EIO;
  /* Every page may be replaced before any is made. */
  for (size_t i = 0; i < s.count && !rc; i++) {
    char shown[4200];
    snprintf(shown, sizeof shown, "%s/%s", dir, s.pages[i].name);
    rc = check_target(s.dirfd, s.pages[i].name, shown, force, &s.pages[i].mode, err, errlen);
  }
  size_t planned = s.count; /* the charts of Markdown pages follow */
  for (int hosts = 0; hosts <= 1 && !rc; hosts++) {
    if (hosts)
      before_host_pages(&s, have_grouped ? &grouped : NULL, &all);
    for (size_t i = 0; i < planned && !rc; i++)
      if ((s.pages[i].kind == PAGE_HOST) == hosts)
        rc = make_page(&s, i, &by_label, have_grouped ? &grouped : NULL, &all, page);
  }
  tl_store_read_cache(store, 0);
  /* Then all of them take their places, the charts first. */
  size_t placed = 0;
  for (int charts = 1; charts >= 0; charts--)
    for (size_t i = 0; i < s.count && !rc; i++) {
      char shown[4200];
      if ((s.pages[i].kind == PAGE_CHART) != charts)
        continue;
      snprintf(shown, sizeof shown, "%s/%s", dir, s.pages[i].name);
      rc = put_in_place(s.dirfd, s.pages[i].tmp, s.pages[i].name, shown, err, errlen);
      s.pages[i].written = 0;
      placed += rc == TL_OK && !charts;
    }
  for (size_t i = 0; i < s.count; i++)
    if (s.pages[i].written)
      unlinkat(s.dirfd, s.pages[i].tmp, 0);
  tl_store_read_end(store);
  if (s.dirfd >= 0)
    close(s.dirfd);
  if (rc && made_dir)
    rmdir(dir); /* refused before any page took its place: the folder was empty */
  if (have_grouped)
    tl_comparison_free(&grouped);
  if (have_all)
    tl_comparison_free(&all);
  tl_session_list_free(&listed);
  tl_stats_free(&s.all_stats);
  free(s.pages);
  free(s.host_fps);
  if (pages)
    *pages = placed;
  return rc;
}
