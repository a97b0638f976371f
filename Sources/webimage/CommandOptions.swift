/// Why a command's arguments cannot be used: the text printed after `webimage COMMAND: `.
struct ArgumentError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// One flag of a command, declared once: ``CommandOptions`` parses it and prints it in the help,
/// with its value and default, from this same declaration (the help cannot drift from the parser).
struct CommandOption<Command>: Sendable {
    /// The flag, such as `--port`.
    let name: String
    /// The value's placeholder in the help (`N`, `DIR`); `nil` for a switch that takes none.
    let value: String?
    /// What a wrong or missing value is told it needs ("`--port` needs …").
    let need: String
    /// The default, as the help prints it; `nil`: none worth printing.
    let defaultValue: String?
    /// What the flag does, one or two sentences.
    let help: String
    /// Applies the value (empty for a switch): `false` when it is not valid (the message is ``need``);
    /// it may throw a message of its own.
    let apply: @Sendable (inout Command, String) throws(ArgumentError) -> Bool

    /// A switch: no value.
    static func flag(_ name: String, help: String, _ set: @escaping @Sendable (inout Command) -> Void) -> Self {
        CommandOption(name: name, value: nil, need: "", defaultValue: nil, help: help) { command, _ in
            set(&command)
            return true
        }
    }

    /// A flag followed by a value.
    static func value(_ name: String, _ placeholder: String, need: String, default defaultValue: String? = nil, help: String,
                      _ apply: @escaping @Sendable (inout Command, String) throws(ArgumentError) -> Bool) -> Self {
        CommandOption(name: name, value: placeholder, need: need, defaultValue: defaultValue, help: help, apply: apply)
    }

    /// This option applied to the part of a larger command at `path` (the Redis and S3 flags that
    /// `fetch` and `serve` share).
    func lifted<Outer>(_ path: WritableKeyPath<Outer, Command> & Sendable) -> CommandOption<Outer> {
        let apply = self.apply
        return CommandOption<Outer>(name: name, value: value, need: need, defaultValue: defaultValue, help: help) { outer, text throws(ArgumentError) in
            try apply(&outer[keyPath: path], text)
        }
    }
}

/// A command's flags and operands, declared once: ``parse(_:into:)`` reads arguments with them and
/// ``help`` prints them, every flag with its value and default.
struct CommandOptions<Command>: Sendable {
    /// The synopsis after `usage: `, such as `webimage decode [options] FILE...`.
    let usage: String
    /// What the command does.
    let summary: String
    let options: [CommandOption<Command>]
    /// Takes an operand (an argument that is not a flag, and every argument after `--`); `nil`: the
    /// command takes none.
    var operand: (@Sendable (inout Command, String) throws(ArgumentError) -> Void)?
    /// Text printed after the flags (an environment, a grammar).
    var epilogue = ""

    /// Applies `arguments` to `command` in order.
    /// - Throws: ``ArgumentError``: an unknown flag, a missing or wrong value, an operand where none is taken.
    func parse(_ arguments: [String], into command: inout Command) throws(ArgumentError) {
        var index = 0
        var operandsOnly = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if !operandsOnly, argument == "--" {
                operandsOnly = true
                continue
            }
            if operandsOnly || !argument.hasPrefix("-") || argument == "-" {
                guard let operand else { throw ArgumentError(message: "unexpected argument \(argument)") }
                try operand(&command, argument)
                continue
            }
            guard let option = options.first(where: { $0.name == argument }) else { throw ArgumentError(message: "unknown option \(argument)") }
            var text = ""
            if option.value != nil {
                guard index < arguments.count else { throw ArgumentError(message: "\(option.name) needs \(option.need)") }
                text = arguments[index]
                index += 1
            }
            guard try option.apply(&command, text) else { throw ArgumentError(message: "\(option.name) needs \(option.need)") }
        }
    }

    /// `usage: …`, the summary, then a line per flag (`--name VALUE`, what it does, its default).
    var help: String {
        var text = "usage: \(usage)\n\n" + Self.indented(summary, by: 2) + "\n"
        if !options.isEmpty { text += "\noptions:\n" }
        for option in options {
            let head = "  " + option.name + (option.value.map { " " + $0 } ?? "")
            var body = option.help
            if let defaultValue = option.defaultValue { body += " (default \(defaultValue))" }
            text += head.count < 26 ? head.padding(toLength: 26, withPad: " ", startingAt: 0) + Self.wrapped(body, indent: 26)
                : head + "\n" + String(repeating: " ", count: 26) + Self.wrapped(body, indent: 26)
            text += "\n"
        }
        if !epilogue.isEmpty { text += "\n" + epilogue + (epilogue.hasSuffix("\n") ? "" : "\n") }
        return text
    }

    /// `text` with every line indented by `count` spaces.
    private static func indented(_ text: String, by count: Int) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { String(repeating: " ", count: count) + $0 }.joined(separator: "\n")
    }

    /// `text` broken into lines of at most 110 columns, the lines after the first indented by `indent`.
    private static func wrapped(_ text: String, indent: Int) -> String {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty, indent + line.count + 1 + word.count > 110 {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        lines.append(line)
        return lines.joined(separator: "\n" + String(repeating: " ", count: indent))
    }
}
