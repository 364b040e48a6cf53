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
  int dry_run;         /* measure and print, store nothing: into a scratch database in
                          $TMPDIR, removed before tl_collect_run returns */
  /* What shapes the data; each one that is set is recorded as a session tag
   * (see docs/schema.md) so that reports can flag confounds. */
  int64_t interval_ns; /* period of the periodic probe (0: 1 ms) */
  int32_t concurrency; /* timers in flight at once (uv-based probes; 0 or 1: one) */
  int32_t cpu;         /* pin the measuring thread to this CPU (-1: no) */
  int32_t priority;    /* SCHED_FIFO priority of the measuring thread (0: no) */
  const char *qos;     /* macOS QoS class of the measuring thread: "user-interactive",
                          "user-initiated", "default", "utility", "background" (NULL: as is) */
  int mlock;           /* lock the process's memory (mlockall) */
  int no_causes;       /* read no per-sample causes (the benchmark's baseline) */
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
  /* The most samples the run held in memory at once, waiting for the
   * writer (counted in the queue's chunks of 16384; the same for every
   * delay of a run): bounded whatever the run's length. */
  int64_t queued_peak;
} tl_collect_result;

/* Asks a running tl_collect_run() to stop at its next chance; safe to call
 * from a signal handler. */
void tl_collect_stop(void);

/* Runs a collection: for each delay a session with the given spec (probe,
 * delay and warm-up filled in here) is written to store (NULL with dry_run, which uses a scratch
 * database). Returns TL_OK, TL_EINTR when stopped (sessions are then 'interrupted' with every
 * sample measured so far stored), or an error with a message in errbuf. results has room for
 * opts->delay_count entries. */
int tl_collect_run(tl_store *store, const tl_session_spec *spec, const tl_collect_opts *opts,
                   tl_collect_result *results, char *errbuf, size_t errlen);

/* "90 percent of calls took up to 1.17 ms and 50.57 ms (for setTimeout(0)
 * and setTimeout(50) respectively)" for the given results. */
void tl_collect_summary(const char *probe, const tl_collect_result *results, size_t n, int pct,
                        char *buf, size_t len);

/* ------------------------------------------------------------------------ */
/* A whole command: several probes, repeated (plan.c)                       */

enum { TL_COLLECT_PROBES_MAX = 8, TL_COLLECT_TAGS_MAX = 32 };

/* A --probe list: comma-separated names, except that exec:CMD takes the rest
 * of the list (a command may contain commas). The names point into buf. */
typedef struct {
  char buf[4096];
  const char *names[TL_COLLECT_PROBES_MAX];
  size_t count;
} tl_collect_probe_list;

/* Splits list into out: every name known (tl_probe_find), none twice, none
 * empty. TL_EINVAL with the reason in why. */
int tl_collect_probe_list_parse(const char *list, tl_collect_probe_list *out, char *why,
                                size_t whylen);

/* The options one probe of a list runs with (o), from the command's (base):
 * the periodic probe measures its interval instead of the delays, and only
 * it takes an interval. */
void tl_collect_probe_opts(const tl_collect_opts *base, const char *probe, tl_collect_opts *o);

/* Everything one tlcollect command asks to collect. Strings point into the
 * caller's arguments, which must outlive the plan. */
typedef struct {
  tl_collect_opts opts;         /* shared by every probe (see tl_collect_probe_opts) */
  const char *label;            /* NULL: the host's default label */
  const char *delays;           /* --delays as given ("0,50") */
  const char *probe_list;       /* --probe as given ("settimeout") */
  tl_collect_probe_list probes; /* probe_list split, by tl_collect_plan_check */
  int64_t repeat;               /* runs of every probe (1) */
  int64_t every_ns;             /* run r starts at first + r * every_ns (0: at once) */
  int have_count, have_duration, have_delays;
  const char *tag_keys[TL_COLLECT_TAGS_MAX], *tag_values[TL_COLLECT_TAGS_MAX];
  char tag_bufs[TL_COLLECT_TAGS_MAX][TL_TAG_KEY_MAX + TL_TAG_VALUE_MAX + 2];
  size_t tag_count;
} tl_collect_plan;

void tl_collect_plan_init(tl_collect_plan *p);
/* Sets one option from tlcollect's long name ("count", "delays", "tag" ...)
 * and its value (NULL for a switch such as "mlock"). Values are checked on
 * their own here (the delays and the probe list later, together); a bare
 * number for "duration" or "every" is accepted as seconds with a warning.
 * TL_EINVAL with the reason (without the option's name) in why. */
int tl_collect_plan_set(tl_collect_plan *p, const char *option, const char *value, char *why,
                        size_t whylen);
/* Checks the options against each other and every probe against this host,
 * before any database is opened. Returns TL_OK, TL_EINVAL (a mistake in the
 * command) or TL_EUNAVAIL (what the probe needs is missing), with a
 * one-line "--OPTION: reason" in why. */
int tl_collect_plan_check(tl_collect_plan *p, char *why, size_t whylen);
/* "probe uv, delays 0,50 ms, 1000 samples each" (after the check). */
void tl_collect_plan_describe(const tl_collect_plan *p, char *buf, size_t len);

/* When run number run (0 the first) of --repeat starts: first_hr + run *
 * every_ns, in uv_hrtime() nanoseconds. A run that is late starts at once. */
uint64_t tl_collect_repeat_start(uint64_t first_hr, int64_t run, int64_t every_ns);

/* Called after each probe's run with what it measured (n results). */
typedef void (*tl_collect_result_cb)(void *ctx, const char *probe, const tl_collect_result *results,
                                     size_t n);
/* Runs every probe of the checked plan in turn, repeat times, each run
 * under a new run UUID; spec gives the host, label and command line (its
 * run UUID and tags come from the plan). *samples counts every sample
 * measured. Returns TL_OK; TL_EINTR when stopped (the samples so far are
 * stored, the message in err says so); or the first error, its message in
 * err. */
int tl_collect_plan_run(const tl_collect_plan *p, tl_store *store, const tl_session_spec *spec,
                        tl_collect_result_cb on_result, void *ctx, int64_t *samples, char *err,
                        size_t errlen);

/* ------------------------------------------------------------------------ */
/* What tlcollect says while a plan runs (output.c)                         */

/* The closing sentence of one probe's run on stdout, "LABEL: 90 percent of
 * calls took up to ...": a tl_collect_result_cb whose ctx is the label. A
 * failed write is left to tl_cli_finish. */
void tl_collect_print_result(void *label, const char *probe, const tl_collect_result *results,
                             size_t n);
/* The log lines written instead of progress (stderr no terminal), each with
 * the UTC time: the plan (after its check) and the database at path as it
 * starts; how it ended (err from tl_collect_plan_run), with its samples and
 * seconds. */
void tl_collect_log_start(const tl_collect_plan *p, const char *path);
void tl_collect_log_end(const tl_collect_plan *p, int err, int64_t samples, double secs);

#endif /* TL_COLLECT_H */
