/// A first-in, first-out buffer: an array read from a moving head, so taking the oldest element is
/// O(1) without `removeFirst`'s shift. When drained its storage is reused from the start; under a
/// long backlog the taken front is dropped once it is at least half the array, so memory stays
/// proportional to what is queued. The one queue of the package's job pools (the server's thread
/// pools, the Redis node's workers) and waiter lists; its owner guards it with its own lock.
package struct FIFOBuffer<Element> {
    private var elements: [Element] = []
    private var head = 0
    /// The front taken before the storage is compacted (when it is also half the array).
    private let compactionThreshold: Int

    /// An empty buffer that compacts once `compactionThreshold` (default 1024) elements were taken.
    package init(compactionThreshold: Int = 1024) {
        self.compactionThreshold = max(1, compactionThreshold)
    }

    /// How many elements are queued.
    package var count: Int { elements.count - head }

    /// Whether nothing is queued.
    package var isEmpty: Bool { head == elements.count }

    /// Queues `element` last.
    package mutating func append(_ element: Element) {
        elements.append(element)
    }

    /// Queues `newElements` last, in order.
    package mutating func append(contentsOf newElements: some Sequence<Element>) {
        elements.append(contentsOf: newElements)
    }

    /// Takes the queued elements `shouldRemove` picks, oldest first; the others keep their order.
    package mutating func removeAll(where shouldRemove: (Element) -> Bool) -> [Element] {
        var removed: [Element] = [], kept: [Element] = []
        for element in elements[head...] {
            if shouldRemove(element) { removed.append(element) } else { kept.append(element) }
        }
        elements = kept
        head = 0
        return removed
    }

    /// Takes the oldest element, or `nil` when empty.
    package mutating func popFirst() -> Element? {
        guard head < elements.count else { return nil }
        let element = elements[head]
        head += 1
        if head == elements.count {   // drained: reuse the storage from the start
            elements.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= compactionThreshold && head * 2 >= elements.count {   // a long backlog: drop what was taken
            elements.removeFirst(head)
            head = 0
        }
        return element
    }

    /// Takes every queued element, oldest first.
    package mutating func removeAll() -> [Element] {
        let rest = Array(elements[head...])
        elements.removeAll()
        head = 0
        return rest
    }
}
