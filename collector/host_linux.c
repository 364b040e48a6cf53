/* host_linux.c: what a Linux host tells about itself, read from /etc, /proc,
 * /sys and /boot under env's root, and from CPUID and uname through env, so
 * that tests run the same code on fixture trees. The production environment
 * (root "/", the real CPUID instruction, uname(2), prctl(2), the C library's
 * version) is made by tl__host_env_default() at the end of this file. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "causes_internal.h"

/* The fact from a one-line file, or "unknown" with the reason. */
static int set_line(const tl__host_env *env, tl_host *h, const char *key, const char *path) {
  char buf[TL_HOST_VALUE_MAX], ev[640];
  int err = tl__host_read_line(env, path, buf, sizeof buf);
  if (err) {
    snprintf(ev, sizeof ev, "/%s: %s", path, tl__host_errstr(err));
    return tl__host_set(h, key, "unknown", ev);
  }
  snprintf(ev, sizeof ev, "/%s", path);
  return tl__host_set(h, key, buf, ev);
}

/* The number of CPUs in a kernel CPU list such as "0-3,8-11"; -1 if bad. */
enum { TL_CPU_MAX = 1 << 20 }; /* far beyond any kernel's NR_CPUS */
static long cpu_list_count(const char *s) {
  long n = 0;
  while (*s) {
    char *end;
    long a = strtol(s, &end, 10), b = a;
    if (end == s || a < 0 || a > TL_CPU_MAX)
      return -1;
    s = end;
    if (*s == '-') {
      b = strtol(s + 1, &end, 10);
      if (end == s + 1 || b < a || b > TL_CPU_MAX)
        return -1;
      s = end;
    }
    n += b - a + 1;
    if (*s == ',')
      s++;
    else if (*s)
      return -1;
  }
  return n;
}

static int set_cpu_count(const tl__host_env *env, tl_host *h, const char *key, const char *path,
                         long fallback, const char *fallback_ev) {
  char buf[4096], ev[640];
  long n = -1;
  if (tl__host_read_line(env, path, buf, sizeof buf) == 0)
    n = cpu_list_count(buf);
  snprintf(ev, sizeof ev, "/%s", path);
  if (n > 0)
    return tl__host_setf(h, key, ev, "%ld", n);
  if (fallback > 0)
    return tl__host_setf(h, key, fallback_ev, "%ld", fallback);
  return tl__host_set(h, key, "unknown", ev);
}

/* ARM CPU implementers and parts, as lscpu names the common ones. */
static const char *arm_implementer(long id) {
  switch (id) {
  case 0x41:
    return "ARM";
  case 0x42:
    return "Broadcom";
  case 0x48:
    return "HiSilicon";
  case 0x4e:
    return "NVIDIA";
  case 0x51:
    return "Qualcomm";
  case 0x61:
    return "Apple";
  case 0xc0:
    return "Ampere";
  default:
    return NULL;
  }
}

static const char *arm_part(long impl, long part) {
  static const struct {
    long part;
    const char *name;
  } arm[] = {{0xd03, "Cortex-A53"},  {0xd04, "Cortex-A35"},  {0xd05, "Cortex-A55"},
             {0xd07, "Cortex-A57"},  {0xd08, "Cortex-A72"},  {0xd09, "Cortex-A73"},
             {0xd0a, "Cortex-A75"},  {0xd0b, "Cortex-A76"},  {0xd0c, "Neoverse-N1"},
             {0xd40, "Neoverse-V1"}, {0xd41, "Cortex-A78"},  {0xd49, "Neoverse-N2"},
             {0xd4f, "Neoverse-V2"}, {0xd80, "Cortex-A520"}, {0xd81, "Cortex-A720"}};
  if (impl == 0x41)
    for (size_t i = 0; i < sizeof arm / sizeof arm[0]; i++)
      if (arm[i].part == part)
        return arm[i].name;
  if (impl == 0xc0 && part == 0xac3)
    return "Ampere-1";
  return NULL;
}

