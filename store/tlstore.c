/* tlstore: looks after the tl database. Each command parses its own
 * options (through the base layer's command framework, tl_cli_run_commands),
 * calls the store library and prints what it returns. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tl_store.h"

/* Opens the database for a command, or says why not; NULL on failure. */
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

/* The end of a command that worked on store: its error when err is set. */
static int done(tl_store *store, int err) {
  if (err)
    tl_errorf("%s", tl_store_errmsg(store));
  tl_store_close(store);
  return err ? TL_EXIT_FAILURE : TL_EXIT_OK;
}

/* A command that writes what a store function writes to stdout, on the
 * database opened with flags. */
static int with_store(const tl_cli_args *a, int flags, int (*write)(tl_store *, FILE *)) {
  tl_store *store = open_store(a->db, flags);
  return store ? done(store, write(store, stdout)) : TL_EXIT_FAILURE;
}

/* ======================================================================== */
/* info, check, labels, hosts                                                */

static int run_info(const tl_cli_args *a) {
  tl_store *store = open_store(a->db, TL_STORE_NOCREATE);
  return store ? done(store, tl_store_write_info(store, a->db, stdout)) : TL_EXIT_FAILURE;
}

static void print_problem(void *ctx, const char *problem) {
  (void)ctx;
  printf("problem: ");
  tl_fput_safe(stdout, problem);
  printf("\n");
}

static int run_check(const tl_cli_args *a) {
  tl_store *store = open_store(a->db, TL_STORE_NOCREATE);
  if (!store)
    return TL_EXIT_FAILURE;
  int err = tl_store_check(store, print_problem, NULL);
  if (err == TL_ECORRUPT) {
    tl_errorf("the database has problems (listed above)");
    tl_store_close(store);
    return TL_EXIT_FAILURE;
  }
  if (!err)
    printf("ok\n");
  return done(store, err);
}

/* One label per line, for scripts and shell completion: read-only, and
 * nothing but the labels on stdout. */
static int run_labels(const tl_cli_args *a) {
  return with_store(a, TL_STORE_READONLY, tl_store_write_labels);
}

static int run_hosts(const tl_cli_args *a) {
  return with_store(a, TL_STORE_NOCREATE | TL_STORE_READONLY, tl_store_write_hosts);
}

/* ======================================================================== */
/* sessions, export, import, merge                                           */

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

/* The filter options of sessions and export, taken by tl_filter_option. */
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

/* The filter options and *format (when format is not NULL) of a command.
 * Returns the exit status of a usage error, or -1 to go on. */
static int filter_options(const tl_cli_args *a, tl_filter_args *f, tl_samples_format *format) {
  char why[TL_WHY_MAX];
  int c;
  tl_filter_args_init(f);
  while ((c = tl_cli_next(a)) != -1) {
    if (c == OPT_FORMAT && format) {
      if (tl_samples_format_parse(optarg, format))
        return tl_usage_error("--format", "must be csv, jsonl or hgrm");
      continue;
    }
    int r = tl_filter_option(f, tl_cli_option_name(a->longopts, c), optarg, why, sizeof why);
    if (r < 0)
      return tl_cli_option_error(tl_cli_option_name(a->longopts, c), why);
    if (r == 0)
      return tl_cli_bad_option(a, c);
  }
  return -1;
}

static int run_sessions(const tl_cli_args *a) {
  tl_filter_args f;
  int status = filter_options(a, &f, NULL);
  tl_store *store = status < 0 ? open_store(a->db, TL_STORE_READONLY) : NULL;
  if (!store)
    return status < 0 ? TL_EXIT_FAILURE : status;
  return done(store, tl_store_write_sessions(store, &f.f, stdout));
}

