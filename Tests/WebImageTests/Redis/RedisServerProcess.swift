import Foundation
import Glibc
import Synchronization
@testable import WebImageRedis

/// A real `redis-server` (Debian's `redis-server` package) on 127.0.0.1 at a free port, with its own
/// temporary folder, no persistence, started and stopped by the test. `kill()` stops it at once
/// (SIGKILL), `start()` brings it back on the same port.
final class RedisServerProcess: @unchecked Sendable {
    // @unchecked Sendable: `process` is only touched by the test that owns the fixture, one call at a time.
    private(set) var port: Int
    let password: String?
    let extraArguments: [String]
    let directory = TemporaryDirectory()
    private var process: SpawnedProcess?

    static let executable = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"].first { FileManager.default.isExecutableFile(atPath: $0) }

    init(password: String? = nil, arguments: [String] = []) async throws {
        port = try Self.freePortOutsideEphemeralRange()
        self.password = password
        extraArguments = arguments
        // The port was free when looked up, but another test's server may take it before
        // redis-server binds it (seen once in a full run): redis-server then exits, and it is
        // started again on another free port.
        for _ in 0..<4 {
            do {
                try await start()
                return
            } catch is ExitedEarly {
                port = try Self.freePortOutsideEphemeralRange()
            }
        }
        try await start()
    }

    /// redis-server ended before it answered: most likely its port was taken.
    private struct ExitedEarly: Error {}

    /// A free port on 127.0.0.1 below the kernel's ephemeral range (`ip_local_port_range`), where
    /// neither a `bind` to port 0 nor an outgoing connection's own port can land. A server that a
    /// test kills and starts again on the same port needs one: in the ephemeral range, while it is
    /// down, another test's listener or any client socket (the tier's own reconnects among them)
    /// can take the port, and the restarted server cannot bind it (a full run once had the
    /// restarted Redis refuse connections).
    static func freePortOutsideEphemeralRange() throws -> Int {
        let range = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))?
            .split(whereSeparator: \.isWhitespace).compactMap { Int($0) } ?? []
        let low = range.first ?? 32768
        guard low > 11_000 else { return try freeLoopbackPort() }   // no room below it: any free port
        for _ in 0..<200 {
            let port = Int.random(in: 10_000..<(low - 1))
            if isFreeLoopbackPort(port) { return port }
        }
        throw FixtureError("no free port below \(low)")
    }

    deinit {
        // SIGKILL: at once, whatever the server is doing (``SpawnedProcess`` starts it with no signal
        // blocked; Foundation's `Process`, used before, passed on a libdispatch worker's mask, which
        // blocks SIGTERM). Without persistence, nothing is lost.
        if let process { Glibc.kill(process.processIdentifier, SIGKILL) }
    }

    var endpoint: RedisEndpoint { RedisEndpoint(host: "127.0.0.1", port: port, password: password) }

    /// Starts the server and waits until it answers `PING` (``busyMachineBound`` at most).
    func start() async throws {
        guard let executable = Self.executable else { throw FixtureError("redis-server is not installed (apt-get install redis-server)") }
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--port", "\(port)", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", directory.url.path,
                             "--daemonize", "no", "--protected-mode", "no", "--loglevel", "warning"]
            + (password.map { ["--requirepass", $0] } ?? []) + extraArguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        let deadline = ContinuousClock.now + busyMachineBound
        while ContinuousClock.now < deadline {
            if (try? command(["PING"])) != nil { return }
            if !process.isRunning {
                self.process = nil
                throw ExitedEarly()
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw FixtureError("redis-server on port \(port) did not answer within \(busyMachineBound)")
    }

    /// SIGKILL: the server dies with its connections, as a crashed Redis does.
    func kill() async {
        guard let process else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        await waitForExit(process)
        self.process = nil
    }

    private func waitForExit(_ process: SpawnedProcess) async {
        while process.isRunning { try? await Task.sleep(for: .milliseconds(10)) }
    }

    /// Runs one command on a fresh connection of the tier's own client (hiredis) and returns the reply.
    func command(_ arguments: [String]) throws -> RedisReply {
        let connection = RedisConnection(endpoint: endpoint, connectTimeout: .seconds(2), commandTimeout: .seconds(5))
        return try connection.run([arguments.map { Data($0.utf8) }])[0]
    }

    /// Stores raw bytes under a Redis key (a corrupt or foreign value).
    func setRaw(_ key: String, _ value: Data) throws {
        let connection = RedisConnection(endpoint: endpoint, connectTimeout: .seconds(2), commandTimeout: .seconds(5))
        _ = try connection.run([[Data("SET".utf8), Data(key.utf8), value]])
    }

    /// The number of keys in database 0.
    func keyCount() throws -> Int {
        if case .integer(let count) = try command(["DBSIZE"]) { return count }
        return -1
    }
}

