/* host_linux.c: what a Linux host tells about itself, from uname(2),
 * sysconf(3), /etc and /proc. */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "collect_internal.h"

/* The value of "key : value" lines such as those of /proc/cpuinfo. */
static int read_keyed(const char *path, const char *key, char sep, char *out, size_t len) {
  FILE *f = fopen(path, "r");
  if (!f)
    return -1;
  char line[1024];
  size_t klen = strlen(key);
  int found = -1;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, key, klen) != 0)
      continue;
    char *p = line + klen;
    while (*p == ' ' || *p == '\t')
      p++;
    if (*p != sep)
      continue;
    p++;
    while (*p == ' ' || *p == '\t' || *p == '"')
      p++;
    p[strcspn(p, "\"\n")] = '\0';
    snprintf(out, len, "%s", p);
    found = 0;
    break;
  }
  fclose(f);
  return found;
}

int tl__host_detect_os(tl_host *h) {
  struct utsname u;
  char buf[512];
  int err = TL_OK;
  if (uname(&u) == 0) {
    err = tl__host_set(h, "hostname", u.nodename, "uname");
    if (!err)
      err = tl__host_set(h, "kernel.release", u.release, "uname");
    if (!err)
      err = tl__host_set(h, "kernel.version", u.version, "uname");
    if (!err)
      err = tl__host_set(h, "arch", u.machine, "uname");
  }
  if (!err)
    err = tl__host_set(
        h, "os.name",
        read_keyed("/etc/os-release", "PRETTY_NAME", '=', buf, sizeof buf) == 0 ? buf : "Linux",
        "/etc/os-release");
  if (!err && read_keyed("/proc/cpuinfo", "model name", ':', buf, sizeof buf) == 0)
    err = tl__host_set(h, "cpu.model", buf, "/proc/cpuinfo");
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (!err && cpus > 0) {
    snprintf(buf, sizeof buf, "%ld", cpus);
    err = tl__host_set(h, "cpu.logical", buf, "sysconf");
  }
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (!err && pages > 0 && page > 0) {
    snprintf(buf, sizeof buf, "%lld", (long long)pages * page);
    err = tl__host_set(h, "mem.total_bytes", buf, "sysconf");
  }
  if (!err) {
    FILE *f = fopen("/etc/machine-id", "r");
    if (f) {
      if (fgets(buf, sizeof buf, f)) {
        buf[strcspn(buf, "\n")] = '\0';
        err = tl__host_set(h, "machine.id", buf, "/etc/machine-id");
      }
      fclose(f);
    }
  }
  return err;
}
