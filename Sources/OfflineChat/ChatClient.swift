import Foundation
import OfflineChatCache
import OfflineChatLocking

/// The SDK's entry point: one instance per app configuration. Several clients may run in
/// one process (tests, multi-account apps); each has its own session and listeners.
///
/// ```swift
/// let chat = try ChatClient(config: ChatConfig(appID: "demo", server: url, storageDirectory: dir))
/// let me = try await chat.login(uid: "alice", authToken: token)
/// chat.addMessageListener("MSG", listener)
/// ```
public final class ChatClient: Sendable {
    /// The configuration this client was made with.
    public let config: ChatConfig
    let messageListeners: ListenerRegistry<any MessageListener>
    let connectionListeners: ListenerRegistry<any ConnectionListener>
    let conversationListeners: ListenerRegistry<any ConversationListener>
    let groupListeners: ListenerRegistry<any GroupListener>
    let syncListeners: ListenerRegistry<any SyncListener>
    let resetListeners: ListenerRegistry<any OfflineCacheResetListener>
    /// The current session (and the login generation), under one lock.
    let session = SessionSlot()
    /// The app is in the background (`suspend()` until `resume()`): a session that begins
    /// meanwhile (a login, the re-login after the first unlock) starts suspended.
    let suspended = Locked(false)
    let transport: any RealtimeTransport
    /// What a session does with its realtime stream; tells the registries above (as the sync does).
    let dispatch: RealtimeDispatch
    /// The system's "protected data is available" notification, where there is one.
    let protectedData = ProtectedDataObserver()

    /// What opening the cache proved about its encryption.
    struct CacheSecurity: Sendable {
        /// An encrypted open was proven.
        var atRest = false
        /// The key came from the key store.
        var keyFromStore = false
        /// `cipher_version`, once an encrypted open is proven.
        var cipherVersion: String?
    }

    /// A client for `config`'s server; nobody is logged in yet. Throws `ERROR_INVALID_ARGUMENT`
    /// for an `appID` with characters other than letters, digits, `_ - . @`, or a `server` that is
    /// not an `http` or `https` URL.
    public convenience init(config: ChatConfig) throws {
        try self.init(
            config: config,
            transport: config.realtimeTransport
                ?? RealtimeTransports.platformDefault(
                    clock: config.clock, trustedCertificates: config.trustedCertificates))
    }

    /// `protectedDataNotification`: the notification that calls `protectedDataBecameAvailable()`
    /// (the platform's by default; tests post their own).
    init(
        config: ChatConfig, transport: any RealtimeTransport,
        protectedDataNotification: (NotificationCenter, Notification.Name)? = ProtectedDataObserver
            .platformNotification.map { (NotificationCenter.default, $0) }
    ) throws {
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
        dispatch = RealtimeDispatch(
            listeners: SyncEngine.Listeners(
                sync: syncListeners, conversations: conversationListeners, messages: messageListeners,
                groups: groupListeners),
            logger: config.logger)
        if let (center, name) = protectedDataNotification { protectedData.start(center, name, for: self) }
    }

    static let idCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.@")

    /// The logged-in user, nil when logged out.
    public func getLoggedInUser() -> User? { session.current?.user }

    /// The realtime connection's state now; `.disconnected` when logged out.
    public func getConnectionStatus() -> ConnectionStatus { session.current?.realtime.status ?? .disconnected }

    /// The current session, or `ERROR_USER_NOT_LOGGED_IN`.
    func requireSession() throws -> UserSession {
        guard let current = session.current else { throw ChatException.notLoggedIn() }
        return current
    }

    // MARK: - Listeners
    //
    // Listeners are held weakly and registered by ID: adding with an ID that is taken replaces
    // the listener there. Callbacks run on `config.callbackQueue`.

    /// Messages received (text, media, custom, action, call), edited, deleted, reacted to or
    /// synced; receipts and typing.
    public func addMessageListener(_ id: String, _ listener: any MessageListener) {
        messageListeners.add(id) { [weak listener] in listener }
    }
    /// Removes the message listener registered as `id`.
    public func removeMessageListener(_ id: String) { messageListeners.remove(id) }
    /// The realtime connection's changes (connecting, connected, disconnected).
    public func addConnectionListener(_ id: String, _ listener: any ConnectionListener) {
        connectionListeners.add(id) { [weak listener] in listener }
    }
    /// Removes the connection listener registered as `id`.
    public func removeConnectionListener(_ id: String) { connectionListeners.remove(id) }
    /// Conversation updates and the sync's progress events (OpenIM's `onSyncServer…`).
    public func addConversationListener(_ id: String, _ listener: any ConversationListener) {
        conversationListeners.add(id) { [weak listener] in listener }
    }
    /// Removes the conversation listener registered as `id`.
    public func removeConversationListener(_ id: String) { conversationListeners.remove(id) }
    /// Group events: members joining, leaving, added, kicked, banned, unbanned, their scope or
    /// the group's owner changed.
    public func addGroupListener(_ id: String, _ listener: any GroupListener) {
        groupListeners.add(id) { [weak listener] in listener }
    }
    /// Removes the group listener registered as `id`.
    public func removeGroupListener(_ id: String) { groupListeners.remove(id) }
    /// The catch-up sync's two phases (`SyncListener`).
    public func addSyncListener(_ id: String, _ listener: any SyncListener) {
        syncListeners.add(id) { [weak listener] in listener }
    }
    /// Removes the sync listener registered as `id`.
    public func removeSyncListener(_ id: String) { syncListeners.remove(id) }
    /// A reset is found while `login` opens the cache (its callback is queued before `login`
    /// returns): add this listener before logging in.
    public func addOfflineCacheResetListener(_ id: String, _ listener: any OfflineCacheResetListener) {
        resetListeners.add(id) { [weak listener] in listener }
    }
    /// Removes the cache reset listener registered as `id`.
    public func removeOfflineCacheResetListener(_ id: String) { resetListeners.remove(id) }

    // MARK: - Helpers

    /// Runs `work` and reports its outcome on the callback queue: exactly one callback (a
    /// session's own work goes through `UserSession.settle`, which its end cancels).
    func settle<T: Sendable>(
        _ work: @escaping @Sendable () async throws -> T, onSuccess: @escaping @Sendable (T) -> Void,
        onError: @escaping @Sendable (ChatException) -> Void
    ) {
        let queue = config.callbackQueue
        Task { await Settled.report(work, on: queue, onSuccess: onSuccess, onError: onError) }
    }
}
