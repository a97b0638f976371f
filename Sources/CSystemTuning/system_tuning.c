#define _GNU_SOURCE
#include "CSystemTuning.h"
#include <stdlib.h>   /* defines __GLIBC__ on glibc */

#if defined(__GLIBC__)
#include <limits.h>
#include <malloc.h>

int wi_malloc_set_arena_limit(int count) { return mallopt(M_ARENA_MAX, count); }
int wi_malloc_trim(void) { return malloc_trim(0); }
int wi_malloc_set_thresholds(unsigned long mmap_threshold, unsigned long trim_threshold) {
    if (mmap_threshold > INT_MAX || trim_threshold > INT_MAX) return 0;   /* mallopt takes an int */
    return mallopt(M_MMAP_THRESHOLD, (int)mmap_threshold) == 1 && mallopt(M_TRIM_THRESHOLD, (int)trim_threshold) == 1;
}
#else
int wi_malloc_set_arena_limit(int count) { (void)count; return 0; }
int wi_malloc_set_thresholds(unsigned long mmap_threshold, unsigned long trim_threshold) {
    (void)mmap_threshold;
    (void)trim_threshold;
    return 0;
}
int wi_malloc_trim(void) { return 0; }
#endif

#if defined(__linux__)
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

int wi_thread_set_name(const char *name) {
    char truncated[16];   /* Linux keeps 15 bytes and the terminator; a longer name is refused (ERANGE) */
    snprintf(truncated, sizeof truncated, "%s", name);
    return pthread_setname_np(pthread_self(), truncated) == 0 ? 1 : 0;
}

int wi_thread_set_nice(int nice) {
    pid_t thread = (pid_t)syscall(SYS_gettid);   /* Linux: a nice value belongs to one thread */
    return setpriority(PRIO_PROCESS, (id_t)thread, nice) == 0 ? 1 : 0;
}

int wi_thread_set_realtime(int priority) {
    struct sched_param parameter = { .sched_priority = priority };
    /* Linux: sched_setscheduler(0) sets the calling thread only. SCHED_RESET_ON_FORK: a thread or
     * process it creates starts in SCHED_OTHER at nice 0, never real-time (a libdispatch worker
     * made from it would otherwise run any queued work in this class). */
    return sched_setscheduler(0, SCHED_RR | SCHED_RESET_ON_FORK, &parameter) == 0 ? 1 : 0;
}

/* Per thread: its work CPU plus one (0: none), how deep in sections it is, and the affinity the
 * outermost section restores. */
static __thread int work_cpu_plus_one;
static __thread int work_depth;
static __thread cpu_set_t work_outside;

int wi_thread_set_work_cpu(int index) {
    cpu_set_t allowed;
    if (index < 0 || sched_getaffinity(0, sizeof allowed, &allowed) != 0) return -1;
    int count = CPU_COUNT(&allowed);
    if (count == 0) return -1;
    int wanted = index % count;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &allowed)) continue;
        if (wanted-- > 0) continue;
        work_cpu_plus_one = cpu + 1;
        return cpu;
    }
    return -1;
}

int wi_work_section_begin(void) {
    if (work_cpu_plus_one == 0) return 0;
    if (work_depth > 0) {
        work_depth++;
        return 1;
    }
    /* A new codec loop: its yield points learn their own stride (a stride learnt on the resampler's
     * short rows, 64 points, spanned over a millisecond of an encoder's rows without a clock read). */
    wi_yield_points_restart();
    if (sched_getaffinity(0, sizeof work_outside, &work_outside) != 0) return 0;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(work_cpu_plus_one - 1, &one);
    /* sched_setaffinity(0) sets the calling thread only. Refused (the CPU taken offline, or outside
     * a cpuset changed since): the section runs unpinned. */
    if (sched_setaffinity(0, sizeof one, &one) != 0) return 0;
    work_depth = 1;
    return 1;
}

void wi_work_section_end(int began) {
    if (!began || work_depth == 0) return;
    if (--work_depth > 0) return;
    (void)sched_setaffinity(0, sizeof work_outside, &work_outside);
}

/* struct sched_attr (linux/sched/types.h, which glibc does not export), its first version. */
struct wi_sched_attr {
    uint32_t size;
    uint32_t sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime;
    uint64_t sched_deadline;
    uint64_t sched_period;
};

int wi_thread_set_slice(unsigned long slice_ns) {
#if defined(SYS_sched_setattr)
    pid_t thread = (pid_t)syscall(SYS_gettid);
    errno = 0;
    int nice = getpriority(PRIO_PROCESS, (id_t)thread);
    if (nice == -1 && errno != 0) return 0;
    if (sched_getscheduler(0) != SCHED_OTHER) return 0;   /* a real-time thread has no slice */
    struct wi_sched_attr attr = {
        .size = sizeof attr, .sched_policy = SCHED_OTHER, .sched_nice = nice, .sched_runtime = slice_ns,
    };
    /* sched_setattr(0): the calling thread. Kernels before 6.12 take SCHED_OTHER's runtime and ignore
     * it; it is never refused for a policy and nice value the thread already has. */
    return syscall(SYS_sched_setattr, 0, &attr, 0) == 0 ? 1 : 0;
#else
    (void)slice_ns;
    return 0;
#endif
}

unsigned long wi_thread_slice(int thread) {
#if defined(SYS_sched_getattr)
    struct wi_sched_attr attr;
    memset(&attr, 0, sizeof attr);
    if (syscall(SYS_sched_getattr, (pid_t)thread, &attr, (unsigned)sizeof attr, 0) != 0) return 0;
    return attr.sched_policy == SCHED_OTHER ? (unsigned long)attr.sched_runtime : 0;
#else
    (void)thread;
    return 0;
#endif
}

int wi_thread_id(void) { return (int)syscall(SYS_gettid); }

static void *wi_realtime_probe(void *priority) {
    return (void *)(intptr_t)wi_thread_set_realtime((int)(intptr_t)priority);
}

int wi_realtime_permitted(int priority) {
    pthread_t probe;
    if (pthread_create(&probe, NULL, wi_realtime_probe, (void *)(intptr_t)priority) != 0) return 0;
    void *applied = NULL;
    pthread_join(probe, &applied);   /* the probe makes one system call and ends */
    return (int)(intptr_t)applied;
}
#else
int wi_thread_set_name(const char *name) { (void)name; return 0; }
int wi_thread_set_nice(int nice) { (void)nice; return 0; }
int wi_thread_set_realtime(int priority) { (void)priority; return 0; }
int wi_realtime_permitted(int priority) { (void)priority; return 0; }
int wi_thread_set_work_cpu(int index) { (void)index; return -1; }
int wi_thread_id(void) { return 0; }
int wi_thread_set_slice(unsigned long slice_ns) { (void)slice_ns; return 0; }
unsigned long wi_thread_slice(int thread) { (void)thread; return 0; }
int wi_work_section_begin(void) { return 0; }
void wi_work_section_end(int began) { (void)began; }
#endif
