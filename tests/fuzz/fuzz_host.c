/* fuzz_host.c: host detection (tl__host_detect_env) on a made-up machine:
 * the /proc, /sys, /etc and /boot files it reads, its CPUID and its uname
 * come from the input, through the same injectable environment the tests
 * use, with no file system involved. The input is sections:
 *
 *   @@ proc/cpuinfo            a file (relative to the root) and its content,
 *   vendor_id : GenuineIntel   up to the newline before the next "@@ "
 *   @@ !sys/class/dmi/id/product_uuid      a file that cannot be read (EACCES)
 *   @@ uname                   sysname, nodename, release, version, machine
 *   @@ cpuid                   "LEAF SUBLEAF EAX EBX ECX EDX" lines, in hex
 *
 * A folder exists when some file lies under it. No uname section: uname
 * fails; no cpuid section: no CPUID. Promises: detection succeeds; on Linux
 * every fact docs/schema.md lists is there; keys, values and evidence are
 * valid UTF-8 without control characters (C0, DEL, C1); vm, cloud, container
 * and kernel.preempt take only their documented values; counts and sizes are
 * whole non-negative numbers or "unknown"; the same machine gives the same
 * facts and fingerprint. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "../host_keys.h"
#include "collect_internal.h"
#include "fuzz.h"

enum { MAX_FILES = 64, MAX_LEAVES = 32 };

typedef struct {
  char *path[MAX_FILES];
  const char *body[MAX_FILES];
  size_t len[MAX_FILES];
  int denied[MAX_FILES];
  size_t nfiles;
  int have_uname;
  struct utsname u;
  uint32_t leaf[MAX_LEAVES][6];
  size_t nleaves;
} machine;

static int m_open(const tl__host_env *env, const char *path) {
  const machine *m = env->ctx;
  size_t plen = strlen(path);
  int dir = 0;
  for (size_t i = 0; i < m->nfiles; i++) {
    if (strcmp(m->path[i], path) == 0) {
      if (m->denied[i]) {
        errno = EACCES;
        return -1;
      }
      /* The content through a pipe: a real descriptor, as openat gives. */
      int fds[2];
      if (pipe(fds))
        abort();
      fcntl(fds[1], F_SETFL, O_NONBLOCK); /* a huge file is cut, never blocks */
      size_t off = 0;
      while (off < m->len[i]) {
        ssize_t w = write(fds[1], m->body[i] + off, m->len[i] - off);
        if (w <= 0)
          break;
        off += (size_t)w;
      }
      close(fds[1]);
      return fds[0];
    }
    dir |= strncmp(m->path[i], path, plen) == 0 && m->path[i][plen] == '/';
  }
  if (dir) /* reading a folder fails with EISDIR, as it does for real */
    return open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  errno = ENOENT;
  return -1;
}

static int m_uname(const tl__host_env *env, struct utsname *u) {
  const machine *m = env->ctx;
  if (!m->have_uname)
    return -1;
  *u = m->u;
  return 0;
}

static int m_cpuid(const tl__host_env *env, uint32_t leaf, uint32_t sub, uint32_t r[4]) {
  const machine *m = env->ctx;
  for (size_t i = 0; i < m->nleaves; i++)
    if (m->leaf[i][0] == leaf && m->leaf[i][1] == sub) {
      memcpy(r, &m->leaf[i][2], 4 * sizeof r[0]);
      return 0;
    }
  return -1;
}

/* Copies the next line of [*p, end) into field (cut to its size). */
static void next_line(const char **p, const char *end, char *field, size_t size) {
  const char *nl = memchr(*p, '\n', (size_t)(end - *p));
  size_t n = (size_t)((nl ? nl : end) - *p);
  snprintf(field, size, "%.*s", (int)n, *p);
  *p = nl ? nl + 1 : end;
}

static void section(machine *m, const char *name, size_t nlen, const char *body, size_t blen) {
  const char *end = body + blen;
  if (nlen == 5 && memcmp(name, "uname", 5) == 0) {
    m->have_uname = 1;
    next_line(&body, end, m->u.sysname, sizeof m->u.sysname);
    next_line(&body, end, m->u.nodename, sizeof m->u.nodename);
    next_line(&body, end, m->u.release, sizeof m->u.release);
    next_line(&body, end, m->u.version, sizeof m->u.version);
    next_line(&body, end, m->u.machine, sizeof m->u.machine);
    return;
  }
  if (nlen == 5 && memcmp(name, "cpuid", 5) == 0) {
    while (body < end && m->nleaves < MAX_LEAVES) {
      char line[128];
      next_line(&body, end, line, sizeof line);
      char *s = line;
      uint32_t *l = m->leaf[m->nleaves];
      int k = 0;
      for (; k < 6; k++) {
        char *e;
        l[k] = (uint32_t)strtoul(s, &e, 16);
        if (e == s)
          break;
        s = e;
      }
      m->nleaves += k == 6;
    }
    return;
  }
  if (m->nfiles == MAX_FILES)
    return;
  int denied = nlen && name[0] == '!';
  char *path = malloc(nlen + 1);
  if (!path)
    abort();
  memcpy(path, name + denied, nlen - (size_t)denied);
  path[nlen - (size_t)denied] = '\0';
  m->path[m->nfiles] = path;
  m->body[m->nfiles] = body;
  m->len[m->nfiles] = blen;
  m->denied[m->nfiles] = denied;
  m->nfiles++;
}

