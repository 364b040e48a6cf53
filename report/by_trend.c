/* by_trend.c: how the tail of a --by comparison changes with a numeric key
 * (memory, CPUs): Spearman's rank correlation, at p90 and at p99, between
 * the key's value and each session's own lateness, with its 95% interval by
 * Fisher's z. Sessions are the unit of evidence; where several hosts share
 * a value, each host counts once (the median of its sessions). by_answer.c
 * says it on the page, and json.c in JSON. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compute.h"

/* ======================================================================== */
/* How the tail changes with a numeric key                                   */

/* Average ranks (1-based; ties share their mean rank) of v[0..n) into r,
 * by one sort: a fleet's month is tens of thousands of sessions. */
typedef struct {
  double v;
  size_t i;
} ranked;

static int ranked_cmp(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  return (x->v > y->v) - (x->v < y->v);
}

static int ranks(const double *v, size_t n, double *r) {
  ranked *idx = malloc((n + 1) * sizeof *idx);
  if (!idx)
    return TL_ENOMEM;
  for (size_t i = 0; i < n; i++)
    idx[i] = (ranked){v[i], i};
  qsort(idx, n, sizeof *idx, ranked_cmp);
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j + 1 < n && idx[j + 1].v == idx[i].v)
      j++;
    for (size_t k = i; k <= j; k++)
      r[idx[k].i] = (double)(i + j) / 2 + 1;
    i = j + 1;
  }
  free(idx);
  return TL_OK;
}

int tl__spearman(const double *x, const double *y, size_t n, tl__rank_corr *out) {
  memset(out, 0, sizeof *out);
  out->n = n;
  out->rho = out->lo = out->hi = NAN;
  if (n < 4)
    return TL_OK;
  double *rx = malloc(2 * n * sizeof *rx);
  if (!rx)
    return TL_ENOMEM;
  double *ry = rx + n;
  if (ranks(x, n, rx) || ranks(y, n, ry)) {
    free(rx);
    return TL_ENOMEM;
  }
  double mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < n; i++)
    mx += rx[i], my += ry[i];
  mx /= (double)n, my /= (double)n;
  for (size_t i = 0; i < n; i++) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) * (rx[i] - mx);
    syy += (ry[i] - my) * (ry[i] - my);
  }
  free(rx);
  if (!(sxx > 0 && syy > 0))
    return TL_OK; /* one of them does not vary: no correlation to speak of */
  out->rho = sxy / sqrt(sxx * syy);
  /* Fisher's z with the variance 1.06 / (n - 3) that Fieller, Hartley and
   * Pearson (1957) found for Spearman's rho. */
  double r = fmax(-0.999999, fmin(0.999999, out->rho));
  double z = atanh(r), se = sqrt(1.06 / (double)(n - 3));
  out->lo = tanh(z - 1.959964 * se);
  out->hi = tanh(z + 1.959964 * se);
  return TL_OK;
}

/* One session's place in a trend: its value and its own p90 and p99
 * lateness. */
typedef struct {
  double x, y[2];
  const char *host;
  size_t session; /* its index in the comparison */
} trend_row;

struct tl__trend_rows {
  trend_row *row;
  size_t n;
};

static int row_cmp(const void *a, const void *b) {
  const trend_row *r = a, *s = b;
  if (r->x != s->x)
    return r->x < s->x ? -1 : 1;
  return strcmp(r->host, s->host);
}

const double tl__by_trend_pcts[2] = {90, 99};

/* The rows of the sessions of one probe and delay in the trend, sorted by
 * value then host; returns how many. */
static size_t trend_rows(const tl_comparison *c, const tl__by *by, int axis, const char *probe,
                         int64_t delay_ns, trend_row *rows) {
  int64_t armed = tl_probe_armed_ns(probe, delay_ns);
  size_t n = 0;
  for (size_t i = 0; i < c->sessions.count; i++) {
    const tl_session *s = &c->sessions.items[i];
    if (strcmp(s->probe, probe) != 0 || s->delay_ns != delay_ns || !c->details[i].count)
      continue;
    tl_dist own;
    const tl_dist *d = &own;
    tl__session_dist(&c->details[i], 0, 3, &own);
    int k90 = tl__pct_index(d, tl__by_trend_pcts[0]), k99 = tl__pct_index(d, tl__by_trend_pcts[1]);
    char name[96];
    double x;
    if (k90 < 0 || k99 < 0 ||
        !tl__by_part(c, i, by->k[axis].key, by->k[axis].tag, name, sizeof name, &x) || isnan(x))
      continue;
    rows[n].x = x;
    rows[n].host = s->host_fingerprint;
    rows[n].session = i;
    rows[n].y[0] = (double)(d->pct_ns[k90] - armed);
    rows[n++].y[1] = (double)(d->pct_ns[k99] - armed);
  }
  qsort(rows, n, sizeof *rows, row_cmp);
  return n;
}

