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
  const char *arm_from;     /* tl__arm_from(opts), told to the probe */
  const char *browser_mode; /* tl__browser_mode(opts) */
};

const struct tl__run_view *tl__run_view(const tl__run *run);
/* The index of the delay to measure next, -1 when the run is over, or
 * TL__RUN_WAIT when samples wait for the writer and this probe still has
 * others in flight: it should arm nothing now and call again shortly (the
 * uv probes retry in 1 ms), so that no sample in flight includes a pause.
 * With nothing in flight the call itself waits for room, between samples. */
enum { TL__RUN_WAIT = -2 };
/* How many samples may wait for the writer before the runner pauses: the
 * queue's bound (tl_collect_result.queued_peak stays within it, plus one
 * chunk being filled per delay). */
enum { TL__RUN_CHUNK_SAMPLES = 16384, TL__RUN_QUEUE_CHUNKS = 64 };
int tl__run_next(tl__run *run);
/* How many times the run paused for the writer so far: a probe keeping a
 * schedule (periodic) starts it afresh after a pause. */
int64_t tl__run_pauses(const tl__run *run);
/* A probe that measures on its own schedule and reports afterwards (a child
 * streaming its samples) calls tl__run_next for each sample it has read: the
 * pause then falls between reads, the child's pipe fills, and the child
 * blocks in its write or waits for its pipe to drain, between its samples
 * (README, "Writing a probe"). */
void tl__run_record(tl__run *run, int index, int64_t latency_ns);
/* The same for a sample whose causes the child measured itself (protocol
 * 2's optional fields; -1 for one not sent). */
void tl__run_record_causes(tl__run *run, int index, int64_t latency_ns, int64_t runq_ns,
                           int64_t nivcsw, int64_t migrated);
/* A fact the probe learnt about what it measured (its runtime's version, its
 * clock's resolution ...), stored on every session of the run as the host
 * fact "probe.KEY" when the run ends. Measuring thread only. */
int tl__run_fact(tl__run *run, const char *key, const char *value, const char *evidence);
/* Periods the probe found it had skipped (periodic probes). */
void tl__run_missed(tl__run *run, int index, int64_t missed);
/* Non-zero once a stop was asked for (signal or error). */
int tl__run_stopping(const tl__run *run);
/* A handle a uv probe may wake with uv_async_send() to notice a stop. */
void tl__run_set_wakeup(tl__run *run, void (*wake)(void *), void *arg);

/* How a probe may be driven, for tl_collect_opts_check. */
enum {
  TL__PROBE_CONCURRENT = 1 << 0, /* takes --concurrency */
  TL__PROBE_PERIODIC = 1 << 1,   /* measures --interval, not --delays */
  TL__PROBE_PREFIX = 1 << 2,     /* the name is a prefix: "exec:" + command */
  TL__PROBE_CAUSES = 1 << 3,     /* times on the runner's thread: its causes can be read */
};

/* How to run a probe; what it times is its entry in the catalogue
 * (tl_probe_about_find(name)). */
typedef struct {
  const char *name; /* as the catalogue names it ("exec:CMD" for every exec:) */
  /* Measures until tl__run_next says stop. Returns TL_OK or an error with a
   * one-line message in err. */
  int (*run)(tl__run *run, char *err, size_t errlen);
  int flags; /* TL__PROBE_* */
  /* The --arm-from contexts it takes, comma-separated, the default first;
   * NULL when it takes none. */
  const char *arm_contexts;
  /* NULL, or what must work before any session exists (a child process
   * started and its hello read): TL_OK, or an error with a one-line message
   * in err and nothing left running. After a start, the runner calls either
   * run or, when it cannot go on, abandon. */
  int (*start)(tl__run *run, char *err, size_t errlen);
  void (*abandon)(tl__run *run);
} tl__probe;

/* What a probe's start hands to its run (NULL before a start). */
void *tl__run_probe_state(const tl__run *run);
void tl__run_set_probe_state(tl__run *run, void *state);

/* The arming context a run uses: --arm-from, else the probe's default;
 * NULL for probes without contexts. */