/* /proc/cpuinfo: vendor, model, family/model/stepping, sockets and cores. */
static int detect_cpuinfo(const tl__host_env *env, tl_host *h) {
  char *text = NULL, buf[TL_HOST_VALUE_MAX];
  const char *ev = "/proc/cpuinfo";
  int rerr = tl__host_read(env, "proc/cpuinfo", &text, NULL);
  if (rerr) {
    char why[128];
    snprintf(why, sizeof why, "/proc/cpuinfo: %s", tl__host_errstr(rerr));
    static const char *const keys[] = {"cpu.vendor",   "cpu.model",   "cpu.family", "cpu.model_id",
                                       "cpu.stepping", "cpu.sockets", "cpu.cores"};
    int err = TL_OK;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0] && !err; i++)
      err = tl__host_set(h, keys[i], "unknown", why);
    return err;
  }
  int err = TL_OK;
  long impl = -1, part = -1;
  if (tl__host_keyed(text, "CPU implementer", ':', buf, sizeof buf) == 0)
    impl = strtol(buf, NULL, 0);
  if (tl__host_keyed(text, "CPU part", ':', buf, sizeof buf) == 0)
    part = strtol(buf, NULL, 0);

  if (tl__host_keyed(text, "vendor_id", ':', buf, sizeof buf) == 0)
    err = tl__host_set(h, "cpu.vendor", buf, ev);
  else if (impl >= 0 && arm_implementer(impl))
    err = tl__host_set(h, "cpu.vendor", arm_implementer(impl), "/proc/cpuinfo CPU implementer");
  else
    err = tl__host_set(h, "cpu.vendor", "unknown", ev);

  if (!err) {
    if (tl__host_keyed(text, "model name", ':', buf, sizeof buf) == 0)
      err = tl__host_set(h, "cpu.model", buf, ev);
    else if (impl >= 0 && arm_part(impl, part))
      err = tl__host_set(h, "cpu.model", arm_part(impl, part), "/proc/cpuinfo CPU part");
    else if (tl__host_keyed(text, "cpu model", ':', buf, sizeof buf) == 0 ||
             tl__host_keyed(text, "Processor", ':', buf, sizeof buf) == 0)
      err = tl__host_set(h, "cpu.model", buf, ev);
    else
      err = tl__host_set(h, "cpu.model", "unknown", ev);
  }
  static const struct {
    const char *key, *field;
  } ids[] = {{"cpu.family", "cpu family"}, {"cpu.model_id", "model"}, {"cpu.stepping", "stepping"}};
  for (size_t i = 0; i < 3 && !err; i++)
    err = tl__host_set(
        h, ids[i].key,
        tl__host_keyed(text, ids[i].field, ':', buf, sizeof buf) == 0 ? buf : "unknown", ev);

  /* Sockets are distinct physical ids; cores distinct (physical, core) ids. */
  enum { MAX_IDS = 4096 };
  long *pairs = malloc(MAX_IDS * 2 * sizeof *pairs);
  size_t npairs = 0, sockets = 0;
  int have_ids = 0;
  long phys = -1;
  for (char *line = text; pairs && line && *line;) {
    char *next = strchr(line, '\n');
    if (next)
      *next = '\0';
    if (strncmp(line, "physical id", 11) == 0 && strchr(line, ':'))
      phys = strtol(strchr(line, ':') + 1, NULL, 10);
    if (strncmp(line, "core id", 7) == 0 && strchr(line, ':')) {
      long core = strtol(strchr(line, ':') + 1, NULL, 10);
      have_ids = 1;
      int seen = 0, seen_phys = 0;
      for (size_t i = 0; i < npairs; i++) {
        seen_phys |= pairs[2 * i] == phys;
        seen |= pairs[2 * i] == phys && pairs[2 * i + 1] == core;
      }
      if (!seen_phys)
        sockets++;
      if (!seen && npairs < MAX_IDS) {
        pairs[2 * npairs] = phys;
        pairs[2 * npairs + 1] = core;
        npairs++;
      }
    }
    line = next ? next + 1 : NULL;
  }
  free(text);
  if (!err && have_ids) {
    err = tl__host_setf(h, "cpu.sockets", "/proc/cpuinfo physical id", "%zu", sockets);
    if (!err)
      err = tl__host_setf(h, "cpu.cores", "/proc/cpuinfo core id", "%zu", npairs);
  } else if (!err && pairs) {
    /* ARM and others: the topology in sysfs, CPU by CPU, as lscpu reads it. */
    npairs = sockets = 0;
    char path[128];
    for (int cpu = 0; cpu < MAX_IDS; cpu++) {
      long pkg, core;
      snprintf(path, sizeof path, "sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu);
      if (tl__host_read_line(env, path, buf, sizeof buf))
        break;
      pkg = strtol(buf, NULL, 10);
      snprintf(path, sizeof path, "sys/devices/system/cpu/cpu%d/topology/core_id", cpu);
      core = tl__host_read_line(env, path, buf, sizeof buf) == 0 ? strtol(buf, NULL, 10) : cpu;
      int seen = 0, seen_pkg = 0;
      for (size_t i = 0; i < npairs; i++) {
        seen_pkg |= pairs[2 * i] == pkg;
        seen |= pairs[2 * i] == pkg && pairs[2 * i + 1] == core;
      }
      sockets += !seen_pkg;
      if (!seen) {
        pairs[2 * npairs] = pkg;
        pairs[2 * npairs + 1] = core;
        npairs++;
      }
    }
    const char *topo = "/sys/devices/system/cpu/cpuN/topology";
    err = npairs ? tl__host_setf(h, "cpu.sockets", topo, "%zu", sockets)
                 : tl__host_set(h, "cpu.sockets", "unknown", "/proc/cpuinfo: no physical id");
    if (!err)
      err = npairs ? tl__host_setf(h, "cpu.cores", topo, "%zu", npairs)
                   : tl__host_set(h, "cpu.cores", "unknown", "/proc/cpuinfo: no core id");
  } else if (!err) {
    err = TL_ENOMEM;
  }
  free(pairs);
  return err;
}

