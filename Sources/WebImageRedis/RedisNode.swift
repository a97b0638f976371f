import Foundation
import WebImage
import Synchronization

/// One Redis server, reached through a small pool of blocking hiredis connections, each on a
/// thread of its own: Swift's cooperative pool never blocks on Redis. A caller's command waits
/// (suspended, not blocking) for a free connection in a bounded queue, then is sent on it.
///
/// Why threads and the blocking API, not hiredis's async API on an event loop of ours: a connection
/// per thread keeps the pool small (``RedisTierConfig/connectionsPerNode``) and every failure local
/// to one connection, and each read and write is bounded by the kernel's socket timeouts. Either
/// way a command crosses from a task to another thread and back (the cooperative pool must not
/// wait on a socket); `bench redis` measures that hand-off at about a third of a loopback hit.
///
/// Every call ends within ``callLimit`` (``RedisTierConfig/connectTimeout`` + 2 ×
/// ``RedisTierConfig/commandTimeout``): a command that waited longer than the command timeout for a
/// connection fails without being sent, a watchdog answers callers whose worker is stuck, and the
/// node's ``CircuitBreaker`` fails calls at once while it is open.
final class RedisNode: Sendable {
    let endpoint: RedisEndpoint
    let breaker: CircuitBreaker
    private let queue: JobQueue
    private let commandTimeout: Duration
    /// Counts lost and refused connections: when one connection of the node breaks or cannot be
    /// made (the server died or restarted), the others are stale too, and each reconnects before its
    /// next command instead of failing once more (a restarted server is then used again by the
    /// first probe).
    private let generation = Generation()
    /// Callers still waiting, answered `timedOut` at ``callLimit`` by a watchdog thread.
    private let pending = PendingCommands()
    /// The longest a caller waits: a free connection (the command timeout), connecting, and the command.
    let callLimit: Duration

    init(endpoint: RedisEndpoint, config: RedisTierConfig) {
        self.endpoint = endpoint
        breaker = CircuitBreaker(threshold: config.failureThreshold, cooldown: config.breakerCooldown)
        queue = JobQueue(limit: config.maxQueuedCommands)
        commandTimeout = config.commandTimeout
        callLimit = config.connectTimeout + config.commandTimeout * 2
        let watchedBreaker = breaker
        pending.startWatchdog(interval: min(max(config.commandTimeout / 5, .milliseconds(5)), .milliseconds(50)), name: "\(endpoint)") {
            watchedBreaker.recordFailure()
        }
        for index in 0..<max(1, config.connectionsPerNode) {
            let queue = self.queue, breaker = self.breaker, generation = self.generation
            let (connectTimeout, commandTimeout) = (config.connectTimeout, config.commandTimeout)
            let thread = Thread {
                Self.blockSIGPIPE()
                let connection = RedisConnection(endpoint: endpoint, connectTimeout: connectTimeout, commandTimeout: commandTimeout)
                Self.work(queue: queue, connection: connection, breaker: breaker, generation: generation, name: "\(endpoint)")
            }
            thread.name = "webimage.redis.\(endpoint.host):\(endpoint.port).\(index)"
            thread.start()
        }
    }

    /// Sends `commands` as one pipeline on a free connection and returns their replies.
    /// - Throws: ``RedisError``: `unavailable` at once while the breaker is open, the queue is full
    ///   or the node is closed; `timedOut` when no reply came within ``callLimit`` (whatever the
    ///   worker is stuck on); `connectionFailed`, `connectionLost` from the connection.
    func run(_ commands: [[Data]]) async throws(RedisError) -> [RedisReply] {
        let name = "\(endpoint)"
        guard breaker.decide() == .allow else { throw .unavailable(endpoint: name) }
        let now = ContinuousClock.now
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<[RedisReply], RedisError>, Never>) in
            let caller = ResumeOnce(continuation)
            let id = pending.add(caller, limit: now + callLimit)
            let job = Job(commands: commands, deadline: now + commandTimeout) { [pending] result in
                pending.remove(id)
                caller.resume(returning: result)
            }
            if !queue.push(job) {
                pending.remove(id)
                breaker.endProbe()   // a probe that never ran proves nothing either way
                caller.resume(returning: .failure(.unavailable(endpoint: name)))
            }
        }
        return try result.get()
    }

    /// Stops the worker threads once the commands already queued have run, and the watchdog;
    /// later calls fail with `unavailable`.
    func close() {
        queue.close()
        pending.close()
    }

    deinit {
        close()
    }

    private static func work(queue: JobQueue, connection: RedisConnection, breaker: CircuitBreaker, generation: Generation, name: String) {
        var openedIn = -1
        while let job = queue.pop() {
            let current = generation.value.load(ordering: .relaxed)
            if connection.isOpen && openedIn != current { connection.close() }
            if !connection.isOpen { openedIn = current }
            guard ContinuousClock.now < job.deadline else {
                breaker.endProbe()   // waited too long for a connection: local congestion, not the node's failure
                job.complete(.failure(.timedOut(endpoint: name)))
                continue
            }
            do {
                let replies = try connection.run(job.commands)
                if replies.contains(where: Self.isNodeUnusable) { breaker.recordFailure() } else { breaker.recordSuccess() }
                job.complete(.success(replies))
            } catch {
                breaker.recordFailure()
                // A lost connection, or one that could not be made (refused: the server is down), means
                // the others' connections are stale too. Counting only lost ones left them open after a
                // refused connect, and the first probe once the server was back failed on one of them.
                switch error {
                case .connectionLost, .connectionFailed: generation.value.add(1, ordering: .relaxed)
                default: break
                }
                job.complete(.failure(error))
            }
        }
        connection.close()
    }

    /// Whether an error reply says the node cannot serve anything now (loading its data, a read-only
    /// replica, a lost login, a busy script, no primary), rather than that one command failed
    /// (`-OOM`, `-WRONGTYPE`): the former counts against the breaker.
    static func isNodeUnusable(_ reply: RedisReply) -> Bool {
        guard let text = reply.errorText else { return false }
        return ["LOADING", "READONLY", "NOAUTH", "WRONGPASS", "MASTERDOWN", "BUSY", "NOREPLICAS"].contains { text.hasPrefix($0) }
    }

    /// Blocks `SIGPIPE` in the calling (worker) thread: a write to a closed socket then fails with
    /// `EPIPE` instead of killing the process (see ``RedisConnection``).
    private static func blockSIGPIPE() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }
}

