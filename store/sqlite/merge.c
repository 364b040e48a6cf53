/* merge.c: combining the databases of many hosts into one. Each host
 * collects into its own file; tl_store_merge copies hosts, sessions, tags,
 * facts and the still-encoded sample blocks of other tl databases into this
 * one. Blocks are copied as they are, after each source session was read
 * through and verified like a report reads it (checksums, block numbers,
 * sample count), and its label and tags validated as tlcollect validates
 * them: a corrupt or hostile source is refused, naming the session, and
 * nothing is merged. Sessions are identified by UUID, which makes a
 * merge idempotent: a session already present with the same content is
 * skipped, one present with different content is a conflict. A session's
 * summary is copied too, once it agrees with the samples read (tlstore
 * check compares every summary with its samples in full). A session still
 * running in the source is left for a later merge; one whose collector is
 * gone is copied as readers show it, 'interrupted'; and a copy taken
 * before its session ended (by an older tl) is replaced by the whole
 * session. A session's causes and counters (session_causes) go with it,
 * verified as a report reads them; a session already present takes the
 * source's, which may have been stored after it ended. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sqlite_internal.h"

/* The session columns that make up its content, host identity included. */
#define SESSION_COLS                                                                               \
  "s.uuid, s.run_uuid, h.fingerprint, s.label, s.probe, s.delay_ns, s.warmup, s.started_ns, "      \
  "s.ended_ns, s.heartbeat_ns, s.pid, s.status, s.sample_count, s.missed_periods, "                \
  "s.tl_version, s.libuv_version, s.command_line, h.hostname, h.first_seen, h.last_seen, s.id"
enum { COMPARED_COLS = 17, COL_HOSTNAME = 17, COL_FIRST = 18, COL_LAST = 19, COL_ID = 20 };
static const char *const col_names[COMPARED_COLS] = {
    "uuid",         "run_uuid",       "host",       "label",         "probe",       "delay_ns",
    "warmup",       "started_ns",     "ended_ns",   "heartbeat_ns",  "pid",         "status",
    "sample_count", "missed_periods", "tl_version", "libuv_version", "command_line"};

static const char *const detail_sql[3][2] = {
    {"SELECT key, value FROM session_tags WHERE session_id = ?1 ORDER BY key",
     "INSERT INTO session_tags (session_id, key, value) VALUES (?1, ?2, ?3)"},
    {"SELECT key, value, evidence FROM session_facts WHERE session_id = ?1 ORDER BY key",
     NULL}, /* a copy's go in a fact set (fact_set_for) */
    {"SELECT seq, count, min_ns, max_ns, codec, data FROM sample_blocks WHERE session_id = ?1 "
     "ORDER BY seq",
     "INSERT INTO sample_blocks (session_id, seq, count, min_ns, max_ns, codec, data) "
     "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"},
};
static const int detail_cols[3] = {2, 3, 6};
static const char *const detail_names[3] = {"tags", "host facts", "samples"};

static int same_value(sqlite3_stmt *a, int ia, sqlite3_stmt *b, int ib) {
  int t = sqlite3_column_type(a, ia);
  if (t != sqlite3_column_type(b, ib))
    return 0;
  switch (t) {
  case SQLITE_NULL:
    return 1;
  case SQLITE_INTEGER:
    return sqlite3_column_int64(a, ia) == sqlite3_column_int64(b, ib);
  case SQLITE_FLOAT:
    return sqlite3_column_double(a, ia) == sqlite3_column_double(b, ib);
  default: {
    const void *x = sqlite3_column_blob(a, ia), *y = sqlite3_column_blob(b, ib);
    int n = sqlite3_column_bytes(a, ia);
    return n == sqlite3_column_bytes(b, ib) && (n == 0 || memcmp(x, y, (size_t)n) == 0);
  }
  }
}

