#pragma once

/// Process and thread settings that Swift's Glibc module does not import (<malloc.h>, per-thread
/// nice values). Each returns 1 when applied, 0 when refused or not available here.

/// mallopt(M_ARENA_MAX, count): at most `count` glibc arenas for the whole process (glibc's default is
/// eight per core). Affects arenas created after the call. 0 where the C library is not glibc.
int wi_malloc_set_arena_limit(int count);

/// Sets the nice value of the calling thread only (Linux: setpriority(PRIO_PROCESS, gettid(), nice),
/// which applies to one thread; 0 elsewhere). Raising it needs no privilege; lowering it below the
/// current value does (EACCES), and is reported as 0.
int wi_thread_set_nice(int nice);
