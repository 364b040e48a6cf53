/* pg_push.c: sending the finished sessions of a file to a server.
 *
 * Each session goes in a transaction of its own: its host (inserted, or its
 * first and last seen widened as tlstore merge does), the session row, its
 * tags and facts, and its sample blocks by binary COPY, byte for byte as the
 * file holds them, each block decoded first so that nothing corrupt leaves
 * the file. The session's summary goes with them: the file's, byte for
 * byte, when it agrees with the samples sent, or else made from them, as
 * tlstore merge does (tl__summary_pick). The session row is inserted ON
 * CONFLICT (uuid) DO NOTHING: when another pusher sends the same session at
 * the same time, PostgreSQL makes the second wait for the first and then
 * finds it there, so a session is stored once and seen whole or not at
 * all. Every transaction locks its host row before the session, always in
 * that order, so pushers cannot deadlock. */
#include <stdlib.h>
#include <string.h>

#include "pg_internal.h"

enum { COPY_CHUNK = 1 << 20 }; /* bytes handed to libpq at a time */

typedef struct {
  tl_store *local, *server;
  const tl_push_opts *opts;
  int64_t session_id; /* on the server */
  int64_t samples;
  uint8_t *buf;
  size_t len;
  tl__summary_pick *pick; /* the session's summary, held against the blocks as they go */
  int64_t values[TL_BLOCK_MAX];
} copier;

static void put_be(copier *c, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; i--)
    c->buf[c->len++] = (uint8_t)(v >> (8 * i));
}

static int flush_copy(copier *c) {
  if (c->len && PQputCopyData(tl__pg_conn(c->server), (const char *)c->buf, (int)c->len) != 1)
    return tl__pg_fail(c->server, NULL, "sending samples");
  c->len = 0;
  return TL_OK;
}

/* One block into the COPY stream: the row (session_id, seq, count, min_ns,
 * max_ns, codec, data) in PostgreSQL's binary COPY format. */
static int copy_block(void *arg, const tl_block *b) {
  copier *c = arg;
  if (c->opts->stop && *c->opts->stop)
    return tl__store_fail(c->server, TL_EINTR, "interrupted");
  const char *why;
  if (tl_block_decode(b, c->values, &why))
    return tl__block_fail(c->local, b, why);
  tl__summary_pick_add(c->pick, c->values, (size_t)b->count);
  if (c->len + b->len + 128 > COPY_CHUNK) {
    int err = flush_copy(c);
    if (err)
      return err;
  }
  put_be(c, 7, 2);
  const int64_t ints[] = {c->session_id, b->seq, b->count, b->min_ns, b->max_ns, b->codec};
  for (size_t i = 0; i < 6; i++) {
    put_be(c, 8, 4);
    put_be(c, (uint64_t)ints[i], 8);
  }
  put_be(c, b->len, 4);
  memcpy(c->buf + c->len, b->data, b->len);
  c->len += b->len;
  c->samples += b->count;
  return TL_OK;
}

/* Sends the blocks of the local session id; the server's COPY ends with
 * them, or is aborted on any failure. */
static int copy_samples(copier *c, int64_t local_id) {
  static const char header[] = "PGCOPY\n\377\r\n";
  PGresult *r = PQexec(tl__pg_conn(c->server),
                       "COPY sample_blocks (session_id, seq, count, min_ns, max_ns, codec, data) "
                       "FROM STDIN (FORMAT binary)");
  int err =
      PQresultStatus(r) == PGRES_COPY_IN ? TL_OK : tl__pg_fail(c->server, r, "sending samples");
  PQclear(r);
  if (err)
    return err;
  memcpy(c->buf, header, 11);
  c->len = 11;
  put_be(c, 0, 4);            /* flags */
  put_be(c, 0, 4);            /* header extension */
  c->local->errmsg[0] = '\0'; /* set below only by a failure of the file */
  err = tl__summary_pick_begin(c->pick, c->local, local_id);
  if (err == TL_OK)
    err = tl_store_scan_blocks(c->local, &local_id, 1, NULL, copy_block, c);
  if (err && err != TL_EINTR && c->local->errmsg[0])
    tl__store_fail(c->server, err, "%s", c->local->errmsg);
  if (err == TL_OK) {
    put_be(c, 0xffff, 2); /* the end of the rows */
    err = flush_copy(c);
  }
  PGconn *conn = tl__pg_conn(c->server);
  if (PQputCopyEnd(conn, err ? "tl push stopped" : NULL) != 1 && err == TL_OK)
    err = tl__pg_fail(c->server, NULL, "sending samples");
  while ((r = PQgetResult(conn))) {
    if (err == TL_OK && PQresultStatus(r) != PGRES_COMMAND_OK)
      err = tl__pg_fail(c->server, r, "storing samples");
    PQclear(r);
  }
  return err;
}