typedef struct {
  tl_store *dst, *src;
  const char *path; /* of src, for messages */
  sqlite3_stmt *find, *host_find, *host, *insert, *detail_src[3], *detail_dst[3], *detail_ins[3];
  sqlite3_stmt *causes_src, *causes_ins; /* causes_src NULL: the source predates the causes */
  tl_merge_stats stats;
  tl__summary_pick *pick; /* the summary of a session copied */
  int summarise;          /* whether verify_session hands its samples to pick */
  int ended_by_death;     /* the source says 'running' of a session whose collector is gone */
} merger;

enum {
  COL_STARTED = 7,
  COL_ENDED = 8,
  COL_HEARTBEAT = 9,
  COL_PID = 10,
  COL_STATUS = 11,
  COL_COUNT = 12,
  COL_MISSED = 13
};

/* Columns that grow while a session runs: a copy taken before it ended
 * differs from the ended session in these alone. */
static int grows(int col) {
  return col == COL_ENDED || col == COL_HEARTBEAT || col == COL_STATUS || col == COL_COUNT ||
         col == COL_MISSED;
}

static int prepare(tl_store *s, const char *sql, sqlite3_stmt **st) {
  int rc = sqlite3_prepare_v2(tl__sqlite_db(s), sql, -1, st, NULL);
  return rc == SQLITE_OK ? TL_OK : tl__store_sqlfail(s, rc, "preparing the merge");
}

/* Compares one kind of detail rows (tags, facts, blocks) of two sessions. */
static int same_details(merger *m, int k, int64_t src_id, int64_t dst_id, int *same) {
  sqlite3_stmt *a = m->detail_src[k], *b = m->detail_dst[k];
  sqlite3_bind_int64(a, 1, src_id);
  sqlite3_bind_int64(b, 1, dst_id);
  *same = 1;
  int ra, rb;
  for (;;) {
    ra = sqlite3_step(a);
    rb = sqlite3_step(b);
    if (ra != SQLITE_ROW || rb != SQLITE_ROW)
      break;
    for (int c = 0; c < detail_cols[k] && *same; c++)
      *same = same_value(a, c, b, c);
    if (!*same)
      break;
  }
  int err = TL_OK;
  if (ra != SQLITE_ROW && ra != SQLITE_DONE)
    err = tl__store_sqlfail(m->src, ra, "reading the other database");
  else if (rb != SQLITE_ROW && rb != SQLITE_DONE)
    err = tl__store_sqlfail(m->dst, rb, "comparing sessions");
  else if (ra != rb)
    *same = 0;
  sqlite3_reset(a);
  sqlite3_reset(b);
  return err;
}

static int copy_details(merger *m, int k, int64_t src_id, int64_t dst_id) {
  sqlite3_stmt *a = m->detail_src[k], *ins = m->detail_ins[k];
  sqlite3_bind_int64(a, 1, src_id);
  int rc, err = TL_OK;
  while (err == TL_OK && (rc = sqlite3_step(a)) == SQLITE_ROW) {
    sqlite3_bind_int64(ins, 1, dst_id);
    for (int c = 0; c < detail_cols[k]; c++)
      sqlite3_bind_value(ins, c + 2, sqlite3_column_value(a, c));
    if (k == 2)
      m->stats.samples_added += sqlite3_column_int64(a, 1);
    int r = sqlite3_step(ins);
    if (r != SQLITE_DONE)
      err = tl__store_sqlfail(m->dst, r, "copying a session");
    sqlite3_reset(ins);
  }
  if (err == TL_OK && rc != SQLITE_DONE)
    err = tl__store_sqlfail(m->src, rc, "reading the other database");
  sqlite3_reset(a);
  return err;
}

/* The samples read to verify a source session that is copied also choose
 * or make its summary. */
static int note_samples(void *ctx, const int64_t *v, size_t n) {
  merger *m = ctx;
  if (m->summarise)
    tl__summary_pick_add(m->pick, v, n);
  return 0;
}

