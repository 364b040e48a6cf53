/* listing.c: what tlstore info, labels, hosts and sessions print, as the
 * store library writes it: tables and blocks of plain text, with every
 * label, hostname and fact made safe for a terminal (tl_fput_safe). Also
 * what the other commands say, and the checks of their arguments that
 * come before the database is opened (merge, import, push, prune). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store_internal.h"

/* A size for people: "512 bytes", "1.5 KiB", "20.0 MiB", "2.0 GiB". */
static void format_bytes(int64_t n, char *buf, size_t len) {
  if (n >= 1024LL * 1024 * 1024)
    snprintf(buf, len, "%.1f GiB", (double)n / (1024.0 * 1024 * 1024));
  else if (n >= 1024 * 1024)
    snprintf(buf, len, "%.1f MiB", (double)n / (1024.0 * 1024));
  else if (n >= 1024)
    snprintf(buf, len, "%.1f KiB", (double)n / 1024.0);
  else
    snprintf(buf, len, "%lld bytes", (long long)n);
}

/* s padded with spaces to width columns. */
static void put_padded(FILE *out, const char *s, size_t width) {
  tl_fput_safe(out, s);
  fprintf(out, "%*s", (int)(strlen(s) < width ? width - strlen(s) : 0), "");
}

int tl_store_write_info(tl_store *s, const char *path, FILE *out) {
  tl_store_stats st;
  tl_label_summary *rows = NULL;
  size_t n = 0;
  int err = tl_store_info(s, &st);
  if (err || (err = tl_store_label_summaries(s, &rows, &n)))
    return err;
  char size[32];
  format_bytes(st.file_bytes, size, sizeof size);
  fprintf(out, "database:       ");
  tl_fput_safe(out, path);
  fprintf(out, "\nschema version: %d (this tl: %d)\n", st.schema_version, st.schema_latest);
  fprintf(out, "%s%s\n", tl_store_is_server(path) ? "size on server: " : "file size:      ", size);
  fprintf(out, "hosts:          %lld\n", (long long)st.hosts);
  fprintf(out, "sessions:       %lld\n", (long long)st.sessions);
  fprintf(out, "samples:        %lld", (long long)st.samples);
  if (st.samples)
    fprintf(out, " (%.2f bytes each, encoded)", (double)st.sample_bytes / (double)st.samples);
  fprintf(out, "\n");
  if (n)
    fprintf(out, "\n%-24s %10s %12s  %s\n", "label", "sessions", "samples", "delays (ms)");
  for (size_t i = 0; i < n; i++) {
    char delays[256] = "";
    size_t at = 0;
    for (size_t k = 0; k < rows[i].delay_count && at < sizeof delays; k++)
      at += (size_t)snprintf(delays + at, sizeof delays - at, "%s%g", at ? "," : "",
                             (double)rows[i].delays_ns[k] / 1e6);
    put_padded(out, rows[i].label, 24);
    fprintf(out, " %10lld %12lld  %s\n", (long long)rows[i].sessions, (long long)rows[i].samples,
            delays);
  }
  tl_label_summaries_free(rows, n);
  return TL_OK;
}

int tl_store_write_labels(tl_store *s, FILE *out) {
  char **labels = NULL;
  size_t n = 0;
  int err = tl_store_labels(s, &labels, &n);
  for (size_t i = 0; i < n; i++) {
    tl_fput_safe(out, labels[i]);
    fputc('\n', out);
  }
  tl_strings_free(labels, n);
  return err;
}

/* A host's value v of key (NULL: not recorded): "-" for none, a size as
 * "1.0 GiB (1073741824 bytes; size class 1G)", anything else as it is. */
static void put_host_value(FILE *out, const tl_host_key *key, const char *v) {
  int64_t bytes;
  if (v && key->kind == TL_KEY_BYTES && tl_size_parse(v, &bytes, NULL, 0) == TL_OK) {
    char size[32], cls[16];
    format_bytes(bytes, size, sizeof size);
    tl_memory_class(bytes, cls, sizeof cls);
    fprintf(out, "%s (%lld bytes; size class %s)\n", size, (long long)bytes, cls);
    return;
  }
  tl_fput_safe(out, v ? v : "-");
  fputc('\n', out);
}

