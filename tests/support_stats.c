/* support_stats.c: see support_stats.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support_stats.h"

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

void tl_test_group_make(tl_test_group *t, size_t ns, size_t per, const double *pcts, size_t np,
                        tl_test_fill_fn *fill, void *ctx) {
  memset(t, 0, sizeof *t);
  t->cmp.sessions.count = ns;
  t->cmp.sessions.items = calloc(ns, sizeof *t->cmp.sessions.items);
  t->cmp.details = calloc(ns, sizeof *t->cmp.details);
  t->own = malloc(ns * np * sizeof *t->own + 1);
  t->ids = malloc(ns * sizeof *t->ids);
  t->uuid = malloc(ns * sizeof *t->uuid);
  int64_t *v = malloc(per * sizeof *v);
  size_t *at = malloc((ns + 1) * sizeof *at);
  assert_true(t->cmp.sessions.items && t->cmp.details && t->own && t->ids && t->uuid && v && at);
  for (size_t i = 0; i < ns; i++) {
    snprintf(t->uuid[i], sizeof t->uuid[i], "s-%zu", i);
    t->cmp.sessions.items[i] = (tl_session){.id = (int64_t)i + 1,
                                            .uuid = t->uuid[i],
                                            .sample_count = (int64_t)per,
                                            .started_ns = (int64_t)i};
    t->ids[i] = (int64_t)i + 1;
    at[i] = i;
  }
  tl_group g;
  memset(&g, 0, sizeof g);
  g.label = "synthetic";
  g.probe = "uv";
  g.session_ids = t->ids;
  g.session_at = at;
  g.session_count = ns;
  size_t budget = SIZE_MAX;
  t->kept = tl__kept_new(&t->cmp, &g, "ci", &budget);
  free(at); /* read only while the keeping is readied */
  assert_non_null(t->kept);
  for (size_t i = 0; i < ns; i++) {
    fill(ctx, i, v, per);
    assert_int_equal(tl__kept_add(t->kept, i, v, per), 0);
    qsort(v, per, sizeof *v, cmp_i64);
    tl_session_detail *d = &t->cmp.details[i];
    d->count = (int64_t)per;
    d->pct_count = np;
    d->pcts = pcts;
    d->pct_ns = t->own + i * np;
    for (size_t q = 0; q < np; q++)
      d->pct_ns[q] = v[tl_rank(pcts[q], (int64_t)per) - 1];
  }
  assert_int_equal(tl__kept_finish(t->kept), TL_OK);
  free(v);
}

void tl_test_group_free(tl_test_group *t) {
  free(t->cmp.sessions.items);
  free(t->cmp.details);
  free(t->own);
  free(t->ids);
  free(t->uuid);
  memset(t, 0, sizeof *t);
}
