/* group.c: comparing by what the machine is (tlreport --by memory, --by
 * cpus, --by tag:load, --by memory,cpus). Each session gets a group name from
 * the host facts or tags it recorded; the comparison then treats the group
 * names exactly as it treats labels, so every part of the page works on
 * groups. This file owns which session falls in which group, how a value is
 * named and ordered, what a value a person types means and the listing of
 * --by help; the page's section on what each group holds is by_section.c's.
 * What a --by
 * page answers first (how the tail changes with the key, and what else
 * changes with it) is by_answer.c's.
 *
 * Names: memory by size class ("512M", "1G", see tl_memory_class), CPUs by
 * count ("2 CPUs"), text as recorded; a session without the fact (or with
 * "unknown", or an unreadable number) is in "KEY unknown", never dropped.
 * Crossed keys join with " / ". Order: numbers by size, text naturally
 * ("5.15" before "6.1"), unknown last. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compute.h"

/* ======================================================================== */
/* Keys                                                                      */

int tl__by_parse(const char *spec, tl__by *by, char *err, size_t errlen) {
  memset(by, 0, sizeof *by);
  if (!spec || !*spec)
    return tl_fail(err, errlen, TL_EINVAL, "empty key");
  if (strlen(spec) > 200)
    return tl_fail(err, errlen, TL_EINVAL, "key list is too long");
  char buf[256];
  snprintf(buf, sizeof buf, "%s", spec);
  char *items[TL_BY_MAX + 1];
  size_t n;
  char why[TL_WHY_MAX];
  if (tl_list_split(buf, items, TL_BY_MAX + 1, &n, why, sizeof why))
    return tl_fail(err, errlen, TL_EINVAL, "%s", why);
  if (n > TL_BY_MAX)
    return tl_fail(err, errlen, TL_EINVAL, "at most two keys (such as memory,cpus)");
  for (size_t i = 0; i < n; i++) {
    if (strncmp(items[i], "tag:", 4) == 0) {
      const char *k = items[i] + 4;
      if (tl_label_check(k, NULL, 0) || strlen(k) > TL_TAG_KEY_MAX)
        return tl_fail(err, errlen, TL_EINVAL, "'%.64s' is not a tag key", k);
      snprintf(by->k[i].tag, sizeof by->k[i].tag, "%s", k);
    } else if (!(by->k[i].key = tl_host_key_find(items[i]))) {
      return tl_fail(err, errlen, TL_ENOTFOUND, "unknown key '%.64s'", items[i]);
    }
    for (size_t j = 0; j < i; j++)
      if (by->k[j].key == by->k[i].key && strcmp(by->k[j].tag, by->k[i].tag) == 0)
        return tl_fail(err, errlen, TL_EINVAL, "'%.64s' given twice", items[i]);
  }
  by->n = n;
  return TL_OK;
}

/* The name of key i: "memory", "tag:load". */
static void key_name(const tl__by *by, size_t i, char *buf, size_t len) {
  if (by->k[i].key)
    snprintf(buf, len, "%s", by->k[i].key->name);
  else
    snprintf(buf, len, "tag:%s", by->k[i].tag);
}

char *tl__by_spec(const tl__by *by) {
  char buf[200];
  size_t at = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < by->n && at < sizeof buf; i++) {
    char k[80];
    key_name(by, i, k, sizeof k);
    at += (size_t)snprintf(buf + at, sizeof buf - at, "%s%s", i ? "," : "", k);
  }
  return strdup(buf);
}

void tl__by_title(const tl__by *by, char *buf, size_t len) {
  size_t at = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < by->n && at < len; i++) {
    char k[80];
    key_name(by, i, k, sizeof k);
    at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? " and " : "", k);
  }
}

/* ======================================================================== */
/* Values                                                                    */

/* One key's value for one session: its name and what it sorts by. */
typedef struct {
  int unknown;
  int64_t num;
  char text[TL__BY_NAME_MAX];
} part;