/* Refuses a source session whose causes or counters do not read back. */
static int verify_causes(merger *m, int64_t src_id) {
  tl_cause *c = NULL;
  tl_counter_row *r = NULL;
  size_t n;
  tl_cause_sums sums;
  int err = tl_store_causes(m->src, src_id, &c, &n, &sums);
  if (err == TL_OK)
    err = tl_store_counters(m->src, src_id, &r, &n);
  free(c);
  free(r);
  if (err)
    tl__store_fail(m->dst, err, "%s; nothing was merged", m->src->errmsg);
  return err;
}

/* Copies the source's causes and counters of a session, replacing the
 * database's rows of the same kind and place. */
static int copy_causes(merger *m, int64_t src_id, int64_t dst_id) {
  if (!m->causes_src)
    return TL_OK;
  sqlite3_stmt *a = m->causes_src, *ins = m->causes_ins;
  sqlite3_bind_int64(a, 1, src_id);
  int rc, err = TL_OK;
  while (err == TL_OK && (rc = sqlite3_step(a)) == SQLITE_ROW) {
    sqlite3_bind_int64(ins, 1, dst_id);
    for (int c = 0; c < 4; c++)
      sqlite3_bind_value(ins, c + 2, sqlite3_column_value(a, c));
    int r = sqlite3_step(ins);
    if (r != SQLITE_DONE)
      err = tl__store_sqlfail(m->dst, r, "copying a session's causes");
    sqlite3_reset(ins);
  }
  if (err == TL_OK && rc != SQLITE_DONE)
    err = tl__store_sqlfail(m->src, rc, "reading the other database");
  sqlite3_reset(a);
  return err;
}

/* Refuses a source session whose samples do not read back whole and
 * verified, or whose label or tags tlcollect would not have accepted. */
static int verify_session(merger *m, sqlite3_stmt *s, const char *uuid, int64_t src_id) {
  char why[TL_WHY_MAX];
  const char *label = (const char *)sqlite3_column_text(s, 3);
  if (tl_label_check(label, why, sizeof why))
    return tl__store_fail(m->dst, TL_EINVAL, "%s: session %.36s: %s; nothing was merged", m->path,
                          uuid, why);
  sqlite3_stmt *t = m->detail_src[0];
  sqlite3_bind_int64(t, 1, src_id);
  int rc, err = TL_OK;
  while (err == TL_OK && (rc = sqlite3_step(t)) == SQLITE_ROW)
    if (tl_tag_check((const char *)sqlite3_column_text(t, 0),
                     (const char *)sqlite3_column_text(t, 1), why, sizeof why))
      err = tl__store_fail(m->dst, TL_EINVAL, "%s: session %.36s: %s; nothing was merged", m->path,
                           uuid, why);
  if (err == TL_OK && rc != SQLITE_DONE)
    err = tl__store_sqlfail(m->src, rc, "reading the other database");
  sqlite3_reset(t);
  if (err == TL_OK && tl_store_scan(m->src, src_id, note_samples, m) != TL_OK)
    err = tl__store_fail(m->dst, TL_ECORRUPT, "%s; nothing was merged", m->src->errmsg);
  if (err == TL_OK && m->causes_src)
    err = verify_causes(m, src_id);
  return err;
}

/* The source session's facts, in a fact set of the database's host. */
static int fact_set_for(merger *m, int64_t src_id, int64_t host_id, int64_t *set_id) {
  tl_fact *facts;
  size_t n;
  int err = tl__fact_rows(m->src, m->detail_src[1], src_id, &facts, &n);
  if (err == TL_OK)
    err = tl__fact_set_for(m->dst, host_id, facts, n, set_id);
  tl__facts_free(facts, n);
  return err;
}

/* Copies a new, verified session: host, row, details, and its summary
 * when m->summarise. */
