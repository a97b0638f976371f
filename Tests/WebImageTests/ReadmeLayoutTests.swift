import Foundation
import Testing

/// The README's layout table matches the folders: every folder of `Sources/` (the C shims as `Sources/C*`)
/// and of `Sources/WebImage/` is named in a row, so a new folder without a row fails here.
@Suite struct ReadmeLayoutTests {
    @Test func everySourceFolderHasARow() throws {
        let root = Corpus.packageRoot
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let start = try #require(readme.range(of: "## Layout\n"))
        let layout = readme[start.upperBound...].split(separator: "\n").prefix { !$0.hasPrefix("## ") && !$0.hasPrefix("MIT") }
        let rows = layout.filter { $0.hasPrefix("| `") }.joined(separator: "\n")
        let files = FileManager.default
        var missing: [String] = []
        for folder in try files.contentsOfDirectory(atPath: root.appendingPathComponent("Sources").path).sorted() {
            if folder.hasPrefix("C") { if !rows.contains("`Sources/C*`") { missing.append(folder) }; continue }
            if !rows.contains(folder) { missing.append("Sources/\(folder)") }
        }
        for folder in try files.contentsOfDirectory(atPath: root.appendingPathComponent("Sources/WebImage").path).sorted()
        where !rows.contains("`Sources/WebImage/\(folder)`") {
            missing.append("Sources/WebImage/\(folder)")
        }
        #expect(missing.isEmpty, "the README's layout has no row for \(missing)")
    }
}
