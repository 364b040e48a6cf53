/* filter.c: the session filters people give tlstore and tlreport on the
 * command line (--label, --probe, --delay, --since, --until, --host, --tag,
 * --status), validated in one place so that both programs take the same
 * values and say the same thing about a bad one. */
#include <string.h>

#include "tl_store.h"

void tl_filter_args_init(tl_filter_args *a) {
  memset(a, 0, sizeof *a);
  tl_filter_init(&a->f);
  a->f.labels = a->labels;
  a->f.tag_keys = a->tag_keys;
  a->f.tag_values = a->tag_values;
}

int tl_filter_option(tl_filter_args *a, const char *name, const char *v, char *why, size_t whylen) {
  int64_t n;
  if (strcmp(name, "label") == 0) {
    if (a->f.label_count == TL_FILTER_LABELS_MAX)
      return tl_fail(why, whylen, TL_EINVAL, "too many labels (at most %d)", TL_FILTER_LABELS_MAX);
    if (tl_label_check(v, why, whylen))
      return TL_EINVAL;
    a->labels[a->f.label_count++] = v;
  } else if (strcmp(name, "probe") == 0) {
    if (tl_probe_name_check(v, why, whylen))
      return TL_EINVAL;
    a->f.probe = v;
  } else if (strcmp(name, "delay") == 0) {
    if (tl_delay_parse(v, &n, why, whylen))
      return TL_EINVAL;
    a->f.delay_ns = n;
  } else if (strcmp(name, "since") == 0 || strcmp(name, "until") == 0) {
    if (tl_date_parse(v, &n, why, whylen))
      return TL_EINVAL;
    *(name[0] == 's' ? &a->f.since_ns : &a->f.until_ns) = n;
  } else if (strcmp(name, "host") == 0) {
    if (!*v || strlen(v) > 255)
      return tl_fail(why, whylen, TL_EINVAL, "must be 1 to 255 characters");
    a->f.host = v;
  } else if (strcmp(name, "tag") == 0) {
    size_t k = a->f.tag_count;
    if (k == TL_FILTER_TAGS_MAX)
      return tl_fail(why, whylen, TL_EINVAL, "too many tags (at most %d)", TL_FILTER_TAGS_MAX);
    if (tl_tag_parse(v, a->tag_bufs[k], &a->tag_keys[k], &a->tag_values[k], why, whylen))
      return TL_EINVAL;
    a->f.tag_count++;
  } else if (strcmp(name, "status") == 0) {
    if (strcmp(v, "running") && strcmp(v, "complete") && strcmp(v, "interrupted"))
      return tl_fail(why, whylen, TL_EINVAL, "must be running, complete or interrupted");
    a->f.status = v;
  } else {
    return 0;
  }
  return 1;
}