const char *tl__arm_from(const tl_collect_opts *o);
/* The browser probe's mode: --browser-mode, else "nested". */
const char *tl__browser_mode(const tl_collect_opts *o);

const tl__probe *tl__probe_lookup(const char *name);

/* The probes, one file per family (probes.c keeps the registry). */
int tl__probe_nanosleep(tl__run *run, char *err, size_t errlen); /* probe_sleep.c */
int tl__probe_periodic(tl__run *run, char *err, size_t errlen);
/* The child probes (probe_child.c): each start runs its program and reads
 * its hello; one run and one abandon serve them all. */
int tl__probe_node_start(tl__run *run, char *err, size_t errlen);
int tl__probe_exec_start(tl__run *run, char *err, size_t errlen);
int tl__probe_browser_start(tl__run *run, char *err, size_t errlen);
int tl__probe_child_run(tl__run *run, char *err, size_t errlen);
void tl__probe_child_abandon(tl__run *run);

/* The command exec:CMD runs (exec_command.c): CMD with every argument that
 * is a plain file name, not found relative to the current folder but found
 * among tl's shipped probes (tl_data_path "probes/NAME"), replaced by the
 * shipped copy's path, quoted for the shell. shipped lists those paths,
 * comma-separated ("" when none), for the session tag exec_shipped. When
 * CMD's first word is a plain name that is no shell builtin and not in
 * PATH, or a path that is not an executable file, TL_EUNAVAIL with a
 * one-line reason; TL_EINVAL when the result does not fit. */
typedef struct {
  char command[8192];
  char shipped[TL_TAG_VALUE_MAX + 1];
} tl__exec_resolved;
int tl__exec_command(const char *cmd, tl__exec_resolved *out, char *why, size_t whylen);
/* Finds an executable file name in PATH, into out; 0 when there is none. */
int tl__find_in_path(const char *name, char *out, size_t len);
/* What a child probe needs: node in PATH, the probe's script (installed next
 * to the program, else in the source tree) and, for browser, a Chromium in
 * PATH. probe is "node" or "browser". TL_EUNAVAIL with a message when one is
 * missing. */
typedef struct {
  char node[4096], script[4096], browser[4096];
} tl__child_paths;
int tl__child_locate(const char *probe, tl__child_paths *p, char *err, size_t errlen);

/* Sleeps for ns on the monotonic clock in the calling thread, waking early
 * when the run is stopping (for --gap in probes that do not use libuv). */
void tl__run_pause(tl__run *run, int64_t ns);

/* The session tags that record the options shaping the data (options.c):
 * interval_ns, concurrency, load, priority, cpu, mlock, each only when set,
 * arm_from for every probe that takes --arm-from, and exec_shipped when an
 * exec: command runs one of tl's shipped probe scripts. */
enum { TL__OPT_TAGS_MAX = 14 };
typedef struct {
  const char *keys[TL__OPT_TAGS_MAX];
  const char *values[TL__OPT_TAGS_MAX];
  char bufs[TL__OPT_TAGS_MAX][32];
  char shipped[TL_TAG_VALUE_MAX + 1]; /* exec_shipped: the shipped probes an exec: command runs */
  size_t n;
} tl__opt_tags;
int tl__opts_tags(const tl_collect_opts *o, tl__opt_tags *tags);

/* ------------------------------------------------------------------------ */
/* The closing sentence's numbers (summary.c)                                */

/* Calls fn with every sample of a session, in blocks; the same samples on
 * every call. Returns TL_OK or an error (fn's non-zero return stops it). */
typedef int (*tl__replay_fn)(void *src, tl_samples_cb fn, void *ctx);
/* Fills r's samples, p50_ns, p90_ns, p99_ns and max_ns (nearest rank,
 * exact) by reading the samples a few times through replay, in a few MiB
 * whatever their number. On failure returns the error with a reason in err. */
int tl__summarize(tl__replay_fn replay, void *src, tl_collect_result *r, char *err, size_t errlen);

/* ------------------------------------------------------------------------ */
/* The child-probe line protocol (protocol.c; documented in the README)      */

