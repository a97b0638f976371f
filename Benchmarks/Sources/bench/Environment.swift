import Foundation

/// What the benchmarks measure against, and the machine they run on.
enum Environment {
    /// A reference tool: how to find it and how to install it.
    struct Reference: Sendable {
        var name: String
        var isPresent: @Sendable () -> Bool
        var install: String
    }

    static let nginxURL = URL(string: "http://127.0.0.1:8089/files/0.jpg")!

    static var tool: String {
        ProcessInfo.processInfo.environment["WEBIMAGE_BIN"] ?? packageRoot.appendingPathComponent(".build/release/webimage").path
    }

    static let references: [Reference] = [
        Reference(name: "tjbench", isPresent: { Measure.which("tjbench") != nil }, install: "apt-get install libjpeg-turbo-progs"),
        Reference(name: "vipsthumbnail", isPresent: { Measure.which("vipsthumbnail") != nil }, install: "apt-get install libvips-tools"),
        Reference(name: "vips", isPresent: { Measure.which("vips") != nil }, install: "apt-get install libvips-tools"),
        Reference(name: "curl", isPresent: { Measure.which("curl") != nil }, install: "apt-get install curl"),
        Reference(name: "find", isPresent: { FileManager.default.isExecutableFile(atPath: "/usr/bin/find") }, install: "apt-get install findutils"),
        Reference(name: "nginx on 127.0.0.1:8089", isPresent: { nginxAnswers() },
                  install: "apt-get install nginx, then Benchmarks/nginx/serve.sh start"),
        Reference(name: "webimage (release)", isPresent: { FileManager.default.isExecutableFile(atPath: tool) },
                  install: "swift build -c release --product webimage (in the package root)"),
    ]

    /// The references that are missing, each with how to install it; nothing is installed here.
    static func missingReferences() -> [String] {
        references.filter { !$0.isPresent() }.map { "\($0.name): \($0.install)" }
    }

    private static func nginxAnswers() -> Bool {
        guard let curl = Measure.which("curl"), let result = try? Measure.run(curl, ["-s", "-o", "/dev/null", "-w", "%{http_code}", nginxURL.absoluteString])
        else { return false }
        return result.output == "200"
    }

    /// A few lines describing the machine: CPU, cores, memory, OS, toolchain and library versions.
    static func machineDescription() -> [String] {
        func read(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        func firstLine(_ tool: String, _ arguments: [String]) -> String? {
            guard let path = Measure.which(tool), let result = try? Measure.run(path, arguments) else { return nil }
            return result.output.split(separator: "\n").first.map(String.init)
        }
        let cpu = read("/proc/cpuinfo").split(separator: "\n").first { $0.hasPrefix("model name") }?
            .split(separator: ":", maxSplits: 1).last?.trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
        let memory = read("/proc/meminfo").split(separator: "\n").first { $0.hasPrefix("MemTotal") }?
            .split(separator: " ").compactMap { Double($0) }.first.map { String(format: "%.0f GiB", $0 / 1_048_576) } ?? "?"
        let os = read("/etc/os-release").split(separator: "\n").first { $0.hasPrefix("PRETTY_NAME=") }?
            .dropFirst("PRETTY_NAME=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) ?? "Linux"
        var lines = [
            "CPU: \(cpu), \(ProcessInfo.processInfo.activeProcessorCount) cores available; memory \(memory)",
            "OS: \(os), kernel \(read("/proc/sys/kernel/osrelease").trimmingCharacters(in: .whitespacesAndNewlines))",
        ]
        if let swift = firstLine("swift", ["--version"]) { lines.append("Toolchain: \(swift)") }
        let libraries = ["libjpeg", "libpng"].compactMap { name in
            firstLine("pkg-config", ["--modversion", name]).map { "\(name) \($0)" }
        }
        if !libraries.isEmpty { lines.append("Libraries: " + libraries.joined(separator: ", ")) }
        let tools = [firstLine("vips", ["--version"]), firstLine("curl", ["--version"]).map { $0.split(separator: " ").prefix(2).joined(separator: " ") },
                     firstLine("nginx", ["-v"])].compactMap { $0 }
        if !tools.isEmpty { lines.append("References: " + tools.joined(separator: "; ")) }
        return lines
    }
}
