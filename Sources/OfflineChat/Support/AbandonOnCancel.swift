import OfflineChatLocking

/// Awaits `operation`, which may not stop when cancelled (the POSIX transport's blocking
/// connect runs on a thread of its own): a cancellation returns at once with
/// `CancellationError`, so whoever awaits the cancelled task (a session's end) is not held up
/// by it, and a result that arrives after that goes to `late` (to close what it opened). The
/// operation's own task is cancelled too: its cancellation checks (a read's before it moves
/// its request's paging) see it, and a transport that can stop does.
func abandoningOnCancel<T: Sendable>(
    _ operation: @escaping @Sendable () async throws -> T, late: @escaping @Sendable (T) -> Void
) async throws -> T {
    let state = Locked(AbandonState<T>())
    let take = { @Sendable in
        state.withLock { state -> CheckedContinuation<T, any Error>? in
            defer { (state.continuation, state.settled) = (nil, true) }
            return state.continuation
        }
    }
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let cancelledAlready = state.withLock { state -> Bool in
                if !state.settled { state.continuation = continuation }
                return state.settled
            }
            guard !cancelledAlready else { return continuation.resume(throwing: CancellationError()) }
            let task = Task {
                let result: Result<T, any Error>
                do { result = .success(try await operation()) } catch { result = .failure(error) }
                if let waiting = take() {
                    waiting.resume(with: result)
                } else if case .success(let value) = result {
                    late(value)
                }
            }
            state.withLock { $0.task = task }
            if Task.isCancelled { task.cancel() }  // a cancellation that came before `task` was set
        }
    } onCancel: {
        take()?.resume(throwing: CancellationError())
        state.withLock { $0.task }?.cancel()
    }
}

/// `abandoningOnCancel`'s one piece of shared state.
private struct AbandonState<T: Sendable> {
    /// The caller's continuation until either side takes it; `settled` once one has.
    var continuation: CheckedContinuation<T, any Error>?
    var settled = false
    /// The operation's task, once started.
    var task: Task<Void, Never>?
}
