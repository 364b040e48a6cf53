/* bench_util.h: what the benchmarks share: a monotonic clock, medians,
 * database files, and real timer samples collected on this machine. */
#ifndef TL_BENCH_UTIL_H
#define TL_BENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "tl_collect.h"

double bench_now_s(void);
/* The median of n values (sorts v). */
double bench_median(double *v, int n);
/* "PROG: what: the store's message" on stderr, then exit 1. */
void bench_die(const char *what, tl_store *s) __attribute__((noreturn));
long long bench_file_size(const char *path);
/* Runs argv[0] with its standard output to /dev/null and waits for it:
 * returns the wall seconds; *cpu_s (user and system seconds) and *rss_mib
 * (peak resident memory) may be NULL. An exit status above ok_status (or a
 * crash) ends the benchmark with a message. */
double bench_run(char *const argv[], int ok_status, double *cpu_s, double *rss_mib);
/* Removes a database and its -wal and -shm files. */
void bench_remove_db(const char *path);

typedef struct {
  int64_t *v; /* malloc'ed; the caller frees */
  size_t n;
} bench_samples;

/* Collects count real settimeout(0) samples on this machine into a new
 * database at path and reads them back. bytes_per_sample (may be NULL)
 * receives their encoded size per sample. */
bench_samples bench_collect_real(const char *path, size_t count, double *bytes_per_sample);

#endif
