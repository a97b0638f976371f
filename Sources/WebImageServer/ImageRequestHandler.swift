import Foundation
import Synchronization
import WebImage

/// What answers each request of an ``ImageServer``: a `Sendable` value made once from the server's
/// validated configuration and handed to the HTTP layer, which calls ``dispatch(_:)`` on
/// libmicrohttpd's thread and runs the work it returns in a task. It holds the manager, the
/// configuration, the signer, the metrics, the processing slots, the server's two executors and its
/// state (draining or not); nothing refers back to the server.
struct ImageRequestHandler: Sendable {
    let manager: WebImageManager
    let config: ImageServerConfig
    /// The signers of a signed server (a URL signed by any one is valid); empty when unsigned.
    let signers: [ProcessingURLSigner]
    /// How each answer's format is picked (made once from the configuration).
    let formatPolicy: FormatPolicy
    let metrics: ServerMetrics
    let slots: ProcessingSlots
    let state: ServerState
    /// Where cold work (a processing slot's load, decode, transform and encode) runs, apart from
    /// the requests' executor: see ``ThreadPoolExecutor``.
    let coldWork: ThreadPoolExecutor
    /// Where the requests' tasks run, unless they take the shortcut onto a cold thread
    /// (``dispatch(_:)``): see ``ThreadPoolExecutor``.
    let requests: ThreadPoolExecutor
    /// Whether an image request may start on an idle cold thread: only over the built-in
    /// memory-and-disk ``WebImage/ImageCache``, whose hits are read without suspending (a shared
    /// tier's lookup waits for the network, and its task would then resume behind cold work).
    let takesColdShortcut: Bool

    init(manager: WebImageManager, config: ImageServerConfig, signers: [ProcessingURLSigner], metrics: ServerMetrics, slots: ProcessingSlots,
         state: ServerState, executors: (requests: ThreadPoolExecutor, coldWork: ThreadPoolExecutor)) {
        (self.manager, self.config, self.signers, self.metrics, self.slots, self.state) = (manager, config, signers, metrics, slots, state)
        formatPolicy = FormatPolicy(config: config)
        (requests, coldWork) = executors
        takesColdShortcut = manager.cache is ImageCache
    }

    /// What the HTTP layer does with `request`, decided on libmicrohttpd's thread without blocking
    /// (``HTTPServer``); every answer is recorded in the metrics, timed from here.
    ///
    /// - Answered at once: `/health`, a refused method, a refused image path (400, 403, 404), and
    ///   an image whose variant is in the manager's memory tier
    ///   (``WebImage/WebImageManager/memoryCachedVariant(url:format:encoding:options:context:)``).
    /// - An image path (its options parsed here, once) goes on in a task. It starts on a cold thread
    ///   when one waits for work and the slots taken plus such requests are fewer than the cold
    ///   threads (``ProcessingSlots/tryReserve(below:)``), over the built-in cache only
    ///   (``takesColdShortcut``): its disk lookup then runs there, at the cold threads' nice 10
    ///   and without suspending, and a cold request skips two thread hops (to a request thread and
    ///   back). Otherwise it starts on the requests' executor. Either way a processing slot is
    ///   taken only once the warm lookup misses. (Two libmicrohttpd threads may see the same idle
    ///   cold thread at once; the second request then waits for the first's lookup, or for a job
    ///   enqueued in between: a window of microseconds.)
    /// - Everything else (`/info`, `/metrics`, the demo page and its samples) goes on in a task on
    ///   the requests' executor.
    ///
    /// Under a ``ImageServerConfig/pathPrefix`` every route sits below it, and a path outside it is 404.
    func dispatch(_ received: HTTPRequest) -> HTTPDispatch {
        let started = ContinuousClock.now
        guard let request = routed(received) else {
            return .answer(record(.text(404, "not found: outside \(config.pathPrefix)"), since: started, processing: false))
        }
        let processing = Self.isProcessingRoute(request.path)
        switch route(of: request) {
        case .answer(let response):
            return .answer(record(response, since: started, processing: processing))
        case .image(let image):
            if takesColdShortcut, coldWork.hasIdleThread, slots.tryReserve(below: coldWork.threadCount) {
                return .task(on: coldWork, work: {
                    record(await self.image(image, for: request, reservedColdThread: true), since: started, processing: true)
                }, abandon: { slots.endReservation() })
            }
            return .task(on: requests, work: {
                record(await self.image(image, for: request, reservedColdThread: false), since: started, processing: true)
            }, abandon: {})
        case .task:
            return .task(on: requests, work: { record(await respond(to: request), since: started, processing: processing) }, abandon: {})
        }
    }

