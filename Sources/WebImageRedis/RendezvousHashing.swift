/// Picks the node for a key by rendezvous (highest random weight) hashing: each node scores every
/// key, and the highest score wins. Adding a node moves only the keys it now wins (about 1/n of
/// them); losing one affects only the keys it held.
struct RendezvousHashing: Sendable {
    private let seeds: [UInt64]

    /// `names` identify the nodes (`host:port/db`); the order does not matter.
    init(names: [String]) {
        seeds = names.map { Self.fnv1a($0.utf8) }
    }

    /// The index of the node for a key whose digest starts with `keyHash`.
    func node(for keyHash: UInt64) -> Int {
        var best = 0
        var bestScore: UInt64 = 0
        for (index, seed) in seeds.enumerated() {
            let score = Self.mix(seed ^ keyHash)
            if index == 0 || score > bestScore {
                best = index
                bestScore = score
            }
        }
        return best
    }

    /// SplitMix64's finaliser: spreads every input bit over the whole word.
    static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    static func fnv1a<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt64 {
        bytes.reduce(0xCBF2_9CE4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01B3 }
    }
}
