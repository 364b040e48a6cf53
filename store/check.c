/* check.c: tlstore check's reading of every session, for every backend.
 * One pass over each session's blocks both verifies them (checksums,
 * numbering and counts, as verify.c and the backends' scans do for any
 * read) and feeds the summary they make, held against the stored one
 * (summary.c): each sample is decoded once. Sessions go by in batches, each
 * read by one statement for its stored summaries and one for its blocks,
 * so no statement is prepared a session. A damaged session stops its
 * batch's scan; the scan resumes after it. The few sessions whose
 * percentiles need their blocks read again are summarised after their
 * batch. The summaries' problems wait for the samples' to be reported.
 * The summaries are made and held against the stored ones on a second
 * thread (relay.h) while the first reads and decodes: a fleet's month of
 * sessions, 10.7 s on one thread, took 8.8 s (medians of 5). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "relay.h"
#include "summary_internal.h"

enum { BATCH = 1000, NONE = -1 };

/* What the reading hands the summaries, in its order: a session begun, its
 * samples, its end. */
enum { OP_BEGIN, OP_ADD, OP_END };
typedef struct {
  int kind, damaged; /* OP_END: its blocks failed */
  size_t session;    /* OP_BEGIN, OP_END */
  size_t at, n;      /* OP_ADD: values[at..at + n) */
} summary_op;

/* A relay's batch of them: at least 16 blocks of samples, so that the
 * threads trade often and neither waits long for the other. */
enum { OPS_MAX = 256, OPS_VALUES = 16 * TL_BLOCK_MAX };
typedef struct {
  size_t nops, nvalues;
  summary_op op[OPS_MAX];
  int64_t values[OPS_VALUES];
} ops_batch;

typedef struct {
  size_t at, len;       /* of its bytes in the batch's arena */
  int has;              /* a summary is stored */
  int64_t sample_count; /* the session's */
  char uuid[40];
} stored_ref;

typedef struct {
  size_t session; /* index in the list, for the order of the report */
  char msg[200];
} late_problem;

typedef struct {
  tl_store *s;
  int what;
  const int64_t *ids;
  tl__summarizer *z;
  int64_t *hist; /* TL_SUMMARY_BUCKETS, for decoding a stored summary */
  int64_t values[TL_BLOCK_MAX];
  /* The batch: its first session, its stored summaries. */
  size_t from;
  stored_ref refs[BATCH];
  uint8_t *arena;
  size_t arena_len, arena_cap;
  size_t again[BATCH]; /* sessions to summarise from their blocks again */
  size_t nagain;
  /* The scan: the session being read (NONE before its first block), the
   * first not yet ended, the end of what this scan reads. */
  ptrdiff_t cur;
  size_t next, end;
  late_problem *late;
  size_t nlate, late_cap;
  int late_oom;
  tl_problem_cb report;
  void *ctx;
  int *problems;
  /* The summaries' thread, when there is one; else ops run here. */
  tl__relay relay;
  int threaded;
  ops_batch *ops[2];
} checker;

static void say(checker *c, const char *msg) {
  if (c->report)
    c->report(c->ctx, msg);
  (*c->problems)++;
}

/* ======================================================================== */
/* The stored summaries                                                      */

static int keep_blob(void *arg, size_t i, const char *uuid, int64_t sample_count,
                     const uint8_t *blob, size_t len) {
  checker *c = arg;
  stored_ref *r = &c->refs[i];
  snprintf(r->uuid, sizeof r->uuid, "%.36s", uuid);
  r->sample_count = sample_count;
  r->has = blob != NULL;
  r->at = c->arena_len;
  r->len = len;
  if (!blob)
    return TL_OK;
  if (c->arena_len + len > c->arena_cap) {
    size_t cap = 2 * (c->arena_len + len);
    uint8_t *a = realloc(c->arena, cap);
    if (!a)
      return tl__store_fail(c->s, TL_ENOMEM, "out of memory checking summaries");
    c->arena = a;
    c->arena_cap = cap;
  }
  memcpy(c->arena + c->arena_len, blob, len);
  c->arena_len += len;
  return TL_OK;
}

/* Out of memory: noted, and said by the reading thread (which owns the
 * store's message) once the batch is done. */
