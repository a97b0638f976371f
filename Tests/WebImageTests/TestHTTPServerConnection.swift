import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One accepted connection, served start to finish on its own blocking thread: read one request,
/// send the scripted reply, close. The caller unregisters and closes the descriptor afterwards.
struct TestHTTPServerConnection {
    let fd: Int32
    let core: TestHTTPServerCore

    /// Largest request head accepted.
    private static let maxHeadBytes = 1 << 20
    /// Safety net so a forgotten client cannot pin a thread forever (stop() wakes threads anyway).
    private static let socketTimeoutSeconds = 60

    func run() {
        configureSocket()
        var reader = SocketReader(fd: fd)
        let request: RecordedRequest
        switch readRequest(&reader) {
        case .closed:
            return
        case .malformed(let reason):
            _ = send(head: Self.head(status: 400, headers: [("Content-Type", "text/plain")], contentLength: reason.utf8.count))
            _ = sendAll(Array(reason.utf8))
            closeGracefully()
            return
        case .request(let parsed):
            request = parsed
        }
        let response = core.reply(to: request)
        switch write(response, for: request) {
        case .sent:
            closeGracefully()
        case .abandoned:
            core.recordAbandoned(request)
            closeGracefully()
        case .reset:
            // With a zero linger time, the close(2) our caller makes next sends a RST, not a FIN.
            var abort = linger(l_onoff: 1, l_linger: 0)
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort, socklen_t(MemoryLayout<linger>.size))
        }
    }

    private func configureSocket() {
        var yes: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
        var timeout = timeval(tv_sec: Self.socketTimeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    // MARK: Reading the request

    private enum ReadResult {
        case request(RecordedRequest)
        case malformed(String)
        case closed
    }

    private func readRequest(_ reader: inout SocketReader) -> ReadResult {
        // Request line (skipping stray empty lines before it, as RFC 9112 allows).
        var requestLine: String
        repeat {
            guard let line = reader.readLine(limit: Self.maxHeadBytes) else { return .closed }
            requestLine = line
        } while requestLine.isEmpty
        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1.") else { return .malformed("bad request line\n") }
        let method = String(parts[0])
        var target = String(parts[1])
        if let schemeEnd = target.range(of: "://") {  // absolute-form: keep path and query only
            let afterAuthority = target[schemeEnd.upperBound...].drop { $0 != "/" && $0 != "?" }
            target = afterAuthority.isEmpty ? "/" : String(afterAuthority)
        }

        var headers: [String: String] = [:]
        var headBytes = requestLine.utf8.count
        while true {
            guard let line = reader.readLine(limit: Self.maxHeadBytes) else { return .closed }
            if line.isEmpty { break }
            headBytes += line.utf8.count
            guard headBytes <= Self.maxHeadBytes else { return .malformed("request head too large\n") }
            guard let colon = line.firstIndex(of: ":") else { return .malformed("bad header line\n") }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = headers[name].map { "\($0), \(value)" } ?? value
        }

        let chunked = headers["transfer-encoding"]?.lowercased().contains("chunked") ?? false
        let length: Int?
        if chunked {
            length = nil
        } else if let value = headers["content-length"] {
            guard let n = Int(value), n >= 0 else { return .malformed("bad Content-Length\n") }
            length = n
        } else {
            length = 0
        }
        if headers["expect"]?.lowercased() == "100-continue", chunked || (length ?? 0) > 0 {
            // Without this, curl waits a second before sending the body.
            guard sendAll(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) else { return .closed }
        }

        var body: [UInt8] = []
        if let length {
            guard let bytes = reader.read(count: length) else { return .closed }
            body = bytes
        } else {
            while true {
                guard let sizeLine = reader.readLine(limit: 1 << 16) else { return .closed }
                let hex = sizeLine.prefix { $0 != ";" }.trimmingCharacters(in: .whitespaces)
                guard let size = Int(hex, radix: 16), size >= 0 else { return .malformed("bad chunk size\n") }
                if size == 0 {
                    // Trailers, up to the empty line.
                    while true {
                        guard let trailer = reader.readLine(limit: 1 << 16) else { return .closed }
                        if trailer.isEmpty { break }
                    }
                    break
                }
                guard let chunk = reader.read(count: size) else { return .closed }
                body += chunk
                guard reader.readLine(limit: 2) == "" else { return .malformed("bad chunk end\n") }
            }
        }
        return .request(RecordedRequest(method: method, path: target, headers: headers, body: Data(body)))
    }

    // MARK: Writing the reply

    private enum WriteOutcome {
        /// All of the reply went out (a scripted `closeAfterBodyBytes` that is reached counts as sent).
        case sent
        /// The client went away (or the server stopped) before all of it was sent.
        case abandoned
        /// The script asks for the connection to be reset now.
        case reset
    }

    /// Sends `response` (or misbehaves as it scripts), counting the bytes sent for `request`.
    private func write(_ response: TestResponse, for request: RecordedRequest) -> WriteOutcome {
        if response.delayBeforeHeaders > .zero {
            guard waitWatchingPeer(response.delayBeforeHeaders) else { return .abandoned }
        }
        switch response.misbehavior {
        case .endlessHeaderLines(let interval):
            return sendHeaderLinesForever(response, interval: interval, for: request)
        case .unterminatedHeaders:
            guard sendAll(Self.statusAndHeaders(status: response.status, headers: response.headers), for: request) else { return .abandoned }
            return stallUntilThePeerLeaves()
        case .endlessChunkedBody(let chunkSize, let interval):
            return sendChunksForever(response, chunkSize: chunkSize, interval: interval, for: request)
        case .resetAfterBodyBytes, .stallAfterBodyBytes, nil:
            break
        }
        let bodyless = (100..<200).contains(response.status) || response.status == 204 || response.status == 304
        let contentLength: Int?
        switch response.contentLength {
        case .automatic: contentLength = bodyless || response.header("Content-Length") != nil ? nil : response.body.count
        case .exactly(let n): contentLength = n
        case .omitted: contentLength = nil
        }
        let head = Self.head(status: response.status, headers: response.headers, contentLength: contentLength)
        guard sendAll(head, for: request) else { return .abandoned }

        var body = request.method == "HEAD" ? [] : [UInt8](response.body)
        var resets = false
        var stalls = false
        if case .resetAfterBodyBytes(let limit) = response.misbehavior {
            if limit < body.count { body.removeSubrange(max(0, limit)...) }
            resets = true
        }
        if case .stallAfterBodyBytes(let limit) = response.misbehavior {
            if limit < body.count { body.removeSubrange(max(0, limit)...) }
            stalls = true
        }
        if let limit = response.closeAfterBodyBytes, limit < body.count {
            body.removeSubrange(max(0, limit)...)
        }
        let size = max(1, response.drip?.chunkSize ?? body.count)
        var offset = 0
        while offset < body.count {
            if let drip = response.drip, drip.interval > .zero {
                guard waitWatchingPeer(drip.interval) else { return .abandoned }
            }
            let end = min(offset + size, body.count)
            guard sendAll(Array(body[offset..<end]), for: request) else { return .abandoned }
            offset = end
        }
        if stalls { return stallUntilThePeerLeaves() }
        guard resets else { return .sent }
        return waitWatchingPeer(.milliseconds(20)) ? .reset : .abandoned
    }

    /// The status line and `headers` as sent, without the blank line that would end the head.
    private static func statusAndHeaders(status: Int, headers: [(String, String)]) -> [UInt8] {
        var text = "HTTP/1.1 \(status) \(reasonPhrase(status))\r\n"
        for (name, value) in headers {
            text += "\(name): \(value)\r\n"
        }
        return Array(text.utf8)
    }

    private func sendHeaderLinesForever(_ response: TestResponse, interval: Duration, for request: RecordedRequest) -> WriteOutcome {
        guard sendAll(Self.statusAndHeaders(status: response.status, headers: response.headers), for: request) else { return .abandoned }
        var number = 0
        while true {
            if interval > .zero {
                guard waitWatchingPeer(interval) else { return .abandoned }
            } else if peerHasLeft() {
                return .abandoned
            }
            number += 1
            guard sendAll(Array("X-Filler-\(number): \(String(repeating: "h", count: 40))\r\n".utf8), for: request) else { return .abandoned }
        }
    }

    private func sendChunksForever(_ response: TestResponse, chunkSize: Int, interval: Duration, for request: RecordedRequest) -> WriteOutcome {
        let head = Self.head(status: response.status, headers: response.headers + [("Transfer-Encoding", "chunked")], contentLength: nil)
        guard sendAll(head, for: request) else { return .abandoned }
        func chunk(_ payload: [UInt8]) -> [UInt8] {
            Array(String(payload.count, radix: 16).utf8) + [13, 10] + payload + [13, 10]
        }
        if !response.body.isEmpty {
            guard sendAll(chunk([UInt8](response.body)), for: request) else { return .abandoned }
        }
        let filler = chunk((0..<max(1, chunkSize)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        while true {
            if interval > .zero {
                guard waitWatchingPeer(interval) else { return .abandoned }
            } else if peerHasLeft() {
                return .abandoned
            }
            guard sendAll(filler, for: request) else { return .abandoned }
        }
    }

    /// Waits, watching the socket, until the client closes it (or `stop()` shuts it down).
    private func stallUntilThePeerLeaves() -> WriteOutcome {
        while waitWatchingPeer(.seconds(1)) {}
        return .abandoned
    }

    /// Whether the peer has closed or reset the connection (or `stop()` shut it down); never waits.
    private func peerHasLeft() -> Bool {
        !waitWatchingPeer(.zero, pollOnce: true)
    }

    static func head(status: Int, headers: [(String, String)], contentLength: Int?) -> [UInt8] {
        var text = "HTTP/1.1 \(status) \(reasonPhrase(status))\r\n"
        for (name, value) in headers {
            text += "\(name): \(value)\r\n"
        }
        if let contentLength {
            text += "Content-Length: \(contentLength)\r\n"
        }
        if !headers.contains(where: { $0.0.caseInsensitiveCompare("Connection") == .orderedSame }) {
            text += "Connection: close\r\n"
        }
        text += "\r\n"
        return Array(text.utf8)
    }

    private func send(head: [UInt8]) -> Bool { sendAll(head) }

    /// Writes all of `bytes` (MSG_NOSIGNAL: a closed peer is EPIPE, never SIGPIPE), adding what the
    /// kernel accepts to the byte count of `request`'s path, if given.
    private func sendAll(_ bytes: [UInt8], for request: RecordedRequest? = nil) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { buffer in
                Glibc.send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += sent
            if let request { core.recordSent(sent, for: request) }
        }
        return true
    }

    /// Sleeps for `duration` while watching the socket: returns false at once if the peer closes (or
    /// resets) the connection, or `stop()` shuts it down; true once the time has passed. Bytes the
    /// client sends meanwhile are discarded. With `pollOnce`, it looks at least once even when
    /// `duration` is zero.
    private func waitWatchingPeer(_ duration: Duration, pollOnce: Bool = false) -> Bool {
        let deadline = ContinuousClock.now + duration
        var scratch = [UInt8](repeating: 0, count: 4096)
        var polled = false
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            if remaining <= .zero && (!pollOnce || polled) { return true }
            polled = true
            let (seconds, attoseconds) = remaining.components
            let milliseconds = max(0, seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(clamping: milliseconds))
            if ready < 0 {
                if errno == EINTR { continue }
                return false
            }
            if ready == 0 { continue }  // loop re-checks the clock (poll rounds to milliseconds)
            let received = recv(fd, &scratch, scratch.count, Int32(MSG_DONTWAIT))
            if received == 0 { return false }
            if received < 0, errno != EAGAIN, errno != EWOULDBLOCK, errno != EINTR { return false }
        }
    }

    /// Sends FIN, then waits briefly for the client's FIN so that closing with unread bytes never turns
    /// into a RST that could destroy the tail of the response on the client side.
    private func closeGracefully() {
        shutdown(fd, Int32(SHUT_WR))
        _ = waitWatchingPeer(.seconds(1))
    }

    private static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 408: "Request Timeout"
        case 416: "Range Not Satisfiable"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        default: "Status \(status)"
        }
    }
}

