extension PipelineTransformer {
    /// Creates a pipeline from a short text, as `webimage --transform` takes it: steps separated
    /// by `;`, each `name=arguments` with arguments separated by `,`. Spaces around parts are ignored.
    ///
    /// | step | transformer |
    /// |---|---|
    /// | `resize=WxH[,fill\|fit\|cover]` (or `resize=N` for N×N) | ``ResizingTransformer``; `fit` is aspect fit, `cover` aspect fill, default `fill` |
    /// | `crop=X,Y,WxH` | ``CroppingTransformer`` |
    /// | `round=R[,border=W][,color=C][,corners=tl+tr+bl+br]` | ``RoundCornerTransformer`` |
    /// | `flip=h`, `flip=v`, `flip=hv` | ``FlippingTransformer`` |
    /// | `rotate=DEGREES[,keep]` (clockwise; `keep` keeps the size) | ``RotationTransformer`` |
    /// | `tint=C` | ``TintTransformer`` |
    /// | `blur=R` | ``BlurTransformer`` |
    ///
    /// Colours are `#RRGGBB`, `#RRGGBBAA`, or one of `black`, `white`, `gray`, `red`, `green`,
    /// `blue`, `clear`. Example: `resize=256x256,cover;round=128,border=4,color=#FFFFFF`.
    ///
    /// - Throws: ``ImageTransformError/invalidSpecification(_:)`` naming the step that cannot be read.
    public init(parsing specification: String) throws(ImageTransformError) {
        let steps = specification.split(separator: ";", omittingEmptySubsequences: false)
            .map { $0.trimmingSpaces }
        guard steps.contains(where: { !$0.isEmpty }) else {
            throw .invalidSpecification("the specification is empty; expected steps such as resize=256x256;round=16")
        }
        var transformers: [any ImageTransformer] = []
        for step in steps where !step.isEmpty {
            transformers.append(try Self.transformer(for: step))
        }
        self.init(transformers)
    }

