import ChatTesting
import Foundation
import OfflineChatCache
import Testing

@testable import OfflineChat

/// Answers chatd's paths from a script, so the sync engine's phases can fail one at a time.
/// An answer for `path?query` wins over one for the bare path; a changelog page asked by
/// `POST` is scripted as `changes?cursor=…&limit=…`.
final class ScriptedTransport: HTTPTransport, @unchecked Sendable {  // `answers` under `lock`
    private let lock = NSLock()
    private var answers: [String: HTTPAnswer] = [:]

    func answer(_ path: String, status: Int = 200, _ body: some Encodable) {
        lock.withLock { answers[path] = HTTPAnswer(status: status, body: try! JSONEncoder().encode(body)) }
    }

    func fail(_ path: String, status: Int, code: ErrorCode) {
        answer(path, status: status, APIError(code: code, message: "scripted"))
    }

    func send(
        method: String, url: URL, headers: [String: String], body: Data?, maxBytes: Int
    ) async throws -> HTTPAnswer {
        var exact = url.path + "?" + (url.query ?? "")
        if let request = body.flatMap({ try? JSONDecoder().decode(ChangesRequest.self, from: $0) }) {
            exact = url.path + "?cursor=\(request.cursor ?? "")&limit=\(request.limit ?? 0)"
        }
        guard let answer = lock.withLock({ answers[exact] ?? answers[url.path] }) else {
            throw ChatException.offline("nothing scripted for \(url.path)")
        }
        return answer
    }
}

/// Everything a sync tells, in order, as short strings.
// `messages` on the callback queue
final class SyncLog: SyncListener, ConversationListener, MessageListener, @unchecked Sendable {
    let events = EventQueue<String>(cancelled: "cancelled")
    var swept: [BaseMessage] = []

    func onSyncServerStart(reInstall: Bool) { events.push("start reInstall=\(reInstall)") }
    func onSyncServerProgress(_ progress: Int) { events.push("progress \(progress)") }
    func onSyncServerFinish(reInstall: Bool) { events.push("finish reInstall=\(reInstall)") }
    func onSyncServerFailed(reInstall: Bool) { events.push("failed reInstall=\(reInstall)") }
    func onConversationSyncStarted() { events.push("conversations started") }
    func onConversationSyncCompleted(_ conversations: [Conversation]) {
        events.push("conversations \(conversations.count)")
    }
    func onConversationSyncError(_ error: ChatException) { events.push("conversations error \(error.errorCode)") }
    func onMessageSyncStarted() { events.push("messages started") }
    func onMessageSyncCompleted(_ messages: [BaseMessage], _ outcome: SyncOutcome) {
        swept = messages
        events.push("messages \(messages.count) \(outcome.rawValue)")
    }
    func onMessageSyncError(_ error: ChatException) { events.push("messages error \(error.errorCode)") }
    func onTextMessageReceived(_ message: TextMessage) { events.push("new \(message.id) \(message.source.rawValue)") }
    func onActionMessageReceived(_ message: ActionMessage) {
        events.push("new \(message.id) \(message.source.rawValue)")
    }
    func onMessagesSynced(_ messages: [BaseMessage]) { events.push("synced \(messages.map(\.id))") }

    /// Events up to and including the sweep's last one.
    func sweep() async -> [String] {
        var seen: [String] = []
        while true {
            let event = await events.next()
            seen.append(event)
            if event.hasPrefix("finish") || event.hasPrefix("failed") || event == "cancelled" { return seen }
        }
    }

    func attach(to client: ChatClient) {
        client.addSyncListener("log", self)
        client.addConversationListener("log", self)
        client.addMessageListener("log", self)
    }
}