int tl_store_write_hosts(tl_store *s, FILE *out) {
  tl_host_row *rows;
  size_t n, nkeys;
  int err = tl_store_hosts(s, &rows, &n);
  if (err)
    return err;
  const tl_host_key *keys = tl_host_keys(&nkeys);
  for (size_t i = 0; i < n; i++) {
    const tl_host_row *r = &rows[i];
    char first[32], last[32];
    tl_date_format(r->first_seen_ns, first, sizeof first);
    tl_date_format(r->last_seen_ns, last, sizeof last);
    fprintf(out, "%s", i ? "\n" : "");
    tl_fput_safe(out, r->fingerprint);
    fprintf(out, "  ");
    tl_fput_safe(out, r->hostname);
    fprintf(out, "  %lld session%s, %s .. %s\n", (long long)r->sessions,
            r->sessions == 1 ? "" : "s", first, last);
    for (size_t k = 0; k < nkeys; k++) {
      if (keys[k].session_field)
        continue; /* on the first line */
      fprintf(out, "  %-12s ", keys[k].name);
      put_host_value(out, &keys[k], tl_fact_rows_get(r->facts, r->fact_count, keys[k].fact));
      char lim[32];
      const char *eff = tl_host_key_value(&keys[k], r->facts, r->fact_count, lim, sizeof lim);
      if (eff == lim) { /* a cgroup leaves less than the host has */
        fprintf(out, "  %-12s ", "  limit");
        put_host_value(out, &keys[k], eff);
      }
    }
  }
  if (!n)
    fprintf(out, "no hosts yet\n");
  tl_host_rows_free(rows, n);
  return TL_OK;
}

int tl_store_write_sessions(tl_store *s, const tl_filter *f, FILE *out) {
  tl_session_list list;
  int err = tl_store_sessions(s, f, &list);
  if (err)
    return err;
  fprintf(out, "%-36s  %-16s %-12s %10s  %-16s %-20s  %-11s %12s\n", "uuid", "label", "probe",
          "delay_ms", "host", "started", "status", "samples");
  for (size_t i = 0; i < list.count; i++) {
    const tl_session *x = &list.items[i];
    char when[32];
    tl_date_format(x->started_ns, when, sizeof when);
    fprintf(out, "%-36s  ", x->uuid);
    put_padded(out, x->label, 16);
    fputc(' ', out);
    put_padded(out, x->probe, 12);
    fprintf(out, " %10g  ", (double)x->delay_ns / 1e6);
    put_padded(out, x->hostname, 16);
    fprintf(out, " %-20s  %-11s %12lld\n", when, x->status, (long long)x->sample_count);
  }
  tl_session_list_free(&list);
  return TL_OK;
}

/* ======================================================================== */
/* What tlstore says about a command's work                                  */

tl_store *tl_store_open_or_say(const char *path, int flags) {
  tl_store *store = NULL;
  int err = tl_store_open(&store, path, flags);
  if (err == TL_EREADONLY && !(flags & (TL_STORE_READONLY | TL_STORE_SERVER))) {
    /* info and check only read: a write-protected database is fine (a
     * push's server, named by TL_STORE_SERVER, must take writes). */
    tl_store_close(store);
    err = tl_store_open(&store, path, flags | TL_STORE_READONLY);
  }
  if (err == TL_OK)
    return store;
  tl_errorf("%s", tl_store_errmsg(store));
  tl_store_close(store);
  return NULL;
}

int tl_store_close_saying(tl_store *store, int err) {
  if (!store)
    return TL_EXIT_FAILURE; /* tl_store_open_or_say said why */
  if (err)
    tl_errorf("%s", tl_store_errmsg(store));
  tl_store_close(store);
  return err ? TL_EXIT_FAILURE : TL_EXIT_OK;
}

int tl_store_check_merge_sources(const char *const *paths, size_t n) {
  if (!n)
    return tl_usage_error("OTHER.db", "missing (the databases to merge in)");
  for (size_t i = 0; i < n; i++)
    if (paths[i][0] == '-' || !paths[i][0])
      return tl_usage_error(paths[i], "unknown option (merge takes database files)");
  for (size_t i = 0; i < n; i++)
    if (access(paths[i], R_OK) != 0) {
      tl_errorf("cannot read %s: %s (check the path)", paths[i], strerror(errno));
      return TL_EXIT_FAILURE;
    }
  return TL_EXIT_OK;
}

FILE *tl_store_open_import_source(const char *file) {
  FILE *in = strcmp(file, "-") == 0 ? stdin : fopen(file, "rb");
  if (!in)
    tl_errorf("cannot open %s: %s (check the path)", file, strerror(errno));
  return in;
}

