/* collect_internal.h: how the session runner and the probes talk, and how
 * host detection is split between common code and one file per OS. */
#ifndef TL_COLLECT_INTERNAL_H
#define TL_COLLECT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/utsname.h>

#include "tl_collect.h"

/* ------------------------------------------------------------------------ */
/* Probes                                                                    */

/* The runner's side of a collection, as a probe sees it. A probe loops:
 *   while ((i = tl__run_next(run)) >= 0) { measure run->delays_ns[i];
 *                                         tl__run_record(run, i, latency); }
 * in whatever shape its timer needs (callbacks for libuv, a plain loop for
 * clock_nanosleep). tl__run_next returns -1 when the run is over: the counts
 * are reached, the duration is up, or tl_collect_stop() was called. */
typedef struct tl__run tl__run;

struct tl__run_view {
  const tl_collect_opts *opts;
  const int64_t *delays_ns;
  size_t delay_count;
};

const struct tl__run_view *tl__run_view(const tl__run *run);
int tl__run_next(tl__run *run);
void tl__run_record(tl__run *run, int index, int64_t latency_ns);
/* Periods the probe found it had skipped (periodic probes). */
void tl__run_missed(tl__run *run, int index, int64_t missed);
/* Non-zero once a stop was asked for (signal or error). */
int tl__run_stopping(const tl__run *run);
/* A handle a uv probe may wake with uv_async_send() to notice a stop. */
void tl__run_set_wakeup(tl__run *run, void (*wake)(void *), void *arg);

typedef struct {
  tl_probe_info info;
  /* Measures until tl__run_next says stop. Returns TL_OK or an error with a
   * one-line message in err. */
  int (*run)(tl__run *run, char *err, size_t errlen);
} tl__probe;

const tl__probe *tl__probe_lookup(const char *name);

/* ------------------------------------------------------------------------ */
/* Host detection                                                            */

enum { TL_HOST_MAX_FACTS = 128 };

struct tl_host {
  tl_fact facts[TL_HOST_MAX_FACTS];
  size_t count;
  char fingerprint[65];
};

/* Adds or replaces a fact; copies the strings. The value is stored safely:
 * control characters and bytes that are not UTF-8 become "\xNN", leading and
 * trailing blanks go, and it is cut at TL_HOST_VALUE_MAX bytes. A NULL value
 * is "unknown". */
enum { TL_HOST_VALUE_MAX = 512 };
int tl__host_set(tl_host *h, const char *key, const char *value, const char *evidence);
/* tl__host_set with a printf-formatted value. */
int tl__host_setf(tl_host *h, const char *key, const char *evidence, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Everything detection reads from outside, so that tests can run it on a
 * fixture tree with made-up CPUID, uname and sysctl answers. Production
 * values come from tl__host_env_default() in the OS's file. */
typedef struct tl__host_env tl__host_env;
struct tl__host_env {
  int root_fd; /* files are opened relative to this: "/" or a fixture tree */
  /* Opens path (relative to the root, no leading '/') read-only; -1 with
   * errno set on failure. NULL: openat(root_fd, path). */
  int (*open)(const tl__host_env *env, const char *path);
  /* CPUID leaf/subleaf into r = {eax, ebx, ecx, edx}; non-zero when the
   * processor has no CPUID (not x86). NULL: no CPUID. */
  int (*cpuid)(const tl__host_env *env, uint32_t leaf, uint32_t sub, uint32_t r[4]);
  /* uname(2); non-zero on failure. */
  int (*uname)(const tl__host_env *env, struct utsname *u);
  /* sysctlbyname(3) read: 0, or -1 with errno (ENOENT: no such name). */
  int (*sysctl)(const tl__host_env *env, const char *name, void *buf, size_t *len);
  /* Timer slack of the calling thread in ns, -1 when unknown. NULL: read
   * proc/self/timerslack_ns under the root. */
  long long (*timer_slack)(const tl__host_env *env);
  /* The hardware UUID (macOS gethostuuid); non-zero when unknown. */
  int (*host_uuid)(const tl__host_env *env, char out[37]);
  const char *libc; /* "glibc 2.36" ..., NULL when unknown */
  int64_t now_s;    /* unix time of detection; 0: time(NULL) */
  void *ctx;        /* for the functions above */
};

/* The running system's environment (root "/", real CPUID, uname, sysctl).
 * Call tl__host_env_close() when done. */
int tl__host_env_default(tl__host_env *env);
void tl__host_env_close(tl__host_env *env);
/* The CPUID instruction on x86 (host.c); -1 elsewhere or past the highest
 * leaf. */
int tl__host_cpuid(const tl__host_env *env, uint32_t leaf, uint32_t sub, uint32_t r[4]);

/* Detection against env: the facts of tl_host_detect(), for tests. */
int tl__host_detect_env(const tl__host_env *env, tl_host **out);
/* Fills in what the OS can tell, through env (host_linux.c, host_macos.c). */
int tl__host_detect_os(const tl__host_env *env, tl_host *h);
/* Load averages and running processes now, as KEY.start or KEY.end facts
 * (when = "start" or "end"). */
int tl__host_detect_load(const tl__host_env *env, tl_host *h, const char *when);
/* Adds load.end and procs.running.end to every session of a run, just before
 * they are ended. Failures are not fatal to the run; returns the first. */
int tl__host_record_end(tl_writer *const *writers, size_t n);

/* ------------------------------------------------------------------------ */
/* Host detection: the OS-independent decisions (host_detect.c)              */

/* Reading files under env's root. Each returns 0, or -errno (-ENOENT,
 * -EACCES ...) when the file cannot be read. */
enum { TL_HOST_FILE_MAX = 1 << 20 };
/* The whole file (at most TL_HOST_FILE_MAX bytes), NUL-terminated, in *out;
 * the caller frees it. NUL bytes inside are kept (see *len). */
int tl__host_read(const tl__host_env *env, const char *path, char **out, size_t *len);
/* The first line, without its newline and surrounding blanks. */
int tl__host_read_line(const tl__host_env *env, const char *path, char *buf, size_t len);
/* Is there something at path? 1 yes, 0 no, -errno when it cannot be told. */
int tl__host_exists(const tl__host_env *env, const char *path);
/* "Permission denied" style text for an error from the readers above. */
const char *tl__host_errstr(int neg_errno);

/* The value of "KEY<sep>value" in text (one per line, blanks around sep and
 * quotes around the value dropped); 0 when found. */
int tl__host_keyed(const char *text, const char *key, char sep, char *out, size_t len);

/* The VM verdict from CPUID, DMI, /sys/hypervisor, /proc/xen and the device
 * tree, with its evidence: none / kvm / qemu / oracle / vmware / microsoft /
 * xen / amazon / google / parallels / bhyve / apple / other / unknown. */
int tl__host_detect_vm(const tl__host_env *env, tl_host *h);
/* The cloud from DMI strings, as cloud-init identifies them. */
int tl__host_detect_cloud(const tl__host_env *env, tl_host *h);
/* The container from the files container managers leave. */
int tl__host_detect_container(const tl__host_env *env, tl_host *h);
/* CPUID facts: cpu.brand (x86 only; nothing when there is no CPUID). */
int tl__host_detect_cpuid(const tl__host_env *env, tl_host *h);
/* Everything macOS tells through sysctl (env->sysctl) and uname. */
int tl__host_detect_macos(const tl__host_env *env, tl_host *h);
int tl__host_detect_macos_load(const tl__host_env *env, tl_host *h, const char *when);

#endif
