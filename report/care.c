/* care.c: "Read with care", everything that could make a comparison
 * unfair, as one table of checks (checks[], at the end of the file). Each
 * check writes its bullets and says whether it found anything; the quiet
 * ones say what they looked at, and the "Nothing found" sentence is made of
 * those, so the list and the sentence cannot drift apart.
 *
 * The facts a comparison can differ in are one table too (tl__traits),
 * shared with the --by answer (by_answer.c): here each is compared within
 * and between labels; there, along the groups of the key. On a --by page,
 * the answer names what changes between groups and tl__by_confounds what
 * differs inside one, so the checks here leave those to them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"

/* ======================================================================== */
/* The facts                                                                 */

const tl__trait tl__traits[] = {
    /* key, name, the, plural, as a key, in "Nothing found" */
    {"cpus", "CPUs", 0, 1, "the number of CPUs", NULL},
    {"memory", "memory", 0, 0, "memory", NULL},
    {"vm", "hypervisor", 1, 0, "the hypervisor", NULL},
    {"cloud", "cloud", 1, 0, "the cloud", NULL},
    {"kernel", "kernel", 1, 0, "the kernel release", "kernel"},
    {"clocksource", "clocksource", 1, 0, "the clocksource", "clocksource"},
    {"label", "label", 1, 0, "the label", NULL},
    {"probe", "probe", 1, 0, "the probe", NULL},
    {"container", "container runtime", 1, 0, "the container runtime", NULL},
    {"os", "operating system", 1, 0, "the operating system", NULL},
    {"arch", "architecture", 1, 0, "the architecture", NULL},
    {"cpu", "processor model", 1, 0, "the processor model", NULL},
    {"governor", "CPU frequency governor", 1, 0, "the CPU frequency governor", "governor"},
    {"preempt", "kernel preemption model", 1, 0, "the kernel preemption model", "preemption model"},
    {"hz", "kernel's timer frequency", 1, 0, "the kernel's timer frequency", NULL},
    {"libuv", "libuv version", 1, 0, "the libuv version", "libuv version"},
};
const size_t tl__trait_count = sizeof tl__traits / sizeof tl__traits[0];

/* What is compared within and between labels: a trait, or a tag. */
typedef struct {
  const tl__trait *t; /* NULL for a tag */
  const char *tag;
  char name[96];    /* "kernel", "tag load" */
  int libuv;        /* t is the session's libuv version */
  const char *host; /* else the host fact that holds t, or NULL */
} fact;

/* Trait k as a fact, its host fact looked up once: its value is asked of
 * every session. */
static fact trait_fact(size_t k) {
  fact f = {&tl__traits[k], NULL, "", strcmp(tl__traits[k].key, "libuv") == 0, NULL};
  const tl_host_key *hk = f.libuv ? NULL : tl_host_key_find(f.t->key);
  f.host = hk ? hk->fact : NULL;
  return f;
}

/* The value of f for session i, or NULL when unknown (a missing tag is
 * "(none)": not tagging is a difference too). */
static const char *fact_value(const tl_comparison *c, size_t i, const fact *f) {
  const tl_session_detail *d = &c->details[i];
  if (!f->t) {
    const char *v = tl__tag(d, f->tag);
    return v ? v : "(none)";
  }
  if (f->libuv)
    return c->sessions.items[i].libuv_version;
  const char *v = f->host ? tl__fact(d, f->host) : NULL;
  return v && strcmp(v, "unknown") != 0 ? v : NULL;
}

typedef struct {
  const tl_comparison *c;
  const size_t *at; /* the sessions asked about */
  const fact *f;
} fact_ctx;

/* f's value for the i-th session asked about as a key: NULL for one that
 * does not know it. */
static const char *fact_key(const void *ctx, size_t i, int part) {
  const fact_ctx *x = ctx;
  (void)part;
  return fact_value(x->c, x->at[i], x->f);
}

/* The sessions whose facts are asked: of each label, and of all of them,
 * only the first of sessions alike (tl__sessions_alike: the same facts,
 * tags and libuv version, as pooled strings), in the list's order. A value
 * first held by session i is first held by the first session alike it, so
 * the values come in the same order; a fleet's 288,000 sessions are a few
 * hundred such, and each fact of the page asked of every session was a
 * pass over all of them. Label l's are at[start[l]] up to at[start[l + 1]],
 * all of them at[start[label_count]]... */
