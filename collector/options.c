/* options.c: checking a collection's options against each other and this
 * host before anything is measured or stored, and turning the options that
 * shape the data into session tags (so that a report can tell a loaded,
 * pinned, real-time or background session from a plain one). */
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "collect_internal.h"

enum { INTERVAL_DEFAULT_NS = 1000000 };

static const struct {
  int cls;
  const char *name;
} qos_classes[] = {{TL_QOS_USER_INTERACTIVE, "user-interactive"},
                   {TL_QOS_USER_INITIATED, "user-initiated"},
                   {TL_QOS_DEFAULT, "default"},
                   {TL_QOS_UTILITY, "utility"},
                   {TL_QOS_BACKGROUND, "background"},
                   {TL_QOS_UNSPECIFIED, "unspecified"}};
enum { QOS_ASKABLE = 5 }; /* the first five: "unspecified" is only ever read */

const char *tl__qos_name(int cls) {
  for (size_t i = 0; i < sizeof qos_classes / sizeof qos_classes[0]; i++)
    if (qos_classes[i].cls == cls)
      return qos_classes[i].name;
  return NULL;
}

int tl__qos_parse(const char *name) {
  for (size_t i = 0; name && i < QOS_ASKABLE; i++)
    if (strcmp(qos_classes[i].name, name) == 0)
      return qos_classes[i].cls;
  return -1;
}

int64_t tl_collect_fixed_delay(const tl_collect_opts *o) {
  const tl__probe *p = tl__probe_lookup(o->probe);
  if (!p || !(p->flags & TL__PROBE_PERIODIC))
    return 0;
  return o->interval_ns > 0 ? o->interval_ns : INTERVAL_DEFAULT_NS;
}

/* Is word one of the comma-separated items of list? */
static int in_list(const char *list, const char *word) {
  size_t n = strlen(word);
  while (n && *list) {
    size_t k = strcspn(list, ",");
    if (k == n && strncmp(list, word, n) == 0)
      return 1;
    list += k + (list[k] == ',');
  }
  return 0;
}

static const char browser_modes[] = "nested,timeout,message,raf,background";

int tl_collect_opts_check(const tl_collect_opts *o, char *why, size_t whylen) {
  const tl__probe *p = tl__probe_lookup(o->probe);
  if (!p)
    return tl_fail(why, whylen, TL_EINVAL,
                   "--probe: unknown probe '%s' (see tlcollect --list-probes)",
                   o->probe ? o->probe : "");
  /* Mistakes in the options first, then what this host lacks. */
  int browser = strcmp(p->name, "browser") == 0;
  if (o->browser_mode && !browser)
    return tl_fail(why, whylen, TL_EINVAL, "--browser-mode: only the browser probe takes a mode");
  if (o->browser_mode && !in_list(browser_modes, o->browser_mode))
    return tl_fail(why, whylen, TL_EINVAL, "--browser-mode: one of %s", browser_modes);
  if (browser &&
      (strcmp(tl__browser_mode(o), "message") == 0 || strcmp(tl__browser_mode(o), "raf") == 0))
    for (size_t i = 0; i < o->delay_count && i < TL_MAX_DELAYS; i++)
      if (o->delays_ns[i] != 0)
        return tl_fail(why, whylen, TL_EINVAL, "--browser-mode %s: measures 0 ms only (--delays 0)",
                       tl__browser_mode(o));
  if (strcmp(p->name, "timerfd") == 0 && !tl__os_timerfd_available())
    return tl_fail(why, whylen, TL_EUNAVAIL,
                   "--probe timerfd: timerfd exists only on Linux (choose another probe)");
  if (strcmp(p->name, "node") == 0 || strcmp(p->name, "browser") == 0) {
    tl__child_paths paths;
    int rc = tl__child_locate(p->name, &paths, why, whylen);
    if (rc)
      return rc;
  }
  if (p->flags & TL__PROBE_PREFIX) {
    tl__exec_resolved r;
    int rc = tl__exec_command(o->probe + strlen("exec:"), &r, why, whylen);
    if (rc)
      return rc;
  }
  if (!o->delay_count || o->delay_count > TL_MAX_DELAYS)
    return tl_fail(why, whylen, TL_EINVAL, "--delays: give 1 to %d delays", TL_MAX_DELAYS);
  for (size_t i = 0; i < o->delay_count; i++) {
    if (o->delays_ns[i] < 0)
      return tl_fail(why, whylen, TL_EINVAL, "--delays: a delay cannot be negative");
    if (tl_probe_about_find(p->name)->ms_only && o->delays_ns[i] % 1000000)
      return tl_fail(why, whylen, TL_EINVAL, "--delays: the %s probe takes whole milliseconds",
                     p->name);
  }
  if (o->count <= 0 && o->duration_ns <= 0)
    return tl_fail(why, whylen, TL_EINVAL, "--count: give a count or a duration");
  if (o->count <= 0) {
    /* A duration must leave time for the warm-up and one stored sample of
     * each delay, or the sessions would end 'complete' with no sample.
     * Every timer takes at least a loop turn; count 1 ms for it. */
    int64_t longest = 1000000, turns = (int64_t)o->warmup + 1;
    for (size_t i = 0; i < o->delay_count; i++)
      longest = o->delays_ns[i] > longest ? o->delays_ns[i] : longest;
    longest += o->gap_ns;
    int64_t need = longest > INT64_MAX / turns ? INT64_MAX : longest * turns;
    if (o->duration_ns < need) {
      char ms[32];
      tl_format_delay_ms(need, ms, sizeof ms);
      return tl_fail(why, whylen, TL_EINVAL,
                     "--duration: too short to measure a sample of each delay after the "
                     "warm-up; at least %sms",
                     ms);
    }
  }
  if (p->flags & TL__PROBE_PERIODIC) {
    if (o->delay_count != 1 || o->delays_ns[0] != tl_collect_fixed_delay(o))
      return tl_fail(why, whylen, TL_EINVAL,
                     "--delays: the periodic probe measures --interval, not --delays");
    if (o->gap_ns > 0)
      return tl_fail(why, whylen, TL_EINVAL, "--gap: the periodic probe keeps its own schedule");
  } else if (o->interval_ns > 0) {
    return tl_fail(why, whylen, TL_EINVAL, "--interval: only the periodic probe takes an interval");
  }
  if (o->interval_ns < 0 || (o->interval_ns > 0 && o->interval_ns < 10000))
    return tl_fail(why, whylen, TL_EINVAL, "--interval: at least 10us");
  if (o->concurrency < 0 || o->concurrency > 10000)
    return tl_fail(why, whylen, TL_EINVAL, "--concurrency: 1 to 10000");
  if (o->concurrency > 1 && !(p->flags & TL__PROBE_CONCURRENT))
    return tl_fail(
        why, whylen, TL_EINVAL,
        "--concurrency: only the settimeout and uv probes keep several timers in flight");
  if (o->concurrency > 1 && o->gap_ns > 0)
    return tl_fail(why, whylen, TL_EINVAL,
                   "--gap: not with --concurrency (each timer re-arms at once)");
  if (o->arm_from && !p->arm_contexts)
    return tl_fail(why, whylen, TL_EINVAL,
                   "--arm-from: only the node, uv and settimeout probes take an arming context");
  if (o->arm_from && !in_list(p->arm_contexts, o->arm_from))
    return tl_fail(why, whylen, TL_EINVAL, "--arm-from: the %s probe takes %s", p->name,
                   p->arm_contexts);
  if (o->cpu >= 0) {
    int u = tl__os_cpu_usable(o->cpu);
    if (u == TL_EUNAVAIL)
      return tl_fail(why, whylen, TL_EUNAVAIL, "--cpu: this system cannot pin a thread to a CPU");
    if (u != 1)
      return tl_fail(why, whylen, TL_EINVAL, "--cpu %d: not an online CPU this process may use",
                     (int)o->cpu);
  }
  if (o->priority < 0 || o->priority > sched_get_priority_max(SCHED_FIFO) ||
      (o->priority > 0 && o->priority < sched_get_priority_min(SCHED_FIFO)))
    return tl_fail(why, whylen, TL_EINVAL, "--priority: %d to %d",
                   sched_get_priority_min(SCHED_FIFO), sched_get_priority_max(SCHED_FIFO));
  if (o->qos && tl__qos_parse(o->qos) < 0)
    return tl_fail(why, whylen, TL_EINVAL,
                   "--qos: user-interactive, user-initiated, default, utility or background");
  if (o->qos && tl__os_qos_get() < 0)
    return tl_fail(why, whylen, TL_EUNAVAIL,
                   "--qos: QoS classes are macOS's (elsewhere use --priority or --cpu)");
  if (o->load_cpu < 0 || o->load_cpu > 1024 || o->load_mem < 0 || o->load_mem > 1024)
    return tl_fail(why, whylen, TL_EINVAL, "--load: 1 to 1024 threads");
  return TL_OK;
}

