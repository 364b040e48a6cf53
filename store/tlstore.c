/* tlstore: looks after the tl database. Each subcommand parses its own
 * options and calls the store library. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tl_report.h"
#include "tl_store.h"

/* The top-level help: usage_head, the commands (from the commands table at
 * the end of this file), usage_tail. */
static const char usage_head[] = "Usage: tlstore [--db PATH] COMMAND [OPTIONS]\n"
                                 "Look after the tl results database.\n"
                                 "\n"
                                 "Commands:\n";
static const char usage_tail[] =
    "\n"
    "Run tlstore COMMAND --help (or tlstore help COMMAND) for a command's options.\n"
    "\n"
    "Options:\n"
    "      --db PATH          database file, before or after the command (default\n"
    "                         $TL_DB, else $XDG_DATA_HOME/tl/tl.db or\n"
    "                         ~/.local/share/tl/tl.db), or a server:\n"
    "                         postgresql://USER@HOST/DATABASE\n"
    "  -h, --help             show this help and exit\n"
    "  -V, --version          show the version and exit\n"
    "\n"
    "Exit status: 0 done, 1 failure (check found problems), 2 usage error.\n";

static void human_bytes(int64_t n, char *buf, size_t len) {
  if (n >= 1024LL * 1024 * 1024)
    snprintf(buf, len, "%.1f GiB", (double)n / (1024.0 * 1024 * 1024));
  else if (n >= 1024 * 1024)
    snprintf(buf, len, "%.1f MiB", (double)n / (1024.0 * 1024));
  else if (n >= 1024)
    snprintf(buf, len, "%.1f KiB", (double)n / 1024.0);
  else
    snprintf(buf, len, "%lld bytes", (long long)n);
}

static int cmd_info(tl_store *store, const char *path) {
  tl_store_stats st;
  if (tl_store_info(store, &st)) {
    tl_errorf("%s", tl_store_errmsg(store));
    return TL_EXIT_FAILURE;
  }
  char size[32];
  human_bytes(st.file_bytes, size, sizeof size);
  printf("database:       ");
  tl_fput_safe(stdout, path);
  printf("\nschema version: %d (this tl: %d)\n", st.schema_version, st.schema_latest);
  printf("%s%s\n", tl_store_is_server(path) ? "size on server: " : "file size:      ", size);
  printf("hosts:          %lld\n", (long long)st.hosts);
  printf("sessions:       %lld\n", (long long)st.sessions);
  printf("samples:        %lld", (long long)st.samples);
  if (st.samples)
    printf(" (%.2f bytes each, encoded)", (double)st.sample_bytes / (double)st.samples);
  printf("\n");

  tl_label_summary *rows;
  size_t n;
  if (tl_store_label_summaries(store, &rows, &n)) {
    tl_errorf("%s", tl_store_errmsg(store));
    return TL_EXIT_FAILURE;
  }
  if (n)
    printf("\n%-24s %10s %12s  %s\n", "label", "sessions", "samples", "delays (ms)");
  for (size_t i = 0; i < n; i++) {
    const tl_label_summary *r = &rows[i];
    char delays[256] = "";
    size_t at = 0;
    for (size_t k = 0; k < r->delay_count && at < sizeof delays; k++)
      at += (size_t)snprintf(delays + at, sizeof delays - at, "%s%g", at ? "," : "",
                             (double)r->delays_ns[k] / 1e6);
    tl_fput_safe(stdout, r->label);
    printf("%*s %10lld %12lld  %s\n", (int)(strlen(r->label) < 24 ? 24 - strlen(r->label) : 0), "",
           (long long)r->sessions, (long long)r->samples, delays);
  }
  tl_label_summaries_free(rows, n);
  return TL_EXIT_OK;
}

static void print_problem(void *ctx, const char *problem) {
  (void)ctx;
  printf("problem: ");
  tl_fput_safe(stdout, problem);
  printf("\n");
}

static int cmd_check(tl_store *store) {
  int err = tl_store_check(store, print_problem, NULL);
  if (err == TL_OK) {
    printf("ok\n");
    return TL_EXIT_OK;
  }
  if (err != TL_ECORRUPT)
    tl_errorf("%s", tl_store_errmsg(store));
  else
    tl_errorf("the database has problems (listed above)");
  return TL_EXIT_FAILURE;
}

/* Opens the database for a subcommand, or says why not; NULL on failure. */
static tl_store *open_store(const char *path, int flags) {
  tl_store *store = NULL;
  int err = tl_store_open(&store, path, flags);
  if (err == TL_EREADONLY && !(flags & TL_STORE_READONLY)) {
    /* info and check only read: a write-protected database is fine. */
    tl_store_close(store);
    err = tl_store_open(&store, path, flags | TL_STORE_READONLY);
  }
  if (err == TL_OK)
    return store;
  tl_errorf("%s", tl_store_errmsg(store));
  tl_store_close(store);
  return NULL;
}

/* ======================================================================== */
/* Subcommands                                                               */

