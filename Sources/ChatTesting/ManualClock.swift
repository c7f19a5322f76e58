import Foundation
import OfflineChat

/// A clock that moves only when a test says so. Sleepers resume, in deadline order, when
/// `advance(by:)` passes their deadline; `waitForSleepers(_:)` lets a test wait until the
/// code under test has reached its sleep, without sleeping itself.
public final class ManualClock: ChatClock, @unchecked Sendable {  // all state is under `lock`
    private struct Sleeper {
        let id: UInt64
        let deadline: Int64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private let lock = NSLock()
    private var current: Int64
    private var sleepers: [Sleeper] = []
    private var nextID: UInt64 = 0
    private var cancelledIDs: Set<UInt64> = []
    private var waiters: [(id: UUID, count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    public init(now: Int64 = 1_800_000_000_000) { current = now }

    public func now() -> Int64 {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    public func sleep(milliseconds: Int64) async throws {
        try Task.checkCancellation()
        guard milliseconds > 0 else { return }
        let id: UInt64 = {
            lock.lock()
            defer { lock.unlock() }
            nextID += 1
            return nextID
        }()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                lock.lock()
                // A cancellation that came before this sleeper existed found nothing to remove.
                if cancelledIDs.remove(id) != nil {
                    lock.unlock()
                    continuation.resume(throwing: CancellationError())
                    return
                }
                sleepers.append(Sleeper(id: id, deadline: current + milliseconds, continuation: continuation))
                let ready = takeWaiters()
                lock.unlock()
                ready.forEach { $0.resume() }
            }
        } onCancel: {
            lock.lock()
            let cancelled = sleepers.firstIndex { $0.id == id }.map { sleepers.remove(at: $0) }
            if cancelled == nil { cancelledIDs.insert(id) }
            lock.unlock()
            cancelled?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward and wakes every sleeper whose deadline has come.
    public func advance(by milliseconds: Int64) {
        lock.lock()
        current += milliseconds
        let due = sleepers.filter { $0.deadline <= current }.sorted { $0.deadline < $1.deadline }
        sleepers.removeAll { $0.deadline <= current }
        lock.unlock()
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// How many tasks are sleeping on this clock.
    public var sleeperCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return sleepers.count
    }

    /// Returns once at least `count` tasks are sleeping on this clock.
    /// Returns early when the waiting task is cancelled (a test's time limit), so a missing
    /// sleeper fails the test instead of hanging it.
    public func waitForSleepers(_ count: Int = 1) async {
        let id = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                lock.lock()
                if sleepers.count >= count || Task.isCancelled {
                    lock.unlock()
                    continuation.resume()
                    return
                }
                waiters.append((id, count, continuation))
                lock.unlock()
            }
        } onCancel: {
            lock.lock()
            let cancelled = waiters.filter { $0.id == id }
            waiters.removeAll { $0.id == id }
            lock.unlock()
            cancelled.forEach { $0.continuation.resume() }
        }
    }

    /// The earliest pending deadline, relative to now.
    public var nextDeadline: Int64? {
        lock.lock()
        defer { lock.unlock() }
        return sleepers.map(\.deadline).min().map { $0 - current }
    }

    private func takeWaiters() -> [CheckedContinuation<Void, Never>] {
        let ready = waiters.filter { $0.count <= sleepers.count }.map(\.continuation)
        waiters.removeAll { $0.count <= sleepers.count }
        return ready
    }
}
