/* stats.c: how sure a comparison is. Per group: confidence intervals of
 * percentiles (order statistics over the samples, a bootstrap over sessions
 * when a group has several, Woodruff's interval over sessions when it has
 * very many), warnings when a percentile rests on
 * too few samples, the spread between sessions and lasting changes in the
 * per-session p90/p99 series; per pair of groups: the difference with a
 * bootstrap interval and a Mann-Whitney rank test. Every random draw comes
 * from a stream seeded from the label, probe and delay, so a database always
 * gives the same bytes. Methods and their limits are described in
 * docs/statistics.md. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats_internal.h"

enum {
  B = TL_STATS_REPLICATES,
};

static const double SERIES_PCTS[TL_STATS_SERIES] = {90, 99};

/* Sorts a row of replicates: by radix (tl_sort_i64), or by comparisons
 * when there is no memory for its scratch. */
static void sort_row(int64_t *v, size_t n) {
  if (tl_sort_i64(v, n))
    qsort(v, n, sizeof *v, tl__cmp_i64);
}

/* ======================================================================== */
/* One group: intervals, replicates, spread, series                          */

void tl__gcalc_free(tl__gcalc *g) {
  tl__sset_free(&g->set);
  free(g->rep);
  free(g->logl);
  free(g->gaps);
  for (int k = 0; k < TL_STATS_SERIES; k++)
    free(g->series[k]);
  memset(g, 0, sizeof *g);
}

static int64_t samples_needed(double pct) {
  if (pct >= 100)
    return 0;
  int64_t n = (int64_t)ceil(TL_STATS_MIN_ABOVE / (1 - pct / 100)) - 2;
  if (n < 1)
    n = 1;
  while (n - tl_rank(pct, n) < TL_STATS_MIN_ABOVE)
    n++;
  return n;
}

/* The session bootstrap's replicates of every percentile of g (rows
 * sorted): resample the sessions, pool their samples, take the pN; the
 * intervals are their middle 95%. */
static int session_replicates(tl__gcalc *g, const double *pcts, size_t np) {
  const tl__sset *x = &g->set;
  g->rep = malloc(np * B * sizeof *g->rep);
  /* Each session's count in a resample: small, so that the draws' random
   * increments stay in the cache with many sessions. */
  uint32_t *w = calloc(x->ns ? x->ns : 1, sizeof *w);
  /* The sessions' sizes side by side, for the samples a resample holds:
   * not a session's whole record each (a cache miss each, with many
   * sessions). */
  int64_t *size = malloc(x->ns * sizeof *size);
  tl__boot bt = {0};
  if (!g->rep || !w || !size || tl__boot_init(x, &bt)) {
    free(w);
    free(size);
    return TL_ENOMEM;
  }
  for (size_t i = 0; i < x->ns; i++)
    size[i] = x->s[i].n;
  tl__rng r = {g->seed};
  tl__mod by_ns = tl__mod_of(x->ns ? x->ns : 1);
  for (size_t b = 0; b < B; b++) {
    int64_t total = 0;
    while (total == 0) { /* a resample of empty sessions only is drawn again */
      memset(w, 0, x->ns * sizeof *w);
      for (size_t i = 0; i < x->ns; i++)
        w[tl__rng_below_mod(&r, &by_ns)] += 1;
      /* the samples drawn, in order rather than at each draw's random place */
      for (size_t i = 0; i < x->ns; i++)
        total += (int64_t)w[i] * size[i];
    }
    tl__boot_weigh(&bt, w);
    for (size_t k = 0; k < np; k++)
      g->rep[k * B + b] = tl__boot_at(&bt, w, (double)tl_rank(pcts[k], total), k);
  }
  free(w);
  free(size);
  tl__boot_free(&bt);
  for (size_t k = 0; k < np; k++)
    sort_row(g->rep + k * B, B);
  size_t cut = (size_t)(B * (1 - TL__CONF) / 2);
  for (size_t k = 0; k < np; k++) {
    g->pct[k].lo_ns = g->rep[k * B + cut];
    g->pct[k].hi_ns = g->rep[k * B + B - 1 - cut];
  }
  return TL_OK;
}

/* The first pooled sample whose running weight (cum) reaches rank, within
 * the pool. */
