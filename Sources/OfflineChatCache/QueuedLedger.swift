import Foundation
import OfflineChatLocking

/// How many messages a user's outbox held when last noted, kept in the key store, outside the
/// cache's folder: a cache whose files vanish (iOS purging a `Caches/` folder, a cleaned-up
/// container) is told apart from a first launch, and the queued messages it took with it are
/// counted (`CacheResetReason.vanished`).
///
/// Noted once a session has begun (after any reset it brought was reported), when the app goes
/// to the background (`suspend()`: the system purges only an app that is not running), after an
/// awaited flush and after `clearOfflineCache()`; forgotten with the cache (logout, a rejected
/// token, another user's login). An empty outbox is recorded as no record at all, so a purge
/// that lost nothing (or a reinstall: Keychain items outlive the app) reports nothing. A key
/// store that cannot answer (before the first unlock) is skipped: the ledger never holds a
/// session up. Notes and the forgetting are serialized, and nothing is noted once forgotten.
public final class QueuedLedger: Sendable {
    let keyStore: any KeyStore
    /// `<appID>/<uid>/queued`: beside the cache key's account `<appID>/<uid>`, and no uid's key
    /// account (a uid has no `/`).
    let account: String
    private struct State {
        /// The count stored (0: none), once read or written.
        var known: Int?
        var forgotten = false
    }
    private let state = Locked(State())

    public init(keyStore: any KeyStore, keyAccount: String) {
        self.keyStore = keyStore
        account = keyAccount + "/queued"
    }

    /// The count last noted; nil when nothing is (never noted, nothing queued, forgotten, or
    /// the store cannot answer).
    public func recorded() -> Int? {
        state.withLock { state in
            let count = load()
            state.known = count ?? 0
            return count
        }
    }

    /// Records `count` unless that is what the store already holds.
    public func note(_ count: Int) {
        state.withLock { state in
            guard !state.forgotten else { return }
            let stored = state.known ?? load() ?? 0
            guard stored != count else {
                state.known = stored
                return
            }
            do {
                if count == 0 {
                    try keyStore.delete(account: account)
                } else {
                    try keyStore.save(Data(String(count).utf8), account: account)
                }
                state.known = count
            } catch {
                state.known = nil  // unknown: read again next time
            }
        }
    }

    /// Forgets the count for good: the cache is being deleted on purpose.
    public func forget() {
        state.withLock { state in
            state.forgotten = true
            state.known = 0
            try? keyStore.delete(account: account)
        }
    }

    private func load() -> Int? {
        guard let data = try? keyStore.load(account: account) else { return nil }
        return Int(String(decoding: data, as: UTF8.self))
    }
}