    /// `request` with its path inside the ``ImageServerConfig/pathPrefix`` (and the extra health
    /// path as `/health`); `nil` when the path is outside the prefix.
    private func routed(_ request: HTTPRequest) -> HTTPRequest? {
        var request = request
        if !config.pathPrefix.isEmpty {
            guard request.path.hasPrefix(config.pathPrefix) else { return nil }
            let inside = request.path.dropFirst(config.pathPrefix.count)
            guard inside.isEmpty || inside.hasPrefix("/") || config.pathPrefix.hasSuffix("/") else { return nil }
            request.path = inside.hasPrefix("/") ? String(inside) : "/" + inside
        }
        if let extra = config.healthCheckPath, request.path == extra { request.path = "/health" }
        return request
    }

    /// Whether `request` carries the ``ImageServerConfig/secret`` as `Authorization: Bearer <secret>`
    /// (compared in constant time, as imgproxy does); always when there is none.
    private func hasSecret(_ request: HTTPRequest) -> Bool {
        guard let secret = config.secret else { return true }
        return ConstantTime.equals(Array((request.authorization ?? "").utf8), Array("Bearer \(secret)".utf8))
    }

    /// Whether a (routed) path is one of imgproxy's processing routes, an image or `/info`: what its
    /// metrics count (``ImgproxyMetrics``); not `/health`, `/metrics`, the demo page or its samples.
    static func isProcessingRoute(_ path: String) -> Bool {
        !["/health", "/metrics", "/", "/index.html", "/favicon.ico", "/robots.txt"].contains(path) && !path.hasPrefix("/samples/")
    }

    /// `response`, recorded in the metrics as taking from `started` until now (in imgproxy's too for
    /// a `processing` route), with the CORS headers of ``ImageServerConfig/allowOrigin``.
    private func record(_ response: HTTPResponse, since started: ContinuousClock.Instant, processing: Bool) -> HTTPResponse {
        let elapsed = ContinuousClock.now - started
        metrics.recordRequest(status: response.status, bytesOut: response.body.count, duration: elapsed)
        if processing { metrics.imgproxy.recordRequest(status: response.status, duration: elapsed) }
        guard let origin = config.allowOrigin else { return response }
        var response = response
        response.headers += [("Access-Control-Allow-Origin", origin), ("Access-Control-Allow-Methods", "GET, OPTIONS")]
        return response
    }

    /// How a request is answered (``dispatch(_:)``).
    private enum Route {
        case answer(HTTPResponse)
        case image(ImageRequest)
        /// Any other path, answered by ``respond(to:)`` in a task.
        case task
    }

    private func route(of request: HTTPRequest) -> Route {
        if request.method == "OPTIONS" { return .answer(HTTPResponse(status: 200, headers: [], body: Data())) }   // as imgproxy: CORS preflight
        guard request.method == "GET" || request.method == "HEAD" else { return .answer(methodRefusal) }
        switch request.path {
        case "/health": return .answer(health)
        case "/metrics", "/", "/index.html", "/favicon.ico", "/robots.txt": return .task
        default:
            guard !request.path.hasPrefix("/samples/") else { return .task }
            guard hasSecret(request) else { return .answer(.text(403, "forbidden: invalid secret")) }
            guard !request.path.hasPrefix("/info/") else { return .task }
            switch imageRequest(for: request) {
            case .failure(let refusal): return .answer(refusal.response)
            case .success(let image):
                guard !image.passesSource, let warm = manager.memoryCachedVariant(image.prepared) else { return .image(image) }
                metrics.recordCachedResult(warm)
                return .answer(response(for: warm, image: image, request: request))
            }
        }
    }

