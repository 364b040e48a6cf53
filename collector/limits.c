/* limits.c: the cgroup this process runs in and the limits it sets, as host
 * facts. A container (docker --cpus 0.2), a Kubernetes limit or a systemd
 * slice shows the host's CPUs and memory in /proc, yet the process may get a
 * fifth of one CPU: without these facts such a session groups with
 * unlimited hosts of the same size.
 *
 * The order of the search: /proc/self/cgroup names the cgroup of each
 * controller (v1: "4:cpu,cpuacct:/docker/ab12"; v2: the one "0::/path"
 * line); /proc/self/mountinfo says where each hierarchy is mounted and which
 * part of it the mount shows (inside a container the mount's root is the
 * container's own cgroup). The cpu controller's hierarchy decides the
 * version: on a hybrid host it is v1. A limit set on a parent cgroup limits
 * its children too, so the smallest on the way up to the mount is the
 * limit. All reads go through tl__host_env, so tests use fixture trees. */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "causes_internal.h"

/* ======================================================================== */
/* Finding the cgroup                                                        */

/* Does the comma-separated list hold word? */
static int list_has(const char *list, size_t len, const char *word) {
  size_t wl = strlen(word);
  const char *p = list, *end = list + len;
  while (p < end) {
    const char *comma = memchr(p, ',', (size_t)(end - p));
    size_t n = comma ? (size_t)(comma - p) : (size_t)(end - p);
    if (n == wl && memcmp(p, word, n) == 0)
      return 1;
    p += n + 1;
  }
  return 0;
}

/* The path of controller (NULL: the v2 line) in proc/self/cgroup text. */
static int cgroup_path(const char *text, const char *controller, char *out, size_t len) {
  for (const char *line = text; line && *line;) {
    const char *nl = strchr(line, '\n');
    size_t n = nl ? (size_t)(nl - line) : strlen(line);
    const char *c1 = memchr(line, ':', n);
    const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(line + n - c1 - 1)) : NULL;
    if (c2) {
      size_t cl = (size_t)(c2 - c1 - 1);
      int match = controller ? list_has(c1 + 1, cl, controller)
                             : (cl == 0 && c1 - line == 1 && line[0] == '0');
      size_t pl = (size_t)(line + n - c2 - 1);
      if (match && pl < len) {
        memcpy(out, c2 + 1, pl);
        out[pl] = '\0';
        return 1;
      }
    }
    line = nl ? nl + 1 : NULL;
  }
  return 0;
}

/* The mount of a v1 controller (or, controller NULL, of cgroup2): its root
 * within the hierarchy and its mount point, from mountinfo text. */
static int cgroup_mount(const char *text, const char *controller, char *root, char *point,
                        size_t len) {
  for (const char *line = text; line && *line;) {
    const char *nl = strchr(line, '\n');
    size_t n = nl ? (size_t)(nl - line) : strlen(line);
    char buf[2048];
    if (n < sizeof buf) {
      memcpy(buf, line, n);
      buf[n] = '\0';
      char r[1024], m[1024], fstype[64], super[1024];
      const char *dash = strstr(buf, " - ");
      if (dash && sscanf(buf, "%*s %*s %*s %1023s %1023s", r, m) == 2 &&
          sscanf(dash + 3, "%63s %*s %1023s", fstype, super) == 2) {
        int match =
            controller ? strcmp(fstype, "cgroup") == 0 && list_has(super, strlen(super), controller)
                       : strcmp(fstype, "cgroup2") == 0;
        if (match && strlen(r) < len && strlen(m) < len) {
          snprintf(root, len, "%s", r);
          snprintf(point, len, "%s", m);
          return 1;
        }
      }
    }
    line = nl ? nl + 1 : NULL;
  }
  return 0;
}

/* The folder of a cgroup path under its mount, relative to the root (no
 * leading '/'): the mount shows the hierarchy from mount_root down. */
