import Foundation
import WebImage

/// The size an SVG document declares on its root element, read from a sanitised document (the root's
/// `width`, `height` and `viewBox` attributes), in CSS pixels: absolute lengths (unitless, `px`, `pt`, `pc`,
/// `mm`, `cm`, `in`) as given; one of them with the `viewBox`'s aspect ratio; the `viewBox` alone; else
/// 300 × 150, the size browsers give a replaced element without one.
struct SVGIntrinsicSize {
    var width: Double
    var height: Double

    init(document: Data) {
        let attributes = Self.rootAttributes(document)
        let width = attributes["width"].flatMap(Self.pixels), height = attributes["height"].flatMap(Self.pixels)
        let box = attributes["viewBox"].flatMap(Self.viewBox)
        switch (width, height, box) {
        case let (width?, height?, _): (self.width, self.height) = (width, height)
        case let (width?, nil, box?): (self.width, self.height) = (width, width * box.height / box.width)
        case let (nil, height?, box?): (self.width, self.height) = (height * box.width / box.height, height)
        case let (nil, nil, box?): (self.width, self.height) = (box.width, box.height)
        default: (self.width, self.height) = (300, 150)
        }
    }

    /// The size to render at. A vector has no resolution of its own, so the asked thumbnail size is met
    /// whichever way (larger or smaller than the declared size): the document fitted inside the box (or
    /// covering it with ``WebImage/DecodeOptions/thumbnailCoversBox``; either side 0 leaves it free), then
    /// ``WebImage/DecodeOptions/maxPixelCount`` as for any decode; without either, the declared size. At least
    /// 1 × 1; a declared size past what an `Int` holds saturates (the caller's limit then refuses it).
    func renderSize(for options: DecodeOptions) -> PixelSize {
        var (w, h) = (width, height)
        if let box = options.thumbnailPixelSize, box.width > 0 || box.height > 0 {
            let scaleX = box.width > 0 ? Double(box.width) / w : .infinity
            let scaleY = box.height > 0 ? Double(box.height) / h : .infinity
            let scale = options.thumbnailCoversBox && box.width > 0 && box.height > 0 ? max(scaleX, scaleY) : min(scaleX, scaleY)
            (w, h) = (w * scale, h * scale)
        }
        func side(_ value: Double) -> Int { value.isFinite ? Int(min(max(value.rounded(), 1), 1e15)) : 1 }
        let size = PixelSize(width: side(w), height: side(h))
        let (pixels, overflow) = size.width.multipliedReportingOverflow(by: size.height)
        guard let budget = options.maxPixelCount, budget > 0, overflow || pixels > budget else { return size }
        var budgetOnly = DecodeOptions()
        budgetOnly.maxPixelCount = budget
        return budgetOnly.outputSize(forSource: size)
    }

    /// A length in CSS pixels, or `nil` for a relative one (`%`, `em`, `ex`) or a bad number.
    static func pixels(_ text: String) -> Double? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let units: [(String, Double)] = [("px", 1), ("pt", 4.0 / 3), ("pc", 16), ("mm", 96 / 25.4), ("cm", 96 / 2.54), ("in", 96)]
        for (unit, factor) in units where trimmed.hasSuffix(unit) {
            return Double(trimmed.dropLast(unit.count).trimmingCharacters(in: .whitespaces)).flatMap { $0 > 0 && $0.isFinite ? $0 * factor : nil }
        }
        return Double(trimmed).flatMap { $0 > 0 && $0.isFinite ? $0 : nil }
    }

    /// The `viewBox`'s width and height, when both are positive.
    static func viewBox(_ text: String) -> (width: Double, height: Double)? {
        let numbers = text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" || $0 == "\n" }).compactMap { Double($0) }
        guard numbers.count == 4, numbers[2] > 0, numbers[3] > 0, numbers[2].isFinite, numbers[3].isFinite else { return nil }
        return (numbers[2], numbers[3])
    }

    /// The attributes of the first `<svg` start tag (the sanitiser's output has no DOCTYPE and no
    /// processing instruction before it), values unescaped only of the quotes around them.
    static func rootAttributes(_ document: Data) -> [String: String] {
        let text = String(decoding: document.prefix(64 << 10), as: UTF8.self)
        guard let open = text.range(of: "<svg"), let close = text[open.upperBound...].firstIndex(of: ">") else { return [:] }
        var attributes: [String: String] = [:]
        var rest = text[open.upperBound..<close]
        while let equals = rest.firstIndex(of: "=") {
            let name = rest[..<equals].split(whereSeparator: \.isWhitespace).last.map(String.init) ?? ""
            let afterEquals = rest[rest.index(after: equals)...].drop(while: \.isWhitespace)
            guard let quote = afterEquals.first, quote == "\"" || quote == "'" else { break }
            let valueStart = afterEquals.index(after: afterEquals.startIndex)
            guard let valueEnd = afterEquals[valueStart...].firstIndex(of: quote) else { break }
            let localName = name.split(separator: ":").last.map(String.init) ?? name
            if attributes[localName] == nil { attributes[localName] = String(afterEquals[valueStart..<valueEnd]) }
            rest = afterEquals[afterEquals.index(after: valueEnd)...]
        }
        return attributes
    }
}
