/* exe_linux.c: the path of the running executable on Linux (and other
 * systems with /proc/self/exe), for tl_data_path(). */
#include <unistd.h>

#include "base_internal.h"

int tl__exe_path(char *buf, size_t len) {
  if (len < 2)
    return TL_EINVAL;
  ssize_t n = readlink("/proc/self/exe", buf, len - 1);
  if (n < 0)
    return TL_ESYS;
  if ((size_t)n >= len - 1)
    return TL_EINVAL; /* possibly truncated */
  buf[n] = '\0';
  return TL_OK;
}
