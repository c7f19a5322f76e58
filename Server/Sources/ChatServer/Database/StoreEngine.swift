import Foundation
import OfflineChatSQLite

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
    /// The bytes the database's tables and indexes take now (`Store.databaseBytes`).
    func databaseBytes(_ db: any SQLDatabase) throws -> Int
    /// SQLite answers `RETURNING` from a temporary table it builds and drops for each run; a
    /// statement every send runs reads its row back with a `SELECT` there instead
    /// (`Store.lockConversationStatements`). Only an engine with a single writer may say true:
    /// with concurrent writers, a row read back by a statement of its own may not be the row
    /// the first one locked.
    var returningBuildsATable: Bool { get }
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

/// Embedded SQLite: a `DatabasePool`, one writer connection (SQLite has a single writer anyway)
/// and a few readers for concurrent reads in WAL mode.
final class SQLiteEngine: StoreEngine {
    let name = "sqlite"
    let returningBuildsATable = true
    let pool: DatabasePool
    /// Checkpoints off the writer; SQLite's own (`wal_autocheckpoint`) is only a backstop.
    let checkpointer: Checkpointer

    /// Opens (creating and migrating) `directory/chatd.sqlite`.
    init(directory: URL, readers: Int) throws {
        Connection.disableMemoryStatistics()  // before the first open, or it is too late
        pool = try DatabasePool(
            directory: directory, name: "chatd.sqlite", readers: readers,
            prepareWriter: { writer in
                try writer.execute(
                    "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA cache_size = -32000; PRAGMA wal_autocheckpoint = 100000"
                )
                try writer.addGreatestAndLeast()
                try Schema.migrator.migrate(writer)
            },
            prepareReader: { reader in
                // 64 MB of page cache shared out among the readers (at least 2 MB each), however
                // many request threads there are; the OS caches the file beneath. The readers
                // read the database file through a memory map (up to 1 GB of it): a page of the
                // file is then the OS's cached page itself, with no `pread` into each reader's
                // cache. A changelog page looks up 1,000 changes all over `changes`, and its
                // `pread`s were a sixth of its time.
                try reader.execute("PRAGMA cache_size = -\(max(2_000, 64_000 / max(1, readers)))")
                try reader.execute("PRAGMA mmap_size = 1073741824")
                try reader.addGreatestAndLeast()
            })
        checkpointer = Checkpointer(pool: pool)
    }

    func write<T>(_ body: (any SQLDatabase) throws -> T, committed: () -> Void) throws -> T {
        try pool.withWriter { db in
            let result = try db.transaction { try body($0) }
            committed()
            checkpointer.committed()
            return result
        }
    }

    func read<T>(_ body: (any SQLDatabase) throws -> T) throws -> T { try pool.read(body) }

    func readStatement<T>(_ body: (any SQLDatabase) throws -> T) throws -> T { try pool.readStatement(body) }

    /// SQLite's AUTOINCREMENT already continues after the largest id inserted.
    func importFinished(_ db: any SQLDatabase) throws {}

    /// The pages in the main file (what a checkpoint leaves there).
    func databaseBytes(_ db: any SQLDatabase) throws -> Int {
        let pages = try db.scalar("PRAGMA page_count", as: Int64.self) ?? 0
        return Int(pages * (try db.scalar("PRAGMA page_size", as: Int64.self) ?? 0))
    }

    var usage: ConnectionUsage? { nil }

    func close() throws {
        checkpointer.stop()
        try pool.close()
    }

    deinit { checkpointer.stop() }
}