static int late(checker *c, size_t session, const char *uuid, const char *why) {
  if (c->nlate == c->late_cap) {
    size_t cap = c->late_cap ? 2 * c->late_cap : 16;
    late_problem *p = realloc(c->late, cap * sizeof *p);
    if (!p)
      return c->late_oom = 1, TL_ENOMEM;
    c->late = p;
    c->late_cap = cap;
  }
  late_problem *p = &c->late[c->nlate++];
  p->session = session;
  snprintf(p->msg, sizeof p->msg, "session %.36s: summary: %s", uuid, why);
  return TL_OK;
}

/* The stored summary of session i decoded into *stored, *usable when it
 * decodes and holds the session's count; a problem noted when it does not;
 * an error only when out of memory. */
static int stored_summary(checker *c, size_t i, tl_summary *stored, int *usable) {
  const stored_ref *r = &c->refs[i - c->from];
  const char *why;
  *usable = 0;
  if (!r->has)
    return TL_OK; /* running, damaged blocks, or from before summaries */
  if (tl__summary_decode(c->arena + r->at, r->len, c->hist, stored, &why) == TL_OK) {
    if (stored->count == r->sample_count)
      return *usable = 1, TL_OK;
    why = "its count differs from the session's";
  }
  return late(c, i, r->uuid, why);
}

/* Session i's stored summary against fresh, made from its samples. */
static int compare(checker *c, size_t i, const tl_summary *stored, const tl_summary *fresh) {
  if (tl__summary_equal(stored, fresh))
    return TL_OK;
  return late(c, i, c->refs[i - c->from].uuid, "it differs from the session's samples");
}

/* Session i read to its end (damaged: its blocks failed, which the check
 * of samples reports): its summary checked, or put off when its
 * percentiles need the blocks again. */
static int end_session(checker *c, size_t i, int damaged) {
  if (!(c->what & TL__CHECK_SUMMARIES))
    return TL_OK;
  tl_summary stored;
  int usable, err = stored_summary(c, i, &stored, &usable);
  if (err || !usable || damaged)
    return err;
  const tl_summary *fresh;
  if (tl__summary_finish_quick(c->z, &fresh)) {
    c->again[c->nagain++] = i;
    return TL_OK;
  }
  return compare(c, i, &stored, fresh);
}

/* ======================================================================== */
/* The summaries' work, here or on the second thread                        */

static int run_op(checker *c, const summary_op *op, const int64_t *values) {
  if (op->kind == OP_BEGIN)
    tl__summary_begin(c->z);
  else if (op->kind == OP_ADD)
    tl__summary_add(c->z, values + op->at, op->n);
  else
    return end_session(c, op->session, op->damaged);
  return TL_OK;
}

static int ops_run(void *arg, void *filled) {
  checker *c = arg;
  const ops_batch *b = filled;
  int err = TL_OK;
  for (size_t k = 0; k < b->nops && !err; k++)
    err = run_op(c, &b->op[k], b->values);
  return err;
}

static void ops_empty(void *filled) {
  ops_batch *b = filled;
  b->nops = b->nvalues = 0;
}

/* Where the next block's samples are decoded: in the batch being filled,
 * with room for them and for their op, so that op() adds it to the same
 * batch (handed on first when it has none); *err when the summaries' work
 * failed. */
static int64_t *values_room(checker *c, int *err) {
  *err = TL_OK;
  if (!c->threaded)
    return c->values;
  ops_batch *b = tl__relay_fill(&c->relay);
  if (b->nvalues + TL_BLOCK_MAX > OPS_VALUES || b->nops == OPS_MAX) {
    if ((*err = tl__relay_submit(&c->relay, 1)))
      return NULL;
    b = tl__relay_fill(&c->relay);
  }
  return b->values + b->nvalues;
}

/* An op, run here or queued (values, of OP_ADD, where values_room put
 * them); the summaries' error so far. */
static int op(checker *c, int kind, size_t session, int damaged, const int64_t *values, size_t n) {
  summary_op o = {kind, damaged, session, 0, n};
  if (!c->threaded)
    return run_op(c, &o, values);
  ops_batch *b = tl__relay_fill(&c->relay);
  if (b->nops == OPS_MAX) {
    int err = tl__relay_submit(&c->relay, 1);
    if (err)
      return err;
    b = tl__relay_fill(&c->relay);
  }
  if (kind == OP_ADD) {
    o.at = (size_t)(values - b->values);
    b->nvalues += n;
  }
  b->op[b->nops++] = o;
  return TL_OK;
}

/* Waits until the summaries' work is done (the batch's summaries checked
 * or put off). */