/* One option of a command: getopt_long's entry and its line of help. */
typedef struct {
  const char *name; /* the long option, without "--" */
  int val;          /* what getopt_long returns for it (OPT_*) */
  const char *arg;  /* its value as the help shows it ("DATE"); NULL: a flag */
  const char *help; /* what it does, one line */
} cmd_option;

/* A command: the one place that says how it is called, what it does and
 * which options it takes; its help and its getopt_long table are made from
 * this. run checks its own arguments (argv[0] is the command name) with
 * longopts before it opens the database at path, so a usage error touches
 * nothing; main has already answered --help and refused unknown options. */
typedef struct {
  const char *name;
  const char *args;          /* what follows the name in a usage line */
  const char *about;         /* what it does, one line, lower case */
  const cmd_option *options; /* up to {NULL}; NULL: none */
  int (*run)(const char *path, int argc, char **argv,
             const struct option *longopts); /* NULL: help, which main answers */
} command;

static int run_info(const char *path, int argc, char **argv, const struct option *longopts) {
  (void)longopts;
  if (argc > 1)
    return tl_usage_error(argv[1], "unexpected argument");
  tl_store *store = open_store(path, TL_STORE_NOCREATE);
  int status = store ? cmd_info(store, path) : TL_EXIT_FAILURE;
  tl_store_close(store);
  return status;
}

static int run_check(const char *path, int argc, char **argv, const struct option *longopts) {
  (void)longopts;
  if (argc > 1)
    return tl_usage_error(argv[1], "unexpected argument");
  tl_store *store = open_store(path, TL_STORE_NOCREATE);
  int status = store ? cmd_check(store) : TL_EXIT_FAILURE;
  tl_store_close(store);
  return status;
}

/* One label per line, for scripts and shell completion: read-only, and
 * nothing but the labels on stdout. */
static int run_labels(const char *path, int argc, char **argv, const struct option *longopts) {
  (void)longopts;
  if (argc > 1)
    return tl_usage_error(argv[1], "unexpected argument");
  tl_store *store = open_store(path, TL_STORE_READONLY);
  char **labels = NULL;
  size_t n = 0;
  int status = TL_EXIT_FAILURE;
  if (store && tl_store_labels(store, &labels, &n) == TL_OK) {
    for (size_t i = 0; i < n; i++) {
      tl_fput_safe(stdout, labels[i]);
      putchar('\n');
    }
    status = TL_EXIT_OK;
  } else if (store) {
    tl_errorf("%s", tl_store_errmsg(store));
  }
  tl_strings_free(labels, n);
  tl_store_close(store);
  return status;
}

/* One block per host: identity, sessions, then the facts that tell
 * environments apart (the keys of tlreport --by), as the latest session saw
 * them. */
static int cmd_hosts(tl_store *store) {
  tl_host_row *rows;
  size_t n;
  if (tl_store_hosts(store, &rows, &n)) {
    tl_errorf("%s", tl_store_errmsg(store));
    return TL_EXIT_FAILURE;
  }
  size_t nkeys;
  const tl_host_key *keys = tl_host_keys(&nkeys);
  for (size_t i = 0; i < n; i++) {
    const tl_host_row *r = &rows[i];
    char first[32], last[32];
    tl_date_format(r->first_seen_ns, first, sizeof first);
    tl_date_format(r->last_seen_ns, last, sizeof last);
    if (i)
      printf("\n");
    tl_fput_safe(stdout, r->fingerprint);
    printf("  ");
    tl_fput_safe(stdout, r->hostname);
    printf("  %lld session%s, %s .. %s\n", (long long)r->sessions, r->sessions == 1 ? "" : "s",
           first, last);
    for (size_t k = 0; k < nkeys; k++) {
      const char *v = tl_fact_rows_get(r->facts, r->fact_count, keys[k].fact);
      if (strcmp(keys[k].name, "hostname") == 0)
        continue; /* on the first line */
      printf("  %-12s ", keys[k].name);
      int64_t bytes;
      if (v && keys[k].kind == TL_KEY_BYTES && tl_size_parse(v, &bytes, NULL, 0) == TL_OK) {
        char size[32], cls[16];
        human_bytes(bytes, size, sizeof size);
        tl_memory_class(bytes, cls, sizeof cls);
        printf("%s (%lld bytes; size class %s)\n", size, (long long)bytes, cls);
        continue;
      }
      tl_fput_safe(stdout, v ? v : "-");
      printf("\n");
    }
  }
  if (!n)
    printf("no hosts yet\n");
  tl_host_rows_free(rows, n);
  return TL_EXIT_OK;
}

static int run_hosts(const char *path, int argc, char **argv, const struct option *longopts) {
  (void)longopts;
  if (argc > 1)
    return tl_usage_error(argv[1], "unexpected argument");
  tl_store *store = open_store(path, TL_STORE_NOCREATE | TL_STORE_READONLY);
  int status = store ? cmd_hosts(store) : TL_EXIT_FAILURE;
  tl_store_close(store);
  return status;
}

/* ======================================================================== */
/* Session filters, shared by sessions and export                            */