/* Memory lines of /proc/meminfo are in kB. */
static int set_meminfo(const tl__host_env *env, tl_host *h, const char *text, const char *key,
                       const char *field) {
  (void)env;
  char buf[64];
  if (text && tl__host_keyed(text, field, ':', buf, sizeof buf) == 0) {
    char *end;
    long long kb = strtoll(buf, &end, 10);
    /* kB to bytes must not overflow: strtoll gives LLONG_MAX for a huge
     * number (fuzz_host/regress-meminfo-huge). */
    if (end != buf && kb >= 0 && kb <= LLONG_MAX / 1024)
      return tl__host_setf(h, key, "/proc/meminfo", "%lld", kb * 1024);
  }
  return tl__host_set(h, key, "unknown", "/proc/meminfo");
}

/* The model named by [s, s + n) when it is one the kernel knows, else NULL.
 * debugfs and preempt= are text from outside: a model tl cannot name (a typo
 * on the command line, a newer kernel's model) must not become the fact,
 * which promises one of the documented values (fuzz_host/regress-preempt-*). */
static const char *preempt_model(const char *s, size_t n) {
  static const char *const models[] = {"none", "voluntary", "full", "lazy"};
  for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
    if (strlen(models[i]) == n && memcmp(models[i], s, n) == 0)
      return models[i];
  return NULL;
}

/* The preemption model: none / voluntary / full / lazy / rt. */
static int detect_preempt(const tl__host_env *env, tl_host *h, const char *version,
                          const char *cmdline, const char *config, const char *config_path) {
  char buf[256], ev[640];
  if (tl__host_read_line(env, "sys/kernel/realtime", buf, sizeof buf) == 0 && strcmp(buf, "1") == 0)
    return tl__host_set(h, "kernel.preempt", "rt", "/sys/kernel/realtime");
  /* Dynamic preemption shows all models with the current one in brackets:
   * "none voluntary (full) lazy". */
  if (tl__host_read_line(env, "sys/kernel/debug/sched/preempt", buf, sizeof buf) == 0) {
    char *lp = strchr(buf, '('), *rp = lp ? strchr(lp, ')') : NULL;
    const char *model = lp && rp ? preempt_model(lp + 1, (size_t)(rp - lp - 1)) : NULL;
    if (model)
      return tl__host_set(h, "kernel.preempt", model, "/sys/kernel/debug/sched/preempt");
  }
  if (strstr(version, "PREEMPT_RT"))
    return tl__host_set(h, "kernel.preempt", "rt", "uname -v: PREEMPT_RT");
  if (strstr(version, "PREEMPT_DYNAMIC")) {
    const char *p = cmdline ? strstr(cmdline, "preempt=") : NULL;
    /* The kernel splits its command line at any blank. */
    const char *model =
        p && (p == cmdline || p[-1] == ' ') ? preempt_model(p + 8, strcspn(p + 8, " \t\n")) : NULL;
    if (model)
      return tl__host_set(h, "kernel.preempt", model, "/proc/cmdline preempt=");
  }
  if (config) {
    static const struct {
      const char *option, *model;
    } opts[] = {{"CONFIG_PREEMPT_RT=y", "rt"},
                {"CONFIG_PREEMPT_LAZY=y", "lazy"},
                {"CONFIG_PREEMPT=y", "full"},
                {"CONFIG_PREEMPT_VOLUNTARY=y", "voluntary"},
                {"CONFIG_PREEMPT_NONE=y", "none"}};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
      const char *p = strstr(config, opts[i].option);
      if (p && (p == config || p[-1] == '\n')) {
        snprintf(ev, sizeof ev, "/%s %s", config_path, opts[i].option);
        return tl__host_set(h, "kernel.preempt", opts[i].model, ev);
      }
    }
  }
  if (strstr(version, "PREEMPT_DYNAMIC"))
    return tl__host_set(h, "kernel.preempt", "unknown",
                        "uname -v: PREEMPT_DYNAMIC, chosen at boot; no config or debugfs to tell");
  if (strstr(version, "PREEMPT_LAZY"))
    return tl__host_set(h, "kernel.preempt", "lazy", "uname -v: PREEMPT_LAZY");
  if (strstr(version, "PREEMPT"))
    return tl__host_set(h, "kernel.preempt", "full", "uname -v: PREEMPT");
  return tl__host_set(h, "kernel.preempt", "unknown",
                      "uname -v: no PREEMPT (none or voluntary); no kernel config to tell");
}

