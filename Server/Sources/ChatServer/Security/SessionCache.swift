import Foundation

/// Bearer tokens this node found valid lately, by token hash, so a request does not cost a
/// database round trip to prove its token again (on PostgreSQL a transaction of its own).
///
/// A revocation reaches the cache at once on the node that made it (`Store.revoke`) and over
/// the bus on the others, before their sockets of that token close (`RealtimeHub.received`).
/// While the bus is down nothing is trusted (a revocation could be missed), and after it
/// comes back the cache starts empty. A revocation the bus loses, or one written to the
/// database by other means, takes effect within `lifetime`: no entry is used after that.
final class SessionCache: @unchecked Sendable {  // `entries` and `trusted` only under `lock`
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
    private let lock = NSLock()
    private var entries: [String: Entry] = [:]
    private var trusted = true
    /// Bumped by every revocation and change of trust: a check that read the database before
    /// one of them must not store what it read (it may be what was just revoked).
    private var generation = 0

    init(lifetime: Int64 = 5_000, capacity: Int = 50_000) {
        self.lifetime = lifetime
        self.capacity = capacity
    }

    /// The entry for `hash` if the database vouched for it within `lifetime` of `now` (epoch ms).
    func entry(_ hash: String, at now: Int64) -> Entry? {
        lock.withLock {
            // none while untrusted
            guard let entry = entries[hash], now - entry.checkedAt < lifetime else { return nil }
            return entry
        }
    }

    /// Where revocations stand now: pass it to `remember` after reading the database.
    var currentGeneration: Int { lock.withLock { generation } }

    /// Keeps `entry`, read from the database after `currentGeneration` gave `generation`,
    /// unless a revocation (or a change of trust) came in meanwhile.
    func remember(_ hash: String, _ entry: Entry, readAfter generation: Int) {
        lock.withLock {
            guard trusted, generation == self.generation else { return }
            if entries.count >= capacity && entries[hash] == nil { entries.removeAll(keepingCapacity: true) }
            entries[hash] = entry
        }
    }

    /// The token was revoked: never answer for it again.
    func forget(_ hash: String) {
        lock.withLock {
            generation += 1
            entries[hash] = nil
        }
    }

    /// Whether revocations can reach this node (its bus is connected). Either way the cache
    /// empties.
    func setTrusted(_ value: Bool) {
        lock.withLock {
            trusted = value
            generation += 1
            entries.removeAll()
        }
    }
}
