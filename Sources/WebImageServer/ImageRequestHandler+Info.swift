import Foundation
import WebImage

extension ImageRequestHandler {
    /// An imgproxy `/info/<signature>/<options>/plain/<source>` (or base64 source) URL: signed and
    /// checked as image URLs are, answered with the facts as JSON in the shape of imgproxy's `/info`
    /// (``ImageInfo/json(_:)``) with a strong ETag and `Cache-Control` as for images. Warm facts are
    /// answered before a processing slot is taken; cold ones decode the source small, in a slot.
    func info(for request: HTTPRequest) async -> HTTPResponse {
        let parsed: InfoRequest, source: URL
        switch admitted(String(request.path.dropFirst("/info".count)), parse: { try InfoRequest(path: $0, separator: config.urlParsing.argumentsSeparator) }) {
        case .success(let admitted): (parsed, source) = admitted
        case .failure(let refusal): return refusal.response
        }
        var context = WebImageContext()
        context.workExecutor = coldWork
        if !config.keepsSources { (context.originalQueryCacheType, context.originalStoreCacheType) = (.none, .none) }
        let components = (x: parsed.blurHashX, y: parsed.blurHashY)
        if let warm = try? await manager.loadImageInfo(url: source, blurHashComponents: components, options: .fromCacheOnly, context: context) {
            return response(for: warm, parsed: parsed, request: request)
        }
        guard await slots.acquire() else { return .text(429, "too many requests: the queue is full", headers: [("Retry-After", "1")]) }
        defer { slots.release() }
        do {
            let info = try await withTaskExecutorPreference(coldWork) {
                try await manager.loadImageInfo(url: source, blurHashComponents: components, context: context)
            }
            return response(for: info, parsed: parsed, request: request)
        } catch let error as WebImageError {
            let (status, text) = status(for: error)
            return .text(status, text)
        } catch {
            return .text(500, "internal error")
        }
    }

    /// The facts' JSON (or a 304 for its ETag).
    private func response(for info: ImageInfo, parsed: InfoRequest, request: HTTPRequest) -> HTTPResponse {
        let body = info.json(parsed.fields)
        let tag = ImageVariant.entityTag(of: body)
        let headers: [(name: String, value: String)] = [("ETag", tag), ("Cache-Control", cacheControl(expires: parsed.expires))]
        if let tags = request.ifNoneMatch, Self.matches(tags, tag) {
            return HTTPResponse(status: 304, headers: headers, body: Data())
        }
        return HTTPResponse(status: 200, headers: [("Content-Type", "application/json")] + headers, body: body)
    }
}
