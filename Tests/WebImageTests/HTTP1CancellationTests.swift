import Foundation
import Synchronization
import Testing
@testable import WebImage

/// Cancelling an exchange of the own HTTP/1.1 client ends the worker's blocking call at once, while
/// it connects too: a listener whose accept queue is full drops the SYN of a further connect, which
/// then waits for the kernel's retransmissions (the exchange's deadline here: a minute).
@Suite struct HTTP1CancellationTests {
    /// A listener on 127.0.0.1 with a backlog of 0 that never accepts, its queue filled by one
    /// connection: the next connect to it hangs.
    final class FullListener {
        let listener: Int32
        let filler: Int32
        let port: Int

        init() throws {
            let (listener, port) = try bindLoopbackSocket()
            guard listen(listener, 0) == 0 else {
                close(listener)
                throw FixtureError("cannot listen")
            }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            guard connected else {
                close(filler)
                close(listener)
                throw FixtureError("cannot fill the accept queue")
            }
            self.listener = listener
            self.filler = filler
            self.port = port
        }

        deinit {
            close(filler)
            close(listener)
        }
    }

    @Test func cancellingWhileConnectingEndsTheExchange() async throws {
        let listener = try FullListener()
        let cancellation = HTTP1Cancellation()
        let request = HTTP1Client.Request(method: "GET", url: URL(string: "http://127.0.0.1:\(listener.port)/a.png")!, headers: [])
        let outcome = Mutex<Result<Void, HTTP1Error>?>(nil)
        HTTP1Client.shared.run {
            let result = HTTP1Client.shared.exchange(request, deadline: .now + .seconds(60), cancellation: cancellation,
                                                     onHead: { _ in true }, onBody: { _ in true })
            outcome.withLock { $0 = result }
        }
        try await Task.sleep(for: .milliseconds(300))
        #expect(outcome.withLock { $0 } == nil, "the connect hangs: the listener's queue is full")
        cancellation.cancel()
        var waited = 0
        while outcome.withLock({ $0 }) == nil && waited < 1000 {
            try await Task.sleep(for: .milliseconds(10))
            waited += 1
        }
        let result = outcome.withLock { $0 }
        guard case .failure(.cancelled) = result else {
            Issue.record("expected a cancelled exchange within 10 s of the cancel (the deadline is a minute away), got \(String(describing: result))")
            return
        }
        withExtendedLifetime(listener) {}
    }

    @Test func anExchangeCancelledBeforeItConnectsNeverConnects() async throws {
        let cancellation = HTTP1Cancellation()
        cancellation.cancel()
        let listener = try FullListener()
        let request = HTTP1Client.Request(method: "GET", url: URL(string: "http://127.0.0.1:\(listener.port)/")!, headers: [])
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, HTTP1Error>, Never>) in
            HTTP1Client.shared.run {
                continuation.resume(returning: HTTP1Client.shared.exchange(request, deadline: .now + .seconds(60), cancellation: cancellation,
                                                                           onHead: { _ in true }, onBody: { _ in true }))
            }
        }
        guard case .failure(.cancelled) = result else {
            Issue.record("expected cancelled, got \(result)")
            return
        }
        withExtendedLifetime(listener) {}
    }
}
