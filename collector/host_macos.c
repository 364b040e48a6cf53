/* host_macos.c: the macOS binding of host detection: sysctlbyname(3),
 * uname(3), gethostuuid(2) and pmset(1) (CPUID on Intel Macs is tl__host_cpuid in
 * host.c). What the answers mean is decided in host_detect.c
 * (tl__host_detect_macos), which tests drive with a made-up sysctl on Linux;
 * this file only connects it to the real calls. */
/* sysctlbyname and gethostuuid are Darwin extensions to POSIX: the build
 * defines _DARWIN_C_SOURCE for Apple targets (CMakeLists.txt, tl_warnings). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
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

/* pmset's output, from its fixed path; the answer is parsed in
 * host_detect.c. */
static int real_pmset(const tl__host_env *env, const char *arg, char *out, size_t len) {
  (void)env;
  char cmd[64];
  snprintf(cmd, sizeof cmd, "/usr/bin/pmset -g %s 2>/dev/null", arg);
  FILE *p = popen(cmd, "r");
  if (!p)
    return -1;
  size_t n = fread(out, 1, len - 1, p);
  out[n] = '\0';
  return pclose(p) == 0 && n > 0 ? 0 : -1;
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
  env->pmset = real_pmset;
  env->libc = "libSystem";
  return TL_OK;
}
