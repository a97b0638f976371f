/// The disk cache's in-memory index: file name → size and times, for every file of the directory.
///
/// A server's disk tier holds tens of thousands of entries, and the index lives as long as the
/// process, so its size per entry is the disk tier's memory cost. A `[String: Entry]` took about
/// 240 bytes an entry here (a heap string per name, Dictionary's buckets and what each doubling
/// leaves behind). This one keeps the names the cache writes — 32 lowercase hex digits of an MD5,
/// and an optional extension — as 16 bytes of digest and a one-byte tag for the extension, in one
/// open-addressing table of 40-byte slots (linear probing, backward-shift deletion, at most 3/4
/// full, doubled when fuller): 53 bytes an entry when 3/4 full, 107 just after a doubling. Any other name (a file another program left there,
/// an extension past the 253 it interns, an entry of 4 GiB or more) goes to a small dictionary
/// beside it. Iteration order is unspecified.
struct DiskCacheIndex: Sequence {
    /// What the index knows of one file.
    struct Entry: Equatable {
        var allocatedBytes: Int
        var accessTime: Double
        var modificationTime: Double
    }

    private struct Slot {
        var high: UInt64 = 0
        var low: UInt64 = 0
        var accessTime: Double = 0
        var modificationTime: Double = 0
        var allocatedBytes: UInt32 = 0
        /// 0: empty; 1: a name without extension; n ≥ 2: the extension `extensions[n - 2]`.
        var tag: UInt8 = 0

        var entry: Entry {
            Entry(allocatedBytes: Int(allocatedBytes), accessTime: accessTime, modificationTime: modificationTime)
        }
    }

    /// A name in the compact form: its digest and extension tag.
    private struct CompactName: Equatable {
        var high: UInt64
        var low: UInt64
        var tag: UInt8
    }

    private var slots: ContiguousArray<Slot> = []
    private var compactCount = 0
    private var extensions: [String] = []
    private var overflow: [String: Entry] = [:]

    init() {}

    /// How many files it holds.
    var count: Int { compactCount + overflow.count }

    /// The entry of file `name`; setting `nil` removes it.
    subscript(name: String) -> Entry? {
        get {
            if let compact = compactName(name), let found = position(of: compact) { return slots[found].entry }
            return overflow.isEmpty ? nil : overflow[name]
        }
        set {
            if let newValue { insert(newValue, named: name) } else { _ = removeValue(forKey: name) }
        }
    }

    /// Removes file `name`'s entry and returns it.
    mutating func removeValue(forKey name: String) -> Entry? {
        if let compact = compactName(name), let found = position(of: compact) {
            let entry = slots[found].entry
            removeSlot(at: found)
            return entry
        }
        return overflow.isEmpty ? nil : overflow.removeValue(forKey: name)
    }

    /// The entries whose `isIncluded` is true, least recently accessed first, until their sizes add
    /// up to `bytes` (all of them for `Int.max`). Sorting looks at the slots' times alone and names
    /// are made only for the entries returned: evicting half of 40,000 entries builds 20,000 names,
    /// not 40,000 (whose transient strings showed as the server's peak in `rss_soak.py`).
    func leastRecentlyUsed(upTo bytes: Int = .max, where isIncluded: (Entry) -> Bool = { _ in true }) -> [Element] {
        var order: [(time: Double, position: Int)] = []
        for (position, slot) in slots.enumerated() where slot.tag != 0 && isIncluded(slot.entry) {
            order.append((slot.accessTime, position))
        }
        let others = overflow.filter { isIncluded($0.value) }.map { (name: $0.key, entry: $0.value) }
        for (offset, other) in others.enumerated() { order.append((other.entry.accessTime, slots.count + offset)) }
        order.sort { $0.time < $1.time }
        var taken: [Element] = []
        var total = 0
        for (_, position) in order {
            guard total < bytes else { break }
            let element: Element = position < slots.count ? (name(of: slots[position]), slots[position].entry) : others[position - slots.count]
            total += element.entry.allocatedBytes
            taken.append(element)
        }
        return taken
    }

    /// The longest distance from an entry's home slot to its slot: how long a lookup can probe.
    var longestProbe: Int {
        var longest = 0
        for (index, slot) in slots.enumerated() where slot.tag != 0 {
            longest = Swift.max(longest, (index - home(slot.high, slot.low) + slots.count) & (slots.count - 1))
        }
        return longest
    }

    /// Forgets every entry and gives the table's memory back.
    mutating func removeAll() {
        slots = []
        compactCount = 0
        overflow = [:]
    }

    private mutating func insert(_ entry: Entry, named name: String) {
        guard entry.allocatedBytes >= 0, entry.allocatedBytes <= Int(UInt32.max), let compact = internedName(name) else {
            if let compact = compactName(name), let found = position(of: compact) { removeSlot(at: found) }
            overflow[name] = entry
            return
        }
        if !overflow.isEmpty { overflow[name] = nil }
        if let found = position(of: compact) {
            slots[found].accessTime = entry.accessTime
            slots[found].modificationTime = entry.modificationTime
            slots[found].allocatedBytes = UInt32(entry.allocatedBytes)
            return
        }
        if (compactCount + 1) * 4 > slots.count * 3 { grow() }
        var index = home(compact.high, compact.low)
        while slots[index].tag != 0 { index = (index + 1) & (slots.count - 1) }
        slots[index] = Slot(high: compact.high, low: compact.low, accessTime: entry.accessTime, modificationTime: entry.modificationTime,
                            allocatedBytes: UInt32(entry.allocatedBytes), tag: compact.tag)
        compactCount += 1
    }

