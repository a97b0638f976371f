import Foundation

/// Which addresses a ``Downloader`` may connect to (``DownloaderConfig/sourceAddressPolicy``): three
/// switches, as imgproxy's `IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES`, `_LINK_LOCAL_` and `_PRIVATE_`.
///
/// A server that fetches URLs its users type must not let them reach what only the server can:
/// the cloud metadata service at 169.254.169.254, the server's own ports, the private network.
/// A refused load fails with ``WebImageError/sourceRefused(address:url:)``, which never puts the URL
/// on the failed-URL blocklist (the policy, not the URL, decided).
///
/// The libcurl transport checks the exact address it is about to connect to, on every hop (libcurl's
/// open-socket callback), so a DNS server that answers differently the second time (DNS rebinding)
/// cannot steer it. URLSession and a download through a proxy cannot be checked there: the host's
/// addresses are resolved and checked before the request instead (see the README for the egress
/// firewall that closes that gap). An IPv6 address that carries an IPv4 address (IPv4-mapped and
/// -compatible, 6to4, NAT64, Teredo, ISATAP) is judged by both.
public struct SourceAddressPolicy: Sendable, Hashable {
    /// Loopback (127.0.0.0/8, ::1): the server's own ports.
    public var allowsLoopback: Bool
    /// Link-local (169.254.0.0/16, fe80::/10, and link-local multicast 224.0.0.0/24, ff02::/16): where
    /// cloud metadata services live.
    public var allowsLinkLocal: Bool
    /// Private networks (10/8, 172.16/12, 192.168/16, unique-local fc00::/7, carrier-grade NAT
    /// 100.64.0.0/10), other multicast (224/4, ff00::/8) and the broadcast address.
    public var allowsPrivate: Bool
    /// Whether nothing is checked at all (unspecified addresses, 0.0.0.0/8 and ::, included).
    public var isUnrestricted: Bool

    /// A policy of three switches; unspecified addresses (0.0.0.0/8, ::) are refused by every one
    /// of them: connecting there reaches the own host, and no source means it.
    public init(allowsLoopback: Bool, allowsLinkLocal: Bool, allowsPrivate: Bool) {
        self.allowsLoopback = allowsLoopback
        self.allowsLinkLocal = allowsLinkLocal
        self.allowsPrivate = allowsPrivate
        self.isUnrestricted = false
    }

    /// Connect anywhere.
    public static let unrestricted: SourceAddressPolicy = {
        var policy = SourceAddressPolicy(allowsLoopback: true, allowsLinkLocal: true, allowsPrivate: true)
        policy.isUnrestricted = true
        return policy
    }()
    /// The library's default: refuse link-local and unspecified destinations; loopback and private
    /// networks allowed (an app loads from its own host and LAN).
    public static let standard = SourceAddressPolicy(allowsLoopback: true, allowsLinkLocal: false, allowsPrivate: true)
    /// imgproxy's default, and `webimage serve`'s: loopback and link-local refused, private networks
    /// allowed (a server's sources often live on its own network).
    public static let imgproxy = SourceAddressPolicy(allowsLoopback: false, allowsLinkLocal: false, allowsPrivate: true)
    /// Only public addresses: every special-purpose range refused.
    public static let publicOnly = SourceAddressPolicy(allowsLoopback: false, allowsLinkLocal: false, allowsPrivate: false)

    /// The first of `addresses` the policy refuses and why, or `nil` when it allows every one: a host
    /// is refused when any address it resolves to is (the connection could pick any of them).
    func refusal(among addresses: some Sequence<IPAddress>) -> (address: IPAddress, reason: String)? {
        guard !isUnrestricted else { return nil }
        for address in addresses {
            if let reason = refusal(for: address) { return (address, reason) }
        }
        return nil
    }

    /// Why `address` is refused (a short name of its range), or `nil` when the policy allows it. An
    /// IPv6 address with an IPv4 address embedded is refused when either is.
    public func refusal(for address: IPAddress) -> String? {
        guard !isUnrestricted else { return nil }
        if let reason = refusal(of: address.range) { return reason }
        return address.embeddedIPv4.flatMap { refusal(of: $0.range) }
    }

    private func refusal(of range: IPAddress.Range) -> String? {
        let allowed = switch range {
        case .global: true
        case .unspecified: false
        case .loopback: allowsLoopback
        case .linkLocal: allowsLinkLocal
        case .privateNetwork, .sharedAddressSpace, .uniqueLocal, .multicast, .broadcast: allowsPrivate
        }
        return allowed ? nil : range.rawValue
    }
}
