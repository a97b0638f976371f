import CSystemTuning
import Foundation
import Synchronization
import Testing
@testable import WebImage
@testable import WebImageServer

/// Work sections (CSystemTuning's `wi_thread_set_work_cpu`): a thread given a work CPU runs its
/// codecs' decodes, transforms and encodes pinned to that CPU, and the rest of its time — where it
/// may create threads it does not own — on the CPUs it had. The server's cold threads have distinct
/// work CPUs.
@Suite struct WorkSectionTests {
    /// The CPUs the calling thread may run on now, as the kernel reports them.
    static func allowedCPUs() throws -> Set<Int> { try AllowedCPUs.of() }

    /// A coder that decodes and encodes anything, noting the CPUs its thread may use meanwhile.
    final class ProbeCoder: ImageCoder {
        let seen = Mutex<[Set<Int>]>([])
        func canDecode(_ data: Data) -> Bool { true }
        func canEncode(_ format: ImageFormat) -> Bool { true }
        func decode(_ data: Data, options: DecodeOptions) throws -> Image {
            try note()
            return try Image(width: 1, height: 1, pixelFormat: .rgba8, pixels: [1, 2, 3, 255])
        }
        func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions) throws -> Data {
            try note()
            return Data([1])
        }
        private func note() throws {
            let cpus = try WorkSectionTests.allowedCPUs()
            seen.withLock { $0.append(cpus) }
        }
    }

    /// What a probe saw in a decode and an encode on a thread of its own, and the thread's CPUs
    /// before and after; `workIndex` gives the thread a work CPU first.
    func probe(workIndex: Int32?) async throws -> (workCPU: Int32?, before: Set<Int>, inside: [Set<Int>], after: Set<Int>) {
        let coder = ProbeCoder()
        let registry = CoderRegistry(coders: [coder])
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<(Int32?, Set<Int>, Set<Int>), any Error>, Never>) in
            Thread {
                continuation.resume(returning: Result {
                    let workCPU = workIndex.map { wi_thread_set_work_cpu($0) }
                    let before = try Self.allowedCPUs()
                    let image = try registry.decode(Data([0]))
                    _ = try registry.encode(image, as: .png)
                    return (workCPU, before, try Self.allowedCPUs())
                })
            }.start()
        }
        let (workCPU, before, after) = try result.get()
        return (workCPU, before, coder.seen.withLock { $0 }, after)
    }

    @Test func aThreadWithAWorkCPUDecodesAndEncodesPinnedToItAndOnlyThen() async throws {
        let process = try Self.allowedCPUs()
        let last = Int32(process.count - 1)
        let run = try await probe(workIndex: last)
        let workCPU = try #require(run.workCPU)
        #expect(workCPU == Int32(try #require(process.sorted().last)), "the index counts the allowed CPUs in order")
        #expect(run.before == process, "setting a work CPU changes no affinity")
        #expect(run.inside == [[Int(workCPU)], [Int(workCPU)]], "the decode and the encode run on the work CPU alone")
        #expect(run.after == process, "outside a section the thread has its CPUs back")
    }

    @Test func aThreadWithoutAWorkCPUIsNeverPinned() async throws {
        let process = try Self.allowedCPUs()
        let run = try await probe(workIndex: nil)
        #expect(run.inside == [process, process])
        #expect(run.after == process)
    }

    @Test func sectionsNestAndOnlyTheOutermostRestores() async throws {
        let process = try Self.allowedCPUs()
        let seen = await withCheckedContinuation { (continuation: CheckedContinuation<[Set<Int>], Never>) in
            Thread {
                _ = wi_thread_set_work_cpu(0)
                var seen: [Set<Int>] = []
                WorkSection.run {
                    WorkSection.run { seen.append((try? Self.allowedCPUs()) ?? []) }
                    seen.append((try? Self.allowedCPUs()) ?? [])   // still inside the outer section
                }
                seen.append((try? Self.allowedCPUs()) ?? [])
                continuation.resume(returning: seen)
            }.start()
        }
        let first = try #require(process.min())
        #expect(seen == [[first], [first], process])
    }

    /// The server's cold threads have a work CPU each, distinct as far as the process has CPUs, and
    /// outside their sections they (and the requests' threads) keep every CPU.
    @Test func theColdThreadsHaveDistinctWorkCPUsAndAreNotPinnedBetweenSections() async throws {
        let cold = ThreadPoolExecutor.coldWork, requests = ThreadPoolExecutor.requests
        let process = try Self.allowedCPUs()
        let deadline = ContinuousClock.now + busyMachineBound
        while cold.workCPUs.count < cold.threadCount && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        let workCPUs = cold.workCPUs
        #expect(workCPUs.count == cold.threadCount)
        #expect(Set(workCPUs.values).count == min(cold.threadCount, process.count))
        #expect(requests.workCPUs.isEmpty)
        // Between jobs a cold thread runs no section: its affinity is the process's.
        let onCold = try await Task(executorPreference: cold) { try Self.allowedCPUs() }.value
        #expect(onCold == process)
    }
}
