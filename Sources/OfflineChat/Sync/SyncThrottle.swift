/// When a catch-up sync may start, as a pure state machine (time passed in). One sweep runs at
/// a time; a reconnect, a rebuild or a retry during a sweep queues at most one follow-up;
/// `forceSyncNow` is refused while a sweep runs and for 15 s after one ended.
struct SyncThrottle: Equatable, Sendable {
    enum Trigger: Sendable {
        /// The connection settled after a (re)connect.
        case reconnect
        /// `forceSyncNow`.
        case manual
        /// The cache was reset for a rebuild (the changelog no longer reaches the sync point,
        /// or the server no longer knows the cursor): a cold-start sweep must follow the one
        /// that found out.
        case rebuild
        /// A sweep the server failed runs again: the connection stayed up, so no reconnect will
        /// start one.
        case retry
        /// `ChatClient.sync()`: a sweep now, or right after the one running; no cooldown (the
        /// app asked in code, from a background task, say: not a pull-to-refresh).
        case awaited
    }

    enum Decision: Equatable, Sendable {
        case start
        /// A sweep runs: one more follows it.
        case followUpQueued
        /// A sweep runs and a follow-up is already queued: this trigger joins it.
        case coalesced
        case rejectedInProgress
        case rejectedCooldown(remaining: Int64)
    }

    static let cooldown: Int64 = 15_000

    private(set) var running = false
    private(set) var followUp = false
    /// When the last sweep ended (epoch ms).
    private(set) var lastEnded: Int64?

    mutating func request(_ trigger: Trigger, now: Int64) -> Decision {
        switch trigger {
        case .reconnect, .rebuild, .retry, .awaited:
            guard running else {
                running = true
                return .start
            }
            if followUp { return .coalesced }
            followUp = true
            return .followUpQueued
        case .manual:
            if running { return .rejectedInProgress }
            if let lastEnded, now - lastEnded < Self.cooldown {
                return .rejectedCooldown(remaining: lastEnded + Self.cooldown - now)
            }
            running = true
            return .start
        }
    }

    /// The running sweep ended at `now`; true when the queued follow-up starts at once.
    mutating func finished(now: Int64) -> Bool {
        lastEnded = now
        if followUp {
            followUp = false
            return true
        }
        running = false
        return false
    }
}