static int copy_session(merger *m, sqlite3_stmt *s, int64_t src_id) {
  int rc;
  /* The host: known by fingerprint, its seen-range widened. */
  sqlite3_bind_value(m->host_find, 1, sqlite3_column_value(s, 2));
  rc = sqlite3_step(m->host_find);
  sqlite3_reset(m->host_find);
  if (rc == SQLITE_DONE)
    m->stats.hosts_added++;
  else if (rc != SQLITE_ROW)
    return tl__store_sqlfail(m->dst, rc, "looking up a host");
  sqlite3_bind_value(m->host, 1, sqlite3_column_value(s, 2));
  sqlite3_bind_value(m->host, 2, sqlite3_column_value(s, COL_HOSTNAME));
  sqlite3_bind_value(m->host, 3, sqlite3_column_value(s, COL_FIRST));
  sqlite3_bind_value(m->host, 4, sqlite3_column_value(s, COL_LAST));
  rc = sqlite3_step(m->host);
  int64_t host_id = rc == SQLITE_ROW ? sqlite3_column_int64(m->host, 0) : 0;
  sqlite3_reset(m->host);
  if (rc != SQLITE_ROW)
    return tl__store_sqlfail(m->dst, rc, "recording a host");

  /* The session: its columns in SESSION_COLS order, host by id, facts in
   * the host's set. */
  int64_t set_id;
  int err = fact_set_for(m, src_id, host_id, &set_id);
  if (err)
    return err;
  for (int c = 0; c < COMPARED_COLS; c++)
    sqlite3_bind_value(m->insert, c + 1, sqlite3_column_value(s, c));
  sqlite3_bind_int64(m->insert, 3, host_id);
  if (set_id)
    sqlite3_bind_int64(m->insert, COMPARED_COLS + 1, set_id);
  else
    sqlite3_bind_null(m->insert, COMPARED_COLS + 1);
  if (m->ended_by_death) { /* as every reader of the source shows it */
    sqlite3_bind_text(m->insert, COL_STATUS + 1, "interrupted", -1, SQLITE_STATIC);
    sqlite3_bind_value(m->insert, COL_ENDED + 1, sqlite3_column_value(s, COL_HEARTBEAT));
  }
  rc = sqlite3_step(m->insert);
  int64_t dst_id = rc == SQLITE_ROW ? sqlite3_column_int64(m->insert, 0) : 0;
  sqlite3_reset(m->insert);
  if (rc != SQLITE_ROW)
    return tl__store_sqlfail(m->dst, rc, "copying a session");
  for (int k = 0; k < 3 && err == TL_OK; k++)
    if (m->detail_ins[k])
      err = copy_details(m, k, src_id, dst_id);
  if (err == TL_OK)
    err = copy_causes(m, src_id, dst_id);
  if (err || !m->summarise)
    return err;
  const uint8_t *blob;
  size_t len;
  err = tl__summary_pick_finish(m->pick, m->src, src_id, &blob, &len);
  if (err && m->src->errmsg[0])
    tl__store_fail(m->dst, err, "%s; nothing was merged", m->src->errmsg);
  else if (err == TL_OK)
    err = tl__summary_write_blob(m->dst, dst_id, blob, len);
  return err;
}

/* Whether column c of the source's session s equals the database's (row
 * d), taking a dead collector's 'running' session as ended at its last
 * commit, as readers show it. */
static int same_column(merger *m, sqlite3_stmt *s, sqlite3_stmt *d, int c) {
  if (m->ended_by_death && c == COL_STATUS) {
    const char *st = (const char *)sqlite3_column_text(d, c);
    return st && strcmp(st, "interrupted") == 0;
  }
  if (m->ended_by_death && c == COL_ENDED)
    return same_value(s, COL_HEARTBEAT, d, c);
  return same_value(s, c, d, c);
}

/* The block of a detail_src[2] or detail_dst[2] row, decoded into v. */
static int decode_row(sqlite3_stmt *r, int64_t *v) {
  tl_block b = {.seq = sqlite3_column_int64(r, 0),
                .count = sqlite3_column_int64(r, 1),
                .min_ns = sqlite3_column_int64(r, 2),
                .max_ns = sqlite3_column_int64(r, 3),
                .codec = sqlite3_column_int(r, 4),
                .data = sqlite3_column_blob(r, 5),
                .len = (size_t)sqlite3_column_bytes(r, 5)};
  const char *why;
  return b.count > 0 && b.count <= TL_BLOCK_MAX && tl_block_decode(&b, v, &why) == TL_OK;
}

