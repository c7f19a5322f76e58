import Foundation
import OfflineChatCache

/// Everything a `ChatClient` needs to start. A value: build it once, hand it to the client.
public struct ChatConfig: Sendable {
    /// The app's id: letters, digits, `_ - . @`. Caches are kept per app and user.
    public var appID: String
    /// chatd's base URL, e.g. `http://127.0.0.1:8080`.
    public var server: URL
    /// Where per-user caches live: `storageDirectory/<appID>/<uid>`
    /// (`ChatConfig.defaultStorageDirectory` unless set).
    public var storageDirectory: URL
    /// Offline support: the cache, its limits, encryption and the outbox (off by default).
    public var offline: OfflineConfig
    /// Every listener and completion callback runs here.
    public var callbackQueue: DispatchQueue
    /// Time for every timeout, backoff and delay.
    public var clock: any ChatClock
    /// How long a new connection must stay up before it counts as settled (milliseconds).
    public var connectionSettleDelay: Int64 = 2_500
    /// Reconnect backoff: first delay and cap (milliseconds), with full jitter.
    public var reconnectBaseDelay: Int64 = 500
    /// The longest wait between two reconnect attempts (milliseconds).
    public var reconnectMaxDelay: Int64 = 30_000
    /// HTTP requests that take longer fail as `ERROR_INTERNET_UNAVAILABLE` (seconds).
    public var requestTimeout: TimeInterval = 15
    /// `downloadMedia` stops a download past this many bytes (or past the size its attachment
    /// states, if smaller): `ERROR_MEDIA_TOO_LARGE`, nothing stored.
    public var maxMediaDownloadSize: Int64 = 64 << 20
    /// A PEM file of certificates the Linux transports trust for `https`/`wss` besides the
    /// system's (a private CA, a test's self-signed certificate). Apple platforms use the
    /// system's trust settings.
    public var trustedCertificates: URL?
    /// Where the SDK logs (unless set: the system log on Apple platforms, standard error elsewhere).
    public var logger: any ChatLogger
    /// Where cache keys are kept (`OfflineConfig.encryption`). Nil: the Keychain on Apple
    /// platforms, else a `FileKeyStore` in `storageDirectory/.keys` (outside every cache).
    public var keyStore: (any KeyStore)?
    /// How HTTP requests travel. Nil: the platform's (URLSession on Apple platforms, the SDK's
    /// own HTTP/1.1 client on Linux). Tests set a stand-in (`ChatTesting`'s `FakeChatd`).
    public var httpTransport: (any HTTPTransport)?
    /// How the realtime WebSocket opens. Nil: the platform's (`URLSessionWebSocketTask` on Apple
    /// platforms, the SDK's own RFC 6455 client on Linux). Tests set a stand-in.
    public var realtimeTransport: (any RealtimeTransport)?

    /// A configuration with the defaults above; set the rest as properties.
    public init(
        appID: String, server: URL, storageDirectory: URL = ChatConfig.defaultStorageDirectory,
        offline: OfflineConfig = OfflineConfig(),
        callbackQueue: DispatchQueue = .main, clock: any ChatClock = SystemClock(),
        logger: any ChatLogger = ChatConfig.defaultLogger
    ) {
        self.appID = appID
        self.server = server
        self.storageDirectory = storageDirectory
        self.offline = offline
        self.callbackQueue = callbackQueue
        self.clock = clock
        self.logger = logger
    }
}

extension ChatConfig {
    /// Where caches live unless `storageDirectory` says otherwise: the app's Application Support
    /// folder on Apple platforms (kept across launches and updates, never purged like
    /// `Caches/`, which would silently take queued messages with it), `$XDG_DATA_HOME` (or
    /// `~/.local/share`) elsewhere; in an `OfflineChat` folder. Each cache folder is excluded
    /// from backups and, on iOS, readable once the device has been unlocked after a restart
    /// (`completeUntilFirstUnlock`: background work can use it while the device is locked).
    public static var defaultStorageDirectory: URL {
        #if canImport(Darwin)
        let base =
            FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
        return base.appendingPathComponent("OfflineChat", isDirectory: true)
        #else
        return dataHomeStorage(
            environment: ProcessInfo.processInfo.environment, home: FileManager.default.homeDirectoryForCurrentUser)
        #endif
    }

    /// The XDG rule: `$XDG_DATA_HOME/OfflineChat`, or `~/.local/share/OfflineChat` without one.
    static func dataHomeStorage(environment: [String: String], home: URL) -> URL {
        let base =
            environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0, isDirectory: true) }
            ?? home.appendingPathComponent(".local/share", isDirectory: true)
        return base.appendingPathComponent("OfflineChat", isDirectory: true)
    }

    /// The key store in use: the configured one or the platform's.
    var resolvedKeyStore: any KeyStore {
        if let keyStore { return keyStore }
        #if canImport(Security)
        return KeychainKeyStore()
        #else
        return FileKeyStore(directory: storageDirectory.appendingPathComponent(".keys", isDirectory: true))
        #endif
    }
}
