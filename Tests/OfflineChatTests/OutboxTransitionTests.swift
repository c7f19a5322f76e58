import ChatTesting
import Foundation
import OfflineChatCache
import Testing

@testable import OfflineChat

/// Every change of a queued send goes through `OutboxPolicy` and is stored only from the state
/// it was computed from; these drive `Outbox.apply` and its callers on a real cache, no server.
@Suite struct OutboxTransitionTests {
    struct Rig {
        let outbox: Outbox
        let cache: ChatCache
        let clock: ManualClock
    }

    func rig() throws -> Rig {
        let clock = ManualClock(now: 1_000_000)
        let config = ChatConfig(
            appID: "test", server: URL(string: "http://127.0.0.1:9")!,
            storageDirectory: FileManager.default.temporaryDirectory, offline: offlineOn(),
            callbackQueue: DispatchQueue(label: "outbox-callbacks"), clock: clock,
            logger: StandardErrorLogger(minimumLevel: .error))
        let cache = try ChatCache(
            directory: FileManager.default.temporaryDirectory.appendingPathComponent("outbox-rig-\(UUID().uuidString)"),
            uid: "alice", clock: { 0 })
        let api = APIClient(baseURL: config.server, token: "t", transport: ScriptedTransport())
        // One attempt: a transient failure is final at once.
        let outbox = Outbox(
            cache: cache, api: api, config: config, tasks: SessionTasks(), policy: OutboxPolicy(maxAttempts: 1),
            isOnline: { false },
            liveSince: { nil })
        return Rig(outbox: outbox, cache: cache, clock: clock)
    }

    @discardableResult
    func enqueue(_ cache: ChatCache, _ muid: String) throws -> Int64 {
        let message = MessagePayload(
            id: 0, muid: muid, conversationId: "alice~bob", sender: "alice", receiver: "bob", receiverType: .user,
            category: .message, type: "text", text: muid, attachment: nil, customData: nil, metadata: nil, sentAt: 1,
            updatedAt: 1, editedAt: nil, deletedAt: nil)
        return try cache.enqueue(
            SendMessageRequest(muid: muid, receiver: "bob", text: muid), showing: message, maxPending: 10)
    }

    @Test func aClaimOvertakenByAReconnectIsComputedAgainFromTheNewState() throws {
        let rig = try rig()
        try enqueue(rig.cache, "q1")
        let read = try #require(try rig.cache.outboxItems().first)
        rig.clock.advance(by: 5)
        rig.outbox.reconnected()  // the stored item is now due at the new time: `read` is stale
        let claimed = rig.outbox.apply(.startSend(now: rig.clock.now()), to: [read])
        #expect(claimed.map(\.state) == [.sending])
        #expect(try rig.cache.outboxItems().first?.progress == OutboxProgress(state: .sending, attempts: 1))
        #expect(rig.outbox.apply(.startSend(now: rig.clock.now()), to: [read]).isEmpty, "claimed once")
    }

    @Test func aDiscardedItemIsNeverClaimed() throws {
        let rig = try rig()
        try enqueue(rig.cache, "q1")
        let read = try #require(try rig.cache.outboxItems().first)
        _ = rig.outbox.discard(.all)
        #expect(rig.outbox.apply(.startSend(now: rig.clock.now()), to: [read]).isEmpty)
        #expect(try rig.cache.outboxItems().isEmpty)
    }

    @Test func retryAllSendsTransientFailuresAgainAndLeavesPermanentOnes() throws {
        let rig = try rig()
        for muid in ["transient", "permanent", "waiting"] { try enqueue(rig.cache, muid) }
        let items = try rig.cache.outboxItems()
        let now = rig.clock.now()
        let events: [OutboxPolicy.Event] = [.failedTransiently(now: now, unit: 0), .failedPermanently]
        for (item, event) in zip(items, events) {
            let sending = try #require(rig.outbox.apply(.startSend(now: now), to: [item]).first)
            rig.outbox.apply(event, to: [sending], error: .invalid(item.request.muid))
        }
        let failed = try rig.cache.outboxItems().prefix(2)
        #expect(failed.map(\.reason) == [.transient, .permanent])
        #expect(failed.map(\.errorMessage) == ["transient", "permanent"], "each failure keeps its error")

        rig.clock.advance(by: 1_000)
        rig.outbox.retryAll()
        let after = try rig.cache.outboxItems()
        #expect(after.map(\.state) == [.pending, .failed, .pending])
        #expect(after[0].progress == OutboxProgress(state: .pending, attempts: 0, nextAttemptAt: rig.clock.now()))
        #expect(after[2].nextAttemptAt == rig.clock.now(), "a waiting item goes now")
    }

    @Test func aSendLeftOnTheWireByAnEndedProcessGoesAgainAtOnce() throws {
        let rig = try rig()
        try enqueue(rig.cache, "q1")
        let item = try #require(try rig.cache.outboxItems().first)
        rig.outbox.apply(.startSend(now: rig.clock.now()), to: [item])
        rig.outbox.recoverInterruptedSends()
        #expect(
            try rig.cache.outboxItems().first?.progress
                == OutboxProgress(state: .pending, attempts: 1, nextAttemptAt: 0))
    }
}
