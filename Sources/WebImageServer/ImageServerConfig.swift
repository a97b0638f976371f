import Foundation
import WebImage

/// How ``ImageServer`` listens, checks URLs and sheds load.
public struct ImageServerConfig: Sendable {
    /// How request URLs are signed.
    public enum Signing: Sendable, Equatable {
        /// imgproxy's signatures: HMAC-SHA256 with this key over this salt and the path; both hex.
        case signed(keyHex: String, saltHex: String)
        /// A URL signed with any one of these pairs is valid: imgproxy's comma-separated
        /// `IMGPROXY_KEY` and `IMGPROXY_SALT`, which is how keys are rotated (the demo page signs
        /// with the first). Must not be empty.
        case signedWithAnyOf([SigningKey])
        /// Any signature segment is accepted (imgproxy's docs use `insecure`). For development: anyone
        /// can then make the server fetch and process any allowed URL.
        case unsigned
    }

    /// One key and salt of ``Signing/signedWithAnyOf(_:)``, both hex.
    public struct SigningKey: Sendable, Hashable {
        /// The HMAC key, in hex.
        public var keyHex: String
        /// The salt, in hex.
        public var saltHex: String

        /// Creates a pair; checked when the server is made (``ImageServer/init(manager:config:)``).
        public init(keyHex: String, saltHex: String) {
            self.keyHex = keyHex
            self.saltHex = saltHex
        }
    }

