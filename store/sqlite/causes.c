/* sqlite_causes.c: the rows of session_causes in a SQLite file (causes.c
 * says what they hold): written in a transaction of their own that never
 * takes the room kept for ending the sessions, read by kind. */
#include <stdlib.h>
#include <string.h>

#include "sqlite_internal.h"

int tl__sqlite_write_begin(tl_store *s, size_t bytes, const char *doing) {
  if (s->readonly)
    return tl__store_fail(s, TL_EREADONLY, "%s is open read-only", s->path);
  if (!tl__sqlite_room_for(s, bytes))
    return tl__store_fail(s, TL_EFULL, "no room left for %s", doing);
  sqlite3 *db = tl__sqlite_db(s);
  int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
  return rc == SQLITE_OK ? TL_OK : tl__store_sqlfail(s, sqlite3_errcode(db), doing);
}

int tl__sqlite_write_end(tl_store *s, int err, const char *doing) {
  sqlite3 *db = tl__sqlite_db(s);
  if (!db || sqlite3_get_autocommit(db))
    return err; /* no transaction was begun */
  if (err == TL_OK && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
    err = tl__store_sqlfail(s, sqlite3_errcode(db), doing);
  if (err)
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
  return err;
}

int tl__sqlite_put_cause_row(tl_store *s, int64_t session_id, int kind, int64_t first,
                             int64_t count, const uint8_t *data, size_t len, const char *doing) {
  sqlite3_stmt *st;
  int rc = sqlite3_prepare_v2(tl__sqlite_db(s),
                              "INSERT OR REPLACE INTO session_causes (session_id, kind, "
                              "first_index, count, data) VALUES (?, ?, ?, ?, ?)",
                              -1, &st, NULL);
  if (rc != SQLITE_OK)
    return tl__store_sqlfail(s, rc, doing);
  sqlite3_bind_int64(st, 1, session_id);
  sqlite3_bind_int(st, 2, kind);
  sqlite3_bind_int64(st, 3, first);
  sqlite3_bind_int64(st, 4, count);
  sqlite3_bind_blob(st, 5, data, (int)len, SQLITE_STATIC);
  rc = sqlite3_step(st);
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? TL_OK : tl__store_sqlfail(s, rc, doing);
}

static const char causes_sql[] =
    "SELECT kind, first_index, count, data FROM session_causes WHERE session_id = ?1 AND (?2 = "
    "-1 OR (kind BETWEEN 0 AND 62 AND (?2 >> kind) & 1)) ORDER BY kind, first_index";
static const char span_causes_sql[] =
    "SELECT kind, first_index, count, data, session_id FROM session_causes WHERE session_id "
    "BETWEEN ?1 AND ?3 AND (?2 = -1 OR (kind BETWEEN 0 AND 62 AND (?2 >> kind) & 1)) ORDER BY "
    "session_id, kind, first_index";

/* The statement that reads one session's rows, prepared once a handle, or
 * (a read from inside another's callback) one of its own, which *own then
 * holds; NULL and TL_OK in a file older than the table, which has none. */
static int causes_statement(tl_store *s, sqlite3_stmt **out, sqlite3_stmt **own) {
  sqlite3_stmt **st = &tl__sqlite(s)->causes_st;
  *own = NULL;
  if (*st && sqlite3_stmt_busy(*st))
    st = own;
  int rc = *st ? SQLITE_OK : sqlite3_prepare_v2(tl__sqlite_db(s), causes_sql, -1, st, NULL);
  *out = *st;
  if (rc == SQLITE_OK)
    return TL_OK;
  if (strstr(sqlite3_errmsg(tl__sqlite_db(s)), "no such table"))
    return TL_OK;
  return tl__store_sqlfail(s, rc, "reading causes");
}

/* The rows st's step found, each handed to fn as the row of ids[at] for
 * the session in column 4 (ids[from..to) ascending), or of from alone when
 * the statement reads one session. */
static int hand_rows(tl_store *s, sqlite3_stmt *st, const int64_t *ids, size_t from, size_t to,
                     tl__cause_row_cb fn, void *ctx) {
  int err = TL_OK, rc = SQLITE_DONE;
  size_t at = from;
  while (err == TL_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (to > from + 1) { /* a span: the rows of sessions not asked are passed over */
      int64_t id = sqlite3_column_int64(st, 4);
      while (at < to && ids[at] < id)
        at++;
      if (at == to || ids[at] != id)
        continue;
    }
    err = fn(ctx, at, sqlite3_column_int(st, 0), sqlite3_column_int64(st, 1),
             sqlite3_column_int64(st, 2), sqlite3_column_blob(st, 3),
             (size_t)sqlite3_column_bytes(st, 3));
  }
  if (err == TL_OK && rc != SQLITE_DONE)
    err = tl__store_sqlfail(s, rc, "reading causes");
  sqlite3_reset(st);
  return err;
}

/* One statement for every session, bound to each in turn (preparing one a
 * session cost a fleet's report a fifth of its time), and sessions that
 * ascend densely a span of ids a statement: a search down the table a
 * session, for the causes and again for the counters, took a fleet's page
 * 0.3 s (288,000 sessions, none with rows). */
int tl__sqlite_cause_rows(tl_store *s, const int64_t *ids, size_t n, int64_t kinds,
                          tl__cause_row_cb fn, void *ctx) {
  sqlite3_stmt *st, *own, *span = NULL;
  int err = causes_statement(s, &st, &own);
  for (size_t i = 0; st && err == TL_OK && i < n;) {
    size_t m = tl__sqlite_dense_run(ids + i, n - i);
    if (m && !span) {
      int rc = sqlite3_prepare_v2(tl__sqlite_db(s), span_causes_sql, -1, &span, NULL);
      if (rc != SQLITE_OK) {
        err = tl__store_sqlfail(s, rc, "reading causes");
        break;
      }
    }
    sqlite3_stmt *use = m ? span : st;
    sqlite3_bind_int64(use, 1, ids[i]);
    sqlite3_bind_int64(use, 2, kinds);
    if (m)
      sqlite3_bind_int64(use, 3, ids[i + m - 1]);
    err = hand_rows(s, use, ids, i, i + (m ? m : 1), fn, ctx);
    i += m ? m : 1;
  }
  sqlite3_finalize(span);
  sqlite3_finalize(own);
  return err;
}
