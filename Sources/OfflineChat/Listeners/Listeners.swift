/// New, edited and deleted messages, typing and receipts. Every method is optional.
public protocol MessageListener: AnyObject {
    func onTextMessageReceived(_ message: TextMessage)
    func onMediaMessageReceived(_ message: MediaMessage)
    func onCustomMessageReceived(_ message: CustomMessage)
    /// Group membership changes (and other server-written messages).
    func onActionMessageReceived(_ message: ActionMessage)
    func onCallMessageReceived(_ message: Call)
    func onMessageEdited(_ message: BaseMessage)
    /// A deletion arrives as an update: the message with `deletedAt` set.
    func onMessageDeleted(_ message: BaseMessage)
    /// Reaction counts changed (`message.reactions`).
    func onMessageReactionChanged(_ message: BaseMessage, _ reaction: Reaction, added: Bool)
    func onTypingStarted(_ indicator: TypingIndicator)
    func onTypingEnded(_ indicator: TypingIndicator)
    func onMessagesDelivered(_ receipt: MessageReceipt)
    func onMessagesRead(_ receipt: MessageReceipt)
    /// After a catch-up sync: updates to messages already cached, together.
    func onMessagesSynced(_ messages: [BaseMessage])
    /// A message from the outbox was sent: the server's message, with its `localMessageId`.
    /// Fires for every queued send, also those queued before the app restarted (whose send
    /// callbacks are gone), after the send's own `onMessageSent`.
    func onOutboxMessageSent(_ message: BaseMessage)
    /// A message from the outbox failed for good, status `.failed`: `getFailureReason()` is
    /// `.permanent` (the server refused it; `failureError` is its error), `.transient` (its
    /// retries ran out) or `.discarded` (a logout, a clear or a removed conversation).
    func onOutboxMessageFailed(_ message: BaseMessage)
}

extension MessageListener {
    public func onTextMessageReceived(_ message: TextMessage) {}
    public func onMediaMessageReceived(_ message: MediaMessage) {}
    public func onCustomMessageReceived(_ message: CustomMessage) {}
    public func onActionMessageReceived(_ message: ActionMessage) {}
    public func onCallMessageReceived(_ message: Call) {}
    public func onMessageEdited(_ message: BaseMessage) {}
    public func onMessageDeleted(_ message: BaseMessage) {}
    public func onMessageReactionChanged(_ message: BaseMessage, _ reaction: Reaction, added: Bool) {}
    public func onTypingStarted(_ indicator: TypingIndicator) {}
    public func onTypingEnded(_ indicator: TypingIndicator) {}
    public func onMessagesDelivered(_ receipt: MessageReceipt) {}
    public func onMessagesRead(_ receipt: MessageReceipt) {}
    public func onMessagesSynced(_ messages: [BaseMessage]) {}
    public func onOutboxMessageSent(_ message: BaseMessage) {}
    public func onOutboxMessageFailed(_ message: BaseMessage) {}
}

/// The realtime connection's state changes.
public protocol ConnectionListener: AnyObject {
    func onConnecting()
    func onConnected()
    func onDisconnected()
}

extension ConnectionListener {
    public func onConnecting() {}
    public func onConnected() {}
    public func onDisconnected() {}
}

/// The realtime connection.
public enum ConnectionStatus: String, Sendable {
    case disconnected
    case connecting
    case connected
}

/// Someone is typing to the logged-in user or in one of their groups.
public struct TypingIndicator: Sendable, Equatable {
    public var sender: String
    public var receiverId: String
    public var receiverType: ReceiverType
}

/// Someone received or read a conversation up to a message.
public struct MessageReceipt: Sendable, Equatable {
    public enum Kind: String, Sendable { case delivered, read }
    public var kind: Kind
    public var conversationId: String
    /// Who received or read.
    public var uid: String
    public var messageId: Int64
    /// Epoch milliseconds.
    public var at: Int64
}

/// The conversation list and the catch-up sync's progress (OpenIM's events). Every method is
/// optional.
public protocol ConversationListener: AnyObject {
    /// The catch-up sync started; `reInstall` after a cache rebuild or a first install.
    func onSyncServerStart(reInstall: Bool)
    /// 0…100, never decreasing within one sync.
    func onSyncServerProgress(_ progress: Int)
    func onSyncServerFinish(reInstall: Bool)
    func onSyncServerFailed(reInstall: Bool)
    /// A cached conversation changed (a new message, a receipt).
    func onConversationUpdated(_ conversation: Conversation)
}

extension ConversationListener {
    public func onSyncServerStart(reInstall: Bool) {}
    public func onSyncServerProgress(_ progress: Int) {}
    public func onSyncServerFinish(reInstall: Bool) {}
    public func onSyncServerFailed(reInstall: Bool) {}
    public func onConversationUpdated(_ conversation: Conversation) {}
}

/// Group membership changes as they happen (each also arrives as an `ActionMessage`).
public protocol GroupListener: AnyObject {
    func onGroupMemberJoined(_ action: ActionMessage)
    func onGroupMemberLeft(_ action: ActionMessage)
    func onMemberAddedToGroup(_ action: ActionMessage)
    func onGroupMemberKicked(_ action: ActionMessage)
    func onGroupMemberBanned(_ action: ActionMessage)
    func onGroupMemberUnbanned(_ action: ActionMessage)
    func onGroupMemberScopeChanged(_ action: ActionMessage)
    func onOwnershipChanged(_ action: ActionMessage)
}

extension GroupListener {
    public func onGroupMemberJoined(_ action: ActionMessage) {}
    public func onGroupMemberLeft(_ action: ActionMessage) {}
    public func onMemberAddedToGroup(_ action: ActionMessage) {}
    public func onGroupMemberKicked(_ action: ActionMessage) {}
    public func onGroupMemberBanned(_ action: ActionMessage) {}
    public func onGroupMemberUnbanned(_ action: ActionMessage) {}
    public func onGroupMemberScopeChanged(_ action: ActionMessage) {}
    public func onOwnershipChanged(_ action: ActionMessage) {}
}