/* blob[0..len) as a bytea literal in PostgreSQL's hex form, "\\x0a1b...",
 * to bind as text and cast ($n::bytea); free it. NULL when out of memory. */
static char *bytea_hex(const uint8_t *blob, size_t len) {
  static const char digits[] = "0123456789abcdef";
  char *hex = malloc(2 * len + 3);
  if (!hex)
    return NULL;
  hex[0] = '\\';
  hex[1] = 'x';
  for (size_t i = 0; i < len; i++) {
    hex[2 + 2 * i] = digits[blob[i] >> 4];
    hex[3 + 2 * i] = digits[blob[i] & 15];
  }
  hex[2 + 2 * len] = '\0';
  return hex;
}

/* The session's summary, the file's or made from the samples just sent,
 * as bytea in hex. */
static int push_summary(copier *c, int64_t local_id) {
  const uint8_t *blob;
  size_t len;
  int err = tl__summary_pick_finish(c->pick, c->local, local_id, &blob, &len);
  if (err)
    return tl__store_fail(c->server, err, "%s", c->local->errmsg);
  char *hex = bytea_hex(blob, len);
  if (!hex) {
    err = tl__store_fail(c->server, TL_ENOMEM, "out of memory sending a summary");
  } else {
    tl_pg_params p = {0};
    tl__pg_param_i64(&p, c->session_id);
    tl__pg_param_text(&p, hex);
    /* A push role granted before servers kept summaries may not insert
     * them: the session goes without, and is summarised when read. */
    err = tl__pg_exec(c->server, "SAVEPOINT summary", NULL, "sending a summary");
    if (err == TL_OK)
      err = tl__pg_exec(c->server,
                        "INSERT INTO session_summaries (session_id, data) VALUES ($1, $2::bytea)",
                        &p, "sending a summary");
    if (err == TL_EPERM)
      err = tl__pg_exec(c->server, "ROLLBACK TO SAVEPOINT summary", NULL, "sending a summary");
  }
  free(hex);
  return err;
}

#define CAUSES_DOING "sending the causes of late samples"

/* One row of the file's causes, as it is. */
static int send_cause_row(void *ctx, size_t index, int kind, int64_t first, int64_t count,
                          const uint8_t *blob, size_t len) {
  (void)index; /* one session */
  copier *c = ctx;
  char *hex = bytea_hex(blob, len);
  if (!hex)
    return tl__store_fail(c->server, TL_ENOMEM, "out of memory " CAUSES_DOING);
  tl_pg_params p = {0};
  tl__pg_param_i64(&p, c->session_id);
  tl__pg_param_i64(&p, kind);
  tl__pg_param_i64(&p, first);
  tl__pg_param_i64(&p, count);
  tl__pg_param_text(&p, hex);
  int err = tl__pg_exec(c->server,
                        "INSERT INTO session_causes (session_id, kind, first_index, count, data) "
                        "VALUES ($1, $2, $3, $4, $5::bytea)",
                        &p, CAUSES_DOING);
  free(hex);
  return err;
}

/* The session's causes (docs/schema.md, "Causes"), each row of the file as
 * it is (none from a file older than the causes). A role that may not
 * insert them leaves the session without, as for summaries: its samples
 * are then "not attributed" on the server. */
static int push_causes(copier *c, int64_t local_id) {
  int err = tl__pg_exec(c->server, "SAVEPOINT causes", NULL, CAUSES_DOING);
  if (err == TL_OK)
    err = c->local->ops->cause_rows(c->local, &local_id, 1, TL__CAUSE_KINDS_ALL, send_cause_row, c);
  if (err == TL_EPERM)
    err = tl__pg_exec(c->server, "ROLLBACK TO SAVEPOINT causes", NULL, CAUSES_DOING);
  return err;
}

