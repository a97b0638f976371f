import Foundation
import Testing
import CGIF
@testable import WebImage

/// Inputs the fuzzers in `Fuzz/` found breaking library code, minimized. Each test feeds its input
/// to the API the fuzzer called and expects what the fuzzer checked: no crash, and a result that
/// keeps the API's contract.
@Suite struct FuzzRegressionTests {
    /// fuzz-filename, minimized input `2f 2f f7`: `"//"` and a byte that is not UTF-8 (U+FFFD after
    /// the fuzzer's lenient decoding). `URL(string:)` refuses the key, and before cb9d66b
    /// `pathExtension(ofKey:)` then called `NSString.pathExtension`, which traps in
    /// swift-corelibs-foundation (`NSString._stringByFixingSlashes`: index out of bounds, or
    /// "Substring index is out of bounds"). Passes since cb9d66b (`plainPathExtension`).
    @Test(arguments: [
        String(decoding: [0x2F, 0x2F, 0xF7] as [UInt8], as: UTF8.self), // the minimized input: "//\u{FFFD}"
        "http://[//é",                                                     // a malformed URL of the same shape
    ])
    func fileNameOfANonURLKeyWithDoubleSlashAndNonASCIIDoesNotCrash(key: String) {
        let name = DiskCacheFileName.make(forKey: key)
        #expect(name.hasPrefix(MD5.hex(Array(key.utf8))))
        #expect(DiskCacheFileName.make(forKey: key) == name)
    }

    /// fuzz-filename, minimized input `00 2e 3a 2f d6 ae`: NUL, `.`, `:`, `/`, U+05AE (a combining
    /// mark). `URL(string:)` refuses the key; `plainPathExtension` splits on the *Character* `/`,
    /// but `/` followed by a combining mark (or a ZWJ) is one Character, so the extension is
    /// `:/\u{5AE}`, and the filter that strips `:`, `\0` and `/` compares Characters too: the name
    /// becomes `<md5>./\u{5AE}`. A file name with a `/` puts the entry in a directory that does not
    /// exist, so the key could never be stored. The extension is now parsed and cleaned as UTF-8 bytes.
    @Test(arguments: [
        String(decoding: [0x00, 0x2E, 0x3A, 0x2F, 0xD6, 0xAE] as [UInt8], as: UTF8.self), // minimized
        "http://[/a./\u{301}",                                                              // readable
    ])
    func fileNameNeverContainsASlashOrNUL(key: String) {
        let name = DiskCacheFileName.make(forKey: key)
        let bytes = Array(name.utf8)
        #expect(!bytes.contains(UInt8(ascii: "/")), "file name \(name.debugDescription)")
        #expect(!bytes.contains(0), "file name \(name.debugDescription)")
        #expect(bytes.count <= 255)
        #expect(name.hasPrefix(MD5.hex(Array(key.utf8))))
    }

    /// fuzz-jpeg (differential check), input minimized by libFuzzer to 3,456 bytes from a mutant of
    /// Pillow's `hopper.jpg`: a 128×128 baseline JPEG whose scan has corrupt Huffman data
    /// (`djpeg`: "Corrupt JPEG data: bad Huffman code"). `JPEGCoder.decode` and the incremental decoder
    /// both succeed, but rows of their pixels differ (rows 8… for this input; the un-minimized input
    /// differed in 18 rows from row 31) whenever the bytes arrive in more than one chunk: 1,000-byte
    /// chunks, 64-byte chunks, or just 3,000 + 456 bytes. All at once, they agree. This breaks the
    /// documented contract of ``IncrementalDecoder`` ("The final image equals a full decode of the
    /// same bytes, byte for byte"), presumably because libjpeg-turbo decodes corrupt entropy data
    /// differently on its suspending (slow) path than with the whole buffer (fast path). Passes since
    /// 6a3c55a (the incremental decoder decodes the whole input again when libjpeg warned).
    @Test(arguments: [1000, 64, 3000])
    func jpegIncrementalDecodeOfCorruptHuffmanDataEqualsFullDecode(chunkSize: Int) throws {
        let data = try #require(Data(base64Encoded: Self.corruptHuffmanJPEG, options: .ignoreUnknownCharacters))
        let options = DecodeOptions(pixelCountLimit: 16 * 1024 * 1024)
        let full = try JPEGCoder().decode(data, options: options)
        let decoder = JPEGCoder().makeIncrementalDecoder(options: options)
        for start in stride(from: 0, to: data.count, by: chunkSize) {
            try decoder.append(data[start..<min(start + chunkSize, data.count)])
        }
        let incremental = try decoder.finish()
        try #require(incremental.size == full.size && incremental.pixelFormat == full.pixelFormat)
        let differingRows = (0..<full.height).filter { y in
            full.withUnsafeRow(y) { a in incremental.withUnsafeRow(y) { b in !a.elementsEqual(b) } }
        }
        #expect(differingRows.isEmpty, "rows \(differingRows) differ from the full decode")
    }

