import CCurl
import Foundation

/// One request on ``CurlEngine``: the libcurl handle, the head being read, and the delegate the
/// events go to.
///
/// `@unchecked Sendable`, and why that is sound: it is made on the caller's thread with every
/// stored property set, then handed to its engine (``start()``, through the engine's lock); from
/// then on its mutable state is read and written only on that engine's thread (``attach(to:)``,
/// ``detach(from:)``, ``complete(code:)`` and libcurl's callbacks, which run inside
/// `curl_multi_perform` there). Other threads only call ``cancel()``, which queues a command.
final class CurlTransfer: @unchecked Sendable {
    /// The most bytes of heads one transfer reads: the final head, the informational (1xx) answers
    /// and redirects before it, and trailers after the body. A flood past it ends the transfer
    /// (``CurlOutcome/headTooLarge``) while its memory stays at one line (libcurl bounds a line).
    /// Below libcurl's own bound on a response's heads (300 KB in Debian's patched 7.88), so the
    /// error is this one whatever libcurl's release.
    static let maxHeadBytes = 256 << 10

    let request: CurlRequest
    /// The engine thread that runs it, chosen when it is made (``start()`` and ``cancel()`` go there).
    let engine: CurlEngine
    private var delegate: (any CurlTransferDelegate)?
    private var handle: OpaquePointer?
    private var isCancelled = false
    /// Whether the transfer was made again on a fresh connection (a reused one had bytes waiting).
    private var isRetried = false
    /// Whether a final head went to the delegate (after which the transfer is never made again).
    private var deliveredHead = false
    /// The sockets libcurl opened for this transfer: new connections, which need no check.
    private var openedSockets: Set<Int32> = []
    /// The socket of the connection the request went out on.
    private var requestSocket: Int32?

    // The head being read.
    private var headBytes = 0
    private var status = 0
    private var version = ""
    private var fields: [(name: String, value: String)] = []
    /// Set once the final head is handed on: what follows is the body, then maybe trailers.
    private var deliversBody = false
    /// Who stopped the transfer before libcurl ended it.
    private enum Stop {
        /// A reused connection had bytes waiting before the request (``beforeRequest(on:)``).
        case staleConnection
        /// The delegate decided: it hears no completion.
        case byDelegate
        /// A limit of the transfer's own: the delegate hears this outcome.
        case byLimit(CurlOutcome)
    }

    private var stopped: Stop?

    init(_ request: CurlRequest, delegate: any CurlTransferDelegate) {
        self.request = request
        self.engine = CurlEngine.next()
        self.delegate = delegate
    }

    /// Starts the transfer on its engine's thread (soon: this only queues it and wakes the thread). Any thread.
    func start() {
        engine.start(self)
    }

    /// Stops the transfer if it still runs; its delegate hears nothing more. Any thread.
    func cancel() {
        engine.cancel(self)
    }

    /// Makes the handle and adds it to `multi`; on failure the delegate hears it at once.
    /// - Returns: whether the transfer is now running.
    func attach(to multi: UnsafeMutableRawPointer) -> Bool {
        guard !isCancelled, handle == nil else { return false }
        stopped = nil
        let context = Unmanaged.passRetained(self).toOpaque()
        var error = [CChar](repeating: 0, count: 256)
        let made: OpaquePointer? = withCRequest { cRequest in
            wi_curl_transfer_new(&cRequest, context, &error, error.count)
        }
        guard let made, wi_curl_multi_add(multi, made) == 0 else {
            if let made { wi_curl_transfer_free(made) }
            Unmanaged<CurlTransfer>.fromOpaque(context).release()
            isCancelled = true
            let message = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            finish(.failed(code: 2, message: message.isEmpty ? "libcurl refused the transfer" : message))
            return false
        }
        handle = made
        return true
    }

    /// Stops the transfer for good: its handle is removed and freed if it runs, and its delegate
    /// hears nothing more.
    /// - Returns: whether it was running.
    func cancel(in multi: UnsafeMutableRawPointer) -> Bool {
        isCancelled = true
        delegate = nil
        return detach(from: multi)
    }

    /// Removes and frees the handle if it is still in `multi` (the end, or a cancellation).
    /// - Returns: whether it was running.
    func detach(from multi: UnsafeMutableRawPointer) -> Bool {
        guard let handle else {
            delegate = nil
            return false
        }
        _ = wi_curl_multi_remove(multi, handle)
        wi_curl_transfer_free(handle)
        self.handle = nil
        Unmanaged.passUnretained(self).release()   // the reference `attach` gave libcurl
        return true
    }