static void cgroup_dir(const char *point, const char *mount_root, const char *path, char *out,
                       size_t len) {
  size_t rl = strlen(mount_root);
  const char *rest = path;
  if (strcmp(mount_root, "/") != 0 && strncmp(path, mount_root, rl) == 0 &&
      (path[rl] == '/' || path[rl] == '\0'))
    rest = path + rl;
  while (*point == '/')
    point++;
  while (*rest == '/')
    rest++;
  if ((size_t)snprintf(out, len, "%s%s%s", point, *rest ? "/" : "", rest) >= len)
    out[0] = '\0'; /* too long to be a real cgroup's folder: none */
  size_t n = strlen(out);
  while (n && out[n - 1] == '/') /* "/" itself under a root mount */
    out[--n] = '\0';
}

/* Fills dir (and mount) for one controller; 1 when found. */
static int find_controller(const char *cgroup, const char *mounts, const char *controller,
                           char *dir, char *mount, size_t len) {
  char path[TL_CGROUP_PATH_MAX], root[TL_CGROUP_PATH_MAX], point[TL_CGROUP_PATH_MAX];
  if (!cgroup_path(cgroup, controller, path, sizeof path) ||
      !cgroup_mount(mounts, controller, root, point, sizeof root))
    return 0;
  cgroup_dir(point, root, path, dir, len);
  if (mount) {
    const char *p = point;
    while (*p == '/')
      p++;
    snprintf(mount, len, "%s", p);
  }
  return 1;
}

int tl__cgroup_find(const tl__host_env *env, tl__cgroup *cg) {
  memset(cg, 0, sizeof *cg);
  char *cgroup = NULL, *mounts = NULL;
  if (tl__host_read(env, "proc/self/cgroup", &cgroup, NULL) != 0 ||
      tl__host_read(env, "proc/self/mountinfo", &mounts, NULL) != 0) {
    free(cgroup);
    free(mounts);
    return TL_ENOTFOUND;
  }
  size_t L = TL_CGROUP_PATH_MAX;
  if (find_controller(cgroup, mounts, "cpu", cg->cpu_dir, cg->cpu_mount, L)) {
    cg->version = 1;
    if (!find_controller(cgroup, mounts, "cpuset", cg->cpuset_dir, NULL, L))
      cg->cpuset_dir[0] = '\0';
    if (!find_controller(cgroup, mounts, "memory", cg->memory_dir, cg->memory_mount, L))
      cg->memory_dir[0] = '\0';
  } else if (find_controller(cgroup, mounts, NULL, cg->cpu_dir, cg->cpu_mount, L)) {
    cg->version = 2;
    snprintf(cg->cpuset_dir, L, "%s", cg->cpu_dir);
    snprintf(cg->memory_dir, L, "%s", cg->cpu_dir);
    snprintf(cg->memory_mount, L, "%s", cg->cpu_mount);
  }
  free(cgroup);
  free(mounts);
  return cg->version ? TL_OK : TL_ENOTFOUND;
}

/* ======================================================================== */
/* Parsers                                                                   */

/* A whole non-negative decimal at *p, advancing it; -1 when there is none. */
static int64_t read_count(const char **p) {
  while (**p == ' ' || **p == '\t')
    (*p)++;
  if (!isdigit((unsigned char)**p))
    return -1;
  int64_t v = 0;
  while (isdigit((unsigned char)**p)) {
    if (v > (INT64_MAX - 9) / 10)
      return -1;
    v = v * 10 + (*(*p)++ - '0');
  }
  return v;
}

int tl__parse_cpu_max(const char *text, int64_t *quota_us, int64_t *period_us) {
  const char *p = text;
  while (*p == ' ')
    p++;
  int64_t q;
  if (strncmp(p, "max", 3) == 0) {
    q = -1;
    p += 3;
  } else if ((q = read_count(&p)) < 0) {
    return TL_EINVAL;
  }
  int64_t period = read_count(&p);
  if (period <= 0)
    return TL_EINVAL;
  *quota_us = q;
  *period_us = period;
  return TL_OK;
}

long tl__cpu_list_count(const char *s) {
  long n = 0;
  while (*s && *s != '\n') {
    char *end;
    long a = strtol(s, &end, 10), b = a;
    if (end == s || a < 0 || a > (1L << 20))
      return -1;
    s = end;
    if (*s == '-') {
      b = strtol(s + 1, &end, 10);
      if (end == s + 1 || b < a || b > (1L << 20))
        return -1;
      s = end;
    }
    n += b - a + 1;
    if (*s == ',')
      s++;
    else if (*s && *s != '\n')
      return -1;
  }
  return n;
}

