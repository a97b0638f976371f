import CSystemTuning
import Foundation
import Testing
@testable import WebImage

/// Helpers the tests share.
enum TestSupport {
    /// The first word a command-line digest tool (`md5sum`, `sha256sum`) prints for `bytes`.
    static func digest(of bytes: [UInt8], tool: String) async throws -> String {
        let file = TestScratch.root.appendingPathComponent("digest-\(UUID().uuidString)")
        try Data(bytes).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let output = try await ChildProcess.run([file.path], executable: URL(fileURLWithPath: "/usr/bin/" + tool)).outputText
        return String(output.prefix { !$0.isWhitespace })
    }
}

/// A small deterministic generator for reproducible random tests.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Polls `condition` every 5 ms until it holds, or throws ``WaitTimedOut`` naming the wait once `timeout`
/// passes. Generous, because the whole suite on two cores can starve a test for many seconds; a passing
/// wait returns as soon as the condition holds.
func waitUntil(timeout: Duration = .seconds(60), sourceLocation: SourceLocation = #_sourceLocation,
               _ condition: () async -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout * testTimeScale
    while !(await condition()) {
        guard ContinuousClock.now < deadline else { throw WaitTimedOut(timeout: timeout * testTimeScale, sourceLocation: sourceLocation) }
        try await Task.sleep(for: .milliseconds(5))
    }
}

/// A ``waitUntil(timeout:sourceLocation:_:)`` whose condition never held: names the wait, so a test that
/// starved says where instead of failing later on what the wait was for.
struct WaitTimedOut: Error, CustomStringConvertible {
    let timeout: Duration
    let sourceLocation: SourceLocation
    var description: String { "the condition waited for at \(sourceLocation) did not hold within \(timeout)" }
}

/// How much longer than usual waits may take: `WEBIMAGE_TEST_TIME_SCALE` (scripts/tsan.sh sets it,
/// since ThreadSanitizer slows everything several times over); default 1.
let testTimeScale: Int = Int(ProcessInfo.processInfo.environment["WEBIMAGE_TEST_TIME_SCALE"] ?? "").map { max($0, 1) } ?? 1

/// The bound of a wait for something that normally takes well under a second (a child process to
/// answer, a held source to be released) when the machine is busy: 2 minutes, times ``testTimeScale``.
/// Under ThreadSanitizer with both cores held by other work, redis-server took more than a minute to
/// answer its first PING and gated sources more than 15 s to be released.
let busyMachineBound: Duration = .seconds(120) * testTimeScale

/// The download settings of the manager and server fixtures: a held source waited for as long as a
/// busy machine may take to release it (``busyMachineBound``), not the default 15 s (a loaded
/// ThreadSanitizer run timed out gated sources). Tests that mean a time-out set their own.
let patientDownloads = DownloaderConfig(downloadTimeout: busyMachineBound, idleTimeout: busyMachineBound)

/// How much more memory bounds may allow: `WEBIMAGE_TEST_MEMORY_SCALE` (scripts/tsan.sh sets it:
/// ThreadSanitizer's shadow memory counts in the resident size); default 1.
let testMemoryScale: Int = Int(ProcessInfo.processInfo.environment["WEBIMAGE_TEST_MEMORY_SCALE"] ?? "").map { max($0, 1) } ?? 1

/// Runs `body` on a thread of its own, off Swift's cooperative pool, and returns what it returns: a
/// corpus decode and hash is long synchronous work, and on a 2-core machine two of them held both
/// pool threads long enough to starve the suite's network tests past their waits.
///
/// The result goes back through a lock (`NSLock`, a pthread mutex ThreadSanitizer sees), not the
/// continuation: TSan reported the caller's first read of an image decoded here as racing with its
/// initializer on the thread (`scripts/tsan.sh`, the whole suite), the continuation's hand-off not
/// being an edge it saw.
///
/// The thread runs at nice 5, as the server runs its cold work lowered: the suite's long CPU work
/// (corpus decodes, big encodes) then leaves the cores to the tests that wait for events (downloads,
/// servers, time-outs), which stalled behind it for tens of seconds on two cores.
func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    let handOff = HandOff<T>()
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        Thread {
            _ = wi_thread_set_nice(5)
            handOff.put(Result { try body() })
            continuation.resume()
        }.start()
    }
    return try handOff.take().get()
}

/// One result handed from a thread to a task under a lock ThreadSanitizer sees.
private final class HandOff<T: Sendable>: @unchecked Sendable {
    // @unchecked: `result` is only read and written while holding `lock`.
    private let lock = NSLock()
    private var result: Result<T, any Error>?

    func put(_ value: Result<T, any Error>) {
        lock.lock()
        result = value
        lock.unlock()
    }

    func take() -> Result<T, any Error> {
        lock.lock()
        defer { lock.unlock() }
        return result!
    }
}

/// An image decoded off the pool with its RGBA checksum (hashing is slow in a debug build too).
struct DecodedForTest: Sendable {
    let image: Image
    let checksum: String

    /// Decodes `data` with `coder` and `options` off the pool.
    static func decode(_ data: Data, with coder: any ImageCoder, options: DecodeOptions = DecodeOptions()) async throws -> DecodedForTest {
        try await offThePool {
            let image = try coder.decode(data, options: options)
            return DecodedForTest(image: image, checksum: image.rgbaSHA256())
        }
    }
}
