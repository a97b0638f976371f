import Foundation

/// Which proxy a download goes through, as the `HTTP_PROXY`, `HTTPS_PROXY` and `NO_PROXY`
/// environment variables say (curl's and Go's convention, either case of each name).
///
/// Decided once per request, on its URL: a redirect keeps the first request's proxy (or its
/// absence). Through a proxy, the proxy resolves host names, so ``SourceAddressPolicy`` can only be
/// checked on the host as the downloader resolves it before the request, not on the address the
/// proxy connects to: a proxy that must not reach internal addresses enforces that itself.
public struct ProxySettings: Sendable, Hashable {
    /// The proxy of `http://` requests (`http://host:port`, `socks5://…`); default `nil`: none.
    public var httpProxy: String?
    /// The proxy of `https://` requests (a `CONNECT` tunnel through it); default `nil`: none.
    public var httpsProxy: String?
    /// Hosts reached directly: comma-separated names (a name also matches its subdomains; a
    /// leading dot is allowed), IP literals, or `*` for every host; default `nil`: none.
    public var noProxy: String?

    /// Creates settings; every parameter defaults to `nil` (no proxy).
    public init(httpProxy: String? = nil, httpsProxy: String? = nil, noProxy: String? = nil) {
        self.httpProxy = httpProxy
        self.httpsProxy = httpsProxy
        self.noProxy = noProxy
    }

    /// No proxy for any request.
    public static let none = ProxySettings()

    /// The settings `environment` gives: `HTTP_PROXY` (or `http_proxy`), `HTTPS_PROXY` (or
    /// `https_proxy`), `NO_PROXY` (or `no_proxy`); the lowercase name wins when both are set, as
    /// in curl. An empty value counts as unset.
    /// - Parameter environment: default the process's environment.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> ProxySettings {
        func value(_ name: String) -> String? {
            let found = environment[name.lowercased()] ?? environment[name.uppercased()]
            return found?.isEmpty == false ? found : nil
        }
        return ProxySettings(httpProxy: value("http_proxy"), httpsProxy: value("https_proxy"), noProxy: value("no_proxy"))
    }

    /// The process's environment, read once: ``DownloaderConfig/proxy``'s default.
    public static let environment = fromEnvironment()

    /// The proxy `url` goes through, or `nil` to connect directly.
    public func proxy(for url: URL) -> String? {
        let chosen: String? = switch url.scheme?.lowercased() {
        case "http": httpProxy
        case "https": httpsProxy
        default: nil
        }
        guard let chosen, let host = url.host?.lowercased() else { return nil }
        return bypasses(host: host) ? nil : chosen
    }

    /// Whether ``noProxy`` names `host` (lowercased; an IPv6 literal without brackets).
    func bypasses(host: String) -> Bool {
        guard let noProxy else { return false }
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        for entry in noProxy.split(separator: ",") {
            var name = entry.trimmingCharacters(in: .whitespaces).lowercased()
            if name == "*" { return true }
            if name.hasPrefix(".") { name.removeFirst() }
            name = name.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            guard !name.isEmpty else { continue }
            if bare == name || bare.hasSuffix("." + name) { return true }
        }
        return false
    }
}