/* s cut to fit len bytes without splitting a UTF-8 character. */
static void copy_cut(char *dst, size_t len, const char *s) {
  size_t at = 0, n = strlen(s);
  while (at < n) {
    size_t c = tl_utf8_len((const unsigned char *)s + at, n - at);
    if (!c)
      c = 1; /* not UTF-8: kept as a byte, escaped where it is written */
    if (at + c >= len)
      break;
    at += c;
  }
  memcpy(dst, s, at);
  dst[at] = '\0';
}

/* The part of a recorded value v (NULL: not recorded) under key k. */
static void part_of(const tl_host_key *k, const char *v, part *out) {
  memset(out, 0, sizeof *out);
  int64_t n;
  if (!v || !*v || strcmp(v, "unknown") == 0) {
    out->unknown = 1;
  } else if (k && k->kind == TL_KEY_BYTES) {
    if (tl_int_parse(v, 1, INT64_C(1) << 50, &n, NULL, 0))
      out->unknown = 1;
    else
      out->num = tl_memory_class(n, out->text, sizeof out->text);
  } else if (k && k->kind == TL_KEY_COUNT) {
    if (tl_int_parse(v, 0, 1000000000, &n, NULL, 0)) {
      out->unknown = 1;
    } else {
      out->num = n;
      if (k->unit)
        snprintf(out->text, sizeof out->text, "%lld %s%s", (long long)n, k->unit,
                 n == 1 ? "" : "s");
      else
        snprintf(out->text, sizeof out->text, "%lld", (long long)n);
    }
  } else {
    copy_cut(out->text, sizeof out->text, v);
  }
}

static void part_name(const tl__by *by, size_t i, const part *p, char *buf, size_t len) {
  if (!p->unknown) {
    snprintf(buf, len, "%s", p->text);
    return;
  }
  char k[80];
  key_name(by, i, k, sizeof k);
  snprintf(buf, len, "%s unknown", k);
}

/* Natural order of text: runs of digits compare as numbers. */
static int natural_cmp(const char *a, const char *b) {
  while (*a && *b) {
    if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
      while (*a == '0')
        a++;
      while (*b == '0')
        b++;
      size_t na = strspn(a, "0123456789"), nb = strspn(b, "0123456789");
      if (na != nb)
        return na < nb ? -1 : 1;
      int c = strncmp(a, b, na);
      if (c)
        return c;
      a += na, b += nb;
      continue;
    }
    if (*a != *b)
      return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
    a++, b++;
  }
  return *a ? 1 : *b ? -1 : 0;
}

static int part_cmp(const tl__by *by, size_t i, const part *a, const part *b) {
  if (a->unknown || b->unknown)
    return a->unknown - b->unknown;
  const tl_host_key *k = by->k[i].key;
  if (k && k->kind != TL_KEY_TEXT)
    return (a->num > b->num) - (a->num < b->num);
  return natural_cmp(a->text, b->text);
}

/* A group: its parts and its name. */
typedef struct {
  part p[TL_BY_MAX];
  char name[TL_BY_MAX * (TL__BY_NAME_MAX + 16)];
} value;

static void value_name(const tl__by *by, value *v) {
  size_t at = 0;
  for (size_t i = 0; i < by->n; i++) {
    char buf[TL__BY_NAME_MAX + 16];
    part_name(by, i, &v->p[i], buf, sizeof buf);
    at += (size_t)snprintf(v->name + at, sizeof v->name - at, "%s%s", i ? " / " : "", buf);
  }
}

static int value_cmp(const tl__by *by, const value *a, const value *b) {
  for (size_t i = 0; i < by->n; i++) {
    int c = part_cmp(by, i, &a->p[i], &b->p[i]);
    if (c)
      return c;
  }
  return strcmp(a->name, b->name);
}

/* The value of session s (its facts and tags read from the store). */
/* A session's facts and tags, read once for every key asked of it. */
typedef struct {
  tl_fact_row *facts, *tags;
  size_t nf, nt;
} session_rows;