static size_t weighted_at(const double *cum, size_t m, double rank) {
  size_t lo = 0, hi = m - 1;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (cum[mid] >= rank - 1e-6)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

/* Woodruff's interval (1952) with the sessions as clusters: the estimated
 * distribution function at the percentile's value q is a ratio over
 * sessions, F = sum y_i / sum n_i (y_i the samples of session i up to q,
 * n_i its samples), whose variance across clusters is linearised as
 * used / (used - 1) sum (y_i - F n_i)^2 / (sum n_i)^2; the interval is the
 * pool's values at the percentile's rank plus and minus t of that standard
 * error. One pass over the kept samples a percentile, however many sessions
 * they come from, where a bootstrap draws every session a replicate. A
 * reduced session's kept sample stands for n / m of its samples, as in the
 * bootstrap. */
static int woodruff_intervals(tl__gcalc *g, const double *pcts, size_t np) {
  const tl__sset *x = &g->set;
  size_t ns = x->ns ? x->ns : 1, m = x->m, used = 0;
  double *per = malloc(ns * sizeof *per), *y = malloc(ns * sizeof *y);
  double *cum = malloc((m ? m : 1) * sizeof *cum), total = 0, run = 0;
  if (!per || !y || !cum) {
    free(per);
    free(y);
    free(cum);
    return TL_ENOMEM;
  }
  for (size_t i = 0; i < x->ns; i++) {
    per[i] = x->s[i].m ? (double)x->s[i].n / (double)x->s[i].m : 0;
    used += x->s[i].m > 0;
    total += x->s[i].m ? (double)x->s[i].n : 0;
  }
  for (size_t j = 0; j < m; j++)
    cum[j] = (run += per[x->tag[j]]);
  double t = used > 1 ? tl__t_quantile(0.5 + TL__CONF / 2, (double)(used - 1)) : 0;
  for (size_t k = 0; k < np && m; k++) {
    double rank = (double)tl_rank(pcts[k], x->n);
    size_t at = weighted_at(cum, m, rank), end = at;
    while (end < m && x->pool[end] == x->pool[at])
      end++;
    memset(y, 0, ns * sizeof *y);
    for (size_t j = 0; j < end; j++)
      y[x->tag[j]] += per[x->tag[j]];
    double f = cum[end - 1] / total, sq = 0;
    for (size_t i = 0; i < x->ns; i++) {
      double e = x->s[i].m ? y[i] - f * (double)x->s[i].n : 0;
      sq += e * e;
    }
    double half = used > 1 ? t * sqrt((double)used / (double)(used - 1) * sq) : 0;
    int64_t lo = x->pool[weighted_at(cum, m, rank - half)];
    int64_t hi = x->pool[weighted_at(cum, m, rank + half)];
    /* A reduced pool's value may miss the exact estimate shown: the interval
     * holds it, as every interval tl shows does. */
    int64_t est = g->dist.count ? g->dist.pct_ns[k] : x->pool[at];
    g->pct[k].lo_ns = lo < est ? lo : est;
    g->pct[k].hi_ns = hi > est ? hi : est;
  }
  free(per);
  free(y);
  free(cum);
  return TL_OK;
}

int tl__session_interval(tl__gcalc *g, const double *pcts, size_t np, int linear) {
  free(g->rep);
  g->rep = NULL;
  g->linear = linear;
  return linear ? woodruff_intervals(g, pcts, np) : session_replicates(g, pcts, np);
}

/* Each session's log lateness at every percentile, from its own exact
 * values (own, rows of stride values): the evidence of every verdict. */
static int session_logs(tl__gcalc *g, const int64_t *own, size_t stride, size_t np,
                        int64_t armed_ns) {
  const tl__sset *x = &g->set;
  g->logl = malloc((np * x->ns + 1) * sizeof *g->logl);
  if (!g->logl)
    return TL_ENOMEM;
  for (size_t k = 0; k < np; k++) {
    size_t used = 0;
    for (size_t i = 0; i < x->ns; i++) {
      if (!x->s[i].n)
        continue;
      int64_t late = own[i * stride + k] - armed_ns;
      g->logl[k * x->ns + used++] =
          log((double)(late > TL_STATS_LOG_FLOOR_NS ? late : TL_STATS_LOG_FLOOR_NS));
    }
    g->used = used;
  }
  return TL_OK;
}

/* Computes everything about the sessions ids[0..n): dist (given, or computed
 * when NULL), method, intervals, bootstrap replicates, each session's log
 * lateness and, with series, the sessions' own p90 and p99. kept: the
 * samples the comparison kept of exactly these sessions with this seed, or
 * NULL to read them. */
int tl__gcalc_run(tl_store *store, const tl_comparison *cmp, const int64_t *ids, size_t n,
                  const double *pcts, size_t np, const tl_dist *dist, int64_t armed_ns,
                  uint64_t seed, int series, const tl__kept *kept, tl__gcalc *g) {
  memset(g, 0, sizeof *g);
  g->seed = seed;
  int rc = TL_OK;
  if (kept) {
    g->set = kept->set;
    g->set.borrowed = 1;
  } else {
    /* Reading the samples, the distribution comes from the same reading. */
    rc = tl__sset_load_dist(store, cmp, ids, n, seed, pcts, np, dist ? NULL : &g->dist, &g->set);
    if (rc)
      return rc;
  }
  tl__sset *x = &g->set;
  if (dist) {
    g->dist = *dist;
  } else if (kept && x->exact) {
    rc = tl_dist_of_values(x->pool, x->m, pcts, np, &g->dist);
  } else if (kept) {
    rc = tl_dist_compute(store, ids, n, pcts, np, &g->dist);
  }
  if (rc)
    return rc;
  if (!x->n || !x->m)
    return TL_OK;
  size_t with_samples = 0;
  for (size_t i = 0; i < x->ns; i++)
    with_samples += x->s[i].n > 0;
  g->method = with_samples >= TL_STATS_BOOT_SESSIONS ? TL_CI_SESSIONS : TL_CI_ORDER;

  /* Sessions' own values: the spread, and the series. */
  int64_t *own = malloc((x->ns * (np + TL_STATS_SERIES) + 1) * sizeof *own);
  if (!own)
    return TL_ENOMEM;
  /* One pass per session for both lists when they fit together. */
  double both[TL_MAX_PCTS + TL_STATS_SERIES];
  memcpy(both, pcts, np * sizeof *pcts);
  memcpy(both + np, SERIES_PCTS, sizeof SERIES_PCTS);
  int together = series && np + TL_STATS_SERIES <= TL_MAX_PCTS;
  for (size_t i = 0; i < x->ns && !rc; i++) {
    int64_t *row = own + i * (np + TL_STATS_SERIES);
    rc = tl__sess_values(store, &x->s[i], both, together ? np + TL_STATS_SERIES : np, row);
    if (!rc && series && !together)
      rc = tl__sess_values(store, &x->s[i], SERIES_PCTS, TL_STATS_SERIES, row + np);
  }
  for (size_t k = 0; k < np && !rc; k++) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    size_t used = 0;
    for (size_t i = 0; i < x->ns; i++) {
      if (!x->s[i].n)
        continue;
      int64_t v = own[i * (np + TL_STATS_SERIES) + k];
      lo = v < lo ? v : lo;
      hi = v > hi ? v : hi;
      used++;
    }
    g->pct[k].spread_ns = used > 1 ? hi - lo : 0;
  }
  for (int s = 0; s < TL_STATS_SERIES && series && !rc; s++) {
    g->series[s] = malloc((x->ns ? x->ns : 1) * sizeof *g->series[s]);
    if (!g->series[s])
      rc = TL_ENOMEM;
    for (size_t i = 0; i < x->ns && !rc; i++)
      g->series[s][i] = own[i * (np + TL_STATS_SERIES) + np + (size_t)s];
  }
  if (!rc)
    rc = session_logs(g, own, np + TL_STATS_SERIES, np, armed_ns);
  free(own);
  if (rc)
    return rc;

  /* Intervals and warnings. */
  int64_t ranks[2 * TL_MAX_PCTS], vals[2 * TL_MAX_PCTS];
  for (size_t k = 0; k < np; k++) {
    tl_pct_stats *p = &g->pct[k];
    p->above = x->n - tl_rank(pcts[k], x->n);
    p->few = p->above < TL_STATS_MIN_ABOVE;
    p->needed = samples_needed(pcts[k]);
    p->lo_ns = p->hi_ns = -1;
  }
  if (g->method == TL_CI_SESSIONS &&
      (rc = tl__session_interval(g, pcts, np, with_samples >= TL_STATS_LINEAR_SESSIONS)))
    return rc;
  size_t nr = tl__stats_ci_ranks(x->n, with_samples, pcts, np, ranks);
  if (nr && (rc = tl__sset_values_at_ranks(store, x, ranks, nr, vals)))
    return rc;
  nr = 0;
  for (size_t k = 0; k < np && g->method == TL_CI_ORDER; k++) {
    int64_t lo, hi;
    tl_order_stat_ci(x->n, pcts[k], TL__CONF, &lo, &hi);
    if (lo)
      g->pct[k].lo_ns = vals[nr++];
    if (hi)
      g->pct[k].hi_ns = vals[nr++];
  }
  return TL_OK;
}

