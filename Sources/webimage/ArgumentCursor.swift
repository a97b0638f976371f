/// What a command's `parse` gives: the command, or why its arguments are wrong.
enum ParseResult<Command> {
    case success(Command)
    case failure(String)
}

/// Walks a command's arguments in order: each option, then the value after it (`next()` again).
struct ArgumentCursor {
    private let arguments: [String]
    private var index = 0

    init(_ arguments: [String]) {
        self.arguments = arguments
    }

    /// The next argument, or `nil` past the end.
    mutating func next() -> String? {
        guard index < arguments.count else { return nil }
        defer { index += 1 }
        return arguments[index]
    }

    /// Every argument not read yet (consumed).
    mutating func remaining() -> [String] {
        defer { index = arguments.count }
        return Array(arguments[index...])
    }
}
