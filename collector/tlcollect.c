/* tlcollect: measures timer latency and stores every sample. Parses the
 * command line, detects the host, runs the collection and prints the
 * closing sentence; the work is in the collector library. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uv.h>

#include "tl_collect.h"

static const char usage[] =
    "Usage: tlcollect [OPTIONS]\n"
    "Measure timer latency and store every sample in the tl database.\n"
    "\n"
    "  -l, --label LABEL      environment label, e.g. vbox, macos, droplet\n"
    "                         (default: cloud, VM or 'baremetal' plus the hostname)\n"
    "  -d, --delays LIST      requested delays, comma-separated (default 0,50);\n"
    "                         a bare number is milliseconds: 0,1,50ms,1s\n"
    "  -n, --count N          samples per delay (default 1000)\n"
    "      --duration TIME    collect for TIME instead of a count: 30s, 10m, 2h\n"
    "  -p, --probe LIST       timers to measure, one after the other (default\n"
    "                         settimeout; see --list-probes); exec:CMD comes last\n"
    "      --warmup N         samples per delay measured but not stored (default 5)\n"
    "      --gap TIME         pause between samples (default 0)\n"
    "      --interval TIME    period of the periodic probe (default 1ms)\n"
    "      --concurrency N    timers in flight at once (settimeout, uv; default 1)\n"
    "      --arm-from CONTEXT where each next timer is armed (node, uv, settimeout):\n"
    "                         timer (default), immediate, io (node)\n"
    "      --browser-mode MODE what the browser probe measures: nested (default),\n"
    "                         timeout, message, raf, background\n"
    "      --cpu N            pin the measuring thread to CPU N\n"
    "      --priority N       run the measuring thread SCHED_FIFO at priority N\n"
    "      --qos CLASS        macOS: run the measuring thread in QoS class CLASS:\n"
    "                         user-interactive, user-initiated, default, utility,\n"
    "                         background\n"
    "      --mlock            lock tlcollect's memory (no page faults while timing)\n"
    "      --no-causes        read no per-sample causes (run-queue wait ...)\n"
    "      --load cpu:N|mem:N run N background CPU or memory load threads\n"
    "      --repeat N         collect N times (each a separate run of sessions)\n"
    "      --every TIME       with --repeat: start a run every TIME (e.g. 1h)\n"
    "  -t, --tag KEY=VALUE    free-form tag for the sessions (repeatable)\n"
    "      --db PATH          database file (default $TL_DB, else\n"
    "                         $XDG_DATA_HOME/tl/tl.db or ~/.local/share/tl/tl.db)\n"
    "      --dry-run          measure and print, store nothing\n"
    "  -q, --quiet            no progress and no closing summary\n"
    "      --list-probes      describe the probes and exit\n"
    "      --host-info        show what tl detects about this host, with the\n"
    "                         evidence, and exit (--json: as JSON)\n"
    "  -h, --help             show this help and exit\n"
    "  -V, --version          show the version and exit\n"
    "\n"
    "Exit status: 0 done, 1 failure, 2 usage error, 3 interrupted (samples kept).\n";

/* The options: the collection's (the plan checks them) and tlcollect's own. */
enum {
  OPT_DURATION = 256,
  OPT_WARMUP,
  OPT_GAP,
  OPT_DB,
  OPT_DRY_RUN,
  OPT_LIST_PROBES,
  OPT_INTERVAL,
  OPT_CONCURRENCY,
  OPT_CPU,
  OPT_PRIORITY,
  OPT_QOS,
  OPT_MLOCK,
  OPT_LOAD,
  OPT_REPEAT,
  OPT_EVERY,
  OPT_ARM_FROM,
  OPT_BROWSER_MODE,
  OPT_NO_CAUSES,
};
enum { OPT_HOST_INFO = 512, OPT_JSON };
static const struct option longopts[] = {
    {"label", required_argument, NULL, 'l'},
    {"delays", required_argument, NULL, 'd'},
    {"count", required_argument, NULL, 'n'},
    {"duration", required_argument, NULL, OPT_DURATION},
    {"probe", required_argument, NULL, 'p'},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"gap", required_argument, NULL, OPT_GAP},
    {"tag", required_argument, NULL, 't'},
    {"db", required_argument, NULL, OPT_DB},
    {"dry-run", no_argument, NULL, OPT_DRY_RUN},
    {"quiet", no_argument, NULL, 'q'},
    {"list-probes", no_argument, NULL, OPT_LIST_PROBES},
    {"interval", required_argument, NULL, OPT_INTERVAL},
    {"concurrency", required_argument, NULL, OPT_CONCURRENCY},
    {"cpu", required_argument, NULL, OPT_CPU},
    {"priority", required_argument, NULL, OPT_PRIORITY},
    {"qos", required_argument, NULL, OPT_QOS},
    {"mlock", no_argument, NULL, OPT_MLOCK},
    {"no-causes", no_argument, NULL, OPT_NO_CAUSES},
    {"load", required_argument, NULL, OPT_LOAD},
    {"repeat", required_argument, NULL, OPT_REPEAT},
    {"every", required_argument, NULL, OPT_EVERY},
    {"arm-from", required_argument, NULL, OPT_ARM_FROM},
    {"browser-mode", required_argument, NULL, OPT_BROWSER_MODE},
    {"host-info", no_argument, NULL, OPT_HOST_INFO},
    {"json", no_argument, NULL, OPT_JSON},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

