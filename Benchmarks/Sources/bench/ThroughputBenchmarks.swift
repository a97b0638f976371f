import Foundation
import WebImage

/// Download throughput over http and https, two at a time, against curl in the same run: 200
/// distinct 3.9 MB files from an nginx of the benchmark's own on 127.0.0.1 (http on 18090, https with
/// HTTP/2 on 18443, its certificate from a private CA made here with openssl, trusted by both sides
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
        guard let random = FileHandle(forReadingAtPath: "/dev/urandom") else { throw BenchError("no /dev/urandom") }
        for index in 0..<fileCount {
            try random.readData(ofLength: fileSize).write(to: URL(fileURLWithPath: path("files/\(index).bin")))
        }
        try Data("subjectAltName=IP:127.0.0.1\n".utf8).write(to: URL(fileURLWithPath: path("san.cnf")))
        for arguments in [
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", path("ca.key"), "-out", path("ca.pem"), "-days", "2", "-subj", "/CN=bench CA"],
            ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", path("server.key"), "-out", path("server.csr"), "-subj", "/CN=127.0.0.1"],
            ["x509", "-req", "-in", path("server.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"), "-CAcreateserial",
             "-out", path("server.pem"), "-days", "2", "-extfile", path("san.cnf")],
        ] { try once(openssl, arguments) }
        let config = """
        worker_processes 2; pid \(path("nginx.pid")); error_log \(path("error.log")) warn; daemon on;
        events { worker_connections 256; }
        http {
            access_log off; sendfile on; tcp_nopush on; keepalive_requests 100000;
            client_body_temp_path \(path("t1")); proxy_temp_path \(path("t2")); fastcgi_temp_path \(path("t3"));
            uwsgi_temp_path \(path("t4")); scgi_temp_path \(path("t5"));
            server { listen 127.0.0.1:18090; location /files/ { alias \(path("files"))/; } }
            server { listen 127.0.0.1:18443 ssl http2; ssl_certificate \(path("server.pem")); ssl_certificate_key \(path("server.key"));
                     location /files/ { alias \(path("files"))/; } }
        }
        """
        try Data(config.utf8).write(to: URL(fileURLWithPath: path("nginx.conf")))
        try once(nginx, ["-c", path("nginx.conf"), "-p", root.path])
        defer { try? once(nginx, ["-c", path("nginx.conf"), "-p", root.path, "-s", "stop"]) }
        try await Task.sleep(for: .milliseconds(300))

        var rows: [Row] = []
        let rounds = max(5, iterations / 2)
        // THROUGHPUT_SCHEMES=http (or https) runs one scheme only (for profiling).
        let schemes = (ProcessInfo.processInfo.environment["THROUGHPUT_SCHEMES"] ?? "http,https").split(separator: ",").map(String.init)
        for (scheme, port) in [("http", 18090), ("https", 18443)] where schemes.contains(scheme) {
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

    /// Runs `executable` once to its end (``Measure/process(_:_:iterations:)`` runs a warm-up
    /// first), with posix_spawn and waitpid: Foundation's `Process.waitUntilExit` never returned for
    /// nginx, whose first process exits as soon as it has forked its daemon.
    static func once(_ executable: String, _ arguments: [String]) throws {
        var pid: pid_t = 0
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        guard posix_spawn(&pid, executable, &actions, nil, argv, environ) == 0 else { throw BenchError("cannot start \(executable)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        if status != 0 { throw BenchError("\(executable) \(arguments.joined(separator: " ")) failed (status \(status))") }
    }
}
