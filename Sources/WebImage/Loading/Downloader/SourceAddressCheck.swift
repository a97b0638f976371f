import Foundation

/// Applies a ``SourceAddressPolicy`` to a host before a connection (or a redirect) is made.
///
/// A numeric host is judged at once. A host name is resolved with `getaddrinfo`, which blocks (up to
/// the resolver's own time-outs), so it runs on a concurrent dispatch queue of its own: never on a
/// thread of Swift's cooperative pool, never on the launch or delegate queues other downloads need.
/// A name that does not resolve is let through: the connection then fails with URLSession's own error.
///
/// Used where the connection's own address cannot be checked: URLSession (which resolves inside its
/// libcurl, out of reach) and libcurl through a proxy (the proxy connects). The libcurl transport
/// checks the address it connects to itself (``CurlDownloadTask``, libcurl's open-socket callback),
/// so a name whose answer changes between lookups (DNS rebinding) cannot lead it to a refused address.
enum SourceAddressCheck {
    private static let resolverQueue = DispatchQueue(label: "WebImage.Downloader.resolve", attributes: .concurrent)

    /// Calls `verdict` with the refused address and why (`nil` when every address is allowed):
    /// synchronously for a numeric host or an unrestricted policy, else later on the resolver queue.
    static func check(host: String, policy: SourceAddressPolicy,
                      verdict: @escaping @Sendable ((address: IPAddress, reason: String)?) -> Void) {
        guard policy != .unrestricted else { return verdict(nil) }
        if let literal = IPAddress(host) {
            return verdict(policy.refusal(for: literal).map { (literal, $0) })
        }
        resolverQueue.async { verdict(policy.refusal(among: resolve(host))) }
    }

    /// Every address `host` resolves to (blocking); empty when it does not resolve.
    static func resolve(_ host: String) -> [IPAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0 else { return [] }
        defer { freeaddrinfo(list) }
        return addresses(in: list)
    }

    /// The IPv4 and IPv6 addresses of a `getaddrinfo` list, in its order.
    static func addresses(in list: UnsafeMutablePointer<addrinfo>?) -> [IPAddress] {
        var addresses: [IPAddress] = []
        var next = list
        while let info = next {
            if let socketAddress = info.pointee.ai_addr, let address = IPAddress(socketAddress) { addresses.append(address) }
            next = info.pointee.ai_next
        }
        return addresses
    }
}
