/// Why an HTTP/1.1 exchange of ``HTTP1Client`` failed.
package enum HTTP1Error: Error, Sendable, Equatable {
    /// `getaddrinfo` found no address for the host.
    case cannotFindHost(String)
    /// No address of the host accepted a connection (the last `connect` error).
    case cannotConnect(String)
    /// The deadline, or the time allowed between two reads, passed.
    case timedOut
    /// The connection closed or failed before the answer was complete.
    case connectionLost
    /// What arrived is not HTTP/1.x, or breaks its framing (bad chunk sizes, a head over 64 KiB).
    case malformed(String)
    /// The caller cancelled the exchange.
    case cancelled
    /// The host resolved, when connecting, to an address the exchange's ``SourceAddressPolicy``
    /// refuses (`reason` names its range); nothing was sent.
    case addressRefused(address: String, reason: String)

    /// One line for logs.
    package var reason: String {
        switch self {
        case .cannotFindHost(let host): "cannotFindHost \(host)"
        case .cannotConnect(let reason): "cannotConnectToHost (\(reason))"
        case .timedOut: "timedOut"
        case .connectionLost: "networkConnectionLost"
        case .malformed(let reason): "malformed answer: \(reason)"
        case .cancelled: "cancelled"
        case .addressRefused(let address, let reason): "address \(address) refused (\(reason))"
        }
    }
}
