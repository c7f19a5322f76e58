import ChatCache
import Foundation

extension ChatClient {
    /// `.syncing` while a catch-up sweep is in flight, else `.idle` (also without offline support).
    public func getSyncState() -> SyncState { session.current?.sync?.state ?? .idle }

    /// When the cache last synced, in the server's epoch seconds (never the device clock);
    /// 0 if it never did.
    public func getLastSyncTimestamp() -> Int {
        Int((try? session.current?.cache?.syncPoint().serverTime) ?? 0)
    }

    /// Runs a catch-up sync now (a pull-to-refresh, say), through the same throttle as the
    /// automatic one. `onSuccess` fires when the sync is accepted and starts, not when it
    /// ends (progress and outcome reach the `SyncListener`s). Refusals:
    /// `ERROR_OFFLINE_SYNC_IN_PROGRESS`, `ERROR_OFFLINE_SYNC_COOLDOWN` (a sync ended less than
    /// 15 s ago; the description carries the remaining milliseconds), `ERROR_OFFLINE_DISABLED`,
    /// `ERROR_USER_NOT_LOGGED_IN`. It does not send queued messages.
    public func forceSyncNow(
        onSuccess: @escaping @Sendable () -> Void, onError: @escaping @Sendable (ChatException) -> Void
    ) {
        let queue = config.callbackQueue
        do {
            try startForcedSync()
            queue.async { onSuccess() }
        } catch let error as ChatException {
            queue.async { onError(error) }
        } catch {}
    }

    /// `forceSyncNow` whose refusal is dropped silently.
    public func forceSyncNow() {
        try? startForcedSync()
    }

    /// `forceSyncNow`, throwing the refusal.
    public func forceSyncNow() async throws {
        try startForcedSync()
    }

    private func startForcedSync() throws {
        guard let current = session.current else { throw ChatException.notLoggedIn() }
        guard let sync = current.sync else {
            throw ChatException(.offlineDisabled, "offline support is not active for this user")
        }
        switch sync.request(.manual) {
        case .start, .followUpQueued, .coalesced:
            return
        case .rejectedInProgress:
            throw ChatException(.syncInProgress, "a sync is already running")
        case .rejectedCooldown(let remaining):
            throw ChatException(.syncCooldown, "a sync ended less than 15 s ago; retry in \(remaining) ms")
        }
    }
}