enum {
  OPT_LABEL = 300,
  OPT_PROBE,
  OPT_DELAY,
  OPT_SINCE,
  OPT_UNTIL,
  OPT_HOST,
  OPT_TAG,
  OPT_STATUS,
  OPT_FORMAT,
  OPT_UNIT,
  OPT_SKIP_BAD,
  OPT_BEFORE,
  OPT_START,
  OPT_FACT,
  OPT_REMOVE_PUSHED,
};

/* The filter options of sessions and export, as cmd_option entries. */
#define FILTER_OPTIONS                                                                             \
  {"label", OPT_LABEL, "L", "sessions of this label (repeatable)"},                                \
      {"probe", OPT_PROBE, "P", "sessions of this probe"},                                         \
      {"delay", OPT_DELAY, "TIME", "sessions of this requested delay (a bare number is ms)"},      \
      {"since", OPT_SINCE, "DATE", "sessions started at or after DATE (UTC)"},                     \
      {"until", OPT_UNTIL, "DATE", "sessions started before DATE (UTC)"},                          \
      {"host", OPT_HOST, "HOST", "sessions of this hostname or host fingerprint prefix"},          \
      {"tag", OPT_TAG, "KEY=VALUE", "sessions with this tag (repeatable)"}, {                      \
    "status", OPT_STATUS, "STATUS", "sessions that are running, complete or interrupted"           \
  }

/* One filter option c with value v (tl_filter_option): 1 if taken, 0 if c
 * is no filter option, or TL_EXIT_USAGE after printing the error (returned
 * negated). */
static int filter_option(tl_filter_args *a, const struct option *longopts, int c, const char *v) {
  char why[TL_WHY_MAX];
  const char *name = tl_cli_option_name(longopts, c);
  int r = tl_filter_option(a, name, v, why, sizeof why);
  if (r >= 0)
    return r;
  char opt[64];
  snprintf(opt, sizeof opt, "--%s", name);
  return -tl_usage_error(opt, why);
}

/* The short options of every command: only -h; ':' to tell a missing value
 * from an unknown option. */
#define COMMAND_SHORTOPTS ":h"

/* The usage error of an option getopt did not take. */
static int bad_option(int c, char **argv) {
  if (c == ':')
    return tl_usage_error(argv[optind - 1], "needs a value");
  if (optopt > 0 && optopt < 256 && isgraph(optopt)) {
    /* A short option, maybe one of a cluster ("-xv"): name only it. */
    char name[3] = {'-', (char)optopt, '\0'};
    return tl_usage_error(name, "unknown option");
  }
  return tl_usage_error(argv[optind - 1], "unknown option");
}

/* ======================================================================== */
/* sessions, export                                                          */

static int run_sessions(const char *path, int argc, char **argv, const struct option *longopts) {
  tl_filter_args a;
  tl_filter_args_init(&a);
  int c;
  while ((c = getopt_long(argc, argv, COMMAND_SHORTOPTS, longopts, NULL)) != -1) {
    int r = filter_option(&a, longopts, c, optarg);
    if (r < 0)
      return -r;
    if (r == 0)
      return bad_option(c, argv);
  }
  if (optind < argc)
    return tl_usage_error(argv[optind], "unexpected argument");
  tl_store *store = open_store(path, TL_STORE_READONLY);
  if (!store)
    return TL_EXIT_FAILURE;
  tl_session_list list;
  if (tl_store_sessions(store, &a.f, &list)) {
    tl_errorf("%s", tl_store_errmsg(store));
    tl_store_close(store);
    return TL_EXIT_FAILURE;
  }
  printf("%-36s  %-16s %-12s %10s  %-16s %-20s  %-11s %12s\n", "uuid", "label", "probe", "delay_ms",
         "host", "started", "status", "samples");
  for (size_t i = 0; i < list.count; i++) {
    const tl_session *x = &list.items[i];
    char when[32];
    tl_date_format(x->started_ns, when, sizeof when);
    printf("%-36s  ", x->uuid);
    tl_fput_safe(stdout, x->label);
    printf("%*s ", (int)(strlen(x->label) < 16 ? 16 - strlen(x->label) : 0), "");
    tl_fput_safe(stdout, x->probe);
    printf("%*s %10g  ", (int)(strlen(x->probe) < 12 ? 12 - strlen(x->probe) : 0), "",
           (double)x->delay_ns / 1e6);
    tl_fput_safe(stdout, x->hostname);
    printf("%*s %-20s  %-11s %12lld\n",
           (int)(strlen(x->hostname) < 16 ? 16 - strlen(x->hostname) : 0), "", when, x->status,
           (long long)x->sample_count);
  }
  tl_session_list_free(&list);
  tl_store_close(store);
  return TL_EXIT_OK;
}

