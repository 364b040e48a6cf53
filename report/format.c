/* format.c: the small pieces every page format uses: the one HTML escaper,
 * the Markdown escaper, number formatting, fact and tag lookups, and tables
 * that hold plain text and escape it for Markdown or HTML when written. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"

/* ======================================================================== */
/* Escaping                                                                  */

void tl_html_escape(FILE *out, const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  size_t left = strlen(s);
  while (left) {
    /* Printable ASCII that needs no entity, as it is, a run at a time: a
     * fleet's HTML site writes some 200 MB of table cells. */
    size_t run = 0;
    while (run < left && p[run] >= 0x20 && p[run] < 0x7f && !strchr("&<>\"'", p[run]))
      run++;
    if (run) {
      fwrite(p, 1, run, out);
      p += run;
      left -= run;
      continue;
    }
    size_t n = tl_utf8_len(p, left);
    if (n == 0) {
      fputs("\xEF\xBF\xBD", out); /* U+FFFD */
      n = 1;
    } else if (n > 1) { /* C1 and bidi controls are dropped, as md_put drops them */
      if (!tl_control_len(p, n))
        fwrite(p, 1, n, out);
    } else {
      switch (*p) {
      case '&':
        fputs("&amp;", out);
        break;
      case '<':
        fputs("&lt;", out);
        break;
      case '>':
        fputs("&gt;", out);
        break;
      case '"':
        fputs("&quot;", out);
        break;
      case '\'':
        fputs("&#39;", out);
        break;
      default: /* a control: the run took every other ASCII byte */
        break;
      }
    }
    p += n;
    left -= n;
  }
}

/* Writes s as Markdown text; escape puts a backslash before the
 * punctuation that Markdown or HTML would read inline. */
static void md_put(FILE *out, const char *s, int escape) {
  /* For inline text (tl never starts a line with user text): characters
   * that open Markdown or HTML constructs inline are escaped. '#', '.', '-',
   * '+' and '()' only mean something at the start of a line or after '](',
   * so they stay as they are and numbers and names read cleanly. Control
   * characters (C0, DEL, C1) are dropped and bytes that are not UTF-8 become
   * U+FFFD, so a page shown in a terminal cannot drive it. */
  const unsigned char *p = (const unsigned char *)s;
  size_t left = strlen(s);
  while (left) {
    size_t n = tl_utf8_len(p, left);
    if (n == 0) {
      fputs("\xEF\xBF\xBD", out); /* U+FFFD */
      n = 1;
    } else if (!tl_control_len(p, n)) {
      if (escape && n == 1 && strchr("\\`*_[]<>|&!~", *p))
        fputc('\\', out);
      fwrite(p, 1, n, out);
    }
    p += n;
    left -= n;
  }
}

void tl_md_escape(FILE *out, const char *s) { md_put(out, s, 1); }

void tl__md_literal(FILE *out, const char *s) { md_put(out, s, 0); }

/* ======================================================================== */
/* Numbers and lookups                                                       */

static const char *row_value(const tl_fact_row *rows, size_t n, const char *key) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(rows[i].key, key) == 0)
      return rows[i].value;
  return NULL;
}

int tl__store_failed(tl_store *store, int rc, char *err, size_t errlen) {
  if (rc == TL_ENOMEM)
    return tl_fail(err, errlen, rc, "out of memory");
  return tl_fail(err, errlen, rc, "%s", tl_store_errmsg(store));
}

const char *tl__fact(const tl_session_detail *d, const char *key) {
  return row_value(d->facts, d->fact_count, key);
}

const char *tl__tag(const tl_session_detail *d, const char *key) {
  return row_value(d->tags, d->tag_count, key);
}

void tl__call_name(const char *probe, int64_t delay_ns, char *buf, size_t len) {
  const tl_probe_about *about = tl_probe_about_find(probe);
  char d[32];
  tl_format_delay_ms(delay_ns, d, sizeof d);
  if (about && about->call)
    snprintf(buf, len, "%s(%s)", about->call, d);
  else
    snprintf(buf, len, "%s %s ms", probe, d);
}

double tl_lateness_ratio(int64_t a_ns, int64_t b_ns) {
  if (a_ns < TL_RATIO_FLOOR_NS || b_ns < TL_RATIO_FLOOR_NS)
    return 0;
  return (double)b_ns / (double)a_ns;
}

