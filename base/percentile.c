/* percentile.c: the one definition of a percentile that every tl number
 * uses, and the words tl says one in, from tlcollect's last line to the
 * report's summary. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tl_base.h"

/* pct as the exact fraction its decimal form says, num / den: 99.9 is
 * 999 / 1000, not the double nearest 99.9 (a hair above it, which would put
 * rank 999 of 1000 at 1000). At most 17 significant digits, so num < 2^57. */
__extension__ typedef unsigned __int128 u128;

typedef struct {
  double pct;
  uint64_t num;
  u128 den;
} pct_fraction;

static pct_fraction pct_fraction_of(double pct) {
  char buf[TL_PCT_LEN];
  pct_fraction f = {pct, 0, 1};
  int after_dot = 0;
  for (const char *c = tl_format_pct(pct, buf, sizeof buf); *c; c++) {
    if (*c == '.') {
      after_dot = 1;
      continue;
    }
    f.num = f.num * 10 + (uint64_t)(*c - '0');
    if (after_dot)
      f.den *= 10;
  }
  return f;
}

int64_t tl_rank(double pct, int64_t n) {
  /* ceil(num * n / (100 * den)) in 128-bit integers: exact for every n that
   * fits in 64 bits (num * n < 2^120). Formatting a percentile costs a few
   * snprintf calls, so the last few fractions are kept: callers ask for the
   * same handful of percentiles over and over. */
  enum { MEMO = 8 };
  static _Thread_local pct_fraction memo[MEMO];
  static _Thread_local unsigned memo_used, memo_next;
  if (n < 1)
    return n;
  if (!(pct > 0))
    return 1;
  if (pct >= 100)
    return n;
  const pct_fraction *f = NULL;
  for (unsigned i = 0; i < memo_used && !f; i++)
    if (memo[i].pct == pct)
      f = &memo[i];
  if (!f) {
    memo[memo_next] = pct_fraction_of(pct);
    f = &memo[memo_next];
    memo_next = (memo_next + 1) % MEMO;
    if (memo_used < MEMO)
      memo_used++;
  }
  u128 whole = (u128)f->num * (uint64_t)n, den = f->den * 100;
  int64_t r = (int64_t)((whole + den - 1) / den);
  return r < 1 ? 1 : r > n ? n : r;
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