    private var methodRefusal: HTTPResponse { .text(405, "only GET and HEAD", headers: [("Allow", "GET, HEAD")]) }

    private var health: HTTPResponse { state.isDraining ? .text(503, "draining") : .text(200, "ok") }

    /// The metrics in the Prometheus text format: WebImage's, the shared tiers' and imgproxy's
    /// (under ``ImageServerConfig/prometheusNamespace``), for `/metrics` and the Prometheus listener.
    var renderedMetrics: String {
        metrics.render(shared: (manager.cache as? any SharedTierReporting)?.sharedTierReports ?? [],
                       imgproxyNamespace: config.prometheusNamespace, workers: config.maxInFlight)
    }

    /// The answer to a path ``dispatch(_:)`` hands to a task as ``Route/task``: `/metrics`, the demo
    /// page, its samples and `/info/`.
    private func respond(to request: HTTPRequest) async -> HTTPResponse {
        guard request.method == "GET" || request.method == "HEAD" else { return methodRefusal }
        switch request.path {
        case "/health":
            return health
        case "/metrics":
            return HTTPResponse(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")],
                                body: Data(renderedMetrics.utf8))
        case "/", "/index.html":
            guard servesDemo else { return .text(404, "not found") }
            let page = DemoPage.html(signature: signers.isEmpty ? "insecure" : nil, sampleBase: sampleBase, signer: signers.first,
                                     pathPrefix: config.pathPrefix)
            return HTTPResponse(status: 200, headers: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-cache")],
                                body: Data(page.utf8))
        case "/favicon.ico", "/robots.txt":
            return .text(404, "not found")
        default:
            if request.path.hasPrefix("/samples/") { return sample(named: String(request.path.dropFirst("/samples/".count))) }
            if request.path.hasPrefix("/info/") { return await info(for: request) }
            return .text(404, "not found")   // image paths never come here: dispatch(_:) routes them
        }
    }

    private var servesDemo: Bool { config.servesDemoPage }

    /// Where the demo page's sources live: this server's own `/samples/` route.
    private var sampleBase: String {
        let host = config.bindAddress == "0.0.0.0" || config.bindAddress == "::" ? "127.0.0.1"
            : config.bindAddress.contains(":") ? "[\(config.bindAddress)]" : config.bindAddress
        return "http://\(host):\(state.port)\(config.pathPrefix)/samples/"
    }

    /// Whether the server may fetch `source`: a host ``ImageServerConfig/allowedHosts`` allows, or
    /// one of the demo page's own samples while the page is served.
    func allows(_ source: URL) -> Bool {
        let text = source.absoluteString
        if config.allows(host: source.host ?? ""), config.allows(sourceText: text) { return true }
        return servesDemo && text.hasPrefix(sampleBase) && DemoPage.samples.contains(String(text.dropFirst(sampleBase.count)))
    }

    /// A sample the demo page shows: only the names it lists, from the configured folder.
    private func sample(named name: String) -> HTTPResponse {
        guard servesDemo, DemoPage.samples.contains(name), let directory = config.demoSamplesDirectory,
              let data = try? Data(contentsOf: directory.appendingPathComponent(name)) else { return .text(404, "not found") }
        return HTTPResponse(status: 200, headers: [("Content-Type", ImageFormat(sniffing: data).mimeType), ("Cache-Control", "no-cache")],
                            body: data)
    }

