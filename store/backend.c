/* backend.c: the public store functions that depend on where the data
 * lives. tl_store_open picks the backend from the address: a PostgreSQL
 * URI ("postgresql://", "postgres://") opens a server, anything else a
 * SQLite file; every other function here calls the handle's table of
 * operations (store_internal.h), so callers never learn which one runs. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

int tl_store_is_server(const char *path) {
  return path && (strncmp(path, "postgresql://", 13) == 0 || strncmp(path, "postgres://", 11) == 0);
}

#ifndef TL_WITH_POSTGRESQL
/* A tl built without libpq: a server address gets a clear refusal. */
static void unavailable_close(tl_store *s) {
  free(s->path);
  free(s);
}

static int unavailable_open(const tl_store_ops *self, tl_store **out, const char *conninfo,
                            int flags);
static const tl_store_ops unavailable_ops = {
    .name = "PostgreSQL server", .server = 1, .open = unavailable_open, .close = unavailable_close};

static int unavailable_open(const tl_store_ops *self, tl_store **out, const char *conninfo,
                            int flags) {
  (void)conninfo;
  (void)flags;
  tl_store *s = calloc(1, sizeof *s);
  *out = s;
  if (!s)
    return TL_ENOMEM;
  s->ops = self;
  return tl__store_fail(s, TL_EUNAVAIL,
                        "this tl was built without PostgreSQL support (rebuild it with libpq: "
                        "cmake -DTL_POSTGRESQL=ON)");
}
#endif

/* The backend an address names. */
static const tl_store_ops *backend_of(const char *path, int flags) {
  if (!(flags & TL_STORE_SERVER) && !tl_store_is_server(path))
    return &tl__sqlite_ops;
#ifdef TL_WITH_POSTGRESQL
  return &tl__pg_ops;
#else
  return &unavailable_ops;
#endif
}

int tl_store_open(tl_store **out, const char *path, int flags) {
  const tl_store_ops *ops = backend_of(path, flags);
  return ops->open(ops, out, path, flags);
}

void tl_store_close(tl_store *s) {
  if (s)
    s->ops->close(s);
}

int tl__store_can(tl_store *s, int entry, const char *doing) {
  if (entry)
    return TL_OK;
  return tl__store_fail(s, TL_EUNAVAIL,
                        "%s needs a database file; %s is a server (tlstore push sends the "
                        "sessions of a file to it)",
                        doing, s->path);
}

/* What a public function does first when its backend may lack the entry. */
#define NEED(s, entry, doing)                                                                      \
  do {                                                                                             \
    int need_ = tl__store_can(s, (s)->ops->entry != NULL, doing);                                  \
    if (need_)                                                                                     \
      return need_;                                                                                \
  } while (0)

int tl_writer_begin(tl_store *s, const tl_session_spec *spec, tl_writer **out, char uuid_out[37]) {
  *out = NULL;
  NEED(s, writer_begin, "collecting");
  return s->ops->writer_begin(s, spec, out, uuid_out);
}

int tl_store_recover_stale(tl_store *s, int64_t stale_ns, int *count) {
  NEED(s, recover_stale, "recovering stale sessions");
  if (count)
    *count = 0;
  return s->ops->recover_stale(s, stale_ns, count);
}

int tl_store_import(tl_store *s, FILE *in, const tl_import_opts *o, tl_bad_row_cb on_bad, void *ctx,
                    char uuid_out[37], int64_t *imported, int64_t *bad_rows) {
  NEED(s, import, "importing");
  return s->ops->import(s, in, o, on_bad, ctx, uuid_out, imported, bad_rows);
}

int tl_store_merge(tl_store *d, const char *const *paths, size_t n, tl_merge_stats *stats) {
  NEED(d, merge, "merging");
  return d->ops->merge(d, paths, n, stats);
}

int tl_store_vacuum(tl_store *s) {
  NEED(s, vacuum, "vacuuming");
  return s->ops->vacuum(s);
}

#ifdef TL_WITH_POSTGRESQL
static volatile int signalled; /* a SIGINT or SIGTERM during a push with on_signals */

static void on_signal(int sig) {
  (void)sig;
  signalled = 1;
}

