import Foundation

/// Receives a body's bytes straight into its owner's storage, with no copy through the reader's
/// buffer: called with how many bytes are wanted at most and `write`, it calls `write` once with
/// room at the body's end for up to that many, and keeps the bytes `write` says it wrote (`write`
/// is one non-blocking `recv(2)`: it may run under the owner's lock). Returns true to go on, false
/// to read no more (without calling `write`), `nil` when it takes no more bytes this way (then the
/// reader hands the rest to its `deliver`, from its own buffer).
package typealias HTTP1BodyRoom = (_ limit: Int, _ write: (UnsafeMutableRawBufferPointer) -> Int) -> Bool?

/// Reads one HTTP/1.x answer from a connected socket through a buffer, each wait bounded by a
/// deadline for the whole exchange and, if set, a time allowed between two reads (`poll(2)`).
///
/// Bad input: a head over 64 KiB, a chunk size that is not hex or a line over 4 KiB are
/// ``HTTP1Error/malformed(_:)``; a connection that ends inside a body is
/// ``HTTP1Error/connectionLost``; a wait past a limit is ``HTTP1Error/timedOut``. Nothing read is
/// trusted for a size before it is checked.
package struct HTTP1Reader {
    let fd: Int32
    let deadline: ContinuousClock.Instant
    let readTimeout: Duration?
    private var buffer: [UInt8] = []
    private var start = 0
    /// What one `recv(2)` reads into, kept for the whole answer (never read before written: not zeroed).
    private var scratch = [UInt8](unsafeUninitializedCapacity: HTTP1Reader.readSize) { _, count in count = HTTP1Reader.readSize }
    /// The most one `recv(2)` asks for: 64 KiB, loopback's largest segment, and below glibc's
    /// threshold for a mapping of its own (the buffer comes from the heap, not fresh pages each answer).
    static let readSize = 64 * 1024
    /// The most one `recv(2)` asks for straight into a body's storage (``HTTP1BodyRoom``): 1 MiB, a
    /// copy of about 0.1 ms under the owner's lock, and a few calls for a photo-sized body.
    static let directReadSize = 1 << 20
    /// Whether the last failed read met the end of the stream (the server closed), not an error.
    private var atEnd = false
    /// Bytes received on the socket so far (0: the server sent nothing at all).
    package private(set) var received = 0

    package init(fd: Int32, deadline: ContinuousClock.Instant, readTimeout: Duration? = nil) {
        self.fd = fd
        self.deadline = deadline
        self.readTimeout = readTimeout
    }

    /// Whether bytes past the answer were read (then the connection cannot be reused).
    package var hasBufferedBytes: Bool { start < buffer.count }

    /// Reads more bytes into the buffer: `nil` when some arrived, else why not (`atEnd` tells a
    /// clean end of the stream from a failure; both are `.connectionLost`).
    private mutating func fill() -> HTTP1Error? {
        if start > 0 && start == buffer.count { buffer.removeAll(keepingCapacity: true); start = 0 }
        switch receive(upTo: scratch.count) {
        case .success(let count):
            buffer.append(contentsOf: scratch[0..<count])
            return nil
        case .failure(let error):
            return error
        }
    }

    /// Receives at most `limit` bytes (1 or more) into the start of ``scratch``: how many arrived,
    /// else why none did. The socket is non-blocking: `recv(2)` is tried first and `poll(2)` waits
    /// only when nothing is there yet (while a body streams in, most reads find bytes waiting, and
    /// a poll before each would double the system calls).
    private mutating func receive(upTo limit: Int) -> Result<Int, HTTP1Error> {
        atEnd = false
        let socket = fd, wanted = min(limit, scratch.count)
        while true {
            guard ContinuousClock.now < deadline else { return .failure(.timedOut) }   // a server that never stops sending
            let reception = scratch.withUnsafeMutableBytes { Self.receiveOnce(socket, into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<wanted])) }
            switch reception {
            case .bytes(let count):
                received += count
                return .success(count)
            case .end:
                atEnd = true
                return .failure(.connectionLost)
            case .failed:
                return .failure(.connectionLost)
            case .notYet:
                if let error = waitUntilReadable() { return .failure(error) }
            }
        }
    }

    /// What one non-blocking `recv(2)` did.
    private enum Reception {
        /// This many bytes (1 or more) arrived.
        case bytes(Int)
        /// None were there yet (`EAGAIN`).
        case notYet
        /// The server closed the stream.
        case end
        /// The connection failed.
        case failed
    }

    /// One non-blocking `recv(2)` on `socket` into `room` (retried when a signal interrupts it).
    private static func receiveOnce(_ socket: Int32, into room: UnsafeMutableRawBufferPointer) -> Reception {
        while true {
            let count = recv(socket, room.baseAddress, room.count, 0)
            if count > 0 { return .bytes(count) }
            if count == 0 { return .end }
            if errno == EINTR { continue }
            return errno == EAGAIN || errno == EWOULDBLOCK ? .notYet : .failed
        }
    }

    /// Waits until the socket has bytes (or an end) to read: `nil`, else why not (the deadline or the
    /// time allowed between two reads passed, or the connection failed).
    private func waitUntilReadable() -> HTTP1Error? {
        while true {
            var wait = deadline - .now
            if let readTimeout, readTimeout < wait { wait = readTimeout }
            guard wait > .zero else { return .timedOut }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, wait.pollMilliseconds)
            if ready < 0 && errno == EINTR { continue }
            return ready == 1 ? nil : ready == 0 ? .timedOut : .connectionLost
        }
    }

    /// The next final head (informational 1xx heads are skipped).
    package mutating func readHead() -> Result<HTTP1Head, HTTP1Error> {
        while true {
            if let end = headEnd() {
                let text = String(decoding: buffer[start..<end], as: UTF8.self)
                start = end + 4
                guard let head = HTTP1Head(text: text) else { return .failure(.malformed("not an HTTP/1.x status line")) }
                if (100..<200).contains(head.status) && head.status != 101 { continue }
                return .success(head)
            }
            guard buffer.count - start < 65536 else { return .failure(.malformed("a head over 64 KiB")) }
            if let error = fill() { return .failure(error) }
        }
    }

    private func headEnd() -> Int? {
        var index = start
        while index + 3 < buffer.count {
            if buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 { return index }
            index += 1
        }
        return nil
    }

    /// How reading a body ended.
    package enum BodyEnd: Equatable {
        /// It was read whole.
        case complete
        /// `deliver` returned false: the rest was not read.
        case stopped
    }

    /// Reads the body framed by `framing`, handing each piece to `deliver` as it arrives (false stops).
    /// A piece is only valid during the call (it lies in the reader's buffers: copy what is kept).
    /// With `room`, the bytes of a known length (`Content-Length`, each chunk's) that are not in the
    /// reader's buffer already are received straight into the owner's storage instead.
    package mutating func readBody(_ framing: HTTP1BodyFraming, room: HTTP1BodyRoom? = nil,
                                   deliver: (UnsafeRawBufferPointer) -> Bool) -> Result<BodyEnd, HTTP1Error> {
        switch framing {
        case .none: return .success(.complete)
        case .malformed: return .failure(.malformed("Content-Length"))
        case .length(let length): return readExactly(length, room: room, deliver: deliver)
        case .untilClose:
            while true {
                if start < buffer.count {
                    let going = buffer[start...].withUnsafeBytes(deliver)
                    start = buffer.count
                    guard going else { return .success(.stopped) }
                }
                if let error = fill() { return atEnd ? .success(.complete) : .failure(error) }   // a clean close ends the body
            }
        case .chunked:
            while true {
                guard case .success(let line) = readLine(),
                      let size = Int(line.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? "", radix: 16),
                      size >= 0 else { return .failure(.malformed("a chunk size")) }
                if size == 0 {
                    while case .success(let trailer) = readLine(), !trailer.isEmpty {}
                    return .success(.complete)
                }
                switch readExactly(size, room: room, deliver: deliver) {
                case .success(.complete): break
                case let other: return other
                }
                guard case .success = readLine() else { return .failure(.connectionLost) }
            }
        }
    }

    /// Hands `count` bytes to `deliver` as they arrive: first what the buffer holds, then straight
    /// from ``scratch``, or with `room`, receives them into the owner's storage (never past the
    /// body's end, so nothing of a next answer is read).
    private mutating func readExactly(_ count: Int, room: HTTP1BodyRoom?, deliver: (UnsafeRawBufferPointer) -> Bool) -> Result<BodyEnd, HTTP1Error> {
        var left = count
        if start < buffer.count {
            let take = min(left, buffer.count - start)
            let going = buffer[start..<(start + take)].withUnsafeBytes(deliver)
            start += take
            left -= take
            guard going else { return .success(.stopped) }
        }
        var room = room
        while left > 0, let direct = room {
            guard ContinuousClock.now < deadline else { return .failure(.timedOut) }
            var reception = Reception.notYet
            let socket = fd
            let going = direct(min(left, Self.directReadSize)) { space in
                reception = Self.receiveOnce(socket, into: space)
                if case .bytes(let count) = reception { return count }
                return 0
            }
            guard let going else {
                room = nil   // the owner takes no more this way: the rest goes through `deliver`
                break
            }
            if case .bytes(let count) = reception {
                received += count
                left -= count
            }
            guard going else { return .success(.stopped) }
            switch reception {
            case .bytes: continue
            case .end: return .failure(.connectionLost)
            case .failed: return .failure(.connectionLost)
            case .notYet: if let error = waitUntilReadable() { return .failure(error) }
            }
        }
        while left > 0 {
            switch receive(upTo: left) {
            case .success(let got):
                left -= got
                guard scratch.withUnsafeBytes({ deliver(UnsafeRawBufferPointer(rebasing: $0[0..<got])) }) else { return .success(.stopped) }
            case .failure(let error):
                return .failure(error)
            }
        }
        return .success(.complete)
    }

    /// One line without its CRLF (at most 4 KiB).
    private mutating func readLine() -> Result<String, HTTP1Error> {
        while true {
            if let newline = buffer[start...].firstIndex(of: 10) {
                let line = String(decoding: buffer[start..<newline], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                start = newline + 1
                return .success(line)
            }
            guard buffer.count - start < 4096 else { return .failure(.malformed("a line over 4 KiB")) }
            if let error = fill() { return .failure(error) }
        }
    }
}
