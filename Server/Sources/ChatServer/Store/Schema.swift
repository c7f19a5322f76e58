import OfflineChatProtocol
import OfflineChatSQLite

/// chatd's schema: append-only numbered migrations. Never edit a shipped one.
enum Schema {
    /// Wrong-password joins per user and group (`Store.takeJoinAttempt`), shared by every node
    /// (SQLite's migration 20, PostgreSQL's 9, whose indexed text is in byte order). The key is
    /// the group and the user.
    /// Each group's own log (issue #42, docs/GROUPS.md): its changes numbered 1, 2, 3… by its
    /// `group_heads` row, bumped in the writing transaction before the user heads (every
    /// writer takes group heads by conversation id, then user heads by uid), so a group's
    /// positions are gapless and in commit order with many writers, as the users' are. Written
    /// beside the members' inboxes from this migration on; readers move to it next.
    /// Each stretch of a user's membership of a group, by group position: they see the changes
    /// after `from_pts` up to `to_pts` (NULL while a member). Written from this migration on;
    /// the memberships before it get theirs with the backfill (docs/GROUPS.md, step 8).
    static func groupSpansTable(keyType: String, integer: String) -> String {
        """
        CREATE TABLE group_spans(
            conversation_id \(keyType) NOT NULL,
            uid \(keyType) NOT NULL,
            from_pts \(integer) NOT NULL,
            to_pts \(integer),
            PRIMARY KEY(conversation_id, uid, from_pts));
        CREATE INDEX group_spans_by_user ON group_spans(uid, conversation_id);
        """
    }

    /// `rowTables`: SQLite's ` WITHOUT ROWID` (the rows live in their primary key's b-tree).
    static func groupLogTables(keyType: String, integer: String, rowTables: String = "") -> String {
        """
        CREATE TABLE group_heads(
            conversation_id \(keyType) PRIMARY KEY,
            pts \(integer) NOT NULL)\(rowTables);
        CREATE TABLE group_log(
            conversation_id \(keyType) NOT NULL,
            pts \(integer) NOT NULL,
            change \(integer) NOT NULL,
            PRIMARY KEY(conversation_id, pts))\(rowTables);
        CREATE INDEX group_log_by_change ON group_log(change);
        """
    }

    /// A group's messages write no member row (docs/GROUPS.md): its time is its conversation's
    /// and each member's unread count is counted when read. A group member's row keeps no time
    /// (0: `members_by_recency`'s end, so a list's direct conversations are read there without
    /// meeting a group's row), and a user's groups are found by `group_members_by_user`.
    static let groupsKeepTheirTimeOnce = """
        UPDATE conversation_members SET updated_at = 0 WHERE peer IS NULL;
        CREATE INDEX group_members_by_user ON conversation_members(uid) WHERE peer IS NULL;
        """

    /// An open span for each group member without one (members from before spans were
    /// written, or from an export without them), starting at the group's head: a `c3` cursor
    /// is never older than this, so no reader needs the changes before it from the group's log.
    static let openMissingSpans = """
        INSERT INTO group_spans(conversation_id, uid, from_pts, to_pts)
        SELECT m.conversation_id, m.uid, coalesce(h.pts, 0), NULL FROM conversation_members m
        LEFT JOIN group_heads h ON h.conversation_id = m.conversation_id
        WHERE m.peer IS NULL AND NOT EXISTS (
            SELECT 1 FROM group_spans s WHERE s.conversation_id = m.conversation_id AND s.uid = m.uid AND s.to_pts IS NULL);
        """

    /// A member action's change keeps its message by reference (`StoredChange.byReference`):
    /// its payload holds `"message":null` and this column the message's id in its conversation.
    /// Changes written before keep their copy (the column stays NULL).
    static let messageByReference = """
        ALTER TABLE changes ADD COLUMN message_id BIGINT;
        """

    /// A suspended user gets no token until the suspension is lifted (`Store.suspend`).
    static let suspendedUsers = "ALTER TABLE users ADD COLUMN suspended_at BIGINT;"

    /// A user's tokens found without reading every token (suspending a user, revoking their
    /// tokens, the operator's count of each user's live ones).
    static let tokensByUser = "CREATE INDEX tokens_by_user ON tokens(uid);"