/* ======================================================================== */
/* Sessions as the unit of evidence                                          */

/* The mean and the sample variance of v[0..n) (variance NAN below 2). */
static void mean_var(const double *v, size_t n, double *mean, double *var) {
  double m = 0, q = 0;
  for (size_t i = 0; i < n; i++)
    m += v[i];
  m /= n ? (double)n : 1;
  for (size_t i = 0; i < n; i++)
    q += (v[i] - m) * (v[i] - m);
  *mean = m;
  *var = n > 1 ? q / (double)(n - 1) : NAN;
}

/* Welch-Satterthwaite degrees of freedom of two variances of means. */
static double welch_df(double qa, size_t na, double qb, size_t nb) {
  double den = qa * qa / (double)(na - 1) + qb * qb / (double)(nb - 1);
  return den > 0 ? (qa + qb) * (qa + qb) / den : (double)(na + nb - 2);
}

/* Whether n sessions a label varying as va and vb would make a log ratio d
 * clear. */
static int enough_sessions(double d, double va, double vb, int64_t n) {
  double df = welch_df(va / (double)n, (size_t)n, vb / (double)n, (size_t)n);
  double se = sqrt((va + vb) / (double)n);
  /* t se < d asked as t < d / se: a settled answer leaves a margin of
   * 5e-11 around t, far more than the quotient's rounding. */
  int below = se > 0 ? tl__t_quantile_below(0.975, df, d / se) : -1;
  if (below >= 0)
    return below;
  return tl__t_quantile(0.975, df) * se < d;
}

