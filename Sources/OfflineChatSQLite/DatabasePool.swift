import Foundation
import OfflineChatLocking

/// One SQLite database in WAL mode, shared by threads: a single writer connection (SQLite has
/// one writer anyway) and a few query-only readers, each used by one caller at a time: a read
/// takes whichever reader is idle and waits only when none is. The SDK's cache and chatd's
/// embedded store both sit on one.
///
/// ```swift
/// let pool = try DatabasePool(directory: dir, name: "app.sqlite", readers: 2) { writer in
///     try migrator.migrate(writer)
/// }
/// try pool.withWriter { db in try db.transaction { try $0.run("INSERT …") } }
/// let (_, touched) = try pool.write(startingWith: Set<String>()) { db, touched in
///     try db.run("UPDATE …"); touched.insert("c1")
/// }
/// let count: Int? = try pool.read { try $0.scalar("SELECT count(*) FROM messages") }
/// ```
public final class DatabasePool: Sendable {
    /// The database file.
    public let path: String
    private let writer: Locked<Connection>
    /// The readers not in use. A read takes the last (the one used most lately, its cache the
    /// warmest) and puts it back; `idleCount` counts them, so a read waits while none is idle.
    private let idle: Locked<[Connection]>
    private let idleCount: DispatchSemaphore
    private let readerCount: Int
    /// A connection of its own for `checkpoint()`, opened on first use; never after `close()`
    /// (an open would create the database file again, say after its directory was deleted).
    private let checkpointing = Locked<(connection: Connection?, closed: Bool)>((nil, false))
    private let key: EncryptionKey?

    /// Opens (creating) `directory/name`, kept private to this account (`makePrivate`), with
    /// `key` for an encrypted database. The writer opens first and `prepareWriter` readies it
    /// (pragmas, SQL functions, migrations); then `readers` readers open query-only, each
    /// readied by `prepareReader`.
    public init(
        directory: URL, name: String, key: EncryptionKey? = nil, readers: Int,
        prepareWriter: (Connection) throws -> Void, prepareReader: (Connection) throws -> Void = { _ in }
    ) throws {
        let path = directory.appendingPathComponent(name).path
        try Self.makePrivate(directory: directory, database: path)
        let writer = try Connection(path: path, key: key)
        try prepareWriter(writer)
        self.path = path
        self.key = key
        self.writer = Locked(writer)
        let opened = try (0..<max(1, readers)).map { _ in
            let reader = try Connection(path: path, key: key)
            try reader.execute("PRAGMA query_only = ON")
            try prepareReader(reader)
            return reader
        }
        self.idle = Locked(opened)
        self.readerCount = opened.count
        self.idleCount = DispatchSemaphore(value: opened.count)
    }

    /// Runs `body` with the writer, one caller at a time (the body decides its transaction). The
    /// connection must not escape the body.
    public func withWriter<T>(_ body: (Connection) throws -> T) rethrows -> T {
        try writer.withLock { try body($0) }
    }

    /// Runs `body` in one immediate transaction on the writer with this write's own scratch
    /// state: `scratch` starts every write afresh and the body (and the helpers it hands it
    /// to) collect into it what must be acted on after the commit, or only once per write.
    /// Returns the body's result and the scratch as it stood at the commit; if the body throws,
    /// the transaction rolls back and the scratch is dropped with it. Nothing of one write can
    /// leak into the next, and no lock guards the scratch: it never leaves the writer's turn.
    public func write<Scratch, T>(
        startingWith scratch: Scratch, _ body: (Connection, inout Scratch) throws -> T
    ) throws -> (result: T, scratch: Scratch) {
        try writer.withLock { writer in
            var scratch = scratch
            let result = try writer.transaction { db in try body(db, &scratch) }
            return (result, scratch)
        }
    }

    /// Runs `body` in one read transaction (a consistent snapshot) on an idle reader, waiting
    /// for one when all are busy. A body must not read from this pool again (it may wait for
    /// itself).
    public func read<T>(_ body: (Connection) throws -> T) throws -> T {
        try readStatement { reader in try reader.transaction(.deferred) { try body($0) } }
    }

    /// Runs `body` on an idle reader with no transaction around it, waiting for one when all
    /// are busy: each statement it runs is its own snapshot. For a body of one statement, it
    /// spares the `BEGIN` and `COMMIT` (on a read of one short page, a twentieth of its time).
    /// A body must not read from this pool again (it may wait for itself).
    public func readStatement<T>(_ body: (Connection) throws -> T) throws -> T {
        idleCount.wait()
        defer { idleCount.signal() }
        let reader = idle.withLock { $0.removeLast() }
        defer { idle.withLock { $0.append(reader) } }
        return try body(reader)
    }

    /// Copies what the WAL holds into the database file (SQLite's PASSIVE checkpoint: it
    /// blocks neither the writer nor the readers, and leaves frames a reader still needs), on a
    /// connection of its own, so a checkpoint need not run inside some writer's commit.
    /// Returns the frames in the WAL and how many of them the database now has; once all are,
    /// the writer's next commit starts the WAL over from its beginning.
    @discardableResult
    public func checkpoint() throws -> (frames: Int, checkpointed: Int) {
        try checkpointing.withLock { state in
            if state.closed { throw SQLiteError(code: .misuse, message: "the pool is closed") }
            let db = try state.connection ?? Connection(path: path, key: key)
            state.connection = db
            let row = try db.queryFirst("PRAGMA wal_checkpoint(PASSIVE)")
            return (try row?.get(1, as: Int.self) ?? 0, try row?.get(2, as: Int.self) ?? 0)
        }
    }

    /// Flushes the database file and its WAL to disk from `checkpoint()`'s connection, locking
    /// nobody out. A checkpoint syncs both (the WAL before it copies, the database after), so
    /// one run with the writer held holds it for as long as those syncs take; flushed just
    /// before, they find little left to write. Does nothing before the first checkpoint.
    public func syncFiles() throws {
        try checkpointing.withLock { state in
            if state.closed { throw SQLiteError(code: .misuse, message: "the pool is closed") }
            guard let db = state.connection else { return }
            try db.syncFiles()
        }
    }

    /// Closes every connection, the readers first once reads under way have finished (the
    /// writer's close checkpoints the WAL away); throws the first failure after trying them
    /// all. Later reads get a closed reader, which refuses them.
    public func close() throws {
        for _ in 0..<readerCount { idleCount.wait() }
        defer { for _ in 0..<readerCount { idleCount.signal() } }
        var failure: (any Error)?
        do {
            try checkpointing.withLock { state in
                state.closed = true
                try state.connection?.close()
            }
        } catch { failure = error }
        for reader in idle.current {
            do { try reader.close() } catch { failure = failure ?? error }
        }
        do { try writer.withLock { try $0.close() } } catch { failure = failure ?? error }
        if let failure { throw failure }
    }

    /// The directory 0700 and the database with its `-wal` and `-shm` 0600, set on every open
    /// (files an older version left readable to other accounts are fixed). The database is
    /// created 0600 before SQLite opens it: SQLite gives `-wal` and `-shm` its mode.
    public static func makePrivate(directory: URL, database path: String) throws {
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
}