/* Whether the database's blocks of a session hold the first samples of the
 * source's: equal blocks, but for the last, which a running collector
 * rewrites as it fills (its samples the first of the source's block). */
static int blocks_prefix(merger *m, int64_t src_id, int64_t dst_id, int *prefix) {
  sqlite3_stmt *a = m->detail_src[2], *b = m->detail_dst[2];
  sqlite3_bind_int64(a, 1, src_id);
  sqlite3_bind_int64(b, 1, dst_id);
  int rb = SQLITE_ROW, err = TL_OK;
  *prefix = 1;
  int64_t *va = NULL, *vb = NULL;
  while (*prefix && (rb = sqlite3_step(b)) == SQLITE_ROW) {
    if (sqlite3_step(a) != SQLITE_ROW || sqlite3_column_int64(a, 0) != sqlite3_column_int64(b, 0)) {
      *prefix = 0;
      break;
    }
    int same = 1;
    for (int c = 1; c < 6 && same; c++)
      same = same_value(a, c, b, c);
    if (same)
      continue;
    int64_t n = sqlite3_column_int64(b, 1);
    va = va ? va : malloc(TL_BLOCK_MAX * sizeof *va);
    vb = vb ? vb : malloc(TL_BLOCK_MAX * sizeof *vb);
    if (!va || !vb) {
      err = tl__store_fail(m->dst, TL_ENOMEM, "out of memory comparing sessions");
      break;
    }
    *prefix = n < sqlite3_column_int64(a, 1) && decode_row(a, va) && decode_row(b, vb) &&
              memcmp(va, vb, (size_t)n * sizeof *va) == 0 &&
              sqlite3_step(b) == SQLITE_DONE; /* only the last may differ */
    rb = SQLITE_DONE;
    break;
  }
  if (err == TL_OK && rb != SQLITE_DONE && *prefix)
    err = tl__store_sqlfail(m->dst, rb, "comparing sessions");
  free(va);
  free(vb);
  sqlite3_reset(a);
  sqlite3_reset(b);
  return err;
}

/* Whether the database's copy (row d) of the source's session s was taken
 * before it ended: what differs is only what grows while a session runs,
 * the copy has fewer samples, and its blocks are the source's first ones. */
static int taken_early(merger *m, sqlite3_stmt *s, sqlite3_stmt *d, int64_t src_id, int64_t dst_id,
                       int *early) {
  *early = 0;
  const char *st = (const char *)sqlite3_column_text(d, COL_STATUS);
  if (!st || (strcmp(st, "running") != 0 && strcmp(st, "interrupted") != 0) ||
      sqlite3_column_int64(d, COL_COUNT) >= sqlite3_column_int64(s, COL_COUNT))
    return TL_OK;
  for (int c = 0; c < COMPARED_COLS; c++)
    if (!grows(c) && !same_column(m, s, d, c))
      return TL_OK;
  int same = 0, prefix = 0, err = TL_OK;
  for (int k = 0; k < 2 && err == TL_OK; k++)
    if ((err = same_details(m, k, src_id, dst_id, &same)) == TL_OK && !same)
      return TL_OK;
  if (err == TL_OK)
    err = blocks_prefix(m, src_id, dst_id, &prefix);
  *early = err == TL_OK && prefix;
  return err;
}

/* Deletes the database's early copy of a session (its details go with it). */
static int drop_early_copy(merger *m, int64_t dst_id) {
  sqlite3_stmt *st = NULL;
  int err = prepare(m->dst, "DELETE FROM sessions WHERE id = ?", &st);
  if (err == TL_OK) {
    sqlite3_bind_int64(st, 1, dst_id);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_DONE)
      err = tl__store_sqlfail(m->dst, rc, "replacing a session copied before it ended");
  }
  sqlite3_finalize(st);
  return err;
}

/* Whether the source's session s is still being written: 'running', and
 * its collector not gone (tl__session_gone, as every reader decides). */