    /// An image path taken in: admitted (``admitted(_:parse:)``), with the variant's parameters.
    struct ImageRequest {
        var parsed: ProcessingRequest
        var source: URL
        var parameters: VariantParameters
        /// The variant request, made ready once: its key serves the memory lookup, the stored lookup and the load.
        var prepared: PreparedVariant
        /// `raw`, or `skip_processing` listing formats: the source's own bytes may be the answer.
        var passesSource: Bool { parsed.raw || !parsed.skipProcessing.isEmpty }
    }

    /// `request`'s path admitted and its variant's parameters, or the answer that refuses it.
    private func imageRequest(for request: HTTPRequest) -> Result<ImageRequest, Refusal> {
        admitted(request.path, parse: { path in
            let parsed = try ProcessingRequest(path: path, presets: config.presets, allowsSecurityOptions: config.allowsSecurityOptions,
                                               defaults: config.processingDefaults, parsing: config.urlParsing,
                                               clientHints: config.readsClientHints ? (request.hintedDPR, request.hintedWidth) : (nil, nil))
            try parsed.checkWritable(by: config.coders)
            return parsed
        }).map { parsed, source in
            let parameters = VariantParameters(request: parsed, accept: request.accept, formats: formatPolicy, watermark: config.watermark,
                                               limits: manager.config.limits)
            let prepared = manager.prepareVariant(url: source, format: parameters.format, encoding: parameters.encoding,
                                                  options: parameters.options, context: parameters.context)
            return ImageRequest(parsed: parsed, source: source, parameters: parameters, prepared: prepared)
        }
    }

    /// An admitted image path (``dispatch(_:)`` answered refusals and memory hits already): a warm
    /// variant, or a processing slot and the variant. `reservedColdThread`: it started on a cold
    /// thread reserved for it (``ProcessingSlots/tryReserve(below:)``), a reservation ended here.
    private func image(_ image: ImageRequest, for request: HTTPRequest, reservedColdThread: Bool) async -> HTTPResponse {
        var reserved = reservedColdThread
        defer { if reserved { slots.endReservation() } }
        // A warm variant is answered before a processing slot is taken: it never waits for one and
        // is never refused with 429.
        if !image.passesSource, let warm = await manager.cachedVariant(image.prepared) {
            metrics.recordCachedResult(warm)
            return response(for: warm, image: image, request: request)
        }
        if reserved {   // the slot, when it is taken, stands for the reserved thread from now on
            slots.endReservation()
            reserved = false
        }
        let waitStarted = ContinuousClock.now
        guard await slots.acquire() else { return .text(429, "too many requests: the queue is full", headers: [("Retry-After", "1")]) }
        let slotTaken = ContinuousClock.now
        metrics.imgproxy.queue.record(slotTaken - waitStarted)
        defer {
            metrics.imgproxy.processing.record(.now - slotTaken)
            slots.release()
        }
        guard let limit = config.requestTimeout else { return await processed(image, for: request) }
        // As imgproxy's request context: past the limit the work is cancelled, and answered 503 once
        // it has stopped (a download stops at once; a decode or an encode under way ends first), so
        // the slot is given back only when nothing runs for the request any more. The timer is a
        // dispatch timer, not a task: a cold request pays a heap insert and a flag, measured cheaper.
        let work = Task(executorPreference: coldWork) { await self.processed(image, for: request) }
        let expired = Atomic<Bool>(false)
        let timer = DispatchWorkItem {
            expired.store(true, ordering: .releasing)
            work.cancel()
        }
        Self.timers.asyncAfter(deadline: .now() + .nanoseconds(Int(limit.components.seconds * 1_000_000_000 + limit.components.attoseconds / 1_000_000_000)),
                               execute: timer)
        let answer = await withTaskCancellationHandler { await work.value } onCancel: { work.cancel() }
        timer.cancel()
        guard expired.load(ordering: .acquiring), answer.status >= 400 else { return answer }   // it finished as the time ran out
        return .text(503, "the request timed out after \(limit) (IMGPROXY_TIMEOUT)")
    }

