/* by_section.c: on a --by page, the section on what each group holds (how
 * its values are made, its sessions, labels, hosts and the exact values
 * recorded) and the "Read with care" notes on what differs inside a group;
 * on a host's page, the host's facts as --by groups them. Which session
 * falls in which group is group.c's. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"

/* ======================================================================== */
/* On the page: what the groups hold                                        */

/* The distinct values, "a, b, c", of what(c, session) over the sessions of
 * each label, in the order they first appear: text[l] (cut at len, the
 * values past it still counted in count[l]). One pass through the sessions
 * with a hash set of each label's values seen: asking label by label, each
 * session against those before it, grows with labels x sessions x hosts. */
typedef const char *(*session_text)(const tl_comparison *c, size_t i, const void *arg);

typedef struct {
  size_t label;
  char *value;
  uint64_t hash;
} seen_value;

typedef struct {
  seen_value *slot;
  size_t cap, used;
} seen_set;

static uint64_t value_hash(size_t label, const char *v) {
  return tl_hash_bytes(label, v, strlen(v));
}

/* The slot of (label, v): where it is, or the empty one it would take. */
static seen_value *seen_slot(seen_set *s, size_t label, const char *v, uint64_t h) {
  for (size_t at = (size_t)h & (s->cap - 1);; at = (at + 1) & (s->cap - 1)) {
    seen_value *e = &s->slot[at];
    if (!e->value || (e->hash == h && e->label == label && strcmp(e->value, v) == 0))
      return e;
  }
}

/* Adds (label, v), doubling the table past half full. TL_OK or TL_ENOMEM. */
static int seen_add(seen_set *s, size_t label, const char *v) {
  if (2 * (s->used + 1) > s->cap) {
    seen_set grown = {calloc(s->cap * 2, sizeof *grown.slot), s->cap * 2, s->used};
    if (!grown.slot)
      return TL_ENOMEM;
    for (size_t i = 0; i < s->cap; i++)
      if (s->slot[i].value)
        *seen_slot(&grown, s->slot[i].label, s->slot[i].value, s->slot[i].hash) = s->slot[i];
    free(s->slot);
    *s = grown;
  }
  uint64_t h = value_hash(label, v);
  seen_value *e = seen_slot(s, label, v, h);
  if (e->value)
    return TL_OK;
  if (!(e->value = strdup(v)))
    return TL_ENOMEM;
  e->label = label;
  e->hash = h;
  s->used++;
  return TL_OK;
}

static void seen_free(seen_set *s) {
  for (size_t i = 0; i < s->cap; i++)
    free(s->slot[i].value);
  free(s->slot);
}

/* Each session's label, as the index of the first label of its name in
 * c->labels (label_count for none); the caller frees. NULL when out of
 * memory. */
static size_t *label_of_sessions(const tl_comparison *c) {
  size_t n = c->sessions.count, *label = malloc((n ? n : 1) * sizeof *label);
  for (size_t i = 0; label && i < n; i++)
    label[i] = c->label_count;
  for (size_t l = 0; label && l < c->label_count; l++) {
    size_t count;
    const size_t *at = tl__label_sessions(c, l, &count);
    for (size_t k = 0; k < count; k++)
      if (label[at[k]] == c->label_count) /* a name asked twice: its first */
        label[at[k]] = l;
  }
  return label;
}

enum { VALUES_LEN = 1024 }; /* of each label's text */

typedef struct {
  char (*text)[VALUES_LEN];
  size_t *count;
} label_values;

static void label_values_free(label_values *lv) {
  free(lv->text);
  free(lv->count);
}

/* What distinct_all reads of the sessions, once for all its calls: each
 * session's label (label_of_sessions) and the first session alike
 * (tl__sessions_alike), whose values are its own. */
typedef struct {
  size_t *label, *alike;
  char *cut; /* per session: its last value was cut */
} sessions_read;

static int sessions_read_init(const tl_comparison *c, sessions_read *r) {
  r->label = label_of_sessions(c);
  r->alike = tl__sessions_alike(c);
  r->cut = calloc(c->sessions.count + 1, 1);
  return r->label && r->alike && r->cut ? TL_OK : TL_ENOMEM;
}