static int still_running(sqlite3_stmt *s, int *dead) {
  const char *status = (const char *)sqlite3_column_text(s, COL_STATUS);
  *dead = 0;
  if (!status || strcmp(status, "running") != 0)
    return 0;
  *dead = tl__session_gone((const char *)sqlite3_column_text(s, COL_HOSTNAME),
                           sqlite3_column_int64(s, COL_PID), sqlite3_column_int64(s, COL_STARTED),
                           sqlite3_column_int64(s, COL_HEARTBEAT), tl__stale_ns());
  return !*dead;
}

/* Copies a session the database lacks. A finished session's summary is
 * the source's when it agrees with the samples verified, or made from them
 * (tl__summary_pick). */
static int add_session(merger *m, sqlite3_stmt *s, const char *uuid, int64_t src_id) {
  m->summarise = 1;
  int err = tl__summary_pick_begin(m->pick, m->src, src_id);
  if (err == TL_OK)
    err = verify_session(m, s, uuid, src_id);
  if (err == TL_OK)
    err = copy_session(m, s, src_id);
  return err;
}

/* One session of the source: left for a later merge while it runs,
 * skipped when present, completed when the database took it before it
 * ended, conflicting, or copied. */
static int merge_session(merger *m, sqlite3_stmt *s) {
  char buf[37];
  const char *uuid = tl__column_uuid(s, 0, buf);
  uuid = *uuid ? uuid : "?";
  int64_t src_id = sqlite3_column_int64(s, COL_ID);
  if (still_running(s, &m->ended_by_death)) {
    m->stats.sessions_running++;
    return TL_OK;
  }
  sqlite3_bind_value(m->find, 1, sqlite3_column_value(s, 0));
  int rc = sqlite3_step(m->find), err = TL_OK;
  if (rc == SQLITE_ROW) {
    m->summarise = 0;
    if ((err = verify_session(m, s, uuid, src_id))) {
      sqlite3_reset(m->find);
      return err;
    }
    int64_t dst_id = sqlite3_column_int64(m->find, COL_ID);
    int early = 0;
    err = taken_early(m, s, m->find, src_id, dst_id, &early);
    const char *differs = NULL;
    for (int c = 0; c < COMPARED_COLS && !differs && !early; c++)
      if (!same_column(m, s, m->find, c))
        differs = col_names[c];
    for (int k = 0; k < 3 && !differs && !early && err == TL_OK; k++) {
      int same = 0;
      err = same_details(m, k, src_id, dst_id, &same);
      if (!same)
        differs = detail_names[k];
    }
    sqlite3_reset(m->find);
    if (err == TL_OK && early) {
      if ((err = drop_early_copy(m, dst_id)) == TL_OK &&
          (err = add_session(m, s, uuid, src_id)) == TL_OK)
        m->stats.sessions_completed++;
    } else if (err == TL_OK && differs) {
      err = tl__store_fail(m->dst, TL_ECONFLICT,
                           "session %.36s of %s differs from the one in the database (%s); "
                           "nothing was merged",
                           uuid, m->path, differs);
    } else if (err == TL_OK && (err = copy_causes(m, src_id, dst_id)) == TL_OK) {
      m->stats.sessions_present++;
    }
    return err;
  }
  sqlite3_reset(m->find);
  if (rc != SQLITE_DONE)
    return tl__store_sqlfail(m->dst, rc, "looking up a session");
  err = add_session(m, s, uuid, src_id);
  if (err == TL_OK)
    m->stats.sessions_added++;
  return err;
}

/* Damage SQLite does not see when it reads: a page of the sessions or hosts
 * table that reads as fewer rows (a cell count set to 0) would merge
 * "0 sessions" and succeed. Every row that refers to a session or a host
 * must find it, and the sessions table must hold as many rows as its index
 * of labels (its smallest index of every row). This reads indexes and the sessions table only:
 * about 0.5 ms for a 10M- sample source, where PRAGMA quick_check reads every page (10 ms). */
