/// What to do when encryption is on but cannot be applied at all (for example a build
/// without SQLCipher).
public enum EncryptionFailureBehavior: String, Sendable {
    /// No local cache: the session runs server-only and `isOfflineEnabled()` is false.
    case onlineOnly
    /// Open an unencrypted cache and log the downgrade at error level.
    case plaintextFallback
}

/// Offline support: the on-device cache, its limits and the outbox. Off by default.
public struct OfflineConfig: Sendable, Equatable {
    /// Keep a cache and an outbox for the logged-in user (default off: every read asks the
    /// server, a send without a connection fails).
    public var enabled = false
    /// SQLCipher at rest (default off).
    public var encryption = false
    /// What happens when `encryption` is on but an encrypted cache cannot be had.
    public var encryptionFailureBehavior = EncryptionFailureBehavior.onlineOnly
    /// Bytes of database and media on disk; zero or less means unlimited.
    public var maxStorageSize: Int64 = 250 << 20
    /// Conversations kept with their messages (clamped to 1…10,000).
    public var maxConversations = 100 { didSet { maxConversations = Self.clamp(maxConversations, 1...10_000) } }
    /// Messages kept per conversation (clamped to 1…100,000).
    public var maxMessagesPerConversation = 500 {
        didSet { maxMessagesPerConversation = Self.clamp(maxMessagesPerConversation, 1...100_000) }
    }
    /// Queued sends at once (clamped to 1…10,000); a send beyond it is refused, never an old one dropped.
    public var maxPendingMessages = 50 { didSet { maxPendingMessages = Self.clamp(maxPendingMessages, 1...10_000) } }
    /// Send queued messages as soon as the connection settles (else they wait for a retry).
    public var autoSendPendingOnReconnect = true

    /// Offline support off, every limit at its default.
    public init() {}

    /// The seed's initializer form: `OfflineConfig(enabled: true, encryption: true,
    /// encryptionFailureBehavior: .onlineOnly)`; the limits keep their defaults (set them as
    /// properties, or use `Builder`).
    public init(
        enabled: Bool = false, encryption: Bool = false,
        encryptionFailureBehavior: EncryptionFailureBehavior = .onlineOnly
    ) {
        self.enabled = enabled
        self.encryption = encryption
        self.encryptionFailureBehavior = encryptionFailureBehavior
    }

    static func clamp(_ value: Int, _ range: ClosedRange<Int>) -> Int {
        min(max(value, range.lowerBound), range.upperBound)
    }

    /// The seed's builder shape: `OfflineConfig.Builder().setEnabled(true)…build()`.
    public final class Builder: ChainedBuilder {
        private var config = OfflineConfig()
        /// The defaults (`OfflineConfig()`); each setter sets the property of the same name.
        public init() {}
        /// Sets `enabled`.
        @discardableResult public func setEnabled(_ value: Bool) -> Builder { with { $0.config.enabled = value } }
        /// Sets `encryption`.
        @discardableResult public func setEncryption(_ value: Bool) -> Builder { with { $0.config.encryption = value } }
        /// Sets `encryptionFailureBehavior`.
        @discardableResult public func setEncryptionFailureBehavior(_ value: EncryptionFailureBehavior) -> Builder {
            with { $0.config.encryptionFailureBehavior = value }
        }
        /// Sets `maxStorageSize` (bytes).
        @discardableResult public func setMaxStorageSize(_ bytes: Int64) -> Builder {
            with { $0.config.maxStorageSize = bytes }
        }
        /// Sets `maxConversations`.
        @discardableResult public func setMaxConversations(_ value: Int) -> Builder {
            with { $0.config.maxConversations = value }
        }
        /// Sets `maxMessagesPerConversation`.
        @discardableResult public func setMaxMessagesPerConversation(_ value: Int) -> Builder {
            with { $0.config.maxMessagesPerConversation = value }
        }
        /// Sets `maxPendingMessages`.
        @discardableResult public func setMaxPendingMessages(_ value: Int) -> Builder {
            with { $0.config.maxPendingMessages = value }
        }
        /// Sets `autoSendPendingOnReconnect`.
        @discardableResult public func setAutoSendPendingOnReconnect(_ value: Bool) -> Builder {
            with { $0.config.autoSendPendingOnReconnect = value }
        }
        /// The configuration as set.
        public func build() -> OfflineConfig { config }
    }
}
