import Foundation
import OfflineChatLocking

/// How many messages a user's outbox held when last noted, kept in the key store, outside the
/// cache's folder: a cache whose files vanish (iOS purging a `Caches/` folder, a cleaned-up
/// container) is told apart from a first launch, and the queued messages it took with it are
/// counted (`CacheResetReason.vanished`).
///
/// Noted when a cache opens, when the app goes to the background (`suspend()`: the system
/// purges only an app that is not running) and after an awaited flush; forgotten with the cache
/// (logout, a rejected token, another user's login). A key store that cannot answer (before the
/// first unlock) is skipped: the ledger never holds a session up.
public final class QueuedLedger: Sendable {
    let keyStore: any KeyStore
    /// `<appID>/<uid>.queued`, beside the cache key's account.
    let account: String
    /// The count last read or written, to write only on a change.
    private let known = Locked<Int?>(nil)

    public init(keyStore: any KeyStore, keyAccount: String) {
        self.keyStore = keyStore
        account = keyAccount + ".queued"
    }

    /// The count last noted; nil when nothing is (never noted, forgotten, or the store cannot
    /// answer).
    public func recorded() -> Int? {
        guard let data = try? keyStore.load(account: account),
            let count = Int(String(decoding: data, as: UTF8.self))
        else { return nil }
        known.withLock { $0 = count }
        return count
    }

    /// Records `count` unless it is what the store already holds.
    public func note(_ count: Int) {
        let unchanged = known.withLock { $0 == count }
        if unchanged || recorded() == count { return }
        guard (try? keyStore.save(Data(String(count).utf8), account: account)) != nil else { return }
        known.withLock { $0 = count }
    }

    /// Forgets the count: the cache went on purpose.
    public func forget() {
        try? keyStore.delete(account: account)
        known.withLock { $0 = nil }
    }
}
