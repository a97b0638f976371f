import CSystemTuning
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import webimage

/// `webimage serve` as a user runs it: a child process that prints where it listens, serves, and on
/// SIGTERM drains, flushes and exits 0; and that refuses to start unsigned unless told to.
@Suite struct ServeCommandTests {
    @Test func itServesUntilSIGTERMThenExitsZero() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let child = ChildProcess(["serve", "--unsigned", "--port", "0", "--cache-dir", directory.url.path])
        try await child.start()
        defer { if child.process.isRunning { kill(child.process.processIdentifier, SIGKILL) } }
        var printed = ""
        let deadline = ContinuousClock.now + .seconds(120)
        while !printed.contains("demo page:"), child.process.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            printed = child.outputSoFar()
        }
        let line = try #require(printed.split(separator: "\n").first { $0.hasPrefix("listening on ") }, "printed: \(printed)")
        let base = String(line.dropFirst("listening on ".count))
        #expect(printed.contains("sample: \(base)/insecure/"))
        let (_, response) = try await URLSession.shared.data(from: URL(string: base + "/health")!)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        child.process.terminate()   // SIGTERM
        let outcome = await child.waitForExit()
        #expect(outcome.exitedCleanly)
        #expect(outcome.errorText.contains("UNSIGNED") && outcome.errorText.contains("stopped"), "\(outcome.errorText)")
    }

    @Test func parsesEveryOption() throws {
        guard case .success(let command) = ServeCommand.parse(
            ["--bind", "0.0.0.0", "--port", "9000", "--cache-dir", "/tmp/c", "--key", "aa", "--salt", "bb", "--max-inflight", "3",
             "--queue", "7", "--allow-host", "*.example.com", "--allow-host", "a.org", "--source-policy", "public-only",
             "--memory-limit", "100", "--variant-memory-limit", "32", "--malloc-arenas", "3", "--disk-limit", "200", "--keep-sources"]
        ) else { Issue.record("parse failed"); return }
        #expect(command.bind == "0.0.0.0" && command.port == 9000 && command.cacheDirectory?.path == "/tmp/c")
        #expect(command.keyHex == "aa" && command.saltHex == "bb" && !command.unsigned && !command.demo)
        #expect(command.maxInFlight == 3 && command.queue == 7 && command.allowedHosts == ["*.example.com", "a.org"])
        #expect(command.sourcePolicy == .publicOnly && command.memoryLimit == 100 << 20)
        #expect(command.variantMemoryLimit == 32 << 20 && command.mallocArenas == 3 && command.diskLimit == 200 << 20 && command.keepsSources)
        guard case .failure = ServeCommand.parse(["--unsigned", "--memory-limit", "-1"]) else { Issue.record("accepted -1 MiB"); return }
        guard case .failure = ServeCommand.parse(["--unsigned", "--malloc-arenas", "0"]) else { Issue.record("accepted 0 arenas"); return }
        guard case .failure = ServeCommand.parse(["--unsigned", "--variant-memory-limit", "x"]) else { Issue.record("accepted x MiB"); return }
        guard case .success(let demo) = ServeCommand.parse(["--key", "aa", "--salt", "bb", "--demo"]), demo.demo else {
            Issue.record("--demo not parsed"); return
        }
        guard case .failure(let message) = ServeCommand.parse(["--unsigned", "--demo", "--source-policy", "public-only"]),
              message.contains("loopback") else { Issue.record("--demo accepted under public-only, whose policy refuses its samples"); return }
    }

    /// A server's defaults are a server's: no tier of decoded pixels (it reuses encoded variants,
    /// 64 MiB of them in memory) and two allocator arenas.
    @Test func itsMemoryDefaultsAreAServers() throws {
        guard case .success(let command) = ServeCommand.parse(["--unsigned"]) else { Issue.record("parse failed"); return }
        #expect(command.memoryLimit == 0 && command.variantMemoryLimit == 64 << 20 && command.mallocArenas == 2)
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
        #expect(MallocTuning.applyServerSettings(arenas: 8, environment: [:]))
        #expect(!MallocTuning.applyServerSettings(arenas: 8, environment: ["MALLOC_ARENA_MAX": "4"]))
    }

    /// What the trimming thread calls gives freed arena memory back: 64 MiB of 64 KiB blocks (below
    /// the mmap threshold, so they live in an arena), all freed but the last (which pins the top of
    /// the heap, so only a trim can give back the rest), then trimmed: the resident size drops.
    @Test func aTrimGivesFreedArenaMemoryBack() throws {
        func residentMiB() throws -> Int {
            let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
            let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
            return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) / 1024
        }
        let blocks = (0..<1024).map { _ -> UnsafeMutableRawPointer in
            let block = malloc(64 << 10)!
            memset(block, 1, 64 << 10)
            return block
        }
        let filled = try residentMiB()
        for block in blocks.dropLast() { free(block) }
        _ = wi_malloc_trim()
        let trimmed = try residentMiB()
        free(blocks.last!)
        #expect(trimmed <= filled - 32, "resident \(filled) MiB filled, \(trimmed) MiB after the trim")
    }

    @Test func withoutAKeyItRefusesToStartUnlessUnsignedIsSaid() async throws {
        for (arguments, message) in [(["serve"], "--unsigned"), (["serve", "--key", "00"], "--salt"),
                                     (["serve", "--key", "zz", "--salt", "00", "--port", "0"], "hex"),
                                     (["serve", "--unsigned", "--bind", "not-an-address"], "not an IP address")] {
            let outcome = try await ChildProcess.run(arguments)
            let text = outcome.errorText
            #expect(outcome.status != 0 && text.contains(message), "\(arguments): \(text)")
        }
    }
}
