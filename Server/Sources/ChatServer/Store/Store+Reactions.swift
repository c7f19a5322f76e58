import ChatProtocol
import SQLiteKit

extension Store {
    static func reaction(from row: Row) throws -> ReactionPayload {
        ReactionPayload(id: try row.get("id"), messageId: try row.get("message_id"), uid: try row.get("uid"),
                        reaction: try row.get("reaction"), reactedAt: try row.get("reacted_at"))
    }

    /// Adds the caller's `reaction` to a message they can read. A repeat changes nothing.
    /// Answers the message with its new counts and whether the reaction was new.
    public func react(_ reaction: String, to id: Int64, by uid: String) throws -> (message: MessagePayload, added: Bool) {
        let now = clock.now()
        return try write { db, changes in
            let message = try Self.readableMessage(db, id: id, uid: uid)
            guard message.deletedAt == nil else { throw HTTPError(409, .conflict, "message \(id) is deleted") }
            try db.run("INSERT OR IGNORE INTO reactions(message_id, uid, reaction, reacted_at) VALUES (?, ?, ?, ?)",
                       [id, uid, reaction, now])
            guard db.changes > 0 else { return (message, false) }
            let added = ReactionPayload(id: db.lastInsertRowID, messageId: id, uid: uid, reaction: reaction, reactedAt: now)
            try Self.notify(db, message.sender, .reaction, actor: uid, message: message, reaction: reaction, at: now)
            return (try publishUpdate(db, id: id, kind: .reactionAdded, reaction: added, into: &changes), true)
        }
    }

    /// Removes the caller's `reaction`; 404 when they had not reacted so.
    public func unreact(_ reaction: String, from id: Int64, by uid: String) throws -> MessagePayload {
        try write { db, changes in
            _ = try Self.readableMessage(db, id: id, uid: uid)
            guard let row = try db.queryFirst("SELECT id, message_id, uid, reaction, reacted_at FROM reactions WHERE message_id = ? AND uid = ? AND reaction = ?",
                                              [id, uid, reaction]) else {
                throw HTTPError.notFound("you have not reacted \(reaction) to message \(id)")
            }
            let removed = try Self.reaction(from: row)
            try db.run("DELETE FROM reactions WHERE id = ?", [removed.id])
            return try publishUpdate(db, id: id, kind: .reactionRemoved, reaction: removed, into: &changes)
        }
    }

    /// A page of a message's reactions (optionally one kind), oldest first: `limit` after
    /// reaction id `after` (fetchNext), or the `limit` before `before` (fetchPrevious).
    public func reactions(on id: Int64, for uid: String, reaction: String?, after: Int64?, before: Int64?,
                          limit: Int) throws -> [ReactionPayload] {
        try read { db in
            _ = try Self.readableMessage(db, id: id, uid: uid)
            let columns = "id, message_id, uid, reaction, reacted_at"
            let kind = reaction == nil ? "" : " AND reaction = ?"
            let filter: [any SQLValueConvertible] = reaction.map { [$0] } ?? []
            if let before {
                return try db.query("SELECT \(columns) FROM reactions WHERE message_id = ? AND id < ?\(kind) ORDER BY id DESC LIMIT ?",
                                    [id, before] + filter + [limit]).map(Self.reaction(from:)).reversed()
            }
            return try db.query("SELECT \(columns) FROM reactions WHERE message_id = ? AND id > ?\(kind) ORDER BY id LIMIT ?",
                                [id, after ?? 0] + filter + [limit]).map(Self.reaction(from:))
        }
    }

    /// A message the caller may read: 404 when missing, 403 when not in its conversation.
    static func readableMessage(_ db: Connection, id: Int64, uid: String) throws -> MessagePayload {
        guard let message = try loadMessage(db, id: id) else { throw HTTPError.notFound("no message \(id)") }
        try requireMember(db, uid, message.conversationId)
        return message
    }
}
