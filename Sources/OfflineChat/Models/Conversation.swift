/// One entry of the logged-in user's conversation list.
public struct Conversation: Sendable {
    /// `a~b` for one-to-one chats, `group_<guid>` for groups.
    public var conversationId: String
    public var conversationType: ReceiverType
    /// A `User` or a `Group`.
    public var conversationWith: any AppEntity
    public var lastMessage: BaseMessage?
    public var unreadMessageCount: Int
    /// Epoch milliseconds of the last activity.
    public var updatedAt: Int64
    public var lastReadMessageId: Int64?
    public var lastDeliveredMessageId: Int64?
    /// The other user's receipts (one-to-one chats).
    public var peerReadMessageId: Int64?
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