static int rows_read(tl_store *store, const tl_session *s, session_rows *r) {
  memset(r, 0, sizeof *r);
  int rc = tl_store_facts(store, s->id, &r->facts, &r->nf);
  return rc ? rc : tl_store_tags(store, s->id, &r->tags, &r->nt);
}

static void rows_free(session_rows *r) {
  tl_fact_rows_free(r->facts, r->nf);
  tl_fact_rows_free(r->tags, r->nt);
}

/* The value of session s under by. */
static void value_of(const tl__by *by, const tl_session *s, const session_rows *r, value *out) {
  char lim[32];
  for (size_t i = 0; i < by->n; i++) {
    const tl_host_key *k = by->k[i].key;
    const char *v;
    if (!k)
      v = tl_fact_rows_get(r->tags, r->nt, by->k[i].tag);
    else
      v = tl_host_key_of(k, s->hostname, r->facts, r->nf, lim, sizeof lim);
    part_of(k, v, &out->p[i]);
  }
  value_name(by, out);
}

/* ======================================================================== */
/* Grouping a comparison's sessions                                          */

void tl__by_groups_free(tl__by_groups *g) {
  if (!g)
    return;
  tl_strings_free(g->names, g->count);
  free(g->x);
  memset(g, 0, sizeof *g);
}

/* The distinct values of a list's sessions, in the order first seen;
 * each one's name in the list's pool, so that a name is found by its
 * pointer. */
typedef struct {
  value *v;
  char **name;
  size_t n, cap;
} distinct;

/* The place of v, named name (pooled), among d's values, added when new;
 * SIZE_MAX when out of memory. */
static size_t distinct_add(distinct *d, const value *v, char *name) {
  for (size_t k = 0; k < d->n; k++)
    if (d->name[k] == name)
      return k;
  if (d->n == d->cap) {
    size_t cap = d->cap ? d->cap * 2 : 16;
    value *more = realloc(d->v, cap * sizeof *more);
    if (more)
      d->v = more;
    char **names = realloc(d->name, cap * sizeof *names);
    if (names)
      d->name = names;
    if (!more || !names)
      return SIZE_MAX;
    d->cap = cap;
  }
  d->v[d->n] = *v;
  d->name[d->n] = name;
  return d->n++;
}

/* Each session's group name (in the list's pool) to name_of[i], and the
 * distinct values to d: a value a session, kept, cost a fleet's --by page
 * hundreds of bytes a session. */
static int values_of_sessions(const tl__by *by, tl_session_list *list,
                              const tl_session_detail *details, char **name_of, distinct *d) {
  value *cur = malloc(sizeof *cur);
  int rc = cur ? TL_OK : TL_ENOMEM;
  for (size_t i = 0; i < list->count && !rc; i++) {
    const tl_session_detail *x = &details[i];
    session_rows r = {x->facts, x->tags, x->fact_count, x->tag_count};
    value_of(by, &list->items[i], &r, cur);
    if (!rc && (!(name_of[i] = tl_strpool_get(list->strings, cur->name)) ||
                distinct_add(d, cur, name_of[i]) == SIZE_MAX))
      rc = TL_ENOMEM;
  }
  free(cur);
  return rc;
}