    /// The address to listen on (an IPv4 or IPv6 literal); default `"127.0.0.1"`.
    public var bindAddress: String
    /// The port; default 8080; 0 picks a free one (``ImageServer/port`` tells which).
    public var port: UInt16
    /// How URLs are signed; no default: a server without a key must say `.unsigned` on purpose.
    public var signing: Signing
    /// Requests processed at once; default twice the processor count. Others wait in the queue.
    public var maxInFlight: Int
    /// Requests that may wait for a processing slot; default 64. Past it a request is answered 429
    /// at once (memory stays bounded however many clients come).
    public var queueLimit: Int
    /// Host patterns a source URL must match (`example.com`, `*.example.com`); default empty: any host
    /// (the manager's ``WebImage/SourceAddressPolicy`` still applies).
    public var allowedHosts: [String]
    /// `Cache-Control: max-age=N, public` for images, in seconds (imgproxy's `IMGPROXY_TTL`); default
    /// a year, as imgproxy; 0: `no-cache`. Errors carry `no-cache` whatever this is.
    public var cacheMaxAge: Int
    /// Whether `/` serves the demo page; default `true` with `.unsigned`, `false` with a key. Its
    /// sample sources are this server's own `/samples/` files, which ``allowedHosts`` does not refuse;
    /// a downloader whose ``WebImage/SourceAddressPolicy`` refuses loopback cannot fetch them.
    public var servesDemoPage: Bool
    /// The folder whose sample images the demo page shows, served under `/samples/` (only the files
    /// the page names); default `nil`: the page has no pictures.
    public var demoSamplesDirectory: URL?
    /// Seconds an idle connection is kept (slow or silent clients are cut off); default 15.
    public var idleTimeoutSeconds: Int
    /// How long ``ImageServer/stop(drainingFor:)`` lets requests under way finish by default; 10 s.
    public var drainTimeout: Duration
    /// The coders the manager encodes with, for the `Accept` choice (AVIF gets imgproxy's speed 9);
    /// default ``WebImage/CoderRegistry/shared``.
    public var coders: CoderRegistry
    /// Named option lists a URL applies with `preset:NAME` (imgproxy's `IMGPROXY_PRESETS`): each
    /// value is the option segments, such as `["rs:fill:300:300", "g:sm"]`; a preset named `default`
    /// applies to every request first. Default none. ``ImageServer/init(manager:config:)`` checks
    /// every preset and throws for a bad one.
    public var presets: [String: [String]]
    /// Whether URLs may use imgproxy's security options (`max_src_resolution`, `max_src_file_size`,
    /// `max_animation_frames`, `max_animation_frame_resolution`, `max_result_dimension`); default
    /// `false`: they are answered 403, as imgproxy answers them.
    public var allowsSecurityOptions: Bool
    /// Whether a URL naming no format gets AVIF or WebP when the client's `Accept` lists them: both
    /// of ``autoFormats``; setting it sets them (`true`) or clears them (`false`). Default `false`.
    public var negotiatesFormats: Bool {
        get { !autoFormats.isEmpty }
        set { autoFormats = newValue ? [.avif, .webp] : [] }
    }
    /// The formats (AVIF, WebP) a URL naming no format gets when the client's `Accept` lists them,
    /// AVIF first, with `Vary: Accept` (imgproxy's `IMGPROXY_AUTO_AVIF`, `IMGPROXY_AUTO_WEBP`);
    /// default none: ``preferredFormats`` decide.
    public var autoFormats: Set<ImageFormat> = []
    /// The formats (AVIF, WebP) every answer gets when the client's `Accept` lists them, even when
    /// the URL names another format (imgproxy's `IMGPROXY_ENFORCE_AVIF`, `IMGPROXY_ENFORCE_WEBP`);
    /// default none.
    public var enforcedFormats: Set<ImageFormat> = []
    /// The formats a URL naming no format (and not negotiated) is answered in: the source's when
    /// listed, else the first that can hold the image (imgproxy's `IMGPROXY_PREFERRED_FORMATS`);
    /// default JPEG, PNG, GIF, as imgproxy (a WebP or AVIF source becomes JPEG, or PNG with alpha).
    public var preferredFormats: [ImageFormat] = [.jpeg, .png, .gif]
    /// How a URL asking for the `best` format is answered (imgproxy Pro's `IMGPROXY_BEST_FORMAT_*`);
    /// default imgproxy's.
    public var bestFormat = BestFormatSettings()
    /// Whether an SVG source is rendered and answered in a raster format even when the URL names no
    /// format (imgproxy's `IMGPROXY_ALWAYS_RASTERIZE_SVG`); default `false`: an SVG source whose URL
    /// names no format, or names `svg`, is answered as its sanitised document
    /// (``WebImage/PassthroughImageCoder``), whatever the other options, as imgproxy answers it. With
    /// it, `skip_processing` listing `svg` still passes the document.
    public var alwaysRasterizesSVG = false
    /// The picture the `watermark` option lays over results (imgproxy's `IMGPROXY_WATERMARK_PATH`);
    /// default `nil`: `watermark` changes nothing, as in imgproxy without one.
    public var watermark: WatermarkImage?
    /// The folder `local:///path` sources are read from (imgproxy's `IMGPROXY_LOCAL_FILESYSTEM_ROOT`);
    /// default `nil`: local sources are refused (404, as imgproxy). A path never reaches outside it: `..`
    /// segments and symbolic links that lead out are refused. The manager needs a
    /// ``WebImage/FileLoader`` among its loaders.
    public var localRoot: URL?
    /// What every URL's options start from (imgproxy's quality, security and metadata settings);
    /// default ``ProcessingDefaults/init(quality:formatQualities:maxSourcePixels:maxAnimationFrames:maxAnimationFramePixels:maxResultDimension:stripsColorProfile:keepsCopyright:autoRotate:)``'s.
    public var processingDefaults = ProcessingDefaults()
    /// Source URL patterns (imgproxy's `IMGPROXY_ALLOWED_SOURCES`): a source must start with one, a
    /// `*` standing for any run of characters but `/` (`https://*.example.com/`); default empty: any
    /// source. Checked with ``allowedHosts``; a source refused is answered 404, as imgproxy.
    public var allowedSources: [String] = []
    /// A path every route sits under (imgproxy's `IMGPROXY_PATH_PREFIX`, such as `/images`); default
    /// empty. A request outside it is answered 404.
    public var pathPrefix = ""
    /// The bytes of the HMAC a signature keeps (imgproxy's `IMGPROXY_SIGNATURE_SIZE`, 1–32); default 32.
    /// ``ImageServer/init(manager:config:)`` throws for another size.
    public var signatureSize = 32
    /// A secret every image and `/info` request must carry as `Authorization: Bearer <secret>`, or
    /// be answered 403 (imgproxy's `IMGPROXY_SECRET`: for a server only a CDN may reach); default `nil`.
    public var secret: String?
    /// The `Access-Control-Allow-Origin` of every answer, with `Access-Control-Allow-Methods: GET,
    /// OPTIONS` (imgproxy's `IMGPROXY_ALLOW_ORIGIN`); default `nil`: no CORS headers.
    public var allowOrigin: String?
    /// Signatures accepted for any path without being checked (imgproxy's `IMGPROXY_TRUSTED_SIGNATURES`);
    /// default none.
    public var trustedSignatures: Set<String> = []
    /// Whether `s3://bucket/key` sources are read (imgproxy's `IMGPROXY_USE_S3`); default `true`
    /// (the manager's loaders decide: an ``WebImageS3/S3Loader`` reads them); `false`: answered 404.
    /// `webimage serve` turns it off unless `IMGPROXY_USE_S3` is set, as imgproxy.
    public var readsS3Sources = true
    /// How URLs are read beyond imgproxy's grammar: a base URL, source rewrites, the arguments
    /// separator, presets only, the options allowed (imgproxy's URL settings); default imgproxy's.
    public var urlParsing = URLParsing()
    /// Where a second listener serves only `/metrics` (imgproxy's `IMGPROXY_PROMETHEUS_BIND`): an
    /// address and port, port 0 for a free one (``ImageServer/prometheusPort``); default `nil`: the
    /// metrics are at `/metrics` on the server's own port only.
    public var prometheusListener: (bindAddress: String, port: UInt16)?
    /// The namespace of imgproxy's metric families (`<namespace>_requests_total`; imgproxy's
    /// `IMGPROXY_PROMETHEUS_NAMESPACE`); default empty: `requests_total`.
    public var prometheusNamespace = ""
    /// The picture answered, processed as the request asks, when a source cannot be downloaded
    /// (imgproxy's `IMGPROXY_FALLBACK_IMAGE_*`); default `nil`: the failure's status.
    public var fallbackImage: FallbackImage?
    /// Whether the client hints `Sec-CH-DPR`/`DPR` and `Sec-CH-Width`/`Width` set the device pixel
    /// ratio and the width (in CSS pixels over the ratio) before the URL's options, which win, with
    /// `Vary` naming them (imgproxy's `IMGPROXY_ENABLE_CLIENT_HINTS`); default `false`.
    public var readsClientHints = false
    /// The longest an image request may take once it holds a processing slot; past it the client is
    /// answered 503 and the work is cancelled (imgproxy's `IMGPROXY_TIMEOUT`, which `webimage serve`
    /// sets to imgproxy's 10 s); default `nil`: no limit beyond the download's own time-out.
    public var requestTimeout: Duration?
    /// The most client connections open at once; more wait in the kernel's backlog (imgproxy's
    /// `IMGPROXY_MAX_CLIENTS`); default 2048, as imgproxy.
    public var maxClients = 2048
    /// Whether the port is opened with `SO_REUSEPORT`, so that several processes listen on it and
    /// the kernel spreads connections among them (imgproxy's `IMGPROXY_SO_REUSEPORT`); default `false`.
    public var reusesPort = false
    /// A second path answered as `/health` is (imgproxy's `IMGPROXY_HEALTH_CHECK_PATH`); default `nil`.
    public var healthCheckPath: String?

