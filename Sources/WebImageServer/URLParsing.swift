/// How a server reads its URLs beyond imgproxy's grammar: imgproxy's URL settings
/// (``ImageServerConfig/urlParsing``). Every default is imgproxy's.
public struct URLParsing: Sendable, Equatable {
    /// A source rewrite (`IMGPROXY_URL_REPLACEMENTS`, `pattern=replacement` pairs separated by `;`):
    /// the prefix the pattern matches is replaced, `${1}`, `${2}`… standing for what its stars took.
    public struct Replacement: Sendable, Hashable {
        /// What is matched at the start of a source URL.
        public var pattern: WildcardPattern
        /// What the match is replaced with.
        public var replacement: String

        /// A rewrite of what `pattern` matches into `replacement`.
        public init(pattern: WildcardPattern, replacement: String) {
            self.pattern = pattern
            self.replacement = replacement
        }
    }

    /// Put before every source URL that does not already start with it, after the replacements
    /// (`IMGPROXY_BASE_URL`); default empty.
    public var baseURL = ""
    /// Applied in order to every source URL (`IMGPROXY_URL_REPLACEMENTS`); default none.
    public var replacements: [Replacement] = []
    /// What separates an option's arguments (`IMGPROXY_ARGUMENTS_SEPARATOR`); default `:`.
    public var argumentsSeparator: Character = ":"
    /// Whether a base64 source may be followed by a `/filename` segment, which is ignored
    /// (`IMGPROXY_BASE64_URL_INCLUDES_FILENAME`); default `false`.
    public var base64IncludesFilename = false
    /// Whether the options part is one segment of preset names, separated by the arguments
    /// separator (`IMGPROXY_ONLY_PRESETS`); default `false`.
    public var onlyPresets = false
    /// The option names (as written in URLs, short or long) a URL may use; presets may use any
    /// (`IMGPROXY_ALLOWED_PROCESSING_OPTIONS`); default empty: every option.
    public var allowedProcessingOptions: Set<String> = []

    /// imgproxy's defaults.
    public init() {}

    /// `url` rewritten by the replacements, then with the base URL put before it.
    func preprocessed(_ url: String) -> String {
        var url = url
        for rule in replacements {
            guard let match = rule.pattern.prefixMatch(in: Substring(url)) else { continue }
            url = Self.substituting(match.captures, into: rule.replacement) + url.dropFirst(match.length)
        }
        return baseURL.isEmpty || url.hasPrefix(baseURL) ? url : baseURL + url
    }

    /// `template` with `${N}` (and `$N`) replaced by the Nth capture, as Go's `Regexp.Expand`
    /// (a group that does not exist stands for nothing).
    static func substituting(_ captures: [Substring], into template: String) -> String {
        var result = "", rest = Substring(template)
        while let dollar = rest.firstIndex(of: "$") {
            result += rest[..<dollar]
            var after = rest[rest.index(after: dollar)...]
            let braced = after.first == "{"
            if braced { after = after.dropFirst() }
            let digits = after.prefix { $0.isASCII && $0.isNumber }
            if digits.isEmpty || (braced && !after.dropFirst(digits.count).hasPrefix("}")) {
                result += "$"
                rest = rest[rest.index(after: dollar)...]
                continue
            }
            if let index = Int(digits), index >= 1, index <= captures.count { result += captures[index - 1] }
            rest = after.dropFirst(digits.count + (braced ? 1 : 0))
        }
        return result + rest
    }
}
