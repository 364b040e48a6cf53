/* pg.c: the PostgreSQL server backend of the store, through libpq.
 *
 * A server holds the finished sessions that collectors push from their own
 * files (pg_push.c), in the tables of schema/pg/, which tl creates and
 * migrates itself; a newer schema or a database of another program is
 * refused. Reading goes through the same operations as a file, with the
 * same order (text sorted byte-wise, COLLATE "C"), so a report reads the
 * same bytes from either. Samples stream a block at a time in libpq's
 * single-row mode: memory stays bounded however many a session holds.
 *
 * Every value is a bound parameter. The connection string never holds a
 * password (tl refuses one: libpq reads ~/.pgpass and PGPASSWORD), so the
 * address in messages is safe to show; server messages are made one line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg_internal.h"

static char *dup_val(const PGresult *r, int row, int col) {
  return strdup(PQgetisnull(r, row, col) ? "" : PQgetvalue(r, row, col));
}

/* ======================================================================== */
/* Opening and migrating                                                     */

/* tl's lock for schema changes: two tl processes meeting an empty server
 * create its tables once. */
#define TL_PG_SCHEMA_LOCK "SELECT pg_advisory_xact_lock(7813304157050299746)"

static void pg_close(tl_store *s) {
  tl_pg *p = tl__pg(s);
  tl__pg_forget_windows(s);
  if (p->conn) /* else libpq may not be loaded */
    PQfinish(p->conn);
  free(s->path);
  free(p);
}

static int pg_schema_version(tl_store *s) {
  int err;
  PGresult *r =
      tl__pg_query(s, "SELECT version FROM tl_schema", NULL, 0, "reading the schema version", &err);
  int v = r && PQntuples(r) == 1 ? (int)tl__pg_i64(r, 0, 0) : -1;
  PQclear(r);
  return v;
}

/* *version: the server's tl schema version, 0 when it has no tl tables;
 * TL_ENOTDB for a database that holds other tables. */
static int identify(tl_store *s, int *version) {
  int err;
  PGresult *r = tl__pg_query(
      s,
      "SELECT to_regclass('tl_schema') IS NOT NULL, (SELECT count(*) FROM pg_class c JOIN "
      "pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND "
      "c.relkind IN ('r', 'p', 'v', 'm'))",
      NULL, 0, "looking for tl's tables", &err);
  if (!r)
    return err;
  int has_tl = strcmp(PQgetvalue(r, 0, 0), "t") == 0;
  int64_t tables = tl__pg_i64(r, 0, 1);
  PQclear(r);
  *version = 0;
  if (!has_tl) {
    if (tables > 0)
      return tl__store_fail(s, TL_ENOTDB,
                            "%s is not a tl database: it holds tables of another program", s->path);
    return TL_OK;
  }
  r = tl__pg_query(s, "SELECT application, version FROM tl_schema", NULL, 0,
                   "reading the schema version", &err);
  if (!r)
    return err;
  if (PQntuples(r) != 1 || strcmp(PQgetvalue(r, 0, 0), "tl") != 0)
    err = tl__store_fail(s, TL_ENOTDB, "%s is not a tl database: its tl_schema table is not tl's",
                         s->path);
  else
    *version = (int)tl__pg_i64(r, 0, 1);
  PQclear(r);
  if (err == TL_OK && *version > (int)tl__pg_migration_count)
    err = tl__store_fail(s, TL_ENEWER,
                         "%s has server schema version %d, newer than this tl understands (%d): "
                         "upgrade tl to use it",
                         s->path, *version, (int)tl__pg_migration_count);
  return err;
}

static int migrate(tl_store *s) {
  const char *doing = "creating or upgrading tl's tables";
  int err = tl__pg_exec(s, "BEGIN", NULL, doing);
  if (err == TL_OK)
    err = tl__pg_exec(s, TL_PG_SCHEMA_LOCK, NULL, doing);
  int version = 0;
  if (err == TL_OK)
    err = identify(s, &version); /* another tl may have done it while we waited */
  for (int v = version; err == TL_OK && v < (int)tl__pg_migration_count; v++) {
    PGresult *r = PQexec(tl__pg_conn(s), tl__pg_migrations[v]);
    if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK)
      err = tl__pg_fail(s, r, doing);
    PQclear(r);
    tl_pg_params p = {0};
    tl__pg_param_i64(&p, v + 1);
    if (err == TL_OK)
      err = tl__pg_exec(s, "UPDATE tl_schema SET version = $1", &p, doing);
  }
  if (err == TL_OK)
    return tl__pg_exec(s, "COMMIT", NULL, doing);
  tl__pg_rollback(s);
  if (err == TL_EPERM)
    tl__store_fail(s, TL_EPERM,
                   "%s: this role may not create or upgrade tl's tables: run 'tlstore --db URL "
                   "info' once as the database's owner (see the README, A fleet)",
                   s->path);
  return err;
}

