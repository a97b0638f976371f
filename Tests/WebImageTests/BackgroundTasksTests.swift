import Synchronization
import Testing
@testable import WebImage

/// Unstructured tasks counted until they end, and waiting for none to run.
@Suite struct BackgroundTasksTests {
    @Test func waitUntilIdleReturnsOnlyOnceEveryTaskHasEnded() async throws {
        let tasks = BackgroundTasks()
        await tasks.waitUntilIdle()   // none: returns at once
        let finished = Mutex(0)
        for index in 0..<10 {
            tasks.start {
                try? await Task.sleep(for: .milliseconds(5 * index))
                finished.withLock { $0 += 1 }
            }
        }
        #expect(tasks.count > 0)
        await tasks.waitUntilIdle()
        #expect(finished.withLock { $0 } == 10)
        #expect(tasks.count == 0)
    }
}
