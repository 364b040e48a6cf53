/* tlreport: compares labels from the tl database and writes the result.
 * Parses the command line, builds the comparison with the report library
 * and renders it as Markdown, HTML or JSON, to standard output, to a file
 * (-o) or as a static site (--site). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tl_report.h"

static const char usage[] =
    "Usage: tlreport [OPTIONS]\n"
    "       tlreport --site DIR [OPTIONS]\n"
    "Compare timer latency across labels from the tl database.\n"
    "\n"
    "  -c, --compare LIST     labels to compare, comma-separated (default: all);\n"
    "                         with --by, the values to show, in order\n"
    "      --by KEY           group by a host fact or tag instead of by label:\n"
    "                         memory, cpus, vm, cloud, kernel ..., tag:NAME, or\n"
    "                         two crossed (memory,cpus); --by help lists them\n"
    "      --baseline LABEL   also show every label (or --by value) as a ratio\n"
    "                         of this one\n"
    "      --probe NAME       only sessions of this probe\n"
    "      --delay TIME       only sessions of this requested delay (ms by default)\n"
    "      --since DATE       only sessions started on or after DATE (YYYY-MM-DD)\n"
    "      --until DATE       only sessions started before DATE\n"
    "      --host HOST        only sessions of this hostname or fingerprint prefix\n"
    "      --tag KEY=VALUE    only sessions with this tag (repeatable)\n"
    "      --last N           only the newest N sessions of each label, probe and delay\n"
    "      --percentiles LIST percentiles to show (default 50,90,99,99.9; max always)\n"
    "  -f, --format FORMAT    md (default), html or json\n"
    "  -o, --output FILE      write to FILE instead of standard output\n"
    "      --site DIR         write a static HTML site into DIR\n"
    "      --force            replace files that tlreport did not write\n"
    "      --timestamp        say on the page when it was made (off: same input,\n"
    "                         same bytes)\n"
    "      --db PATH          database file (default $TL_DB, else\n"
    "                         $XDG_DATA_HOME/tl/tl.db or ~/.local/share/tl/tl.db),\n"
    "                         or a server: postgresql://USER@HOST/DATABASE\n"
    "  -h, --help             show this help and exit\n"
    "  -V, --version          show the version and exit\n"
    "\n"
    "Exit status: 0 done, 1 failure (including a filter that matches nothing\n"
    "or a file tlreport did not write), 2 usage error.\n";

enum { MAX_LABELS = 64 };

static int run(int argc, char **argv) {
  enum {
    OPT_PROBE = 256,
    OPT_DELAY,
    OPT_SINCE,
    OPT_UNTIL,
    OPT_HOST,
    OPT_TAG,
    OPT_PCTS,
    OPT_DB,
    OPT_LAST,
    OPT_BASELINE,
    OPT_SITE,
    OPT_FORCE,
    OPT_TIMESTAMP,
    OPT_CHECK,
    OPT_MAX_REGRESSION,
    OPT_BY,
  };
  static const struct option longopts[] = {
      {"compare", required_argument, NULL, 'c'},
      {"probe", required_argument, NULL, OPT_PROBE},
      {"delay", required_argument, NULL, OPT_DELAY},
      {"since", required_argument, NULL, OPT_SINCE},
      {"until", required_argument, NULL, OPT_UNTIL},
      {"host", required_argument, NULL, OPT_HOST},
      {"tag", required_argument, NULL, OPT_TAG},
      {"percentiles", required_argument, NULL, OPT_PCTS},
      {"output", required_argument, NULL, 'o'},
      {"format", required_argument, NULL, 'f'},
      {"last", required_argument, NULL, OPT_LAST},
      {"baseline", required_argument, NULL, OPT_BASELINE},
      {"by", required_argument, NULL, OPT_BY},
      {"site", required_argument, NULL, OPT_SITE},
      {"force", no_argument, NULL, OPT_FORCE},
      {"timestamp", no_argument, NULL, OPT_TIMESTAMP},
      {"check", no_argument, NULL, OPT_CHECK},
      {"max-regression", required_argument, NULL, OPT_MAX_REGRESSION},
      {"db", required_argument, NULL, OPT_DB},
      {"help", no_argument, NULL, 'h'},
      {"version", no_argument, NULL, 'V'},
      {NULL, 0, NULL, 0},
  };
  tl_compare_opts opts;
  tl_compare_opts_init(&opts);
  static char label_buf[4096], pct_buf[512];
  static tl_filter_args filter; /* --probe, --delay, --since, --until, --host, --tag */
  tl_filter_args_init(&filter);
  char *labels[MAX_LABELS];
  const char *db = NULL, *output = NULL, *site = NULL;
  tl_page_opts page;
  tl_page_opts_init(&page);
  int force = 0, format_given = 0;
  int checking = 0, max_regression_given = 0; /* --check [--max-regression P] */
  tl_check_opts check;
  tl_check_opts_init(&check);
  char why[TL_WHY_MAX];
  int64_t v;

  opterr = 0;
  unsigned char given[TL_CLI_OPTS] = {0};
  static const int repeatable[] = {OPT_TAG, 0};
  int c;
  while ((c = getopt_long(argc, argv, ":c:o:f:hV", longopts, NULL)) != -1) {
    if (tl_cli_once(longopts, c, given, repeatable))
      return TL_EXIT_USAGE;
    switch (c) {
    case 'c':
      if (opts.label_count)
        return tl_usage_error("--compare", "given twice");
      if (strlen(optarg) >= sizeof label_buf)
        return tl_usage_error("--compare", "list is too long");
      strcpy(label_buf, optarg);
      if (tl_list_split(label_buf, labels, MAX_LABELS, &opts.label_count, why, sizeof why))
        return tl_usage_error("--compare", why);
      opts.labels = (const char *const *)labels;
      break;
    case OPT_BY:
      if (!*optarg || strlen(optarg) > 200)
        return tl_usage_error("--by", "must be 1 to 200 characters (see --by help)");
      opts.by = optarg;
      break;
    case OPT_LAST:
      if (tl_int_parse(optarg, 1, 1000000, &v, why, sizeof why))
        return tl_usage_error("--last", why);
      opts.last = v;
      break;
    case OPT_BASELINE:
      if (opts.baseline)
        return tl_usage_error("--baseline", "given twice");
      if (!*optarg || strlen(optarg) > 255)
        return tl_usage_error("--baseline", "must be 1 to 255 characters");
      opts.baseline = optarg;
      break;
    case 'f':
      if (format_given)
        return tl_usage_error("--format", "given twice");
      format_given = 1;
      if (strcmp(optarg, "md") == 0 || strcmp(optarg, "markdown") == 0)
        page.format = TL_FORMAT_MD;
      else if (strcmp(optarg, "html") == 0)
        page.format = TL_FORMAT_HTML;
      else if (strcmp(optarg, "json") == 0)
        page.format = TL_FORMAT_JSON;
      else
        return tl_usage_error("--format", "must be md, html or json");
      break;
    case OPT_SITE:
      if (!*optarg)
        return tl_usage_error("--site", "empty path");
      site = optarg;
      break;
    case OPT_FORCE:
      force = 1;
      break;
    case OPT_CHECK:
      checking = 1;
      break;
    case OPT_MAX_REGRESSION:
      if (tl_regression_parse(optarg, &check.max_regression, why, sizeof why))
        return tl_usage_error("--max-regression", why);
      max_regression_given = 1;
      break;
    case OPT_TIMESTAMP:
      page.generated_ns = (int64_t)time(NULL) * 1000000000LL;
      break;
    case OPT_PROBE:
    case OPT_DELAY:
    case OPT_SINCE:
    case OPT_UNTIL:
    case OPT_HOST:
    case OPT_TAG: {
      const char *name = tl_cli_option_name(longopts, c);
      if (tl_filter_option(&filter, name, optarg, why, sizeof why) < 0) {
        char opt[32];
        snprintf(opt, sizeof opt, "--%s", name);
        return tl_usage_error(opt, why);
      }
      break;
    }
    case OPT_PCTS: {
      char *items[TL_MAX_PCTS];
      size_t n;
      if (strlen(optarg) >= sizeof pct_buf)
        return tl_usage_error("--percentiles", "list is too long");
      strcpy(pct_buf, optarg);
      if (tl_list_split(pct_buf, items, TL_MAX_PCTS, &n, why, sizeof why))
        return tl_usage_error("--percentiles", why);
      for (size_t i = 0; i < n; i++) {
        char *end;
        double p = strtod(items[i], &end);
        if (*end || end == items[i] || !(p > 0 && p <= 100))
          return tl_usage_error("--percentiles", "each must be a number above 0 and at most 100");
        opts.pcts[i] = p;
      }
      opts.pct_count = n;
      break;
    }
    case 'o':
      if (!*optarg)
        return tl_usage_error("--output", "empty path");
      output = optarg;
      break;
    case OPT_DB:
      if (!*optarg)
        return tl_usage_error("--db", "empty path");
      db = optarg;
      break;
    case 'h':
      fputs(usage, stdout);
      return TL_EXIT_OK;
    case 'V':
      printf("tlreport %s\n", TL_VERSION);
      return TL_EXIT_OK;
    case ':':
      return tl_usage_error(argv[optind - 1], "needs a value");
    default:
      return tl_usage_error(argv[optind - 1], "unknown option");
    }
  }
  if (optind < argc)
    return tl_usage_error(argv[optind], "unexpected argument");
  opts.filter = filter.f;
  if (opts.filter.since_ns && opts.filter.until_ns && opts.filter.since_ns >= opts.filter.until_ns)
    return tl_usage_error("--since", "must be before --until");
  if (max_regression_given && !checking)
    return tl_usage_error("--max-regression", "goes with --check");
  if (checking && (site || output || format_given))
    return tl_usage_error("--check", "prints its findings; it does not go with --site, --output "
                                     "or --format");
  if (site && output)
    return tl_usage_error("--site", "writes a folder; it does not go with --output");
  if (site && format_given && page.format != TL_FORMAT_HTML)
    return tl_usage_error("--site", "writes HTML; it does not go with --format md or json");
  /* Labels are checked here; --by values once the groups are known. */
  for (size_t i = 0; i < opts.label_count && !opts.by; i++)
    if (tl_label_check(labels[i], why, sizeof why))
      return tl_usage_error("--compare", why);
  if (opts.baseline && !opts.by && tl_label_check(opts.baseline, why, sizeof why))
    return tl_usage_error("--baseline", why);
  int by_help = opts.by && strcmp(opts.by, "help") == 0;
  if (by_help && (checking || site || output || format_given || opts.label_count || opts.baseline))
    return tl_usage_error("--by help", "lists the keys; it goes with filters only");
  if (opts.baseline && opts.label_count && !opts.by) {
    size_t i = 0;
    while (i < opts.label_count && strcmp(labels[i], opts.baseline) != 0)
      i++;
    if (i == opts.label_count)
      return tl_usage_error("--baseline", "must be one of the --compare labels");
  }

  char path[4096];
  int path_status = tl_cli_db_path(db, path, sizeof path);
  if (path_status)
    return path_status;
  tl_store *store = NULL;
  int status = TL_EXIT_FAILURE;
  tl_comparison cmp;
  memset(&cmp, 0, sizeof cmp);
  tl_stats stats;
  memset(&stats, 0, sizeof stats);
  char err[1024];
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = NULL;
  if (tl_store_open(&store, path, TL_STORE_READONLY)) {
    tl_errorf("%s", tl_store_errmsg(store));
    goto done;
  }
  if (by_help) {
    if (tl_by_help(store, &opts.filter, stdout, err, sizeof err) == TL_OK)
      status = TL_EXIT_OK;
    else
      tl_errorf("%s", err);
    goto done;
  }
  if (opts.by && tl_by_check(store, opts.by, &opts.filter, err, sizeof err)) {
    status = tl_usage_error("--by", err);
    goto done;
  }
  if (checking) {
    /* Exit 1 when a label got worse than allowed, as for any failure, so a
     * scheduled job notices; the findings say which. */
    check.compare = opts;
    check.baseline = opts.baseline;
    int rc = tl_report_check(store, &check, stdout, err, sizeof err);
    if (rc < 0 && !ferror(stdout)) /* a write error: tl_cli_finish says why */
      tl_errorf("%s", err);
    else if (rc >= 0)
      status = rc == TL_OK ? TL_EXIT_OK : TL_EXIT_FAILURE;
    goto done;
  }
  if (site) {
    size_t pages = 0;
    if (tl_site_write(store, &opts, &page, site, force, &pages, err, sizeof err)) {
      tl_errorf("%s", err);
      goto done;
    }
    status = TL_EXIT_OK;
    goto done;
  }
  if (tl_compare(store, &opts, &cmp, err, sizeof err)) {
    tl_errorf("%s", err);
    goto done;
  }
  /* Every format carries the statistics ("How sure is this?"). */
  if (tl_stats_compute(store, &cmp, &stats, err, sizeof err)) {
    tl_errorf("%s", err);
    goto done;
  }
  page.stats = &stats;
  /* The page is made in memory first, so that a failure writes nothing. */
  mem = open_memstream(&buf, &len);
  if (!mem) {
    tl_errorf("out of memory");
    goto done;
  }
  int rc = tl_render(&cmp, &page, mem);
  if (fclose(mem) != 0 && rc == TL_OK)
    rc = TL_EIO;
  if (rc) {
    tl_errorf("making the page failed: %s", tl_strerror(rc));
    goto done;
  }
  if (output) {
    if (tl_report_write_file(output, buf, len, force, err, sizeof err)) {
      tl_errorf("%s", err);
      goto done;
    }
  } else {
    if (fwrite(buf, 1, len, stdout) != len) /* tl_cli_finish says why */
      tl_write_failed(stdout, errno);
  }
  status = TL_EXIT_OK;
done:
  free(buf);
  tl_stats_free(&stats);
  tl_comparison_free(&cmp);
  tl_store_close(store);
  return status;
}

int main(int argc, char **argv) {
  tl_set_progname("tlreport");
  return tl_cli_finish(run(argc, argv));
}