/// The sync engine's phases against scripted answers (no server): every phase's success and
/// failure, the cold start and the cursor-expiry rebuild.
@Suite(.timeLimit(.minutes(1))) struct SyncEngineTests {
    struct Rig {
        let engine: SyncEngine
        let cache: ChatCache
        let transport: ScriptedTransport
        let log: SyncLog
    }

    func rig() throws -> Rig {
        let transport = ScriptedTransport()
        let queue = DispatchQueue(label: "sync-callbacks")
        let config = ChatConfig(
            appID: "test", server: URL(string: "http://127.0.0.1:9")!,
            storageDirectory: FileManager.default.temporaryDirectory,
            offline: offlineOn(), callbackQueue: queue, clock: ManualClock(),
            logger: StandardErrorLogger(minimumLevel: .error))
        let cache = try ChatCache(
            directory: FileManager.default.temporaryDirectory.appendingPathComponent("sync-rig-\(UUID().uuidString)"),
            uid: "bob", clock: { 0 })
        let log = SyncLog()
        let listeners = SyncEngine.Listeners(
            sync: ListenerRegistry(queue: queue), conversations: ListenerRegistry(queue: queue),
            messages: ListenerRegistry(queue: queue), groups: ListenerRegistry(queue: queue))
        listeners.sync.add("log") { [weak log] in log }
        listeners.conversations.add("log") { [weak log] in log }
        listeners.messages.add("log") { [weak log] in log }
        let api = APIClient(baseURL: config.server, token: "t", transport: transport)
        let engine = SyncEngine(
            cache: cache, api: api, config: config, outbox: nil, me: "bob", listeners: listeners, tasks: SessionTasks())
        transport.answer(Endpoints.conversations, Page<ConversationPayload>(items: [], next: nil))
        return Rig(engine: engine, cache: cache, transport: transport, log: log)
    }

    func text(_ id: Int64, updatedAt: Int64? = nil, deleted: Bool = false) -> MessagePayload {
        MessagePayload(
            id: id, muid: "m\(id)", conversationId: "alice~bob", sender: "alice", receiver: "bob", receiverType: .user,
            category: .message, type: "text", text: deleted ? nil : "#\(id)", attachment: nil, customData: nil,
            metadata: nil,
            sentAt: id, updatedAt: updatedAt ?? id, editedAt: nil, deletedAt: deleted ? updatedAt : nil)
    }

    func page(_ changes: [ChangePayload], cursor: String, hasMore: Bool = false) -> ChangelogPage {
        ChangelogPage(changes: changes, hasMore: hasMore, cursor: cursor, serverTime: 1_700_000_000)
    }

    @Test func aColdStartRecordsTheHeadAndFiresOnlyTheConversationPhase() async throws {
        let rig = try rig()
        rig.transport.answer(Endpoints.changes, page([], cursor: "c1.42"))
        #expect(rig.engine.request(.reconnect) == .start)
        #expect(
            await rig.log.sweep() == [
                "start reInstall=true", "progress 0", "conversations started", "conversations 0", "progress 50",
                "progress 100", "finish reInstall=true"
            ])
        #expect(try rig.cache.syncPoint() == SyncPoint(cursor: "c1.42", number: 1, serverTime: 1_700_000_000))
        #expect(rig.engine.state == .idle)
    }

    @Test func newMessagesComeOneByOneThenTheUpdatesTogetherThenTheSweep() async throws {
        let rig = try rig()
        try rig.cache.recordSyncHead(cursor: "c1.1", serverTime: 1)
        try rig.cache.storeLive(text(5))
        rig.transport.answer(
            Endpoints.changes,
            page(
                [
                    ChangePayload(seq: 2, kind: .messageCreated, conversationId: "alice~bob", message: text(6), at: 6),
                    ChangePayload(
                        seq: 3, kind: .messageUpdated, conversationId: "alice~bob",
                        message: text(5, updatedAt: 9, deleted: true), at: 9),
                    ChangePayload(seq: 4, kind: .messageCreated, conversationId: "alice~bob", message: text(7), at: 7)
                ], cursor: "c1.4"))
        rig.engine.request(.reconnect)
        #expect(
            await rig.log.sweep() == [
                "start reInstall=false", "progress 0", "conversations started", "conversations 0", "progress 30",
                "messages started", "progress 60", "new 6 sync", "new 7 sync", "synced [5]",
                "messages 3 caughtUp", "progress 100", "finish reInstall=false"
            ])
        #expect(rig.log.swept.map(\.id) == [6, 7, 5])
        #expect(rig.log.swept.first { $0.id == 5 }?.deletedAt == 9, "a deletion is an update, not a removal")
        #expect(try rig.cache.syncPoint().cursor == "c1.4")
    }

    @Test func aConversationPhaseErrorDoesNotStopTheMessagePhase() async throws {
        let rig = try rig()
        try rig.cache.recordSyncHead(cursor: "c1.1", serverTime: 1)
        rig.transport.fail(Endpoints.conversations, status: 500, code: .internalError)
        rig.transport.answer(
            Endpoints.changes,
            page(
                [
                    ChangePayload(
                        seq: 2, kind: .messageCreated, conversationId: "alice~bob",
                        message: text(6), at: 6)
                ], cursor: "c1.2", hasMore: true))
        rig.engine.request(.reconnect)
        let events = await rig.log.sweep()
        #expect(events.contains("conversations error internal_error"))
        #expect(events.contains("messages 1 partial"))
        #expect(
            events.last == "failed reInstall=false", "the sweep as a whole failed; the next reconnect refreshes again")
        #expect(try rig.cache.syncPoint().cursor == "c1.2", "the message phase still advanced")
    }

    @Test func aMessagePhaseErrorLeavesTheCacheAndTheSyncPointAlone() async throws {
        let rig = try rig()
        try rig.cache.recordSyncHead(cursor: "c1.1", serverTime: 1)
        let before = try rig.cache.syncPoint()
        rig.transport.fail(Endpoints.changes, status: 503, code: .unavailable)
        rig.engine.request(.reconnect)
        let events = await rig.log.sweep()
        #expect(events.contains("conversations 0") && events.contains("messages error unavailable"))
        #expect(events.last == "failed reInstall=false")
        #expect(try rig.cache.syncPoint() == before)
        // The next sweep resumes from the same point.
        rig.transport.answer(Endpoints.changes, page([], cursor: "c1.9"))
        rig.engine.request(.reconnect)
        #expect(await rig.log.sweep().contains("messages 0 caughtUp"))
        #expect(try rig.cache.syncPoint().cursor == "c1.9")
    }

    /// Behind a load balancer a sweep can fail on a dying node (502) while the realtime
    /// connection, on another node, stays up: no reconnect will come, so the sweep runs again
    /// after a backoff and catches up.
    @Test func aSweepTheServerFailsWhileConnectedRunsAgainAfterABackoff() async throws {
        let rig = try rig()
        let clock = try #require(rig.engine.config.clock as? ManualClock)
        try rig.cache.recordSyncHead(cursor: "c1.1", serverTime: 1)
        rig.engine.connected(hello: "c1.2")
        rig.transport.fail(Endpoints.changes, status: 502, code: .unavailable)
        rig.engine.request(.reconnect)
        #expect(await rig.log.sweep().last == "failed reInstall=false")
        rig.transport.answer(
            Endpoints.changes,
            page(
                [
                    ChangePayload(
                        seq: 2, kind: .messageCreated, conversationId: "alice~bob",
                        message: text(6), at: 6)
                ], cursor: "c1.2"))
        await clock.waitForSleepers(1)
        #expect(
            (0...rig.engine.config.reconnectBaseDelay).contains(clock.nextDeadline ?? -1),
            "the first retry waits one base delay at most")
        clock.advance(by: clock.nextDeadline ?? 0)
        let again = await rig.log.sweep()
        #expect(again.contains("new 6 sync") && again.last == "finish reInstall=false")
        #expect(try rig.cache.syncPoint().cursor == "c1.2")
    }

    /// A sweep that fails while the connection is down (or with it) waits for the reconnect.
    @Test func aSweepThatFailsOfflineWaitsForTheReconnect() async throws {
        let rig = try rig()
        let clock = try #require(rig.engine.config.clock as? ManualClock)
        try rig.cache.recordSyncHead(cursor: "c1.1", serverTime: 1)
        rig.transport.fail(Endpoints.changes, status: 503, code: .unavailable)
        rig.engine.request(.reconnect)
        #expect(await rig.log.sweep().last == "failed reInstall=false")
        #expect(clock.sleeperCount == 0, "nothing scheduled: no connection to run it on")
    }

    @Test func anExpiredCursorRebuildsAsAReInstallSync() async throws {
        let rig = try rig()
        try rig.cache.recordSyncHead(cursor: "c1.1", serverTime: 1)
        try rig.cache.storeLive(text(5))
        rig.transport.fail(Endpoints.changes, status: 410, code: .cursorExpired)
        rig.transport.answer(Endpoints.changes + "?cursor=&limit=1", page([], cursor: "c1.100"))  // the head
        rig.engine.request(.reconnect)
        let first = await rig.log.sweep()
        #expect(first.contains("messages error cursor_expired") && first.last == "failed reInstall=false")
        // The rebuild follows at once: a cold start from the head.
        let second = await rig.log.sweep()
        #expect(second.first == "start reInstall=true" && second.last == "finish reInstall=true")
        #expect(!second.contains("messages started"))
        #expect(try rig.cache.message(id: 5) == nil, "the old messages went with the rebuild")
        #expect(try rig.cache.syncPoint().cursor == "c1.100")
    }

    @Test func theLiveStreamMovesThePointOnlyWhileTheCacheHoldsEverythingBeforeIt() async throws {
        let rig = try rig()
        try rig.cache.recordSyncHead(cursor: "c1.1", serverTime: 1)
        rig.engine.connected(hello: "c1.5")  // changes 2…5 were missed
        rig.engine.liveChangeStored(cursor: "c1.6")
        #expect(try rig.cache.syncPoint().cursor == "c1.1", "2…5 are not stored yet")
        rig.transport.answer(Endpoints.changes, page([], cursor: "c1.6"))
        rig.engine.request(.reconnect)
        #expect(await rig.log.sweep().contains("messages 0 caughtUp"))
        rig.engine.liveChangeStored(cursor: "c1.7")
        #expect(try rig.cache.syncPoint().cursor == "c1.7", "caught up on this connection: the point follows")
        rig.engine.disconnected()
        rig.engine.liveChangeStored(cursor: "c1.8")
        #expect(try rig.cache.syncPoint().cursor == "c1.7")
        rig.engine.connected(hello: "c1.7")
        rig.engine.liveChangeStored(cursor: "c1.9")
        #expect(try rig.cache.syncPoint().cursor == "c1.9", "nothing happened while away: the hello is the point")
    }

    /// A page that drops a conversation may wipe what the live stream stored after the page
    /// was read (bob added back to the group, say): the point stops following, so the next
    /// replay from the page's cursor brings that back.
    @Test func aPageThatDropsAConversationStopsThePointFollowing() async throws {
        let rig = try rig()
        try rig.cache.recordSyncHead(cursor: "c1.1", serverTime: 1)
        rig.engine.connected(hello: "c1.1")
        var kicked = text(6)
        kicked.conversationId = "group_g"
        kicked.category = .action
        kicked.action = MemberActionPayload(guid: "g", action: .kicked, actor: "alice", target: "bob")
        rig.transport.answer(
            Endpoints.changes,
            page(
                [ChangePayload(seq: 2, kind: .groupMember, conversationId: "group_g", message: kicked, at: 6)],
                cursor: "c1.2"))
        rig.engine.request(.reconnect)
        #expect(await rig.log.sweep().contains("messages 0 caughtUp"))
        rig.engine.liveChangeStored(cursor: "c1.4")
        #expect(try rig.cache.syncPoint().cursor == "c1.2")
    }

    /// The same for a page that resets a conversation past its log's retention: the reset
    /// drops the conversation's cached messages, among them any the live stream stored after
    /// the page was read; the point stops following, so the next replay brings them back.
    @Test func aPageThatResetsAConversationStopsThePointFollowing() async throws {
        let rig = try rig()
        try rig.cache.recordSyncHead(cursor: "c1.1", serverTime: 1)
        rig.engine.connected(hello: "c1.1")
        rig.transport.answer(
            Endpoints.changes,
            page([ChangePayload(seq: 0, kind: .conversationReset, conversationId: "group_g", at: 6)], cursor: "c1.2"))
        rig.engine.request(.reconnect)
        #expect(await rig.log.sweep().contains("messages 0 caughtUp"))
        rig.engine.liveChangeStored(cursor: "c1.4")
        #expect(try rig.cache.syncPoint().cursor == "c1.2", "not past what the reset may have dropped")
    }
}