static int run_export(const char *path, int argc, char **argv, const struct option *longopts) {
  tl_filter_args a;
  tl_filter_args_init(&a);
  tl_samples_format format = 0;
  int c;
  while ((c = getopt_long(argc, argv, COMMAND_SHORTOPTS, longopts, NULL)) != -1) {
    if (c == OPT_FORMAT) {
      if (tl_samples_format_parse(optarg, &format))
        return tl_usage_error("--format", "must be csv, jsonl or hgrm");
      continue;
    }
    int r = filter_option(&a, longopts, c, optarg);
    if (r < 0)
      return -r;
    if (r == 0)
      return bad_option(c, argv);
  }
  if (optind < argc)
    return tl_usage_error(argv[optind], "unexpected argument");
  if (!format)
    return tl_usage_error("--format", "missing (csv, jsonl or hgrm)");
  tl_store *store = open_store(path, TL_STORE_READONLY);
  if (!store)
    return TL_EXIT_FAILURE;
  int err;
  if (format == TL_SAMPLES_HGRM) {
    char msg[512] = "";
    err = tl_write_hgrm(store, &a.f, stdout, msg, sizeof msg);
    if (err && !ferror(stdout)) /* a write error: tl_cli_finish says why */
      tl_errorf("%s", msg);
  } else {
    err = tl_store_export(store, &a.f, format, stdout, NULL);
    if (err && !ferror(stdout))
      tl_errorf("%s", tl_store_errmsg(store));
  }
  tl_store_close(store);
  return err ? TL_EXIT_FAILURE : TL_EXIT_OK;
}

/* ======================================================================== */
/* import, merge                                                             */

static void print_bad_row(void *ctx, int64_t line, const char *why) {
  const char *file = ctx;
  fprintf(stderr, "%s: ", tl_progname());
  tl_fput_safe(stderr, file);
  fprintf(stderr, ":%lld: ", (long long)line);
  tl_fput_safe(stderr, why);
  fputc('\n', stderr);
}

static int run_import(const char *path, int argc, char **argv, const struct option *longopts) {
  tl_import_opts o;
  tl_import_opts_init(&o);
  o.format = 0;
  o.delay_ns = -1;
  const char *facts[TL_IMPORT_FACTS_MAX];
  size_t nfacts = 0;
  char why[TL_WHY_MAX];
  int c;
  while ((c = getopt_long(argc, argv, COMMAND_SHORTOPTS, longopts, NULL)) != -1) {
    switch (c) {
    case OPT_FORMAT:
      if (tl_samples_format_parse(optarg, &o.format) || o.format == TL_SAMPLES_HGRM)
        return tl_usage_error("--format", "must be csv or jsonl");
      break;
    case OPT_LABEL:
      if (tl_label_check(optarg, why, sizeof why))
        return tl_usage_error("--label", why);
      o.label = optarg;
      break;
    case OPT_PROBE:
      if (tl_probe_name_check(optarg, why, sizeof why))
        return tl_usage_error("--probe", why);
      o.probe = optarg;
      break;
    case OPT_DELAY:
      if (tl_delay_parse(optarg, &o.delay_ns, why, sizeof why))
        return tl_usage_error("--delay", why);
      break;
    case OPT_UNIT:
      if (strcmp(optarg, "ns") == 0)
        o.unit_ns = 1;
      else if (strcmp(optarg, "us") == 0)
        o.unit_ns = 1000;
      else if (strcmp(optarg, "ms") == 0)
        o.unit_ns = 1000000;
      else
        return tl_usage_error("--unit", "must be ns, us or ms");
      break;
    case OPT_HOST:
      if (tl_host_name_check(optarg, why, sizeof why))
        return tl_usage_error("--host", why);
      o.hostname = optarg;
      break;
    case OPT_SKIP_BAD:
      o.skip_bad = 1;
      break;
    case OPT_START:
      if (tl_date_parse(optarg, &o.started_ns, why, sizeof why))
        return tl_usage_error("--start", why);
      break;
    case OPT_FACT: {
      const tl_host_key *k;
      char value[TL_TAG_VALUE_MAX + 1];
      if (nfacts == TL_IMPORT_FACTS_MAX)
        return tl_usage_error("--fact", "too many facts (at most 16)");
      if (tl_host_fact_parse(optarg, &k, value, sizeof value, why, sizeof why))
        return tl_usage_error("--fact", why);
      for (size_t i = 0; i < nfacts; i++)
        if (strncmp(facts[i], optarg, strlen(k->name) + 1) == 0)
          return tl_usage_error("--fact", "the same fact given twice");
      facts[nfacts++] = optarg;
      o.facts = facts;
      o.fact_count = nfacts;
      break;
    }
    default:
      return bad_option(c, argv);
    }
  }
  if (!o.format)
    return tl_usage_error("--format", "missing (csv or jsonl)");
  if (!o.label || !o.probe || o.delay_ns < 0)
    return tl_usage_error(!o.label ? "--label" : !o.probe ? "--probe" : "--delay", "missing");
  if (optind >= argc)
    return tl_usage_error("FILE", "missing (a file name, or - for standard input)");
  if (optind + 1 < argc)
    return tl_usage_error(argv[optind + 1], "unexpected argument (one file at a time)");
  const char *file = argv[optind];
  o.source = file;
  FILE *in = strcmp(file, "-") == 0 ? stdin : fopen(file, "rb");
  if (!in) {
    tl_errorf("cannot open %s: %s (check the path)", file, strerror(errno));
    return TL_EXIT_FAILURE;
  }
  tl_store *store = open_store(path, 0);
  int status = TL_EXIT_FAILURE;
  if (store) {
    char uuid[37];
    int64_t n = 0, nbad = 0;
    if (tl_store_import(store, in, &o, print_bad_row, (void *)file, uuid, &n, &nbad)) {
      tl_errorf("%s", tl_store_errmsg(store));
    } else {
      printf("imported %lld samples into session %s", (long long)n, uuid);
      if (nbad)
        printf(" (%lld bad rows skipped)", (long long)nbad);
      printf("\n");
      status = TL_EXIT_OK;
    }
  }
  tl_store_close(store);
  if (in != stdin)
    fclose(in);
  return status;
}

