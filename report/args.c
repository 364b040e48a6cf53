/* args.c: tlreport's command line as the report library takes it: each
 * option's value validated into the comparison, page and check options
 * (tl_report_option), the options that do not go together
 * (tl_report_args_check), and the one call that makes what they ask for
 * (tl_report_run). The program only feeds it getopt's options and prints
 * the errors. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "report_internal.h"

void tl_report_args_init(tl_report_args *a) {
  memset(a, 0, sizeof *a);
  tl_compare_opts_init(&a->compare);
  tl_page_opts_init(&a->page);
  tl_check_opts_init(&a->check);
  tl_filter_args_init(&a->filter);
}

/* A comma-separated list option into buf, split into items. */
static int split_option(const char *v, char *buf, size_t len, char **items, size_t max, size_t *n,
                        char *why, size_t whylen) {
  if (strlen(v) >= len)
    return tl_fail(why, whylen, TL_EINVAL, "list is too long");
  strcpy(buf, v);
  return tl_list_split(buf, items, max, n, why, whylen);
}

static int pcts_option(tl_report_args *a, const char *v, char *why, size_t whylen) {
  char *items[TL_MAX_PCTS];
  size_t n;
  if (split_option(v, a->pct_buf, sizeof a->pct_buf, items, TL_MAX_PCTS, &n, why, whylen))
    return TL_EINVAL;
  for (size_t i = 0; i < n; i++) {
    char *end;
    double p = strtod(items[i], &end);
    if (*end || end == items[i] || !(p >= TL_PCT_MIN && p <= 100))
      return tl_fail(why, whylen, TL_EINVAL, "each must be a number from 0.000000001 to 100");
    a->compare.pcts[i] = p;
  }
  a->compare.pct_count = n;
  return TL_OK;
}

static int format_option(tl_report_args *a, const char *v, char *why, size_t whylen) {
  if (a->format_given)
    return tl_fail(why, whylen, TL_EINVAL, "given twice");
  a->format_given = 1;
  if (strcmp(v, "md") == 0 || strcmp(v, "markdown") == 0)
    a->page.format = TL_FORMAT_MD;
  else if (strcmp(v, "html") == 0)
    a->page.format = TL_FORMAT_HTML;
  else if (strcmp(v, "json") == 0)
    a->page.format = TL_FORMAT_JSON;
  else
    return tl_fail(why, whylen, TL_EINVAL, "must be md, html or json");
  return TL_OK;
}

int tl_report_option(tl_report_args *a, const char *name, const char *v, char *why, size_t whylen) {
  int64_t n;
  int rc = tl_filter_option(&a->filter, name, v, why, whylen);
  if (rc != 0)
    return rc; /* --probe, --delay, --since, --until, --host, --tag */
  if (strcmp(name, "compare") == 0) {
    if (a->compare.label_count)
      return tl_fail(why, whylen, TL_EINVAL, "given twice");
    rc = split_option(v, a->label_buf, sizeof a->label_buf, a->labels, TL_REPORT_LABELS_MAX,
                      &a->compare.label_count, why, whylen);
    a->compare.labels = (const char *const *)a->labels;
  } else if (strcmp(name, "by") == 0) {
    if (!*v || strlen(v) > 200)
      return tl_fail(why, whylen, TL_EINVAL, "must be 1 to 200 characters (see --by help)");
    a->compare.by = v;
  } else if (strcmp(name, "last") == 0) {
    rc = tl_int_parse(v, 1, 1000000, &n, why, whylen);
    a->compare.last = n;
  } else if (strcmp(name, "baseline") == 0) {
    if (a->compare.baseline)
      return tl_fail(why, whylen, TL_EINVAL, "given twice");
    if (!*v || strlen(v) > 255)
      return tl_fail(why, whylen, TL_EINVAL, "must be 1 to 255 characters");
    a->compare.baseline = v;
  } else if (strcmp(name, "format") == 0) {
    rc = format_option(a, v, why, whylen);
  } else if (strcmp(name, "site") == 0 || strcmp(name, "output") == 0) {
    if (!*v)
      return tl_fail(why, whylen, TL_EINVAL, "empty path");
    *(name[0] == 's' ? &a->site : &a->output) = v;
  } else if (strcmp(name, "force") == 0) {
    a->force = 1;
  } else if (strcmp(name, "skip-damaged") == 0) {
    a->skip_damaged = 1;
  } else if (strcmp(name, "check") == 0) {
    a->checking = 1;
  } else if (strcmp(name, "max-regression") == 0) {
    rc = tl_regression_parse(v, &a->check.max_regression, why, whylen);
    a->max_regression_given = 1;
  } else if (strcmp(name, "timestamp") == 0) {
    a->page.generated_ns = (int64_t)time(NULL) * 1000000000LL;
  } else if (strcmp(name, "percentiles") == 0) {
    rc = pcts_option(a, v, why, whylen);
  } else {
    return 0;
  }
  return rc ? TL_EINVAL : 1;
}