/* libpq prints the server's notices (and the FATAL of a server shutting
 * down mid-statement) on stderr by default; tl's messages are its own, one
 * line each, so they are dropped: the failure itself reaches the caller. */
static void quiet_notices(void *arg, const char *message) {
  (void)arg;
  (void)message;
}

/* TL_EINVAL when conninfo does not parse or holds a password. */
static int check_conninfo(tl_store *s, const char *conninfo) {
  char *why = NULL;
  PQconninfoOption *opts = PQconninfoParse(conninfo, &why);
  if (!opts) {
    /* libpq's reason may quote the string, password and all: not shown. */
    PQfreemem(why);
    return tl__store_fail(s, TL_EINVAL,
                          "the server address is not a valid PostgreSQL connection string or URI "
                          "(postgresql://USER@HOST/DATABASE)");
  }
  int has_password = 0;
  for (PQconninfoOption *o = opts; o->keyword; o++)
    if (strcmp(o->keyword, "password") == 0 && o->val && *o->val)
      has_password = 1;
  PQconninfoFree(opts);
  if (has_password)
    return tl__store_fail(s, TL_EINVAL,
                          "the server address holds a password: remove it and put it in "
                          "~/.pgpass or PGPASSWORD, where libpq reads it");
  return TL_OK;
}

/* The address as shown in messages: the connection string, which holds no
 * password (check_conninfo), with control characters left to tl_errorf. */
static int set_display(tl_store *s, const char *conninfo) {
  s->path = strdup(conninfo);
  return s->path ? TL_OK : TL_ENOMEM;
}

static int pg_open(const tl_store_ops *self, tl_store **out, const char *conninfo, int flags) {
  *out = NULL;
  tl_pg *p = calloc(1, sizeof *p);
  if (!p)
    return TL_ENOMEM;
  tl_store *s = &p->base;
  *out = s;
  s->ops = self;
  s->readonly = !!(flags & TL_STORE_READONLY);
  if (set_display(s, conninfo))
    return tl__store_fail(s, TL_ENOMEM, "out of memory");
  char why[TL_WHY_MAX];
  if (tl__pq_load(why, sizeof why))
    return tl__store_fail(s, TL_EUNAVAIL, "%s", why);
  int err = check_conninfo(s, conninfo);
  if (err)
    return err;
  /* Defaults first: what the connection string says wins over them. */
  const char *keys[] = {"connect_timeout", "application_name", "dbname", NULL};
  const char *vals[] = {"10", "tl", conninfo, NULL};
  p->conn = PQconnectdbParams(keys, vals, 1);
  if (!p->conn)
    return tl__store_fail(s, TL_ENOMEM, "out of memory connecting to %s", s->path);
  if (PQstatus(p->conn) != CONNECTION_OK) {
    char msg[400];
    snprintf(msg, sizeof msg, "%s", PQerrorMessage(p->conn));
    tl__pg_one_line(msg);
    int auth = strstr(msg, "password") != NULL || strstr(msg, "authentication") != NULL;
    return tl__store_fail(s, auth ? TL_EPERM : TL_EIO, "%s: cannot connect: %s%s", s->path, msg,
                          auth ? " (check the user and the password in ~/.pgpass or PGPASSWORD)"
                               : " (check that the server runs and the address is right)");
  }
  PQsetNoticeProcessor(p->conn, quiet_notices, NULL);
  /* Text goes both ways as UTF-8, as in a file. */
  if (PQsetClientEncoding(p->conn, "UTF8") != 0)
    return tl__pg_fail(s, NULL, "setting the client encoding");
  int version = 0;
  err = identify(s, &version);
  if (err)
    return err;
  if (version < (int)tl__pg_migration_count) {
    if (s->readonly && version == 0)
      return tl__store_fail(
          s, TL_ENOTDB, "%s has no tl data yet (push sessions to it with tlstore push)", s->path);
    if (s->readonly)
      return tl__store_fail(s, TL_EREADONLY,
                            "%s has server schema version %d and needs an upgrade to %d: run "
                            "'tlstore --db URL info' once as the database's owner",
                            s->path, version, (int)tl__pg_migration_count);
    err = migrate(s);
  }
  return err;
}

