// The benchmarks: WebImage next to the same work done by a reference (a bare C loop over the same
// libraries, tjbench, vipsthumbnail, a bare Mutex dictionary, plain read/write, find) in one run.
// Ratios are reference time / our time: above 1, we are faster.
//
//   swift run -c release --package-path Benchmarks bench [codecs|formats|new-formats|caches|downloads|throughput|manager|transforms|soak|serving|redis|placeholders|s3]... [--write FILE]
//
// It installs nothing: it names every reference tool that is missing and how to install it, and the
// rows that need one say "missing". `--write FILE` also writes the table as Markdown with a
// description of the machine (how BENCHMARKS.md is made).
import Foundation
import WebImage

let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()
let corpus = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/corpus/large")
let iterations = Int(ProcessInfo.processInfo.environment["BENCH_ITERATIONS"] ?? "") ?? 15

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("bench: \(message)\n".utf8))
    exit(1)
}

var arguments = Array(CommandLine.arguments.dropFirst())
var reportFile: String?
if let index = arguments.firstIndex(of: "--write") {
    guard index + 1 < arguments.count else { fail("--write needs a file name") }
    reportFile = arguments[index + 1]
    arguments.removeSubrange(index...(index + 1))
}
if arguments.first == "autoquality-encode" {
    guard arguments.count == 3 else { fail("autoquality-encode LIST OUT") }
    do { try AutoQualityBenchmark.encode(list: URL(fileURLWithPath: arguments[1]), output: URL(fileURLWithPath: arguments[2])) } catch { fail("\(error)") }
    exit(0)
}
if arguments.first == "autoquality-curves" {
    guard arguments.count == 2 else { fail("autoquality-curves LIST") }
    do { try AutoQualityCurves.run(list: URL(fileURLWithPath: arguments[1])) } catch { fail("\(error)") }
    exit(0)
}
if arguments.first == "autoquality-cost" {
    guard arguments.count == 5, let format = ImageFormat(named: arguments[2]), let target = Double(arguments[4]) else {
        fail("autoquality-cost LIST FORMAT METHOD TARGET")
    }
    do {
        try await AutoQualityBenchmark.cost(list: URL(fileURLWithPath: arguments[1]), format: format, method: arguments[3], target: target)
    } catch {
        fail("\(error)")
    }
    exit(0)
}
let selected = Set(arguments)
let known: Set = ["codecs", "formats", "new-formats", "caches", "downloads", "throughput", "manager", "transforms", "soak", "serving", "redis", "placeholders", "s3", "rss-child", "soak-child", "gif-rss-child", "variant-profile"]
if let unknown = selected.subtracting(known).first { fail("unknown benchmark \(unknown); expected \(known.sorted().joined(separator: ", "))") }
if selected == ["soak-child"] {
    do { try await SoakBenchmark.child() } catch { fail("\(error)") }
    exit(0)
}
if selected == ["gif-rss-child"] {
    do { try FormatBenchmarks.gifRSSChild() } catch { fail("\(error)") }
    exit(0)
}
if selected == ["variant-profile"] {
    do { try await VariantProfile.run() } catch { fail("\(error)") }
    exit(0)
}
if selected == ["rss-child"] {
    do { try await ManagerBenchmarks.rssChild() } catch { fail("\(error)") }
    exit(0)
}
let missing = Environment.missingReferences()
for line in missing { FileHandle.standardError.write(Data("bench: missing reference \(line)\n".utf8)) }
var rows: [Row] = []
let started = Date()
do {
    if selected.isEmpty || selected.contains("codecs") { rows += try CodecBenchmarks.run(iterations: iterations) }
    if selected.isEmpty || selected.contains("formats") { rows += try FormatBenchmarks.run(iterations: iterations) }
    if selected.isEmpty || selected.contains("new-formats") { rows += try NewFormatBenchmarks.run(iterations: iterations) }
    if selected.isEmpty || selected.contains("caches") { rows += try await CacheBenchmarks.run(iterations: iterations) }
    if selected.isEmpty || selected.contains("downloads") { rows += try await DownloadBenchmarks.run(iterations: iterations) }
    if selected.isEmpty || selected.contains("throughput") { rows += try await ThroughputBenchmarks.run(iterations: iterations) }
    if selected.isEmpty || selected.contains("manager") { rows += try await ManagerBenchmarks.run(iterations: iterations) }
    if selected.isEmpty || selected.contains("transforms") { rows += try TransformBenchmarks.run(iterations: iterations) }
    if selected.isEmpty || selected.contains("soak") { rows += try SoakBenchmark.run() }
    if selected.isEmpty || selected.contains("serving") { rows += try await ServingBenchmarks.run(iterations: iterations) }
    if selected.isEmpty || selected.contains("redis") { rows += try await RedisBenchmarks.run(iterations: iterations) }
    if selected.isEmpty || selected.contains("s3") { rows += try await ObjectStoreBenchmarks.run(iterations: iterations) }
    if selected.isEmpty || selected.contains("placeholders") { rows += try PlaceholderBenchmarks.run(iterations: iterations) }
} catch {
    fail("\(error)")
}
let heading = "WebImage benchmarks: median of \(iterations) runs; ratio = reference time / our time (above 1: faster)"
print(heading)
print(Row.table(rows))
if let reportFile {
    let command = "swift run -c release --package-path Benchmarks bench" + (arguments.isEmpty ? "" : " " + arguments.joined(separator: " "))
    var report = ["# Benchmarks", "",
                  "Made by `\(command) --write \((reportFile as NSString).lastPathComponent)` on \(ISO8601DateFormatter().string(from: started)), "
                  + "after `swift build -c release --product webimage` and `Benchmarks/nginx/serve.sh start`. " + heading + ".", "",
                  "## The machine", ""]
    report += Environment.machineDescription().map { "- " + $0 }
    report += ["", "## Results", "", Row.table(rows), ""]
    if !missing.isEmpty { report += ["Missing references in this run:", ""] + missing.map { "- " + $0 } + [""] }
    do {
        try report.joined(separator: "\n").write(toFile: reportFile, atomically: true, encoding: .utf8)
    } catch {
        fail("cannot write \(reportFile): \(error)")
    }
}
