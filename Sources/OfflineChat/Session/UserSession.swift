import ChatCache

/// One logged-in user's live state, and the owner of every task working for it (`tasks`):
/// its API client, realtime connection, cache, outbox and sync. `end(discardingOutbox:)` stops
/// it; `ChatClient` keeps which session is current (`SessionSlot`) and the files.
final class UserSession: Sendable {
    let user: User
    let api: APIClient
    let realtime: RealtimeConnection
    /// The user's cache; nil when offline support is off (or unavailable).
    let cache: ChatCache?
    /// Queued sends (with the cache only).
    let outbox: Outbox?
    /// The catch-up sync (with the cache only).
    let sync: SyncEngine?
    /// What the cache's encryption achieved.
    let security: ChatClient.CacheSecurity
    /// Every task working for the session; cancelled when it ends.
    let tasks: SessionTasks

    init(
        user: User, api: APIClient, realtime: RealtimeConnection, cache: ChatCache?, outbox: Outbox?,
        sync: SyncEngine?, security: ChatClient.CacheSecurity, tasks: SessionTasks
    ) {
        self.tasks = tasks
        self.security = security
        self.user = user
        self.api = api
        self.realtime = realtime
        self.cache = cache
        self.outbox = outbox
        self.sync = sync
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
}
