/* write.c: the page being written, as every section writes it: Markdown
 * prose (tl__prose), tables, headings and the links of a site's pages. In
 * HTML the prose is buffered and turned into HTML by cmark in safe mode
 * (raw HTML in the input never passes) when the next table, chart or
 * heading is written. Sections call down into these; nothing here calls a
 * section. */
#include <cmark.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"

FILE *tl__prose(tl__page *p) {
  if (p->o->format != TL_FORMAT_HTML)
    return p->out;
  if (!p->md) {
    p->md = open_memstream(&p->md_buf, &p->md_len);
    if (!p->md) {
      /* The page is marked failed, and callers discard a failed page. */
      p->failed = TL_ENOMEM;
      return p->out;
    }
  }
  return p->md;
}

void tl__prose_flush(tl__page *p) {
  if (p->o->format != TL_FORMAT_HTML || !p->md)
    return;
  fclose(p->md);
  p->md = NULL;
  if (!p->md_buf)
    return;
  /* Safe is the default since cmark 0.29; saying so keeps older ones safe too. */
  char *html =
      cmark_markdown_to_html(p->md_buf, p->md_len, CMARK_OPT_SAFE | CMARK_OPT_VALIDATE_UTF8);
  if (html)
    fputs(html, p->out);
  else
    p->failed = TL_ENOMEM;
  free(html);
  free(p->md_buf);
  p->md_buf = NULL;
  p->md_len = 0;
}

void tl__put_table(tl__page *p, tl__table *t) {
  tl__prose_flush(p);
  if (!t) {
    p->failed = TL_ENOMEM;
    return;
  }
  int rc = tl__table_write(t, p->o->format, p->out);
  if (rc)
    p->failed = rc;
  tl__table_free(t);
}

/* A section heading with an anchor: "## text" in Markdown (where renderers
 * such as GitHub's make the anchor from the text, as id is), an h2 with id
 * in HTML. */
void tl__heading(tl__page *p, const char *id, const char *text) {
  if (p->o->format != TL_FORMAT_HTML) {
    fprintf(tl__prose(p), "## %s\n\n", text);
    return;
  }
  tl__prose_flush(p);
  fprintf(p->out, "<h2 id=\"%s\">%s</h2>\n", id, text);
}

/* A host's page when the site made one (host_pages lists them, in byte
 * order: each of a fleet's sessions asks). */
const char *tl__host_href(const tl__page *p, const char *fingerprint, char *buf, size_t len) {
  if (!p->o->site_links || !p->o->host_page_count ||
      !bsearch(&fingerprint, p->o->host_pages, p->o->host_page_count, sizeof *p->o->host_pages,
               tl__by_bytes))
    return NULL;
  return tl__host_page(fingerprint, tl__page_ext(p), buf, len) == 0 ? buf : NULL;
}

const char *tl__label_href(const tl__page *p, const char *label, char *buf, size_t len) {
  if (!p->o->site_links || tl_label_check(label, NULL, 0) != TL_OK || p->c->by)
    return NULL;
  snprintf(buf, len, "label-%s.%s", label, tl__page_ext(p));
  return buf;
}

const char *tl__page_ext(const tl__page *p) {
  return p->o->format == TL_FORMAT_HTML ? "html" : "md";
}

void tl__md_nav(tl__page *p) {
  if (!p->o->site_links || p->o->format == TL_FORMAT_HTML)
    return;
  /* Each link says what it opens: compare.md may be grouped by --by. */
  FILE *f = tl__prose(p);
  fputs("[All labels and hosts](index.md) \xC2\xB7 [", f);
  if (p->o->compare_by) {
    fputs("Timer latency by ", f);
    tl_md_escape(f, p->o->compare_by);
  } else {
    fputs("Comparison of every label", f);
  }
  fputs("](compare.md)\n\n", f);
}

const tl_stats *tl__page_stats(const tl__page *p) { return tl__stats_for(p->c, p->o); }

void tl__md_list_labels(FILE *f, const tl_comparison *c) {
  for (size_t i = 0; i < c->label_count; i++) {
    if (i)
      fputs(", ", f);
    tl_md_escape(f, c->labels[i]);
  }
}

/* The page's (probe, delay) blocks as delays_of gives them, allocated (the
 * caller frees); NULL with the page marked failed when out of memory. */
size_t *tl__page_blocks(tl__page *p, size_t *n) {
  size_t *idx = calloc(p->c->group_count + 1, sizeof *idx);
  *n = idx ? tl__delays_of(p->c, idx) : 0;
  if (!idx)
    p->failed = TL_ENOMEM;
  return idx;
}