typedef struct {
  size_t *at, *start;
} fact_sessions;

static void fact_sessions_free(fact_sessions *x) {
  free(x->at);
  free(x->start);
}

static int fact_sessions_make(fact_sessions *x, const tl_comparison *c) {
  size_t ns = c->sessions.count, nl = c->label_count, n = 0, count;
  size_t *alike = tl__sessions_alike(c);
  x->start = malloc((nl + 2) * sizeof *x->start);
  x->at = malloc((2 * ns + 1) * sizeof *x->at);
  if (!alike || !x->start || !x->at) {
    free(alike);
    fact_sessions_free(x);
    return TL_ENOMEM;
  }
  for (size_t l = 0; l < nl; l++) {
    const size_t *at = tl__label_sessions(c, l, &count);
    x->start[l] = n;
    for (size_t k = 0; k < count; k++)
      if (alike[at[k]] == at[k])
        x->at[n++] = at[k];
  }
  x->start[nl] = n;
  for (size_t i = 0; i < ns; i++)
    if (alike[i] == i)
      x->at[n++] = i;
  x->start[nl + 1] = n;
  free(alike);
  return TL_OK;
}

/* Writes "a, b" of the distinct values of f among the sessions of label l
 * (all labels when SIZE_MAX) to buf, folded past a few ("and 12 more
 * values"); returns how many there are (0 when out of memory). One pass
 * through a hash table over the sessions of fs. */
static size_t fact_values(const tl_comparison *c, const fact_sessions *fs, size_t l, const fact *f,
                          char *buf, size_t len) {
  size_t from = fs->start[l == SIZE_MAX ? c->label_count : l];
  size_t n = fs->start[(l == SIZE_MAX ? c->label_count : l) + 1] - from;
  fact_ctx x = {c, fs->at + from, f};
  size_t *first = malloc((n ? n : 1) * sizeof *first);
  buf[0] = '\0';
  if (!first || tl__first_same(n, 1, fact_key, &x, first) != TL_OK) {
    free(first);
    return 0;
  }
  tl__fold values;
  tl__fold_init(&values, TL__LIST_SHOWN);
  for (size_t i = 0; i < n; i++)
    if (first[i] == i)
      tl__fold_add(&values, fact_key(&x, i, 0));
  snprintf(buf, len, "%s", tl__fold_text(&values, "values"));
  size_t count = values.count;
  tl__fold_free(&values);
  free(first);
  return count;
}

/* f within each label and, when no label mixes it, between labels. On a
 * --by page only what the answer and tl__by_confounds leave: a host fact
 * is theirs both ways, libuv and tags are compared inside groups here. */
static int fact_bullets(FILE *out, const tl_comparison *c, const fact_sessions *fs, const fact *f) {
  char buf[1024];
  int host_fact = f->t && strcmp(f->t->key, "libuv") != 0;
  if (c->by && host_fact)
    return 0;
  int mixed = 0;
  for (size_t l = 0; l < c->label_count; l++) {
    if (fact_values(c, fs, l, f, buf, sizeof buf) > 1) {
      fputs("- Within **", out);
      tl_md_escape(out, c->labels[l]);
      fputs("**, the ", out);
      tl_md_escape(out, f->name); /* a tag key comes from the database */
      fputs(" differs between sessions: ", out);
      tl_md_escape(out, buf);
      fputs(".\n", out);
      mixed = 1;
    }
  }
  if (mixed || c->label_count < 2 || (c->by && f->t))
    return mixed;
  /* Between labels, each with one value. */
  size_t known = 0;
  for (size_t l = 0; l < c->label_count; l++)
    known += fact_values(c, fs, l, f, buf, sizeof buf) == 1;
  if (known < 2 || fact_values(c, fs, SIZE_MAX, f, buf, sizeof buf) < 2)
    return 0;
  fputs("- The ", out);
  tl_md_escape(out, f->name);
  fputs(" differs between labels: ", out);
  int first = 1;
  for (size_t l = 0; l < c->label_count; l++) {
    if (fact_values(c, fs, l, f, buf, sizeof buf) != 1)
      continue;
    fputs(first ? "" : "; ", out);
    tl_md_escape(out, c->labels[l]);
    fputc(' ', out);
    tl_md_escape(out, buf);
    first = 0;
  }
  fputs(".\n", out);
  return 1;
}

