import Foundation
import OfflineChatLocking
import OfflineChatProtocol
import OfflineChatSQLite

/// One user's on-device cache: an SQLite (or SQLCipher) database in WAL mode with one
/// writer and two readers, under a directory of its own (0700; files 0600). Every merge is
/// one transaction, so a crash leaves an earlier consistent state.
///
/// The cache stores chatd's wire payloads as JSON next to the columns it queries, so any
/// field the server adds survives a round trip.
public final class ChatCache: Sendable {
    public let directory: URL
    /// The user whose cache this is.
    public let uid: String
    /// The database: one writer, two readers.
    let pool: DatabasePool
    let clock: @Sendable () -> Int64
    /// Size and count limits, enforced after every write.
    public let limits: CacheLimits
    /// Counts connection losses (`closeOpenRanges`) and removals of cached history (a
    /// conversation removed or evicted, a clear, a rebuild): a page fetched while connected
    /// may claim the live head only if neither happened meanwhile (the stream's messages
    /// since the fetch must all still be in the cache).
    let liveEpochCounter = Locked(0)
    /// Bytes in the media folder, once known (see `mediaBytes()`).
    let mediaTotal = Locked<Int64?>(nil)
    /// The database's page size: fixed once the file exists (read once, not on every write).
    let pageSize: Int64
    /// What one write collects as it runs, handed by `write` to the helpers that note into it;
    /// every write starts with an empty one (`DatabasePool.write(startingWith:_:)`), and a
    /// rolled-back write's scratch is dropped with it.
    struct WriteScratch {
        /// Conversations the write touched (only they can have outgrown their limit).
        var touched: Set<String> = []
        /// Media files of rows the write removed: deleted once it commits.
        var doomedMedia: [URL] = []
        /// The media folder's names, listed once per write that needs them (a sync page trims
        /// many conversations).
        var mediaListing: [String]?
    }

    static let databaseName = "cache.sqlite"
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()
    static let decoder = JSONDecoder()

    /// Opens (creating and migrating) the cache in `directory`. With a `key` the database
    /// is encrypted; a wrong key throws `.notADatabase`.
    public init(
        directory: URL, uid: String, key: EncryptionKey? = nil, limits: CacheLimits = CacheLimits(),
        clock: @escaping @Sendable () -> Int64
    ) throws {
        pool = try DatabasePool(
            directory: directory, name: Self.databaseName, key: key, readers: 2,
            prepareWriter: { writer in
                // Incremental vacuum (only settable before the first table) lets eviction give space back.
                try writer.execute(
                    "PRAGMA auto_vacuum = INCREMENTAL; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -16000")
                _ = try CacheSchema.migrator.migrate(writer)
                // A new process has no live connection yet: nothing reaches the live head.
                try writer.transaction { db in try Self.closeLiveRanges(db) }
            },
            prepareReader: { reader in try reader.execute("PRAGMA cache_size = -8000") })
        self.directory = directory
        self.uid = uid
        self.clock = clock
        self.limits = limits
        pageSize = try pool.read { try $0.scalar("PRAGMA page_size") } ?? 4096
        try FileManager.default.createDirectory(
            at: mediaDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        StorageProtection.apply(to: directory)
    }

    /// Closes every connection (the WAL is checkpointed away).
    public func close() {
        try? pool.close()
    }

    /// Deletes a cache directory and everything in it.
    public static func destroy(directory: URL) throws {
        guard FileManager.default.fileExists(atPath: directory.path) else { return }
        try FileManager.default.removeItem(at: directory)
    }

    /// Runs `body` in one immediate transaction on the writer with this write's scratch, then
    /// enforces the limits (in the same transaction) and, after the commit, removes the media
    /// files of what the write removed.
    func write<T>(_ body: (Connection, inout WriteScratch) throws -> T) throws -> T {
        let done: (result: T, scratch: WriteScratch)
        do {
            done = try pool.write(startingWith: WriteScratch()) { db, scratch in
                let result = try body(db, &scratch)
                try enforceLimits(db, &scratch)
                return result
            }
        } catch {
            mediaTotal.withLock { $0 = nil }  // an eviction rolled back: count again when asked
            throw error
        }
        for file in done.scratch.doomedMedia { try? FileManager.default.removeItem(at: file) }
        return done.result
    }

    /// Runs `body` in one read transaction (a consistent snapshot) on a reader.
    func read<T>(_ body: (Connection) throws -> T) throws -> T { try pool.read(body) }

    static func json(_ value: some Encodable) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        try decoder.decode(type, from: Data(text.utf8))
    }

    // MARK: - Meta

    /// A small persistent value (sync cursor, last sync time, …).
    public func meta(_ key: String) throws -> String? {
        try read { db in try db.scalar("SELECT value FROM meta WHERE key = ?", [key]) }
    }

    public func setMeta(_ key: String, _ value: String?) throws {
        try write { db, _ in
            if let value {
                try db.run("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", [key, value])
            } else {
                try db.run("DELETE FROM meta WHERE key = ?", [key])
            }
        }
    }
}

extension ChatCache {
    /// Empties the cache (messages, stretches, conversations, snapshots, usage, media, and
    /// every meta value except `keeping`). The outbox must be emptied first.
    public func clear(keepingMeta keeping: [String]) throws {
        try write { db, _ in
            liveEpochCounter.withLock { $0 += 1 }
            for table in ["messages", "ranges", "conversations", "last_messages", "snapshots", "usage", "outbox"] {
                try db.run("DELETE FROM \(table)")
            }
            try db.run(
                "DELETE FROM meta WHERE key NOT IN (\(keeping.map { _ in "?" }.joined(separator: ", ")))", keeping)
        }
        for name in (try? FileManager.default.contentsOfDirectory(atPath: mediaDirectory.path)) ?? [] {
            try? FileManager.default.removeItem(at: mediaDirectory.appendingPathComponent(name))
        }
        mediaTotal.withLock { $0 = nil }
        try pool.withWriter { db in try db.execute("PRAGMA incremental_vacuum") }
    }
}