static int ops_done(checker *c) {
  const ops_batch *b = c->threaded ? tl__relay_fill(&c->relay) : NULL;
  return b ? tl__relay_drain(&c->relay, b->nops > 0) : TL_OK;
}

/* Sessions from c->next up to i (not included) read without a block: none
 * recorded a sample, or their scan would have failed. */
static int end_empty_until(checker *c, size_t i) {
  int err = TL_OK;
  for (; c->next < i && !err; c->next++)
    if (!(err = op(c, OP_BEGIN, c->next, 0, NULL, 0)))
      err = op(c, OP_END, c->next, 0, NULL, 0);
  return err;
}

/* ======================================================================== */
/* One pass over the blocks                                                  */

static int on_block(void *arg, const tl_block *b) {
  checker *c = arg;
  if (c->cur == NONE || c->ids[c->cur] != b->session_id) {
    size_t j = c->next;
    while (j < c->end && c->ids[j] != b->session_id)
      j++;
    if (j == c->end) /* never: the scan reads the ids asked, in order */
      return tl__block_fail(c->s, b, "read out of order");
    int err = TL_OK;
    if (c->cur != NONE) {
      err = op(c, OP_END, (size_t)c->cur, 0, NULL, 0);
      c->next = (size_t)c->cur + 1;
    }
    if (!err)
      err = end_empty_until(c, j);
    if (!err)
      err = op(c, OP_BEGIN, j, 0, NULL, 0);
    if (err)
      return err;
    c->cur = (ptrdiff_t)j;
  }
  const char *why;
  int err;
  int64_t *values = values_room(c, &err);
  if (err)
    return err;
  if (tl_block_decode(b, values, &why))
    return tl__block_fail(c->s, b, why);
  if (c->what & TL__CHECK_SUMMARIES && c->refs[c->cur - (ptrdiff_t)c->from].has)
    return op(c, OP_ADD, (size_t)c->cur, 0, values, (size_t)b->count);
  return TL_OK;
}

/* The last scan's failure as a problem of the samples, without the
 * store's name and the advice to run check. */
static void say_damaged(checker *c) {
  tl_store *s = c->s;
  size_t plen = strlen(s->path);
  const char *m = s->errmsg;
  if (strncmp(m, s->path, plen) == 0 && m[plen] == ':' && m[plen + 1] == ' ')
    m += plen + 2;
  const char *hint = strstr(m, TL__CHECK_HINT);
  char msg[sizeof s->errmsg];
  snprintf(msg, sizeof msg, "%.*s", hint ? (int)(hint - m) : (int)strlen(m), m);
  if (c->what & TL__CHECK_SAMPLES)
    say(c, msg);
}

/* The session a failed scan names as damaged, from c->next on; NONE when
 * it names none of them (the file failed under the scan). */
static ptrdiff_t damaged_session(const checker *c) {
  for (size_t j = c->next; j < c->end; j++)
    if (c->ids[j] == c->s->damaged_id)
      return (ptrdiff_t)j;
  return NONE;
}

/* Scans the blocks of the sessions [from, to), resuming after each damaged
 * one; one session a scan once a failure names none (each then names its
 * own). */
static int scan_batch(checker *c, size_t to) {
  int one = 0;
  c->next = c->from;
  while (c->next < to) {
    c->cur = NONE;
    c->end = one ? c->next + 1 : to;
    c->s->damaged_id = 0;
    int err = tl_store_scan_blocks(c->s, c->ids + c->next, c->end - c->next, NULL, on_block, c);
    if (err && err != TL_ECORRUPT)
      return err;
    if (!err) {
      if (c->cur != NONE && (err = op(c, OP_END, (size_t)c->cur, 0, NULL, 0)) == TL_OK)
        c->next = (size_t)c->cur + 1;
      if (err || (err = end_empty_until(c, c->end)))
        return err;
      continue;
    }
    ptrdiff_t d = one ? (ptrdiff_t)c->next : damaged_session(c);
    if (d == NONE) {
      one = 1; /* again from the session being read, each alone */
      continue;
    }
    say_damaged(c);
    if (c->cur != NONE && c->cur < d) {
      if ((err = op(c, OP_END, (size_t)c->cur, 0, NULL, 0)))
        return err;
      c->next = (size_t)c->cur + 1;
    }
    if ((err = end_empty_until(c, (size_t)d)) || (err = op(c, OP_END, (size_t)d, 1, NULL, 0)))
      return err;
    c->next = (size_t)d + 1;
  }
  return TL_OK;
}

