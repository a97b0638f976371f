import Synchronization

/// A thread-safe, synchronous least-recently-used cache with cost and count limits.
///
/// Every operation is O(1) and takes one short lock (a `Mutex`): a hit costs no actor hop and no
/// allocation. When a store pushes the cache past ``totalCostLimit`` or ``countLimit``, the least
/// recently used entries are evicted until both hold again. Reading an entry makes it the most
/// recently used. An entry whose cost exceeds ``entryCostLimitRatio`` of the cost limit is not stored
/// at all (it would flush the whole cache). Entries may carry a time to live.
///
/// When values are objects (such as ``Image``) and ``keepsValuesInUse`` is on, an entry evicted while
/// someone still holds its value is remembered weakly: a later read returns it and promotes it back
/// into the LRU (SDWebImage's weak in-use cache), so an image on screen, or in the middle of a request,
/// is never decoded twice.
public final class MemoryCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    @usableFromInline
    struct State: ~Copyable {
        @usableFromInline var lru = LRUStorage<Key, Value>()
        @usableFromInline var inUse: [Key: WeakReference] = [:]
        @usableFromInline var totalCostLimit: Int
        @usableFromInline var countLimit: Int
        @usableFromInline var evictionCount = 0
        /// The costs of the entries counted in `evictionCount`.
        @usableFromInline var evictedCost = 0

        @inlinable
        init(totalCostLimit: Int, countLimit: Int) {
            self.totalCostLimit = totalCostLimit
            self.countLimit = countLimit
        }
    }

    /// A weak reference to an evicted object value.
    @usableFromInline
    struct WeakReference {
        @usableFromInline weak var object: AnyObject?
        @usableFromInline var cost: Int

        @inlinable
        init(object: AnyObject?, cost: Int) {
            self.object = object
            self.cost = cost
        }
    }

    @usableFromInline let state: Mutex<State>
    @usableFromInline let valuesAreObjects: Bool

    /// The fraction of ``totalCostLimit`` above which a single entry is refused; default 0.1 (as Nuke).
    public let entryCostLimitRatio: Double
    /// Whether evicted object values still referenced elsewhere are found by reads; default `true`.
    public let keepsValuesInUse: Bool

    /// Creates an empty cache.
    ///
    /// - Parameters:
    ///   - totalCostLimit: the largest total cost to hold; 0 (the default) means no limit.
    ///   - countLimit: the largest number of entries; 0 (the default) means no limit.
    ///   - entryCostLimitRatio: refuse entries costing more than this fraction of `totalCostLimit`;
    ///     default 0.1. Ignored when there is no cost limit.
    ///   - keepsValuesInUse: remember evicted object values weakly; default `true`.
    public init(totalCostLimit: Int = 0, countLimit: Int = 0, entryCostLimitRatio: Double = 0.1, keepsValuesInUse: Bool = true) {
        state = Mutex(State(totalCostLimit: max(totalCostLimit, 0), countLimit: max(countLimit, 0)))
        self.entryCostLimitRatio = entryCostLimitRatio
        self.keepsValuesInUse = keepsValuesInUse
        valuesAreObjects = Value.self is AnyObject.Type
    }

    /// The largest total cost held (0 = no limit). Lowering it evicts at once.
    public var totalCostLimit: Int {
        get { state.withLock { $0.totalCostLimit } }
        set { state.withLock { $0.totalCostLimit = max(newValue, 0); enforceLimits(&$0) } }
    }

    /// The largest number of entries held (0 = no limit). Lowering it evicts at once.
    public var countLimit: Int {
        get { state.withLock { $0.countLimit } }
        set { state.withLock { $0.countLimit = max(newValue, 0); enforceLimits(&$0) } }
    }

    /// The sum of the costs of the entries held (not counting evicted values still in use).
    public var totalCost: Int { state.withLock { $0.lru.totalCost } }

    /// The number of entries held (not counting evicted values still in use).
    public var count: Int { state.withLock { $0.lru.count } }

    /// How many entries the limits have evicted since the cache was created.
    public var evictionCount: Int { state.withLock { $0.evictionCount } }

    /// The value for `key`, or `nil`. A hit makes the entry the most recently used; an expired entry
    /// is removed and is a miss; an evicted value still in use is promoted back.
    @inlinable
    public func value(forKey key: Key) -> Value? {
        state.withLock { state in
            if let value = state.lru.value(forKey: key, now: MonotonicClock.nanoseconds) { return value }
            guard valuesAreObjects, let reference = state.inUse[key] else { return nil }
            guard let object = reference.object, let value = object as? Value else {
                state.inUse[key] = nil
                return nil
            }
            state.inUse[key] = nil
            state.lru.set(value, forKey: key, cost: reference.cost)
            enforceLimits(&state)
            return value
        }
    }

    /// Whether `key` has a live entry (or an evicted value still in use), without refreshing recency.
    @inlinable
    public func contains(_ key: Key) -> Bool {
        state.withLock { state in
            state.lru.contains(key, now: MonotonicClock.nanoseconds) || (state.inUse[key]?.object != nil)
        }
    }

    /// Stores `value` for `key` as the most recently used entry, replacing any earlier one, then evicts
    /// least recently used entries until the limits hold.
    ///
    /// - Parameters:
    ///   - cost: what the entry counts against ``totalCostLimit`` (for images, ``Image/cost``); default 0.
    ///   - timeToLive: how long the entry stays readable; default `nil` (until evicted).
    /// - Returns: whether the value was stored; `false` when its cost exceeds
    ///   ``entryCostLimitRatio`` of the cost limit (any older entry for the key is removed then).
    @inlinable @discardableResult
    public func setValue(_ value: Value, forKey key: Key, cost: Int = 0, timeToLive: Duration? = nil) -> Bool {
        let expiration = timeToLive.map { MonotonicClock.nanoseconds() &+ MonotonicClock.nanoseconds(of: $0) } ?? .max
        return state.withLock { store(value, forKey: key, cost: cost, expiration: expiration, in: &$0) }
    }

    @inlinable
    func store(_ value: Value, forKey key: Key, cost: Int, expiration: Int64, in state: inout State) -> Bool {
        if !state.inUse.isEmpty { state.inUse[key] = nil }
        if state.totalCostLimit > 0, Double(cost) > Double(state.totalCostLimit) * entryCostLimitRatio {
            state.lru.removeValue(forKey: key)
            return false
        }
        state.lru.set(value, forKey: key, cost: max(cost, 0), expiration: expiration)
        enforceLimits(&state)
        return true
    }

    /// ``setValue(_:forKey:cost:timeToLive:)`` that also says what the limits evicted to make room
    /// (for an observed ``ImageCache``).
    func setValueCountingEvictions(_ value: Value, forKey key: Key, cost: Int, timeToLive: Duration?) -> (count: Int, cost: Int) {
        let expiration = timeToLive.map { MonotonicClock.nanoseconds() &+ MonotonicClock.nanoseconds(of: $0) } ?? .max
        return state.withLock { state in
            let before = (count: state.evictionCount, cost: state.evictedCost)
            _ = store(value, forKey: key, cost: cost, expiration: expiration, in: &state)
            return (state.evictionCount - before.count, state.evictedCost - before.cost)
        }
    }

    /// ``trim(toCount:)`` that also says what it evicted (for an observed ``ImageCache``).
    func trimCountingEvictions(toCount count: Int) -> (count: Int, cost: Int) {
        state.withLock { state in
            let before = (count: state.evictionCount, cost: state.evictedCost)
            while state.lru.count > max(count, 0), let node = state.lru.removeLeastRecentlyUsed() { evicted(node, in: &state) }
            return (state.evictionCount - before.count, state.evictedCost - before.cost)
        }
    }

    /// Reads or writes the entry for `key` (a write stores with cost 0; assigning `nil` removes).
    public subscript(key: Key) -> Value? {
        get { value(forKey: key) }
        set {
            if let newValue { setValue(newValue, forKey: key) } else { removeValue(forKey: key) }
        }
    }

    /// Removes the entry for `key` (and forgets an evicted value still in use) and returns its value.
    @inlinable @discardableResult
    public func removeValue(forKey key: Key) -> Value? {
        state.withLock { state in
            if !state.inUse.isEmpty { state.inUse[key] = nil }
            return state.lru.removeValue(forKey: key)
        }
    }

    /// Removes every entry, including evicted values still in use.
    public func removeAll() {
        state.withLock { state in
            state.lru.removeAll()
            state.inUse.removeAll()
        }
    }

    /// Evicts least recently used entries until the total cost is at most `cost`.
    public func trim(toCost cost: Int) {
        state.withLock { state in
            while state.lru.totalCost > max(cost, 0), let node = state.lru.removeLeastRecentlyUsed() { evicted(node, in: &state) }
        }
    }

    /// Evicts least recently used entries until at most `count` remain.
    public func trim(toCount count: Int) {
        _ = trimCountingEvictions(toCount: count)
    }

    /// Removes every entry whose time to live has passed, and forgets evicted values no longer in use.
    public func removeExpired() {
        state.withLock { state in
            _ = state.lru.removeExpired(now: MonotonicClock.nanoseconds())
            state.inUse = state.inUse.filter { $0.value.object != nil }
        }
    }

    /// The keys from most to least recently used (for tests and debugging).
    var keysByRecency: [Key] { state.withLock { $0.lru.keysByRecency } }

    /// Checks the LRU invariants (debug builds only).
    func checkInvariants() { state.withLock { $0.lru.checkInvariants() } }

    @inlinable
    func enforceLimits(_ state: inout State) {
        while (state.totalCostLimit > 0 && state.lru.totalCost > state.totalCostLimit)
            || (state.countLimit > 0 && state.lru.count > state.countLimit),
            let node = state.lru.removeLeastRecentlyUsed() {
            evicted(node, in: &state)
        }
    }

    @inlinable
    func evicted(_ node: LRUStorage<Key, Value>.Node, in state: inout State) {
        state.evictionCount += 1
        state.evictedCost += node.cost
        guard keepsValuesInUse, valuesAreObjects else { return }
        state.inUse[node.key] = WeakReference(object: node.value as AnyObject, cost: node.cost)
        // Forget dead references now and then so the table stays proportional to live objects.
        if state.evictionCount % 64 == 0 {
            state.inUse = state.inUse.filter { $0.value.object != nil }
        }
    }
}
