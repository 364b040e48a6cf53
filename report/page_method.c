/* page_method.c: the How it was measured section of the comparison page:
 * what each probe measures (or that another tool measured it, for imported
 * sessions), how the percentiles are defined, and the command lines that
 * made the sessions, once each: a label's repeated runs as one entry, and
 * imports that differ only in start, delay and file as one shape. */
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"

/* A fenced code block around text that may hold backticks: the fence is
 * longer than any run of backticks inside. */
static void code_block(FILE *f, const char *text) {
  size_t run = 0, longest = 0;
  for (const char *s = text; *s; s++) {
    run = *s == '`' ? run + 1 : 0;
    if (run > longest)
      longest = run;
  }
  size_t fence = longest < 3 ? 3 : longest + 1;
  for (size_t i = 0; i < fence; i++)
    fputc('`', f);
  fputs("sh\n", f);
  tl__md_literal(f, text);
  fputc('\n', f);
  for (size_t i = 0; i < fence; i++)
    fputc('`', f);
  fputs("\n\n", f);
}

static void command_lines(tl__page *p);

void tl__section_method(tl__page *p) {
  const tl_comparison *c = p->c;
  tl__heading(p, "how-it-was-measured", "How it was measured");
  FILE *f = tl__prose(p);
  size_t n = c->sessions.count, *same = tl__sessions_first(c, TL__SAME_PROBE);
  if (!same)
    p->failed = TL_ENOMEM;
  for (size_t i = 0; same && i < n; i++) {
    const char *probe = c->sessions.items[i].probe;
    if (same[i] != i)
      continue;
    size_t sessions = 0, imported = 0;
    for (size_t j = i; j < n; j++)
      if (strcmp(c->sessions.items[j].probe, probe) == 0) {
        sessions++;
        imported += strncmp(c->sessions.items[j].host_fingerprint, "imported:", 9) == 0;
      }
    fputs("- **", f);
    tl_md_escape(f, probe);
    fputs("**: ", f);
    /* tl cannot know how another tool measured what it imported, whatever
     * its --probe says. */
    if (imported == sessions) {
      fputs("imported with `tlstore import --probe ", f);
      tl__md_literal(f, probe);
      fputs("`: measured by another tool, not by tl, which cannot say how.", f);
    } else {
      tl_md_escape(f, tl__probe_definition(probe));
      if (imported)
        fprintf(f,
                " %zu of its %zu sessions were imported (`tlstore import`): measured by "
                "another tool, not by tl.",
                imported, sessions);
    }
    fputc('\n', f);
  }
  free(same);
  fputs("\nPercentiles are exact and nearest-rank over every raw sample: pN is the smallest "
        "measured latency that at least N percent of the samples do not exceed (the "
        "ceil(N/100 \xC3\x97 n)-th smallest of n), never an interpolation or an estimate. The "
        "mean and the standard deviation (population) are over the same samples.\n\n",
        f);
  command_lines(p);
}

/* Which command lines need their call in the heading: those of a label
 * that ran more than one command line, when all the sessions of that command
 * line share one probe and delay. A malloc'ed array of flags by session,
 * set at each command line's first session (cmd: TL__SAME_COMMAND, label:
 * TL__SAME_LABEL), or NULL when out of memory. Linear in the sessions. */
static char *command_calls(const tl_comparison *c, const size_t *cmd, const size_t *label) {
  size_t n = c->sessions.count;
  size_t *commands = calloc(n + 1, sizeof *commands);
  char *mixed = calloc(n + 1, 1), *call = calloc(n + 1, 1);
  if (!commands || !mixed || !call) {
    free(call);
    call = NULL;
  }
  for (size_t i = 0; call && i < n; i++) {
    const tl_session *s = &c->sessions.items[i], *first = &c->sessions.items[cmd[i]];
    commands[label[i]] += cmd[i] == i;
    if (s->delay_ns != first->delay_ns || strcmp(s->probe, first->probe) != 0)
      mixed[cmd[i]] = 1;
  }
  for (size_t i = 0; call && i < n; i++)
    call[i] = cmd[i] == i && commands[label[i]] > 1 && !mixed[i];
  free(commands);
  free(mixed);
  return call;
}