/* The receiving store's entry, with SIGINT and SIGTERM turned into a stop
 * for on_signals. */
static int push_to(tl_store *local, tl_store *server, const tl_push_opts *opts, tl_push_stats *st) {
  if (!opts->on_signals)
    return server->ops->push(server, local, opts, st);
  tl_push_opts o = *opts;
  if (!o.stop)
    o.stop = &signalled;
  signalled = 0;
  struct sigaction sa = {.sa_handler = on_signal}, old_int, old_term;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  int err = server->ops->push(server, local, &o, st);
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  return err;
}
#endif

int tl_store_push(tl_store *local, tl_store *server, const tl_push_opts *opts, tl_push_stats *st) {
  if (st)
    memset(st, 0, sizeof *st);
#ifndef TL_WITH_POSTGRESQL
  (void)local;
  (void)opts;
  return tl__store_fail(server, TL_EUNAVAIL, "this tl was built without PostgreSQL support");
#else
  if (!server->ops->push)
    return tl__store_fail(server, TL_EINVAL, "tlstore push sends to a PostgreSQL server");
  if (local->ops->server)
    return tl__store_fail(server, TL_EINVAL, "tlstore push reads a database file, not a server");
  return push_to(local, server, opts, st);
#endif
}

int tl_store_set_codec(tl_store *s, int codec) {
  if (codec < TL_CODEC_DEFAULT || codec > TL_CODEC_PREFIX)
    return tl__store_fail(s, TL_EINVAL, "unknown block codec %d", codec);
  s->codec = codec;
  return TL_OK;
}

int tl_store_schema_version(tl_store *s) { return s->ops->schema_version(s); }

static int is_left_out(const tl_store *s, int64_t id) {
  for (size_t i = 0; i < s->left_out_count; i++)
    if (s->left_out[i] == id)
      return 1;
  return 0;
}

int tl_store_sessions(tl_store *s, const tl_filter *f, tl_session_list *out) {
  out->items = NULL;
  out->count = 0;
  out->strings = NULL;
  if (f->label_count > 256 || f->tag_count > 64)
    return tl__store_fail(s, TL_EINVAL, "too many labels or tags in the filter");
  int err = s->ops->sessions(s, f, out);
  if (!err && !f->limit)
    tl__session_list_order(out);
  if (err || (!s->left_out_count && !f->status))
    return err;
  /* The backend's rows also hold the 'running' sessions a status filter
   * names (query.c): each is now settled as readers show it. */
  char *keep = malloc(out->count + 1);
  if (!keep) {
    tl_session_list_free(out);
    return tl__store_fail(s, TL_ENOMEM, "out of memory listing sessions");
  }
  for (size_t i = 0; i < out->count; i++) {
    const tl_session *x = &out->items[i];
    keep[i] = !is_left_out(s, x->id) && (!f->status || strcmp(x->status, f->status) == 0);
  }
  tl_session_list_keep(out, keep);
  free(keep);
  return TL_OK;
}

int64_t tl_store_damaged_session(const tl_store *s) { return s->damaged_id; }

int tl_store_leave_out(tl_store *s, int64_t session_id) {
  if (is_left_out(s, session_id))
    return TL_OK;
  if (s->left_out_count == TL_LEFT_OUT_MAX)
    return tl__store_fail(s, TL_ECORRUPT, "%s: more than %d damaged sessions (run 'tlstore check')",
                          s->path, TL_LEFT_OUT_MAX);
  s->left_out[s->left_out_count++] = session_id;
  s->damaged_id = 0;
  return TL_OK;
}

int tl_store_labels(tl_store *s, char ***labels, size_t *count) {
  return s->ops->labels(s, labels, count);
}

/* tl_store_label_summaries' rows, put together from label_delays. */
typedef struct {
  tl_label_summary *rows;
  size_t count, cap;
} summaries;

