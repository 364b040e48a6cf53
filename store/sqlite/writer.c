/* writer.c: appending a session's samples. Samples are buffered in memory and
 * committed in batches, each batch one transaction that also moves the
 * session's heartbeat. The last, partly filled block of a session is
 * rewritten as it grows, so a slow session still packs its samples densely
 * and a killed collector loses only what it had not yet committed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "sqlite_internal.h"

struct tl_writer {
  tl_store *store;
  int64_t session_id;
  int64_t seq;                 /* seq of the open (last, partial) block */
  int64_t block[TL_BLOCK_MAX]; /* committed samples of the open block */
  size_t block_n;
  int64_t *pending; /* buffered, not yet committed */
  size_t pending_n, pending_cap;
  int64_t stored;          /* committed samples */
  tl__summarizer *summary; /* every committed sample, for the summary at the end; may be NULL */
  size_t summarised;       /* pending samples added to it by the batch being written */
  int64_t missed;          /* missed periods, all of them */
  uint8_t enc[TL_BLOCK_HEADER + TL_BLOCK_MAX * 10];
  int64_t scratch[TL_BLOCK_MAX];
};

static int step_done(tl_store *s, sqlite3_stmt *st, const char *doing) {
  int rc = sqlite3_step(st);
  return rc == SQLITE_DONE || rc == SQLITE_ROW ? TL_OK : tl__store_sqlfail(s, rc, doing);
}

static int bind_text(sqlite3_stmt *st, int i, const char *v) {
  return sqlite3_bind_text(st, i, v ? v : "", -1, SQLITE_TRANSIENT);
}

static int check_spec(tl_store *s, const tl_session_spec *spec) {
  char why[TL_WHY_MAX];
  if (tl_label_check(spec->label, why, sizeof why))
    return tl__store_fail(s, TL_EINVAL, "%s", why);
  if (!spec->probe || !*spec->probe || !spec->run_uuid || !spec->host_fingerprint ||
      !spec->hostname || spec->delay_ns < 0 || spec->warmup < 0)
    return tl__store_fail(s, TL_EINVAL, "incomplete session description");
  for (size_t i = 0; i < spec->tag_count; i++)
    if (tl_tag_check(spec->tag_keys[i], spec->tag_values[i], why, sizeof why))
      return tl__store_fail(s, TL_EINVAL, "tag %.64s: %s",
                            spec->tag_keys[i] ? spec->tag_keys[i] : "", why);
  return TL_OK;
}

static int upsert_host(tl_store *s, const tl_session_spec *spec, int64_t now, int64_t *host_id) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(
      tl__sqlite_db(s),
      "INSERT INTO hosts (fingerprint, hostname, first_seen, last_seen) VALUES (?1, ?2, ?3, ?3) "
      "ON CONFLICT(fingerprint) DO UPDATE SET hostname = ?2, first_seen = min(first_seen, ?3), "
      "last_seen = max(last_seen, ?3) RETURNING id",
      -1, &st, NULL);
  if (rc != SQLITE_OK)
    return tl__store_sqlfail(s, rc, "recording the host");
  bind_text(st, 1, spec->host_fingerprint);
  bind_text(st, 2, spec->hostname);
  sqlite3_bind_int64(st, 3, now);
  rc = sqlite3_step(st);
  int err = TL_OK;
  if (rc == SQLITE_ROW)
    *host_id = sqlite3_column_int64(st, 0);
  else
    err = tl__store_sqlfail(s, rc, "recording the host");
  sqlite3_finalize(st);
  return err;
}

static int insert_pairs(tl_store *s, const char *sql, int64_t session_id, const char *const *keys,
                        const char *const *values, const char *const *extra, size_t n,
                        const char *doing) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(tl__sqlite_db(s), sql, -1, &st, NULL);
  if (rc != SQLITE_OK)
    return tl__store_sqlfail(s, rc, doing);
  int err = TL_OK;
  for (size_t i = 0; i < n && err == TL_OK; i++) {
    sqlite3_bind_int64(st, 1, session_id);
    bind_text(st, 2, keys[i]);
    bind_text(st, 3, values[i]);
    if (extra)
      bind_text(st, 4, extra[i]);
    err = step_done(s, st, doing);
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  return err;
}

