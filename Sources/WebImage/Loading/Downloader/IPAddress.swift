import Foundation

/// An IPv4 or IPv6 address, as the policy sees it.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// 4 bytes for IPv4, 16 for IPv6 (an IPv4-mapped IPv6 address is read as its IPv4 address).
    public let bytes: [UInt8]

    /// Parses a numeric address: dotted IPv4 or IPv6 text (brackets and a zone such as `%eth0` are
    /// allowed); `nil` for anything else, such as a host name.
    public init?(_ text: String) {
        var text = text
        if text.hasPrefix("["), text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        if let zone = text.firstIndex(of: "%") { text = String(text[..<zone]) }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            self.init(ipv4: withUnsafeBytes(of: v4.s_addr) { Array($0) })
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        self.init(ipv6: withUnsafeBytes(of: v6) { Array($0) })
    }

    init(ipv4 bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The address of a socket address `getaddrinfo` gave (`AF_INET` or `AF_INET6`); `nil` for another family.
    init?(_ socketAddress: UnsafePointer<sockaddr>) {
        switch Int32(socketAddress.pointee.sa_family) {
        case AF_INET:
            self.init(ipv4: socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                withUnsafeBytes(of: $0.pointee.sin_addr.s_addr) { Array($0) }
            })
        case AF_INET6:
            self.init(ipv6: socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                withUnsafeBytes(of: $0.pointee.sin6_addr) { Array($0) }
            })
        default:
            return nil
        }
    }

    init(ipv6 bytes: [UInt8]) {
        // ::ffff:a.b.c.d reaches the IPv4 address a.b.c.d.
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
            self.bytes = Array(bytes[12..<16])
        } else {
            self.bytes = bytes
        }
    }

    /// The address as text (`inet_ntop`).
    public var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        return bytes.withUnsafeBytes { raw in
            guard inet_ntop(family, raw.baseAddress, &buffer, socklen_t(buffer.count)) != nil else { return "?" }
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    /// The IPv4 address an IPv6 address carries, which is where a packet to it can end up (a
    /// gateway unwraps it): IPv4-compatible `::a.b.c.d` (RFC 4291), 6to4 `2002:AABB:CCDD::/16`
    /// (RFC 3056), NAT64 `64:ff9b::/96` (RFC 6052) and `64:ff9b:1::/48` (RFC 8215, the /48 layout),
    /// Teredo `2001:0::/32` (RFC 4380, the client address inverted) and an ISATAP interface
    /// identifier `…:0:5efe:a.b.c.d` or `…:200:5efe:a.b.c.d` (RFC 5214). `nil` for IPv4 and for other
    /// IPv6 addresses. (IPv4-mapped addresses are read as IPv4 when parsed.)
    var embeddedIPv4: IPAddress? {
        guard bytes.count == 16 else { return nil }
        let b = bytes
        func v4(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8) -> IPAddress { IPAddress(ipv4: [a, b, c, d]) }
        if b[0..<12].allSatisfy({ $0 == 0 }) && !(b[12] == 0 && b[13] == 0 && b[14] == 0 && b[15] <= 1) {
            return v4(b[12], b[13], b[14], b[15])   // IPv4-compatible (not :: or ::1)
        }
        if b[0] == 0x20 && b[1] == 0x02 { return v4(b[2], b[3], b[4], b[5]) }
        if b[0..<12] == [0x00, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0][...] { return v4(b[12], b[13], b[14], b[15]) }
        if b[0..<6] == [0x00, 0x64, 0xFF, 0x9B, 0x00, 0x01][...] { return v4(b[6], b[7], b[9], b[10]) }
        if b[0] == 0x20 && b[1] == 0x01 && b[2] == 0 && b[3] == 0 { return v4(~b[12], ~b[13], ~b[14], ~b[15]) }
        if (b[8] == 0x00 || b[8] == 0x02) && b[9] == 0x00 && b[10] == 0x5E && b[11] == 0xFE {
            return v4(b[12], b[13], b[14], b[15])
        }
        return nil
    }

    /// The special-purpose range the address belongs to (RFC 6890 and its successors).
    enum Range: String {
        case unspecified, linkLocal = "link-local", loopback, privateNetwork = "private network"
        case sharedAddressSpace = "carrier-grade NAT", uniqueLocal = "unique-local", multicast, broadcast, global
    }

    var range: Range {
        if bytes.count == 4 {
            let (a, b) = (bytes[0], bytes[1])
            switch a {
            case 0: return .unspecified
            case 10: return .privateNetwork
            case 127: return .loopback
            case 100 where (64...127).contains(b): return .sharedAddressSpace
            case 169 where b == 254: return .linkLocal
            case 172 where (16...31).contains(b): return .privateNetwork
            case 192 where b == 168: return .privateNetwork
            case 224 where b == 0 && bytes[2] == 0: return .linkLocal   // link-local multicast, 224.0.0.0/24
            case 224...239: return .multicast
            case 255 where bytes.allSatisfy({ $0 == 255 }): return .broadcast
            default: return .global
            }
        }
        if bytes.allSatisfy({ $0 == 0 }) { return .unspecified }
        if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return .loopback }
        if bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80 { return .linkLocal }
        if bytes[0] == 0xFF && bytes[1] & 0x0F == 0x02 { return .linkLocal }   // link-local multicast, ff02::/16 (any flags)
        if bytes[0] & 0xFE == 0xFC { return .uniqueLocal }
        if bytes[0] == 0xFF { return .multicast }
        return .global
    }
}
