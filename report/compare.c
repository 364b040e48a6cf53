/* compare.c: grouping sessions by label, probe and delay, computing each
 * group's exact distribution, and writing the comparison as Markdown. */
#include <stdlib.h>
#include <string.h>

#include "tl_report.h"

void tl_compare_opts_init(tl_compare_opts *o) {
  memset(o, 0, sizeof *o);
  tl_filter_init(&o->filter);
}

void tl_format_ms(int64_t ns, char *buf, size_t len) {
  snprintf(buf, len, "%.2f ms", (double)ns / 1e6);
}

void tl_comparison_free(tl_comparison *c) {
  if (!c)
    return;
  for (size_t i = 0; i < c->group_count; i++) {
    free(c->groups[i].label);
    free(c->groups[i].probe);
    free(c->groups[i].session_ids);
  }
  free(c->groups);
  tl_strings_free(c->labels, c->label_count);
  tl_session_list_free(&c->sessions);
  memset(c, 0, sizeof *c);
}

static int fail(char *err, size_t errlen, int code, const char *msg) {
  snprintf(err, errlen, "%s", msg);
  return code;
}

/* Checks that every asked label exists; otherwise says which labels do. */
static int check_labels(tl_store *store, const tl_compare_opts *o, char *err, size_t errlen) {
  char **have = NULL;
  size_t n = 0;
  int rc = tl_store_labels(store, &have, &n);
  if (rc)
    return fail(err, errlen, rc, tl_store_errmsg(store));
  if (n == 0) {
    tl_strings_free(have, n);
    return fail(err, errlen, TL_ENOTFOUND,
                "the database holds no sessions yet (collect some with tlcollect)");
  }
  for (size_t i = 0; i < o->label_count; i++) {
    int found = 0;
    for (size_t k = 0; k < n && !found; k++)
      found = strcmp(have[k], o->labels[i]) == 0;
    if (found)
      continue;
    size_t at =
        (size_t)snprintf(err, errlen, "unknown label '%.64s'; the database has: ", o->labels[i]);
    for (size_t k = 0; k < n && at < errlen; k++)
      at += (size_t)snprintf(err + at, errlen - at, "%s%s", k ? ", " : "", have[k]);
    tl_strings_free(have, n);
    return TL_ENOTFOUND;
  }
  tl_strings_free(have, n);
  return TL_OK;
}

static int label_pos(const tl_comparison *c, const char *label) {
  for (size_t i = 0; i < c->label_count; i++)
    if (strcmp(c->labels[i], label) == 0)
      return (int)i;
  return -1;
}

static int group_cmp(const tl_comparison *c, const tl_group *a, const tl_group *b) {
  int la = label_pos(c, a->label), lb = label_pos(c, b->label);
  if (la != lb)
    return la < lb ? -1 : 1;
  int p = strcmp(a->probe, b->probe);
  if (p)
    return p;
  return (a->delay_ns > b->delay_ns) - (a->delay_ns < b->delay_ns);
}

