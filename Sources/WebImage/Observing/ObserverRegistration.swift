import Synchronization

/// An observer added with ``WebImageManager/addObserver(_:)``: it receives events until
/// ``cancel()``. Dropping the registration does not remove the observer.
public final class ObserverRegistration: Sendable {
    private let removal: Mutex<(@Sendable () -> Void)?>

    init(removal: @escaping @Sendable () -> Void) {
        self.removal = Mutex(removal)
    }

    /// Removes the observer; later calls do nothing.
    public func cancel() {
        removal.withLock { removal in
            defer { removal = nil }
            return removal
        }?()
    }
}
