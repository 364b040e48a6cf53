/* tlreport: compares labels from the tl database and writes the result.
 * Parses the command line, builds the comparison with the report library
 * and renders it. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tl_report.h"

static const char usage[] =
    "Usage: tlreport [OPTIONS]\n"
    "Compare timer latency across labels from the tl database.\n"
    "\n"
    "  -c, --compare LIST     labels to compare, comma-separated (default: all)\n"
    "      --probe NAME       only sessions of this probe\n"
    "      --delay TIME       only sessions of this requested delay (ms by default)\n"
    "      --since DATE       only sessions started on or after DATE (YYYY-MM-DD)\n"
    "      --until DATE       only sessions started before DATE\n"
    "      --host HOST        only sessions of this hostname or fingerprint prefix\n"
    "      --tag KEY=VALUE    only sessions with this tag (repeatable)\n"
    "      --percentiles LIST percentiles to show (default 50,90,99)\n"
    "  -o, --output FILE      write to FILE instead of standard output\n"
    "      --db PATH          database file (default $TL_DB, else\n"
    "                         $XDG_DATA_HOME/tl/tl.db or ~/.local/share/tl/tl.db)\n"
    "  -h, --help             show this help and exit\n"
    "  -V, --version          show the version and exit\n"
    "\n"
    "Exit status: 0 done, 1 failure (including a filter that matches nothing),\n"
    "2 usage error.\n";

enum { MAX_TAGS = 32, MAX_LABELS = 64 };

static int usage_error(const char *what, const char *why) {
  tl_errorf("%s: %s (see tlreport --help)", what, why);
  return TL_EXIT_USAGE;
}

int main(int argc, char **argv) {
  tl_set_progname("tlreport");
  enum { OPT_PROBE = 256, OPT_DELAY, OPT_SINCE, OPT_UNTIL, OPT_HOST, OPT_TAG, OPT_PCTS, OPT_DB };
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
      {"db", required_argument, NULL, OPT_DB},
      {"help", no_argument, NULL, 'h'},
      {"version", no_argument, NULL, 'V'},
      {NULL, 0, NULL, 0},
  };
  tl_compare_opts opts;
  tl_compare_opts_init(&opts);
  static char label_buf[4096], pct_buf[512];
  static char tag_bufs[MAX_TAGS][TL_TAG_KEY_MAX + TL_TAG_VALUE_MAX + 2];
  char *labels[MAX_LABELS];
  const char *tag_keys[MAX_TAGS], *tag_values[MAX_TAGS];
  const char *db = NULL, *output = NULL;
  char why[TL_WHY_MAX];
  int64_t v;

  opterr = 0;
  unsigned char given[512] = {0};
  int c;
  while ((c = getopt_long(argc, argv, ":c:o:hV", longopts, NULL)) != -1) {
    /* A value given twice is a mistake, not "the last one wins". */
    for (const struct option *o = longopts; o->name; o++)
      if (o->val == c && o->has_arg && c != OPT_TAG && given[c]++) {
        char name[40];
        snprintf(name, sizeof name, "--%s", o->name);
        return usage_error(name, "given twice");
      }
    switch (c) {
    case 'c':
      if (opts.label_count)
        return usage_error("--compare", "given twice");
      if (strlen(optarg) >= sizeof label_buf)
        return usage_error("--compare", "list is too long");
      strcpy(label_buf, optarg);
      if (tl_list_split(label_buf, labels, MAX_LABELS, &opts.label_count, why, sizeof why))
        return usage_error("--compare", why);
      for (size_t i = 0; i < opts.label_count; i++)
        if (tl_label_check(labels[i], why, sizeof why))
          return usage_error("--compare", why);
      opts.labels = (const char *const *)labels;
      break;
    case OPT_PROBE:
      if (tl_label_check(optarg, why, sizeof why))
        return usage_error("--probe", "not a probe name");
      opts.filter.probe = optarg;
      break;
    case OPT_DELAY:
      if (tl_duration_parse(optarg, 1000000LL, 24LL * 3600 * 1000000000LL, &v, why, sizeof why))
        return usage_error("--delay", why);
      opts.filter.delay_ns = v;
      break;
    case OPT_SINCE:
    case OPT_UNTIL:
      if (tl_date_parse(optarg, &v, why, sizeof why))
        return usage_error(c == OPT_SINCE ? "--since" : "--until", why);
      *(c == OPT_SINCE ? &opts.filter.since_ns : &opts.filter.until_ns) = v;
      break;
    case OPT_HOST:
      if (!*optarg || strlen(optarg) > 255)
        return usage_error("--host", "must be 1 to 255 characters");
      opts.filter.host = optarg;
      break;
    case OPT_TAG: {
      size_t n = opts.filter.tag_count;
      if (n == MAX_TAGS)
        return usage_error("--tag", "too many tags (at most 32)");
      if (tl_tag_parse(optarg, tag_bufs[n], &tag_keys[n], &tag_values[n], why, sizeof why))
        return usage_error("--tag", why);
      opts.filter.tag_keys = tag_keys;
      opts.filter.tag_values = tag_values;
      opts.filter.tag_count = n + 1;
      break;
    }
    case OPT_PCTS: {
      char *items[TL_MAX_PCTS];
      size_t n;
      if (strlen(optarg) >= sizeof pct_buf)
        return usage_error("--percentiles", "list is too long");
      strcpy(pct_buf, optarg);
      if (tl_list_split(pct_buf, items, TL_MAX_PCTS, &n, why, sizeof why))
        return usage_error("--percentiles", why);
      for (size_t i = 0; i < n; i++) {
        char *end;
        double p = strtod(items[i], &end);
        if (*end || end == items[i] || !(p > 0 && p <= 100))
          return usage_error("--percentiles", "each must be a number above 0 and at most 100");
        opts.pcts[i] = p;
      }
      opts.pct_count = n;
      break;
    }
    case 'o':
      if (!*optarg)
        return usage_error("--output", "empty path");
      output = optarg;
      break;
    case OPT_DB:
      if (!*optarg)
        return usage_error("--db", "empty path");
      db = optarg;
      break;
    case 'h':
      fputs(usage, stdout);
      return TL_EXIT_OK;
    case 'V':
      printf("tlreport %s\n", TL_VERSION);
      return TL_EXIT_OK;
    case ':':
      return usage_error(argv[optind - 1], "needs a value");
    default:
      return usage_error(argv[optind - 1], "unknown option");
    }
  }
  if (optind < argc)
    return usage_error(argv[optind], "unexpected argument");
  if (opts.filter.since_ns && opts.filter.until_ns && opts.filter.since_ns >= opts.filter.until_ns)
    return usage_error("--since", "must be before --until");

  char path[4096];
  if (db)
    snprintf(path, sizeof path, "%s", db);
  else if (tl_store_default_path(path, sizeof path)) {
    tl_errorf("no default database path: HOME is not set; use --db PATH or TL_DB");
    return TL_EXIT_FAILURE;
  }
  tl_store *store = NULL;
  int status = TL_EXIT_FAILURE;
  tl_comparison cmp;
  memset(&cmp, 0, sizeof cmp);
  char err[1024];
  FILE *out = NULL;
  if (tl_store_open(&store, path, TL_STORE_READONLY)) {
    tl_errorf("%s", tl_store_errmsg(store));
    goto done;
  }
  if (tl_compare(store, &opts, &cmp, err, sizeof err)) {
    tl_errorf("%s", err);
    goto done;
  }
  out = output ? fopen(output, "w") : stdout;
  if (!out) {
    tl_errorf("cannot write %s: %m", output);
    goto done;
  }
  if (tl_render_markdown(&cmp, out) == TL_OK && fflush(out) == 0)
    status = TL_EXIT_OK;
  else
    tl_errorf("writing the report failed: %m");
done:
  if (out && out != stdout && fclose(out) != 0 && status == TL_EXIT_OK) {
    tl_errorf("writing %s failed: %m", output);
    status = TL_EXIT_FAILURE;
  }
  tl_comparison_free(&cmp);
  tl_store_close(store);
  return status;
}
