/* group_passes.c: the passes over a comparison's samples, which find
 * everything the page shows of each group: its exact distribution, the
 * points of its percentile chart and its histogram, its sessions' own
 * percentiles, the samples the statistics keep and the tail that causes.c
 * splits; for the check with a baseline, its earlier sessions' values too.
 * The groups of a batch share their passes (tl_sweep_finish_all). */
#include <stdlib.h>
#include <string.h>

#include "chart.h"
#include "compute.h"

/* Memory for the samples the statistics keep of all groups together (5 MiB
 * each at most); the groups beyond it are read again by the statistics,
 * unless they take each group's as its pass ends (tl__compare_each). */
size_t tl__kept_budget = 64 << 20;
/* Groups whose sweeps share their passes: enough for a --by of four values
 * at two delays. Their sweeps are held at once, each with its tables and
 * some 230 bytes a session (measured: 55 MiB more for 288,000 sessions in 8
 * groups), so a batch costs what its sessions cost. */
enum { GROUPS_A_PASS = 8 };

const double tl_spectrum_pcts[TL_SPECTRUM_POINTS] = {0,    25,   50,   75,    90,    95,   99,
                                                     99.5, 99.8, 99.9, 99.95, 99.98, 99.99};

/* d with the values vals at pcts[0..np). */
static tl_dist with_pcts(const tl_dist *d, const double *pcts, const int64_t *vals, size_t np) {
  tl_dist out = *d;
  out.pct_count = np;
  memcpy(out.pcts, pcts, np * sizeof *pcts);
  memcpy(out.pct_ns, vals, np * sizeof *vals);
  return out;
}

/* The tail of d that causes.c splits, counted from the summaries pass 1
 * read (tl_sweep_tail): its samples above p99 and p90, and their time past
 * p50. */
static void tail_count(const tl_sweep *w, const tl_dist *d, tl__tail *t) {
  int k50 = tl__pct_index(d, 50), k90 = tl__pct_index(d, 90), k99 = tl__pct_index(d, 99);
  if (k50 < 0 || k99 < 0 || !d->count)
    return;
  t->p50 = d->pct_ns[k50];
  t->p99 = d->pct_ns[k99];
  t->p90 = k90 >= 0 ? d->pct_ns[k90] : -1;
  t->known = tl_sweep_tail(w, t->p99, t->p50, &t->samples[0], &t->past_ns[0]) &&
             (t->p90 < 0 || tl_sweep_tail(w, t->p90, t->p50, &t->samples[1], &t->past_ns[1]));
}

/* A group's sweep between its first pass and its values: what it asked. */
typedef struct {
  tl_sweep *w;
  tl__chart chart;
  int64_t n; /* samples */
  size_t at[TL_MAX_PCTS + TL_SPECTRUM_POINTS];
  int64_t ci_rank[2 * TL_MAX_PCTS];   /* the ends of the statistics' intervals, */
  size_t ci_at[2 * TL_MAX_PCTS], nci; /* when they are order statistics */
} group_sweep;

/* Everything the page shows of a group is found in the same passes over its
 * samples (usually two), shared with the other groups of a batch: its
 * distribution, the points of its percentile chart, its histogram, its
 * sessions' own percentiles (p50, p90 and p99 for the trend chart, and the
 * page's for the statistics) and, within budget (bytes), the samples the
 * statistics keep (into *kept), and the tail that causes.c splits. This
 * part opens the group's sweep and its kept samples, before pass 1. */
static int group_open(tl_store *store, const tl_comparison *c, const tl_group *g,
                      const double *pcts, size_t np, const char *seed, size_t *budget,
                      tl__kept **kept, group_sweep *gs) {
  double own[3 + TL_MAX_PCTS] = {50, 90, 99};
  memcpy(own + 3, pcts, np * sizeof *pcts);
  gs->w = tl_sweep_store(store, g->session_ids, g->session_count, own, 3 + np);
  if (!gs->w)
    return TL_ENOMEM;
  *kept = tl__kept_new(c, g, seed, budget);
  return TL_OK;
}

