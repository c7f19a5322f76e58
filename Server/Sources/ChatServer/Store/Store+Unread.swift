import OfflineChatSQLite

/// Each member's unread count is kept in `conversation_members.unread` (messages after their
/// `read_id`, not their own, not deleted), so listing conversations costs the same whatever
/// the backlog. Every write that changes one of those three things keeps it, in the same
/// transaction: a new message counts for everyone else who has not read past it, a deletion
/// uncounts it, and whoever's read point moves (or who comes in) is counted afresh, which
/// costs only the messages still unread after the new point.
extension Store {
    /// A message `id` by `sender` was added to the conversation at `now`: it counts for
    /// everyone else who has not read past it, and every member's copy of the conversation's
    /// time, which orders each member's list (`StoreEngine.conversationPageQuery`), moves to
    /// `now` in the same update. Every write of `conversations.updated_at` goes with this or
    /// `countSentMessage`.
    static func countNewMessage(
        _ db: any SQLDatabase, _ conversationId: String, id: Int64, sender: String, at now: Int64
    ) throws {
        try db.run(
            """
            UPDATE conversation_members SET
                unread = CASE WHEN uid != ?2 AND read_id < ?3 THEN unread + 1 ELSE unread END, updated_at = ?4
            WHERE conversation_id = ?1
            """, [conversationId, sender, id, now])
    }

    /// The counts once `?1` sent the newest message of conversation `?2` at `?3`, the
    /// connection's last insert: it counts for everyone else who has not read past it, and the
    /// sender has read everything up to it (their count is 0: the conversation is locked, so no
    /// message comes after theirs yet). Every member's copy of the conversation's time moves
    /// to `?3` in the same update (as in `countNewMessage`).
    static let countSentMessage = """
        UPDATE conversation_members SET
            unread = CASE WHEN uid = ?1 THEN 0 WHEN read_id < last_insert_rowid() THEN unread + 1 ELSE unread END,
            read_id = CASE WHEN uid = ?1 THEN greatest(read_id, last_insert_rowid()) ELSE read_id END,
            delivered_id = CASE WHEN uid = ?1 THEN greatest(delivered_id, last_insert_rowid()) ELSE delivered_id END,
            updated_at = ?3
        WHERE conversation_id = ?2
        """

    /// The members of conversation `?1`, each row with the connection's last insert (a new
    /// message's id). Asked after `countSentMessage` rather than through its `RETURNING`, which
    /// costs SQLite a temporary table: 4 µs of a send's writer time.
    static let sentMessageAudience =
        "SELECT uid, last_insert_rowid() FROM conversation_members WHERE conversation_id = ?"

    /// Message `id` by `sender` was deleted (it was not before).
    static func uncountDeletedMessage(_ db: any SQLDatabase, _ conversationId: String, id: Int64, sender: String) throws
    {
        try db.run(
            "UPDATE conversation_members SET unread = unread - 1 WHERE conversation_id = ? AND uid != ? AND read_id < ?",
            [conversationId, sender, id])
    }

    /// `uids`' read points moved (or they just came in): their counts from scratch.
    static func recountUnread(_ db: any SQLDatabase, _ conversationId: String, _ uids: [String]) throws {
        for uid in Set(uids) {
            try db.run(
                """
                UPDATE conversation_members SET unread = (
                    SELECT count(*) FROM messages WHERE conversation_id = ?1 AND id > conversation_members.read_id AND sender != ?2
                       AND deleted_at IS NULL)
                WHERE conversation_id = ?1 AND uid = ?2
                """, [conversationId, uid])
        }
    }
}
