/* collect_internal.h: how the session runner and the probes talk, and how
 * host detection is split between common code and one file per OS. */
#ifndef TL_COLLECT_INTERNAL_H
#define TL_COLLECT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

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

/* How a probe may be driven, for tl_collect_opts_check. */
enum {
  TL__PROBE_CONCURRENT = 1 << 0, /* takes --concurrency */
  TL__PROBE_PERIODIC = 1 << 1,   /* measures --interval, not --delays */
  TL__PROBE_PREFIX = 1 << 2,     /* the name is a prefix: "exec:" + command */
};

typedef struct {
  tl_probe_info info;
  /* Measures until tl__run_next says stop. Returns TL_OK or an error with a
   * one-line message in err. */
  int (*run)(tl__run *run, char *err, size_t errlen);
  int flags; /* TL__PROBE_* */
} tl__probe;

const tl__probe *tl__probe_lookup(const char *name);

/* The probes, one file per family (probes.c keeps the registry). */
int tl__probe_nanosleep(tl__run *run, char *err, size_t errlen); /* probe_sleep.c */
int tl__probe_periodic(tl__run *run, char *err, size_t errlen);
int tl__probe_node(tl__run *run, char *err, size_t errlen); /* probe_child.c */
int tl__probe_exec(tl__run *run, char *err, size_t errlen);
/* Finds node in PATH and tl-node-probe.js (installed next to the program,
 * else in the source tree); TL_EUNAVAIL with a message when either is
 * missing. */
int tl__node_locate(char *node, size_t nodelen, char *script, size_t scriptlen, char *err,
                    size_t errlen);

/* Sleeps for ns on the monotonic clock in the calling thread, waking early
 * when the run is stopping (for --gap in probes that do not use libuv). */
void tl__run_pause(tl__run *run, int64_t ns);

/* The session tags that record the options shaping the data (options.c):
 * interval_ns, concurrency, load, priority, cpu, mlock, each only when set. */
enum { TL__OPT_TAGS_MAX = 8 };
typedef struct {
  const char *keys[TL__OPT_TAGS_MAX];
  const char *values[TL__OPT_TAGS_MAX];
  char bufs[TL__OPT_TAGS_MAX][32];
  size_t n;
} tl__opt_tags;
int tl__opts_tags(const tl_collect_opts *o, tl__opt_tags *tags);

/* ------------------------------------------------------------------------ */
/* The child-probe line protocol (protocol.c; documented in the README)      */

typedef enum {
  TL__MSG_SKIP,   /* a blank line or a "# comment" */
  TL__MSG_HELLO,  /* "hello VERSION": the first line; value = version */
  TL__MSG_SAMPLE, /* "sample NS": value = nanoseconds from arming to the callback */
  TL__MSG_ERROR,  /* "error TEXT": the child gives up; text/text_len point into line */
} tl__msg_kind;

typedef struct {
  tl__msg_kind kind;
  int64_t value;
  const char *text;
  size_t text_len;
} tl__msg;

enum { TL__PROTOCOL_VERSION = 1, TL__PROTOCOL_LINE_MAX = 4096 };

/* Parses one line from a child probe: len bytes, without the newline (a
 * trailing CR is allowed), not necessarily NUL-terminated, any bytes at all.
 * Returns TL_OK with *msg filled, or TL_EINVAL with a reason in why. Reads
 * nothing outside [line, line + len); safe to fuzz. */
int tl__protocol_parse_line(const char *line, size_t len, tl__msg *msg, char *why, size_t whylen);

/* ------------------------------------------------------------------------ */
/* Background load (load.c)                                                  */

typedef struct tl__load tl__load;

/* Starts cpu spinning and mem streaming threads (either may be 0); *out is
 * NULL when both are 0. Stop and free with tl__load_stop (NULL is fine). */
int tl__load_start(int cpu_threads, int mem_threads, tl__load **out, char *err, size_t errlen);
void tl__load_stop(tl__load *load);

/* ------------------------------------------------------------------------ */
/* The measuring thread's settings (tune.c)                                  */

/* Applies --cpu, --priority and --mlock to the calling thread (and the
 * process, for mlock), remembering how things were. On failure nothing stays
 * changed and err says what was refused and what to do. */
typedef struct {
  int pinned, fifo, locked;
  int old_policy;
  int old_priority;
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
/* CLOCK_MONOTONIC now, in nanoseconds: the clock tl__os_sleep counts in. */
int64_t tl__os_mono_ns(void);
/* The timerfd probe, or TL_EUNAVAIL where there is no timerfd. */
int tl__os_timerfd_available(void);
int tl__probe_timerfd(tl__run *run, char *err, size_t errlen);
/* The absolute path of the running executable into buf; TL_OK or an error. */
int tl__os_exe_path(char *buf, size_t len);

/* ------------------------------------------------------------------------ */
/* Host detection                                                            */

enum { TL_HOST_MAX_FACTS = 128 };

struct tl_host {
  tl_fact facts[TL_HOST_MAX_FACTS];
  size_t count;
  char fingerprint[65];
};

/* Adds or replaces a fact; copies the strings. */
int tl__host_set(tl_host *h, const char *key, const char *value, const char *evidence);
/* Fills in what the running OS can tell (host_linux.c, host_macos.c ...). */
int tl__host_detect_os(tl_host *h);

#endif
