/* host_facts.c: the fact list a host detection fills: adding or replacing a
 * fact with its value made safe to store and show, reading one back, and
 * emptying the list. It calls nothing else of host detection, so that
 * host.c and the OS files (host_linux.c, host_macos.c) and host_detect.c
 * all call down into it and never into each other's setters. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void tl__host_clear(tl_host *h) {
  for (size_t i = 0; i < h->count; i++) {
    free((char *)h->facts[i].key);
    free((char *)h->facts[i].value);
    free((char *)h->facts[i].evidence);
  }
  h->count = 0;
}