/* After pass 1: asks gs's sweep over ns sessions for its values at
 * all[0..nall) (the page's percentiles pcts[0..np) first) and, when the
 * statistics keep samples, the order statistics their intervals need. */
static int ask_values(group_sweep *gs, size_t ns, const double *all, size_t nall,
                      const double *pcts, size_t np, const tl__kept *kept) {
  tl_sweep *w = gs->w;
  int64_t n = gs->n = tl_sweep_count(w, ns);
  for (size_t k = 0; k < nall && n; k++)
    if ((gs->at[k] = tl_sweep_want(w, tl_rank(all[k], n))) == SIZE_MAX)
      return TL_ENOMEM;
  size_t used = 0;
  for (size_t i = 0; i < ns && kept; i++)
    used += tl_sweep_count(w, i) > 0;
  if (kept)
    gs->nci = tl__stats_ci_ranks(n, used, pcts, np, gs->ci_rank);
  for (size_t k = 0; k < gs->nci; k++)
    if ((gs->ci_at[k] = tl_sweep_want(w, gs->ci_rank[k])) == SIZE_MAX)
      return TL_ENOMEM;
  return TL_OK;
}

/* After the passes: the distribution of gs's sweep over ns sessions with
 * its values at pcts[0..np) (and the nextra asked after them into extra),
 * and the order statistics handed to kept. */
static tl_dist take_values(const group_sweep *gs, size_t ns, const double *pcts, size_t np,
                           int64_t *extra, size_t nextra, tl__kept *kept) {
  int64_t vals[TL_MAX_PCTS + TL_SPECTRUM_POINTS] = {0};
  for (size_t k = 0; k < np + nextra && gs->n; k++)
    vals[k] = tl_sweep_value(gs->w, gs->at[k]);
  for (size_t k = 0; k < nextra; k++)
    extra[k] = vals[np + k];
  int64_t ci_val[2 * TL_MAX_PCTS];
  for (size_t k = 0; k < gs->nci; k++)
    ci_val[k] = tl_sweep_value(gs->w, gs->ci_at[k]);
  if (gs->nci)
    tl__kept_values(kept, gs->ci_rank, ci_val, gs->nci);
  tl_dist d;
  tl_sweep_dist(gs->w, ns, &d);
  return with_pcts(&d, pcts, vals, np);
}

/* After pass 1: what the group asks of the next passes. */
static int group_ask(tl_group *g, const double *pcts, size_t np, const tl__kept *kept,
                     group_sweep *gs) {
  tl_sweep *w = gs->w;
  double all[TL_MAX_PCTS + TL_SPECTRUM_POINTS];
  memcpy(all, pcts, np * sizeof *pcts);
  memcpy(all + np, tl_spectrum_pcts, sizeof tl_spectrum_pcts);
  int rc = ask_values(gs, g->session_count, all, np + TL_SPECTRUM_POINTS, pcts, np, kept);
  int64_t n = gs->n;
  if (!n || rc)
    return rc;
  /* Bins from the minimum over the bulk of the samples: up to the 99.9th
   * percentile, or a hair above it (the top of its bucket after pass 1, so
   * that the bins fill in the same pass that finds the percentiles); but
   * where spikes put p99.9 far out (more than four times as far from the
   * minimum as p90), up to four times p90's distance, so that the bulk is
   * not squeezed into a bar or two. */
  int64_t hi = tl_sweep_bucket_top(w, tl_rank(99.9, n));
  tl_dist d;
  tl_sweep_dist(w, g->session_count, &d);
  int64_t bulk = tl_sweep_bucket_top(w, tl_rank(90, n)) - d.min_ns;
  if (bulk > 0 && hi - d.min_ns > 4 * bulk)
    hi = d.min_ns + 4 * bulk;
  g->hist_lo_ns = d.min_ns;
  g->hist_width_ns = (hi - g->hist_lo_ns) / TL_HIST_BINS + 1;
  return tl__chart_ask(&gs->chart, w, g->session_count, g->hist_lo_ns, g->hist_width_ns, hi,
                       g->hist, TL_HIST_BINS, &g->hist_over);
}

