import Foundation
@testable import WebImage

/// A generated image and what the reference implementations give for it: woltapp's C BlurHash
/// (blurhash-python) on its pixels composited over white, evanw's JavaScript ThumbHash (node) on its
/// straight RGBA. Printed by `scripts/placeholder-fixtures.py`; the pixels are made by the same
/// formulas there and here.
struct PlaceholderFixture: Sendable, CustomStringConvertible {
    var name: String
    var width: Int
    var height: Int
    var pixel: @Sendable (_ x: Int, _ y: Int) -> [UInt8]
    var blurHash4x3: String
    var blurHash1x1: String
    var blurHash9x9: String
    var blurHash5x2: String
    /// SHA-256 of the reference decoder's 32×32 RGB drawing of ``blurHash4x3``.
    var blurHashDecodedSHA256: String
    var thumbHashBase64: String
    var thumbHashAverage: (r: Double, g: Double, b: Double, a: Double)
    var thumbHashAspectRatio: Double
    var thumbHashDecoded: (width: Int, height: Int, sha256: String)

    var description: String { name }

    var rgba: [UInt8] {
        var bytes: [UInt8] = []
        for y in 0..<height { for x in 0..<width { bytes += pixel(x, y) } }
        return bytes
    }

    var pixels: PlaceholderPixels { PlaceholderPixels(width: width, height: height, rgba: rgba) }

    func image() throws -> Image { try Image(width: width, height: height, pixelFormat: .rgba8, pixels: rgba) }

