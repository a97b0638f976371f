import Synchronization

/// What an ``ImageServer`` and its ``ImageRequestHandler`` share while it runs: whether it drains
/// (`/health` answers 503 then) and the port it listens on (the demo page's sample URLs name it).
final class ServerState: Sendable {
    private let draining = Atomic<Bool>(false)
    private let listeningPort = Atomic<UInt16>(0)

    /// Whether the server stopped accepting and is finishing the requests under way.
    var isDraining: Bool { draining.load(ordering: .relaxed) }
    /// The port it listens on; 0 before it listens.
    var port: UInt16 { listeningPort.load(ordering: .relaxed) }

    func startDraining() {
        draining.store(true, ordering: .relaxed)
    }

    func listens(on port: UInt16) {
        listeningPort.store(port, ordering: .relaxed)
    }
}
