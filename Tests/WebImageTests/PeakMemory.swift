import Foundation

/// Peak resident memory of work done in a child process, so that a memory bound is measured apart
/// from the other tests running at the same time in this process (their allocations made
/// in-process measurements flaky).
///
/// The child reports its own peak (`webimage fetch` ends its summary with `peak memory N MiB`, read
/// from `VmHWM`): `wait4`'s `ru_maxrss` cannot be used, because Linux starts a spawned child's
/// maximum at the parent's resident size when it calls `exec` (the whole test process here).
enum PeakMemory {
    /// Runs `webimage fetch` with `arguments` and returns its exit status and peak resident bytes.
    static func ofFetch(_ arguments: [String]) async throws -> (status: Int32, peakBytes: Int) {
        let outcome = try await ChildProcess.run(["fetch"] + arguments)
        let text = outcome.errorText
        let mebibytes = try #require(text.range(of: "peak memory ").flatMap { Int(text[$0.upperBound...].prefix { $0.isNumber }) },
                                     "no peak memory in: \(text)")
        return (outcome.status, mebibytes << 20)
    }
}

import Testing
