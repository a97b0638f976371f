/// The help text of the `webimage` tool: each command's is generated from the flags it declares
/// (``CommandOptions/help``), so what the help says is what the parser reads.
enum Usage {
    /// Every command with flags or operands, and its help (`webimage help COMMAND`, `webimage COMMAND --help`).
    static let commands: [(name: String, help: String)] = [
        ("decode", DecodeCommand.options.help), ("fetch", FetchCommand.options.help), ("info", InfoCommand.options.help),
        ("serve", ServeCommand.options.help), ("cache", CacheCommand.options.help), ("health", HealthCommand.options.help),
        ("formats", FormatsCommand.options.help),
    ]

    /// The help of `command`, or `nil` for a command the tool does not have.
    static func help(for command: String) -> String? {
        commands.first { $0.name == command }?.help
    }

    /// `webimage help`: the main job, every command's help, and the grammar of `--transform`.
    static var text: String {
        """
        usage: webimage                     load the sample images shipped with the package through the whole pipeline
                                            twice (file URLs, a temporary disk cache; the second pass comes from the
                                            cache), print a table, and write a PNG thumbnail of each, derived from the
                                            cached originals, into ./webimage-samples/
               webimage help [COMMAND]      this text, or one command's (also: webimage COMMAND --help)


        """ + commands.map(\.help).joined(separator: "\n") + "\n" + transformGrammar
    }

    /// The grammar of `--transform SPEC` (decode, fetch).
    static let transformGrammar = """
    SPEC (for --transform): steps separated by ';', applied in order, each NAME=ARGS with ARGS split by ','
      resize=WxH[,fill|fit|cover]   stretch (default), fit inside, or cover and crop the overflow; resize=N is NxN
      crop=X,Y,WxH                  keep a rectangle (clipped to the image)
      round=R[,border=W][,color=C][,corners=tl+tr+bl+br]   round corners (anti-aliased; adds alpha)
      flip=h|v|hv                   mirror left-right, top-bottom, or both
      rotate=DEGREES[,keep]         turn clockwise; the canvas grows to fit unless 'keep'
      tint=C                        wash with a colour (its alpha is the strength)
      blur=R                        Gaussian blur with standard deviation R pixels
      colours C: #RRGGBB, #RRGGBBAA, black, white, gray, red, green, blue, clear
      example: --transform "resize=256x256,cover;round=128,border=4,color=white"

    """
}
