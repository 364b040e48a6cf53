/* damaged.c: tlreport --skip-damaged. Corruption is rare and a report is a
 * pure function of the sessions it reads, so the simplest way to leave a
 * damaged session out of every number is to start again without it: each
 * failure that names a session removes that session from the store's lists
 * (tl_store_leave_out) and the whole report is made again. A session read
 * in part before its damage was found cannot contribute. */
#include <stdlib.h>
#include <string.h>

#include "tl_report.h"

void tl_left_out_free(tl_left_out_list *list) {
  if (!list)
    return;
  for (size_t i = 0; i < list->count; i++) {
    free(list->items[i].label);
    free(list->items[i].uuid);
    free(list->items[i].why);
  }
  free(list->items);
  list->items = NULL;
  list->count = 0;
}

/* Adds session id (looked up before it is left out) with the reason why. */
static int note(tl_store *store, int64_t id, const char *why, tl_left_out_list *left) {
  tl_filter all;
  tl_filter_init(&all);
  tl_session_list list;
  int err = tl_store_sessions(store, &all, &list);
  if (err)
    return err;
  size_t i = 0;
  while (i < list.count && list.items[i].id != id)
    i++;
  tl_left_out *more = realloc(left->items, (left->count + 1) * sizeof *more);
  if (!more) {
    tl_session_list_free(&list);
    return TL_ENOMEM;
  }
  left->items = more;
  tl_left_out *x = &more[left->count];
  int found = i < list.count;
  x->label = strdup(found ? list.items[i].label : "?");
  x->uuid = strdup(found ? list.items[i].uuid : "?");
  x->session_id = id;
  x->started_ns = found ? list.items[i].started_ns : 0;
  x->why = strdup(why);
  tl_session_list_free(&list);
  if (!x->label || !x->uuid || !x->why) {
    free(x->label);
    free(x->uuid);
    free(x->why);
    return TL_ENOMEM;
  }
  left->count++;
  return TL_OK;
}

int tl_report_skipping_damaged(tl_store *store, int (*make)(void *ctx), void *ctx,
                               tl_left_out_list *left, char *err, size_t errlen) {
  for (;;) {
    int rc = make(ctx);
    int64_t id = rc == TL_ECORRUPT ? tl_store_damaged_session(store) : 0;
    if (!id)
      return rc;
    for (size_t i = 0; i < left->count; i++)
      if (left->items[i].session_id == id)
        return rc; /* left out already: no second try could do better */
    int e = note(store, id, err, left);
    if (!e)
      e = tl_store_leave_out(store, id);
    if (e) {
      snprintf(err, errlen, "%s", e == TL_ENOMEM ? "out of memory" : tl_store_errmsg(store));
      return e;
    }
  }
}
