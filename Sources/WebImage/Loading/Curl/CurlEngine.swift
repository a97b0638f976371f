import CCurl
import CSystemTuning
import Foundation
import Synchronization

/// A thread that drives libcurl transfers over one multi handle of its own (its pool of kept-alive
/// connections and HTTP/2 sessions). The process has one per CPU it may use, at most four
/// (``next()`` deals transfers out in turn): a single thread spent a whole core receiving and
/// copying two large http bodies while the other core idled (0.42-0.51x curl's throughput, which
/// writes to /dev/null and copies nothing).
///
/// libcurl's rules (see `CCurl.h`): the multi handle and its transfers are used on one thread only,
/// and every callback runs on that thread, inside `curl_multi_perform`. So callers never touch a
/// transfer: ``start(_:)`` and ``cancel(_:)`` queue a command under a lock and wake the thread
/// (`curl_multi_wakeup`, the one call allowed from elsewhere); the thread adds, removes and frees
/// handles, performs, and hands each finished transfer its result. It never waits for anything but
/// `curl_multi_poll` (sockets, libcurl's timers, a wake-up): name lookups run on libcurl's resolver
/// threads, and the delegates' callbacks must not block (they append bytes and resume
/// continuations). Nothing here runs on Swift's cooperative pool.
///
/// The threads are started on first use and live as long as the process (idle, each sleeps in
/// `curl_multi_poll` until woken).
final class CurlEngine: Sendable {
    /// The process's engines: one per CPU it may use (at most four), or as many as the environment
    /// variable `WEBIMAGE_CURL_THREADS` says (1 to 64; read once).
    private static let all: [CurlEngine] = (0..<count).map { CurlEngine(index: $0) }

    /// How many engines the process has (decided once, on first use).
    static let count: Int = {
        if let text = ProcessInfo.processInfo.environment["WEBIMAGE_CURL_THREADS"], let given = Int(text), (1...64).contains(given) {
            return given
        }
        return min(4, max(1, ProcessInfo.processInfo.activeProcessorCount))
    }()
    private static let turn = Atomic<Int>(0)

    /// The engine the next transfer goes to (in turn).
    static func next() -> CurlEngine {
        all[(turn.add(1, ordering: .relaxed).oldValue & Int.max) % all.count]
    }

    private enum Command {
        case start(CurlTransfer)
        case cancel(CurlTransfer)
    }

    /// The multi handle: a C pointer used on the engine's thread only, and by `curl_multi_wakeup`,
    /// which libcurl allows from any thread (libcurl-multi(3)).
    private struct Multi: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer
    }

    private let multi: Multi
    private let commands = Mutex<[Command]>([])

    private static let setUp: Void = {
        precondition(wi_curl_global_init() == 0, "libcurl could not be initialised")
        CurlTransfer.installCallbacks()
    }()

    private init(index: Int) {
        Self.setUp
        guard let pointer = wi_curl_multi_new() else { preconditionFailure("libcurl: no multi handle") }
        multi = Multi(pointer: pointer)
        let thread = Thread { [self] in
            _ = wi_thread_set_name("webimage.curl-\(index)")   // Foundation's Thread.name does not reach the kernel here
            run()
        }
        thread.start()
    }

    /// Starts `transfer` on the engine's thread (soon: this call only queues it and wakes the thread).
    func start(_ transfer: CurlTransfer) {
        post(.start(transfer))
    }

    /// Stops `transfer` if it is still running; its delegate hears nothing more. Any thread.
    func cancel(_ transfer: CurlTransfer) {
        post(.cancel(transfer))
    }

    private func post(_ command: Command) {
        commands.withLock { $0.append(command) }
        _ = wi_curl_multi_wakeup(multi.pointer)
    }

    /// The thread's loop: commands, then libcurl's work, then finished transfers, then wait.
    private func run() {
        var running = 0
        while true {
            for command in commands.withLock({ commands in defer { commands.removeAll() }; return commands }) {
                switch command {
                case .start(let transfer):
                    if transfer.attach(to: multi.pointer) { running += 1 }
                case .cancel(let transfer):
                    if transfer.cancel(in: multi.pointer) { running -= 1 }
                }
            }
            if running > 0 {
                _ = wi_curl_multi_perform(multi.pointer)
                var code: Int32 = 0
                while let context = wi_curl_multi_next_done(multi.pointer, &code) {
                    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
                    if transfer.detach(from: multi.pointer) { running -= 1 }
                    if transfer.complete(code: code), transfer.attach(to: multi.pointer) { running += 1 }
                }
            }
            // Idle, the thread sleeps until woken; with transfers, libcurl shortens the wait to its next timer.
            _ = wi_curl_multi_poll(multi.pointer, running > 0 ? 1000 : 60_000)
        }
    }
}
