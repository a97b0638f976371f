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

    /// The median wall-clock milliseconds of a whole process, start to exit.
    static func process(_ executable: String, _ arguments: [String], iterations: Int) throws -> Double {
        try median(iterations: iterations) {
            let (status, output) = try run(executable, arguments)
            if status != 0 { throw BenchError("\(executable) failed (\(status)): \(output.prefix(300))") }
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
