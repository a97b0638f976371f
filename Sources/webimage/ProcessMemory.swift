import Foundation

/// What the tool reports of its own memory.
enum ProcessMemory {
    /// This process's peak resident memory so far (`VmHWM` in `/proc/self/status`), in MiB; `nil`
    /// where `/proc` has no such line.
    static func peakResidentMiB() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return nil }
        return kilobytes / 1024
    }
}