int tl__by_assign(const tl__by *by, tl_session_list *list, const tl_session_detail *details,
                  char **orig, tl__by_groups *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  distinct d = {NULL, NULL, 0, 0};
  char **name_of = calloc(list->count + 1, sizeof *name_of);
  int rc = name_of ? values_of_sessions(by, list, details, name_of, &d) : TL_ENOMEM;
  /* The distinct values in order (insertion sort, in the order first seen). */
  size_t n = d.n, *order = calloc(n + 1, sizeof *order);
  if (!rc && !order)
    rc = TL_ENOMEM;
  for (size_t i = 0; i < n && !rc; i++) {
    order[i] = i;
    for (size_t k = i; k > 0 && value_cmp(by, &d.v[order[k - 1]], &d.v[order[k]]) > 0; k--) {
      size_t t = order[k];
      order[k] = order[k - 1];
      order[k - 1] = t;
    }
  }
  if (!rc) {
    out->names = calloc(n + 1, sizeof *out->names);
    out->x = calloc(n + 1, sizeof *out->x);
    if (!out->names || !out->x)
      rc = TL_ENOMEM;
  }
  for (size_t k = 0; k < n && !rc; k++) {
    const value *v = &d.v[order[k]];
    if (!(out->names[k] = strdup(v->name)))
      rc = TL_ENOMEM;
    out->count = k + 1;
    /* A numeric key alone gives each group a place on an axis. */
    int numeric = by->n == 1 && by->k[0].key && by->k[0].key->kind != TL_KEY_TEXT;
    out->x[k] = numeric && !v->p[0].unknown ? (double)v->p[0].num : NAN;
  }
  out->numeric = by->n == 1 && by->k[0].key && by->k[0].key->kind != TL_KEY_TEXT;
  /* Each session's label becomes its group; its own label goes to orig. */
  for (size_t i = 0; i < list->count && !rc; i++) {
    orig[i] = list->items[i].label;
    list->items[i].label = name_of[i];
  }
  free(d.v);
  free(d.name);
  free(name_of);
  free(order);
  if (rc == TL_ENOMEM)
    snprintf(err, errlen, "out of memory");
  if (rc)
    tl__by_groups_free(out);
  return rc;
}

int tl__by_value(const tl__by *by, const tl__by_groups *g, const char *asked, char *buf, size_t len,
                 char *err, size_t errlen) {
  /* A name as the page shows it is taken as it is. */
  for (size_t k = 0; k < g->count; k++)
    if (strcmp(g->names[k], asked) == 0) {
      snprintf(buf, len, "%s", asked);
      return TL_OK;
    }
  /* Otherwise each part as a person types it: 1G, 1024M, 2, unknown. */
  char copy[512];
  snprintf(copy, sizeof copy, "%s", asked);
  value v;
  memset(&v, 0, sizeof v);
  char *rest = copy;
  for (size_t i = 0; i < by->n; i++) {
    char *slash = i + 1 < by->n ? strchr(rest, '/') : NULL;
    if (i + 1 < by->n && !slash)
      break;
    if (slash)
      *slash = '\0';
    while (*rest == ' ')
      rest++;
    size_t n = strlen(rest);
    while (n && rest[n - 1] == ' ')
      rest[--n] = '\0';
    const tl_host_key *k = by->k[i].key;
    char kn[80], unk[96];
    key_name(by, i, kn, sizeof kn);
    snprintf(unk, sizeof unk, "%s unknown", kn);
    if (strcmp(rest, "unknown") == 0 || strcmp(rest, unk) == 0) {
      v.p[i].unknown = 1;
    } else if (k && k->kind == TL_KEY_BYTES) {
      int64_t bytes;
      if (tl_size_parse(rest, &bytes, NULL, 0) == TL_OK)
        part_of(k, (snprintf(kn, sizeof kn, "%lld", (long long)bytes), kn), &v.p[i]);
      else
        v.p[i].unknown = 2; /* no such value */
    } else if (k && k->kind == TL_KEY_COUNT) {
      part_of(k, (snprintf(kn, sizeof kn, "%lld", strtoll(rest, NULL, 10)), kn), &v.p[i]);
      if (strspn(rest, "0123456789") == 0)
        v.p[i].unknown = 2;
    } else {
      part_of(k, rest, &v.p[i]);
    }
    rest = slash ? slash + 1 : rest + strlen(rest);
  }
  int bad = 0;
  for (size_t i = 0; i < by->n; i++)
    bad |= v.p[i].unknown == 2;
  if (!bad) {
    value_name(by, &v);
    for (size_t k = 0; k < g->count; k++)
      if (strcmp(g->names[k], v.name) == 0) {
        snprintf(buf, len, "%s", v.name);
        return TL_OK;
      }
  }
  char title[200];
  tl__by_title(by, title, sizeof title);
  size_t at =
      (size_t)snprintf(err, errlen, "no session has %s '%.64s'; the values are: ", title, asked);
  for (size_t k = 0; k < g->count && at < errlen; k++)
    at += (size_t)snprintf(err + at, errlen - at, "%s%s", k ? ", " : "", g->names[k]);
  return TL_ENOTFOUND;
}

