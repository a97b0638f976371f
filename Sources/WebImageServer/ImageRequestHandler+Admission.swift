import Foundation
import WebImage

extension ImageRequestHandler {
    /// A path taken apart, its signature checked before any option is parsed (an unsigned caller
    /// cannot probe the parser), its options parsed by `parse`, and its source resolved; or the
    /// answer that refuses it: 400 for a bad path or option, 403 for a bad signature or a forbidden
    /// option, 404 (as imgproxy) for an expired URL, a source URL that is not allowed, and a local
    /// source that is disabled or leads out of the root.
    func admitted<Parsed>(_ text: String, parse: (ProcessingPath) throws -> Parsed) -> Result<(Parsed, URL), Refusal> {
        let path: ProcessingPath
        do {
            path = try ProcessingPath(path: text, parsing: config.urlParsing)
        } catch {
            return .failure(Refusal(response: .text(400, "bad request: \(error.reason)")))
        }
        if let refusal = signatureRefusal(for: path) { return .failure(Refusal(response: refusal)) }
        let parsed: Parsed
        do {
            parsed = try parse(path)
        } catch let error as ProcessingPath.Invalid {
            return .failure(Refusal(response: .text(400, "bad request: \(error.reason)")))
        } catch let error as ProcessingRequest.Forbidden {
            return .failure(Refusal(response: .text(403, "forbidden: \(error.reason)")))
        } catch {
            return .failure(Refusal(response: .text(404, "not found: the URL has expired")))
        }
        return resolvedSource(of: path).map { (parsed, $0) }
    }

    /// A 403 when the path's signature is wrong (or, unsigned, when its first segment is an option), else `nil`.
    private func signatureRefusal(for path: ProcessingPath) -> HTTPResponse? {
        if !signers.isEmpty {
            guard config.trustedSignatures.contains(path.signature)
                    || signers.contains(where: { $0.isValid(path.signature, for: path.signedPath) }) else {
                return .text(403, "forbidden: bad signature")
            }
        } else if path.signature.contains(":") {
            return .text(403, "forbidden: the signature segment looks like a processing option; every URL starts with /<signature>/")
        }
        return nil
    }

    /// Why a request is refused: the answer to send.
    struct Refusal: Error {
        var response: HTTPResponse
    }

    /// The URL to load for the path's source: a `local:///` path as a file under the local root, or
    /// an allowed source's URL; otherwise the 404 to answer.
    private func resolvedSource(of path: ProcessingPath) -> Result<URL, Refusal> {
        let source = path.source
        if source.scheme?.lowercased() == "s3", !config.readsS3Sources {
            return .failure(Refusal(response: .text(404, "not found: s3 sources are not enabled on this server (IMGPROXY_USE_S3)")))
        }
        guard source.scheme?.lowercased() == "local" else {
            return allows(source) ? .success(source) : .failure(Refusal(response: .text(404, "not found: the source URL is not allowed")))
        }
        do throws(LocalSource.Refusal) {
            return .success(try LocalSource.fileURL(for: source, root: config.localRoot))
        } catch .disabled {
            return .failure(Refusal(response: .text(404, "not found: local sources are not enabled on this server (--local-root, IMGPROXY_LOCAL_FILESYSTEM_ROOT)")))
        } catch {
            return .failure(Refusal(response: .text(404, "not found: the local path leads outside the local root")))
        }
    }
}
