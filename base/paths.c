/* paths.c: where tl's files are by default, the folders above a new
 * database, and fresh UUIDs: what tl_base.h promises about paths and names,
 * with no database in sight. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tl_base.h"

int tl_default_db_path(char *buf, size_t len) {
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

/* mkdir that also accepts an existing folder, but not an existing file:
 * that would only fail later, less clearly, when the database is opened. */
static int make_dir(const char *dir) {
  struct stat st;
  if (mkdir(dir, 0755) == 0)
    return 0;
  if (errno != EEXIST)
    return -1;
  if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
    errno = ENOTDIR;
    return -1;
  }
  return 0;
}

int tl_make_parent_dir(const char *path, char *why, size_t whylen) {
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
    if (make_dir(dir) != 0)
      goto fail;
    *p = '/';
  }
  if (make_dir(dir) != 0)
    goto fail;
  return TL_OK;
fail:
  snprintf(why, whylen, "cannot create folder %s: %s", dir, strerror(errno));
  return errno == EACCES || errno == EROFS ? TL_EPERM : TL_EIO;
}

/* splitmix64: spreads a seed over 64 bits (Steele, Lea and Flood 2014). */
static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

int tl_uuid_valid(const char *s) {
  if (strlen(s) != 36)
    return 0;
  for (size_t i = 0; i < 36; i++)
    if ((i == 8 || i == 13 || i == 18 || i == 23) ? s[i] != '-' : !isxdigit((unsigned char)s[i]))
      return 0;
  return 1;
}

int tl_uuid4(char out[37]) {
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
  if (got < sizeof b) {
    /* No /dev/urandom (a bare chroot): the clocks, the process and an
     * address, spread. Unique enough to keep sessions apart; not secret. */
    struct timespec rt, mono;
    clock_gettime(CLOCK_REALTIME, &rt);
    clock_gettime(CLOCK_MONOTONIC, &mono);
    uint64_t seed = (uint64_t)rt.tv_sec * 1000000000ULL + (uint64_t)rt.tv_nsec;
    seed ^= ((uint64_t)mono.tv_nsec << 20) ^ ((uint64_t)getpid() << 40) ^ (uint64_t)(uintptr_t)&got;
    for (size_t i = 0; i < sizeof b; i += 8) {
      uint64_t r = splitmix64(&seed);
      memcpy(b + i, &r, 8);
    }
  }
  b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
  b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
  snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
           b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
           b[15]);
  return TL_OK;
}
