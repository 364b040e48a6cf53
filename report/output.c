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

/* Writes data to name inside the open folder dirfd (see tl_report_write_file). */
static int write_at(int dirfd, const char *name, const char *shown, const char *data, size_t len,
                    int force, char *err, size_t errlen) {
  struct stat st;
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
  } else if (errno != ENOENT) {
    snprintf(err, errlen, "cannot inspect %s: %s", shown, strerror(errno));
    return TL_EIO;
  }

  char tmp[64];
  int fd = -1;
  for (unsigned i = 0; i < 100 && fd < 0; i++) {
    snprintf(tmp, sizeof tmp, ".tl-report-%ld-%u.tmp", (long)getpid(), i);
    fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST)
      break;
  }
  if (fd < 0) {
    snprintf(err, errlen, "cannot write beside %s: %s", shown, strerror(errno));
    return errno == EACCES || errno == EPERM ? TL_EPERM : TL_EIO;
  }
  size_t done = 0;
  int rc = TL_OK;
  while (done < len) {
    ssize_t w = write(fd, data + done, len - done);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      rc = errno == ENOSPC ? TL_EFULL : TL_EIO;
      break;
    }
    done += (size_t)w;
  }
  if (rc == TL_OK && fsync(fd) != 0)
    rc = TL_EIO;
  int saved = errno;
  if (close(fd) != 0 && rc == TL_OK) {
    rc = TL_EIO;
    saved = errno;
  }
  if (rc == TL_OK && renameat(dirfd, tmp, dirfd, name) != 0) {
    rc = TL_EIO;
    saved = errno;
  }
  if (rc) {
    unlinkat(dirfd, tmp, 0);
    snprintf(err, errlen, "writing %s failed: %s", shown, strerror(saved));
  }
  return rc;
}

int tl_report_write_file(const char *path, const char *data, size_t len, int force, char *err,
                         size_t errlen) {
  const char *slash = strrchr(path, '/');
  const char *name = slash ? slash + 1 : path;
  if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
    return errf(err, errlen, TL_EINVAL, "is not a file name", path);
  char dir[4096];
  if (!slash)
    snprintf(dir, sizeof dir, ".");
  else if (slash == path)
    snprintf(dir, sizeof dir, "/");
  else if ((size_t)(slash - path) < sizeof dir)
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
  else
    return errf(err, errlen, TL_EINVAL, "is too long", "path");
  int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0) {
    snprintf(err, errlen, "cannot open the folder %s: %s", dir, strerror(errno));
    return TL_EIO;
  }
  int rc = write_at(dirfd, name, path, data, len, force, err, errlen);
  close(dirfd);
  return rc;
}

/* ======================================================================== */
/* The static site                                                           */

typedef struct {
  tl_store *store; /* for the statistics of each page */
  int dirfd;
  const char *dir;
  int force;
  size_t pages;
  char *err;
  size_t errlen;
} site;

/* Renders a comparison (or the index, when index is set) to name in the site. */
static int put_page(site *s, const char *name, const tl_comparison *c, const tl_page_opts *base,
                    const char *title, int index) {
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  if (!m)
    return errf(s->err, s->errlen, TL_ENOMEM, "could not be made (out of memory)", name);
  tl_page_opts o = *base;
  o.format = TL_FORMAT_HTML;
  o.site_links = 1;
  o.title = title;
  o.host_facts = strncmp(name, "host-", 5) == 0;
  tl_stats st;
  memset(&st, 0, sizeof st);
  int rc = tl_stats_compute(s->store, c, &st, s->err, s->errlen); /* the index's changes too */
  if (rc) {
    fclose(m);
    free(buf);
    tl_stats_free(&st);
    return rc;
  }
  o.stats = &st;
  rc = index ? tl__render_index(c, &o, m) : tl_render(c, &o, m);
  tl_stats_free(&st);
  if (fclose(m) != 0 && rc == TL_OK)
    rc = TL_EIO;
  if (rc) {
    free(buf);
    return errf(s->err, s->errlen, rc, "could not be made", name);
  }
  char shown[4200];
  snprintf(shown, sizeof shown, "%s/%s", s->dir, name);
  rc = write_at(s->dirfd, name, shown, buf, len, s->force, s->err, s->errlen);
  free(buf);
  if (!rc)
    s->pages++;
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
  return tl_compare(store, &o, out, s->err, s->errlen);
}

