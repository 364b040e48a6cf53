/* plan.c: one tlcollect command as the collector sees it. The program hands
 * over its options one by one (tl_collect_plan_set), the plan checks them
 * against each other and this host before any database is opened
 * (tl_collect_plan_check), and then runs every probe of the list, --repeat
 * times, --every so often (tl_collect_plan_run). Keeping this here, and not
 * in the program, lets the tests drive the probe list, the per-probe options
 * and the repeat schedule directly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "collect_internal.h"

static const int64_t SECOND_NS = 1000000000LL;
static const int64_t YEAR_NS = 366LL * 86400 * 1000000000LL;

void tl_collect_plan_init(tl_collect_plan *p) {
  memset(p, 0, sizeof *p);
  tl_collect_opts_init(&p->opts);
  p->delays = "0,50";
  p->probe_list = "settimeout";
  p->repeat = 1;
}

/* ======================================================================== */
/* One option at a time                                                      */

/* A bare number is seconds for --duration and --every (as it always was)
 * but milliseconds for --delays, --gap and --interval: said once, so that
 * nobody collects for 50 s who meant 50 ms. */
static void warn_bare_seconds(const char *option, const char *value) {
  if (value[strspn(value, "0123456789.")] == '\0')
    tl_warnf("--%s %s means %ss; write the unit to say so, since a bare number in --delays, "
             "--gap and --interval is milliseconds",
             option, value, value);
}

/* A duration of at least 1 s (--duration, --every); a bare number is seconds. */
static int set_seconds(const char *option, const char *value, int64_t *out, char *why,
                       size_t whylen) {
  if (tl_duration_parse(value, SECOND_NS, YEAR_NS, out, why, whylen))
    return TL_EINVAL;
  warn_bare_seconds(option, value);
  return TL_OK;
}

static int set_int(const char *value, int64_t lo, int64_t hi, int64_t *out, char *why,
                   size_t whylen) {
  return tl_int_parse(value, lo, hi, out, why, whylen) ? TL_EINVAL : TL_OK;
}

/* --load cpu:N or mem:N, each kind once. */
static int set_load(tl_collect_plan *p, const char *value, char *why, size_t whylen) {
  int32_t *slot = strncmp(value, "cpu:", 4) == 0   ? &p->opts.load_cpu
                  : strncmp(value, "mem:", 4) == 0 ? &p->opts.load_mem
                                                   : NULL;
  if (!slot)
    return tl_fail(why, whylen, TL_EINVAL, "expected cpu:N or mem:N");
  if (*slot)
    return tl_fail(why, whylen, TL_EINVAL, "the same kind of load is given twice");
  int64_t v;
  if (set_int(value + 4, 1, 1024, &v, why, whylen))
    return TL_EINVAL;
  *slot = (int32_t)v;
  return TL_OK;
}

static int set_tag(tl_collect_plan *p, const char *value, char *why, size_t whylen) {
  size_t n = p->tag_count;
  if (n == TL_COLLECT_TAGS_MAX)
    return tl_fail(why, whylen, TL_EINVAL, "too many tags (at most %d)", TL_COLLECT_TAGS_MAX);
  /* tl_tag_parse checks the lengths before it copies into the buffer. */
  if (tl_tag_parse(value, p->tag_bufs[n], &p->tag_keys[n], &p->tag_values[n], why, whylen))
    return TL_EINVAL;
  for (size_t i = 0; i < n; i++)
    if (strcmp(p->tag_keys[i], p->tag_keys[n]) == 0)
      return tl_fail(why, whylen, TL_EINVAL, "the same key is given twice");
  p->tag_count++;
  return TL_OK;
}

