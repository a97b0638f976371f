#define _GNU_SOURCE
#include "CSystemTuning.h"
#include <sched.h>
#include <stdint.h>
#include <time.h>

/* Per thread: its interval (0: off), when it last yielded, how often, and how often it read the clock.
 * `stride` yield points pass between two readings of the clock (`countdown` of them are left): a
 * reading costs about as much as a short row, so it is adapted to the loop, doubled while a stride
 * takes under an eighth of the interval and halved when it takes over half, between 1 and 64. */
static __thread uint64_t yield_interval_ns;
static __thread uint64_t last_yield_ns;
static __thread uint64_t last_check_ns;
static __thread unsigned long yield_count;
static __thread unsigned long check_count;
static __thread unsigned stride = 1;
static __thread unsigned countdown = 1;

#define MAX_STRIDE 64u

static uint64_t monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);   /* the vDSO: no system call */
    return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
}

void wi_thread_set_yield_interval(unsigned interval_us) {
    yield_interval_ns = (uint64_t)interval_us * 1000ull;
    last_yield_ns = last_check_ns = monotonic_ns();
    stride = countdown = 1;
}

void wi_yield_points_restart(void) {
    if (yield_interval_ns == 0) return;
    last_check_ns = monotonic_ns();
    stride = countdown = 1;
}

void wi_yield_point(void) {
    if (yield_interval_ns == 0 || --countdown != 0) return;
    uint64_t now = monotonic_ns();
    check_count++;
    uint64_t taken = now - last_check_ns;
    last_check_ns = now;
    if (taken < yield_interval_ns / 8 && stride < MAX_STRIDE) stride *= 2;
    else if (taken > yield_interval_ns / 2 && stride > 1) stride /= 2;
    countdown = stride;
    if (now - last_yield_ns < yield_interval_ns) return;
    sched_yield();
    yield_count++;
    last_yield_ns = last_check_ns = monotonic_ns();
}

unsigned long wi_thread_yield_checks(void) { return check_count; }

unsigned long wi_thread_yield_count(void) { return yield_count; }

int wi_thread_yields(void) { return yield_interval_ns != 0; }