/* ======================================================================== */
/* Reading                                                                   */

static int pg_read_begin(tl_store *s);
static void pg_read_end(tl_store *s);

/* PostgreSQL's SQL of the session filter (query.c). A server's sessions
 * arrive finished (schema/pg: never 'running'), and its table has no pid
 * or heartbeat to judge one by. */
static const tl__sql_dialect dialect = {
    .param = '$',
    .running_cols = "0, 0",
    .facts = "host_facts",
    .order = "s.started_ns, s.id", /* an index's */
};

/* Column col of row, in the pool; NULL when out of memory. */
static char *pool_val(tl_strpool *pool, const PGresult *r, int row, int col) {
  return tl_strpool_get_len(pool, PQgetvalue(r, row, col), (size_t)PQgetlength(r, row, col));
}

/* A UUID column: each session's own, so copied without a look-up. */
static char *pool_uuid(tl_strpool *pool, const PGresult *r, int row, int col) {
  return tl_strpool_add(pool, PQgetvalue(r, row, col), (size_t)PQgetlength(r, row, col));
}

/* The session of row on host h, its strings in pool; 0 when out of memory. */
static int read_session(const PGresult *r, int row, tl_strpool *pool, tl_strpool_odds *commands,
                        const tl__host_name *h, tl_session *x) {
  x->id = tl__pg_i64(r, row, TL__SQ_ID);
  x->uuid = pool_uuid(pool, r, row, TL__SQ_UUID);
  x->run_uuid = pool_uuid(pool, r, row, TL__SQ_RUN_UUID);
  x->label = pool_val(pool, r, row, TL__SQ_LABEL);
  x->probe = pool_val(pool, r, row, TL__SQ_PROBE);
  x->hostname = h->hostname;
  x->host_fingerprint = h->fingerprint;
  x->status = pool_val(pool, r, row, TL__SQ_STATUS);
  x->command_line = tl_strpool_get_maybe(pool, commands, PQgetvalue(r, row, TL__SQ_COMMAND_LINE),
                                         (size_t)PQgetlength(r, row, TL__SQ_COMMAND_LINE));
  x->tl_version = pool_val(pool, r, row, TL__SQ_TL_VERSION);
  x->libuv_version = pool_val(pool, r, row, TL__SQ_LIBUV_VERSION);
  x->delay_ns = tl__pg_i64(r, row, TL__SQ_DELAY_NS);
  x->warmup = tl__pg_i64(r, row, TL__SQ_WARMUP);
  x->started_ns = tl__pg_i64(r, row, TL__SQ_STARTED_NS);
  x->ended_ns = tl__pg_i64(r, row, TL__SQ_ENDED_NS);
  x->sample_count = tl__pg_i64(r, row, TL__SQ_SAMPLE_COUNT);
  x->missed_periods = tl__pg_i64(r, row, TL__SQ_MISSED_PERIODS);
  return x->uuid && x->run_uuid && x->label && x->probe && x->status && x->command_line &&
         x->tl_version && x->libuv_version;
}

/* One row of the sessions' query into the list. */
static int add_session_row(tl_store *s, const PGresult *r, const tl__host_names *hosts,
                           tl_session_list *out, size_t *cap, tl_strpool_odds *commands) {
  const tl__host_name *h = tl__host_names_find(hosts, tl__pg_i64(r, 0, TL__SQ_HOST_ID));
  tl_session *x;
  if (!h) /* cannot be, the hosts table's foreign key holding: left out, as a join would */
    return TL_OK;
  if (tl__session_list_add(out, cap, &x) || !read_session(r, 0, out->strings, commands, h, x))
    return tl__store_fail(s, TL_ENOMEM, "out of memory listing sessions");
  return tl__session_settle(s, out->strings, x, tl__pg_i64(r, 0, TL__SQ_PID),
                            tl__pg_i64(r, 0, TL__SQ_HEARTBEAT_NS));
}

