/* exe_macos.c: the path of the running executable on macOS, for
 * tl_data_path(). _NSGetExecutablePath may return a path through symlinks
 * or with "..", so it is resolved with realpath(). */
#include <limits.h>
#include <mach-o/dyld.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "base_internal.h"

int tl__exe_path(char *buf, size_t len) {
  char raw[PATH_MAX], real[PATH_MAX];
  uint32_t size = sizeof raw;
  if (_NSGetExecutablePath(raw, &size) != 0)
    return TL_EINVAL;
  if (!realpath(raw, real))
    return TL_ESYS;
  int n = snprintf(buf, len, "%s", real);
  return n < 0 || (size_t)n >= len ? TL_EINVAL : TL_OK;
}
