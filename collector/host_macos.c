/* host_macos.c: the macOS binding of host detection: sysctlbyname(3),
 * uname(3) and gethostuuid(2) (CPUID on Intel Macs is tl__host_cpuid in
 * host.c). What the answers mean is decided in host_detect.c
 * (tl__host_detect_macos), which tests drive with a made-up sysctl on Linux;
 * this file only connects it to the real calls. */
/* sysctlbyname and gethostuuid are Darwin extensions to POSIX. */
#define _DARWIN_C_SOURCE 1

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/sysctl.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "collect_internal.h"

static int real_sysctl(const tl__host_env *env, const char *name, void *buf, size_t *len) {
  (void)env;
  return sysctlbyname(name, buf, len, NULL, 0);
}

static int real_uname(const tl__host_env *env, struct utsname *u) {
  (void)env;
  return uname(u);
}

static int real_host_uuid(const tl__host_env *env, char out[37]) {
  (void)env;
  uuid_t id;
  struct timespec wait = {1, 0};
  if (gethostuuid(id, &wait) != 0)
    return -1;
  uuid_unparse_upper(id, out);
  return 0;
}

int tl__host_detect_os(const tl__host_env *env, tl_host *h) {
  return tl__host_detect_macos(env, h);
}

int tl__host_detect_load(const tl__host_env *env, tl_host *h, const char *when) {
  return tl__host_detect_macos_load(env, h, when);
}

int tl__host_env_default(tl__host_env *env) {
  memset(env, 0, sizeof *env);
  env->root_fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (env->root_fd < 0)
    return TL_ESYS;
  env->cpuid = tl__host_cpuid;
  env->uname = real_uname;
  env->sysctl = real_sysctl;
  env->host_uuid = real_host_uuid;
  env->libc = "libSystem";
  return TL_OK;
}
