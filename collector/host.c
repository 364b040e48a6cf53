/* host.c: the OS-independent top of host detection: it runs the OS's
 * detection, makes the fingerprint and the default label, and shows the
 * facts. What the OS can tell comes from tl__host_detect_os() in
 * host_linux.c, or os_macos.c with host_macos.c; the fact list they fill is
 * host_facts.c's, the environment they read through starts in host_env.c.
 *
 * The fingerprint identifies a machine across sessions and reboots. It is
 * the 64-bit FNV-1a hash of the facts that do not change while the machine stays the same (machine
 * id, hostname, architecture, CPU model, logical CPUs, RAM), printed as 16 hex digits. A kernel
 * upgrade or a new clocksource keeps the fingerprint; a resized VM (other RAM or CPU count) becomes
 * a new host, as it should for latency. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect_internal.h"

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
