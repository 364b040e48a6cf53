/* host_macos.c: what a macOS host tells about itself, through sysctl(3)
 * names, uname and pmset(1)'s answers: OS version, CPU (performance levels,
 * Rosetta), memory and swap, timer coalescing, power source and settings, the
 * VM verdict (kern.hv_vmm_present) and the load. Every answer comes through
 * env (tl__host_env), so this is plain C that tests drive on any OS with
 * made-up answers (tests/fixtures/hosts/macos-*); only the macOS build puts it
 * in the library, where os_macos.c connects env to the real calls and makes it
 * tl__host_detect_os. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collect_internal.h"

/* Shapes of the sysctl values read below, as the macOS headers define them
 * for 64-bit programs (struct loadavg, struct timeval, struct xsw_usage,
 * struct clockinfo). */
typedef struct {
  uint32_t ldavg[3];
  long fscale;
} mac_loadavg;
typedef struct {
  int64_t tv_sec;
  int32_t tv_usec;
} mac_timeval;
typedef struct {
  uint64_t total, avail, used;
  uint32_t pagesize;
  int32_t encrypted;
} mac_swapusage;

enum { MAC_CPU_TYPE_X86 = 7, MAC_CPU_ARCH_ABI64 = 0x01000000, MAC_CPU_TYPE_ARM = 12 };

static int mac_str(const tl__host_env *env, const char *name, char *out, size_t len) {
  size_t n = len - 1;
  if (!env->sysctl || env->sysctl(env, name, out, &n) != 0)
    return -1;
  out[n < len ? n : len - 1] = '\0';
  return 0;
}

/* An integer sysctl of 4 or 8 bytes: 0, -ENOENT when the name does not
 * exist, another -errno otherwise. */
static int mac_int(const tl__host_env *env, const char *name, int64_t *out) {
  union {
    int32_t i32;
    int64_t i64;
  } u = {.i64 = 0};
  size_t n = sizeof u;
  if (!env->sysctl)
    return -ENOSYS;
  if (env->sysctl(env, name, &u, &n) != 0)
    return errno == ENOENT ? -ENOENT : -EIO;
  if (n == 4)
    *out = u.i32;
  else if (n == 8)
    *out = u.i64;
  else
    return -EINVAL;
  return 0;
}

static int mac_set_int(const tl__host_env *env, tl_host *h, const char *key, const char *name,
                       int64_t scale) {
  int64_t v;
  char ev[80];
  snprintf(ev, sizeof ev, "sysctl %s", name);
  if (mac_int(env, name, &v))
    return tl__host_set(h, key, "unknown", ev);
  return tl__host_setf(h, key, ev, "%lld", (long long)(v / scale));
}

static int mac_set_str(const tl__host_env *env, tl_host *h, const char *key, const char *name) {
  char v[256], ev[80];
  snprintf(ev, sizeof ev, "sysctl %s", name);
  return tl__host_set(h, key, mac_str(env, name, v, sizeof v) == 0 ? v : "unknown", ev);
}

int tl__host_detect_macos_load(const tl__host_env *env, tl_host *h, const char *when) {
  char key[32];
  mac_loadavg la;
  size_t n = sizeof la;
  snprintf(key, sizeof key, "load.%s", when);
  if (env->sysctl && env->sysctl(env, "vm.loadavg", &la, &n) == 0 && n == sizeof la &&
      la.fscale > 0) {
    double f = (double)la.fscale;
    int err = tl__host_setf(h, key, "sysctl vm.loadavg", "%.2f %.2f %.2f", la.ldavg[0] / f,
                            la.ldavg[1] / f, la.ldavg[2] / f);
    if (err)
      return err;
  } else {
    int err = tl__host_set(h, key, "unknown", "sysctl vm.loadavg");
    if (err)
      return err;
  }
  snprintf(key, sizeof key, "procs.running.%s", when);
  return tl__host_set(h, key, "unknown", "not told by macOS");
}

