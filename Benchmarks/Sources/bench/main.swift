// The benchmarks: WebImage next to the same work done by a reference (a bare C loop over the same
// libraries, tjbench, vipsthumbnail, a bare Mutex dictionary, plain read/write, find) in one run.
// Ratios are reference time / our time: above 1, we are faster.
//
//   swift run -c release --package-path Benchmarks bench [codecs|caches|downloads|manager|transforms]...
import Foundation

let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()
let corpus = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/corpus/large")
let iterations = Int(ProcessInfo.processInfo.environment["BENCH_ITERATIONS"] ?? "") ?? 15

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("bench: \(message)\n".utf8))
    exit(1)
}

let selected = Set(CommandLine.arguments.dropFirst())
if selected == ["rss-child"] {
    do { try await ManagerBenchmarks.rssChild() } catch { fail("\(error)") }
    exit(0)
}
var rows: [Row] = []
do {
    if selected.isEmpty || selected.contains("codecs") { rows += try CodecBenchmarks.run(iterations: iterations) }
    if selected.isEmpty || selected.contains("caches") { rows += try await CacheBenchmarks.run(iterations: iterations) }
    if selected.isEmpty || selected.contains("downloads") { rows += try await DownloadBenchmarks.run(iterations: iterations) }
    if selected.isEmpty || selected.contains("manager") { rows += try await ManagerBenchmarks.run(iterations: iterations) }
    if selected.isEmpty || selected.contains("transforms") { rows += try TransformBenchmarks.run(iterations: iterations) }
} catch {
    fail("\(error)")
}
print("WebImage benchmarks: median of \(iterations) runs; ratio = reference time / our time (above 1: faster)")
print(Row.table(rows))
