/* lookup.c: finding things in a comparison: a group by its label, probe and
 * delay, the page's (probe, delay) blocks, a session by its id, the hosts,
 * and the statistics computed for it. Computing and rendering both read
 * these; they read the comparison only. */
#include <stdlib.h>
#include <string.h>

#include "compute.h"

int tl__same_block(const tl_group *a, const tl_group *b) {
  return strcmp(a->probe, b->probe) == 0 && a->delay_ns == b->delay_ns;
}

size_t tl__block_of(const tl_comparison *c, size_t group, size_t *block) {
  size_t nb = 0;
  for (size_t i = 0; i < c->group_count; i++)
    if (tl__same_block(&c->groups[group], &c->groups[i]))
      block[nb++] = i;
  return nb;
}

size_t tl__delays_of(const tl_comparison *c, size_t *out) {
  size_t n = 0;
  for (size_t i = 0; i < c->group_count; i++) {
    const tl_group *g = &c->groups[i];
    size_t k = 0;
    while (k < n && !tl__same_block(&c->groups[out[k]], g))
      k++;
    if (k == n)
      out[n++] = i;
  }
  for (size_t i = 1; i < n; i++)
    for (size_t k = i; k > 0; k--) {
      const tl_group *a = &c->groups[out[k - 1]], *b = &c->groups[out[k]];
      int cmp = strcmp(a->probe, b->probe);
      if (cmp < 0 || (cmp == 0 && a->delay_ns <= b->delay_ns))
        break;
      size_t t = out[k];
      out[k] = out[k - 1];
      out[k - 1] = t;
    }
  return n;
}

const tl_group *tl__find_group(const tl_comparison *c, const char *label, const char *probe,
                               int64_t delay_ns) {
  for (size_t i = 0; i < c->group_count; i++)
    if (strcmp(c->groups[i].label, label) == 0 && strcmp(c->groups[i].probe, probe) == 0 &&
        c->groups[i].delay_ns == delay_ns)
      return &c->groups[i];
  return NULL;
}

