/* facts.c: a session's host facts as a SQLite file stores them (docs/
 * schema.md, "Host facts"). The facts a session starts with go in a fact
 * set that the host's next session takes again when its facts are the same:
 * a fleet's imports, or the sessions of one tlcollect run, store their
 * facts once instead of once a session. Facts added to a session later go
 * in host_facts beside it and win over the set's; session_facts reads both
 * as one list. */
#include <stdlib.h>
#include <string.h>

#include "sqlite_internal.h"

static int by_key(const void *a, const void *b) {
  return strcmp((*(const tl_fact *const *)a)->key, (*(const tl_fact *const *)b)->key);
}

/* facts in key order, the last of a repeated key only (as INSERT OR
 * REPLACE keeps it), into sorted; how many. */
static size_t normal_order(const tl_fact *facts, size_t n, const tl_fact **sorted) {
  for (size_t i = 0; i < n; i++)
    sorted[i] = &facts[i];
  /* qsort is not stable: ties are broken by place so the last one stays. */
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && by_key(&sorted[j - 1], &sorted[j]) > 0; j--) {
      const tl_fact *t = sorted[j];
      sorted[j] = sorted[j - 1];
      sorted[j - 1] = t;
    }
  size_t out = 0;
  for (size_t i = 0; i < n; i++) {
    if (out && strcmp(sorted[out - 1]->key, sorted[i]->key) == 0)
      out--;
    sorted[out++] = sorted[i];
  }
  return out;
}

static const char *text_or_empty(const char *t) { return t ? t : ""; }

/* Whether the set id of the host holds exactly sorted[0..n). */
static int set_holds(tl_store *s, int64_t host_id, int64_t id, const tl_fact *const *sorted,
                     size_t n, int *same) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(tl__sqlite_db(s),
                              "SELECT key, value, evidence FROM fact_sets WHERE host_id = ? AND "
                              "id = ? ORDER BY key",
                              -1, &st, NULL);
  size_t i = 0;
  *same = 1;
  if (rc == SQLITE_OK) {
    sqlite3_bind_int64(st, 1, host_id);
    sqlite3_bind_int64(st, 2, id);
    while (*same && (rc = sqlite3_step(st)) == SQLITE_ROW) {
      *same =
          i < n && strcmp((const char *)sqlite3_column_text(st, 0), sorted[i]->key) == 0 &&
          strcmp((const char *)sqlite3_column_text(st, 1), text_or_empty(sorted[i]->value)) == 0 &&
          strcmp((const char *)sqlite3_column_text(st, 2), text_or_empty(sorted[i]->evidence)) == 0;
      i++;
    }
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE && rc != SQLITE_ROW)
    return tl__store_sqlfail(s, rc, "reading host facts");
  *same = *same && i == n;
  return TL_OK;
}

/* The number of the host's latest fact set, 0 when it has none. */
static int latest_set(tl_store *s, int64_t host_id, int64_t *id) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(tl__sqlite_db(s),
                              "SELECT coalesce(max(id), 0) FROM fact_sets WHERE host_id = ?", -1,
                              &st, NULL);
  *id = 0;
  if (rc == SQLITE_OK) {
    sqlite3_bind_int64(st, 1, host_id);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
      *id = sqlite3_column_int64(st, 0);
  }
  sqlite3_finalize(st);
  return rc == SQLITE_ROW ? TL_OK : tl__store_sqlfail(s, rc, "reading host facts");
}

/* The host's set number id, holding sorted[0..n). */
static int new_set(tl_store *s, int64_t host_id, int64_t id, const tl_fact *const *sorted,
                   size_t n) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(tl__sqlite_db(s),
                              "INSERT INTO fact_sets (host_id, id, key, value, evidence) "
                              "VALUES (?, ?, ?, ?, ?)",
                              -1, &st, NULL);
  for (size_t i = 0; i < n && (rc == SQLITE_DONE || rc == SQLITE_OK); i++) {
    sqlite3_bind_int64(st, 1, host_id);
    sqlite3_bind_int64(st, 2, id);
    sqlite3_bind_text(st, 3, sorted[i]->key, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, text_or_empty(sorted[i]->value), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, text_or_empty(sorted[i]->evidence), -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  return rc == SQLITE_DONE || rc == SQLITE_OK ? TL_OK
                                              : tl__store_sqlfail(s, rc, "recording host facts");
}

int tl__fact_set_for(tl_store *s, int64_t host_id, const tl_fact *facts, size_t n, int64_t *id) {
  *id = 0;
  if (!n)
    return TL_OK;
  const tl_fact **sorted = malloc(n * sizeof *sorted);
  if (!sorted)
    return tl__store_fail(s, TL_ENOMEM, "out of memory recording host facts");
  size_t m = normal_order(facts, n, sorted);
  int same = 0, err = latest_set(s, host_id, id);
  if (!err && *id)
    err = set_holds(s, host_id, *id, sorted, m, &same);
  if (!err && !same)
    err = new_set(s, host_id, ++*id, sorted, m);
  free(sorted);
  return err;
}

/* ======================================================================== */
/* Reading one session's rows; migration 6                                   */

int tl__fact_rows(tl_store *s, sqlite3_stmt *st, int64_t session_id, tl_fact **facts, size_t *n) {
  size_t cap = 0;
  *n = 0;
  *facts = NULL;
  sqlite3_bind_int64(st, 1, session_id);
  int rc = SQLITE_DONE, err = TL_OK;
  while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (*n == cap) {
      cap = cap ? 2 * cap : 16;
      tl_fact *more = realloc(*facts, cap * sizeof *more);
      if (!more) {
        err = tl__store_fail(s, TL_ENOMEM, "out of memory reading host facts");
        break;
      }
      *facts = more;
    }
    tl_fact *f = &(*facts)[(*n)++];
    f->key = strdup((const char *)sqlite3_column_text(st, 0));
    f->value = strdup((const char *)sqlite3_column_text(st, 1));
    f->evidence = strdup((const char *)sqlite3_column_text(st, 2));
    if (!f->key || !f->value || !f->evidence)
      err = tl__store_fail(s, TL_ENOMEM, "out of memory reading host facts");
  }
  if (!err && rc != SQLITE_DONE)
    err = tl__store_sqlfail(s, rc, "reading host facts");
  sqlite3_reset(st);
  return err;
}

