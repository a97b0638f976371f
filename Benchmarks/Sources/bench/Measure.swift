import Foundation

/// Timing helpers: every figure is the median of several runs after a warm-up.
enum Measure {
    /// Runs `body` `warmup` times untimed, then `iterations` times, and returns the median milliseconds.
    static func median(iterations: Int, warmup: Int = 1, _ body: () throws -> Void) rethrows -> Double {
        for _ in 0..<warmup { try body() }
        var samples: [Double] = []
        for _ in 0..<iterations {
            let start = ContinuousClock.now
            try body()
            samples.append(milliseconds(ContinuousClock.now - start))
        }
        return samples.sorted()[samples.count / 2]
    }

    /// Runs `ours` and `reference` alternately (once untimed each, then `iterations` times each) and
    /// returns both medians: drift in a busy machine then hits both figures alike.
    static func interleaved(iterations: Int, _ ours: () throws -> Void, reference: () throws -> Void) rethrows -> (ours: Double, reference: Double) {
        try ours()
        try reference()
        var oursTimes: [Double] = []
        var referenceTimes: [Double] = []
        for _ in 0..<iterations {
            var start = ContinuousClock.now
            try ours()
            oursTimes.append(milliseconds(ContinuousClock.now - start))
            start = .now
            try reference()
            referenceTimes.append(milliseconds(ContinuousClock.now - start))
        }
        return (oursTimes.sorted()[iterations / 2], referenceTimes.sorted()[iterations / 2])
    }

    static func milliseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }

    /// Runs a command to completion, discarding its output; returns its exit status.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    /// The median wall-clock milliseconds of a whole process, from `posix_spawn` to `waitpid`
    /// (Foundation's `Process` adds tens of milliseconds of its own), output discarded.
    static func process(_ executable: String, _ arguments: [String], iterations: Int) throws -> Double {
        try median(iterations: iterations) {
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
            let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
            defer { argv.forEach { free($0) } }
            var pid: pid_t = 0
            guard posix_spawn(&pid, executable, &actions, nil, argv, environ) == 0 else {
                throw BenchError("cannot start \(executable)")
            }
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            if status != 0 { throw BenchError("\(executable) \(arguments.joined(separator: " ")) failed with status \(status)") }
        }
    }

    /// The full path of a tool on PATH, or nil.
    static func which(_ tool: String) -> String? {
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return paths.map { "\($0)/\(tool)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