static int run_merge(const char *path, int argc, char **argv, const struct option *longopts) {
  (void)longopts;
  if (argc < 2)
    return tl_usage_error("OTHER.db", "missing (the databases to merge in)");
  for (int i = 1; i < argc; i++)
    if (argv[i][0] == '-' || !argv[i][0])
      return tl_usage_error(argv[i], "unknown option (merge takes database files)");
  /* A missing file fails before the target is opened (or created). */
  for (int i = 1; i < argc; i++)
    if (access(argv[i], R_OK) != 0) {
      tl_errorf("cannot read %s: %s (check the path)", argv[i], strerror(errno));
      return TL_EXIT_FAILURE;
    }
  tl_store *store = open_store(path, 0);
  if (!store)
    return TL_EXIT_FAILURE;
  tl_merge_stats st;
  int status = TL_EXIT_OK;
  if (tl_store_merge(store, (const char *const *)argv + 1, (size_t)argc - 1, &st)) {
    tl_errorf("%s", tl_store_errmsg(store));
    status = TL_EXIT_FAILURE;
  } else {
    printf("merged %lld session%s (%lld sample%s, %lld new host%s); %lld already present\n",
           (long long)st.sessions_added, st.sessions_added == 1 ? "" : "s",
           (long long)st.samples_added, st.samples_added == 1 ? "" : "s",
           (long long)st.hosts_added, st.hosts_added == 1 ? "" : "s",
           (long long)st.sessions_present);
  }
  tl_store_close(store);
  return status;
}

/* ======================================================================== */
/* push                                                                      */

static volatile int push_stop; /* set by SIGINT or SIGTERM during a push */

static void on_push_signal(int sig) {
  (void)sig;
  push_stop = 1;
}

/* "pushing: 12/40 sessions (3 sent, 9 present)", rewritten in place. */
static void push_progress(void *ctx, const tl_push_stats *st) {
  (void)ctx;
  fprintf(stderr, "\rtlstore: pushing: %lld/%lld sessions (%lld sent, %lld present)",
          (long long)st->sessions_done, (long long)st->sessions_total,
          (long long)st->sessions_pushed, (long long)st->sessions_present);
  fflush(stderr);
}

static int run_push(const char *path, int argc, char **argv, const struct option *longopts) {
  tl_push_opts o = {.stop = &push_stop};
  int c;
  while ((c = getopt_long(argc, argv, COMMAND_SHORTOPTS, longopts, NULL)) != -1) {
    if (c == OPT_REMOVE_PUSHED)
      o.remove_pushed = 1;
    else
      return bad_option(c, argv);
  }
  if (optind + 1 < argc)
    return tl_usage_error(argv[optind + 1], "unexpected argument");
  const char *url = optind < argc ? argv[optind] : getenv("TL_PUSH_URL");
  if (!url || !*url)
    return tl_usage_error("URL", "missing (the server: postgresql://USER@HOST/DATABASE, or set "
                                 "TL_PUSH_URL)");
  if (tl_store_is_server(path))
    return tl_usage_error("--db", "push sends a database file to a server; --db names a server");
  tl_store *local = open_store(path, o.remove_pushed ? TL_STORE_NOCREATE : TL_STORE_READONLY);
  if (!local)
    return TL_EXIT_FAILURE;
  tl_store *server = NULL;
  int status = TL_EXIT_FAILURE;
  if (tl_store_open(&server, url, TL_STORE_SERVER) != TL_OK) {
    tl_errorf("%s", tl_store_errmsg(server));
    goto done;
  }
  struct sigaction sa = {.sa_handler = on_push_signal}, old_int, old_term;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  int tty = isatty(STDERR_FILENO);
  if (tty)
    o.progress = push_progress;
  tl_push_stats st;
  int err = tl_store_push(local, server, &o, &st);
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  if (tty && st.sessions_done)
    fputc('\n', stderr);
  if (err) {
    tl_errorf("%s", tl_store_errmsg(server));
  } else {
    printf("pushed %lld session%s (%lld sample%s); %lld already on the server",
           (long long)st.sessions_pushed, st.sessions_pushed == 1 ? "" : "s",
           (long long)st.samples_pushed, st.samples_pushed == 1 ? "" : "s",
           (long long)st.sessions_present);
    if (o.remove_pushed)
      printf("; %lld removed from the file", (long long)st.sessions_removed);
    printf("\n");
    status = TL_EXIT_OK;
  }
done:
  tl_store_close(server);
  tl_store_close(local);
  return status;
}

