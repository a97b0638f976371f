#define _GNU_SOURCE
#include "CSystemTuning.h"
#include <stdlib.h>   /* defines __GLIBC__ on glibc */

#if defined(__GLIBC__)
#include <malloc.h>

int wi_malloc_set_arena_limit(int count) { return mallopt(M_ARENA_MAX, count); }
#else
int wi_malloc_set_arena_limit(int count) { (void)count; return 0; }
#endif

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

int wi_thread_set_nice(int nice) {
    pid_t thread = (pid_t)syscall(SYS_gettid);
    return setpriority(PRIO_PROCESS, (id_t)thread, nice) == 0 ? 1 : 0;
}
#else
int wi_thread_set_nice(int nice) { (void)nice; return 0; }
#endif
