import Foundation
import WebImage
import WebImageServer

extension ServeCommand {
    /// `webimage serve`'s flags, declared once: ``parse(_:environment:)`` reads them and `--help` prints them.
    static let options = CommandOptions<ServeCommand>(
        usage: "webimage serve [options]",
        summary: """
        an image server for imgproxy-style URLs on libmicrohttpd, until Ctrl-C or SIGTERM (then it drains, flushes
        the cache and exits 0); see the README
        """,
        options: listening + signing + admission + memory + sources + processing
            + RedisArguments.options.map { $0.lifted(\.redis) } + S3Arguments.options.map { $0.lifted(\.s3) },
        epilogue: """
        environment: imgproxy's configuration is read first (the flags win); Docs/imgproxy-config.md has the table:
          \(ImgproxyEnvironment.honouredNames.joined(separator: " "))

        see also: webimage health [URL] (a container's health check), webimage formats (what is read and written)
        """)

    private static let listening: [CommandOption<ServeCommand>] = [
        .value("--bind", "ADDRESS", need: "an address", default: "0.0.0.0, every interface, as imgproxy",
               help: "where to listen (with --demo and no --bind or IMGPROXY_BIND: 127.0.0.1)") { command, text in
            command.bind = text
            command.bindIsExplicit = true
            return true
        },
        .value("--port", "N", need: "a number from 0 to 65535", default: "8080", help: "the port to listen on") { command, text in
            guard let port = UInt16(text) else { return false }
            command.port = port
            return true
        },
        .flag("--demo", help: "serve the demo page at / (its samples come from this server: loopback sources are allowed)") { $0.demo = true },
        .flag("--realtime-http", help: "libmicrohttpd's threads (memory hits, /health) in the real-time class (SCHED_RR 1), so they "
                  + "never wait for a core cold work holds; needs CAP_SYS_NICE or RLIMIT_RTPRIO >= 1") { $0.runsNetworkThreadsInRealTime = true },
    ]

    private static let signing: [CommandOption<ServeCommand>] = [
        .value("--key", "HEX", need: "a hex string", help: "imgproxy's URL signature key (with --salt; or IMGPROXY_KEY)") { command, text in
            command.keyHex = text
            return true
        },
        .value("--salt", "HEX", need: "a hex string", help: "imgproxy's URL signature salt (with --key; or IMGPROXY_SALT)") { command, text in
            command.saltHex = text
            return true
        },
        .flag("--unsigned", help: "serve unsigned URLs on purpose (without a key they are unsigned anyway, with a warning)") { $0.unsigned = true },
        .flag("--allow-security-options", help: "let URLs carry imgproxy's max_src_resolution, max_src_file_size and the like") {
            $0.allowsSecurityOptions = true
        },
    ]

    private static let admission: [CommandOption<ServeCommand>] = [
        .value("--max-inflight", "N", need: "a positive number", default: "twice the cores", help: "requests processed at once") { command, text in
            guard let count = Int(text), count > 0 else { return false }
            command.maxInFlight = count
            return true
        },
        .value("--queue", "N", need: "a number", default: "64", help: "requests that wait for a slot; the rest get 429") { command, text in
            guard let count = Int(text), count >= 0 else { return false }
            command.queue = count
            return true
        },
    ]

    private static let memory: [CommandOption<ServeCommand>] = [
        .value("--cache-dir", "DIR", need: "a folder", default: "the shared cache's folder", help: "the disk cache") { command, text in
            command.cacheDirectory = URL(fileURLWithPath: text, isDirectory: true)
            return true
        },
        .value("--disk-limit", "MIB", need: "a number of MiB (0: no limit)", default: "1024", help: "the disk tier's size") { command, text in
            guard let megabytes = Int(text), megabytes >= 0 else { return false }
            command.diskLimit = megabytes << 20
            return true
        },
        .flag("--keep-sources", help: "keep sources' bytes on disk too, so other sizes of a source are made without downloading it again") {
            $0.keepsSources = true
        },
        .value("--memory-limit", "MIB", need: "a number of MiB (0: no memory tier)", default: "0: none; a server reuses encoded variants",
               help: "the memory tier of decoded pixels") { command, text in
            guard let megabytes = Int(text), megabytes >= 0 else { return false }
            command.memoryLimit = megabytes << 20
            return true
        },
        .value("--variant-memory-limit", "MIB", need: "a number of MiB (0: no memory tier of variants)", default: "64",
               help: "the memory tier of encoded variants") { command, text in
            guard let megabytes = Int(text), megabytes >= 0 else { return false }
            command.variantMemoryLimit = megabytes << 20
            return true
        },
        .value("--malloc-arenas", "N", need: "a number from 1 to 64", default: "2; glibc's 8 per core with --realtime-http",
               help: "glibc allocator arenas (MALLOC_ARENA_MAX wins)") { command, text in
            guard let count = Int(text), (1...64).contains(count) else { return false }
            command.mallocArenas = count
            return true
        },
        .value("--malloc-trim-interval", "MS", need: "a number of milliseconds from 0 (never) to 60000", default: "250",
               help: "how often freed allocator memory is given back (0: never)") { command, text in
            guard let milliseconds = Int(text), (0...60_000).contains(milliseconds) else { return false }
            command.mallocTrimInterval = .milliseconds(milliseconds)
            return true
        },
    ]

    private static let sources: [CommandOption<ServeCommand>] = [
        .value("--allow-host", "PATTERN", need: "a host or *.domain pattern", default: "any",
               help: "a source host allowed (example.com, *.example.com; repeatable)") { command, text in
            command.allowedHosts.append(text)
            return true
        },
        .value("--source-policy", "POLICY", need: "default, loopback or public-only", default: "default",
               help: "default (imgproxy's): no loopback, link-local or unspecified source addresses; loopback: loopback allowed "
                   + "too; public-only: also no private, shared or multicast ones") { command, text in
            switch text {
            case "default": command.sourcePolicy = .imgproxy
            case "loopback": command.sourcePolicy = .standard
            case "public-only": command.sourcePolicy = .publicOnly
            default: return false
            }
            return true
        },
        .value("--local-root", "DIR", need: "a folder", help: "serve local:///path sources from under DIR (never outside it)") { command, text in
            command.localRoot = URL(fileURLWithPath: text, isDirectory: true)
            return true
        },
    ]

    private static let processing: [CommandOption<ServeCommand>] = [
        .value("--preset", "NAME=OPTIONS", need: "NAME=OPTION/OPTION/...",
               help: "an imgproxy preset (NAME=rs:fit:300:300/q:80; \"default\" applies to every URL; repeatable)") { command, text throws(ArgumentError) in
            if case .failure(let message) = addPreset(text, to: &command.presets) { throw ArgumentError(message: message) }
            return true
        },
        .value("--presets-file", "FILE", need: "a readable file of NAME=OPTIONS lines", help: "presets, one per line (# comments)") {
            command, path throws(ArgumentError) in
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return false }
            for line in text.split(whereSeparator: \.isNewline) {
                let entry = line.trimmingCharacters(in: .whitespaces)
                guard !entry.isEmpty, !entry.hasPrefix("#") else { continue }
                if case .failure(let message) = addPreset(entry, to: &command.presets) { throw ArgumentError(message: message) }
            }
            return true
        },
        .value("--watermark", "PATH|URL", need: "an image file or URL", help: "the picture of imgproxy's watermark option") { command, text in
            command.watermark = text
            return true
        },
        .flag("--auto-format", help: "choose AVIF or WebP from the Accept header when the URL names no format (Vary: Accept)") {
            $0.server.autoFormats = [.avif, .webp]
        },
    ]
}
