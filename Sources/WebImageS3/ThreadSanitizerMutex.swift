#if WEBIMAGE_TSAN
import WebImage

/// This module's locks, visible to ThreadSanitizer in a `scripts/tsan.sh` build (see WebImage's
/// `ThreadSanitizerMutex`); normal builds use `Synchronization.Mutex`.
typealias Mutex<Value: ~Copyable> = ThreadSanitizerMutex<Value>
#endif