/* ======================================================================== */
/* The limits                                                                */

/* The parent of a relative folder, in place; 0 when dir is the mount. */
static int go_up(char *dir, const char *mount) {
  if (strcmp(dir, mount) == 0)
    return 0;
  char *slash = strrchr(dir, '/');
  if (!slash)
    return 0;
  *slash = '\0';
  return strlen(dir) >= strlen(mount);
}

/* The quota of one folder as CPUs x 1000 (milli-CPUs), -1 for none. */
static int64_t quota_milli(const tl__host_env *env, const tl__cgroup *cg, const char *dir) {
  char path[TL_CGROUP_PATH_MAX + 32], line[128], line2[128];
  int64_t q = -1, period = 0;
  if (cg->version == 2) {
    snprintf(path, sizeof path, "%s/cpu.max", dir);
    if (tl__host_read_line(env, path, line, sizeof line) != 0 ||
        tl__parse_cpu_max(line, &q, &period) != TL_OK)
      return -1;
  } else {
    snprintf(path, sizeof path, "%s/cpu.cfs_quota_us", dir);
    if (tl__host_read_line(env, path, line, sizeof line) != 0)
      return -1;
    snprintf(path, sizeof path, "%s/cpu.cfs_period_us", dir);
    if (tl__host_read_line(env, path, line2, sizeof line2) != 0)
      return -1;
    q = strtoll(line, NULL, 10);
    period = strtoll(line2, NULL, 10);
  }
  if (q <= 0 || period <= 0)
    return -1;
  return (q * 1000 + period / 2) / period;
}

/* The memory limit of one folder in bytes, -1 for none. v1 writes "no
 * limit" as the largest page-aligned 64-bit value. */
static int64_t memory_limit(const tl__host_env *env, const tl__cgroup *cg, const char *dir) {
  char path[TL_CGROUP_PATH_MAX + 32], line[128];
  snprintf(path, sizeof path, "%s/%s", dir,
           cg->version == 2 ? "memory.max" : "memory.limit_in_bytes");
  if (tl__host_read_line(env, path, line, sizeof line) != 0 || !isdigit((unsigned char)line[0]))
    return -1;
  const char *p = line;
  int64_t v = read_count(&p);
  return v > 0 && v < (INT64_C(1) << 60) ? v : -1;
}

/* The smallest of f over dir and its parents up to mount; -1 for none.
 * *where gets the folder that set it. */
static int64_t smallest_up(const tl__host_env *env, const tl__cgroup *cg, const char *start,
                           const char *mount,
                           int64_t (*f)(const tl__host_env *, const tl__cgroup *, const char *),
                           char *where, size_t wlen) {
  char dir[TL_CGROUP_PATH_MAX];
  snprintf(dir, sizeof dir, "%s", start);
  int64_t best = -1;
  for (int depth = 0; depth < 64; depth++) {
    int64_t v = f(env, cg, dir);
    if (v > 0 && (best < 0 || v < best)) {
      best = v;
      snprintf(where, wlen, "/%s", dir);
    }
    if (!go_up(dir, mount))
      break;
  }
  return best;
}