/// A node's count of lost connections (see ``RedisNode``).
final class Generation: Sendable {
    let value = Atomic<Int>(0)
}

/// A command pipeline waiting for a connection.
struct Job: Sendable {
    var commands: [[Data]]
    var deadline: ContinuousClock.Instant
    var complete: @Sendable (Result<[RedisReply], RedisError>) -> Void
}

/// The jobs of one node, handed to its worker threads: a bounded FIFO behind an `NSCondition`.
///
/// A worker that finds the queue empty first spins for ``spin`` (yielding its core each turn)
/// before it sleeps on the condition. A caller that gets its reply usually sends its next command
/// within tens of microseconds, and waking a sleeping thread costs a futex call and, on a virtual
/// machine, an inter-processor interrupt: `bench redis` measured a sequential hit through
/// `loadVariant` at 81 µs with the worker sleeping at once, 65–72 µs with the spin, against about
/// 55 µs for a bare hiredis loop (48–51 µs once the connection also spun for its reply,
/// ``RedisConnection``). A push seen by a spinning worker signals nobody: a sleeping worker woken
/// as well would only race it for the job.
///
/// `@unchecked Sendable`: `jobs` and `closed` are only read and written while `condition`
/// is locked, and `NSCondition` is itself safe to use from any thread; `queued` is atomic (a hint
/// for the spin, checked again under the lock); nothing else is mutable.
final class JobQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs = FIFOBuffer<Job>(compactionThreshold: 64)
    private var closed = false
    private let limit: Int
    /// Jobs pushed and not yet popped, readable without the lock.
    private let queued = Atomic<Int>(0)
    /// Workers spinning in ``pop()`` now (they see a pushed job without being signalled).
    private let spinning = Atomic<Int>(0)
    /// Set by ``close()``: a spinning worker stops spinning (``closed`` itself is read under the lock).
    private let closing = Atomic<Bool>(false)
    /// How many pushes signalled the condition (a diagnostic: pushes seen by a spinning worker do not).
    let signals = Atomic<Int>(0)
    /// Workers spinning now (a diagnostic: a test pushes once one spins).
    var spinningWorkers: Int { spinning.load(ordering: .acquiring) }
    /// How long an idle worker spins before it sleeps.
    let spin: Duration

    init(limit: Int, spin: Duration = .microseconds(50)) {
        self.limit = max(1, limit)
        self.spin = spin
    }

    /// Queues `job`; `false` when the queue is full or closed (the job was not taken).
    func push(_ job: Job) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !closed, jobs.count < limit else { return false }
        jobs.append(job)
        queued.add(1, ordering: .releasing)
        // A spinning worker takes it without a wake-up; waking a sleeper as well would cost a futex
        // call and an interrupt, and the two would race for the job. A worker stops counting itself
        // as spinning before it locks and looks at the queue, so a job is never left unseen.
        if spinning.load(ordering: .acquiring) == 0 {
            condition.signal()
            signals.add(1, ordering: .relaxed)
        }
        return true
    }

    /// The next job, waiting for one (spinning for ``spin`` first); `nil` once the queue is closed
    /// and empty. It blocks: only the node's worker threads call it, never a task.
    func pop() -> Job? {
        if queued.load(ordering: .acquiring) == 0 && spin > .zero {
            spinning.add(1, ordering: .releasing)
            let deadline = ContinuousClock.now + spin
            while queued.load(ordering: .acquiring) == 0 && !closing.load(ordering: .relaxed) && ContinuousClock.now < deadline {
                sched_yield()
            }
            spinning.subtract(1, ordering: .sequentiallyConsistent)
        }
        condition.lock()
        defer { condition.unlock() }
        while jobs.isEmpty && !closed { condition.wait() }
        guard let job = jobs.popFirst() else { return nil }
        queued.subtract(1, ordering: .relaxed)
        return job
    }

    func close() {
        closing.store(true, ordering: .relaxed)
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }
}