struct FixtureError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Whether `port` on 127.0.0.1 can be bound now (bound and closed again).
func isFreeLoopbackPort(_ port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    } == 0
}

/// A port on 127.0.0.1 nobody listens on now (bound, read, closed).
func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw FixtureError("socket failed") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    guard bound == 0 else { throw FixtureError("bind failed") }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// A TCP listener on 127.0.0.1 that completes handshakes (the kernel's backlog) and never reads or
/// answers: a Redis that hangs.
final class SilentListener: Sendable {
    let port: Int
    private let fd: Int32

    init() throws {
        (fd, port) = try Self.listeningSocket()
    }

    deinit {
        close(fd)
    }

    /// A socket listening on 127.0.0.1 at a free port.
    static func listeningSocket() throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw FixtureError("socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0, listen(fd, 128) == 0 else {
            close(fd)
            throw FixtureError("bind/listen failed")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }
}

/// A TCP server on 127.0.0.1 that answers every connection with bytes that are not RESP (an HTTP
/// error line) and closes it: a Redis port taken by something else.
final class GarbageServer: @unchecked Sendable {
    // @unchecked Sendable: `fd` is immutable after init; the accept thread only reads it.
    let port: Int
    private let fd: Int32

    init() throws {
        let listener = try SilentListener.listeningSocket()
        fd = listener.fd
        port = listener.port
        let fd = self.fd
        Thread {
            while true {
                let connection = accept(fd, nil, nil)
                guard connection >= 0 else { return }   // the listener was shut down
                let garbage = Array("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n".utf8)
                _ = send(connection, garbage, garbage.count, Int32(MSG_NOSIGNAL))
                close(connection)
            }
        }.start()
    }

    deinit {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }
}

/// A TCP server on 127.0.0.1 that answers every connection with one byte every 20 ms and never
/// finishes the reply: each `read` succeeds within any socket timeout, the command never ends.
final class TricklingServer: @unchecked Sendable {
    // @unchecked Sendable: `fd` and `stopped` are set in init and read by the threads; `stopped` is atomic.
    let port: Int
    private let fd: Int32
    private let stopped = StopFlag()

    init() throws {
        (fd, port) = try SilentListener.listeningSocket()
        let fd = self.fd, stopped = self.stopped
        Thread {
            while true {
                let connection = accept(fd, nil, nil)
                guard connection >= 0 else { return }
                Thread {
                    var byte: UInt8 = UInt8(ascii: "+")
                    while !stopped.value.load(ordering: .relaxed), send(connection, &byte, 1, Int32(MSG_NOSIGNAL)) == 1 {
                        byte = UInt8(ascii: "x")
                        usleep(20_000)
                    }
                    close(connection)
                }.start()
            }
        }.start()
    }

    deinit {
        stopped.value.store(true, ordering: .relaxed)
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }
}

final class StopFlag: Sendable {
    let value = Atomic<Bool>(false)
}
