import Dispatch

/// Where the server's request tasks run: a concurrent dispatch queue of its own (an overcommitting
/// one: it gets a thread even when every core is busy), preferred by each request's task and the
/// non-isolated work it awaits: parsing, signatures, the warm lookups (memory, and the disk cache's
/// actor, which runs on its caller's preferred executor), `/health`, `/metrics` and 429s. So those
/// are answered while the process's cooperative pool is saturated by other work of the embedding
/// app, and while cold work keeps ``ColdWorkExecutor``'s threads busy; a request that holds a
/// processing slot moves its cold work there (`maxInFlight` bounds how many at once).
final class ServerExecutor: TaskExecutor {
    private let queue = DispatchQueue(label: "webimage.server.requests", attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
