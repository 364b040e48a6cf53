/* host_keys.h: every fact docs/schema.md promises for a Linux host, for the
 * tests and the fuzz target that hold host detection to that promise. Kept
 * apart from the detector on purpose: it is the documentation's list. */
#ifndef TL_TEST_HOST_KEYS_H
#define TL_TEST_HOST_KEYS_H

#include <stddef.h>

static const char *const tl_test_linux_fact_keys[] = {"hostname",
                                                      "machine.id",
                                                      "os.name",
                                                      "os.version",
                                                      "kernel.release",
                                                      "kernel.version",
                                                      "arch",
                                                      "libc",
                                                      "cpu.vendor",
                                                      "cpu.model",
                                                      "cpu.family",
                                                      "cpu.model_id",
                                                      "cpu.stepping",
                                                      "cpu.sockets",
                                                      "cpu.cores",
                                                      "cpu.logical",
                                                      "cpu.online",
                                                      "cpu.freq.base_khz",
                                                      "cpu.freq.max_khz",
                                                      "cpu.governor",
                                                      "mem.total_bytes",
                                                      "swap.total_bytes",
                                                      "clocksource.current",
                                                      "clocksource.available",
                                                      "timer_slack_ns",
                                                      "kernel.hz",
                                                      "kernel.preempt",
                                                      "kernel.isolcpus",
                                                      "kernel.nohz_full",
                                                      "vm",
                                                      "cloud",
                                                      "container",
                                                      "load.start",
                                                      "procs.running.start",
                                                      "uptime_s",
                                                      "hw.model",
                                                      NULL};

#endif