    /// The slot a digest starts probing from: both halves mixed (Fibonacci hashing, the product's top
    /// bits), so that names whose digits are not random — a run of numbers in hex, whose first half
    /// is all zeros — spread over the table as MD5s do, instead of piling into one probe run.
    private func home(_ high: UInt64, _ low: UInt64) -> Int {
        let mixed = (high ^ (low &* 0xD6E8_FEB8_6659_FD93)) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: mixed >> UInt64(64 - slots.count.trailingZeroBitCount))
    }

    private func position(of compact: CompactName) -> Int? {
        guard !slots.isEmpty else { return nil }
        var index = home(compact.high, compact.low)
        while slots[index].tag != 0 {
            let slot = slots[index]
            if slot.high == compact.high && slot.low == compact.low && slot.tag == compact.tag { return index }
            index = (index + 1) & (slots.count - 1)
        }
        return nil
    }

    /// Empties slot `hole` and moves later slots of its probe run back, so that every entry stays
    /// reachable from its home without tombstones.
    private mutating func removeSlot(at hole: Int) {
        let mask = slots.count - 1
        var hole = hole
        var next = (hole + 1) & mask
        while slots[next].tag != 0 {
            let wanted = home(slots[next].high, slots[next].low)
            // The slot at `next` may fill the hole unless its home lies cyclically in (hole, next].
            let homeIsBetween = hole <= next ? (wanted > hole && wanted <= next) : (wanted > hole || wanted <= next)
            if !homeIsBetween {
                slots[hole] = slots[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        slots[hole] = Slot()
        compactCount -= 1
    }

    private mutating func grow() {
        let old = slots
        slots = ContiguousArray(repeating: Slot(), count: Swift.max(64, old.count * 2))
        for slot in old where slot.tag != 0 {
            var index = home(slot.high, slot.low)
            while slots[index].tag != 0 { index = (index + 1) & (slots.count - 1) }
            slots[index] = slot
        }
    }

    /// `name` in the compact form, or `nil`: a name of another form, or an extension not interned.
    private func compactName(_ name: String) -> CompactName? {
        guard let (high, low, pathExtension) = Self.digest(of: name) else { return nil }
        guard let pathExtension else { return CompactName(high: high, low: low, tag: 1) }
        return extensions.firstIndex(of: pathExtension).map { CompactName(high: high, low: low, tag: UInt8($0 + 2)) }
    }

    /// `name` in the compact form, its extension interned if new; `nil` for a name of another form
    /// or when 253 extensions are interned already.
    private mutating func internedName(_ name: String) -> CompactName? {
        if let compact = compactName(name) { return compact }
        guard let (high, low, pathExtension) = Self.digest(of: name), let pathExtension, extensions.count < 253 else { return nil }
        extensions.append(pathExtension)
        return CompactName(high: high, low: low, tag: UInt8(extensions.count + 1))
    }

    /// The digest a name of the compact form spells (32 lowercase hex digits) and its extension
    /// (what follows a dot after them, not empty), or `nil`.
    private static func digest(of name: String) -> (high: UInt64, low: UInt64, pathExtension: String?)? {
        var name = name
        return name.withUTF8 { bytes -> (UInt64, UInt64, String?)? in
            guard bytes.count == 32 || (bytes.count > 33 && bytes[32] == UInt8(ascii: ".")) else { return nil }
            var high: UInt64 = 0, low: UInt64 = 0
            for index in 0..<32 {
                let byte = bytes[index]
                // Lower case only: an upper-case name is another file, kept under its own name.
                guard byte < UInt8(ascii: "A") || byte > UInt8(ascii: "F"), let digit = HexDigits.value(byte) else { return nil }
                if index < 16 { high = high << 4 | UInt64(digit) } else { low = low << 4 | UInt64(digit) }
            }
            return (high, low, bytes.count > 32 ? String(decoding: UnsafeBufferPointer(rebasing: bytes[33...]), as: UTF8.self) : nil)
        }
    }

    private func name(of slot: Slot) -> String {
        let digest = HexDigits.string((0..<16).map { UInt8(truncatingIfNeeded: ($0 < 8 ? slot.high : slot.low) >> (56 - 8 * ($0 % 8))) })
        return slot.tag == 1 ? digest : digest + "." + extensions[Int(slot.tag) - 2]
    }

    /// One file of the index.
    typealias Element = (name: String, entry: Entry)

    /// Walks a snapshot of the index (changing the index meanwhile does not disturb it).
    struct Iterator: IteratorProtocol {
        fileprivate let index: DiskCacheIndex
        fileprivate var position = 0
        fileprivate var others: Dictionary<String, Entry>.Iterator

        mutating func next() -> Element? {
            while position < index.slots.count {
                defer { position += 1 }
                let slot = index.slots[position]
                if slot.tag != 0 { return (index.name(of: slot), slot.entry) }
            }
            return others.next().map { ($0.key, $0.value) }
        }
    }

    func makeIterator() -> Iterator { Iterator(index: self, others: overflow.makeIterator()) }
}