static const char source_check_sql[] =
    "SELECT (SELECT count(*) FROM sessions INDEXED BY sessions_label) <> "
    "(SELECT count(*) FROM sessions NOT INDEXED) "
    "OR EXISTS (SELECT 1 FROM sessions s WHERE NOT EXISTS "
    "(SELECT 1 FROM hosts h WHERE h.id = s.host_id)) "
    "OR EXISTS (SELECT 1 FROM (SELECT DISTINCT session_id FROM sample_blocks) b WHERE NOT EXISTS "
    "(SELECT 1 FROM sessions s WHERE s.id = b.session_id)) "
    "OR EXISTS (SELECT 1 FROM session_summaries m WHERE NOT EXISTS "
    "(SELECT 1 FROM sessions s WHERE s.id = m.session_id)) "
    "OR EXISTS (SELECT 1 FROM (SELECT DISTINCT session_id FROM session_tags) t WHERE NOT EXISTS "
    "(SELECT 1 FROM sessions s WHERE s.id = t.session_id)) "
    "OR EXISTS (SELECT 1 FROM (SELECT DISTINCT session_id FROM host_facts) f WHERE NOT EXISTS "
    "(SELECT 1 FROM sessions s WHERE s.id = f.session_id)) "
    "OR EXISTS (SELECT 1 FROM (SELECT DISTINCT host_id, fact_set_id FROM sessions WHERE "
    "fact_set_id IS NOT NULL) s WHERE NOT EXISTS (SELECT 1 FROM fact_sets f WHERE f.host_id = "
    "s.host_id AND f.id = s.fact_set_id))";

static int check_source(merger *m) {
  sqlite3_stmt *st = NULL;
  int err = prepare(m->src, source_check_sql, &st);
  if (err)
    return err;
  int rc = sqlite3_step(st);
  if (rc != SQLITE_ROW)
    err = tl__store_sqlfail(m->src, rc, "reading the other database");
  else if (sqlite3_column_int(st, 0))
    err = tl__store_fail(
        m->dst, TL_ECORRUPT,
        "%s is damaged: rows of its sessions or hosts table are missing" TL__CHECK_HINT
        "; nothing was merged",
        m->path);
  sqlite3_finalize(st);
  return err;
}

static void merger_finalize(merger *m) {
  sqlite3_finalize(m->find);
  sqlite3_finalize(m->host);
  sqlite3_finalize(m->host_find);
  sqlite3_finalize(m->insert);
  for (int k = 0; k < 3; k++) {
    sqlite3_finalize(m->detail_src[k]);
    sqlite3_finalize(m->detail_dst[k]);
    sqlite3_finalize(m->detail_ins[k]);
    m->detail_src[k] = m->detail_dst[k] = m->detail_ins[k] = NULL;
  }
  sqlite3_finalize(m->causes_src);
  sqlite3_finalize(m->causes_ins);
  m->find = m->host_find = m->host = m->insert = m->causes_src = m->causes_ins = NULL;
}

