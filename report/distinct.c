/* distinct.c: which item comes first with the same key (a session's host,
 * run, status, command line ...), for every item at once, through one hash
 * table. The page asks this of every session; a scan of the sessions before
 * each one grows with the square of their number, which a fleet of
 * hundreds of thousands of sessions cannot afford. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compute.h"

static uint64_t hash_parts(const char *const *part, int parts) {
  uint64_t h = 0;
  for (int k = 0; k < parts; k++)
    h = tl_hash_bytes(h, part[k], strlen(part[k]));
  return h;
}

/* Keys seen lately, by where their strings are: the sessions' strings are
 * kept once each (tl_strpool), so a fleet's label and host come back as
 * the same pointers, found here without reading them. */
enum { RECENT = 512 };
typedef struct {
  const char *part[TL__KEY_PARTS];
  size_t first;
} recent_key;

static recent_key *recent_slot(recent_key *recent, const char *const *part, int parts) {
  uint64_t h = 0;
  for (int k = 0; k < parts; k++)
    h = (h ^ (uintptr_t)part[k]) * 0x9e3779b97f4a7c15ULL;
  return &recent[(h >> 40) & (RECENT - 1)];
}

/* The table of the keys seen, twice as large: cap doubles, at most half
 * full. 0, or TL_ENOMEM (the table as it was). */
static int grow(size_t **slot, size_t *cap, const uint64_t *hash) {
  size_t to = *cap * 2, *bigger = calloc(to, sizeof *bigger);
  if (!bigger)
    return TL_ENOMEM;
  for (size_t k = 0; k < *cap; k++)
    if ((*slot)[k]) {
      size_t at = (size_t)hash[(*slot)[k] - 1] & (to - 1);
      while (bigger[at])
        at = (at + 1) & (to - 1);
      bigger[at] = (*slot)[k];
    }
  free(*slot);
  *slot = bigger;
  *cap = to;
  return TL_OK;
}

/* The table grows with the distinct keys, not with n: most of a fleet's
 * keys (a label, a host) repeat, and a table for every session was
 * megabytes of fresh pages to clear for each question the page asks. */
int tl__first_same(size_t n, int parts, tl__key_fn key, const void *ctx, size_t *first) {
  if (parts < 1 || parts > TL__KEY_PARTS)
    return TL_EINVAL;
  recent_key recent[RECENT] = {{{NULL}, 0}}; /* a NULL part: empty */
  size_t cap = 64, keys = 0;
  size_t *slot = calloc(cap, sizeof *slot); /* item + 1; 0: empty */
  uint64_t *hash = malloc((n ? n : 1) * sizeof *hash);
  if (!slot || !hash) {
    free(slot);
    free(hash);
    return TL_ENOMEM;
  }
  for (size_t i = 0; i < n; i++) {
    const char *mine[TL__KEY_PARTS];
    int skip = 0;
    for (int k = 0; k < parts && !skip; k++)
      skip = (mine[k] = key(ctx, i, k)) == NULL;
    first[i] = SIZE_MAX;
    if (skip)
      continue;
    recent_key *r = recent_slot(recent, mine, parts);
    int seen = 1;
    for (int k = 0; k < parts && seen; k++)
      seen = r->part[k] == mine[k];
    if (seen) {
      first[i] = r->first; /* hash[i] is read only for the first of a key */
      continue;
    }
    hash[i] = hash_parts(mine, parts);
    if (2 * (keys + 1) > cap && grow(&slot, &cap, hash)) {
      free(slot);
      free(hash);
      return TL_ENOMEM;
    }
    for (size_t at = (size_t)hash[i] & (cap - 1);; at = (at + 1) & (cap - 1)) {
      if (!slot[at]) {
        slot[at] = i + 1;
        first[i] = i;
        keys++;
        break;
      }
      size_t j = slot[at] - 1;
      int same = hash[j] == hash[i];
      for (int k = 0; k < parts && same; k++)
        same = strcmp(key(ctx, j, k), mine[k]) == 0;
      if (same) {
        first[i] = j;
        break;
      }
    }
    memcpy(r->part, mine, (size_t)parts * sizeof *mine);
    r->first = first[i];
  }
  free(slot);
  free(hash);
  return TL_OK;
}

/* ------------------------------------------------------------------------ */
/* The questions the pages ask of a comparison's sessions                   */

static const char *session_key(const void *ctx, size_t i, int part) {
  const tl_comparison *c = ((const void *const *)ctx)[0];
  tl__session_key which = *(const tl__session_key *)((const void *const *)ctx)[1];
  const tl_session *s = &c->sessions.items[i];
  switch (which) {
  case TL__SAME_HOST:
    return part ? s->host_fingerprint : s->label;
  case TL__SAME_MACHINE:
    return s->host_fingerprint;
  case TL__SAME_RUN:
    return s->run_uuid;
  case TL__SAME_STATUS:
    return part ? s->status : s->label;
  case TL__SAME_PROBE:
    return s->probe;
  case TL__SAME_COMMAND:
    return part ? s->command_line : s->label;
  case TL__SAME_LABEL:
    return s->label;
  }
  return NULL;
}

size_t *tl__sessions_first(const tl_comparison *c, tl__session_key which) {
  static const int parts[] = {
      [TL__SAME_HOST] = 2,  [TL__SAME_MACHINE] = 1, [TL__SAME_RUN] = 1,  [TL__SAME_STATUS] = 2,
      [TL__SAME_PROBE] = 1, [TL__SAME_COMMAND] = 2, [TL__SAME_LABEL] = 1};
  size_t n = c->sessions.count;
  size_t *first = malloc((n ? n : 1) * sizeof *first);
  const void *ctx[2] = {c, &which};
  if (first && tl__first_same(n, parts[which], session_key, ctx, first) != TL_OK) {
    free(first);
    first = NULL;
  }
  return first;
}