static int run_export(const tl_cli_args *a) {
  tl_filter_args f;
  tl_samples_format format = 0;
  int status = filter_options(a, &f, &format);
  if (status < 0 && !format)
    status = tl_usage_error("--format", "missing (csv, jsonl or hgrm)");
  tl_store *store = status < 0 ? open_store(a->db, TL_STORE_READONLY) : NULL;
  if (!store)
    return status < 0 ? TL_EXIT_FAILURE : status;
  int err = tl_store_export(store, &f.f, format, stdout, NULL);
  if (err && ferror(stdout)) { /* a write error: tl_cli_finish says why */
    tl_store_close(store);
    return TL_EXIT_FAILURE;
  }
  return done(store, err);
}

static void print_bad_row(void *ctx, int64_t line, const char *why) {
  fprintf(stderr, "%s: ", tl_progname());
  tl_fput_safe(stderr, ctx);
  fprintf(stderr, ":%lld: ", (long long)line);
  tl_fput_safe(stderr, why);
  fputc('\n', stderr);
}

static int run_import(const tl_cli_args *a) {
  tl_import_args o;
  tl_import_args_init(&o);
  char why[TL_WHY_MAX];
  int c;
  while ((c = tl_cli_next(a)) != -1) {
    int r = tl_import_option(&o, tl_cli_option_name(a->longopts, c), optarg, why, sizeof why);
    if (r < 0)
      return tl_cli_option_error(tl_cli_option_name(a->longopts, c), why);
    if (r == 0)
      return tl_cli_bad_option(a, c);
  }
  const char *missing = tl_import_missing(&o, why, sizeof why);
  if (missing)
    return tl_cli_option_error(missing, why);
  if (optind >= a->argc)
    return tl_usage_error("FILE", "missing (a file name, or - for standard input)");
  if (optind + 1 < a->argc)
    return tl_usage_error(a->argv[optind + 1], "unexpected argument (one file at a time)");
  const char *file = o.opts.source = a->argv[optind];
  FILE *in = strcmp(file, "-") == 0 ? stdin : fopen(file, "rb");
  if (!in) {
    tl_errorf("cannot open %s: %s (check the path)", file, strerror(errno));
    return TL_EXIT_FAILURE;
  }
  tl_store *store = open_store(a->db, 0);
  char uuid[37];
  int64_t n = 0, nbad = 0;
  int err = store ? tl_store_import(store, in, &o.opts, print_bad_row, (void *)file, uuid, &n,
                                    &nbad)
                  : TL_EIO;
  if (in != stdin)
    fclose(in);
  if (!store)
    return TL_EXIT_FAILURE;
  if (!err && nbad)
    printf("imported %lld samples into session %s (%lld bad rows skipped)\n", (long long)n, uuid,
           (long long)nbad);
  else if (!err)
    printf("imported %lld samples into session %s\n", (long long)n, uuid);
  return done(store, err);
}

/* "1 session", "2 sessions". */
static const char *plural(int64_t n) { return n == 1 ? "" : "s"; }

static int run_merge(const tl_cli_args *a) {
  if (a->argc < 2)
    return tl_usage_error("OTHER.db", "missing (the databases to merge in)");
  for (int i = 1; i < a->argc; i++)
    if (a->argv[i][0] == '-' || !a->argv[i][0])
      return tl_usage_error(a->argv[i], "unknown option (merge takes database files)");
  /* A missing file fails before the target is opened (or created). */
  for (int i = 1; i < a->argc; i++)
    if (access(a->argv[i], R_OK) != 0) {
      tl_errorf("cannot read %s: %s (check the path)", a->argv[i], strerror(errno));
      return TL_EXIT_FAILURE;
    }
  tl_store *store = open_store(a->db, 0);
  if (!store)
    return TL_EXIT_FAILURE;
  tl_merge_stats st;
  int err = tl_store_merge(store, (const char *const *)a->argv + 1, (size_t)a->argc - 1, &st);
  if (!err)
    printf("merged %lld session%s (%lld sample%s, %lld new host%s); %lld already present\n",
           (long long)st.sessions_added, plural(st.sessions_added), (long long)st.samples_added,
           plural(st.samples_added), (long long)st.hosts_added, plural(st.hosts_added),
           (long long)st.sessions_present);
  return done(store, err);
}

