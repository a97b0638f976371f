import Foundation
import Synchronization

/// An origin on 127.0.0.1 that answers each path with bytes written as given, on kept-alive
/// connections: for answers no well-behaved server sends (more bytes than the answer declares, an
/// answer nobody asked for, a body on a `204`). Each connection reads one request head at a time
/// and writes its path's script; a path without one gets a 404.
final class ScriptedOrigin: Sendable {
    /// What one path answers.
    struct Script: Sendable {
        /// Written at once.
        var answer: Data
        /// Written on the same connection once `lateDelay` has passed (an unsolicited answer).
        var late: Data?
        var lateDelay: Duration = .milliseconds(50)
    }

    let port: Int
    private let listener: Int32
    private let scripts = Mutex<[String: Script]>([:])
    private let counters = Mutex<(requests: [String: Int], lateWritten: Int, connections: Int)>(([:], 0, 0))

    init() throws {
        let (listener, port) = try listenOnLoopback(backlog: 16)
        self.listener = listener
        self.port = port
        Thread { [self] in
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                counters.withLock { $0.connections += 1 }
                Thread { [self] in serve(client) }.start()
            }
        }.start()
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    func route(_ path: String, _ script: Script) {
        scripts.withLock { $0[path] = script }
    }

    /// The requests `path` got.
    func requestCount(for path: String) -> Int { counters.withLock { $0.requests[path] ?? 0 } }
    /// The late answers written so far.
    var lateWrittenCount: Int { counters.withLock { $0.lateWritten } }
    /// The connections accepted so far.
    var connectionCount: Int { counters.withLock { $0.connections } }

    /// An answer with `body` and the given status and extra fields; `Content-Length` is the body's
    /// unless `declaredLength` says otherwise.
    static func answer(status: String = "200 OK", body: Data, declaredLength: Int? = nil, fields: [String] = ["Content-Type: image/png"]) -> Data {
        var head = "HTTP/1.1 \(status)\r\n"
        for field in fields { head += field + "\r\n" }
        head += "Content-Length: \(declaredLength ?? body.count)\r\n\r\n"
        return Data(head.utf8) + body
    }

    private func serve(_ client: Int32) {
        defer { close(client) }
        var buffer = Data()
        var chunk = [UInt8](repeating: 0, count: 8192)
        while true {
            while buffer.range(of: Data("\r\n\r\n".utf8)) == nil {
                let count = recv(client, &chunk, chunk.count, 0)
                guard count > 0 else { return }
                buffer.append(contentsOf: chunk[0..<count])
            }
            let end = buffer.range(of: Data("\r\n\r\n".utf8))!
            let head = String(decoding: buffer[..<end.lowerBound], as: UTF8.self)
            buffer = Data(buffer[end.upperBound...])
            let path = head.split(separator: " ").dropFirst().first.map(String.init) ?? "/"
            counters.withLock { $0.requests[path, default: 0] += 1 }
            let script = scripts.withLock { $0[path] } ?? Script(answer: Self.answer(status: "404 Not Found", body: Data("none".utf8)))
            guard write(script.answer, to: client) else { return }
            if let late = script.late {
                Thread.sleep(forTimeInterval: Double(script.lateDelay.components.seconds) + Double(script.lateDelay.components.attoseconds) / 1e18)
                guard write(late, to: client) else { return }
                counters.withLock { $0.lateWritten += 1 }
            }
        }
    }

    private func write(_ data: Data, to client: Int32) -> Bool {
        data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let sent = send(client, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                guard sent > 0 else { return false }
                offset += sent
            }
            return true
        }
    }
}

/// A TCP socket listening on 127.0.0.1 at a free port: the socket and its port (for the scripted
/// servers of the tests, which write their answers byte for byte).
func listenOnLoopback(backlog: Int32) throws -> (socket: Int32, port: Int) {
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
            bind(listener, socketAddress, length) == 0 && listen(listener, backlog) == 0 && getsockname(listener, socketAddress, &length) == 0
        }
    }
    guard bound else {
        let code = errno
        close(listener)
        throw TestHTTPServerError(call: "bind", code: code)
    }
    return (listener, Int(UInt16(bigEndian: address.sin_port)))
}