tl__unit tl__unit_for(double max_abs_ns) {
  tl__unit u = {1e6, "ms"};
  if (fabs(max_abs_ns) < 1e6) {
    u.div = 1e3;
    u.name = "\xC2\xB5s"; /* µs */
  }
  return u;
}

void tl__num(double ns, tl__unit u, char *buf, size_t len) {
  double x = ns / u.div, a = fabs(x);
  int dec = a >= 100 ? 1 : a >= 1 ? 2 : 3;
  double half = 0.5 * pow(10, -dec); /* no "-0.00" for a tiny negative */
  snprintf(buf, len, "%.*f", dec, a < half ? 0.0 : x);
}

void tl__say_time(double ns, char *buf, size_t len) {
  tl__unit u = tl__unit_for(ns);
  char v[32];
  tl__num(ns, u, v, sizeof v);
  snprintf(buf, len, "%s %s", v, u.name);
}

int tl__host_page(const char *fp, const char *ext, char *buf, size_t len) {
  size_t n = strlen(fp);
  /* An imported host ("imported:NAME", tlstore import --host) is named by
   * its name, when that is one a label could be (a safe file name). */
  if (strncmp(fp, "imported:", 9) == 0 && n < 9 + 64 && tl_label_check(fp + 9, NULL, 0) == TL_OK) {
    snprintf(buf, len, "host-imported-%s.%s", fp + 9, ext);
    return 0;
  }
  if (n == 0 || n > 64)
    return -1;
  for (size_t i = 0; i < n; i++)
    if (!isxdigit((unsigned char)fp[i]) || isupper((unsigned char)fp[i]))
      return -1;
  snprintf(buf, len, "host-%s.%s", fp, ext);
  return 0;
}

const char *tl__probe_definition(const char *probe) {
  const tl_probe_about *about = tl_probe_about_find(probe);
  if (about)
    return about->definition;
  return "a probe this version of tl does not describe.";
}

/* ======================================================================== */
/* Tables                                                                    */

struct tl__table {
  size_t cols;
  const char *const *head;
  const char *align;
  char **text;
  char **href;
  int *flags;
  size_t n, cap;
  int oom; /* a cell could not be stored: the table is incomplete */
};

tl__table *tl__table_new(size_t cols, const char *const *head, const char *align) {
  tl__table *t = calloc(1, sizeof *t);
  if (t) {
    t->cols = cols;
    t->head = head;
    t->align = align;
  }
  return t;
}

size_t tl__table_add(tl__table *t, const char *text) {
  if (t->n == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 64;
    char **a = realloc(t->text, cap * sizeof *a);
    if (a)
      t->text = a;
    char **b = a ? realloc(t->href, cap * sizeof *b) : NULL;
    if (b)
      t->href = b;
    int *f = b ? realloc(t->flags, cap * sizeof *f) : NULL;
    if (!f) {
      t->oom = 1;
      return (size_t)-1;
    }
    t->flags = f;
    t->cap = cap;
  }
  t->text[t->n] = strdup(text ? text : "");
  if (!t->text[t->n]) {
    t->oom = 1;
    return (size_t)-1;
  }
  t->href[t->n] = NULL;
  t->flags[t->n] = 0;
  return t->n++;
}

size_t tl__table_addf(tl__table *t, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return tl__table_add(t, buf);
}

void tl__table_mark(tl__table *t, size_t i, int flags) {
  if (i < t->n)
    t->flags[i] |= flags;
}

void tl__table_link(tl__table *t, size_t i, const char *href) {
  if (i < t->n && href) {
    free(t->href[i]);
    t->href[i] = strdup(href);
  }
}

size_t tl__table_rows(const tl__table *t) { return t->n / t->cols; }

const char *tl__table_cell(const tl__table *t, size_t row, size_t col) {
  size_t i = row * t->cols + col;
  return i < t->n ? t->text[i] : "";
}

static void md_head(const tl__table *t, FILE *out) {
  fputc('|', out);
  for (size_t c = 0; c < t->cols; c++) {
    fputc(' ', out);
    tl_md_escape(out, t->head[c]);
    fputs(" |", out);
  }
  fputs("\n|", out);
  for (size_t c = 0; c < t->cols; c++)
    fputs(t->align[c] == 'r' ? "--:|" : "---|", out);
  fputc('\n', out);
}

