import Foundation
import OfflineChatCache
import OfflineChatSQLite

/// Why the cache was rebuilt (`OfflineCacheResetListener`).
public typealias OfflineCacheResetReason = CacheResetReason

/// Told when the SDK had to throw the cache away and rebuild it (never on logout). Held
/// weakly, registered by ID, called on the callback queue. Add it before `login`: resets are
/// found while login opens the cache.
///
/// The order at login: `onOfflineCacheReset`, then, for `.encryptionChanged`, one
/// `MessageListener.onOutboxMessageFailed` per queued message the old cache held (status
/// `.failed`, reason `.discarded`, error `ERROR_OFFLINE_MESSAGE_DISCARDED`), in the order the
/// messages were composed. The other reasons cannot read the old file, so their messages are
/// lost unseen and only counted (or not).
public protocol OfflineCacheResetListener: AnyObject {
    /// `pendingMessagesLost`: unsent messages that went with the old cache (those queued, and
    /// those that had already failed, which were reported when they failed and are not
    /// reported again), or `ChatClient.offlinePendingCountUnknown` when they could not be counted.
    func onOfflineCacheReset(_ reason: OfflineCacheResetReason, _ pendingMessagesLost: Int)
}

/// The string values of `getOfflineEncryptionStatus()`.
public enum OfflineEncryptionTier {
    /// `atRest`: an encrypted open of the cache is proven (SQLCipher).
    public static let atRestSqlcipher = "SQLCIPHER"
    /// `atRest`: anything else (no cache, a plain one, or not yet proven).
    public static let atRestNone = "NONE"
    /// `keyStorage`: this session's key came from the key store (the Keychain, or a key file).
    public static let keyStorageKeystore = "KEYSTORE"
    /// `keyStorage`: it did not (no encryption, or no key yet).
    public static let keyStorageNone = "NONE"
}

extension ChatClient {
    /// `pendingMessagesLost` when the lost queued messages could not be counted.
    public static let offlinePendingCountUnknown = -1

    /// What the cache's encryption is actually doing, never what was merely asked for, and
    /// never any part of the key:
    /// - `enabled` (Bool): `OfflineConfig.encryption` as configured (false when offline
    ///   support is off);
    /// - `atRest` (String): `"SQLCIPHER"` once an encrypted open is proven, else `"NONE"`;
    /// - `keyStorage` (String): `"KEYSTORE"` when this session's key came from the key
    ///   store, else `"NONE"`;
    /// - `cipherAvailable` (Bool): SQLCipher is linked in this build (false when encryption
    ///   is off);
    /// - `cipher` (String or NSNull): `cipher_version` once an encrypted open is proven;
    /// - `leakage` (String): what encryption at rest never covers.
    public func getOfflineEncryptionStatus() -> [String: Any] {
        let enabled = config.offline.enabled && config.offline.encryption
        let security = session.current?.security ?? CacheSecurity()
        return [
            "enabled": enabled,
            "atRest": security.atRest ? OfflineEncryptionTier.atRestSqlcipher : OfflineEncryptionTier.atRestNone,
            "keyStorage": security.keyFromStore
                ? OfflineEncryptionTier.keyStorageKeystore : OfflineEncryptionTier.keyStorageNone,
            "cipherAvailable": enabled && Connection.cipherAvailable,
            "cipher": security.atRest ? (security.cipherVersion ?? "unknown") as Any : NSNull(),
            "leakage": Self.encryptionLeakage
        ]
    }

    static let encryptionLeakage =
        "Media files (downloads and queued sends in the cache's media folder) are stored unencrypted "
        + "outside the database; only the message database is encrypted at rest."
}