static int mac_perflevels(const tl__host_env *env, tl_host *h) {
  int64_t levels;
  int e = mac_int(env, "hw.nperflevels", &levels);
  if (e) /* Intel Macs have one kind of core and no hw.nperflevels */
    return tl__host_set(h, "cpu.perflevels", e == -ENOENT ? "none" : "unknown",
                        "sysctl hw.nperflevels");
  char text[256] = "";
  size_t at = 0;
  for (int64_t i = 0; i < levels && i < 8; i++) {
    char name[64], lname[64] = "", num[48];
    int64_t cores = 0;
    snprintf(name, sizeof name, "hw.perflevel%lld.name", (long long)i);
    if (mac_str(env, name, lname, sizeof lname))
      snprintf(lname, sizeof lname, "level%lld", (long long)i);
    snprintf(name, sizeof name, "hw.perflevel%lld.physicalcpu", (long long)i);
    if (mac_int(env, name, &cores))
      snprintf(num, sizeof num, "?");
    else
      snprintf(num, sizeof num, "%lld", (long long)cores);
    at += (size_t)snprintf(text + at, sizeof text - at, "%s%s %s", i ? ", " : "", num, lname);
    if (at >= sizeof text)
      break;
  }
  return tl__host_set(h, "cpu.perflevels", levels > 0 ? text : "none",
                      "sysctl hw.nperflevels, hw.perflevelN.name, .physicalcpu");
}

/* Timer coalescing and power: macOS delays timers so that wake-ups come
 * together, more so on battery and in low-power mode. That is the tail of a
 * timer's latency there, so the state at the start is recorded. */
static int mac_coalescing(const tl__host_env *env, tl_host *h) {
  int64_t on = 0;
  const char *ev = "sysctl kern.timer.coalescing_enabled";
  if (mac_int(env, "kern.timer.coalescing_enabled", &on))
    return tl__host_set(h, "timer.coalescing", "unknown", ev);
  return tl__host_set(h, "timer.coalescing", on ? "on" : "off", ev);
}

/* The value of setting key in pmset -g's "Currently in use" lines
 * (" lowpowermode         1"): 0 when found. */
static int pmset_setting(const char *text, const char *key, char *out, size_t len) {
  size_t kl = strlen(key);
  for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    l += strspn(l, " \t");
    if (strncmp(l, key, kl) != 0 || (l[kl] != ' ' && l[kl] != '\t'))
      continue;
    const char *v = l + kl + strspn(l + kl, " \t");
    size_t n = strcspn(v, " \t\r\n");
    if (n == 0 || n >= len)
      return -1;
    memcpy(out, v, n);
    out[n] = '\0';
    return 0;
  }
  return -1;
}

static int mac_power(const tl__host_env *env, tl_host *h) {
  char out[8192], v[16];
  const char *source = "unknown";
  if (env->pmset && env->pmset(env, "ps", out, sizeof out) == 0) {
    static const struct {
      const char *said, *source;
    } sources[] = {{"'AC Power'", "ac"}, {"'Battery Power'", "battery"}, {"'UPS Power'", "ups"}};
    const char *from = strstr(out, "drawing from ");
    for (size_t i = 0; from && i < sizeof sources / sizeof sources[0]; i++)
      if (strncmp(from + 13, sources[i].said, strlen(sources[i].said)) == 0)
        source = sources[i].source;
  }
  int err = tl__host_set(h, "power.source", source, "pmset -g ps");
  if (err)
    return err;
  /* lowpowermode 1 is on; Macs with a high-power mode say powermode instead
   * (0 automatic, 1 low, 2 high). */
  const char *low = "unknown", *ev = "pmset -g: lowpowermode";
  if (env->pmset && env->pmset(env, "", out, sizeof out) == 0) {
    if (pmset_setting(out, "lowpowermode", v, sizeof v) == 0) {
      low = strcmp(v, "1") == 0 ? "on" : strcmp(v, "0") == 0 ? "off" : "unknown";
    } else if (pmset_setting(out, "powermode", v, sizeof v) == 0) {
      ev = "pmset -g: powermode";
      low = strcmp(v, "1") == 0                          ? "on"
            : strcmp(v, "0") == 0 || strcmp(v, "2") == 0 ? "off"
                                                         : "unknown";
    }
  }
  return tl__host_set(h, "power.low_power_mode", low, ev);
}

static int mac_vm(const tl__host_env *env, tl_host *h, const char *model) {
  int64_t vmm = 0;
  int e = mac_int(env, "kern.hv_vmm_present", &vmm);
  if (e)
    return tl__host_set(h, "vm", e == -ENOENT ? "none" : "unknown", "sysctl kern.hv_vmm_present");
  if (!vmm)
    return tl__host_set(h, "vm", "none", "sysctl kern.hv_vmm_present: 0");
  /* In a VM: the model name or CPUID say whose. */
  static const struct {
    const char *mark, *vm;
  } models[] = {{"VirtualMac", "apple"}, {"Parallels", "parallels"}, {"VMware", "vmware"}};
  for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
    if (strstr(model, models[i].mark)) {
      char ev[320];
      snprintf(ev, sizeof ev, "sysctl kern.hv_vmm_present: 1, hw.model: \"%s\"", model);
      return tl__host_set(h, "vm", models[i].vm, ev);
    }
  }
  int err = tl__host_vm_from_cpuid(env, h);
  if (err != TL_ENOTFOUND)
    return err;
  return tl__host_set(h, "vm", "other", "sysctl kern.hv_vmm_present: 1");
}

