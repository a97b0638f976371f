import Foundation
import Glibc

/// A port on 127.0.0.1 that refuses every connection for as long as this lives: a socket bound to
/// it and never listening, so a connect gets ECONNREFUSED. Unlike a port found free and let go
/// (`freeLoopbackPort()`), no server that another test starts meanwhile can take it (one did: a
/// "store that is down" then answered 404 under load).
final class ClosedLoopbackPort {
    let port: Int
    private let fd: Int32

    init() throws {
        (fd, port) = try bindLoopbackSocket()
    }

    deinit { close(fd) }
}

/// A TCP socket bound to a free port on 127.0.0.1 (not listening), and that port.
func bindLoopbackSocket() throws -> (fd: Int32, port: Int) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw FixtureError("socket failed") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound else {
        close(fd)
        throw FixtureError("bind failed")
    }
    return (fd, Int(UInt16(bigEndian: address.sin_port)))
}
