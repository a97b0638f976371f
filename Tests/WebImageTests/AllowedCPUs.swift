import Foundation
import Testing

/// The CPUs a thread may run on, as the kernel reports them (`Cpus_allowed_list` in its status).
enum AllowedCPUs {
    /// Of thread `thread` (a kernel id of this process), or of the calling thread when nil.
    static func of(thread: Int32? = nil) throws -> Set<Int> {
        let path = thread.map { "/proc/self/task/\($0)/status" } ?? "/proc/thread-self/status"
        let status = try String(contentsOfFile: path, encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("Cpus_allowed_list:") })
        var cpus: Set<Int> = []
        for range in line.dropFirst("Cpus_allowed_list:".count).trimmingCharacters(in: .whitespaces).split(separator: ",") {
            let ends = range.split(separator: "-").compactMap { Int($0) }
            if let first = ends.first, let last = ends.last { cpus.formUnion(first...last) }
        }
        return cpus
    }
}
