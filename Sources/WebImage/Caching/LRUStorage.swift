/// The single-threaded core of ``MemoryCache``: a hash map into a doubly linked list kept in
/// arrays of slots, so get, set and remove are O(1) and nodes are never allocated one by one.
/// The links live in their own array of plain integers, so reordering the list on a hit touches
/// no reference counts.
///
/// Invariants (checked by ``checkInvariants()`` in debug builds):
/// - `index` maps each key to the slot of exactly one live entry, and every live entry is in `index`;
/// - walking `next` from `head` visits every live slot once, ending at `tail`, with `previous`
///   links mirroring it; the head is the most recently used entry, the tail the least;
/// - `totalCost` is the sum of the live entries' costs; free slots (payload `nil`) are listed in
///   `freeSlots` and nowhere else.
@usableFromInline
struct LRUStorage<Key: Hashable, Value> {
    /// An entry's content.
    @usableFromInline
    struct Node {
        @usableFromInline var key: Key
        @usableFromInline var value: Value
        @usableFromInline var cost: Int
        /// Nanoseconds on ``MonotonicClock``; `Int64.max` means never.
        @usableFromInline var expiration: Int64

        @inlinable
        init(key: Key, value: Value, cost: Int, expiration: Int64) {
            self.key = key
            self.value = value
            self.cost = cost
            self.expiration = expiration
        }
    }

    /// An entry's place in the recency list.
    @usableFromInline
    struct Link {
        @usableFromInline var previous: Int
        @usableFromInline var next: Int

        @inlinable
        init(previous: Int, next: Int) {
            self.previous = previous
            self.next = next
        }
    }

    @usableFromInline var payload: [Node?] = []
    @usableFromInline var links: [Link] = []
    @usableFromInline var freeSlots: [Int] = []
    @usableFromInline var index: [Key: Int] = [:]
    @usableFromInline var head = -1
    @usableFromInline var tail = -1
    @usableFromInline var totalCost = 0

    @inlinable
    init() {}

    @inlinable var count: Int { index.count }

    /// The value for `key`, made most recently used; `nil` (and the entry removed) once expired.
    @inlinable
    mutating func value(forKey key: Key, now: () -> Int64) -> Value? {
        guard let slot = index[key] else { return nil }
        let expiration = payload[slot]!.expiration
        if expiration != .max && expiration <= now() {
            remove(slot: slot)
            return nil
        }
        moveToFront(slot)
        return payload[slot]!.value
    }

    /// Whether `key` is stored (without refreshing its recency).
    @inlinable
    func contains(_ key: Key, now: () -> Int64) -> Bool {
        guard let slot = index[key] else { return false }
        let expiration = payload[slot]!.expiration
        return expiration == .max || expiration > now()
    }

    /// Stores `value` as the most recently used entry, replacing any entry for `key`.
    /// Returns the replaced value.
    @inlinable @discardableResult
    mutating func set(_ value: Value, forKey key: Key, cost: Int, expiration: Int64 = .max) -> Value? {
        if let slot = index[key] {
            let old = payload[slot].take()!
            totalCost += cost - old.cost
            payload[slot] = Node(key: old.key, value: value, cost: cost, expiration: expiration)
            moveToFront(slot)
            checkCheapInvariants()
            return old.value
        }
        let node = Node(key: key, value: value, cost: cost, expiration: expiration)
        let link = Link(previous: -1, next: head)
        let slot: Int
        if let reused = freeSlots.popLast() {
            slot = reused
            payload[slot] = node
            links[slot] = link
        } else {
            slot = payload.count
            payload.append(node)
            links.append(link)
        }
        if head >= 0 { links[head].previous = slot }
        head = slot
        if tail < 0 { tail = slot }
        index[key] = slot
        totalCost += cost
        checkCheapInvariants()
        return nil
    }

    /// Removes the entry for `key` and returns its value.
    @inlinable @discardableResult
    mutating func removeValue(forKey key: Key) -> Value? {
        guard let slot = index[key] else { return nil }
        return remove(slot: slot).value
    }

