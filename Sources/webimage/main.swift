// webimage: the command-line face of the WebImage package.
//
//   webimage                      load the bundled samples through the pipeline twice, write thumbnails
//   webimage decode [options] FILE...
//   webimage fetch [options] URL...
//   webimage info [--json] FILE|URL...
//   webimage cache stats|sweep|clear|fill [DIR | --cache-dir DIR]
//   webimage serve [options]      an image server (imgproxy URLs) on libmicrohttpd
//   webimage formats              every format the registry knows, and which ones the tool writes
//   webimage health [URL]         exit 0 when the server answers /health with 200 (a container's check)
//   webimage help [serve]
import Foundation
import WebImage
import WebImageAVIF
import WebImageHEIF
import WebImageJXL
import WebImageSVG
import WebImageTIFF
import WebImageWebP

// The tool reads and writes every format it has a coder for: the core's PNG, JPEG and GIF, WebP, AVIF, HEIF, JPEG XL, TIFF, SVG (read only).
CoderRegistry.shared.add(WebPCoder())
CoderRegistry.shared.add(AVIFCoder())
CoderRegistry.shared.add(HEIFCoder())
CoderRegistry.shared.add(JXLCoder())
CoderRegistry.shared.add(TIFFCoder())
CoderRegistry.shared.add(SVGCoder())

let arguments = Array(CommandLine.arguments.dropFirst())
let status: Int32
if let command = arguments.first, arguments.count >= 2, ["--help", "-h"].contains(arguments[1]), let help = Usage.help(for: command) {
    Console.write(help)   // webimage COMMAND --help
    Console.flush()
    exit(0)
}
switch arguments.first {
case nil:
    status = await DemoCommand().run()
case "decode":
    status = DecodeCommand.run(Array(arguments.dropFirst()))
case "fetch":
    status = await FetchCommand.run(Array(arguments.dropFirst()))
case "info":
    status = await InfoCommand.run(Array(arguments.dropFirst()))
case "cache":
    status = await CacheCommand.run(Array(arguments.dropFirst()))
case "serve":
    status = await ServeCommand.run(Array(arguments.dropFirst()))
case "formats":
    status = FormatsCommand.run(Array(arguments.dropFirst()))
case "health":
    status = await HealthCommand.run(Array(arguments.dropFirst()))
case "help", "-h", "--help":
    if let command = arguments.dropFirst().first {
        if let help = Usage.help(for: command) {
            Console.write(help)
            status = 0
        } else {
            Console.error("webimage: no command '\(command)'\n\n" + Usage.text)
            status = 2
        }
    } else {
        Console.write(Usage.text)
        status = 0
    }
default:
    Console.error("webimage: unknown command '\(arguments[0])'\n\n" + Usage.text)
    status = 2
}
Console.flush()
exit(status)