    /// fuzz-png, input `crash-8a4a7d87…` (76 bytes, base64 below): it starts `00 00 02 00`, which
    /// sniffs as an ICO/CUR file. `PNGCoder.decode` sniffs first and throws
    /// `unsupportedFormat(.ico)`; the incremental decoder fed libpng at once and threw
    /// `corruptData(png, "Not a PNG file")`, so the failure was not "the same failure" the
    /// ``IncrementalDecoder`` contract promises. The incremental decoder now holds bytes that do not
    /// start with PNG's signature and decides the error as the full decode does (sniffing up to
    /// 1 KB: an SVG may show itself late).
    @Test(arguments: [[17, 44, 12, 2, 1], [1], [76]])
    func pngIncrementalDecodeOfAnotherFormatFailsAsTheFullDecode(chunking: [Int]) throws {
        let ico = try #require(Data(base64Encoded: "AAACAEVORK5CYANzQklUBAQEd/i1owAAAAZQTFRFAP8A/3cAseWlnwAASUVOREFUeJxjYIADBwAATABB2snmHAAAAABJRU5ErkJggg=="))
        let svg = Data((String(repeating: " ", count: 600) + "<svg xmlns=\"http://www.w3.org/2000/svg\"/>" + String(repeating: " ", count: 600)).utf8)
        let notAnImage = Data("plain text, longer than a PNG signature".utf8)
        for (data, expected) in [(ico, ImageCodingError.unsupportedFormat(.ico)), (svg, .unsupportedFormat(.svg))] {
            #expect(throws: expected) { try PNGCoder().decode(data) }
            #expect(throws: expected) { try Self.decodeIncrementally(data, chunking: chunking) }
        }
        let full = Result { try PNGCoder().decode(notAnImage) }
        let incremental = Result { try Self.decodeIncrementally(notAnImage, chunking: chunking) }
        guard case .failure(let fullError as ImageCodingError) = full,
              case .failure(let incrementalError as ImageCodingError) = incremental else {
            Issue.record("both must fail: \(full), \(incremental)")
            return
        }
        #expect(incrementalError == fullError)
    }

