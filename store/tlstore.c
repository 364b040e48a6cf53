/* tlstore: looks after the tl database. Each subcommand parses its own
 * options and calls the store library. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tl_store.h"

static const char usage[] =
    "Usage: tlstore [--db PATH] COMMAND [OPTIONS]\n"
    "Look after the tl results database.\n"
    "\n"
    "Commands:\n"
    "  info                   schema version, hosts, labels, sessions, samples, file size\n"
    "  check                  integrity and schema check; exit 1 when anything is wrong\n"
    "  labels                 the labels in the database, one per line\n"
    "  hosts                  hosts with their key facts (from each one's latest session)\n"
    "\n"
    "Options:\n"
    "      --db PATH          database file (default $TL_DB, else\n"
    "                         $XDG_DATA_HOME/tl/tl.db or ~/.local/share/tl/tl.db)\n"
    "  -h, --help             show this help and exit\n"
    "  -V, --version          show the version and exit\n"
    "\n"
    "Exit status: 0 done, 1 failure (check found problems), 2 usage error.\n";

static int usage_error(const char *what, const char *why) {
  tl_errorf("%s: %s (see tlstore --help)", what, why);
  return TL_EXIT_USAGE;
}

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
  printf("\nschema version: %d (this tl: %d)\n", st.schema_version, tl_schema_latest());
  printf("file size:      %s\n", size);
  printf("hosts:          %lld\n", (long long)st.hosts);
  printf("sessions:       %lld\n", (long long)st.sessions);
  printf("samples:        %lld", (long long)st.samples);
  if (st.samples)
    printf(" (%.2f bytes each, encoded)", (double)st.sample_bytes / (double)st.samples);
  printf("\n");

  tl_filter f;
  tl_filter_init(&f);
  tl_session_list list;
  if (tl_store_sessions(store, &f, &list)) {
    tl_errorf("%s", tl_store_errmsg(store));
    return TL_EXIT_FAILURE;
  }
  if (list.count)
    printf("\n%-24s %10s %12s  %s\n", "label", "sessions", "samples", "delays (ms)");
  char **labels = NULL;
  size_t nl = 0;
  if (tl_store_labels(store, &labels, &nl)) {
    tl_session_list_free(&list);
    tl_errorf("%s", tl_store_errmsg(store));
    return TL_EXIT_FAILURE;
  }
  for (size_t i = 0; i < nl; i++) {
    int64_t sessions = 0, samples = 0;
    char delays[256] = "";
    size_t at = 0;
    for (size_t k = 0; k < list.count; k++) {
      const tl_session *s = &list.items[k];
      if (strcmp(s->label, labels[i]) != 0)
        continue;
      sessions++;
      samples += s->sample_count;
      int seen = 0;
      for (size_t j = 0; j < k && !seen; j++)
        seen = strcmp(list.items[j].label, labels[i]) == 0 && list.items[j].delay_ns == s->delay_ns;
      if (!seen && at < sizeof delays)
        at += (size_t)snprintf(delays + at, sizeof delays - at, "%s%g", at ? "," : "",
                               (double)s->delay_ns / 1e6);
    }
    tl_fput_safe(stdout, labels[i]);
    printf("%*s %10lld %12lld  %s\n", (int)(strlen(labels[i]) < 24 ? 24 - strlen(labels[i]) : 0),
           "", (long long)sessions, (long long)samples, delays);
  }
  tl_strings_free(labels, nl);
  tl_session_list_free(&list);
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

/* Subcommands: each checks its own arguments (argv[0] is the command name)
 * before it opens the database at path, so a usage error touches nothing. */
typedef struct {
  const char *name;
  int (*run)(const char *path, int argc, char **argv);
} command;

static int run_info(const char *path, int argc, char **argv) {
  if (argc > 1)
    return usage_error(argv[1], "unexpected argument");
  tl_store *store = open_store(path, TL_STORE_NOCREATE);
  int status = store ? cmd_info(store, path) : TL_EXIT_FAILURE;
  tl_store_close(store);
  return status;
}

static int run_check(const char *path, int argc, char **argv) {
  if (argc > 1)
    return usage_error(argv[1], "unexpected argument");
  tl_store *store = open_store(path, TL_STORE_NOCREATE);
  int status = store ? cmd_check(store) : TL_EXIT_FAILURE;
  tl_store_close(store);
  return status;
}

