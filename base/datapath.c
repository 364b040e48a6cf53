/* datapath.c: finds the files tl ships (probe scripts and the like) next to
 * the program that runs, so an installed tl reads <prefix>/share/tl/... and
 * never the tree it was built from. The only OS-specific step, the path of
 * the running executable, is tl__exe_path() in exe_linux.c / exe_macos.c. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base_internal.h"

/* Puts the resolved path of dir + "/" + rel into buf when that file exists
 * (resolved, so that messages show /usr/share/tl/x rather than
 * /usr/bin/../share/tl/x). */
static int try_path(const char *dir, const char *rel, char *buf, size_t len) {
  char joined[PATH_MAX], real[PATH_MAX];
  if (snprintf(joined, sizeof joined, "%s/%s", dir, rel) >= (int)sizeof joined)
    return TL_EINVAL;
  if (!realpath(joined, real))
    return errno == ENOENT || errno == ENOTDIR ? TL_ENOTFOUND : TL_ESYS;
  int n = snprintf(buf, len, "%s", real);
  return n < 0 || (size_t)n >= len ? TL_EINVAL : TL_OK;
}

int tl_data_path(const char *relative, char *buf, size_t len) {
  if (!relative || !*relative || relative[0] == '/' || strstr(relative, "..") || !buf || !len)
    return TL_EINVAL;
  char exe[PATH_MAX];
  int err = tl__exe_path(exe, sizeof exe);
  if (err)
    return err;
  char *slash = strrchr(exe, '/');
  if (!slash)
    return TL_ENOTFOUND;
  *slash = '\0';
  /* Installed: <prefix>/bin/../share/tl/<relative> (TL_DATA_FROM_BIN). */
  char dir[PATH_MAX];
  if (snprintf(dir, sizeof dir, "%s/%s", exe, TL_DATA_FROM_BIN) >= (int)sizeof dir)
    return TL_EINVAL;
  err = try_path(dir, relative, buf, len);
  if (err != TL_ENOTFOUND)
    return err;
  /* A program still in its build tree reads the source tree, which has the
   * same layout as share/tl. Only there: an installed tl must not pick up
   * files from wherever it happened to be built. */
  size_t blen = strlen(TL_BUILD_DIR);
  if (strncmp(exe, TL_BUILD_DIR, blen) == 0 && (exe[blen] == '/' || exe[blen] == '\0'))
    return try_path(TL_SOURCE_DIR, relative, buf, len);
  return TL_ENOTFOUND;
}
