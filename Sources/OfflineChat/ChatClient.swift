import ChatCache
import Foundation

/// The SDK's entry point: one instance per app configuration. Several clients may run in
/// one process (tests, multi-account apps); each has its own session and listeners.
///
/// ```swift
/// let chat = try ChatClient(config: ChatConfig(appID: "demo", server: url, storageDirectory: dir))
/// let me = try await chat.login(uid: "alice", authToken: token)
/// chat.addMessageListener("MSG", listener)
/// ```
public final class ChatClient: Sendable {
    public let config: ChatConfig
    let messageListeners: ListenerRegistry<any MessageListener>
    let connectionListeners: ListenerRegistry<any ConnectionListener>
    let conversationListeners: ListenerRegistry<any ConversationListener>
    let groupListeners: ListenerRegistry<any GroupListener>
    let syncListeners: ListenerRegistry<any SyncListener>
    let resetListeners: ListenerRegistry<any OfflineCacheResetListener>
    let session = Locked<Session?>(nil)
    let transport: any RealtimeTransport

    /// A logged-in user's live state.
    final class Session: Sendable {
        let user: User
        let api: APIClient
        let realtime: RealtimeConnection
        /// The user's cache; nil when offline support is off (or unavailable).
        let cache: ChatCache?
        /// Identifies the session to its realtime handlers, so a stopped connection's late
        /// events never touch a newer session.
        let owner: SessionOwner
        /// Queued sends (with the cache only).
        let outbox: Outbox?
        /// The catch-up sync (with the cache only).
        let sync: SyncEngine?
        /// What the cache's encryption achieved.
        let security: CacheSecurity
        init(
            user: User, api: APIClient, realtime: RealtimeConnection, cache: ChatCache?, owner: SessionOwner,
            outbox: Outbox?,
            sync: SyncEngine?, security: CacheSecurity
        ) {
            self.security = security
            self.user = user
            self.api = api
            self.realtime = realtime
            self.cache = cache
            self.owner = owner
            self.outbox = outbox
            self.sync = sync
        }
    }

    /// What opening the cache proved about its encryption.
    struct CacheSecurity: Sendable {
        /// An encrypted open was proven.
        var atRest = false
        /// The key came from the key store.
        var keyFromStore = false
        /// `cipher_version`, once an encrypted open is proven.
        var cipherVersion: String?
    }

    /// One login attempt's identity.
    final class SessionOwner: Sendable {}

    /// Bumped by every login and logout: a login commits its session only if no other login
    /// or logout happened while it was talking to the server.
    let sessionGeneration = Locked(0)
    /// The last logout's request to revoke its token: nil when it succeeded.
    let tokenRevocation = Locked<Task<ChatException?, Never>?>(nil)

    public convenience init(config: ChatConfig) throws {
        try self.init(
            config: config,
            transport: RealtimeTransports.platformDefault(trustedCertificates: config.trustedCertificates))
    }

    init(config: ChatConfig, transport: any RealtimeTransport) throws {
        guard !config.appID.isEmpty, config.appID.allSatisfy(Self.idCharacters.contains) else {
            throw ChatException.invalid("`appID` must be letters, digits, _ - . @")
        }
        guard ["http", "https"].contains(config.server.scheme ?? "") else {
            throw ChatException.invalid("`server` must be an http:// or https:// URL")
        }
        self.config = config
        self.transport = transport
        messageListeners = ListenerRegistry(queue: config.callbackQueue)
        connectionListeners = ListenerRegistry(queue: config.callbackQueue)
        conversationListeners = ListenerRegistry(queue: config.callbackQueue)
        groupListeners = ListenerRegistry(queue: config.callbackQueue)
        syncListeners = ListenerRegistry(queue: config.callbackQueue)
        resetListeners = ListenerRegistry(queue: config.callbackQueue)
    }

    static let idCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.@")

    /// The logged-in user, nil when logged out.
    public func getLoggedInUser() -> User? { session.current?.user }

    public func getConnectionStatus() -> ConnectionStatus { session.current?.realtime.status ?? .disconnected }

    /// The current session, or `ERROR_USER_NOT_LOGGED_IN`.
    func requireSession() throws -> Session {
        guard let current = session.current else { throw ChatException.notLoggedIn() }
        return current
    }

    // MARK: - Listeners

    public func addMessageListener(_ id: String, _ listener: any MessageListener) { messageListeners.add(id, listener) }
    public func removeMessageListener(_ id: String) { messageListeners.remove(id) }
    public func addConnectionListener(_ id: String, _ listener: any ConnectionListener) {
        connectionListeners.add(id, listener)
    }
    public func removeConnectionListener(_ id: String) { connectionListeners.remove(id) }
    public func addConversationListener(_ id: String, _ listener: any ConversationListener) {
        conversationListeners.add(id, listener)
    }
    public func removeConversationListener(_ id: String) { conversationListeners.remove(id) }
    public func addGroupListener(_ id: String, _ listener: any GroupListener) { groupListeners.add(id, listener) }
    public func removeGroupListener(_ id: String) { groupListeners.remove(id) }
    public func addSyncListener(_ id: String, _ listener: any SyncListener) { syncListeners.add(id, listener) }
    public func removeSyncListener(_ id: String) { syncListeners.remove(id) }
    /// A reset is found while `login` opens the cache (its callback is queued before `login`
    /// returns): add this listener before logging in.
    public func addOfflineCacheResetListener(_ id: String, _ listener: any OfflineCacheResetListener) {
        resetListeners.add(id, listener)
    }
    public func removeOfflineCacheResetListener(_ id: String) { resetListeners.remove(id) }

    // MARK: - Helpers

    /// Runs `work` and reports its outcome on the callback queue: exactly one callback.
    func settle<T: Sendable>(
        _ work: @escaping @Sendable () async throws -> T, onSuccess: @escaping @Sendable (T) -> Void,
        onError: @escaping @Sendable (ChatException) -> Void
    ) {
        let queue = config.callbackQueue
        Task {
            do {
                let value = try await work()
                queue.async { onSuccess(value) }
            } catch {
                let exception =
                    error as? ChatException
                    ?? ChatException(errorCode: ChatException.unexpectedResponse, errorDescription: "\(error)")
                queue.async { onError(exception) }
            }
        }
    }
}