/* A PostgreSQL array literal of n strings, {"a","b"}, with quotes and
 * backslashes escaped; free it. NULL when out of memory. */
static char *text_array(const char *const *v, size_t n, size_t stride) {
  size_t cap = 3;
  for (size_t i = 0; i < n; i++)
    cap += 2 * strlen(*(const char *const *)((const char *)v + i * stride)) + 3;
  char *out = malloc(cap), *p = out;
  if (!out)
    return NULL;
  *p++ = '{';
  for (size_t i = 0; i < n; i++) {
    const char *s = *(const char *const *)((const char *)v + i * stride);
    if (i)
      *p++ = ',';
    *p++ = '"';
    for (; *s; s++) {
      if (*s == '"' || *s == '\\')
        *p++ = '\\';
      *p++ = *s;
    }
    *p++ = '"';
  }
  *p++ = '}';
  *p = '\0';
  return out;
}

/* The tags (with_evidence 0) or facts of a local session, inserted for the
 * server's session_id in one statement. */
static int push_rows(tl_store *local, tl_store *server, int64_t local_id, int64_t session_id,
                     int with_evidence) {
  tl_fact_row *rows = NULL;
  size_t n = 0;
  int err = with_evidence ? tl_store_facts(local, local_id, &rows, &n)
                          : tl_store_tags(local, local_id, &rows, &n);
  if (err)
    return tl__store_fail(server, err, "%s", local->errmsg);
  if (!n)
    return TL_OK;
  size_t stride = sizeof *rows;
  char *keys = text_array((const char *const *)&rows[0].key, n, stride);
  char *vals = text_array((const char *const *)&rows[0].value, n, stride);
  char *evid = text_array((const char *const *)&rows[0].evidence, n, stride);
  if (!keys || !vals || !evid) {
    err = tl__store_fail(server, TL_ENOMEM, "out of memory sending a session");
  } else {
    tl_pg_params p = {0};
    tl__pg_param_i64(&p, session_id);
    tl__pg_param_text(&p, keys);
    tl__pg_param_text(&p, vals);
    tl__pg_param_text(&p, evid);
    err = tl__pg_exec(server,
                      with_evidence
                          ? "INSERT INTO host_facts (session_id, key, value, evidence) SELECT $1, "
                            "k, v, e FROM unnest($2::text[], $3::text[], $4::text[]) AS t(k, v, e)"
                          : "INSERT INTO session_tags (session_id, key, value) SELECT $1, k, v "
                            "FROM unnest($2::text[], $3::text[], $4::text[]) AS t(k, v, e)",
                      &p, with_evidence ? "sending host facts" : "sending tags");
  }
  free(keys);
  free(vals);
  free(evid);
  tl_fact_rows_free(rows, n);
  return err;
}

/* Whether the server has the session: 1 (with the same sample count), 0,
 * or a negative error (TL_ECONFLICT for another count). */
static int server_has(tl_store *server, const tl_session *x) {
  tl_pg_params p = {0};
  tl__pg_param_text(&p, x->uuid);
  int err;
  PGresult *r = tl__pg_query(server, "SELECT sample_count FROM sessions WHERE uuid = $1", &p, 0,
                             "looking for a session", &err);
  if (!r)
    return err;
  int has = PQntuples(r) > 0;
  int64_t count = has ? tl__pg_i64(r, 0, 0) : 0;
  PQclear(r);
  if (has && count < x->sample_count) /* sent from a copy taken before it ended */
    return tl__store_fail(server, TL_ECONFLICT,
                          "session %s: the server has it with %lld samples, the file with %lld "
                          "(the server's copy is older: delete it there with tlstore --db URL "
                          "delete %s, then push again)",
                          x->uuid, (long long)count, (long long)x->sample_count, x->uuid);
  if (has && count != x->sample_count)
    return tl__store_fail(server, TL_ECONFLICT,
                          "session %s: the server has it with %lld samples, the file with %lld",
                          x->uuid, (long long)count, (long long)x->sample_count);
  return has;
}