static void md_cells(const tl__table *t, FILE *out) {
  for (size_t i = 0; i < t->n; i++) {
    if (i % t->cols == 0)
      fputc('|', out);
    fputc(' ', out);
    if (t->flags[i] & TL__BEST)
      fputs("**", out);
    if (t->href[i])
      fputs(t->flags[i] & TL__IMAGE ? "![" : "[", out);
    tl_md_escape(out, t->text[i]);
    if (t->href[i])
      fprintf(out, "](%s)", t->href[i]);
    if (t->flags[i] & TL__BEST)
      fputs("**", out);
    fputs(" |", out);
    if (i % t->cols == t->cols - 1)
      fputc('\n', out);
  }
}

/* Tables of TL__FOLD_COLS columns or more fold on a phone: each row a
 * block, its first cell a line of its own and the others "header: value"
 * side by side (data-h and the stylesheet, template.c), so that the label
 * and its percentiles read without scrolling sideways. */
enum { TL__FOLD_COLS = 3 };

static void html_head(const tl__table *t, FILE *out) {
  fputs(t->cols >= TL__FOLD_COLS ? "<div class=\"scroll fold\"><table>\n<thead><tr>"
                                 : "<div class=\"scroll\"><table>\n<thead><tr>",
        out);
  for (size_t c = 0; c < t->cols; c++) {
    fputs(t->align[c] == 'r' ? "<th class=\"n\">" : "<th>", out);
    tl_html_escape(out, t->head[c]);
    fputs("</th>", out);
  }
  fputs("</tr></thead>\n<tbody>\n", out);
}

static void html_cells(const tl__table *t, FILE *out) {
  for (size_t i = 0; i < t->n; i++) {
    size_t c = i % t->cols;
    if (c == 0)
      fputs("<tr>", out);
    int best = t->flags[i] & TL__BEST;
    fprintf(out, "<td%s",
            t->align[c] == 'r' ? (best ? " class=\"n best\"" : " class=\"n\"")
                               : (best ? " class=\"best\"" : ""));
    if (t->cols >= TL__FOLD_COLS && c > 0) {
      fputs(" data-h=\"", out);
      tl_html_escape(out, t->head[c]);
      fputc('"', out);
    }
    fputc('>', out);
    if (best)
      fputs("<strong>", out);
    if (t->href[i]) {
      fputs("<a href=\"", out);
      tl_html_escape(out, t->href[i]);
      fputs("\">", out);
    }
    tl_html_escape(out, t->text[i]);
    if (t->href[i])
      fputs("</a>", out);
    if (best)
      fputs("</strong>", out);
    fputs("</td>", out);
    if (c == t->cols - 1)
      fputs("</tr>\n", out);
  }
}

void tl__table_write_head(const tl__table *t, tl_format format, FILE *out) {
  (format == TL_FORMAT_HTML ? html_head : md_head)(t, out);
}

int tl__table_write_rows(tl__table *t, tl_format format, FILE *out) {
  if (t->oom)
    return TL_ENOMEM;
  (format == TL_FORMAT_HTML ? html_cells : md_cells)(t, out);
  for (size_t i = 0; i < t->n; i++) {
    free(t->text[i]);
    free(t->href[i]);
  }
  t->n = 0;
  return TL_OK;
}

void tl__table_write_foot(const tl__table *t, tl_format format, FILE *out) {
  (void)t;
  fputs(format == TL_FORMAT_HTML ? "</tbody>\n</table></div>\n" : "\n", out);
}

int tl__table_write(const tl__table *t, tl_format format, FILE *out) {
  if (t->oom)
    return TL_ENOMEM;
  tl__table_write_head(t, format, out);
  (format == TL_FORMAT_HTML ? html_cells : md_cells)(t, out);
  tl__table_write_foot(t, format, out);
  return TL_OK;
}

void tl__table_free(tl__table *t) {
  if (!t)
    return;
  for (size_t i = 0; i < t->n; i++) {
    free(t->text[i]);
    free(t->href[i]);
  }
  free(t->text);
  free(t->href);
  free(t->flags);
  free(t);
}
