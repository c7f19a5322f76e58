import OfflineChatProtocol
import OfflineChatSQLite

extension Store {
    static func reaction(from row: Row) throws -> ReactionPayload {
        ReactionPayload(
            id: try row.get("id"), messageId: try row.get("message_id"), uid: try row.get("uid"),
            reaction: try row.get("reaction"), reactedAt: try row.get("reacted_at"))
    }

    /// Adds the caller's `reaction` to a message they can read. A repeat changes nothing.
    /// Answers the message with its new counts and whether the reaction was new.
    public func react(_ reaction: String, to id: Int64, by uid: String) throws -> (message: MessagePayload, added: Bool)
    {
        try write { db, changes in
            let now = try lockConversation(db, ofMessage: id)
            let message = try Self.readableMessage(db, id: id, uid: uid)
            guard message.deletedAt == nil else { throw StoreError.conflict("message \(id) is deleted") }
            try Self.requireNoBlock(db, uid, message)
            let mine: Int =
                try db.scalar("SELECT count(*) FROM reactions WHERE message_id = ? AND uid = ?", [id, uid]) ?? 0
            guard
                let reactionId: Int64 = try db.scalar(
                    """
                    INSERT INTO reactions(message_id, uid, reaction, reacted_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id
                    """, [id, uid, reaction, now])
            else { return (message, false) }
            guard mine < Self.maxReactionsPerUser else {
                throw StoreError.validation(
                    "at most \(Self.maxReactionsPerUser) different reactions per message and user")
            }
            try db.run("UPDATE messages SET updated_at = ? WHERE id = ?", [now, id])
            let added = ReactionPayload(id: reactionId, messageId: id, uid: uid, reaction: reaction, reactedAt: now)
            let updated = try publishUpdate(db, id: id, kind: .reactionAdded, reaction: added, into: &changes)
            try notify(
                db, message.sender, .reaction, actor: uid, message: message, reaction: reaction, at: now, into: &changes
            )
            return (updated, true)
        }
    }

    /// Removes the caller's `reaction`; 404 when they had not reacted so.
    public func unreact(_ reaction: String, from id: Int64, by uid: String) throws -> MessagePayload {
        try write { db, changes in
            let now = try lockConversation(db, ofMessage: id)
            _ = try Self.readableMessage(db, id: id, uid: uid)
            guard
                let row = try db.queryFirst(
                    "SELECT id, message_id, uid, reaction, reacted_at FROM reactions WHERE message_id = ? AND uid = ? AND reaction = ?",
                    [id, uid, reaction])
            else {
                throw StoreError.notFound("you have not reacted \(reaction) to message \(id)")
            }
            let removed = try Self.reaction(from: row)
            try db.run("DELETE FROM reactions WHERE id = ?", [removed.id])
            try db.run("UPDATE messages SET updated_at = ? WHERE id = ?", [now, id])
            return try publishUpdate(db, id: id, kind: .reactionRemoved, reaction: removed, into: &changes)
        }
    }

    /// A page of a message's reactions (optionally one kind), oldest first: `limit` after
    /// reaction id `after` (fetchNext), or the `limit` before `before` (fetchPrevious).
    public func reactions(
        on id: Int64, for uid: String, reaction: String?, after: Int64?, before: Int64?,
        limit: Int
    ) throws -> [ReactionPayload] {
        try read { db in
            _ = try Self.readableMessage(db, id: id, uid: uid)
            let columns = "id, message_id, uid, reaction, reacted_at"
            let kind = reaction == nil ? "" : " AND reaction = ?"
            let filter: [any SQLValueConvertible] = reaction.map { [$0] } ?? []
            if let before {
                return try db.query(
                    "SELECT \(columns) FROM reactions WHERE message_id = ? AND id < ?\(kind) ORDER BY id DESC LIMIT ?",
                    [id, before] + filter + [limit]
                ).map(Self.reaction(from:)).reversed()
            }
            return try db.query(
                "SELECT \(columns) FROM reactions WHERE message_id = ? AND id > ?\(kind) ORDER BY id LIMIT ?",
                [id, after ?? 0] + filter + [limit]
            ).map(Self.reaction(from:))
        }
    }

    /// One user may hold this many different reactions on one message.
    static let maxReactionsPerUser = 20

    /// 403 `blocked` when the caller and the other side of a one-to-one message block each other.
    static func requireNoBlock(_ db: any SQLDatabase, _ uid: String, _ message: MessagePayload) throws {
        guard message.receiverType == .user else { return }  // blocks govern one-to-one chats only
        let peer = message.sender == uid ? message.receiver : message.sender
        if try blocked(db, uid, peer) {
            throw StoreError(.blocked, "\(uid) and \(peer) have a block between them")
        }
    }

    /// A message the caller may read: 404 when missing, 403 when not in its conversation.
    static func readableMessage(_ db: any SQLDatabase, id: Int64, uid: String) throws -> MessagePayload {
        guard let message = try loadMessage(db, id: id) else { throw StoreError.notFound("no message \(id)") }
        try requireMember(db, uid, message.conversationId)
        return message
    }
}
