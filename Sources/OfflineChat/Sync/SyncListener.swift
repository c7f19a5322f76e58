/// The catch-up sync's lifecycle. Each phase fires started, then exactly one of completed or
/// error, on the callback queue. Held weakly, registered by ID (`addSyncListener`).
public protocol SyncListener: AnyObject {
    /// The conversation refresh began (every sync starts with it).
    func onConversationSyncStarted()
    /// The refresh succeeded: the full, fresh conversation page (replace your list with it).
    func onConversationSyncCompleted(_ conversations: [Conversation])
    /// A transport or parse failure: the cache is untouched; the refresh retries next time.
    func onConversationSyncError(_ error: ChatException)
    /// The changelog sweep began. Never on a cold start.
    func onMessageSyncStarted()
    /// The sweep finished: the new and changed messages (action and call messages included).
    func onMessageSyncCompleted(_ messages: [BaseMessage], _ outcome: SyncOutcome)
    /// The sweep failed; it resumes on the next reconnect.
    func onMessageSyncError(_ error: ChatException)
}

extension SyncListener {
    public func onConversationSyncStarted() {}
    public func onConversationSyncCompleted(_ conversations: [Conversation]) {}
    public func onConversationSyncError(_ error: ChatException) {}
    public func onMessageSyncStarted() {}
    public func onMessageSyncCompleted(_ messages: [BaseMessage], _ outcome: SyncOutcome) {}
    public func onMessageSyncError(_ error: ChatException) {}
}

/// How far one message sweep got.
public enum SyncOutcome: String, Sendable {
    /// The changelog was fully replayed: the cache reflects every change up to the sync point.
    case caughtUp
    /// One page (up to 1,000 changes) was merged and the sync point advanced; more remain.
    case partial
}

/// `getSyncState()`.
public enum SyncState: String, Sendable {
    /// No sync is running.
    case idle
    /// A sync is running (its conversation refresh or its changelog sweep).
    case syncing
}