static void parse_machine(machine *m, const char *in, size_t size) {
  const char *end = in + size, *p = in;
  if (size < 3 || memcmp(in, "@@ ", 3) != 0)
    return;
  while (p < end) {
    const char *name = p + 3;
    const char *nl = memchr(name, '\n', (size_t)(end - name));
    size_t nlen = (size_t)((nl ? nl : end) - name);
    const char *body = nl ? nl + 1 : end, *next = body;
    while (next < end && !(next + 4 <= end && memcmp(next, "\n@@ ", 4) == 0))
      next++;
    section(m, name, nlen, body, (size_t)(next - body));
    p = next < end ? next + 1 : end;
  }
}

/* Valid UTF-8 without C0, DEL or C1 characters. */
static int clean_text(const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    if (*p < 0x20 || *p == 0x7f)
      return 0;
    if (*p < 0x80) {
      p++;
      continue;
    }
    int n = *p >= 0xf0 && *p <= 0xf4 ? 3 : *p >= 0xe0 ? 2 : *p >= 0xc2 && *p < 0xe0 ? 1 : -1;
    if (n < 0 || *p > 0xf4)
      return 0;
    if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
      return 0;
    if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] > 0x9f) ||
        (p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] > 0x8f))
      return 0;
    for (int i = 1; i <= n; i++)
      if ((p[i] & 0xc0) != 0x80)
        return 0;
    p += n + 1;
  }
  return 1;
}

#ifdef __linux__ /* the checks of Linux's facts */
static int one_of(const char *v, const char *const *set) {
  for (; *set; set++)
    if (strcmp(v, *set) == 0)
      return 1;
  return 0;
}

static int count_or_unknown(const char *v) {
  if (strcmp(v, "unknown") == 0)
    return 1;
  size_t n = strspn(v, "0123456789");
  return n > 0 && n <= 20 && v[n] == '\0';
}
#endif

static void check(const tl_host *h) {
  size_t n;
  const tl_fact *f = tl_host_facts(h, &n);
  for (size_t i = 0; i < n; i++) {
    TL_FUZZ_ASSERT(clean_text(f[i].key) && clean_text(f[i].value) && clean_text(f[i].evidence));
    TL_FUZZ_ASSERT(f[i].value[0]); /* an empty file says "unknown" */
    for (size_t k = 0; k < i; k++)
      TL_FUZZ_ASSERT(strcmp(f[i].key, f[k].key) != 0);
  }
  const char *fp = tl_host_fingerprint(h);
  TL_FUZZ_ASSERT(strlen(fp) == 16 && strspn(fp, "0123456789abcdef") == 16);
#ifdef __linux__
  for (size_t k = 0; tl_test_linux_fact_keys[k]; k++)
    TL_FUZZ_ASSERT(tl_host_get(h, tl_test_linux_fact_keys[k]));
  static const char *const counts[] = {
      "cpu.sockets",      "cpu.cores", "cpu.logical",         "cpu.online", "mem.total_bytes",
      "swap.total_bytes", "kernel.hz", "procs.running.start", "uptime_s",   NULL};
  for (size_t k = 0; counts[k]; k++)
    TL_FUZZ_ASSERT(count_or_unknown(tl_host_get(h, counts[k])));
  static const char *const vms[] = {"none",      "kvm",   "qemu",   "oracle",  "vmware",
                                    "microsoft", "xen",   "amazon", "google",  "parallels",
                                    "bhyve",     "apple", "other",  "unknown", NULL};
  static const char *const clouds[] = {
      "aws", "gce",     "azure",    "digitalocean", "hetzner", "vultr",   "linode",
      "oci", "alibaba", "scaleway", "upcloud",      "none",    "unknown", NULL};
  static const char *const containers[] = {"none", "docker", "podman", "lxc",     "systemd-nspawn",
                                           "wsl",  "openvz", "other",  "unknown", NULL};
  static const char *const preempts[] = {"none", "voluntary", "full", "lazy",
                                         "rt",   "unknown",   NULL};
  TL_FUZZ_ASSERT(one_of(tl_host_get(h, "vm"), vms));
  TL_FUZZ_ASSERT(one_of(tl_host_get(h, "cloud"), clouds));
  TL_FUZZ_ASSERT(one_of(tl_host_get(h, "container"), containers));
  TL_FUZZ_ASSERT(one_of(tl_host_get(h, "kernel.preempt"), preempts));
#endif
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  machine *m = calloc(1, sizeof *m);
  char *in = malloc(size ? size : 1);
  if (!m || !in)
    abort();
  memcpy(in, data, size);
  parse_machine(m, in, size);
  tl__host_env env = {.root_fd = -1,
                      .open = m_open,
                      .cpuid = m->nleaves ? m_cpuid : NULL,
                      .uname = m_uname,
                      .libc = "glibc 2.36",
                      .now_s = 1796000000,
                      .ctx = m};
  tl_host *h = NULL, *h2 = NULL;
  TL_FUZZ_ASSERT(tl__host_detect_env(&env, &h) == TL_OK);
  check(h);
  /* The same machine, the same facts. */
  TL_FUZZ_ASSERT(tl__host_detect_env(&env, &h2) == TL_OK);
  size_t n, n2;
  const tl_fact *f = tl_host_facts(h, &n), *f2 = tl_host_facts(h2, &n2);
  TL_FUZZ_ASSERT(n == n2 && strcmp(tl_host_fingerprint(h), tl_host_fingerprint(h2)) == 0);
  for (size_t i = 0; i < n; i++)
    TL_FUZZ_ASSERT(strcmp(f[i].key, f2[i].key) == 0 && strcmp(f[i].value, f2[i].value) == 0 &&
                   strcmp(f[i].evidence, f2[i].evidence) == 0);
  tl_host_free(h);
  tl_host_free(h2);
  for (size_t i = 0; i < m->nfiles; i++)
    free(m->path[i]);
  free(m);
  free(in);
  return 0;
}
