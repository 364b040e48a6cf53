/* tl_collect.h: the one door into tl's collector: host detection, the timer
 * probes and the session runner behind tlcollect.
 *
 * A run measures one or more requested delays with one probe. Delays are
 * interleaved (0, 50, 0, 50 ...) so that every delay sees the same moments of
 * the host's life; each delay becomes its own session in the store. Samples
 * are kept in memory while timing and written by the runner between timings,
 * so storing adds nothing to a measured interval. */
#ifndef TL_COLLECT_H
#define TL_COLLECT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tl_store.h"

/* ------------------------------------------------------------------------ */
/* Host detection                                                            */

/* Facts about the machine, each with its evidence. Keys are documented in
 * docs/schema.md ("hostname", "os.name", "kernel.release", "cpu.model",
 * "cpu.logical", "mem.total_bytes", "vm", "cloud", "container" ...). A fact
 * that could not be read has the value "unknown", distinct from "none". */
typedef struct tl_host tl_host;

/* Detects the running host. Every fact listed in docs/schema.md is set,
 * to "unknown" when it could not be read. */
int tl_host_detect(tl_host **out);
/* Frees the host; NULL is fine. */
void tl_host_free(tl_host *host);

/* The facts, in a stable order; valid until tl_host_free. */
const tl_fact *tl_host_facts(const tl_host *host, size_t *count);
/* The value of one fact, or NULL when it was not detected. */
const char *tl_host_get(const tl_host *host, const char *key);
/* The stable fingerprint (hex) and the hostname. */
const char *tl_host_fingerprint(const tl_host *host);
const char *tl_host_hostname(const tl_host *host);
/* A label for sessions collected without --label: the cloud, VM or
 * "baremetal", plus the short hostname ("kvm-web1"). */
void tl_host_default_label(const tl_host *host, char *buf, size_t len);
/* Writes the fingerprint, the default label and every fact with its
 * evidence to f: one "key  value  (evidence)" line each, terminal-safe, or
 * (json non-zero) one JSON object {"fingerprint", "default_label",
 * "facts": {KEY: {"value", "evidence"}}}. */
void tl_host_print(const tl_host *host, FILE *f, int json);

/* ------------------------------------------------------------------------ */
/* Probes                                                                    */

typedef struct {
  const char *name;
  const char *summary; /* one line for --list-probes: where the clock starts and stops */
  int ms_only;         /* requested delays must be whole milliseconds */
} tl_probe_info;

/* All probes this build knows, and one by name (NULL when unknown). */
const tl_probe_info *tl_probes(size_t *count);
const tl_probe_info *tl_probe_find(const char *name);

/* ------------------------------------------------------------------------ */
/* Collection                                                                */

enum { TL_MAX_DELAYS = 32 };

typedef struct {
  const char *probe;                /* "settimeout" (default), "uv" ... */
  int64_t delays_ns[TL_MAX_DELAYS]; /* requested delays */
  size_t delay_count;
  int64_t count;       /* samples per delay (0: use duration_ns) */
  int64_t duration_ns; /* total run time when count is 0 */
  int32_t warmup;      /* measured, not stored, per delay */
  int64_t gap_ns;      /* pause between samples */
  int flush_ms;        /* how often samples are committed */
  int progress;        /* show progress on stderr */
  int dry_run;         /* measure and print, store nothing */
  /* What shapes the data; each one that is set is recorded as a session tag
   * (see docs/schema.md) so that reports can flag confounds. */
  int64_t interval_ns; /* period of the periodic probe (0: 1 ms) */
  int32_t concurrency; /* timers in flight at once (uv-based probes; 0 or 1: one) */
  int32_t cpu;         /* pin the measuring thread to this CPU (-1: no) */
  int32_t priority;    /* SCHED_FIFO priority of the measuring thread (0: no) */
  const char *qos;     /* macOS QoS class of the measuring thread: "user-interactive",
                          "user-initiated", "default", "utility", "background" (NULL: as is) */
  int mlock;           /* lock the process's memory (mlockall) */
  int32_t load_cpu;    /* background threads spinning on the CPU */
  int32_t load_mem;    /* background threads streaming through memory */
  /* Where each next timer is armed (node, uv, settimeout): "timer" (from the
   * previous callback, the default), "immediate" (a check-phase callback,
   * setImmediate) or "io" (node: an I/O callback). NULL: the default.
   * Recorded as the tag arm_from for the probes that take it. */
  const char *arm_from;
  /* What the browser probe measures: "nested" (the default), "timeout",
   * "message", "raf" or "background"; recorded as the tag browser_mode. */
  const char *browser_mode;
} tl_collect_opts;

void tl_collect_opts_init(tl_collect_opts *opts);

/* Checks the options against each other and against this host (the probe
 * exists here, the CPU is online, ranges) without touching any store, so a
 * program can reject a bad command line before it opens a database. Returns
 * TL_OK, TL_EINVAL (a mistake in the options) or TL_EUNAVAIL (the probe or
 * the setting does not exist on this system), with a one-line reason in why
 * that names the option. */
int tl_collect_opts_check(const tl_collect_opts *opts, char *why, size_t whylen);

/* The delay a probe measures when it does not take --delays: the periodic
 * probe measures its interval. Returns 0 for probes that take delays. */
int64_t tl_collect_fixed_delay(const tl_collect_opts *opts);

/* Sleeps until uv_hrtime() reaches until_hr, waking early with TL_EINTR when
 * tl_collect_stop() is called (for --repeat N --every TIME). */
int tl_collect_wait_until(uint64_t until_hr);

/* Per-delay outcome of a run, for the closing summary. */
typedef struct {
  int64_t delay_ns;
  int64_t samples;
  int64_t p50_ns, p90_ns, p99_ns, max_ns;
  char session_uuid[37];
} tl_collect_result;

/* Asks a running tl_collect_run() to stop at its next chance; safe to call
 * from a signal handler. */
void tl_collect_stop(void);

/* Runs a collection: for each delay a session with the given spec (probe,
 * delay and warm-up filled in here) is written to store (NULL with dry_run).
 * Returns TL_OK, TL_EINTR when stopped (sessions are then 'interrupted' with
 * every sample measured so far stored), or an error with a message in
 * errbuf. results has room for opts->delay_count entries. */
int tl_collect_run(tl_store *store, const tl_session_spec *spec, const tl_collect_opts *opts,
                   tl_collect_result *results, char *errbuf, size_t errlen);

/* "90 percent of calls took up to 1.17 ms and 50.57 ms (for setTimeout(0)
 * and setTimeout(50) respectively)" for the given results. */
void tl_collect_summary(const char *probe, const tl_collect_result *results, size_t n, int pct,
                        char *buf, size_t len);

#endif /* TL_COLLECT_H */
