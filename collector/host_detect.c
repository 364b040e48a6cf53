/* host_detect.c: the OS-independent decisions of host detection: reading
 * files under an injectable root, and the verdicts on virtualization, cloud
 * and container from the evidence the machine leaves (CPUID, DMI strings,
 * container markers). What macOS tells through sysctl is read in
 * host_macos.c. Nothing here calls the OS directly: every file is opened relative to env->root_fd
 * and CPUID and uname go through env, so tests drive all of it with
 * fixture trees and made-up answers (tests/fixtures/hosts/).
 *
 * The VM verdict follows the order systemd-detect-virt uses, for the same
 * reasons: DMI names that hide behind another hypervisor's CPUID (VirtualBox
 * and AWS Nitro show "KVMKVMKVM", Xen may show "Microsoft Hv") win first,
 * then the CPUID signature, then DMI, the device tree and /sys/hypervisor.
 * "Microsoft Hv" alone is only believed when nothing else names the
 * hypervisor, because QEMU/KVM with Hyper-V enlightenments shows it too. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collect_internal.h"

/* ======================================================================== */
/* Files under the root                                                      */

static int env_open(const tl__host_env *env, const char *path) {
  if (env->open)
    return env->open(env, path);
  return openat(env->root_fd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
}

int tl__host_read(const tl__host_env *env, const char *path, char **out, size_t *len) {
  *out = NULL;
  if (len)
    *len = 0;
  int fd = env_open(env, path);
  if (fd < 0)
    return -(errno ? errno : EIO);
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap + 1);
  int err = buf ? 0 : -ENOMEM;
  while (!err) {
    if (n == cap) {
      if (cap >= TL_HOST_FILE_MAX)
        break; /* enough: the rest of a huge file tells nothing more */
      char *p = realloc(buf, cap * 2 + 1);
      if (!p) {
        err = -ENOMEM;
        break;
      }
      buf = p;
      cap *= 2;
    }
    ssize_t r = read(fd, buf + n, cap - n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      err = -(errno ? errno : EIO);
    else if (r == 0)
      break;
    else
      n += (size_t)r;
  }
  close(fd);
  if (err) {
    free(buf);
    return err;
  }
  buf[n] = '\0';
  *out = buf;
  if (len)
    *len = n;
  return 0;
}

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

int tl__host_read_line(const tl__host_env *env, const char *path, char *buf, size_t len) {
  char *text;
  int err = tl__host_read(env, path, &text, NULL);
  if (err)
    return err;
  char *p = text;
  while (*p && is_blank(*p) && *p != '\n')
    p++;
  size_t n = strcspn(p, "\n");
  while (n && is_blank(p[n - 1]))
    n--;
  if (len) {
    if (n >= len)
      n = len - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
  }
  free(text);
  return 0;
}

int tl__host_exists(const tl__host_env *env, const char *path) {
  int fd = env_open(env, path);
  if (fd >= 0) {
    close(fd);
    return 1;
  }
  int e = errno;
  if (e == ENOENT || e == ENOTDIR)
    return 0;
  /* Refused to open it: it may still be visible. */
  struct stat st;
  if (fstatat(env->root_fd, path, &st, 0) == 0)
    return 1;
  return errno == ENOENT || errno == ENOTDIR ? 0 : -e;
}

const char *tl__host_errstr(int neg_errno) {
  switch (-neg_errno) {
  case ENOENT:
    return "not there";
  case EACCES:
  case EPERM:
    return "permission denied";
  default:
    return strerror(-neg_errno);
  }
}

int tl__host_keyed(const char *text, const char *key, char sep, char *out, size_t len) {
  size_t klen = strlen(key);
  for (const char *line = text; line && *line;) {
    const char *next = strchr(line, '\n');
    size_t n = next ? (size_t)(next - line) : strlen(line);
    if (n > klen && strncmp(line, key, klen) == 0) {
      const char *p = line + klen, *end = line + n;
      while (p < end && (*p == ' ' || *p == '\t'))
        p++;
      if (p < end && *p == sep) {
        p++;
        while (p < end && (*p == ' ' || *p == '\t'))
          p++;
        while (end > p && is_blank(end[-1]))
          end--;
        if (end - p >= 2 && (*p == '"' || *p == '\'') && end[-1] == *p) {
          p++;
          end--;
        }
        size_t m = (size_t)(end - p);
        if (m >= len)
          m = len - 1;
        memcpy(out, p, m);
        out[m] = '\0';
        return 0;
      }
    }
    line = next ? next + 1 : NULL;
  }
  return -ENOENT;
}

/* ======================================================================== */
/* Virtualization                                                            */

/* Signatures are 12 bytes, shorter ones padded with NULs. */
static const struct {
  const char sig[13];
  const char *vm;
} cpuid_sigs[] = {
    {"KVMKVMKVM", "kvm"},       {"Linux KVM Hv", "kvm"},    {"TCGTCGTCGTCG", "qemu"},
    {"VBoxVBoxVBox", "oracle"}, {"VMwareVMware", "vmware"}, {"Microsoft Hv", "microsoft"},
    {"XenVMMXenVMM", "xen"},    {"bhyve bhyve ", "bhyve"},  {" lrpepyh  vr", "parallels"},
    {"ACRNACRNACRN", "other"},  {"QNXQVMBSQG", "other"},    {"SRESRESRESRE", "other"},
    {"EVMMEVMMEVMM", "other"},  {"Jailhouse", "other"}};

/* DMI names as systemd-detect-virt knows them, matched as prefixes. */
static const struct {
  const char *prefix, *vm;
} dmi_names[] = {
    {"KVM", "kvm"},
    {"OpenStack", "kvm"},
    {"KubeVirt", "kvm"},
    {"Amazon EC2", "amazon"},
    {"QEMU", "qemu"},
    {"VMware", "vmware"},
    {"VMW", "vmware"},
    {"innotek GmbH", "oracle"},
    {"VirtualBox", "oracle"},
    {"Xen", "xen"},
    {"Bochs", "other"},
    {"Parallels", "parallels"},
    {"BHYVE", "bhyve"},
    {"Hyper-V", "microsoft"},
    {"Apple Virtualization", "apple"},
    {"Google Compute Engine", "google"},
};

static const char *const dmi_vm_fields[] = {"product_name", "sys_vendor", "board_vendor",
                                            "bios_vendor", "product_version"};

typedef struct {
  char vm[16];
  char evidence[640];
  int read_any; /* some DMI field could be read */
  int denied;   /* some DMI field was refused */
} verdict;

static void dmi_path(char *buf, size_t len, const char *field) {
  snprintf(buf, len, "sys/class/dmi/id/%s", field);
}

static void vm_from_dmi(const tl__host_env *env, verdict *v) {
  char path[96], value[256];
  char vendor[256] = "", product[256] = "";
  v->vm[0] = '\0';
  for (size_t i = 0; i < sizeof dmi_vm_fields / sizeof dmi_vm_fields[0]; i++) {
    dmi_path(path, sizeof path, dmi_vm_fields[i]);
    int err = tl__host_read_line(env, path, value, sizeof value);
    if (err) {
      v->denied |= err == -EACCES || err == -EPERM;
      continue;
    }
    v->read_any = 1;
    if (i == 0)
      snprintf(product, sizeof product, "%s", value);
    if (i == 1)
      snprintf(vendor, sizeof vendor, "%s", value);
    for (size_t k = 0; k < sizeof dmi_names / sizeof dmi_names[0] && !v->vm[0]; k++) {
      /* "Oracle Corporation" names VirtualBox only as the board vendor:
       * Oracle's own servers say it as the system vendor. */
      if (strncmp(value, dmi_names[k].prefix, strlen(dmi_names[k].prefix)) == 0) {
        snprintf(v->vm, sizeof v->vm, "%s", dmi_names[k].vm);
        snprintf(v->evidence, sizeof v->evidence, "/%s: \"%s\"", path, value);
      }
    }
    if (!v->vm[0] && i == 2 && strcmp(value, "Oracle Corporation") == 0) {
      snprintf(v->vm, sizeof v->vm, "oracle");
      snprintf(v->evidence, sizeof v->evidence, "/%s: \"%s\"", path, value);
    }
  }
  /* Hyper-V (and Azure) say "Microsoft Corporation" + "Virtual Machine";
   * the vendor alone is also a Surface laptop. */
  if (!v->vm[0] && strcmp(vendor, "Microsoft Corporation") == 0 &&
      strcmp(product, "Virtual Machine") == 0) {
    snprintf(v->vm, sizeof v->vm, "microsoft");
    snprintf(v->evidence, sizeof v->evidence,
             "/sys/class/dmi/id/sys_vendor, product_name: \"%s\", \"%s\"", vendor, product);
  }
}

/* The 12-byte hypervisor signature of a leaf (EBX, ECX, EDX). */
static void cpuid_sig(const uint32_t r[4], char out[13]) {
  memcpy(out, &r[1], 4);
  memcpy(out + 4, &r[2], 4);
  memcpy(out + 8, &r[3], 4);
  out[12] = '\0';
}

static const char *sig_vm(const char sig[13]) {
  for (size_t i = 0; i < sizeof cpuid_sigs / sizeof cpuid_sigs[0]; i++)
    if (memcmp(sig, cpuid_sigs[i].sig, 12) == 0)
      return cpuid_sigs[i].vm;
  return NULL;
}

/* Printable form of a signature for the evidence, without its NUL padding. */
static void sig_print(const char sig[13], char out[64]) {
  size_t n = 0;
  int len = 12;
  while (len > 0 && sig[len - 1] == '\0')
    len--;
  for (int i = 0; i < len; i++) {
    unsigned char c = (unsigned char)sig[i];
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
      out[n++] = (char)c;
    else
      n += (size_t)snprintf(out + n, 64 - n, "\\x%02x", c);
  }
  out[n] = '\0';
}

/* CPUID: 1 hypervisor found (vm set), 0 bit clear, -1 no CPUID. */
static int vm_from_cpuid(const tl__host_env *env, verdict *v) {
  uint32_t r[4];
  if (!env->cpuid || env->cpuid(env, 1, 0, r))
    return -1;
  if (!(r[2] & (1u << 31))) {
    snprintf(v->evidence, sizeof v->evidence, "cpuid 1: hypervisor bit clear");
    return 0;
  }
  char sig[13], shown[64];
  if (env->cpuid(env, 0x40000000, 0, r)) {
    snprintf(v->vm, sizeof v->vm, "other");
    snprintf(v->evidence, sizeof v->evidence, "cpuid 1: hypervisor bit set");
    return 1;
  }
  cpuid_sig(r, sig);
  const char *vm = sig_vm(sig);
  sig_print(sig, shown);
  if (vm && strcmp(vm, "microsoft") == 0) {
    /* QEMU/KVM with Hyper-V enlightenments keeps its own signature at
     * 0x40000100. */
    uint32_t k[4];
    char ksig[13];
    if (env->cpuid(env, 0x40000100, 0, k) == 0) {
      cpuid_sig(k, ksig);
      const char *kvm = sig_vm(ksig);
      if (kvm && strcmp(kvm, "kvm") == 0) {
        sig_print(ksig, shown);
        snprintf(v->vm, sizeof v->vm, "kvm");
        snprintf(v->evidence, sizeof v->evidence,
                 "cpuid 0x40000100: \"%s\" behind \"Microsoft Hv\"", shown);
        return 1;
      }
    }
  }
  snprintf(v->vm, sizeof v->vm, "%s", vm ? vm : "other");
  snprintf(v->evidence, sizeof v->evidence, "cpuid 0x40000000: \"%s\"", shown);
  return 1;
}

static int has_word(const char *text, size_t len, const char *word) {
  size_t w = strlen(word);
  for (size_t i = 0; i + w <= len; i++)
    if (memcmp(text + i, word, w) == 0)
      return 1;
  return 0;
}

/* ARM and other device-tree machines. */
static int vm_from_device_tree(const tl__host_env *env, verdict *v) {
  char *text;
  size_t len;
  if (tl__host_read(env, "proc/device-tree/hypervisor/compatible", &text, &len) == 0) {
    const char *vm = has_word(text, len, "linux,kvm") ? "kvm"
                     : has_word(text, len, "xen")     ? "xen"
                     : has_word(text, len, "vmware")  ? "vmware"
                                                      : "other";
    snprintf(v->vm, sizeof v->vm, "%s", vm);
    snprintf(v->evidence, sizeof v->evidence, "/proc/device-tree/hypervisor/compatible");
    free(text);
    return 1;
  }
  if (tl__host_read(env, "proc/device-tree/compatible", &text, &len) == 0) {
    int qemu = has_word(text, len, "linux,dummy-virt");
    free(text);
    if (qemu) {
      snprintf(v->vm, sizeof v->vm, "qemu");
      snprintf(v->evidence, sizeof v->evidence, "/proc/device-tree/compatible: linux,dummy-virt");
      return 1;
    }
    return 0;
  }
  return -1;
}

int tl__host_vm_from_cpuid(const tl__host_env *env, tl_host *h) {
  verdict v = {.vm = ""};
  if (vm_from_cpuid(env, &v) != 1)
    return TL_ENOTFOUND;
  return tl__host_set(h, "vm", v.vm, v.evidence);
}

static int is_vm(const char *vm) { return vm[0] && strcmp(vm, "none") != 0; }

int tl__host_detect_vm(const tl__host_env *env, tl_host *h) {
  verdict dmi = {.vm = ""}, cpu = {.vm = ""}, other = {.vm = ""};
  char line[256];

  vm_from_dmi(env, &dmi);
  /* These hide behind another hypervisor's CPUID signature. */
  static const char *const first[] = {"oracle", "xen", "amazon", "parallels", "google"};
  for (size_t i = 0; i < sizeof first / sizeof first[0]; i++)
    if (strcmp(dmi.vm, first[i]) == 0)
      return tl__host_set(h, "vm", dmi.vm, dmi.evidence);

  /* A Xen guest (not dom0, the host's own control domain). */
  if (tl__host_exists(env, "proc/xen") == 1) {
    int dom0 = tl__host_read_line(env, "proc/xen/capabilities", line, sizeof line) == 0 &&
               strstr(line, "control_d");
    if (!dom0)
      return tl__host_set(h, "vm", "xen", "/proc/xen");
  }

  int c = vm_from_cpuid(env, &cpu);
  int tentative = c == 1 && (strcmp(cpu.vm, "microsoft") == 0 || strcmp(cpu.vm, "other") == 0);
  if (c == 1 && !tentative)
    return tl__host_set(h, "vm", cpu.vm, cpu.evidence);
  if (is_vm(dmi.vm))
    return tl__host_set(h, "vm", dmi.vm, dmi.evidence);
  int dt = vm_from_device_tree(env, &other);
  if (dt == 1)
    return tl__host_set(h, "vm", other.vm, other.evidence);
  if (tl__host_read_line(env, "sys/hypervisor/type", line, sizeof line) == 0 &&
      strcmp(line, "xen") == 0)
    return tl__host_set(h, "vm", "xen", "/sys/hypervisor/type: \"xen\"");
  if (tentative)
    return tl__host_set(h, "vm", cpu.vm, cpu.evidence);
  /* No hypervisor found: "none" only if something could have shown one. */
  if (c == 0)
    return tl__host_set(h, "vm", "none", cpu.evidence);
  if (dmi.read_any || dt == 0)
    return tl__host_set(h, "vm", "none",
                        dmi.read_any ? "/sys/class/dmi/id: no hypervisor named"
                                     : "/proc/device-tree: no hypervisor node");
  return tl__host_set(h, "vm", "unknown",
                      dmi.denied ? "no CPUID; /sys/class/dmi/id: permission denied"
                                 : "no CPUID, DMI or device tree to tell");
}

/* ======================================================================== */
/* Cloud                                                                     */

/* What cloud-init's ds-identify looks at, field and match. */
enum { MATCH_PREFIX, MATCH_EXACT, MATCH_CONTAINS };
static const struct {
  const char *field, *text;
  int how;
  const char *cloud;
} cloud_marks[] = {
    {"sys_vendor", "Amazon EC2", MATCH_EXACT, "aws"},
    {"product_version", "amazon", MATCH_CONTAINS, "aws"},
    {"bios_version", "amazon", MATCH_CONTAINS, "aws"},
    {"product_uuid", "ec2", MATCH_PREFIX, "aws"},
    {"product_uuid", "EC2", MATCH_PREFIX, "aws"},
    {"product_name", "Google Compute Engine", MATCH_EXACT, "gce"},
    {"bios_vendor", "Google", MATCH_EXACT, "gce"},
    {"chassis_asset_tag", "7783-7084-3265-9085-8269-3286-77", MATCH_EXACT, "azure"},
    {"sys_vendor", "DigitalOcean", MATCH_EXACT, "digitalocean"},
    {"sys_vendor", "Hetzner", MATCH_EXACT, "hetzner"},
    {"sys_vendor", "Vultr", MATCH_EXACT, "vultr"},
    {"sys_vendor", "Linode", MATCH_EXACT, "linode"},
    {"sys_vendor", "Akamai", MATCH_PREFIX, "linode"},
    {"chassis_asset_tag", "OracleCloud.com", MATCH_EXACT, "oci"},
    {"product_name", "Alibaba Cloud ECS", MATCH_EXACT, "alibaba"},
    {"sys_vendor", "Alibaba Cloud", MATCH_EXACT, "alibaba"},
    {"sys_vendor", "Scaleway", MATCH_EXACT, "scaleway"},
    {"sys_vendor", "UpCloud", MATCH_EXACT, "upcloud"},
};

int tl__host_detect_cloud(const tl__host_env *env, tl_host *h) {
  char path[96], value[256], last[64] = "";
  int read_any = 0, denied = 0, missing = 1;
  for (size_t i = 0; i < sizeof cloud_marks / sizeof cloud_marks[0]; i++) {
    if (strcmp(last, cloud_marks[i].field) != 0 || i == 0) {
      snprintf(last, sizeof last, "%s", cloud_marks[i].field);
      dmi_path(path, sizeof path, last);
      int err = tl__host_read_line(env, path, value, sizeof value);
      if (err) {
        denied |= err == -EACCES || err == -EPERM;
        missing &= err == -ENOENT;
        value[0] = '\0'; /* so the next mark on this field does not match either */
        continue;
      }
      read_any = 1;
      missing = 0;
    }
    const char *t = cloud_marks[i].text;
    int hit = cloud_marks[i].how == MATCH_EXACT    ? strcmp(value, t) == 0
              : cloud_marks[i].how == MATCH_PREFIX ? strncmp(value, t, strlen(t)) == 0
                                                   : strstr(value, t) != NULL;
    if (value[0] && hit) {
      char ev[384];
      snprintf(ev, sizeof ev, "/%s: \"%s\"", path, value);
      return tl__host_set(h, "cloud", cloud_marks[i].cloud, ev);
    }
  }
  if (read_any)
    return tl__host_set(h, "cloud", "none", "/sys/class/dmi/id: no cloud named");
  if (missing)
    return tl__host_set(h, "cloud", "none", "no /sys/class/dmi/id");
  return tl__host_set(h, "cloud", "unknown",
                      denied ? "/sys/class/dmi/id: permission denied" : "/sys/class/dmi/id");
}

/* ======================================================================== */
/* Containers                                                                */

/* The names container managers use, in tl's words. */
static const char *container_name(const char *s) {
  static const char *const known[] = {"docker", "podman", "lxc", "wsl", "systemd-nspawn", "openvz"};
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (strcmp(s, known[i]) == 0)
      return known[i];
  if (strcmp(s, "lxc-libvirt") == 0)
    return "lxc";
  return "other";
}

static int set_container(tl_host *h, const char *name, const char *path, const char *value) {
  char ev[352];
  if (value)
    snprintf(ev, sizeof ev, "/%s: \"%s\"", path, value);
  else
    snprintf(ev, sizeof ev, "/%s", path);
  return tl__host_set(h, "container", name, ev);
}

/* container= in PID 1's environment: 1 found, 0 not there, -errno. */
static int container_from_environ(const tl__host_env *env, char *out, size_t len) {
  char *text;
  size_t n;
  int err = tl__host_read(env, "proc/1/environ", &text, &n);
  if (err)
    return err;
  int found = 0;
  for (size_t at = 0; at < n && !found;) {
    const char *var = text + at;
    size_t vl = strnlen(var, n - at);
    if (vl > 10 && strncmp(var, "container=", 10) == 0) {
      size_t m = vl - 10 < len - 1 ? vl - 10 : len - 1;
      memcpy(out, var + 10, m);
      out[m] = '\0';
      found = 1;
    }
    at += vl + 1;
  }
  free(text);
  return found;
}

static const char *container_from_cgroup(const char *text, char *line, size_t len) {
  static const struct {
    const char *mark, *name;
  } marks[] = {{"/docker/", "docker"}, {"/docker-", "docker"},
               {"/libpod-", "podman"}, {"/libpod_", "podman"},
               {"/lxc/", "lxc"},       {"/lxc.payload", "lxc"},
               {"/kubepods", "other"}, {"/machine.slice/systemd-nspawn", "systemd-nspawn"}};
  for (const char *l = text; l && *l;) {
    const char *next = strchr(l, '\n');
    size_t n = next ? (size_t)(next - l) : strlen(l);
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++) {
      size_t m = strlen(marks[i].mark);
      for (size_t k = 0; k + m <= n; k++) {
        if (memcmp(l + k, marks[i].mark, m) == 0) {
          snprintf(line, len, "%.*s", (int)n, l);
          return marks[i].name;
        }
      }
    }
    l = next ? next + 1 : NULL;
  }
  return NULL;
}

