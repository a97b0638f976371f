import Foundation

extension WebImageManager {
    /// What ``shutdown(loadsInFlight:)`` does with the loads under way.
    public enum LoadsInFlight: Sendable, Hashable {
        /// Let them finish (their callers get their results) before shutting down.
        case finish
        /// Cancel them: every caller gets ``WebImageError/cancelled(url:)`` at once.
        case cancel
    }

    /// Where the manager is in its life.
    enum Lifecycle {
        case running
        /// A shutdown is under way; later callers of ``shutdown(loadsInFlight:)`` wait for this task.
        case shuttingDown(Task<Void, Never>)
        case shutDown
    }

    /// Stops the manager for good, the way a server stops before it exits (async-http-client's
    /// `shutdown()`, Nuke's `invalidate()`):
    ///
    /// 1. new loads throw ``WebImageError/shutDown(url:)`` from now on (memory hits too);
    /// 2. the loads (and variant encodes) under way finish or are cancelled, as `loadsInFlight` says
    ///    (default ``LoadsInFlight/finish``);
    /// 3. the disk writes loads did not wait for are finished (so a process that exits next keeps them);
    /// 4. the cache is shut down (``ImageCaching/shutdown()``: an ``ImageCache`` finishes its own
    ///    background writes and stops its sweep timer and memory-pressure monitors), then the loader
    ///    (``ImageLoader/shutdown()``: a ``Downloader`` cancels what is left and invalidates its
    ///    URLSessions; a ``LoadersManager`` shuts down each of its loaders).
    ///
    /// The cache and loader are the ones the manager was created with, so shutting down
    /// ``shared`` shuts down ``ImageCache/shared`` and ``Downloader/shared``: give a manager that
    /// must stop while others go on a cache and loader of its own. Calling it again, or while it
    /// runs, waits for the first call to end. Never throws; not cancellable (a shutdown that stopped
    /// halfway would lose writes).
    public func shutdown(loadsInFlight: LoadsInFlight = .finish) async {
        let (task, starts): (Task<Void, Never>?, Bool) = lifecycle.withLock { state in
            switch state {
            case .shutDown:
                return (nil, false)
            case .shuttingDown(let task):
                return (task, false)
            case .running:
                setHotFlag(.shutDown, true)
                let task = Task { await self.performShutdown(loadsInFlight: loadsInFlight) }
                state = .shuttingDown(task)
                return (task, true)
            }
        }
        await task?.value
        if starts { lifecycle.withLock { $0 = .shutDown } }
    }

    /// Whether ``shutdown(loadsInFlight:)`` has been called.
    public var isShutDown: Bool { hotFlags.load(ordering: .relaxed) & HotFlag.shutDown.rawValue != 0 }

    /// Runs the background work of the manager's cache (the disk sweeps of an ``ImageCache``) in the
    /// calling task until that task is cancelled, then shuts the manager down
    /// (``shutdown(loadsInFlight:)`` with ``LoadsInFlight/finish``) and returns. The shape
    /// swift-service-lifecycle's `Service.run()` wants (see the README).
    public func run() async {
        await cache.run()
        await shutdown(loadsInFlight: .finish)
    }

    private func performShutdown(loadsInFlight: LoadsInFlight) async {
        // Closed under the coalescer's lock: a load that passed the flag check just before it was set
        // either registered already (and is waited for) or is refused now.
        variants.close()
        facts.close()
        coalescer.close()
        if loadsInFlight == .cancel {
            variants.cancelAll()
            facts.cancelAll()
            coalescer.cancelAll()
        }
        // Variants and facts first: they load through the coalescer and store through backgroundWrites.
        await variants.waitUntilIdle()
        await facts.waitUntilIdle()
        await coalescer.waitUntilIdle()
        await backgroundWrites.waitUntilIdle()
        await cache.shutdown()
        await loader.shutdown()
    }
}
