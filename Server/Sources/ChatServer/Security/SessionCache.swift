import Foundation
import OfflineChatLocking

/// Bearer tokens this node found valid lately, so a request does not cost a database round
/// trip to prove its token again (on PostgreSQL a transaction of its own). Entries are found by
/// the token itself, so a request that hits one computes no SHA-256 (a twentieth of a history
/// read's time); a revocation names the token's hash, which each entry keeps. The tokens stay
/// in this node's memory while their entries do, as they passed through it in each request.
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
        /// The token's SHA-256 (`Store.tokenHash`), which revocations name.
        let hash: String
    }

    /// How long an entry is used, in milliseconds.
    let lifetime: Int64
    /// Entries held at most; a full cache starts over.
    let capacity: Int
    private let state = Locked(State())

    private struct State {
        /// By token.
        var entries: [String: Entry] = [:]
        /// The token of each entry, by its hash.
        var tokens: [String: String] = [:]
        var trusted = true
        /// Bumped by every revocation and change of trust: a check that read the database before
        /// one of them must not store what it read (it may be what was just revoked).
        var generation = 0
    }

    init(lifetime: Int64 = 5_000, capacity: Int = 50_000) {
        self.lifetime = lifetime
        self.capacity = capacity
    }

    /// The entry for `token` if the database vouched for it within `lifetime` of `now` (epoch ms).
    func entry(_ token: String, at now: Int64) -> Entry? {
        state.withLock {
            // none while untrusted
            guard let entry = $0.entries[token], now - entry.checkedAt < lifetime else { return nil }
            return entry
        }
    }

    /// Where revocations stand now: pass it to `remember` after reading the database.
    var currentGeneration: Int { state.withLock { $0.generation } }

    /// Keeps `entry`, read from the database after `currentGeneration` gave `generation`,
    /// unless a revocation (or a change of trust) came in meanwhile.
    func remember(_ token: String, _ entry: Entry, readAfter generation: Int) {
        state.withLock {
            guard $0.trusted, generation == $0.generation else { return }
            if $0.entries.count >= capacity && $0.entries[token] == nil {
                $0.entries.removeAll(keepingCapacity: true)
                $0.tokens.removeAll(keepingCapacity: true)
            }
            $0.entries[token] = entry
            $0.tokens[entry.hash] = token
        }
    }

    /// The token with this hash was revoked: never answer for it again.
    func forget(_ hash: String) {
        state.withLock {
            $0.generation += 1
            if let token = $0.tokens.removeValue(forKey: hash) { $0.entries[token] = nil }
        }
    }

    /// Whether revocations can reach this node (its bus is connected). Either way the cache
    /// empties.
    func setTrusted(_ value: Bool) {
        state.withLock {
            $0.trusted = value
            $0.generation += 1
            $0.entries.removeAll()
            $0.tokens.removeAll()
        }
    }
}