typedef enum {
  TL__MSG_SKIP,   /* a blank line or a "# comment" */
  TL__MSG_HELLO,  /* "hello VERSION": the first line; value = version */
  TL__MSG_SAMPLE, /* "sample NS [runq=NS] [nivcsw=N] [migrated=0|1]": value = nanoseconds
                     from arming to the callback; the optional causes in runq_ns ... */
  TL__MSG_ERROR,  /* "error TEXT": the child gives up; text/text_len point into line */
  TL__MSG_FACT,   /* "fact KEY VALUE": what the child learnt (its runtime's version ...);
                     key/key_len and text/text_len (the value) point into line */
} tl__msg_kind;

typedef struct {
  tl__msg_kind kind;
  int64_t value;
  const char *text;
  size_t text_len;
  const char *key;
  size_t key_len;
  int64_t runq_ns, nivcsw, migrated; /* a sample's optional causes; -1 when not sent */
} tl__msg;

/* A fact's key: 1..32 of [a-z0-9._-]; its value: at most 256 bytes. */
enum { TL__PROTOCOL_FACT_KEY_MAX = 32, TL__PROTOCOL_FACT_VALUE_MAX = 256 };

/* The newest version tl speaks; every version from 1 up is understood. */
enum { TL__PROTOCOL_VERSION = 2, TL__PROTOCOL_LINE_MAX = 4096 };

/* Parses one line from a child probe: len bytes, without the newline (a
 * trailing CR is allowed), not necessarily NUL-terminated, any bytes at all.
 * Returns TL_OK with *msg filled, or TL_EINVAL with a reason in why. Reads
 * nothing outside [line, line + len); safe to fuzz. */
int tl__protocol_parse_line(const char *line, size_t len, tl__msg *msg, char *why, size_t whylen);
/* Version 2's one request, "plan D1,D2,... COUNT GAP_NS\n" (delays in ns,
 * COUNT samples per delay or 0 for "until your stdin closes"), into buf.
 * Returns its length, or -1 when a value is negative or it does not fit in
 * buf or in one protocol line. */
int tl__protocol_plan(char *buf, size_t len, const int64_t *delays_ns, size_t n, int64_t count,
                      int64_t gap_ns);

/* ------------------------------------------------------------------------ */
/* Background load (load.c)                                                  */

typedef struct tl__load tl__load;

/* Starts cpu spinning and mem streaming threads (either may be 0); *out is
 * NULL when both are 0. Stop and free with tl__load_stop (NULL is fine). */
int tl__load_start(int cpu_threads, int mem_threads, tl__load **out, char *err, size_t errlen);
void tl__load_stop(tl__load *load);

/* ------------------------------------------------------------------------ */
/* The measuring thread's settings (tune.c)                                  */

/* Applies --cpu, --qos, --priority and --mlock to the calling thread (and the
 * process, for mlock), remembering how things were. On failure nothing stays
 * changed and err says what was refused and what to do. */
typedef struct {
  int pinned, fifo, locked, qos_set;
  int old_policy;
  int old_priority;
  int old_qos;
} tl__tune;

int tl__tune_apply(tl__tune *t, const tl_collect_opts *o, char *err, size_t errlen);
void tl__tune_restore(tl__tune *t);
/* Called first thing by every helper thread tl starts (writer, load): it must
 * not inherit the measuring thread's CPU or real-time priority. */
void tl__tune_release_self(void);

/* ------------------------------------------------------------------------ */
/* OS-specific pieces (os_linux.c, os_macos.c ...)                           */

/* 1 if cpu is online and this process may run on it, 0 if not, TL_EUNAVAIL
 * when the system cannot pin threads. */
int tl__os_cpu_usable(int cpu);
/* Pins the calling thread to cpu / lets it run on every CPU it could run on
 * before the first pin. */
int tl__os_pin_self(int cpu, char *err, size_t errlen);
void tl__os_unpin_self(void);
/* Sleeps on CLOCK_MONOTONIC: for ns, or until the instant ns when absolute
 * (clock_nanosleep with TIMER_ABSTIME where there is one). Returns 0 or an
 * errno value (EINTR when a signal handler ran). */
int tl__os_sleep(int absolute, int64_t ns);
/* Now on the clock libuv's uv_hrtime keeps, in nanoseconds, so that probes
 * and the loop agree: CLOCK_MONOTONIC on Linux, mach_continuous_time on
 * macOS. tl__os_sleep counts in it. */
