/* cpu.c: what the CPU can do beyond the baseline tl is built for, asked
 * once. On x86-64 the baseline has neither the CRC32C instruction (SSE4.2)
 * nor LZCNT, which counts a word's leading zeros in one cycle where the
 * baseline's BSR takes about four: the codecs that use them carry a second
 * version of their loops, built for the instruction, and pick it here.
 * Other CPUs report nothing: AArch64 has both in its baseline. */
#include <pthread.h>

#include "store_internal.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static unsigned features, allowed = ~0u;

/* CPUID, read directly: __builtin_cpu_supports would need a runtime library
 * that not every toolchain links (zig's, for macOS). LZCNT is bit 5 of ECX
 * in leaf 0x80000001, which AMD named ABM and Intel took up. */
static void detect(void) {
  unsigned a, b, c, d;
  if (__get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_2))
    features |= TL__CPU_CRC32C;
  if (__get_cpuid(0x80000001, &a, &b, &c, &d) && (c & (1u << 5)))
    features |= TL__CPU_LZCNT;
}

unsigned tl__cpu_features(void) {
  pthread_once(&once, detect);
  return features & allowed;
}

void tl__cpu_features_allow(unsigned set) { allowed = set; }
#else
unsigned tl__cpu_features(void) { return 0; }
void tl__cpu_features_allow(unsigned set) { (void)set; }
#endif