/* ======================================================================== */
/* push, delete, prune, vacuum                                               */

/* "pushing: 12/40 sessions (3 sent, 9 present)", rewritten in place. */
static void push_progress(void *ctx, const tl_push_stats *st) {
  (void)ctx;
  fprintf(stderr, "\rtlstore: pushing: %lld/%lld sessions (%lld sent, %lld present)",
          (long long)st->sessions_done, (long long)st->sessions_total,
          (long long)st->sessions_pushed, (long long)st->sessions_present);
  fflush(stderr);
}

static int run_push(const tl_cli_args *a) {
  tl_push_opts o = {.on_signals = 1};
  int c;
  while ((c = tl_cli_next(a)) != -1) {
    if (c != OPT_REMOVE_PUSHED)
      return tl_cli_bad_option(a, c);
    o.remove_pushed = 1;
  }
  if (optind + 1 < a->argc)
    return tl_usage_error(a->argv[optind + 1], "unexpected argument");
  const char *url = optind < a->argc ? a->argv[optind] : getenv("TL_PUSH_URL");
  if (!url || !*url)
    return tl_usage_error("URL", "missing (the server: postgresql://USER@HOST/DATABASE, or set "
                                 "TL_PUSH_URL)");
  if (tl_store_is_server(a->db))
    return tl_usage_error("--db", "push sends a database file to a server; --db names a server");
  tl_store *local = open_store(a->db, o.remove_pushed ? TL_STORE_NOCREATE : TL_STORE_READONLY);
  if (!local)
    return TL_EXIT_FAILURE;
  tl_store *server = NULL;
  if (tl_store_open(&server, url, TL_STORE_SERVER) != TL_OK) {
    tl_store_close(local);
    return done(server, TL_EIO);
  }
  int tty = isatty(STDERR_FILENO);
  if (tty)
    o.progress = push_progress;
  tl_push_stats st;
  int err = tl_store_push(local, server, &o, &st);
  if (tty && st.sessions_done)
    fputc('\n', stderr);
  if (!err) {
    printf("pushed %lld session%s (%lld sample%s); %lld already on the server",
           (long long)st.sessions_pushed, plural(st.sessions_pushed),
           (long long)st.samples_pushed, plural(st.samples_pushed),
           (long long)st.sessions_present);
    if (o.remove_pushed)
      printf("; %lld removed from the file", (long long)st.sessions_removed);
    printf("\n");
  }
  tl_store_close(local);
  return done(server, err);
}

static int run_delete(const tl_cli_args *a) {
  if (a->argc < 2)
    return tl_usage_error("SESSION_UUID", "missing (tlstore sessions lists them)");
  const char *u = a->argv[1];
  if (!tl_uuid_valid(u))
    return tl_usage_error("SESSION_UUID", "not a session UUID (tlstore sessions lists them)");
  tl_store *store = open_store(a->db, TL_STORE_NOCREATE);
  if (!store)
    return TL_EXIT_FAILURE;
  int err = tl_store_delete(store, u);
  if (!err)
    printf("deleted session %s\n", u);
  return done(store, err);
}

static int run_prune(const tl_cli_args *a) {
  int64_t before = 0;
  int have_before = 0;
  const char *label = NULL;
  char why[TL_WHY_MAX];
  int c;
  while ((c = tl_cli_next(a)) != -1) {
    if (c == OPT_BEFORE && tl_date_parse(optarg, &before, why, sizeof why))
      return tl_usage_error("--before", why);
    if (c == OPT_LABEL && tl_label_check(optarg, why, sizeof why))
      return tl_usage_error("--label", why);
    if (c == OPT_LABEL)
      label = optarg;
    else if (c == OPT_BEFORE)
      have_before = 1;
    else
      return tl_cli_bad_option(a, c);
  }
  if (!have_before)
    return tl_usage_error("--before", "missing (a date: YYYY-MM-DD)");
  tl_store *store = open_store(a->db, TL_STORE_NOCREATE);
  if (!store)
    return TL_EXIT_FAILURE;
  int64_t sessions = 0, samples = 0;
  int err = tl_store_prune(store, before, label, &sessions, &samples);
  if (!err)
    printf("deleted %lld sessions (%lld samples)%s\n", (long long)sessions, (long long)samples,
           tl_store_is_server(a->db) ? "" : "; run tlstore vacuum to shrink the file");
  return done(store, err);
}

