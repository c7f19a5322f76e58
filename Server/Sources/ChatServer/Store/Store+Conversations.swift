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
        guard
            try db.scalar(
                "SELECT 1 FROM conversation_members WHERE conversation_id = ? AND uid = ?",
                [conversationId, uid], as: Int.self) != nil
        else {
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

    /// One row of `conversationQuery`, read by position.
    struct ConversationRow {
        let id: String, isGroup: Bool, lastMessageId: Int64?, updatedAt: Int64, peer: String?
        let deliveredId: Int64?, readId: Int64?, unread: Int, peerDeliveredId: Int64?, peerReadId: Int64?

        init(_ row: Row) throws {
            (id, isGroup, lastMessageId, updatedAt) = (
                try row.get(0), try row.get(1, as: String.self) == "group", try row.get(2), try row.get(3)
            )
            (peer, deliveredId, readId, unread) = (try row.get(4), try row.get(5), try row.get(6), try row.get(7))
            (peerDeliveredId, peerReadId) = (try row.get(8), try row.get(9))
        }
    }

    /// The conversations in `rows` (`conversationQuery`) as `uid` sees them. Their peers, the
    /// block flags between them and `uid`, and their last messages are read once for all rows.
    func conversations(from rows: [Row], for uid: String, _ db: any SQLDatabase) throws -> [ConversationPayload] {
        let rows = try rows.map(ConversationRow.init)
        let lastMessages = try Self.loadMessages(db, ids: rows.compactMap(\.lastMessageId))
        let peerIds = rows.compactMap { $0.isGroup ? nil : $0.peer }
        let found =
            try peerIds.isEmpty
            ? []
            : db.query(
                "SELECT \(Self.userColumns) FROM users WHERE uid IN (SELECT value FROM json_each(?))",
                [try Self.json(peerIds) ?? "[]"]
            ).map(Self.user(from:))
        let known = Dictionary(found.map { ($0.uid, $0) }) { first, _ in first }
        let peers = try Self.flagged(peerIds.map { known[$0] ?? UserPayload(uid: $0, name: $0) }, for: uid, db)
        let peerByUid = Dictionary(zip(peerIds, peers)) { first, _ in first }
        func positive(_ value: Int64?) -> Int64? { value.flatMap { $0 > 0 ? $0 : nil } }
        return try rows.map { row in
            let with: ConversationPeer
            if row.isGroup {
                with = .group(
                    try Self.visibleGroup(db, String(row.id.dropFirst(ConversationPayload.groupID("").count)), for: uid)
                )
            } else {
                guard let peer = row.peer.flatMap({ peerByUid[$0] }) else {
                    throw StoreError.broken("conversation \(row.id) has no peer")
                }
                with = .user(peer)
            }
            return ConversationPayload(
                conversationId: row.id, conversationType: row.isGroup ? .group : .user, conversationWith: with,
                lastMessage: row.lastMessageId.flatMap { lastMessages[$0] },
                unreadMessageCount: row.unread,
                lastDeliveredMessageId: positive(row.deliveredId), lastReadMessageId: positive(row.readId),
                peerDeliveredMessageId: positive(row.peerDeliveredId),
                peerReadMessageId: positive(row.peerReadId),
                updatedAt: row.updatedAt)
        }
    }

    /// The caller's conversations, most recent activity first. `cursor` is the previous page's `next`.
    public func conversations(for uid: String, cursor: String?, limit: Int) throws -> Page<ConversationPayload> {
        let (beforeTime, beforeId) = try Self.decodeListCursor(cursor)
        return try read { db in
            let rows = try db.query(
                """
                \(Self.conversationQuery)
                WHERE m.uid = ? AND (c.updated_at < ? OR (c.updated_at = ? AND c.id < ?))
                ORDER BY c.updated_at DESC, c.id DESC LIMIT ?
                """, [uid, beforeTime, beforeTime, beforeId, limit + 1])
            let items = try conversations(from: Array(rows.prefix(limit)), for: uid, db)
            let next =
                rows.count > limit
                ? items.last.map {
                    ConversationListCursor.encode(updatedAt: $0.updatedAt, conversationId: $0.conversationId)
                } : nil
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
            guard let row = try db.queryFirst("\(Self.conversationQuery) WHERE m.uid = ? AND c.id = ?", [uid, id])
            else {
                throw StoreError.notFound("no conversation \(id)")
            }
            return try conversations(from: [row], for: uid, db)[0]
        }
    }

    /// Marks everything up to `messageId` delivered (or read, which implies delivered).
    /// Receipts only move forward; a repeat returns the current receipt without a change.
    public func receipt(
        _ kind: ReceiptPayload.Kind, by uid: String, in conversationId: String, upTo messageId: Int64
    ) throws -> ReceiptPayload {
        try write { db, changes in
            let now = stamp()
            try Self.requireMember(db, uid, conversationId)
            guard
                try db.scalar(
                    "SELECT 1 FROM messages WHERE id = ? AND conversation_id = ?", [messageId, conversationId],
                    as: Int.self) != nil
            else {
                throw StoreError.validation("message \(messageId) is not in conversation \(conversationId)")
            }
            let column = kind == .read ? "read_id" : "delivered_id"
            let current: Int64 =
                try db.scalar(
                    "SELECT \(column) FROM conversation_members WHERE conversation_id = ? AND uid = ?",
                    [conversationId, uid]) ?? 0
            let receipt = ReceiptPayload(
                kind: kind, conversationId: conversationId, uid: uid, messageId: max(current, messageId), at: now)
            guard messageId > current else { return receipt }
            if kind == .read {
                try db.run(
                    "UPDATE conversation_members SET read_id = ?, delivered_id = greatest(delivered_id, ?) WHERE conversation_id = ? AND uid = ?",
                    [messageId, messageId, conversationId, uid])
                try Self.recountUnread(db, conversationId, [uid])
            } else {
                try db.run(
                    "UPDATE conversation_members SET delivered_id = ? WHERE conversation_id = ? AND uid = ?",
                    [messageId, conversationId, uid])
            }
            try record(
                db, kind == .read ? .receiptRead : .receiptDelivered, conversationId: conversationId,
                receipt: receipt, audience: try Self.members(db, of: conversationId), into: &changes)
            return receipt
        }
    }
}
