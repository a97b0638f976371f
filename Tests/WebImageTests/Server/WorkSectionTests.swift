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
    static func allowedCPUs() throws -> Set<Int> {
        let status = try String(contentsOfFile: "/proc/thread-self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("Cpus_allowed_list:") })
        var cpus: Set<Int> = []
        for range in line.dropFirst("Cpus_allowed_list:".count).trimmingCharacters(in: .whitespaces).split(separator: ",") {
            let ends = range.split(separator: "-").compactMap { Int($0) }
            if let first = ends.first, let last = ends.last { cpus.formUnion(first...last) }
        }
        return cpus
    }

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

    /// A section on a given CPU pins there and nests with work sections; a negative CPU is none.
    @Test func aSectionOnAGivenCPUPinsThereAndRestores() async throws {
        let process = try Self.allowedCPUs()
        let last = try #require(process.max())
        let seen = await withCheckedContinuation { (continuation: CheckedContinuation<([Set<Int>], Int32, Int32), Never>) in
            Thread {
                var seen: [Set<Int>] = []
                let none = wi_cpu_section_begin(-1)
                seen.append((try? Self.allowedCPUs()) ?? [])
                wi_work_section_end(none)
                let began = wi_cpu_section_begin(Int32(last))
                seen.append((try? Self.allowedCPUs()) ?? [])
                wi_work_section_end(began)
                seen.append((try? Self.allowedCPUs()) ?? [])
                continuation.resume(returning: (seen, none, wi_thread_work_cpu()))
            }.start()
        }
        #expect(seen.0 == [process, [last], process])
        #expect(seen.1 == 0, "no section for a negative CPU")
        #expect(seen.2 == -1, "a thread never given a work CPU has none")
    }

    /// A plain download started by a cold thread (which then waits for it, and is free to take its
    /// continuation) is carried by an HTTP/1.1 worker pinned to that thread's work CPU while it runs:
    /// its progress callbacks, on the worker, see that CPU alone. Started only when a worker is idle (else it goes through the launch queue,
    /// unpinned), so each attempt first makes sure one is; another test may take it meanwhile, hence
    /// a few attempts.
    @Test func aColdThreadsDownloadRunsOnItsWorkCPU() async throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        server.route("/a.png", TestResponse(headers: [("Content-Type", "image/png")], body: Data(repeating: 7, count: 300_000)))
        let downloader = Downloader(config: DownloaderConfig(transport: .automatic))
        var outcomes: [(workCPU: Int32, seen: [Set<Int>])] = []
        for attempt in 0..<10 {
            let idle = DispatchSemaphore(value: 0)
            HTTP1Client.shared.run { idle.signal() }
            _ = idle.wait(timeout: .now() + 10)
            try await Task.sleep(for: .milliseconds(5))   // the worker back to waiting for jobs
            let seen = Mutex<[Set<Int>]>([])
            let url = server.url("/a.png?attempt=\(attempt)")
            let workCPU = try await Task(executorPreference: ThreadPoolExecutor.coldWork) {
                // The thread that starts the download: `load` joins and launches it before it first
                // suspends (the task may resume on the other cold thread afterwards).
                let launching = wi_thread_work_cpu()
                _ = try await downloader.load(ImageLoadRequest(url: url)) { _ in
                    if let cpus = try? Self.allowedCPUs() { seen.withLock { $0.append(cpus) } }
                }
                return launching
            }.value
            outcomes.append((workCPU, seen.withLock { $0 }))
            if let last = outcomes.last, !last.seen.isEmpty, last.seen.allSatisfy({ $0 == [Int(last.workCPU)] }) { break }
        }
        let last = try #require(outcomes.last)
        #expect(last.workCPU >= 0, "the cold thread has a work CPU")
        #expect(!last.seen.isEmpty && last.seen.allSatisfy { $0 == [Int(last.workCPU)] },
                "the transfer ran on CPUs \(outcomes.map { Set($0.seen) }) for work CPUs \(outcomes.map(\.workCPU))")
    }

    /// The server's cold threads have a work CPU each, distinct as far as the process has CPUs, and
    /// outside their sections they (and the requests' threads) keep every CPU.
    @Test func theColdThreadsHaveDistinctWorkCPUsAndAreNotPinnedBetweenSections() async throws {
        let cold = ThreadPoolExecutor.coldWork, requests = ThreadPoolExecutor.requests
        let process = try Self.allowedCPUs()
        let deadline = ContinuousClock.now + .seconds(10)
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
