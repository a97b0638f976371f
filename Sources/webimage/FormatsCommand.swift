import WebImage

/// `webimage formats`: every format of the registry, one tab-separated line each: its names (canonical
/// first, comma-separated), media type, file extension, whether a registered coder writes it, its default
/// quality (`-` for none) and its traits. What the corpus check reads to name the formats it checks.
enum FormatsCommand {
    /// `webimage formats` takes no flag and no operand; its help, as every command's.
    static let options = CommandOptions<Void>(
        usage: "webimage formats",
        summary: "every format the registry knows, a tab-separated line each: names, media type, extension, whether the tool "
            + "writes it, default quality, traits",
        options: [])

    static func run(_ arguments: [String]) -> Int32 {
        var nothing: Void = ()
        do {
            try options.parse(arguments, into: &nothing)
        } catch {
            Console.error("webimage formats: \(error.message)\n")
            return 2
        }
        Console.write(lines())
        return 0
    }

    static func lines(registry: ImageFormatRegistry = .shared, coders: CoderRegistry = .shared) -> String {
        let traitNames: [(ImageFormatDescriptor.Traits, String)] = [
            (.alpha, "alpha"), (.animationLoad, "animation-in"), (.animationSave, "animation-out"), (.colorProfile, "icc"),
            (.quality, "quality"), (.highBitDepth, "high-bit-depth"), (.vector, "vector"), (.pages, "pages"),
        ]
        return registry.descriptors.map { descriptor in
            let traits = traitNames.filter { descriptor.traits.contains($0.0) }.map(\.1)
            return [descriptor.names.joined(separator: ","), descriptor.mimeType, descriptor.fileExtension,
                    coders.canEncode(descriptor.format) ? "writes" : "-", descriptor.defaultQuality.map(String.init) ?? "-",
                    traits.isEmpty ? "-" : traits.joined(separator: ",")].joined(separator: "\t") + "\n"
        }.joined()
    }
}
