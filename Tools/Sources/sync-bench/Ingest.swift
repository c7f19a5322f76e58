import Foundation
import OfflineChatCache
import OfflineChatProtocol
import OfflineChatSQLite

/// The parts measured in process: the merge alone, its raw baseline, and the live stream.
struct Ingest {
    let storage: URL
    let peers: Int

    /// The same rows without the SDK: a table with the cache's message columns and indexes,
    /// prepared inserts, one transaction per 1,000 rows, WAL, synchronous=NORMAL.
    func rawBulkInsert(count: Int, name: String) throws -> Double {
        try FileManager.default.createDirectory(at: storage, withIntermediateDirectories: true)
        let db = try Connection(path: storage.appendingPathComponent("\(name).sqlite").path)
        try db.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL")
        try db.execute(
            """
            CREATE TABLE messages(local_id INTEGER PRIMARY KEY AUTOINCREMENT, id INTEGER UNIQUE, muid TEXT, conversation_id TEXT NOT NULL,
                sender TEXT NOT NULL, receiver TEXT NOT NULL, text TEXT, sent_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
            CREATE INDEX messages_by_conversation ON messages(conversation_id, id);
            CREATE UNIQUE INDEX messages_by_muid ON messages(sender, muid)
            """)
        let started = Date()
        for first in stride(from: 0, to: count, by: 1_000) {
            try db.transaction(.immediate) { db in
                for index in first..<min(count, first + 1_000) {
                    let peer = "peer\(index % peers)"
                    try db.run(
                        "INSERT INTO messages(id, muid, conversation_id, sender, receiver, text, sent_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        [
                            Int64(index + 1), "m\(index)", "bob~\(peer)", peer, "bob", "backlog message \(index)",
                            Int64(index), Int64(index)
                        ])
                }
            }
        }
        return Date().timeIntervalSince(started)
    }

    /// The backlog as changelog pages (the rows `rawBulkInsert` writes), merged page by page
    /// into a fresh cache with the SDK's default limits; seconds spent in `applySyncPage`.
    func ingestOnly(count: Int, key: EncryptionKey?) throws -> Double {
        let cache = try ChatCache(
            directory: storage.appendingPathComponent("ingest-\(key == nil ? "plain" : "encrypted")"), uid: "bob",
            key: key,
            limits: CacheLimits(maxConversations: 100, maxMessagesPerConversation: 500, maxStorageSize: 250 << 20),
            clock: { 0 })
        defer { cache.close() }
        try cache.recordSyncHead(cursor: "c1.0", serverTime: 0)
        var seconds = 0.0
        for first in stride(from: 0, to: count, by: 1_000) {
            let page = (first..<min(count, first + 1_000)).map { index -> ChangePayload in
                let message = Self.textToBob(
                    id: Int64(index + 1), index: index, from: "peer\(index % peers)", text: "backlog message \(index)")
                return ChangePayload(
                    seq: Int64(index + 1), kind: .messageCreated, conversationId: message.conversationId,
                    message: message,
                    at: Int64(index))
            }
            let started = Date()
            _ = try cache.applySyncPage(
                page, from: try cache.syncPoint(), cursor: "c1.\(first + page.count)", serverTime: 0)
            seconds += Date().timeIntervalSince(started)
        }
        return seconds
    }

    /// A text message from `peer` to bob, sent and last updated at `index`.
    static func textToBob(id: Int64, index: Int, from peer: String, text: String) -> MessagePayload {
        MessagePayload(
            id: id, muid: "m\(index)", conversationId: "bob~\(peer)", sender: peer, receiver: "bob",
            receiverType: .user,
            category: .message, type: "text", text: text, attachment: nil, customData: nil, metadata: nil,
            sentAt: Int64(index), updatedAt: Int64(index), editedAt: nil, deletedAt: nil)
    }

    /// Microseconds per live message: `storeLive` alone, and the `followLiveCursor` after it
    /// (the sync point following the realtime stream), over `count` messages from one peer.
    func liveFollowing(count: Int) throws -> (store: Double, follow: Double) {
        let cache = try ChatCache(directory: storage.appendingPathComponent("live"), uid: "bob", clock: { 0 })
        defer { cache.close() }
        try cache.recordSyncHead(cursor: "c1.0", serverTime: 0)
        var store: UInt64 = 0
        var follow: UInt64 = 0
        for index in 1...count {
            let message = Self.textToBob(id: Int64(index), index: index, from: "peer", text: "live message \(index)")
            let started = DispatchTime.now().uptimeNanoseconds
            try cache.storeLive(message)
            let stored = DispatchTime.now().uptimeNanoseconds
            try cache.followLiveCursor("c1.\(index)")
            follow += DispatchTime.now().uptimeNanoseconds - stored
            store += stored - started
        }
        return (Double(store) / Double(count) / 1_000, Double(follow) / Double(count) / 1_000)
    }
}

extension Ingest {
    /// Milliseconds to decode one changelog page of 1,000 `message.created` changes with
    /// `JSONDecoder` and as the SDK does (`ChangelogPage(json:)`, `JSONReader`), the best of
    /// `rounds` each, and the page's size in bytes.
    func decodePage(rounds: Int = 20) throws -> (decoder: Double, reader: Double, bytes: Int) {
        let changes = (0..<1_000).map { index -> ChangePayload in
            let message = Self.textToBob(
                id: Int64(index + 1), index: index, from: "peer\(index % peers)", text: "backlog message \(index)")
            return ChangePayload(
                seq: Int64(index + 1), kind: .messageCreated, conversationId: message.conversationId, message: message,
                at: Int64(index))
        }
        let data = try JSONEncoder().encode(
            ChangelogPage(changes: changes, hasMore: true, cursor: "c1.1000", serverTime: 0))
        func best(_ decode: () throws -> ChangelogPage) rethrows -> Double {
            var best = Double.infinity
            for _ in 0..<rounds {
                let started = DispatchTime.now().uptimeNanoseconds
                let page = try decode()
                best = min(best, Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6)
                precondition(page.changes == changes)
            }
            return best
        }
        return (
            try best { try JSONDecoder().decode(ChangelogPage.self, from: data) },
            try best { try ChangelogPage(json: data) }, data.count
        )
    }
}
