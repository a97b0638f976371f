import Foundation
import WebImage

/// The picture a server answers with, processed as each request asks, when the request's source
/// cannot be downloaded (imgproxy's `IMGPROXY_FALLBACK_IMAGE_DATA`/`_PATH`/`_URL`,
/// `_HTTP_CODE` and `_TTL`): a source that answers an error status, cannot be reached, times out,
/// is cut short or is too large. A source that downloads but is not an image WebImage reads is
/// still answered with its error, as imgproxy answers it.
public struct FallbackImage: Sendable, Equatable {
    /// Where the picture is: a `file://` URL (the manager needs a ``WebImage/FileLoader``) or an
    /// `http(s)` one; loaded and cached through the manager like any source.
    public var url: URL
    /// The status of an answer with the fallback picture; default 200, as imgproxy; `nil`: the
    /// status the failure itself would have had.
    public var status: Int?
    /// The `Cache-Control: max-age` of such an answer, in seconds, when lower than the server's
    /// (imgproxy's `IMGPROXY_FALLBACK_IMAGE_TTL`); default `nil`: the server's.
    public var maxAge: Int?

    /// A fallback picture at `url`, answered with `status` (default 200) and at most `maxAge`
    /// seconds of caching (default the server's).
    public init(url: URL, status: Int? = 200, maxAge: Int? = nil) {
        self.url = url
        self.status = status
        self.maxAge = maxAge
    }

    /// Whether `error` is a failure to download the source, which the fallback picture answers.
    static func answers(_ error: WebImageError) -> Bool {
        switch error {
        case .badStatusCode, .transport, .timedOut, .truncatedResponse, .tooManyRedirects, .rejected, .emptyResponse,
             .responseTooLarge, .sourceRefused, .blockedURL:
            true
        default:
            false
        }
    }
}

extension ImageRequestHandler {
    /// The answer with the ``ImageServerConfig/fallbackImage``, processed as `image` asks, when
    /// `error` is a download's failure; `nil` without a fallback picture, for another failure, or
    /// when the picture itself cannot be made (the original failure is answered then).
    func fallbackAnswer(for error: WebImageError, image: ImageRequest, request: HTTPRequest, context: WebImageContext) async -> HTTPResponse? {
        guard let fallback = config.fallbackImage, FallbackImage.answers(error) else { return nil }
        let parameters = image.parameters
        guard let variant = try? await withTaskExecutorPreference(coldWork, operation: {
            try await manager.loadVariant(url: fallback.url, format: parameters.format, encoding: parameters.encoding,
                                          options: parameters.options, context: context)
        }) else { return nil }
        var answer = response(for: variant, parsed: image.parsed, source: image.source, variesByAccept: parameters.variesByAccept,
                              request: request)
        if answer.status == 200 { answer.status = fallback.status ?? status(for: error).0 }
        if let maxAge = fallback.maxAge, maxAge < config.cacheMaxAge, let index = answer.headers.firstIndex(where: { $0.name == "Cache-Control" }) {
            answer.headers[index].value = maxAge > 0 ? "max-age=\(maxAge), public" : "no-cache"
        }
        answer.headers.append(("Fallback-Image", "1"))
        return answer
    }
}
