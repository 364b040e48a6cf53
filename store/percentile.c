/* percentile.c: the one definition of a percentile that every tl number
 * uses, and the words tl says one in, from tlcollect's last line to the
 * report's summary. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tl_base.h"

int64_t tl_rank(double pct, int64_t n) {
  /* pct / 100 * n in long double, then ceil, with a guard against the
   * rounding of values such as 0.9 * 1000 = 900.0000000001. */
  long double exact = (long double)pct * (long double)n / 100.0L;
  int64_t r = (int64_t)exact;
  if ((long double)r < exact - 1e-9L)
    r++;
  if (r < 1)
    r = 1;
  if (r > n)
    r = n;
  return r;
}

void tl_format_ms(double ns, char *buf, size_t len) {
  double ms = ns / 1e6, a = ms < 0 ? -ms : ms;
  int digits = a >= 1 || a == 0 ? 2 : a >= 0.1 ? 3 : a >= 0.01 ? 4 : 5;
  snprintf(buf, len, "%.*f ms", digits, ms);
}

void tl_format_delay_ms(int64_t delay_ns, char *buf, size_t len) {
  int64_t a = delay_ns < 0 ? -delay_ns : delay_ns;
  int n = snprintf(buf, len, "%s%lld.%06lld", delay_ns < 0 ? "-" : "", (long long)(a / 1000000),
                   (long long)(a % 1000000));
  if (n <= 0 || (size_t)n >= len)
    return;
  while (buf[n - 1] == '0')
    buf[--n] = '\0';
  if (buf[n - 1] == '.')
    buf[--n] = '\0';
}

const char *tl_format_pct(double pct, char *buf, size_t len) {
  /* 17 significant digits always read back; from TL_PCT_MIN that is at most
   * 26 decimals. */
  for (int decimals = 0; decimals <= 30; decimals++) {
    snprintf(buf, len, "%.*f", decimals, pct);
    if (strtod(buf, NULL) == pct)
      break;
  }
  return buf;
}

void tl_percent_sentence(double pct, const char *probe, const int64_t *value_ns,
                         const int64_t *delay_ns, size_t n, char *buf, size_t len) {
  size_t at = 0;
#define ADD(...)                                                                                   \
  do {                                                                                             \
    int k_ = snprintf(buf + at, at < len ? len - at : 0, __VA_ARGS__);                             \
    if (k_ > 0)                                                                                    \
      at += (size_t)k_;                                                                            \
  } while (0)
  ADD("%s percent of calls took up to ", TL_PCT(pct));
  for (size_t i = 0; i < n; i++) {
    char v[32];
    tl_format_ms((double)value_ns[i], v, sizeof v);
    ADD("%s%s", i == 0 ? "" : i + 1 == n ? " and " : ", ", v);
  }
  const tl_probe_about *about = tl_probe_about_find(probe);
  const char *call = about && about->call ? about->call : probe;
  ADD(" (for ");
  for (size_t i = 0; i < n; i++) {
    char d[32];
    tl_format_delay_ms(delay_ns[i], d, sizeof d);
    ADD("%s%s(%s)", i == 0 ? "" : i + 1 == n ? " and " : ", ", call, d);
  }
  ADD("%s)", n > 1 ? " respectively" : "");
#undef ADD
  if (at >= len && len)
    buf[len - 1] = '\0';
}
