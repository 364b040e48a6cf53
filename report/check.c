/* check.c: the regression check behind `tlreport --check`: every label
 * against the baseline's group of the same probe and delay, and every
 * label's latest session against its earlier ones, at each percentile, with
 * the group statistics of stats.c. */
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"
#include "stats_internal.h"

void tl_check_opts_init(tl_check_opts *o) {
  memset(o, 0, sizeof *o);
  tl_compare_opts_init(&o->compare);
  o->max_regression = 0.10;
  o->min_regression_ns = 10000;
}

int tl_regression_parse(const char *s, double *fraction, char *why, size_t whylen) {
  char *end;
  if (!s || !*s || *s == ' ' || *s == '+' || *s == '-')
    return tl_fail(why, whylen, TL_EINVAL, "expected a percentage such as 10%%");
  double v = strtod(s, &end);
  if (end == s || (*end && strcmp(end, "%") != 0))
    return tl_fail(why, whylen, TL_EINVAL, "expected a percentage such as 10%%");
  if (!(v > 0 && v <= 1000))
    return tl_fail(why, whylen, TL_EINVAL, "must be above 0%% and at most 1000%%");
  *fraction = v / 100;
  return TL_OK;
}

enum { SKIP_SAMPLES = -1, SKIP_SESSIONS = -2 };

/* One check of candidate against reference at percentile k; prints a line
 * and returns 1 when it has regressed, 0 when not, SKIP_SAMPLES when it
 * cannot say for lack of samples (none, or too few for the percentile on
 * either side) and SKIP_SESSIONS for lack of sessions (run-to-run variation
 * unmeasured). With predict, the candidate is one new session judged
 * against the spread of the reference's. */
static int check_one(FILE *out, const tl_group *g, const tl__gcalc *ref, const tl__gcalc *cand,
                     size_t k, double max, int64_t min_ns, int predict, const char *which,
                     const char *against) {
  int64_t rv = ref->dist.pct_ns[k], cv = cand->dist.pct_ns[k];
  if (!ref->dist.count || !cand->dist.count || ref->pct[k].few || cand->pct[k].few)
    return SKIP_SAMPLES;
  /* Relative to the reference's lateness, not to the delay everyone waits;
   * a lateness below the ratio floor counts as the floor, so that noise-level
   * latenesses give no huge percentages. */
  int64_t armed = tl_probe_armed_ns(g->probe, g->delay_ns), rl = rv - armed, cl = cv - armed;
  double rel = (double)(cv - rv) / (double)(rl > TL_RATIO_FLOOR_NS ? rl : TL_RATIO_FLOOR_NS);
  tl__sdiff sd;
  tl__session_diff(ref, cand, k, rl, cl, predict, &sd);
  if (!sd.decided)
    return SKIP_SESSIONS;
  int64_t lo = sd.lo_ns, hi = sd.hi_ns;
  if (!(rel > max) || lo <= 0 || cv - rv < min_ns)
    return 0;
  char line[768], c[32], r[32], l[32], h[32], based[64];
  double sc = tl__max_abs3((double)cl, (double)rl, 0);
  tl__sentence_ms((double)cl, sc, c, sizeof c);
  tl__sentence_ms((double)rl, sc, r, sizeof r);
  tl__sentence_ms((double)lo, tl__max_abs3((double)lo, (double)hi, 0), l, sizeof l);
  tl__sentence_ms((double)hi, tl__max_abs3((double)lo, (double)hi, 0), h, sizeof h);
  if (predict)
    snprintf(based, sizeof based, "from the spread of %zu sessions", ref->used);
  else
    snprintf(based, sizeof based, "%zu and %zu sessions", cand->used, ref->used);
  snprintf(line, sizeof line,
           "regression: %s %s %g ms p%s%s is %s ms late, %.1f%% above %s (%s ms late; 95%% CI "
           "of the difference %s to %s ms, %s; allowed %g%%)",
           g->label, g->probe, (double)g->delay_ns / 1e6, TL_PCT(g->dist.pcts[k]), which, c,
           rel * 100, against, r, l, h, based, max * 100);
  tl_fput_safe(out, line);
  fputc('\n', out);
  return 1;
}

