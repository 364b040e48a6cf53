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

enum { MAX_TAGS = 32 };

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
    "  -p, --probe NAME       timer to measure (default settimeout; see --list-probes)\n"
    "      --warmup N         samples per delay measured but not stored (default 5)\n"
    "      --gap TIME         pause between samples (default 0)\n"
    "  -t, --tag KEY=VALUE    free-form tag for the sessions (repeatable)\n"
    "      --db PATH          database file (default $TL_DB, else\n"
    "                         $XDG_DATA_HOME/tl/tl.db or ~/.local/share/tl/tl.db)\n"
    "      --dry-run          measure and print, store nothing\n"
    "  -q, --quiet            no progress and no closing summary\n"
    "      --list-probes      describe the probes and exit\n"
    "  -h, --help             show this help and exit\n"
    "  -V, --version          show the version and exit\n"
    "\n"
    "Exit status: 0 done, 1 failure, 2 usage error, 3 interrupted (samples kept).\n";

static void on_signal(int sig) {
  (void)sig;
  tl_collect_stop();
}

static int usage_error(const char *what, const char *why) {
  tl_errorf("%s: %s (see tlcollect --help)", what, why);
  return TL_EXIT_USAGE;
}

/* The command line as one string, each argument shell-quoted when needed, so
 * that a report can show exactly how a session was collected. */
static char *join_command_line(int argc, char **argv) {
  size_t len = 1;
  for (int i = 0; i < argc; i++)
    len += strlen(argv[i]) * 4 + 3;
  char *s = malloc(len), *p = s;
  if (!s)
    return NULL;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    int plain = *a != '\0';
    for (const char *c = a; *c; c++)
      if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.,:=/+@%", *c))
        plain = 0;
    if (i)
      *p++ = ' ';
    if (plain) {
      p += sprintf(p, "%s", a);
      continue;
    }
    *p++ = '\'';
    for (const char *c = a; *c; c++) {
      if (*c == '\'')
        p += sprintf(p, "'\\''");
      else
        *p++ = *c;
    }
    *p++ = '\'';
  }
  *p = '\0';
  return s;
}

static int list_probes(void) {
  size_t n;
  const tl_probe_info *p = tl_probes(&n);
  for (size_t i = 0; i < n; i++)
    printf("%-12s %s\n", p[i].name, p[i].summary);
  return TL_EXIT_OK;
}

