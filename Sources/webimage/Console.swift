import Foundation

/// Buffered writes to standard output and standard error for the tool.
enum Console {
    static func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }

    static func flush() {
        fflush(nil)
    }
}