static int compare(tl_store *store, const tl_compare_opts *o, tl_comparison *out, char *err,
                   size_t errlen) {
  memset(out, 0, sizeof *out);
  int rc = check_labels(store, o, err, errlen);
  if (rc)
    return rc;
  tl_filter f = o->filter;
  f.labels = o->labels;
  f.label_count = o->label_count;
  rc = tl_store_sessions(store, &f, &out->sessions);
  if (rc)
    return fail(err, errlen, rc, tl_store_errmsg(store));
  if (out->sessions.count == 0)
    return fail(err, errlen, TL_ENOTFOUND, "no session matches the filters");

  /* Labels in the order asked, or in the database's (sorted) order. */
  size_t want = o->label_count ? o->label_count : out->sessions.count;
  out->labels = calloc(want, sizeof *out->labels);
  if (!out->labels)
    goto oom;
  for (size_t i = 0; i < o->label_count; i++) {
    if (!(out->labels[out->label_count] = strdup(o->labels[i])))
      goto oom;
    out->label_count++;
  }
  if (!o->label_count) {
    char **all = NULL;
    size_t n = 0;
    if ((rc = tl_store_labels(store, &all, &n))) {
      tl_comparison_free(out);
      return fail(err, errlen, rc, tl_store_errmsg(store));
    }
    for (size_t i = 0; i < n; i++) {
      int used = 0;
      for (size_t k = 0; k < out->sessions.count && !used; k++)
        used = strcmp(out->sessions.items[k].label, all[i]) == 0;
      if (used && out->label_count < want)
        out->labels[out->label_count++] = strdup(all[i]);
    }
    tl_strings_free(all, n);
    for (size_t i = 0; i < out->label_count; i++)
      if (!out->labels[i])
        goto oom;
  }

  /* Groups: one per distinct (label, probe, delay). */
  out->groups = calloc(out->sessions.count, sizeof *out->groups);
  if (!out->groups)
    goto oom;
  for (size_t i = 0; i < out->sessions.count; i++) {
    const tl_session *s = &out->sessions.items[i];
    tl_group *g = NULL;
    for (size_t k = 0; k < out->group_count && !g; k++)
      if (strcmp(out->groups[k].label, s->label) == 0 &&
          strcmp(out->groups[k].probe, s->probe) == 0 && out->groups[k].delay_ns == s->delay_ns)
        g = &out->groups[k];
    if (!g) {
      g = &out->groups[out->group_count++];
      g->label = strdup(s->label);
      g->probe = strdup(s->probe);
      g->delay_ns = s->delay_ns;
      g->session_ids = calloc(out->sessions.count, sizeof *g->session_ids);
      if (!g->label || !g->probe || !g->session_ids)
        goto oom;
    }
    g->session_ids[g->session_count++] = s->id;
  }
  /* Insertion sort: a comparison has few groups. */
  for (size_t i = 1; i < out->group_count; i++)
    for (size_t k = i; k > 0 && group_cmp(out, &out->groups[k - 1], &out->groups[k]) > 0; k--) {
      tl_group tmp = out->groups[k];
      out->groups[k] = out->groups[k - 1];
      out->groups[k - 1] = tmp;
    }

  static const double default_pcts[] = {50, 90, 99};
  const double *pcts = o->pct_count ? o->pcts : default_pcts;
  size_t np = o->pct_count ? o->pct_count : 3;
  for (size_t i = 0; i < out->group_count; i++) {
    tl_group *g = &out->groups[i];
    rc = tl_dist_compute(store, g->session_ids, g->session_count, pcts, np, &g->dist);
    if (rc) {
      fail(err, errlen, rc, tl_store_errmsg(store));
      tl_comparison_free(out);
      return rc;
    }
  }
  return TL_OK;

oom:
  tl_comparison_free(out);
  return fail(err, errlen, TL_ENOMEM, "out of memory");
}

/* ======================================================================== */
/* Markdown                                                                  */

void tl_md_escape(FILE *out, const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p < 0x20 || *p == 0x7f)
      continue;
    if (strchr("\\`*_{}[]()<>#+-.!|&~\"'", *p))
      fputc('\\', out);
    fputc(*p, out);
  }
}

static void pct_name(double p, char *buf, size_t len) { snprintf(buf, len, "p%g", p); }

static size_t group_sessions(const tl_comparison *c, const char *label) {
  size_t n = 0;
  for (size_t i = 0; i < c->sessions.count; i++)
    n += strcmp(c->sessions.items[i].label, label) == 0;
  return n;
}

/* The index of the requested percentile p, or -1. */
static int pct_index(const tl_dist *d, double p) {
  for (size_t i = 0; i < d->pct_count; i++)
    if (d->pcts[i] == p)
      return (int)i;
  return -1;
}