typedef struct {
  size_t checks, bad, skipped, few_sessions;
} check_tally;

/* Sessions on one side of a check, the exact distribution when known, the
 * purpose that seeds its draws and the samples the comparison kept of them. */
typedef struct {
  const int64_t *ids;
  size_t n;
  const tl_dist *dist;
  const char *seed;
  const tl__kept *kept;
} sides;

/* The statistics of one side of a check of group g, its draws seeded by
 * group sg and the side's purpose. */
static int side_calc(tl_store *store, const tl_comparison *cmp, const tl_group *g,
                     const tl_group *sg, const sides *sd, tl__gcalc *out) {
  return tl__gcalc_run(store, cmp, sd->ids, sd->n, g->dist.pcts, g->dist.pct_count, sd->dist,
                       tl_probe_armed_ns(g->probe, g->delay_ns),
                       tl__group_seed(sg->label, sg->probe, sg->delay_ns, sd->seed), 0, sd->kept,
                       out);
}

/* Checks cand (of group g) against ref at every percentile. */
static void check_calcs(FILE *out, const tl_group *g, const tl__gcalc *ref, const tl__gcalc *cand,
                        const tl_check_opts *o, int predict, const char *which, const char *against,
                        check_tally *t) {
  for (size_t k = 0; k < g->dist.pct_count; k++) {
    int r = check_one(out, g, ref, cand, k, o->max_regression, o->min_regression_ns, predict, which,
                      against);
    t->skipped += r == SKIP_SAMPLES;
    t->few_sessions += r == SKIP_SESSIONS;
    t->checks += r >= 0;
    t->bad += r > 0;
  }
}

/* Checks cand, one new session of group g, against ref (of group rg) at
 * every percentile. */
static int check_sides(tl_store *store, const tl_comparison *cmp, const tl_group *g,
                       const tl_group *rg, const sides *ref, const sides *cand,
                       const tl_check_opts *o, const char *which, const char *against, FILE *out,
                       check_tally *t) {
  tl__gcalc rgc, cgc;
  memset(&rgc, 0, sizeof rgc);
  memset(&cgc, 0, sizeof cgc);
  int rc = side_calc(store, cmp, g, rg, ref, &rgc);
  if (!rc)
    rc = side_calc(store, cmp, g, g, cand, &cgc);
  if (!rc)
    check_calcs(out, g, &rgc, &cgc, o, 1, which, against, t);
  tl__gcalc_free(&rgc);
  tl__gcalc_free(&cgc);
  return rc;
}

/* Checks the latest session of group i of cmp against its earlier ones:
 * the group's own sessions when cmp holds the latest apart, else all but
 * its last, whose values cmp may have worked out beside the group's. */
static int check_latest(tl_store *store, const tl_comparison *cmp, size_t i, const tl_check_opts *o,
                        FILE *out, check_tally *t) {
  const tl_group *g = &cmp->groups[i];
  const int64_t *apart = tl__group_latest(cmp, i);
  size_t earlier = apart ? g->session_count : g->session_count - 1;
  const int64_t *latest = apart ? apart : g->session_count >= 2 ? g->session_ids + earlier : NULL;
  if (!latest)
    return TL_OK;
  sides ref = {g->session_ids, earlier, NULL, "earlier", NULL};
  sides cand = {latest, 1, NULL, "latest", NULL};
  tl__kept *own_ref = NULL, *own_cand = NULL;
  const tl__kept *earlier_kept = NULL;
  const tl_dist *earlier_dist = apart ? NULL : tl__group_earlier(cmp, i, &earlier_kept);
  if (apart) {
    /* The group's values and kept samples are the earlier sessions'. */
    ref.dist = &g->dist;
    ref.kept = tl__group_kept(cmp, i);
  } else if (earlier_dist) {
    ref.dist = earlier_dist;
    ref.kept = earlier_kept;
    cand.kept = own_cand = tl__kept_part(tl__group_kept(cmp, i), earlier, earlier + 1);
  } else {
    /* Both sides from the samples the comparison kept when it kept them
     * all; otherwise read (their reservoirs are seeded apart). */
    ref.kept = own_ref = tl__kept_part(tl__group_kept(cmp, i), 0, earlier);
    cand.kept = own_cand = tl__kept_part(tl__group_kept(cmp, i), earlier, earlier + 1);
  }
  char against[96];
  snprintf(against, sizeof against, "its %zu earlier session%s", earlier, earlier == 1 ? "" : "s");
  int rc = check_sides(store, cmp, g, g, &ref, &cand, o, " in the latest session", against, out, t);
  tl__kept_free(own_ref);
  tl__kept_free(own_cand);
  return rc;
}

