/// One entry of the logged-in user's conversation list.
public struct Conversation: Sendable {
    /// `a~b` for one-to-one chats, `group_<guid>` for groups.
    public var conversationId: String
    /// `.user` or `.group`.
    public var conversationType: ReceiverType
    /// A `User` or a `Group`.
    public var conversationWith: any AppEntity
    /// The newest message, if any.
    public var lastMessage: BaseMessage?
    /// Messages from others after the user's read receipt.
    public var unreadMessageCount: Int
    /// Epoch milliseconds of the last activity.
    public var updatedAt: Int64
    /// The user's own read receipt.
    public var lastReadMessageId: Int64?
    /// The user's own delivery receipt.
    public var lastDeliveredMessageId: Int64?
    /// The other user's receipts (one-to-one chats).
    public var peerReadMessageId: Int64?
    /// The other user's delivery receipt (one-to-one chats).
    public var peerDeliveredMessageId: Int64?

    init(_ payload: ConversationPayload, source: MessageSource) {
        conversationId = payload.conversationId
        conversationType = payload.conversationType
        switch payload.conversationWith {
        case .user(let user): conversationWith = User(user)
        case .group(let group): conversationWith = Group(group)
        }
        lastMessage = payload.lastMessage.map { BaseMessage.make($0, source: source) }
        unreadMessageCount = payload.unreadMessageCount
        updatedAt = payload.updatedAt
        lastReadMessageId = payload.lastReadMessageId
        lastDeliveredMessageId = payload.lastDeliveredMessageId
        peerReadMessageId = payload.peerReadMessageId
        peerDeliveredMessageId = payload.peerDeliveredMessageId
    }
}