/* ======================================================================== */
/* delete, prune, vacuum                                                     */

static int run_delete(const char *path, int argc, char **argv, const struct option *longopts) {
  (void)longopts;
  if (argc < 2)
    return tl_usage_error("SESSION_UUID", "missing (see tlstore sessions)");
  if (argc > 2)
    return tl_usage_error(argv[2], "unexpected argument");
  const char *u = argv[1];
  int ok = strlen(u) == 36;
  for (size_t i = 0; ok && i < 36; i++)
    ok = (i == 8 || i == 13 || i == 18 || i == 23) ? u[i] == '-' : isxdigit((unsigned char)u[i]);
  if (!ok)
    return tl_usage_error("SESSION_UUID", "not a session UUID (see tlstore sessions)");
  tl_store *store = open_store(path, TL_STORE_NOCREATE);
  if (!store)
    return TL_EXIT_FAILURE;
  int status = TL_EXIT_OK;
  if (tl_store_delete(store, u)) {
    tl_errorf("%s", tl_store_errmsg(store));
    status = TL_EXIT_FAILURE;
  } else {
    printf("deleted session %s\n", u);
  }
  tl_store_close(store);
  return status;
}

static int run_prune(const char *path, int argc, char **argv, const struct option *longopts) {
  int64_t before = 0;
  int have_before = 0;
  const char *label = NULL;
  char why[TL_WHY_MAX];
  int c;
  while ((c = getopt_long(argc, argv, COMMAND_SHORTOPTS, longopts, NULL)) != -1) {
    if (c == OPT_BEFORE) {
      if (tl_date_parse(optarg, &before, why, sizeof why))
        return tl_usage_error("--before", why);
      have_before = 1;
    } else if (c == OPT_LABEL) {
      if (tl_label_check(optarg, why, sizeof why))
        return tl_usage_error("--label", why);
      label = optarg;
    } else {
      return bad_option(c, argv);
    }
  }
  if (optind < argc)
    return tl_usage_error(argv[optind], "unexpected argument");
  if (!have_before)
    return tl_usage_error("--before", "missing (a date: YYYY-MM-DD)");
  tl_store *store = open_store(path, TL_STORE_NOCREATE);
  if (!store)
    return TL_EXIT_FAILURE;
  int64_t sessions = 0, samples = 0;
  int status = TL_EXIT_OK;
  if (tl_store_prune(store, before, label, &sessions, &samples)) {
    tl_errorf("%s", tl_store_errmsg(store));
    status = TL_EXIT_FAILURE;
  } else {
    printf("deleted %lld sessions (%lld samples)%s\n", (long long)sessions, (long long)samples,
           tl_store_is_server(path) ? "" : "; run tlstore vacuum to shrink the file");
  }
  tl_store_close(store);
  return status;
}

static int run_vacuum(const char *path, int argc, char **argv, const struct option *longopts) {
  (void)longopts;
  if (argc > 1)
    return tl_usage_error(argv[1], "unexpected argument");
  tl_store *store = open_store(path, TL_STORE_NOCREATE);
  if (!store)
    return TL_EXIT_FAILURE;
  int status = TL_EXIT_OK;
  if (tl_store_vacuum(store)) {
    tl_errorf("%s", tl_store_errmsg(store));
    status = TL_EXIT_FAILURE;
  } else {
    printf("ok\n");
  }
  tl_store_close(store);
  return status;
}

/* ======================================================================== */
/* The commands: how each is called, what it does, its options               */

static const cmd_option export_options[] = {
    {"format", OPT_FORMAT, "FORMAT", "csv, jsonl or hgrm (required)"},
    FILTER_OPTIONS,
    {NULL, 0, NULL, NULL}};
static const cmd_option sessions_options[] = {FILTER_OPTIONS, {NULL, 0, NULL, NULL}};
static const cmd_option import_options[] = {
    {"format", OPT_FORMAT, "FORMAT", "csv or jsonl (required)"},
    {"label", OPT_LABEL, "L", "the new session's label (required)"},
    {"probe", OPT_PROBE, "P", "the probe that measured (required)"},
    {"delay", OPT_DELAY, "D", "the requested delay (required; a bare number is ms)"},
    {"unit", OPT_UNIT, "UNIT", "ns, us or ms: of numbers without a unit (default ns)"},
    {"host", OPT_HOST, "NAME", "the host to record (default imported)"},
    {"start", OPT_START, "DATE", "when the samples were measured, UTC (default now)"},
    {"fact", OPT_FACT, "KEY=VALUE", "a host fact: memory=1G, cpus=2, vm=kvm ... (repeatable)"},
    {"skip-bad", OPT_SKIP_BAD, NULL, "import the good rows of a file with bad ones"},
    {NULL, 0, NULL, NULL}};