/* Who the machine is: its names, hardware UUID, macOS version, architecture
 * and C library, and whether this process is translated (Rosetta). *arm
 * tells the CPU step after whether the machine is Apple silicon. */
static int mac_identity(const tl__host_env *env, tl_host *h, int *arm) {
  int err = TL_OK;
  char ver[128];
  struct utsname u;
  int have_uname = env->uname && env->uname(env, &u) == 0;
  if (have_uname) {
    err = tl__host_set(h, "hostname", u.nodename, "uname");
    if (!err)
      err = tl__host_set(h, "kernel.release", u.release, "uname");
    if (!err)
      err = tl__host_set(h, "kernel.version", u.version, "uname");
  } else {
    err = mac_set_str(env, h, "hostname", "kern.hostname");
    if (!err)
      err = mac_set_str(env, h, "kernel.release", "kern.osrelease");
    if (!err)
      err = mac_set_str(env, h, "kernel.version", "kern.version");
  }
  char uuid[37];
  if (!err)
    err = tl__host_set(h, "machine.id",
                       env->host_uuid && env->host_uuid(env, uuid) == 0 ? uuid : "unknown",
                       "gethostuuid");
  int have_ver = mac_str(env, "kern.osproductversion", ver, sizeof ver) == 0;
  if (!err)
    err = have_ver ? tl__host_setf(h, "os.name", "sysctl kern.osproductversion", "macOS %s", ver)
                   : tl__host_set(h, "os.name", "macOS", "uname");
  if (!err)
    err = tl__host_set(h, "os.version", have_ver ? ver : "unknown", "sysctl kern.osproductversion");

  /* The machine's own architecture, even in a translated (Rosetta) process,
   * where uname says x86_64. */
  int64_t cputype = 0;
  int have_type = mac_int(env, "hw.cputype", &cputype) == 0;
  *arm = have_type && (cputype & ~MAC_CPU_ARCH_ABI64) == MAC_CPU_TYPE_ARM;
  if (!err) {
    if (have_type && (cputype & ~MAC_CPU_ARCH_ABI64) == MAC_CPU_TYPE_X86)
      err = tl__host_set(h, "arch", "x86_64", "sysctl hw.cputype");
    else if (*arm)
      err = tl__host_set(h, "arch", "arm64", "sysctl hw.cputype");
    else
      err = tl__host_set(h, "arch", have_uname ? u.machine : "unknown", "uname");
  }
  if (!err)
    err = tl__host_set(h, "libc", env->libc, "macOS");
  if (!err) {
    int64_t translated = 0;
    int e = mac_int(env, "sysctl.proc_translated", &translated);
    if (e == 0)
      err = tl__host_set(h, "cpu.translated", translated ? "rosetta" : "no",
                         "sysctl sysctl.proc_translated");
    else /* ENOENT: a system without Rosetta, so not translated */
      err = tl__host_set(h, "cpu.translated", e == -ENOENT ? "no" : "unknown",
                         "sysctl sysctl.proc_translated");
  }
  return err;
}

/* The CPUs: model and vendor, x86's family/model/stepping, how many there
 * are, their frequency and performance levels. */
static int mac_cpu(const tl__host_env *env, tl_host *h, int arm) {
  char brand[256];
  int err = TL_OK;
  int have_brand = mac_str(env, "machdep.cpu.brand_string", brand, sizeof brand) == 0;
  err = tl__host_set(h, "cpu.model", have_brand ? brand : "unknown",
                     "sysctl machdep.cpu.brand_string");
  if (!err && have_brand)
    err = tl__host_set(h, "cpu.brand", brand, "sysctl machdep.cpu.brand_string");
  if (!err) {
    char vendor[64];
    if (mac_str(env, "machdep.cpu.vendor", vendor, sizeof vendor) == 0)
      err = tl__host_set(h, "cpu.vendor", vendor, "sysctl machdep.cpu.vendor");
    else
      err = tl__host_set(h, "cpu.vendor", arm ? "Apple" : "unknown", "sysctl hw.cputype");
  }
  if (!err && !arm) {
    err = mac_set_int(env, h, "cpu.family", "machdep.cpu.family", 1);
    if (!err)
      err = mac_set_int(env, h, "cpu.model_id", "machdep.cpu.model", 1);
    if (!err)
      err = mac_set_int(env, h, "cpu.stepping", "machdep.cpu.stepping", 1);
  }
  if (!err)
    err = mac_set_int(env, h, "cpu.sockets", "hw.packages", 1);
  if (!err)
    err = mac_set_int(env, h, "cpu.cores", "hw.physicalcpu", 1);
  if (!err)
    err = mac_set_int(env, h, "cpu.logical", "hw.logicalcpu", 1);
  if (!err)
    err = mac_set_int(env, h, "cpu.online", "hw.activecpu", 1);
  if (!err)
    err = mac_set_int(env, h, "cpu.freq.base_khz", "hw.cpufrequency", 1000);
  if (!err)
    err = mac_set_int(env, h, "cpu.freq.max_khz", "hw.cpufrequency_max", 1000);
  if (!err)
    err = mac_perflevels(env, h);
  return err;
}

