import ChatProtocol
import SQLiteKit

extension Store {
    /// 404 when the conversation does not exist, 403 when `uid` is not in it. For groups, the
    /// group's rules: 404 for a deleted group or a private one the caller is not in, 403
    /// `banned` for a banned user.
    static func requireMember(_ db: any SQLDatabase, _ uid: String, _ conversationId: String) throws {
        guard let type: String = try db.scalar("SELECT type FROM conversations WHERE id = ?", [conversationId]) else {
            throw StoreError.notFound("no conversation \(conversationId)")
        }
        if type == "group" {
            _ = try memberScope(db, String(conversationId.dropFirst(ConversationPayload.groupID("").count)), uid)
            return
        }
        guard try db.scalar("SELECT 1 FROM conversation_members WHERE conversation_id = ? AND uid = ?",
                            [conversationId, uid], as: Int.self) != nil else {
            throw StoreError.forbidden("you are not part of conversation \(conversationId)")
        }
    }

    static let conversationQuery = """
        SELECT c.id, c.type, c.last_message_id, c.updated_at, m.peer, m.delivered_id, m.read_id, m.unread,
               p.delivered_id AS peer_delivered_id, p.read_id AS peer_read_id
        FROM conversation_members m
        JOIN conversations c ON c.id = m.conversation_id
        LEFT JOIN conversation_members p ON p.conversation_id = m.conversation_id AND p.uid = m.peer
        """

    /// The conversations in `rows` (`conversationQuery`) as `uid` sees them. Their peers, the
    /// block flags between them and `uid`, and their last messages are read once for all rows.
    func conversations(from rows: [Row], for uid: String, _ db: any SQLDatabase) throws -> [ConversationPayload] {
        let lastIds = try rows.compactMap { try $0.get("last_message_id", as: Int64?.self) }
        let lastMessages = try Self.loadMessages(db, ids: lastIds)
        let peerIds = try rows.filter { try $0.get("type", as: String.self) != "group" }.map { try $0.get("peer", as: String.self) }
        let found = try peerIds.isEmpty ? [] : db.query("SELECT \(Self.userColumns) FROM users WHERE uid IN (SELECT value FROM json_each(?))",
                                                         [try Self.json(peerIds) ?? "[]"]).map(Self.user(from:))
        let known = Dictionary(found.map { ($0.uid, $0) }) { first, _ in first }
        let peers = try Self.flagged(peerIds.map { known[$0] ?? UserPayload(uid: $0, name: $0) }, for: uid, db)
        let peerByUid = Dictionary(zip(peerIds, peers)) { first, _ in first }
        return try rows.map { row in
            let id: String = try row.get("id")
            let with: ConversationPeer = try row.get("type", as: String.self) == "group"
                ? .group(try Self.visibleGroup(db, String(id.dropFirst(ConversationPayload.groupID("").count)), for: uid))
                : .user(peerByUid[try row.get("peer", as: String.self)]!)
            func positive(_ name: String) throws -> Int64? {
                let value: Int64? = try row.get(name)
                return value.flatMap { $0 > 0 ? $0 : nil }
            }
            return ConversationPayload(conversationId: id, conversationType: with.group == nil ? .user : .group, conversationWith: with,
                                       lastMessage: try row.get("last_message_id", as: Int64?.self).flatMap { lastMessages[$0] },
                                       unreadMessageCount: try row.get("unread"),
                                       lastDeliveredMessageId: try positive("delivered_id"), lastReadMessageId: try positive("read_id"),
                                       peerDeliveredMessageId: try positive("peer_delivered_id"),
                                       peerReadMessageId: try positive("peer_read_id"),
                                       updatedAt: try row.get("updated_at"))
        }
    }

    /// The caller's conversations, most recent activity first. `cursor` is the previous page's `next`.
    public func conversations(for uid: String, cursor: String?, limit: Int) throws -> Page<ConversationPayload> {
        let (beforeTime, beforeId) = try Self.decodeListCursor(cursor)
        return try read { db in
            let rows = try db.query("""
                \(Self.conversationQuery)
                WHERE m.uid = ? AND (c.updated_at < ? OR (c.updated_at = ? AND c.id < ?))
                ORDER BY c.updated_at DESC, c.id DESC LIMIT ?
                """, [uid, beforeTime, beforeTime, beforeId, limit + 1])
            let items = try conversations(from: Array(rows.prefix(limit)), for: uid, db)
            let next = rows.count > limit ? items.last.map { ConversationListCursor.encode(updatedAt: $0.updatedAt, conversationId: $0.conversationId) } : nil
            return Page(items: items, next: next)
        }
    }

    static func decodeListCursor(_ cursor: String?) throws -> (Int64, String) {
        guard let cursor, !cursor.isEmpty else { return (Int64.max, "") }
        guard let position = ConversationListCursor.parse(cursor) else {
            throw StoreError.badParameter("`cursor` is not a page cursor chatd issued")
        }
        return position
    }

    /// One conversation of the caller.
    public func conversation(_ id: String, for uid: String) throws -> ConversationPayload {
        try read { db in
            try Self.requireMember(db, uid, id)
            guard let row = try db.queryFirst("\(Self.conversationQuery) WHERE m.uid = ? AND c.id = ?", [uid, id]) else {
                throw StoreError.notFound("no conversation \(id)")
            }
            return try conversations(from: [row], for: uid, db)[0]
        }
    }

    /// Marks everything up to `messageId` delivered (or read, which implies delivered).
    /// Receipts only move forward; a repeat returns the current receipt without a change.
    public func receipt(_ kind: ReceiptPayload.Kind, by uid: String, in conversationId: String, upTo messageId: Int64) throws -> ReceiptPayload {
        try write { db, changes in
            let now = stamp()
            try Self.requireMember(db, uid, conversationId)
            guard try db.scalar("SELECT 1 FROM messages WHERE id = ? AND conversation_id = ?", [messageId, conversationId], as: Int.self) != nil else {
                throw StoreError.validation("message \(messageId) is not in conversation \(conversationId)")
            }
            let column = kind == .read ? "read_id" : "delivered_id"
            let current: Int64 = try db.scalar("SELECT \(column) FROM conversation_members WHERE conversation_id = ? AND uid = ?",
                                               [conversationId, uid]) ?? 0
            let receipt = ReceiptPayload(kind: kind, conversationId: conversationId, uid: uid, messageId: max(current, messageId), at: now)
            guard messageId > current else { return receipt }
            if kind == .read {
                try db.run("UPDATE conversation_members SET read_id = ?, delivered_id = greatest(delivered_id, ?) WHERE conversation_id = ? AND uid = ?",
                           [messageId, messageId, conversationId, uid])
                try Self.recountUnread(db, conversationId, [uid])
            } else {
                try db.run("UPDATE conversation_members SET delivered_id = ? WHERE conversation_id = ? AND uid = ?",
                           [messageId, conversationId, uid])
            }
            try record(db, kind == .read ? .receiptRead : .receiptDelivered, conversationId: conversationId,
                       receipt: receipt, audience: try Self.members(db, of: conversationId), into: &changes)
            return receipt
        }
    }
}