static const cmd_option prune_options[] = {
    {"before", OPT_BEFORE, "DATE", "sessions started before DATE, UTC (required)"},
    {"label", OPT_LABEL, "L", "only the sessions of this label"},
    {NULL, 0, NULL, NULL}};

static const cmd_option push_options[] = {
    {"remove-pushed", OPT_REMOVE_PUSHED, NULL,
     "delete each session from the file once the server has it"},
    {NULL, 0, NULL, NULL}};

static const command commands[] = {
    {"info", "", "schema version, hosts, labels, sessions, samples, file size", NULL, run_info},
    {"check", "", "integrity and schema check; exit 1 when anything is wrong", NULL, run_check},
    {"labels", "", "the labels in the database, one per line", NULL, run_labels},
    {"hosts", "", "hosts with their key facts (from each one's latest session)", NULL, run_hosts},
    {"sessions", "[FILTERS]", "list sessions: uuid, label, probe, delay, host, start, status",
     sessions_options, run_sessions},
    {"export", "--format FORMAT [FILTERS]",
     "raw samples (or their percentile distribution) to stdout", export_options, run_export},
    {"import", "--format FORMAT --label L --probe P --delay D [OPTIONS] FILE",
     "latencies from another tool as one new session (FILE - is stdin)", import_options,
     run_import},
    {"merge", "OTHER.db...", "copy the sessions of other tl databases, all or nothing", NULL,
     run_merge},
    {"push", "[--remove-pushed] [URL]",
     "send the finished sessions a PostgreSQL server lacks (URL or $TL_PUSH_URL)", push_options,
     run_push},
    {"delete", "SESSION_UUID", "delete one session and its samples", NULL, run_delete},
    {"prune", "--before DATE [--label L]", "delete the sessions started before DATE", prune_options,
     run_prune},
    {"vacuum", "", "give the space of deleted data back to the system", NULL, run_vacuum},
    {"help", "[COMMAND]", "this help, or the usage and options of COMMAND", NULL, NULL},
};
enum { N_COMMANDS = sizeof commands / sizeof commands[0], MAX_COMMAND_OPTS = 16 };

/* "  TERM" with text from column 25, or on the next line when TERM is too
 * wide: the layout of every help in tl. */
static void help_line(const char *term, const char *arg, const char *text) {
  int n = printf("  %s%s%s", term, arg && *arg ? " " : "", arg ? arg : "");
  printf("%*s%s\n", n < 25 ? 25 - n : 0, n < 25 ? "" : "\n                         ", text);
}

static void print_usage(void) {
  fputs(usage_head, stdout);
  for (size_t i = 0; i < N_COMMANDS; i++)
    help_line(commands[i].name, commands[i].args, commands[i].about);
  fputs(usage_tail, stdout);
}

static void print_command_help(const command *cmd) {
  printf("Usage: tlstore [--db PATH] %s%s%s\n", cmd->name, *cmd->args ? " " : "", cmd->args);
  printf("%c%s.\n\nOptions:\n", toupper((unsigned char)cmd->about[0]), cmd->about + 1);
  char term[64];
  for (const cmd_option *o = cmd->options; o && o->name; o++) {
    snprintf(term, sizeof term, "    --%s", o->name);
    help_line(term, o->arg, o->help);
  }
  help_line("-h, --help", NULL, "show this help and exit");
}

/* cmd's getopt_long table, with --help, into out (MAX_COMMAND_OPTS + 2).
 * An option past MAX_COMMAND_OPTS would be left out (and test_cli's check
 * that every option in a command's help is taken would fail). */
static void command_longopts(const command *cmd, struct option *out) {
  size_t n = 0;
  for (const cmd_option *o = cmd->options; o && o->name && n < MAX_COMMAND_OPTS; o++)
    out[n++] = (struct option){o->name, o->arg ? required_argument : no_argument, NULL, o->val};
  out[n++] = (struct option){"help", no_argument, NULL, 'h'};
  out[n] = (struct option){NULL, 0, NULL, 0};
}

/* Starts getopt afresh, in its permuting mode, so that options may follow
 * a command's operands (glibc: optind 0; BSD: optreset). */
static void getopt_restart(void) {
#ifdef __GLIBC__
  optind = 0;
#else
  optreset = 1;
  optind = 1;
#endif
}

/* A first pass over a command's arguments, before anything else: --help
 * prints the command's help; an option it does not take, or a value option
 * given twice (only filters may repeat), is a usage error. None of that
 * needs the database. Returns the exit status, or -1 to go on. */
static int command_pass(const command *cmd, int argc, char **argv, const struct option *longopts) {
  static const int repeatable[] = {OPT_LABEL, OPT_TAG, OPT_FACT, 0};
  unsigned char given[TL_CLI_OPTS] = {0};
  getopt_restart();
  int c;
  while ((c = getopt_long(argc, argv, COMMAND_SHORTOPTS, longopts, NULL)) != -1) {
    if (c == 'h') {
      print_command_help(cmd);
      return TL_EXIT_OK;
    }
    if (c == ':' || c == '?')
      return bad_option(c, argv);
    if (tl_cli_once(longopts, c, given, repeatable))
      return TL_EXIT_USAGE;
  }
  return -1;
}

