/* host.c: the OS-independent half of host detection: the fact list, the
 * fingerprint and the default label. What the OS can tell comes from
 * tl__host_detect_os() in host_linux.c, or os_macos.c with host_macos.c.
 *
 * The fingerprint identifies a machine across sessions and reboots. It is
 * the 64-bit FNV-1a hash of the facts that do not change while the machine stays the same (machine
 * id, hostname, architecture, CPU model, logical CPUs, RAM), printed as 16 hex digits. A kernel
 * upgrade or a new clocksource keeps the fingerprint; a resized VM (other RAM or CPU count) becomes
 * a new host, as it should for latency. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "collect_internal.h"

/* A copy of s that is safe to store and show: blanks around it dropped, cut
 * at TL_HOST_VALUE_MAX bytes (on a character boundary), control characters
 * and bytes that are not UTF-8 written as "\xNN" by tl_fput_safe. Firmware
 * strings (DMI) and files under /proc can hold anything. Caller frees. */
static char *safe_copy(const char *s) {
  while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
    s++;
  size_t n = strnlen(s, TL_HOST_VALUE_MAX + 1);
  if (n > TL_HOST_VALUE_MAX) {
    n = TL_HOST_VALUE_MAX;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
      n--;
  }
  while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
    n--;
  char *raw = strndup(s, n), *out = NULL;
  size_t len = 0;
  FILE *m = raw ? open_memstream(&out, &len) : NULL;
  if (m) {
    tl_fput_safe(m, raw);
    if (fclose(m) != 0) {
      free(out);
      out = NULL;
    }
  }
  free(raw);
  return out;
}

int tl__host_set(tl_host *h, const char *key, const char *value, const char *evidence) {
  char *v = safe_copy(value ? value : "unknown"), *e = safe_copy(evidence ? evidence : "");
  if (!v || !e) {
    free(v);
    free(e);
    return TL_ENOMEM;
  }
  if (!*v) { /* an empty file says nothing */
    free(v);
    if (!(v = strdup("unknown"))) {
      free(e);
      return TL_ENOMEM;
    }
  }
  for (size_t i = 0; i < h->count; i++) {
    if (strcmp(h->facts[i].key, key) == 0) {
      free((char *)h->facts[i].value);
      free((char *)h->facts[i].evidence);
      h->facts[i].value = v;
      h->facts[i].evidence = e;
      return TL_OK;
    }
  }
  char *k = strdup(key);
  if (!k || h->count == TL_HOST_MAX_FACTS) {
    free(k);
    free(v);
    free(e);
    return k ? TL_EINVAL : TL_ENOMEM;
  }
  h->facts[h->count++] = (tl_fact){k, v, e};
  return TL_OK;
}

int tl__host_setf(tl_host *h, const char *key, const char *evidence, const char *fmt, ...) {
  char buf[TL_HOST_VALUE_MAX + 1];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return tl__host_set(h, key, buf, evidence);
}

const char *tl_host_get(const tl_host *h, const char *key) {
  for (size_t i = 0; i < h->count; i++)
    if (strcmp(h->facts[i].key, key) == 0)
      return h->facts[i].value;
  return NULL;
}

static uint64_t fnv1a(uint64_t hash, const char *s) {
  for (; *s; s++) {
    hash ^= (unsigned char)*s;
    hash *= 1099511628211ULL;
  }
  hash ^= 0xff; /* field separator, so "ab"+"c" differs from "a"+"bc" */
  hash *= 1099511628211ULL;
  return hash;
}

static void make_fingerprint(tl_host *h) {
  static const char *const keys[] = {"machine.id", "hostname",    "arch",
                                     "cpu.model",  "cpu.logical", "mem.total_bytes"};
  uint64_t hash = 14695981039346656037ULL;
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    const char *v = tl_host_get(h, keys[i]);
    /* What could not be read counts as absent, as it always has. */
    hash = fnv1a(hash, v && strcmp(v, "unknown") != 0 ? v : "");
  }
  snprintf(h->fingerprint, sizeof h->fingerprint, "%016llx", (unsigned long long)hash);
}

int tl__host_cpuid(const tl__host_env *env, uint32_t leaf, uint32_t sub, uint32_t r[4]) {
  (void)env;
#if defined(__x86_64__) || defined(__i386__)
  unsigned int max = __get_cpuid_max(leaf & 0x80000000u, NULL);
  /* Hypervisor leaves lie outside the ranges __get_cpuid_max reports. */
  if ((leaf & 0xf0000000u) != 0x40000000u && (max == 0 || leaf > max))
    return -1;
  unsigned int a, b, c, d;
  __cpuid_count(leaf, sub, a, b, c, d);
  r[0] = a;
  r[1] = b;
  r[2] = c;
  r[3] = d;
  return 0;
#else
  (void)leaf;
  (void)sub;
  (void)r;
  return -1; /* no CPUID on ARM */
#endif
}

static int posix_uname(const tl__host_env *env, struct utsname *u) {
  (void)env;
  return uname(u);
}

