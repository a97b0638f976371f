import Testing
@testable import WebImage

@Suite struct PipelineTransformerParsingTests {
    typealias Support = TransformerTestSupport

    /// The only transformer `specification` parses to, as `T`.
    func single<T: ImageTransformer>(_ specification: String, as type: T.Type,
                                     sourceLocation: SourceLocation = #_sourceLocation) throws -> T {
        let pipeline = try PipelineTransformer(parsing: specification)
        try #require(pipeline.transformers.count == 1, sourceLocation: sourceLocation)
        return try #require(pipeline.transformers[0] as? T, sourceLocation: sourceLocation)
    }

    @Test func resizeAndRoundGiveTwoTransformers() throws {
        let pipeline = try PipelineTransformer(parsing: "resize=256x256,fill;round=16")
        #expect(pipeline.transformers.count == 2)
        #expect(pipeline.transformers.map(\.key) == ["ResizingTransformer(256x256,fill)", "RoundCornerTransformer(16.000000,15,0.000000,#000000FF)"])
        #expect(pipeline.key == "ResizingTransformer(256x256,fill)-RoundCornerTransformer(16.000000,15,0.000000,#000000FF)")
        #expect(pipeline.transformers[0] is ResizingTransformer)
        #expect(pipeline.transformers[1] is RoundCornerTransformer)
    }

    @Test(arguments: [
        ("resize=256x256", PixelSize(width: 256, height: 256), ResizingTransformer.ScaleMode.fill),
        ("resize=300x200,fill", PixelSize(width: 300, height: 200), .fill),
        ("resize=300x200,fit", PixelSize(width: 300, height: 200), .aspectFit),
        ("resize=300x200,aspectfit", PixelSize(width: 300, height: 200), .aspectFit),
        ("resize=300x200,cover", PixelSize(width: 300, height: 200), .aspectFill),
        ("resize=300X200,aspectFill", PixelSize(width: 300, height: 200), .aspectFill),
        ("resize=64", PixelSize(width: 64, height: 64), .fill),
        ("resize=64,COVER", PixelSize(width: 64, height: 64), .aspectFill),
    ])
    func resize(specification: String, size: PixelSize, mode: ResizingTransformer.ScaleMode) throws {
        #expect(try single(specification, as: ResizingTransformer.self) == ResizingTransformer(size: size, scaleMode: mode))
    }