static void on_signal(int sig) {
  (void)sig;
  tl_collect_stop();
}

static int list_probes(void) {
  size_t n;
  const tl_probe_info *p = tl_probes(&n);
  for (size_t i = 0; i < n; i++)
    printf("%-12s %s\n", p[i].name, p[i].summary);
  return TL_EXIT_OK;
}

static int show_host_info(int json) {
  tl_host *host = NULL;
  int err = tl_host_detect(&host);
  if (err) {
    tl_errorf("cannot detect the host: %s", tl_strerror(err));
    return TL_EXIT_FAILURE;
  }
  tl_host_print(host, stdout, json);
  tl_host_free(host);
  return TL_EXIT_OK; /* tl_cli_finish checks that it was written */
}

/* Detects the host, opens the database (none for a dry run) and runs the
 * checked plan; returns the exit status. */
static int collect(tl_collect_plan *plan, const char *db, const char *path, int quiet, int argc,
                   char **argv) {
  tl_host *host = NULL;
  tl_store *store = NULL;
  char *cmdline = NULL, why[TL_WHY_MAX];
  int status = TL_EXIT_FAILURE;
  int err = tl_host_detect(&host);
  if (err) {
    tl_errorf("cannot detect the host: %s", tl_strerror(err));
    goto done;
  }
  char default_label[TL_LABEL_MAX + 1];
  if (!plan->label) {
    tl_host_default_label(host, default_label, sizeof default_label);
    plan->label = default_label;
  }
  if (!plan->opts.dry_run) {
    if (!db && tl_make_parent_dir(path, why, sizeof why)) {
      tl_errorf("database %s: %s (use --db PATH or TL_DB to store elsewhere)", path, why);
      goto done;
    }
    if (tl_store_open(&store, path, 0)) {
      tl_errorf("%s", tl_store_errmsg(store));
      goto done;
    }
  }
  cmdline = tl_command_line(argc, (const char *const *)argv);
  size_t fact_count;
  const tl_fact *facts = tl_host_facts(host, &fact_count);
  tl_session_spec spec = {
      .label = plan->label,
      .command_line = cmdline ? cmdline : "tlcollect",
      .host_fingerprint = tl_host_fingerprint(host),
      .hostname = tl_host_hostname(host),
      .libuv_version = uv_version_string(),
      .facts = facts,
      .fact_count = fact_count,
  };
  plan->opts.progress = !quiet && isatty(STDERR_FILENO);
  int log_lines = !quiet && !plan->opts.progress;
  if (log_lines)
    tl_collect_log_start(plan, path);
  uint64_t started = uv_hrtime();
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);

  int64_t samples = 0;
  char errbuf[600] = "";
  err = tl_collect_plan_run(plan, store, &spec, quiet ? NULL : tl_collect_print_result,
                            (void *)plan->label, &samples, errbuf, sizeof errbuf);
  if (err)
    tl_errorf("%s", errbuf);
  status = err == TL_OK ? TL_EXIT_OK : err == TL_EINTR ? TL_EXIT_INTERRUPTED : TL_EXIT_FAILURE;
  if (log_lines)
    tl_collect_log_end(plan, err, samples, (double)(uv_hrtime() - started) / 1e9);
