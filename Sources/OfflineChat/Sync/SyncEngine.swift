import ChatCache
import Foundation

/// The catch-up sync of one session: when to sweep is `SyncThrottle`'s call; a sweep refreshes
/// the conversation list, then replays one changelog page from the sync point and merges it
/// (see `ChatCache.applySyncPage`). Listeners hear every step on the callback queue.
final class SyncEngine: Sendable {
    struct Listeners: Sendable {
        let sync: ListenerRegistry<any SyncListener>
        let conversations: ListenerRegistry<any ConversationListener>
        let messages: ListenerRegistry<any MessageListener>
        let groups: ListenerRegistry<any GroupListener>
    }

    /// Conversations fetched by the conversation phase.
    static let conversationPage = 50
    /// Changes replayed per sweep.
    static let changePage = ChangelogPage.maxLimit

    let cache: ChatCache
    let api: APIClient
    let config: ChatConfig
    let outbox: Outbox?
    let me: String
    let listeners: Listeners
    /// False once the session ended: a sweep still running stops telling anyone anything.
    let isCurrent: @Sendable () -> Bool
    private let throttle = Locked(SyncThrottle())
    private let live = Locked(LiveFollowing())

    init(cache: ChatCache, api: APIClient, config: ChatConfig, outbox: Outbox?, me: String, listeners: Listeners,
         isCurrent: @escaping @Sendable () -> Bool) {
        self.cache = cache
        self.api = api
        self.config = config
        self.outbox = outbox
        self.me = me
        self.listeners = listeners
        self.isCurrent = isCurrent
    }

    var state: SyncState { throttle.current.running ? .syncing : .idle }

    /// A realtime connection said hello: changes after `cursor` arrive on it.
    func connected(hello cursor: String?) {
        let point = try? cache.syncPoint()
        live.withLock { $0.hello(atSyncPoint: cursor != nil && point?.cursor == cursor) }
    }

    func disconnected() {
        live.withLock { $0.disconnected() }
    }

    /// See `LiveFollowing.lostTrack`.
    func lostTrack() {
        live.withLock { $0.lostTrack() }
    }

    /// The cache stored a live change; `cursor` is the changelog position right after it.
    func liveChangeStored(cursor: String?) {
        guard let cursor, live.current.following else { return }
        do {
            try cache.followLiveCursor(cursor)
        } catch {
            config.logger.log(.warning, "the sync point could not follow the live stream: \(error)")
        }
    }

    /// Asks for a sweep; it runs in the background when the throttle says start.
    @discardableResult
    func request(_ trigger: SyncThrottle.Trigger) -> SyncThrottle.Decision {
        let decision = throttle.withLock { $0.request(trigger, now: config.clock.now()) }
        if decision == .start { Task { await run() } }
        return decision
    }

    private func run() async {
        while true {
            let result = await sweep()
            guard isCurrent() else { return }
            // The state is idle (or the follow-up's) before the last callback is heard.
            let again = throttle.withLock { $0.finished(now: config.clock.now()) }
            if let (succeeded, reInstall) = result {
                listeners.conversations.notify { $0.onSyncServerProgress(100) }
                if succeeded {
                    listeners.conversations.notify { $0.onSyncServerFinish(reInstall: reInstall) }
                } else {
                    listeners.conversations.notify { $0.onSyncServerFailed(reInstall: reInstall) }
                }
            }
            if !again { return }
        }
    }

    /// One sweep: the conversation phase, then (after a cold start: instead) the message
    /// phase. Returns whether both succeeded, and whether it was a reInstall sync.
    func sweep() async -> (succeeded: Bool, reInstall: Bool)? {
        // The cache's epoch first: a connection lost after this read changes it.
        let epoch = cache.liveEpoch
        let start = live.current
        let generation = start.generation
        guard isCurrent(), let point = try? cache.syncPoint() else { return nil }
        let reInstall = point.cursor == nil
        let conversations = listeners.conversations
        conversations.notify { $0.onSyncServerStart(reInstall: reInstall) }
        conversations.notify { $0.onSyncServerProgress(0) }
        // The three reads go out together (the server answers them side by side); what they
        // bring is applied in the phases' order.
        async let changes = reInstall ? nil : changelogPage(from: point)
        // The SDK's own blocked list (BlockedUserRequest's cached page), silently.
        async let blocked: Void = ChatClient.refreshBlockedList(api: api, cache: cache, logger: config.logger)
        let conversationsOK = await conversationPhase()
        await blocked
        conversations.notify { $0.onSyncServerProgress(reInstall ? 50 : 30) }
        let messagesOK = if let page = await changes {
            await messagePhase(page, from: point, generation, liveEpoch: start.connected ? epoch : nil)
        } else {
            await recordHead(generation)
        }
        return (conversationsOK && messagesOK, reInstall)
    }

