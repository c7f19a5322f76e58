import OfflineChatLocking
import Testing

@testable import OfflineChat

/// `abandoningOnCancel`: the caller is free at once; the operation it abandoned is told.
@Suite(.timeLimit(.minutes(1))) struct AbandonOnCancelTests {
    @Test func aCancelledCallerReturnsAtOnceAndTheAbandonedOperationSeesTheCancellation() async throws {
        let entered = AsyncStream<Void>.makeStream()
        let sawCancellation = AsyncStream<Bool>.makeStream()
        let lateValues = AsyncStream<Int>.makeStream()
        let release = Locked<CheckedContinuation<Void, Never>?>(nil)
        let caller = Task {
            try await abandoningOnCancel(
                {
                    // Ignores cancellation while it waits, as a blocking transport does.
                    await withCheckedContinuation { continuation in
                        release.withLock { $0 = continuation }
                        entered.continuation.yield()
                    }
                    sawCancellation.continuation.yield(Task.isCancelled)
                    return 7
                }, late: { lateValues.continuation.yield($0) })
        }
        var inside = entered.stream.makeAsyncIterator()
        _ = await inside.next()
        caller.cancel()
        await #expect(throws: CancellationError.self) { try await caller.value }

        release.withLock { $0 }?.resume()
        var cancelled = sawCancellation.stream.makeAsyncIterator()
        #expect(await cancelled.next() == true, "the abandoned operation's task is cancelled too")
        var late = lateValues.stream.makeAsyncIterator()
        #expect(await late.next() == 7, "its late result goes to `late`")
    }

    @Test func anUncancelledCallerGetsTheResult() async throws {
        let value = try await abandoningOnCancel({ 42 }, late: { _ in Issue.record("nothing is late") })
        #expect(value == 42)
    }
}
