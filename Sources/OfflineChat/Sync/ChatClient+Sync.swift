import Foundation
import OfflineChatCache

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

/// What `sync()` came to.
public struct SyncReport: Sendable, Equatable {
    /// Sweeps it took: each replays one changelog page (up to 1,000 changes), so a long backlog
    /// takes several; each was reported to the listeners as usual.
    public let sweeps: Int
    /// The cache was rebuilt from the conversation list on the way (a first sync, or a resume
    /// point the server no longer keeps).
    public let reInstall: Bool
    /// The cache reached the server's head (false only when `sync()` stopped at its sweep
    /// limit, the changelog growing faster than it was read).
    public let caughtUp: Bool

    /// A report with these values (for tests and stand-ins).
    public init(sweeps: Int, reInstall: Bool, caughtUp: Bool) {
        self.sweeps = sweeps
        self.reInstall = reInstall
        self.caughtUp = caughtUp
    }
}

extension ChatClient {
    /// Runs the catch-up sync now (or right after the one under way), and returns once the
    /// cache has caught up with the server: for the moments an app has to know it did (a
    /// background refresh, before reading the cache for a notification). Unlike
    /// `forceSyncNow`, it has no cooldown and waits for the end, sweep after sweep while pages
    /// remain; every sweep's events reach the listeners as usual. Throws the error a sweep met
    /// (`ERROR_INTERNET_UNAVAILABLE` offline, a server error), `ERROR_OFFLINE_DISABLED`, or
    /// `ERROR_USER_NOT_LOGGED_IN` (also when the session ends meanwhile). A cancelled task
    /// stops waiting once the sweep under way has ended.
    @discardableResult
    public func sync() async throws -> SyncReport {
        let current = try requireSession()
        guard let sync = current.sync else {
            throw ChatException(.offlineDisabled, "offline support is not active for this user")
        }
        var sweeps = 0
        var reInstall = false
        var heard: Int?
        while true {
            try Task.checkCancellation()
            guard let outcome = await sync.sweepAwaited(after: heard) else { throw ChatException.notLoggedIn() }
            heard = outcome.number
            sweeps += 1
            reInstall = reInstall || outcome.reInstall
            if let failure = outcome.failure {
                // A resume point the server no longer keeps: the rebuild follows as the next sweep.
                guard [.cursorExpired, .invalidCursor].contains(failure.code), sweeps < Self.syncSweepLimit else {
                    throw failure
                }
                continue
            }
            if outcome.caughtUp || sweeps >= Self.syncSweepLimit {
                return SyncReport(sweeps: sweeps, reInstall: reInstall, caughtUp: outcome.caughtUp)
            }
        }
    }

    /// At most this many sweeps (100,000 changes) per `sync()`: the changelog grows while it
    /// runs, and a wait must end.
    static let syncSweepLimit = 100
}