int tl__by_bytes(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Label l's sessions are at[start[l]] up to at[end[l]]; a label named
 * twice shares the range of its first. */
struct tl__label_sessions {
  size_t *start, *end, *at;
};

typedef struct {
  const char *name;
  size_t label;
} named_label;

static int by_name(const void *a, const void *b) {
  const named_label *x = a, *y = b;
  int d = strcmp(x->name, y->name);
  return d ? d : (x->label > y->label) - (x->label < y->label);
}

/* The first label named name among the n sorted, or SIZE_MAX. */
static size_t label_named(const named_label *sorted, size_t n, const char *name) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (strcmp(sorted[mid].name, name) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && strcmp(sorted[lo].name, name) == 0 ? sorted[lo].label : SIZE_MAX;
}

void tl__label_sessions_free(tl_comparison *c) {
  struct tl__label_sessions *x = c->label_sessions;
  if (x) {
    free(x->start);
    free(x->end);
    free(x->at);
    free(x);
  }
  c->label_sessions = NULL;
}

int tl__label_sessions_make(tl_comparison *c) {
  size_t nl = c->label_count, ns = c->sessions.count;
  struct tl__label_sessions *x = c->label_sessions = calloc(1, sizeof *x);
  named_label *sorted = malloc((nl + 1) * sizeof *sorted);
  size_t *of = malloc((ns + 1) * sizeof *of);
  int err = TL_ENOMEM;
  if (x && sorted && of && (x->start = calloc(nl + 1, sizeof *x->start)) &&
      (x->end = malloc((nl + 1) * sizeof *x->end)) && (x->at = malloc((ns + 1) * sizeof *x->at))) {
    for (size_t l = 0; l < nl; l++)
      sorted[l] = (named_label){c->labels[l], l};
    qsort(sorted, nl, sizeof *sorted, by_name);
    /* Counts, at each label's first of its name, then where each begins. */
    for (size_t i = 0; i < ns; i++)
      if ((of[i] = label_named(sorted, nl, c->sessions.items[i].label)) != SIZE_MAX)
        x->start[of[i]]++;
    for (size_t l = 0, at = 0; l < nl; l++) {
      size_t count = x->start[l];
      x->start[l] = x->end[l] = at;
      at += count;
    }
    for (size_t i = 0; i < ns; i++)
      if (of[i] != SIZE_MAX)
        x->at[x->end[of[i]]++] = i;
    for (size_t k = 1; k < nl; k++)
      if (strcmp(sorted[k - 1].name, sorted[k].name) == 0) {
        x->start[sorted[k].label] = x->start[sorted[k - 1].label];
        x->end[sorted[k].label] = x->end[sorted[k - 1].label];
      }
    err = TL_OK;
  }
  free(sorted);
  free(of);
  if (err)
    tl__label_sessions_free(c);
  return err;
}

const size_t *tl__label_sessions(const tl_comparison *c, size_t l, size_t *n) {
  const struct tl__label_sessions *x = c->label_sessions;
  *n = x->end[l] - x->start[l];
  return x->at + x->start[l];
}

size_t tl__label_session_count(const tl_comparison *c, size_t l) {
  size_t n;
  tl__label_sessions(c, l, &n);
  return n;
}

/* The statistics of the page, when computed for this comparison. */
const tl_stats *tl__stats_for(const tl_comparison *c, const tl_page_opts *o) {
  return o->stats && o->stats->group_count == c->group_count ? o->stats : NULL;
}

/* Distinct hosts by fingerprint in order of first session; newest[i] is the
 * index of the host's newest session (whose facts describe it). */
size_t tl__hosts_of(const tl_comparison *c, size_t *first, size_t *newest) {
  size_t n = 0, *same = tl__sessions_first(c, TL__SAME_MACHINE);
  if (!same)
    return 0;
  for (size_t i = 0; i < c->sessions.count; i++) {
    if (same[i] == i) {
      first[n] = newest[n] = i;
      same[i] = n++; /* from here on the host's number, for its later sessions */
    } else {
      newest[same[same[i]]] = i;
    }
  }
  free(same);
  return n;
}

/* Where id is from *from on, in sessions whose ids rise there (as a store
 * numbers sessions as they come): a gallop, then halving, so that a group
 * whose sessions lie hundreds apart (one host's of a fleet's hundreds) costs
 * a few looks a session, not a walk past all the others. n when not found
 * so (ids that do not rise, or no such session). */
static size_t gallop(const tl_session *items, size_t n, size_t from, int64_t id) {
  if (from >= n || items[from].id > id)
    return n;
  size_t lo = from, step = 1; /* items[lo].id <= id */
  while (lo + step < n && items[lo + step].id <= id) {
    lo += step;
    step *= 2;
  }
  size_t hi = lo + step < n ? lo + step : n; /* items[hi].id > id, or the end */
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (items[mid].id <= id)
      lo = mid;
    else
      hi = mid;
  }
  return items[lo].id == id ? lo : n;
}

ptrdiff_t tl__session_index(const tl_comparison *c, int64_t id, size_t *from) {
  size_t n = c->sessions.count, at = gallop(c->sessions.items, n, *from, id);
  if (at < n) {
    *from = at + 1;
    return (ptrdiff_t)at;
  }
  for (size_t k = 0; k < n; k++) {
    size_t i = (*from + k) % n;
    if (c->sessions.items[i].id == id) {
      *from = i + 1;
      return (ptrdiff_t)i;
    }
  }
  return -1;
}

int tl__pct_index(const tl_dist *d, double p) {
  for (size_t i = 0; i < d->pct_count; i++)
    if (d->pcts[i] == p)
      return (int)i;
  return -1;
}

void tl__session_dist(const tl_session_detail *d, size_t first, size_t n, tl_dist *out) {
  memset(out, 0, sizeof *out);
  out->count = d->count;
  out->min_ns = d->min_ns;
  out->max_ns = d->max_ns;
  out->mean_ns = d->mean_ns;
  out->stddev_ns = d->stddev_ns;
  for (size_t k = first; k < first + n && k < d->pct_count && out->pct_count < TL_MAX_PCTS; k++) {
    out->pcts[out->pct_count] = d->pcts[k];
    out->pct_ns[out->pct_count++] = d->pct_ns[k];
  }
}
