import Foundation
import Locking

/// Bearer tokens this node found valid lately, by token hash, so a request does not cost a
/// database round trip to prove its token again (on PostgreSQL a transaction of its own).
///
/// A revocation reaches the cache at once on the node that made it (`Store.revoke`) and over
/// the bus on the others, before their sockets of that token close (`RealtimeHub.received`).
/// While the bus is down nothing is trusted (a revocation could be missed), and after it
/// comes back the cache starts empty. A revocation the bus loses, or one written to the
/// database by other means, takes effect within `lifetime`: no entry is used after that.
final class SessionCache: Sendable {
    struct Entry: Equatable {
        let uid: String
        /// The token's expiry, epoch seconds.
        let expiresAt: Int64
        /// The user's last recorded activity, epoch seconds.
        var lastActiveAt: Int64
        /// When the database said the token was valid, epoch milliseconds.
        let checkedAt: Int64
    }

    /// How long an entry is used, in milliseconds.
    let lifetime: Int64
    /// Entries held at most; a full cache starts over.
    let capacity: Int
    private let state = Locked(State())

    private struct State {
        var entries: [String: Entry] = [:]
        var trusted = true
        /// Bumped by every revocation and change of trust: a check that read the database before
        /// one of them must not store what it read (it may be what was just revoked).
        var generation = 0
    }

    init(lifetime: Int64 = 5_000, capacity: Int = 50_000) {
        self.lifetime = lifetime
        self.capacity = capacity
    }

    /// The entry for `hash` if the database vouched for it within `lifetime` of `now` (epoch ms).
    func entry(_ hash: String, at now: Int64) -> Entry? {
        state.withLock {
            // none while untrusted
            guard let entry = $0.entries[hash], now - entry.checkedAt < lifetime else { return nil }
            return entry
        }
    }

    /// Where revocations stand now: pass it to `remember` after reading the database.
    var currentGeneration: Int { state.withLock { $0.generation } }

    /// Keeps `entry`, read from the database after `currentGeneration` gave `generation`,
    /// unless a revocation (or a change of trust) came in meanwhile.
    func remember(_ hash: String, _ entry: Entry, readAfter generation: Int) {
        state.withLock {
            guard $0.trusted, generation == $0.generation else { return }
            if $0.entries.count >= capacity && $0.entries[hash] == nil { $0.entries.removeAll(keepingCapacity: true) }
            $0.entries[hash] = entry
        }
    }

    /// The token was revoked: never answer for it again.
    func forget(_ hash: String) {
        state.withLock {
            $0.generation += 1
            $0.entries[hash] = nil
        }
    }

    /// Whether revocations can reach this node (its bus is connected). Either way the cache
    /// empties.
    func setTrusted(_ value: Bool) {
        state.withLock {
            $0.trusted = value
            $0.generation += 1
            $0.entries.removeAll()
        }
    }
}
