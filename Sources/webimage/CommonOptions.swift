import Foundation
import WebImage

/// The flags several commands share, declared once for any command that has the property.
extension CommandOption {
    /// `--thumbnail N`: decode to fit inside N × N pixels.
    static func thumbnail(_ path: WritableKeyPath<Command, Int?> & Sendable, help: String) -> Self {
        .value("--thumbnail", "N", need: "a positive pixel size", help: help) { command, text in
            guard let size = Int(text), size > 0 else { return false }
            command[keyPath: path] = size
            return true
        }
    }

    /// `--transform SPEC`: a ``PipelineTransformer`` (the grammar is in `webimage help`).
    static func transform(_ path: WritableKeyPath<Command, PipelineTransformer?> & Sendable, help: String) -> Self {
        .value("--transform", "SPEC", need: "a specification such as resize=256x256;round=16", help: help) { command, text throws(ArgumentError) in
            let transformer: PipelineTransformer
            do throws(ImageTransformError) { transformer = try PipelineTransformer(parsing: text) } catch {
                throw ArgumentError(message: error.description)
            }
            command[keyPath: path] = transformer
            return true
        }
    }

    /// A flag naming a folder (`--out DIR`, `--cache-dir DIR`).
    static func folder(_ name: String, _ path: WritableKeyPath<Command, URL?> & Sendable, default defaultValue: String? = nil,
                       help: String) -> Self {
        .value(name, "DIR", need: "a directory", default: defaultValue, help: help) { command, text in
            command[keyPath: path] = URL(fileURLWithPath: text, isDirectory: true)
            return true
        }
    }
}