/* The other half, after the passes (rc: how they went): the group's values
 * into g, its sessions' details and its kept samples; the sweep closed. */
static int group_take(tl_comparison *c, tl_group *g, const double *pcts, size_t np, int rc,
                      tl__kept **kept, tl__tail *tail, group_sweep *gs) {
  tl_sweep *w = gs->w;
  if (!rc && gs->n)
    tl__chart_fill(&gs->chart, w);
  tl__chart_free(&gs->chart);
  if (!rc) {
    tl_dist d;
    int64_t spectrum[TL_SPECTRUM_POINTS];
    g->dist = take_values(gs, g->session_count, pcts, np, spectrum, TL_SPECTRUM_POINTS, *kept);
    tl_sweep_dist(w, g->session_count, &d);
    g->spectrum = with_pcts(&d, tl_spectrum_pcts, spectrum, TL_SPECTRUM_POINTS);
    tail_count(w, &g->dist, tail);
    for (size_t i = 0; i < g->session_count; i++) {
      tl_session_detail *x = &c->details[g->session_at[i]];
      for (size_t j = 0; j < 3 + np; j++)
        x->pct_ns[j] = tl_sweep_session_value(w, i, j);
      tl_sweep_dist(w, i, &d);
      x->count = d.count;
      x->min_ns = d.min_ns;
      x->max_ns = d.max_ns;
      x->mean_ns = d.mean_ns;
      x->stddev_ns = d.stddev_ns;
    }
  }
  tl_sweep_close(w);
  gs->w = NULL;
  if (*kept && (rc || tl__kept_finish(*kept))) {
    tl__kept_free(*kept); /* the statistics will read the samples themselves */
    *kept = NULL;
  }
  return rc;
}

/* TL__GROUPS_AND_EARLIER: beside group g (of two sessions or more), a sweep
 * of its earlier sessions (all but its last, the latest) in the group's own
 * passes, which hand each shared session to both, and what the statistics
 * keep of them, seeded as the check's earlier side is. */
static int earlier_open(tl_store *store, const tl_comparison *c, const tl_group *g, size_t *budget,
                        tl__kept **kept, group_sweep *es) {
  tl_group earlier = *g;
  earlier.session_count--;
  es->w = tl_sweep_store(store, earlier.session_ids, earlier.session_count, NULL, 0);
  if (!es->w)
    return TL_ENOMEM;
  *kept = tl__kept_new(c, &earlier, "earlier", budget);
  return TL_OK;
}

/* After the passes: the earlier sessions' distribution at pcts into out,
 * their kept samples finished; the sweep closed. */
static int earlier_take(const tl_group *g, const double *pcts, size_t np, int rc, tl_dist *out,
                        tl__kept **kept, group_sweep *es) {
  if (!rc && es->w)
    *out = take_values(es, g->session_count - 1, pcts, np, NULL, 0, *kept);
  tl_sweep_close(es->w);
  es->w = NULL;
  if (*kept && (rc || tl__kept_finish(*kept))) {
    tl__kept_free(*kept); /* the check will read the samples itself */
    *kept = NULL;
  }
  return rc;
}

/* The order in which the groups of c are read: their own, or their blocks
 * in turn (tl__group_hook); NULL when out of memory. */
static size_t *groups_order(const tl_comparison *c, int blocks_in_turn) {
  size_t ng = c->group_count, at = 0, *order = malloc((ng ? ng : 1) * sizeof *order);
  char *placed = calloc(ng ? ng : 1, 1);
  for (size_t first = 0; order && placed && first < ng; first++) {
    if (!blocks_in_turn) {
      order[at++] = first;
    } else if (!placed[first]) { /* the first of its block: the block's groups are from it on */
      size_t nb = tl__block_of(c, first, order + at);
      for (size_t k = 0; k < nb; k++)
        placed[order[at + k]] = 1;
      at += nb;
    }
  }
  if (!placed) {
    free(order);
    order = NULL;
  }
  free(placed);
  return order;
}

