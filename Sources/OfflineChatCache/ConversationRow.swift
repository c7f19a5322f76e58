import Foundation
import OfflineChatProtocol
import OfflineChatSQLite

/// How a conversation is stored: its own fields and its peer (a user or a group) as columns
/// of `conversations`, its last message as a row of `last_messages` (the columns of
/// `messages`). The cached list reads like a cached page of messages: no JSON per row, but
/// for metadata and tags when a peer has any.
enum ConversationRow {
    /// The stored columns, numbered ?1… in this order by `values`.
    static let columns = [
        "id", "type", "updated_at", "unread", "delivered_id", "read_id", "peer_delivered_id", "peer_read_id",
        "peer_id", "peer_name", "peer_image", "peer_metadata", "peer_tags",
        "user_role", "user_last_active_at", "user_status", "user_blocked_by_me", "user_has_blocked_me",
        "group_type", "group_description", "group_owner", "group_members_count", "group_created_at", "group_updated_at",
        "group_has_joined", "group_scope", "group_joined_at"
    ]

    /// The table (schema v6).
    static let createTables = """
        CREATE TABLE conversations(
            id TEXT PRIMARY KEY, type TEXT NOT NULL, updated_at INTEGER NOT NULL, unread INTEGER NOT NULL,
            delivered_id INTEGER, read_id INTEGER, peer_delivered_id INTEGER, peer_read_id INTEGER,
            peer_id TEXT NOT NULL, peer_name TEXT NOT NULL, peer_image TEXT, peer_metadata TEXT, peer_tags TEXT,
            user_role TEXT, user_last_active_at INTEGER, user_status TEXT, user_blocked_by_me INTEGER, user_has_blocked_me INTEGER,
            group_type TEXT, group_description TEXT, group_owner TEXT, group_members_count INTEGER, group_created_at INTEGER,
            group_updated_at INTEGER, group_has_joined INTEGER, group_scope TEXT, group_joined_at INTEGER,
            last_access INTEGER NOT NULL);
        CREATE INDEX conversations_by_time ON conversations(updated_at, id);
        CREATE TABLE last_messages(
            id INTEGER, muid TEXT, conversation_id TEXT PRIMARY KEY, parent_id INTEGER, sender TEXT NOT NULL,
            receiver TEXT NOT NULL, receiver_type TEXT NOT NULL, category TEXT NOT NULL, type TEXT NOT NULL, text TEXT,
            sent_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, edited_at INTEGER, deleted_at INTEGER,
            reply_count INTEGER NOT NULL DEFAULT 0, call_status TEXT, extras TEXT);
        """

    /// One conversation by id, as `select` reads it.
    static let byID = select + " WHERE c.id = ?"