/* ======================================================================== */
/* --by help, and the keys a database has                                    */

/* Sessions per value of every key (each host key, then each tag key the
 * sessions carry): a line per key, values in order with their counts. */
typedef struct {
  char key[80];
  tl__by by;
  value *vals; /* distinct, with counts */
  int64_t *counts;
  size_t n, cap;
  int64_t known;
} key_tally;

static int tally_add(key_tally *t, const value *v) {
  for (size_t i = 0; i < t->n; i++)
    if (strcmp(t->vals[i].name, v->name) == 0) {
      t->counts[i]++;
      return TL_OK;
    }
  if (t->n == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 8;
    value *nv = realloc(t->vals, cap * sizeof *nv);
    if (nv)
      t->vals = nv;
    int64_t *nc = realloc(t->counts, cap * sizeof *nc);
    if (nc)
      t->counts = nc;
    if (!nv || !nc)
      return TL_ENOMEM;
    t->cap = cap;
  }
  t->vals[t->n] = *v;
  t->counts[t->n++] = 1;
  return TL_OK;
}

static void tallies_free(key_tally *t, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(t[i].vals);
    free(t[i].counts);
  }
  free(t);
}

/* The tallies of every key over the sessions matching filter; keys no
 * session knows are counted too (known 0). */
static int tally_keys(tl_store *store, const tl_filter *filter, key_tally **out, size_t *count,
                      int64_t *sessions, char *err, size_t errlen) {
  *out = NULL;
  *count = 0;
  tl_session_list list;
  int rc = tl_store_sessions(store, filter, &list);
  if (rc) {
    snprintf(err, errlen, "%s", tl_store_errmsg(store));
    return rc;
  }
  size_t nkeys;
  const tl_host_key *keys = tl_host_keys(&nkeys);
  size_t cap = nkeys + 16, n = 0;
  key_tally *t = calloc(cap, sizeof *t);
  if (!t)
    rc = TL_ENOMEM;
  for (size_t i = 0; i < nkeys && !rc; i++) {
    t[n].by.n = 1;
    t[n].by.k[0].key = &keys[i];
    snprintf(t[n].key, sizeof t[n].key, "%s", keys[i].name);
    n++;
  }
  for (size_t s = 0; s < list.count && !rc; s++) {
    /* Tag keys appear as the sessions show them. */
    tl_fact_row *tags = NULL;
    size_t nt = 0;
    rc = tl_store_tags(store, list.items[s].id, &tags, &nt);
    for (size_t j = 0; j < nt && !rc; j++) {
      size_t k = nkeys;
      while (k < n && strcmp(t[k].by.k[0].tag, tags[j].key) != 0)
        k++;
      if (k < n || tl_label_check(tags[j].key, NULL, 0) || strlen(tags[j].key) > TL_TAG_KEY_MAX)
        continue;
      if (n == cap) {
        key_tally *nt2 = realloc(t, (cap *= 2) * sizeof *t);
        if (!nt2) {
          rc = TL_ENOMEM;
          break;
        }
        t = nt2;
      }
      memset(&t[n], 0, sizeof t[n]);
      t[n].by.n = 1;
      snprintf(t[n].by.k[0].tag, sizeof t[n].by.k[0].tag, "%s", tags[j].key);
      snprintf(t[n].key, sizeof t[n].key, "tag:%s", tags[j].key);
      n++;
    }
    tl_fact_rows_free(tags, nt);
  }
  for (size_t s = 0; s < list.count && !rc; s++) {
    session_rows r;
    rc = rows_read(store, &list.items[s], &r);
    for (size_t k = 0; k < n && !rc; k++) {
      value v;
      value_of(&t[k].by, &list.items[s], &r, &v);
      t[k].known += !v.p[0].unknown;
      rc = tally_add(&t[k], &v);
    }
    rows_free(&r);
  }
  if (rc)
    tl__store_failed(store, rc, err, errlen);
  *sessions = (int64_t)list.count;
  tl_session_list_free(&list);
  if (rc) {
    tallies_free(t, n);
    return rc;
  }
  /* Values in order: a few per key, insertion sort. */
  for (size_t k = 0; k < n; k++)
    for (size_t i = 1; i < t[k].n; i++)
      for (size_t j = i; j > 0 && value_cmp(&t[k].by, &t[k].vals[j - 1], &t[k].vals[j]) > 0; j--) {
        value tv = t[k].vals[j];
        t[k].vals[j] = t[k].vals[j - 1];
        t[k].vals[j - 1] = tv;
        int64_t tc = t[k].counts[j];
        t[k].counts[j] = t[k].counts[j - 1];
        t[k].counts[j - 1] = tc;
      }
  *out = t;
  *count = n;
  return TL_OK;
}

