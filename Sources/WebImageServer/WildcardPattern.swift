/// One of imgproxy's wildcard patterns (`IMGPROXY_ALLOWED_SOURCES`, `IMGPROXY_URL_REPLACEMENTS`):
/// matched at the start of a text, each `*` standing for a run of characters other than `/`, as
/// imgproxy's `RegexpFromPattern` builds it (`^`, then the literal parts joined by `([^/]*)`). Matched
/// here by hand, greedily as Go's regexp does, so no pattern text is ever compiled as a regex.
public struct WildcardPattern: Sendable, Hashable {
    /// The literal parts between the stars (one more than the stars).
    let parts: [Substring]

    /// The pattern `text`; every character but `*` is literal.
    public init(_ text: String) {
        parts = text.split(separator: "*", omittingEmptySubsequences: false)
    }

    /// The length (in characters) of the longest prefix of `text` the pattern matches and what each
    /// star took, or `nil` when `text` does not start with a match.
    func prefixMatch(in text: Substring) -> (length: Int, captures: [Substring])? {
        match(parts[...], in: text, consumed: 0)
    }

    /// Whether `text` starts with a match.
    public func matchesPrefix(of text: String) -> Bool { prefixMatch(in: Substring(text)) != nil }

    private func match(_ parts: ArraySlice<Substring>, in text: Substring, consumed: Int) -> (length: Int, captures: [Substring])? {
        guard let literal = parts.first, text.hasPrefix(literal) else { return nil }
        let rest = text.dropFirst(literal.count)
        guard parts.count > 1 else { return (consumed + literal.count, []) }
        let run = rest.prefix { $0 != "/" }
        var taken = run.count
        while taken >= 0 {   // greedy: the longest run that lets the rest match
            if let tail = match(parts.dropFirst(), in: rest.dropFirst(taken), consumed: consumed + literal.count + taken) {
                return (tail.length, [rest.prefix(taken)] + tail.captures)
            }
            taken -= 1
        }
        return nil
    }
}
