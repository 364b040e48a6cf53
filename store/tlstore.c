/* tlstore: looks after the tl database. Each command parses its own
 * options (through the base layer's command framework, tl_cli_run_commands),
 * calls the store library and prints what it returns. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tl_store.h"

/* A command that writes what a store function writes to stdout, on the
 * database opened with flags. */
static int with_store(const tl_cli_args *a, int flags, int (*write)(tl_store *, FILE *)) {
  tl_store *store = tl_store_open_or_say(a->db, flags);
  return tl_store_close_saying(store, store ? write(store, stdout) : TL_EIO);
}

/* ======================================================================== */
/* info, check, labels, hosts                                                */

static int run_info(const tl_cli_args *a) {
  tl_store *store = tl_store_open_or_say(a->db, TL_STORE_NOCREATE);
  return tl_store_close_saying(store, store ? tl_store_write_info(store, a->db, stdout) : TL_EIO);
}

static int run_check(const tl_cli_args *a) {
  return with_store(a, TL_STORE_NOCREATE, tl_store_write_check);
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

/* The filter options of sessions and export, taken by tl_filter_option. */
#define FILTER_OPTIONS                                                                             \
  {"label", "L", "sessions of this label (repeatable)", 1},                                        \
      {"probe", "P", "sessions of this probe", 0},                                                 \
      {"delay", "TIME", "sessions of this requested delay (a bare number is ms)", 0},              \
      {"since", "DATE", "sessions started at or after DATE (UTC)", 0},                             \
      {"until", "DATE", "sessions started before DATE (UTC)", 0},                                  \
      {"host", "HOST", "sessions of this hostname or host fingerprint prefix", 0},                 \
      {"tag", "KEY=VALUE", "sessions with this tag (repeatable)", 1}, {                            \
    "status", "STATUS", "sessions that are running, complete or interrupted", 0                    \
  }

/* What sessions (the filter) and export (the filter and --format) select. */
typedef struct {
  tl_filter_args f;
  tl_samples_format format;
} selection;

static int take_selection(void *ctx, const char *name, const char *v, char *why, size_t len) {
  selection *s = ctx;
  if (strcmp(name, "format") != 0)
    return tl_filter_option(&s->f, name, v, why, len);
  if (tl_samples_format_parse(v, &s->format))
    return tl_fail(why, len, TL_EINVAL, "must be csv, jsonl or hgrm");
  return 1;
}

/* The command's selection, then the database opened read-only; NULL with
 * *status set when either fails. */
static tl_store *select_sessions(const tl_cli_args *a, selection *s, int need_format, int *status) {
  tl_filter_args_init(&s->f);
  s->format = 0;
  *status = tl_cli_take_options(a, take_selection, s);
  if (*status < 0 && need_format && !s->format)
    *status = tl_usage_error("--format", "missing (csv, jsonl or hgrm)");
  return *status < 0 ? tl_store_open_or_say(a->db, TL_STORE_READONLY) : NULL;
}

static int run_sessions(const tl_cli_args *a) {
  selection s;
  int status;
  tl_store *store = select_sessions(a, &s, 0, &status);
  return store        ? tl_store_close_saying(store, tl_store_write_sessions(store, &s.f.f, stdout))
         : status < 0 ? TL_EXIT_FAILURE
                      : status;
}

static int run_export(const tl_cli_args *a) {
  selection s;
  int status;
  tl_store *store = select_sessions(a, &s, 1, &status);
  if (!store)
    return status < 0 ? TL_EXIT_FAILURE : status;
  int err = tl_store_export(store, &s.f.f, s.format, stdout, NULL);
  if (err && ferror(stdout)) { /* a write error: tl_cli_finish says why */
    tl_store_close(store);
    return TL_EXIT_FAILURE;
  }
  return tl_store_close_saying(store, err);
}

static int take_import(void *o, const char *name, const char *v, char *why, size_t len) {
  return tl_import_option(o, name, v, why, len);
}

static int run_import(const tl_cli_args *a) {
  tl_import_args o;
  tl_import_args_init(&o);
  char why[TL_WHY_MAX];
  int status = tl_cli_take_options(a, take_import, &o);
  const char *missing = status < 0 ? tl_import_missing(&o, why, sizeof why) : NULL;
  if (status >= 0 || missing)
    return missing ? tl_cli_option_error(missing, why) : status;
  if (optind >= a->argc)
    return tl_usage_error("FILE", "missing (a file name, or - for standard input)");
  if (optind + 1 < a->argc)
    return tl_usage_error(a->argv[optind + 1], "unexpected argument (one file at a time)");
  const char *file = o.opts.source = a->argv[optind];
  FILE *in = tl_store_open_import_source(file);
  if (!in)
    return TL_EXIT_FAILURE;
  tl_store *store = tl_store_open_or_say(a->db, 0);
  char uuid[37];
  int64_t n = 0, nbad = 0;
  int err = store ? tl_store_import(store, in, &o.opts, tl_store_say_bad_row, (void *)file, uuid,
                                    &n, &nbad)
                  : TL_EIO;
  if (in != stdin)
    fclose(in);
  if (!err)
    tl_store_write_imported(stdout, uuid, n, nbad);
  return tl_store_close_saying(store, err);
}

static int run_merge(const tl_cli_args *a) {
  const char *const *others = (const char *const *)a->argv + 1;
  int status = tl_store_check_merge_sources(others, (size_t)a->argc - 1);
  if (status)
    return status;
  tl_store *store = tl_store_open_or_say(a->db, 0);
  tl_merge_stats st;
  int err = store ? tl_store_merge(store, others, (size_t)a->argc - 1, &st) : TL_EIO;
  if (!err)
    tl_store_write_merged(stdout, &st);
  return tl_store_close_saying(store, err);
}

/* ======================================================================== */
/* push, delete, prune, vacuum                                               */

static int take_push(void *o, const char *name, const char *v, char *why, size_t len) {
  (void)v, (void)why, (void)len;
  return strcmp(name, "remove-pushed") == 0 ? (((tl_push_opts *)o)->remove_pushed = 1) : 0;
}

static int run_push(const tl_cli_args *a) {
  tl_push_opts o = {.on_signals = 1};
  int status = tl_cli_take_options(a, take_push, &o);
  if (status >= 0)
    return status;
  if (optind + 1 < a->argc)
    return tl_usage_error(a->argv[optind + 1], "unexpected argument");
  tl_store *local, *server;
  const char *url = optind < a->argc ? a->argv[optind] : NULL;
  if ((status = tl_store_open_push_ends(a->db, url, o.remove_pushed, &local, &server)))
    return status;
  int tty = isatty(STDERR_FILENO);
  if (tty)
    o.progress = tl_store_say_push_progress;
  tl_push_stats st;
  int err = tl_store_push(local, server, &o, &st);
  if (tty && st.sessions_done)
    fputc('\n', stderr);
  if (!err)
    tl_store_write_pushed(stdout, &st, o.remove_pushed);
  tl_store_close(local);
  return tl_store_close_saying(server, err);
}

static int run_delete(const tl_cli_args *a) {
  const char *u = a->argc < 2 ? NULL : a->argv[1];
  if (!u || !tl_uuid_valid(u))
    return tl_usage_error("SESSION_UUID", u ? "not a session UUID (tlstore sessions lists them)"
                                            : "missing (tlstore sessions lists them)");
  tl_store *store = tl_store_open_or_say(a->db, TL_STORE_NOCREATE);
  int err = store ? tl_store_delete(store, u) : TL_EIO;
  if (!err)
    printf("deleted session %s\n", u);
  return tl_store_close_saying(store, err);
}

static int take_prune(void *p, const char *name, const char *v, char *why, size_t len) {
  return tl_prune_option(p, name, v, why, len);
}

static int run_prune(const tl_cli_args *a) {
  tl_prune_args p = {0, 0, NULL};
  int status = tl_cli_take_options(a, take_prune, &p);
  if (status >= 0)
    return status;
  if (!p.have_before)
    return tl_usage_error("--before", "missing (a date: YYYY-MM-DD)");
  tl_store *store = tl_store_open_or_say(a->db, TL_STORE_NOCREATE);
  int64_t sessions = 0, samples = 0;
  int err = store ? tl_store_prune(store, p.before_ns, p.label, &sessions, &samples) : TL_EIO;
  if (!err)
    tl_store_write_pruned(stdout, a->db, sessions, samples);
  return tl_store_close_saying(store, err);
}

static int run_vacuum(const tl_cli_args *a) {
  tl_store *store = tl_store_open_or_say(a->db, TL_STORE_NOCREATE);
  int err = store ? tl_store_vacuum(store) : TL_EIO;
  if (!err)
    printf("ok\n");
  return tl_store_close_saying(store, err);
}

/* ======================================================================== */
/* The commands: how each is called, what it does, its options               */

static const tl_cli_option export_options[] = {
    {"format", "FORMAT", "csv, jsonl or hgrm (required)", 0},
    FILTER_OPTIONS,
    {NULL, NULL, NULL, 0}};
static const tl_cli_option sessions_options[] = {FILTER_OPTIONS, {NULL, NULL, NULL, 0}};
static const tl_cli_option import_options[] = {
    {"format", "FORMAT", "csv or jsonl (required)", 0},
    {"label", "L", "the new session's label (required)", 0},
    {"probe", "P", "the probe that measured (required)", 0},
    {"delay", "D", "the requested delay (required; a bare number is ms)", 0},
    {"unit", "UNIT", "ns, us or ms: of numbers without a unit (default ns)", 0},
    {"host", "NAME", "the host to record (default imported)", 0},
    {"start", "DATE", "when the samples were measured, UTC (default now)", 0},
    {"fact", "KEY=VALUE", "a host fact: memory=1G, cpus=2, vm=kvm ... (repeatable)", 1},
    {"skip-bad", NULL, "import the good rows of a file with bad ones", 0},
    {NULL, NULL, NULL, 0}};
static const tl_cli_option prune_options[] = {
    {"before", "DATE", "sessions started before DATE, UTC (required)", 0},
    {"label", "L", "only the sessions of this label", 0},
    {NULL, NULL, NULL, 0}};
static const tl_cli_option push_options[] = {
    {"remove-pushed", NULL, "delete each session from the file once the server has it", 0},
    {NULL, NULL, NULL, 0}};

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
     "send the finished sessions a PostgreSQL server lacks (URL or $TL_PUSH_URL)", push_options, -1,
     run_push},
    {"delete", "SESSION_UUID", "delete one session and its samples", NULL, 1, run_delete},
    {"prune", "--before DATE [--label L]", "delete the sessions started before DATE", prune_options,
     0, run_prune},
    {"vacuum", "", "give the space of deleted data back to the system", NULL, 0, run_vacuum},
    {"help", "[COMMAND]", "this help, or the usage and options of COMMAND", NULL, -1, NULL},
};

static const tl_cli_program program = {
    .usage_head = "Usage: tlstore [--db PATH] COMMAND [OPTIONS]\n"
                  "Look after the tl results database.\n"
                  "\n"
                  "Commands:\n",
    .usage_tail = "\n"
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
};

int main(int argc, char **argv) {
  tl_heap_huge_pages(); /* it reads a database and exits */
  tl_set_progname("tlstore");
  return tl_cli_run_commands(&program, argc, argv);
}