static void sentence(FILE *out, const tl_comparison *c, const char *label, double pct) {
  size_t n = 0;
  const tl_group *g[TL_MAX_PCTS * 4];
  const char *probe = NULL;
  for (size_t i = 0; i < c->group_count && n < sizeof g / sizeof g[0]; i++) {
    if (strcmp(c->groups[i].label, label) != 0 || !c->groups[i].dist.count)
      continue;
    if (!probe)
      probe = c->groups[i].probe;
    if (strcmp(c->groups[i].probe, probe) == 0 && pct_index(&c->groups[i].dist, pct) >= 0)
      g[n++] = &c->groups[i];
  }
  if (!n)
    return;
  fputs("- On ", out);
  tl_md_escape(out, label);
  fprintf(out, ", %g percent of calls took up to ", pct);
  for (size_t i = 0; i < n; i++) {
    char v[32];
    tl_format_ms(g[i]->dist.pct_ns[pct_index(&g[i]->dist, pct)], v, sizeof v);
    fprintf(out, "%s%s", i == 0 ? "" : i + 1 == n ? " and " : ", ", v);
  }
  const char *call = strcmp(probe, "settimeout") == 0 ? "setTimeout" : probe;
  fputs(" (for ", out);
  for (size_t i = 0; i < n; i++) {
    fprintf(out, "%s", i == 0 ? "" : i + 1 == n ? " and " : ", ");
    tl_md_escape(out, call);
    fprintf(out, "(%g)", (double)g[i]->delay_ns / 1e6);
  }
  fprintf(out, "%s).\n", n > 1 ? " respectively" : "");
}

int tl_render_markdown(const tl_comparison *c, FILE *out) {
  fputs("# Timer latency: ", out);
  for (size_t i = 0; i < c->label_count; i++) {
    if (i)
      fputs(", ", out);
    tl_md_escape(out, c->labels[i]);
  }
  fputs("\n\n", out);
  if (!c->group_count)
    return TL_OK;
  const tl_dist *d0 = &c->groups[0].dist;
  fputs("| label | probe | delay | sessions | samples | min |", out);
  for (size_t i = 0; i < d0->pct_count; i++) {
    char name[32];
    pct_name(d0->pcts[i], name, sizeof name);
    fprintf(out, " %s |", name);
  }
  fputs(" max |\n|---|---|--:|--:|--:|--:|", out);
  for (size_t i = 0; i < d0->pct_count; i++)
    fputs("--:|", out);
  fputs("--:|\n", out);
  for (size_t i = 0; i < c->group_count; i++) {
    const tl_group *g = &c->groups[i];
    char v[32];
    fputs("| ", out);
    tl_md_escape(out, g->label);
    fputs(" | ", out);
    tl_md_escape(out, g->probe);
    fprintf(out, " | %g ms | %zu | %lld |", (double)g->delay_ns / 1e6, g->session_count,
            (long long)g->dist.count);
    if (!g->dist.count) {
      for (size_t k = 0; k < g->dist.pct_count + 2; k++)
        fputs(" - |", out);
      fputc('\n', out);
      continue;
    }
    tl_format_ms(g->dist.min_ns, v, sizeof v);
    fprintf(out, " %s |", v);
    for (size_t k = 0; k < g->dist.pct_count; k++) {
      tl_format_ms(g->dist.pct_ns[k], v, sizeof v);
      fprintf(out, " %s |", v);
    }
    tl_format_ms(g->dist.max_ns, v, sizeof v);
    fprintf(out, " %s |\n", v);
  }
  fputc('\n', out);
  double pct = pct_index(d0, 90) >= 0 ? 90 : d0->pcts[0];
  for (size_t i = 0; i < c->label_count; i++)
    if (group_sessions(c, c->labels[i]))
      sentence(out, c, c->labels[i], pct);
  fputs("\nPercentiles are nearest-rank over every raw sample: pN is the smallest measured "
        "latency that at least N percent of the samples do not exceed.\n",
        out);
  return ferror(out) ? TL_EIO : TL_OK;
}

int tl_compare(tl_store *store, const tl_compare_opts *o, tl_comparison *out, char *err,
               size_t errlen) {
  /* One read snapshot for the session list and every pass over the samples,
   * so a collector committing meanwhile changes nothing in the page. */
  int rc = tl_store_read_begin(store);
  if (rc) {
    memset(out, 0, sizeof *out);
    return fail(err, errlen, rc, tl_store_errmsg(store));
  }
  rc = compare(store, o, out, err, errlen);
  tl_store_read_end(store);
  return rc;
}
