/// The other side of a conversation: a user for one-to-one chats, a group otherwise.
/// On the wire it is the user or group object itself (a group has a `guid`).
public enum ConversationPeer: Codable, Sendable, Equatable {
    /// The other user of a one-to-one conversation.
    case user(UserPayload)
    /// The group of a group conversation.
    case group(GroupPayload)

    /// The user, nil for a group.
    public var user: UserPayload? { if case .user(let user) = self { user } else { nil } }
    /// The group, nil for a user.
    public var group: GroupPayload? { if case .group(let group) = self { group } else { nil } }
    /// The uid or the guid.
    public var id: String {
        switch self {
        case .user(let user): user.uid
        case .group(let group): group.guid
        }
    }

    private enum Probe: String, CodingKey { case guid }

    /// Decodes a group when the object has a `guid`, else a user.
    public init(from decoder: any Decoder) throws {
        if try decoder.container(keyedBy: Probe.self).contains(.guid) {
            self = .group(try GroupPayload(from: decoder))
        } else {
            self = .user(try UserPayload(from: decoder))
        }
    }

    /// Encodes the user or group object itself.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .user(let user): try user.encode(to: encoder)
        case .group(let group): try group.encode(to: encoder)
        }
    }
}

/// One entry of the caller's conversation list.
public struct ConversationPayload: Codable, Sendable, Equatable {
    /// For one-to-one chats: the two uids sorted and joined by `~`, a character uids cannot
    /// contain, so two different pairs never share an id. For groups: `group_` + guid.
    public var conversationId: String
    /// `user` for a one-to-one conversation, `group` for a group's.
    public var conversationType: ReceiverType
    /// The other participant, or the group.
    public var conversationWith: ConversationPeer
    /// The conversation's newest message, nil while it has none.
    public var lastMessage: MessagePayload?
    /// Messages from others after the caller's read receipt, deleted ones excluded.
    public var unreadMessageCount: Int
    /// The caller's own receipts.
    public var lastDeliveredMessageId: Int64?
    /// The newest message the caller has read.
    public var lastReadMessageId: Int64?
    /// The other side's receipts (for ticks on one's own messages); one-to-one chats only.
    public var peerDeliveredMessageId: Int64?
    /// The newest message the other participant has read.
    public var peerReadMessageId: Int64?
    /// Epoch milliseconds of the last activity; the list is ordered by it, newest first.
    public var updatedAt: Int64

    /// Creates an entry with every field.
    public init(
        conversationId: String, conversationType: ReceiverType, conversationWith: ConversationPeer,
        lastMessage: MessagePayload?, unreadMessageCount: Int, lastDeliveredMessageId: Int64?,
        lastReadMessageId: Int64?, peerDeliveredMessageId: Int64?, peerReadMessageId: Int64?,
        updatedAt: Int64
    ) {
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

    /// The id of a group's conversation.
    public static func groupID(_ guid: String) -> String { "group_\(guid)" }
}