static void sessions_read_free(sessions_read *r) {
  free(r->label);
  free(r->alike);
  free(r->cut);
}

/* Fills lv for what over the sessions of every label of c. A session counts
 * a value (cut to TL__BY_NAME_MAX + 15 bytes) unless an earlier session of
 * its label had it whole; a session alike an earlier one whose value was
 * not cut has nothing new. TL_OK or TL_ENOMEM. */
static int distinct_all(const tl_comparison *c, sessions_read *r, session_text what,
                        const void *arg, label_values *lv) {
  size_t nl = c->label_count;
  lv->text = calloc(nl + 1, sizeof *lv->text);
  lv->count = calloc(nl + 1, sizeof *lv->count);
  size_t *label = r->label, *at = calloc(nl + 1, sizeof *at);
  seen_set seen = {calloc(64, sizeof *seen.slot), 64, 0};
  int rc = lv->text && lv->count && at && seen.slot ? TL_OK : TL_ENOMEM;
  for (size_t i = 0; i < c->sessions.count && !rc; i++) {
    size_t l = label[i];
    if (l >= nl || (r->alike[i] != i && !r->cut[r->alike[i]]))
      continue;
    const char *whole = what(c, i, arg); /* may change with the next call */
    char v[TL__BY_NAME_MAX + 16];
    r->cut[i] = (size_t)snprintf(v, sizeof v, "%s", whole) >= sizeof v;
    if (!seen_slot(&seen, l, v, value_hash(l, v))->value) {
      size_t n = ++lv->count[l];
      if (at[l] < VALUES_LEN)
        at[l] +=
            (size_t)snprintf(lv->text[l] + at[l], VALUES_LEN - at[l], "%s%s", n > 1 ? ", " : "", v);
    }
    rc = seen_add(&seen, l, whole);
  }
  /* A label named twice has the values of its first. */
  for (size_t l = 0; l < nl && !rc; l++)
    for (size_t k = 0; !lv->count[l] && k < l; k++)
      if (strcmp(c->labels[k], c->labels[l]) == 0) {
        lv->count[l] = lv->count[k];
        memcpy(lv->text[l], lv->text[k], sizeof lv->text[l]);
        break;
      }
  free(at);
  seen_free(&seen);
  return rc;
}

static const char *own_label(const tl_comparison *c, size_t i, const void *arg) {
  (void)arg;
  return c->details[i].label ? c->details[i].label : c->sessions.items[i].label;
}

static const char *host_name(const tl_comparison *c, size_t i, const void *arg) {
  (void)arg;
  return c->sessions.items[i].hostname;
}

static const char *probe_of(const tl_comparison *c, size_t i, const void *arg) {
  (void)arg;
  return c->sessions.items[i].probe;
}

/* A fact as recorded, and as --by names it (its size class ...); the name
 * lives until the next call. */
static const char *fact_of(const tl_comparison *c, size_t i, const void *arg) {
  static char lim[32];
  const tl_session_detail *d = &c->details[i];
  const char *v = tl_host_key_value(arg, d->facts, d->fact_count, lim, sizeof lim);
  return v && *v ? v : "unknown";
}

static const char *fact_named(const tl_comparison *c, size_t i, const void *arg) {
  static char named[TL__BY_NAME_MAX];
  char lim[32];
  const tl_session_detail *d = &c->details[i];
  tl__by_name(arg, tl_host_key_value(arg, d->facts, d->fact_count, lim, sizeof lim), named,
              sizeof named);
  return named;
}

/* How the values of a key are made, in one sentence. */
static void key_rule(FILE *f, const tl__by *by, size_t i) {
  const tl_host_key *k = by->k[i].key;
  if (!k) {
    fprintf(f, "tag `%s` as recorded with `--tag`", by->k[i].tag);
    return;
  }
  fprintf(f, "%s (fact `%s`)", k->about, k->fact);
  if (k->kind == TL_KEY_BYTES)
    fputs(", the total the host reports rounded up to the next size class of 2^k or "
          "1.5 x 2^k bytes (512M, 768M, 1G, 1.5G, 2G, 3G, 4G ...), so that a machine sold as "
          "1 GB, which reports a little less than 1 GiB, is in 1G; the exact values are in the "
          "table",
          f);
}