static int merge_one(merger *m) {
  tl_store *d = m->dst;
  int err = prepare(d,
                    "SELECT " SESSION_COLS " FROM sessions s JOIN hosts h ON h.id = s.host_id "
                    "WHERE s.uuid = ?",
                    &m->find);
  if (!err)
    err = prepare(d, "SELECT id FROM hosts WHERE fingerprint = ?", &m->host_find);
  if (!err)
    err = prepare(d,
                  "INSERT INTO hosts (fingerprint, hostname, first_seen, last_seen) "
                  "VALUES (?1, ?2, ?3, ?4) ON CONFLICT(fingerprint) DO UPDATE SET "
                  "first_seen = min(first_seen, ?3), hostname = CASE WHEN ?4 > last_seen "
                  "THEN ?2 ELSE hostname END, last_seen = max(last_seen, ?4) RETURNING id",
                  &m->host);
  if (!err)
    err = prepare(d,
                  "INSERT INTO sessions (uuid, run_uuid, host_id, label, probe, delay_ns, "
                  "warmup, started_ns, ended_ns, heartbeat_ns, pid, status, sample_count, "
                  "missed_periods, tl_version, libuv_version, command_line, fact_set_id) VALUES "
                  "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                  &m->insert);
  for (int k = 0; k < 3 && !err; k++) {
    err = prepare(m->src, detail_sql[k][0], &m->detail_src[k]);
    if (!err)
      err = prepare(d, detail_sql[k][0], &m->detail_dst[k]);
    if (!err && detail_sql[k][1])
      err = prepare(d, detail_sql[k][1], &m->detail_ins[k]);
  }
  if (!err)
    err = prepare(d,
                  "INSERT OR REPLACE INTO session_causes (session_id, kind, first_index, count, "
                  "data) VALUES (?1, ?2, ?3, ?4, ?5)",
                  &m->causes_ins);
  /* A source older than the causes has no such table: nothing to copy. */
  if (!err && sqlite3_prepare_v2(tl__sqlite_db(m->src),
                                 "SELECT kind, first_index, count, data FROM session_causes "
                                 "WHERE session_id = ?1 ORDER BY kind, first_index",
                                 -1, &m->causes_src, NULL) != SQLITE_OK) {
    sqlite3_finalize(m->causes_src);
    m->causes_src = NULL;
  }
  sqlite3_stmt *s = NULL;
  /* One snapshot of the source for the checks and the copy, even while a
   * collector writes to it. */
  if (!err)
    err = tl__sqlite_read_begin(m->src);
  if (!err)
    err = check_source(m);
  if (!err)
    err = prepare(m->src,
                  "SELECT " SESSION_COLS " FROM sessions s JOIN hosts h ON h.id = s.host_id "
                  "ORDER BY s.started_ns, s.id",
                  &s);
  int rc = SQLITE_DONE;
  while (!err && (rc = sqlite3_step(s)) == SQLITE_ROW)
    err = merge_session(m, s);
  if (!err && rc != SQLITE_DONE)
    err = tl__store_sqlfail(m->src, rc, "reading the other database");
  if (err && m->src->errmsg[0] && !d->errmsg[0]) /* it names the source already */
    tl__store_fail(d, err, "%s", m->src->errmsg);
  sqlite3_finalize(s);
  merger_finalize(m);
  tl__sqlite_read_end(m->src);
  return err;
}

int tl__sqlite_merge(tl_store *d, const char *const *paths, size_t n, tl_merge_stats *stats) {
  if (d->readonly)
    return tl__store_fail(d, TL_EREADONLY, "%s is open read-only", d->path);
  merger m;
  memset(&m, 0, sizeof m);
  m.dst = d;
  d->errmsg[0] = '\0';
  int rc = sqlite3_exec(tl__sqlite_db(d), "BEGIN IMMEDIATE", NULL, NULL, NULL);
  if (rc != SQLITE_OK)
    return tl__store_sqlfail(d, rc, "starting the merge");
  m.pick = tl__summary_pick_new();
  int err = m.pick ? TL_OK : tl__store_fail(d, TL_ENOMEM, "out of memory starting the merge");
  for (size_t i = 0; i < n && err == TL_OK; i++) {
    tl_store *src = NULL;
    m.path = paths[i];
    err = tl_store_open(&src, paths[i], TL_STORE_READONLY);
    if (err) {
      tl__store_fail(d, err, "%s", tl_store_errmsg(src));
    } else if (src->ops->server) {
      err =
          tl__store_fail(d, TL_EINVAL, "%s: merging reads database files, not a server", paths[i]);
    } else {
      m.src = src;
      err = merge_one(&m);
    }
    tl_store_close(src);
    m.src = NULL;
  }
  if (err == TL_OK &&
      (rc = sqlite3_exec(tl__sqlite_db(d), "COMMIT", NULL, NULL, NULL)) != SQLITE_OK)
    err = tl__store_sqlfail(d, rc, "committing the merge");
  tl__summary_pick_free(m.pick);
  if (err) {
    sqlite3_exec(tl__sqlite_db(d), "ROLLBACK", NULL, NULL, NULL);
    return err;
  }
  if (stats)
    *stats = m.stats;
  return TL_OK;
}
