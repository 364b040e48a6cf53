/* page_threads.c: a page's sections written on two threads.
 *
 * The last section of the comparison page (how it was measured) reads the
 * command line of every session, twice, and finds each one's run: on a
 * fleet's month of 288,000 sessions some 0.2 s, up to half of the page's
 * writing, for a small output. It reads only the comparison and the
 * options, as every section does, and none of the page's state but its own
 * writing: so it is written into memory on a second thread while this one
 * writes the others, then copied in after them. Each thread has its own
 * page state (its stream, its prose buffer, whether it failed). The bytes
 * are those of the sections written in order on one thread, which is what
 * is done when no thread can be had. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "report_internal.h"

typedef struct {
  tl__page page; /* the later sections' own, writing into memory */
  tl__section_fn const *sections;
  size_t count;
} later_part;

static void *write_later(void *arg) {
  later_part *l = arg;
  for (size_t i = 0; i < l->count; i++)
    l->sections[i](&l->page);
  /* HTML prose still buffered is the part's last words: turned into HTML
   * here, as the page's end would have. */
  tl__prose_flush(&l->page);
  return NULL;
}

void tl__write_sections(tl__page *p, tl__section_fn const *sections, size_t count, size_t later) {
  char *buf = NULL;
  size_t len = 0;
  if (later > count)
    later = count;
  later_part l = {{.c = p->c, .o = p->o}, sections + later, count - later};
  l.page.out = later < count ? open_memstream(&buf, &len) : NULL;
  pthread_t th;
  int threaded = l.page.out && pthread_create(&th, NULL, write_later, &l) == 0;
  for (size_t i = 0; i < (threaded ? later : count); i++)
    sections[i](p);
  if (!threaded) {
    if (l.page.out)
      fclose(l.page.out);
    free(buf);
    return;
  }
  pthread_join(th, NULL);
  int lost = ferror(l.page.out);
  if (fclose(l.page.out) != 0 || lost || !buf)
    p->failed = p->failed ? p->failed : TL_ENOMEM;
  /* What this thread's sections left in the prose buffer comes before the
   * later part, as the later part's first heading would have flushed it. */
  tl__prose_flush(p);
  if (buf)
    fwrite(buf, 1, len, p->out);
  free(buf);
  if (l.page.failed && !p->failed)
    p->failed = l.page.failed;
}
