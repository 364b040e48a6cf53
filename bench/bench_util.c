/* bench_util.c: helpers shared by the benchmarks (see bench_util.h). */
#include "bench_util.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <uv.h>

double bench_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double bench_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void bench_die(const char *what, tl_store *s) {
  fprintf(stderr, "%s: %s: %s\n", tl_progname(), what, s ? tl_store_errmsg(s) : "failed");
  exit(1);
}

long long bench_file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (long long)st.st_size : 0;
}

double bench_run(char *const argv[], int ok_status, double *cpu_s, double *rss_mib) {
  double t0 = bench_now_s();
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open("/dev/null", O_WRONLY);
    dup2(fd, 1);
    execv(argv[0], argv);
    _exit(127);
  }
  int st;
  struct rusage ru;
  if (pid < 0 || wait4(pid, &st, 0, &ru) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) > ok_status) {
    fprintf(stderr, "%s: %s%s%s failed\n", tl_progname(), argv[0], argv[1] ? " " : "",
            argv[1] ? argv[1] : "");
    exit(1);
  }
  double t = bench_now_s() - t0;
  if (cpu_s)
    *cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
             (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
  if (rss_mib)
    *rss_mib = (double)ru.ru_maxrss / 1024.0;
  return t;
}

void bench_remove_db(const char *path) {
  char p[4200];
  unlink(path);
  snprintf(p, sizeof p, "%s-wal", path);
  unlink(p);
  snprintf(p, sizeof p, "%s-shm", path);
  unlink(p);
}

static int keep(void *ctx, const int64_t *v, size_t n) {
  bench_samples *s = ctx;
  memcpy(s->v + s->n, v, n * sizeof *v);
  s->n += n;
  return 0;
}

bench_samples bench_collect_real(const char *path, size_t count, double *bytes_per_sample) {
  bench_remove_db(path);
  tl_store *s;
  tl_host *h = NULL;
  if (tl_store_open(&s, path, 0) || tl_host_detect(&h))
    bench_die("open", s);
  size_t nf;
  const tl_fact *facts = tl_host_facts(h, &nf);
  tl_session_spec spec = {.run_uuid = "bench",
                          .label = "bench",
                          .command_line = tl_progname(),
                          .host_fingerprint = tl_host_fingerprint(h),
                          .hostname = tl_host_hostname(h),
                          .libuv_version = uv_version_string(),
                          .facts = facts,
                          .fact_count = nf};
  tl_collect_opts o;
  tl_collect_opts_init(&o);
  o.delays_ns[0] = 0;
  o.delay_count = 1;
  o.count = (int64_t)count;
  char err[512];
  if (tl_collect_run(s, &spec, &o, NULL, err, sizeof err))
    bench_die(err, NULL);
  tl_store_stats st;
  tl_filter f;
  tl_filter_init(&f);
  tl_session_list list;
  bench_samples real = {malloc(count * sizeof(int64_t)), 0};
  if (!real.v || tl_store_info(s, &st) || tl_store_sessions(s, &f, &list) ||
      tl_store_scan(s, list.items[0].id, keep, &real))
    bench_die("read back", s);
  if (bytes_per_sample)
    *bytes_per_sample = (double)st.sample_bytes / (double)st.samples;
  tl_session_list_free(&list);
  tl_host_free(h);
  tl_store_close(s);
  return real;
}
