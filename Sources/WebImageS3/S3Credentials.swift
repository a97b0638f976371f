import Foundation

/// The keys an S3-compatible store is signed with. Never logged: ``description`` shows the access
/// key ID alone.
public struct S3Credentials: Sendable, Hashable, CustomStringConvertible {
    /// The access key ID (`AWS_ACCESS_KEY_ID`).
    public var accessKeyID: String
    /// The secret access key (`AWS_SECRET_ACCESS_KEY`).
    public var secretAccessKey: String
    /// A session token of temporary credentials (`AWS_SESSION_TOKEN`), sent as `x-amz-security-token`; default `nil`.
    public var sessionToken: String?

    /// Creates credentials.
    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    /// The credentials of the standard environment variables (`AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`), or `nil` when the first two are not both set.
    /// - Parameter environment: default the process's.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> S3Credentials? {
        guard let key = environment["AWS_ACCESS_KEY_ID"], !key.isEmpty,
              let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty else { return nil }
        let token = environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        return S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: token)
    }

    /// `S3Credentials(AKIA…, secret hidden)`: the secret and the token never appear.
    public var description: String {
        "S3Credentials(\(accessKeyID), secret hidden\(sessionToken == nil ? "" : ", session token hidden"))"
    }
}