static int add_label_delay(void *ctx, const char *label, int64_t delay_ns, int64_t sessions,
                           int64_t samples) {
  summaries *a = ctx;
  label = label ? label : "";
  if (!a->count || strcmp(a->rows[a->count - 1].label, label) != 0) {
    if (a->count == a->cap) {
      size_t cap = a->cap ? a->cap * 2 : 16;
      tl_label_summary *p = realloc(a->rows, cap * sizeof *p);
      if (!p)
        return TL_ENOMEM;
      a->rows = p;
      a->cap = cap;
    }
    a->rows[a->count] = (tl_label_summary){.label = strdup(label)};
    if (!a->rows[a->count].label)
      return TL_ENOMEM;
    a->count++;
  }
  tl_label_summary *x = &a->rows[a->count - 1];
  int64_t *d = realloc(x->delays_ns, (x->delay_count + 1) * sizeof *d);
  if (!d)
    return TL_ENOMEM;
  x->delays_ns = d;
  d[x->delay_count++] = delay_ns;
  x->sessions += sessions;
  x->samples += samples;
  return TL_OK;
}

int tl_store_label_summaries(tl_store *s, tl_label_summary **out, size_t *count) {
  summaries a = {0};
  int err = s->ops->label_delays(s, add_label_delay, &a);
  if (err == TL_ENOMEM)
    tl__store_fail(s, err, "out of memory summing up the labels");
  if (err) {
    tl_label_summaries_free(a.rows, a.count);
    a.rows = NULL;
    a.count = 0;
  }
  *out = a.rows;
  *count = a.count;
  return err;
}

void tl_label_summaries_free(tl_label_summary *rows, size_t count) {
  for (size_t i = 0; rows && i < count; i++) {
    free(rows[i].label);
    free(rows[i].delays_ns);
  }
  free(rows);
}

int tl_store_scan_blocks(tl_store *s, const int64_t *ids, size_t n, tl_block_filter_cb filter,
                         tl_block_cb fn, void *ctx) {
  return s->ops->scan_blocks(s, ids, n, filter, fn, ctx);
}

int tl_store_read_begin(tl_store *s) { return s->ops->read_begin(s); }

void tl_store_read_end(tl_store *s) { s->ops->read_end(s); }

int tl_store_read_cache(tl_store *s, int64_t bytes) { return s->ops->read_cache(s, bytes); }

int tl_store_facts(tl_store *s, int64_t session_id, tl_fact_row **rows, size_t *count) {
  return s->ops->facts(s, session_id, rows, count);
}

int tl_store_tags(tl_store *s, int64_t session_id, tl_fact_row **rows, size_t *count) {
  return s->ops->tags(s, session_id, rows, count);
}

int tl__details_one_by_one(tl_store *s, const int64_t *ids, size_t n, tl_details_cb fn, void *ctx) {
  int err = TL_OK;
  for (size_t i = 0; i < n && !err; i++) {
    tl_fact_row *facts = NULL, *tags = NULL;
    size_t nf = 0, nt = 0;
    err = s->ops->facts(s, ids[i], &facts, &nf);
    if (!err)
      err = s->ops->tags(s, ids[i], &tags, &nt);
    if (!err)
      err = fn(ctx, i, facts, nf, tags, nt);
    tl_fact_rows_free(facts, nf);
    tl_fact_rows_free(tags, nt);
  }
  return err;
}

int tl_store_details_of(tl_store *s, const int64_t *ids, size_t n, tl_details_cb fn, void *ctx) {
  return s->ops->details_of ? s->ops->details_of(s, ids, n, fn, ctx)
                            : tl__details_one_by_one(s, ids, n, fn, ctx);
}

int tl_store_hosts(tl_store *s, tl_host_row **rows, size_t *count) {
  return s->ops->hosts(s, rows, count);
}

int tl_store_info(tl_store *s, tl_store_stats *stats) {
  memset(stats, 0, sizeof *stats);
  return s->ops->info(s, stats);
}

int tl_store_check(tl_store *s, tl_problem_cb report, void *ctx) {
  return s->ops->check(s, report, ctx);
}

int tl_store_delete(tl_store *s, const char *uuid) { return s->ops->delete_session(s, uuid); }

int tl_store_prune(tl_store *s, int64_t before_ns, const char *label, int64_t *sessions,
                   int64_t *samples) {
  if (sessions)
    *sessions = 0;
  if (samples)
    *samples = 0;
  return s->ops->prune(s, before_ns, label, sessions, samples);
}