int tl_store_open_push_ends(const char *db, const char *url, int remove_pushed, tl_store **local,
                            tl_store **server) {
  *local = *server = NULL;
  url = url ? url : getenv("TL_PUSH_URL");
  if (!url || !*url)
    return tl_usage_error("URL", "missing (the server: postgresql://USER@HOST/DATABASE, or set "
                                 "TL_PUSH_URL)");
  if (tl_store_is_server(db))
    return tl_usage_error("--db", "push sends a database file to a server; --db names a server");
  *local = tl_store_open_or_say(db, remove_pushed ? TL_STORE_NOCREATE : TL_STORE_READONLY);
  *server = *local ? tl_store_open_or_say(url, TL_STORE_SERVER) : NULL;
  if (*server)
    return TL_EXIT_OK;
  tl_store_close(*local);
  *local = NULL;
  return TL_EXIT_FAILURE;
}

int tl_prune_option(tl_prune_args *a, const char *name, const char *v, char *why, size_t whylen) {
  if (strcmp(name, "before") == 0)
    return tl_date_parse(v, &a->before_ns, why, whylen) ? TL_EINVAL : (a->have_before = 1);
  if (strcmp(name, "label") == 0 && tl_label_check(v, why, whylen))
    return TL_EINVAL;
  return strcmp(name, "label") == 0 ? (a->label = v, 1) : 0;
}

static void put_problem(void *out, const char *problem) {
  fprintf(out, "problem: ");
  tl_fput_safe(out, problem);
  fprintf(out, "\n");
}

int tl_store_write_check(tl_store *s, FILE *out) {
  int err = tl_store_check(s, put_problem, out);
  if (err == TL_ECORRUPT)
    return tl__store_fail(s, err, "the database has problems (listed above)");
  if (!err)
    fprintf(out, "ok\n");
  return err;
}

void tl_store_say_bad_row(void *source, int64_t line, const char *why) {
  fprintf(stderr, "%s: ", tl_progname());
  tl_fput_safe(stderr, source);
  fprintf(stderr, ":%lld: ", (long long)line);
  tl_fput_safe(stderr, why);
  fputc('\n', stderr);
}

void tl_store_write_imported(FILE *out, const char *uuid, int64_t samples, int64_t bad_rows) {
  fprintf(out, "imported %lld samples into session %s", (long long)samples, uuid);
  if (bad_rows)
    fprintf(out, " (%lld bad rows skipped)", (long long)bad_rows);
  fputc('\n', out);
}

/* "1 session", "2 sessions". */
static const char *plural(int64_t n) { return n == 1 ? "" : "s"; }

void tl_store_write_merged(FILE *out, const tl_merge_stats *st) {
  fprintf(out, "merged %lld session%s (%lld sample%s, %lld new host%s); %lld already present",
          (long long)st->sessions_added, plural(st->sessions_added), (long long)st->samples_added,
          plural(st->samples_added), (long long)st->hosts_added, plural(st->hosts_added),
          (long long)st->sessions_present);
  if (st->sessions_completed)
    fprintf(out, "; %lld copied before they ended, now completed",
            (long long)st->sessions_completed);
  if (st->sessions_running)
    fprintf(out, "; %lld still running, left for a later merge", (long long)st->sessions_running);
  fputc('\n', out);
}

void tl_store_say_push_progress(void *ctx, const tl_push_stats *st) {
  (void)ctx;
  fprintf(stderr, "\r%s: pushing: %lld/%lld sessions (%lld sent, %lld present)", tl_progname(),
          (long long)st->sessions_done, (long long)st->sessions_total,
          (long long)st->sessions_pushed, (long long)st->sessions_present);
  fflush(stderr);
}

void tl_store_write_pushed(FILE *out, const tl_push_stats *st, int removed) {
  fprintf(out, "pushed %lld session%s (%lld sample%s); %lld already on the server",
          (long long)st->sessions_pushed, plural(st->sessions_pushed),
          (long long)st->samples_pushed, plural(st->samples_pushed),
          (long long)st->sessions_present);
  if (removed)
    fprintf(out, "; %lld removed from the file", (long long)st->sessions_removed);
  fputc('\n', out);
}

void tl_store_write_pruned(FILE *out, const char *path, int64_t sessions, int64_t samples) {
  fprintf(out, "deleted %lld sessions (%lld samples)%s\n", (long long)sessions, (long long)samples,
          tl_store_is_server(path) ? "" : "; run tlstore vacuum to shrink the file");
}