/* Every host's names into h, their strings in pool. */
static int read_host_names(tl_store *s, tl_strpool *pool, tl__host_names *h) {
  int err;
  PGresult *r = tl__pg_query(s, TL__HOST_NAMES_SQL, NULL, 0, "listing sessions", &err);
  for (int i = 0; r && !err && i < PQntuples(r); i++)
    if (tl__host_names_add(h, pool, tl__pg_i64(r, i, 0), PQgetvalue(r, i, 1),
                           (size_t)PQgetlength(r, i, 1), PQgetvalue(r, i, 2),
                           (size_t)PQgetlength(r, i, 2)))
      err = tl__store_fail(s, TL_ENOMEM, "out of memory listing sessions");
  PQclear(r);
  tl__host_names_ready(h);
  return err;
}

/* Streamed a row at a time: the whole result of a fleet's sessions held
 * at once cost a report more than the list itself. The hosts first, in
 * the same snapshot (a read of its own when none is open). */
static int pg_sessions(tl_store *s, const tl_filter *f, tl_session_list *out) {
  tl__session_query *q = malloc(sizeof *q);
  tl_pg_params *p = malloc(sizeof *p);
  int ours = PQtransactionStatus(tl__pg_conn(s)) == PQTRANS_IDLE;
  tl__host_names hosts = {NULL, 0, 0};
  int err = q && p && (out->strings = tl_strpool_new())
                ? TL_OK
                : tl__store_fail(s, TL_ENOMEM, "out of memory listing sessions");
  int began = !err && ours && (err = pg_read_begin(s)) == TL_OK;
  if (!err)
    err = read_host_names(s, out->strings, &hosts);
  if (!err)
    err = tl__session_query_build(s, &dialect, f, q);
  if (!err) {
    p->n = 0;
    for (int i = 0; i < q->n; i++)
      if (q->params[i].text)
        tl__pg_param_text(p, q->params[i].text);
      else
        tl__pg_param_i64(p, q->params[i].num);
    PGconn *c = tl__pg_conn(s);
    size_t cap = 0;
    tl_strpool_odds commands = {0, 0, 0};
    PGresult *r;
    int sent =
        PQsendQueryParams(c, q->sql, p->n, NULL, p->v, NULL, NULL, 0) && PQsetSingleRowMode(c);
    if (!sent)
      err = tl__pg_fail(s, NULL, "listing sessions");
    /* After an error, the rest of the rows are read and dropped. */
    while (sent && (r = PQgetResult(c))) {
      ExecStatusType st = PQresultStatus(r);
      if (st == PGRES_SINGLE_TUPLE && err == TL_OK)
        err = add_session_row(s, r, &hosts, out, &cap, &commands);
      else if (st != PGRES_SINGLE_TUPLE && st != PGRES_TUPLES_OK && err == TL_OK)
        err = tl__pg_fail(s, r, "listing sessions");
      PQclear(r);
    }
  }
  free(q);
  free(p);
  tl__host_names_free(&hosts);
  if (began)
    pg_read_end(s);
  if (err || !out->count) /* an empty list holds nothing, as before any row */
    tl_session_list_free(out);
  else
    tl__session_list_fit(out);
  return err;
}

static int pg_labels(tl_store *s, char ***labels, size_t *count) {
  *labels = NULL;
  *count = 0;
  int err;
  PGresult *r = tl__pg_query(s, "SELECT DISTINCT label COLLATE \"C\" AS l FROM sessions ORDER BY l",
                             NULL, 0, "listing labels", &err);
  if (!r)
    return err;
  size_t n = (size_t)PQntuples(r);
  *labels = calloc(n ? n : 1, sizeof **labels);
  for (size_t i = 0; *labels && i < n; i++) {
    if (!((*labels)[i] = dup_val(r, (int)i, 0)))
      break;
    (*count)++;
  }
  PQclear(r);
  if (!*labels || *count != n) {
    tl_strings_free(*labels, *count);
    *labels = NULL;
    *count = 0;
    return tl__store_fail(s, TL_ENOMEM, "out of memory listing labels");
  }
  return TL_OK;
}

