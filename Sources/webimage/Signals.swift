import Dispatch
import Foundation
import WebImage

/// Waiting for Ctrl-C (SIGINT) or SIGTERM without a signal handler of our own: both are ignored as
/// signals and delivered to a dispatch source instead, so the process is never interrupted in the
/// middle of a write.
enum Signals {
    /// Returns when SIGINT or SIGTERM arrives.
    static func waitForTermination() async {
        let queue = DispatchQueue(label: "webimage.signals")
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            var sources: [any DispatchSourceSignal] = []
            let resumed = ResumeOnce(continuation)
            for number in [SIGINT, SIGTERM] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler { resumed.resume() }
                source.resume()
                sources.append(source)
            }
            Keep.sources = sources
        }
    }

    /// The sources stay alive for the rest of the process. `nonisolated(unsafe)`: written once, by the
    /// one call of `waitForTermination` the tool makes, and never read (it only holds references).
    private enum Keep {
        nonisolated(unsafe) static var sources: [any DispatchSourceSignal] = []
    }

}