/* ======================================================================== */
/* The checks                                                                */

int tl__left_out_bullets(FILE *f, const tl_page_opts *o) {
  const tl_left_out_list *lo = o->left_out;
  for (size_t i = 0; lo && i < lo->count; i++) {
    char date[32];
    tl_date_format(lo->items[i].started_ns, date, sizeof date);
    fputs("- **Left out**: session ", f);
    tl_md_escape(f, lo->items[i].uuid);
    fputs(" of **", f);
    tl_md_escape(f, lo->items[i].label);
    fprintf(f, "** (started %s): its samples failed verification: ", date);
    tl_md_escape(f, lo->items[i].why);
    fputs(". Every number here is from the other sessions.\n", f);
  }
  return lo && lo->count;
}

static int left_out(const tl__page *p, FILE *f) { return tl__left_out_bullets(f, p->o); }

/* A label measured on more than one host. */
static int several_hosts(const tl__page *p, FILE *f) {
  const tl_comparison *c = p->c;
  int any = 0;
  size_t *first_host = tl__sessions_first(c, TL__SAME_HOST);
  for (size_t l = 0; first_host && l < c->label_count; l++) {
    tl__fold hosts;
    tl__fold_init(&hosts, TL__LIST_SHOWN);
    size_t count;
    const size_t *at = tl__label_sessions(c, l, &count);
    for (size_t k = 0; k < count; k++) {
      size_t i = at[k];
      const tl_session *s = &c->sessions.items[i];
      char host[320];
      if (first_host[i] != i)
        continue;
      snprintf(host, sizeof host, "%s (%.8s)", s->hostname, s->host_fingerprint);
      tl__fold_add(&hosts, host);
    }
    if (hosts.count > 1) {
      fputs("- **", f);
      tl_md_escape(f, c->labels[l]);
      fprintf(f, "** mixes %zu different hosts: ", hosts.count);
      tl_md_escape(f, tl__fold_text(&hosts, "hosts"));
      fputs(".\n", f);
      any = 1;
    }
    tl__fold_free(&hosts);
  }
  free(first_host);
  return any;
}

static const char *tag_key(const void *ctx, size_t i, int part) {
  (void)part;
  return ((const char *const *)ctx)[i];
}

/* The traits that "Nothing found" names, then every tag key seen (probe
 * options and conditions: interval, concurrency, load ...) in order of
 * first appearance. */
static int facts_and_tags(const tl__page *p, FILE *out) {
  const tl_comparison *c = p->c;
  int any = 0;
  fact_sessions fs;
  if (fact_sessions_make(&fs, c))
    return 0; /* out of memory: nothing said, as of a fact it could not read */
  for (size_t i = 0; i < tl__trait_count; i++) {
    if (!tl__traits[i].care)
      continue;
    fact f = trait_fact(i);
    snprintf(f.name, sizeof f.name, "%s", tl__traits[i].name);
    any |= fact_bullets(out, c, &fs, &f);
  }
  /* Each tag key once, through a hash table over every session's keys. */
  size_t ntags = 0, n = 0;
  for (size_t i = 0; i < c->sessions.count; i++)
    ntags += c->details[i].tag_count;
  const char **keys = malloc((ntags ? ntags : 1) * sizeof *keys);
  size_t *first = malloc((ntags ? ntags : 1) * sizeof *first);
  for (size_t i = 0; keys && first && i < c->sessions.count; i++)
    for (size_t k = 0; k < c->details[i].tag_count; k++)
      keys[n++] = c->details[i].tags[k].key;
  if (!keys || !first || tl__first_same(n, 1, tag_key, keys, first) != TL_OK)
    n = 0;
  for (size_t j = 0; j < n; j++) {
    if (first[j] != j)
      continue;
    fact f = {NULL, keys[j], "", 0, NULL};
    snprintf(f.name, sizeof f.name, "tag %s", keys[j]);
    any |= fact_bullets(out, c, &fs, &f);
  }
  free(keys);
  free(first);
  fact_sessions_free(&fs);
  return any;
}