/* isolcpus= and nohz_full= from the kernel command line, "none" when absent. */
static int set_cmdline_param(tl_host *h, const char *cmdline, int cmd_err, const char *key,
                             const char *param) {
  if (!cmdline) {
    char ev[96];
    snprintf(ev, sizeof ev, "/proc/cmdline: %s", tl__host_errstr(cmd_err));
    return tl__host_set(h, key, "unknown", ev);
  }
  size_t plen = strlen(param);
  const char *found = NULL;
  for (const char *p = strstr(cmdline, param); p; p = strstr(p + 1, param))
    if (p == cmdline || p[-1] == ' ')
      found = p + plen; /* the last one wins, as in the kernel */
  if (!found)
    return tl__host_set(h, key, "none", "/proc/cmdline");
  char buf[256];
  size_t n = strcspn(found, " \n");
  snprintf(buf, sizeof buf, "%.*s", (int)(n < sizeof buf - 1 ? n : sizeof buf - 1), found);
  return tl__host_set(h, key, buf, "/proc/cmdline");
}

int tl__host_detect_load(const tl__host_env *env, tl_host *h, const char *when) {
  char buf[256], key[32];
  double a, b, c;
  int running, total;
  snprintf(key, sizeof key, "load.%s", when);
  int ok = tl__host_read_line(env, "proc/loadavg", buf, sizeof buf) == 0 &&
           sscanf(buf, "%lf %lf %lf %d/%d", &a, &b, &c, &running, &total) == 5 &&
           running >= 0; /* a count: "-2/1043" is not one (fuzz_host/regress-loadavg-negative) */
  int err = ok ? tl__host_setf(h, key, "/proc/loadavg", "%.2f %.2f %.2f", a, b, c)
               : tl__host_set(h, key, "unknown", "/proc/loadavg");
  snprintf(key, sizeof key, "procs.running.%s", when);
  if (!err)
    err = ok ? tl__host_setf(h, key, "/proc/loadavg", "%d", running)
             : tl__host_set(h, key, "unknown", "/proc/loadavg");
  return err;
}

/* Who the machine is: uname's names, the machine id, the OS release and the
 * C library. u is uname's answer (zeroed when *have_uname is 0), for the
 * kernel steps after. */
