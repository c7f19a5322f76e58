import OfflineChatSQLite

/// A one-to-one conversation keeps each member's unread count in `conversation_members.unread`
/// (messages after their `read_id`, not their own, not deleted), so listing conversations costs
/// the same whatever the backlog. Every write that changes one of those three things keeps it,
/// in the same transaction: a new message counts for the other member, a deletion uncounts
/// it, and whoever's read point moves is counted afresh, which costs only the messages still
/// unread after the new point. A group keeps no count and no time in its members' rows: a
/// group message writes only its sender's row, and a group's count is counted when read
/// (`Store.conversationQuery`), its time is its conversation's (docs/GROUPS.md).
extension Store {
    /// The counts once `?1` sent the newest message of one-to-one conversation `?2` at `?3`,
    /// the connection's last insert: it counts for the other member unless they have read past
    /// it, and the sender has read everything up to it (their count is 0: the conversation is
    /// locked, so no message comes after theirs yet). Both members' copies of the
    /// conversation's time, which order their lists (`Store.directPageMembers`), move to `?3`
    /// in the same update.
    static let countSentMessage = """
        UPDATE conversation_members SET
            unread = CASE WHEN uid = ?1 THEN 0 WHEN read_id < last_insert_rowid() THEN unread + 1 ELSE unread END,
            read_id = CASE WHEN uid = ?1 THEN greatest(read_id, last_insert_rowid()) ELSE read_id END,
            delivered_id = CASE WHEN uid = ?1 THEN greatest(delivered_id, last_insert_rowid()) ELSE delivered_id END,
            updated_at = ?3
        WHERE conversation_id = ?2
        """

    /// `?1` sent the newest message of group `?2`, the connection's last insert: they have read
    /// up to it. No other member's row changes.
    static let markSentToGroup = """
        UPDATE conversation_members SET
            read_id = greatest(read_id, last_insert_rowid()), delivered_id = greatest(delivered_id, last_insert_rowid())
        WHERE conversation_id = ?2 AND uid = ?1
        """

    /// The sender `?2` of group `?1`'s newest message, with the connection's last insert (its
    /// id): a group's message reads no other member's row.
    static let sentToGroupBy =
        "SELECT uid, last_insert_rowid() FROM conversation_members WHERE conversation_id = ?1 AND uid = ?2"

    /// The members of conversation `?1`, each row with the connection's last insert (a new
    /// message's id). Asked after the counts' update rather than through its `RETURNING`,
    /// which costs SQLite a temporary table: 4 µs of a send's writer time.
    static let sentMessageAudience =
        "SELECT uid, last_insert_rowid() FROM conversation_members WHERE conversation_id = ?"

    /// Message `id` by `sender` was deleted (it was not before).
    static func uncountDeletedMessage(_ db: any SQLDatabase, _ conversationId: String, id: Int64, sender: String) throws
    {
        guard !isGroup(conversationId) else { return }
        try db.run(
            "UPDATE conversation_members SET unread = unread - 1 WHERE conversation_id = ? AND uid != ? AND read_id < ?",
            [conversationId, sender, id])
    }

    /// `uids`' read points moved: their counts from scratch.
    static func recountUnread(_ db: any SQLDatabase, _ conversationId: String, _ uids: [String]) throws {
        guard !isGroup(conversationId) else { return }
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
