/* integrity.c: SQLite's own check of a file's pages (PRAGMA
 * integrity_check) for 'tlstore check'. It reads every page, as the check's
 * pass over the sessions reads most of them again: on the 30-day fleet it
 * took 4 of the check's 9 s, alone, before the pass. So it runs on a
 * connection and a thread of its own while the pass runs, and what the
 * check finds meanwhile is held, so that its findings still come first. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sqlite_internal.h"

struct tl__integrity {
  sqlite3 *own; /* its connection, or NULL when it ran on the store's */
  sqlite3_stmt *st;
  pthread_t thread;
  char *lines[TL__INTEGRITY_LINES]; /* what it found but "ok" */
  size_t n;
  int rc;            /* the last step's: SQLITE_DONE when it ran to its end */
  char failure[512]; /* otherwise SQLite's message */
  int oom;
};

static void *run(void *arg) {
  tl__integrity *in = arg;
  while ((in->rc = sqlite3_step(in->st)) == SQLITE_ROW) {
    const char *line = (const char *)sqlite3_column_text(in->st, 0);
    if (!line || strcmp(line, "ok") == 0 || in->n == TL__INTEGRITY_LINES)
      continue;
    if (!(in->lines[in->n] = strdup(line)))
      in->oom = 1;
    else
      in->n++;
  }
  if (in->rc != SQLITE_DONE)
    snprintf(in->failure, sizeof in->failure, "%s", sqlite3_errmsg(sqlite3_db_handle(in->st)));
  sqlite3_finalize(in->st);
  in->st = NULL;
  return NULL;
}

/* Prepares the check on db: TL_OK, or SQLite's result code. */
static int prepare(tl__integrity *in, sqlite3 *db) {
  char sql[64];
  snprintf(sql, sizeof sql, "PRAGMA integrity_check(%d)", TL__INTEGRITY_LINES);
  return sqlite3_prepare_v2(db, sql, -1, &in->st, NULL);
}

static void drop(tl__integrity *in) {
  for (size_t i = 0; i < in->n; i++)
    free(in->lines[i]);
  sqlite3_finalize(in->st);
  sqlite3_close_v2(in->own);
  free(in);
}

tl__integrity *tl__integrity_start(tl_store *s) {
  tl__integrity *in = calloc(1, sizeof *in);
  if (!in)
    return NULL;
  if (tl__sqlite_open_reader(s, &in->own) != TL_OK || prepare(in, in->own) != SQLITE_OK ||
      pthread_create(&in->thread, NULL, run, in) != 0) {
    drop(in);
    return NULL;
  }
  return in;
}

/* Reports what in found (problems counted) and frees it: TL_ECORRUPT when
 * the check itself failed, TL_ENOMEM when its findings could not be kept. */
static int said(tl_store *s, tl__integrity *in, tl_problem_cb report, void *ctx, int *problems) {
  char msg[600];
  for (size_t i = 0; i < in->n; i++) {
    snprintf(msg, sizeof msg, "integrity: %s", in->lines[i]);
    if (report)
      report(ctx, msg);
    ++*problems;
  }
  int err = TL_OK;
  if (in->rc != SQLITE_DONE) {
    snprintf(msg, sizeof msg, "integrity check failed: %s", in->failure);
    if (report)
      report(ctx, msg);
    ++*problems;
    err = TL_ECORRUPT;
  } else if (in->oom) {
    err = tl__store_fail(s, TL_ENOMEM, "out of memory checking integrity");
  }
  drop(in);
  return err;
}

int tl__integrity_end(tl_store *s, tl__integrity *in, tl_problem_cb report, void *ctx,
                      int *problems) {
  pthread_join(in->thread, NULL);
  return said(s, in, report, ctx, problems);
}

int tl__integrity_now(tl_store *s, tl_problem_cb report, void *ctx, int *problems) {
  tl__integrity *in = calloc(1, sizeof *in);
  if (!in)
    return tl__store_fail(s, TL_ENOMEM, "out of memory checking integrity");
  int rc = prepare(in, tl__sqlite_db(s));
  if (rc != SQLITE_OK) {
    drop(in);
    return tl__store_sqlfail(s, rc, "checking integrity");
  }
  run(in);
  return said(s, in, report, ctx, problems);
}
