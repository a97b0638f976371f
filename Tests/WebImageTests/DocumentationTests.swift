import Foundation
import Testing

/// House rule: every public symbol of the library has a doc comment.
@Suite struct DocumentationTests {
    @Test func everyPublicDeclarationHasADocComment() throws {
        let sources = Corpus.packageRoot.appendingPathComponent("Sources/WebImage")
        let files = try #require(FileManager.default.enumerator(atPath: sources.path)).compactMap { $0 as? String }
            .filter { $0.hasSuffix(".swift") }
        #expect(files.count > 10)
        var undocumented: [String] = []
        for file in files {
            let lines = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
                .split(separator: "\n", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            for (index, line) in lines.enumerated() where line.hasPrefix("public ") && !line.hasPrefix("public import") {
                var previous = index - 1
                while previous >= 0 && lines[previous].hasPrefix("@") { previous -= 1 }
                if previous < 0 || !(lines[previous].hasPrefix("///") || lines[previous].hasSuffix("*/")) {
                    undocumented.append("\(file):\(index + 1): \(line)")
                }
            }
        }
        #expect(undocumented.isEmpty, "undocumented public symbols:\n\(undocumented.joined(separator: "\n"))")
    }
}
