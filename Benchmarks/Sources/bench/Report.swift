/// One line of the benchmark table: our figure next to its reference, measured in the same run.
struct Row {
    var name: String
    var ours: Double          // milliseconds
    var reference: String
    var referenceValue: Double?   // milliseconds; nil when the reference is missing
    var megapixels: Double?
    var goal: Double?         // minimum speed ratio (reference ms / our ms)
    var note = ""
    var unit = "ms"

    var ratio: Double? { referenceValue.map { $0 / ours } }

    var cells: [String] {
        func ms(_ value: Double) -> String {
            guard let megapixels else { return String(format: "%.1f %@", value, unit) }
            return String(format: "%.1f ms (%.0f MP/s)", value, megapixels / value * 1000)
        }
        let met: String = switch (ratio, goal) {
        case let (ratio?, goal?): ratio >= goal ? "yes" : "NO"
        case (nil, _): "n/a"
        default: "-"
        }
        return [name, ms(ours), reference, referenceValue.map(ms) ?? "missing: \(note)",
                ratio.map { String(format: "%.2fx", $0) } ?? "-", goal.map { String(format: ">= %.2fx", $0) } ?? "-", met]
    }

    static func table(_ rows: [Row]) -> String {
        let all = [["benchmark", "ours", "reference", "reference time", "ratio", "goal", "met"]] + rows.map(\.cells)
        let widths = (0..<all[0].count).map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.enumerated().map { index, row in
            let line = "| " + zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: " | ") + " |"
            if index == 0 { return line + "\n|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|" }
            return line
        }.joined(separator: "\n")
    }
}