int tl_collect_plan_set(tl_collect_plan *p, const char *option, const char *value, char *why,
                        size_t whylen) {
  tl_collect_opts *o = &p->opts;
  int64_t v = 0;
  int err = TL_OK;
  if (strcmp(option, "label") == 0) {
    err = tl_label_check(value, why, whylen) ? TL_EINVAL : TL_OK;
    p->label = value;
  } else if (strcmp(option, "delays") == 0) {
    p->delays = value; /* checked by tl_collect_plan_check, with the probes */
    p->have_delays = 1;
  } else if (strcmp(option, "count") == 0) {
    err = set_int(value, 1, 1000000000, &o->count, why, whylen);
    p->have_count = 1;
  } else if (strcmp(option, "duration") == 0) {
    err = set_seconds(option, value, &o->duration_ns, why, whylen);
    if (!err && o->duration_ns <= 0)
      err = tl_fail(why, whylen, TL_EINVAL, "must be longer than 0");
    p->have_duration = 1;
  } else if (strcmp(option, "probe") == 0) {
    p->probe_list = value; /* checked by tl_collect_plan_check, with the other options */
  } else if (strcmp(option, "interval") == 0) {
    err = tl_duration_parse(value, 1000000LL, 10 * SECOND_NS, &o->interval_ns, why, whylen)
              ? TL_EINVAL
              : TL_OK;
    if (!err && o->interval_ns < 10000)
      err = tl_fail(why, whylen, TL_EINVAL, "at least 10us");
  } else if (strcmp(option, "concurrency") == 0) {
    err = set_int(value, 1, 10000, &v, why, whylen);
    o->concurrency = (int32_t)v;
  } else if (strcmp(option, "cpu") == 0) {
    err = set_int(value, 0, 65535, &v, why, whylen);
    o->cpu = (int32_t)v;
  } else if (strcmp(option, "priority") == 0) {
    err = set_int(value, 1, 99, &v, why, whylen);
    o->priority = (int32_t)v;
  } else if (strcmp(option, "qos") == 0) {
    o->qos = value; /* checked with the other options, against this OS */
  } else if (strcmp(option, "mlock") == 0) {
    o->mlock = 1;
  } else if (strcmp(option, "no-causes") == 0) {
    o->no_causes = 1;
  } else if (strcmp(option, "load") == 0) {
    err = set_load(p, value, why, whylen);
  } else if (strcmp(option, "repeat") == 0) {
    err = set_int(value, 1, 1000000, &p->repeat, why, whylen);
  } else if (strcmp(option, "every") == 0) {
    err = set_seconds(option, value, &p->every_ns, why, whylen);
    if (!err && p->every_ns < SECOND_NS)
      err = tl_fail(why, whylen, TL_EINVAL, "at least 1s");
  } else if (strcmp(option, "arm-from") == 0) {
    if (strcmp(value, "timer") && strcmp(value, "immediate") && strcmp(value, "io"))
      err = tl_fail(why, whylen, TL_EINVAL, "expected timer, immediate or io");
    o->arm_from = value;
  } else if (strcmp(option, "browser-mode") == 0) {
    o->browser_mode = value; /* checked with the probe it goes with */
  } else if (strcmp(option, "warmup") == 0) {
    err = set_int(value, 0, 1000000, &v, why, whylen);
    o->warmup = (int32_t)v;
  } else if (strcmp(option, "gap") == 0) {
    err = tl_duration_parse(value, 1000000LL, 3600 * SECOND_NS, &o->gap_ns, why, whylen) ? TL_EINVAL
                                                                                         : TL_OK;
  } else if (strcmp(option, "tag") == 0) {
    err = set_tag(p, value, why, whylen);
  } else if (strcmp(option, "dry-run") == 0) {
    o->dry_run = 1;
  } else {
    err = tl_fail(why, whylen, TL_EINVAL, "unknown option");
  }
  return err;
}

/* ======================================================================== */
/* The probe list and each probe's options                                   */