int tl_by_help(tl_store *store, const tl_filter *filter, FILE *out, char *err, size_t errlen) {
  key_tally *t;
  size_t n;
  int64_t sessions;
  int rc = tally_keys(store, filter, &t, &n, &sessions, err, errlen);
  if (rc)
    return rc;
  fprintf(out, "Keys for tlreport --by, with the sessions of each value (%lld sessions):\n",
          (long long)sessions);
  size_t shown = 0;
  for (size_t k = 0; k < n; k++) {
    if (!t[k].known)
      continue;
    shown++;
    fprintf(out, "  %-13s ", t[k].key);
    for (size_t i = 0; i < t[k].n; i++) {
      fputs(i ? ", " : "", out);
      tl_fput_safe(out, t[k].vals[i].name);
      fprintf(out, ": %lld", (long long)t[k].counts[i]);
    }
    fputc('\n', out);
  }
  if (!shown)
    fputs("  (no session records a host fact or a tag yet)\n", out);
  fputs("Keys no session records:", out);
  size_t none = 0;
  for (size_t k = 0; k < n; k++)
    if (!t[k].known)
      fprintf(out, "%s%s", none++ ? ", " : " ", t[k].key);
  fputs(none ? "\n" : " none\n", out);
  fputs("Cross two keys with a comma (--by memory,cpus); memory is grouped by size class\n"
        "(2^k and 1.5 x 2^k bytes, rounded up), CPUs by count.\n",
        out);
  tallies_free(t, n);
  return TL_OK;
}

/* Sessions read to learn whether a key is recorded: the first the store
 * finds with a value of its facts or tag almost always has it. */
enum { KNOWN_READ_MAX = 8 };

/* Whether some session of filter's knows key i of by, from the few sessions
 * the store finds recording its facts or tag (or any few, for a key of the
 * session's own), read as the comparison reads them: 1 yes; 0 no, or not
 * known for sure (a tag key the tally would not count, a value none of
 * them can be grouped by, a failed read), which the whole tally then says. */