/* The smallest number of sessions a label (at most 10,000) with which a log
 * ratio d would be clear if the sessions varied as va and vb say; 0 when
 * none would. */
static int64_t sessions_for(double d, double va, double vb) {
  d = fabs(d);
  if (!(d > 1e-9))
    return 0;
  if (!(va + vb > 0))
    return TL_STATS_MIN_SESSIONS;
  int64_t lo = TL_STATS_MIN_SESSIONS - 1, hi = 10000; /* not enough at lo, enough at hi */
  if (!enough_sessions(d, va, vb, hi))
    return 0;
  while (hi - lo > 1) {
    int64_t n = lo + (hi - lo) / 2;
    if (enough_sessions(d, va, vb, n))
      hi = n;
    else
      lo = n;
  }
  return hi;
}

/* A ratio of latenesses said as a difference at the pooled latenesses a and
 * b (each at least the floor): at the geometric mean g, the difference
 * g (sqrt(r) - 1 / sqrt(r)) is b - a for r = b / a and mirrors for 1 / r. */
static int64_t ratio_as_diff(double r, double a, double b) {
  double g = sqrt(a * b);
  return llround(g * (sqrt(r) - 1 / sqrt(r)));
}

void tl__session_diff(const tl__gcalc *a, const tl__gcalc *b, size_t k, int64_t la_ns,
                      int64_t lb_ns, int predict, tl__sdiff *out) {
  memset(out, 0, sizeof *out);
  int64_t diff = lb_ns - la_ns;
  out->lo_ns = out->hi_ns = diff;
  double ma, va, mb, vb;
  mean_var(a->logl ? a->logl + k * a->set.ns : NULL, a->logl ? a->used : 0, &ma, &va);
  mean_var(b->logl ? b->logl + k * b->set.ns : NULL, b->logl ? b->used : 0, &mb, &vb);
  double fa = (double)(la_ns > TL_STATS_LOG_FLOOR_NS ? la_ns : TL_STATS_LOG_FLOOR_NS);
  double fb = (double)(lb_ns > TL_STATS_LOG_FLOOR_NS ? lb_ns : TL_STATS_LOG_FLOOR_NS);
  double pooled = log(fb / fa);
  /* What would settle it, from whichever side's variation is known. */
  double ka = a->used >= 2 ? va : b->used >= 2 ? vb : NAN;
  double kb = b->used >= 2 ? vb : ka;
  out->needed = isnan(ka) ? TL_STATS_FIRST_SESSIONS : sessions_for(pooled, ka, kb);
  double se, df;
  if (predict) {
    /* One new session against the spread of the earlier ones. */
    if (a->used < TL_STATS_MIN_SESSIONS || b->used != 1)
      return;
    se = sqrt(va * (1 / (double)a->used + 1));
    df = (double)(a->used - 1);
  } else {
    if (a->used < TL_STATS_MIN_SESSIONS || b->used < TL_STATS_MIN_SESSIONS)
      return;
    double qa = va / (double)a->used, qb = vb / (double)b->used;
    se = sqrt(qa + qb);
    df = welch_df(qa, a->used, qb, b->used);
  }
  double h = tl__t_quantile(0.975, df) * se, d = mb - ma;
  int64_t lo = ratio_as_diff(exp(d - h), fa, fb), hi = ratio_as_diff(exp(d + h), fa, fb);
  out->decided = 1;
  out->lo_ns = lo < diff ? lo : diff;
  out->hi_ns = hi > diff ? hi : diff;
}

