import Foundation
import Synchronization
import Testing
@testable import WebImage

/// ``WakeChannel``: one wake-up wakes one wait, whether it comes before or during it; a wait with
/// no wake-up ends when its time runs out.
@Suite struct WakeChannelTests {
    @Test func aWakeUpBeforeTheWaitIsKeptForIt() throws {
        let channel = try #require(WakeChannel())
        channel.wake()
        #expect(channel.wait(timeout: .seconds(10)))
        #expect(!channel.wait(timeout: .milliseconds(20)), "one wake-up wakes one wait")
    }

    @Test func aWakeUpFromAnotherThreadEndsAWait() throws {
        let channel = try #require(WakeChannel())
        let woken = Mutex<Bool?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            let result = channel.wait(timeout: nil)
            woken.withLock { $0 = result }
            done.signal()
        }.start()
        usleep(20_000)
        #expect(woken.withLock { $0 } == nil, "the wait blocks until the wake-up")
        channel.wake()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(woken.withLock { $0 } == true)
    }

    @Test func twoWakeUpsWakeTwoWaits() throws {
        let channel = try #require(WakeChannel())
        channel.wake()
        channel.wake()
        #expect(channel.wait(timeout: .seconds(10)))
        #expect(channel.wait(timeout: .seconds(10)))
        #expect(!channel.wait(timeout: .zero))
    }
}
