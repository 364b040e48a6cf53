/* exe_linux.c: the base layer's pieces that differ on Linux (and other
 * systems with /proc/self/exe and clock_nanosleep): the path of the running
 * executable, for tl_data_path(), how tl times here, and the heap in huge
 * pages. */
#include <stdint.h>
#include <stdlib.h>
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

/* collector/os_linux.c reads and sleeps on CLOCK_MONOTONIC, as libuv's
 * uv_hrtime does. */
const tl_os_timing *tl_os_timing_here(void) {
  static const tl_os_timing linux_timing = {"CLOCK_MONOTONIC", "clock_nanosleep(CLOCK_MONOTONIC)",
                                            "clock_nanosleep(TIMER_ABSTIME)"};
  return &linux_timing;
}

/* A report over a million samples touches about 20 MiB of fresh heap once:
 * in 4 KiB pages that is 5,000 page faults, a quarter of the page's time, and
 * as many TLB misses while the statistics sort and merge. So the heap is
 * grown once by PAD, kept (never trimmed back), and marked MADV_HUGEPAGE,
 * and blocks up to 32 MiB come from it rather than from mappings of their
 * own: that memory then faults in 2 MiB at a time. Untouched, the pad costs
 * address space only. Allocators other than glibc's (and the sanitizers',
 * which replace it) are left as they are. */
int tl_heap_huge_pages(void) {
#if defined(__GLIBC__) && defined(MADV_HUGEPAGE)
  enum { PAD = 64 << 20, HUGE = 2 << 20 };
  uintptr_t from = (uintptr_t)sbrk(0);
  if (from == (uintptr_t)-1 || !mallopt(M_MMAP_THRESHOLD, 32 << 20) ||
      !mallopt(M_TRIM_THRESHOLD, 2 * PAD) || !mallopt(M_TOP_PAD, PAD))
    return 0;
  void *volatile grow = malloc(HUGE); /* volatile: the pair is not optimised away */
  free(grow);
  uintptr_t to = (uintptr_t)sbrk(0) & ~(uintptr_t)(HUGE - 1);
  from = (from + HUGE - 1) & ~(uintptr_t)(HUGE - 1);
  return to > from && madvise((void *)from, to - from, MADV_HUGEPAGE) == 0;
#else
  return 0;
#endif
}
