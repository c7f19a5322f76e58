import OfflineChatProtocol
import OfflineChatSQLite

extension Store {
    /// Adds a feed item for `uid` unless they caused it themselves or can no longer read the
    /// conversation (they left the group), and records it as a `notification.created`
    /// change for that user.
    func notify(
        _ db: any SQLDatabase, _ uid: String, _ kind: FeedItemPayload.Kind, actor: String,
        message: MessagePayload, reaction: String? = nil, at: Int64, into changes: inout [PublishedChange]
    ) throws {
        guard uid != actor,
            try db.scalar(
                "SELECT 1 FROM conversation_members WHERE conversation_id = ? AND uid = ?",
                [message.conversationId, uid], as: Int.self) != nil
        else { return }
        try Self.lockFeed(db, uid)
        let id: Int64 =
            try db.scalar(
                """
                INSERT INTO notifications(uid, kind, actor, message_id, conversation_id, reaction, at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id
                """, [uid, kind.rawValue, actor, message.id, message.conversationId, reaction, at]) ?? 0
        let item = FeedItemPayload(
            id: id, kind: kind, actor: actor, messageId: message.id,
            conversationId: message.conversationId, reaction: reaction, at: at)
        try record(
            db, .notificationCreated, conversationId: message.conversationId, notification: item,
            audience: [uid], into: &changes)
    }

    /// Feed items for a new message: mentions of members of its conversation, and a reply
    /// item for the author of the thread's parent. Each user's feed row is locked in uid order
    /// (a mention first, then a reply), whatever order the text names them in: two sends
    /// naming the same users in opposite orders would otherwise deadlock on PostgreSQL.
    func notifyAbout(
        _ message: MessagePayload, parent: MessagePayload?, members: [String], _ db: any SQLDatabase,
        into changes: inout [PublishedChange]
    ) throws {
        var items: [(uid: String, kind: FeedItemPayload.Kind)] = FeedItemPayload.mentions(in: message.text ?? "")
            .filter(members.contains).map { ($0, .mention) }
        if let parent { items.append((parent.sender, .reply)) }
        let ordered = items.enumerated().sorted { ($0.element.uid, $0.offset) < ($1.element.uid, $1.offset) }
        for (_, item) in ordered {
            try notify(
                db, item.uid, item.kind, actor: message.sender, message: message, at: message.sentAt, into: &changes)
        }
    }

    /// The caller's feed, newest first, before item id `before`.
    public func notifications(for uid: String, before: Int64?, limit: Int) throws -> [FeedItemPayload] {
        try read { db in
            try db.query(
                """
                SELECT id, kind, actor, message_id, conversation_id, reaction, at FROM notifications
                WHERE uid = ? AND id < ? ORDER BY id DESC LIMIT ?
                """, [uid, before ?? Int64.max, limit]
            ).map { row in
                FeedItemPayload(
                    id: try row.get("id"),
                    kind: FeedItemPayload.Kind(rawValue: try row.get("kind")) ?? .mention,
                    actor: try row.get("actor"), messageId: try row.get("message_id"),
                    conversationId: try row.get("conversation_id"), reaction: try row.get("reaction"),
                    at: try row.get("at"))
            }
        }
    }
}
