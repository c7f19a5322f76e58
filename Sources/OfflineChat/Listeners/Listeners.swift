/// New, edited and deleted messages, typing and receipts. Every method is optional.
public protocol MessageListener: AnyObject {
    /// A text message arrived (`message.source`: `.realtime`, or `.sync` when a catch-up sync
    /// brought it).
    func onTextMessageReceived(_ message: TextMessage)
    /// A media message arrived (its attachment's url; `downloadMedia` fetches the bytes).
    func onMediaMessageReceived(_ message: MediaMessage)
    /// A custom message arrived (its `customData`).
    func onCustomMessageReceived(_ message: CustomMessage)
    /// Group membership changes (and other server-written messages).
    func onActionMessageReceived(_ message: ActionMessage)
    /// A call was initiated, or its status changed.
    func onCallMessageReceived(_ message: Call)
    /// A message was edited: the message as it is now.
    func onMessageEdited(_ message: BaseMessage)
    /// A deletion arrives as an update: the message with `deletedAt` set.
    func onMessageDeleted(_ message: BaseMessage)
    /// Reaction counts changed (`message.reactions`).
    func onMessageReactionChanged(_ message: BaseMessage, _ reaction: Reaction, added: Bool)
    /// Someone started typing to the user or in one of their groups.
    func onTypingStarted(_ indicator: TypingIndicator)
    /// They stopped.
    func onTypingEnded(_ indicator: TypingIndicator)
    /// Someone received a conversation's messages up to `receipt.messageId`.
    func onMessagesDelivered(_ receipt: MessageReceipt)
    /// Someone read a conversation's messages up to `receipt.messageId`.
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
    /// A connection attempt began (after login, or after a backoff).
    func onConnecting()
    /// The realtime connection is up.
    func onConnected()
    /// It went down; the client reconnects with backoff (until logout, or until a rejected
    /// token ends the session).
    func onDisconnected()
}

extension ConnectionListener {
    public func onConnecting() {}
    public func onConnected() {}
    public func onDisconnected() {}
}

/// The realtime connection.
public enum ConnectionStatus: String, Sendable {
    /// Down (or logged out).
    case disconnected
    /// An attempt is under way.
    case connecting
    /// Up: realtime events arrive.
    case connected
}

/// Someone is typing to the logged-in user or in one of their groups.
public struct TypingIndicator: Sendable, Equatable {
    /// Who is typing.
    public var sender: String
    /// To whom: the logged-in user's uid, or a group's guid.
    public var receiverId: String
    /// `.user` or `.group`.
    public var receiverType: ReceiverType
}

/// Someone received or read a conversation up to a message.
public struct MessageReceipt: Sendable, Equatable {
    /// Delivered (received by a device) or read.
    public enum Kind: String, Sendable {
        /// Received by a device.
        case delivered
        /// Read.
        case read
    }
    /// Which of the two.
    public var kind: Kind
    /// The conversation it covers.
    public var conversationId: String
    /// Who received or read.
    public var uid: String
    /// Every message up to and including this one.
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
    /// The sync finished (progress reached 100).
    func onSyncServerFinish(reInstall: Bool)
    /// The sync failed; it runs again after the next reconnect.
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
    /// Someone joined a group on their own.
    func onGroupMemberJoined(_ action: ActionMessage)
    /// Someone left.
    func onGroupMemberLeft(_ action: ActionMessage)
    /// A moderator added someone.
    func onMemberAddedToGroup(_ action: ActionMessage)
    /// A moderator removed someone (they may join again).
    func onGroupMemberKicked(_ action: ActionMessage)
    /// A moderator banned someone (they cannot join until unbanned).
    func onGroupMemberBanned(_ action: ActionMessage)
    /// A ban was lifted.
    func onGroupMemberUnbanned(_ action: ActionMessage)
    /// A member's scope changed (participant, moderator, admin).
    func onGroupMemberScopeChanged(_ action: ActionMessage)
    /// The group has a new owner.
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
