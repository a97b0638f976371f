import Foundation

/// Applies a ``SourceAddressPolicy`` to a host before a connection (or a redirect) is made.
///
/// A numeric host is judged at once. A host name is resolved with `getaddrinfo`, which blocks (up to
/// the resolver's own time-outs), so it runs on a concurrent dispatch queue of its own: never on a
/// thread of Swift's cooperative pool, never on the launch or delegate queues other downloads need.
/// A name that does not resolve is let through: the connection then fails with URLSession's own error.
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
        resolverQueue.async {
            for address in resolve(host) {
                if let reason = policy.refusal(for: address) { return verdict((address, reason)) }
            }
            verdict(nil)
        }
    }

    /// Every address `host` resolves to (blocking); empty when it does not resolve.
    static func resolve(_ host: String) -> [IPAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0 else { return [] }
        defer { freeaddrinfo(list) }
        var addresses: [IPAddress] = []
        var next = list
        while let info = next {
            if let socketAddress = info.pointee.ai_addr {
                switch info.pointee.ai_family {
                case AF_INET:
                    socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                        addresses.append(IPAddress(ipv4: withUnsafeBytes(of: $0.pointee.sin_addr.s_addr) { Array($0) }))
                    }
                case AF_INET6:
                    socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                        addresses.append(IPAddress(ipv6: withUnsafeBytes(of: $0.pointee.sin6_addr) { Array($0) }))
                    }
                default: break
                }
            }
            next = info.pointee.ai_next
        }
        return addresses
    }
}
