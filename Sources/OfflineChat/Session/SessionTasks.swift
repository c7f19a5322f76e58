import OfflineChatLocking

/// The tasks working for one logged-in session (a sync sweep and its retry, an outbox flush and
/// its backoff wake-up, the blocked list's refresh): started through it and cancelled together
/// when the session ends, so none outlives it or needs to ask whether its session is still the
/// current one. A task started after the end never runs.
final class SessionTasks: Sendable {
    private struct State {
        var next = 0
        var running: [Int: Task<Void, Never>] = [:]
        var ended = false
    }

    private let state = Locked(State())

    /// Starts `work` for the session; nil once the session has ended.
    @discardableResult
    func start(_ work: @escaping @Sendable () async -> Void) -> Task<Void, Never>? {
        state.withLock { state in
            guard !state.ended else { return nil }
            state.next += 1
            let id = state.next
            let task = Task { [self] in
                await work()
                _ = self.state.withLock { $0.running.removeValue(forKey: id) }
            }
            state.running[id] = task
            return task
        }
    }

    /// The session ended: cancels every task it started (each stops at its next suspension or
    /// cancellation check) and refuses new ones.
    func cancelAll() {
        let tasks = state.withLock { state in
            state.ended = true
            return Array(state.running.values)
        }
        for task in tasks { task.cancel() }
    }

    /// `cancelAll()`, then returns once every task has returned.
    func end() async {
        cancelAll()
        for task in state.withLock({ Array($0.running.values) }) { await task.value }
    }

    /// Whether the session ended (no task starts any more).
    var hasEnded: Bool { state.withLock { $0.ended } }

    /// Tasks still running.
    var count: Int { state.withLock { $0.running.count } }
}