int main(int argc, char **argv) {
  tl_set_progname("tlcollect");
  enum { OPT_DURATION = 256, OPT_WARMUP, OPT_GAP, OPT_DB, OPT_DRY_RUN, OPT_LIST_PROBES };
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
  int quiet = 0, have_count = 0, have_duration = 0;
  int64_t v;
  char why[TL_WHY_MAX];
  int status = TL_EXIT_USAGE;

  opterr = 0;
  unsigned char given[512] = {0};
  int c;
  while ((c = getopt_long(argc, argv, ":l:d:n:p:t:qhV", longopts, NULL)) != -1) {
    /* A value given twice is a mistake, not "the last one wins". */
    for (const struct option *o = longopts; o->name; o++)
      if (o->val == c && o->has_arg && c != 't' && given[c]++) {
        char name[40];
        snprintf(name, sizeof name, "--%s", o->name);
        return usage_error(name, "given twice");
      }
    switch (c) {
    case 'l':
      if (label)
        return usage_error("--label", "given twice");
      if (tl_label_check(optarg, why, sizeof why))
        return usage_error("--label", why);
      label = optarg;
      break;
    case 'd':
      delays = optarg;
      break;
    case 'n':
      if (tl_int_parse(optarg, 1, 1000000000, &v, why, sizeof why))
        return usage_error("--count", why);
      opts.count = v;
      have_count = 1;
      break;
    case OPT_DURATION:
      if (tl_duration_parse(optarg, 1000000000LL, 366LL * 86400 * 1000000000LL, &v, why,
                            sizeof why))
        return usage_error("--duration", why);
      if (v <= 0)
        return usage_error("--duration", "must be longer than 0");
      opts.duration_ns = v;
      have_duration = 1;
      break;
    case 'p':
      if (!tl_probe_find(optarg))
        return usage_error("--probe", "unknown probe (see tlcollect --list-probes)");
      opts.probe = optarg;
      break;
    case OPT_WARMUP:
      if (tl_int_parse(optarg, 0, 1000000, &v, why, sizeof why))
        return usage_error("--warmup", why);
      opts.warmup = (int32_t)v;
      break;
    case OPT_GAP:
      if (tl_duration_parse(optarg, 1000000LL, 3600LL * 1000000000LL, &v, why, sizeof why))
        return usage_error("--gap", why);
      opts.gap_ns = v;
      break;
    case 't': {
      if (tag_count == MAX_TAGS)
        return usage_error("--tag", "too many tags (at most 32)");
      /* tl_tag_parse checks the lengths before it copies into the buffer. */
      if (tl_tag_parse(optarg, tag_bufs[tag_count], &tag_keys[tag_count], &tag_values[tag_count],
                       why, sizeof why))
        return usage_error("--tag", why);
      for (size_t i = 0; i < tag_count; i++)
        if (strcmp(tag_keys[i], tag_keys[tag_count]) == 0)
          return usage_error("--tag", "the same key is given twice");
      tag_count++;
      break;
    }
    case OPT_DB:
      if (!*optarg)
        return usage_error("--db", "empty path");
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
    case 'h':
      fputs(usage, stdout);
      return TL_EXIT_OK;
    case 'V':
      printf("tlcollect %s (libuv %s)\n", TL_VERSION, uv_version_string());
      return TL_EXIT_OK;
    case ':':
      return usage_error(argv[optind - 1], "needs a value");
    default:
      return usage_error(argv[optind - 1], "unknown option");
    }
  }
  if (optind < argc)
    return usage_error(argv[optind], "unexpected argument");
  if (have_count && have_duration)
    return usage_error("--count", "give --count or --duration, not both");
  if (!have_count && !have_duration)
    opts.count = 1000;

  /* Delays: whole milliseconds for the libuv probes. */
  static char delay_copy[4096];
  char *items[TL_MAX_DELAYS];
  size_t n_items = 0;
  if (strlen(delays) >= sizeof delay_copy)
    return usage_error("--delays", "list is too long");
  strcpy(delay_copy, delays);
  if (tl_list_split(delay_copy, items, TL_MAX_DELAYS, &n_items, why, sizeof why))
    return usage_error("--delays", why);
  const tl_probe_info *probe = tl_probe_find(opts.probe);
  for (size_t i = 0; i < n_items; i++) {
    if (tl_duration_parse(items[i], 1000000LL, 24LL * 3600 * 1000000000LL, &v, why, sizeof why))
      return usage_error("--delays", why);
    if (probe->ms_only && v % 1000000)
      return usage_error("--delays", "this probe takes whole milliseconds");
    for (size_t k = 0; k < i; k++)
      if (opts.delays_ns[k] == v)
        return usage_error("--delays", "the same delay is given twice");
    opts.delays_ns[i] = v;
  }
  opts.delay_count = n_items;

  char path[4096];
  if (db)
    snprintf(path, sizeof path, "%s", db);
  else if (tl_store_default_path(path, sizeof path)) {
    tl_errorf("no default database path: HOME is not set; use --db PATH or TL_DB");
    return TL_EXIT_FAILURE;
  }

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
    if (!db && tl_store_make_parent(path, why, sizeof why)) {
      tl_errorf("%s (use --db PATH or TL_DB to store elsewhere)", why);
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

  cmdline = join_command_line(argc, argv);
  char run_uuid[37];
  {
    /* The run UUID only groups sessions; a session's own UUID is made by the
     * store. */
    uint64_t t = uv_hrtime();
    snprintf(run_uuid, sizeof run_uuid, "%08x-%04x-4%03x-8%03x-%012llx", (unsigned)getpid(),
             (unsigned)(t >> 48) & 0xffff, (unsigned)(t >> 36) & 0xfff, (unsigned)(t >> 24) & 0xfff,
             (unsigned long long)(t & 0xffffffffffffULL));
  }
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

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);

  tl_collect_result results[TL_MAX_DELAYS];
  char errbuf[600] = "";
  err = tl_collect_run(store, &spec, &opts, results, errbuf, sizeof errbuf);
  if (!quiet) {
    char line[1024];
    tl_collect_summary(opts.probe, results, opts.delay_count, 90, line, sizeof line);
    printf("%s: %s\n", label, line);
  }
  if (err == TL_EINTR) {
    tl_errorf("interrupted: the samples measured so far are stored, session marked "
              "'interrupted'");
    status = TL_EXIT_INTERRUPTED;
  } else if (err) {
    tl_errorf("%s", errbuf);
    status = TL_EXIT_FAILURE;
  } else {
    status = TL_EXIT_OK;
  }

done:
  free(cmdline);
  tl_store_close(store);
  tl_host_free(host);
  return status;
}
