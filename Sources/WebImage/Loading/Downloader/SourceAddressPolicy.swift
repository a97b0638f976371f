import Foundation

/// Which addresses a ``Downloader`` may connect to, checked on the addresses a URL's host resolves
/// to before connecting, and again for every redirect (``DownloaderConfig/sourceAddressPolicy``).
///
/// A server that fetches URLs its users type must not let them reach what only the server can:
/// the cloud metadata service at 169.254.169.254, the server's own ports, the private network.
/// A refused load fails with ``WebImageError/sourceRefused(address:url:)``, which never puts the URL
/// on the failed-URL blocklist (the policy, not the URL, decided).
///
/// The host name is resolved twice, once for this check and once by the connection. The own
/// HTTP/1.1 client (`http://` sources) applies the policy again to the addresses it connects to, so
/// a DNS server that answers differently the second time (DNS rebinding) cannot steer it. URLSession
/// (`https://`) resolves inside libcurl, where no check can reach: deployments that fetch untrusted
/// `https://` URLs close that gap below the process, with an egress firewall or proxy that refuses
/// the same ranges (see the README).
public enum SourceAddressPolicy: Sendable, Hashable {
    /// Connect anywhere.
    case unrestricted
    /// The default: refuse link-local (169.254.0.0/16, fe80::/10, where cloud metadata services
    /// live) and unspecified (0.0.0.0/8, ::) destinations.
    case standard
    /// ``standard``, and also loopback (127.0.0.0/8, ::1), private networks (10/8, 172.16/12,
    /// 192.168/16, unique-local fc00::/7), carrier-grade NAT (100.64.0.0/10), multicast (224/4,
    /// ff00::/8) and the broadcast address: only public addresses.
    case publicOnly

    /// The first of `addresses` the policy refuses and why, or `nil` when it allows every one: a host
    /// is refused when any address it resolves to is (the connection could pick any of them).
    func refusal(among addresses: some Sequence<IPAddress>) -> (address: IPAddress, reason: String)? {
        guard self != .unrestricted else { return nil }
        for address in addresses {
            if let reason = refusal(for: address) { return (address, reason) }
        }
        return nil
    }

    /// Why `address` is refused (a short name of its range), or `nil` when the policy allows it.
    public func refusal(for address: IPAddress) -> String? {
        guard self != .unrestricted else { return nil }
        let range = address.range
        switch range {
        case .linkLocal, .unspecified: return range.rawValue
        case .loopback, .privateNetwork, .sharedAddressSpace, .uniqueLocal, .multicast, .broadcast:
            return self == .publicOnly ? range.rawValue : nil
        case .global: return nil
        }
    }
}

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
            case 224...239: return .multicast
            case 255 where bytes.allSatisfy({ $0 == 255 }): return .broadcast
            default: return .global
            }
        }
        if bytes.allSatisfy({ $0 == 0 }) { return .unspecified }
        if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return .loopback }
        if bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80 { return .linkLocal }
        if bytes[0] & 0xFE == 0xFC { return .uniqueLocal }
        if bytes[0] == 0xFF { return .multicast }
        return .global
    }
}
