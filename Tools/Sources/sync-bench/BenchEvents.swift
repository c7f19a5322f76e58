import ChatTesting
import Foundation
import OfflineChat
import OfflineChatCache
import OfflineChatLocking

/// Sync events, awaited in order, with the timing of each sweep's phases.
final class BenchEvents: SyncListener, ConversationListener, Sendable {
    private let stream: AsyncStream<String>
    private let continuation: AsyncStream<String>.Continuation
    private let sweeps: AsyncStream<(Int, SyncOutcome)>
    private let sweepContinuation: AsyncStream<(Int, SyncOutcome)>.Continuation

    init() {
        (stream, continuation) = AsyncStream<String>.makeStream()
        (sweeps, sweepContinuation) = AsyncStream<(Int, SyncOutcome)>.makeStream()
    }

    /// Per sweep: when the page had been fetched (progress 60) and when it was merged.
    let fetchedAt = Locked<[UInt64]>([])
    let mergedAt = Locked<[UInt64]>([])
    /// Per sweep: when the message phase asked for its page.
    let messagesStarted = Locked<[UInt64]>([])
    /// Per sweep: the conversation phase's start and end.
    let conversationsStarted = Locked<[UInt64]>([])
    let conversationsDone = Locked<[UInt64]>([])

    func onConversationSyncStarted() {
        conversationsStarted.withLock { $0.append(DispatchTime.now().uptimeNanoseconds) }
    }
    func onConversationSyncCompleted(_ conversations: [Conversation]) {
        conversationsDone.withLock { $0.append(DispatchTime.now().uptimeNanoseconds) }
    }

    func onMessageSyncStarted() { messagesStarted.withLock { $0.append(DispatchTime.now().uptimeNanoseconds) } }

    func onSyncServerProgress(_ progress: Int) {
        if progress == 60 { fetchedAt.withLock { $0.append(DispatchTime.now().uptimeNanoseconds) } }
    }

    func onSyncServerFinish(reInstall: Bool) { continuation.yield("finish") }
    func onMessageSyncCompleted(_ messages: [BaseMessage], _ outcome: SyncOutcome) {
        mergedAt.withLock { $0.append(DispatchTime.now().uptimeNanoseconds) }
        sweepContinuation.yield((messages.count, outcome))
    }

    /// Seconds spent merging (from each page fetched to its completion callback).
    var mergeSeconds: Double { Self.seconds(fetchedAt.current, mergedAt.current) }
    /// Seconds spent fetching and decoding the changelog pages.
    var fetchSeconds: Double { Self.seconds(messagesStarted.current, fetchedAt.current) }
    /// Seconds spent refreshing the conversation list (the cold start's excluded).
    var conversationSeconds: Double {
        Self.seconds(Array(conversationsStarted.current.dropFirst()), Array(conversationsDone.current.dropFirst()))
    }

    static func seconds(_ starts: [UInt64], _ ends: [UInt64]) -> Double {
        zip(starts, ends).reduce(0) { $0 + Double($1.1 - $1.0) / 1e9 }
    }
    func onMessageSyncError(_ error: ChatException) { print("  sync error: \(error)") }

    func next(_ event: String) async {
        for await seen in stream where seen == event { return }
    }

    func nextSweep() async -> (Int, SyncOutcome) {
        for await sweep in sweeps { return sweep }
        return (0, .caughtUp)
    }
}
