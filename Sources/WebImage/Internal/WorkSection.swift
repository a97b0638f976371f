import CSystemTuning

/// A codec's work (a decode, a transform, an encode) as a work section: on a thread given a work
/// CPU (a server's cold threads: `wi_thread_set_work_cpu`, CSystemTuning) it runs pinned to that
/// CPU, and anywhere else exactly as it would. Two system calls a section on such a thread; one
/// thread-local load on any other.
enum WorkSection {
    /// Runs `body` as a work section; returns or throws what it does.
    static func run<Value, Failure: Error>(_ body: () throws(Failure) -> Value) throws(Failure) -> Value {
        let began = wi_work_section_begin()
        defer { wi_work_section_end(began) }
        return try body()
    }
}