    /// Removes and returns the least recently used entry.
    @inlinable
    mutating func removeLeastRecentlyUsed() -> Node? {
        tail >= 0 ? remove(slot: tail) : nil
    }

    /// Removes every entry whose expiration has passed; returns them.
    @inlinable
    mutating func removeExpired(now: Int64) -> [Node] {
        var expired: [Node] = []
        var slot = tail
        while slot >= 0 {
            let previous = links[slot].previous
            let expiration = payload[slot]!.expiration
            if expiration != .max && expiration <= now { expired.append(remove(slot: slot)) }
            slot = previous
        }
        return expired
    }

    @inlinable
    mutating func removeAll() {
        self = LRUStorage()
    }

    /// The keys from most to least recently used (for tests and debugging).
    @inlinable
    var keysByRecency: [Key] {
        var keys: [Key] = []
        var slot = head
        while slot >= 0 {
            keys.append(payload[slot]!.key)
            slot = links[slot].next
        }
        return keys
    }

    @inlinable @discardableResult
    mutating func remove(slot: Int) -> Node {
        let node = payload[slot].take()!
        unlink(slot)
        freeSlots.append(slot)
        index[node.key] = nil
        totalCost -= node.cost
        if index.isEmpty {
            // Reclaim the slot arrays once empty, so a burst does not pin memory forever.
            payload.removeAll(keepingCapacity: false)
            links.removeAll(keepingCapacity: false)
            freeSlots.removeAll(keepingCapacity: false)
        }
        checkCheapInvariants()
        return node
    }

    @inlinable
    mutating func moveToFront(_ slot: Int) {
        guard slot != head else { return }
        unlink(slot)
        links[slot] = Link(previous: -1, next: head)
        if head >= 0 { links[head].previous = slot }
        head = slot
        if tail < 0 { tail = slot }
    }

    @inlinable
    mutating func unlink(_ slot: Int) {
        let link = links[slot]
        if link.previous >= 0 { links[link.previous].next = link.next } else { head = link.next }
        if link.next >= 0 { links[link.next].previous = link.previous } else { tail = link.previous }
    }

    /// Verifies, in O(1), the invariants a broken mutation breaks first (sizes agree, the ends of the
    /// list are consistent, no negative total): run after every mutation in debug builds, as
    /// swift-collections does; ``checkInvariants()`` walks the whole list for tests.
    @inlinable
    func checkCheapInvariants() {
        #if DEBUG
        precondition(payload.count == links.count, "payload and links differ in length")
        precondition(index.count + freeSlots.count == payload.count, "live plus free slots differ from all slots")
        precondition((head < 0) == index.isEmpty && (tail < 0) == index.isEmpty, "the list's ends disagree with its count")
        precondition(head < 0 || links[head].previous == -1, "the head has a predecessor")
        precondition(tail < 0 || links[tail].next == -1, "the tail has a successor")
        precondition(totalCost >= 0, "negative total cost")
        #endif
    }

    /// Verifies every invariant in the type's documentation; a no-op in release builds.
    func checkInvariants() {
        #if DEBUG
        precondition(payload.count == links.count, "payload and links differ in length")
        var seen = 0
        var cost = 0
        var previous = -1
        var slot = head
        while slot >= 0 {
            guard let node = payload[slot] else { preconditionFailure("list reaches a free slot \(slot)") }
            precondition(links[slot].previous == previous, "broken previous link at slot \(slot)")
            precondition(index[node.key] == slot, "index does not point at slot \(slot)")
            seen += 1
            cost += node.cost
            precondition(seen <= index.count, "list is longer than the index (cycle?)")
            previous = slot
            slot = links[slot].next
        }
        precondition(previous == tail, "tail is not the last node")
        precondition(seen == index.count, "index has \(index.count) keys, list \(seen) nodes")
        precondition(cost == totalCost, "total cost \(totalCost) differs from the sum \(cost)")
        precondition(payload.count - seen == freeSlots.count, "free slot count is wrong")
        precondition(freeSlots.allSatisfy { payload[$0] == nil }, "a listed free slot holds an entry")
        #endif
    }
}
