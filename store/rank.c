/* rank.c: the one definition of a percentile that every tl number uses. */
#include "tl_store.h"

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
