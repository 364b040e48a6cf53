/* compare.c: choosing the sessions of a comparison (filters, --last), grouping
 * them by label, probe and delay, and each session's facts and tags; the
 * passes over the samples (group_passes.c) then find everything else the page
 * shows. The pages (page.c, json.c) only format what is here and never touch
 * the store. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "compute.h"

typedef struct tl__row_sets tl__row_sets; /* the details' facts and tags (below) */
static void row_sets_free(tl__row_sets *r);

/* The groups of a comparison as tl_compare allocates them: c->groups points
 * at groups, and beside them is what the statistics keep of each group
 * (tl__group_kept) and which hold their latest session apart
 * (tl__group_latest), which tl_report.h need not show. */
typedef struct {
  tl__kept **kept; /* one per group, or NULL */
  char *apart;     /* TL__EARLIER_GROUPS: 1 where the group holds its latest apart */
  /* TL__GROUPS_AND_EARLIER: per group, its earlier sessions' distribution
   * (count 0 when not worked out) and what the statistics keep of them. */
  tl_dist *earlier;
  tl__kept **earlier_kept;
  tl_group groups[];
} group_block;

static group_block *block_of_groups(const tl_comparison *c) {
  return (group_block *)(void *)((char *)c->groups - offsetof(group_block, groups));
}

tl__kept *tl__group_kept(const tl_comparison *c, size_t i) {
  return c->groups && i < c->group_count ? block_of_groups(c)->kept[i] : NULL;
}

const int64_t *tl__group_latest(const tl_comparison *c, size_t i) {
  const group_block *b = c->groups && i < c->group_count ? block_of_groups(c) : NULL;
  /* Just past the group's sessions, in the ids it was given. */
  return b && b->apart && b->apart[i] ? &c->groups[i].session_ids[c->groups[i].session_count]
                                      : NULL;
}

const tl_dist *tl__group_earlier(const tl_comparison *c, size_t i, const tl__kept **kept) {
  const group_block *b = c->groups && i < c->group_count ? block_of_groups(c) : NULL;
  if (!b || !b->earlier || !b->earlier[i].count)
    return NULL;
  *kept = b->earlier_kept[i];
  return &b->earlier[i];
}

void tl__comparison_drop_kept(tl_comparison *c) {
  for (size_t i = 0; c->groups && i < c->group_count; i++) {
    group_block *b = block_of_groups(c);
    tl__kept_free(b->kept[i]);
    b->kept[i] = NULL;
    if (b->earlier_kept) {
      tl__kept_free(b->earlier_kept[i]);
      b->earlier_kept[i] = NULL;
    }
  }
}

void tl__comparison_drop_details(tl_comparison *c) {
  free(c->details);
  c->details = NULL;
  row_sets_free(c->detail_rows); /* the details' facts and tags */
  c->detail_rows = NULL;
  free(c->detail_values);
  c->detail_values = NULL;
}

void tl_compare_opts_init(tl_compare_opts *o) {
  memset(o, 0, sizeof *o);
  tl_filter_init(&o->filter);
}

void tl_comparison_free(tl_comparison *c) {
  if (!c)
    return;
  tl__comparison_drop_kept(c);
  for (size_t i = 0; i < c->group_count; i++) {
    free(c->groups[i].label);
    free(c->groups[i].probe);
    free(c->groups[i].session_ids);
    free(c->groups[i].session_at);
  }
  if (c->groups) {
    free(block_of_groups(c)->kept);
    free(block_of_groups(c)->apart);
    free(block_of_groups(c)->earlier);
    free(block_of_groups(c)->earlier_kept);
    free(block_of_groups(c));
  }
  tl__comparison_drop_details(c);
  tl__label_sessions_free(c);
  free(c->causes);
  free(c->counters);
  tl_strings_free(c->labels, c->label_count);
  free(c->by);
  free(c->by_keys);
  free(c->label_x);
  tl_session_list_free(&c->sessions);
  memset(c, 0, sizeof *c);
}