/* One label per line, for scripts and shell completion: read-only, and
 * nothing but the labels on stdout. */
static int run_labels(const char *path, int argc, char **argv) {
  if (argc > 1)
    return usage_error(argv[1], "unexpected argument");
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
 * environments apart, as the latest session saw them. */
static int cmd_hosts(tl_store *store) {
  tl_host_row *rows;
  size_t n;
  if (tl_store_hosts(store, &rows, &n)) {
    tl_errorf("%s", tl_store_errmsg(store));
    return TL_EXIT_FAILURE;
  }
  static const struct {
    const char *title, *key;
  } shown[] = {{"os", "os.name"},
               {"kernel", "kernel.release"},
               {"arch", "arch"},
               {"cpu", "cpu.model"},
               {"cpus", "cpu.logical"},
               {"memory", "mem.total_bytes"},
               {"vm", "vm"},
               {"cloud", "cloud"},
               {"container", "container"},
               {"clocksource", "clocksource.current"},
               {"preempt", "kernel.preempt"}};
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
    for (size_t k = 0; k < sizeof shown / sizeof shown[0]; k++) {
      const char *v = tl_fact_rows_get(r->facts, r->fact_count, shown[k].key);
      printf("  %-12s ", shown[k].title);
      if (v && strcmp(shown[k].key, "mem.total_bytes") == 0 &&
          strspn(v, "0123456789") == strlen(v)) {
        char size[32];
        human_bytes(strtoll(v, NULL, 10), size, sizeof size);
        printf("%s\n", size);
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

static int run_hosts(const char *path, int argc, char **argv) {
  if (argc > 1)
    return usage_error(argv[1], "unexpected argument");
  tl_store *store = open_store(path, TL_STORE_NOCREATE | TL_STORE_READONLY);
  int status = store ? cmd_hosts(store) : TL_EXIT_FAILURE;
  tl_store_close(store);
  return status;
}

static const command commands[] = {
    {"info", run_info},
    {"check", run_check},
    {"labels", run_labels},
    {"hosts", run_hosts},
};

int main(int argc, char **argv) {
  tl_set_progname("tlstore");
  enum { OPT_DB = 256 };
  static const struct option longopts[] = {
      {"db", required_argument, NULL, OPT_DB},
      {"help", no_argument, NULL, 'h'},
      {"version", no_argument, NULL, 'V'},
      {NULL, 0, NULL, 0},
  };
  const char *db = NULL;
  opterr = 0;
  unsigned char given[512] = {0};
  int c;
  /* '+': stop at the command; its own options follow it. */
  while ((c = getopt_long(argc, argv, "+:hV", longopts, NULL)) != -1) {
    /* A value given twice is a mistake, not "the last one wins". */
    for (const struct option *o = longopts; o->name; o++)
      if (o->val == c && o->has_arg && given[c]++) {
        char name[40];
        snprintf(name, sizeof name, "--%s", o->name);
        return usage_error(name, "given twice");
      }
    switch (c) {
    case OPT_DB:
      if (!*optarg)
        return usage_error("--db", "empty path");
      db = optarg;
      break;
    case 'h':
      fputs(usage, stdout);
      return TL_EXIT_OK;
    case 'V':
      printf("tlstore %s\n", TL_VERSION);
      return TL_EXIT_OK;
    case ':':
      return usage_error(argv[optind - 1], "needs a value");
    default:
      return usage_error(argv[optind - 1], "unknown option");
    }
  }
  if (optind >= argc)
    return usage_error("command", "missing (see tlstore --help)");
  const command *cmd = NULL;
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp(commands[i].name, argv[optind]) == 0)
      cmd = &commands[i];
  if (!cmd)
    return usage_error(argv[optind], "unknown command (see tlstore --help)");

  char path[4096];
  if (db)
    snprintf(path, sizeof path, "%s", db);
  else if (tl_store_default_path(path, sizeof path)) {
    tl_errorf("no default database path: HOME is not set; use --db PATH or TL_DB");
    return TL_EXIT_FAILURE;
  }
  /* A subcommand may parse its own options with getopt from its name on. */
  int at = optind;
  optind = 1;
  return cmd->run(path, argc - at, argv + at);
}
