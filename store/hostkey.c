/* hostkey.c: the host facts a person names by a short word ("memory",
 * "cpus", "vm" ...): which stored fact each word means, how its values are
 * written and read, and the size classes memory is grouped into. One table
 * serves tlstore import --fact, tlstore hosts and tlreport --by, so a word
 * means the same thing everywhere. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

static const tl_host_key keys[] = {
    {"os", "os.name", TL_KEY_TEXT, "operating system", NULL, NULL, 0},
    {"kernel", "kernel.release", TL_KEY_TEXT, "kernel release", NULL, NULL, 0},
    {"arch", "arch", TL_KEY_TEXT, "machine architecture", NULL, NULL, 0},
    {"cpu", "cpu.model", TL_KEY_TEXT, "processor model", NULL, NULL, 0},
    {"cpus", "cpu.logical", TL_KEY_COUNT,
     "logical CPUs, by count, or fewer when a cgroup's cpuset or CPU quota leaves fewer",
     "cgroup.cpus", "CPU", 0},
    {"memory", "mem.total_bytes", TL_KEY_BYTES,
     "total memory, by size class, or a cgroup's memory limit when smaller",
     "cgroup.memory_limit_bytes", NULL, 0},
    {"vm", "vm", TL_KEY_TEXT, "hypervisor, or none", NULL, NULL, 0},
    {"cloud", "cloud", TL_KEY_TEXT, "cloud provider, or none", NULL, NULL, 0},
    {"container", "container", TL_KEY_TEXT, "container runtime, or none", NULL, NULL, 0},
    {"clocksource", "clocksource.current", TL_KEY_TEXT, "kernel clock source", NULL, NULL, 0},
    {"preempt", "kernel.preempt", TL_KEY_TEXT, "kernel preemption model", NULL, NULL, 0},
    {"governor", "cpu.governor", TL_KEY_TEXT, "CPU frequency governor", NULL, NULL, 0},
    {"hz", "kernel.hz", TL_KEY_COUNT, "kernel timer frequency", NULL, NULL, 0},
    {"quota", "cgroup.cpu_quota", TL_KEY_TEXT, "a cgroup's CPU quota in CPUs, or none", NULL, NULL,
     0},
    {"hostname", "hostname", TL_KEY_TEXT, "host name", NULL, NULL, 1},
};

const tl_host_key *tl_host_keys(size_t *count) {
  *count = sizeof keys / sizeof keys[0];
  return keys;
}

const tl_host_key *tl_host_key_find(const char *name) {
  for (size_t i = 0; name && i < sizeof keys / sizeof keys[0]; i++)
    if (strcmp(keys[i].name, name) == 0)
      return &keys[i];
  return NULL;
}

const char *tl_host_key_of(const tl_host_key *k, const char *hostname, const tl_fact_row *facts,
                           size_t n, char *buf, size_t len) {
  return k->session_field ? hostname : tl_host_key_value(k, facts, n, buf, len);
}

/* The effective value: the smaller of the host's and its limit. Both are
 * whole numbers as stored (a CPU count, bytes); a limit that is "none",
 * "unknown" or not a number leaves the host's value. */
const char *tl_host_key_value(const tl_host_key *k, const tl_fact_row *facts, size_t n, char *buf,
                              size_t len) {
  const char *v = tl_fact_rows_get(facts, n, k->fact);
  const char *lim = k->limit ? tl_fact_rows_get(facts, n, k->limit) : NULL;
  int64_t host, limit;
  if (!lim || tl_int_parse(lim, 1, INT64_MAX, &limit, NULL, 0) != TL_OK)
    return v;
  if (v && tl_int_parse(v, 1, INT64_MAX, &host, NULL, 0) == TL_OK && host <= limit)
    return v;
  snprintf(buf, len, "%lld", (long long)limit);
  return buf;
}

/* ======================================================================== */
/* Sizes                                                                     */

/* The largest memory tl accepts: 1 PiB, far above any machine. */
#define SIZE_MAX_BYTES (1LL << 50)

