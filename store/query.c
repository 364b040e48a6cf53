/* query.c: the filter of tl_store_sessions turned into SQL, once for every
 * backend. Each dialect's differences are data (tl__sql_dialect): how a
 * numbered parameter is written, and what a backend's sessions table holds
 * to judge a 'running' session. Values never enter the text: each is a
 * numbered parameter the backend binds, in its own way, from the list the
 * builder returns. The rows come back in the columns it names, and each
 * backend reads them into a tl_session and settles it (tl__session_settle)
 * the same way. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "store_internal.h"

static void add(tl__session_query *q, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(tl__session_query *q, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(q->sql + q->len, sizeof q->sql - q->len, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof q->sql - q->len)
    q->overflow = 1;
  else
    q->len += (size_t)n;
}

/* The next parameter, text or number; its number (from 1). */
static int param(tl__session_query *q, const char *text, int64_t num) {
  if (q->n == TL__SQL_PARAMS_MAX) {
    q->overflow = 1;
    return q->n;
  }
  q->params[q->n++] = (tl__sql_value){.text = text, .num = num};
  return q->n;
}

int tl__session_query_build(tl_store *s, const tl__sql_dialect *d, const tl_filter *f,
                            tl__session_query *q) {
  const char p = d->param;
  memset(q, 0, sizeof *q);
  add(q,
      "SELECT s.id, s.uuid, s.run_uuid, s.label, s.probe, s.host_id, s.status, "
      "s.command_line, s.tl_version, s.libuv_version, s.delay_ns, s.warmup, s.started_ns, "
      "coalesce(s.ended_ns, 0), s.sample_count, s.missed_periods, %s "
      "FROM sessions s WHERE 1 = 1",
      d->running_cols);
  if (f->label_count) {
    add(q, " AND s.label IN (");
    for (size_t i = 0; i < f->label_count; i++)
      add(q, "%s%c%d", i ? ", " : "", p, param(q, f->labels[i], 0));
    add(q, ")");
  }
  if (f->probe)
    add(q, " AND s.probe = %c%d", p, param(q, f->probe, 0));
  if (f->delay_ns >= 0)
    add(q, " AND s.delay_ns = %c%d", p, param(q, NULL, f->delay_ns));
  if (f->since_ns)
    add(q, " AND s.started_ns >= %c%d", p, param(q, NULL, f->since_ns));
  if (f->until_ns)
    add(q, " AND s.started_ns < %c%d", p, param(q, NULL, f->until_ns));
  if (f->host) {
    int n = param(q, f->host, 0);
    add(q,
        " AND s.host_id IN (SELECT h.id FROM hosts h WHERE h.hostname = %c%d OR "
        "substr(h.fingerprint, 1, length(%c%d)) = %c%d)",
        p, n, p, n, p, n);
  }
  for (size_t i = 0; i < f->tag_count; i++) {
    int k = param(q, f->tag_keys[i], 0), v = param(q, f->tag_values[i], 0);
    add(q,
        " AND EXISTS (SELECT 1 FROM session_tags t WHERE t.session_id = s.id "
        "AND t.key = %c%d AND t.value = %c%d)",
        p, k, p, v);
  }
  if (f->fact_key_count) {
    add(q, " AND EXISTS (SELECT 1 FROM %s x WHERE x.session_id = s.id AND x.key IN (", d->facts);
    for (size_t i = 0; i < f->fact_key_count; i++)
      add(q, "%s%c%d", i ? ", " : "", p, param(q, f->fact_keys[i], 0));
    add(q, ") AND x.value NOT IN ('', 'unknown'))");
  }
  if (f->has_tag)
    add(q,
        " AND EXISTS (SELECT 1 FROM session_tags t WHERE t.session_id = s.id "
        "AND t.key = %c%d AND t.value NOT IN ('', 'unknown'))",
        p, param(q, f->has_tag, 0));
  /* A stale 'running' one is 'interrupted' (tl__session_settle), so the
   * running ones come too and tl_store_sessions keeps those that match. */
  if (f->status)
    add(q, " AND (s.status = %c%d OR s.status = 'running')", p, param(q, f->status, 0));
  /* With a limit, no order: the first rows that match end the query, where
   * sorting would read them all. */
  if (f->limit)
    add(q, " LIMIT %c%d", p, param(q, NULL, (int64_t)f->limit));
  else
    add(q, " ORDER BY %s", d->order);
  if (q->overflow)
    return tl__store_fail(s, TL_EINVAL, "filter is too large");
  return TL_OK;
}
