import OfflineChatProtocol
import OfflineChatSQLite

extension Store {
    /// 404 when the conversation does not exist, 403 when `uid` is not in it. For groups, the
    /// group's rules: 404 for a deleted group or a private one the caller is not in, 403
    /// `banned` for a banned user.
    static func requireMember(_ db: any SQLDatabase, _ uid: String, _ conversationId: String) throws {
        guard
            let row = try db.queryFirst(
                """
                SELECT c.type, m.uid FROM conversations c
                LEFT JOIN conversation_members m ON m.conversation_id = c.id AND m.uid = ? WHERE c.id = ?
                """, [uid, conversationId])
        else { throw StoreError.notFound("no conversation \(conversationId)") }
        if try row.get(0, as: String.self) == "group" {
            _ = try memberScope(db, String(conversationId.dropFirst(ConversationPayload.groupID("").count)), uid)
            return
        }
        guard try row.get(1, as: String?.self) != nil else {
            throw StoreError.forbidden("you are not part of conversation \(conversationId)")
        }
    }

    /// A conversation of `m.uid` in one row: its members' receipts, its last message's kept
    /// JSON (`keepBody`), and for a one-to-one conversation the peer (`userColumns`, last) with
    /// the blocks between the two. A group's time is its conversation's and its unread count is
    /// counted here (`groupUnread`): a group's message writes no member row.
    static let conversationQuery = conversationRows(of: "conversation_members")

    /// `conversationQuery` for the member rows `members` (a table or a subquery), named `m`.
    private static func conversationRows(of members: String) -> String {
        """
        SELECT c.id, c.type, c.last_message_id, CASE WHEN m.peer IS NULL THEN c.updated_at ELSE m.updated_at END,
               m.peer, m.delivered_id, m.read_id, CASE WHEN m.peer IS NULL THEN \(groupUnread) ELSE m.unread END,
               p.delivered_id AS peer_delivered_id, p.read_id AS peer_read_id, lm.body,
               CASE WHEN EXISTS(SELECT 1 FROM blocks WHERE blocker = m.uid AND blocked = m.peer) THEN 1 ELSE 0 END,
               CASE WHEN EXISTS(SELECT 1 FROM blocks WHERE blocker = m.peer AND blocked = m.uid) THEN 1 ELSE 0 END,
               u.uid, u.name, u.avatar, u.metadata, u.tags, u.role, u.last_active_at
        FROM \(members) m
        JOIN conversations c ON c.id = m.conversation_id
        LEFT JOIN conversation_members p ON p.conversation_id = m.conversation_id AND p.uid = m.peer
        LEFT JOIN message_bodies lm ON lm.conversation_id = c.id AND lm.id = c.last_message_id
        LEFT JOIN users u ON u.uid = m.peer
        """
    }

    /// The most a group's unread count says (PROTOCOL.md): counting stops there, so a member
    /// far behind in a busy group costs a list page one bounded index range.
    static let groupUnreadLimit = 10_000

    /// Group member `m`'s unread count, counted in `messages_unread`: the group's messages after
    /// their `read_id`, not their own, not deleted, at most `groupUnreadLimit`.
    private static let groupUnread = """
        (SELECT count(*) FROM (SELECT 1 FROM messages u WHERE u.conversation_id = m.conversation_id
            AND u.id > m.read_id AND u.sender != m.uid AND u.deleted_at IS NULL LIMIT \(groupUnreadLimit)) unread)
        """

    /// A page of `?1`'s conversations, most recent activity first, before the position `?2`,
    /// `?3` (updated at, id), whose `recency` is `?5`, at most `?4`. The page's member rows are
    /// chosen before any join (`pageMembers`), then joined and sorted again (a page's rows).
    static let conversationPageQuery = conversationRows(of: pageMembers) + "\nORDER BY \(listOrder)"

    /// The member rows of a page: at most a page of the user's direct conversations
    /// (`directPageMembers`) and of their groups (`groupPageMembers`), merged.
    private static let pageMembers = """
        (SELECT * FROM (SELECT * FROM \(directPageMembers) d UNION ALL SELECT * FROM \(groupPageMembers) g) merged
         ORDER BY \(pageOrder) LIMIT ?4)
        """

    /// A page's direct conversations, read in the order of `members_by_recency` from the
    /// position and stopping at the page's end: a sort of every conversation of the user cost
    /// 11 million instructions a page at 500 conversations. SQLite's index holds the whole
    /// order (the position, a row value, is its bound); PostgreSQL's only the minute (so that
    /// a message rewrites its members' rows in place, `recency(of:)`), `recency <= ?5` its
    /// bound and the rest a filter, and it sorts the rows of each minute it reads. A group
    /// member's row keeps no time (0: the index's end).
    static let directPageMembers = """
        (SELECT \(memberColumns("m.updated_at", "m.recency")) FROM conversation_members m
         WHERE m.uid = ?1 AND m.peer IS NOT NULL AND \(listPosition) ORDER BY \(listOrder) LIMIT ?4)
        """

