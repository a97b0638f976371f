import Foundation
import WebImage

/// Download throughput over http and https, two at a time, against curl in the same run: 200
/// distinct 3.9 MB files from an nginx of the benchmark's own on 127.0.0.1 (http on 8090, https with
/// HTTP/2 on 8443, its certificate from a private CA made here with openssl, trusted by both sides
/// through a CA file). Ours: ``Downloader`` (libcurl transport, the CA in
/// ``DownloaderConfig/certificateAuthorityFile``), two callers at a time; the reference:
/// `curl --parallel --parallel-max 2` on the same URLs, output to /dev/null. Rounds alternate.
enum ThroughputBenchmarks {
    static let fileCount = 200
    static let fileSize = 3_900_000

    static func run(iterations: Int) async throws -> [Row] {
        guard let nginx = Measure.which("nginx") ?? ["/usr/sbin/nginx"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }),
              let openssl = Measure.which("openssl"), let curl = Measure.which("curl")
        else {
            return [Row(name: "download throughput", ours: 0, reference: "curl --parallel-max 2", referenceValue: nil,
                        note: "needs nginx, openssl and curl")]
        }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-throughput-\(getpid())")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("files"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let path = { (name: String) in root.appendingPathComponent(name).path }
        var random = SystemRandomNumberGenerator()
        for index in 0..<fileCount {
            var bytes = [UInt8](repeating: 0, count: fileSize)
            for offset in stride(from: 0, to: fileSize, by: 8) {
                withUnsafeBytes(of: random.next()) { word in
                    for lane in 0..<min(8, fileSize - offset) { bytes[offset + lane] = word[lane] }
                }
            }
            try Data(bytes).write(to: URL(fileURLWithPath: path("files/\(index).bin")))
        }
        try Data("subjectAltName=IP:127.0.0.1\n".utf8).write(to: URL(fileURLWithPath: path("san.cnf")))
        for arguments in [
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", path("ca.key"), "-out", path("ca.pem"), "-days", "2", "-subj", "/CN=bench CA"],
            ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", path("server.key"), "-out", path("server.csr"), "-subj", "/CN=127.0.0.1"],
            ["x509", "-req", "-in", path("server.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"), "-CAcreateserial",
             "-out", path("server.pem"), "-days", "2", "-extfile", path("san.cnf")],
        ] { _ = try Measure.process(openssl, arguments, iterations: 1) }
        let config = """
        worker_processes 2; pid \(path("nginx.pid")); error_log \(path("error.log")) warn; daemon on;
        events { worker_connections 256; }
        http {
            access_log off; sendfile on; tcp_nopush on; keepalive_requests 100000;
            client_body_temp_path \(path("t1")); proxy_temp_path \(path("t2")); fastcgi_temp_path \(path("t3"));
            uwsgi_temp_path \(path("t4")); scgi_temp_path \(path("t5"));
            server { listen 127.0.0.1:8090; location /files/ { alias \(path("files"))/; } }
            server { listen 127.0.0.1:8443 ssl http2; ssl_certificate \(path("server.pem")); ssl_certificate_key \(path("server.key"));
                     location /files/ { alias \(path("files"))/; } }
        }
        """
        try Data(config.utf8).write(to: URL(fileURLWithPath: path("nginx.conf")))
        _ = try Measure.process(nginx, ["-c", path("nginx.conf"), "-p", root.path], iterations: 1)
        defer { _ = try? Measure.process(nginx, ["-c", path("nginx.conf"), "-p", root.path, "-s", "stop"], iterations: 1) }
        try await Task.sleep(for: .milliseconds(300))

        var rows: [Row] = []
        let rounds = max(3, iterations / 5)
        for (scheme, port) in [("http", 8090), ("https", 8443)] {
            let urls = (0..<fileCount).map { URL(string: "\(scheme)://127.0.0.1:\(port)/files/\($0).bin")! }
            let list = root.appendingPathComponent("curl-\(scheme).txt")
            try urls.map { "url = \"\($0.absoluteString)\"\noutput = \"/dev/null\"" }.joined(separator: "\n")
                .write(to: list, atomically: true, encoding: .utf8)
            var oursTimes: [Double] = []
            var curlTimes: [Double] = []
            for round in 0...rounds {
                let downloader = Downloader(config: DownloaderConfig(maxConcurrentDownloads: 2, maxResponseBytes: 16 << 20,
                                                                     maxResumableDataBytes: 0, proxy: .none,
                                                                     certificateAuthorityFile: path("ca.pem")))
                let start = ContinuousClock.now
                try await DownloadBenchmarks.windowed(urls, inFlight: 2, expected: fileSize * fileCount) { url in
                    try await downloader.load(ImageLoadRequest(url: url)).data.count
                }
                let ours = Measure.milliseconds(ContinuousClock.now - start)
                await downloader.shutdown()
                let reference = try Measure.process(curl, ["-s", "--fail", "--cacert", path("ca.pem"), "--parallel", "--parallel-max", "2",
                                                           "-K", list.path], iterations: 1)
                if round > 0 { oursTimes.append(ours); curlTimes.append(reference) }   // the first round warms up
            }
            let ours = oursTimes.sorted()[oursTimes.count / 2], reference = curlTimes.sorted()[curlTimes.count / 2]
            let megabytes = Double(fileSize * fileCount) / 1e6
            func rate(_ ms: Double) -> String { String(format: "%.0f MB/s", megabytes * 1000 / ms) }
            rows.append(Row(name: "\(fileCount) x 3.9 MB over \(scheme), 2 at a time (\(rate(ours)))", ours: ours,
                            reference: "curl --parallel --parallel-max 2 (\(rate(reference)))", referenceValue: reference, goal: 0.9))
        }
        return rows
    }
}