/* The option to name in a usage error, with why. */
static const char *refuse(const char *option, char *why, size_t whylen, const char *reason) {
  tl_fail(why, whylen, TL_EINVAL, "%s", reason);
  return option;
}

const char *tl_report_args_check(tl_report_args *a, char *why, size_t whylen) {
  tl_compare_opts *o = &a->compare;
  o->filter = a->filter.f;
  int to_file = a->site || a->output || a->format_given;
  if (o->filter.since_ns && o->filter.until_ns && o->filter.since_ns >= o->filter.until_ns)
    return refuse("--since", why, whylen, "must be before --until");
  if (a->max_regression_given && !a->checking)
    return refuse("--max-regression", why, whylen, "goes with --check");
  if (a->checking && to_file)
    return refuse("--check", why, whylen,
                  "prints its findings; it does not go with --site, --output or --format");
  if (a->site && a->output)
    return refuse("--site", why, whylen, "writes a folder; it does not go with --output");
  if (a->site && a->format_given && a->page.format == TL_FORMAT_JSON)
    return refuse("--site", why, whylen,
                  "writes HTML or Markdown; it does not go with --format json");
  if (a->site && !a->format_given)
    a->page.format = TL_FORMAT_HTML; /* a site is HTML unless --format md asks for Markdown */
  /* Labels are checked here; --by values once the groups are known. */
  for (size_t i = 0; i < o->label_count && !o->by; i++)
    if (tl_label_check(a->labels[i], why, whylen))
      return "--compare";
  if (o->baseline && !o->by && tl_label_check(o->baseline, why, whylen))
    return "--baseline";
  a->by_help = o->by && strcmp(o->by, "help") == 0;
  if (a->by_help && (a->checking || to_file || o->label_count || o->baseline))
    return refuse("--by help", why, whylen, "lists the keys; it goes with filters only");
  if (o->baseline && o->label_count && !o->by) {
    size_t i = 0;
    while (i < o->label_count && strcmp(a->labels[i], o->baseline) != 0)
      i++;
    if (i == o->label_count)
      return refuse("--baseline", why, whylen, "must be one of the --compare labels");
  }
  return NULL;
}

/* One making of what a asks for: the page, or the site. With
 * --skip-damaged it may be made again (tl_report_skipping_damaged). The
 * page is written as it is made, never held whole in memory: with -o into
 * a temporary file beside its place (file), for standard output into a
 * scratch file copied out once the page is whole, so that a failure prints
 * nothing (or, where no scratch file can be made, into memory: buf). */
typedef struct {
  tl_store *store;
  const tl_report_args *a;
  tl_page_opts page; /* a->page, with the sessions left out */
  FILE *out;         /* where the page is being made, or NULL */
  tl_report_file *file;
  char *buf; /* the page in memory (in_memory) */
  size_t len;
  int in_memory;
  char *err;
  size_t errlen;
  tl_chart_files charts; /* a Markdown page's charts, written beside it (-o) */
  char stem[256];
} making;

static int make_site(void *arg) {
  making *m = arg;
  const tl_report_args *a = m->a;
  return tl_site_write(m->store, &a->compare, &m->page, a->site, a->force, NULL, m->err, m->errlen);
}

/* One check for tl_report_skipping_damaged: its findings into memory, so
 * that the sessions left out can be said before them. */
typedef struct {
  tl_store *store;
  const tl_check_opts *o;
  char *lines;
  size_t len;
  char *err;
  size_t errlen;
} checking;

