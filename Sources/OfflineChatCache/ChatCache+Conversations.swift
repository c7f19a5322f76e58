import OfflineChatProtocol
import OfflineChatSQLite

extension ChatCache {
    /// A page of the cached conversation list, most recent first, after `after` (the last
    /// conversation of the previous cached page).
    public func cachedConversations(after: (updatedAt: Int64, id: String)?, limit: Int) throws -> [ConversationPayload]
    {
        try read { db in
            let (time, id) = after ?? (Int64.max, "")
            var page: [ConversationPayload] = []
            page.reserveCapacity(limit)
            try db.forEachRow(Self.listPage, [time, time, id, limit]) { row in
                page.append(try ConversationRow.conversation(row))
                return true
            }
            return page
        }
    }

    static let listPage =
        ConversationRow.select
        + " WHERE c.updated_at < ?1 OR (c.updated_at = ?2 AND c.id < ?3) ORDER BY c.updated_at DESC, c.id DESC LIMIT ?4"

    public func conversation(id: String) throws -> ConversationPayload? {
        try read { db in try Self.conversation(db, id: id) }
    }

    static func conversation(_ db: Connection, id: String) throws -> ConversationPayload? {
        var found: ConversationPayload?
        try db.forEachRow(ConversationRow.byID, [id]) { row in
            found = try ConversationRow.conversation(row)
            return false
        }
        return found
    }

    /// Writes one server page of the conversation list through, replacing its slice: cached
    /// conversations whose time falls inside the page's span (from the top for the first
    /// page, to the bottom for the last) but that the server left out are removed, with
    /// their messages. Returns the removed ids. `keepingLastMessages` (a cold-start sync, which
    /// replays nothing): each conversation's last message becomes readable offline
    /// (`keepLastMessages`), in the same write, so the limits count it.
    @discardableResult
    public func storeConversationPage(
        _ page: [ConversationPayload], first: Bool, last: Bool, keepingLastMessages: Bool = false
    ) throws -> [String] {
        try write { db, scratch in
            let now = clock()
            for conversation in page {
                try upsert(db, conversation, at: now)
                try noteUse(db, conversation.conversationId, in: &scratch)
            }
            if keepingLastMessages { try keepLastMessages(db, of: page) }
            guard !page.isEmpty || (first && last) else { return [] }
            // The slice in the server's order (updated_at DESC, id DESC): from the page's first
            // entry (a conversation a live message moved up meanwhile stays) to its last, or to
            // the bottom for the last page.
            let top = page.first.map { ($0.updatedAt, $0.conversationId) } ?? (Int64.max, "")
            let bottom = last ? (Int64.min, "") : (page.last!.updatedAt, page.last!.conversationId)
            let keep = Set(page.map(\.conversationId))
            let stale = try db.query(
                """
                SELECT id FROM conversations
                WHERE (updated_at < ?1 OR (updated_at = ?1 AND id <= ?2)) AND (updated_at > ?3 OR (updated_at = ?3 AND id >= ?4))
                """, [top.0, top.1, bottom.0, bottom.1]
            ).map { try $0.get("id") as String }.filter { !keep.contains($0) }
            for id in stale { try removeConversation(db, id, in: &scratch) }
            return stale
        }
    }

    /// Writes one conversation through (a `getConversation` answer).
    public func storeConversation(_ conversation: ConversationPayload) throws {
        try write { db, scratch in
            try upsert(db, conversation, at: clock())
            try noteUse(db, conversation.conversationId, in: &scratch)
        }
    }

    /// Removes a conversation and its cached messages and stretches.
    public func removeConversation(_ id: String) throws {
        try write { db, scratch in try removeConversation(db, id, in: &scratch) }
    }

    /// Marks conversations as just used (eviction keeps the most recently used).
    public func touchConversation(_ id: String) throws {
        try write { db, _ in try db.run("UPDATE conversations SET last_access = ? WHERE id = ?", [clock(), id]) }
    }

    /// A live message moves its conversation to the top, as the server's list would.
    /// `incoming`: from someone else (one more unread).
    /// (On every live message: three small statements on the columns, nothing decoded.)
    func bumpConversation(_ db: Connection, with message: MessagePayload, incoming: Bool) throws {
        guard let last: Int64 = try db.scalar(Self.lastMessageID, [message.conversationId]), last <= message.id else {
            return
        }
        try db.run(
            "UPDATE conversations SET updated_at = max(updated_at, ?), unread = unread + ? WHERE id = ?",
            [message.sentAt, incoming && message.category != .action ? 1 : 0, message.conversationId])
        try ConversationRow.storeLast(db, message, of: message.conversationId)
    }

    /// A cached conversation's last message id (0 without one); no row when it is not cached.
    static let lastMessageID = """
        SELECT coalesce(l.id, 0) FROM conversations c LEFT JOIN last_messages l ON l.conversation_id = c.id WHERE c.id = ?
        """

    func upsert(_ db: Connection, _ conversation: ConversationPayload, at access: Int64?) throws {
        try ConversationRow.store(db, conversation, access: access, now: clock())
    }

    /// Inside a write: the conversation's rows go now, its media files after the commit.
    func removeConversation(_ db: Connection, _ id: String, in scratch: inout WriteScratch) throws {
        liveEpochCounter.withLock { $0 += 1 }  // what the stream stored of it is gone
        let gone = try db.query("SELECT id FROM messages WHERE conversation_id = ? AND id > 0", [id]).map {
            try $0.get("id") as Int64
        }
        scratch.doomedMedia += forgetMedia(mediaFiles(of: Set(gone), in: &scratch))
        try db.run(
            """
            DELETE FROM ranges WHERE scope = ?1
               OR scope IN (SELECT 'thread:' || id FROM messages WHERE conversation_id = ?1 AND id > 0)
               OR scope IN (SELECT 'thread:' || parent_id FROM messages WHERE conversation_id = ?1 AND parent_id IS NOT NULL)
            """, [id])
        try db.run("DELETE FROM messages WHERE conversation_id = ? AND id > 0", [id])
        try db.run("DELETE FROM conversations WHERE id = ?", [id])
        try db.run("DELETE FROM last_messages WHERE conversation_id = ?", [id])
        try db.run("DELETE FROM usage WHERE conversation_id = ?", [id])
    }
}
