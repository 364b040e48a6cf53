/* conn.c: the PostgreSQL backend's connection: statements with bound
 * parameters, their results read as tl's values, and a server's failure
 * made a tl error with a one-line message. Every statement that is not a
 * read forgets the facts and tags pg.c read ahead. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg_internal.h"

void tl__pg_rows_clear(tl_pg_rows *w) {
  tl_fact_rows_free(w->rows, w->n);
  free(w->session);
  memset(w, 0, sizeof *w);
}

/* Forgets the facts and tags read ahead: after a write they may be stale. */
void tl__pg_forget_windows(tl_store *s) {
  tl_pg *p = tl__pg(s);
  tl__pg_rows_clear(&p->facts);
  tl__pg_rows_clear(&p->tags);
}

/* ======================================================================== */
/* Errors                                                                    */

/* msg made one line: newlines and tabs become spaces, runs of spaces one,
 * no space at either end. */
void tl__pg_one_line(char *msg) {
  char *w = msg;
  int space = 1;
  for (const char *r = msg; *r; r++) {
    int blank = isspace((unsigned char)*r);
    if (blank && space)
      continue;
    *w++ = blank ? ' ' : *r;
    space = blank;
  }
  while (w > msg && w[-1] == ' ')
    w--;
  *w = '\0';
}

int tl__pg_fail(tl_store *s, const PGresult *r, const char *doing) {
  PGconn *c = tl__pg_conn(s);
  const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
  const char *primary = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;
  char msg[300];
  snprintf(msg, sizeof msg, "%s",
           primary                   ? primary
           : c && *PQerrorMessage(c) ? PQerrorMessage(c)
                                     : "no answer");
  tl__pg_one_line(msg);
  int err = TL_ESQL;
  const char *hint = "";
  if (!state)
    state = "";
  if ((c && PQstatus(c) == CONNECTION_BAD) || strncmp(state, "08", 2) == 0 ||
      strncmp(state, "57P", 3) == 0) {
    err = TL_EIO;
    hint = " (the connection to the server was lost: nothing half-done stays on it; run the "
           "command again when the server is back)";
  } else if (strcmp(state, "42501") == 0) {
    err = TL_EPERM;
    hint = " (the role in the connection string may not do this: see the roles in the README, "
           "A fleet)";
  } else if (strncmp(state, "28", 2) == 0) {
    err = TL_EPERM;
  } else if (strcmp(state, "40P01") == 0 || strcmp(state, "40001") == 0 ||
             strcmp(state, "55P03") == 0) {
    err = TL_EBUSY;
    hint = " (try again)";
  } else if (strcmp(state, "53100") == 0) {
    err = TL_EFULL;
  } else if (strcmp(state, "25006") == 0) {
    err = TL_EREADONLY;
  } else if (strncmp(state, "23", 2) == 0) {
    err = TL_ECONFLICT;
  } else if (strncmp(state, "22", 2) == 0) {
    err = TL_EINVAL;
  } else if (strcmp(state, "53200") == 0) {
    err = TL_ENOMEM;
  }
  return tl__store_fail(s, err, "%s: %s: %s%s", s->path, doing, msg, hint);
}

/* ======================================================================== */
/* Queries                                                                   */

void tl__pg_param_text(tl_pg_params *p, const char *v) {
  if (p->n < TL_PG_PARAMS_MAX)
    p->v[p->n++] = v;
}

void tl__pg_param_i64(tl_pg_params *p, int64_t v) {
  if (p->n < TL_PG_PARAMS_MAX) {
    snprintf(p->num[p->n], sizeof p->num[p->n], "%lld", (long long)v);
    p->v[p->n] = p->num[p->n];
    p->n++;
  }
}

/* r, the result of a statement, or NULL with *err set and the message on s
 * when it failed (r cleared). */
static PGresult *settle(tl_store *s, PGresult *r, const char *doing, int *err) {
  ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
  if (st != PGRES_TUPLES_OK) /* a write, a transaction's start or end, or a failure */
    tl__pg_forget_windows(s);
  if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
    *err = TL_OK;
    return r;
  }
  *err = tl__pg_fail(s, r, doing);
  PQclear(r);
  return NULL;
}

PGresult *tl__pg_query(tl_store *s, const char *sql, const tl_pg_params *p, int binary,
                       const char *doing, int *err) {
  PGresult *r =
      PQexecParams(tl__pg_conn(s), sql, p ? p->n : 0, NULL, p ? p->v : NULL, NULL, NULL, binary);
  return settle(s, r, doing, err);
}

int tl__pg_send(tl_store *s, const char *sql, const tl_pg_params *p, int binary,
                const char *doing) {
  if (PQsendQueryParams(tl__pg_conn(s), sql, p ? p->n : 0, NULL, p ? p->v : NULL, NULL, NULL,
                        binary))
    return TL_OK;
  tl__pg_forget_windows(s);
  return tl__pg_fail(s, NULL, doing);
}

void tl__pg_drain(tl_store *s) {
  PGresult *r;
  while ((r = PQgetResult(tl__pg_conn(s))))
    PQclear(r);
}

PGresult *tl__pg_receive(tl_store *s, const char *doing, int *err) {
  PGresult *r = PQgetResult(tl__pg_conn(s));
  tl__pg_drain(s); /* one statement: nothing more, but its end */
  return settle(s, r, doing, err);
}

int tl__pg_exec(tl_store *s, const char *sql, const tl_pg_params *p, const char *doing) {
  int err;
  PQclear(tl__pg_query(s, sql, p, 0, doing, &err));
  return err;
}

int64_t tl__pg_i64(const PGresult *r, int row, int col) {
  if (PQgetisnull(r, row, col))
    return 0;
  if (PQfformat(r, col) == 1 && PQgetlength(r, row, col) == 8) {
    const unsigned char *p = (const unsigned char *)PQgetvalue(r, row, col);
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) /* network byte order */
      v = v << 8 | p[i];
    return (int64_t)v;
  }
  return strtoll(PQgetvalue(r, row, col), NULL, 10);
}

/* Ends the transaction this handle is in, if any, with a rollback. */
void tl__pg_rollback(tl_store *s) {
  PGconn *c = tl__pg_conn(s);
  if (c && PQtransactionStatus(c) != PQTRANS_IDLE)
    PQclear(PQexec(c, "ROLLBACK"));
}