    @Test func crop() throws {
        #expect(try single("crop=10,20,100x50", as: CroppingTransformer.self)
            == CroppingTransformer(rect: PixelRect(x: 10, y: 20, width: 100, height: 50)))
        #expect(try single("crop=-4,0,3x7", as: CroppingTransformer.self)
            == CroppingTransformer(rect: PixelRect(x: -4, y: 0, width: 3, height: 7)))
    }

    @Test func round() throws {
        #expect(try single("round=16", as: RoundCornerTransformer.self) == RoundCornerTransformer(radius: 16))
        #expect(try single("round=2.5", as: RoundCornerTransformer.self) == RoundCornerTransformer(radius: 2.5))
        #expect(try single("round=128,border=4,color=#FFFFFF", as: RoundCornerTransformer.self)
            == RoundCornerTransformer(radius: 128, borderWidth: 4, borderColor: .white))
        #expect(try single("round=8,colour=red,border=1.5", as: RoundCornerTransformer.self)
            == RoundCornerTransformer(radius: 8, borderWidth: 1.5, borderColor: PixelColor(red: 255, green: 0, blue: 0)))
        #expect(try single("round=8,corners=tl+br", as: RoundCornerTransformer.self)
            == RoundCornerTransformer(radius: 8, corners: [.topLeft, .bottomRight]))
        #expect(try single("round=8,corners=tr+bl", as: RoundCornerTransformer.self).corners == [.topRight, .bottomLeft])
        #expect(try single("round=8,corners=all", as: RoundCornerTransformer.self).corners == .all)
        #expect(try single("round=8,corners=tl", as: RoundCornerTransformer.self).key
            == "RoundCornerTransformer(8.000000,1,0.000000,#000000FF)")
    }

    @Test func flip() throws {
        #expect(try single("flip=h", as: FlippingTransformer.self) == FlippingTransformer(horizontal: true))
        #expect(try single("flip=v", as: FlippingTransformer.self) == FlippingTransformer(vertical: true))
        #expect(try single("flip=hv", as: FlippingTransformer.self) == FlippingTransformer(horizontal: true, vertical: true))
        #expect(try single("flip=vh", as: FlippingTransformer.self) == FlippingTransformer(horizontal: true, vertical: true))
        #expect(try single("flip=H", as: FlippingTransformer.self) == FlippingTransformer(horizontal: true))
    }

    @Test func rotate() throws {
        #expect(try single("rotate=90", as: RotationTransformer.self) == RotationTransformer(angle: 90, fitSize: true))
        #expect(try single("rotate=45,keep", as: RotationTransformer.self) == RotationTransformer(angle: 45, fitSize: false))
        #expect(try single("rotate=-30.5", as: RotationTransformer.self) == RotationTransformer(angle: -30.5))
        #expect(try single("rotate=45", as: RotationTransformer.self).key == "RotationTransformer(45.000000,1)")
    }

    @Test(arguments: [
        ("tint=#FF000080", PixelColor(red: 255, green: 0, blue: 0, alpha: 128)),
        ("tint=#12ab34", PixelColor(red: 0x12, green: 0xAB, blue: 0x34)),
        ("tint=#12AB34CD", PixelColor(red: 0x12, green: 0xAB, blue: 0x34, alpha: 0xCD)),
        ("tint=black", .black),
        ("tint=white", .white),
        ("tint=Gray", PixelColor(red: 128, green: 128, blue: 128)),
        ("tint=red", PixelColor(red: 255, green: 0, blue: 0)),
        ("tint=green", PixelColor(red: 0, green: 255, blue: 0)),
        ("tint=BLUE", PixelColor(red: 0, green: 0, blue: 255)),
        ("tint=clear", .clear),
    ])
    func tint(specification: String, colour: PixelColor) throws {
        #expect(try single(specification, as: TintTransformer.self) == TintTransformer(color: colour))
    }

    @Test func blur() throws {
        #expect(try single("blur=20", as: BlurTransformer.self) == BlurTransformer(radius: 20))
        #expect(try single("blur=0.5", as: BlurTransformer.self).key == "BlurTransformer(0.500000)")
    }

    @Test func spacesAroundPartsAreIgnored() throws {
        let spaced = try PipelineTransformer(parsing: "  resize = 256x256 , cover ;  round = 16 , border = 2 , color = white ; flip = h ")
        let compact = try PipelineTransformer(parsing: "resize=256x256,cover;round=16,border=2,color=white;flip=h")
        #expect(spaced.key == compact.key)
        #expect(spaced.transformers.count == 3)
        #expect(spaced.key == "ResizingTransformer(256x256,aspectFill)-RoundCornerTransformer(16.000000,15,2.000000,#FFFFFFFF)-FlippingTransformer(1,0)")
    }

    @Test func emptyStepsAndStepNameCaseAreIgnored() throws {
        let pipeline = try PipelineTransformer(parsing: ";BLUR=2;;Rotate=90;")
        #expect(pipeline.transformers.map(\.key) == ["BlurTransformer(2.000000)", "RotationTransformer(90.000000,1)"])
    }

    @Test func everyStepInOneSpecification() throws {
        let pipeline = try PipelineTransformer(
            parsing: "resize=64x48,fit;crop=1,2,30x20;round=4,border=1,color=#00FF00,corners=tl+tr;flip=v;rotate=10,keep;tint=#0000FF40;blur=1.5")
        #expect(pipeline.transformers.map(\.key) == [
            "ResizingTransformer(64x48,aspectFit)",
            "CroppingTransformer(1,2,30x20)",
            "RoundCornerTransformer(4.000000,3,1.000000,#00FF00FF)",
            "FlippingTransformer(0,1)",
            "RotationTransformer(10.000000,0)",
            "TintTransformer(#0000FF40)",
            "BlurTransformer(1.500000)",
        ])
        // The parsed pipeline runs.
        let image = try Support.distinct(80, 60, .rgb8)
        let result = try pipeline.transform(image, forKey: "k")
        #expect(result.size == PixelSize(width: 30, height: 20))
        #expect(result.pixelFormat == .rgba8)
    }

    @Test(arguments: [
        "", " ", ";", " ; ; ",
        "unknown=3", "scale=2", "resize", "resize=", "resize=0x10", "resize=10x0", "resize=-5x10", "resize=abc",
        "resize=10x10x10", "resize=10x", "resize=0", "resize=10x10,stretch", "resize=10x10,fit,fill",
        "crop=1,2", "crop=1,2,3", "crop=a,2,3x4", "crop=1,2,0x4", "crop=1,2,3x4,5",
        "round", "round=", "round=abc", "round=5,border=", "round=5,border=x", "round=5,bogus=1", "round=5,color=#12",
        "round=5,corners=", "round=5,corners=top", "round=5,border",
        "flip", "flip=", "flip=x", "flip=h,v", "flip=hh",
        "rotate", "rotate=", "rotate=abc", "rotate=45,bogus", "rotate=45,keep,keep", "rotate=nan", "rotate=inf",
        "tint", "tint=", "tint=#12", "tint=#1234567", "tint=#GGGGGG", "tint=FF0000", "tint=purple", "tint=#FF0000,#00FF00",
        "blur", "blur=", "blur=x", "blur=1,2", "blur=infinity",
        "resize=10x10;bogus", "resize=10x10;crop=1",
    ])
    func invalidSpecificationsThrow(specification: String) {
        let error = Support.transformError { try PipelineTransformer(parsing: specification) }
        #expect(error?.caseName == "invalidSpecification", "\"\(specification)\" gave \(String(describing: error))")
    }

    @Test(arguments: ["tint=#+12345", "tint=#-00000", "tint=#+1234567", "round=4,border=1,color=#+FFFFF"])
    func signedHexColoursAreRejected(specification: String) {
        // `#RRGGBB` means six hexadecimal digits; `UInt32(_:radix:)` also takes a leading sign.
        let error = Support.transformError { try PipelineTransformer(parsing: specification) }
        #expect(error?.caseName == "invalidSpecification", "\"\(specification)\" gave \(String(describing: error))")
    }

    @Test(arguments: ["crop=1,,2,3x4", "resize=10x10,", "round=4,,border=1"])
    func emptyArgumentsAreRejected(specification: String) {
        let error = Support.transformError { try PipelineTransformer(parsing: specification) }
        #expect(error?.caseName == "invalidSpecification", "\"\(specification)\" gave \(String(describing: error))")
    }

    @Test func errorsNameTheStep() {
        let error = Support.transformError { try PipelineTransformer(parsing: "resize=10x10;flip=x") }
        #expect(error?.description.contains("flip=x") == true)
        let unknown = Support.transformError { try PipelineTransformer(parsing: "sharpen=2") }
        #expect(unknown?.description.contains("sharpen") == true)
    }
}
