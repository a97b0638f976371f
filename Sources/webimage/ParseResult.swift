/// What a command's `parse` gives: the command, or why its arguments are wrong.
enum ParseResult<Command> {
    case success(Command)
    case failure(String)
}