/* The statistics of the comparison's groups over all their sessions, each
 * worked out once: a baseline's serve every label of its probe and delay. */
typedef struct {
  tl__gcalc *calc;
  char *ready;
} group_calcs;

static int group_calc(tl_store *store, const tl_comparison *cmp, size_t i, group_calcs *gc,
                      const tl__gcalc **out) {
  const tl_group *g = &cmp->groups[i];
  if (!gc->ready[i]) {
    sides all = {g->session_ids, g->session_count, &g->dist, "ci", tl__group_kept(cmp, i)};
    int rc = side_calc(store, cmp, g, g, &all, &gc->calc[i]);
    if (rc)
      return rc;
    gc->ready[i] = 1;
  }
  *out = &gc->calc[i];
  return TL_OK;
}

/* The check's comparison and every check, within the caller's read
 * snapshot; an error leaves its message in err. */
static int check_in_read(tl_store *store, const tl_check_opts *o, FILE *out, char *err,
                         size_t errlen) {
  tl_compare_opts co = o->compare;
  const char *labels[258];
  if (co.label_count && o->baseline) {
    if (co.label_count > 256)
      return tl_fail(err, errlen, TL_EINVAL, "too many labels");
    int has = 0;
    for (size_t i = 0; i < co.label_count; i++) {
      labels[i] = co.labels[i];
      has |= strcmp(co.labels[i], o->baseline) == 0;
    }
    size_t n = co.label_count;
    if (!has)
      labels[n++] = o->baseline;
    co.labels = labels;
    co.label_count = n;
  } else if (o->baseline) {
    labels[0] = o->baseline;
    /* Check that the baseline exists by asking for its sessions alone
     * first (their samples are read with the others'). */
    tl_compare_opts one = co;
    one.labels = labels;
    one.label_count = 1;
    tl_comparison probe;
    int rc = tl__compare(store, &one, TL__SESSIONS_ONLY, &probe, err, errlen);
    tl_comparison_free(&probe);
    if (rc == TL_ENOTFOUND && strncmp(err, "no session", 10) == 0)
      snprintf(err, errlen, "the baseline '%s' has no session that matches the filters",
               o->baseline);
    if (rc)
      return rc;
  }
  /* Without a baseline, the comparison's groups are the earlier sessions
   * and the latest are held apart; the baseline's checks need whole groups,
   * and the earlier sessions' values are worked out beside them. Either
   * way the earlier sessions are read once; only a latest session may be
   * read again, on its own. */
  tl_comparison cmp;
  int rc = tl__compare(store, &co, o->baseline ? TL__GROUPS_AND_EARLIER : TL__EARLIER_GROUPS, &cmp,
                       err, errlen);
  if (rc)
    return rc;
  check_tally tally = {0, 0, 0, 0};
  size_t ng = cmp.group_count;
  group_calcs gc = {calloc(ng ? ng : 1, sizeof *gc.calc), calloc(ng ? ng : 1, 1)};
  if (!gc.calc || !gc.ready)
    rc = TL_ENOMEM;
  /* The baseline as the comparison names it (a --by value as typed may differ). */
  const char *bl = cmp.baseline >= 0 ? cmp.labels[cmp.baseline] : o->baseline;
  for (size_t i = 0; i < ng && !rc; i++) {
    const tl_group *g = &cmp.groups[i];
    /* Against the baseline's group of the same probe and delay. */
    const tl_group *base = bl ? tl__find_group(&cmp, bl, g->probe, g->delay_ns) : NULL;
    if (base && base != g) {
      const tl__gcalc *ref, *cand;
      rc = group_calc(store, &cmp, (size_t)(base - cmp.groups), &gc, &ref);
      if (!rc)
        rc = group_calc(store, &cmp, i, &gc, &cand);
      if (!rc)
        check_calcs(out, g, ref, cand, o, 0, "", base->label, &tally);
      /* Only a baseline's serve again. */
      tl__gcalc_free(&gc.calc[i]);
      gc.ready[i] = 0;
    }
    /* Against its own earlier sessions: the latest session is the newest
     * run of this label, probe and delay. */
    if (!rc)
      rc = check_latest(store, &cmp, i, o, out, &tally);
  }
  for (size_t i = 0; i < ng && gc.calc; i++)
    tl__gcalc_free(&gc.calc[i]);
  free(gc.calc);
  free(gc.ready);
  if (rc) {
    tl__store_failed(store, rc, err, errlen);
  } else {
    char skipped[160] = "";
    if (tally.skipped && tally.few_sessions)
      snprintf(skipped, sizeof skipped,
               " (%zu skipped: too few samples; %zu skipped: too few sessions, collect at least "
               "%d a label)",
               tally.skipped, tally.few_sessions, TL_STATS_MIN_SESSIONS + 1);
    else if (tally.skipped)
      snprintf(skipped, sizeof skipped, " (%zu skipped: too few samples)", tally.skipped);
    else if (tally.few_sessions)
      snprintf(skipped, sizeof skipped,
               " (%zu skipped: too few sessions, collect at least %d a label)", tally.few_sessions,
               TL_STATS_MIN_SESSIONS + 1);
    if (tally.bad)
      fprintf(out, "%zu regression%s above %g%% in %zu checks%s\n", tally.bad,
              tally.bad == 1 ? "" : "s", o->max_regression * 100, tally.checks, skipped);
    else if (tally.checks)
      fprintf(out, "ok: no regression above %g%% in %zu checks%s\n", o->max_regression * 100,
              tally.checks, skipped);
    else
      fprintf(out,
              "nothing to check: no label has a group of the baseline's probe and delay or "
              "three sessions or more with enough samples%s\n",
              skipped);
    rc = tally.bad ? TL_CHECK_REGRESSED : TL_OK;
  }
  tl_comparison_free(&cmp);
  return rc;
}