/* ======================================================================== */
/* The statistics of a comparison                                            */

void tl_stats_free(tl_stats *st) {
  if (!st)
    return;
  for (size_t i = 0; i < st->group_count; i++) {
    tl_group_stats *g = &st->groups[i];
    free(g->started_ns);
    for (int k = 0; k < TL_STATS_SERIES; k++)
      free(g->series_ns[k]);
    free(g->changes);
  }
  free(st->groups);
  free(st->pairs);
  free(st->pair_since);
  memset(st, 0, sizeof *st);
}

/* Fills the group's series and hands each to the runner to find its
 * lasting changes (jobs[0..TL_STATS_SERIES), read by group_changes). A
 * session's value enters the search only when it rests on enough samples
 * (the same rule as the warnings); the others are -1 in the series. */
static int group_series(const tl_group *grp, const tl__gcalc *c, tl_group_stats *gs,
                        tl__steps_runner *runner, tl__steps_job *jobs) {
  size_t n = c->set.ns;
  gs->session_count = n;
  gs->started_ns = malloc((n ? n : 1) * sizeof *gs->started_ns);
  if (!gs->started_ns)
    return TL_ENOMEM;
  for (size_t i = 0; i < n; i++)
    gs->started_ns[i] = c->set.s[i].started_ns;
  for (int s = 0; s < TL_STATS_SERIES; s++) {
    gs->series_pcts[s] = SERIES_PCTS[s];
    gs->series_ns[s] = malloc((n ? n : 1) * sizeof *gs->series_ns[s]);
    tl__steps_job *j = &jobs[s];
    j->x = malloc((n ? n : 1) * sizeof *j->x);
    j->at = malloc((n ? n : 1) * sizeof *j->at);
    if (!gs->series_ns[s] || !j->x || !j->at) {
      free(j->x);
      free(j->at);
      j->x = NULL;
      j->at = NULL;
      return TL_ENOMEM;
    }
    j->n = 0;
    for (size_t i = 0; i < n; i++) {
      int64_t sn = c->set.s[i].n;
      int ok = c->series[s] && sn > 0 && sn - tl_rank(SERIES_PCTS[s], sn) >= TL_STATS_MIN_ABOVE;
      gs->series_ns[s][i] = ok ? c->series[s][i] : -1;
      if (ok) {
        j->x[j->n] = (double)c->series[s][i];
        j->at[j->n++] = i;
      }
    }
    memset(&j->opts, 0, sizeof j->opts);
    j->opts.seed = tl__group_seed(grp->label, grp->probe, grp->delay_ns, s ? "p99" : "p90");
    int rc = tl__steps_runner_add(runner, j);
    if (rc)
      return rc;
  }
  return TL_OK;
}

