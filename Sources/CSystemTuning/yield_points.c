#define _GNU_SOURCE
#include "CSystemTuning.h"
#include <sched.h>
#include <stdint.h>
#include <time.h>

/* Per thread: its interval (0: off), when it last yielded, how often. */
static __thread uint64_t yield_interval_ns;
static __thread uint64_t last_yield_ns;
static __thread unsigned long yield_count;

static uint64_t monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);   /* the vDSO: no system call */
    return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
}

void wi_thread_set_yield_interval(unsigned interval_us) {
    yield_interval_ns = (uint64_t)interval_us * 1000ull;
    last_yield_ns = monotonic_ns();
}

void wi_yield_point(void) {
    if (yield_interval_ns == 0) return;
    uint64_t now = monotonic_ns();
    if (now - last_yield_ns < yield_interval_ns) return;
    sched_yield();
    yield_count++;
    last_yield_ns = monotonic_ns();
}

unsigned long wi_thread_yield_count(void) { return yield_count; }

int wi_thread_yields(void) { return yield_interval_ns != 0; }