static int pg_label_delays(tl_store *s, tl__label_delay_cb cb, void *ctx) {
  int err;
  PGresult *r = tl__pg_query(s, TL__LABEL_DELAYS_SQL("COLLATE \"C\""), NULL, 0,
                             "summing up the labels", &err);
  if (!r)
    return err;
  int n = PQntuples(r);
  for (int i = 0; i < n && !err; i++)
    err =
        cb(ctx, PQgetvalue(r, i, 0), tl__pg_i64(r, i, 1), tl__pg_i64(r, i, 2), tl__pg_i64(r, i, 3));
  PQclear(r);
  return err;
}

/* The server caches what it reads; the client holds only rows. */
static int pg_read_cache(tl_store *s, int64_t bytes) {
  (void)s;
  (void)bytes;
  return TL_OK;
}

static int pg_read_begin(tl_store *s) {
  return tl__pg_exec(s, "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY", NULL,
                     "starting a read");
}

static void pg_read_end(tl_store *s) {
  PGconn *c = tl__pg_conn(s);
  tl__pg_forget_windows(s);
  if (c && PQtransactionStatus(c) == PQTRANS_INTRANS)
    PQclear(PQexec(c, "COMMIT"));
  else
    tl__pg_rollback(s);
}

enum { WINDOW = 1024 }; /* session ids a window of facts or tags spans */

/* Reads the rows of sessions [lo, lo + WINDOW) into w with sql (session
 * id, key, value, evidence; $1 and $2 the ends). */
static int rows_window_fill(tl_store *s, tl_pg_rows *w, const char *sql, int64_t lo) {
  tl__pg_rows_clear(w);
  tl_pg_params p = {0};
  tl__pg_param_i64(&p, lo);
  tl__pg_param_i64(&p, lo + WINDOW);
  int err;
  PGresult *r = tl__pg_query(s, sql, &p, 0, "reading session details", &err);
  if (!r)
    return err;
  size_t n = (size_t)PQntuples(r);
  w->session = malloc((n ? n : 1) * sizeof *w->session);
  w->rows = calloc(n ? n : 1, sizeof *w->rows);
  err = w->session && w->rows ? TL_OK : TL_ENOMEM;
  for (size_t i = 0; !err && i < n; i++) {
    tl_fact_row *x = &w->rows[w->n];
    w->session[w->n++] = tl__pg_i64(r, (int)i, 0);
    x->key = dup_val(r, (int)i, 1);
    x->value = dup_val(r, (int)i, 2);
    x->evidence = dup_val(r, (int)i, 3);
    if (!x->key || !x->value || !x->evidence)
      err = TL_ENOMEM;
  }
  PQclear(r);
  if (err) {
    tl__pg_rows_clear(w);
    return tl__store_fail(s, TL_ENOMEM, "out of memory reading session details");
  }
  w->lo = lo;
  w->hi = lo + WINDOW;
  return TL_OK;
}

/* The rows of one session, from the window that holds it (read when none
 * does): a copy the caller frees with tl_fact_rows_free. */
static int read_rows(tl_store *s, tl_pg_rows *w, const char *sql, int64_t session_id,
                     tl_fact_row **rows, size_t *count) {
  *rows = NULL;
  *count = 0;
  if (session_id < w->lo || session_id >= w->hi || w->lo == w->hi) {
    int err = rows_window_fill(s, w, sql, session_id);
    if (err)
      return err;
  }
  size_t n, from = tl__pg_rows_of(w->session, w->n, session_id, &n);
  *rows = calloc(n ? n : 1, sizeof **rows);
  int err = *rows ? TL_OK : TL_ENOMEM;
  for (size_t i = 0; !err && i < n; i++) {
    const tl_fact_row *x = &w->rows[from + i];
    tl_fact_row *y = &(*rows)[(*count)++];
    y->key = strdup(x->key);
    y->value = strdup(x->value);
    y->evidence = strdup(x->evidence);
    if (!y->key || !y->value || !y->evidence)
      err = TL_ENOMEM;
  }
  if (err) {
    tl_fact_rows_free(*rows, *count);
    *rows = NULL;
    *count = 0;
    return tl__store_fail(s, TL_ENOMEM, "out of memory reading session details");
  }
  return TL_OK;
}

static int pg_facts(tl_store *s, int64_t session_id, tl_fact_row **rows, size_t *count) {
  return read_rows(s, &tl__pg(s)->facts,
                   "SELECT session_id, key COLLATE \"C\" AS k, value, evidence FROM host_facts "
                   "WHERE session_id >= $1 AND session_id < $2 ORDER BY session_id, k",
                   session_id, rows, count);
}