static int run_vacuum(const tl_cli_args *a) {
  tl_store *store = open_store(a->db, TL_STORE_NOCREATE);
  if (!store)
    return TL_EXIT_FAILURE;
  int err = tl_store_vacuum(store);
  if (!err)
    printf("ok\n");
  return done(store, err);
}

/* ======================================================================== */
/* The commands: how each is called, what it does, its options               */

static const tl_cli_option export_options[] = {
    {"format", OPT_FORMAT, "FORMAT", "csv, jsonl or hgrm (required)"},
    FILTER_OPTIONS,
    {NULL, 0, NULL, NULL}};
static const tl_cli_option sessions_options[] = {FILTER_OPTIONS, {NULL, 0, NULL, NULL}};
static const tl_cli_option import_options[] = {
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
static const tl_cli_option prune_options[] = {
    {"before", OPT_BEFORE, "DATE", "sessions started before DATE, UTC (required)"},
    {"label", OPT_LABEL, "L", "only the sessions of this label"},
    {NULL, 0, NULL, NULL}};
static const tl_cli_option push_options[] = {
    {"remove-pushed", OPT_REMOVE_PUSHED, NULL,
     "delete each session from the file once the server has it"},
    {NULL, 0, NULL, NULL}};

/* name, usage, what it does, options, the most operands it takes (-1: any), run */
static const tl_cli_command commands[] = {
    {"info", "", "schema version, hosts, labels, sessions, samples, file size", NULL, 0, run_info},
    {"check", "", "integrity and schema check; exit 1 when anything is wrong", NULL, 0, run_check},
    {"labels", "", "the labels in the database, one per line", NULL, 0, run_labels},
    {"hosts", "", "hosts with their key facts (from each one's latest session)", NULL, 0,
     run_hosts},
    {"sessions", "[FILTERS]", "list sessions: uuid, label, probe, delay, host, start, status",
     sessions_options, 0, run_sessions},
    {"export", "--format FORMAT [FILTERS]",
     "raw samples (or their percentile distribution) to stdout", export_options, 0, run_export},
    {"import", "--format FORMAT --label L --probe P --delay D [OPTIONS] FILE",
     "latencies from another tool as one new session (FILE - is stdin)", import_options, -1,
     run_import},
    {"merge", "OTHER.db...", "copy the sessions of other tl databases, all or nothing", NULL, -1,
     run_merge},
    {"push", "[--remove-pushed] [URL]",
     "send the finished sessions a PostgreSQL server lacks (URL or $TL_PUSH_URL)", push_options,
     -1, run_push},
    {"delete", "SESSION_UUID", "delete one session and its samples", NULL, 1, run_delete},
    {"prune", "--before DATE [--label L]", "delete the sessions started before DATE", prune_options,
     0, run_prune},
    {"vacuum", "", "give the space of deleted data back to the system", NULL, 0, run_vacuum},
    {"help", "[COMMAND]", "this help, or the usage and options of COMMAND", NULL, -1, NULL},
};

static const int repeatable[] = {OPT_LABEL, OPT_TAG, OPT_FACT, 0};

static const tl_cli_program program = {
    .usage_head = "Usage: tlstore [--db PATH] COMMAND [OPTIONS]\n"
                  "Look after the tl results database.\n"
                  "\n"
                  "Commands:\n",
    .usage_tail =
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
        "Exit status: 0 done, 1 failure (check found problems), 2 usage error.\n",
    .commands = commands,
    .count = sizeof commands / sizeof commands[0],
    .repeatable = repeatable,
};

int main(int argc, char **argv) {
  tl_set_progname("tlstore");
  return tl_cli_run_commands(&program, argc, argv);
}
