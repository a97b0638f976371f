import Foundation

/// Deterministic choices (chunk sizes, option bits) derived from an input.
///
/// The seed is the input's last (up to) 8 bytes and its length, as LLVM's FuzzedDataProvider takes
/// integers from the end: the input's start stays a well-formed image that the decoders see whole,
/// and the fuzzer still steers the choices by mutating the tail (which every decoder ignores after
/// `IEND` / `EOI` anyway). The same input always makes the same choices, so crashes reproduce.
public struct FuzzControl {
    private var state: UInt64

    public init(_ data: Data) {
        var seed = UInt64(truncatingIfNeeded: data.count) &* 0x9E37_79B9_7F4A_7C15
        for byte in data.suffix(8) { seed = seed << 8 | UInt64(byte) ^ (seed >> 56) }
        state = seed
    }

    /// SplitMix64.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    public mutating func bool() -> Bool { next() & 1 == 1 }

    /// A value in `range` (slightly biased; fine for fuzzing).
    public mutating func int(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.upperBound - range.lowerBound + 1))
    }

    /// Splits `count` bytes into consecutive chunks for an incremental decoder.
    ///
    /// Chunk sizes are drawn up to a ceiling chosen from 1, 2…16, …256, …4096, …65536 bytes or
    /// "everything at once"; the ceiling is raised for big inputs so that no input is cut into more
    /// than 4096 chunks (one-byte chunks of a 1 MB file would make every run a timeout). Now and then
    /// a chunk is empty: appending empty data is legal and must change nothing.
    public mutating func chunkRanges(count: Int) -> [Range<Int>] {
        if let fixed = fixedChunkSize {
            // Reproduction aid: WEBIMAGE_FUZZ_CHUNK_SIZE=N cuts every input in N-byte chunks (0: one chunk).
            let size = fixed > 0 ? fixed : max(count, 1)
            return stride(from: 0, to: count, by: size).map { $0..<min($0 + size, count) }
        }
        let ceilings = [1, 16, 256, 4096, 65536, Int.max]
        var ceiling = ceilings[int(in: 0...ceilings.count - 1)]
        let minimumCeiling = (count + 4095) / 4096 * 2
        ceiling = max(ceiling, minimumCeiling)
        var ranges: [Range<Int>] = []
        var start = 0
        while start < count {
            if next() % 64 == 0 { ranges.append(start..<start) }
            let size = ceiling == Int.max ? count - start : int(in: 1...min(ceiling, count - start))
            ranges.append(start..<start + size)
            start += size
        }
        return ranges
    }
}

/// `WEBIMAGE_FUZZ_CHUNK_SIZE`, when set: every incremental decode gets fixed-size chunks.
let fixedChunkSize: Int? = ProcessInfo.processInfo.environment["WEBIMAGE_FUZZ_CHUNK_SIZE"].flatMap { Int($0) }