    /// Whether a cold request keeps its source's downloaded bytes in the disk tier, so that another
    /// size of the same source is made without downloading it again (thumbor's storage); default
    /// `false`, as imgproxy: a cold request then writes only its result, not a source of a megabyte
    /// or more that a CDN-fronted server rarely asks for again.
    public var keepsSources: Bool
    /// Whether libmicrohttpd's threads — which answer memory hits, `/health` and refusals, and hand
    /// everything else on — run in Linux's real-time class (SCHED_RR, priority 1); default `false`.
    ///
    /// On a machine whose cores are all busy with cold work, a woken thread of the normal class may
    /// wait for the next scheduler tick (4 ms at 250 Hz) before it runs, however low the cold
    /// threads' priority; a real-time thread runs at once. Measured with
    /// `Benchmarks/serving/warm_under_load.py` (2 cores): see the README's scheduling table. Needs
    /// CAP_SYS_NICE or an RLIMIT_RTPRIO of at least 1 (systemd: `LimitRTPRIO=1`);
    /// ``ImageServer/init(manager:config:)`` throws when the process may not. The work these threads
    /// do per request is bounded (parsing, a memory lookup, a copy), a thread they create starts in
    /// the normal class (SCHED_RESET_ON_FORK), and the kernel keeps 5 % of each second for the normal
    /// class whatever real-time threads do.
    public var runsNetworkThreadsInRealTime: Bool

