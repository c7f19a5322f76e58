import Foundation
import OfflineChatProtocol
import OfflineChatSQLite

@testable import ChatServer

/// Turns a current database back into what an older chatd left, so a test can prove the
/// migrations bring an old deployment forward. Each step undoes one migration's layout; the
/// data a test wants in its old form (a token in clear, a url naming a hash) it writes itself.
enum OldSchema {
    static func rewind(_ db: Connection, to version: Int) throws {
        let current: Int = try db.scalar("PRAGMA user_version") ?? 0
        for step in stride(from: current, to: version, by: -1) { try undo(step, db) }
        try db.execute("PRAGMA user_version = \(version)")
    }

    /// The same for PostgreSQL's own numbered migrations (`PostgresSchema`), inside a
    /// transaction the caller holds.
    static func rewindPostgres(_ db: any SQLDatabase, to version: Int) throws {
        for step in stride(from: PostgresSchema.latestVersion, to: version, by: -1) {
            switch step {
            case 18: try db.execute(undoTokensByUser)
            case 17: try db.execute(undoSuspendedUsers)
            case 16: try db.execute(undoAuditTrail)
            case 15: try db.execute(undoMessageByReference)
            case 14, 13: break  // a new epoch; spans added for every membership (the undo of 11 drops them)
            case 12: try db.execute(undoGroupTime)
            case 11: try db.execute(undoGroupSpans)
            case 10: try db.execute(undoGroupLogs)
            case 9: try db.execute(undoJoinAttempts)
            case 8: try db.execute(undoMinute)
            case 7: try db.execute(undoTimeCopy)
            default: throw StoreError.broken("no undo for PostgreSQL migration \(step)")
            }
            try db.run("DELETE FROM schema_migrations WHERE version = ?", [step])
        }
    }

    /// SQLite's 29 and PostgreSQL's 18, 28 and 17, 27 and 16: tokens found by user, suspended
    /// users, the admin audit trail.
    private static let undoTokensByUser = "DROP INDEX tokens_by_user"
    private static let undoSuspendedUsers = "ALTER TABLE users DROP COLUMN suspended_at"
    private static let undoAuditTrail = "DROP TABLE admin_audit"

    /// SQLite's 26 and PostgreSQL's 15: a member action's change kept its message's copy.
    private static let undoMessageByReference = """
        UPDATE changes SET payload = replace(payload, '"message":null', '"message":' || (
            SELECT b.body FROM message_bodies b WHERE b.conversation_id = changes.conversation_id AND b.id = changes.message_id))
        WHERE message_id IS NOT NULL;
        ALTER TABLE changes DROP COLUMN message_id;
        """

    /// SQLite's 23 and PostgreSQL's 12: a group's members kept copies of its time and counts.
    private static let undoGroupTime = """
        DROP INDEX group_members_by_user;
        UPDATE conversation_members SET updated_at = coalesce(
            (SELECT c.updated_at FROM conversations c WHERE c.id = conversation_members.conversation_id), 0),
            unread = (SELECT count(*) FROM messages u WHERE u.conversation_id = conversation_members.conversation_id
                         AND u.id > conversation_members.read_id AND u.sender != conversation_members.uid
                         AND u.deleted_at IS NULL)
        WHERE peer IS NULL;
        """

    /// SQLite's 22 and PostgreSQL's 11: each member's spans of membership.
    private static let undoGroupSpans = "DROP TABLE group_spans"

    /// SQLite's 21 and PostgreSQL's 10: each group's own log.
    private static let undoGroupLogs = "DROP TABLE group_log; DROP TABLE group_heads"

    /// SQLite's 20 and PostgreSQL's 9: wrong passwords counted in the database.
    private static let undoJoinAttempts = "DROP TABLE join_attempts"

    /// SQLite's 19 and PostgreSQL's 8: the members' minute, and the index on it.
    private static let undoMinute = """
        DROP INDEX members_by_recency;
        ALTER TABLE conversation_members DROP COLUMN recency;
        CREATE INDEX members_by_recency ON conversation_members(uid, updated_at, conversation_id);
        """
    /// SQLite's 18 and PostgreSQL's 7: each member's copy of its conversation's time.
    private static let undoTimeCopy = """
        DROP INDEX members_by_recency;
        ALTER TABLE conversation_members DROP COLUMN updated_at;
        CREATE INDEX members_by_user ON conversation_members(uid);
        """

    private static func undo(_ migration: Int, _ db: Connection) throws {
        switch migration {
        case 29:
            try db.execute(undoTokensByUser)
        case 28:
            try db.execute(undoSuspendedUsers)
        case 27:
            try db.execute(undoAuditTrail)
        case 26:
            try db.execute(undoMessageByReference)
        case 25, 24:
            break  // a new epoch; spans added for every membership (the undo of 22 drops them)
        case 23:
            try db.execute(undoGroupTime)
        case 22:
            try db.execute(undoGroupSpans)
        case 21:
            try db.execute(undoGroupLogs)
        case 20:
            try db.execute(undoJoinAttempts)
        case 19:
            try db.execute(undoMinute)
        case 18:
            try db.execute(undoTimeCopy)
        case 17:
            try db.execute(
                """
                ALTER TABLE messages ADD COLUMN body TEXT;
                UPDATE messages SET body = (SELECT body FROM message_bodies b
                                            WHERE b.conversation_id = messages.conversation_id AND b.id = messages.id);
                DROP TABLE message_bodies;
                """)
        case 16:
            try db.execute("ALTER TABLE messages DROP COLUMN body")
        case 15:
            try db.execute("CREATE INDEX messages_by_conversation ON messages(conversation_id, id)")
        case 14:
            try db.execute("DROP TABLE nodes; DROP TABLE presence")
        case 13:
            try db.execute("ALTER TABLE conversations DROP COLUMN last_stamp")
        case 12:
            // Changes numbered by one global `seq`, stored with it; the inbox without positions.
            let update = try db.prepare("UPDATE changes SET payload = ? WHERE id = ?")
            for row in try db.query("SELECT id, payload FROM changes") {
                let id: Int64 = try row.get(0)
                var change = try JSONDecoder().decode(
                    ChangePayload.self, from: Data((try row.get(1) as String + #","seq":0}"#).utf8))
                change.seq = id
                try update.run([String(decoding: try JSONEncoder().encode(change), as: UTF8.self), id])
            }
            try db.execute(
                """
                ALTER TABLE changes RENAME COLUMN id TO seq;
                CREATE TABLE old_inbox(uid TEXT NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY(uid, seq)) WITHOUT ROWID;
                INSERT INTO old_inbox(uid, seq) SELECT uid, change FROM inbox;
                DROP TABLE inbox;
                ALTER TABLE old_inbox RENAME TO inbox;
                DROP TABLE user_heads;
                DELETE FROM meta WHERE key = 'epoch';
                """)
        case 11:
            try db.execute("DROP TABLE uploads; DROP TABLE upload_refs")
        default:
            break
        }
    }
}
