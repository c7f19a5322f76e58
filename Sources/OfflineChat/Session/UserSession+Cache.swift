import Foundation
import OfflineChatCache
import OfflineChatSQLite

extension UserSession {
    /// This user's cache, opened (or rebuilt) in the configured format by `CacheOpener`. No
    /// cache when offline support is off, when encryption cannot be applied and the behaviour
    /// is `.onlineOnly`, when the key store stays unavailable, or when an unreadable cache
    /// cannot be deleted.
    static func openCache(uid: String, directory: URL, account: String, config: ChatConfig) -> CacheOpening {
        let offline = config.offline
        guard offline.enabled else { return CacheOpening() }
        var encrypt = offline.encryption
        if encrypt && !Connection.cipherAvailable && offline.encryptionFailureBehavior == .plaintextFallback {
            config.logger.log(
                .error,
                "encryption is on but this build has no SQLCipher: the offline cache is NOT encrypted (plaintextFallback)"
            )
            encrypt = false
        }
        let limits = CacheLimits(
            maxConversations: offline.maxConversations, maxMessagesPerConversation: offline.maxMessagesPerConversation,
            maxStorageSize: offline.maxStorageSize)
        let opener = CacheOpener(
            directory: directory, uid: uid, account: account, encrypt: encrypt,
            keyStore: config.resolvedKeyStore, limits: limits, clock: { [clock = config.clock] in clock.now() })
        let opening = opener.open()
        if let problem = opening.problem { config.logger.log(opening.cache == nil ? .error : .warning, problem) }
        return opening
    }
}