    /// A conversation with its last message: `conversation(_:)` reads the rows it selects.
    static let select =
        "SELECT " + columns.map { "c." + $0 }.joined(separator: ", ") + ", "
        + MessageRow.columns.split(separator: ",").map { "l." + $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        .joined(separator: ", ")
        + " FROM conversations c LEFT JOIN last_messages l ON l.conversation_id = c.id"

    /// Refreshes a stored conversation (?1…?27 as in `columns`, ?28 the access time or NULL to keep it).
    static let update =
        "UPDATE conversations SET "
        + columns.enumerated().dropFirst().map { "\($0.element) = ?\($0.offset + 1)" }.joined(separator: ", ")
        + ", last_access = coalesce(?28, last_access) WHERE id = ?1"
    /// Adds one (?29: the access time when ?28 is NULL).
    static let insert =
        "INSERT INTO conversations(\(columns.joined(separator: ", ")), last_access) VALUES ("
        + (1...27).map { "?\($0)" }.joined(separator: ", ") + ", coalesce(?28, ?29))"
    static let storeLastMessage =
        "INSERT OR REPLACE INTO last_messages(\(MessageRow.columns)) VALUES ("
        + Array(repeating: "?", count: 17).joined(separator: ", ") + ")"

    /// Writes `conversation` (and its last message); `access`: when it was used, nil to keep
    /// the stored time (a new row then gets `now`).
    static func store(_ db: Connection, _ conversation: ConversationPayload, access: Int64?, now: Int64) throws {
        let values = try values(conversation)
        try db.run(update, values + [access])
        if db.changes == 0 { try db.run(insert, values + [access, now]) }
        if let last = conversation.lastMessage {
            try storeLast(db, last, of: conversation.conversationId)
        } else {
            try db.run("DELETE FROM last_messages WHERE conversation_id = ?", [conversation.conversationId])
        }
    }

    /// Makes `message` the conversation's last message.
    static func storeLast(_ db: Connection, _ message: MessagePayload, of conversationId: String) throws {
        try db.cachedStatement(storeLastMessage).run { row in
            try MessageRow.bind(message, to: row)
            try row.bind(3, conversationId)  // the key, whatever the message says
        }
    }

    static func values(_ conversation: ConversationPayload) throws -> [any SQLValueConvertible] {
        let own: [any SQLValueConvertible] = [
            conversation.conversationId, conversation.conversationType.rawValue, conversation.updatedAt,
            conversation.unreadMessageCount,
            conversation.lastDeliveredMessageId, conversation.lastReadMessageId, conversation.peerDeliveredMessageId,
            conversation.peerReadMessageId
        ]
        switch conversation.conversationWith {
        case .user(let user):
            return own + [
                user.uid, user.name, user.avatar, try metadata(user.metadata), try tags(user.tags),
                user.role, user.lastActiveAt, user.status, user.blockedByMe, user.hasBlockedMe
            ]
                + Array(repeating: Int64?.none, count: 9)
        case .group(let group):
            return own + [group.guid, group.name, group.icon, try metadata(group.metadata), try tags(group.tags)]
                + Array(repeating: Int64?.none, count: 5)
                + [
                    group.type.rawValue, group.description, group.owner, group.membersCount, group.createdAt,
                    group.updatedAt,
                    group.hasJoined, group.scope?.rawValue, group.joinedAt
                ]
        }
    }

    /// The conversation in the current row of `select`.
    static func conversation(_ row: borrowing RowCursor) throws -> ConversationPayload {
        let metadata = try row.textOrNil(11).map(Self.metadata(from:))
        let tags = try row.textOrNil(12).map(Self.tags(from:)) ?? []
        let peer: ConversationPeer
        if row.text(1) == ReceiverType.group.rawValue {
            peer = .group(
                GroupPayload(
                    guid: row.text(8), name: row.text(9), type: GroupType(rawValue: row.text(18)) ?? .public,
                    icon: row.textOrNil(10), description: row.textOrNil(19), metadata: metadata, tags: tags,
                    owner: row.text(20), membersCount: row.int(21), createdAt: row.int64(22), updatedAt: row.int64(23),
                    hasJoined: row.int(24) != 0, scope: row.textOrNil(25).flatMap(GroupScope.init(rawValue:)),
                    joinedAt: row.int64OrNil(26)))
        } else {
            var user = UserPayload(
                uid: row.text(8), name: row.text(9), avatar: row.textOrNil(10), metadata: metadata, tags: tags,
                role: row.textOrNil(13), lastActiveAt: row.int64OrNil(14))
            user.status = row.textOrNil(15)
            user.blockedByMe = row.int64OrNil(16).map { $0 != 0 }
            user.hasBlockedMe = row.int64OrNil(17).map { $0 != 0 }
            peer = .user(user)
        }
        return ConversationPayload(
            conversationId: row.text(0), conversationType: ReceiverType(rawValue: row.text(1)) ?? .user,
            conversationWith: peer,
            lastMessage: row.isNull(lastMessageColumn) ? nil : try MessageRow.message(row, offset: lastMessageColumn),
            unreadMessageCount: row.int(3), lastDeliveredMessageId: row.int64OrNil(4),
            lastReadMessageId: row.int64OrNil(5),
            peerDeliveredMessageId: row.int64OrNil(6), peerReadMessageId: row.int64OrNil(7), updatedAt: row.int64(2))
    }

    /// Where the last message's columns start in `select`.
    static let lastMessageColumn = Int32(columns.count)

    private static func metadata(_ value: [String: JSONValue]?) throws -> String? {
        try value.map { try ChatCache.json($0) }
    }

    private static func tags(_ value: [String]) throws -> String? {
        value.isEmpty ? nil : try ChatCache.json(value)
    }

    private static func metadata(from text: String) throws -> [String: JSONValue] {
        var reader = JSONReader(Data(text.utf8))
        guard case .object(let members) = try reader.value() else {
            throw JSONReader.Failure(offset: 0, reason: "metadata is not an object")
        }
        return members
    }

    private static func tags(from text: String) throws -> [String] {
        var reader = JSONReader(Data(text.utf8))
        var tags: [String] = []
        try reader.array { tags.append(try $0.string()) }
        return tags
    }
}
