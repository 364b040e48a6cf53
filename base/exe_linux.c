/* exe_linux.c: the base layer's pieces that differ on Linux (and other
 * systems with /proc/self/exe and clock_nanosleep): the path of the running
 * executable, for tl_data_path(), how tl times here, the heap in huge
 * pages, and when a process started (from /proc). */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "base_internal.h"

int tl__exe_path(char *buf, size_t len) {
  if (len < 2)
    return TL_EINVAL;
  ssize_t n = readlink("/proc/self/exe", buf, len - 1);
  if (n < 0)
    return TL_ESYS;
  if ((size_t)n >= len - 1)
    return TL_EINVAL; /* possibly truncated */
  buf[n] = '\0';
  return TL_OK;
}

/* Field 22 of /proc/PID/stat counts clock ticks from boot to the process's
 * start; /proc/stat's btime is the boot in Unix seconds. The command name
 * (field 2) may hold spaces and parentheses, so fields are counted from the
 * last ')'. */
int64_t tl__process_started_ns(long pid) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  FILE *f = fopen(path, "r");
  size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
  if (f)
    fclose(f);
  buf[n] = '\0';
  const char *p = strrchr(buf, ')');
  unsigned long long ticks = 0;
  if (!p || sscanf(p + 1,
                   " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
                   "%*d %*d %llu",
                   &ticks) != 1)
    return 0;
  f = fopen("/proc/stat", "r");
  long long btime = 0;
  char line[256];
  while (f && fgets(line, sizeof line, f) && sscanf(line, "btime %lld", &btime) != 1)
    ;
  if (f)
    fclose(f);
  long hz = sysconf(_SC_CLK_TCK);
  if (btime <= 0 || hz <= 0)
    return 0;
  return btime * 1000000000LL + (int64_t)(ticks * (1000000000ULL / (unsigned long long)hz));
}

/* collector/os_linux.c reads and sleeps on CLOCK_MONOTONIC, as libuv's
 * uv_hrtime does. */
const tl_os_timing *tl_os_timing_here(void) {
  static const tl_os_timing linux_timing = {"CLOCK_MONOTONIC", "clock_nanosleep(CLOCK_MONOTONIC)",
                                            "clock_nanosleep(TIMER_ABSTIME)"};
  return &linux_timing;
}

/* A report touches its heap's fresh pages once: 20 MiB over a million
 * samples, some 370 MiB over a fleet's month. In 4 KiB pages that is 75,000
 * page faults (a quarter of a small page's time, and a fifth of the fleet's
 * in a VM), and as many TLB misses while the statistics sort and merge. So
 * the threads share one heap (a thread's own arena is a second heap in
 * 4 KiB pages, whose freed blocks no other thread reuses: it added 27 MiB,
 * a tenth, to a fleet month's page), and that heap is grown once by a pad
 * of a quarter of the machine's memory (64 MiB to 1 GiB), kept (never
 * trimmed back), and marked MADV_HUGEPAGE, and blocks up to 32 MiB come
 * from it rather than from mappings of their own: that memory then faults
 * in 2 MiB at a time. Untouched, the pad costs address space only; past it
 * the heap grows as before, in 4 KiB pages. Allocators other than glibc's
 * (and the sanitizers', which replace it) are left as they are. */
int tl_heap_huge_pages(void) {
#ifdef __GLIBC__
  mallopt(M_ARENA_MAX, 1); /* whether or not the heap can have huge pages */
#endif
#if defined(__GLIBC__) && defined(MADV_HUGEPAGE)
  enum { HUGE = 2 << 20, STEP = 64 << 20, MOST = 1 << 30 };
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  uint64_t quarter = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page / 4 : 0;
  int pad = quarter < STEP ? STEP : quarter > MOST ? MOST : (int)(quarter & ~(uint64_t)(HUGE - 1));
  uintptr_t from = (uintptr_t)sbrk(0);
  if (from == (uintptr_t)-1 || !mallopt(M_MMAP_THRESHOLD, 32 << 20) ||
      !mallopt(M_TRIM_THRESHOLD, INT_MAX) || !mallopt(M_TOP_PAD, pad))
    return 0;
  void *volatile grow = malloc(HUGE); /* volatile: the pair is not optimised away */
  free(grow);
  /* Later growth, should the pad fill or not be had, in steps. */
  mallopt(M_TOP_PAD, STEP);
  uintptr_t to = (uintptr_t)sbrk(0) & ~(uintptr_t)(HUGE - 1);
  from = (from + HUGE - 1) & ~(uintptr_t)(HUGE - 1);
  return to > from && madvise((void *)from, to - from, MADV_HUGEPAGE) == 0;
#else
  return 0;
#endif
}
