import Foundation
import OfflineChatCache
import OfflineChatLocking
import OfflineChatSQLite

/// What a session tells the client that owns it. The client decides what a session's news
/// means for the app: which session is current, which files go, who hears of it.
protocol SessionHost: AnyObject, Sendable {
    /// The session's connection reports `status` (never after the session's end stopped it).
    func session(_ session: UserSession, reports status: ConnectionStatus)
    /// chatd answered one of the session's calls with a 401: its token is no longer accepted.
    func sessionRejected(_ session: UserSession)
}

/// One logged-in user's live state and its behaviour: its API client, realtime connection,
/// cache, outbox and sync, wired to each other here, and every task working for it (`tasks`).
/// It handles its own realtime stream (`UserSession+Realtime.swift`), settles its connection
/// (outbox first, then sync), probes its token, and reports to its `host` only what the client
/// must decide: a status for the app, a rejected token. `end(discardingOutbox:)` stops it;
/// `ChatClient` keeps which session is current (`SessionSlot`) and the files.
final class UserSession: Sendable {
    let user: User
    let api: APIClient
    let realtime: RealtimeConnection
    /// The user's cache; nil when offline support is off (or unavailable).
    let cache: ChatCache?
    /// The record of the outbox's size outside the cache (`QueuedLedger`), with the cache.
    let ledger: QueuedLedger?
    /// Queued sends (with the cache only).
    let outbox: Outbox?
    /// The catch-up sync (with the cache only).
    let sync: SyncEngine?
    /// What the cache's encryption achieved.
    let security: ChatClient.CacheSecurity
    /// No cache this session, but one may open later (`ChatClient.protectedDataBecameAvailable`).
    let cacheMayOpenLater: Bool
    /// The login that opens the cache after the device's first unlock
    /// (`ChatClient.protectedDataBecameAvailable`): one at a time, and one that got no answer
    /// is due again when the connection is next up (or the app resumes).
    let unlockLogin = Locked(UnlockLogin.idle)

    enum UnlockLogin { case idle, running, due }
    /// Every task working for the session; cancelled when it ends.
    let tasks = SessionTasks()
    let config: ChatConfig
    /// Where its realtime changes go: the cache first, then the client's listeners.
    let dispatch: RealtimeDispatch
    /// The client that owns the session (held weakly: the client holds the session).
    weak let host: (any SessionHost)?

    /// A session of `user` over `api` and `realtime`, with the cache `opening` gave (and, with
    /// it, an outbox and a sync). Nothing runs until `start()`.
    init(
        user: User, api: APIClient, realtime: RealtimeConnection, opening: CacheOpening, config: ChatConfig,
        dispatch: RealtimeDispatch, host: any SessionHost
    ) {
        self.user = user
        self.api = api
        self.realtime = realtime
        self.cache = opening.cache
        ledger = opening.ledger
        cacheMayOpenLater = opening.cache == nil && opening.retryLater
        self.config = config
        self.dispatch = dispatch
        self.host = host
        security = ChatClient.CacheSecurity(
            atRest: opening.encrypted, keyFromStore: opening.keyFromStore,
            cipherVersion: opening.encrypted ? Connection.cipherVersion : nil)
        let tasks = tasks
        let outbox = opening.cache.map { cache in
            Self.makeOutbox(
                cache: cache, api: api, realtime: realtime, config: config, tasks: tasks,
                messages: dispatch.listeners.messages)
        }
        self.outbox = outbox
        sync = opening.cache.map { cache in
            SyncEngine(
                cache: cache, api: api, config: config, outbox: outbox, me: user.uid, listeners: dispatch.listeners,
                tasks: tasks)
        }
    }

    /// The session became current: every 401 from chatd on any of its calls now ends it (the
    /// host decides, while it is current); its connection starts; the blocked list refreshes.
    func start() {
        api.rejection.set { [weak self] in
            guard let self else { return }
            self.host?.sessionRejected(self)
        }
        startRealtime()
        if cache != nil { tasks.start { await self.refreshBlockedList() } }
    }

    /// Stops everything working for the session: its tasks (cancelled), its connection, the
    /// sync's retry; with `discardingOutbox` (logout, a rejected token) whatever is still
    /// queued fails `.discarded`; then the cache closes. `tasks.end()` awaits the tasks.
    /// Returns whether the connection was up or trying (it is `.disconnected` now, silently:
    /// the caller decides whether the app hears of it).
    func end(discardingOutbox: Bool) -> Bool {
        // The connection first: from here on the session is offline (the outbox asks).
        let wasConnected = realtime.stop()
        tasks.cancelAll()
        sync?.end()
        if discardingOutbox { _ = outbox?.discard(.all) }
        cache?.close()
        return wasConnected
    }

    /// Runs `work` as one of the session's tasks (its end cancels it, a logout awaits it) and
    /// reports its outcome on the callback queue: exactly one callback. A session already
    /// ended fails `ERROR_USER_NOT_LOGGED_IN` without running it.
    func settle<T: Sendable>(
        _ work: @escaping @Sendable () async throws -> T, onSuccess: @escaping @Sendable (T) -> Void,
        onError: @escaping @Sendable (ChatException) -> Void
    ) {
        let queue = config.callbackQueue
        let started = tasks.start { await Settled.report(work, on: queue, onSuccess: onSuccess, onError: onError) }
        if started == nil { queue.async { onError(.notLoggedIn()) } }
    }

    /// Reloads the SDK's blocked list from the server (at login; each catch-up sweep too).
    func refreshBlockedList() async {
        guard let cache else { return }
        await ChatClient.refreshBlockedList(api: api, cache: cache, logger: config.logger)
    }

    private static func makeOutbox(
        cache: ChatCache, api: APIClient, realtime: RealtimeConnection, config: ChatConfig, tasks: SessionTasks,
        messages: ListenerRegistry<any MessageListener>
    ) -> Outbox {
        let outbox = Outbox(
            cache: cache, api: api, config: config, tasks: tasks,
            // An ended session is offline at once: its end stops the connection first.
            isOnline: { realtime.status == .connected },
            liveSince: {
                // The epoch first: a loss after reading it changes it.
                let epoch = cache.liveEpoch
                return realtime.status == .connected ? epoch : nil
            },
            report: { outcome in
                switch outcome {
                case .sent(let message): messages.notify { $0.onOutboxMessageSent(message) }
                case .failed(let message): messages.notify { $0.onOutboxMessageFailed(message) }
                }
            })
        outbox.recoverInterruptedSends()
        return outbox
    }
}

/// How a task's outcome reaches its callbacks.
enum Settled {
    /// Runs `work`, then `onSuccess` or `onError` on `queue`: exactly one.
    static func report<T: Sendable>(
        _ work: @Sendable () async throws -> T, on queue: DispatchQueue, onSuccess: @escaping @Sendable (T) -> Void,
        onError: @escaping @Sendable (ChatException) -> Void
    ) async {
        do {
            let value = try await work()
            queue.async { onSuccess(value) }
        } catch {
            let exception = error as? ChatException ?? ChatException(.unexpectedResponse, "\(error)")
            queue.async { onError(exception) }
        }
    }
}