/* The highest 1-minute load average recorded at the start or the end of
 * session i ("1.52" or "1.52 0.80 0.44"), per logical CPU; -1 when none. */
static double load_per_cpu(const tl_comparison *c, size_t i, double *load, double *cpus) {
  static const char *const keys[] = {"load.start", "load.end"};
  const char *n = tl__fact(&c->details[i], "cpu.logical");
  char *end;
  *load = -1;
  for (size_t k = 0; k < 2; k++) {
    const char *l = tl__fact(&c->details[i], keys[k]);
    double v = l ? strtod(l, &end) : -1;
    if (l && end != l && v > *load)
      *load = v;
  }
  if (*load < 0)
    return -1;
  *cpus = n ? strtod(n, &end) : 0;
  if (!n || end == n || *cpus < 1)
    *cpus = 1;
  return *load / *cpus;
}

/* A busy host: a load of at least half a task per CPU. What is the same
 * for every busy label is said once: "vbox and macos were measured on busy
 * hosts: load average 1.52 on 2 CPUs during a session", or each label's
 * own load when they differ. */
static int busy_hosts(const tl__page *p, FILE *f) {
  const tl_comparison *c = p->c;
  size_t busy = 0, same = 1, first = 0;
  double *load = calloc(2 * c->label_count + 1, sizeof *load), *cpus = load + c->label_count;
  if (!load)
    return 0;
  for (size_t l = 0; l < c->label_count; l++) {
    double worst = -1;
    load[l] = -1;
    size_t count;
    const size_t *at = tl__label_sessions(c, l, &count);
    for (size_t k = 0; k < count; k++) {
      double ld = 0, n = 0;
      double per = load_per_cpu(c, at[k], &ld, &n);
      if (per > worst) {
        worst = per;
        load[l] = ld;
        cpus[l] = n;
      }
    }
    if (worst < 0.5) {
      load[l] = -1;
      continue;
    }
    if (!busy++)
      first = l;
    else
      same &= load[l] == load[first] && cpus[l] == cpus[first];
  }
  if (busy) {
    fputs("- ", f);
    for (size_t l = 0, said = 0; l < c->label_count; l++) {
      if (load[l] < 0)
        continue;
      fputs(said ? (said + 1 == busy ? " and **" : ", **") : "**", f);
      tl_md_escape(f, c->labels[l]);
      fputs("**", f);
      said++;
    }
    if (busy == 1 || same) {
      fprintf(f, " %s measured on %s: load average %.2f on %g CPUs during a session.\n",
              busy == 1 ? "was" : "were", busy == 1 ? "a busy host" : "busy hosts", load[first],
              cpus[first]);
    } else {
      fputs(" were measured on busy hosts, the highest load average during a session: ", f);
      for (size_t l = 0, said = 0; l < c->label_count; l++) {
        if (load[l] < 0)
          continue;
        fputs(said++ ? ", " : "", f);
        tl_md_escape(f, c->labels[l]);
        fprintf(f, " %.2f on %g CPUs", load[l], cpus[l]);
      }
      fputs(".\n", f);
    }
  }
  free(load);
  return busy > 0;
}

/* Which traits each label recorded, worked out once for the page: asking
 * label by label and trait by trait, through every session each time,
 * grows with labels squared times sessions (200 hosts compared --by
 * hostname). */
typedef struct {
  const tl_comparison *c;
  unsigned char *known; /* [l * tl__trait_count + k]: some session of label l knows trait k */
  fact *asked;          /* the traits trait_unknown asks about (trait_fact) */
  size_t *asked_at;     /* their places in tl__traits */
  size_t nasked;
} recorded;

/* Marks what session i tells of label l. */
static void recorded_add(recorded *r, size_t i, size_t l) {
  for (size_t a = 0; a < r->nasked; a++) {
    unsigned char *known = &r->known[l * tl__trait_count + r->asked_at[a]];
    if (!*known && fact_value(r->c, i, &r->asked[a]))
      *known = 1;
  }
}

/* Whether trait k is one nobody may have recorded (imported data has none). */
static int trait_asked(size_t k) {
  return tl__traits[k].care && strcmp(tl__traits[k].key, "libuv") != 0;
}

/* Fills r for c: one pass through each label's sessions. TL_OK or
 * TL_ENOMEM. */