/* Collapses rows into one per host and value (the median of its sessions),
 * in place; returns how many remain. */
static size_t per_host(trend_row *rows, size_t n, double *scratch) {
  size_t m = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && rows[j].x == rows[i].x && strcmp(rows[j].host, rows[i].host) == 0)
      j++;
    trend_row r = rows[i];
    for (size_t w = 0; w < 2; w++) {
      for (size_t k = i; k < j; k++)
        scratch[k - i] = rows[k].y[w];
      r.y[w] = tl__median(scratch, j - i);
    }
    rows[m++] = r;
    i = j;
  }
  return m;
}

int tl__trend_rows_of(const tl_comparison *c, const char *probe, int64_t delay_ns,
                      tl__trend_rows **out) {
  *out = NULL;
  if (!c->by_keys || tl__by_numeric_axis(c->by_keys) < 0)
    return TL_OK;
  tl__trend_rows *r = calloc(1, sizeof *r);
  trend_row *row = malloc((c->sessions.count + 1) * sizeof *row);
  if (!r || !row) {
    free(r);
    free(row);
    return TL_ENOMEM;
  }
  r->row = row;
  r->n = trend_rows(c, c->by_keys, tl__by_numeric_axis(c->by_keys), probe, delay_ns, row);
  *out = r;
  return TL_OK;
}

void tl__trend_rows_free(tl__trend_rows *r) {
  if (r)
    free(r->row);
  free(r);
}

int tl__by_trend_in(const tl__trend_rows *all, const unsigned char *in, tl__by_trend *out) {
  memset(out, 0, sizeof *out);
  for (size_t w = 0; w < 2; w++)
    out->r[w].rho = out->r[w].lo = out->r[w].hi = NAN;
  if (!all)
    return TL_OK;
  size_t cap = all->n + 1;
  trend_row *rows = malloc(cap * sizeof *rows);
  double *v = malloc(3 * cap * sizeof *v);
  if (!rows || !v) {
    free(rows);
    free(v);
    return TL_ENOMEM;
  }
  /* Still sorted: a stratum keeps its rows' order. */
  size_t n = 0;
  for (size_t i = 0; i < all->n; i++)
    if (!in || in[all->row[i].session])
      rows[n++] = all->row[i];
  out->sessions = n;
  size_t hosts = 0;
  for (size_t i = 0; i < n; i++) {
    out->values += i == 0 || rows[i].x != rows[i - 1].x;
    hosts += i == 0 || rows[i].x != rows[i - 1].x || strcmp(rows[i].host, rows[i - 1].host) != 0;
  }
  /* Several hosts on one value: hosts are the units, else sessions. */
  out->by_host = hosts > out->values;
  out->units = out->by_host ? per_host(rows, n, v) : n;
  double *x = v + cap, *y = x + cap;
  int rc = TL_OK;
  for (size_t w = 0; w < 2 && !rc; w++) {
    for (size_t i = 0; i < out->units; i++)
      x[i] = rows[i].x, y[i] = rows[i].y[w];
    rc = tl__spearman(x, y, out->units, &out->r[w]);
    out->r[w].values = out->values;
  }
  out->one_host_each = hosts == out->values;
  free(rows);
  free(v);
  return rc;
}

int tl__by_trend_of(const tl_comparison *c, const char *probe, int64_t delay_ns,
                    const unsigned char *in, tl__by_trend *out) {
  tl__trend_rows *all; /* NULL on failure: the trend then says nothing */
  int rc = tl__trend_rows_of(c, probe, delay_ns, &all);
  int e = tl__by_trend_in(all, in, out);
  tl__trend_rows_free(all);
  return rc ? rc : e;
}
