#pragma once

/// Process and thread settings that Swift's Glibc module does not import (<malloc.h>, per-thread
/// nice values and names). Each returns 1 when applied, 0 when refused or not available here.

/// mallopt(M_ARENA_MAX, count): at most `count` glibc arenas for the whole process (glibc's default is
/// eight per core). Affects arenas created after the call. 0 where the C library is not glibc.
int wi_malloc_set_arena_limit(int count);

/// mallopt(M_MMAP_THRESHOLD, mmap_threshold) and mallopt(M_TRIM_THRESHOLD, trim_threshold): blocks
/// below `mmap_threshold` come from the arenas (at most 32 MiB on 64-bit glibc), and `free` gives the
/// top of a heap back only past `trim_threshold`. Setting either ends glibc's own adjustment of both
/// (it raises the mmap threshold to each mapped block freed, up to 32 MiB). 1 when both applied; 0 when
/// either was refused, or where the C library is not glibc.
int wi_malloc_set_thresholds(unsigned long mmap_threshold, unsigned long trim_threshold);

/// malloc_trim(0): gives the free memory of every arena back to the kernel (the top of each heap
/// released, and whole free pages inside them advised away with MADV_DONTNEED). Walks every arena
/// under its lock. 1 when memory was released; 0 when none was, or where the C library is not glibc.
int wi_malloc_trim(void);

/// Names the calling thread (Linux: pthread_setname_np, the first 15 bytes; shown by ps, top and
/// /proc/PID/task/TID/comm). 0 where refused or unavailable.
int wi_thread_set_name(const char *name);

/// Sets the nice value of the calling thread only (Linux: setpriority(PRIO_PROCESS, gettid(), nice),
/// which applies to one thread). Raising it needs no privilege; lowering it below the current value
/// does (EACCES). Threads it creates afterwards inherit it. 0 where refused or unavailable.
int wi_thread_set_nice(int nice);

/// Puts the calling thread in Linux's SCHED_RR class at `priority` (1–99): it then runs as soon as it
/// is runnable, ahead of every SCHED_OTHER thread (nice values and EEVDF's eligibility do not apply),
/// and shares a core round-robin with real-time threads of its own priority. The kernel still caps
/// real-time threads at 95 % of each second (sched_rt_runtime_us). Needs CAP_SYS_NICE or an
/// RLIMIT_RTPRIO of at least `priority` (EPERM otherwise). Threads and processes it creates
/// afterwards do not inherit it (SCHED_RESET_ON_FORK): they start in SCHED_OTHER at nice 0.
/// 1 when applied, 0 when refused or unavailable.
int wi_thread_set_realtime(int priority);

/// Work sections: a thread given a work CPU runs its work sections (a codec's decode, transform or
/// encode) pinned to that CPU alone, and the rest of its time on the CPUs it had. The CPU is the
/// `index % n`-th of the n CPUs the thread may run on when this is called (sched_getaffinity; a
/// container's cpuset or `taskset` narrows them). Returns that CPU's number, or -1 when unavailable
/// (its sections then run where the scheduler puts them). Changes no affinity by itself.
///
/// Why sections and not the whole thread: Linux copies a thread's affinity to every thread it
/// creates (pthread_create, clone), and a server's thread creates threads it does not own outside
/// its codecs — libdispatch's workers when it enqueues work, the cooperative pool's — which would
/// then all run on its one CPU. Inside a section only a codec's own helper threads are created, and
/// those sharing their caller's CPU is what a thread per core wants.
int wi_thread_set_work_cpu(int index);

/// Begins a work section on the calling thread: with a work CPU, pins the thread to it (a thread on
/// another CPU moves there at once) and returns 1; without one returns 0 and changes nothing.
/// Sections nest: only the outermost pins. Pass the result to wi_work_section_end.
int wi_work_section_begin(void);

/// Ends a work section begun with wi_work_section_begin (`began` is its result): the outermost
/// restores the affinity the thread had when that section began. Nothing when `began` is 0.
void wi_work_section_end(int began);

/// Gives the calling thread (of the normal class) a scheduling slice of `slice_ns` nanoseconds
/// (sched_setattr's sched_runtime: EEVDF's custom slice, Linux 6.12 and later, clamped to 0.1-100
/// ms), keeping its policy and nice value. A thread with a slice shorter than the running thread's
/// may preempt it when woken (PREEMPT_SHORT) instead of waiting out that thread's protected slice,
/// and gets an earlier deadline: for threads that answer quickly and must not wait behind long work.
/// 1 when applied; 0 for a real-time thread, where refused, or where unavailable (older kernels
/// accept it and ignore it).
int wi_thread_set_slice(unsigned long slice_ns);

/// The scheduling slice of thread `thread` (a kernel id; 0: the caller) in nanoseconds, as
/// sched_getattr reports it (Linux 6.12 and later: the custom slice, else the default one); 0 for a
/// real-time thread, when the thread is gone, or where unavailable (older kernels report none).
unsigned long wi_thread_slice(int thread);

/// The calling thread's kernel id (gettid). 0 where unavailable.
int wi_thread_id(void);

/// Whether this process may put a thread in SCHED_RR at `priority`: tried on a thread made for the
/// purpose and joined (the caller's own policy is untouched). 1 when it may, 0 otherwise.
int wi_realtime_permitted(int priority);

/// Yield points: a thread given an interval gives its core away (sched_yield) at most every
/// `interval_us` microseconds at the yield points of long C loops (a JPEG's scanlines, the
/// resampler's rows), so that a runnable thread waiting for that core runs within about that long.
/// Linux's fair scheduler does not preempt a running thread for a woken one on a kernel built
/// without preemption (`Dynamic Preempt: none`) before the next tick, up to 4 ms at HZ 250; this is
/// the user-space counterpart of the kernel's own cond_resched(). 0 (every thread's default) turns
/// them off: a yield point then costs one thread-local load.
void wi_thread_set_yield_interval(unsigned interval_us);

/// A yield point: in a thread with an interval, yields the core when the interval has passed since
/// its last yield (or since the interval was set). Never blocks; a yield with nothing else runnable
/// returns at once. The clock is read only every few points (1 to 64, adapted so that a reading
/// comes every eighth to half of the interval): in a loop of short rows the readings cost more
/// than the rows' yield checks should (they were 0.5 % of a cold JPEG request's CPU).
void wi_yield_point(void);

/// Starts the calling thread's yield points afresh for a new loop: the clock is read at the next
/// point, and the stride is learnt again from 1. The outermost work section calls it: a stride
/// learnt in one loop (64 points of the resampler's short rows, some 100 µs) is wrong for the next
/// (64 points of an encoder's longer rows took over a millisecond, a warm answer waiting for the
/// core meanwhile). Nothing on a thread without an interval.
void wi_yield_points_restart(void);

/// How many times the calling thread's yield points have read the clock.
unsigned long wi_thread_yield_checks(void);

/// How many times the calling thread has yielded at yield points.
unsigned long wi_thread_yield_count(void);

/// Whether the calling thread has a yield interval (1) or not (0). A codec that would start helper
/// threads of its own (which inherit neither the interval nor the yield points) works alone on such
/// a thread: a server's cold threads already fill the cores between them.
int wi_thread_yields(void);
