import Foundation
import Testing
@testable import WebImage

/// `ImageInfo`: stored as JSON and read back whole; rendered as imgproxy-shaped JSON with the fields asked for.
@Suite struct ImageInfoTests {
    let info = ImageInfo(pixelSize: PixelSize(width: 640, height: 480), format: .gif, frameCount: 3, duration: .milliseconds(330),
                         loopCount: 2, byteCount: 12345, hasAlpha: true, orientation: .right,
                         colorProfileName: "Odd \"name\"\\ with\ttabs\u{1}and ünïcödé", blurHash: "LEHV6nWB2yk8pyo0adR*.7kCMdnj",
                         thumbHash: [0x1D, 0xCB, 0x3A, 0xCF, 0x32, 0x08], averageColor: PixelColor(red: 1, green: 2, blue: 3, alpha: 4),
                         dominantColor: PixelColor(red: 250, green: 251, blue: 252))

    @Test func storedFactsReadBackWhole() throws {
        let decoded = try JSONDecoder().decode(ImageInfo.self, from: try JSONEncoder().encode(info))
        #expect(decoded == info)
        var still = info
        (still.duration, still.colorProfileName) = (nil, nil)
        #expect(try JSONDecoder().decode(ImageInfo.self, from: try JSONEncoder().encode(still)) == still)
        #expect(throws: (any Error).self) { try JSONDecoder().decode(ImageInfo.self, from: Data("{\"format\":1}".utf8)) }
    }

    @Test func everyFieldIsValidJSONInImgproxysShape() throws {
        let json = info.json(.all)
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        #expect(object["width"] as? Int == 640 && object["height"] as? Int == 480 && object["orientation"] as? Int == 6)
        #expect(object["format"] as? String == "gif" && object["mime_type"] as? String == "image/gif" && object["size"] as? Int == 12345)
        #expect(object["alpha"] as? Bool == true && object["pages_number"] as? Int == 3 && object["loop_count"] as? Int == 2)
        #expect(object["duration_ms"] as? Int == 330 && object["blurhash"] as? String == info.blurHash)
        #expect(object["color_profile"] as? String == info.colorProfileName, "quotes, backslashes, tabs and control characters escaped")
        #expect(object["thumbhash"] as? String == "Hcs6zzII" && object["thumb_hash"] == nil)
        #expect(object["average"] as? [String: Int] == ["R": 1, "G": 2, "B": 3, "A": 4])
        #expect(object["dominant_color"] as? [String: Int] == ["R": 250, "G": 251, "B": 252, "A": 255])
        let sorted = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        #expect(try JSONSerialization.jsonObject(with: sorted) as? NSDictionary == object as NSDictionary)
        #expect(String(decoding: json, as: UTF8.self).hasPrefix("{\"alpha\":true,\"average\""), "keys in sorted order")
    }

    @Test func onlyTheFieldsAskedForAreWritten() throws {
        let standard = try #require(try JSONSerialization.jsonObject(with: info.json(.standard)) as? [String: Any])
        #expect(Set(standard.keys) == ["width", "height", "orientation", "format", "mime_type", "size", "blurhash", "thumbhash", "dominant_color"])
        let hex = try #require(try JSONSerialization.jsonObject(with: info.json([.hexThumbHash])) as? [String: Any])
        #expect(hex as NSDictionary == ["thumb_hash": "1DCB3ACF3208"] as NSDictionary)
        #expect(info.json([]) == Data("{}".utf8))
    }
}
