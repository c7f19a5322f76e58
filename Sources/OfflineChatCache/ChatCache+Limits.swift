import Foundation
import OfflineChatProtocol
import OfflineChatSQLite

/// What the cache may hold. Counts are clamped to at least 1; a byte cap of zero or less is
/// unlimited.
public struct CacheLimits: Sendable, Equatable {
    public var maxConversations: Int
    public var maxMessagesPerConversation: Int
    /// Database pages in use plus media files, in bytes.
    public var maxStorageSize: Int64

    public init(maxConversations: Int = .max, maxMessagesPerConversation: Int = .max, maxStorageSize: Int64 = 0) {
        self.maxConversations = max(1, maxConversations)
        self.maxMessagesPerConversation = max(1, maxMessagesPerConversation)
        self.maxStorageSize = maxStorageSize
    }
}

/// Eviction: least recently used first, and never a message still waiting in the outbox
/// (rows without a server id).
extension ChatCache {
    /// Where downloaded and queued media files live (not encrypted: see docs/CACHE.md).
    public var mediaDirectory: URL { directory.appendingPathComponent("media", isDirectory: true) }

    /// Bytes on disk: the database, its WAL and the media files.
    public func sizeOnDisk() -> Int64 {
        let files = FileManager.default
        var total: Int64 = 0
        for name in [Self.databaseName, Self.databaseName + "-wal", Self.databaseName + "-shm"] {
            total +=
                (try? files.attributesOfItem(atPath: directory.appendingPathComponent(name).path)[.size] as? Int64) ?? 0
        }
        return total + mediaBytes()
    }

    /// The media folder's bytes: listed once, then kept by `storeMedia` and eviction (every
    /// write checks the byte budget, so no listing per write).
    func mediaBytes() -> Int64 {
        mediaTotal.withLock { total in
            if let total { return total }
            let names = (try? FileManager.default.contentsOfDirectory(atPath: mediaDirectory.path)) ?? []
            let listed = names.reduce(0) { $0 + Self.fileSize(mediaDirectory.appendingPathComponent($1)) }
            total = listed
            return listed
        }
    }

    static func fileSize(_ file: URL) -> Int64 {
        (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int64) ?? 0
    }

    /// Media files of evicted messages: no longer counted (they are deleted after commit).
    func forgetMedia(_ files: [URL]) -> [URL] {
        let bytes = files.reduce(0) { $0 + Self.fileSize($1) }
        if bytes > 0 { mediaTotal.withLock { total in total = total.map { $0 - bytes } } }
        return files
    }

    /// Records that a conversation's data was just used.
    func noteUse(_ db: Connection, _ conversationId: String, in scratch: inout WriteScratch) throws {
        scratch.touched.insert(conversationId)
        try db.run(
            "INSERT OR REPLACE INTO usage(conversation_id, last_access) VALUES (?, ?)", [conversationId, clock()])
    }

    /// Marks conversations as read just now (after a cached phase), outside any read.
    public func touch(_ conversationIds: [String]) {
        guard !conversationIds.isEmpty else { return }
        _ = try? write { db, scratch in for id in Set(conversationIds) { try noteUse(db, id, in: &scratch) } }
    }

    /// Applies the limits inside the current write; what they remove leaves its media files
    /// in the write's scratch, deleted after the commit.
    func enforceLimits(_ db: Connection, _ scratch: inout WriteScratch) throws {
        // Only conversations this write touched can have grown (cost: an index walk of `keep`).
        if limits.maxMessagesPerConversation < .max {
            for id in scratch.touched.sorted() { try trim(db, id, keep: limits.maxMessagesPerConversation, &scratch) }
        }
        if limits.maxConversations < .max {
            let count: Int = try db.scalar("SELECT count(*) FROM usage") ?? 0
            if count > limits.maxConversations {
                for id in try leastRecentlyUsed(db, count - limits.maxConversations) {
                    try removeConversation(db, id, in: &scratch)
                }
            }
        }
        if limits.maxStorageSize > 0 {
            while try usedBytes(db) > limits.maxStorageSize, let id = try leastRecentlyUsed(db, 1, sparing: 1).first {
                try removeConversation(db, id, in: &scratch)
                try db.execute("PRAGMA incremental_vacuum")
            }
        }
    }

    /// Keeps the newest `keep` sent messages of a conversation; stretches then start at the
    /// oldest kept message, so they never claim what is gone.
    ///
    /// Sent messages are written `id > 0` (chatd's ids start at 1), not `id IS NOT NULL`: the
    /// SQLite under Debian's SQLCipher (3.15) does not bound an index scan by IS NOT NULL, so a
    /// large outbox (its rows have no id) made every write walk all queued rows.
    func trim(_ db: Connection, _ conversationId: String, keep: Int, _ scratch: inout WriteScratch) throws {
        guard
            let cut = try db.queryFirst(
                """
                SELECT id FROM messages WHERE conversation_id = ? AND id > 0 ORDER BY id DESC LIMIT 1 OFFSET ?
                """, [conversationId, keep - 1])?.get("id", as: Int64.self)
        else { return }
        let gone = try db.query("SELECT id FROM messages WHERE conversation_id = ? AND id < ?", [conversationId, cut])
            .map { try $0.get("id") as Int64 }
        let threads = try db.query(
            "SELECT DISTINCT parent_id FROM messages WHERE conversation_id = ? AND id < ? AND parent_id IS NOT NULL",
            [conversationId, cut]
        ).map { CacheScope.thread(parentId: try $0.get(0)).key }
        try db.run("DELETE FROM messages WHERE conversation_id = ? AND id < ?", [conversationId, cut])
        // The conversation's stretches, and those of threads that lost replies, now start at the cut.
        for scope in [conversationId] + threads {
            try db.run("DELETE FROM ranges WHERE scope = ? AND hi < ?", [scope, cut])
            try db.run("UPDATE ranges SET lo = ? WHERE scope = ? AND lo < ?", [cut, scope, cut])
        }
        scratch.doomedMedia += forgetMedia(mediaFiles(of: Set(gone), in: &scratch))
    }

    /// The least recently used conversations without queued messages, leaving the `sparing`
    /// most recent ones alone.
    func leastRecentlyUsed(_ db: Connection, _ count: Int, sparing: Int = 0) throws -> [String] {
        let total: Int = try db.scalar("SELECT count(*) FROM usage") ?? 0
        return try db.query(
            """
            SELECT conversation_id FROM usage u
            WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.conversation_id = u.conversation_id AND m.id IS NULL)
            ORDER BY last_access, conversation_id LIMIT ?
            """, [min(count, max(0, total - sparing))]
        ).map { try $0.get("conversation_id") }
    }

    func usedBytes(_ db: Connection) throws -> Int64 {
        let pages: Int64 = try db.scalar("PRAGMA page_count") ?? 0
        let free: Int64 = try db.scalar("PRAGMA freelist_count") ?? 0
        return (pages - free) * pageSize + mediaBytes()
    }

    /// The media files kept for these messages (named `<message id>-<file name>`). Inside a
    /// write: the folder is listed once for the whole write.
    func mediaFiles(of messageIds: Set<Int64>, in scratch: inout WriteScratch) -> [URL] {
        guard !messageIds.isEmpty else { return [] }
        let names =
            scratch.mediaListing ?? (try? FileManager.default.contentsOfDirectory(atPath: mediaDirectory.path)) ?? []
        scratch.mediaListing = names
        return names.filter { name in
            name.split(separator: "-", maxSplits: 1).first.flatMap { Int64($0) }.map(messageIds.contains) ?? false
        }.map { mediaDirectory.appendingPathComponent($0) }
    }
}