static int recorded_init(recorded *r, const tl_comparison *c) {
  size_t nl = c->label_count;
  r->c = c;
  r->known = calloc(nl * tl__trait_count + 1, 1);
  r->asked = malloc(tl__trait_count * sizeof *r->asked);
  r->asked_at = malloc(tl__trait_count * sizeof *r->asked_at);
  if (!r->known || !r->asked || !r->asked_at)
    return TL_ENOMEM;
  r->nasked = 0;
  for (size_t k = 0; k < tl__trait_count; k++)
    if (trait_asked(k)) {
      r->asked_at[r->nasked] = k;
      r->asked[r->nasked++] = trait_fact(k);
    }
  for (size_t l = 0; l < nl; l++) {
    size_t count;
    const size_t *at = tl__label_sessions(c, l, &count);
    for (size_t j = 0; j < count; j++)
      recorded_add(r, at[j], l);
  }
  return TL_OK;
}

static void recorded_free(recorded *r) {
  free(r->known);
  free(r->asked);
  free(r->asked_at);
}

/* Whether nobody recorded trait k for label l (imported data has none). */
static int trait_unknown(const recorded *r, size_t l, size_t k) {
  return trait_asked(k) && !r->known[l * tl__trait_count + k];
}

/* Whether trait k is unknown for every label with sessions. */
static int unknown_for_all(const recorded *r, size_t k) {
  for (size_t l = 0; l < r->c->label_count; l++)
    if (tl__label_session_count(r->c, l) && !trait_unknown(r, l, k))
      return 0;
  return 1;
}

/* One bullet naming the traits that lead says (l == SIZE_MAX: those unknown
 * for every label; else those unknown for label l alone). */
static int unknown_bullet(const recorded *r, size_t l, const char *lead, const char *label,
                          const char *tail, FILE *f) {
  char unknown[512];
  size_t at = 0, count = 0;
  unknown[0] = '\0';
  for (size_t k = 0; k < tl__trait_count; k++) {
    int all = unknown_for_all(r, k);
    if (l == SIZE_MAX ? !all : all || !trait_unknown(r, l, k))
      continue;
    if (at < sizeof unknown)
      at += (size_t)snprintf(unknown + at, sizeof unknown - at, "%s%s", count ? ", " : "",
                             tl__traits[k].name);
    count++;
  }
  if (!count)
    return 0;
  fputs(lead, f);
  if (label) {
    fputs("**", f);
    tl_md_escape(f, label);
    fputs("**", f);
  }
  fputs(tail, f);
  tl_md_escape(f, unknown);
  fputs(".\n", f);
  return 1;
}

/* Facts nobody recorded (imported data has none): said, not taken for
 * agreement; what is unknown for every label is said once. */
static int unrecorded(const tl__page *p, FILE *f) {
  const tl_comparison *c = p->c;
  recorded r;
  if (recorded_init(&r, c) != TL_OK) {
    recorded_free(&r);
    return 0;
  }
  size_t labels = 0, only = 0;
  for (size_t l = 0; l < c->label_count; l++)
    if (tl__label_session_count(c, l))
      labels++, only = l;
  int any = 0;
  if (labels == 1) {
    any = unknown_bullet(&r, SIZE_MAX, "- Unknown for ", c->labels[only], " (not recorded): ", f);
  } else if (labels > 1) {
    any = unknown_bullet(&r, SIZE_MAX, "- Unknown for every label", NULL,
                         " (not recorded, so not compared): ", f);
    for (size_t l = 0; l < c->label_count; l++)
      if (tl__label_session_count(c, l))
        any |= unknown_bullet(&r, l, any ? "- Also unknown for " : "- Unknown for ", c->labels[l],
                              any ? ": " : " (not recorded, so not compared): ", f);
  }
  recorded_free(&r);
  return any;
}