    private static func transformer(for step: String) throws(ImageTransformError) -> any ImageTransformer {
        let parts = step.split(separator: "=", maxSplits: 1).map { $0.trimmingSpaces }
        let name = parts[0].lowercased()
        let arguments = parts.count > 1 ? parts[1].split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingSpaces } : []
        func fail(_ expected: String) -> ImageTransformError {
            .invalidSpecification("cannot read \"\(step)\": expected \(expected)")
        }
        if arguments.contains(where: \.isEmpty) {
            throw .invalidSpecification("cannot read \"\(step)\": an argument between commas is empty")
        }
        switch name {
        case "resize":
            let usage = "resize=WIDTHxHEIGHT[,fill|fit|cover] with positive sizes"
            guard (1...2).contains(arguments.count), let size = size(arguments[0]) ?? square(arguments[0]) else { throw fail(usage) }
            var mode = ResizingTransformer.ScaleMode.fill
            if arguments.count == 2 {
                switch arguments[1].lowercased() {
                case "fill": mode = .fill
                case "fit", "aspectfit": mode = .aspectFit
                case "cover", "aspectfill": mode = .aspectFill
                default: throw fail(usage)
                }
            }
            return ResizingTransformer(size: size, scaleMode: mode)
        case "crop":
            guard arguments.count == 3, let x = Int(arguments[0]), let y = Int(arguments[1]), let size = size(arguments[2]) else {
                throw fail("crop=X,Y,WIDTHxHEIGHT")
            }
            return CroppingTransformer(rect: PixelRect(x: x, y: y, width: size.width, height: size.height))
        case "round":
            let usage = "round=RADIUS[,border=WIDTH][,color=COLOR][,corners=tl+tr+bl+br]"
            guard let first = arguments.first, let radius = number(first) else { throw fail(usage) }
            var corners = RoundCornerTransformer.Corners.all
            var borderWidth = 0.0
            var borderColor = PixelColor.black
            for option in arguments.dropFirst() {
                let pair = option.split(separator: "=", maxSplits: 1).map { $0.trimmingSpaces }
                guard pair.count == 2 else { throw fail(usage) }
                switch pair[0].lowercased() {
                case "border":
                    guard let width = number(pair[1]) else { throw fail(usage) }
                    borderWidth = width
                case "color", "colour":
                    guard let color = color(pair[1]) else { throw fail(usage) }
                    borderColor = color
                case "corners":
                    guard let parsed = cornerSet(pair[1]) else { throw fail(usage) }
                    corners = parsed
                default: throw fail(usage)
                }
            }
            return RoundCornerTransformer(radius: radius, corners: corners, borderWidth: borderWidth, borderColor: borderColor)
        case "flip":
            switch arguments.first?.lowercased() {
            case "h" where arguments.count == 1: return FlippingTransformer(horizontal: true)
            case "v" where arguments.count == 1: return FlippingTransformer(vertical: true)
            case "hv" where arguments.count == 1, "vh" where arguments.count == 1:
                return FlippingTransformer(horizontal: true, vertical: true)
            default: throw fail("flip=h, flip=v or flip=hv")
            }
        case "rotate":
            let usage = "rotate=DEGREES[,keep]"
            guard (1...2).contains(arguments.count), let angle = number(arguments[0]) else { throw fail(usage) }
            if arguments.count == 2 && arguments[1].lowercased() != "keep" { throw fail(usage) }
            return RotationTransformer(angle: angle, fitSize: arguments.count == 1)
        case "tint":
            guard arguments.count == 1, let color = color(arguments[0]) else { throw fail("tint=COLOR (#RRGGBB, #RRGGBBAA or a name)") }
            return TintTransformer(color: color)
        case "blur":
            guard arguments.count == 1, let radius = number(arguments[0]) else { throw fail("blur=RADIUS") }
            return BlurTransformer(radius: radius)
        default:
            throw .invalidSpecification("unknown step \"\(parts[0])\": expected resize, crop, round, flip, rotate, tint or blur")
        }
    }

    /// `WxH` with positive sides.
    private static func size(_ text: String) -> PixelSize? {
        let sides = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard sides.count == 2, let width = Int(sides[0]), let height = Int(sides[1]), width > 0, height > 0 else { return nil }
        return PixelSize(width: width, height: height)
    }

    /// `N` for an N×N square.
    private static func square(_ text: String) -> PixelSize? {
        guard let side = Int(text), side > 0 else { return nil }
        return PixelSize(width: side, height: side)
    }

    /// A finite number.
    private static func number(_ text: String) -> Double? {
        guard let value = Double(text), value.isFinite else { return nil }
        return value
    }

    /// `#RRGGBB`, `#RRGGBBAA` or a colour name.
    private static func color(_ text: String) -> PixelColor? {
        let names: [String: PixelColor] = [
            "black": .black, "white": .white, "clear": .clear,
            "gray": PixelColor(red: 128, green: 128, blue: 128), "red": PixelColor(red: 255, green: 0, blue: 0),
            "green": PixelColor(red: 0, green: 255, blue: 0), "blue": PixelColor(red: 0, green: 0, blue: 255),
        ]
        if let named = names[text.lowercased()] { return named }
        let digits = text.dropFirst()
        guard text.hasPrefix("#"), digits.count == 6 || digits.count == 8, digits.allSatisfy(\.isHexDigit),
              let value = UInt32(digits, radix: 16) else { return nil }
        let rgba = text.count == 7 ? value << 8 | 0xFF : value
        return PixelColor(red: UInt8(rgba >> 24), green: UInt8((rgba >> 16) & 0xFF),
                          blue: UInt8((rgba >> 8) & 0xFF), alpha: UInt8(rgba & 0xFF))
    }

    /// `tl+tr+bl+br` (any of them, or `all`).
    private static func cornerSet(_ text: String) -> RoundCornerTransformer.Corners? {
        var corners: RoundCornerTransformer.Corners = []
        for name in text.lowercased().split(separator: "+") {
            switch name {
            case "tl": corners.insert(.topLeft)
            case "tr": corners.insert(.topRight)
            case "bl": corners.insert(.bottomLeft)
            case "br": corners.insert(.bottomRight)
            case "all": corners.formUnion(.all)
            default: return nil
            }
        }
        return corners.isEmpty ? nil : corners
    }
}

private extension Substring {
    /// The text without leading and trailing spaces.
    var trimmingSpaces: String {
        String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}