    /// A page's groups, by their conversations' time: every group the user is in
    /// (`group_members_by_user`) is read and sorted, which costs the user's memberships, not
    /// any group's size or traffic.
    static let groupPageMembers = """
        (SELECT \(memberColumns("c.updated_at", "c.updated_at / \(recencySpan)")) FROM conversation_members m
         JOIN conversations c ON c.id = m.conversation_id
         WHERE m.uid = ?1 AND m.peer IS NULL AND (c.updated_at / \(recencySpan), c.updated_at, c.id) < (?5, ?2, ?3)
         ORDER BY \(pageOrder) LIMIT ?4)
        """

    /// The member columns a page reads, with the conversation's time and its minute as given.
    private static func memberColumns(_ time: String, _ minute: String) -> String {
        "m.conversation_id, m.uid, m.peer, m.delivered_id, m.read_id, m.unread, \(time) AS updated_at, \(minute) AS recency"
    }

    /// A list page's order, of member rows `m`: most recent first.
    private static let listOrder = "m.recency DESC, m.updated_at DESC, m.conversation_id DESC"
    /// `listOrder` by the columns a page reads (`memberColumns`).
    private static let pageOrder = "recency DESC, updated_at DESC, conversation_id DESC"
    /// Member rows `m` after a page's position in `listOrder`.
    private static let listPosition = "(m.recency, m.updated_at, m.conversation_id) < (?5, ?2, ?3)"

    /// The milliseconds of one `conversation_members.recency` step: a minute.
    static let recencySpan: Int64 = 60_000

    /// The `conversation_members.recency` of a member whose conversation's time is `time`: the
    /// minute it falls in. PostgreSQL rewrites a row in place (a heap-only update, with no new
    /// entry in any index) only when none of its indexed values changes. Every message
    /// rewrites each member's row (its unread count and time), so PostgreSQL's list index
    /// holds the minute, not the time: only the first message of a minute costs it index
    /// entries. The column is computed by the database from `updated_at` (SQLite migration 19,
    /// PostgreSQL's 8, both `updated_at / 60000`, rounding toward zero as this does); this
    /// computes a page's position in the same terms, so the two must stay alike (a changed
    /// span needs a migration).
    static func recency(of time: Int64) -> Int64 { time / recencySpan }

    /// One row of `conversationQuery`, read by position.
    struct ConversationRow {
        let id: String, isGroup: Bool, lastMessageId: Int64?, updatedAt: Int64, peer: String?
        let deliveredId: Int64?, readId: Int64?, unread: Int, peerDeliveredId: Int64?, peerReadId: Int64?
        let lastMessageBody: String?, blockedByMe: Bool, hasBlockedMe: Bool, peerUser: UserPayload?

        init(_ row: Row) throws {
            (id, isGroup, lastMessageId, updatedAt) = (
                try row.get(0), try row.get(1, as: String.self) == "group", try row.get(2), try row.get(3)
            )
            (peer, deliveredId, readId, unread) = (try row.get(4), try row.get(5), try row.get(6), try row.get(7))
            (peerDeliveredId, peerReadId, lastMessageBody) = (try row.get(8), try row.get(9), try row.get(10))
            (blockedByMe, hasBlockedMe) = (try row.get(11, as: Int.self) == 1, try row.get(12, as: Int.self) == 1)
            peerUser = try row.get(13, as: String?.self) == nil ? nil : try Store.user(from: row, at: 13)
        }

        /// Whether building it reads more than this row: a group's rules, or a last message
        /// stored before texts were kept.
        var readsMore: Bool { isGroup || (lastMessageId != nil && lastMessageBody == nil) }

        /// The peer as the caller sees them (a peer without a user row by their uid).
        var flaggedPeer: UserPayload? {
            guard let peer else { return nil }
            var user = peerUser ?? UserPayload(uid: peer, name: peer)
            if blockedByMe { user.blockedByMe = true }
            if hasBlockedMe { user.hasBlockedMe = true }
            return user
        }
    }