/// Buffered blocking reads from a socket.
private struct SocketReader {
    let fd: Int32
    private var buffer: [UInt8] = []
    private var position = 0

    init(fd: Int32) { self.fd = fd }

    /// The next line without its CRLF (a bare LF is accepted too); nil on EOF, error or overlong line.
    mutating func readLine(limit: Int) -> String? {
        var scanned = 0  // bytes after `position` already searched
        while true {
            if let newline = buffer[(position + scanned)...].firstIndex(of: UInt8(ascii: "\n")) {
                var end = newline
                if end > position, buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                let line = String(decoding: buffer[position..<end], as: UTF8.self)
                position = newline + 1
                return line
            }
            scanned = buffer.count - position
            guard buffer.count - position <= limit, fill() else { return nil }
        }
    }

    /// Exactly `count` bytes; nil on EOF or error first.
    mutating func read(count: Int) -> [UInt8]? {
        while buffer.count - position < count {
            guard fill() else { return nil }
        }
        let bytes = Array(buffer[position..<position + count])
        position += count
        return bytes
    }

    /// Reads more from the socket; false on EOF or error.
    private mutating func fill() -> Bool {
        if position > 0, position == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            position = 0
        }
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            let received = recv(fd, &chunk, chunk.count, 0)
            if received > 0 {
                buffer += chunk[..<received]
                return true
            }
            if received < 0, errno == EINTR { continue }
            return false
        }
    }
}