static int other_probes(const tl__page *p, FILE *f) {
  const tl_comparison *c = p->c;
  if (c->label_count < 2)
    return 0;
  char sets[2048], first[512] = "";
  size_t at = 0;
  int differ = 0;
  for (size_t l = 0; l < c->label_count; l++) {
    char mine[512];
    size_t m = 0;
    mine[0] = '\0';
    for (size_t i = 0; i < c->group_count; i++) {
      const tl_group *g = &c->groups[i];
      if (strcmp(g->label, c->labels[l]) != 0 ||
          (i && strcmp(c->groups[i - 1].label, g->label) == 0 &&
           strcmp(c->groups[i - 1].probe, g->probe) == 0))
        continue;
      if (m < sizeof mine)
        m += (size_t)snprintf(mine + m, sizeof mine - m, "%s%s", m ? " and " : "", g->probe);
    }
    if (l == 0)
      snprintf(first, sizeof first, "%s", mine);
    else if (strcmp(first, mine) != 0)
      differ = 1;
    if (at < sizeof sets)
      at += (size_t)snprintf(sets + at, sizeof sets - at, "%s%s %s", l ? "; " : "", c->labels[l],
                             mine);
  }
  if (!differ)
    return 0;
  fputs("- The labels were measured with different probes: ", f);
  tl_md_escape(f, sets);
  fputs(". A verdict only compares labels of the same probe and delay.\n", f);
  return 1;
}

/* A label left out of a verdict: no samples at that probe and delay. */
static int missing_blocks(const tl__page *p, FILE *f) {
  const tl_comparison *c = p->c;
  size_t *blk = calloc(c->group_count + 1, sizeof *blk);
  size_t nb = blk && c->label_count > 1 ? tl__delays_of(c, blk) : 0;
  int any = 0;
  for (size_t l = 0; l < c->label_count && nb; l++) {
    size_t missing = 0;
    if (!tl__label_session_count(c, l))
      continue;
    for (size_t b = 0; b < nb; b++) {
      const tl_group *g0 = &c->groups[blk[b]];
      const tl_group *g = tl__find_group(c, c->labels[l], g0->probe, g0->delay_ns);
      if (g && g->dist.count)
        continue;
      char call[96];
      tl__call_name(g0->probe, g0->delay_ns, call, sizeof call);
      if (!missing++) {
        fputs("- **", f);
        tl_md_escape(f, c->labels[l]);
        fputs("** has no samples at ", f);
      } else {
        fputs(", ", f);
      }
      tl_md_escape(f, call);
    }
    if (missing) {
      fprintf(f, ", so it is not in %s.\n", missing > 1 ? "those verdicts" : "that verdict");
      any = 1;
    }
  }
  free(blk);
  return any;
}

static int inside_groups(const tl__page *p, FILE *f) { return tl__by_confounds(p->c, f); }

/* Every check, in the order of the bullets; quiet: what "Nothing found"
 * says it looked at, or NULL. */
static const struct {
  int (*run)(const tl__page *p, FILE *f);
  const char *quiet;
} checks[] = {
    {left_out, NULL},
    {several_hosts, "each label ran on one host"},
    {facts_and_tags, "the sessions compared agree on * and tags as far as they were recorded"},
    {busy_hosts, "no host was busy during its sessions"},
    {unrecorded, NULL},
    {other_probes, NULL},
    {missing_blocks, NULL},
    {inside_groups, NULL},
};
enum { CHECKS = sizeof checks / sizeof checks[0] };

/* What a quiet check looked at, "*" standing for the traits compared. */
static void say_quiet(FILE *f, const char *quiet) {
  const char *star = strchr(quiet, '*');
  if (!star) {
    fputs(quiet, f);
    return;
  }
  fwrite(quiet, 1, (size_t)(star - quiet), f);
  size_t said = 0;
  for (size_t i = 0; i < tl__trait_count; i++)
    if (tl__traits[i].care)
      fprintf(f, "%s%s", said++ ? ", " : "", tl__traits[i].care);
  fputs(star + 1, f);
}

void tl__read_with_care(tl__page *p) {
  FILE *f = tl__prose(p);
  int any = 0;
  for (size_t i = 0; i < CHECKS; i++)
    any |= checks[i].run(p, f);
  if (!any) {
    fputs("Nothing found: ", f);
    size_t quiet = 0, said = 0;
    for (size_t i = 0; i < CHECKS; i++)
      quiet += checks[i].quiet != NULL;
    for (size_t i = 0; i < CHECKS; i++) {
      if (!checks[i].quiet)
        continue;
      fputs(said == 0 ? "" : said + 1 == quiet ? ", and " : ", ", f);
      say_quiet(f, checks[i].quiet);
      said++;
    }
    fputs(".\n", f);
  }
  fputc('\n', f);
}
