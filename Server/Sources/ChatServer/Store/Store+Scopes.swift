import OfflineChatSQLite

extension Store {
    /// Locks a conversation for this write and gives the write its time. Every write that
    /// creates or changes the conversation's messages takes this lock before reading them, so
    /// message ids allocated after it, and the times given out under it, follow commit order
    /// within the conversation: paging by id (`before`/`after`, "read up to") or by time
    /// (`sentAfter`/`updatedAfter`) never passes a row that commits later. The time is later
    /// than every one the conversation gave out before, whichever node gave it.
    func lockConversation(_ db: any SQLDatabase, _ conversationId: String) throws -> Int64 {
        try Self.lockedStamp(try db.queries(lockConversationStatements(conversationId))) ?? stamp()
    }

    /// `lockConversation`'s statements, for a caller to send with others (one round trip on
    /// PostgreSQL); their last answer holds the time (`lockedStamp`). The time comes back from
    /// the statement that locked the row: on PostgreSQL through `RETURNING`, since a `SELECT`
    /// of its own, in a snapshot of its own, could find a conversation another transaction made
    /// after the `UPDATE` found none, and go on without its lock. On SQLite, where `RETURNING`
    /// built a temporary table for every send and the single writer leaves no such race, a
    /// `SELECT` right after reads it back, only if the `UPDATE` changed the row.
    func lockConversationStatements(_ conversationId: String) -> [(sql: String, arguments: [any SQLValueConvertible])] {
        guard engine.returningBuildsATable else { return [(Self.lockReturning, [stamp(), conversationId])] }
        return [(Self.lock, [stamp(), conversationId]), (Self.lockedTime, [conversationId])]
    }

    /// `lockConversationStatements`' texts: the lock (parameters a `stamp()` and the
    /// conversation's id), the same answering its time, and the time read back after it.
    private static let lock = "UPDATE conversations SET last_stamp = greatest(last_stamp + 1, ?) WHERE id = ?"
    private static let lockReturning = lock + " RETURNING last_stamp"
    private static let lockedTime = "SELECT last_stamp FROM conversations WHERE id = ? AND changes() > 0"

    /// The time `lockConversationStatements` gave, from their answers (nil when there is no
    /// such conversation).
    static func lockedStamp(_ answers: some BidirectionalCollection<[Row]>) throws -> Int64? {
        try answers.last?.first?.get(0, as: Int64.self)
    }

    /// `lockConversation` for the conversation of message `id` (when there is no such message,
    /// the caller's own read refuses it).
    func lockConversation(_ db: any SQLDatabase, ofMessage id: Int64) throws -> Int64 {
        guard let conversationId: String = try db.scalar("SELECT conversation_id FROM messages WHERE id = ?", [id])
        else {
            return stamp()
        }
        return try lockConversation(db, conversationId)
    }

    /// Locks `uid`'s feed: notification ids are allocated under it, so they follow commit
    /// order per user.
    static func lockFeed(_ db: any SQLDatabase, _ uid: String) throws {
        try db.lockRows("users", where: "uid", is: uid)
    }
}