/* Sends one session in one transaction; 1 when it was sent, 0 when the
 * server had it, or a negative error (nothing of it left on the server). */
static int push_session(copier *c, const tl_session *x, const tl_host_row *host) {
  tl_store *server = c->server;
  int err = server_has(server, x);
  if (err)
    return err < 0 ? err : 0;
  const char *doing = "sending a session";
  err = tl__pg_exec(server, "BEGIN", NULL, doing);
  tl_pg_params p = {0};
  tl__pg_param_text(&p, x->host_fingerprint);
  tl__pg_param_text(&p, x->hostname);
  tl__pg_param_i64(&p, host ? host->first_seen_ns : x->started_ns);
  tl__pg_param_i64(&p, host ? host->last_seen_ns : x->started_ns);
  PGresult *r =
      err ? NULL
          : tl__pg_query(server,
                         "INSERT INTO hosts (fingerprint, hostname, first_seen, last_seen) "
                         "VALUES ($1, $2, $3, $4) ON CONFLICT (fingerprint) DO UPDATE SET "
                         "first_seen = least(hosts.first_seen, excluded.first_seen), "
                         "hostname = CASE WHEN excluded.last_seen > hosts.last_seen THEN "
                         "excluded.hostname ELSE hosts.hostname END, "
                         "last_seen = greatest(hosts.last_seen, excluded.last_seen) "
                         "RETURNING id",
                         &p, 0, "sending the session's host", &err);
  int64_t host_id = r ? tl__pg_i64(r, 0, 0) : 0;
  PQclear(r);
  int sent = 1;
  if (err == TL_OK) {
    memset(&p, 0, sizeof p);
    tl__pg_param_text(&p, x->uuid);
    tl__pg_param_text(&p, x->run_uuid);
    tl__pg_param_i64(&p, host_id);
    tl__pg_param_text(&p, x->label);
    tl__pg_param_text(&p, x->probe);
    tl__pg_param_i64(&p, x->delay_ns);
    tl__pg_param_i64(&p, x->warmup);
    tl__pg_param_i64(&p, x->started_ns);
    tl__pg_param_i64(&p, x->ended_ns);
    tl__pg_param_text(&p, x->status);
    tl__pg_param_i64(&p, x->sample_count);
    tl__pg_param_i64(&p, x->missed_periods);
    tl__pg_param_text(&p, x->tl_version);
    tl__pg_param_text(&p, x->libuv_version);
    tl__pg_param_text(&p, x->command_line);
    r = tl__pg_query(server,
                     "INSERT INTO sessions (uuid, run_uuid, host_id, label, probe, delay_ns, "
                     "warmup, started_ns, ended_ns, status, sample_count, missed_periods, "
                     "tl_version, libuv_version, command_line) VALUES ($1, $2, $3, $4, $5, $6, "
                     "$7, $8, $9, $10, $11, $12, $13, $14, $15) ON CONFLICT (uuid) DO NOTHING "
                     "RETURNING id",
                     &p, 0, doing, &err);
    /* No row: another pusher stored it since server_has looked. */
    sent = r && PQntuples(r) == 1;
    c->session_id = sent ? tl__pg_i64(r, 0, 0) : 0;
    PQclear(r);
  }
  if (err == TL_OK && sent)
    err = push_rows(c->local, server, x->id, c->session_id, 0);
  if (err == TL_OK && sent)
    err = push_rows(c->local, server, x->id, c->session_id, 1);
  c->samples = 0;
  if (err == TL_OK && sent)
    err = copy_samples(c, x->id);
  if (err == TL_OK && sent && c->samples != x->sample_count)
    err = tl__store_fail(server, TL_ECORRUPT,
                         "%lld samples stored in the file, %lld recorded (run tlstore check on "
                         "the file)",
                         (long long)c->samples, (long long)x->sample_count);
  if (err == TL_OK && sent)
    err = push_summary(c, x->id);
  if (err == TL_OK && sent)
    err = push_causes(c, x->id);
  if (err == TL_OK && sent)
    err = tl__pg_exec(server, "COMMIT", NULL, "committing a session");
  if (err || !sent) {
    tl__pg_rollback(server);
    if (err == TL_OK)
      err = server_has(server, x); /* 1: stored by the other pusher */
    return err < 0 ? err : 0;
  }
  return 1;
}