int64_t tl__os_mono_ns(void);
/* QoS classes (macOS): on Apple Silicon a thread's class decides whether it
 * runs on performance or efficiency cores. The values are <sys/qos.h>'s, so
 * that the options and their tests know them on every OS. */
enum {
  TL_QOS_UNSPECIFIED = 0x00,
  TL_QOS_BACKGROUND = 0x09,
  TL_QOS_UTILITY = 0x11,
  TL_QOS_DEFAULT = 0x15,
  TL_QOS_USER_INITIATED = 0x19,
  TL_QOS_USER_INTERACTIVE = 0x21
};
/* "user-interactive" ... "unspecified" for a class, NULL for another value;
 * and back, -1 for a name that is not a class one can ask for (options.c). */
const char *tl__qos_name(int cls);
int tl__qos_parse(const char *name);
/* The calling thread's QoS class, -1 where the OS has none (Linux). */
int tl__os_qos_get(void);
/* Puts the calling thread in QoS class cls; TL_EUNAVAIL where there are
 * none, with a one-line reason in err. */
int tl__os_qos_set(int cls, char *err, size_t errlen);
/* The timerfd probe, or TL_EUNAVAIL where there is no timerfd. */
int tl__os_timerfd_available(void);
int tl__probe_timerfd(tl__run *run, char *err, size_t errlen);

/* ------------------------------------------------------------------------ */
/* Host detection                                                            */

enum { TL_HOST_MAX_FACTS = 128 };

struct tl_host {
  tl_fact facts[TL_HOST_MAX_FACTS];
  size_t count;
  char fingerprint[65];
};

/* Adds or replaces a fact (host_facts.c); copies the strings. The value is stored safely:
 * control characters and bytes that are not UTF-8 become "\xNN", leading and
 * trailing blanks go, and it is cut at TL_HOST_VALUE_MAX bytes. A NULL value
 * is "unknown". */
enum { TL_HOST_VALUE_MAX = 512 };
int tl__host_set(tl_host *h, const char *key, const char *value, const char *evidence);
/* Frees every fact of h, leaving it empty (for a tl_host that is not
 * allocated on its own). */
void tl__host_clear(tl_host *h);
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
  /* What /usr/bin/pmset -g ARG prints (macOS; ARG "" for the power settings,
   * "ps" for the power source), NUL-terminated in out; non-zero when it
   * cannot be had. NULL: unknown. */
  int (*pmset)(const tl__host_env *env, const char *arg, char *out, size_t len);
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
/* What every OS's tl__host_env_default starts from (host_env.c): root "/", the
 * CPUID instruction, uname(3); the rest unset. TL_ESYS when / cannot be
 * opened. */
int tl__host_env_open(tl__host_env *env);
/* The CPUID instruction on x86 (host_env.c); -1 elsewhere or past the highest
 * leaf. */
int tl__host_cpuid(const tl__host_env *env, uint32_t leaf, uint32_t sub, uint32_t r[4]);

/* Detection against env: the facts of tl_host_detect(), for tests. */
int tl__host_detect_env(const tl__host_env *env, tl_host **out);
/* Fills in what the OS can tell, through env (host_linux.c; on macOS
 * os_macos.c hands it to host_macos.c). */
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
/* The fact "vm" from the CPUID hypervisor signature alone (for macOS, which
 * has no DMI): TL_OK when CPUID names a hypervisor, TL_ENOTFOUND (nothing
 * set) when it does not or there is no CPUID. */
int tl__host_vm_from_cpuid(const tl__host_env *env, tl_host *h);

/* ------------------------------------------------------------------------ */
/* Host detection: what macOS tells (host_macos.c)                           */

/* Everything macOS tells through sysctl (env->sysctl), pmset (env->pmset)
 * and uname: tl__host_detect_os and tl__host_detect_load on macOS. Plain C,
 * in the library on macOS only; tests compile it in on every OS. */
int tl__host_detect_macos(const tl__host_env *env, tl_host *h);
int tl__host_detect_macos_load(const tl__host_env *env, tl_host *h, const char *when);

#endif
