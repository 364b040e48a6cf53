/* page_charts.c: the Charts section of the comparison page. In HTML the
 * charts are inline SVG (svg.c); a Markdown page written to a file gets each
 * chart as an SVG file beside it (tl_chart_files, named STEM-N.svg) linked
 * as an image, and a page on standard output one line saying how to get
 * them. Also owns the list of chart files and their names in Markdown links. */
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"

/* A chart's file name in a Markdown link: unreserved characters as they
 * are, every other byte percent-encoded (the name comes from -o). */
void tl__md_url(FILE *f, const char *name) {
  for (const unsigned char *s = (const unsigned char *)name; *s; s++)
    if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
        strchr("-._~", *s))
      fputc(*s, f);
    else
      fprintf(f, "%%%02X", *s);
}

void tl_chart_files_free(tl_chart_files *charts) {
  for (size_t i = 0; charts && i < charts->count; i++) {
    free(charts->items[i].name);
    free(charts->items[i].data);
  }
  if (charts) {
    free(charts->items);
    charts->items = NULL;
    charts->count = 0;
  }
}

typedef enum { CHART_SPECTRUM, CHART_TREND, CHART_HISTOGRAM, CHART_BY } chart_kind;

const char *tl__chart_file_add(tl__page *p, char *data, size_t len) {
  tl_chart_files *files = p->o->charts;
  char name[512];
  snprintf(name, sizeof name, "%s-%zu.svg", files->stem, files->count + 1);
  tl_chart_file *items = realloc(files->items, (files->count + 1) * sizeof *items);
  if (items)
    files->items = items;
  if (!items || !(items[files->count].name = strdup(name))) {
    free(data);
    p->failed = TL_ENOMEM;
    return NULL;
  }
  items[files->count].data = data;
  items[files->count].len = len;
  return items[files->count++].name;
}

/* Draws one chart of a Markdown page into a file of its own (added to
 * p->o->charts) and links it as an image; with `inline_image`, no line
 * break after it, so that small charts sit side by side. Nothing when the
 * chart has nothing to draw. */
static void md_chart(tl__page *p, chart_kind kind, const tl_group *g, int inline_image) {
  char *buf = NULL;
  size_t len = 0;
  FILE *saved = p->out, *mem = open_memstream(&buf, &len);
  if (!mem) {
    p->failed = TL_ENOMEM;
    return;
  }
  p->out = mem;
  p->svg_file = 1;
  if (kind == CHART_SPECTRUM)
    tl__svg_spectrum(p, g->probe, g->delay_ns);
  else if (kind == CHART_TREND)
    tl__svg_trend(p, g->probe, g->delay_ns);
  else if (kind == CHART_BY)
    tl__svg_by_trend(p, g->probe, g->delay_ns);
  else
    tl__svg_histogram(p, g);
  p->svg_file = 0;
  p->out = saved;
  if (fclose(mem) != 0) {
    free(buf);
    p->failed = TL_ENOMEM;
    return;
  }
  if (!len) {
    free(buf);
    return;
  }
  const char *name = tl__chart_file_add(p, buf, len);
  if (!name)
    return;
  FILE *f = tl__prose(p);
  fputs(inline_image && p->o->charts->count > 1 && p->chart_inline ? " ![" : "![", f);
  tl_md_escape(f, p->chart_title);
  fputs("](", f);
  tl__md_url(f, name);
  fputs(inline_image ? ")" : ")\n\n", f);
  p->chart_inline = inline_image;
  if (!inline_image) {
    tl_md_escape(f, p->chart_caption);
    fputs("\n\n", f);
  }
}

/* The heading of one probe and delay's charts: "### setTimeout(1)". */
static void block_heading(tl__page *p, const tl_group *g0) {
  char call[96];
  tl__call_name(g0->probe, g0->delay_ns, call, sizeof call);
  FILE *f = tl__prose(p);
  fputs("### ", f);
  tl_md_escape(f, call);
  fputs("\n\n", f);
}

/* The Markdown page's charts, as SVG files beside it (-o), or one line
 * saying how to get them when the page goes to standard output. */
static void markdown_charts(tl__page *p) {
  const tl_comparison *c = p->c;
  FILE *f = tl__prose(p);
  if (!p->o->charts) {
    fputs("Charts: written beside the page as SVG files with `-o FILE.md`, or inline with "
          "`--format html`.\n\n",
          f);
    return;
  }
  tl__heading(p, "charts", "Charts");
  size_t n, *idx = tl__page_blocks(p, &n);
  if (!idx)
    return;
  for (size_t i = 0; i < n; i++) {
    const tl_group *g0 = &c->groups[idx[i]];
    block_heading(p, g0);
    md_chart(p, CHART_SPECTRUM, g0, 0);
    md_chart(p, CHART_TREND, g0, 0);
    if (c->by && c->label_x)
      md_chart(p, CHART_BY, g0, 0);
    for (size_t l = 0; l < c->label_count; l++) {
      const tl_group *g = tl__find_group(c, c->labels[l], g0->probe, g0->delay_ns);
      if (g && g->dist.count)
        md_chart(p, CHART_HISTOGRAM, g, 1);
    }
    if (p->chart_inline)
      fputs("\n\nHistograms: the bulk of each label's samples; the bar set apart on the right "
            "counts those beyond.\n\n",
            tl__prose(p));
    p->chart_inline = 0;
  }
  free(idx);
}

void tl__section_charts(tl__page *p) {
  const tl_comparison *c = p->c;
  if (p->o->format != TL_FORMAT_HTML) {
    markdown_charts(p);
    return;
  }
  tl__heading(p, "charts", "Charts");
  size_t n, *idx = tl__page_blocks(p, &n);
  if (!idx)
    return;
  for (size_t i = 0; i < n; i++) {
    const tl_group *g0 = &c->groups[idx[i]];
    block_heading(p, g0);
    tl__prose_flush(p);
    fputs("<div class=\"charts\">\n", p->out);
    tl__svg_spectrum(p, g0->probe, g0->delay_ns);
    tl__svg_trend(p, g0->probe, g0->delay_ns);
    fputs("</div>\n<div class=\"charts small\">\n", p->out);
    for (size_t l = 0; l < c->label_count; l++) {
      const tl_group *g = tl__find_group(c, c->labels[l], g0->probe, g0->delay_ns);
      if (g && g->dist.count)
        tl__svg_histogram(p, g);
    }
    fputs("</div>\n", p->out);
  }
  free(idx);
}
