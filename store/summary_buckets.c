/* summary_buckets.c: the percentiles a session's summary holds and the
 * bounds of its log-linear histogram's buckets (tl_store.h). They sit
 * beneath every file that reads them: the summary writer (summary.c), its
 * windows (summary_watch.c), the exact-rank engine (rank.c), which locates
 * ranks in that histogram, and the sweep (dist.c), so that those files'
 * calls go one way. */
#include "tl_store.h"

const double tl_summary_pcts[TL_SUMMARY_PCTS] = {50, 90, 99, 99.9, 99.99};

enum { SUB = 1 << TL_SUMMARY_SUB_BITS };

void tl_summary_bucket_bounds(size_t b, int64_t *lo, int64_t *hi) {
  if (b < SUB) {
    *lo = *hi = (int64_t)b;
    return;
  }
  int e = (int)(b / SUB) + TL_SUMMARY_SUB_BITS - 1;
  uint64_t sub = b % SUB;
  uint64_t l = (SUB + sub) << (e - TL_SUMMARY_SUB_BITS);
  *lo = (int64_t)l;
  *hi = (int64_t)(l + ((uint64_t)1 << (e - TL_SUMMARY_SUB_BITS)) - 1);
}
