import Foundation

/// Where one Redis server is and how to log in: parsed from `redis://[[user]:password@]host[:port][/db]`.
public struct RedisEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// The host name or IP address (an IPv6 address without brackets).
    public var host: String
    /// The TCP port; default 6379.
    public var port: Int
    /// The ACL user for `AUTH user password` (Redis 6+); default `nil` (`AUTH password`).
    public var user: String?
    /// The password sent with `AUTH` after connecting; default `nil` (no `AUTH`).
    public var password: String?
    /// The database number selected after connecting; default 0.
    public var database: Int

    /// Creates an endpoint; every parameter but `host` defaults to the property's documented default.
    public init(host: String, port: Int = 6379, user: String? = nil, password: String? = nil, database: Int = 0) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
    }

    /// Parses `redis://[[user]:password@]host[:port][/db]` (percent-escapes allowed in the user and
    /// password); `nil` for another scheme, a missing host, a port outside 1...65535 or a database
    /// that is not a number.
    public init?(url text: String) {
        guard let components = URLComponents(string: text), components.scheme?.lowercased() == "redis",
              let host = components.host, !host.isEmpty else { return nil }
        let port = components.port ?? 6379
        guard (1...65535).contains(port) else { return nil }
        var database = 0
        let path = components.path.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        if !path.isEmpty {
            guard let number = Int(path), number >= 0 else { return nil }
            database = number
        }
        let user = components.percentEncodedUser.flatMap { $0.removingPercentEncoding }.flatMap { $0.isEmpty ? nil : $0 }
        let password = components.percentEncodedPassword.flatMap { $0.removingPercentEncoding }
        self.init(host: host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")), port: port, user: user,
                  password: password, database: database)
    }

    /// `redis://host:port/db`, without the password.
    public var description: String {
        let host = host.contains(":") ? "[\(host)]" : host
        return "redis://\(user.map { "\($0)@" } ?? "")\(host):\(port)/\(database)"
    }
}