int tl_site_write(tl_store *store, const tl_compare_opts *opts, const tl_page_opts *page,
                  const char *dir, int force, size_t *pages, char *err, size_t errlen) {
  if (pages)
    *pages = 0;
  if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
    snprintf(err, errlen, "cannot create the folder %s: %s", dir, strerror(errno));
    return TL_EIO;
  }
  site s = {store, -1, dir, force, 0, err, errlen};
  s.dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (s.dirfd < 0) {
    snprintf(err, errlen, "cannot open the folder %s: %s", dir, strerror(errno));
    return TL_EIO;
  }
  /* With --by, compare.html is grouped by it; the label and host pages and
   * the index stay by label, so that their links hold. */
  tl_compare_opts by_label = *opts;
  tl_comparison all;
  int rc = TL_OK;
  if (opts->by) {
    by_label.by = NULL;
    by_label.labels = NULL;
    by_label.label_count = 0;
    by_label.baseline = NULL;
    rc = tl_compare(store, opts, &all, err, errlen);
    if (!rc)
      rc = put_page(&s, "compare.html", &all, page, NULL, 0);
    tl_comparison_free(&all);
    if (rc)
      goto fail_dir;
  }
  if ((rc = tl_compare(store, &by_label, &all, err, errlen)))
    goto fail_dir;
  if (!opts->by)
    rc = put_page(&s, "compare.html", &all, page, NULL, 0);
  opts = &by_label;

  for (size_t i = 0; i < all.label_count && !rc; i++) {
    tl_comparison one;
    const char *label = all.labels[i];
    char name[128], title[160];
    if (tl_label_check(label, NULL, 0) != TL_OK)
      continue; /* only validated labels become file names */
    rc = sub_compare(store, opts, &label, 1, NULL, &one, &s);
    if (rc)
      break;
    snprintf(name, sizeof name, "label-%s.html", label);
    snprintf(title, sizeof title, "Timer latency on %s", label);
    rc = put_page(&s, name, &one, page, title, 0);
    tl_comparison_free(&one);
  }

  for (size_t i = 0; i < all.sessions.count && !rc; i++) {
    const tl_session *x = &all.sessions.items[i];
    size_t k = 0;
    while (k < i && strcmp(all.sessions.items[k].host_fingerprint, x->host_fingerprint) != 0)
      k++;
    char name[128], title[512];
    if (k < i || tl__host_page(x->host_fingerprint, name, sizeof name) != 0)
      continue;
    /* The labels measured on this host, in the comparison's order. */
    const char *labels[256];
    size_t nl = 0;
    for (size_t l = 0; l < all.label_count && nl < 256; l++)
      for (size_t j = 0; j < all.sessions.count; j++)
        if (strcmp(all.sessions.items[j].host_fingerprint, x->host_fingerprint) == 0 &&
            strcmp(all.sessions.items[j].label, all.labels[l]) == 0) {
          labels[nl++] = all.labels[l];
          break;
        }
    tl_comparison one;
    rc = sub_compare(store, opts, labels, nl, x->host_fingerprint, &one, &s);
    if (rc)
      break;
    snprintf(title, sizeof title, "Timer latency on host %s", x->hostname);
    rc = put_page(&s, name, &one, page, title, 0);
    tl_comparison_free(&one);
  }
  if (!rc)
    rc = put_page(&s, "index.html", &all, page, "Timer latency results", 1);
  tl_comparison_free(&all);
fail_dir:
  close(s.dirfd);
  if (pages)
    *pages = s.pages;
  return rc;
}