int tl_collect_probe_list_parse(const char *list, tl_collect_probe_list *out, char *why,
                                size_t whylen) {
  out->count = 0;
  if (strlen(list) >= sizeof out->buf)
    return tl_fail(why, whylen, TL_EINVAL, "list is too long");
  strcpy(out->buf, list);
  char *s = out->buf;
  while (*s) {
    if (out->count == TL_COLLECT_PROBES_MAX)
      return tl_fail(why, whylen, TL_EINVAL, "at most %d probes", TL_COLLECT_PROBES_MAX);
    char *item = s;
    int trailing_comma = 0;
    if (strncmp(s, "exec:", 5) == 0) { /* a command may contain commas: the rest is its */
      s += strlen(s);
    } else {
      s += strcspn(s, ",");
      if (*s) {
        *s++ = '\0';
        trailing_comma = !*s;
      }
    }
    if (!*item || trailing_comma)
      return tl_fail(why, whylen, TL_EINVAL, "empty probe name in the list");
    if (!tl_probe_find(item))
      return tl_fail(why, whylen, TL_EINVAL, "unknown probe (see tlcollect --list-probes)");
    for (size_t k = 0; k < out->count; k++)
      if (strcmp(out->names[k], item) == 0)
        return tl_fail(why, whylen, TL_EINVAL, "the same probe is given twice");
    out->names[out->count++] = item;
  }
  if (out->count == 0)
    return tl_fail(why, whylen, TL_EINVAL, "empty probe name");
  return TL_OK;
}

void tl_collect_probe_opts(const tl_collect_opts *base, const char *probe, tl_collect_opts *o) {
  *o = *base;
  o->probe = probe;
  o->interval_ns = 0;
  tl_collect_opts fixed = *o;
  fixed.interval_ns = base->interval_ns;
  int64_t d = tl_collect_fixed_delay(&fixed);
  if (d) {
    o->interval_ns = d;
    o->delays_ns[0] = d;
    o->delay_count = 1;
  }
}

/* ======================================================================== */
/* Checking the whole command                                                */

/* --delays: distinct delays, each as tl_delay_parse reads it. */
static int parse_delays(tl_collect_opts *o, const char *list, char *why, size_t whylen) {
  char copy[4096], *items[TL_MAX_DELAYS];
  size_t n = 0;
  if (strlen(list) >= sizeof copy)
    return tl_fail(why, whylen, TL_EINVAL, "list is too long");
  strcpy(copy, list);
  if (tl_list_split(copy, items, TL_MAX_DELAYS, &n, why, whylen))
    return TL_EINVAL;
  for (size_t i = 0; i < n; i++) {
    int64_t v;
    if (tl_delay_parse(items[i], &v, why, whylen))
      return TL_EINVAL;
    for (size_t k = 0; k < i; k++)
      if (o->delays_ns[k] == v)
        return tl_fail(why, whylen, TL_EINVAL, "the same delay is given twice");
    o->delays_ns[i] = v;
  }
  o->delay_count = n;
  return TL_OK;
}

/* "--OPTION: " + the reason, as the program prints a usage error. */
static int option_fail(const char *option, int err, char *why, size_t whylen) {
  char reason[TL_WHY_MAX];
  snprintf(reason, sizeof reason, "%s", why);
  return tl_fail(why, whylen, err, "%s: %s", option, reason);
}

