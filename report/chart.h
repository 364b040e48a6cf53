/* chart.h: the page's histogram of a group (chart.c); internal to report/. */
#ifndef TL_REPORT_CHART_H
#define TL_REPORT_CHART_H

#include <stddef.h>
#include <stdint.h>

#include "tl_store.h"

/* Bins of width from lo, the last also up to hi, and the samples above hi
 * in over: filled from a sweep's group (set `group` of the sweep). */
typedef struct {
  int64_t lo, width, hi;
  int64_t *counts; /* bins of them, and over: the caller's, zeroed */
  size_t bins;
  int64_t *over;
  int64_t min, max; /* the group's */
  int64_t *part;    /* 4 x (bins + 1) counts while every sample is binned */
} tl__chart;

/* After tl_sweep_first and before tl_sweep_finish: asks the sweep for what
 * the chart needs of its next pass. TL_ENOMEM when out of memory. */
int tl__chart_ask(tl__chart *c, tl_sweep *w, size_t group, int64_t lo, int64_t width, int64_t hi,
                  int64_t *counts, size_t bins, int64_t *over);
/* After tl_sweep_finish: the counts. */
void tl__chart_fill(tl__chart *c, const tl_sweep *w);
void tl__chart_free(tl__chart *c);

#endif