    /// The queue of the request time-outs' timers (``ImageServerConfig/requestTimeout``).
    private static let timers = DispatchQueue(label: "webimage.request-timeouts")

    /// The answer of an admitted image request that holds a processing slot: the source's bytes, the
    /// variant, or the fallback picture or the failure's status.
    private func processed(_ image: ImageRequest, for request: HTTPRequest) async -> HTTPResponse {
        let (parsed, source, parameters, passesSource) = (image.parsed, image.source, image.parameters, image.passesSource)
        if passesSource, let answer = await sourceBytes(for: parsed, source: source, request: request) {
            return answer
        }
        // Where its work runs and whether sources are kept: settings of the load, not of the key, set on
        // the cold path only.
        let coldWork = self.coldWork, keepsSources = config.keepsSources
        let loadSettings = { (context: inout WebImageContext) in
            context.workExecutor = coldWork
            if !keepsSources { (context.originalQueryCacheType, context.originalStoreCacheType) = (.none, .none) }
        }
        let prepared = image.prepared.changingLoadSettings(loadSettings)
        var context = parameters.context   // the fallback picture's load
        loadSettings(&context)
        do {
            // The stored bytes were looked at before the slot was taken (``image(_:for:reservedColdThread:)``),
            // unless the source's own bytes might have been the answer.
            let variant = try await withTaskExecutorPreference(coldWork) {
                try await manager.loadVariant(prepared, storedBytesChecked: !passesSource)
            }
            return response(for: variant, image: image, request: request)
        } catch let error as WebImageError {
            if let fallback = await fallbackAnswer(for: error, image: image, request: request, context: context) { return fallback }
            let (status, text) = status(for: error)
            return .text(status, text)
        } catch {
            return .text(500, "internal error")
        }
    }

    /// The answer for a variant of an image request.
    private func response(for variant: ImageVariant, image: ImageRequest, request: HTTPRequest) -> HTTPResponse {
        response(for: variant, parsed: image.parsed, source: image.source, variesByAccept: image.parameters.variesByAccept, request: request)
    }

    /// The answer for a variant: its bytes (or a 304 for its ETag) with the headers a CDN expects.
    func response(for variant: ImageVariant, parsed: ProcessingRequest, source: URL, variesByAccept: Bool,
                          request: HTTPRequest) -> HTTPResponse {
        var headers: [(name: String, value: String)] = [("ETag", variant.entityTag), ("Cache-Control", cacheControl(for: parsed)),
                                                         ("Content-Disposition", Self.contentDisposition(for: parsed, source: source,
                                                                                                         format: variant.format)),
                                                         ("Content-Security-Policy", Self.contentSecurityPolicy)]
        let vary = (variesByAccept ? ["Accept"] : []) + (config.readsClientHints ? ["Sec-CH-DPR", "DPR", "Sec-CH-Width", "Width"] : [])
        if !vary.isEmpty { headers.append(("Vary", vary.joined(separator: ", "))) }
        if let tags = request.ifNoneMatch, Self.matches(tags, variant.entityTag) {
            return HTTPResponse(status: 304, headers: headers, body: Data())
        }
        return HTTPResponse(status: 200, headers: [("Content-Type", variant.mimeType)] + headers, body: variant.data)
    }

