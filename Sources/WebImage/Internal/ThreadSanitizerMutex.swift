#if WEBIMAGE_TSAN
import Glibc

/// ThreadSanitizer cannot see `Synchronization.Mutex` on Linux (it locks with raw futex calls that the
/// sanitizer does not intercept), so every access under it would be reported as a race. A build
/// for ThreadSanitizer (`scripts/tsan.sh`, which passes `-D WEBIMAGE_TSAN`) swaps in this lock over
/// `pthread_mutex_t`, with the same API, in every module of the package: each declares
/// `typealias Mutex = ThreadSanitizerMutex` under the same flag (a declaration in a module shadows
/// the imported `Synchronization.Mutex`). Normal builds never compile it.
///
/// `@unchecked Sendable` is safe: `value` is only reached inside `withLock`, which holds the
/// pthread mutex for the whole closure, as `Synchronization.Mutex` does.
@usableFromInline
package final class ThreadSanitizerMutex<Value: ~Copyable>: @unchecked Sendable {
    @usableFromInline var value: Value
    @usableFromInline let lock: UnsafeMutablePointer<pthread_mutex_t>

    @inlinable
    package init(_ value: consuming Value) {
        self.value = value
        lock = .allocate(capacity: 1)
        pthread_mutex_init(lock, nil)
    }

    deinit {
        pthread_mutex_destroy(lock)
        lock.deallocate()
    }

    @inlinable
    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return try body(&value)
    }
}

/// This module's locks, visible to ThreadSanitizer (see ``ThreadSanitizerMutex``).
@usableFromInline
typealias Mutex<Value: ~Copyable> = ThreadSanitizerMutex<Value>
#endif
