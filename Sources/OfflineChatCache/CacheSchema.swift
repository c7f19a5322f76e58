import Foundation
import OfflineChatProtocol
import OfflineChatSQLite

/// The cache's schema: append-only numbered migrations. Plain SQL that SQLCipher 3.4.1
/// (SQLite 3.15.2) understands: no UPSERT, RETURNING or JSON functions.
enum CacheSchema {
    static let migrator: Migrator = {
        var migrator = Migrator()
        migrator.register(
            1, "messages, ranges, conversations, snapshots",
            sql: """
                CREATE TABLE messages(
                    local_id INTEGER PRIMARY KEY AUTOINCREMENT,
                    id INTEGER UNIQUE,
                    muid TEXT,
                    conversation_id TEXT NOT NULL,
                    parent_id INTEGER,
                    sender TEXT NOT NULL,
                    receiver TEXT NOT NULL,
                    receiver_type TEXT NOT NULL,
                    category TEXT NOT NULL,
                    type TEXT NOT NULL,
                    text TEXT,
                    sent_at INTEGER NOT NULL,
                    updated_at INTEGER NOT NULL,
                    edited_at INTEGER,
                    deleted_at INTEGER,
                    reply_count INTEGER NOT NULL DEFAULT 0,
                    call_status TEXT,
                    -- JSON of the rarer parts (attachment, custom data, metadata, reactions, action).
                    extras TEXT);
                CREATE INDEX messages_by_conversation ON messages(conversation_id, id);
                CREATE INDEX messages_by_parent ON messages(parent_id, id);
                CREATE UNIQUE INDEX messages_by_muid ON messages(sender, muid);
                -- Contiguous stretches of a scope's history (a conversation, or a thread as
                -- 'thread:<parent id>'): every message of the scope with lo <= id <= hi is cached.
                -- `open`: the stretch reaches the live head (realtime extends it; a disconnect closes it).
                CREATE TABLE ranges(
                    scope TEXT NOT NULL,
                    lo INTEGER NOT NULL,
                    hi INTEGER NOT NULL,
                    open INTEGER NOT NULL DEFAULT 0);
                CREATE INDEX ranges_by_scope ON ranges(scope, lo);
                CREATE TABLE conversations(
                    id TEXT PRIMARY KEY,
                    updated_at INTEGER NOT NULL,
                    last_access INTEGER NOT NULL,
                    payload TEXT NOT NULL);
                CREATE INDEX conversations_by_time ON conversations(updated_at, id);
                -- What the server answered for one list request's settings, page by page.
                CREATE TABLE snapshots(
                    key TEXT NOT NULL,
                    page INTEGER NOT NULL,
                    payload TEXT NOT NULL,
                    PRIMARY KEY(key, page));
                CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
                """)
        migrator.register(
            2, "usage",
            sql: """
                -- When each conversation's cached data was last read or written (eviction is LRU).
                CREATE TABLE usage(conversation_id TEXT PRIMARY KEY, last_access INTEGER NOT NULL);
                """)
        migrator.register(
            3, "outbox",
            sql: """
                -- Sends waiting for the server. The message itself is a `messages` row without a
                -- server id (so reads show it); this row holds the request and its progress.
                CREATE TABLE outbox(
                    local_id INTEGER PRIMARY KEY,
                    conversation_id TEXT NOT NULL,
                    state TEXT NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    next_attempt_at INTEGER NOT NULL DEFAULT 0,
                    failure_reason TEXT,
                    error_code TEXT,
                    error_message TEXT,
                    media_path TEXT,
                    request TEXT NOT NULL);
                """)
        migrator.register(
            4, "outbox index",
            sql: """
                -- Small entries: counting the outbox (on every send) walks this, not the requests.
                CREATE INDEX outbox_by_conversation ON outbox(conversation_id);
                """)
        migrator.register(
            5, "sync",
            sql: """
                -- A stretch closed while it reached the live head records the sync point current at
                -- the time (`proven_at`): replaying the changelog from that point's cursor brings
                -- every message after the stretch, so a sync page may extend it.
                ALTER TABLE ranges ADD COLUMN proven_at INTEGER;
                """)
        migrator.register(6, "conversation columns") { db in
            // The list was one JSON document per conversation: columns now (ConversationRow),
            // and the last message as a row of its own. Cached conversations move over.
            try db.execute(
                """
                ALTER TABLE conversations RENAME TO conversations_v5;
                DROP INDEX conversations_by_time;
                \(ConversationRow.createTables)
                """)
            for row in try db.query("SELECT payload, last_access FROM conversations_v5") {
                let conversation = try ChatCache.decode(ConversationPayload.self, try row.get("payload"))
                let access: Int64 = try row.get("last_access")
                try ConversationRow.store(db, conversation, access: access, now: access)
            }
            try db.execute("DROP TABLE conversations_v5")
        }
        migrator.register(
            7, "thread index",
            sql: """
                -- Only replies have a parent: a message outside a thread (most, and every queued
                -- send to a conversation) no longer writes an entry here. Thread reads ask
                -- `parent_id = ?`, which implies the index's condition.
                DROP INDEX messages_by_parent;
                CREATE INDEX messages_by_parent ON messages(parent_id, id) WHERE parent_id IS NOT NULL;
                """)
        migrator.register(8, "queued media by name") { db in
            // Queued files were stored by absolute path, which an app update that moves the
            // container breaks: each is now its name in the cache's media folder (where
            // `copyForOutbox` puts every one), resolved against the folder where it is now.
            for row in try db.query("SELECT local_id, media_path FROM outbox WHERE media_path LIKE '/%'") {
                let path: String = try row.get(1)
                let name = URL(fileURLWithPath: path).lastPathComponent
                guard name.hasPrefix("outbox-") else { continue }
                try db.run("UPDATE outbox SET media_path = ? WHERE local_id = ?", [name, try row.get(0) as Int64])
            }
        }
        return migrator
    }()
}