int tl_collect_plan_check(tl_collect_plan *p, char *why, size_t whylen) {
  tl_collect_opts *o = &p->opts;
  if (p->have_count && p->have_duration)
    return tl_fail(why, whylen, TL_EINVAL, "--count: give --count or --duration, not both");
  if (!p->have_count && !p->have_duration)
    o->count = 1000;
  if (parse_delays(o, p->delays, why, whylen))
    return option_fail("--delays", TL_EINVAL, why, whylen);
  if (tl_collect_probe_list_parse(p->probe_list, &p->probes, why, whylen))
    return option_fail("--probe", TL_EINVAL, why, whylen);
  int any_periodic = 0, all_periodic = 1;
  for (size_t i = 0; i < p->probes.count; i++) {
    tl_collect_opts po;
    tl_collect_probe_opts(o, p->probes.names[i], &po);
    int periodic = po.interval_ns > 0;
    any_periodic |= periodic;
    all_periodic &= periodic;
    int err = tl_collect_opts_check(&po, why, whylen);
    if (err)
      return err;
  }
  if (o->interval_ns && !any_periodic)
    return tl_fail(why, whylen, TL_EINVAL, "--interval: only the periodic probe takes an interval");
  if (p->have_delays && all_periodic)
    return tl_fail(why, whylen, TL_EINVAL,
                   "--delays: the periodic probe measures --interval, not --delays");
  if (p->every_ns && p->repeat < 2)
    return tl_fail(why, whylen, TL_EINVAL, "--every: needs --repeat N with N of at least 2");
  return TL_OK;
}

void tl_collect_plan_describe(const tl_collect_plan *p, char *buf, size_t len) {
  const tl_collect_opts *o = &p->opts;
  char list[TL_MAX_DELAYS * 24] = "", amount[64], d[32];
  for (size_t i = 0, at = 0; i < o->delay_count && at < sizeof list; i++) {
    tl_format_delay_ms(o->delays_ns[i], d, sizeof d);
    at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", i ? "," : "", d);
  }
  if (o->count) {
    snprintf(amount, sizeof amount, "%lld samples each", (long long)o->count);
  } else {
    tl_format_delay_ms(o->duration_ns / 1000, d, sizeof d); /* ms of us: seconds */
    snprintf(amount, sizeof amount, "for %s s", d);
  }
  snprintf(buf, len, "%s %s, delays %s ms, %s", p->probes.count > 1 ? "probes" : "probe",
           p->probe_list, list, amount);
}

/* ======================================================================== */
/* Running it                                                                */

uint64_t tl_collect_repeat_start(uint64_t first_hr, int64_t run, int64_t every_ns) {
  return first_hr + (uint64_t)(run * every_ns);
}

int tl_collect_plan_run(const tl_collect_plan *p, tl_store *store, const tl_session_spec *base,
                        tl_collect_result_cb on_result, void *ctx, int64_t *samples, char *err,
                        size_t errlen) {
  char run_uuid[37];
  tl_session_spec spec = *base;
  spec.run_uuid = run_uuid;
  spec.tag_keys = p->tag_keys;
  spec.tag_values = p->tag_values;
  spec.tag_count = p->tag_count;
  *samples = 0;
  /* Run r starts at first + r * every, or at once when the one before took
   * longer than that; each run is a new run UUID. */
  uint64_t first = uv_hrtime();
  for (int64_t r = 0; r < p->repeat; r++) {
    if (r > 0 && tl_collect_wait_until(tl_collect_repeat_start(first, r, p->every_ns)) == TL_EINTR)
      return tl_fail(err, errlen, TL_EINTR,
                     "interrupted while waiting for the next run; %lld of %lld runs are stored",
                     (long long)r, (long long)p->repeat);
    tl_uuid4(run_uuid);
    for (size_t i = 0; i < p->probes.count; i++) {
      tl_collect_opts po;
      tl_collect_probe_opts(&p->opts, p->probes.names[i], &po);
      tl_collect_result results[TL_MAX_DELAYS];
      memset(results, 0, sizeof results);
      int rc = tl_collect_run(store, &spec, &po, results, err, errlen);
      int64_t measured = 0;
      for (size_t k = 0; k < po.delay_count; k++)
        measured += results[k].samples;
      *samples += measured;
      if (on_result && measured)
        on_result(ctx, po.probe, results, po.delay_count);
      if (rc == TL_EINTR)
        return tl_fail(err, errlen, TL_EINTR,
                       "interrupted: the samples measured so far are stored, session marked "
                       "'interrupted'");
      if (rc)
        return rc;
    }
  }
  return TL_OK;
}