static int detect_cpu_limits(const tl__host_env *env, const tl__cgroup *cg, tl_host *h) {
  char where[TL_CGROUP_PATH_MAX + 1] = "", ev[TL_CGROUP_PATH_MAX + 64];
  int64_t milli =
      smallest_up(env, cg, cg->cpu_dir, cg->cpu_mount, quota_milli, where, sizeof where);
  snprintf(ev, sizeof ev, "%s/%s", milli > 0 ? where : "",
           cg->version == 2 ? "cpu.max" : "cpu.cfs_quota_us");
  if (milli <= 0)
    snprintf(ev, sizeof ev, "/%s: no quota up to the mount", cg->cpu_dir);
  int err = milli > 0 ? TL_OK : tl__host_set(h, "cgroup.cpu_quota", "none", ev);
  if (!err && milli > 0) { /* "0.200" reads better as "0.2" */
    char v[32];
    int n = snprintf(v, sizeof v, "%" PRId64 ".%03" PRId64, milli / 1000, milli % 1000);
    while (n > 0 && v[n - 1] == '0')
      v[--n] = '\0';
    if (n > 0 && v[n - 1] == '.')
      v[--n] = '\0';
    err = tl__host_set(h, "cgroup.cpu_quota", v, ev);
  }
  char set[4096] = "", path[TL_CGROUP_PATH_MAX + 40] = "";
  long count = -1;
  static const char *const files[] = {"cpuset.cpus.effective", "cpuset.effective_cpus",
                                      "cpuset.cpus"};
  for (size_t i = 0; i < 3 && count < 0 && cg->cpuset_dir[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", cg->cpuset_dir, files[i]);
    if (tl__host_read_line(env, path, set, sizeof set) == 0 && set[0])
      count = tl__cpu_list_count(set);
  }
  snprintf(ev, sizeof ev, "/%s", path);
  if (!err)
    err = count > 0 ? tl__host_set(h, "cgroup.cpuset", set, ev)
                    : tl__host_set(h, "cgroup.cpuset", "none", "no cpuset controller");
  int64_t quota_cpus = milli > 0 ? (milli + 999) / 1000 : -1;
  int64_t cpus = count > 0 ? count : -1;
  if (quota_cpus > 0 && (cpus < 0 || quota_cpus < cpus))
    cpus = quota_cpus;
  if (!err)
    err = cpus > 0 ? tl__host_setf(h, "cgroup.cpus", "the cpuset's CPUs and the quota rounded up",
                                   "%" PRId64, cpus)
                   : tl__host_set(h, "cgroup.cpus", "none", "no quota and no cpuset");
  return err;
}

static int detect_memory_limit(const tl__host_env *env, const tl__cgroup *cg, tl_host *h) {
  if (!cg->memory_dir[0])
    return tl__host_set(h, "cgroup.memory_limit_bytes", "none", "no memory controller");
  char where[TL_CGROUP_PATH_MAX + 1] = "", ev[TL_CGROUP_PATH_MAX + 64];
  int64_t bytes =
      smallest_up(env, cg, cg->memory_dir, cg->memory_mount, memory_limit, where, sizeof where);
  const char *file = cg->version == 2 ? "memory.max" : "memory.limit_in_bytes";
  if (bytes > 0) {
    snprintf(ev, sizeof ev, "%s/%s", where, file);
    return tl__host_setf(h, "cgroup.memory_limit_bytes", ev, "%" PRId64, bytes);
  }
  snprintf(ev, sizeof ev, "/%s/%s: no limit up to the mount", cg->memory_dir, file);
  return tl__host_set(h, "cgroup.memory_limit_bytes", "none", ev);
}

/* Has the hypervisor taken time from this guest since boot? */
static int detect_steal(const tl__host_env *env, tl_host *h) {
  char *text = NULL;
  tl__counters c;
  if (tl__host_read(env, "proc/stat", &text, NULL) != 0 ||
      tl__parse_proc_stat(text, 100, &c) != TL_OK || c.steal_ns < 0) {
    free(text);
    return tl__host_set(h, "cpu.steal_seen", "unknown", "/proc/stat");
  }
  free(text);
  return tl__host_setf(h, "cpu.steal_seen", "/proc/stat: steal ticks since boot", "%s",
                       c.steal_ns > 0 ? "yes" : "no");
}

int tl__host_detect_limits(const tl__host_env *env, tl_host *h) {
  tl__cgroup cg;
  int err;
  if (tl__cgroup_find(env, &cg) != TL_OK) {
    err = tl__host_set(h, "cgroup.version", "unknown", "/proc/self/cgroup, /proc/self/mountinfo");
    static const char *const keys[] = {"cgroup.cpu_quota", "cgroup.cpuset", "cgroup.cpus",
                                       "cgroup.memory_limit_bytes"};
    for (size_t i = 0; i < 4 && !err; i++)
      err = tl__host_set(h, keys[i], "unknown", "no cgroup found");
  } else {
    char ev[TL_CGROUP_PATH_MAX + 64];
    snprintf(ev, sizeof ev, "/proc/self/cgroup: the cpu controller's cgroup /%s", cg.cpu_dir);
    err = tl__host_setf(h, "cgroup.version", ev, "%d", cg.version);
    if (!err)
      err = detect_cpu_limits(env, &cg, h);
    if (!err)
      err = detect_memory_limit(env, &cg, h);
  }
  if (!err)
    err = detect_steal(env, h);
  return err;
}
