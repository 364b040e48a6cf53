/* host_env.c: what every OS's detection environment (tl__host_env) starts
 * from: the root folder "/", the CPUID instruction on x86 and uname(3). The
 * OS files (tl__host_env_default) add their own calls on top. */
#include <fcntl.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "collect_internal.h"

int tl__host_cpuid(const tl__host_env *env, uint32_t leaf, uint32_t sub, uint32_t r[4]) {
  (void)env;
#if defined(__x86_64__) || defined(__i386__)
  unsigned int max = __get_cpuid_max(leaf & 0x80000000u, NULL);
  /* Hypervisor leaves lie outside the ranges __get_cpuid_max reports. */
  if ((leaf & 0xf0000000u) != 0x40000000u && (max == 0 || leaf > max))
    return -1;
  unsigned int a, b, c, d;
  __cpuid_count(leaf, sub, a, b, c, d);
  r[0] = a;
  r[1] = b;
  r[2] = c;
  r[3] = d;
  return 0;
#else
  (void)leaf;
  (void)sub;
  (void)r;
  return -1; /* no CPUID on ARM */
#endif
}

static int posix_uname(const tl__host_env *env, struct utsname *u) {
  (void)env;
  return uname(u);
}

int tl__host_env_open(tl__host_env *env) {
  memset(env, 0, sizeof *env);
  env->root_fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (env->root_fd < 0)
    return TL_ESYS;
  env->cpuid = tl__host_cpuid;
  env->uname = posix_uname;
  return TL_OK;
}

void tl__host_env_close(tl__host_env *env) {
  if (env->root_fd >= 0)
    close(env->root_fd);
  env->root_fd = -1;
}
