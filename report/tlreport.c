/* tlreport: compares labels from the tl database and writes the result.
 * Parses the command line into the report library's arguments
 * (tl_report_option), which build the comparison and render it as
 * Markdown, HTML or JSON, to standard output, to a file (-o) or as a static
 * site (--site), or check it for regressions (--check). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

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
    "      --site DIR         write a static HTML site into DIR (with --format md,\n"
    "                         a Markdown one, charts as SVG files beside)\n"
    "      --force            replace files that tlreport did not write\n"
    "      --skip-damaged     leave out sessions whose samples fail verification,\n"
    "                         and say so on the page or before --check's findings\n"
    "                         (default: an error)\n"
    "      --timestamp        say on the page when it was made (off: same input,\n"
    "                         same bytes)\n"
    "      --check            instead of a page, check for regressions: every label\n"
    "                         against --baseline, every latest session against its\n"
    "                         earlier ones; exit 1 when one got worse than allowed\n"
    "      --max-regression P with --check: the worsening of lateness allowed,\n"
    "                         10% or 0.1 (default 10%)\n"
    "      --db PATH          database file (default $TL_DB, else\n"
    "                         $XDG_DATA_HOME/tl/tl.db or ~/.local/share/tl/tl.db),\n"
    "                         or a server: postgresql://USER@HOST/DATABASE\n"
    "  -h, --help             show this help and exit\n"
    "  -V, --version          show the version and exit\n"
    "\n"
    "Exit status: 0 done, 1 failure (including a filter that matches nothing,\n"
    "a file tlreport did not write or a regression --check found), 2 usage\n"
    "error.\n";

/* Every option but --db, --help and --version is the report library's
 * (tl_report_option), by name. */
enum { OPT_OTHER = 256, OPT_DB = 300, OPT_TAG };
static const struct option longopts[] = {
    {"compare", required_argument, NULL, 'c'},
    {"probe", required_argument, NULL, OPT_OTHER + 1},
    {"delay", required_argument, NULL, OPT_OTHER + 2},
    {"since", required_argument, NULL, OPT_OTHER + 3},
    {"until", required_argument, NULL, OPT_OTHER + 4},
    {"host", required_argument, NULL, OPT_OTHER + 5},
    {"tag", required_argument, NULL, OPT_TAG},
    {"percentiles", required_argument, NULL, OPT_OTHER + 6},
    {"output", required_argument, NULL, 'o'},
    {"format", required_argument, NULL, 'f'},
    {"last", required_argument, NULL, OPT_OTHER + 7},
    {"baseline", required_argument, NULL, OPT_OTHER + 8},
    {"by", required_argument, NULL, OPT_OTHER + 9},
    {"site", required_argument, NULL, OPT_OTHER + 10},
    {"force", no_argument, NULL, OPT_OTHER + 11},
    {"timestamp", no_argument, NULL, OPT_OTHER + 12},
    {"check", no_argument, NULL, OPT_OTHER + 13},
    {"max-regression", required_argument, NULL, OPT_OTHER + 14},
    {"skip-damaged", no_argument, NULL, OPT_OTHER + 15},
    {"db", required_argument, NULL, OPT_DB},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

/* The command line into a; *db receives --db. Returns the exit status when
 * there is nothing more to do (help, version, a usage error), else -1. */
static int parse(int argc, char **argv, tl_report_args *a, const char **db) {
  static const int repeatable[] = {OPT_TAG, 0};
  unsigned char given[TL_CLI_OPTS] = {0};
  char why[TL_WHY_MAX];
  int c;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":c:o:f:hV", longopts, NULL)) != -1) {
    if (tl_cli_once(longopts, c, given, repeatable))
      return TL_EXIT_USAGE;
    const char *name = tl_cli_option_name(longopts, c);
    if (c == 'h') {
      fputs(usage, stdout);
      return TL_EXIT_OK;
    } else if (c == 'V') {
      printf("tlreport %s\n", TL_VERSION);
      return TL_EXIT_OK;
    } else if (c == ':') {
      return tl_usage_error(argv[optind - 1], "needs a value");
    } else if (c == OPT_DB) {
      if (!*optarg)
        return tl_usage_error("--db", "empty path");
      *db = optarg;
    } else if (!*name) {
      return tl_usage_error(argv[optind - 1], "unknown option");
    } else if (tl_report_option(a, name, optarg, why, sizeof why) < 0) {
      return tl_cli_option_error(name, why);
    }
  }
  if (optind < argc)
    return tl_usage_error(argv[optind], "unexpected argument");
  const char *bad = tl_report_args_check(a, why, sizeof why);
  return bad ? tl_usage_error(bad, why) : -1;
}

static int run(int argc, char **argv) {
  static tl_report_args a;
  tl_report_args_init(&a);
  const char *db = NULL;
  int status = parse(argc, argv, &a, &db);
  if (status >= 0)
    return status;
  char path[4096];
  if ((status = tl_cli_db_path(db, path, sizeof path)) != 0)
    return status;
  tl_store *store = NULL;
  if (tl_store_open(&store, path, TL_STORE_READONLY)) {
    tl_errorf("%s", tl_store_errmsg(store));
    tl_store_close(store);
    return TL_EXIT_FAILURE;
  }
  char err[1024] = "";
  int usage_error;
  int rc = tl_report_run(store, &a, stdout, &usage_error, err, sizeof err);
  tl_store_close(store);
  if (usage_error)
    return tl_usage_error("--by", err);
  /* --check: exit 1 when a label got worse than allowed, as for any
   * failure, so a scheduled job notices; the findings say which. */
  if (rc == TL_CHECK_REGRESSED)
    return TL_EXIT_FAILURE;
  if (rc && !ferror(stdout)) /* a write error: tl_cli_finish says why */
    tl_errorf("%s", err);
  return rc ? TL_EXIT_FAILURE : TL_EXIT_OK;
}

int main(int argc, char **argv) {
  tl_heap_huge_pages(); /* it reads a database and exits */
  tl_set_progname("tlreport");
  return tl_cli_finish(run(argc, argv));
}