static int pg_tags(tl_store *s, int64_t session_id, tl_fact_row **rows, size_t *count) {
  return read_rows(s, &tl__pg(s)->tags,
                   "SELECT session_id, key COLLATE \"C\" AS k, value, '' FROM session_tags "
                   "WHERE session_id >= $1 AND session_id < $2 ORDER BY session_id, k",
                   session_id, rows, count);
}

static int pg_hosts(tl_store *s, tl_host_row **rows, size_t *count) {
  *rows = NULL;
  *count = 0;
  int err;
  PGresult *r = tl__pg_query(
      s,
      "SELECT h.fingerprint, h.hostname, h.first_seen, h.last_seen, "
      "(SELECT count(*) FROM sessions x WHERE x.host_id = h.id), "
      "(SELECT x.id FROM sessions x WHERE x.host_id = h.id ORDER BY x.started_ns DESC, x.id DESC "
      "LIMIT 1) FROM hosts h ORDER BY h.last_seen DESC, h.fingerprint COLLATE \"C\"",
      NULL, 0, "listing hosts", &err);
  if (!r)
    return err;
  size_t n = (size_t)PQntuples(r);
  *rows = calloc(n ? n : 1, sizeof **rows);
  for (size_t i = 0; *rows && i < n && err == TL_OK; i++) {
    int row = (int)i;
    tl_host_row *x = &(*rows)[(*count)++];
    x->fingerprint = dup_val(r, row, 0);
    x->hostname = dup_val(r, row, 1);
    x->first_seen_ns = tl__pg_i64(r, row, 2);
    x->last_seen_ns = tl__pg_i64(r, row, 3);
    x->sessions = tl__pg_i64(r, row, 4);
    x->latest_session_id = tl__pg_i64(r, row, 5);
    if (!x->fingerprint || !x->hostname)
      err = TL_ENOMEM;
  }
  PQclear(r);
  if (!*rows || err)
    err = tl__store_fail(s, TL_ENOMEM, "out of memory listing hosts");
  for (size_t i = 0; i < *count && err == TL_OK; i++)
    if ((*rows)[i].latest_session_id)
      err = pg_facts(s, (*rows)[i].latest_session_id, &(*rows)[i].facts, &(*rows)[i].fact_count);
  if (err) {
    tl_host_rows_free(*rows, *count);
    *rows = NULL;
    *count = 0;
  }
  return err;
}

/* ======================================================================== */
/* Info, check and maintenance                                               */

static int pg_info(tl_store *s, tl_store_stats *x) {
  x->schema_version = pg_schema_version(s);
  x->schema_latest = (int)tl__pg_migration_count;
  int err;
  PGresult *r = tl__pg_query(
      s,
      "SELECT pg_database_size(current_database()), (SELECT count(*) FROM hosts), "
      "(SELECT count(*) FROM sessions), (SELECT coalesce(sum(sample_count), 0) FROM sessions), "
      "(SELECT count(*) FROM sample_blocks), "
      "(SELECT coalesce(sum(octet_length(data)), 0) FROM sample_blocks)",
      NULL, 0, "reading statistics", &err);
  if (!r)
    return err;
  x->file_bytes = tl__pg_i64(r, 0, 0);
  x->hosts = tl__pg_i64(r, 0, 1);
  x->sessions = tl__pg_i64(r, 0, 2);
  x->samples = tl__pg_i64(r, 0, 3);
  x->blocks = tl__pg_i64(r, 0, 4);
  x->sample_bytes = tl__pg_i64(r, 0, 5);
  PQclear(r);
  return TL_OK;
}