/* The lasting changes of the group's series, p90's first, from its jobs
 * (searched). */
static int group_changes(tl_group_stats *gs, const tl__steps_job *jobs) {
  size_t total = 0;
  for (int s = 0; s < TL_STATS_SERIES; s++)
    total += jobs[s].found;
  if (!total)
    return TL_OK;
  gs->changes = malloc(total * sizeof *gs->changes);
  if (!gs->changes)
    return TL_ENOMEM;
  for (int s = 0; s < TL_STATS_SERIES; s++)
    for (size_t i = 0; i < jobs[s].found; i++) {
      const tl_step *st = &jobs[s].steps[i];
      tl_change *ch = &gs->changes[gs->change_count++];
      ch->pct = SERIES_PCTS[s];
      ch->session_index = st->index;
      ch->at_ns = gs->started_ns[ch->session_index];
      ch->before_ns = st->before;
      ch->after_ns = st->after;
      ch->p_value = st->p_value;
    }
  return TL_OK;
}

/* Without the rank test the pairs need of a group only its counts and its
 * sessions' logs: its samples can go before the next group's are read, so
 * that a block of 200 hosts does not hold 200 groups' samples at once. */
static void drop_samples(tl__gcalc *g) {
  size_t m = g->set.m, ns = g->set.ns;
  tl__sset_free(&g->set);
  g->set.m = m;
  g->set.ns = ns;
}

/* One more pair of out, the array grown by half when full. */
static tl_pair_stats *new_pair(tl_stats *out, size_t *cap) {
  if (out->pair_count == *cap) {
    size_t more = *cap ? *cap + *cap / 2 : 16;
    tl_pair_stats *grown = realloc(out->pairs, more * sizeof *grown);
    if (!grown)
      return NULL;
    out->pairs = grown;
    *cap = more;
  }
  tl_pair_stats *p = &out->pairs[out->pair_count++];
  memset(p, 0, sizeof *p);
  return p;
}

/* The pairs of a as the first group are made together, b rising: where
 * they begin, for tl__pair_of. */
static int index_pairs(tl_stats *out) {
  out->pair_since = malloc((out->group_count ? out->group_count : 1) * sizeof *out->pair_since);
  if (!out->pair_since)
    return TL_ENOMEM;
  for (size_t g = 0; g < out->group_count; g++)
    out->pair_since[g] = SIZE_MAX;
  for (size_t i = out->pair_count; i-- > 0;)
    out->pair_since[out->pairs[i].a] = i;
  return TL_OK;
}

/* The statistics of a comparison as they are worked out: each group's own
 * (group_work), as the comparison's pass over its samples ends or after,
 * then the pairs of each probe and delay and the changes (run_finish). */
typedef struct {
  tl_stats *out;
  int ranked;
  int sized;           /* run_size: 1 done, -1 out of memory */
  size_t ng;           /* groups, once run_size knows them */
  char *worked;        /* group i's own statistics are in calc[i] */
  char *paired;        /* group i's block has its pairs, its calcs freed */
  size_t pairs_cap;    /* room in out->pairs */
  tl__gcalc *calc;     /* per group */
  tl__steps_job *jobs; /* TL_STATS_SERIES a group */
  tl__steps_runner runner;
} stats_run;

static void run_open(stats_run *r, int ranked, tl_stats *out) {
  memset(r, 0, sizeof *r);
  memset(out, 0, sizeof *out);
  r->out = out;
  r->ranked = ranked;
  /* The changes are searched on a second thread while this one reads and
   * measures the next groups. */
  tl__steps_runner_start(&r->runner, 1);
}

/* Room for ng groups, made once. */
static int run_size(stats_run *r, size_t ng) {
  if (!r->sized) {
    r->out->groups = calloc(ng ? ng : 1, sizeof *r->out->groups);
    r->worked = calloc(ng ? ng : 1, 1);
    r->paired = calloc(ng ? ng : 1, 1);
    r->calc = calloc(ng ? ng : 1, sizeof *r->calc);
    r->jobs = calloc((ng ? ng : 1) * TL_STATS_SERIES, sizeof *r->jobs);
    r->sized = r->out->groups && r->worked && r->paired && r->calc && r->jobs ? 1 : -1;
    if (r->sized > 0) {
      r->ng = r->out->group_count = ng;
      r->out->ranked = r->ranked;
    }
  }
  return r->sized > 0 ? TL_OK : TL_ENOMEM;
}

