import Foundation
import SQLiteKit
import Synchronization

/// Where the store's rows live. The store runs the same SQL on either engine; an engine owns
/// its connections and how a transaction begins, ends and is retried.
protocol StoreEngine: Sendable {
    /// `sqlite` or `postgresql`, for health answers and logs.
    var name: String { get }
    /// Runs `body` in a write transaction and `committed` once it has committed. A body may
    /// run more than once (PostgreSQL retries lost races); only the committed run's result
    /// and `committed` call count. On SQLite `committed` runs before the single writer's
    /// lock is released, so changes are published in commit order.
    func write<T>(_ body: (any SQLDatabase) throws -> T, committed: () -> Void) throws -> T
    /// Runs `body` on a consistent snapshot.
    func read<T>(_ body: (any SQLDatabase) throws -> T) throws -> T
    /// Runs `body`, which runs exactly one statement: a statement is its own snapshot, so
    /// PostgreSQL runs it without a transaction around it (two round trips fewer).
    func readStatement<T>(_ body: (any SQLDatabase) throws -> T) throws -> T
    /// After rows were loaded with their own ids (`chatd import`): id generators continue
    /// after them.
    func importFinished(_ db: any SQLDatabase) throws
    /// The connection pool's use, for metrics (nil: SQLite's fixed writer and readers).
    var usage: ConnectionUsage? { get }
    func close() throws
}

/// A connection pool at one moment.
struct ConnectionUsage: Sendable, Equatable {
    /// Connections open, and of them in a transaction now.
    let open: Int
    let busy: Int
    /// Connections the pool may open at most.
    let capacity: Int
    /// Times a request found every connection busy and waited, since start.
    let waits: Int
}

/// Embedded SQLite: one writer connection behind a lock (SQLite has a single writer anyway)
/// and a few readers for concurrent reads in WAL mode.
final class SQLiteEngine: StoreEngine {
    let name = "sqlite"
    let writer: LockedConnection
    let readers: [LockedConnection]
    private let nextReader = Atomic<Int>(0)

    /// Opens (creating and migrating) `directory/chatd.sqlite`.
    init(directory: URL, readers: Int) throws {
        let path = directory.appendingPathComponent("chatd.sqlite").path
        try Self.makePrivate(directory: directory, database: path)
        let writer = try Connection(path: path)
        try writer.execute(
            "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA cache_size = -32000; PRAGMA wal_autocheckpoint = 20000"
        )
        try writer.addGreatestAndLeast()
        try Schema.migrator.migrate(writer)
        self.writer = LockedConnection(writer)
        self.readers = try (0..<max(1, readers)).map { _ in
            let reader = try Connection(path: path)
            try reader.execute("PRAGMA query_only = ON; PRAGMA cache_size = -16000")
            try reader.addGreatestAndLeast()
            return LockedConnection(reader)
        }
    }

    /// The data directory 0700 and the database with its `-wal` and `-shm` 0600, fixed on every
    /// start (an older chatd left them 0755 and 0644, readable by every local account). The
    /// database is created 0600 before SQLite opens it: SQLite gives `-wal` and `-shm` its mode.
    static func makePrivate(directory: URL, database path: String) throws {
        let files = FileManager.default
        try files.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try files.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory.path)
        if !files.fileExists(atPath: path) {
            guard files.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                throw SQLiteError(code: .cantOpen, message: "cannot create \(path)")
            }
        }
        for file in [path, path + "-wal", path + "-shm"] where files.fileExists(atPath: file) {
            try files.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
        }
    }

    func write<T>(_ body: (any SQLDatabase) throws -> T, committed: () -> Void) throws -> T {
        try writer.withConnection { db in
            let result = try db.transaction { try body($0) }
            committed()
            return result
        }
    }

    func read<T>(_ body: (any SQLDatabase) throws -> T) throws -> T {
        let index = nextReader.add(1, ordering: .relaxed).newValue % readers.count
        return try readers[index].withConnection { db in
            try db.transaction(.deferred) { try body($0) }
        }
    }

    func readStatement<T>(_ body: (any SQLDatabase) throws -> T) throws -> T { try read(body) }

    /// SQLite's AUTOINCREMENT already continues after the largest id inserted.
    func importFinished(_ db: any SQLDatabase) throws {}

    var usage: ConnectionUsage? { nil }

    func close() throws {
        for reader in readers { try reader.withConnection { try $0.close() } }
        try writer.withConnection { try $0.close() }
    }
}