static int insert_facts(tl_store *s, int64_t session_id, const tl_fact *facts, size_t n) {
  sqlite3_stmt *st = NULL;
  const char *doing = "recording host facts";
  int rc =
      sqlite3_prepare_v2(tl__sqlite_db(s),
                         "INSERT OR REPLACE INTO host_facts (session_id, key, value, evidence) "
                         "VALUES (?, ?, ?, ?)",
                         -1, &st, NULL);
  if (rc != SQLITE_OK)
    return tl__store_sqlfail(s, rc, doing);
  int err = TL_OK;
  for (size_t i = 0; i < n && err == TL_OK; i++) {
    sqlite3_bind_int64(st, 1, session_id);
    bind_text(st, 2, facts[i].key);
    bind_text(st, 3, facts[i].value);
    bind_text(st, 4, facts[i].evidence);
    err = step_done(s, st, doing);
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  return err;
}

int tl__session_insert(tl_store *s, const tl_session_spec *spec, const char *status,
                       char uuid_out[37], int64_t *session_id) {
  int err = check_spec(s, spec);
  if (err)
    return err;
  tl_uuid4(uuid_out);
  int64_t now = spec->started_ns > 0 ? spec->started_ns : tl__now_ns(), host_id = 0, set_id = 0;
  sqlite3_stmt *st = NULL;
  err = upsert_host(s, spec, now, &host_id);
  if (err == TL_OK)
    err = tl__fact_set_for(s, host_id, spec->facts, spec->fact_count, &set_id);
  if (err == TL_OK) {
    int rc = sqlite3_prepare_v2(
        tl__sqlite_db(s),
        "INSERT INTO sessions (uuid, run_uuid, host_id, label, probe, delay_ns, warmup, "
        "started_ns, heartbeat_ns, pid, tl_version, libuv_version, command_line, fact_set_id, "
        "status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        -1, &st, NULL);
    if (rc != SQLITE_OK) {
      err = tl__store_sqlfail(s, rc, "starting a session");
    } else {
      tl__bind_uuid(st, 1, uuid_out);
      tl__bind_uuid(st, 2, spec->run_uuid);
      sqlite3_bind_int64(st, 3, host_id);
      bind_text(st, 4, spec->label);
      bind_text(st, 5, spec->probe);
      sqlite3_bind_int64(st, 6, spec->delay_ns);
      sqlite3_bind_int64(st, 7, spec->warmup);
      sqlite3_bind_int64(st, 8, now);
      sqlite3_bind_int64(st, 9, now);
      sqlite3_bind_int64(st, 10, (sqlite3_int64)getpid());
      bind_text(st, 11, TL_VERSION);
      bind_text(st, 12, spec->libuv_version);
      bind_text(st, 13, spec->command_line);
      if (set_id)
        sqlite3_bind_int64(st, 14, set_id);
      bind_text(st, 15, status);
      rc = sqlite3_step(st);
      if (rc == SQLITE_ROW)
        *session_id = sqlite3_column_int64(st, 0);
      else
        err = tl__store_sqlfail(s, rc, "starting a session");
      sqlite3_finalize(st);
    }
  }
  if (err == TL_OK)
    err = insert_pairs(s, "INSERT INTO session_tags (session_id, key, value) VALUES (?, ?, ?)",
                       *session_id, spec->tag_keys, spec->tag_values, NULL, spec->tag_count,
                       "recording tags");
  return err;
}

/* What a batch leaves free on the file system: enough for the frames that
 * end every open session (its status and end time), which must still fit
 * once samples no longer do, or the sessions would stay 'running'. Ending a
 * session rewrites its row's page, the page of the index of running
 * sessions and a b-tree page above them: one WAL frame each. A collector
 * writes one session per delay at once, all on one handle. */
enum { FRAME = 65536 + 24, FRAMES_TO_END = 3 };

static int room_to_end(const tl_store *s, size_t bytes, size_t sessions) {
  sessions = sessions ? sessions : 1;
  uint64_t need = (uint64_t)bytes + bytes / 4 + 4 * FRAME + sessions * FRAMES_TO_END * FRAME;
  struct statvfs v;
  return statvfs(s->path, &v) != 0 || (uint64_t)v.f_bavail * v.f_frsize >= need;
}

static int room_for(const tl_store *s, size_t bytes) {
  return room_to_end(s, bytes, s->writers_open);
}

static int no_room(tl_store *s, const char *doing) {
  return tl__store_fail(s, TL_EFULL,
                        "%s: %s: the disk is full or a file-size limit is near (free some space, "
                        "or use --db on another disk)",
                        s->path, doing);
}

int tl__sqlite_writer_begin(tl_store *s, const tl_session_spec *spec, tl_writer **out,
                            char uuid_out[37]) {
  if (s->readonly)
    return tl__store_fail(s, TL_EREADONLY, "%s is open read-only", s->path);
  tl_writer *w = calloc(1, sizeof *w);
  if (!w)
    return tl__store_fail(s, TL_ENOMEM, "out of memory");
  w->store = s;
  int err = sqlite3_exec(tl__sqlite_db(s), "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK
                ? TL_OK
                : tl__store_sqlfail(s, sqlite3_errcode(tl__sqlite_db(s)), "starting a session");
  if (err == TL_OK)
    err = tl__session_insert(s, spec, "running", uuid_out, &w->session_id);
  /* A session begins only with room to end it and every other open one. */
  if (err == TL_OK && !room_to_end(s, 0, s->writers_open + 1))
    err = no_room(s, "starting a session");
  if (err == TL_OK && sqlite3_exec(tl__sqlite_db(s), "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
    err = tl__store_sqlfail(s, sqlite3_errcode(tl__sqlite_db(s)), "starting a session");
  if (err) {
    sqlite3_exec(tl__sqlite_db(s), "ROLLBACK", NULL, NULL, NULL);
    free(w);
    return err;
  }
  /* Without room for it the summary is made from the blocks at the end. */
  if ((w->summary = tl__summarizer_new()))
    tl__summary_begin(w->summary);
  s->writers_open++;
  *out = w;
  return TL_OK;
}

/* Facts come at a session's end too, after its samples filled the disk: they
 * are held to the same room as a batch, so that they never spend the frames
 * kept free for ending the session. */
int tl_writer_add_facts(tl_writer *w, const tl_fact *facts, size_t n) {
  tl_store *s = w->store;
  if (sqlite3_exec(tl__sqlite_db(s), "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
    return tl__store_sqlfail(s, sqlite3_errcode(tl__sqlite_db(s)), "recording host facts");
  int err = insert_facts(s, w->session_id, facts, n);
  size_t bytes = 0;
  for (size_t i = 0; i < n; i++)
    bytes += strlen(facts[i].key ? facts[i].key : "") +
             strlen(facts[i].value ? facts[i].value : "") +
             strlen(facts[i].evidence ? facts[i].evidence : "");
  if (err == TL_OK && !room_for(s, bytes))
    err = no_room(s, "recording host facts");
  if (err == TL_OK && sqlite3_exec(tl__sqlite_db(s), "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
    err = tl__store_sqlfail(s, sqlite3_errcode(tl__sqlite_db(s)), "recording host facts");
  if (err)
    sqlite3_exec(tl__sqlite_db(s), "ROLLBACK", NULL, NULL, NULL);
  return err;
}

int tl_writer_add(tl_writer *w, const int64_t *v, size_t n) {
  if (n == 0)
    return TL_OK; /* v may be NULL then, and the buffer not allocated yet */
  if (w->pending_n + n > w->pending_cap) {
    size_t cap = w->pending_cap ? w->pending_cap : 1024;
    while (cap < w->pending_n + n)
      cap *= 2;
    int64_t *p = realloc(w->pending, cap * sizeof *p);
    if (!p)
      return tl__store_fail(w->store, TL_ENOMEM, "out of memory buffering samples");
    w->pending = p;
    w->pending_cap = cap;
  }
  /* Copied and checked in one pass; any is negative when a sample is (one
   * test, not one a sample), and the samples are kept only then. */
  int64_t any = 0, *to = w->pending + w->pending_n;
  for (size_t i = 0; i < n; i++) {
    to[i] = v[i];
    any |= v[i];
  }
  if (any < 0)
    for (size_t i = 0; i < n; i++)
      if (v[i] < 0)
        return tl__store_fail(w->store, TL_EINVAL, "negative latency %lld ns", (long long)v[i]);
  w->pending_n += n;
  return TL_OK;
}

void tl_writer_add_missed(tl_writer *w, int64_t missed) { w->missed += missed; }

int64_t tl_writer_session_id(const tl_writer *w) { return w->session_id; }

int64_t tl_writer_count(const tl_writer *w) { return w->stored + (int64_t)w->pending_n; }

/* Samples at..at+n of the open block followed by the pending ones: in
 * place when they are all pending, else copied into scratch. */
static const int64_t *joined(tl_writer *w, size_t at, size_t n) {
  if (at >= w->block_n)
    return w->pending + (at - w->block_n);
  size_t own = w->block_n - at < n ? w->block_n - at : n;
  memcpy(w->scratch, w->block + at, own * sizeof *w->scratch);
  if (n > own)
    memcpy(w->scratch + own, w->pending, (n - own) * sizeof *w->scratch);
  return w->scratch;
}

static int write_blocks(tl_writer *w, size_t *bytes) {
  tl_store *s = w->store;
  sqlite3_stmt *st = NULL;
  const char *doing = "storing samples";
  int rc = sqlite3_prepare_v2(tl__sqlite_db(s),
                              "INSERT INTO sample_blocks (session_id, seq, count, min_ns, max_ns, "
                              "codec, data) VALUES (?, ?, ?, ?, ?, ?, ?) "
                              "ON CONFLICT(session_id, seq) DO UPDATE SET count = excluded.count, "
                              "min_ns = excluded.min_ns, max_ns = excluded.max_ns, "
                              "codec = excluded.codec, data = excluded.data",
                              -1, &st, NULL);
  if (rc != SQLITE_OK)
    return tl__store_sqlfail(s, rc, doing);
  size_t total = w->block_n + w->pending_n;
  int64_t seq = w->seq;
  int err = TL_OK;
  for (size_t at = 0; at < total && err == TL_OK; at += TL_BLOCK_MAX, seq++) {
    size_t n = total - at < TL_BLOCK_MAX ? total - at : TL_BLOCK_MAX;
    int64_t lo, hi;
    const int64_t *v = joined(w, at, n);
    size_t len = tl_block_encode_as(s->codec, v, n, seq, w->enc, &lo, &hi);
    /* Its pending samples into the summary while they are in the cache
     * (taken back if the batch is not committed). */
    size_t own = at < w->block_n ? w->block_n - at : 0;
    if (w->summary && n > own) {
      tl__summary_add(w->summary, v + own, n - own);
      w->summarised += n - own;
    }
    sqlite3_bind_int64(st, 1, w->session_id);
    sqlite3_bind_int64(st, 2, seq);
    sqlite3_bind_int64(st, 3, (sqlite3_int64)n);
    sqlite3_bind_int64(st, 4, lo);
    sqlite3_bind_int64(st, 5, hi);
    sqlite3_bind_int(st, 6, w->enc[1]);
    sqlite3_bind_blob(st, 7, w->enc, (int)len, SQLITE_STATIC);
    *bytes += len;
    err = step_done(s, st, doing);
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  return err;
}

int tl_writer_flush(tl_writer *w) {
  tl_store *s = w->store;
  int err = sqlite3_exec(tl__sqlite_db(s), "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK
                ? TL_OK
                : tl__store_sqlfail(s, sqlite3_errcode(tl__sqlite_db(s)), "storing samples");
  if (err)
    return err;
  size_t bytes = 0;
  tl_summary before;
  if (w->summary)
    tl__summary_totals(w->summary, &before);
  w->summarised = 0;
  if (w->pending_n)
    err = write_blocks(w, &bytes);
  if (err == TL_OK && bytes && !room_for(s, bytes))
    err = no_room(s, "storing samples");
  int64_t stored = w->stored + (int64_t)w->pending_n;
  if (err == TL_OK) {
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(tl__sqlite_db(s),
                                "UPDATE sessions SET sample_count = ?, missed_periods = ?, "
                                "heartbeat_ns = ? WHERE id = ?",
                                -1, &st, NULL);
    if (rc != SQLITE_OK) {
      err = tl__store_sqlfail(s, rc, "storing samples");
    } else {
      sqlite3_bind_int64(st, 1, stored);
      sqlite3_bind_int64(st, 2, w->missed);
      sqlite3_bind_int64(st, 3, tl__now_ns());
      sqlite3_bind_int64(st, 4, w->session_id);
      err = step_done(s, st, "storing samples");
      sqlite3_finalize(st);
    }
  }
  if (err == TL_OK && sqlite3_exec(tl__sqlite_db(s), "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
    err = tl__store_sqlfail(s, sqlite3_errcode(tl__sqlite_db(s)), "committing samples");
  if (err) {
    sqlite3_exec(tl__sqlite_db(s), "ROLLBACK", NULL, NULL, NULL);
    if (w->summary)
      tl__summary_take_back(w->summary, &before, w->pending, w->summarised);
    return err; /* the samples stay buffered */
  }
  /* Committed: each sample is in the summary once, and the open block is
   * now the tail of (block ++ pending). */
  size_t total = w->block_n + w->pending_n;
  size_t full = total / TL_BLOCK_MAX, tail = total % TL_BLOCK_MAX;
  if (tail)
    memmove(w->block, joined(w, full * TL_BLOCK_MAX, tail), tail * sizeof *w->block);
  w->seq += (int64_t)full;
  w->block_n = tail;
  w->stored = stored;
  w->pending_n = 0;
  return TL_OK;
}

/* Sets the session's final status and end time and stores its summary, in
 * one transaction. A summary that cannot be made (no room for it, say) does
 * not keep the session from ending: it is then computed when read. */
static int close_session(tl_writer *w, const char *status, int with_summary) {
  tl_store *s = w->store;
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_exec(tl__sqlite_db(s), "BEGIN IMMEDIATE", NULL, NULL, NULL);
  if (rc != SQLITE_OK)
    return tl__store_sqlfail(s, rc, "closing the session");
  rc = sqlite3_prepare_v2(
      tl__sqlite_db(s), "UPDATE sessions SET status = ?, ended_ns = ? WHERE id = ?", -1, &st, NULL);
  int err = TL_OK;
  if (rc != SQLITE_OK) {
    err = tl__store_sqlfail(s, rc, "closing the session");
  } else {
    bind_text(st, 1, status);
    sqlite3_bind_int64(st, 2, tl__now_ns());
    sqlite3_bind_int64(st, 3, w->session_id);
    err = step_done(s, st, "closing the session");
    sqlite3_finalize(st);
  }
  if (err == TL_OK && with_summary && tl__summary_put_ended(s, w->session_id, w->summary) != TL_OK)
    s->errmsg[0] = '\0';
  if (err == TL_OK &&
      (rc = sqlite3_exec(tl__sqlite_db(s), "COMMIT", NULL, NULL, NULL)) != SQLITE_OK)
    err = tl__store_sqlfail(s, rc, "closing the session");
  if (err)
    sqlite3_exec(tl__sqlite_db(s), "ROLLBACK", NULL, NULL, NULL);
  return err;
}

int tl_writer_end(tl_writer *w, const char *status) {
  if (!w)
    return TL_OK;
  tl_store *s = w->store;
  int err = tl_writer_flush(w);
  /* When the last samples cannot be stored (disk full, lock held too long),
   * the session still ends, as 'interrupted' with the samples it committed:
   * that small update often fits where the batch did not. The flush error
   * is the one returned. */
  int end_err = TL_OK;
  char flush_msg[sizeof s->errmsg];
  if (err)
    memcpy(flush_msg, s->errmsg, sizeof flush_msg);
  const char *final = err ? "interrupted" : status;
  /* A lock another process holds past the busy timeout would only make the
   * update wait as long again: the session stays 'running' until the next
   * writable open finds its collector gone. */
  /* Where the samples found no room, neither does a summary: the session
   * ends without one (it is summarised when read), and so it does when the
   * end with its summary fails. */
  end_err = err == TL_EBUSY ? TL_OK : close_session(w, final, !err);
  if (end_err && !err)
    end_err = close_session(w, final, 0);
  if (end_err && err == TL_EFULL) {
    /* At a file-size limit the WAL may be too long for even this update:
     * moving it into the database (a file of its own, under the limit) and
     * truncating it makes room; then try again. */
    sqlite3_wal_checkpoint_v2(tl__sqlite_db(s), NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
    end_err = close_session(w, final, 0);
  }
  /* Out of space, the checkpoint SQLite makes when the last connection
   * closes would grow the file by part of a page and fail: the committed
   * pages stay in the WAL instead, for the next open to take in. */
  if (err == TL_EFULL)
    sqlite3_db_config(tl__sqlite_db(s), SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
  if (err)
    memcpy(s->errmsg, flush_msg, sizeof flush_msg);
  else
    err = end_err;
  s->writers_open--;
  free(w->pending);
  tl__summarizer_free(w->summary);
  free(w);
  return err;
}

int tl__sqlite_room_for(const tl_store *s, size_t bytes) { return room_for(s, bytes); }
