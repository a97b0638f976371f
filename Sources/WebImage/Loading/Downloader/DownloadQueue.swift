/// The downloads waiting for a slot: one list per priority, each kept oldest first; FIFO takes from
/// the front, LIFO from the back, so choosing the next download is O(1) when no per-host limit
/// skips entries, and the order can change while downloads wait.
struct DownloadQueue {
    private var lists: [[DownloadOperation]] = [[], [], []]   // indexed by DownloadPriority.rawValue

    var count: Int { lists.reduce(0) { $0 + $1.count } }

    /// Queues `operation` under its current priority.
    mutating func append(_ operation: DownloadOperation) {
        lists[operation.priority.rawValue].append(operation)
    }

    /// Removes and returns the next operation to start: the most urgent priority first, then the
    /// oldest (FIFO) or newest (LIFO), skipping operations `isEligible` refuses (a host at its limit).
    mutating func popNext(order: DownloadExecutionOrder, where isEligible: (DownloadOperation) -> Bool) -> DownloadOperation? {
        for list in lists.indices.reversed() {
            let index = order == .fifo ? lists[list].firstIndex(where: isEligible) : lists[list].lastIndex(where: isEligible)
            if let index { return lists[list].remove(at: index) }
        }
        return nil
    }

    /// Moves `operation` to the list of its (raised) priority, where its age puts it.
    mutating func reprioritize(_ operation: DownloadOperation) {
        guard remove(operation) else { return }
        let list = operation.priority.rawValue
        let position = lists[list].firstIndex { $0.sequence > operation.sequence } ?? lists[list].endIndex
        lists[list].insert(operation, at: position)
    }

    /// Removes `operation`; returns whether it was queued.
    @discardableResult
    mutating func remove(_ operation: DownloadOperation) -> Bool {
        for list in lists.indices {
            if let index = lists[list].firstIndex(where: { $0 === operation }) {
                lists[list].remove(at: index)
                return true
            }
        }
        return false
    }

    /// Whether `operation` waits in the queue.
    func contains(_ operation: DownloadOperation) -> Bool {
        lists.contains { $0.contains { $0 === operation } }
    }

    mutating func removeAll() {
        lists = [[], [], []]
    }
}
