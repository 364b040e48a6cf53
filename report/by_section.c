/* by_section.c: on a --by page, the section on what each group holds (how
 * its values are made, its sessions, labels, hosts and the exact values
 * recorded) and the "Read with care" notes on what differs inside a group;
 * on a host's page, the host's facts as --by groups them. Which session
 * falls in which group is group.c's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"

/* ======================================================================== */
/* On the page: what the groups hold                                        */

/* The distinct values, "a, b, c", of what(c, session) over the sessions of
 * label into buf; returns how many (values past the buffer still count). */
typedef const char *(*session_text)(const tl_comparison *c, size_t i, const void *arg);

static size_t distinct(const tl_comparison *c, const char *label, session_text what,
                       const void *arg, char *buf, size_t len) {
  size_t n = 0, at = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < c->sessions.count; i++) {
    if (strcmp(c->sessions.items[i].label, label) != 0)
      continue;
    char v[TL__BY_NAME_MAX + 16];
    snprintf(v, sizeof v, "%s", what(c, i, arg));
    int seen = 0;
    for (size_t k = 0; k < i && !seen; k++)
      seen = strcmp(c->sessions.items[k].label, label) == 0 && strcmp(what(c, k, arg), v) == 0;
    if (seen)
      continue;
    n++;
    if (at < len)
      at += (size_t)snprintf(buf + at, len - at, "%s%s", n > 1 ? ", " : "", v);
  }
  return n;
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
  char title[200], buf[1024], id[256], text[256];
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
  tl__table *t = tl__table_new(cols, head, align);
  for (size_t l = 0; t && l < c->label_count; l++) {
    size_t n = 0;
    for (size_t i = 0; i < c->sessions.count; i++)
      n += strcmp(c->sessions.items[i].label, c->labels[l]) == 0;
    tl__table_add(t, c->labels[l]);
    tl__table_addf(t, "%zu", n);
    distinct(c, c->labels[l], own_label, NULL, buf, sizeof buf);
    tl__table_add(t, buf);
    distinct(c, c->labels[l], host_name, NULL, buf, sizeof buf);
    tl__table_add(t, buf);
    for (size_t i = 0; i < by.n; i++)
      if (by.k[i].key && by.k[i].key->kind != TL_KEY_TEXT) {
        distinct(c, c->labels[l], fact_of, by.k[i].key, buf, sizeof buf);
        tl__table_add(t, buf);
      }
  }
  tl__put_table(p, t);
}

int tl__by_confounds(const tl_comparison *c, FILE *f) {
  char buf[1024];
  if (!c->by_keys)
    return 0;
  const tl__by by = *c->by_keys;
  size_t nkeys;
  const tl_host_key *keys = tl_host_keys(&nkeys);
  int any = 0;
  for (size_t l = 0; l < c->label_count; l++) {
    int opened = 0;
    /* Labels, probes, then every host fact that is not a --by key. */
    for (size_t w = 0; w < 2 + nkeys; w++) {
      const tl_host_key *k = w >= 2 ? &keys[w - 2] : NULL;
      int used = 0;
      for (size_t i = 0; k && i < by.n; i++)
        used |= by.k[i].key == k;
      if (used || (k && k->session_field))
        continue; /* hosts: said above, with their fingerprints */
      size_t n = w == 0   ? distinct(c, c->labels[l], own_label, NULL, buf, sizeof buf)
                 : w == 1 ? distinct(c, c->labels[l], probe_of, NULL, buf, sizeof buf)
                          : distinct(c, c->labels[l], fact_named, k, buf, sizeof buf);
      if (n < 2)
        continue;
      if (!opened) {
        fputs("- Inside **", f);
        tl_md_escape(f, c->labels[l]);
        fputs("** differ: ", f);
      }
      fprintf(f, "%s%s ", opened ? "; " : "", w == 0 ? "labels" : w == 1 ? "probes" : k->name);
      tl_md_escape(f, buf);
      opened = any = 1;
    }
    if (opened)
      fputs(".\n", f);
  }
  return any;
}
