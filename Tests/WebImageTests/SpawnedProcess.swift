import Foundation
import Glibc
import Synchronization

/// A child process started with `posix_spawn`, with the part of Foundation's `Process` API the tests
/// use. Why not `Process`: on Linux its `run()` lists `/proc/self/fd` to find the descriptors to
/// close in the child, copying each `dirent` whole (280 bytes) although the last entry read may end
/// sooner, so it reads up to about 250 bytes past `opendir`'s buffer (AddressSanitizer:
/// heap-buffer-overflow in `findMaximumOpenFromProcSelfFD`, `Process.run()`). When that buffer ends
/// a thread arena's heap, the read meets an unmapped page: a full test run crashed in memmove
/// (`dmesg`: a cooperative-pool thread, a read at a page boundary), once in about fifteen runs.
///
/// The child gets `standardInput`, `standardOutput` and `standardError` (a `FileHandle`, a `Pipe`,
/// or `FileHandle.nullDevice`; unset: `/dev/null`), no other descriptor of the test process
/// (`posix_spawn_file_actions_addclosefrom_np`), `environment` (default: the test process's) and
/// `currentDirectoryURL`, with no signal blocked. A thread of its own waits for it (`waitpid`), then ``terminationHandler``
/// runs there.
final class SpawnedProcess: @unchecked Sendable {
    // @unchecked Sendable: the configuration properties (executable, arguments, environment,
    // directory, streams) are written by the owning test before `run()` and read only inside
    // `run()`, on that test's task; the waiting thread `run()` starts touches only `state` (pid,
    // status, handler) under its Mutex and the `exited` semaphore, which is itself thread-safe.
    // The other threads reading the process (`isRunning`, `processIdentifier`, `terminate()`) go
    // through `state` too.
    var executableURL: URL?
    var arguments: [String] = []
    var environment: [String: String]?
    var currentDirectoryURL: URL?
    var standardInput: Any?
    var standardOutput: Any?
    var standardError: Any?
    /// Called on the waiting thread once the child has been reaped (set it before or after `run()`).
    var terminationHandler: (@Sendable (SpawnedProcess) -> Void)? {
        get { state.withLock { $0.handler } }
        set { state.withLock { $0.handler = newValue } }
    }

    private struct State {
        var pid: pid_t = 0
        var running = false
        var status: Int32 = 0
        var reason: Process.TerminationReason = .exit
        var handler: (@Sendable (SpawnedProcess) -> Void)?
    }
    private let state = Mutex(State())
    private let exited = DispatchSemaphore(value: 0)

    /// The child's process ID (0 before `run()`).
    var processIdentifier: Int32 { state.withLock { $0.pid } }
    /// Whether it was started and has not been reaped yet.
    var isRunning: Bool { state.withLock { $0.running } }
    /// Its exit status, or the signal that ended it (see ``terminationReason``).
    var terminationStatus: Int32 { state.withLock { $0.status } }
    /// `.exit` or `.uncaughtSignal`.
    var terminationReason: Process.TerminationReason { state.withLock { $0.reason } }

    struct SpawnError: Error, CustomStringConvertible {
        let description: String
    }

    /// Starts the child. Throws ``SpawnError`` when it cannot be started.
    func run() throws {
        guard let executableURL else { throw SpawnError(description: "no executable") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (target, stream) in [(Int32(0), standardInput), (1, standardOutput), (2, standardError)] {
            if let fd = Self.descriptor(of: stream, reading: target == 0) {
                posix_spawn_file_actions_adddup2(&actions, fd, target)
            } else {
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            }
        }
        if let directory = currentDirectoryURL {
            guard let chdir = Self.addChdir else { throw SpawnError(description: "posix_spawn_file_actions_addchdir_np is missing") }
            guard chdir(&actions, directory.path) == 0 else { throw SpawnError(description: "addchdir \(directory.path)") }
        }
        if let closeFrom = Self.addCloseFrom { _ = closeFrom(&actions, 3) }
        let argv = [executableURL.path] + arguments
        let env = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        // The child starts with no signal blocked and every signal at its default action, as from a
        // shell (the starting thread may be a libdispatch worker, which blocks most signals).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let status = Self.withCStrings(argv) { argvPointer in
            Self.withCStrings(env) { envPointer in
                posix_spawn(&pid, executableURL.path, &actions, &attributes, argvPointer, envPointer)
            }
        }
        guard status == 0 else { throw SpawnError(description: "posix_spawn \(executableURL.path): \(String(cString: strerror(status)))") }
        let child = pid
        state.withLock {
            $0.pid = child
            $0.running = true
        }
        Thread { [self] in
            var raw: Int32 = 0
            while waitpid(child, &raw, 0) == -1 && errno == EINTR {}
            // WIFEXITED / WEXITSTATUS / WTERMSIG, written out (the macros are not imported).
            let signal = raw & 0x7f
            let handler = state.withLock { state in
                state.running = false
                if signal == 0 {
                    state.reason = .exit
                    state.status = (raw >> 8) & 0xff
                } else {
                    state.reason = .uncaughtSignal
                    state.status = signal
                }
                return state.handler
            }
            handler?(self)
            exited.signal()
        }.start()
    }

    /// Sends SIGTERM.
    func terminate() {
        let pid = processIdentifier
        if pid > 0 && isRunning { kill(pid, SIGTERM) }
    }

    /// Blocks the calling thread until the child has been reaped.
    func waitUntilExit() {
        exited.wait()
        exited.signal()   // later waiters return at once
    }

    private static func descriptor(of stream: Any?, reading: Bool) -> Int32? {
        switch stream {
        case let pipe as Pipe: return reading ? pipe.fileHandleForReading.fileDescriptor : pipe.fileHandleForWriting.fileDescriptor
        case let handle as FileHandle: return handle === FileHandle.nullDevice ? nil : handle.fileDescriptor
        default: return nil
        }
    }

    private static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
        let copies = strings.map { strdup($0) } + [nil]
        defer { copies.forEach { free($0) } }
        return copies.withUnsafeBufferPointer { body($0.baseAddress!) }
    }

    // glibc 2.34 and 2.29 have these, but Swift's Glibc module does not import them.
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
    private static let addCloseFrom: AddCloseFrom? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
        .map { unsafeBitCast($0, to: AddCloseFrom.self) }
    private static let addChdir: AddChdir? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addchdir_np")
        .map { unsafeBitCast($0, to: AddChdir.self) }
}