int tl_size_parse(const char *s, int64_t *bytes, char *why, size_t whylen) {
  const char *p = s ? s : "";
  if (!isdigit((unsigned char)*p))
    return tl_fail(why, whylen, TL_EINVAL,
                   "'%.40s' is not a size (such as 512M, 1G, 1.5G or 1073741824)", p);
  /* Whole and fractional digits read by hand: no locale, no exponent. */
  int64_t whole = 0, frac = 0, scale = 1;
  while (isdigit((unsigned char)*p) && whole <= SIZE_MAX_BYTES)
    whole = whole * 10 + (*p++ - '0');
  if (*p == '.') {
    p++;
    if (!isdigit((unsigned char)*p))
      whole = -1;
    while (isdigit((unsigned char)*p) && scale < 1000000)
      frac = frac * 10 + (*p++ - '0'), scale *= 10;
  }
  int64_t unit = 1;
  switch (toupper((unsigned char)*p)) {
  case 'K':
    unit = 1LL << 10;
    break;
  case 'M':
    unit = 1LL << 20;
    break;
  case 'G':
    unit = 1LL << 30;
    break;
  case 'T':
    unit = 1LL << 40;
    break;
  default:
    unit = 0;
  }
  if (unit) {
    p++;
    if (strcmp(p, "iB") == 0 || strcmp(p, "B") == 0 || strcmp(p, "b") == 0)
      p += strlen(p);
  } else {
    unit = 1;
    if (strcmp(p, "B") == 0)
      p++;
  }
  if (*p || whole < 0 || whole > SIZE_MAX_BYTES / unit || (unit == 1 && frac))
    return tl_fail(why, whylen, TL_EINVAL,
                   "'%.40s' is not a size (such as 512M, 1G, 1.5G or 1073741824; at most 1P)", s);
  *bytes = whole * unit + (int64_t)((double)frac * (double)unit / (double)scale + 0.5);
  if (*bytes <= 0)
    return tl_fail(why, whylen, TL_EINVAL, "'%.40s' is not a size above zero", s);
  return TL_OK;
}

/* Size classes: 2^k and 1.5 x 2^k bytes from 64 MiB up. A machine sold as
 * "1 GB" reports a little less than 1 GiB (the kernel and firmware keep
 * some), so a reported total is rounded *up* to the next class; 1.5 x 2^k
 * steps keep a 3 GB or 6 GB machine out of the 4 GB or 8 GB class. */
int64_t tl_memory_class(int64_t bytes, char *name, size_t len) {
  int64_t cls = 64LL << 20;
  while (cls < bytes && cls < SIZE_MAX_BYTES) {
    int64_t half = cls + cls / 2;
    cls = half >= bytes ? half : cls * 2;
  }
  if (name && len) {
    static const char units[] = "MGTP";
    int64_t v = cls >> 20;
    size_t u = 0;
    while (v >= 1024 && u + 1 < sizeof units - 1)
      v /= 1024, u++;
    /* A 1.5 x 2^k class below the unit shows as 768M; above it as 1.5G. */
    int64_t unit = 1LL << (20 + 10 * u);
    if (cls % unit)
      snprintf(name, len, "%.1f%c", (double)cls / (double)unit, units[u]);
    else
      snprintf(name, len, "%lld%c", (long long)(cls / unit), units[u]);
  }
  return cls;
}

/* ======================================================================== */
/* Facts given by a person                                                   */

int tl_host_fact_parse(const char *arg, const tl_host_key **key, char *value, size_t len, char *why,
                       size_t whylen) {
  const char *eq = arg ? strchr(arg, '=') : NULL;
  char name[32];
  size_t n = eq ? (size_t)(eq - arg) : 0;
  if (!eq || n == 0 || n >= sizeof name)
    return tl_fail(why, whylen, TL_EINVAL, "'%.40s' is not KEY=VALUE (such as memory=1G or cpus=2)",
                   arg ? arg : "");
  memcpy(name, arg, n);
  name[n] = '\0';
  const tl_host_key *k = tl_host_key_find(name);
  if (!k || k->session_field) {
    if (why && whylen) {
      size_t at =
          (size_t)snprintf(why, whylen, "%s '%.32s'; facts: ",
                           k ? "the host is given by --host, not the fact" : "unknown fact", name);
      for (size_t i = 0; i < sizeof keys / sizeof keys[0] && at < whylen; i++)
        if (!keys[i].session_field)
          at += (size_t)snprintf(why + at, whylen - at, "%s%s", i ? ", " : "", keys[i].name);
    }
    return TL_EINVAL;
  }
  const char *v = eq + 1;
  char reason[TL_WHY_MAX];
  if (k->kind == TL_KEY_BYTES) {
    int64_t bytes;
    if (tl_size_parse(v, &bytes, reason, sizeof reason))
      return tl_fail(why, whylen, TL_EINVAL, "%s: %s", k->name, reason);
    snprintf(value, len, "%lld", (long long)bytes);
  } else if (k->kind == TL_KEY_COUNT) {
    int64_t count;
    if (tl_int_parse(v, 1, 1000000, &count, reason, sizeof reason))
      return tl_fail(why, whylen, TL_EINVAL, "%s: %s", k->name, reason);
    snprintf(value, len, "%lld", (long long)count);
  } else {
    if (!*v)
      snprintf(reason, sizeof reason, "empty value");
    else if (strlen(v) >= len)
      snprintf(reason, sizeof reason, "longer than %zu bytes", len - 1);
    if (!*v || strlen(v) >= len ||
        tl__text_check("the value", v, TL_TAG_VALUE_MAX, reason, sizeof reason))
      return tl_fail(why, whylen, TL_EINVAL, "%s: %s", k->name, reason);
    snprintf(value, len, "%s", v);
  }
  *key = k;
  return TL_OK;
}
