/* tlcollect: measures timer latency and stores every sample. Parses the
 * command line, detects the host, runs the collection and prints the
 * closing sentence; the work is in the collector library. */
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <uv.h>

#include "tl_collect.h"

enum { MAX_TAGS = 32, MAX_PROBES = 8 };

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

static void on_signal(int sig) {
  (void)sig;
  tl_collect_stop();
}

/* One line on stderr, prefixed with the UTC time: what tlcollect writes
 * instead of progress when stderr is not a terminal (cron, systemd, a log
 * file), so that a log shows when each run started and how it ended. */
static void log_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void log_line(const char *fmt, ...) {
  char stamp[32], text[1200];
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  tl_date_format((int64_t)now.tv_sec * 1000000000LL, stamp, sizeof stamp);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  fprintf(stderr, "%s %s: ", stamp, tl_progname());
  tl_fput_safe(stderr, text);
  fputc('\n', stderr);
}

/* --probe LIST split in place: comma-separated names, except that exec:CMD
 * takes the rest of the list (a command may contain commas). */
static int split_probes(char *s, char **items, size_t *n, char *why, size_t whylen) {
  *n = 0;
  while (*s) {
    if (*n == MAX_PROBES) {
      snprintf(why, whylen, "at most %d probes", MAX_PROBES);
      return -1;
    }
    char *item = s;
    int trailing_comma = 0;
    if (strncmp(s, "exec:", 5) == 0) {
      s += strlen(s);
    } else {
      s += strcspn(s, ",");
      if (*s) {
        *s++ = '\0';
        trailing_comma = !*s;
      }
    }
    if (!*item || trailing_comma) {
      snprintf(why, whylen, "empty probe name in the list");
      return -1;
    }
    if (!tl_probe_find(item)) {
      snprintf(why, whylen, "unknown probe (see tlcollect --list-probes)");
      return -1;
    }
    for (size_t k = 0; k < *n; k++)
      if (strcmp(items[k], item) == 0) {
        snprintf(why, whylen, "the same probe is given twice");
        return -1;
      }
    items[(*n)++] = item;
  }
  if (*n == 0) {
    snprintf(why, whylen, "empty probe name");
    return -1;
  }
  return 0;
}

/* The options one probe of the list runs with: the periodic probe measures
 * its interval rather than the delays, and only it takes an interval. */
static void probe_opts(const tl_collect_opts *base, const char *probe, tl_collect_opts *o) {
  *o = *base;
  o->probe = probe;
  o->interval_ns = 0;
  tl_collect_opts fixed = *o;
  fixed.interval_ns = base->interval_ns;
  int64_t d = tl_collect_fixed_delay(&fixed);
  if (d) {
    o->interval_ns = d;
    o->delays_ns[0] = d;
    o->delay_count = 1;
  }
}

/* A bare number is seconds for --duration and --every (as it always was)
 * but milliseconds for --delays, --gap and --interval: said once, so that
 * nobody collects for 50 s who meant 50 ms. */
static void warn_bare_seconds(const char *opt, const char *arg) {
  if (arg[strspn(arg, "0123456789.")] == '\0')
    tl_warnf("%s %s means %ss; write the unit to say so, since a bare number in --delays, "
             "--gap and --interval is milliseconds",
             opt, arg, arg);
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
  return fflush(stdout) == 0 ? TL_EXIT_OK : TL_EXIT_FAILURE;
}

