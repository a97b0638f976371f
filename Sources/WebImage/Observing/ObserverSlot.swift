import Synchronization

/// Where one object keeps its observers: the one set through its `observer` property, and those
/// added with ``add(_:)`` (a server's metrics beside an app's logging), behind a lock, and an atomic
/// flag, so that asking "is anybody observing?" on a hot path is one relaxed load, and an event is
/// built only when someone is.
final class ObserverSlot: Sendable {
    private struct State {
        var primary: (any WebImageObserver)?
        var added: [(id: UInt64, observer: any WebImageObserver)] = []
        var nextID: UInt64 = 1
        /// Every observer, primary first: what ``emit(_:)`` calls (built on change, not per event).
        var all: [any WebImageObserver] = []

        mutating func rebuild() {
            all = (primary.map { [$0] } ?? []) + added.map(\.observer)
        }
    }

    private let state = Mutex(State())
    private let isSet = Atomic<Bool>(false)

    /// Whether any observer is set or added (a relaxed atomic load).
    var isObserved: Bool { isSet.load(ordering: .relaxed) }

    /// The observer set through the owner's `observer` property, or `nil`; those added with
    /// ``add(_:)`` stay when it changes.
    var current: (any WebImageObserver)? {
        get { isObserved ? state.withLock { $0.primary } : nil }
        set {
            state.withLock { state in
                state.primary = newValue
                state.rebuild()
                isSet.store(!state.all.isEmpty, ordering: .relaxed)
            }
        }
    }

    /// Adds an observer beside the others; returns the identifier ``remove(_:)`` takes.
    func add(_ observer: any WebImageObserver) -> UInt64 {
        state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.added.append((id, observer))
            state.rebuild()
            isSet.store(true, ordering: .relaxed)
            return id
        }
    }

    /// Removes the observer ``add(_:)`` returned `id` for; nothing when it is gone already.
    func remove(_ id: UInt64) {
        state.withLock { state in
            state.added.removeAll { $0.id == id }
            state.rebuild()
            isSet.store(!state.all.isEmpty, ordering: .relaxed)
        }
    }

    /// Sends the event `make` builds to every observer, if anybody observes (`make` is not called otherwise).
    func emit(_ make: () -> WebImageEvent) {
        guard isObserved else { return }
        let observers = state.withLock { $0.all }
        guard !observers.isEmpty else { return }
        let event = make()
        for observer in observers { observer.observe(event) }
    }

    /// An observer that hands each event to every observer of this slot: what an owner gives the
    /// parts it observes through (a manager's cache and downloader).
    var forwarder: any WebImageObserver { Forwarder(slot: self) }

    private struct Forwarder: WebImageObserver {
        let slot: ObserverSlot

        func observe(_ event: WebImageEvent) {
            slot.emit { event }
        }
    }
}
