import Foundation
import Testing
@testable import WebImageServer

/// Clients that misbehave, against a real server on 127.0.0.1 (bounded in time and count): each is
/// cut off or answered with an error, and the server goes on answering everyone else. The raw
/// sockets block, so their calls run on a thread of their own, never on Swift's cooperative pool
/// (whose two threads here also run the server's requests).
@Suite struct HostileClientTests {
    /// A raw TCP connection to the server.
    final class RawConnection: @unchecked Sendable {
        // @unchecked Sendable: `fd` is immutable; each test uses a connection from one call at a time.
        let fd: Int32

        init?(port: UInt16) {
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { return nil }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else {
                close(fd)
                return nil
            }
        }

        deinit { close(fd) }

        /// Sends what it can (the server may close first), on a thread of its own; returns the bytes sent.
        @discardableResult
        func send(_ text: String) async -> Int {
            await offPool { self.sendBlocking(text) }
        }

        /// What the server sends until it closes or 5 s pass, read on a thread of its own.
        func readAll() async -> (text: String, closed: Bool) {
            await offPool { self.readAllBlocking() }
        }

        /// ``readAll()``, and how long it took, timed on the reading thread (the calling task may
        /// resume late: another test of the parallel suite can hold the cooperative pool's threads).
        func readAllTimed() async -> (closed: Bool, took: Duration) {
            await offPool {
                let started = ContinuousClock.now
                let closed = self.readAllBlocking().closed
                return (closed, .now - started)
            }
        }

        /// Runs a blocking call on a thread of its own: `DispatchQueue.global()`'s threads are as many
        /// as the cores and shared by the whole parallel suite, so a call queued there could start
        /// seconds late (a first run after a build once measured a 1 s idle cut-off as over 4 s).
        private func offPool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
            await withCheckedContinuation { continuation in
                Thread { continuation.resume(returning: work()) }.start()
            }
        }

        func sendBlocking(_ text: String) -> Int {
            let bytes = Array(text.utf8)
            var sent = 0
            while sent < bytes.count {
                let count = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if count <= 0 { break }
                sent += count
            }
            return sent
        }

        func readAllBlocking() -> (text: String, closed: Bool) {
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = recv(fd, &buffer, buffer.count, 0)
                if count > 0 { received += buffer[..<count]; continue }
                return (String(decoding: received, as: UTF8.self), count == 0)
            }
        }
    }

    @Test func slowHeadersAreCutOffAndOthersAreServed() async throws {
        let fixture = try await ServerFixture { $0.idleTimeoutSeconds = 1 }
        let slow = try #require(RawConnection(port: fixture.port))
        await slow.send("GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ")   // and nothing more (slowloris)
        #expect(try await fixture.get("/health").status == 200, "served while the slow client waits")
        let (closed, took) = await slow.readAllTimed()
        #expect(closed && took < .seconds(4), "the idle connection is closed after about a second (took \(took))")
        await fixture.stop()
    }

    @Test func endlessHeadersAndAHugeURLAreRefused() async throws {
        let fixture = try await ServerFixture()
        let endless = try #require(RawConnection(port: fixture.port))
        await endless.send("GET /health HTTP/1.1\r\nHost: x\r\n" + String(repeating: "X-Filler: " + String(repeating: "a", count: 1000) + "\r\n", count: 200))
        let headers = await endless.readAll()
        #expect(headers.closed, "the connection ends")
        #expect(headers.text.isEmpty || headers.text.hasPrefix("HTTP/1.1 4"), "with a 4xx or nothing: \(headers.text.prefix(40))")
        let huge = try #require(RawConnection(port: fixture.port))
        await huge.send("GET /insecure/w:1/plain/http://h/" + String(repeating: "a", count: 1 << 20) + " HTTP/1.1\r\nHost: x\r\n\r\n")
        let url = await huge.readAll()
        #expect(url.closed && (url.text.isEmpty || url.text.hasPrefix("HTTP/1.1 4")), "\(url.text.prefix(40))")
        #expect(try await fixture.get("/health").status == 200)
        await fixture.stop()
    }

    @Test func pathTraversalGoesNowhere() async throws {
        let fixture = try await ServerFixture()
        for path in ["/samples/..%2f..%2fetc%2fpasswd", "/insecure/w:1/plain/file:%2F%2F%2Fetc%2Fpasswd",
                     "/insecure/w:1/plain/..%2F..%2Fetc%2Fpasswd", "/..%2f..%2fetc%2fpasswd"] {
            let connection = try #require(RawConnection(port: fixture.port))
            await connection.send("GET \(path) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            let reply = await connection.readAll().text
            #expect(reply.hasPrefix("HTTP/1.1 400") || reply.hasPrefix("HTTP/1.1 404"), "\(path): \(reply.prefix(30))")
            #expect(!reply.contains("root:"), "\(path) leaked a file")
        }
        await fixture.stop()
    }

    @Test func aThousandConnectionsAtOnce() async throws {
        let fixture = try await ServerFixture()
        let before = Self.residentMegabytes()
        var connections: [RawConnection] = []
        for index in 0..<1000 {
            guard let connection = RawConnection(port: fixture.port) else { break }
            await connection.send(index % 2 == 0 ? "GET /health HTTP/1.1\r\n" : "")   // half of them half a request
            connections.append(connection)
        }
        #expect(connections.count == 1000, "every connection was accepted")
        #expect(try await fixture.get("/health").status == 200, "still answering")
        #expect(try await fixture.get("/metrics").status == 200)
        #expect(Self.residentMegabytes() - before < 256, "1000 idle connections cost little memory")
        connections.removeAll()
        #expect(try await fixture.get("/health").status == 200)
        await fixture.stop()
    }

    static func residentMegabytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
              let pages = text.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE))) >> 20
    }
}