int tl__host_env_open(tl__host_env *env) {
  memset(env, 0, sizeof *env);
  env->root_fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (env->root_fd < 0)
    return TL_ESYS;
  env->cpuid = tl__host_cpuid;
  env->uname = posix_uname;
  return TL_OK;
}

void tl__host_env_close(tl__host_env *env) {
  if (env->root_fd >= 0)
    close(env->root_fd);
  env->root_fd = -1;
}

int tl__host_detect_env(const tl__host_env *env, tl_host **out) {
  tl_host *h = calloc(1, sizeof *h);
  *out = NULL;
  if (!h)
    return TL_ENOMEM;
  int err = tl__host_detect_os(env, h);
  if (err) {
    tl_host_free(h);
    return err;
  }
  make_fingerprint(h);
  *out = h;
  return TL_OK;
}

int tl_host_detect(tl_host **out) {
  tl__host_env env;
  *out = NULL;
  int err = tl__host_env_default(&env);
  if (err)
    return err;
  err = tl__host_detect_env(&env, out);
  tl__host_env_close(&env);
  return err;
}

int tl__host_record_end(tl_writer *const *writers, size_t n) {
  tl__host_env env;
  tl_host *h = calloc(1, sizeof *h);
  int err = h ? tl__host_env_default(&env) : TL_ENOMEM;
  if (err) {
    free(h);
    return err;
  }
  err = tl__host_detect_load(&env, h, "end");
  tl__host_env_close(&env);
  for (size_t i = 0; i < n && !err; i++)
    if (writers[i])
      err = tl_writer_add_facts(writers[i], h->facts, h->count);
  tl_host_free(h);
  return err;
}

void tl__host_clear(tl_host *h) {
  for (size_t i = 0; i < h->count; i++) {
    free((char *)h->facts[i].key);
    free((char *)h->facts[i].value);
    free((char *)h->facts[i].evidence);
  }
  h->count = 0;
}

void tl_host_free(tl_host *h) {
  if (!h)
    return;
  tl__host_clear(h);
  free(h);
}

const tl_fact *tl_host_facts(const tl_host *h, size_t *count) {
  *count = h->count;
  return h->facts;
}

const char *tl_host_fingerprint(const tl_host *h) { return h->fingerprint; }

const char *tl_host_hostname(const tl_host *h) {
  const char *v = tl_host_get(h, "hostname");
  return v ? v : "unknown";
}

void tl_host_default_label(const tl_host *h, char *buf, size_t len) {
  const char *kind = "baremetal";
  const char *cloud = tl_host_get(h, "cloud"), *vm = tl_host_get(h, "vm");
  if (cloud && strcmp(cloud, "none") != 0 && strcmp(cloud, "unknown") != 0)
    kind = cloud;
  else if (vm && strcmp(vm, "none") != 0 && strcmp(vm, "unknown") != 0)
    kind = vm;
  /* The short hostname, cut to label characters. */
  char host[40];
  size_t n = 0;
  for (const char *p = tl_host_hostname(h); *p && *p != '.' && n < sizeof host - 1; p++) {
    char c = *p;
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '-' || c == '_';
    host[n++] = ok ? c : '_';
  }
  host[n] = '\0';
  if (n)
    snprintf(buf, len, "%s-%s", kind, host);
  else
    snprintf(buf, len, "%s", kind);
}

/* ======================================================================== */
/* Showing what was detected                                                 */

void tl_host_print(const tl_host *h, FILE *f, int json) {
  char label[TL_LABEL_MAX + 1];
  tl_host_default_label(h, label, sizeof label);
  if (json) {
    fputs("{\n  \"fingerprint\": ", f);
    tl_fput_json(f, h->fingerprint);
    fputs(",\n  \"default_label\": ", f);
    tl_fput_json(f, label);
    fputs(",\n  \"facts\": {", f);
    for (size_t i = 0; i < h->count; i++) {
      fputs(i ? ",\n    " : "\n    ", f);
      tl_fput_json(f, h->facts[i].key);
      fputs(": {\"value\": ", f);
      tl_fput_json(f, h->facts[i].value);
      fputs(", \"evidence\": ", f);
      tl_fput_json(f, h->facts[i].evidence);
      fputc('}', f);
    }
    fputs("\n  }\n}\n", f);
    return;
  }
  size_t w = 0;
  for (size_t i = 0; i < h->count; i++)
    if (strlen(h->facts[i].key) > w)
      w = strlen(h->facts[i].key);
  fprintf(f, "%-*s  %s\n", (int)w, "fingerprint", h->fingerprint);
  fprintf(f, "%-*s  ", (int)w, "default label");
  tl_fput_safe(f, label);
  fputc('\n', f);
  for (size_t i = 0; i < h->count; i++) {
    fprintf(f, "%-*s  ", (int)w, h->facts[i].key);
    tl_fput_safe(f, h->facts[i].value);
    if (h->facts[i].evidence[0]) {
      fputs("  (", f);
      tl_fput_safe(f, h->facts[i].evidence);
      fputc(')', f);
    }
    fputc('\n', f);
  }
}