int tl__by_heading(const tl_comparison *c, char *id, size_t idlen, char *text, size_t textlen) {
  char title[200];
  if (!c->by_keys)
    return 0;
  tl__by_title(c->by_keys, title, sizeof title);
  snprintf(text, textlen, "By %s", title);
  /* The anchor a Markdown renderer makes of the heading: lower case,
   * spaces as dashes, punctuation dropped (keys are letters, digits, . _ -). */
  size_t at = 0;
  for (const char *q = text; *q && at + 1 < idlen; q++) {
    if (*q == ' ')
      id[at++] = '-';
    else if ((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '-' || *q == '_')
      id[at++] = *q;
    else if (*q >= 'A' && *q <= 'Z')
      id[at++] = (char)(*q - 'A' + 'a');
  }
  id[at] = '\0';
  return 1;
}

/* A host's page: the facts of each host (its newest session) that --by
 * groups on, as recorded and as --by names them. */
static void host_facts(tl__page *p) {
  const tl_comparison *c = p->c;
  size_t nkeys;
  const tl_host_key *keys = tl_host_keys(&nkeys);
  tl__heading(p, "host-facts", "Host facts");
  FILE *f = tl__prose(p);
  fputs("What `tlreport --by KEY` groups this host's sessions by, as its newest session recorded "
        "it, and in brackets the group it falls in:\n\n",
        f);
  /* A line of what was recorded and one of what was not, so that the facts
   * take a few lines even on a phone and the answer follows them closely. */
  for (size_t i = c->sessions.count; i-- > 0;) {
    const tl_session *s = &c->sessions.items[i];
    int newer = 0;
    for (size_t k = i + 1; k < c->sessions.count && !newer; k++)
      newer = strcmp(c->sessions.items[k].host_fingerprint, s->host_fingerprint) == 0;
    if (newer)
      continue;
    size_t said = 0, unknown = 0;
    for (int known = 1; known >= 0; known--) {
      for (size_t k = 0; k < nkeys; k++) {
        int host = keys[k].session_field;
        const char *v = host ? s->hostname : tl__fact(&c->details[i], keys[k].fact);
        if ((v && *v) != known)
          continue;
        if (!known) {
          fputs(unknown++ ? ", " : said ? ".\n\nNot recorded: " : "Not recorded: ", f);
          tl_md_escape(f, keys[k].name);
          continue;
        }
        char lim[32], named[TL__BY_NAME_MAX];
        const char *eff = tl_host_key_of(&keys[k], s->hostname, c->details[i].facts,
                                         c->details[i].fact_count, lim, sizeof lim);
        tl__by_name(&keys[k], eff, named, sizeof named);
        fputs(said++ ? " \xC2\xB7 **" : "**", f);
        tl_md_escape(f, keys[k].name);
        fputs("** ", f);
        tl_md_escape(f, v);
        if (eff != v && eff) { /* a cgroup lowers it: the limit too */
          fputs("; limit ", f);
          tl_md_escape(f, eff);
        }
        if (strcmp(named, v) == 0)
          continue; /* its own group: "hostname db1" */
        fputs(" (", f);
        tl_md_escape(f, named);
        fputc(')', f);
      }
    }
    fputs(said || unknown ? ".\n\n" : "", f);
  }
}

void tl__host_facts_section(tl__page *p) {
  if (p->o->host_facts && !p->c->by)
    host_facts(p);
}

void tl__by_section(tl__page *p) {
  const tl_comparison *c = p->c;
  char title[200], id[256], text[256];
  if (!tl__by_heading(c, id, sizeof id, text, sizeof text))
    return;
  const tl__by by = *c->by_keys;
  tl__by_title(&by, title, sizeof title);
  tl__heading(p, id, text);
  FILE *f = tl__prose(p);
  fputs("Sessions are grouped by ", f);
  for (size_t i = 0; i < by.n; i++) {
    fputs(i ? "; and by " : "", f);
    key_rule(f, &by, i);
  }
  fputs(". A session that did not record it is in its own group, named unknown.\n\n", f);

  /* What each group holds. */
  const char *head[4 + TL_BY_MAX] = {title, "sessions", "labels", "hosts"};
  char heads[TL_BY_MAX][96], align[8] = "lrll";
  size_t cols = 4;
  for (size_t i = 0; i < by.n; i++)
    if (by.k[i].key && by.k[i].key->kind != TL_KEY_TEXT) {
      snprintf(heads[i], sizeof heads[i], "%s recorded%s", by.k[i].key->name,
               by.k[i].key->kind == TL_KEY_BYTES ? " (bytes)" : "");
      head[cols] = heads[i];
      align[cols++] = 'l';
    }
  align[cols] = '\0';
  /* Each column's values for every group at once. */
  label_values labels = {0}, hosts = {0}, facts[TL_BY_MAX] = {{0}};
  sessions_read r;
  int rc = sessions_read_init(c, &r);
  if (!rc)
    rc = distinct_all(c, &r, own_label, NULL, &labels);
  if (!rc)
    rc = distinct_all(c, &r, host_name, NULL, &hosts);
  for (size_t i = 0; i < by.n && !rc; i++)
    if (by.k[i].key && by.k[i].key->kind != TL_KEY_TEXT)
      rc = distinct_all(c, &r, fact_of, by.k[i].key, &facts[i]);
  sessions_read_free(&r);
  tl__table *t = rc ? NULL : tl__table_new(cols, head, align);
  for (size_t l = 0; t && l < c->label_count; l++) {
    tl__table_add(t, c->labels[l]);
    tl__table_addf(t, "%zu", tl__label_session_count(c, l));
    tl__table_add(t, labels.text[l]);
    tl__table_add(t, hosts.text[l]);
    for (size_t i = 0; i < by.n; i++)
      if (by.k[i].key && by.k[i].key->kind != TL_KEY_TEXT)
        tl__table_add(t, facts[i].text[l]);
  }
  if (t)
    tl__put_table(p, t);
  label_values_free(&labels);
  label_values_free(&hosts);
  for (size_t i = 0; i < by.n; i++)
    label_values_free(&facts[i]);
}

int tl__by_confounds(const tl_comparison *c, FILE *f) {
  if (!c->by_keys)
    return 0;
  const tl__by by = *c->by_keys;
  size_t nkeys;
  const tl_host_key *keys = tl_host_keys(&nkeys);
  /* Labels, probes, then every host fact that is not a --by key (hosts:
   * said above, with their fingerprints): each one's values for every group
   * at once. */
  label_values *what = calloc(2 + nkeys, sizeof *what);
  sessions_read r;
  int rc = sessions_read_init(c, &r) || !what ? TL_ENOMEM : TL_OK;
  for (size_t w = 0; w < 2 + nkeys && !rc; w++) {
    const tl_host_key *k = w >= 2 ? &keys[w - 2] : NULL;
    int used = 0;
    for (size_t i = 0; k && i < by.n; i++)
      used |= by.k[i].key == k;
    if (used || (k && k->session_field))
      continue;
    rc = distinct_all(c, &r, w == 0 ? own_label : w == 1 ? probe_of : fact_named, k, &what[w]);
  }
  sessions_read_free(&r);
  int any = 0;
  for (size_t l = 0; l < c->label_count && !rc; l++) {
    int opened = 0;
    for (size_t w = 0; w < 2 + nkeys; w++) {
      const tl_host_key *k = w >= 2 ? &keys[w - 2] : NULL;
      if (!what[w].count || what[w].count[l] < 2)
        continue;
      if (!opened) {
        fputs("- Inside **", f);
        tl_md_escape(f, c->labels[l]);
        fputs("** differ: ", f);
      }
      fprintf(f, "%s%s ", opened ? "; " : "", w == 0 ? "labels" : w == 1 ? "probes" : k->name);
      tl_md_escape(f, what[w].text[l]);
      opened = any = 1;
    }
    if (opened)
      fputs(".\n", f);
  }
  for (size_t w = 0; what && w < 2 + nkeys; w++)
    label_values_free(&what[w]);
  free(what);
  return any;
}