static const tl_host_row *find_host(const tl_host_row *hosts, size_t n, const char *fingerprint) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(hosts[i].fingerprint, fingerprint) == 0)
      return &hosts[i];
  return NULL;
}

/* Errors about one session's data, after which the other sessions can
 * still go; any other error (the server, the role, a stop) ends the push. */
static int session_only(int err) {
  return err == TL_EINVAL || err == TL_ECONFLICT || err == TL_ECORRUPT;
}

/* Whether the session is no longer in the file: two pushes with
 * --remove-pushed at once, where the other sent it and removed it after
 * this one listed the file. */
static int removed_meanwhile(tl_store *local, const char *uuid) {
  int has = 1;
  return local->ops->has_session(local, uuid, &has) == TL_OK && !has;
}

int tl__pg_push(tl_store *server, tl_store *local, const tl_push_opts *opts, tl_push_stats *out) {
  tl_push_stats st = {0};
  if (server->readonly)
    return tl__store_fail(server, TL_EREADONLY, "%s is open read-only", server->path);
  tl_filter f;
  tl_filter_init(&f);
  tl_session_list list = {0};
  tl_host_row *hosts = NULL;
  size_t nhosts = 0;
  copier *c = calloc(1, sizeof *c);
  int err = c && (c->buf = malloc(COPY_CHUNK + 64)) && (c->pick = tl__summary_pick_new())
                ? TL_OK
                : TL_ENOMEM;
  if (err)
    tl__store_fail(server, err, "out of memory");
  if (err == TL_OK && (err = tl_store_sessions(local, &f, &list)) == TL_OK)
    err = tl_store_hosts(local, &hosts, &nhosts);
  if (err && local->errmsg[0])
    tl__store_fail(server, err, "%s", local->errmsg);
  for (size_t i = 0; err == TL_OK && i < list.count; i++)
    st.sessions_total += strcmp(list.items[i].status, "running") != 0;
  int first_err = TL_OK;
  char first_msg[sizeof server->errmsg + 64] = "";
  for (size_t i = 0; err == TL_OK && i < list.count; i++) {
    const tl_session *x = &list.items[i];
    if (strcmp(x->status, "running") == 0)
      continue;
    if (opts->stop && *opts->stop) {
      err = tl__store_fail(server, TL_EINTR, "interrupted");
      break;
    }
    c->local = local;
    c->server = server;
    c->opts = opts;
    int rc = push_session(c, x, find_host(hosts, nhosts, x->host_fingerprint));
    if (rc < 0 && session_only(rc) && removed_meanwhile(local, x->uuid))
      rc = 0; /* another push --remove-pushed sent it and took it out of the file */
    if (rc < 0 && session_only(rc)) {
      if (!first_err) {
        first_err = rc;
        snprintf(first_msg, sizeof first_msg, "session %s: %s", x->uuid, server->errmsg);
      }
    } else if (rc < 0) {
      err = rc;
      break;
    } else {
      st.sessions_pushed += rc;
      st.sessions_present += !rc;
      st.samples_pushed += rc ? x->sample_count : 0;
      if (opts->remove_pushed) {
        err = tl_store_delete(local, x->uuid);
        if (err == TL_ENOTFOUND && removed_meanwhile(local, x->uuid)) {
          err = TL_OK; /* another push --remove-pushed took it out first */
        } else if (err != TL_OK) {
          tl__store_fail(server, err, "%s", local->errmsg);
          break;
        } else {
          st.sessions_removed++;
        }
      }
    }
    st.sessions_done++;
    if (opts->progress)
      opts->progress(opts->ctx, &st);
  }
  if (err == TL_EINTR)
    tl__store_fail(server, TL_EINTR,
                   "interrupted after %lld of %lld sessions; the next push sends the rest",
                   (long long)st.sessions_done, (long long)st.sessions_total);
  if (err == TL_OK && first_err)
    err = tl__store_fail(server, first_err, "%.500s", first_msg);
  if (c) {
    free(c->buf);
    tl__summary_pick_free(c->pick);
  }
  free(c);
  tl_host_rows_free(hosts, nhosts);
  tl_session_list_free(&list);
  if (out)
    *out = st;
  return err;
}
