import Foundation
import OfflineChat
import OfflineChatLocking

/// A clock that moves only when a test says so. Sleepers resume, in deadline order, when
/// `advance(by:)` passes their deadline; `waitForSleepers(_:)` lets a test wait until the
/// code under test has reached its sleep, without sleeping itself.
public final class ManualClock: ChatClock, Sendable {
    private struct Sleeper {
        let id: UInt64
        let deadline: Int64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var current: Int64
        var sleepers: [Sleeper] = []
        var nextID: UInt64 = 0
        var cancelledIDs: Set<UInt64> = []
        var waiters: [(id: UUID, count: Int, continuation: CheckedContinuation<Void, Never>)] = []

        /// The waiters whose count of sleepers has been reached, removed.
        mutating func takeWaiters() -> [CheckedContinuation<Void, Never>] {
            let ready = waiters.filter { $0.count <= sleepers.count }.map(\.continuation)
            waiters.removeAll { $0.count <= sleepers.count }
            return ready
        }
    }

    private let state: Locked<State>

    /// A clock standing at `now` (epoch milliseconds) until a test advances it.
    public init(now: Int64 = 1_800_000_000_000) { state = Locked(State(current: now)) }

    public func now() -> Int64 { state.withLock { $0.current } }

    public func sleep(milliseconds: Int64) async throws {
        try Task.checkCancellation()
        guard milliseconds > 0 else { return }
        let id = state.withLock {
            $0.nextID += 1
            return $0.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // A cancellation that came before this sleeper existed found nothing to remove.
                let ready = state.withLock { state -> [CheckedContinuation<Void, Never>]? in
                    if state.cancelledIDs.remove(id) != nil { return nil }
                    state.sleepers.append(
                        Sleeper(id: id, deadline: state.current + milliseconds, continuation: continuation))
                    return state.takeWaiters()
                }
                guard let ready else { return continuation.resume(throwing: CancellationError()) }
                ready.forEach { $0.resume() }
            }
        } onCancel: {
            let cancelled = state.withLock { state in
                let cancelled = state.sleepers.firstIndex { $0.id == id }.map { state.sleepers.remove(at: $0) }
                if cancelled == nil { state.cancelledIDs.insert(id) }
                return cancelled
            }
            cancelled?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward and wakes every sleeper whose deadline has come.
    public func advance(by milliseconds: Int64) {
        let due = state.withLock { state in
            state.current += milliseconds
            let now = state.current
            let due = state.sleepers.filter { $0.deadline <= now }.sorted { $0.deadline < $1.deadline }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// How many tasks are sleeping on this clock.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// Returns once at least `count` tasks are sleeping on this clock.
    /// Returns early when the waiting task is cancelled (a test's time limit), so a missing
    /// sleeper fails the test instead of hanging it.
    public func waitForSleepers(_ count: Int = 1) async {
        let id = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state in
                    if state.sleepers.count >= count || Task.isCancelled { return true }
                    state.waiters.append((id, count, continuation))
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let cancelled = state.withLock { state in
                defer { state.waiters.removeAll { $0.id == id } }
                return state.waiters.filter { $0.id == id }
            }
            cancelled.forEach { $0.continuation.resume() }
        }
    }

    /// The earliest pending deadline, relative to now.
    public var nextDeadline: Int64? {
        state.withLock { state in state.sleepers.map(\.deadline).min().map { $0 - state.current } }
    }
}