/* Checks that every asked label exists; otherwise says which labels do. */
static int check_labels(tl_store *store, const tl_compare_opts *o, char *err, size_t errlen) {
  char **have = NULL;
  size_t n = 0;
  int rc = tl_store_labels(store, &have, &n);
  if (rc)
    return tl_fail(err, errlen, rc, "%s", tl_store_errmsg(store));
  if (n == 0) {
    tl_strings_free(have, n);
    return tl_fail(err, errlen, TL_ENOTFOUND,
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

/* Keeps the sessions of c whose keep[i] is set, in order, and frees the
 * others, with their details when read; orig (may be NULL) holds a string
 * per session that goes with it. */
static int drop_sessions(tl_comparison *c, const char *keep, char **orig) {
  tl_session_list *list = &c->sessions;
  size_t kept = 0;
  for (size_t i = 0; orig && i < list->count; i++)
    if (keep[i])
      orig[kept++] = orig[i];
  for (size_t i = kept; orig && i < list->count; i++)
    orig[i] = NULL;
  kept = 0;
  for (size_t i = 0; c->details && i < list->count; i++) /* rows freed with the comparison */
    if (keep[i])
      c->details[kept++] = c->details[i];
  tl_session_list_keep(list, keep);
  return TL_OK;
}

/* Keeps only the newest `last` sessions of each label, probe and delay.
 * The list is oldest first, so it is walked from the end. */
static int keep_last(tl_comparison *c, int64_t last, char **orig) {
  tl_session_list *list = &c->sessions;
  if (last <= 0 || list->count == 0)
    return TL_OK;
  char *keep = calloc(list->count, 1);
  if (!keep)
    return TL_ENOMEM;
  for (size_t i = list->count; i-- > 0;) {
    const tl_session *s = &list->items[i];
    int64_t newer = 0;
    for (size_t k = i + 1; k < list->count; k++) {
      const tl_session *t = &list->items[k];
      newer += keep[k] && strcmp(t->label, s->label) == 0 && strcmp(t->probe, s->probe) == 0 &&
               t->delay_ns == s->delay_ns;
    }
    keep[i] = newer < last;
  }
  int rc = drop_sessions(c, keep, orig);
  free(keep);
  return rc;
}

/* The sessions' facts and tags, each set of rows kept once: the sessions
 * of one host record the same facts, their strings the same pointers in
 * the sessions' pool, so they share one array (a copy a session was 23 MiB
 * of fresh memory for a fleet's month). Freed whole with the comparison. */
typedef struct rows_chunk {
  struct rows_chunk *next;
  size_t used, cap;
  tl_fact_row row[];
} rows_chunk;

typedef struct {
  const tl_fact_row *rows; /* NULL where empty */
  size_t n;
  uint64_t hash;
} row_set;

/* Where a string read lay (as a number: that memory may be freed since)
 * and its copy in the sessions' pool. */
typedef struct {
  uintptr_t read;
  char *pooled;
} seen_string;

enum { SEEN_BITS = 9 };

struct tl__row_sets {
  rows_chunk *chunks; /* the newest first */
  row_set *slot;      /* cap entries, at most half full */
  size_t cap, count;
  tl_fact_row *scratch; /* a set's rows while they are looked up */
  size_t scratch_cap;
  seen_string seen[1 << SEEN_BITS]; /* by where the string read lies (pooled) */
};

static void row_sets_free(tl__row_sets *r) {
  if (!r)
    return;
  for (rows_chunk *k = r->chunks, *next; k; k = next) {
    next = k->next;
    free(k);
  }
  free(r->slot);
  free(r->scratch);
  free(r);
}

/* A set's rows are the same when key, value and evidence are the same
 * pointers (distinct.c's alike, which groups sessions, weighs key and
 * value only: a shared array must read as each session's own). */
static uint64_t row_set_hash(const tl_fact_row *rows, size_t n) {
  return tl_hash_bytes(n, rows, n * sizeof *rows); /* the rows' pointers */
}

static int identical_rows(const tl_fact_row *a, const tl_fact_row *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (a[i].key != b[i].key || a[i].value != b[i].value || a[i].evidence != b[i].evidence)
      return 0;
  return 1;
}

static int row_sets_grow(tl__row_sets *r) {
  size_t cap = r->cap ? 2 * r->cap : 256;
  row_set *slot = calloc(cap, sizeof *slot);
  if (!slot)
    return TL_ENOMEM;
  for (size_t i = 0; i < r->cap; i++)
    if (r->slot[i].rows) {
      size_t at = (size_t)r->slot[i].hash & (cap - 1);
      while (slot[at].rows)
        at = (at + 1) & (cap - 1);
      slot[at] = r->slot[i];
    }
  free(r->slot);
  r->slot = slot;
  r->cap = cap;
  return TL_OK;
}

/* The kept copy of rows[0..n) (n >= 1), made at first sight; NULL when out
 * of memory. */
static const tl_fact_row *row_sets_get(tl__row_sets *r, const tl_fact_row *rows, size_t n) {
  if (2 * (r->count + 1) > r->cap && row_sets_grow(r))
    return NULL;
  uint64_t h = row_set_hash(rows, n);
  size_t at = (size_t)h & (r->cap - 1);
  for (; r->slot[at].rows; at = (at + 1) & (r->cap - 1))
    if (r->slot[at].hash == h && r->slot[at].n == n && identical_rows(r->slot[at].rows, rows, n))
      return r->slot[at].rows;
  rows_chunk *k = r->chunks;
  if (!k || k->cap - k->used < n) {
    size_t cap = n > 4096 ? n : 4096;
    if (!(k = malloc(sizeof *k + cap * sizeof *k->row)))
      return NULL;
    k->used = 0;
    k->cap = cap;
    k->next = r->chunks;
    r->chunks = k;
  }
  tl_fact_row *kept = k->row + k->used;
  k->used += n;
  memcpy(kept, rows, n * sizeof *rows);
  r->slot[at] = (row_set){kept, n, h};
  r->count++;
  return kept;
}

/* The pool's copy of a string read: a store hands a fact set's rows over
 * as the same strings for each session of its host, so a small table by
 * where they lie finds most of them without a look-up in the pool (whose
 * table, as large as the fleet's strings, missed the cache each time: 0.3
 * µs a session). A store may hand over other bytes at the same place, so a
 * string found there is compared first. NULL when out of memory. */
static char *pooled(tl_strpool *pool, tl__row_sets *r, const char *read) {
  uintptr_t at = (uintptr_t)read;
  seen_string *e = &r->seen[((uint64_t)at * 0x9e3779b97f4a7c15ULL) >> (64 - SEEN_BITS)];
  if (e->read == at && strcmp(e->pooled, read) == 0)
    return e->pooled;
  char *kept = tl_strpool_get(pool, read);
  if (kept)
    *e = (seen_string){at, kept};
  return kept;
}

/* rows[0..n) as read, their strings in pool, kept in r: *out NULL when n
 * is 0. */
static int pool_rows(tl_strpool *pool, tl__row_sets *r, const tl_fact_row *rows, size_t n,
                     tl_fact_row **out) {
  *out = NULL;
  if (!n)
    return TL_OK;
  if (n > r->scratch_cap) {
    free(r->scratch);
    r->scratch_cap = 2 * n;
    if (!(r->scratch = malloc(r->scratch_cap * sizeof *r->scratch))) {
      r->scratch_cap = 0;
      return TL_ENOMEM;
    }
  }
  for (size_t i = 0; i < n; i++) {
    tl_fact_row *y = &r->scratch[i];
    y->key = pooled(pool, r, rows[i].key);
    y->value = pooled(pool, r, rows[i].value);
    y->evidence = pooled(pool, r, rows[i].evidence);
    if (!y->key || !y->value || !y->evidence)
      return TL_ENOMEM;
  }
  /* Shared, never written through: the page only reads a session's rows. */
  *out = (tl_fact_row *)row_sets_get(r, r->scratch, n);
  return *out ? TL_OK : TL_ENOMEM;
}

static int detail_rows(void *ctx, size_t i, const tl_fact_row *facts, size_t nfacts,
                       const tl_fact_row *tags, size_t ntags) {
  tl_comparison *c = ctx;
  tl_session_detail *d = &c->details[i];
  d->fact_count = nfacts;
  d->tag_count = ntags;
  int rc = pool_rows(c->sessions.strings, c->detail_rows, facts, nfacts, &d->facts);
  return rc ? rc : pool_rows(c->sessions.strings, c->detail_rows, tags, ntags, &d->tags);
}

/* Facts and tags of every session, their strings in the sessions' pool. */
static int session_facts(tl_store *store, tl_comparison *c) {
  size_t n = c->sessions.count;
  c->details = calloc(n + 1, sizeof *c->details);
  c->detail_rows = calloc(1, sizeof *c->detail_rows);
  int64_t *ids = malloc((n ? n : 1) * sizeof *ids);
  if (!c->details || !c->detail_rows || !ids) {
    free(ids);
    return TL_ENOMEM;
  }
  for (size_t i = 0; i < n; i++)
    ids[i] = c->sessions.items[i].id;
  int rc = tl_store_details_of(store, ids, n, detail_rows, c);
  free(ids);
  return rc;
}

/* The details of every session: its facts and tags (read already with
 * --by, which groups on them), and its own label when grouped --by (orig). */
static int session_details(tl_store *store, tl_comparison *c, char **orig) {
  int rc = c->details ? TL_OK : session_facts(store, c);
  for (size_t i = 0; !rc && orig && i < c->sessions.count; i++)
    c->details[i].label = orig[i];
  return rc;
}

/* Room for every session's own percentiles: 50, 90 and 99, then pcts[0..np),
 * shared, then each session's values at them, in one block. */
static int detail_values(tl_comparison *c, const double *pcts, size_t np) {
  size_t n = 3 + np, ns = c->sessions.count;
  double *at = malloc(n * sizeof *at + ns * n * sizeof(int64_t));
  if (!at)
    return TL_ENOMEM;
  memcpy(at, (const double[]){50, 90, 99}, 3 * sizeof *at);
  memcpy(at + 3, pcts, np * sizeof *pcts);
  int64_t *v = (int64_t *)(at + n);
  for (size_t i = 0; i < ns; i++) {
    c->details[i].pct_count = n;
    c->details[i].pcts = at;
    c->details[i].pct_ns = v + i * n;
    memset(c->details[i].pct_ns, 0, n * sizeof *v);
  }
  c->detail_values = at;
  return TL_OK;
}

/* Labels in the order asked, or in the database's (sorted) order. */
static int labels_of_sessions(const tl_compare_opts *o, tl_comparison *out, char *err,
                              size_t errlen) {
  for (size_t i = 0; i < o->label_count; i++) {
    size_t k = 0;
    while (k < out->sessions.count && strcmp(out->sessions.items[k].label, o->labels[i]) != 0)
      k++;
    if (k == out->sessions.count) {
      snprintf(err, errlen, "no session of label '%s' matches the filters", o->labels[i]);
      return TL_ENOTFOUND;
    }
  }
  size_t want = o->label_count ? o->label_count : out->sessions.count;
  out->labels = calloc(want, sizeof *out->labels);
  if (!out->labels)
    return tl_fail(err, errlen, TL_ENOMEM, "out of memory");
  for (size_t i = 0; i < o->label_count; i++) {
    if (!(out->labels[out->label_count] = strdup(o->labels[i])))
      return tl_fail(err, errlen, TL_ENOMEM, "out of memory");
    out->label_count++;
  }
  if (!o->label_count) {
    /* The sessions' labels, each once, in the database's order (by bytes,
     * as it lists them): found here, not asked of the store again. */
    size_t *first = tl__sessions_first(out, TL__SAME_LABEL);
    if (!first)
      return tl_fail(err, errlen, TL_ENOMEM, "out of memory");
    for (size_t i = 0; i < out->sessions.count; i++)
      if (first[i] == i && out->label_count < want)
        out->labels[out->label_count++] = strdup(out->sessions.items[i].label);
    free(first);
    for (size_t i = 0; i < out->label_count; i++)
      if (!out->labels[i])
        return tl_fail(err, errlen, TL_ENOMEM, "out of memory");
    qsort(out->labels, out->label_count, sizeof *out->labels, tl__by_bytes);
  }
  out->baseline = -1;
  if (o->baseline && (out->baseline = label_pos(out, o->baseline)) < 0) {
    snprintf(err, errlen, "baseline '%.64s' is not among the compared labels", o->baseline);
    return TL_ENOTFOUND;
  }
  return TL_OK;
}

/* --by: every session's label becomes its group (its own label goes to
 * orig), the asked values (--compare) are found among the groups and the
 * others' sessions dropped, and the labels are the groups in order. */
static int labels_by(tl_store *store, const tl_compare_opts *o, tl_comparison *out, char **orig,
                     char *err, size_t errlen) {
  tl__by *by = out->by_keys = calloc(1, sizeof *by);
  if (!by)
    return tl_fail(err, errlen, TL_ENOMEM, "out of memory");
  int rc = tl__by_parse(o->by, by, err, errlen);
  if (rc)
    return TL_EINVAL;
  if ((rc = session_facts(store, out)))
    return tl__store_failed(store, rc, err, errlen);
  tl__by_groups g;
  if ((rc = tl__by_assign(by, &out->sessions, out->details, orig, &g, err, errlen)))
    return rc;
  char title[200], name[512];
  tl__by_title(by, title, sizeof title);
  size_t want = o->label_count ? o->label_count : g.count;
  out->by = tl__by_spec(by);
  out->labels = calloc(want + 1, sizeof *out->labels);
  out->label_x = g.numeric ? calloc(want + 1, sizeof *out->label_x) : NULL;
  if (!out->by || !out->labels || (g.numeric && !out->label_x))
    rc = tl_fail(err, errlen, TL_ENOMEM, "out of memory");
  for (size_t i = 0; i < want && !rc; i++) {
    if (o->label_count)
      rc = tl__by_value(by, &g, o->labels[i], name, sizeof name, err, errlen);
    else
      snprintf(name, sizeof name, "%s", g.names[i]);
    if (!rc && label_pos(out, name) >= 0)
      continue; /* 1G and 1024M are one value */
    if (!rc && !(out->labels[out->label_count] = strdup(name)))
      rc = tl_fail(err, errlen, TL_ENOMEM, "out of memory");
    if (rc)
      break;
    for (size_t k = 0; out->label_x && k < g.count; k++)
      if (strcmp(g.names[k], name) == 0)
        out->label_x[out->label_count] = g.x[k];
    out->label_count++;
  }
  out->baseline = -1;
  if (!rc && o->baseline) {
    rc = tl__by_value(by, &g, o->baseline, name, sizeof name, err, errlen);
    if (!rc && (out->baseline = label_pos(out, name)) < 0) {
      snprintf(err, errlen, "baseline '%.64s' is not among the compared values", name);
      rc = TL_ENOTFOUND;
    }
  }
  if (!rc && o->label_count) {
    char *keep = calloc(out->sessions.count + 1, 1);
    if (!keep)
      rc = tl_fail(err, errlen, TL_ENOMEM, "out of memory");
    for (size_t i = 0; keep && i < out->sessions.count; i++)
      keep[i] = label_pos(out, out->sessions.items[i].label) >= 0;
    if (keep && drop_sessions(out, keep, orig))
      rc = tl_fail(err, errlen, TL_ENOMEM, "out of memory");
    free(keep);
  }
  tl__by_groups_free(&g);
  return rc;
}

/* Whether two strings of a list are the same: in a pool, the same
 * string is the same pointer. */
static int same_text(const tl_session_list *list, const char *a, const char *b) {
  return list->strings ? a == b : strcmp(a, b) == 0;
}

static int same_group(const tl_session_list *list, const tl_session *a, const tl_session *b) {
  return same_text(list, a->label, b->label) && same_text(list, a->probe, b->probe) &&
         a->delay_ns == b->delay_ns;
}

/* The group of each session (by its first session's place in the order of
 * sessions): a malloc'd array of list->count, and their number in *n; NULL
 * when out of memory. */
static size_t *assign_groups(const tl_session_list *list, size_t *n) {
  size_t *group_of = malloc((list->count + 1) * sizeof *group_of);
  size_t *first = malloc((list->count + 1) * sizeof *first); /* a session of each group */
  *n = 0;
  if (!group_of || !first) {
    free(group_of);
    free(first);
    return NULL;
  }
  size_t last = 0;
  for (size_t i = 0; i < list->count; i++) {
    const tl_session *s = &list->items[i];
    size_t k = last; /* sessions of a group often follow each other */
    if (k >= *n || !same_group(list, &list->items[first[k]], s))
      for (k = 0; k < *n && !same_group(list, &list->items[first[k]], s);)
        k++;
    if (k >= *n) {
      k = (*n)++;
      first[k] = i;
    }
    group_of[i] = last = k;
  }
  free(first);
  return group_of;
}

/* Names each of the n groups and gives it its sessions' ids, in order, and
 * where they are in the list (the page looks a group's sessions up often:
 * a fleet's groups have tens of thousands). */
static int fill_groups(tl_comparison *out, const size_t *group_of, size_t n) {
  for (size_t i = 0; i < out->sessions.count; i++)
    out->groups[group_of[i]].session_count++;
  out->group_count = n;
  for (size_t k = 0; k < n; k++) {
    tl_group *g = &out->groups[k];
    g->session_ids = malloc(g->session_count * sizeof *g->session_ids);
    g->session_at = malloc(g->session_count * sizeof *g->session_at);
    if (!g->session_ids || !g->session_at)
      return TL_ENOMEM;
    g->session_count = 0;
  }
  for (size_t i = 0; i < out->sessions.count; i++) {
    const tl_session *s = &out->sessions.items[i];
    tl_group *g = &out->groups[group_of[i]];
    if (!g->session_count) {
      g->label = strdup(s->label);
      g->probe = strdup(s->probe);
      g->delay_ns = s->delay_ns;
      if (!g->label || !g->probe)
        return TL_ENOMEM;
    }
    g->session_at[g->session_count] = i;
    g->session_ids[g->session_count++] = s->id;
  }
  return TL_OK;
}

/* The sessions of o into out->sessions: the store's, or given's (taken
 * over) when the caller chose them already. */
static int list_sessions(tl_store *store, const tl_compare_opts *o, tl_session_list *given,
                         tl_comparison *out, char *err, size_t errlen) {
  if (given) {
    out->sessions = *given;
    memset(given, 0, sizeof *given);
    return TL_OK;
  }
  int rc = o->by ? TL_OK : check_labels(store, o, err, errlen);
  if (rc)
    return rc;
  tl_filter f = o->filter;
  f.labels = o->by ? NULL : o->labels;
  f.label_count = o->by ? 0 : o->label_count;
  rc = tl_store_sessions(store, &f, &out->sessions);
  return rc ? tl_fail(err, errlen, rc, "%s", tl_store_errmsg(store)) : TL_OK;
}

/* TL__EARLIER_GROUPS: each group of two sessions or more holds its latest
 * apart; it stays in the list, none of its values worked out (pct_count 0),
 * so that what asks for them reads its samples. */
static int hold_latest_apart(tl_comparison *c, group_block *blk) {
  blk->apart = malloc(c->group_count + 1);
  if (!blk->apart)
    return TL_ENOMEM;
  for (size_t k = 0; k < c->group_count; k++) {
    tl_group *g = &c->groups[k];
    if ((blk->apart[k] = g->session_count >= 2))
      c->details[g->session_at[--g->session_count]].pct_count = 0;
  }
  return TL_OK;
}

static int compare_sessions(tl_store *store, const tl_compare_opts *o, tl__groups groups,
                            tl_session_list *given, const tl__group_hook *hook, tl_comparison *out,
                            char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  int rc = list_sessions(store, o, given, out, err, errlen);
  if (rc)
    return rc;
  if (out->sessions.count == 0) {
    tl_comparison_free(out);
    return tl_fail(err, errlen, TL_ENOTFOUND,
                   "no session matches the filters (tlstore info lists what the database holds)");
  }
  /* With --by, each session's own label, until its details hold it. */
  char **orig = o->by ? calloc(out->sessions.count, sizeof *orig) : NULL;
  if (o->by && !orig)
    goto oom;
  rc = o->by ? labels_by(store, o, out, orig, err, errlen) : TL_OK;
  if (!rc && keep_last(out, o->last, orig))
    rc = tl_fail(err, errlen, TL_ENOMEM, "out of memory");
  if (!rc && !o->by)
    rc = labels_of_sessions(o, out, err, errlen);
  if (!rc && groups != TL__SESSIONS_ONLY && (rc = session_details(store, out, orig)))
    tl__store_failed(store, rc, err, errlen);
  free(orig); /* its strings are the sessions' */
  if (!rc && (rc = tl__label_sessions_make(out)))
    tl_fail(err, errlen, rc, "out of memory");
  if (rc)
    tl_comparison_free(out);
  if (rc || groups == TL__SESSIONS_ONLY)
    return rc;

  /* Groups: one per distinct (label, probe, delay). */
  size_t ngroups, *group_of = assign_groups(&out->sessions, &ngroups);
  group_block *blk = group_of ? calloc(1, sizeof *blk + ngroups * sizeof *blk->groups) : NULL;
  tl__kept **kept = calloc(ngroups + 1, sizeof *kept);
  if (!blk || !kept) {
    free(group_of);
    free(blk);
    free(kept);
    goto oom;
  }
  blk->kept = kept;
  out->groups = blk->groups;
  rc = fill_groups(out, group_of, ngroups);
  free(group_of);
  if (rc)
    goto oom;
  /* Insertion sort: a comparison has few groups. */
  for (size_t i = 1; i < out->group_count; i++)
    for (size_t k = i; k > 0 && group_cmp(out, &out->groups[k - 1], &out->groups[k]) > 0; k--) {
      tl_group tmp = out->groups[k];
      out->groups[k] = out->groups[k - 1];
      out->groups[k - 1] = tmp;
    }

  static const double default_pcts[] = {50, 90, 99, 99.9};
  const double *pcts = o->pct_count ? o->pcts : default_pcts;
  size_t np = o->pct_count ? o->pct_count : sizeof default_pcts / sizeof default_pcts[0];
  if (np > TL_MAX_PCTS) {
    tl_comparison_free(out);
    return tl_fail(err, errlen, TL_EINVAL, "too many percentiles");
  }
  for (size_t k = 0; k < np; k++)
    if (!(pcts[k] >= 0 && pcts[k] <= 100)) {
      tl_comparison_free(out);
      return tl_fail(err, errlen, TL_EINVAL, "percentiles must lie between 0 and 100");
    }
  if (detail_values(out, pcts, np) || (groups == TL__EARLIER_GROUPS && hold_latest_apart(out, blk)))
    goto oom;
  if (groups == TL__GROUPS_AND_EARLIER) {
    blk->earlier = calloc(out->group_count + 1, sizeof *blk->earlier);
    blk->earlier_kept = calloc(out->group_count + 1, sizeof *blk->earlier_kept);
    if (!blk->earlier || !blk->earlier_kept)
      goto oom;
  }
  tl__tail *tails = calloc(out->group_count + 1, sizeof *tails);
  if (!tails)
    goto oom;
  tl__group_out got = {blk->kept, blk->apart ? "earlier" : "ci", blk->earlier, blk->earlier_kept,
                       tails};
  rc = tl__groups_read(store, out, pcts, np, &got, hook);
  if (!rc)
    rc = tl__causes_compute(store, out, tails);
  free(tails);
  if (rc) {
    tl__store_failed(store, rc, err, errlen);
    tl_comparison_free(out);
  }
  return rc;

oom:
  tl_comparison_free(out);
  return tl_fail(err, errlen, TL_ENOMEM, "out of memory");
}

int tl__compare(tl_store *store, const tl_compare_opts *o, tl__groups groups, tl_comparison *out,
                char *err, size_t errlen) {
  return compare_sessions(store, o, groups, NULL, NULL, out, err, errlen);
}

int tl__compare_given(tl_store *store, const tl_compare_opts *o, tl_session_list *sessions,
                      tl_comparison *out, char *err, size_t errlen) {
  return compare_sessions(store, o, TL__GROUPS, sessions, NULL, out, err, errlen);
}

int tl__compare_each(tl_store *store, const tl_compare_opts *o, const tl__group_hook *hook,
                     tl_comparison *out, char *err, size_t errlen) {
  /* One read snapshot for the session list and every pass over the samples,
   * so a collector committing meanwhile changes nothing in the page. */
  int rc = tl_store_read_begin(store);
  if (rc) {
    memset(out, 0, sizeof *out);
    return tl_fail(err, errlen, rc, "%s", tl_store_errmsg(store));
  }
  rc = compare_sessions(store, o, TL__GROUPS, NULL, hook, out, err, errlen);
  tl_store_read_end(store);
  return rc;
}

int tl_compare(tl_store *store, const tl_compare_opts *o, tl_comparison *out, char *err,
               size_t errlen) {
  return tl__compare_each(store, o, NULL, out, err, errlen);
}
