/* causes_internal.h: what the collector knows about why a sample was late.
 *
 * Three parts, each in its own file:
 * - limits.c: the cgroup this process runs in (v1 or v2, found from
 *   /proc/self/cgroup and the mount table) and the limits it puts on the
 *   process: a CPU quota, a cpuset, a memory limit; recorded as host facts.
 * - counters.c: the per-second counters of a session (steal, IRQ and softirq
 *   time, context switches, runnable threads, PSI CPU pressure, the cgroup's
 *   throttling, CPU frequency), their parsers and the bounded series they
 *   are kept in.
 * - causes_linux.c / causes_macos.c: what the measuring thread reads about
 *   itself just before arming a timer and just after reading the wake-up
 *   clock (run-queue wait, involuntary switches, its CPU), outside the timed
 *   interval.
 * Every reader takes a tl__host_env, so tests run them on fixture trees. */
#ifndef TL_CAUSES_INTERNAL_H
#define TL_CAUSES_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "collect_internal.h"

/* ------------------------------------------------------------------------ */
/* The cgroup and its limits (limits.c)                                      */

enum { TL_CGROUP_PATH_MAX = 1024 };

typedef struct {
  int version;                         /* of the cpu controller: 1 or 2; 0 when none was found */
  char cpu_dir[TL_CGROUP_PATH_MAX];    /* its folder, relative to the root ("" none) */
  char cpuset_dir[TL_CGROUP_PATH_MAX]; /* the cpuset controller's folder ("" none) */
  char memory_dir[TL_CGROUP_PATH_MAX]; /* the memory controller's folder ("" none) */
  char cpu_mount[TL_CGROUP_PATH_MAX];  /* where the cpu hierarchy is mounted: the walk up stops */
  char memory_mount[TL_CGROUP_PATH_MAX];
} tl__cgroup;

/* Finds this process's cgroup from proc/self/cgroup and proc/self/mountinfo
 * under env's root. TL_ENOTFOUND (cg->version 0) when there is none to be
 * seen. */
int tl__cgroup_find(const tl__host_env *env, tl__cgroup *cg);

/* The CPU quota of v2's cpu.max ("max 100000", "20000 100000"): quota and
 * period in microseconds, *quota_us -1 for no limit. TL_EINVAL if bad. */
int tl__parse_cpu_max(const char *text, int64_t *quota_us, int64_t *period_us);
/* The number of CPUs in a kernel CPU list ("0-3,8"); -1 when it is not one. */
long tl__cpu_list_count(const char *list);

/* The facts cgroup.version, cgroup.cpu_quota (CPUs, "0.2", or "none"),
 * cgroup.cpuset, cgroup.cpus (the whole CPUs the limits leave: the cpuset's
 * count and the quota rounded up, the smaller; "none"), cgroup.memory_limit_bytes
 * ("none" when unlimited) and cpu.steal_seen (yes/no: the hypervisor took
 * time from this guest since boot). A quota or memory limit set on a parent
 * cgroup limits too: the smallest on the way up to the mount is taken. */
int tl__host_detect_limits(const tl__host_env *env, tl_host *h);

/* ------------------------------------------------------------------------ */
/* Per-second counters (counters.c)                                          */

/* Totals since boot (or the cgroup's creation), read at one moment. A
 * counter that could not be read is -1. */
typedef struct {
  int64_t steal_ns, irq_ns, softirq_ns; /* /proc/stat, summed over the CPUs */
  int64_t ctxt;                         /* /proc/stat ctxt: context switches */
  int64_t procs_running;                /* /proc/stat: runnable threads now (not a total) */
  int64_t psi_some_us;                  /* /proc/pressure/cpu "some" total */
  int64_t nr_periods, nr_throttled;     /* cgroup cpu.stat */
  int64_t throttled_ns;                 /* cgroup cpu.stat throttled_time (v1) / _usec (v2) */
  int64_t freq_khz;                     /* CPU 0's current frequency now (not a total) */
} tl__counters;

/* The ticks of /proc/stat's per-CPU lines summed (steal, irq, softirq, as
 * ns at ticks_per_s), ctxt and procs_running. Fields missing stay -1. */
int tl__parse_proc_stat(const char *text, long ticks_per_s, tl__counters *c);
/* The "some" line's total= of /proc/pressure/cpu; TL_EINVAL when absent. */
int tl__parse_psi_cpu(const char *text, int64_t *some_total_us);
/* nr_periods, nr_throttled and throttled_time (v1, ns) or throttled_usec
 * (v2) of a cgroup's cpu.stat; TL_EINVAL when none is there. */
int tl__parse_cpu_stat(const char *text, tl__counters *c);
/* The second field of a schedstat line ("run_ns wait_ns slices"): time
 * spent runnable, waiting for a CPU. TL_EINVAL when bad. */
int tl__parse_schedstat(const char *text, int64_t *run_ns, int64_t *wait_ns);

/* Reads every counter now, under env's root, for the cgroup cg (may be
 * NULL). Counters that cannot be read are -1. */
void tl__counters_read(const tl__host_env *env, const tl__cgroup *cg, tl__counters *c);

/* A session's counters as a series of intervals, bounded: when it is full,
 * neighbouring intervals merge and each next one covers twice the time, so
 * that a week-long session keeps as many rows as a five-minute one. */
