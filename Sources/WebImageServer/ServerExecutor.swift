import Dispatch

/// Where the server's request tasks run: a concurrent dispatch queue of its own (an overcommitting
/// one: it gets a thread even when every core is busy), preferred by each request's task and the
/// non-isolated work it awaits. So `/health`, `/metrics` and 429s are answered, and images keep being
/// served, while the process's cooperative pool is saturated by other work of the embedding app;
/// `maxInFlight` bounds how many requests process images at once.
final class ServerExecutor: TaskExecutor {
    private let queue = DispatchQueue(label: "webimage.server.requests", attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