int tl__opts_tags(const tl_collect_opts *o, tl__opt_tags *t) {
  memset(t, 0, sizeof *t);
#define TAG(k, ...)                                                                                \
  do {                                                                                             \
    t->keys[t->n] = k;                                                                             \
    snprintf(t->bufs[t->n], sizeof t->bufs[t->n], __VA_ARGS__);                                    \
    t->values[t->n] = t->bufs[t->n];                                                               \
    t->n++;                                                                                        \
  } while (0)
  int64_t interval = tl_collect_fixed_delay(o);
  if (interval)
    TAG("interval_ns", "%" PRId64, interval);
  if (o->concurrency > 1)
    TAG("concurrency", "%d", (int)o->concurrency);
  if (o->load_cpu && o->load_mem)
    TAG("load", "cpu:%d,mem:%d", (int)o->load_cpu, (int)o->load_mem);
  else if (o->load_cpu)
    TAG("load", "cpu:%d", (int)o->load_cpu);
  else if (o->load_mem)
    TAG("load", "mem:%d", (int)o->load_mem);
  if (o->priority > 0)
    TAG("priority", "fifo:%d", (int)o->priority);
  /* Where there are QoS classes (macOS), the measuring thread's is always
   * recorded: the one asked for, else the one it runs at. */
  const char *qos = tl__qos_name(o->qos ? tl__qos_parse(o->qos) : tl__os_qos_get());
  if (qos)
    TAG("qos", "%s", qos);
  if (o->cpu >= 0)
    TAG("cpu", "%d", (int)o->cpu);
  if (o->mlock)
    TAG("mlock", "1");
  if (o->no_causes)
    TAG("causes", "off");
  const char *arm = tl__arm_from(o);
  if (arm)
    TAG("arm_from", "%s", arm);
  const tl__probe *p = tl__probe_lookup(o->probe);
  if (p && strcmp(p->name, "browser") == 0)
    TAG("browser_mode", "%s", tl__browser_mode(o));
#undef TAG
  /* The shipped probe scripts an exec: command was given (exec_command.c). */
  tl__exec_resolved r;
  char why[TL_WHY_MAX];
  if (p && (p->flags & TL__PROBE_PREFIX) &&
      tl__exec_command(o->probe + strlen("exec:"), &r, why, sizeof why) == TL_OK && r.shipped[0]) {
    snprintf(t->shipped, sizeof t->shipped, "%s", r.shipped);
    t->keys[t->n] = "exec_shipped";
    t->values[t->n++] = t->shipped;
  }
  return TL_OK;
}
