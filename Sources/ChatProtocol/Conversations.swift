/// One entry of the caller's conversation list.
public struct ConversationPayload: Codable, Sendable, Equatable {
    /// For one-to-one chats: the two uids sorted and joined by `~`, a character uids cannot
    /// contain, so two different pairs never share an id.
    public var conversationId: String
    public var conversationType: ReceiverType
    /// The other participant.
    public var conversationWith: UserPayload
    public var lastMessage: MessagePayload?
    /// Messages from others after the caller's read receipt, deleted ones excluded.
    public var unreadMessageCount: Int
    /// The caller's own receipts.
    public var lastDeliveredMessageId: Int64?
    public var lastReadMessageId: Int64?
    /// The other side's receipts (for ticks on one's own messages).
    public var peerDeliveredMessageId: Int64?
    public var peerReadMessageId: Int64?
    /// Epoch milliseconds of the last activity; the list is ordered by it, newest first.
    public var updatedAt: Int64

    public init(conversationId: String, conversationType: ReceiverType, conversationWith: UserPayload,
                lastMessage: MessagePayload?, unreadMessageCount: Int, lastDeliveredMessageId: Int64?,
                lastReadMessageId: Int64?, peerDeliveredMessageId: Int64?, peerReadMessageId: Int64?,
                updatedAt: Int64) {
        self.conversationId = conversationId
        self.conversationType = conversationType
        self.conversationWith = conversationWith
        self.lastMessage = lastMessage
        self.unreadMessageCount = unreadMessageCount
        self.lastDeliveredMessageId = lastDeliveredMessageId
        self.lastReadMessageId = lastReadMessageId
        self.peerDeliveredMessageId = peerDeliveredMessageId
        self.peerReadMessageId = peerReadMessageId
        self.updatedAt = updatedAt
    }

    /// The id of the one-to-one conversation between two users, the same from either side.
    public static func directID(_ a: String, _ b: String) -> String {
        a < b ? "\(a)~\(b)" : "\(b)~\(a)"
    }
}
