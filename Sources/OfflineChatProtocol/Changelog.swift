/// What a changelog entry records.
public enum ChangeKind: String, Codable, Sendable {
    /// A message was sent; `message` carries it.
    case messageCreated = "message.created"
    /// An edit or a deletion (then `message.deletedAt` is set).
    case messageUpdated = "message.updated"
    /// A user's delivered receipt moved forward; `receipt` carries it.
    case receiptDelivered = "receipt.delivered"
    /// A user's read receipt moved forward; `receipt` carries it.
    case receiptRead = "receipt.read"
    /// A reaction was added; `message` carries the new counts.
    case reactionAdded = "reaction.added"
    /// A reaction was removed; `message` carries the new counts.
    case reactionRemoved = "reaction.removed"
    /// A user blocked another (visible to both).
    case userBlocked = "user.blocked"
    /// A user unblocked another (visible to both).
    case userUnblocked = "user.unblocked"
    /// A new item in the user's notification feed (visible to that user).
    case notificationCreated = "notification.created"
    /// A group was created (visible to its owner); `group` carries it.
    case groupCreated = "group.created"
    /// A group's details or owner changed (visible to its members); `group` carries it.
    case groupUpdated = "group.updated"
    /// A group was deleted (visible to its last members); `group` carries it as it was.
    case groupDeleted = "group.deleted"
    /// A membership change: `message` is the group's new action message and
    /// `message.action` says what happened. Visible to the members and to the target.
    case groupMember = "group.member"
    /// The reader's position in the conversation's log is older than what chatd keeps of it
    /// (`--changelog-retention`): what they cached of it may miss changes. A client drops its
    /// cached messages of the conversation (not the conversation, not what it has queued) and
    /// reads on; the page goes on with the changes chatd kept. Never sent live.
    case conversationReset = "conversation.reset"
}

/// Who blocked whom, for `user.blocked` / `user.unblocked` changes.
public struct BlockPayload: Codable, Sendable, Equatable {
    /// The uid of the user who blocked (or unblocked).
    public var blocker: String
    /// The uid of the user who was blocked (or unblocked).
    public var blocked: String
    /// Creates a block with every field.
    public init(blocker: String, blocked: String) {
        self.blocker = blocker
        self.blocked = blocked
    }
}

/// One change as one user sees it.
public struct ChangePayload: Codable, Sendable, Equatable {
    /// The user's position: each user's changes are numbered 1, 2, 3… with no gap, in commit
    /// order, so one change shared by a group has a different `seq` for each member.
    public var seq: Int64
    /// What the change records; it says which of the payload fields below is set.
    public var kind: ChangeKind
    /// The conversation it concerns (for a block, the two users' one-to-one conversation).
    public var conversationId: String
    /// The message after the change, for message kinds.
    public var message: MessagePayload?
    /// The receipt, for receipt kinds.
    public var receipt: ReceiptPayload?
    /// The block, for `user.blocked` / `user.unblocked`.
    public var block: BlockPayload?
    /// The reaction, for `reaction.added` / `reaction.removed`.
    public var reaction: ReactionPayload?
    /// The feed item, for `notification.created`.
    public var notification: FeedItemPayload?
    /// The group, for `group.*` kinds other than `group.member`. Its caller fields
    /// (`hasJoined`, `scope`, `joinedAt`) are not set: a change is shared by all its audience.
    public var group: GroupPayload?
    /// Epoch milliseconds of the change.
    public var at: Int64

    /// Creates a change with every field; the payloads its kind does not use stay nil.
    public init(
        seq: Int64, kind: ChangeKind, conversationId: String, message: MessagePayload? = nil,
        receipt: ReceiptPayload? = nil, block: BlockPayload? = nil, reaction: ReactionPayload? = nil,
        notification: FeedItemPayload? = nil, group: GroupPayload? = nil, at: Int64
    ) {
        self.group = group
        self.seq = seq
        self.kind = kind
        self.conversationId = conversationId
        self.message = message
        self.receipt = receipt
        self.block = block
        self.reaction = reaction
        self.notification = notification
        self.at = at
    }
}

/// `POST /v1/changes`: a changelog page asked with its cursor in the body, where no proxy's
/// limit on a url's length applies (a `c3` cursor names each group its reader is in).
public struct ChangesRequest: Codable, Sendable, Equatable {
    /// The previous page's cursor; nil or empty for the head.
    public var cursor: String?
    /// At most this many changes (≤ `ChangelogPage.maxLimit`, which is the default).
    public var limit: Int?
    /// The caller reads group logs: an empty cursor answers a `c3` head cursor.
    public var groupLogs: Bool?

    /// Creates a request with every field.
    public init(cursor: String? = nil, limit: Int? = nil, groupLogs: Bool? = nil) {
        self.cursor = cursor
        self.limit = limit
        self.groupLogs = groupLogs
    }
}

/// `GET /v1/changes?cursor=…&limit=…` (or `POST /v1/changes`, `ChangesRequest`). An empty
/// cursor returns no changes and the head cursor. A page's changes are in order within each
/// log: a `c3` page gives the user's own changes and each group's, each with its position in
/// its own log as `seq`.
public struct ChangelogPage: Codable, Sendable {
    /// In position (`seq`) order within each log, at most `limit` (≤ 1000).
    public var changes: [ChangePayload]
    /// More changes follow: ask again with `cursor`.
    public var hasMore: Bool
    /// Opaque; pass it back to continue after the last change of this page.
    public var cursor: String
    /// The server's clock, epoch seconds.
    public var serverTime: Int64

    /// Creates a page with every field.
    public init(changes: [ChangePayload], hasMore: Bool, cursor: String, serverTime: Int64) {
        self.changes = changes
        self.hasMore = hasMore
        self.cursor = cursor
        self.serverTime = serverTime
    }

    /// The most a page may hold.
    public static let maxLimit = 1000
}
