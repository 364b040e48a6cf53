/* mangen: turns one of tl's Markdown manual pages (docs/NAME.SECTION.md)
 * into roff for man(1) at build time, with cmark's man renderer, and adds the
 * .TH title line that Markdown has no place for. The Markdown stays the one
 * source of a page, so what the README links to and what `man` shows are the
 * same text. Two slips of cmark 0.30's renderer are mended on the way out
 * (see write_roff).
 *
 * Usage: mangen NAME SECTION VERSION INPUT.md OUTPUT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmark.h>

/* The whole file, malloc'ed (caller frees); NULL on failure. */
static char *read_all(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  size_t r;
  while (buf && (r = fread(buf + n, 1, cap - n, f)) > 0) {
    n += r;
    if (n == cap) {
      char *bigger = realloc(buf, cap *= 2);
      if (!bigger)
        free(buf);
      buf = bigger;
    }
  }
  if (ferror(f)) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *len = n;
  return buf;
}

/* Writes cmark's roff to out, mending two slips of its man renderer: a hard
 * line break is emitted as ".PD 0" glued to the end of the text line (so it
 * prints as text), and lines of a code block that start with '.' or '\''
 * would be read as roff requests; they get a "\&" in front. */
static void write_roff(const char *roff, FILE *out) {
  int in_code = 0;
  for (const char *line = roff; *line;) {
    const char *end = strchr(line, '\n');
    size_t n = end ? (size_t)(end - line) : strlen(line);
    if (in_code && n && (line[0] == '.' || line[0] == '\'') &&
        !(n == 3 && strncmp(line, ".fi", 3) == 0))
      fputs("\\&", out);
    if (n >= 5 && strncmp(line + n - 5, ".PD 0", 5) == 0 && n > 5) {
      fwrite(line, 1, n - 5, out);
      fputs("\n.PD 0", out);
    } else {
      fwrite(line, 1, n, out);
    }
    fputc('\n', out);
    if (n == 3 && strncmp(line, ".nf", 3) == 0)
      in_code = 1;
    else if (n == 3 && strncmp(line, ".fi", 3) == 0)
      in_code = 0;
    line += n + (end != NULL);
  }
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: mangen NAME SECTION VERSION INPUT.md OUTPUT\n");
    return 2;
  }
  const char *name = argv[1], *section = argv[2], *version = argv[3];
  size_t len;
  char *md = read_all(argv[4], &len);
  if (!md) {
    fprintf(stderr, "mangen: cannot read %s\n", argv[4]);
    return 1;
  }
  cmark_node *doc = cmark_parse_document(md, len, CMARK_OPT_DEFAULT);
  /* Width 0: no wrapping, so each paragraph stays one roff line. */
  char *roff = doc ? cmark_render_man(doc, CMARK_OPT_DEFAULT, 0) : NULL;
  FILE *out = roff ? fopen(argv[5], "w") : NULL;
  int status = 1;
  if (out) {
    fprintf(out, ".TH \"");
    for (const char *p = name; *p; p++)
      fputc(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p, out);
    fprintf(out, "\" \"%s\" \"\" \"tl %s\" \"tl manual\"\n", section, version);
    write_roff(roff, out);
    status = fclose(out) == 0 ? 0 : 1;
  }
  if (status)
    fprintf(stderr, "mangen: cannot render %s to %s\n", argv[4], argv[5]);
  free(roff);
  cmark_node_free(doc);
  free(md);
  return status;
}