done:
  free(cmdline);
  tl_store_close(store);
  tl_host_free(host);
  return status;
}

static int run(int argc, char **argv) {
  /* At a file-size limit a write must fail (EFBIG) so that the sessions end
   * 'interrupted' with a one-line error, instead of SIGXFSZ killing the
   * process with its sessions left 'running'. */
  signal(SIGXFSZ, SIG_IGN);
  tl_collect_plan plan;
  tl_collect_plan_init(&plan);
  const char *db = NULL;
  int quiet = 0;
  int host_info = 0, json = 0; /* --host-info [--json] */
  char why[TL_WHY_MAX];

  opterr = 0;
  unsigned char given[TL_CLI_OPTS] = {0};
  /* --tag and --load (a cpu and a mem load) are meant to repeat. */
  static const int repeatable[] = {'t', OPT_LOAD, 0};
  int c;
  while ((c = getopt_long(argc, argv, ":l:d:n:p:t:qhV", longopts, NULL)) != -1) {
    if (tl_cli_once(longopts, c, given, repeatable))
      return TL_EXIT_USAGE;
    switch (c) {
    case OPT_DB:
      if (!*optarg)
        return tl_usage_error("--db", "empty path");
      db = optarg;
      break;
    case 'q':
      quiet = 1;
      break;
    case OPT_LIST_PROBES:
      return list_probes();
    case OPT_HOST_INFO:
      host_info = 1;
      break;
    case OPT_JSON:
      json = 1;
      break;
    case 'h':
      fputs(usage, stdout);
      return TL_EXIT_OK;
    case 'V':
      printf("tlcollect %s (libuv %s)\n", TL_VERSION, uv_version_string());
      return TL_EXIT_OK;
    case ':':
      return tl_usage_error(argv[optind - 1], "needs a value");
    case '?':
      return tl_usage_error(argv[optind - 1], "unknown option");
    default: { /* everything else is the collection's: the plan checks it */
      const char *name = tl_cli_option_name(longopts, c);
      if (tl_collect_plan_set(&plan, name, optarg, why, sizeof why)) {
        char option[64];
        snprintf(option, sizeof option, "--%s", name);
        return tl_usage_error(option, why);
      }
    }
    }
  }
  if (optind < argc)
    return tl_usage_error(argv[optind], "unexpected argument");
  if (json && !host_info)
    return tl_usage_error("--json", "goes with --host-info");
  if (host_info)
    return show_host_info(json);
  int rc = tl_collect_plan_check(&plan, why, sizeof why);
  if (rc == TL_EINVAL) {
    tl_errorf("%s (see tlcollect --help)", why);
    return TL_EXIT_USAGE;
  }
  if (rc) {
    tl_errorf("%s", why);
    return TL_EXIT_FAILURE;
  }
  char path[4096];
  int status = tl_cli_db_path(db, path, sizeof path);
  if (status)
    return status;
  return collect(&plan, db, path, quiet, argc, argv);
}

int main(int argc, char **argv) {
  tl_set_progname("tlcollect");
  /* Every line tlcollect writes to stdout (a closing sentence, --list-probes
   * ...) is checked once, at the end: one lost to a full disk is an error. */
  return tl_cli_finish(run(argc, argv));
}