static int key_known(tl_store *store, const tl__by *by, size_t i, const tl_filter *filter) {
  const tl_host_key *k = by->k[i].key;
  if (!k && (tl_label_check(by->k[i].tag, NULL, 0) || strlen(by->k[i].tag) > TL_TAG_KEY_MAX))
    return 0;
  tl_filter f = *filter;
  const char *facts[2];
  f.fact_keys = facts;
  f.fact_key_count = 0;
  f.has_tag = k ? NULL : by->k[i].tag;
  f.limit = KNOWN_READ_MAX;
  if (k && !k->session_field) {
    facts[f.fact_key_count++] = k->fact;
    if (k->limit)
      facts[f.fact_key_count++] = k->limit;
  }
  tl_session_list list;
  if (tl_store_sessions(store, &f, &list))
    return 0;
  tl__by one = {.n = 1};
  one.k[0] = by->k[i];
  int known = 0;
  for (size_t s = 0; s < list.count && !known; s++) {
    session_rows r;
    int rc = rows_read(store, &list.items[s], &r);
    value v;
    if (!rc) {
      value_of(&one, &list.items[s], &r, &v);
      known = !v.p[0].unknown;
    }
    rows_free(&r);
    if (rc)
      break;
  }
  tl_session_list_free(&list);
  return known;
}

/* Whether some session of filter's knows each key of by, without listing
 * every session. */
static int keys_known(tl_store *store, const tl__by *by, const tl_filter *filter) {
  for (size_t i = 0; i < by->n; i++)
    if (!key_known(store, by, i, filter))
      return 0;
  return 1;
}

int tl_by_check(tl_store *store, const char *spec, const tl_filter *filter, char *err,
                size_t errlen) {
  tl__by by;
  int rc = tl__by_parse(spec, &by, err, errlen);
  if (rc && rc != TL_ENOTFOUND)
    return rc;
  if (!rc && keys_known(store, &by, filter))
    return TL_OK;
  /* Every key must be one some session records; otherwise say which keys
   * this database has. */
  char head[160];
  snprintf(head, sizeof head, "%s", err);
  key_tally *t;
  size_t n;
  int64_t sessions;
  if (tally_keys(store, filter, &t, &n, &sessions, err, errlen))
    return TL_EINVAL;
  for (size_t i = 0; !rc && i < by.n; i++) {
    char name[80];
    key_name(&by, i, name, sizeof name);
    size_t k = 0;
    while (k < n && strcmp(t[k].key, name) != 0)
      k++;
    if (k == n || !t[k].known) {
      snprintf(head, sizeof head, "no session (of those the filters select) records %s", name);
      rc = TL_EINVAL;
    }
  }
  if (rc) {
    size_t at = (size_t)snprintf(err, errlen, "%s; the database has: ", head), shown = 0;
    for (size_t k = 0; k < n && at < errlen; k++)
      if (t[k].known)
        at += (size_t)snprintf(err + at, errlen - at, "%s%s", shown++ ? ", " : "", t[k].key);
    if (!shown && at < errlen)
      snprintf(err + at, errlen - at, "no host facts or tags");
  }
  tallies_free(t, n);
  return rc ? TL_EINVAL : TL_OK;
}

void tl__by_name(const tl_host_key *k, const char *v, char *buf, size_t len) {
  part named;
  part_of(k, v, &named);
  snprintf(buf, len, "%s", named.unknown ? "unknown" : named.text);
}

int tl__by_part(const tl_comparison *c, size_t i, const tl_host_key *k, const char *tag, char *name,
                size_t len, double *num) {
  char lim[32];
  const tl_session_detail *d = &c->details[i];
  const char *v = !k ? tl__tag(d, tag)
                     : tl_host_key_of(k, c->sessions.items[i].hostname, d->facts, d->fact_count,
                                      lim, sizeof lim);
  part named;
  part_of(k, v, &named);
  snprintf(name, len, "%s", named.unknown ? "" : named.text);
  *num = named.unknown || !k || k->kind == TL_KEY_TEXT ? NAN : (double)named.num;
  return !named.unknown;
}

/* The first numeric key of by, or -1. */
int tl__by_numeric_axis(const tl__by *by) {
  for (size_t i = 0; i < by->n; i++)
    if (by->k[i].key && by->k[i].key->kind != TL_KEY_TEXT)
      return (int)i;
  return -1;
}
