import CSystemTuning
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import WebImage
@testable import WebImageServer
@testable import webimage

/// `webimage serve` as a user runs it: a child process that prints where it listens, serves, and on
/// SIGTERM drains, flushes and exits 0; with imgproxy's defaults (unsigned without a key, with a
/// warning; loopback sources refused).
@Suite struct ServeCommandTests {
    @Test func itServesUntilSIGTERMThenExitsZero() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let sources = try TestHTTPServer()
        defer { sources.stop() }
        sources.route("/photo.png", TestResponse(headers: [("Content-Type", "image/png")], body: try encodedPicture()))
        let child = ChildProcess(["serve", "--bind", "127.0.0.1", "--port", "0", "--cache-dir", directory.url.path])
        try await child.start()
        defer { if child.process.isRunning { kill(child.process.processIdentifier, SIGKILL) } }
        let (base, printed) = try await child.servedBase()
        #expect(printed.contains("sample: \(base)/insecure/"))
        let (_, response) = try await URLSession.shared.data(from: URL(string: base + "/health")!)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        let loopback = URL(string: base + "/insecure/rs:fit:20:20/plain/\(sources.url("/photo.png").absoluteString)")!
        let (body, refused) = try await URLSession.shared.data(from: loopback)
        #expect((refused as? HTTPURLResponse)?.statusCode == 404, "imgproxy's default refuses loopback sources: \(String(decoding: body, as: UTF8.self))")
        #expect(sources.requestCount(for: "/photo.png") == 0)
        child.process.terminate()   // SIGTERM
        let outcome = await child.waitForExit()
        #expect(outcome.exitedCleanly)
        #expect(outcome.errorText.contains("UNSIGNED") && outcome.errorText.contains("stopped"), "\(outcome.errorText)")
    }

    /// `--realtime-http` in a process that may not use the real-time class: a clear refusal and exit
    /// 1, before it listens. The child is made unprivileged without changing its user (so it can
    /// still reach the test's own files): an RLIMIT_RTPRIO of 0 (`prlimit`) and, as root, no
    /// CAP_SYS_NICE in its bounding set (`setpriv`).
    @Test func realtimeHTTPIsRefusedWhereTheProcessMayNotUseIt() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let serve = ["/usr/bin/prlimit", "--rtprio=0", ChildProcess.tool.path, "serve", "--unsigned", "--realtime-http", "--port", "0",
                     "--cache-dir", directory.path]
        let (tool, arguments) = geteuid() == 0 ? ("/usr/bin/setpriv", ["--bounding-set=-sys_nice", "--inh-caps=-sys_nice"] + serve)
                                               : ("/usr/bin/prlimit", Array(serve.dropFirst()))
        for needed in ["/usr/bin/prlimit", tool] {
            try #require(FileManager.default.isExecutableFile(atPath: needed), "\(needed) (util-linux) makes the child unprivileged")
        }
        let child = ChildProcess(arguments, executable: URL(fileURLWithPath: tool))
        try await child.start()
        let deadline = ContinuousClock.now + busyMachineBound
        while child.process.isRunning && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        if child.process.isRunning {
            kill(child.process.processIdentifier, SIGKILL)
            Issue.record("it started serving instead: \(child.outputSoFar())")
        }
        let outcome = await child.waitForExit()
        #expect(outcome.reason == .exit && outcome.status == 1, "status \(outcome.status): \(outcome.errorText)")
        #expect(outcome.errorText.contains("SCHED_RR") && outcome.errorText.contains("CAP_SYS_NICE"), "\(outcome.errorText)")
        #expect(!outcome.outputText.contains("listening on"))
    }

    @Test func parsesEveryOption() throws {
        guard case .success(let command) = ServeCommand.parse(
            ["--bind", "0.0.0.0", "--port", "9000", "--cache-dir", "/tmp/c", "--key", "aa", "--salt", "bb", "--max-inflight", "3",
             "--queue", "7", "--allow-host", "*.example.com", "--allow-host", "a.org", "--source-policy", "loopback",
             "--memory-limit", "100", "--variant-memory-limit", "32", "--malloc-arenas", "3", "--disk-limit", "200", "--keep-sources",
             "--realtime-http"]
        ) else { Issue.record("parse failed"); return }
        #expect(command.bind == "0.0.0.0" && command.port == 9000 && command.cacheDirectory?.path == "/tmp/c")
        #expect(command.keyHex == "aa" && command.saltHex == "bb" && !command.unsigned && !command.demo)
        #expect(command.maxInFlight == 3 && command.queue == 7 && command.allowedHosts == ["*.example.com", "a.org"])
        #expect(command.sourcePolicy == .standard && command.memoryLimit == 100 << 20)
        #expect(command.variantMemoryLimit == 32 << 20 && command.mallocArenas == 3 && command.diskLimit == 200 << 20 && command.keepsSources)
        #expect(command.runsNetworkThreadsInRealTime)
        guard case .failure = ServeCommand.parse(["--unsigned", "--memory-limit", "-1"]) else { Issue.record("accepted -1 MiB"); return }
        guard case .failure = ServeCommand.parse(["--unsigned", "--malloc-arenas", "0"]) else { Issue.record("accepted 0 arenas"); return }
        guard case .failure = ServeCommand.parse(["--unsigned", "--variant-memory-limit", "x"]) else { Issue.record("accepted x MiB"); return }
        guard case .success(let demo) = ServeCommand.parse(["--key", "aa", "--salt", "bb", "--demo"]), demo.demo else {
            Issue.record("--demo not parsed"); return
        }
        #expect(demo.sourcePolicy.allowsLoopback, "the demo page's samples come from the server itself")
        #expect(demo.bind == "127.0.0.1", "a demo allowing loopback sources listens on loopback unless told otherwise")
        guard case .success(let shown) = ServeCommand.parse(["--demo", "--bind", "0.0.0.0"]), shown.bind == "0.0.0.0" else {
            Issue.record("--bind with --demo not taken"); return
        }
        guard case .failure(let message) = ServeCommand.parse(["--unsigned", "--demo", "--source-policy", "public-only"]),
              message.contains("loopback") else { Issue.record("--demo accepted under public-only, whose policy refuses its samples"); return }
    }

    /// A server's defaults are a server's: no tier of decoded pixels (it reuses encoded variants,
    /// 64 MiB of them in memory), two allocator arenas (glibc's own count with real-time network
    /// threads, which must not share one with cold work) with freed memory given back every 250 ms,
    /// and network threads of the normal class (the real-time class needs a privilege).
    @Test func itsMemoryDefaultsAreAServers() throws {
        guard case .success(let command) = ServeCommand.parse(["--unsigned"]) else { Issue.record("parse failed"); return }
        #expect(command.memoryLimit == 0 && command.variantMemoryLimit == 64 << 20 && command.mallocArenas == nil)
        #expect(!command.runsNetworkThreadsInRealTime)
        #expect(MallocTuning.defaultArenas(realtimeNetworkThreads: false) == 2)
        #expect(MallocTuning.defaultArenas(realtimeNetworkThreads: true) == nil)
        #expect(command.mallocTrimInterval == .milliseconds(250))
        guard case .success(let never) = ServeCommand.parse(["--unsigned", "--malloc-trim-interval", "0"]) else {
            Issue.record("parse failed")
            return
        }
        #expect(never.mallocTrimInterval == .zero && !MallocTuning.startTrimming(every: never.mallocTrimInterval))
        guard case .failure = ServeCommand.parse(["--unsigned", "--malloc-trim-interval", "-5"]) else {
            Issue.record("a negative interval was taken")
            return
        }
        #expect(command.diskLimit == 1 << 30 && !command.keepsSources)
    }

    /// The arena bound applies through `mallopt`, except where the environment names its own.
    @Test func mallocTuningLeavesTheEnvironmentsSettingAlone() {
        #expect(MallocTuning.limitArenas(to: 8, environment: [:]))
        #expect(!MallocTuning.limitArenas(to: 8, environment: ["MALLOC_ARENA_MAX": "4"]))
    }

    /// What the trimming thread calls gives freed arena memory back: 16 MiB of 64 KiB blocks (below
    /// the mmap threshold, so they live in an arena) are written and freed, all but the last (which
    /// pins the top of the heap, so only a trim can give the rest back). The pages inside the freed
    /// blocks stay resident until the trim, and are not after it (`mincore`, so other tests'
    /// allocations meanwhile do not matter). ThreadSanitizer's allocator replaces glibc's, so under
    /// `scripts/tsan.sh` there is no glibc arena to look at and the check is left out.
    @Test func aTrimGivesFreedArenaMemoryBack() throws {
        #if !WEBIMAGE_TSAN
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        /// Resident pages of the whole pages inside `block`'s 64 KiB.
        func residentPages(_ block: UnsafeMutableRawPointer) -> Int {
            let start = (Int(bitPattern: block) + 2 * page - 1) / page * page   // past the chunk header's page
            let count = ((64 << 10) - 2 * page) / page
            var vector = [UInt8](repeating: 0, count: count)
            guard mincore(UnsafeMutableRawPointer(bitPattern: start), count * page, &vector) == 0 else { return -1 }
            return vector.count { $0 & 1 != 0 }
        }
        let blocks = (0..<256).map { _ -> UnsafeMutableRawPointer in
            let block = malloc(64 << 10)!
            memset(block, 1, 64 << 10)
            return block
        }
        let probes = [blocks[10], blocks[100], blocks[200]]
        for block in blocks.dropLast() { free(block) }
        let before = probes.map(residentPages)
        _ = wi_malloc_trim()
        let after = probes.map(residentPages)
        free(blocks.last!)
        #expect(before.allSatisfy { $0 > 0 }, "freed but not trimmed, the pages stay: \(before)")
        #expect(after.allSatisfy { $0 == 0 }, "after the trim none is resident: \(after)")
        #endif
    }

    /// With the server's thresholds, a freed 8 MiB block (a PNG source's size) stays in its arena,
    /// resident, for the next request or the trim, instead of being unmapped or trimmed by `free`
    /// (and faulted in again by the next request); a block past the arena limit still gets a mapping
    /// of its own, gone at `free`. An environment that sets a threshold is left alone. The test
    /// process gets glibc's initial thresholds back afterwards (128 KiB each). Not under
    /// ThreadSanitizer, whose allocator replaces glibc's.
    @Test func freedLargeBlocksStayForTheNextRequest() throws {
        #expect(!MallocTuning.keepFreedMemoryForTrimming(environment: ["MALLOC_TRIM_THRESHOLD_": "1"]))
        #expect(!MallocTuning.keepFreedMemoryForTrimming(environment: ["GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=65536"]))
        #if !WEBIMAGE_TSAN
        #expect(MallocTuning.keepFreedMemoryForTrimming(environment: ["GLIBC_TUNABLES": "glibc.malloc.tcache_count=0"]))
        defer { _ = wi_malloc_set_thresholds(128 << 10, 128 << 10) }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        /// Resident pages among the whole pages of the 4 MiB from 2 MiB into `block` (-1: not mapped).
        func residentPages(_ block: UnsafeMutableRawPointer) -> Int {
            let start = (Int(bitPattern: block) + (2 << 20)) / page * page, count = (4 << 20) / page
            var vector = [UInt8](repeating: 0, count: count)
            guard mincore(UnsafeMutableRawPointer(bitPattern: start), count * page, &vector) == 0 else { return -1 }
            return vector.count { $0 & 1 != 0 }
        }
        /// Whether glibc gave a block a mapping of its own (the IS_MMAPPED bit of its chunk's size
        /// word, just before the block: glibc's layout since its first ptmalloc).
        func isMapped(_ block: UnsafeMutableRawPointer) -> Bool {
            block.load(fromByteOffset: -MemoryLayout<UInt>.size, as: UInt.self) & 2 != 0
        }
        /// A block of `size` bytes, written whole: whether it had a mapping of its own, and its
        /// resident pages once it is freed.
        func allocateAndFree(_ size: Int) throws -> (mapped: Bool, resident: Int) {
            let block = try #require(malloc(size))
            memset(block, 1, size)
            let mapped = isMapped(block)
            free(block)
            return (mapped, residentPages(block))
        }
        let source = try allocateAndFree(8 << 20)
        #expect(!source.mapped, "an 8 MiB block comes from an arena, not a mapping of its own")
        // Freed, it stays resident: not trimmed (that would leave its pages mapped but not resident,
        // 0). Unmapped (-1) only when glibc had made a heap just for it, the arena's heap being full of
        // other tests' blocks, and drops that heap whole at free: seen in the whole suite, 1 run in 5.
        #expect(source.resident == (4 << 20) / page || source.resident == -1, "a freed 8 MiB block stays resident: \(source.resident) pages")
        let huge = try allocateAndFree(MallocTuning.arenaBlockLimit + (1 << 20))
        #expect(huge.mapped && huge.resident == -1, "a block past the arena limit is mapped on its own and unmapped at free: \(huge)")
        #endif
    }

    /// imgproxy's defaults: every interface on 8080, unsigned without a key, loopback and link-local
    /// sources refused and private ones allowed, 50 megapixels of source, one animation frame, a year's TTL.
    @Test func itsDefaultsAreImgproxys() throws {
        guard case .success(let command) = ServeCommand.parse([]) else { Issue.record("parse failed"); return }
        #expect(command.bind == "0.0.0.0" && command.port == 8080 && command.keyHex == nil && command.environmentKeys.isEmpty)
        #expect(command.sourcePolicy == .imgproxy && !command.sourcePolicy.allowsLoopback && !command.sourcePolicy.allowsLinkLocal
                && command.sourcePolicy.allowsPrivate)
        #expect(command.server.processingDefaults.maxSourcePixels == 50_000_000 && command.server.processingDefaults.maxAnimationFrames == 1)
        #expect(command.server.processingDefaults.quality == 80 && command.server.processingDefaults.formatQualities == [.webp: 79, .avif: 63, .jxl: 77] && command.server.processingDefaults.keepsCopyright)
        #expect(command.cacheMaxAge == nil && ImageServerConfig(signing: .unsigned).cacheMaxAge == 31_536_000)
        #expect(!command.demo && command.server.requestTimeout == .seconds(10) && command.server.maxClients == 2048)
    }

    @Test func badKeysAndAddressesStopTheStart() async throws {
        for (arguments, message) in [(["serve", "--key", "00"], "--salt"),
                                     (["serve", "--key", "zz", "--salt", "00", "--port", "0"], "hex"),
                                     (["serve", "--unsigned", "--bind", "not-an-address"], "not an IP address")] {
            let outcome = try await ChildProcess.run(arguments)
            let text = outcome.errorText
            #expect(outcome.status != 0 && text.contains(message), "\(arguments): \(text)")
        }
    }
}