static int detect_identity(const tl__host_env *env, tl_host *h, struct utsname *u,
                           int *have_uname) {
  char buf[TL_HOST_VALUE_MAX], path[300];
  int err = TL_OK;
  *have_uname = env->uname && env->uname(env, u) == 0;
  if (!*have_uname)
    memset(u, 0, sizeof *u);
  const char *ue = *have_uname ? "uname" : "uname failed";
  err = tl__host_set(h, "hostname", *have_uname ? u->nodename : NULL, ue);
  if (!err)
    err = tl__host_set(h, "kernel.release", *have_uname ? u->release : NULL, ue);
  if (!err)
    err = tl__host_set(h, "kernel.version", *have_uname ? u->version : NULL, ue);
  if (!err)
    err = tl__host_set(h, "arch", *have_uname ? u->machine : NULL, ue);

  /* machine-id: systemd's, else D-Bus's copy. */
  if (!err) {
    if (tl__host_read_line(env, "etc/machine-id", buf, sizeof buf) == 0 && buf[0])
      err = tl__host_set(h, "machine.id", buf, "/etc/machine-id");
    else
      err = set_line(env, h, "machine.id", "var/lib/dbus/machine-id");
  }

  char *text = NULL;
  const char *osr = "etc/os-release";
  if (tl__host_read(env, osr, &text, NULL) != 0) {
    osr = "usr/lib/os-release";
    tl__host_read(env, osr, &text, NULL);
  }
  snprintf(path, sizeof path, "/%s", osr);
  if (!err)
    err = tl__host_set(
        h, "os.name",
        text && tl__host_keyed(text, "PRETTY_NAME", '=', buf, sizeof buf) == 0 ? buf : "unknown",
        path);
  if (!err)
    err = tl__host_set(
        h, "os.version",
        text && tl__host_keyed(text, "VERSION_ID", '=', buf, sizeof buf) == 0 ? buf : "unknown",
        path);
  free(text);
  if (!err)
    err = tl__host_set(h, "libc", env->libc, "confstr _CS_GNU_LIBC_VERSION");
  return err;
}

/* The CPUs: /proc/cpuinfo, CPUID, how many there are and their frequency. */
static int detect_cpu(const tl__host_env *env, tl_host *h) {
  char path[300];
  int err = detect_cpuinfo(env, h);
  if (!err)
    err = tl__host_detect_cpuid(env, h);
  if (!err)
    err = set_cpu_count(env, h, "cpu.logical", "sys/devices/system/cpu/present", -1, NULL);
  if (!err)
    err = set_cpu_count(env, h, "cpu.online", "sys/devices/system/cpu/online", -1, NULL);

  static const struct {
    const char *key, *file;
  } freq[] = {{"cpu.freq.base_khz", "base_frequency"},
              {"cpu.freq.max_khz", "cpuinfo_max_freq"},
              {"cpu.governor", "scaling_governor"}};
  for (size_t i = 0; i < 3 && !err; i++) {
    snprintf(path, sizeof path, "sys/devices/system/cpu/cpu0/cpufreq/%s", freq[i].file);
    err = set_line(env, h, freq[i].key, path);
  }
  return err;
}

/* Memory and swap from /proc/meminfo. */
static int detect_memory(const tl__host_env *env, tl_host *h) {
  char *text = NULL;
  if (tl__host_read(env, "proc/meminfo", &text, NULL) != 0)
    text = NULL;
  int err = set_meminfo(env, h, text, "mem.total_bytes", "MemTotal");
  if (!err)
    err = set_meminfo(env, h, text, "swap.total_bytes", "SwapTotal");
  free(text);
  return err;
}

/* The clocksource and this thread's timer slack. */
static int detect_clock(const tl__host_env *env, tl_host *h) {
  int err = set_line(env, h, "clocksource.current",
                     "sys/devices/system/clocksource/clocksource0/current_clocksource");
  if (!err)
    err = set_line(env, h, "clocksource.available",
                   "sys/devices/system/clocksource/clocksource0/available_clocksource");
  if (!err) {
    long long slack = env->timer_slack ? env->timer_slack(env) : -1;
    if (slack >= 0)
      err = tl__host_setf(h, "timer_slack_ns", "prctl PR_GET_TIMERSLACK", "%lld", slack);
    else
      err = set_line(env, h, "timer_slack_ns", "proc/self/timerslack_ns");
  }
  return err;
}

/* HZ from the kernel's build configuration (NULL when there is none). */
static int set_kernel_hz(tl_host *h, const char *config, const char *config_path) {
  const char *p = config ? strstr(config, "\nCONFIG_HZ=") : NULL;
  char ev[640];
  snprintf(ev, sizeof ev, "/%s", config_path);
  if (p) {
    long hz = strtol(p + 11, NULL, 10);
    return hz > 0 ? tl__host_setf(h, "kernel.hz", ev, "%ld", hz)
                  : tl__host_set(h, "kernel.hz", "unknown", ev);
  }
  return tl__host_set(h, "kernel.hz", "unknown", config ? ev : "no kernel config in /boot to tell");
}

/* The kernel: HZ, the preemption model, isolated and tickless CPUs, from
 * its build configuration, uname -v (u) and its command line. */
