/* support_stats.h: a group of synthetic sessions for the tests of the
 * statistics' internals (test_stats.c, test_stats_linear.c). */
#ifndef TL_TEST_SUPPORT_STATS_H
#define TL_TEST_SUPPORT_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "stats_internal.h"
#include "tl_report.h"

/* Fills v with the per samples of session i. */
typedef void tl_test_fill_fn(void *ctx, size_t i, int64_t *v, size_t per);

typedef struct {
  tl_comparison cmp; /* its sessions and their details only */
  int64_t *ids;      /* the sessions' ids, 1 .. ns */
  tl__kept *kept;    /* the group's samples as a comparison keeps them */
  int64_t *own;      /* each session's values at the pcts, for cmp.details */
  char (*uuid)[24];
} tl_test_group;

/* One group of ns sessions of per samples each from fill, kept as a
 * comparison keeps them (t->kept, finished), each session's own values at
 * pcts[0..np) given as the comparison gives them. Free with
 * tl_test_group_free, after tl__kept_free(t->kept) once nothing borrows its
 * samples. */
void tl_test_group_make(tl_test_group *t, size_t ns, size_t per, const double *pcts, size_t np,
                        tl_test_fill_fn *fill, void *ctx);
void tl_test_group_free(tl_test_group *t);

#endif