/* ------------------------------------------------------------------------ */
/* Sessions that hold the same strings                                      */

static uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 1099511628211ULL; }

static uint64_t rows_hash(uint64_t h, const tl_fact_row *r, size_t n) {
  for (size_t k = 0; k < n; k++)
    h = mix(mix(h, (uintptr_t)r[k].key), (uintptr_t)r[k].value);
  return mix(h, n);
}

static int same_rows(const tl_fact_row *a, size_t na, const tl_fact_row *b, size_t nb) {
  if (na != nb)
    return 0;
  for (size_t k = 0; k < na; k++)
    if (a[k].key != b[k].key || a[k].value != b[k].value)
      return 0;
  return 1;
}

/* The hash of what alike compares of session i. */
static uint64_t alike_hash(const tl_comparison *c, size_t i) {
  const tl_session *s = &c->sessions.items[i];
  const tl_session_detail *d = &c->details[i];
  uint64_t h = 1469598103934665603ULL;
  const void *parts[] = {s->label,        d->label, s->probe, s->hostname, s->host_fingerprint,
                         s->libuv_version};
  for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++)
    h = mix(h, (uintptr_t)parts[k]);
  h = mix(h, (uint64_t)s->delay_ns);
  h = rows_hash(rows_hash(h, d->facts, d->fact_count), d->tags, d->tag_count);
  return h ^ (h >> 29);
}

static int alike(const tl_comparison *c, size_t i, size_t j) {
  const tl_session *s = &c->sessions.items[i], *t = &c->sessions.items[j];
  const tl_session_detail *d = &c->details[i], *e = &c->details[j];
  return s->label == t->label && d->label == e->label && s->probe == t->probe &&
         s->hostname == t->hostname && s->host_fingerprint == t->host_fingerprint &&
         s->libuv_version == t->libuv_version && s->delay_ns == t->delay_ns &&
         same_rows(d->facts, d->fact_count, e->facts, e->fact_count) &&
         same_rows(d->tags, d->tag_count, e->tags, e->tag_count);
}

size_t *tl__sessions_alike(const tl_comparison *c) {
  size_t n = c->sessions.count, cap = 16;
  while (cap < 2 * n)
    cap *= 2;
  size_t *first = malloc((n ? n : 1) * sizeof *first);
  size_t *slot = calloc(cap, sizeof *slot); /* session + 1; 0: empty */
  uint64_t *hash = malloc((n ? n : 1) * sizeof *hash);
  for (size_t i = 0; first && slot && hash && i < n; i++) {
    hash[i] = alike_hash(c, i);
    for (size_t at = (size_t)hash[i] & (cap - 1);; at = (at + 1) & (cap - 1)) {
      size_t j = slot[at] - 1;
      if (!slot[at])
        slot[at] = i + 1;
      else if (hash[j] != hash[i] || !alike(c, i, j))
        continue;
      first[i] = slot[at] - 1;
      break;
    }
  }
  if (!slot || !hash) {
    free(first);
    first = NULL;
  }
  free(slot);
  free(hash);
  return first;
}

size_t *tl__host_label_counts(const tl_comparison *c, const size_t *first, size_t nh) {
  size_t n = c->sessions.count, L = c->label_count;
  size_t *machine = tl__sessions_first(c, TL__SAME_MACHINE);
  size_t *label = tl__sessions_first(c, TL__SAME_LABEL);
  size_t *number = malloc((2 * n + 1) * sizeof *number); /* a host's, then a label's */
  size_t *counts = calloc(nh * L + 1, sizeof *counts);
  if (!machine || !label || !number || !counts) {
    free(counts);
    counts = NULL;
  }
  /* Number the hosts and the labels at their first sessions. */
  for (size_t h = 0; counts && h < nh; h++)
    number[first[h]] = h;
  for (size_t i = 0; counts && i < n; i++)
    if (label[i] == i) {
      size_t l = 0;
      while (l < L && strcmp(c->labels[l], c->sessions.items[i].label) != 0)
        l++;
      number[n + i] = l; /* L: a label not compared */
    }
  for (size_t i = 0; counts && i < n; i++) {
    size_t h = number[machine[i]], l = number[n + label[i]];
    if (l < L)
      counts[h * L + l]++;
  }
  free(machine);
  free(label);
  free(number);
  return counts;
}

/* ------------------------------------------------------------------------ */
/* Lists that fold                                                           */

void tl__fold_init(tl__fold *l, size_t show) {
  memset(l, 0, sizeof *l);
  l->show = show;
}

static void fold_append(tl__fold *l, const char *a, const char *b) {
  size_t need = l->len + strlen(a) + strlen(b) + 1;
  if (l->failed)
    return;
  if (need > l->cap) {
    size_t cap = l->cap ? l->cap : 256;
    while (cap < need)
      cap *= 2;
    char *text = realloc(l->text, cap);
    if (!text) {
      l->failed = 1;
      return;
    }
    l->text = text;
    l->cap = cap;
  }
  l->len += (size_t)sprintf(l->text + l->len, "%s%s", a, b);
}

void tl__fold_add(tl__fold *l, const char *item) {
  if (++l->count <= l->show)
    fold_append(l, l->count > 1 ? ", " : "", item);
}

const char *tl__fold_text(tl__fold *l, const char *more) {
  if (l->count > l->show && !l->folded) {
    char tail[64];
    snprintf(tail, sizeof tail, " and %zu more ", l->count - l->show);
    fold_append(l, tail, more);
    l->folded = 1;
  }
  return l->failed || !l->text ? "" : l->text;
}

void tl__fold_free(tl__fold *l) {
  free(l->text);
  memset(l, 0, sizeof *l);
}