/* The long option a "--name[=value]" argument names in longopts: the exact
 * name, else the first it abbreviates (getopt_long reports an ambiguous one
 * later); NULL for none. */
static const struct option *long_option(const struct option *longopts, const char *arg) {
  size_t len = strcspn(arg + 2, "=");
  const struct option *prefix = NULL;
  for (const struct option *o = longopts; o->name; o++) {
    if (strncmp(o->name, arg + 2, len) != 0)
      continue;
    if (o->name[len] == '\0')
      return o;
    if (!prefix)
      prefix = o;
  }
  return prefix;
}

/* --db may also follow the command ("tlstore merge --db all.db a.db"), as it
 * may anywhere in tlcollect and tlreport: takes "--db PATH" or "--db=PATH"
 * out of the command's arguments (argv[0] is the command name) into *db.
 * Values of the command's other options are passed over, and "--" ends the
 * options. Returns the exit status of a usage error, or -1 to go on. */
static int take_db_option(const struct option *longopts, int *argc, char **argv,
                          const char **db) {
  int out = 1;
  for (int i = 1; i < *argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--") == 0) {
      while (i < *argc)
        argv[out++] = argv[i++];
      break;
    }
    int is_db = strcmp(a, "--db") == 0 || strncmp(a, "--db=", 5) == 0;
    if (!is_db) {
      argv[out++] = argv[i];
      const struct option *o = a[0] == '-' && a[1] == '-' ? long_option(longopts, a) : NULL;
      if (o && o->has_arg == required_argument && !strchr(a, '=') && i + 1 < *argc)
        argv[out++] = argv[++i];
      continue;
    }
    const char *v = a[4] == '=' ? a + 5 : (i + 1 < *argc ? argv[++i] : NULL);
    if (!v)
      return tl_usage_error("--db", "needs a value");
    if (!*v)
      return tl_usage_error("--db", "empty path");
    if (*db)
      return tl_usage_error("--db", "given twice");
    *db = v;
  }
  argv[out] = NULL;
  *argc = out;
  return -1;
}

static const command *find_command(const char *name) {
  for (size_t i = 0; i < N_COMMANDS; i++)
    if (strcmp(commands[i].name, name) == 0)
      return &commands[i];
  return NULL;
}

/* tlstore help [COMMAND] */
static int run_help(int argc, char **argv) {
  if (argc > 2)
    return tl_usage_error(argv[2], "unexpected argument");
  if (argc < 2) {
    print_usage();
    return TL_EXIT_OK;
  }
  const command *cmd = find_command(argv[1]);
  if (!cmd)
    return tl_usage_error(argv[1], "unknown command");
  print_command_help(cmd);
  return TL_EXIT_OK;
}

static int run(int argc, char **argv) {
  enum { OPT_DB = 256 };
  static const struct option longopts[] = {
      {"db", required_argument, NULL, OPT_DB},
      {"help", no_argument, NULL, 'h'},
      {"version", no_argument, NULL, 'V'},
      {NULL, 0, NULL, 0},
  };
  const char *db = NULL;
  opterr = 0;
  unsigned char given[TL_CLI_OPTS] = {0};
  int c;
  /* '+': stop at the command; its own options follow it. */
  while ((c = getopt_long(argc, argv, "+:hV", longopts, NULL)) != -1) {
    if (tl_cli_once(longopts, c, given, NULL))
      return TL_EXIT_USAGE;
    switch (c) {
    case OPT_DB:
      if (!*optarg)
        return tl_usage_error("--db", "empty path");
      db = optarg;
      break;
    case 'h':
      print_usage();
      return TL_EXIT_OK;
    case 'V':
      printf("tlstore %s\n", TL_VERSION);
      return TL_EXIT_OK;
    case ':':
      return tl_usage_error(argv[optind - 1], "needs a value");
    default:
      return tl_usage_error(argv[optind - 1], "unknown option");
    }
  }
  if (optind >= argc)
    return tl_usage_error("command", "missing");
  const command *cmd = find_command(argv[optind]);
  if (!cmd)
    return tl_usage_error(argv[optind], "unknown command");

  /* The command's arguments, from its name on. */
  int at = optind;
  struct option cmd_longopts[MAX_COMMAND_OPTS + 2];
  command_longopts(cmd, cmd_longopts);
  int cmd_argc = argc - at;
  int status = take_db_option(cmd_longopts, &cmd_argc, argv + at, &db);
  if (status >= 0)
    return status;
  status = command_pass(cmd, cmd_argc, argv + at, cmd_longopts);
  if (status >= 0)
    return status;
  if (!cmd->run)
    return run_help(cmd_argc, argv + at);

  char path[4096];
  status = tl_cli_db_path(db, path, sizeof path);
  if (status)
    return status;
  getopt_restart();
  return cmd->run(path, cmd_argc, argv + at, cmd_longopts);
}

int main(int argc, char **argv) {
  tl_set_progname("tlstore");
  return tl_cli_finish(run(argc, argv));
}
