/* by_answer.c: what a --by page answers first. Grouping by memory asks "how
 * does the tail change as memory grows?", not "which group is the least
 * late?", so the answer box of a --by page says, before the ranking of the
 * groups:
 *
 * 1. What else changes with the key across the groups: CPUs that rise with
 *    memory, a kernel or a label of its own for each value. A trend is then
 *    as much that fact's as the key's, and the page says so before anything
 *    else; where hosts share the other fact, it gives the trend among them
 *    alone (memory within cpus=1). Crossed keys (--by memory,cpus) read the
 *    same way: the numeric key within each value of the other.
 * 2. For a numeric key, the direction and strength of the change at p90 and
 *    at p99: Spearman's rank correlation between the key's value and each
 *    session's own lateness, with its 95% interval. Sessions are the unit of
 *    evidence, not samples: what another session of the same host would
 *    differ by (load, neighbours, time of day) is the larger uncertainty, and
 *    thousands of samples of one session say nothing about it. Where several
 *    hosts share a value, each host counts once (the median of its
 *    sessions), so that a host measured a hundred times is not a hundred
 *    hosts.
 * 3. Each group's p90 and p99 lateness in key order with their intervals
 *    (the values of the tables), and in HTML their chart.
 *
 * The checks of (1) are one table (traits below): a fact is named when the
 * groups do not all hold the same values of it. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"

/* ======================================================================== */
/* The key and the sessions                                                  */

/* Sessions alike (tl__sessions_alike): one of them, and how many. What
 * the answer asks of every session it asks once of each unit, which a
 * fleet's hundreds of thousands of sessions share among a few hundred. */
typedef struct {
  size_t first, count;
} unit;

/* What the answer knows of the comparison's sessions. */
typedef struct {
  const tl_comparison *c;
  tl__by by;
  int axis;      /* the numeric key the tail is ranked against, or -1 */
  size_t *group; /* each session's group: its index in c->labels */
  char *known;   /* per group: every key of it recorded (not an "unknown" group) */
  unit *units;   /* in the order of their first sessions */
  size_t unit_count;
  size_t *unit_of; /* each session's unit */
} answer;

static void answer_free(answer *a) {
  free(a->group);
  free(a->known);
  free(a->units);
  free(a->unit_of);
}

/* The units of c's sessions, each session's unit and group; TL_ENOMEM. */
static int units_of(const tl_comparison *c, answer *a) {
  size_t *alike = tl__sessions_alike(c);
  a->units = malloc((c->sessions.count + 1) * sizeof *a->units);
  a->unit_of = malloc((c->sessions.count + 1) * sizeof *a->unit_of);
  for (size_t i = 0; alike && a->units && a->unit_of && i < c->sessions.count; i++) {
    if (alike[i] != i) {
      a->unit_of[i] = a->unit_of[alike[i]];
      a->units[a->unit_of[i]].count++;
      a->group[i] = a->group[alike[i]];
      continue;
    }
    a->unit_of[i] = a->unit_count;
    a->units[a->unit_count++] = (unit){i, 1};
    size_t l = 0;
    while (l < c->label_count && strcmp(c->labels[l], c->sessions.items[i].label) != 0)
      l++;
    a->group[i] = l;
  }
  int rc = alike && a->units && a->unit_of ? TL_OK : TL_ENOMEM;
  free(alike);
  return rc;
}