    /// libcurl's verdict, once the handle is detached.
    /// - Returns: true when the transfer is to be made again, on a fresh connection (the reused one
    ///   it was given had bytes waiting, and nothing reached the delegate yet); the engine attaches it.
    func complete(code: Int32) -> Bool {
        if isCancelled { return false }
        switch stopped {
        case .staleConnection where !isRetried && !deliveredHead:
            isRetried = true
            return true
        case .staleConnection:
            finish(.failed(code: code, message: "the origin sent bytes nobody asked for on a kept-alive connection"))
        case .byDelegate: delegate = nil
        case .byLimit(let outcome): finish(outcome)
        case nil: finish(code == 0 ? .completed : .failed(code: code, message: CurlResultCode.message(for: code)))
        }
        return false
    }

    private func finish(_ outcome: CurlOutcome) {
        let delegate = self.delegate
        self.delegate = nil
        delegate?.transferCompleted(outcome)
    }

    /// Calls `body` with the C request, its strings alive for the call.
    private func withCRequest<T>(_ body: (inout wi_curl_request) -> T) -> T {
        let lines = request.headers.map { "\($0.name):" + ($0.value.isEmpty ? "" : " \($0.value)") }
        var pointers = lines.map { strdup($0) }
        defer { pointers.forEach { free($0) } }
        let strings = [request.url.absoluteString, request.method, request.certificateAuthorityFile,
                       request.certificateAuthorityDirectory, request.proxy].map { $0.map { strdup($0) } ?? nil }
        defer { strings.forEach { free($0) } }
        return pointers.withUnsafeMutableBufferPointer { lineBuffer in
            lineBuffer.withMemoryRebound(to: UnsafePointer<CChar>?.self) { constLines in
                request.body.withUnsafeBytesIfAny { bodyBytes in
                    var cRequest = wi_curl_request()
                    cRequest.url = UnsafePointer(strings[0])
                    cRequest.method = UnsafePointer(strings[1])
                    cRequest.headers = UnsafePointer(constLines.baseAddress)
                    cRequest.header_count = lines.count
                    cRequest.body = bodyBytes?.baseAddress
                    cRequest.body_length = bodyBytes?.count ?? 0
                    cRequest.follow_redirects = request.maxRedirects
                    cRequest.connect_timeout_ms = request.connectTimeout.map(Self.milliseconds) ?? 0
                    cRequest.total_timeout_ms = request.totalTimeout.map(Self.milliseconds) ?? 0
                    cRequest.low_speed_time_s = request.stallTimeout.map { max(1, (Self.milliseconds($0) + 999) / 1000) } ?? 0
                    cRequest.decode_content = request.decodesContent ? 1 : 0
                    cRequest.ca_file = UnsafePointer(strings[2])
                    cRequest.ca_path = UnsafePointer(strings[3])
                    cRequest.proxy = UnsafePointer(strings[4])
                    cRequest.verify_peer = 1
                    cRequest.buffer_size = request.bufferSize
                    cRequest.fresh_connection = isRetried ? 1 : 0
                    return body(&cRequest)
                }
            }
        }
    }

