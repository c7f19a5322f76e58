extension Store {
    /// Locks a conversation for this write and gives the write its time. Every write that
    /// creates or changes the conversation's messages takes this lock before reading them, so
    /// message ids allocated after it, and the times given out under it, follow commit order
    /// within the conversation: paging by id (`before`/`after`, "read up to") or by time
    /// (`sentAfter`/`updatedAfter`) never passes a row that commits later. The time is later
    /// than every one the conversation gave out before, whichever node gave it.
    func lockConversation(_ db: any SQLDatabase, _ conversationId: String) throws -> Int64 {
        try db.scalar(Self.lockConversationQuery, [stamp(), conversationId]) ?? stamp()
    }

    /// `lockConversation`'s statement (no row when there is no such conversation): parameters
    /// a `stamp()` and the conversation's id.
    static let lockConversationQuery =
        "UPDATE conversations SET last_stamp = greatest(last_stamp + 1, ?) WHERE id = ? RETURNING last_stamp"

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