    /// The conversations in `rows` (`conversationQuery`) as `uid` sees them, each as JSON with
    /// its last message's kept text spliced in. A last message stored before bodies were kept
    /// is built from its columns.
    func conversations(from rows: [ConversationRow], for uid: String, _ db: any SQLDatabase) throws -> [[UInt8]] {
        let unkept = try Self.loadMessages(
            db, ids: rows.compactMap { $0.lastMessageBody == nil ? $0.lastMessageId : nil })
        func positive(_ value: Int64?) -> Int64? { value.flatMap { $0 > 0 ? $0 : nil } }
        return try rows.map { row in
            let with: ConversationPeer
            if row.isGroup {
                with = .group(
                    try Self.visibleGroup(db, String(row.id.dropFirst(ConversationPayload.groupID("").count)), for: uid)
                )
            } else {
                guard let peer = row.flaggedPeer else { throw StoreError.broken("conversation \(row.id) has no peer") }
                with = .user(peer)
            }
            let conversation = ConversationPayload(
                conversationId: row.id, conversationType: row.isGroup ? .group : .user, conversationWith: with,
                lastMessage: row.lastMessageId.flatMap { unkept[$0] },
                unreadMessageCount: row.unread,
                lastDeliveredMessageId: positive(row.deliveredId), lastReadMessageId: positive(row.readId),
                peerDeliveredMessageId: positive(row.peerDeliveredId),
                peerReadMessageId: positive(row.peerReadId),
                updatedAt: row.updatedAt)
            return try conversation.json(lastMessageJSON: row.lastMessageBody)
        }
    }

    /// The caller's conversations, most recent activity first, as a `Page` of
    /// `ConversationPayload` in JSON. `cursor` is the previous page's `next`.
    ///
    /// A page of one-to-one conversations whose last messages are kept is one statement, read
    /// with no transaction around it; a page with a group (its rules are read apart) or an
    /// unkept last message is read again in one transaction.
    public func conversations(for uid: String, cursor: String?, limit: Int) throws -> EncodedJSON {
        let (beforeTime, beforeId) = try Self.decodeListCursor(cursor)
        func page(_ db: any SQLDatabase, inOneStatement: Bool) throws -> EncodedJSON? {
            let rows = try db.query(
                Self.conversationPageQuery, [uid, beforeTime, beforeId, limit + 1, Self.recency(of: beforeTime)])
            let page = try rows.prefix(limit).map(ConversationRow.init)
            if inOneStatement && page.contains(where: \.readsMore) { return nil }
            var items = EncodedJSON.Array()
            for item in try conversations(from: page, for: uid, db) { items.append(item) }
            var next: String?
            if rows.count > limit, let last = page.last {
                next = ConversationListCursor.encode(updatedAt: last.updatedAt, conversationId: last.id)
            }
            return try EncodedJSON.page(items, next: next)
        }
        return try readInOneStatementIfItCan { try page($0, inOneStatement: $1) }
    }

    static func decodeListCursor(_ cursor: String?) throws -> (Int64, String) {
        guard let cursor, !cursor.isEmpty else { return (Int64.max, "") }
        guard let position = ConversationListCursor.parse(cursor) else {
            throw StoreError.badParameter("`cursor` is not a page cursor chatd issued")
        }
        return position
    }

    /// One conversation of the caller, as JSON.
    public func conversation(_ id: String, for uid: String) throws -> EncodedJSON {
        try read { db in
            try Self.requireMember(db, uid, id)
            guard let row = try db.queryFirst("\(Self.conversationQuery) WHERE m.uid = ? AND c.id = ?", [uid, id])
            else {
                throw StoreError.notFound("no conversation \(id)")
            }
            return EncodedJSON(bytes: try conversations(from: [try ConversationRow(row)], for: uid, db)[0])
        }
    }

    /// A group's conversation: a direct one's id joins its two uids with `~`, which no guid holds.
    static func isGroup(_ conversationId: String) -> Bool { !conversationId.contains("~") }

    /// Who hears a receipt: in a direct conversation both members; in a group the reader and
    /// the senders of the messages it newly covers (`after` < id ≤ `upTo`), never every member:
    /// a receipt costs what it covers, not the group's size (CometChat's group receipts are
    /// the sender's, `getMessageReceipts`).
    static func receiptAudience(
        _ db: any SQLDatabase, _ conversationId: String, reader: String, after: Int64, upTo: Int64
    ) throws -> [String] {
        guard isGroup(conversationId) else { return try members(db, of: conversationId) }
        // Senders who are still members: nothing of a group reaches someone who left it.
        let senders: [String] = try db.query(
            """
            SELECT DISTINCT m.sender FROM messages m
            JOIN conversation_members cm ON cm.conversation_id = m.conversation_id AND cm.uid = m.sender
            WHERE m.conversation_id = ? AND m.id > ? AND m.id <= ?
            """,
            [conversationId, after, upTo]
        ).map { try $0.get(0) }
        return [reader] + senders
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
                receipt: receipt,
                audience: try Self.receiptAudience(db, conversationId, reader: uid, after: current, upTo: messageId),
                into: &changes)
            return receipt
        }
    }
}