static int make_check(void *arg) {
  checking *k = arg;
  free(k->lines);
  k->lines = NULL;
  k->len = 0;
  FILE *f = open_memstream(&k->lines, &k->len);
  if (!f)
    return tl_fail(k->err, k->errlen, TL_ENOMEM, "out of memory");
  int rc = tl_report_check(k->store, k->o, f, k->err, k->errlen);
  if (fclose(f) && (rc == TL_OK || rc == TL_CHECK_REGRESSED))
    rc = tl_fail(k->err, k->errlen, TL_ENOMEM, "out of memory");
  return rc;
}

/* --check; with --skip-damaged, a session whose samples fail verification
 * is left out and the check made again, and a line before the findings
 * says which and why, as the page's "Read with care" does. */
static int check_report(tl_store *store, const tl_report_args *a, FILE *out, char *err,
                        size_t errlen) {
  tl_check_opts o = a->check;
  o.compare = a->compare;
  o.baseline = a->compare.baseline;
  if (!a->skip_damaged)
    return tl_report_check(store, &o, out, err, errlen);
  tl_left_out_list left = {NULL, 0};
  checking k = {store, &o, NULL, 0, err, errlen};
  int rc = tl_report_skipping_damaged(store, make_check, &k, &left, err, errlen);
  for (size_t i = 0; i < left.count && (rc == TL_OK || rc == TL_CHECK_REGRESSED); i++) {
    const tl_left_out *x = &left.items[i];
    char date[32];
    tl_date_format(x->started_ns, date, sizeof date);
    fputs("left out: session ", out);
    tl_fput_safe(out, x->uuid);
    fputs(" of ", out);
    tl_fput_safe(out, x->label);
    fprintf(out, " (started %s): its samples failed verification: ", date);
    tl_fput_safe(out, x->why);
    fputc('\n', out);
  }
  if ((rc == TL_OK || rc == TL_CHECK_REGRESSED) && k.len)
    fwrite(k.lines, 1, k.len, out);
  if ((rc == TL_OK || rc == TL_CHECK_REGRESSED) && ferror(out))
    rc = tl_fail(err, errlen, TL_EIO, "writing the check failed");
  free(k.lines);
  tl_left_out_free(&left);
  return rc;
}

/* A file in $TMPDIR (or /tmp) that no name reaches, or NULL. */
static FILE *scratch_open(void) {
  const char *dir = getenv("TMPDIR");
  char path[4096];
  if (snprintf(path, sizeof path, "%s/tlreport-XXXXXX", dir && *dir ? dir : "/tmp") >=
      (int)sizeof path)
    return NULL;
  int fd = mkstemp(path);
  if (fd < 0)
    return NULL;
  unlink(path);
  FILE *f = fdopen(fd, "w+");
  if (!f)
    close(fd);
  return f;
}

/* Drops what a making before wrote of the page. */
static void page_drop(making *m) {
  if (m->out && !m->file)
    fclose(m->out);
  tl_report_file_discard(m->file);
  m->out = NULL;
  m->file = NULL;
  free(m->buf);
  m->buf = NULL;
  m->len = 0;
  m->in_memory = 0;
}

/* Where the page is made: a->output's temporary file, else a scratch file,
 * else memory. */
static int page_open(making *m) {
  if (m->file)
    return tl_report_file_restart(m->file)
               ? tl_fail(m->err, m->errlen, TL_EIO, "%s: %s", m->a->output, strerror(errno))
               : TL_OK;
  if (m->a->output) {
    m->file = tl_report_file_open(m->a->output, m->a->force, &m->out, m->err, m->errlen);
    return m->file ? TL_OK : TL_EIO;
  }
  page_drop(m);
  m->out = scratch_open();
  if (!m->out)
    m->in_memory = (m->out = open_memstream(&m->buf, &m->len)) != NULL;
  return m->out ? TL_OK : tl_fail(m->err, m->errlen, TL_ENOMEM, "out of memory");
}

/* TL_OK when every byte of the page so far reached its file; otherwise the
 * failure with its reason (a full disk is no fault of the page). */