enum { TL_COUNTER_ROWS_MAX = 2048 };
typedef struct {
  tl_counter_row rows[TL_COUNTER_ROWS_MAX];
  size_t n;
  int64_t span_ms; /* the time each new row covers */
  int64_t start_ns;
  tl__counters last;
  int64_t last_ns;
  int have_last;
  tl_counter_row open; /* the row being filled */
  int open_used;
} tl__counter_series;

void tl__counter_series_init(tl__counter_series *s, int64_t start_ns, int64_t span_ms);
/* Adds the counters read at now_ns: the differences since the previous
 * reading go into the row being filled. */
void tl__counter_series_add(tl__counter_series *s, int64_t now_ns, const tl__counters *c);
/* Closes the row being filled, if any. */
void tl__counter_series_finish(tl__counter_series *s);

/* ------------------------------------------------------------------------ */
/* What the measuring thread reads about itself (causes_linux.c / _macos.c)  */

/* The thread's own state at one moment. A field the OS does not give is -1. */
typedef struct {
  int64_t runq_wait_ns; /* total time runnable but waiting for a CPU */
  int64_t nivcsw;       /* involuntary context switches */
  int32_t cpu;          /* the CPU it runs on */
} tl__self_mark;

typedef struct tl__self tl__self;
/* Opens what the calling thread reads about itself (an open schedstat file
 * on Linux); NULL when nothing can be read at all. Free with
 * tl__self_close, on the same thread. */
tl__self *tl__self_open(void);
void tl__self_close(tl__self *s);
/* Reads the thread's state now; cheap enough for every sample (on Linux a
 * pread and sched_getcpu, and a getrusage when the run-queue wait grew). */
void tl__self_read(tl__self *s, tl__self_mark *m);
/* What this OS measures, for the documentation fact probe.causes. */
const char *tl__self_measures(void);

/* ------------------------------------------------------------------------ */
/* The runner's side (causes.c)                                              */

/* One sample's causes as the runner queues them beside its latency: the
 * run-queue wait in microseconds (TL__CAUSE_NONE: not measured), the
 * involuntary switches (capped) and whether it migrated. */
enum { TL__CAUSE_NONE = 0xffffffffu };
typedef struct {
  uint32_t runq_us;
  uint16_t nivcsw;
  int8_t migrated;
} tl__cause_cell;

/* The measuring thread's reads around its samples. */
typedef struct {
  tl__self *self; /* NULL: causes are not read in this run */
  tl__self_mark before;
  int armed;           /* before holds the read of the sample in flight */
  tl__self_mark after; /* the last sample's read after its wake-up ... */
  int64_t after_ns;    /* ... and when (0: none) */
} tl__causes;
/* A read after a wake-up still serves as the next sample's read before
 * arming when the next timer is armed within this long: the thread did not
 * wait for a CPU in between (that would have taken longer), and each sample
 * then costs one read instead of two. */
enum { TL__CAUSE_REUSE_NS = 20000 };

/* Opens the reads on the calling (measuring) thread when the probe times on
 * it, one timer at a time, and off is not set; leaves c->self NULL
 * otherwise. */
void tl__causes_open(tl__causes *c, int probe_flags, int32_t concurrency, int off);
void tl__causes_close(tl__causes *c);
/* Just before a sample is armed; just after its wake-up clock was read. */
void tl__causes_before(tl__causes *c);
tl__cause_cell tl__causes_after(tl__causes *c);

/* What is kept of one session's causes until its samples are committed:
 * the slowest TL__CAUSE_KEEP_PCT per cent of each piece handed over (at
 * least one), and the sums over every sample. */
enum { TL__CAUSE_KEEP_PCT = 3 };
typedef struct {
  tl_cause *pending;
  size_t n, cap;
  tl_cause_sums sums;
  int failed;      /* a store failed: causes of the session are incomplete */
  int64_t last_ms; /* when they were last stored (0: not yet) */
} tl__cause_keep;
/* Whether it is time to store what is pending: every TL__CAUSE_STORE_MS, or
 * sooner when TL__CAUSE_PENDING_MAX wait. Each transaction of a SQLite file
 * in WAL mode writes whole pages, so the causes go in rarely, not with
 * every flush of samples; at the end of a run the rest goes in after the
 * sessions have ended (their final status comes first). */
enum { TL__CAUSE_STORE_MS = 60000, TL__CAUSE_PENDING_MAX = 8192 };
int tl__cause_keep_due(tl__cause_keep *k, int64_t now_ms);
/* Keeps the causes of samples first_index.. (n latencies and cells). */
void tl__cause_keep_piece(tl__cause_keep *k, int64_t first_index, const int64_t *latency_ns,
                          const tl__cause_cell *cells, size_t n);
/* Stores what is pending for the session, after its samples were committed. */
int tl__cause_keep_store(tl__cause_keep *k, tl_store *store, int64_t session_id);
void tl__cause_keep_free(tl__cause_keep *k);

/* The counters of a run, read by the writer thread about once a second. */
typedef struct {
  tl__host_env env;
  int env_open;
  tl__cgroup cg;
  tl__counter_series *series; /* NULL: out of memory, none kept */
} tl__counter_clock;
void tl__counter_clock_open(tl__counter_clock *k, int64_t start_ns);
void tl__counter_clock_tick(tl__counter_clock *k, int64_t now_ns);
/* Closes the series and stores it on the session; TL_OK when there is none. */
int tl__counter_clock_store(tl__counter_clock *k, tl_store *store, int64_t session_id);
void tl__counter_clock_close(tl__counter_clock *k);

#endif
