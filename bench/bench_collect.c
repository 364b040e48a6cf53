/* bench_collect: tlcollect's peak memory over sessions of different lengths.
 * Runs the real program, `tlcollect --probe uv --delays 0 --duration Ns`
 * (the fastest probe, millions of samples a second), for each length given,
 * and prints the samples stored, the samples per second, the wall time
 * (the run plus storing and reading back for the closing sentence) and the
 * peak RSS from wait4. The peak must not grow with the length: the line
 * "growth" divides the longest run's peak by the shortest's. A --dry-run of
 * the shortest length (its samples go to a scratch database in $TMPDIR) must
 * be bounded alike. No run keeps every sample in memory any more, so the
 * "before" reference cannot be measured in the same run: the reference line
 * is the figure bench/README.md quotes from before memory was bounded
 * (878 MiB for 10 s, 3844 MiB for 60 s, release build of 2592d3e).
 * Usage: bench_collect DIR TLCOLLECT [SECONDS...]   (default 10 60) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

typedef struct {
  double wall_s, rss_mib;
  long long samples;
} outcome;

static outcome run_collect(const char *tlcollect, const char *db, int seconds, int dry) {
  char dur[32];
  snprintf(dur, sizeof dur, "%ds", seconds);
  char *argv[] = {(char *)tlcollect,
                  "--db",
                  (char *)db,
                  "--label",
                  "bench",
                  "--probe",
                  "uv",
                  "--delays",
                  "0",
                  "--duration",
                  dur,
                  dry ? "--dry-run" : "-q",
                  dry ? "-q" : NULL,
                  NULL};
  bench_remove_db(db);
  outcome o = {0};
  o.wall_s = bench_run(argv, 0, NULL, &o.rss_mib);
  if (!dry) {
    tl_store *s = NULL;
    tl_store_stats stats = {0};
    if (tl_store_open(&s, db, TL_STORE_READONLY) || tl_store_info(s, &stats))
      bench_die("reading the session back", s);
    tl_store_close(s);
    o.samples = stats.samples;
  }
  bench_remove_db(db);
  return o;
}

int main(int argc, char **argv) {
  tl_set_progname("bench_collect");
  if (argc < 3) {
    fprintf(stderr, "usage: bench_collect DIR TLCOLLECT [SECONDS...]\n");
    return 2;
  }
  char db[4200];
  snprintf(db, sizeof db, "%s/collect.db", argv[1]);
  int lengths[8] = {10, 60}, n = 2;
  if (argc > 3) {
    n = 0;
    for (int i = 3; i < argc && n < 8; i++)
      lengths[n++] = atoi(argv[i]);
  }
  printf("  %-28s %14s %12s %10s %14s\n", "tlcollect --probe uv -d 0", "samples stored",
         "samples/s", "wall s", "peak RSS MiB");
  double first = 0, last = 0;
  for (int i = 0; i < n; i++) {
    outcome o = run_collect(argv[2], db, lengths[i], 0);
    char what[64];
    snprintf(what, sizeof what, "--duration %ds", lengths[i]);
    printf("  %-28s %14lld %12.0f %10.1f %14.1f\n", what, o.samples, (double)o.samples / lengths[i],
           o.wall_s, o.rss_mib);
    fflush(stdout);
    if (i == 0)
      first = o.rss_mib;
    last = o.rss_mib;
  }
  outcome d = run_collect(argv[2], db, lengths[0], 1);
  char what[64];
  snprintf(what, sizeof what, "--duration %ds --dry-run", lengths[0]);
  printf("  %-28s %14s %12s %10.1f %14.1f\n", what, "(scratch db)", "", d.wall_s, d.rss_mib);
  printf("  growth: peak RSS of the %d s run / the %d s run: %.2f (target: 1, under 64 MiB)\n",
         lengths[n - 1], lengths[0], last / first);
  printf("  dry run: peak RSS of the %d s dry run / the %d s stored run: %.2f (target: 1)\n",
         lengths[0], lengths[0], d.rss_mib / first);
  printf(
      "  reference (not this run: bench/README.md, before memory was bounded, when every run and\n"
      "  every dry run kept each sample): 878 MiB for 10 s, 3844 MiB for 60 s\n");
  return 0;
}