    static let all: [PlaceholderFixture] = [
        PlaceholderFixture(
            name: "one", width: 1, height: 1, pixel: { _, _ in [200, 100, 50, 255] },
            blurHash4x3: "L~M|T9}=}=}=}=}=}=}=}=}=}=}=", blurHash1x1: "00M|T9",
            blurHash9x9: "|~M|T9" + String(repeating: "}=", count: 80), blurHash5x2: "D~M|T9}=}=}=}=}=}=}=}=}=",
            blurHashDecodedSHA256: "70cacedf067519ec8dd61589bb470a1254af02c5b2d7c28db5e9aebc688bdb46",
            thumbHashBase64: "Hcs6zzII9wiIh4hwj3CI+AiIgIAICIgA",
            thumbHashAverage: (0.7910052910052909, 0.3941798941798942, 0.1957671957671958, 1.0), thumbHashAspectRatio: 1.0,
            thumbHashDecoded: (32, 32, "1f917f8523db761a66cbe412ae6848e9eb9a24f7da117bcf3f45b7d9cf3e7631")),
        PlaceholderFixture(
            name: "column", width: 1, height: 7, pixel: { _, y in [UInt8(y * 36), UInt8(255 - y * 36), 128, 255] },
            blurHash4x3: "L~FQgJ~p~p~pHQHQHQHQYIYIYIYI", blurHash1x1: "00FQgJ",
            blurHash9x9: "|~FQgJ~p~p~p~p~p~p~p~pHQHQHQHQHQHQHQHQHQYIYIYIYIYIYIYIYIYIyAyAyAyAyAyAyAyAyAP5P5P5P5P5P5P5P5P5x@x@x@x@x@x@x@x@x@P5P5P5P5P5P5P5P5P5x@x@x@x@x@x@x@x@x@P5P5P5P5P5P5P5P5P5",
            blurHash5x2: "D~FQgJ~p~p~p~pHQHQHQHQHQ",
            blurHashDecodedSHA256: "2e01a79fbd694c78e7a69b034a86cf131244cb94a882e53f13c6e0b6d7591198",
            thumbHashBase64: "4LdBATIIiHiIiIh494iICoc=",
            thumbHashAverage: (0.4312169312169311, 0.574074074074074, 0.5185185185185185, 1.0), thumbHashAspectRatio: 0.14285714285714285,
            thumbHashDecoded: (5, 32, "a22fe3f7d40dfb19844bcddee2d1b16237015895fa858e9ed9eca1d4f32bc4b5")),
        PlaceholderFixture(
            name: "row", width: 7, height: 1, pixel: { x, _ in [UInt8(x * 36), UInt8(255 - x * 36), 128, 255] },
            blurHash4x3: "L~FQgJHQYIyA~pHQYIyA~pHQYIyA", blurHash1x1: "00FQgJ",
            blurHash9x9: "|~FQgJ" + String(repeating: "HQYIyAP5x@P5x@P5~p", count: 8) + "HQYIyAP5x@P5x@P5",
            blurHash5x2: "D~FQgJHQYIyAP5~pHQYIyAP5",
            blurHashDecodedSHA256: "a770f3a8abfca06c55aa8b6cead8d00a431a1544ea52a068769bd6c6774ca3e6",
            thumbHashBase64: "4LdBAbJ4iHiIiAiIiIcPiKc=",
            thumbHashAverage: (0.4312169312169311, 0.574074074074074, 0.5185185185185185, 1.0), thumbHashAspectRatio: 7.0,
            thumbHashDecoded: (32, 5, "59b39d2ec9c44c95bf46f8f922848cffa649b441a9f7c1f3e1b5ec91dea9e064")),
        PlaceholderFixture(
            name: "transparent", width: 32, height: 32, pixel: { _, _ in [0, 0, 0, 0] },
            blurHash4x3: "L9TSUA~qfQ~q~qoffQoffQfQfQfQ", blurHash1x1: "00TSUA",
            blurHash9x9: "|9TSUA~qfQ~qfQ~qfQ~qfQ~qoffQoffQoffQoffQfQfQfQfQfQfQfQfQfQ~qoffQoffQoffQoffQfQfQfQfQfQfQfQfQfQ~qoffQoffQoffQoffQfQfQfQfQfQfQfQfQfQ~qoffQoffQoffQoffQfQfQfQfQfQfQfQfQfQ",
            blurHash5x2: "D9TSUA~qfQ~qfQ~qoffQoffQ",
            blurHashDecodedSHA256: "e19c26de3f13b9716a6eb8b17cfba6fc36f19ce673e2db2a4fd84085db8f8065",
            thumbHashBase64: "AAiCBQAAAAAAAAAAAAAAAAAAAAAAAAAAAA==",
            thumbHashAverage: (0.01322751322751318, 0.0, 0.0, 0.0), thumbHashAspectRatio: 1.0,
            thumbHashDecoded: (32, 32, "e04c5a3b8fdb00c5d4e272e9ffdedfd3bc06f30dcf8c3f36a3917ff28b970f15")),
        PlaceholderFixture(
            name: "alphaGradient", width: 16, height: 16, pixel: { x, y in [255, UInt8(y * 17), 0, UInt8(x * 17)] },
            blurHash4x3: "L@TQYh*0gP%Mzykog1j[fje;fjfj", blurHash1x1: "00TQYh",
            blurHash9x9: "|@TQYh*0gP%Mg4%2g4%2g4zykog1j[f*jbf*jbf*fje;fjfjfQfjfQfjf7$*kCfkj[fkj[fkj[fke;fjfjfQfjfQfjfQfj%1kCfkj[fkj[fkj[fkeqfjfjfQfjfQfjf7fj%1kCfkj[fkj[fkj[fkeqfjfjfQfjfQfjfQfj",
            blurHash5x2: "D@TQYh*0gP%Mg4zykog1j[f*",
            blurHashDecodedSHA256: "52f68a95f286a2bf6f6a74ce57a15b3b22969ab134c19627ac5e5cdc0b7d8704",
            thumbHashBase64: "3/2GHQ44eHiwiId4eHiwh/d0cHeIiIiIdw==",
            thumbHashAverage: (0.9867724867724867, 0.49470899470899465, 0.0, 0.5333333333333333), thumbHashAspectRatio: 1.0,
            thumbHashDecoded: (32, 32, "0785197f43564597a4fd058ef3500a84b9e1e14595102eb11073dd5d353b3d9c")),
        PlaceholderFixture(
            name: "gray", width: 20, height: 10, pixel: { x, y in let v = UInt8((x * 13 + y * 7) % 256); return [v, v, v, 255] },
            blurHash4x3: "LYHLl1009F?b%MD%-;Rjj[RjxuM{", blurHash1x1: "00HLl1",
            blurHash9x9: "|YHLl1009F?bD%xuWBfQay%MD%-;RjWBxuM{xuRjj[RjxuM{xuRjofofRj%MRjWBofj[WBt7Rjt7WBWBt7WBj[fQayayof%MRjWBoffQayofayj[j[Rjt7WBj[ofWBofWB%MRjWBofayfQayj[WBWBWBofayayj[ayayj[",
            blurHash5x2: "DYHLl1009F?bD%%MD%-;RjWB",
            blurHashDecodedSHA256: "ba6ed23959043562c412364145aa5e03e6e5febf048be9a9ec5755230322e242",
            thumbHashBase64: "HwgOBIAAS3g4a4h3aHcAAAAAAA==",
            thumbHashAverage: (0.5052910052910051, 0.4894179894179893, 0.4814814814814815, 1.0), thumbHashAspectRatio: 1.75,
            thumbHashDecoded: (32, 18, "49bdff98519610ce810fec3ccc503246e76803fadd23b914247be992e8334d57")),
        PlaceholderFixture(
            name: "colourful", width: 64, height: 48, pixel: { x, y in [UInt8(x * 4), UInt8(y * 5), UInt8(((x + y) * 2) % 256), 255] },
            blurHash4x3: "L#HLF-2R$7SdmAa$jtf8gKfjfQfj", blurHash1x1: "00HLF-",
            blurHash9x9: "|#HLF-2R$7Sdo1bGa{j[a{mAa$jtf8fQf7fQf6fQgKfjfQfjfQfjfQfjfQnja|jtfQfQfQfQfQfQfifRfQfQfQfQfQfQfQoLa{jtfQfQfQfQfQfQf6fRfQfQfQfQfQfQfQoLa{jtfQfQfQfQfQfQe:fRfQfQfQfQfQfQfQ",
            blurHash5x2: "D#HLF-2R$7Sdo1mAa$jtf8fQ",
            blurHashDecodedSHA256: "066be353591938fe7ac3464cb774055d2f05a88aeb687a32d29144cd65632728",
            thumbHashBase64: "XRgODZpwd3eBiIh4iHiIh4iACPeH",
            thumbHashAverage: (0.5, 0.45238095238095233, 0.4285714285714285, 1.0), thumbHashAspectRatio: 1.4,
            thumbHashDecoded: (32, 23, "2ad42de9e08e5657125ee5a3d4d1b10c378b957d10b45f96a8602fa9308357f0")),
        PlaceholderFixture(
            name: "tall", width: 3, height: 100,
            pixel: { x, y in [UInt8((y * 5) % 256), 40, UInt8((x * 100) % 256), y < 50 ? 255 : 128] },
            blurHash4x3: "LsJ=?T^HfI^U56IofRIqNuWVfQWW", blurHash1x1: "00J=?T",
            blurHash9x9: "|~J=?T=rfK=$fK=r~E=rfK9tNGfRNHfRNG9tNGfRS2WVfQWWfQWVS2WVfQKOS#fPSzfPS#KOS#fPwxo1fQo1fQo1wxo1fQwJn%fQn*fQn%wJn%fQS2ayfQazfQayS2ayfQS#W;fPW;fPW;S#W;fPo1jtfQjtfQjto1jtfQ",
            blurHash5x2: "DsJ=?T^HfI^UfI56IofRIqfR",
            blurHashDecodedSHA256: "83e3d7502143152cd206ba11e9574a5a4b56df729514b06279df2151176347f9",
            thumbHashBase64: "VqeKWQgrcGVYN4iPloYHB3h4j4eIWIg=",
            thumbHashAverage: (0.4894179894179893, 0.15608465608465605, 0.40211640211640215, 0.7333333333333333), thumbHashAspectRatio: 0.2,
            thumbHashDecoded: (6, 32, "cb6afec983325027a35529278c46a5d522c2b4c80d80af471072e02cc02ce787")),
    ]
}

/// SHA-256 of bytes, in lower-case hex.
func sha256Hex(_ bytes: [UInt8]) -> String {
    var digest = SHA256()
    bytes.withUnsafeBytes { digest.update($0) }
    return digest.finalize().map { String(format: "%02x", $0) }.joined()
}

/// Mean absolute difference per channel between two same-size images, as RGB (alpha composited over white).
func meanDifference(_ a: Image, _ b: Image) throws -> Double {
    precondition(a.size == b.size)
    let left = try a.placeholderSource(background: .white).pixels, right = try b.placeholderSource(background: .white).pixels
    return Double(zip(left, right).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }) / Double(left.count)
}
