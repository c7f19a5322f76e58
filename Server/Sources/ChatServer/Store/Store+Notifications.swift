import ChatProtocol
import SQLiteKit

extension Store {
    /// Adds a feed item for `uid` unless they caused it themselves.
    static func notify(_ db: Connection, _ uid: String, _ kind: NotificationFeedItem.Kind, actor: String,
                       message: MessagePayload, reaction: String? = nil, at: Int64) throws {
        guard uid != actor else { return }
        try db.run("""
            INSERT INTO notifications(uid, kind, actor, message_id, conversation_id, reaction, at) VALUES (?, ?, ?, ?, ?, ?, ?)
            """, [uid, kind.rawValue, actor, message.id, message.conversationId, reaction, at])
    }

    /// Feed items for a new message: mentions of members of its conversation, and a reply
    /// item for the author of the thread's parent.
    static func notifyAbout(_ message: MessagePayload, parent: MessagePayload?, _ db: Connection) throws {
        let members = Set(try Self.members(db, of: message.conversationId))
        for uid in NotificationFeedItem.mentions(in: message.text ?? "") where members.contains(uid) {
            try notify(db, uid, .mention, actor: message.sender, message: message, at: message.sentAt)
        }
        if let parent { try notify(db, parent.sender, .reply, actor: message.sender, message: message, at: message.sentAt) }
    }

    /// The caller's feed, newest first, before item id `before`.
    public func notifications(for uid: String, before: Int64?, limit: Int) throws -> [NotificationFeedItem] {
        try read { db in
            try db.query("""
                SELECT id, kind, actor, message_id, conversation_id, reaction, at FROM notifications
                WHERE uid = ? AND id < ? ORDER BY id DESC LIMIT ?
                """, [uid, before ?? Int64.max, limit]).map { row in
                NotificationFeedItem(id: try row.get("id"),
                                     kind: NotificationFeedItem.Kind(rawValue: try row.get("kind")) ?? .mention,
                                     actor: try row.get("actor"), messageId: try row.get("message_id"),
                                     conversationId: try row.get("conversation_id"), reaction: try row.get("reaction"),
                                     at: try row.get("at"))
            }
        }
    }
}