/* What one import changes from the next: its --start, its --delay and
 * the file it read (the last word). */
enum { IMPORT_START, IMPORT_DELAY, IMPORT_FILE, IMPORT_PARTS };

/* An import's command line ("tlstore import ... --start D --delay T
 * FILE") with what one import changes from the next left out, so that a
 * month of imports made by one script is one command. Its three parts'
 * words go into part[] (pointers into cmd with their lengths, "" and 0 for
 * a part it lacks); the other words, each followed by a space, into shape
 * (strlen(cmd) + 2 bytes). Returns the shape's length, or -1 when cmd is
 * no import. One pass over cmd, the first of hundreds of thousands on a
 * fleet's page. */
static long import_shape(const char *cmd, char *shape, const char *part[IMPORT_PARTS],
                         size_t part_len[IMPORT_PARTS]) {
  if (strncmp(cmd, "tlstore import ", 15) != 0)
    return -1;
  for (int k = 0; k < IMPORT_PARTS; k++) {
    part[k] = "";
    part_len[k] = 0;
  }
  size_t at = 0;
  int after = -1; /* the part whose option the previous word was */
  for (const char *w = cmd; *w;) {
    const char *end = w;
    while (*end && *end != ' ')
      end++;
    size_t len = (size_t)(end - w);
    int file = !*end && w[0] != '-', value = after;
    if (file) {
      part[IMPORT_FILE] = w;
      part_len[IMPORT_FILE] = len;
    }
    if (value >= 0) {
      part[value] = w;
      part_len[value] = len;
    }
    after = len == 7 && strncmp(w, "--start", 7) == 0   ? IMPORT_START
            : len == 7 && strncmp(w, "--delay", 7) == 0 ? IMPORT_DELAY
                                                        : -1;
    if (!file && value < 0) {
      memcpy(shape + at, w, len);
      at += len;
      shape[at++] = ' ';
    }
    while (*end == ' ')
      end++;
    w = end;
  }
  shape[at] = '\0';
  return (long)at;
}

/* The commands of the sessions, once each: a session's label and command
 * line, an import's without what changes from one import to the next. */
typedef struct {
  const tl_comparison *c;
  const char **shape; /* per session: import_shape (each distinct one once), or NULL */
} command_keys;

static const char *command_key(const void *ctx, size_t i, int part) {
  const command_keys *k = ctx;
  const tl_session *s = &k->c->sessions.items[i];
  return part ? (k->shape[i] ? k->shape[i] : s->command_line) : s->label;
}

/* For each command (at its first session): which parts vary among its
 * imports, and its first few delays. */
enum { SHOWN_DELAYS = 8 };
typedef struct {
  const char *first[IMPORT_PARTS]; /* the first import's parts (import_shape) */
  size_t first_len[IMPORT_PARTS];
  int varies[IMPORT_PARTS];
  size_t delays;
  int64_t delay_ns[SHOWN_DELAYS];
} import_group;

/* Where an import's parts lie in its command line (import_shape's, kept
 * from the shapes' pass rather than found again). */
typedef struct {
  uint32_t at[IMPORT_PARTS], len[IMPORT_PARTS];
} import_parts;

/* Session j, an import of the command first seen at cmd[j] whose parts
 * are at, into g: the first one's parts kept, the others' compared with
 * them. */
static void note_import(const tl_comparison *c, const size_t *cmd, size_t j, const import_parts *at,
                        import_group *g) {
  const char *a[IMPORT_PARTS];
  size_t al[IMPORT_PARTS];
  for (int k = 0; k < IMPORT_PARTS; k++) {
    a[k] = c->sessions.items[j].command_line + at->at[k];
    al[k] = at->len[k];
  }
  if (cmd[j] == j || !g->first[0]) {
    memcpy(g->first, a, sizeof a);
    memcpy(g->first_len, al, sizeof al);
  }
  for (int k = 0; k < IMPORT_PARTS; k++)
    g->varies[k] |= al[k] != g->first_len[k] || memcmp(a[k], g->first[k], al[k]) != 0;
  int64_t d = c->sessions.items[j].delay_ns;
  size_t i = 0;
  while (i < g->delays && g->delay_ns[i] != d)
    i++;
  if (i == g->delays && i < SHOWN_DELAYS)
    g->delay_ns[g->delays++] = d;
}