int main(int argc, char **argv) {
  tl_set_progname("tlcollect");
  /* At a file-size limit a write must fail (EFBIG) so that the sessions end
   * 'interrupted' with a one-line error, instead of SIGXFSZ killing the
   * process with its sessions left 'running'. */
  signal(SIGXFSZ, SIG_IGN);
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
  tl_collect_opts opts;
  tl_collect_opts_init(&opts);
  const char *label = NULL, *db = NULL, *delays = "0,50";
  const char *tag_keys[MAX_TAGS], *tag_values[MAX_TAGS];
  static char tag_bufs[MAX_TAGS][TL_TAG_KEY_MAX + TL_TAG_VALUE_MAX + 2];
  size_t tag_count = 0;
  int quiet = 0, have_count = 0, have_duration = 0, have_delays = 0;
  const char *probe_list = "settimeout";
  int64_t repeat = 1, every_ns = 0;
  int host_info = 0, json = 0; /* --host-info [--json] */
  int64_t v;
  char why[TL_WHY_MAX];
  int status = TL_EXIT_USAGE;

  opterr = 0;
  unsigned char given[TL_CLI_OPTS] = {0};
  /* --tag and --load (a cpu and a mem load) are meant to repeat. */
  static const int repeatable[] = {'t', OPT_LOAD, 0};
  int c;
  while ((c = getopt_long(argc, argv, ":l:d:n:p:t:qhV", longopts, NULL)) != -1) {
    if (tl_cli_once(longopts, c, given, repeatable))
      return TL_EXIT_USAGE;
    switch (c) {
    case 'l':
      if (label)
        return tl_usage_error("--label", "given twice");
      if (tl_label_check(optarg, why, sizeof why))
        return tl_usage_error("--label", why);
      label = optarg;
      break;
    case 'd':
      delays = optarg;
      have_delays = 1;
      break;
    case 'n':
      if (tl_int_parse(optarg, 1, 1000000000, &v, why, sizeof why))
        return tl_usage_error("--count", why);
      opts.count = v;
      have_count = 1;
      break;
    case OPT_DURATION:
      if (tl_duration_parse(optarg, 1000000000LL, 366LL * 86400 * 1000000000LL, &v, why,
                            sizeof why))
        return tl_usage_error("--duration", why);
      warn_bare_seconds("--duration", optarg);
      if (v <= 0)
        return tl_usage_error("--duration", "must be longer than 0");
      opts.duration_ns = v;
      have_duration = 1;
      break;
    case 'p':
      probe_list = optarg; /* checked after the loop, with the other options */
      break;
    case OPT_INTERVAL:
      if (tl_duration_parse(optarg, 1000000LL, 10LL * 1000000000LL, &v, why, sizeof why))
        return tl_usage_error("--interval", why);
      if (v < 10000)
        return tl_usage_error("--interval", "at least 10us");
      opts.interval_ns = v;
      break;
    case OPT_CONCURRENCY:
      if (tl_int_parse(optarg, 1, 10000, &v, why, sizeof why))
        return tl_usage_error("--concurrency", why);
      opts.concurrency = (int32_t)v;
      break;
    case OPT_CPU:
      if (tl_int_parse(optarg, 0, 65535, &v, why, sizeof why))
        return tl_usage_error("--cpu", why);
      opts.cpu = (int32_t)v;
      break;
    case OPT_PRIORITY:
      if (tl_int_parse(optarg, 1, 99, &v, why, sizeof why))
        return tl_usage_error("--priority", why);
      opts.priority = (int32_t)v;
      break;
    case OPT_QOS: /* checked with the other options, against this OS */
      opts.qos = optarg;
      break;
    case OPT_MLOCK:
      opts.mlock = 1;
      break;
    case OPT_LOAD: {
      int32_t *slot = strncmp(optarg, "cpu:", 4) == 0   ? &opts.load_cpu
                      : strncmp(optarg, "mem:", 4) == 0 ? &opts.load_mem
                                                        : NULL;
      if (!slot)
        return tl_usage_error("--load", "expected cpu:N or mem:N");
      if (*slot)
        return tl_usage_error("--load", "the same kind of load is given twice");
      if (tl_int_parse(optarg + 4, 1, 1024, &v, why, sizeof why))
        return tl_usage_error("--load", why);
      *slot = (int32_t)v;
      break;
    }
    case OPT_REPEAT:
      if (tl_int_parse(optarg, 1, 1000000, &v, why, sizeof why))
        return tl_usage_error("--repeat", why);
      repeat = v;
      break;
    case OPT_EVERY:
      if (tl_duration_parse(optarg, 1000000000LL, 366LL * 86400 * 1000000000LL, &v, why,
                            sizeof why))
        return tl_usage_error("--every", why);
      warn_bare_seconds("--every", optarg);
      if (v < 1000000000LL)
        return tl_usage_error("--every", "at least 1s");
      every_ns = v;
      break;
    case OPT_ARM_FROM:
      if (strcmp(optarg, "timer") && strcmp(optarg, "immediate") && strcmp(optarg, "io"))
        return tl_usage_error("--arm-from", "expected timer, immediate or io");
      opts.arm_from = optarg;
      break;
    case OPT_BROWSER_MODE:
      opts.browser_mode = optarg; /* checked with the probe it goes with */
      break;
    case OPT_WARMUP:
      if (tl_int_parse(optarg, 0, 1000000, &v, why, sizeof why))
        return tl_usage_error("--warmup", why);
      opts.warmup = (int32_t)v;
      break;
    case OPT_GAP:
      if (tl_duration_parse(optarg, 1000000LL, 3600LL * 1000000000LL, &v, why, sizeof why))
        return tl_usage_error("--gap", why);
      opts.gap_ns = v;
      break;
    case 't': {
      if (tag_count == MAX_TAGS)
        return tl_usage_error("--tag", "too many tags (at most 32)");
      /* tl_tag_parse checks the lengths before it copies into the buffer. */
      if (tl_tag_parse(optarg, tag_bufs[tag_count], &tag_keys[tag_count], &tag_values[tag_count],
                       why, sizeof why))
        return tl_usage_error("--tag", why);
      for (size_t i = 0; i < tag_count; i++)
        if (strcmp(tag_keys[i], tag_keys[tag_count]) == 0)
          return tl_usage_error("--tag", "the same key is given twice");
      tag_count++;
      break;
    }
    case OPT_DB:
      if (!*optarg)
        return tl_usage_error("--db", "empty path");
      db = optarg;
      break;
    case OPT_DRY_RUN:
      opts.dry_run = 1;
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
    default:
      return tl_usage_error(argv[optind - 1], "unknown option");
    }
  }
  if (optind < argc)
    return tl_usage_error(argv[optind], "unexpected argument");
  if (json && !host_info)
    return tl_usage_error("--json", "goes with --host-info");
  if (host_info)
    return show_host_info(json);
  if (have_count && have_duration)
    return tl_usage_error("--count", "give --count or --duration, not both");
  if (!have_count && !have_duration)
    opts.count = 1000;

  /* Delays: whole milliseconds for the libuv probes. */
  static char delay_copy[4096];
  char *items[TL_MAX_DELAYS];
  size_t n_items = 0;
  if (strlen(delays) >= sizeof delay_copy)
    return tl_usage_error("--delays", "list is too long");
  strcpy(delay_copy, delays);
  if (tl_list_split(delay_copy, items, TL_MAX_DELAYS, &n_items, why, sizeof why))
    return tl_usage_error("--delays", why);
  for (size_t i = 0; i < n_items; i++) {
    if (tl_delay_parse(items[i], &v, why, sizeof why))
      return tl_usage_error("--delays", why);
    for (size_t k = 0; k < i; k++)
      if (opts.delays_ns[k] == v)
        return tl_usage_error("--delays", "the same delay is given twice");
    opts.delays_ns[i] = v;
  }
  opts.delay_count = n_items;

  /* Probes, each checked with the options it will run with, before any
   * database is opened. */
  static char probe_copy[4096];
  char *probes[MAX_PROBES];
  size_t n_probes = 0;
  if (strlen(probe_list) >= sizeof probe_copy)
    return tl_usage_error("--probe", "list is too long");
  strcpy(probe_copy, probe_list);
  if (split_probes(probe_copy, probes, &n_probes, why, sizeof why))
    return tl_usage_error("--probe", why);
  int any_periodic = 0, all_periodic = 1;
  for (size_t i = 0; i < n_probes; i++) {
    tl_collect_opts po;
    probe_opts(&opts, probes[i], &po);
    int periodic = po.interval_ns > 0;
    any_periodic |= periodic;
    all_periodic &= periodic;
    int rc = tl_collect_opts_check(&po, why, sizeof why);
    if (rc == TL_EINVAL) {
      tl_errorf("%s (see tlcollect --help)", why);
      return TL_EXIT_USAGE;
    }
    if (rc) {
      tl_errorf("%s", why);
      return TL_EXIT_FAILURE;
    }
  }
  if (opts.interval_ns && !any_periodic)
    return tl_usage_error("--interval", "only the periodic probe takes an interval");
  if (have_delays && all_periodic)
    return tl_usage_error("--delays", "the periodic probe measures --interval, not --delays");
  if (every_ns && repeat < 2)
    return tl_usage_error("--every", "needs --repeat N with N of at least 2");

  char path[4096];
  int path_status = tl_cli_db_path(db, path, sizeof path);
  if (path_status)
    return path_status;

  tl_host *host = NULL;
  tl_store *store = NULL;
  char *cmdline = NULL;
  int err = tl_host_detect(&host);
  if (err) {
    tl_errorf("cannot detect the host: %s", tl_strerror(err));
    status = TL_EXIT_FAILURE;
    goto done;
  }
  char default_label[TL_LABEL_MAX + 1];
  if (!label) {
    tl_host_default_label(host, default_label, sizeof default_label);
    label = default_label;
  }
  if (!opts.dry_run) {
    if (!db && tl_make_parent_dir(path, why, sizeof why)) {
      tl_errorf("database %s: %s (use --db PATH or TL_DB to store elsewhere)", path, why);
      status = TL_EXIT_FAILURE;
      goto done;
    }
    err = tl_store_open(&store, path, 0);
    if (err) {
      tl_errorf("%s", tl_store_errmsg(store));
      status = TL_EXIT_FAILURE;
      goto done;
    }
  }

  cmdline = tl_command_line(argc, (const char *const *)argv);
  char run_uuid[37];
  size_t fact_count;
  const tl_fact *facts = tl_host_facts(host, &fact_count);
  tl_session_spec spec = {
      .run_uuid = run_uuid,
      .label = label,
      .command_line = cmdline ? cmdline : "tlcollect",
      .host_fingerprint = tl_host_fingerprint(host),
      .hostname = tl_host_hostname(host),
      .libuv_version = uv_version_string(),
      .tag_keys = tag_keys,
      .tag_values = tag_values,
      .tag_count = tag_count,
      .facts = facts,
      .fact_count = fact_count,
  };
  opts.progress = !quiet && isatty(STDERR_FILENO);
  int log_lines = !quiet && !opts.progress;
  if (log_lines) {
    char list[TL_MAX_DELAYS * 24] = "", amount[64];
    for (size_t i = 0, at = 0; i < opts.delay_count && at < sizeof list; i++) {
      char d[32];
      tl_format_delay_ms(opts.delays_ns[i], d, sizeof d);
      at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", i ? "," : "", d);
    }
    if (opts.count) {
      snprintf(amount, sizeof amount, "%lld samples each", (long long)opts.count);
    } else {
      char d[32];
      tl_format_delay_ms(opts.duration_ns / 1000, d, sizeof d); /* ms of us: seconds */
      snprintf(amount, sizeof amount, "for %s s", d);
    }
    log_line("start: label %s, %s %s, delays %s ms, %s, database %s", label,
             n_probes > 1 ? "probes" : "probe", probe_list, list, amount,
             opts.dry_run ? "none (dry run)" : path);
  }
  uint64_t started = uv_hrtime();

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);

  /* --repeat N --every T: run r starts at first + r * T, or at once when the
   * previous run took longer than that; each run is a new run UUID. */
  uint64_t first = uv_hrtime();
  int64_t total_samples = 0;
  status = TL_EXIT_OK;
  for (int64_t r = 0; r < repeat && status == TL_EXIT_OK; r++) {
    if (r > 0 && tl_collect_wait_until(first + (uint64_t)(r * every_ns)) == TL_EINTR) {
      tl_errorf("interrupted while waiting for the next run; %lld of %lld runs are stored",
                (long long)r, (long long)repeat);
      status = TL_EXIT_INTERRUPTED;
      break;
    }
    tl_uuid4(run_uuid);
    for (size_t i = 0; i < n_probes && status == TL_EXIT_OK; i++) {
      tl_collect_opts po;
      probe_opts(&opts, probes[i], &po);
      tl_collect_result results[TL_MAX_DELAYS];
      memset(results, 0, sizeof results);
      char errbuf[600] = "";
      err = tl_collect_run(store, &spec, &po, results, errbuf, sizeof errbuf);
      int64_t measured = 0;
      for (size_t k = 0; k < po.delay_count; k++)
        measured += results[k].samples;
      total_samples += measured;
      if (!quiet && measured) {
        char line[1024];
        tl_collect_summary(po.probe, results, po.delay_count, 90, line, sizeof line);
        printf("%s: ", label);
        tl_fput_safe(stdout, line);
        putchar('\n');
        fflush(stdout);
      }
      if (err == TL_EINTR) {
        tl_errorf("interrupted: the samples measured so far are stored, session marked "
                  "'interrupted'");
        status = TL_EXIT_INTERRUPTED;
      } else if (err) {
        tl_errorf("%s", errbuf);
        status = TL_EXIT_FAILURE;
      }
    }
  }
  if (log_lines) {
    double secs = (double)(uv_hrtime() - started) / 1e9;
    if (status == TL_EXIT_OK || status == TL_EXIT_INTERRUPTED)
      log_line("end: %s, %lld samples %s in %.1f s",
               status == TL_EXIT_OK ? "complete" : "interrupted", (long long)total_samples,
               opts.dry_run ? "measured" : "stored", secs);
    else
      log_line("end: failed after %.1f s (%lld samples measured)", secs, (long long)total_samples);
  }

done:
  free(cmdline);
  tl_store_close(store);
  tl_host_free(host);
  return status;
}
