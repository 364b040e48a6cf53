/* hgrm.c: the percentile distribution text format of HdrHistogram ("hgrm"),
 * so that HdrHistogram's plotters and tools read tl data. The layout is
 * HdrHistogram's classic one (value in milliseconds, percentile as a
 * fraction, total count, 1/(1-percentile); percentile ticks that halve the
 * distance to 100% five steps at a time, then a footer), but every value is
 * the exact nearest-rank sample, not a bucket bound, and TotalCount is that
 * rank. Every tick is found in the same sweep (dist.c), usually two
 * passes over the samples. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

enum { TICKS_PER_HALF = 5, MAX_TICKS = 2048 };

int tl__write_hgrm(tl_store *store, const tl_filter *filter, FILE *out) {
  tl_session_list list;
  int rc = tl_store_read_begin(store);
  if (!rc)
    rc = tl_store_sessions(store, filter, &list);
  if (rc) {
    tl_store_read_end(store);
    return rc;
  }
  int64_t *ids = malloc((list.count ? list.count : 1) * sizeof *ids);
  double *ticks = malloc(MAX_TICKS * sizeof *ticks);
  size_t *at = malloc(MAX_TICKS * sizeof *at);
  for (size_t i = 0; ids && i < list.count; i++)
    ids[i] = list.items[i].id;
  tl_sweep *w = ids ? tl_sweep_store(store, ids, list.count, NULL, 0) : NULL;
  if (!w || !ticks || !at) {
    rc = tl__store_fail(store, TL_ENOMEM, "out of memory");
    goto done;
  }
  if ((rc = tl_sweep_first(w, NULL, NULL)))
    goto done;
  tl_dist d;
  tl_sweep_dist(w, list.count, &d);
  if (d.count == 0) {
    rc = tl__store_fail(store, TL_ENOTFOUND, "no samples match the filters");
    goto done;
  }
  /* HdrHistogram's ticks, until the rank reaches the last sample. */
  size_t nt = 0;
  double p = 0;
  while (nt < MAX_TICKS - 1 && tl_rank(p, d.count) < d.count) {
    ticks[nt++] = p;
    int64_t half = (int64_t)pow(2, floor(log(100.0 / (100.0 - p)) / log(2)) + 1);
    p += 100.0 / (double)(TICKS_PER_HALF * half);
  }
  ticks[nt++] = 100;
  for (size_t i = 0; i < nt && !rc; i++)
    if ((at[i] = tl_sweep_want(w, tl_rank(ticks[i], d.count))) == SIZE_MAX)
      rc = TL_ENOMEM;
  if (!rc)
    rc = tl_sweep_finish(w);
  if (rc == TL_ENOMEM)
    tl__store_fail(store, rc, "out of memory");
  if (rc)
    goto done;
  fprintf(out, "%12s %12s %12s %12s\n\n", "Value", "Percentile", "TotalCount", "1/(1-Percentile)");
  for (size_t i = 0; i < nt; i++) {
    double f = ticks[i] / 100.0;
    fprintf(out, "%12.6f %12f %12lld %12.2f\n", (double)tl_sweep_value(w, at[i]) / 1e6, f,
            (long long)tl_rank(ticks[i], d.count), f < 1 ? 1.0 / (1.0 - f) : INFINITY);
  }
  fprintf(out, "#[Mean    = %12.6f, StdDeviation   = %12.6f]\n", d.mean_ns / 1e6,
          d.stddev_ns / 1e6);
  fprintf(out, "#[Max     = %12.6f, Total count    = %12lld]\n", (double)d.max_ns / 1e6,
          (long long)d.count);
  fprintf(out, "#[Buckets = %12d, SubBuckets     = %12d]\n", 0, 0);
  if (ferror(out))
    rc = tl__store_fail(store, TL_EIO, "writing the distribution failed");
done:
  tl_store_read_end(store);
  tl_sweep_close(w);
  free(ids);
  free(ticks);
  free(at);
  tl_session_list_free(&list);
  return rc;
}