    /// fuzz-png, input `crash-73b3b52f…` (198 bytes, base64 below): a 32×32 RGBA PNG whose only IDAT
    /// declares 36,096 bytes but is cut after 157, with bytes after the image's last row that zlib
    /// rejects. Fed at once, libpng inflates them and fails ("Truncated compressed data in IDAT",
    /// corrupt); fed a byte or two at a time, it stops after the last row and the file just ends
    /// (truncated). The incremental decoder now lets a full decode of the received bytes decide a
    /// failed decode.
    @Test(arguments: [[1], [1, 1, 1, 1, 2, 2, 2, 1], [3], [7], [198]])
    func pngIncrementalDecodeOfADamagedZlibTailEndsAsTheFullDecode(chunking: [Int]) throws {
        let data = try #require(Data(base64Encoded: """
            iVBORw0KGgoAAAANSUhEUgAAACAAAAAgCAQAAAGudILpAACNAElEQVRIx+2PQQqEMAxFX6AL3XVu0B7FHtyjOHMCdeW2LpQKdYYM\
            iKJiQmhI///5kQgVgWBqplg3Eh1BwzTg8EumH3Loz4FEm/gOjzfvnHLIQFqwWF5ZpW7FQJPcAfDZfYXE4tv1S5lOW9FrgEfhOiZl\
            gGLOMnv/mZTqBi3UG1SBGzO4wQmPgzM42CowAuxPPQknV+Y4AAAAAElFTkSuQmCC
            """))
        let full = Result { try PNGCoder().decode(data) }
        let incremental = Result { try Self.decodeIncrementally(data, chunking: chunking) }
        switch (full, incremental) {
        case (.failure(let a as ImageCodingError), .failure(let b as ImageCodingError)):
            #expect(a == b)
        case (.success(let a), .success(let b)):
            #expect(a.pixels == b.pixels)
        default:
            Issue.record("full decode \(full), incremental \(incremental)")
        }
    }

    /// fuzz-png, input `crash-978e5986…` (80 bytes, base64 below): a 32×32 palette PNG at depth 1 cut
    /// inside its only IDAT. Fed at once, libpng inflates what there is and the file just ends
    /// (truncated); fed as 77, 2 and 1 bytes, its progressive reader inflates a row whose filter
    /// byte is bad and fails at ``IncrementalDecoder/append(_:)`` (corrupt). A failed `append` now
    /// lets a full decode decide: of the bytes so far when it decodes them, else of every byte at
    /// ``IncrementalDecoder/finish()``.
    @Test(arguments: [[77, 2, 1], [1], [80]])
    func pngIncrementalDecodeThatFailsMidwayEndsAsTheFullDecode(chunking: [Int]) throws {
        let data = try #require(Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAACAAAAAgAQMAAAE+s9ghAAAABlBMVEXu/yIiZv9sGtImAAAAKUlEQVQI12NggIIPULgKCkPRsLExw5ldYII="))
        #expect(throws: ImageCodingError.truncatedData(format: .png)) { try PNGCoder().decode(data) }
        #expect(throws: ImageCodingError.truncatedData(format: .png)) { try Self.decodeIncrementally(data, chunking: chunking) }
    }

    /// Feeds `data` to a PNG incremental decoder in pieces of the sizes in `chunking` (the last
    /// size repeating), then finishes.
    static func decodeIncrementally(_ data: Data, chunking: [Int]) throws -> Image {
        let decoder = PNGCoder().makeIncrementalDecoder(options: DecodeOptions())
        var offset = 0, index = 0
        while offset < data.count {
            let size = chunking[min(index, chunking.count - 1)]
            try decoder.append(data[offset..<min(offset + size, data.count)])
            offset += size
            index += 1
        }
        return try decoder.finish()
    }

    /// The minimized fuzz-jpeg input (SHA-1 b56ef5fc85749136d53372d50182a659bc26e291).
    static let corruptHuffmanJPEG = """
        /9hJLjAA/9sAQwAEAwMDAwIEAwMDBAQEBQYKBgYFBQYMCAkHCg4MDw4ODA0NDxEWEw8QFRENDRMaExUXGBkZGQ8SGx0bGB0W
        GBkY/9sAQwEEBAQGBQYLBgYLGBANEBgYGBgYGBgYGBgYGBgYGBgYGBgYGBgYGBgYGBgYGBgYGBgYGBgYGBgYGBgYGBgYGBgY
        /8AAEQgAgACAAwEiAAIRAQMRAf/EAB0AAAEEAwEBAAAAAAAAAAAAAAcCBQYIAQMEAAn/xAA/EAABAwMDAgQDBgMGBQUAAAAB
        AgMEBQYRABIhBzETAAAAAAAAAAAygZGhI0LBITEFQVEGEyJhcYGhsdHh8BQjkcEkMlLC/9oADAMBAAIRAxEAPwClysiItXbc
        sf011k454MmY0YPjpPmaQ6UpWUn57cgW5bEnQIt1+3tuRuYDKSD6gjvg6Gnnz6aOqapZURNljORQxNE6J5Y7UJHh4P8ATSSM
        Kxnn21sGc5Pz17CQQrGrF1EtkZ3wnd2OPUDTgJCXMEoGA1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NT
        U1NTU1NTU1NTU1NTU1NTU1NTU/////////8AU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NT
        U1NTU1NTU1NTU1NTU1NTpfPt91z/AJV7PkZC2peRrbw9iuPwhzka8Y45yMac/syT6aypkBPA10DEgOybDHAHCc6yhjn5e+u/
        whjnjXg0Mcd/fTw5LZUjkKxBUn5kdtbm8KjjJxznvqY9VrIiWNfCbKp0p6oS2tvjPrT4YcWs+RKU+gCSnnPcnt21E6rBfo85
        2mSlNF9le1zwl7wlXqMjgkHg49dCMFSyR2IHIgWRa+NzMiuKareRjBAH9NOFs27VLsuiDb1FY8aZLcCEA/hQPVSj6JA5J9tc
        9Np7tYrcantvNtqkLS34jp8qATjJ9tXs6WdMLbsG3Iv3W0l+oPtZkVFwZW8cZ4/wp+SR+eTzqnW1gjx21U8FM59nEdEnVdFJ
        6eUCjfbK44N1akyWWnJBWdhWmL4YCU9gnBJ+fJ51xSKUigOx6Uytb7LrH8TxPxhZJ3H27nUmueoGk2LMqyWw6qNMS4E//VIz
        +mdReZeVnyrlodHpVPfamVFK5X2kt7UnaANhV/Me/bOAnXMLOfExw/yPALoNNNhLmE5XPj7qUUCtw7Tt9wm1PvFcVBcbqVVu
        c2FmZVJhkgfIadLIvSk1SW/V6hPpjE6YlLv2dp0KLCNvkbV1ArijTJVxQKK8gIoq8yZCjwHEhXlR9M8n2BGt0qL0muKU6xOq
        lJalP5C5LOGndwH/AMicH27+mliNwOpaTow4XAzPapleXUKjUOtxp9MrlMTIOGpEV9eC6kqASoEcgpKvkeD9NZnVGS/CclSo
        8VqY8nCBCc8ROPTKikHnQ/egdLUU9+jxKzSXGXmjGPnAccSfQrPJ5wc576TY9LuCnQ32ahM+1w4iw3HlK/8AdRjKT7nBx37g
        6WQg1tiMwnZynM1COzJUN1QjSw+haVY8JOCk5HyPYD1P56bylJXlKQkDOAkcD9NO8av0ipUqSuBDAlw1ORXnnWgk7wSPKe6u
        M/T19NNKT8wc510HkPSlolnI4AeZ8wub8tKzHzVODpcnv0/azt5OvFPHI9e2s57aSoKUrnR+gOySUBR51gN69nGe+lIWc6eC
        lsqg3L1Jrd2XhSbju1DFUlwn0qU4U+GuQ2lwLDaynuByArGcHknUQ2hhcmFjdGXy6Ijj6nGUujzJQVEgH3A402yMZQk6dIFH
        lTnG3FNKbjkf3lq9fSe6mbi6X094rzLioLEgf50jv+YIP56px4DMampbaTtQO2ij0XuNdNuKXTHFkRZcNatuf50JKsj327v2
        0K1dYZZHSbtF0luwGwUAgJu8dLv391ke7zHj2ymO4CW1TMqR6LHh+vtoF1ey2rRuaFd1AqEhbLUtKnYkrKwhKjtJQv0GD2I/
        PRbvmcafc0SLIf2tqhIeUB2wGSCfr5Toax7vonUDq3b3TSi7Z8OZOU5U3kcpGMJ1vWkntpG3TwvKk9nUyJXOptv0eekriy6g
        ww6kHBUhTgBGfTgnV1epvTKDVbAAQKF8FBS8kKB/fTz1Z6sXD1Bvapqbq8xq3/FLUSntuqSyWkK8ilIBwpRxuJOTk47Aa5rW
        x8/Ja/Rsj7Z9Y+heJkJvb+BMk+4YCIvgtLW8oeqRx+p1og33UaPPbmUhhDUhtKkhx0bxykpPHbsT3zqMEJxrWTxqBtFE3UXW
        hVcp6+cmzg0EWyG7tNyn24ryum7paZVyV2ZUFpQEJS6vCUgdgEjAH6an3wx1Fml/FhZkp9KihUtxgnAI/PVmOJjG4GAAcAsF
        0jnuxPNz1q4lToEu3mHbKrLniz6I59mW8kYDzJ8zLoHoFII+hyM8aGtctpmo1xfIWnxAFZHp8v2Orx3hYFJ6n2FBuy32WhWh
        EQqK8TtEtgjeGVn5EKykn8JPyKs1jr/TytT6imZS4kzLS1B5rwV72lJSpOxWBwc8HQrU076aY20OiOKGsjqoQDqMiPnFQ6jU
        Gn06J4aUJZaceAPZPA559tFjrBFZsf4GbgmTm/BqVdEeI0hYwoJW6khPsfDStRHsB6alfRToQ7VHoVyXh5qfCcK48RXJkvjJ
        qWPRCCMBJ5WtLqJd9oJQmj1Z0RQcmG//ABGSP+0/h+qcH31DQ158fLXW2NicZGfkNEcMjmOu02KFXNa4WcLqytr/ABDUKagM
        XTT3aY/6vx0l5k+5H4k/TCvrom0m8LVuEoRRq/Aluq5DKXQHMf8AYcK/bVIs9s414ugKCgSCDkEdx9Na8W1pW5PF1Sk2bG7N
        psr6K8qeR+etCiAo8Y1WawOs9fo1ThUiuyvvCkuOpbW9JJU9HSTjIXnkDvg54HGNWXcJGNbtJVMqW4mbllz07oHWcgr8U1pw
        6bcsK+IAU3ImLLMvHALiR5Fj32pOfoNVvz5cZ1a/4tJSU2jSIufM7PKxj5JQrP7qGqm8jtx765zROLowSjOvAbJYJR5Gc6So
        D07ayPnjWFApUQrVpUFjPAHfSkE5GO/trGB31n+YEZ04Ly+gXT34r7b66UV8rU0BtccxylpKFN5Pcnyj1IqXcPX7q9dFRlSa
        EQDuBIlOKcUxFmLYZTk/hS2ggBI9BqAQ4cioSWYsZh1991QaaaaSVKWongAIuc+mvph8OnwvWRTJ9dedknAk5qnnw6fEVX+i
        17eHMdlVC056/wD1CnBW4oIBEtoE4Dg4z2CgMHnaQNOoF4VHqB1MrV51Y/2qqSlyCjdkNpzhCB7JSEpHsBqxvxuUTpjbNy2/
        b9j25TKVVUIdfl/dzKWUhokJQFBPBJUlePlg/PVT0pUkeY99etkkJzXto9MaWsJSnP8ArpBbc3ZCiPbXnHPCTt/Eo6kbomrO
        UkYwOffWpznO3A+msEqS6DjSXF8k9tPuvJCleUDuNXS6dV9N09NaRVd+54shl/JyfFR5VE/Ujd9CNUpUrnjjVjPhmqjjtIrt
        FcWSlh5uS2k/5wUq/wBif11p7Hmwz4Nzv0qO0I8UWLgt6pbVOB5QiQ+pPsooSn/arVbTnPPfRl+Jqorm9bPs5PliQWmce5Up
        Z/3aDIPI/wDzQ1SDDE0LbrXYpnK4XRroD0tuv4anLtuyJL++vCdcadYaZAqlXiFYylLE5k4zjulbZP76qTCua5Kchtqn3BVI
        yGvwIZlOISn6AHGpBD6udTKfgxb0qicei3PE/wBwOrIAUAc3gib1X+Gt2yrXcr9q1KRVY8XKpcd/YXENgZ3pKe4GDkY7ar/g
        qIIOiBM639TajRZVLn3H9qjSmVsOpXFaBKVApIyEgjjPOh2Dg4PPtpwTX23KX9P7nfs3qFSLmZG8wZKXFIxncjssD3KSr9df
        UO8us6KX0pjyaK/GTLfgGUZbiwG2GUo3F338oyB3OvkmFKJ8upVUb+uCqWhFoEyc843HjphJ8wEAAAgpLePYhP5JA0rs7WSx
        loviSLsuqpXjd864atJckSpTm4qcSlI4SPyAA0yrGRlXfvrQ0FbtyhgepPGuuG5FE1K5bTjrIOShCsFX56c4i2iawY3AE2vv
        Kk1l2BcV6Slu02ly3aVEW2qozmkApvb0+iU9TQZnxmqgrbNSCk4WB6ZB/XTrN+IOnP0+ox49ovseMhtER0VDJjAFBcAGzCt/
        8bOcn+KdQwvdI3E9paeGXuiBjqGiDSMM2LW4cMNuwjXXflbQqAXf0guah1Z77ppsuZTWw22ZSyhJD3hoU62RkcpWsp7fLUQr
        tnXPbtKiVKtUl2JFmKww6tSS0/8AlqIyTc9hw9DPP82/SSopNm/Q/UMm++TcsANgDuBI3dpy61CwlR5OjR8Ns77N1OmwVYxL
        gKT/AKbtBz0A/fRD6IzUQ+ulCK1YS6p1k+5U0sJH/ljWvQOLJ2HrQtUi8bh1L//ZsFWMS4Ck/wCm7Qc9AP30Q+iM1EPrpQit
        WEuqdZPuVNLCR/5Y1r0Diydh60LVIvG4dS//2V/hrdsq13K/atSkVWPFyqXHf2FxDYGd6SnuBg5GO2q/J2HrQtUi8bh1L//Z
        """

    /// fuzz-gif, four timeouts (e.g. a 290 KB GIF fed in 1-byte chunks): each append walked every
    /// block of the file so far, so a file trickling in byte by byte cost time quadratic in its size
    /// (each input decodes in under 0.3 s whole). The walk now resumes where it stopped: its position
    /// never goes back, it agrees with the whole-file walk, and a byte-by-byte decode equals the full one.
    @Test func theIncrementalGIFWalkResumesWhereItStopped() throws {
        let data = try Data(contentsOf: Corpus.root.appendingPathComponent("gif/valid/wuffs/animated-red-blue.gif"))
        let bytes = [UInt8](data)
        var state = CGIFScanState()
        var previous = 0
        for end in 1...bytes.count {
            _ = bytes.withUnsafeBufferPointer { cgif_scan_more($0.baseAddress!, end, &state) }
            #expect(state.next >= previous)
            previous = state.next
        }
        var whole = CGIFInfo()
        _ = bytes.withUnsafeBufferPointer { cgif_scan($0.baseAddress!, bytes.count, &whole) }
        #expect(state.info.complete_frame_count == whole.complete_frame_count && whole.complete_frame_count == 4)
        #expect(state.info.loop_count == whole.loop_count && state.info.canvas_width == whole.canvas_width)

        let decoder = GIFCoder().makeIncrementalDecoder(options: DecodeOptions())
        for index in data.indices { try decoder.append(data[index..<(index + 1)]) }
        let final = try decoder.finish()
        #expect(final.frames.map { $0.image.rgbaSHA256() } == (try GIFCoder().decode(data)).frames.map { $0.image.rgbaSHA256() })
    }
}

extension FuzzRegressionTests {
    /// fuzz-png: an APNG whose IHDR had been damaged (a width of 1258356736, its CRC no longer
    /// matching) made the full decode say `imageTooLarge` from the animation's own header walk, where
    /// the incremental decoder, streaming through libpng, said `IHDR: CRC error`. A damaged IDAT CRC
    /// likewise decoded whole (each frame is re-wrapped with a fresh CRC) but failed incrementally. Now
    /// libpng reads the whole file first in both, and its verdict stands.
    @Test(arguments: ["IHDR", "IDAT"])
    func aDamagedAnimatedPNGFailsTheSameWayWholeAndIncrementally(_ chunk: String) throws {
        var bytes = [UInt8](try Data(contentsOf: Corpus.root.appendingPathComponent("png/valid/wuffs/animated-red-blue.apng")))
        let at = try #require(bytes.indices.first { bytes[$0..<min($0 + 4, bytes.count)].elementsEqual(chunk.utf8) })
        if chunk == "IHDR" {
            bytes.replaceSubrange((at + 4)..<(at + 8), with: [0x4B, 0x00, 0x00, 0x40])   // the width, CRC left as it was
        } else {
            let length = Int(bytes[at - 4]) << 24 | Int(bytes[at - 3]) << 16 | Int(bytes[at - 2]) << 8 | Int(bytes[at - 1])
            bytes[at + 4 + length] ^= 0xFF                                              // the CRC
        }
        let data = Data(bytes)
        let full = Result { try PNGCoder().decode(data) }
        let decoder = PNGCoder().makeIncrementalDecoder(options: DecodeOptions())
        let incremental = Result { () throws -> Image in
            for start in stride(from: 0, to: data.count, by: 64) { try decoder.append(data[start..<min(start + 64, data.count)]) }
            return try decoder.finish()
        }
        guard case .failure(let a) = full, case .failure(let b) = incremental else {
            Issue.record("both decodes must fail: full \(full), incremental \(incremental)")
            return
        }
        #expect("\(a)" == "\(b)")
        #expect("\(a)".contains("CRC"))
    }
}