static int page_written(making *m) {
  int e = tl__flush_failure(m->out);
  if (!e)
    return TL_OK;
  return tl_fail(m->err, m->errlen, e == ENOSPC ? TL_EFULL : TL_EIO, "writing %s failed: %s",
                 m->a->output ? m->a->output : "the page to a temporary file", strerror(e));
}

/* The page of the comparison a asks for, written as it is made where
 * nothing shows it until it is whole. */
static int make_page(void *arg) {
  making *m = arg;
  tl_comparison cmp;
  tl_stats stats;
  memset(&stats, 0, sizeof stats);
  tl_chart_files_free(&m->charts);
  /* Every format carries the statistics ("How sure is this?"), worked out
   * as the comparison reads; JSON the rank test of every pair too. */
  int rc = tl__compare_with_stats(m->store, &m->a->compare, m->page.format == TL_FORMAT_JSON, &cmp,
                                  &stats, m->err, m->errlen);
  if (rc)
    return rc;
  tl_page_opts page = m->page;
  page.stats = &stats;
  if (page.format == TL_FORMAT_MD && m->a->output)
    page.charts = &m->charts;
  if (!rc)
    rc = page_open(m);
  if (!rc) {
    rc = tl_render(&cmp, &page, m->out);
    int written = page_written(m);
    if (written)
      rc = written;
    else if (rc)
      tl_fail(m->err, m->errlen, rc, "making the page failed: %s", tl_strerror(rc));
  }
  tl_stats_free(&stats);
  tl_comparison_free(&cmp);
  return rc;
}

/* The page, made whole, to out. */
static int copy_out(making *m, FILE *out) {
  if (m->in_memory) {
    fclose(m->out);
    m->out = NULL;
    m->in_memory = 0;
    if (fwrite(m->buf, 1, m->len, out) != m->len)
      return tl_fail(m->err, m->errlen, tl_write_failed(out, errno), "writing the report failed");
    return TL_OK;
  }
  char chunk[1 << 16];
  size_t n;
  rewind(m->out);
  while ((n = fread(chunk, 1, sizeof chunk, m->out)) > 0)
    if (fwrite(chunk, 1, n, out) != n)
      return tl_fail(m->err, m->errlen, tl_write_failed(out, errno), "writing the report failed");
  if (ferror(m->out))
    return tl_fail(m->err, m->errlen, TL_EIO, "reading the page back failed: %s", strerror(errno));
  return TL_OK;
}

/* The page or the site, then the page to a->output or out. */
static int write_report(tl_store *store, const tl_report_args *a, FILE *out, char *err,
                        size_t errlen) {
  tl_left_out_list left = {NULL, 0};
  making m = {store, a, a->page, NULL, NULL, NULL, 0, 0, err, errlen, {NULL, NULL, 0}, ""};
  m.page.left_out = &left;
  if (a->output) {
    /* page.md's charts are page-1.svg ... beside it. */
    const char *slash = strrchr(a->output, '/'), *name = slash ? slash + 1 : a->output;
    size_t n = strlen(name);
    if (n > 3 && strcmp(name + n - 3, ".md") == 0)
      n -= 3;
    snprintf(m.stem, sizeof m.stem, "%.*s", (int)n, name);
    m.charts.stem = m.stem;
  }
  int (*make)(void *) = a->site ? make_site : make_page;
  int rc =
      a->skip_damaged ? tl_report_skipping_damaged(store, make, &m, &left, err, errlen) : make(&m);
  if (!rc && m.file) {
    rc = tl_report_file_place(m.file, &m.charts, err, errlen);
    m.file = NULL;
    m.out = NULL;
  } else if (!rc && !a->site) {
    rc = copy_out(&m, out);
  }
  page_drop(&m);
  tl_chart_files_free(&m.charts);
  tl_left_out_free(&left);
  return rc;
}

int tl_report_run(tl_store *store, const tl_report_args *a, FILE *out, int *usage, char *err,
                  size_t errlen) {
  *usage = 0;
  if (a->by_help)
    return tl_by_help(store, &a->compare.filter, out, err, errlen);
  if (a->compare.by && tl_by_check(store, a->compare.by, &a->compare.filter, err, errlen)) {
    *usage = 1;
    return TL_EINVAL;
  }
  if (a->checking)
    return check_report(store, a, out, err, errlen);
  return write_report(store, a, out, err, errlen);
}
