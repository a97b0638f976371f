import Foundation
import Synchronization

/// The sockets libcurl has open in this process, and which of them carry multiplexed (HTTP/2 or
/// later) connections: what ``CurlTransfer`` needs to find a reused connection's socket (libcurl's
/// pre-request callback names its ports, not its socket) and to know whether bytes waiting on it
/// can be an answer nobody asked for (HTTP/1) or are frames of the protocol (HTTP/2 PING, SETTINGS).
///
/// One table for every engine thread (socket numbers are the process's), behind a lock: it is
/// touched when a connection opens or closes and once before each request, never per byte. A
/// socket's ports are read from the kernel once, the first time a request asks (a connected
/// socket's ports never change), so the lookup before a request makes no system call for the
/// connections already seen.
enum CurlSockets {
    private struct Ports: Hashable {
        var local: Int
        var peer: Int
    }

    private struct Table {
        var open: Set<Int32> = []
        var multiplexed: Set<Int32> = []
        /// The ports of open sockets, once read.
        var ports: [Int32: Ports] = [:]
    }

    private static let table = Mutex(Table())

    /// libcurl made `socket` (a new connection).
    static func opened(_ socket: Int32) {
        table.withLock { table in
            table.open.insert(socket)
            table.multiplexed.remove(socket)
            table.ports[socket] = nil
        }
    }

    /// libcurl is closing `socket`.
    static func closing(_ socket: Int32) {
        table.withLock { table in
            table.open.remove(socket)
            table.multiplexed.remove(socket)
            table.ports[socket] = nil
        }
    }

    /// An answer on `socket` came over HTTP/2 or later.
    static func markMultiplexed(_ socket: Int32) {
        table.withLock { table in
            if table.open.contains(socket) { table.multiplexed.insert(socket) }
        }
    }

    static func isMultiplexed(_ socket: Int32) -> Bool {
        table.withLock { $0.multiplexed.contains(socket) }
    }

    /// The open socket from `localPort` to `peerPort`.
    static func socket(localPort: Int, peerPort: Int) -> Int32? {
        let wanted = Ports(local: localPort, peer: peerPort)
        let (known, unread) = table.withLock { table in
            (table.ports.first { $0.value == wanted }?.key, table.open.filter { table.ports[$0] == nil })
        }
        if let known { return known }
        var found: Int32?
        for socket in unread {
            guard let local = port(of: socket, peer: false), let peer = port(of: socket, peer: true) else { continue }   // not connected yet
            let ports = Ports(local: local, peer: peer)
            table.withLock { table in if table.open.contains(socket) { table.ports[socket] = ports } }
            if ports == wanted { found = socket }
        }
        return found
    }

    /// Whether `socket` has anything to read now (bytes, or the peer's close), without waiting.
    static func hasInput(_ socket: Int32) -> Bool {
        var waiting = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        return poll(&waiting, 1, 0) != 0
    }

    private static func port(of socket: Int32, peer: Bool) -> Int? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let found = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                (peer ? getpeername(socket, address, &length) : getsockname(socket, address, &length)) == 0
            }
        }
        guard found else { return nil }
        let family = Int32(storage.ss_family)
        return withUnsafePointer(to: &storage) { pointer in
            switch family {
            case AF_INET: pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
            case AF_INET6: pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            default: nil
            }
        }
    }
}