int tl__host_detect_container(const tl__host_env *env, tl_host *h) {
  char value[256], *text;

  if (tl__host_exists(env, "proc/vz") == 1 && tl__host_exists(env, "proc/bc") == 0)
    return set_container(h, "openvz", "proc/vz", NULL);

  /* WSL names itself in the kernel release. */
  if (tl__host_read_line(env, "proc/sys/kernel/osrelease", value, sizeof value) == 0 &&
      (strstr(value, "Microsoft") || strstr(value, "microsoft") || strstr(value, "WSL")))
    return set_container(h, "wsl", "proc/sys/kernel/osrelease", value);

  static const char *const manager_files[] = {"run/host/container-manager",
                                              "run/systemd/container"};
  for (size_t i = 0; i < 2; i++)
    if (tl__host_read_line(env, manager_files[i], value, sizeof value) == 0 && value[0])
      return set_container(h, container_name(value), manager_files[i], value);

  int environ_err = container_from_environ(env, value, sizeof value);
  if (environ_err == 1) {
    char shown[300];
    snprintf(shown, sizeof shown, "container=%s", value);
    return set_container(h, container_name(value), "proc/1/environ", shown);
  }
  if (tl__host_exists(env, "run/.containerenv") == 1)
    return set_container(h, "podman", "run/.containerenv", NULL);
  if (tl__host_exists(env, ".dockerenv") == 1)
    return set_container(h, "docker", ".dockerenv", NULL);
  if (tl__host_read(env, "proc/self/cgroup", &text, NULL) == 0) {
    char line[256];
    const char *name = container_from_cgroup(text, line, sizeof line);
    free(text);
    if (name)
      return set_container(h, name, "proc/self/cgroup", line);
  }
  if (environ_err == 0)
    return tl__host_set(h, "container", "none", "/proc/1/environ: no container=");
  /* systemd as PID 1 writes /run/systemd/container in a container. */
  if (tl__host_exists(env, "run/systemd/system") == 1)
    return tl__host_set(h, "container", "none",
                        "/run/systemd/system without /run/systemd/container");
  char ev[128];
  snprintf(ev, sizeof ev, "/proc/1/environ: %s", tl__host_errstr(environ_err));
  return tl__host_set(h, "container", "unknown", ev);
}

/* ======================================================================== */
/* CPUID                                                                     */

int tl__host_detect_cpuid(const tl__host_env *env, tl_host *h) {
  uint32_t r[4];
  if (!env->cpuid || env->cpuid(env, 0x80000000, 0, r) || r[0] < 0x80000004)
    return TL_OK;
  char brand[49];
  for (uint32_t i = 0; i < 3; i++) {
    if (env->cpuid(env, 0x80000002 + i, 0, r))
      return TL_OK;
    memcpy(brand + 16 * i, r, 16);
  }
  brand[48] = '\0';
  return tl__host_set(h, "cpu.brand", brand, "cpuid 0x80000002..4");
}