/* 1 when ready (answer_free frees it), 0 when c is not --by, or TL_ENOMEM. */
static int answer_init(const tl_comparison *c, answer *a) {
  memset(a, 0, sizeof *a);
  if (!c->by_keys)
    return 0;
  a->by = *c->by_keys;
  a->c = c;
  a->axis = tl__by_numeric_axis(&a->by);
  a->group = calloc(c->sessions.count + 1, sizeof *a->group);
  a->known = calloc(c->label_count + 1, 1);
  if (!a->group || !a->known) {
    answer_free(a);
    return TL_ENOMEM;
  }
  if (units_of(c, a)) {
    answer_free(a);
    return TL_ENOMEM;
  }
  for (size_t l = 0; l < c->label_count; l++)
    a->known[l] = 1;
  for (size_t u = 0; u < a->unit_count; u++) {
    size_t i = a->units[u].first, l = a->group[i];
    for (size_t k = 0; k < a->by.n && l < c->label_count; k++) {
      char name[96];
      double num;
      if (!tl__by_part(c, i, a->by.k[k].key, a->by.k[k].tag, name, sizeof name, &num))
        a->known[l] = 0;
    }
  }
  return 1;
}

/* ======================================================================== */
/* What else changes with the key                                            */

/* How a sentence says a trait: "the kernel" as its object, "The kernel"
 * as its subject. */
static void trait_object(const tl__trait *t, int subject, char *buf, size_t len) {
  snprintf(buf, len, "%s%s", t->the ? "the " : "", t->name);
  if (subject && buf[0] >= 'a' && buf[0] <= 'z')
    buf[0] = (char)(buf[0] - 'a' + 'A');
}

/* Something a session has one value of: a trait, or a key of --by. */
typedef struct {
  char name[80]; /* as --by and --fact say it: "cpus", "tag:load", "label" */
  const tl_host_key *k;
  const char *tag; /* a tag's key when k is NULL; both NULL: label or probe */
} aspect;

static aspect aspect_of_trait(const tl__trait *t) {
  aspect s = {"", tl_host_key_find(t->key), NULL};
  snprintf(s.name, sizeof s.name, "%s", t->key);
  return s;
}

/* Session i's value of s as the answer writes it (counts as numbers: "2",
 * not "2 CPUs"), with its number (NAN for text); 0 when not recorded. */
static int value_of(const tl_comparison *c, const aspect *s, size_t i, char *buf, size_t len,
                    double *num) {
  *num = NAN;
  if (!s->k && !s->tag) {
    const char *v = strcmp(s->name, "probe") == 0   ? c->sessions.items[i].probe
                    : strcmp(s->name, "libuv") == 0 ? c->sessions.items[i].libuv_version
                    : c->details[i].label           ? c->details[i].label
                                                    : c->sessions.items[i].label;
    snprintf(buf, len, "%s", v ? v : "");
    return v && *v;
  }
  if (!tl__by_part(c, i, s->k, s->tag, buf, len, num))
    return 0;
  if (s->k && s->k->kind == TL_KEY_COUNT)
    snprintf(buf, len, "%.0f", *num);
  return 1;
}

/* The distinct values of something among a few sessions (a group). */
enum { SET_MAX = 6, VALUE_MAX = 64 };
typedef struct {
  char v[SET_MAX][VALUE_MAX];
  double num[SET_MAX];
  size_t n; /* distinct values; past SET_MAX, more than the ones kept */
} vset;

static int value_cmp(const char *a, double x, const char *b, double y) {
  if (!isnan(x) && !isnan(y))
    return (x > y) - (x < y);
  return strcmp(a, b);
}

/* Adds a value of times sessions, keeping the set in order; past SET_MAX,
 * each session of a value not kept counts once more. */
static void vset_add(vset *s, const char *v, double num, size_t times) {
  size_t at = 0, kept = s->n < SET_MAX ? s->n : SET_MAX;
  while (at < kept && value_cmp(s->v[at], s->num[at], v, num) < 0)
    at++;
  if (at < kept && strcmp(s->v[at], v) == 0)
    return;
  if (kept == SET_MAX) {
    s->n += times;
    return;
  }
  s->n++;
  memmove(s->v[at + 1], s->v[at], (kept - at) * sizeof s->v[0]);
  memmove(&s->num[at + 1], &s->num[at], (kept - at) * sizeof s->num[0]);
  snprintf(s->v[at], sizeof s->v[at], "%s", v);
  s->num[at] = num;
}