    /// Every admin action, newest last (`Store.audit`).
    static func auditTable(id: String) -> String {
        """
        CREATE TABLE admin_audit(id \(id), at BIGINT NOT NULL, action TEXT NOT NULL, target TEXT NOT NULL);
        """
    }

    static func joinAttemptsTable(keyType: String) -> String {
        """
        CREATE TABLE join_attempts(
            attempt_key \(keyType) PRIMARY KEY, failures INTEGER NOT NULL, not_before BIGINT NOT NULL);
        """
    }

    static let migrator: Migrator = {
        var migrator = Migrator()
        migrator.register(
            1, "core",
            sql: """
                CREATE TABLE users(
                    uid TEXT PRIMARY KEY,
                    name TEXT NOT NULL,
                    avatar TEXT,
                    metadata TEXT,
                    tags TEXT NOT NULL DEFAULT '[]',
                    role TEXT,
                    last_active_at INTEGER,
                    created_at INTEGER NOT NULL);
                CREATE TABLE tokens(
                    token TEXT PRIMARY KEY,
                    uid TEXT NOT NULL REFERENCES users(uid),
                    created_at INTEGER NOT NULL,
                    expires_at INTEGER NOT NULL,
                    revoked_at INTEGER);
                CREATE TABLE conversations(
                    id TEXT PRIMARY KEY,
                    type TEXT NOT NULL,
                    last_message_id INTEGER,
                    updated_at INTEGER NOT NULL);
                CREATE TABLE conversation_members(
                    conversation_id TEXT NOT NULL REFERENCES conversations(id),
                    uid TEXT NOT NULL REFERENCES users(uid),
                    peer TEXT,
                    delivered_id INTEGER NOT NULL DEFAULT 0,
                    read_id INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY(conversation_id, uid)) WITHOUT ROWID;
                CREATE INDEX members_by_user ON conversation_members(uid);
                CREATE TABLE messages(
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    muid TEXT,
                    conversation_id TEXT NOT NULL REFERENCES conversations(id),
                    sender TEXT NOT NULL,
                    receiver TEXT NOT NULL,
                    receiver_type TEXT NOT NULL,
                    category TEXT NOT NULL,
                    type TEXT NOT NULL,
                    text TEXT,
                    attachment TEXT,
                    custom_data TEXT,
                    metadata TEXT,
                    sent_at INTEGER NOT NULL,
                    updated_at INTEGER NOT NULL,
                    edited_at INTEGER,
                    deleted_at INTEGER);
                CREATE UNIQUE INDEX messages_by_muid ON messages(sender, muid) WHERE muid IS NOT NULL;
                CREATE INDEX messages_by_conversation ON messages(conversation_id, id);
                -- The changelog: one row per change, numbered by seq; `inbox` fans it out to the
                -- users who may see it, so a user's replay reads only their own rows.
                CREATE TABLE changes(
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    conversation_id TEXT NOT NULL,
                    payload TEXT NOT NULL,
                    at INTEGER NOT NULL);
                CREATE TABLE inbox(
                    uid TEXT NOT NULL,
                    seq INTEGER NOT NULL,
                    PRIMARY KEY(uid, seq)) WITHOUT ROWID;
                CREATE TABLE meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL);
                """)
        migrator.register(
            2, "blocks",
            sql: """
                CREATE TABLE blocks(
                    blocker TEXT NOT NULL REFERENCES users(uid),
                    blocked TEXT NOT NULL REFERENCES users(uid),
                    at INTEGER NOT NULL,
                    PRIMARY KEY(blocker, blocked)) WITHOUT ROWID;
                CREATE INDEX blocks_by_blocked ON blocks(blocked, blocker);
                """)
        migrator.register(
            3, "reactions",
            sql: """
                CREATE TABLE reactions(
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    message_id INTEGER NOT NULL REFERENCES messages(id),
                    uid TEXT NOT NULL REFERENCES users(uid),
                    reaction TEXT NOT NULL,
                    reacted_at INTEGER NOT NULL,
                    UNIQUE(message_id, uid, reaction));
                CREATE INDEX reactions_by_message ON reactions(message_id, id);
                """)
        migrator.register(
            4, "threads",
            sql: """
                ALTER TABLE messages ADD COLUMN parent_id INTEGER REFERENCES messages(id);
                ALTER TABLE messages ADD COLUMN reply_count INTEGER NOT NULL DEFAULT 0;
                CREATE INDEX messages_by_parent ON messages(parent_id, id) WHERE parent_id IS NOT NULL;
                """)
        migrator.register(5, "calls", sql: "ALTER TABLE messages ADD COLUMN call_status TEXT")
        migrator.register(
            6, "notification feed",
            sql: """
                CREATE TABLE notifications(
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    uid TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    actor TEXT NOT NULL,
                    message_id INTEGER NOT NULL,
                    conversation_id TEXT NOT NULL,
                    reaction TEXT,
                    at INTEGER NOT NULL);
                CREATE INDEX notifications_by_user ON notifications(uid, id);
                """)
        migrator.register(
            7, "groups",
            sql: """
                CREATE TABLE groups(
                    guid TEXT PRIMARY KEY,
                    name TEXT NOT NULL,
                    type TEXT NOT NULL,
                    password_hash TEXT,
                    icon TEXT,
                    description TEXT,
                    metadata TEXT,
                    tags TEXT NOT NULL DEFAULT '[]',
                    owner TEXT NOT NULL,
                    created_at INTEGER NOT NULL,
                    updated_at INTEGER NOT NULL,
                    deleted_at INTEGER);
                -- Group membership is the group conversation's member rows, with a scope.
                ALTER TABLE conversation_members ADD COLUMN scope TEXT;
                ALTER TABLE conversation_members ADD COLUMN joined_at INTEGER;
                CREATE TABLE group_bans(
                    guid TEXT NOT NULL,
                    uid TEXT NOT NULL,
                    banned_by TEXT NOT NULL,
                    banned_at INTEGER NOT NULL,
                    PRIMARY KEY(guid, uid)) WITHOUT ROWID;
                ALTER TABLE messages ADD COLUMN action TEXT;
                """)
        migrator.register(
            8, "unread counts",
            sql: """
                -- Counting a conversation's unread messages (every conversation list) reads only
                -- this index, not each message row.
                CREATE INDEX messages_unread ON messages(conversation_id, id, sender, deleted_at);
                """)
        migrator.register(
            9, "kept unread counts",
            sql: """
                -- Each member's unread count, kept by every write that changes it (Store+Unread):
                -- the conversation list no longer counts rows, so it costs the same at any backlog.
                ALTER TABLE conversation_members ADD COLUMN unread INTEGER NOT NULL DEFAULT 0;
                UPDATE conversation_members SET unread = (
                    SELECT count(*) FROM messages m WHERE m.conversation_id = conversation_members.conversation_id
                       AND m.id > conversation_members.read_id AND m.sender != conversation_members.uid AND m.deleted_at IS NULL);
                """)
        migrator.register(10, "token hashes") { db in
            // Bearer tokens were stored as they are: whoever read the file held every session.
            // Only their SHA-256 is kept now (`Store.tokenHash`); a token is checked by hashing it.
            for row in try db.query("SELECT rowid, token FROM tokens") {
                try db.run(
                    "UPDATE tokens SET token = ? WHERE rowid = ?",
                    [Store.tokenHash(try row.get("token")), try row.get("rowid") as Int64])
            }
        }
        migrator.register(11, "uploads") { db in
            // Media belonged to nobody: any signed-in user fetched any file by its hash, and the
            // first upload's content type won. Each upload is now a row of its own (its random id
            // is the url; `file` the content-addressed bytes it shares), and each message that
            // names it a reference: chatd serves it to the uploader and to whoever can read one.
            try db.execute(
                """
                CREATE TABLE uploads(
                    id TEXT PRIMARY KEY,
                    file TEXT NOT NULL,
                    uploader TEXT NOT NULL,
                    content_type TEXT NOT NULL,
                    size INTEGER NOT NULL,
                    created_at INTEGER NOT NULL);
                CREATE INDEX uploads_by_file ON uploads(file);
                CREATE INDEX uploads_by_uploader ON uploads(uploader, created_at);
                CREATE INDEX uploads_by_age ON uploads(created_at);
                CREATE TABLE upload_refs(
                    upload_id TEXT NOT NULL,
                    message_id INTEGER NOT NULL,
                    PRIMARY KEY(upload_id, message_id)) WITHOUT ROWID;
                CREATE INDEX upload_refs_by_message ON upload_refs(message_id);
                """)
            // Messages sent before keep their urls: the file's hash becomes the upload's id.
            for row in try db.query("SELECT id, sender, attachment, sent_at FROM messages WHERE attachment IS NOT NULL")
            {
                guard let attachment = try Store.decodeJSON(Attachment.self, try row.get("attachment")),
                    let id = Store.ownUploadID(attachment.url)
                else { continue }
                try db.run(
                    "INSERT OR IGNORE INTO uploads(id, file, uploader, content_type, size, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                    [
                        id, id, try row.get("sender") as String, attachment.mimeType, attachment.size,
                        try row.get("sent_at") as Int64
                    ])
                try db.run(
                    "INSERT OR IGNORE INTO upload_refs(upload_id, message_id) VALUES (?, ?)",
                    [id, try row.get("id") as Int64])
            }
        }
        migrator.register(12, "positions") { db in
            try db.execute(
                """
                    -- Per-user gapless positions (issue #15). A change's global id orders nothing a
                    -- client sees once several nodes write: each user's changes are numbered 1, 2, 3…
                    -- by their `user_heads` row, bumped last in the writing transaction, so a reader
                    -- paging by position never passes a change that commits later. The old inbox is
                    -- numbered per user in change order; `c1` cursors map onto it.
                    ALTER TABLE changes RENAME COLUMN seq TO id;
                    CREATE TABLE user_heads(
                        uid TEXT PRIMARY KEY,
                        pts INTEGER NOT NULL) WITHOUT ROWID;
                    CREATE TABLE numbered_inbox(
                        uid TEXT NOT NULL,
                        pts INTEGER NOT NULL,
                        change INTEGER NOT NULL,
                        PRIMARY KEY(uid, pts)) WITHOUT ROWID;
                    INSERT INTO numbered_inbox(uid, pts, change)
                        SELECT uid, row_number() OVER (PARTITION BY uid ORDER BY seq), seq FROM inbox;
                    INSERT INTO user_heads(uid, pts) SELECT uid, max(pts) FROM numbered_inbox GROUP BY uid;
                    DROP TABLE inbox;
                    ALTER TABLE numbered_inbox RENAME TO inbox;
                    CREATE INDEX inbox_by_change ON inbox(change);
                    -- The deployment's epoch: cursors carry it; a restore or an import draws a new one
                    -- and clients holding the old one rebuild (410 cursor_expired).
                    INSERT OR IGNORE INTO meta(key, value) VALUES ('epoch', abs(random() >> 1));
                """)
            // A change's JSON is stored without its `seq`, which differs per reader (`StoredChange`).
            let update = try db.prepare("UPDATE changes SET payload = ? WHERE id = ?")
            for row in try db.query("SELECT id, payload FROM changes") {
                guard let change = try Store.decodeJSON(ChangePayload.self, try row.get(1)) else { continue }
                try update.run([try StoredChange.body(of: change), try row.get(0, as: Int64.self)])
            }
        }
        migrator.register(
            13, "conversation stamps",
            sql: """
                -- The last time a conversation gave a write (Store.lockConversation): a write's time
                -- is later than it, whichever node's clock made it.
                ALTER TABLE conversations ADD COLUMN last_stamp INTEGER NOT NULL DEFAULT 0;
                """)
        migrator.register(
            14, "presence",
            sql: """
                -- Presence across nodes (Store+Presence): sockets per node and user, and each
                -- node's last heartbeat.
                CREATE TABLE nodes(node TEXT PRIMARY KEY, seen_at INTEGER NOT NULL) WITHOUT ROWID;
                CREATE TABLE presence(
                    node TEXT NOT NULL,
                    uid TEXT NOT NULL,
                    sockets INTEGER NOT NULL,
                    PRIMARY KEY(node, uid)) WITHOUT ROWID;
                """)
        migrator.register(
            15, "one index of a conversation's messages",
            sql: """
                -- messages_unread begins with the same two columns: every send wrote both.
                DROP INDEX messages_by_conversation;
                """)
        migrator.register(
            16, "message bodies",
            sql: """
                -- Each message's JSON as the API answers it, reactions included (Store.keepBody),
                -- written with every change of the message: a history page splices these texts.
                -- Rows from before it stay NULL and are built from their columns when read. A
                -- later change to MessagePayload's JSON must set it back to NULL in a migration
                -- (both engines), or pages serve the old shape.
                ALTER TABLE messages ADD COLUMN body TEXT;
                """)
        migrator.register(
            17, "message bodies by conversation",
            sql: """
                -- The kept JSON moves to a table ordered by conversation: a history page reads its
                -- texts from neighbouring rows of one b-tree instead of finding each message's row
                -- by id. Every message has a row here; a NULL body is built from its columns. A
                -- later change to MessagePayload's JSON sets these bodies back to NULL (both
                -- engines).
                CREATE TABLE message_bodies(
                    conversation_id TEXT NOT NULL,
                    id INTEGER NOT NULL,
                    body TEXT,
                    PRIMARY KEY(conversation_id, id)) WITHOUT ROWID;
                INSERT INTO message_bodies(conversation_id, id, body) SELECT conversation_id, id, body FROM messages;
                ALTER TABLE messages DROP COLUMN body;
                """)
        migrator.register(
            18, "conversation lists by recency",
            sql: """
                -- Each member's copy of its conversation's updated_at, indexed by user and time: a
                -- list page reads its rows in order and stops (Store.conversationPageQuery), where
                -- it sorted every conversation of the user. Every write that moves a conversation's
                -- time moves its members' copies with it (Store+Unread: countSentMessage, countNewMessage).
                -- It begins with the uid, so it also finds a user's rows: members_by_user goes.
                ALTER TABLE conversation_members ADD COLUMN updated_at INTEGER NOT NULL DEFAULT 0;
                UPDATE conversation_members SET updated_at = coalesce(
                    (SELECT c.updated_at FROM conversations c WHERE c.id = conversation_members.conversation_id), 0);
                CREATE INDEX members_by_recency ON conversation_members(uid, updated_at, conversation_id);
                DROP INDEX members_by_user;
                """)
        migrator.register(
            19, "conversation lists by the minute",
            sql: """
                -- The minute of each member's copy of the time, first in the list's order (the
                -- same order: the minute follows the time). It is computed from the time, so no
                -- write can leave the two apart (Store.recency(of:) computes it for a page's
                -- position: the two must agree). PostgreSQL's index holds the minute alone, so that
                -- a message rewrites its members' rows in place there; SQLite has no such rewrite
                -- to keep, so its index holds the whole order and a page needs no sort.
                ALTER TABLE conversation_members ADD COLUMN recency INTEGER
                    GENERATED ALWAYS AS (updated_at / 60000) VIRTUAL;
                DROP INDEX members_by_recency;
                CREATE INDEX members_by_recency ON conversation_members(uid, recency, updated_at, conversation_id);
                """)
        migrator.register(
            20, "password attempts in the database",
            sql: joinAttemptsTable(keyType: "TEXT"))
        migrator.register(
            21, "group logs", sql: groupLogTables(keyType: "TEXT", integer: "INTEGER", rowTables: " WITHOUT ROWID"))
        migrator.register(22, "group spans", sql: groupSpansTable(keyType: "TEXT", integer: "INTEGER"))
        migrator.register(23, "a group's time kept once", sql: groupsKeepTheirTimeOnce)
        migrator.register(24, "spans of every membership", sql: openMissingSpans)
        migrator.register(
            25, "group changes out of the inboxes",
            sql: """
                -- From here on a group's change is written to its group's log only (each member
                -- reads it there within their spans), not copied into every member's inbox: a
                -- cursor that read the inboxes would miss them. A new epoch: every client's
                -- cursor answers cursor_expired once and it rebuilds from the head (a c3 cursor).
                UPDATE meta SET value = abs(random() >> 1) WHERE key = 'epoch';
                """)
        migrator.register(26, "a member action's message kept once", sql: messageByReference)
        migrator.register(27, "the admin audit trail", sql: auditTable(id: "INTEGER PRIMARY KEY AUTOINCREMENT"))
        migrator.register(28, "suspended users", sql: suspendedUsers)
        migrator.register(29, "tokens by user", sql: tokensByUser)
        return migrator
    }()
}