/* After an import's command line: what its other imports change. */
static void import_note(FILE *f, const tl_session *s, const import_group *g, size_t runs) {
  static const char *const said[] = {"`--start`", "`--delay`", "the file"};
  size_t n = 0;
  for (int k = 0; k < IMPORT_PARTS; k++)
    n += g->varies[k] != 0;
  if (runs < 2 || !n)
    return;
  fputs("The others differ from it only in ", f);
  for (int k = 0, i = 0; k < IMPORT_PARTS; k++) {
    if (!g->varies[k])
      continue;
    fprintf(f, "%s%s", i ? (i + 1 == (int)n ? " and " : ", ") : "", said[k]);
    if (k == IMPORT_DELAY) {
      fputs(" (", f);
      for (size_t d = 0; d < g->delays; d++) {
        char call[96];
        tl__call_name(s->probe, g->delay_ns[d], call, sizeof call);
        fputs(d ? ", " : "", f);
        tl_md_escape(f, call);
      }
      fputs(g->delays == SHOWN_DELAYS ? " ...)" : ")", f);
    }
    i++;
  }
  fputs(".\n\n", f);
}

/* Each session's import shape into shape[i] (each distinct one once, in
 * shapes; NULL where its command is no import) and where its parts lie into
 * parts[i]: a fleet's month of imports by one script has one shape. 0, or
 * TL_ENOMEM (the shapes found so far kept). */
static int import_shapes(const tl_comparison *c, tl_strpool *shapes, const char **shape_of,
                         import_parts *parts) {
  char *shape = NULL;
  size_t room = 0;
  int err = TL_OK;
  for (size_t i = 0; i < c->sessions.count; i++) {
    const char *cl = c->sessions.items[i].command_line, *part[IMPORT_PARTS];
    size_t len[IMPORT_PARTS], need = strlen(cl) + 2;
    if (need > room) {
      free(shape);
      room = need * 2;
      if (!(shape = malloc(room))) {
        err = TL_ENOMEM;
        break;
      }
    }
    /* An import's parts' places are kept in 32 bits. */
    long at = need <= UINT32_MAX ? import_shape(cl, shape, part, len) : -1;
    shape_of[i] = at >= 0 ? tl_strpool_get_len(shapes, shape, (size_t)at) : NULL;
    if (at >= 0 && !shape_of[i])
      err = TL_ENOMEM;
    for (int k = 0; at >= 0 && k < IMPORT_PARTS; k++) {
      parts[i].at[k] = len[k] ? (uint32_t)(part[k] - cl) : 0;
      parts[i].len[k] = (uint32_t)len[k];
    }
  }
  free(shape);
  return err;
}

/* The command lines, once each: the runs of a label that share one command
 * line (a scheduled job) are one entry with their count and dates, and so
 * are imports that differ only in their start, delay and file. HTML folds
 * them into <details>; Markdown lists at most TL__MD_LIST_MAX. */
