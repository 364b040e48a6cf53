/* host.c: the OS-independent half of host detection: the fact list, the
 * fingerprint and the default label. What the OS can tell comes from
 * tl__host_detect_os() in host_linux.c or host_macos.c.
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

int tl__host_set(tl_host *h, const char *key, const char *value, const char *evidence) {
  char *v = strdup(value ? value : "unknown"), *e = strdup(evidence ? evidence : "");
  if (!v || !e) {
    free(v);
    free(e);
    return TL_ENOMEM;
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
    hash = fnv1a(hash, v ? v : "");
  }
  snprintf(h->fingerprint, sizeof h->fingerprint, "%016llx", (unsigned long long)hash);
}

int tl_host_detect(tl_host **out) {
  tl_host *h = calloc(1, sizeof *h);
  *out = NULL;
  if (!h)
    return TL_ENOMEM;
  int err = tl__host_detect_os(h);
  if (err) {
    tl_host_free(h);
    return err;
  }
  make_fingerprint(h);
  *out = h;
  return TL_OK;
}

void tl_host_free(tl_host *h) {
  if (!h)
    return;
  for (size_t i = 0; i < h->count; i++) {
    free((char *)h->facts[i].key);
    free((char *)h->facts[i].value);
    free((char *)h->facts[i].evidence);
  }
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