    /// The source's own bytes, for `raw` always and for `skip_processing` when the source's format
    /// is listed and no other format is asked for; `nil` when the request is to be processed. The
    /// source is loaded through the manager (shared download, cached, checked as an image within
    /// the limits) with its bytes.
    private func sourceBytes(for parsed: ProcessingRequest, source: URL, request: HTTPRequest) async -> HTTPResponse? {
        let result: ImageResult
        do {
            var context = WebImageContext()
            context.workExecutor = coldWork
            result = try await withTaskExecutorPreference(coldWork) {
                try await manager.loadImage(url: source, options: [.queryMemoryData], context: context)
            }
        } catch let error as WebImageError {
            let (status, text) = status(for: error)
            return .text(status, text)
        } catch {
            return .text(500, "internal error")
        }
        guard let data = result.data else { return parsed.raw ? .text(500, "internal error: the source's bytes are not kept") : nil }
        let format = ImageFormat(sniffing: data)
        let bestSkips = !(parsed.format == nil && (parsed.asksBestFormat || config.bestFormat.isDefault)) || config.bestFormat.allowsSkips
        guard parsed.raw || (parsed.skipProcessing.contains(format) && (parsed.format == nil || parsed.format == format) && bestSkips) else {
            return nil
        }
        var body = data
        if !parsed.raw, config.coders.canPassThrough(format) {   // an SVG skipped is still sanitised, as imgproxy's
            do { body = try config.coders.passthroughDocument(for: data) ?? data } catch { return .text(422, "the image cannot be decoded") }
        }
        let bytes = ImageVariant(data: body, format: format, pixelSize: result.image.size, cacheType: result.cacheType,
                                 entityTag: ImageVariant.entityTag(of: body))
        return response(for: bytes, parsed: parsed, source: source, variesByAccept: false, request: request)
    }

    /// What every image answer's `Content-Security-Policy` allows, as imgproxy 4 sends it: nothing
    /// but inline styles and `data:` images, sandboxed, so an SVG opened by itself runs no script and
    /// fetches nothing even when it was not sanitised.
    static let contentSecurityPolicy = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox"

    /// `public, max-age=N`: the configured age, or less when the URL expires sooner (imgproxy's rule).
    private func cacheControl(for request: ProcessingRequest) -> String {
        cacheControl(expires: request.expires)
    }

    /// imgproxy's `max-age=N, public` for a URL that expires at the Unix time `expires` (0: never);
    /// `no-cache` when the TTL is 0.
    func cacheControl(expires: Int64) -> String {
        var age = config.cacheMaxAge
        if expires > 0 {
            let left = Int(Double(expires) - Date().timeIntervalSince1970)
            if left > 0 { age = min(age, left) }
        }
        return age > 0 ? "max-age=\(age), public" : "no-cache"
    }

    /// imgproxy's `Content-Disposition`: `inline` (or `attachment` with `return_attachment`) and a
    /// file name: the `filename` option, else the source URL's last path component without its
    /// extension (`image` when empty), with the output format's extension; quotes escaped as `%22`.
    static func contentDisposition(for request: ProcessingRequest, source: URL, format: ImageFormat) -> String {
        var stem = request.filename ?? ""
        if stem.isEmpty {
            // The last path segment of the URL as written (its query included, as imgproxy takes it).
            let text = source.absoluteString
            let afterScheme = text.range(of: "://").map { text[$0.upperBound...] } ?? Substring(text)
            let path = afterScheme.firstIndex(of: "/").map { afterScheme[$0...] } ?? ""
            let last = path.lastIndex(of: "/").map { path[path.index(after: $0)...] } ?? path
            stem = String(last.lastIndex(of: ".").map { last[..<$0] } ?? last)
        }
        if stem.isEmpty { stem = "image" }
        let name = stem.replacingOccurrences(of: "\"", with: "%22").filter { !$0.isNewline && $0 != "\r" }
        let fileExtension = format.fileExtension ?? format.rawValue
        return "\(request.returnsAttachment ? "attachment" : "inline"); filename=\"\(name).\(fileExtension)\""
    }

    /// Whether an `If-None-Match` header names `tag` (a list, `*`, or weak forms).
    static func matches(_ header: String, _ tag: String) -> Bool {
        header.split(separator: ",").contains { candidate in
            let trimmed = candidate.trimmingCharacters(in: .whitespaces)
            return trimmed == "*" || trimmed == tag || trimmed == "W/" + tag
        }
    }
}