/* Memory and swap. */
static int mac_memory(const tl__host_env *env, tl_host *h) {
  int err = mac_set_int(env, h, "mem.total_bytes", "hw.memsize", 1);
  if (!err) {
    mac_swapusage sw;
    size_t n = sizeof sw;
    if (env->sysctl && env->sysctl(env, "vm.swapusage", &sw, &n) == 0 && n == sizeof sw)
      err = tl__host_setf(h, "swap.total_bytes", "sysctl vm.swapusage", "%llu",
                          (unsigned long long)sw.total);
    else
      err = tl__host_set(h, "swap.total_bytes", "unknown", "sysctl vm.swapusage");
  }
  return err;
}

/* The kernel's clock and timers: HZ, the clock tl reads, timer coalescing,
 * power (which coalescing follows) and preemption. */
static int mac_kernel(const tl__host_env *env, tl_host *h) {
  int err = TL_OK;
  /* struct clockinfo starts with hz. */
  int32_t ci[5];
  size_t n = sizeof ci;
  if (env->sysctl && env->sysctl(env, "kern.clockrate", ci, &n) == 0 && n >= sizeof ci[0])
    err = tl__host_setf(h, "kernel.hz", "sysctl kern.clockrate", "%d", ci[0]);
  else
    err = tl__host_set(h, "kernel.hz", "unknown", "sysctl kern.clockrate");
  if (!err)
    err = tl__host_set(h, "clocksource.current", "mach_continuous_time",
                       "macOS: libuv's uv_hrtime and tl's probes");
  if (!err)
    err = mac_coalescing(env, h);
  if (!err)
    err = mac_power(env, h);
  if (!err)
    err = tl__host_set(h, "kernel.preempt", "full", "XNU preempts kernel threads");
  return err;
}

/* Seconds since boot, from kern.boottime and now. */
static int mac_uptime(const tl__host_env *env, tl_host *h) {
  mac_timeval tv;
  size_t n = sizeof tv;
  int64_t now = env->now_s ? env->now_s : (int64_t)time(NULL);
  if (env->sysctl && env->sysctl(env, "kern.boottime", &tv, &n) == 0 && n == sizeof tv &&
      tv.tv_sec > 0 && tv.tv_sec <= now)
    return tl__host_setf(h, "uptime_s", "sysctl kern.boottime", "%lld",
                         (long long)(now - tv.tv_sec));
  return tl__host_set(h, "uptime_s", "unknown", "sysctl kern.boottime");
}

/* Every fact, in the order they are shown: the steps above one after the
 * other, stopping at the first failure. */
int tl__host_detect_macos(const tl__host_env *env, tl_host *h) {
  char model[256] = "";
  int arm = 0;
  int err = mac_identity(env, h, &arm);
  if (!err)
    err = mac_cpu(env, h, arm);
  if (!err)
    err = mac_memory(env, h);
  if (!err) {
    int have_model = mac_str(env, "hw.model", model, sizeof model) == 0;
    err = tl__host_set(h, "hw.model", have_model ? model : "unknown", "sysctl hw.model");
  }
  if (!err)
    err = mac_kernel(env, h);
  if (!err)
    err = mac_vm(env, h, model);
  if (!err)
    err = tl__host_set(h, "cloud", "none", "macOS: no DMI (EC2 Mac hosts are not told apart)");
  if (!err)
    err = tl__host_set(h, "container", "none", "macOS runs no Linux containers natively");
  if (!err)
    err = tl__host_detect_macos_load(env, h, "start");
  if (!err)
    err = mac_uptime(env, h);
  return err;
}