    /// One page of the changelog from `point` (or why not).
    private func changelogPage(from point: SyncPoint) async -> Result<ChangelogPage, any Error> {
        do {
            return .success(try await api.get(Endpoints.changes, query: [("cursor", point.cursor), ("limit", "\(Self.changePage)")]))
        } catch {
            return .failure(error)
        }
    }

    /// One fresh page of the conversation list replaces its slice of the cached list; a
    /// conversation the server no longer returns takes its queued messages with it.
    private func conversationPhase() async -> Bool {
        listeners.sync.notify { $0.onConversationSyncStarted() }
        do {
            let page: Page<ConversationPayload> = try await api.get(Endpoints.conversations, query: [("limit", "\(Self.conversationPage)")])
            guard isCurrent() else { return false }
            let removed = try cache.storeConversationPage(page.items, first: true, last: page.next == nil)
            for id in removed { _ = outbox?.discard(.conversation(id)) }
            let fresh = page.items.map { Conversation($0, source: .server) }
            listeners.sync.notify { $0.onConversationSyncCompleted(fresh) }
            return true
        } catch {
            let exception = Self.exception(error)
            listeners.sync.notify { $0.onConversationSyncError(exception) }
            return false
        }
    }

    /// A cold start: remember the server's head and replay nothing.
    private func recordHead(_ generation: Int) async -> Bool {
        do {
            let head: ChangelogPage = try await api.get(Endpoints.changes, query: [("cursor", ""), ("limit", "1")])
            guard isCurrent() else { return false }
            try cache.recordSyncHead(cursor: head.cursor, serverTime: head.serverTime)
            live.withLock { $0.caughtUp(startedAt: generation) }
            return true
        } catch {
            config.logger.log(.warning, "the sync could not record where to resume: \(error)")
            return false
        }
    }

    /// Merges the changelog page read from `point`. `generation`: the live connection's when
    /// the sweep started (see `LiveFollowing`); `liveEpoch`: the cache's live epoch then, if
    /// the connection was up.
    private func messagePhase(_ read: Result<ChangelogPage, any Error>, from point: SyncPoint, _ generation: Int,
                              liveEpoch: Int?) async -> Bool {
        listeners.sync.notify { $0.onMessageSyncStarted() }
        do {
            let page = try read.get()
            guard isCurrent() else { return false }
            listeners.conversations.notify { $0.onSyncServerProgress(60) }
            // Dropping a conversation may wipe what the live stream stored after this page was
            // read (the user added back, say): the point stops following, so the next replay
            // brings that back.
            if page.changes.contains(where: { $0.removesConversation(for: me) }) { lostTrack() }
            // A last page read on the connection the sweep started on: the stream brings the rest.
            let reachesLive = !page.hasMore && live.current.generation == generation ? liveEpoch : nil
            let merge = try cache.applySyncPage(page.changes, from: point, cursor: page.cursor, serverTime: page.serverTime,
                                                liveSince: reachesLive)
            for id in merge.removedConversations { _ = outbox?.discard(.conversation(id)) }
            if !page.hasMore { live.withLock { $0.caughtUp(startedAt: generation) } }
            deliver(merge, outcome: page.hasMore ? .partial : .caughtUp)
            return true
        } catch let error as ChatException
                    where [ErrorCode.cursorExpired.rawValue, ErrorCode.invalidCursor.rawValue].contains(error.errorCode) {
            // The server no longer keeps changes that far back (or no longer knows the cursor:
            // restored from a backup): rebuild from the conversation list (the follow-up sweep
            // is a cold start, reported as a reInstall sync).
            lostTrack()
            try? cache.resetForRebuild()
            listeners.sync.notify { $0.onMessageSyncError(error) }
            _ = throttle.withLock { $0.request(.reconnect, now: config.clock.now()) }
            return false
        } catch {
            let exception = Self.exception(error)
            listeners.sync.notify { $0.onMessageSyncError(exception) }
            return false
        }
    }

    /// New messages one by one on the received callbacks (source `.sync`), then the updates
    /// together, then the sync listener with everything swept.
    private func deliver(_ merge: SyncMerge, outcome: SyncOutcome) {
        let new = merge.new.map { BaseMessage.make($0, source: .sync) }
        let updated = merge.updated.map { BaseMessage.make($0, source: .sync) }
        for message in new {
            listeners.messages.notify { ChatClient.deliverNew(message, to: $0) }
            if let action = message as? ActionMessage { listeners.groups.notify { ChatClient.deliverGroupEvent(action, to: $0) } }
        }
        if !updated.isEmpty { listeners.messages.notify { $0.onMessagesSynced(updated) } }
        let swept = new + updated
        listeners.sync.notify { $0.onMessageSyncCompleted(swept, outcome) }
    }

    static func exception(_ error: any Error) -> ChatException {
        error as? ChatException ?? ChatException(errorCode: ChatException.cacheFailure, errorDescription: "the sync could not be merged: \(error)")
    }
}
