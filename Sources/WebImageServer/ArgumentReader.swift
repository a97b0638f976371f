import Foundation
import WebImage

/// Reads one imgproxy option's `:`-separated arguments with imgproxy's value rules: an empty or
/// missing argument is `nil` (the value stays as it was), numbers as Go parses them (no `inf` or
/// `nan` here: they are refused), booleans `1 t T true TRUE True` / `0 f F false FALSE False` with
/// anything else read as false. Every refusal names the option. Values past the bounds below are
/// refused as absurd before any work is done.
struct ArgumentReader {
    let option: String
    let arguments: [String]

    /// The largest width, height, minimum side or block accepted (imgproxy has none; a server needs one).
    static let maxLength = 65_535
    static let maxPadding = 16_384
    static let maxDevicePixelRatio = 32.0
    static let maxZoom = 100.0
    static let maxSigma = 1_000.0

    typealias Invalid = ProcessingPath.Invalid

    init(option: String, arguments: [String]) {
        self.option = option
        self.arguments = arguments
    }

    func has(_ index: Int) -> Bool { index < arguments.count && !arguments[index].isEmpty }

    func limit(_ count: Int) throws(Invalid) {
        if arguments.count > count { throw Invalid(reason: "\(option): at most \(count) arguments, got \(arguments.count)") }
    }

    func boolean(_ index: Int) -> Bool? {
        guard has(index) else { return nil }
        return ["1", "t", "T", "true", "TRUE", "True"].contains(arguments[index])
    }

    func integer(_ index: Int) throws(Invalid) -> Int? {
        guard has(index) else { return nil }
        guard let value = Int(arguments[index]) else { throw Invalid(reason: "\(option): \(arguments[index]) is not a whole number") }
        return value
    }

    /// A whole number from 0 to `bound`.
    func length(_ index: Int, upTo bound: Int = ArgumentReader.maxLength) throws(Invalid) -> Int? {
        guard let value = try integer(index) else { return nil }
        guard (0...bound).contains(value) else { throw Invalid(reason: "\(option): \(value) is outside 0...\(bound)") }
        return value
    }

    func requiredLength(_ index: Int, upTo bound: Int = ArgumentReader.maxLength) throws(Invalid) -> Int {
        guard let value = try length(index, upTo: bound) else { throw Invalid(reason: "\(option): needs a value") }
        return value
    }

    func number(_ index: Int, atLeast minimum: Double = -.greatestFiniteMagnitude, upTo bound: Double = .greatestFiniteMagnitude,
                required: Bool = false) throws(Invalid) -> Double? {
        guard has(index) else {
            if required { throw Invalid(reason: "\(option): needs a value") }
            return nil
        }
        guard let value = Double(arguments[index]), value.isFinite else {
            throw Invalid(reason: "\(option): \(arguments[index]) is not a number")
        }
        guard value >= minimum, value <= bound else { throw Invalid(reason: "\(option): \(arguments[index]) is outside \(minimum)...\(bound)") }
        return value
    }

    /// A number above 0 and at most `bound`.
    func positive(_ index: Int, upTo bound: Double, required: Bool) throws(Invalid) -> Double? {
        guard let value = try number(index, upTo: bound, required: required) else { return nil }
        guard value > 0 else { throw Invalid(reason: "\(option): must be above 0") }
        return value
    }

    func resizingType(_ index: Int) throws(Invalid) -> ProcessingOptions.ResizingType? {
        guard has(index) else { return nil }
        guard let type = ProcessingOptions.ResizingType(rawValue: arguments[index]) else {
            throw Invalid(reason: "\(option): unknown resizing type \(arguments[index]) (fit, fill, fill-down, force, auto)")
        }
        return type
    }

    /// `type[:x[:y]]` from `index`: a compass point with offsets, `sm` (no arguments after it) or
    /// `fp:x:y` (both 0...1). Empty offsets keep `current`'s.
    func gravity(from index: Int, current: Gravity, allowsSmart: Bool, allowsFocusPoint: Bool = true) throws(Invalid) -> Gravity {
        guard has(index) else { throw Invalid(reason: "\(option): needs a gravity type") }
        if arguments.count > index + 3 { throw Invalid(reason: "\(option): a gravity takes at most a type and two offsets") }
        guard let kind = Gravity.Kind(rawValue: arguments[index]) else {
            throw Invalid(reason: "\(option): unknown gravity \(arguments[index]) (ce, no, so, ea, we, noea, nowe, soea, sowe, sm, fp)")
        }
        var gravity = current
        gravity.kind = kind
        switch kind {
        case .smart:
            guard allowsSmart else { throw Invalid(reason: "\(option): smart gravity is not allowed here") }
            guard arguments.count == index + 1 else { throw Invalid(reason: "\(option): sm takes no offsets") }
            gravity.x = 0
            gravity.y = 0
        case .focusPoint:
            guard allowsFocusPoint else { throw Invalid(reason: "\(option): a focus point is not allowed here") }
            guard arguments.count == index + 3 else { throw Invalid(reason: "\(option): fp needs x and y") }
            if let x = try number(index + 1, atLeast: 0, upTo: 1) { gravity.x = x }
            if let y = try number(index + 2, atLeast: 0, upTo: 1) { gravity.y = y }
        default:
            let bound = Double(Self.maxLength)
            if let x = try number(index + 1, atLeast: -bound, upTo: bound) { gravity.x = x }
            if let y = try number(index + 2, atLeast: -bound, upTo: bound) { gravity.y = y }
        }
        return gravity
    }

    /// `enabled[:gravity[:x[:y]]]` from `index` (extend and extend_aspect_ratio): `nil` when disabled.
    func canvasExtension(current: ProcessingOptions.Extension?, from index: Int = 0) throws(Invalid) -> ProcessingOptions.Extension? {
        if arguments.count > index + 4 { throw Invalid(reason: "\(option): at most 4 extend arguments") }
        guard boolean(index) == true else { return nil }
        var result = current ?? ProcessingOptions.Extension()
        if has(index + 1) {
            result.gravity = try gravity(from: index + 1, current: result.gravity, allowsSmart: false)
        }
        return result
    }

    /// A colour: `rgb` or `rrggbb` hex at `index`; `nil` when empty.
    func color(_ index: Int) throws(Invalid) -> PixelColor? {
        guard has(index) else { return nil }
        let text = arguments[index]
        guard text.count == 3 || text.count == 6, let value = UInt32(text, radix: 16), !text.hasPrefix("+"), !text.hasPrefix("-") else {
            throw Invalid(reason: "\(option): \(text) is not a hex colour (rgb or rrggbb)")
        }
        if text.count == 3 {
            return PixelColor(red: UInt8((value >> 8) & 0xF) * 17, green: UInt8((value >> 4) & 0xF) * 17, blue: UInt8(value & 0xF) * 17)
        }
        return PixelColor(red: UInt8((value >> 16) & 0xFF), green: UInt8((value >> 8) & 0xFF), blue: UInt8(value & 0xFF))
    }

    /// `background`: one hex colour, three decimal channels, or empty (none).
    func background() throws(Invalid) -> PixelColor? {
        switch arguments.count {
        case 0: return nil
        case 1: return try color(0)
        case 3:
            var channels: [UInt8] = []
            for text in arguments {
                guard let value = UInt8(text) else { throw Invalid(reason: "\(option): \(text) is not a channel value 0...255") }
                channels.append(value)
            }
            return PixelColor(red: channels[0], green: channels[1], blue: channels[2])
        default:
            throw Invalid(reason: "\(option): a colour is rrggbb or r:g:b")
        }
    }
}