/* The groups, up to GROUPS_A_PASS at a time in shared passes
 * (tl_sweep_finish_all: the groups' sessions interleave in the file, and
 * each pass then reads each page once), with their earlier sessions' sweeps
 * when asked. */
int tl__groups_read(tl_store *store, tl_comparison *c, const double *pcts, size_t np,
                    tl__group_out *out, const tl__group_hook *hook) {
  tl__kept **kept = out->kept;
  /* A group's sweep at k, its earlier sessions' at GROUPS_A_PASS + k. */
  group_sweep *gs = calloc(2 * GROUPS_A_PASS, sizeof *gs), *es = gs + GROUPS_A_PASS;
  size_t *order = groups_order(c, hook && hook->blocks_in_turn);
  if (!gs || !order) {
    free(gs);
    free(order);
    return TL_ENOMEM;
  }
  /* The check holds both sides' kept samples, which it would otherwise
   * read and hold itself. */
  size_t budget = out->earlier ? 2 * tl__kept_budget : tl__kept_budget;
  int rc = TL_OK;
  for (size_t first = 0; first < c->group_count && !rc; first += GROUPS_A_PASS) {
    size_t n = c->group_count - first < GROUPS_A_PASS ? c->group_count - first : GROUPS_A_PASS;
    const size_t *g = order + first; /* the groups of this pass */
    tl_sweep *ws[2 * GROUPS_A_PASS];
    tl_sweep_session_cb taps[2 * GROUPS_A_PASS];
    void *tap_ctxs[2 * GROUPS_A_PASS];
    size_t asked = 0, opened = 0, sweeping = 0;
    for (; asked < n && !rc; asked++) {
      tl_group *gr = &c->groups[g[asked]];
      tl__kept **k = &kept[g[asked]];
      rc = group_open(store, c, gr, pcts, np, out->kept_seed, &budget, k, &gs[asked]);
      ws[opened] = gs[asked].w;
      taps[opened] = *k ? tl__kept_add : NULL;
      tap_ctxs[opened++] = *k;
      if (rc || !out->earlier || gr->session_count < 2)
        continue;
      k = &out->earlier_kept[g[asked]];
      rc = earlier_open(store, c, gr, &budget, k, &es[asked]);
      ws[opened] = es[asked].w;
      taps[opened] = *k ? tl__kept_add : NULL;
      tap_ctxs[opened++] = *k;
    }
    if (!rc)
      rc = tl_sweep_first_all(ws, opened, taps, tap_ctxs);
    for (size_t k = 0; k < asked && !rc; k++) {
      tl_group *gr = &c->groups[g[k]];
      if (!(rc = group_ask(gr, pcts, np, kept[g[k]], &gs[k])) && gs[k].n)
        ws[sweeping++] = gs[k].w;
      if (!rc && es[k].w &&
          !(rc = ask_values(&es[k], gr->session_count - 1, pcts, np, pcts, np,
                            out->earlier_kept[g[k]])) &&
          es[k].n)
        ws[sweeping++] = es[k].w;
    }
    if (!rc)
      rc = tl_sweep_finish_all(ws, sweeping);
    for (size_t k = 0; k < asked; k++) {
      tl_group *gr = &c->groups[g[k]];
      int e = group_take(c, gr, pcts, np, rc, &kept[g[k]], &out->tails[g[k]], &gs[k]);
      rc = rc ? rc : e;
      if (out->earlier)
        e = earlier_take(gr, pcts, np, rc, &out->earlier[g[k]], &out->earlier_kept[g[k]], &es[k]);
      rc = rc ? rc : e;
    }
    /* The statistics take each group's kept samples now, and their memory
     * goes to the next pass's groups. */
    for (size_t k = 0; k < asked && hook; k++) {
      if (!rc)
        rc = hook->done(hook->ctx, store, c, g[k]);
      tl__kept_give_back(kept[g[k]], &budget);
      kept[g[k]] = NULL;
    }
    memset(gs, 0, 2 * GROUPS_A_PASS * sizeof *gs);
  }
  free(gs);
  free(order);
  return rc;
}