/* Group i's own statistics, from the samples the comparison kept of it (or
 * read again), its series handed to the search for changes. */
static int group_work(stats_run *r, tl_store *store, const tl_comparison *cmp, size_t i) {
  const tl_group *g = &cmp->groups[i];
  tl__gcalc *c = &r->calc[i];
  r->worked[i] = 1;
  int rc = tl__gcalc_run(store, cmp, g->session_ids, g->session_count, g->dist.pcts,
                         g->dist.pct_count, &g->dist, tl_probe_armed_ns(g->probe, g->delay_ns),
                         tl__group_seed(g->label, g->probe, g->delay_ns, "ci"), 1,
                         tl__group_kept(cmp, i), c);
  if (rc)
    return rc;
  tl_group_stats *gs = &r->out->groups[i];
  gs->method = c->method;
  gs->linear = c->linear;
  memcpy(gs->pct, c->pct, sizeof gs->pct);
  rc = group_series(g, c, gs, &r->runner, &r->jobs[i * TL_STATS_SERIES]);
  if (r->ranked)
    return rc ? rc : tl__rank_keep_pool_only(c);
  drop_samples(c);
  return rc;
}

/* The pairs of the groups block[0..nb) (one probe and delay), whose own
 * statistics are in. */
static int block_pairs(stats_run *r, const tl_comparison *cmp, const size_t *block, size_t nb) {
  tl_stats *out = r->out;
  size_t first = out->pair_count;
  for (size_t i = 0; i < nb; i++)
    for (size_t j = i + 1; j < nb; j++) {
      const tl__gcalc *a = &r->calc[block[i]], *b = &r->calc[block[j]];
      if (!a->set.m || !b->set.m)
        continue;
      tl_pair_stats *p = new_pair(out, &r->pairs_cap);
      if (!p)
        return TL_ENOMEM;
      p->a = block[i];
      p->b = block[j];
      const tl_group *ga = &cmp->groups[block[i]];
      int64_t armed = tl_probe_armed_ns(ga->probe, ga->delay_ns);
      p->sessions_a = a->used;
      p->sessions_b = b->used;
      for (size_t k = 0; k < a->dist.pct_count; k++) {
        tl__sdiff sd;
        p->diff_ns[k] = b->dist.pct_ns[k] - a->dist.pct_ns[k];
        tl__session_diff(a, b, k, a->dist.pct_ns[k] - armed, b->dist.pct_ns[k] - armed, 0, &sd);
        p->lo_ns[k] = sd.lo_ns;
        p->hi_ns[k] = sd.hi_ns;
        p->decided = sd.decided;
        p->sessions_needed[k] = sd.needed;
        p->clear[k] = sd.decided && (p->lo_ns[k] > 0 || p->hi_ns[k] < 0);
        int64_t mag = p->diff_ns[k] < 0 ? -p->diff_ns[k] : p->diff_ns[k];
        p->spread_over[k] = a->pct[k].spread_ns > mag || b->pct[k].spread_ns > mag;
      }
    }
  return r->ranked ? tl__rank_pairs(r->calc, block, nb, out->pairs + first, out->pair_count - first)
                   : TL_OK;
}

/* The block's groups not worked out yet, its pairs, and its groups' samples
 * freed. */
static int block_finish(stats_run *r, tl_store *store, const tl_comparison *cmp,
                        const size_t *block, size_t nb) {
  int rc = TL_OK;
  for (size_t k = 0; k < nb && !rc; k++)
    if (!r->worked[block[k]])
      rc = group_work(r, store, cmp, block[k]);
  if (!rc)
    rc = block_pairs(r, cmp, block, nb);
  for (size_t k = 0; k < nb; k++) {
    tl__gcalc_free(&r->calc[block[k]]);
    r->paired[block[k]] = 1;
  }
  return rc;
}

