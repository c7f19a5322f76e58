import Foundation
import OfflineChatCache
import OfflineChatLocking

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
    /// The session's tasks: sweeps and their retries run as them, so a session's end cancels
    /// them and a sweep still running stops telling anyone anything.
    let tasks: SessionTasks
    /// The engine's one state value, under one lock.
    private struct State {
        /// When a sweep may start.
        var throttle = SyncThrottle()
        /// Whether the sync point may follow the live stream.
        var live = LiveFollowing()
        /// Sweeps in a row that the server failed (5xx) while the connection stayed up.
        var serverFailures = 0
        /// The wait before running such a sweep again; cancelled when the connection drops
        /// (the reconnect starts a sweep of its own) and at the session's end.
        var retry: Task<Void, Never>?

        /// The number of the sweep running (or about to), counted from 1; a queued follow-up
        /// is the next one.
        var sweep = 0
        /// Callers of `sweepAwaited()`, each with the number of the sweep it waits for.
        var waiting: [(sweep: Int, continuation: CheckedContinuation<SweepOutcome?, Never>)] = []

        /// Takes the waiters satisfied once sweep `finished` ended (by default every one).
        mutating func takeWaiters(through finished: Int = .max) -> [CheckedContinuation<SweepOutcome?, Never>] {
            defer { waiting.removeAll { $0.sweep <= finished } }
            return waiting.filter { $0.sweep <= finished }.map(\.continuation)
        }

        /// The throttle's answer to `trigger`, the sweep numbers kept in step: a sweep that
        /// starts takes the next number.
        mutating func request(_ trigger: SyncThrottle.Trigger, now: Int64) -> SyncThrottle.Decision {
            let decision = throttle.request(trigger, now: now)
            if decision == .start { sweep += 1 }
            return decision
        }

        /// The running sweep ended at `now`: its number, whether the queued follow-up starts
        /// (taking the next number), and the waiters it satisfies.
        mutating func finish(
            now: Int64
        ) -> (
            number: Int, again: Bool, waiters: [CheckedContinuation<SweepOutcome?, Never>]
        ) {
            let finished = sweep
            let again = throttle.finished(now: now)
            if again { sweep += 1 }
            return (finished, again, takeWaiters(through: finished))
        }

        /// Takes the retry away (to be cancelled outside the lock).
        mutating func takeRetry() -> Task<Void, Never>? {
            defer { retry = nil }
            return retry
        }
    }

    private let locked = Locked(State())

    init(
        cache: ChatCache, api: APIClient, config: ChatConfig, outbox: Outbox?, me: String, listeners: Listeners,
        tasks: SessionTasks
    ) {
        self.cache = cache
        self.api = api
        self.config = config
        self.outbox = outbox
        self.me = me
        self.listeners = listeners
        self.tasks = tasks
    }

    var state: SyncState { locked.current.throttle.running ? .syncing : .idle }

    /// A realtime connection said hello: changes after `cursor` arrive on it.
    func connected(hello cursor: String?) {
        let point = try? cache.syncPoint()
        locked.withLock { $0.live.hello(atSyncPoint: cursor != nil && point?.cursor == cursor) }
    }

    func disconnected() {
        let retry = locked.withLock { state in
            state.live.disconnected()
            return state.takeRetry()
        }
        retry?.cancel()
    }

    /// The session ended: a sweep waiting to run again never runs, and whoever awaits a sweep
    /// hears nil.
    func end() {
        let (retry, waiters) = locked.withLock { ($0.takeRetry(), $0.takeWaiters()) }
        retry?.cancel()
        for waiter in waiters { waiter.resume(returning: nil) }
    }

    /// See `LiveFollowing.lostTrack`.
    func lostTrack() {
        locked.withLock { $0.live.lostTrack() }
    }

    /// The cache stored a live change; `cursor` is the changelog position right after it.
    func liveChangeStored(cursor: String?) {
        guard let cursor, locked.current.live.following else { return }
        do {
            try cache.followLiveCursor(cursor)
        } catch {
            config.logger.log(.warning, "the sync point could not follow the live stream: \(error)")
        }
    }

    /// Asks for a sweep; it runs in the background when the throttle says start.
    @discardableResult
    func request(_ trigger: SyncThrottle.Trigger) -> SyncThrottle.Decision {
        let decision = locked.withLock { $0.request(trigger, now: config.clock.now()) }
        if decision == .start { tasks.start { await self.run() } }
        return decision
    }

    /// A sweep now, or right after the one running (whatever the cooldown), and its outcome
    /// once it ended; nil when the session ended first. `after`: the number of a sweep the
    /// caller already heard; a sweep after it that already runs (the rebuild an expired cursor
    /// queued, say) is the one awaited, rather than one more.
    func sweepAwaited(after heard: Int? = nil) async -> SweepOutcome? {
        await withCheckedContinuation { (continuation: CheckedContinuation<SweepOutcome?, Never>) in
            let decision = locked.withLock { state -> SyncThrottle.Decision? in
                guard !tasks.hasEnded else { return nil }
                if let heard, state.sweep > heard, state.throttle.running {
                    state.waiting.append((state.sweep, continuation))
                    return .coalesced
                }
                let decision = state.request(.awaited, now: config.clock.now())
                state.waiting.append((decision == .start ? state.sweep : state.sweep + 1, continuation))
                return decision
            }
            switch decision {
            case nil: continuation.resume(returning: nil)
            case .start: tasks.start { await self.run() }
            default: break
            }
        }
    }

    private func run() async {
        while true {
            let result = await sweep()
            guard !Task.isCancelled else { return }
            // The state is idle (or the follow-up's) before the last callback is heard.
            let (finished, again, waiters) = locked.withLock { $0.finish(now: config.clock.now()) }
            var numbered = result
            numbered?.number = finished
            for waiter in waiters { waiter.resume(returning: numbered) }
            if let result, !again { retryIfTheServerFailed(result) }
            if let result {
                let reInstall = result.reInstall
                listeners.conversations.notify { $0.onSyncServerProgress(100) }
                if result.succeeded {
                    listeners.conversations.notify { $0.onSyncServerFinish(reInstall: reInstall) }
                } else {
                    listeners.conversations.notify { $0.onSyncServerFailed(reInstall: reInstall) }
                }
            }
            if !again { return }
        }
    }

    /// A sweep the server failed (a 5xx: a node behind a load balancer died mid-request, its
    /// database was briefly unreachable) while the realtime connection stayed up: no reconnect
    /// will come to start the next one, so it runs again after a backoff, for as long as the
    /// connection it started on lasts. A sweep that fails with the connection is left to the
    /// reconnect, as before.
    private func retryIfTheServerFailed(_ result: SweepOutcome) {
        let attempt = locked.withLock { state -> Int? in
            guard result.serverFailed else {
                if result.succeeded { state.serverFailures = 0 }
                return nil
            }
            guard state.live.isOn(result.generation) else { return nil }
            state.serverFailures += 1
            return state.serverFailures
        }
        guard let attempt else { return }
        // At least 1 ms (`Backoff`): the retry always waits on the clock.
        let delay = Backoff.delay(
            attempt: attempt - 1, base: config.reconnectBaseDelay, cap: config.reconnectMaxDelay,
            unit: Double.random(in: 0..<1))
        let task = tasks.start { [self] in
            do {
                try await config.clock.sleep(milliseconds: delay)
            } catch {
                return
            }
            guard locked.current.live.isOn(result.generation) else { return }
            request(.retry)
        }
        // Kept unless the connection dropped meanwhile (then it goes at once); an older
        // retry is replaced.
        let cancelled = locked.withLock { state -> [Task<Void, Never>?] in
            let replaced = state.takeRetry()
            guard state.live.isOn(result.generation) else { return [replaced, task] }
            state.retry = task
            return [replaced]
        }
        for task in cancelled { task?.cancel() }
    }

    /// How a sweep went.
    struct SweepOutcome: Sendable {
        /// Both phases succeeded.
        let succeeded: Bool
        /// The first phase's failure, if one failed.
        var failure: ChatException?
        /// The cache reached the changelog's head (no page left to replay).
        var caughtUp = false
        /// The sweep's number (see `State.sweep`), once it ended.
        var number = 0
        let reInstall: Bool
        /// A phase failed with a server error (5xx).
        let serverFailed: Bool
        /// The live connection's generation the sweep started on.
        let generation: Int
    }

    /// One sweep: the conversation phase, then (after a cold start: instead) the message
    /// phase. Nil when the session ended before it began.
    func sweep() async -> SweepOutcome? {
        // The cache's epoch first: a connection lost after this read changes it.
        let epoch = cache.liveEpoch
        let start = locked.current.live
        let generation = start.generation
        guard !Task.isCancelled, let point = try? cache.syncPoint() else { return nil }
        let reInstall = point.cursor == nil
        let conversations = listeners.conversations
        conversations.notify { $0.onSyncServerStart(reInstall: reInstall) }
        conversations.notify { $0.onSyncServerProgress(0) }
        // A cold start reads where to resume before the list: whatever commits after that
        // read is replayed by the next sync, whatever before it is in the list (read after).
        // Read the other way round, a change committed between the two was in neither.
        let head = reInstall ? await readHead() : nil
        // The other reads go out together (the server answers them side by side); what they
        // bring is applied in the phases' order.
        async let changes = reInstall ? nil : changelogPage(from: point)
        // The SDK's own blocked list (BlockedUserRequest's cached page), silently.
        async let blocked: Void = ChatClient.refreshBlockedList(api: api, cache: cache, logger: config.logger)
        let conversationsFailure = await conversationPhase(coldStart: reInstall)
        await blocked
        conversations.notify { $0.onSyncServerProgress(reInstall ? 50 : 30) }
        let replayed = await changes
        let messagesFailure =
            if let page = replayed {
                await messagePhase(page, from: point, generation, liveEpoch: start.connected ? epoch : nil)
            } else {
                await recordHead(head, generation)
            }
        let serverFailed = [conversationsFailure, messagesFailure].contains { ($0?.httpStatus ?? 0) >= 500 }
        return SweepOutcome(
            succeeded: conversationsFailure == nil && messagesFailure == nil,
            failure: conversationsFailure ?? messagesFailure,
            caughtUp: messagesFailure == nil && (try? replayed?.get())?.hasMore != true, reInstall: reInstall,
            serverFailed: serverFailed, generation: generation)
    }

    /// One page of the changelog from `point` (or why not).
    private func changelogPage(from point: SyncPoint) async -> Result<ChangelogPage, any Error> {
        do {
            return .success(try await api.changes(after: point.cursor, limit: Self.changePage))
        } catch {
            return .failure(error)
        }
    }

    /// One fresh page of the conversation list replaces its slice of the cached list; a
    /// conversation the server no longer returns takes its queued messages with it. On a cold
    /// start (nothing replayed) the last messages it brings stay readable offline. Nil when it
    /// succeeded, else why not.
    private func conversationPhase(coldStart: Bool) async -> ChatException? {
        listeners.sync.notify { $0.onConversationSyncStarted() }
        do {
            let page: Page<ConversationPayload> = try await api.get(
                Endpoints.conversations, query: [("limit", "\(Self.conversationPage)")])
            guard !Task.isCancelled else { return Self.sessionEnded }
            let removed = try cache.storeConversationPage(
                page.items, first: true, last: page.next == nil, keepingLastMessages: coldStart)
            for id in removed { _ = outbox?.discard(.conversation(id)) }
            let fresh = page.items.map { Conversation($0, source: .server) }
            listeners.sync.notify { $0.onConversationSyncCompleted(fresh) }
            return nil
        } catch {
            let exception = Self.exception(error)
            listeners.sync.notify { $0.onConversationSyncError(exception) }
            return exception
        }
    }

    /// A cold start's first read: the changelog's head as the server has it now.
    private func readHead() async -> Result<ChangelogPage, any Error> {
        do {
            return .success(try await api.changes(after: nil, limit: 1))
        } catch {
            return .failure(error)
        }
    }

    /// A cold start, once the list is stored: remember the head read before it (`readHead`) and
    /// replay nothing. Nil when done, else why not.
    private func recordHead(_ read: Result<ChangelogPage, any Error>?, _ generation: Int) async -> ChatException? {
        do {
            guard let read else { return Self.sessionEnded }
            let head = try read.get()
            guard !Task.isCancelled else { return Self.sessionEnded }
            try cache.recordSyncHead(cursor: head.cursor, serverTime: head.serverTime)
            locked.withLock { $0.live.caughtUp(startedAt: generation) }
            return nil
        } catch {
            config.logger.log(.warning, "the sync could not record where to resume: \(error)")
            return Self.exception(error)
        }
    }

    /// Merges the changelog page read from `point`. `generation`: the live connection's when
    /// the sweep started (see `LiveFollowing`); `liveEpoch`: the cache's live epoch then, if
    /// the connection was up. Nil when it succeeded, else why not.
    private func messagePhase(
        _ read: Result<ChangelogPage, any Error>, from point: SyncPoint, _ generation: Int,
        liveEpoch: Int?
    ) async -> ChatException? {
        listeners.sync.notify { $0.onMessageSyncStarted() }
        do {
            let page = try read.get()
            guard !Task.isCancelled else { return Self.sessionEnded }
            listeners.conversations.notify { $0.onSyncServerProgress(60) }
            // Dropping a conversation, or resetting one past its log's retention, may wipe what
            // the live stream stored after this page was read (the user added back, a message
            // just sent): the point stops following, so the next replay brings that back.
            if page.changes.contains(where: { $0.wipesConversation(for: me) }) {
                lostTrack()
            }
            // A last page read on the connection the sweep started on: the stream brings the rest.
            let reachesLive = !page.hasMore && locked.current.live.generation == generation ? liveEpoch : nil
            let merge = try cache.applySyncPage(
                page.changes, from: point, cursor: page.cursor, serverTime: page.serverTime,
                liveSince: reachesLive)
            for id in merge.removedConversations { _ = outbox?.discard(.conversation(id)) }
            if !page.hasMore { locked.withLock { $0.live.caughtUp(startedAt: generation) } }
            deliver(merge, outcome: page.hasMore ? .partial : .caughtUp)
            return nil
        } catch let error as ChatException
            where [.cursorExpired, .invalidCursor].contains(error.code)
        {
            // The server no longer keeps changes that far back (or no longer knows the cursor:
            // restored from a backup): rebuild from the conversation list (the follow-up sweep
            // is a cold start, reported as a reInstall sync).
            lostTrack()
            try? cache.resetForRebuild()
            listeners.sync.notify { $0.onMessageSyncError(error) }
            _ = locked.withLock { $0.throttle.request(.rebuild, now: config.clock.now()) }
            return error
        } catch {
            let exception = Self.exception(error)
            listeners.sync.notify { $0.onMessageSyncError(exception) }
            return exception
        }
    }

    /// New messages one by one on the received callbacks (source `.sync`), then the updates
    /// together, then the sync listener with everything swept.
    private func deliver(_ merge: SyncMerge, outcome: SyncOutcome) {
        let new = merge.new.map { BaseMessage.make($0, source: .sync) }
        let updated = merge.updated.map { BaseMessage.make($0, source: .sync) }
        for message in new {
            listeners.messages.notify { RealtimeDispatch.deliverNew(message, to: $0) }
            if let action = message as? ActionMessage {
                listeners.groups.notify { RealtimeDispatch.deliverGroupEvent(action, to: $0) }
            }
        }
        if !updated.isEmpty { listeners.messages.notify { $0.onMessagesSynced(updated) } }
        let swept = new + updated
        listeners.sync.notify { $0.onMessageSyncCompleted(swept, outcome) }
    }

    /// The session ended mid-sweep: a failure nobody hears about.
    static var sessionEnded: ChatException { .notLoggedIn() }

    static func exception(_ error: any Error) -> ChatException {
        error as? ChatException
            ?? ChatException(.cacheFailure, "the sync could not be merged: \(error)")
    }
}