static int vset_same(const vset *a, const vset *b) {
  if (a->n != b->n || a->n > SET_MAX)
    return 0;
  for (size_t i = 0; i < a->n; i++)
    if (strcmp(a->v[i], b->v[i]) != 0)
      return 0;
  return 1;
}

/* Appends printf output to buf at *at, never past len. */
static void add(char *buf, size_t len, size_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void add(char *buf, size_t len, size_t *at, const char *fmt, ...) {
  if (*at + 1 >= len)
    return;
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(buf + *at, len - *at, fmt, ap);
  va_end(ap);
  if (k > 0)
    *at += (size_t)k < len - *at ? (size_t)k : len - *at - 1;
}

static void vset_list(const vset *s, char *buf, size_t len, size_t *at) {
  for (size_t i = 0; i < s->n && i < SET_MAX; i++)
    add(buf, len, at, "%s%s", i ? ", " : "", s->v[i]);
  if (s->n > SET_MAX)
    add(buf, len, at, " and %zu more", s->n - SET_MAX);
}

/* How the key is said as what the tail changes with: "memory", "the number
 * of CPUs", "memory and cpus". */
static void key_phrase(const tl__by *by, size_t i, char *buf, size_t len) {
  if (by->k[i].key)
    for (size_t t = 0; t < tl__trait_count; t++)
      if (strcmp(tl__traits[t].key, by->k[i].key->name) == 0) {
        snprintf(buf, len, "%s", tl__traits[t].as_key);
        return;
      }
  if (by->k[i].key)
    snprintf(buf, len, "%s", by->k[i].key->name);
  else
    snprintf(buf, len, "tag %s", by->k[i].tag);
}

static void keys_phrase(const tl__by *by, char *buf, size_t len) {
  if (by->n == 1) {
    key_phrase(by, 0, buf, len);
    return;
  }
  char a[96], b[96];
  key_phrase(by, 0, a, sizeof a);
  key_phrase(by, 1, b, sizeof b);
  snprintf(buf, len, "%s and %s", a, b);
}

/* Each known group's values of s into per (label_count entries). Returns
 * how a fact goes with the groups: 0 the same in every group (or known in
 * fewer than two), 1 one value a group and not the same one everywhere,
 * 2 mixed. *trend: +1 when one numeric value a group rises along the
 * groups, -1 when it falls, else 0. */
static int goes_with(const answer *a, const aspect *s, vset *per, int *trend) {
  const tl_comparison *c = a->c;
  memset(per, 0, c->label_count * sizeof *per);
  for (size_t u = 0; u < a->unit_count; u++) {
    size_t i = a->units[u].first, l = a->group[i];
    char v[VALUE_MAX];
    double num;
    if (l < c->label_count && a->known[l] && value_of(c, s, i, v, sizeof v, &num))
      vset_add(&per[l], v, num, a->units[u].count);
  }
  size_t first = c->label_count, known = 0;
  int differ = 0, single = 1, up = 1, down = 1;
  double last = NAN;
  for (size_t l = 0; l < c->label_count; l++) {
    if (!per[l].n)
      continue;
    known++;
    if (first == c->label_count)
      first = l;
    differ |= !vset_same(&per[first], &per[l]);
    single &= per[l].n == 1;
    double x = per[l].num[0];
    if (!isnan(last)) {
      up &= x >= last;
      down &= x <= last;
    }
    last = x;
  }
  *trend = 0;
  if (known < 2 || !differ)
    return 0;
  if (single && !isnan(last))
    *trend = up ? 1 : down ? -1 : 0;
  return single ? 1 : 2;
}

/* The sentence naming what goes with the key (plain text), with the values
 * of the first LIST_MAX groups. */
enum { LIST_MAX = 12 };
static void confound_sentence(const answer *a, const tl__trait *t, const vset *per, int how,
                              int trend, char *buf, size_t len) {
  const tl_comparison *c = a->c;
  char key[200], subject[96], object[96];
  keys_phrase(&a->by, key, sizeof key);
  trait_object(t, 1, subject, sizeof subject);
  trait_object(t, 0, object, sizeof object);
  int fact = tl_host_key_find(t->key) != NULL;
  size_t at = 0;
  buf[0] = '\0';
  if (how == 1) {
    const char *verb = trend > 0 ? "rise" : trend < 0 ? "fall" : "change";
    add(buf, len, &at, "%s %s%s with %s %s (", subject, verb, t->plural ? "" : "s", key,
        fact ? "on these hosts" : "across the groups");
    size_t said = 0;
    for (size_t l = 0; l < c->label_count; l++)
      if (per[l].n && said++ < LIST_MAX)
        add(buf, len, &at, "%s%s", said > 1 ? ", " : "", per[l].v[0]);
    if (said > LIST_MAX)
      add(buf, len, &at, " and %zu more", said - LIST_MAX);
    add(buf, len, &at, "): %s and %s cannot be told apart here.", a->by.n == 1 ? key : "the groups",
        object);
    return;
  }
  add(buf, len, &at, "%s %s between the groups (", subject, t->plural ? "differ" : "differs");
  size_t said = 0;
  for (size_t l = 0; l < c->label_count; l++) {
    if (!per[l].n || said++ >= LIST_MAX)
      continue;
    add(buf, len, &at, "%s%s: ", said > 1 ? "; " : "", c->labels[l]);
    vset_list(&per[l], buf, len, &at);
  }
  if (said > LIST_MAX)
    add(buf, len, &at, "; and %zu more groups", said - LIST_MAX);
  add(buf, len, &at, "): part of what changes with %s may come from %s.", key, object);
}

/* ======================================================================== */
/* Sentences                                                                 */

/* "gets shorter as memory grows", "no clear change with memory"; NULL when
 * the correlation could not be worked out. */
static const char *direction(const tl__rank_corr *r) {
  if (isnan(r->rho))
    return NULL;
  return r->hi < 0 ? "shorter" : r->lo > 0 ? "longer" : "";
}

static void say_corr(const tl__rank_corr *r, int first, char *buf, size_t len, size_t *at) {
  if (isnan(r->rho))
    add(buf, len, at, "not worked out");
  else
    add(buf, len, at, "%.2f (%s%.2f to %.2f)", r->rho, first ? "95% interval " : "", r->lo, r->hi);
}

/* How the tail changes with key over the units of t (plain text, no final
 * stop): "the tail gets shorter as memory grows: Spearman -0.97 at p90 ...". */
static void trend_phrase(const tl__by_trend *t, const char *key, char *buf, size_t len) {
  size_t at = 0;
  buf[0] = '\0';
  const char *d90 = direction(&t->r[0]), *d99 = direction(&t->r[1]);
  if (!d90 && !d99) {
    add(buf, len, &at, "too few sessions to tell how the tail changes with %s (%zu on %zu value%s)",
        key, t->sessions, t->values, t->values == 1 ? "" : "s");
    return;
  }
  if (d90 && d99 && strcmp(d90, d99) == 0) {
    if (*d90)
      add(buf, len, &at, "the tail gets %s as %s grows: Spearman ", d90, key);
    else
      add(buf, len, &at, "no clear change of the tail with %s: Spearman ", key);
    say_corr(&t->r[0], 1, buf, len, &at);
    add(buf, len, &at, " at p90 and ");
    say_corr(&t->r[1], 0, buf, len, &at);
    add(buf, len, &at, " at p99");
  } else {
    for (size_t w = 0; w < 2; w++) {
      const char *d = w ? d99 : d90;
      add(buf, len, &at, "%sat p%.0f ", w ? "; " : "", tl__by_trend_pcts[w]);
      if (!d)
        add(buf, len, &at, "too few sessions to tell");
      else if (*d)
        add(buf, len, &at, "the tail gets %s as %s grows", d, key);
      else
        add(buf, len, &at, "no clear change");
      if (d) {
        add(buf, len, &at, " (Spearman ");
        say_corr(&t->r[w], 1, buf, len, &at);
        add(buf, len, &at, ")");
      }
    }
  }
  if (t->by_host)
    add(buf, len, &at,
        ", over %zu hosts on %zu values (each host counted once, by the median of its sessions; "
        "%zu sessions in all)",
        t->units, t->values, t->sessions);
  else
    add(buf, len, &at, ", over %zu sessions on %zu values%s", t->units, t->values,
        t->one_host_each ? ", one host each" : "");
}

/* ======================================================================== */
/* On the page                                                               */

/* The trend of the axis within each value of s (hosts that share it), as
 * sub-bullets; only values held by at least two of the key's values. */
static int within(tl__page *p, const answer *a, const tl_group *g0, const tl__trend_rows *rows,
                  const aspect *s, unsigned char *in) {
  const tl_comparison *c = p->c;
  vset all;
  memset(&all, 0, sizeof all);
  for (size_t u = 0; u < a->unit_count; u++) {
    size_t i = a->units[u].first;
    char v[VALUE_MAX];
    double num;
    if (a->group[i] < c->label_count && a->known[a->group[i]] &&
        value_of(c, s, i, v, sizeof v, &num))
      vset_add(&all, v, num, a->units[u].count);
  }
  unsigned char *unit_in = malloc(a->unit_count + 1);
  if (!unit_in)
    return TL_ENOMEM;
  char key[96];
  key_phrase(&a->by, (size_t)a->axis, key, sizeof key);
  aspect axis = {"", a->by.k[a->axis].key, NULL};
  int rc = TL_OK;
  for (size_t w = 0; w < all.n && w < SET_MAX && !rc; w++) {
    for (size_t u = 0; u < a->unit_count; u++) {
      size_t i = a->units[u].first;
      char v[VALUE_MAX];
      double num;
      unit_in[u] = a->group[i] < c->label_count && a->known[a->group[i]] &&
                   value_of(c, s, i, v, sizeof v, &num) && strcmp(v, all.v[w]) == 0;
    }
    for (size_t i = 0; i < c->sessions.count; i++)
      in[i] = unit_in[a->unit_of[i]];
    tl__by_trend t;
    if ((rc = tl__by_trend_in(rows, in, &t)))
      break;
    if (t.values < 2)
      continue;
    /* The key's values among them, in order. */
    char text[2048], groups[1024];
    size_t at = 0;
    vset axis_values;
    memset(&axis_values, 0, sizeof axis_values);
    for (size_t u = 0; u < a->unit_count; u++) {
      size_t i = a->units[u].first;
      char v[VALUE_MAX];
      double num;
      if (in[i] && strcmp(c->sessions.items[i].probe, g0->probe) == 0 &&
          c->sessions.items[i].delay_ns == g0->delay_ns && value_of(c, &axis, i, v, sizeof v, &num))
        vset_add(&axis_values, v, num, a->units[u].count);
    }
    groups[0] = '\0';
    vset_list(&axis_values, groups, sizeof groups, &at);
    trend_phrase(&t, key, text, sizeof text);
    FILE *f = tl__prose(p);
    fputs("  - Within ", f);
    tl_md_escape(f, s->name);
    fputc('=', f);
    tl_md_escape(f, all.v[w]);
    fputs(" (", f);
    tl_md_escape(f, groups);
    fputs("): ", f);
    tl_md_escape(f, text);
    fputs(".\n", f);
  }
  free(unit_in);
  return rc;
}

/* Each group's p90 and p99 lateness for g0's probe and delay, in key order,
 * with the sessions and hosts behind it. */
static void lateness_table(tl__page *p, const tl_group *g0, const char *title) {
  const tl_comparison *c = p->c;
  const tl_stats *st = tl__page_stats(p);
  const char *head[5] = {title, "sessions", "hosts", "p90 lateness (ms)", "p99 lateness (ms)"};
  tl__table *t = tl__table_new(5, head, "lrrrr");
  int64_t armed = tl_probe_armed_ns(g0->probe, g0->delay_ns);
  size_t *first_host = tl__sessions_first(c, TL__SAME_HOST);
  /* A host's first session may be of another delay: its hosts are the
   * distinct first sessions among the group's own. */
  unsigned char *seen = calloc(c->sessions.count + 1, 1);
  if (!first_host || !seen) {
    tl__table_free(t);
    t = NULL;
  }
  for (size_t l = 0; t && l < c->label_count; l++) {
    const tl_group *h = tl__find_group(c, c->labels[l], g0->probe, g0->delay_ns);
    if (!h || !h->dist.count)
      continue;
    size_t hosts = 0;
    for (size_t s = 0; s < h->session_count; s++) {
      size_t at = first_host[h->session_at[s]];
      hosts += !seen[at];
      seen[at] = 1;
    }
    for (size_t s = 0; s < h->session_count; s++)
      seen[first_host[h->session_at[s]]] = 0;
    tl__table_add(t, h->label);
    tl__table_addf(t, "%zu", h->session_count);
    tl__table_addf(t, "%zu", hosts);
    for (size_t w = 0; w < 2; w++) {
      int k = tl__pct_index(&h->dist, tl__by_trend_pcts[w]);
      if (k < 0) {
        tl__table_add(t, "-");
        continue;
      }
      double v = (double)(h->dist.pct_ns[k] - armed) / 1e6;
      const tl_pct_stats *ps = st ? &st->groups[h - c->groups].pct[k] : NULL;
      if (ps && ps->lo_ns >= 0 && ps->hi_ns >= 0)
        tl__table_addf(t, "%.3f (%.3f to %.3f)", v, (double)(ps->lo_ns - armed) / 1e6,
                       (double)(ps->hi_ns - armed) / 1e6);
      else
        tl__table_addf(t, "%.3f", v);
    }
  }
  free(first_host);
  free(seen);
  tl__put_table(p, t);
}

/* " At p90, 4.71 ms late at 512M and 572.5 µs at 4G." for g0's probe and
 * delay: the smallest and the largest value (the values of the table), or
 * "" when there are not two. */
static void ends_of_axis(const tl_comparison *c, const tl_group *g0, char *buf, size_t len) {
  const tl_group *end[2] = {NULL, NULL};
  double x[2] = {0, 0};
  buf[0] = '\0';
  for (size_t l = 0; c->label_x && l < c->label_count; l++) {
    const tl_group *g = tl__find_group(c, c->labels[l], g0->probe, g0->delay_ns);
    double v = c->label_x[l];
    if (!g || !g->dist.count || isnan(v) || tl__pct_index(&g->dist, 90) < 0)
      continue;
    for (size_t e = 0; e < 2; e++) /* --compare may list the values in any order */
      if (!end[e] || (e ? v > x[e] : v < x[e]))
        end[e] = g, x[e] = v;
  }
  if (!end[1] || end[0] == end[1])
    return;
  char v[2][48];
  int64_t armed = tl_probe_armed_ns(g0->probe, g0->delay_ns);
  for (size_t e = 0; e < 2; e++)
    tl__say_time((double)(end[e]->dist.pct_ns[tl__pct_index(&end[e]->dist, 90)] - armed), v[e],
                 sizeof v[e]);
  snprintf(buf, len, " At p90, %s late at %s and %s at %s.", v[0], end[0]->label, v[1],
           end[1]->label);
}

/* What goes with the key, as bold bullets (*said of them); the aspects
 * whose hosts the trend can be shown within go to out (up to max). */
static size_t confound_bullets(tl__page *p, const answer *a, aspect *out, size_t max,
                               size_t *said) {
  const tl_comparison *c = p->c;
  vset *per = calloc(c->label_count + 1, sizeof *per);
  size_t n = 0;
  *said = 0;
  if (!per) {
    p->failed = TL_ENOMEM;
    return 0;
  }
  for (size_t t = 0; t < tl__trait_count; t++) {
    aspect s = aspect_of_trait(&tl__traits[t]);
    int used = 0, trend;
    for (size_t k = 0; k < a->by.n; k++)
      used |= s.k && a->by.k[k].key == s.k;
    int how = used ? 0 : goes_with(a, &s, per, &trend);
    if (!how)
      continue;
    char text[2048];
    confound_sentence(a, &tl__traits[t], per, how, trend, text, sizeof text);
    FILE *f = tl__prose(p);
    fputs("- **", f);
    tl_md_escape(f, text);
    fputs("**\n", f);
    ++*said;
    if (s.k && n < max)
      out[n++] = s;
  }
  free(per);
  return n;
}

void tl__by_answer(tl__page *p) {
  const tl_comparison *c = p->c;
  answer a;
  int rc = answer_init(c, &a);
  if (rc <= 0) {
    if (rc)
      p->failed = rc;
    return;
  }
  size_t *blk = calloc(c->group_count + 1, sizeof *blk);
  unsigned char *in = calloc(c->sessions.count + 1, 1);
  if (!blk || !in) {
    p->failed = TL_ENOMEM;
    goto done;
  }
  char title[200], key[200];
  tl__by_title(&a.by, title, sizeof title);
  keys_phrase(&a.by, key, sizeof key);
  FILE *f = tl__prose(p);
  fputs("How the tail changes with ", f);
  tl_md_escape(f, key);
  fputs(a.axis >= 0 ? ", each session (or host) counted once:\n\n" : ":\n\n", f);
  aspect strata[2 + TL_BY_MAX];
  size_t said, ns = confound_bullets(p, &a, strata, 2, &said);
  if (said && a.axis < 0)
    fputc('\n', tl__prose(p)); /* the list ends here: no trend follows */
  /* Crossed keys: the numeric one within each value of the other. */
  if (a.axis >= 0 && a.by.n == 2) {
    size_t other = 1 - (size_t)a.axis;
    aspect *s = &strata[0];
    s->k = a.by.k[other].key;
    s->tag = a.by.k[other].tag;
    if (s->k)
      snprintf(s->name, sizeof s->name, "%s", s->k->name);
    else
      snprintf(s->name, sizeof s->name, "tag:%s", s->tag);
    ns = 1;
  }
  size_t nb = tl__delays_of(c, blk);
  for (size_t b = 0; b < nb && !p->failed; b++) {
    const tl_group *g0 = &c->groups[blk[b]];
    char call[96], text[2048];
    tl__call_name(g0->probe, g0->delay_ns, call, sizeof call);
    if (a.axis >= 0) {
      /* The trend's sessions, read once for it and its strata. */
      tl__trend_rows *rows;
      if (tl__trend_rows_of(c, g0->probe, g0->delay_ns, &rows)) {
        p->failed = TL_ENOMEM;
        break;
      }
      f = tl__prose(p);
      fputs("- ", f);
      tl_md_escape(f, call);
      if (a.by.n == 1) {
        tl__by_trend t;
        if (tl__by_trend_in(rows, NULL, &t)) {
          tl__trend_rows_free(rows);
          p->failed = TL_ENOMEM;
          break;
        }
        trend_phrase(&t, key, text, sizeof text);
        fputs(": ", f);
        tl_md_escape(f, text);
        fputs(".", f);
        ends_of_axis(c, g0, text, sizeof text);
        tl_md_escape(f, text);
        fputc('\n', f);
      } else {
        fputs(":\n", f);
      }
      for (size_t s = 0; s < ns && !p->failed; s++)
        if (within(p, &a, g0, rows, &strata[s], in))
          p->failed = TL_ENOMEM;
      tl__trend_rows_free(rows);
      fputc('\n', tl__prose(p));
    }
    f = tl__prose(p);
    fputs("Lateness by ", f);
    tl_md_escape(f, title);
    fputs(", ", f);
    tl_md_escape(f, call);
    fputs(" (95% intervals):\n\n", f);
    lateness_table(p, g0, title);
    if (p->o->format == TL_FORMAT_HTML && c->label_x) {
      tl__prose_flush(p);
      tl__svg_by_trend(p, g0->probe, g0->delay_ns);
    }
  }
  fputs("Each group against the others, as labels are compared:\n\n", tl__prose(p));
done:
  free(blk);
  free(in);
  answer_free(&a);
}

/* ======================================================================== */
/* JSON                                                                      */

static void json_corr(FILE *o, const tl__rank_corr *r) {
  if (isnan(r->rho))
    fputs("{\"spearman\": null, \"ci95\": null}", o);
  else
    fprintf(o, "{\"spearman\": %.4f, \"ci95\": [%.4f, %.4f]}", r->rho, r->lo, r->hi);
}

void tl__by_json(FILE *o, const tl_comparison *c) {
  answer a;
  if (answer_init(c, &a) <= 0)
    return;
  size_t *blk = calloc(c->group_count + 1, sizeof *blk);
  vset *per = calloc(c->label_count + 1, sizeof *per);
  if (!blk || !per)
    goto done;
  if (a.axis >= 0 && a.by.n == 1) {
    char key[200];
    keys_phrase(&a.by, key, sizeof key);
    fputs(",\n \"by_trend\": [", o);
    size_t nb = tl__delays_of(c, blk);
    for (size_t b = 0; b < nb; b++) {
      const tl_group *g = &c->groups[blk[b]];
      tl__by_trend t;
      if (tl__by_trend_of(c, g->probe, g->delay_ns, NULL, &t))
        break;
      char sentence[2048];
      trend_phrase(&t, key, sentence, sizeof sentence);
      fputs(b ? ",\n  {" : "\n  {", o);
      fputs("\"probe\": ", o);
      tl_fput_json(o, g->probe);
      fprintf(o,
              ", \"delay_ns\": %lld, \"sessions\": %zu, \"unit\": \"%s\", \"units\": %zu, "
              "\"values\": %zu,\n   \"p90\": ",
              (long long)g->delay_ns, t.sessions, t.by_host ? "host" : "session", t.units,
              t.values);
      json_corr(o, &t.r[0]);
      fputs(", \"p99\": ", o);
      json_corr(o, &t.r[1]);
      fputs(",\n   \"sentence\": ", o);
      tl_fput_json(o, sentence);
      fputc('}', o);
    }
    fputc(']', o);
  }
  fputs(",\n \"by_confounds\": [", o);
  size_t said = 0;
  for (size_t t = 0; t < tl__trait_count; t++) {
    aspect s = aspect_of_trait(&tl__traits[t]);
    int used = 0, trend;
    for (size_t k = 0; k < a.by.n; k++)
      used |= s.k && a.by.k[k].key == s.k;
    int how = used ? 0 : goes_with(&a, &s, per, &trend);
    if (!how)
      continue;
    char text[2048];
    confound_sentence(&a, &tl__traits[t], per, how, trend, text, sizeof text);
    fputs(said++ ? ",\n  {" : "\n  {", o);
    fputs("\"fact\": ", o);
    tl_fput_json(o, tl__traits[t].key);
    fputs(", \"sentence\": ", o);
    tl_fput_json(o, text);
    fputc('}', o);
  }
  fputc(']', o);
done:
  free(blk);
  free(per);
  answer_free(&a);
}
