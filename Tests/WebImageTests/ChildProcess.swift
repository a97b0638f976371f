import Foundation
import Testing

/// A child process run to its end without blocking a thread of the cooperative pool.
///
/// `waitUntilExit()` and `readDataToEndOfFile()` on a pipe block the calling thread for as long as
/// the child runs. On two cores the pool has two threads, so two tests doing that at once stalled
/// every other test for tens of seconds, long enough for their default time-outs to fire. Here the
/// child writes its standard output and error to files, and the caller waits suspended for the
/// termination handler, which Foundation calls on a thread of its own.
struct ChildProcess {
    /// How the child ended and what it printed.
    struct Outcome {
        let status: Int32
        let reason: Process.TerminationReason
        let output: Data
        let errors: Data

        var outputText: String { String(decoding: output, as: UTF8.self) }
        var errorText: String { String(decoding: errors, as: UTF8.self) }
        var outputLines: [String] { outputText.split(separator: "\n").map(String.init) }
        var exitedCleanly: Bool { reason == .exit && status == 0 }
    }

    let process = SpawnedProcess()
    private let folder = TemporaryDirectory("ChildProcess")
    var outputFile: URL { folder.url.appendingPathComponent("stdout") }
    var errorFile: URL { folder.url.appendingPathComponent("stderr") }

    /// The `webimage` executable built next to the test bundle.
    static let tool = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("webimage")

    init(_ arguments: [String], executable: URL = Self.tool, in directory: URL? = nil) {
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = directory
    }

    /// Runs `executable` (the `webimage` tool by default) with `arguments` (in `directory`, if given) to its end.
    static func run(_ arguments: [String], executable: URL = Self.tool, in directory: URL? = nil) async throws -> Outcome {
        let child = ChildProcess(arguments, executable: executable, in: directory)
        try await child.start()
        return await child.waitForExit()
    }

    /// Starts the child with its output going to ``outputFile`` and ``errorFile``.
    func start() async throws {
        try FileManager.default.createDirectory(at: folder.url, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: outputFile.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        let output = try FileHandle(forWritingTo: outputFile)
        let errors = try FileHandle(forWritingTo: errorFile)
        defer {
            try? output.close()
            try? errors.close()
        }
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    /// What the child has printed to standard output so far.
    func outputSoFar() -> String {
        String(decoding: FileManager.default.contents(atPath: outputFile.path) ?? Data(), as: UTF8.self)
    }

    /// For a `webimage serve` child: waits (polling its output, up to `busyMachineBound`) until it has
    /// printed its sample line, then returns the base URL of its `listening on` line and all it printed.
    func servedBase() async throws -> (base: String, printed: String) {
        var printed = ""
        let deadline = ContinuousClock.now + busyMachineBound
        while !printed.contains("sample:"), process.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            printed = outputSoFar()
        }
        let line = try #require(printed.split(separator: "\n").first { $0.hasPrefix("listening on ") }, "printed: \(printed)")
        return (String(line.dropFirst("listening on ".count)), printed)
    }

    /// Waits, suspended, until the child has exited; returns its outcome and removes its files.
    func waitForExit() async -> Outcome {
        let exited = AsyncStream<Void> { continuation in
            process.terminationHandler = { _ in continuation.finish() }
            if !process.isRunning { continuation.finish() }   // it may have exited before the handler was set
        }
        for await _ in exited {}
        defer { folder.remove() }
        return Outcome(status: process.terminationStatus, reason: process.terminationReason,
                       output: FileManager.default.contents(atPath: outputFile.path) ?? Data(),
                       errors: FileManager.default.contents(atPath: errorFile.path) ?? Data())
    }
}
