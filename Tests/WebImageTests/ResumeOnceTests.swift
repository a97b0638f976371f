import Dispatch
import Synchronization
import Testing
@testable import WebImage

/// "Whichever comes first": many threads race to resume one continuation; exactly one wins and its value arrives.
@Suite struct ResumeOnceTests {
    @Test func manyRacingResumersResumeOnce() async {
        let wins = Atomic<Int>(0)
        let value = await withCheckedContinuation { (continuation: CheckedContinuation<Int, Never>) in
            let once = ResumeOnce(continuation)
            DispatchQueue.concurrentPerform(iterations: 64) { index in
                if once.resume(returning: index) { wins.add(1, ordering: .relaxed) }
            }
        }
        #expect(wins.load(ordering: .relaxed) == 1 && (0..<64).contains(value))
    }
}