static int detect_kernel(const tl__host_env *env, tl_host *h, const struct utsname *u,
                         int have_uname) {
  /* The kernel's build configuration tells HZ and the preemption model. */
  char *config = NULL;
  char config_path[300];
  snprintf(config_path, sizeof config_path, "boot/config-%s", u->release);
  if (!have_uname || strchr(u->release, '/') || tl__host_read(env, config_path, &config, NULL) != 0)
    config = NULL;
  int err = set_kernel_hz(h, config, config_path);
  char *cmdline = NULL;
  int cmd_err = tl__host_read(env, "proc/cmdline", &cmdline, NULL);
  if (!err)
    err = detect_preempt(env, h, have_uname ? u->version : "", cmdline, config, config_path);
  if (!err)
    err = set_cmdline_param(h, cmdline, cmd_err, "kernel.isolcpus", "isolcpus=");
  if (!err)
    err = set_cmdline_param(h, cmdline, cmd_err, "kernel.nohz_full", "nohz_full=");
  free(cmdline);
  free(config);
  return err;
}

/* What the machine runs on: the hardware's name, the VM, the cloud, the
 * container and the limits it sets. */
static int detect_platform(const tl__host_env *env, tl_host *h) {
  /* DMI names the hardware: "Dell Inc. PowerEdge R640", "QEMU Standard PC ...". */
  char vendor[256], product[256];
  int v = tl__host_read_line(env, "sys/class/dmi/id/sys_vendor", vendor, sizeof vendor);
  int p = tl__host_read_line(env, "sys/class/dmi/id/product_name", product, sizeof product);
  int err = v == 0 && p == 0
                ? tl__host_setf(h, "hw.model", "/sys/class/dmi/id/sys_vendor, product_name",
                                "%s %s", vendor, product)
                : set_line(env, h, "hw.model", "proc/device-tree/model");
  if (!err)
    err = tl__host_detect_vm(env, h);
  if (!err)
    err = tl__host_detect_cloud(env, h);
  if (!err)
    err = tl__host_detect_container(env, h);
  if (!err)
    err = tl__host_detect_limits(env, h);
  return err;
}

/* Seconds since boot from /proc/uptime. */
static int detect_uptime(const tl__host_env *env, tl_host *h) {
  char buf[TL_HOST_VALUE_MAX];
  /* The upper bound keeps the cast defined for "1e300" or "inf"
   * (fuzz_host/regress-uptime-huge); NaN fails up >= 0. */
  double up;
  if (tl__host_read_line(env, "proc/uptime", buf, sizeof buf) == 0 &&
      sscanf(buf, "%lf", &up) == 1 && up >= 0 && up < (double)LLONG_MAX)
    return tl__host_setf(h, "uptime_s", "/proc/uptime", "%lld", (long long)up);
  return tl__host_set(h, "uptime_s", "unknown", "/proc/uptime");
}

/* Every fact, in the order they are shown: the steps above one after the
 * other, stopping at the first failure. */
static int detect_linux(const tl__host_env *env, tl_host *h) {
  struct utsname u;
  int have_uname;
  int err = detect_identity(env, h, &u, &have_uname);
  if (!err)
    err = detect_cpu(env, h);
  if (!err)
    err = detect_memory(env, h);
  if (!err)
    err = detect_clock(env, h);
  if (!err)
    err = detect_kernel(env, h, &u, have_uname);
  if (!err)
    err = detect_platform(env, h);
  if (!err)
    err = tl__host_detect_load(env, h, "start");
  if (!err)
    err = detect_uptime(env, h);
  return err;
}

int tl__host_detect_os(const tl__host_env *env, tl_host *h) { return detect_linux(env, h); }

/* ======================================================================== */
/* The running system                                                        */

static long long real_timer_slack(const tl__host_env *env) {
  (void)env;
  int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
  return slack >= 0 ? (long long)slack : -1;
}

static char libc_version[64];

int tl__host_env_default(tl__host_env *env) {
  int err = tl__host_env_open(env);
  if (err)
    return err;
  env->timer_slack = real_timer_slack;
#ifdef _CS_GNU_LIBC_VERSION
  char v[48];
  size_t n = confstr(_CS_GNU_LIBC_VERSION, v, sizeof v);
  if (n > 0 && n <= sizeof v) /* "glibc 2.36" */
    snprintf(libc_version, sizeof libc_version, "%s", v);
#endif
  env->libc = libc_version[0] ? libc_version : NULL;
  return TL_OK;
}