/* The blocks not finished yet (a probe and delay at a time, so that only its
 * groups' samples are in memory together), in the order of their first
 * groups, and the changes once searched. */
static int run_finish(stats_run *r, tl_store *store, const tl_comparison *cmp) {
  size_t ng = r->ng;
  size_t *block = calloc(ng ? ng : 1, sizeof *block);
  int rc = block ? TL_OK : TL_ENOMEM;
  for (size_t first = 0; first < ng && !rc; first++)
    if (!r->paired[first])
      rc = block_finish(r, store, cmp, block, tl__block_of(cmp, first, block));
  free(block);
  if (!rc)
    rc = index_pairs(r->out);
  if (!rc)
    rc = tl__steps_runner_wait(&r->runner);
  for (size_t g = 0; g < ng && !rc; g++)
    rc = group_changes(&r->out->groups[g], &r->jobs[g * TL_STATS_SERIES]);
  return rc;
}

/* Everything but r->out, which the caller frees (tl_stats_free). */
static void run_close(stats_run *r) {
  tl__steps_runner_stop(&r->runner);
  for (size_t i = 0; i < r->ng * TL_STATS_SERIES && r->jobs; i++) {
    free(r->jobs[i].x);
    free(r->jobs[i].at);
  }
  free(r->jobs);
  for (size_t i = 0; i < r->ng && r->calc; i++)
    tl__gcalc_free(&r->calc[i]);
  free(r->calc);
  free(r->worked);
  free(r->paired);
}

static int stats_compute(tl_store *store, const tl_comparison *cmp, int ranked, tl_stats *out,
                         char *err, size_t errlen) {
  stats_run r;
  run_open(&r, ranked, out);
  int rc = run_size(&r, cmp->group_count);
  if (!rc)
    rc = run_finish(&r, store, cmp);
  run_close(&r);
  return rc ? tl__store_failed(store, rc, err, errlen) : TL_OK;
}

/* A group's own statistics as the comparison's pass over it ends; with the
 * rank test, which needs a block's groups together, the block's pairs as
 * soon as its last group is done (the comparison reads the blocks in turn),
 * so that only one block's samples are held at a time. */
static int group_done(void *ctx, tl_store *store, const tl_comparison *c, size_t group) {
  stats_run *r = ctx;
  int rc = run_size(r, c->group_count);
  if (!rc)
    rc = group_work(r, store, c, group);
  if (rc || !r->ranked)
    return rc;
  size_t *block = malloc(c->group_count * sizeof *block),
         nb = block ? tl__block_of(c, group, block) : 0;
  int all = block != NULL;
  for (size_t k = 0; k < nb && all; k++)
    all = r->worked[block[k]];
  rc = !block ? TL_ENOMEM : all ? block_finish(r, store, c, block, nb) : TL_OK;
  free(block);
  return rc;
}

int tl__compare_with_stats(tl_store *store, const tl_compare_opts *o, int ranked,
                           tl_comparison *cmp, tl_stats *out, char *err, size_t errlen) {
  stats_run r;
  run_open(&r, ranked, out);
  tl__group_hook hook = {group_done, &r, ranked};
  int rc = tl__compare_each(store, o, &hook, cmp, err, errlen);
  if (rc) {
    run_close(&r);
    tl_stats_free(out);
    return rc; /* the comparison is freed */
  }
  rc = run_size(&r, cmp->group_count);
  if (!rc)
    rc = run_finish(&r, store, cmp);
  run_close(&r);
  if (rc) {
    tl__store_failed(store, rc, err, errlen);
    tl_stats_free(out);
    tl_comparison_free(cmp);
  }
  return rc;
}

int tl_compare_with_stats(tl_store *store, const tl_compare_opts *o, tl_comparison *cmp,
                          tl_stats *out, char *err, size_t errlen) {
  return tl__compare_with_stats(store, o, 0, cmp, out, err, errlen);
}

int tl_stats_compute(tl_store *store, const tl_comparison *cmp, tl_stats *out, char *err,
                     size_t errlen) {
  return stats_compute(store, cmp, 1, out, err, errlen);
}

int tl_stats_compute_unranked(tl_store *store, const tl_comparison *cmp, tl_stats *out, char *err,
                              size_t errlen) {
  return stats_compute(store, cmp, 0, out, err, errlen);
}