void tl__facts_free(tl_fact *facts, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free((char *)facts[i].key);
    free((char *)facts[i].value);
    free((char *)facts[i].evidence);
  }
  free(facts);
}

/* The sessions with facts, in the order they were stored: ids and hosts. */
static int sessions_with_facts(tl_store *s, int64_t **pairs, size_t *n) {
  sqlite3_stmt *st = NULL;
  size_t cap = 0;
  *pairs = NULL;
  *n = 0;
  int rc = sqlite3_prepare_v2(tl__sqlite_db(s),
                              "SELECT id, host_id FROM sessions s WHERE EXISTS (SELECT 1 FROM "
                              "host_facts f WHERE f.session_id = s.id) ORDER BY id",
                              -1, &st, NULL);
  int err = TL_OK;
  while (!err && rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    rc = SQLITE_OK;
    if (*n == cap) {
      cap = cap ? 2 * cap : 1024;
      int64_t *more = realloc(*pairs, 2 * cap * sizeof *more);
      if (!more) {
        err = tl__store_fail(s, TL_ENOMEM, "out of memory upgrading the schema");
        break;
      }
      *pairs = more;
    }
    (*pairs)[2 * *n] = sqlite3_column_int64(st, 0);
    (*pairs)[2 * *n + 1] = sqlite3_column_int64(st, 1);
    (*n)++;
  }
  sqlite3_finalize(st);
  if (!err && rc != SQLITE_DONE)
    err = tl__store_sqlfail(s, rc, "upgrading the schema");
  return err;
}

int tl__facts_column(tl_store *s) {
  sqlite3_stmt *st = NULL;
  sqlite3 *db = tl__sqlite_db(s);
  int rc = sqlite3_prepare_v2(db,
                              "SELECT count(*) FROM pragma_table_info('sessions') WHERE name = "
                              "'fact_set_id'",
                              -1, &st, NULL);
  int has = 0;
  if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
    has = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  if (rc != SQLITE_ROW)
    return tl__store_sqlfail(s, rc, "upgrading the schema");
  if (!has && sqlite3_exec(db, "ALTER TABLE sessions ADD COLUMN fact_set_id INTEGER", NULL, NULL,
                           NULL) != SQLITE_OK)
    return tl__store_sqlfail(s, sqlite3_errcode(db), "upgrading the schema");
  return TL_OK;
}

/* Every session with rows in host_facts (all of a file before migration
 * 6) takes a set of all its facts, in the order the sessions were stored,
 * so consecutive sessions of a host with the same facts share one. */
int tl__facts_into_sets(tl_store *s) {
  int64_t *pairs;
  size_t n;
  int err = sessions_with_facts(s, &pairs, &n);
  sqlite3_stmt *rows = NULL, *upd = NULL;
  sqlite3 *db = tl__sqlite_db(s);
  if (!err &&
      (sqlite3_prepare_v2(db,
                          "SELECT key, value, evidence FROM session_facts WHERE session_id = ? "
                          "ORDER BY key",
                          -1, &rows, NULL) != SQLITE_OK ||
       sqlite3_prepare_v2(db, "UPDATE sessions SET fact_set_id = ? WHERE id = ?", -1, &upd, NULL) !=
           SQLITE_OK))
    err = tl__store_sqlfail(s, sqlite3_errcode(db), "upgrading the schema");
  for (size_t i = 0; i < n && !err; i++) {
    tl_fact *facts;
    size_t nf;
    int64_t set;
    err = tl__fact_rows(s, rows, pairs[2 * i], &facts, &nf);
    if (!err)
      err = tl__fact_set_for(s, pairs[2 * i + 1], facts, nf, &set);
    tl__facts_free(facts, nf);
    if (!err) {
      sqlite3_bind_int64(upd, 1, set);
      sqlite3_bind_int64(upd, 2, pairs[2 * i]);
      int rc = sqlite3_step(upd);
      sqlite3_reset(upd);
      if (rc != SQLITE_DONE)
        err = tl__store_sqlfail(s, rc, "upgrading the schema");
    }
  }
  sqlite3_finalize(rows);
  sqlite3_finalize(upd);
  free(pairs);
  if (!err && sqlite3_exec(db, "DELETE FROM host_facts", NULL, NULL, NULL) != SQLITE_OK)
    err = tl__store_sqlfail(s, sqlite3_errcode(db), "upgrading the schema");
  return err;
}
