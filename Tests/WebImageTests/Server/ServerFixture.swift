import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import WebImage
import WebImageAVIF
import WebImageHEIF
import WebImageJXL
import WebImageSVG
import WebImageTIFF
import WebImageWebP
@testable import WebImageServer

/// A real `ImageServer` on 127.0.0.1 (a free port) over a manager with a temporary disk cache, a
/// test HTTP server for its sources, and a URLSession client.
struct ServerFixture {
    let sources: TestHTTPServer
    let managerFixture: ManagerFixture
    let server: ImageServer
    /// The task running the server; cancelling it stops the server gracefully.
    let running: Task<Void, any Error>
    /// The port it listens on.
    let port: UInt16
    let session: URLSession

    static let coders = CoderRegistry(coders: [PNGCoder(), JPEGCoder(), GIFCoder(), BMPCoder(), ICOCoder(), WebPCoder(), AVIFCoder(), HEIFCoder(), JXLCoder(), TIFFCoder(), SVGCoder()])

    init(signing: ImageServerConfig.Signing = .unsigned, managerConfig: WebImageManagerConfig = WebImageManagerConfig(),
         downloaderConfig: DownloaderConfig = patientDownloads, coders: CoderRegistry = Self.coders,
         configure: (inout ImageServerConfig) -> Void = { _ in }) async throws {
        sources = try TestHTTPServer()
        managerFixture = ManagerFixture(config: managerConfig, downloaderConfig: downloaderConfig, coders: coders)
        var config = ImageServerConfig(port: 0, signing: signing, coders: coders)
        configure(&config)
        let server = try ImageServer(manager: managerFixture.manager, config: config)
        (port, running) = try await server.start()
        self.server = server
        let configuration = URLSessionConfiguration.ephemeral
        // Generous: at the start of a full `swift test` run, child-process tests block both threads of
        // the cooperative pool (where the manager's work runs) for tens of seconds; under a loaded
        // ThreadSanitizer run an animation case took longer than 180 s (so it scales with the time scale).
        configuration.timeoutIntervalForRequest = 180 * Double(testTimeScale)
        configuration.httpMaximumConnectionsPerHost = 32   // URLSession's default (6) would queue concurrent tests' requests
        session = URLSession(configuration: configuration)
    }

    var base: String { "http://127.0.0.1:\(port)" }

    /// A source URL on the test server.
    func source(_ path: String) -> String { sources.url(path).absoluteString }

    struct Reply {
        var status: Int
        var headers: [String: String]
        var body: Data

        func header(_ name: String) -> String? {
            headers.first { $0.key.lowercased() == name.lowercased() }?.value
        }
    }

    /// GET `path` (as given: not re-encoded) with `headers`.
    func get(_ path: String, headers: [String: String] = [:], method: String = "GET") async throws -> Reply {
        var request = URLRequest(url: URL(string: base + path)!)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (body, response) = try await session.data(for: request)
        let http = response as! HTTPURLResponse
        var fields: [String: String] = [:]
        for (key, value) in http.allHeaderFields { fields["\(key)"] = "\(value)" }
        return Reply(status: http.statusCode, headers: fields, body: body)
    }

    func stop() async {
        running.cancel()
        _ = await running.result
        await managerFixture.manager.shutdown()
        sources.stop()
    }
}