static int pg_check(tl_store *s, tl_problem_cb report, void *ctx) {
  int problems = 0;
  int version = pg_schema_version(s);
  if (version != (int)tl__pg_migration_count) {
    char msg[128];
    snprintf(msg, sizeof msg, "server schema version is %d, this tl expects %d", version,
             (int)tl__pg_migration_count);
    if (report)
      report(ctx, msg);
    problems++;
  }
  /* A table dropped by hand would fail every report; the queries below
   * would not all notice it. */
  static const char *const tables[] = {"hosts",      "sessions",      "session_tags",
                                       "host_facts", "sample_blocks", "session_summaries"};
  int missing = 0;
  for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
    if (i == 5 && version < 2)
      break;
    tl_pg_params p = {0};
    tl__pg_param_text(&p, tables[i]);
    int qerr;
    PGresult *r =
        tl__pg_query(s, "SELECT to_regclass($1) IS NOT NULL", &p, 0, "checking tables", &qerr);
    if (!r)
      return qerr;
    if (PQgetvalue(r, 0, 0)[0] != 't') {
      char msg[128];
      snprintf(msg, sizeof msg, "table %s is missing (restore it from a backup)", tables[i]);
      if (report)
        report(ctx, msg);
      missing++;
    }
    PQclear(r);
  }
  if (missing)
    return TL_ECORRUPT; /* the checks below read those tables */
  /* Foreign keys and unique keys are the server's to keep; the samples are
   * checked as in a file. */
  int err = tl__check_sessions(s, TL__CHECK_SAMPLES | (version >= 2 ? TL__CHECK_SUMMARIES : 0),
                               report, ctx, &problems);
  if (err)
    return err;
  return problems ? TL_ECORRUPT : TL_OK;
}

static int pg_has_session(tl_store *s, const char *uuid, int *has) {
  tl_pg_params p = {0};
  tl__pg_param_text(&p, uuid);
  int err;
  PGresult *r =
      tl__pg_query(s, "SELECT 1 FROM sessions WHERE uuid = $1", &p, 0, "finding a session", &err);
  *has = r && PQntuples(r) > 0;
  PQclear(r);
  return err;
}

static int pg_delete(tl_store *s, const char *uuid) {
  tl__pg_forget_windows(s);
  if (s->readonly)
    return tl__store_fail(s, TL_EREADONLY, "%s is open read-only", s->path);
  tl_pg_params p = {0};
  tl__pg_param_text(&p, uuid);
  int err;
  PGresult *r =
      tl__pg_query(s, "DELETE FROM sessions WHERE uuid = $1", &p, 0, "deleting a session", &err);
  if (!r)
    return err;
  int gone = atoi(PQcmdTuples(r));
  PQclear(r);
  if (!gone)
    return tl__store_fail(s, TL_ENOTFOUND, "no session %.36s on the server (see tlstore sessions)",
                          uuid);
  return TL_OK;
}

static int pg_prune(tl_store *s, int64_t before_ns, const char *label, int64_t *sessions,
                    int64_t *samples) {
  tl__pg_forget_windows(s);
  if (s->readonly)
    return tl__store_fail(s, TL_EREADONLY, "%s is open read-only", s->path);
  tl_pg_params p = {0};
  tl__pg_param_i64(&p, before_ns);
  tl__pg_param_text(&p, label);
  int err;
  PGresult *r = tl__pg_query(
      s,
      "WITH d AS (DELETE FROM sessions WHERE started_ns < $1 AND ($2::text IS NULL OR label = "
      "$2) RETURNING sample_count) SELECT count(*), coalesce(sum(sample_count), 0) FROM d",
      &p, 0, "pruning sessions", &err);
  if (!r)
    return err;
  if (sessions)
    *sessions = tl__pg_i64(r, 0, 0);
  if (samples)
    *samples = tl__pg_i64(r, 0, 1);
  PQclear(r);
  return TL_OK;
}

/* A server holds finished sessions pushed from files: it is not collected,
 * imported or merged into, nor vacuumed by tl (autovacuum does that). */
const tl_store_ops tl__pg_ops = {
    .name = "PostgreSQL server",
    .server = 1,
    .open = pg_open,
    .close = pg_close,
    .schema_version = pg_schema_version,
    .read_begin = pg_read_begin,
    .read_end = pg_read_end,
    .read_cache = pg_read_cache,
    .sessions = pg_sessions,
    .has_session = pg_has_session,
    .labels = pg_labels,
    .label_delays = pg_label_delays,
    .scan_blocks = tl__pg_scan_blocks,
    .facts = pg_facts,
    .tags = pg_tags,
    .details_of = tl__pg_details_of,
    .hosts = pg_hosts,
    .summary_blobs = tl__pg_summary_blobs,
    .cause_rows = tl__pg_cause_rows,
    .push = tl__pg_push,
    .info = pg_info,
    .check = pg_check,
    .delete_session = pg_delete,
    .prune = pg_prune,
};
