import Foundation

/// Reads an HTTP `Retry-After` header: delay-seconds or an HTTP date (RFC 9110 §10.2.3).
enum RetryAfter {
    /// The delay the header asks for (zero for a date in the past), or `nil` if it is malformed.
    static func duration(from value: String, now: Date = Date()) -> Duration? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(text), seconds >= 0 { return .seconds(seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        // IMF-fixdate, then the two obsolete forms recipients must still accept (RFC 9110 §5.6.7).
        let date = ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"].lazy.compactMap { format in
            formatter.dateFormat = format
            return formatter.date(from: text)
        }.first
        guard let date else { return nil }
        return .milliseconds(Int(max(0, date.timeIntervalSince(now)) * 1000))
    }
}