    private static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return max(1, Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000))
    }

    // MARK: libcurl's callbacks, on the engine's thread

    /// A line of a head: the status line starts a head, a blank line ends it.
    private func received(headerLine line: UnsafeRawBufferPointer) -> Bool {
        headBytes += line.count + 2
        guard headBytes <= Self.maxHeadBytes else {
            stopped = .byLimit(.headTooLarge)
            return false
        }
        if line.starts(with: "HTTP/".utf8) {
            let text = String(decoding: line, as: UTF8.self)
            let parts = text.split(separator: " ", maxSplits: 2)
            guard parts.count >= 2, let code = Int(parts[1]), (100...999).contains(code) else {
                stopped = .byLimit(.malformedHead(text))
                return false
            }
            status = code
            version = String(parts[0])
            fields.removeAll(keepingCapacity: true)
            deliversBody = false
            return true
        }
        if line.isEmpty { return endOfHead() }
        guard !deliversBody else { return true }   // a trailer: counted, not kept
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return true }   // libcurl passed it; ignore
        let name = String(decoding: UnsafeRawBufferPointer(rebasing: line[..<colon]), as: UTF8.self)
        let value = String(decoding: UnsafeRawBufferPointer(rebasing: line[(colon + 1)...]), as: UTF8.self)
            .trimmingCharacters(in: .whitespaces)
        fields.append((name, value))
        return true
    }

    private func endOfHead() -> Bool {
        guard status != 0, !deliversBody else { return true }   // the end of the trailers
        if (100..<200).contains(status) {
            status = 0
            return true
        }
        var head = CurlHead(status: status, version: version, fields: fields,
                            url: handle.flatMap { wi_curl_effective_url($0) }.flatMap { URL(string: String(cString: $0)) } ?? request.url)
        status = 0
        if let handle { head.redirectCount = wi_curl_redirect_count(handle) }
        let lengths = Set(head.fields.filter { $0.name.caseInsensitiveCompare("Content-Length") == .orderedSame }
            .flatMap { $0.value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } })
        guard lengths.count <= 1 else {
            stopped = .byLimit(.malformedHead("conflicting Content-Length values: \(lengths.sorted().joined(separator: ", "))"))
            return false
        }
        if request.maxRedirects > 0, [301, 302, 303, 307, 308].contains(head.status), head.value(of: "Location") != nil {
            return true   // libcurl follows it (or fails past the limit); its body is not handed on
        }
        deliversBody = true
        deliveredHead = true
        if head.version.hasPrefix("HTTP/2") || head.version.hasPrefix("HTTP/3"), let requestSocket {
            CurlSockets.markMultiplexed(requestSocket)
        }
        guard delegate?.transferReceivedHead(head) == true else {
            stopped = .byDelegate
            return false
        }
        return true
    }

    private func received(body bytes: UnsafeRawBufferPointer) -> Bool {
        guard deliversBody else { return true }   // a followed redirect's body
        guard delegate?.transferReceived(bytes) == true else {
            stopped = .byDelegate
            return false
        }
        return true
    }

    /// Before the request goes out on `socket`: a connection this transfer opened, or a multiplexed
    /// one, goes on; a reused HTTP/1 connection with anything waiting to be read (an answer nobody
    /// asked for, the rest of an answer longer than it declared, or the peer's close) is shut down
    /// (libcurl closes it) and the transfer made again on a fresh one.
    private func beforeRequest(on socket: Int32?) -> Bool {
        requestSocket = socket
        guard let socket, !openedSockets.contains(socket), !CurlSockets.isMultiplexed(socket), CurlSockets.hasInput(socket) else {
            return true
        }
        shutdown(socket, Int32(SHUT_RDWR))
        stopped = .staleConnection
        return false
    }

    private func opened(_ socket: Int32) {
        openedSockets.insert(socket)
        CurlSockets.opened(socket)
    }

    private func allows(_ address: UnsafePointer<sockaddr>) -> Bool {
        guard request.checksAddresses else { return true }
        guard let ip = IPAddress(address) else { return false }
        let url = handle.flatMap { wi_curl_effective_url($0) }.flatMap { URL(string: String(cString: $0)) } ?? request.url
        return delegate?.transferAllows(ip, for: url) ?? false
    }

    /// Hands libcurl's callbacks to the transfers their context names (once, by ``CurlEngine``).
    static func installCallbacks() {
        wi_curl_set_callbacks(wi_curl_callbacks(
            header: { context, line, length in
                let transfer = Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
                return transfer.received(headerLine: UnsafeRawBufferPointer(start: line, count: length)) ? 0 : 1
            },
            body: { context, bytes, length in
                let transfer = Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
                return transfer.received(body: UnsafeRawBufferPointer(start: bytes, count: length)) ? 0 : 1
            },
            allow_address: { context, address, _ in
                let transfer = Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
                return transfer.allows(address!) ? 0 : 1
            },
            opened_socket: { context, socket in
                Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue().opened(socket)
            },
            closing_socket: { socket in CurlSockets.closing(socket) },
            before_request: { context, localPort, peerPort in
                let transfer = Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
                return transfer.beforeRequest(on: CurlSockets.socket(localPort: Int(localPort), peerPort: Int(peerPort))) ? 0 : 1
            }))
    }
}

private extension Optional where Wrapped == Data {
    /// `body` with the bytes, or with `nil` when there are none.
    func withUnsafeBytesIfAny<T>(_ body: (UnsafeRawBufferPointer?) -> T) -> T {
        guard let data = self else { return body(nil) }
        return data.withUnsafeBytes { body($0) }
    }
}