int tl_report_check(tl_store *store, const tl_check_opts *o, FILE *out, char *err, size_t errlen) {
  if (!(o->max_regression > 0) || o->min_regression_ns < 0)
    return tl_fail(err, errlen, TL_EINVAL, "the allowed regression must be above 0%%");
  if (o->baseline && !o->compare.by && tl_label_check(o->baseline, NULL, 0))
    return tl_fail(err, errlen, TL_EINVAL, "the baseline is not a valid label");
  /* The findings are held until the check ends, so that one that fails (a
   * latest session found damaged when its turn comes) says only why. */
  char *lines = NULL;
  size_t len = 0;
  FILE *held = open_memstream(&lines, &len);
  if (!held)
    return tl_fail(err, errlen, TL_ENOMEM, "out of memory");
  /* One snapshot for the comparison and the reads of the checks, so that a
   * collector committing meanwhile changes nothing in them. */
  int rc = tl_store_read_begin(store);
  if (rc) {
    tl_fail(err, errlen, rc, "%s", tl_store_errmsg(store));
  } else {
    rc = check_in_read(store, o, held, err, errlen);
    tl_store_read_end(store);
  }
  if (fclose(held) && (rc == TL_OK || rc == TL_CHECK_REGRESSED))
    rc = tl_fail(err, errlen, TL_ENOMEM, "out of memory");
  if (rc == TL_OK || rc == TL_CHECK_REGRESSED)
    fwrite(lines, 1, len, out);
  free(lines);
  if (!rc && ferror(out))
    return tl_fail(err, errlen, TL_EIO, "writing the check failed");
  return rc;
}