    /// Creates a configuration; every parameter defaults to the property's documented default.
    public init(bindAddress: String = "127.0.0.1", port: UInt16 = 8080, signing: Signing,
                maxInFlight: Int = 2 * ProcessInfo.processInfo.activeProcessorCount, queueLimit: Int = 64,
                allowedHosts: [String] = [], cacheMaxAge: Int? = nil, servesDemoPage: Bool? = nil, demoSamplesDirectory: URL? = nil,
                idleTimeoutSeconds: Int = 15,
                drainTimeout: Duration = .seconds(10), coders: CoderRegistry = .shared, presets: [String: [String]] = [:],
                allowsSecurityOptions: Bool = false, negotiatesFormats: Bool = false, watermark: WatermarkImage? = nil, localRoot: URL? = nil,
                keepsSources: Bool = false, runsNetworkThreadsInRealTime: Bool = false) {
        self.keepsSources = keepsSources
        self.runsNetworkThreadsInRealTime = runsNetworkThreadsInRealTime
        self.watermark = watermark
        self.localRoot = localRoot
        self.coders = coders
        self.presets = presets
        self.allowsSecurityOptions = allowsSecurityOptions
        self.autoFormats = negotiatesFormats ? [.avif, .webp] : []
        self.bindAddress = bindAddress
        self.port = port
        self.signing = signing
        self.maxInFlight = max(1, maxInFlight)
        self.queueLimit = max(0, queueLimit)
        self.allowedHosts = allowedHosts
        self.cacheMaxAge = max(0, cacheMaxAge ?? 31_536_000)
        self.servesDemoPage = servesDemoPage ?? (signing == .unsigned)
        self.demoSamplesDirectory = demoSamplesDirectory
        self.idleTimeoutSeconds = max(1, idleTimeoutSeconds)
        self.drainTimeout = drainTimeout
    }

    /// Whether `source` (the URL's text) starts with one of ``allowedSources`` (any when the list is
    /// empty), `*` matching any run of characters but `/` (``WildcardPattern``).
    func allows(sourceText source: String) -> Bool {
        allowedSources.isEmpty || allowedSources.contains { WildcardPattern($0).matchesPrefix(of: source) }
    }

    /// Whether `host` matches one of ``allowedHosts`` (any host when the list is empty).
    func allows(host: String) -> Bool {
        guard !allowedHosts.isEmpty else { return true }
        let host = host.lowercased()
        return allowedHosts.contains { pattern in
            let pattern = pattern.lowercased()
            if pattern.hasPrefix("*.") { return host.hasSuffix(pattern.dropFirst(1)) }
            return host == pattern
        }
    }

    /// Parses a preset as imgproxy's `IMGPROXY_PRESETS` entries are written: `NAME=OPTION/OPTION/...`.
    /// - Throws: ``ServerError/invalidConfiguration(_:)`` when there is not exactly one `=`, the name
    ///   or the options are empty, or a segment is not an option (`name:arguments`).
    public static func preset(parsing text: String) throws(ServerError) -> (name: String, options: [String]) {
        let parts = text.split(separator: "=", omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw .invalidConfiguration("a preset is NAME=OPTION/OPTION/...: \(text)") }
        let name = parts[0].trimmingCharacters(in: .whitespaces), value = parts[1].trimmingCharacters(in: .whitespaces)
        let segments = value.split(separator: "/").map(String.init)
        guard !name.isEmpty, !segments.isEmpty, segments.allSatisfy({ $0.contains(":") }) else {
            throw .invalidConfiguration("a preset is NAME=OPTION/OPTION/... with each option name:arguments: \(text)")
        }
        return (name, segments)
    }
}
