import Synchronization

/// Where one object keeps its observer: a lock for the value and an atomic flag, so that asking
/// "is anybody observing?" on a hot path is one relaxed load, and an event is built only when
/// someone is.
final class ObserverSlot: Sendable {
    private let observer = Mutex<(any WebImageObserver)?>(nil)
    private let isSet = Atomic<Bool>(false)

    /// Whether an observer is set (a relaxed atomic load).
    var isObserved: Bool { isSet.load(ordering: .relaxed) }

    /// The observer, or `nil`.
    var current: (any WebImageObserver)? {
        get { isObserved ? observer.withLock { $0 } : nil }
        set {
            observer.withLock { observer in
                observer = newValue
                isSet.store(newValue != nil, ordering: .relaxed)
            }
        }
    }

    /// Sends the event `make` builds, if anybody observes (`make` is not called otherwise).
    func emit(_ make: () -> WebImageEvent) {
        guard isObserved, let observer = current else { return }
        observer.observe(make())
    }
}
