import Foundation

/// An `https://` origin on 127.0.0.1 with a certificate from a private certificate authority made
/// for it (openssl), served by Python's `http.server` over `ssl`: `/redirect` answers `302` to the
/// location given, every other path `200` with the body given.
final class TLSOrigin: Sendable {
    let port: Int
    /// The private CA's certificate (PEM): what a client must trust.
    let authorityFile: URL
    private let folder: TemporaryDirectory
    private let child: ChildProcess

    static let script = """
    import http.server, ssl, sys
    cert, key, body_path, location = sys.argv[1:5]
    body = open(body_path, 'rb').read()
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'
        def do_GET(self):
            if self.path == '/redirect':
                self.send_response(302); self.send_header('Location', location); self.send_header('Content-Length', '0'); self.end_headers()
                return
            self.send_response(200); self.send_header('Content-Type', 'image/png'); self.send_header('Content-Length', str(len(body))); self.end_headers()
            self.wfile.write(body)
        def log_message(self, *args): pass
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print(server.server_address[1], flush=True)
    server.serve_forever()
    """

    /// Makes the CA and the server's certificate (for `127.0.0.1` and `localhost`) and starts the server.
    init(body: Data, redirectLocation: String = "http://127.0.0.1/") async throws {
        let folder = TemporaryDirectory("TLSOrigin")
        self.folder = folder
        try FileManager.default.createDirectory(at: folder.url, withIntermediateDirectories: true)
        let path = { (name: String) in folder.url.appendingPathComponent(name).path }
        authorityFile = folder.url.appendingPathComponent("ca.pem")
        let openssl = URL(fileURLWithPath: "/usr/bin/openssl")
        for arguments in [
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", path("ca.key"), "-out", path("ca.pem"), "-days", "2",
             "-subj", "/CN=WebImage test CA"],
            ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", path("server.key"), "-out", path("server.csr"), "-subj", "/CN=127.0.0.1"],
            ["x509", "-req", "-in", path("server.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"), "-CAcreateserial",
             "-out", path("server.pem"), "-days", "2", "-extfile", path("san.cnf")],
        ] {
            try Data("subjectAltName=IP:127.0.0.1,DNS:localhost\n".utf8).write(to: URL(fileURLWithPath: path("san.cnf")))
            let made = try await ChildProcess.run(arguments, executable: openssl)
            guard made.exitedCleanly else { throw SpawnedProcess.SpawnError(description: "openssl: \(made.errorText)") }
        }
        try body.write(to: URL(fileURLWithPath: path("body")))
        try Data(Self.script.utf8).write(to: URL(fileURLWithPath: path("server.py")))
        child = ChildProcess([path("server.py"), path("server.pem"), path("server.key"), path("body"), redirectLocation],
                             executable: URL(fileURLWithPath: "/usr/bin/python3"))
        try await child.start()
        let deadline = ContinuousClock.now + .seconds(30) * testTimeScale
        var printed = ""
        while Int(printed.trimmingCharacters(in: .whitespacesAndNewlines)) == nil {
            guard ContinuousClock.now < deadline, child.process.isRunning else {
                throw SpawnedProcess.SpawnError(description: "the TLS origin did not start")
            }
            try await Task.sleep(for: .milliseconds(20))
            printed = child.outputSoFar()
        }
        port = Int(printed.trimmingCharacters(in: .whitespacesAndNewlines))!
    }

    func url(_ path: String, host: String = "127.0.0.1") -> URL { URL(string: "https://\(host):\(port)\(path)")! }

    /// Stops the server and removes its files.
    func stop() async {
        child.process.terminate()
        _ = await child.waitForExit()
        folder.remove()
    }
}
