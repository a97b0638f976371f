import Foundation

/// Puts a server process (redis-server) on a core of its own and this process, every thread of it,
/// on the others (`taskset`), as a Redis on its own host would be; then gives both every core back.
///
/// Why: on a two-core machine the scheduler sometimes runs a client and redis-server on one core,
/// where each hands the core to the other with no idle core to wake (a bare hiredis loop then takes
/// 17–25 µs a GET), and sometimes on two (about 54 µs: the woken side's core has halted and is woken
/// by an interrupt). Which one a run gets is luck, and it swings the reference threefold. Both sides
/// of a comparison run under the same placement.
struct CorePlacement {
    let server: Int32
    let cores: Int
    let taskset: String

    /// `nil` on a single core, or without `taskset` (util-linux).
    init?(server: Int32) {
        let cores = sysconf(Int32(_SC_NPROCESSORS_ONLN))
        guard cores >= 2, let taskset = Measure.which("taskset") else { return nil }
        self.server = server
        self.cores = cores
        self.taskset = taskset
    }

    /// What the rows measured under ``separate()`` say.
    var label: String { "redis-server on core \(cores - 1), the client on \(cores == 2 ? "core 0" : "cores 0-\(cores - 2)")" }

    /// The server on the last core; this process's threads on the others.
    func separate() throws {
        try set(server, "\(cores - 1)")
        try set(getpid(), cores == 2 ? "0" : "0-\(cores - 2)", allThreads: true)
    }

    /// Every core for both again.
    func restore() throws {
        try set(server, "0-\(cores - 1)")
        try set(getpid(), "0-\(cores - 1)", allThreads: true)
    }

    private func set(_ pid: Int32, _ list: String, allThreads: Bool = false) throws {
        let result = try Measure.run(taskset, (allThreads ? ["-a"] : []) + ["-pc", list, "\(pid)"])
        guard result.status == 0 else { throw BenchError("taskset \(list) \(pid): \(result.output)") }
    }
}