/* The sessions put off by the pass: each summarised from its blocks. */
static int summarise_again(checker *c) {
  for (size_t k = 0; k < c->nagain; k++) {
    size_t i = c->again[k];
    tl_summary stored;
    const tl_summary *fresh;
    int err = tl__summary_compute(c->s, c->z, c->ids[i], &fresh);
    if (err == TL_ECORRUPT)
      continue; /* changed since the pass: the pass's verdict stands */
    if (err)
      return err;
    /* Decoded again (it was usable in the pass): the decoder's histogram
     * has held others since. */
    int usable;
    if ((err = stored_summary(c, i, &stored, &usable)) ||
        (usable && (err = compare(c, i, &stored, fresh))))
      return err;
  }
  return TL_OK;
}

static int check_batch(checker *c, size_t n) {
  c->arena_len = 0;
  c->nagain = 0;
  int err = TL_OK;
  if (c->what & TL__CHECK_SUMMARIES)
    err = c->s->ops->summary_blobs(c->s, c->ids + c->from, n, keep_blob, c);
  if (!err)
    err = scan_batch(c, c->from + n);
  /* The batch's stored summaries and the scan's ops are the summaries'
   * until they are done with them. */
  int done = ops_done(c);
  err = err ? err : done;
  if (!err)
    err = summarise_again(c);
  if (c->late_oom)
    err = tl__store_fail(c->s, TL_ENOMEM, "out of memory checking summaries");
  return err;
}

static int by_session(const void *a, const void *b) {
  size_t x = ((const late_problem *)a)->session, y = ((const late_problem *)b)->session;
  return (x > y) - (x < y);
}

int tl__check_sessions(tl_store *s, int what, tl_problem_cb report, void *ctx, int *problems) {
  tl_filter f;
  tl_filter_init(&f);
  tl_session_list list;
  int err = tl_store_sessions(s, &f, &list);
  if (err)
    return err;
  checker *c = calloc(1, sizeof *c);
  int64_t *ids = malloc(list.count * sizeof *ids + 1);
  if (c) {
    c->s = s;
    c->what = what;
    c->ids = ids;
    c->z = tl__summarizer_new();
    c->hist = malloc(TL_SUMMARY_BUCKETS * sizeof *c->hist);
    c->report = report;
    c->ctx = ctx;
    c->problems = problems;
  }
  if (!c || !ids || !c->z || !c->hist)
    err = tl__store_fail(s, TL_ENOMEM, "out of memory checking the sessions");
  /* No second thread or its memory: the same work on this one. */
  if (!err && what & TL__CHECK_SUMMARIES && list.count > 1 &&
      (c->ops[0] = malloc(sizeof *c->ops[0])) && (c->ops[1] = malloc(sizeof *c->ops[1]))) {
    ops_empty(c->ops[0]);
    ops_empty(c->ops[1]);
    c->threaded = tl__relay_start(&c->relay, ops_run, ops_empty, c, c->ops[0], c->ops[1]) == TL_OK;
  }
  for (size_t i = 0; !err && i < list.count; i++)
    ids[i] = list.items[i].id;
  for (size_t i = 0; !err && i < list.count; i += BATCH) {
    c->from = i;
    err = check_batch(c, list.count - i < BATCH ? list.count - i : BATCH);
  }
  if (!err) {
    s->errmsg[0] = '\0';
    /* Sessions put off come after their batch: back in order. */
    if (c->nlate)
      qsort(c->late, c->nlate, sizeof *c->late, by_session);
    for (size_t k = 0; k < c->nlate; k++)
      say(c, c->late[k].msg);
  }
  if (c && c->threaded) {
    const ops_batch *b = tl__relay_fill(&c->relay);
    tl__relay_stop(&c->relay, b->nops > 0 && !err);
  }
  if (c) {
    free(c->ops[0]);
    free(c->ops[1]);
    tl__summarizer_free(c->z);
    free(c->hist);
    free(c->arena);
    free(c->late);
  }
  free(c);
  free(ids);
  tl_session_list_free(&list);
  return err;
}

int tl__check_summaries(tl_store *s, tl_problem_cb report, void *ctx, int *problems) {
  return tl__check_sessions(s, TL__CHECK_SUMMARIES, report, ctx, problems);
}