static void command_lines(tl__page *p) {
  const tl_comparison *c = p->c;
  size_t n = c->sessions.count, shown = 0, total = 0;
  int html = p->o->format == TL_FORMAT_HTML;
  FILE *f = tl__prose(p);
  fputs("### Command lines\n\n", f);
  if (html) {
    tl__prose_flush(p);
    fputs("<details><summary>The command line of every run</summary>\n", p->out);
    f = tl__prose(p);
  }
  /* The runs of each label and command line (counted at their first
   * sessions) and the newest of them, kept at the key's first session. */
  command_keys keys = {c, calloc(n + 1, sizeof *keys.shape)};
  import_parts *parts = malloc((n + 1) * sizeof *parts);
  tl_strpool *shapes = tl_strpool_new();
  if (keys.shape && parts && shapes && import_shapes(c, shapes, keys.shape, parts))
    p->failed = TL_ENOMEM;
  size_t *run = tl__sessions_first(c, TL__SAME_RUN), *cmd = malloc((n + 1) * sizeof *cmd);
  if (keys.shape && cmd && tl__first_same(n, 2, command_key, &keys, cmd) != TL_OK) {
    free(cmd);
    cmd = NULL;
  }
  size_t *label = tl__sessions_first(c, TL__SAME_LABEL);
  char *with_call = cmd && label ? command_calls(c, cmd, label) : NULL;
  size_t *runs_of = calloc(n + 1, sizeof *runs_of);
  int64_t *last_of = calloc(n + 1, sizeof *last_of);
  /* What varies among the imports of each command, at its place among the
   * commands (at_cmd, by first session). */
  size_t ncmd = 0, *at_cmd = malloc((n + 1) * sizeof *at_cmd);
  for (size_t i = 0; cmd && at_cmd && i < n; i++)
    at_cmd[i] = cmd[i] == i ? ncmd++ : SIZE_MAX;
  import_group *imports = calloc(ncmd + 1, sizeof *imports);
  if (!keys.shape || !parts || !shapes || !run || !cmd || !label || !with_call || !runs_of ||
      !last_of || !at_cmd || !imports) {
    p->failed = TL_ENOMEM;
    n = 0;
  }
  for (size_t j = 0; j < n; j++)
    if (keys.shape[j])
      note_import(c, cmd, j, &parts[j], &imports[at_cmd[cmd[j]]]);
  for (size_t i = 0; i < n; i++)
    if (run[i] == i) {
      int64_t t = c->sessions.items[i].started_ns;
      if (!runs_of[cmd[i]]++ || t > last_of[cmd[i]])
        last_of[cmd[i]] = t;
    }
  /* The first run of this label with this command line speaks for all. */
  for (size_t i = 0; i < n; i++) {
    const tl_session *s = &c->sessions.items[i];
    if (run[i] != i || cmd[i] != i)
      continue;
    total++;
    if (!html && shown >= TL__MD_LIST_MAX)
      continue;
    shown++;
    size_t runs = runs_of[i];
    int64_t last = last_of[i];
    char date[32], end[32], call[96];
    tl__minute(s->started_ns, date, sizeof date);
    fputs("**", f);
    tl_md_escape(f, c->details[i].label ? c->details[i].label : s->label);
    fputs("**", f);
    if (with_call[i]) {
      tl__call_name(s->probe, s->delay_ns, call, sizeof call);
      fputs(", ", f);
      tl_md_escape(f, call);
    }
    fputs(" on ", f);
    tl_md_escape(f, s->hostname);
    if (runs > 1) {
      tl__date_only(s->started_ns, date, sizeof date);
      tl__date_only(last, end, sizeof end);
      fprintf(f, ", %zu %s from %s to %s (UTC)%s:\n\n", runs, keys.shape[i] ? "imports" : "runs",
              date, end, keys.shape[i] ? ", the first" : "");
    } else {
      fprintf(f, ", %s UTC:\n\n", date);
    }
    code_block(f, *s->command_line ? s->command_line : "(not recorded)");
    if (keys.shape[i])
      import_note(f, s, &imports[at_cmd[i]], runs);
  }
  tl_strpool_free(shapes);
  free(keys.shape);
  free(parts);
  free(at_cmd);
  free(imports);
  free(run);
  free(cmd);
  free(label);
  free(with_call);
  free(runs_of);
  free(last_of);
  if (total > shown)
    fprintf(f,
            "And %zu more command lines: in the HTML page (`--format html`) and in JSON "
            "(`--format json`).\n\n",
            total - shown);
  if (html) {
    tl__prose_flush(p);
    fputs("</details>\n", p->out);
  }
}
