/* output.c: what tlcollect says while a plan runs: the closing sentence of
 * each probe's run on stdout and, when progress is not shown (stderr is no
 * terminal: cron, systemd, a log file), one time-stamped line on stderr as
 * the command starts and one as it ends, so that a log shows when each run
 * started and how it ended. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "collect_internal.h"

void tl_collect_print_result(void *label, const char *probe, const tl_collect_result *results,
                             size_t n) {
  char line[1024];
  tl_collect_summary(probe, results, n, 90, line, sizeof line);
  printf("%s: ", (const char *)label);
  tl_fput_safe(stdout, line);
  putchar('\n');
  if (fflush(stdout) != 0) /* said once, by tl_cli_finish */
    tl_write_failed(stdout, errno);
}

/* One line on stderr, prefixed with the UTC time. */
static void log_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void log_line(const char *fmt, ...) {
  char stamp[32], text[1200];
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  tl_date_format((int64_t)now.tv_sec * 1000000000LL, stamp, sizeof stamp);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  fprintf(stderr, "%s %s: ", stamp, tl_progname());
  tl_fput_safe(stderr, text);
  fputc('\n', stderr);
}

void tl_collect_log_start(const tl_collect_plan *p, const char *path) {
  char what[1024];
  tl_collect_plan_describe(p, what, sizeof what);
  log_line("start: label %s, %s, database %s", p->label, what,
           p->opts.dry_run ? "none (dry run)" : path);
}

void tl_collect_log_end(const tl_collect_plan *p, int err, int64_t samples, double secs) {
  if (err == TL_OK || err == TL_EINTR)
    log_line("end: %s, %lld samples %s in %.1f s", err == TL_OK ? "complete" : "interrupted",
             (long long)samples, p->opts.dry_run ? "measured" : "stored", secs);
  else
    log_line("end: failed after %.1f s (%lld samples measured)", secs, (long long)samples);
}
