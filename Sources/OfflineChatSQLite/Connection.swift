import Foundation

/// One SQLite connection. Not thread-safe: confine it to one thread, actor or lock.
///
/// ```swift
/// let db = try Connection(path: dir.appendingPathComponent("cache.sqlite").path)
/// try db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT)")
/// try db.run("INSERT INTO t(name) VALUES (?)", ["alice"])
/// let names: [String] = try db.query("SELECT name FROM t").map { try $0.get(0) }
/// ```
public final class Connection {
    /// How to open the file.
    public struct Options: Sendable {
        public var readOnly: Bool = false
        public var create: Bool = true
        /// Journal mode WAL (one writer, concurrent readers).
        public var walMode: Bool = true
        /// How long a statement waits on a lock held by another connection, in milliseconds.
        public var busyTimeoutMilliseconds: Int32 = 5_000
        public init() {}
    }

    let handle: OpaquePointer
    /// The path given at open (":memory:" for an in-memory database).
    public let path: String

    /// Opens (and by default creates) the database at `path`. With a `key`, the file is
    /// SQLCipher-encrypted; a wrong key or a plaintext file throws `.notADatabase` here, not later.
    public init(path: String, key: EncryptionKey? = nil, options: Options = Options()) throws {
        var flags = options.readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE
        if options.create && !options.readOnly { flags |= SQLITE_OPEN_CREATE }
        flags |= SQLITE_OPEN_NOMUTEX
        var db: OpaquePointer?
        let code = sqlite3_open_v2(path, &db, flags, nil)
        guard let db, code == SQLITE_OK else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            if let db { sqlite3_close_v2(db) }
            throw SQLiteError(code: ResultCode(rawValue: code), message: message)
        }
        self.handle = db
        self.path = path
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, options.busyTimeoutMilliseconds)
        if let key { try applyKey(key) }
        if options.walMode && path != ":memory:" && !options.readOnly {
            try execute("PRAGMA journal_mode=WAL")
        }
    }

    /// Turns SQLite's memory statistics off for the whole process (`SQLITE_CONFIG_MEMSTATUS`):
    /// they put one process-wide mutex around every allocation SQLite makes, which threads
    /// reading at once queue on. Takes effect only before SQLite's first use in the process
    /// and returns whether it did. For a process that owns SQLite (chatd); an app's library
    /// leaves the process's settings alone.
    @discardableResult
    public static func disableMemoryStatistics() -> Bool {
        #if canImport(Darwin)
        false  // Apple's modules have no shim for the variadic `sqlite3_config` (chatd is not built there)
        #else
        sqlitekit_disable_memory_statistics() == SQLITE_OK
        #endif
    }

    /// Flushes the database file and its journal (the WAL) to disk, as a commit or checkpoint
    /// that syncs would (`fdatasync` on Linux). SQLite before 3.21 cannot name its journal
    /// (SQLCipher 3.4.1): there, the database file only.
    public func syncFiles() throws {
        try sync(SQLITE_FCNTL_FILE_POINTER)
        #if SystemSQLite
        try sync(SQLITE_FCNTL_JOURNAL_POINTER)
        #endif
    }

    /// Syncs the file that the file control `pointer` names (none yet: nothing to sync).
    private func sync(_ pointer: Int32) throws {
        var file: UnsafeMutablePointer<sqlite3_file>?
        var code = sqlite3_file_control(handle, "main", pointer, &file)
        if code == SQLITE_OK, let file, let sync = file.pointee.pMethods?.pointee.xSync {
            code = sync(file, SQLITE_SYNC_NORMAL)
        }
        guard code == SQLITE_OK else {
            throw SQLiteError(code: ResultCode(rawValue: code), message: "cannot sync \(path)")
        }
    }

    /// An in-memory database, gone when the connection closes.
    public static func inMemory() throws -> Connection {
        try Connection(path: ":memory:")
    }

    private(set) var isClosed = false

    deinit { if !isClosed { sqlite3_close_v2(handle) } }

    /// Closes the connection now (checkpointing and removing the WAL file if it is the last
    /// one). Later calls on this connection throw `.misuse`; closing twice is harmless. With a
    /// statement still in use it throws, and the connection is closed all the same: refused
    /// from now on, its handle let go once that statement is (`sqlite3_close_v2`).
    public func close() throws {
        guard !isClosed else { return }
        statementCache.removeAll()
        isClosed = true
        let code = sqlite3_close(handle)
        guard code == SQLITE_OK else {
            sqlite3_close_v2(handle)
            throw SQLiteError(code: ResultCode(rawValue: code), message: "cannot close: statements are still in use")
        }
    }

    func checkOpen(_ sql: String) throws {
        if isClosed { throw SQLiteError(code: .misuse, message: "the connection is closed", sql: sql) }
    }

    /// Runs one or more `;`-separated statements without parameters.
    public func execute(_ sql: String) throws {
        try checkOpen(sql)
        var error: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &error)
        if code != SQLITE_OK {
            let message = error.map { String(cString: $0) } ?? lastErrorMessage
            sqlite3_free(error)
            throw SQLiteError(
                code: ResultCode(rawValue: sqlite3_extended_errcode(handle)),
                message: message, sql: sql)
        }
    }

    /// Compiles one statement for repeated use.
    public func prepare(_ sql: String) throws -> Statement {
        try checkOpen(sql)
        return try Statement(connection: self, sql: sql)
    }

    /// A compiled statement kept for reuse by SQL text: compiling costs more than running
    /// most statements. `run`, `query`, `queryFirst` and `scalar` all go through it. At most
    /// `statementCacheCapacity` are kept; the least recently used goes first (SQL texts that
    /// vary without bound, a list's length spelled out, say, would otherwise grow it forever).
    public func cachedStatement(_ sql: String) throws -> Statement {
        useCounter &+= 1
        if let statement = statementCache[SQLText(sql)] {
            statement.lastUse = useCounter
            return statement
        }
        let statement = try prepare(sql)
        if statementCache.count >= statementCacheCapacity,
            let oldest = statementCache.min(by: { $0.value.lastUse < $1.value.lastUse })?.key
        {
            statementCache[oldest] = nil  // finalized once no caller still holds it
        }
        statement.lastUse = useCounter
        statementCache[SQLText(sql)] = statement
        return statement
    }

    /// A statement cache's key: the SQL text, compared byte for byte (as SQLite compiles it,
    /// and as its hash reads it: `String`'s `==` would call canonically equivalent texts one)
    /// but hashed by its length and its first and last 32 bytes. Texts run to hundreds of
    /// bytes, and hashing every byte of each was an eighth of a send's own work outside SQLite.
    struct SQLText: Hashable {
        let text: String
        init(_ text: String) { self.text = text }

        static func == (left: SQLText, right: SQLText) -> Bool {
            let (a, b) = (left.text.utf8, right.text.utf8)
            guard a.count == b.count else { return false }
            guard a.count > 0 else { return true }
            // memcmp on the texts' own storage: the views' generic `elementsEqual` cost
            // thousands of instructions a lookup (texts run to hundreds of bytes).
            let same = a.withContiguousStorageIfAvailable { a in
                b.withContiguousStorageIfAvailable { b in memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 }
            }
            return (same ?? nil) ?? a.elementsEqual(b)
        }

        func hash(into hasher: inout Hasher) {
            if text.utf8.withContiguousStorageIfAvailable({ Self.hash($0, into: &hasher) }) == nil {
                Array(text.utf8).withUnsafeBufferPointer { Self.hash($0, into: &hasher) }  // a bridged text
            }
        }

        static func hash(_ bytes: UnsafeBufferPointer<UInt8>, into hasher: inout Hasher) {
            hasher.combine(bytes.count)
            hasher.combine(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes.prefix(32))))
            hasher.combine(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes.suffix(32))))
        }
    }

    /// How many compiled statements `cachedStatement` keeps.
    public var statementCacheCapacity = 256
    /// How many it keeps now.
    public var cachedStatementCount: Int { statementCache.count }

    private var statementCache: [SQLText: Statement] = [:]
    private var useCounter: UInt64 = 0

    /// Runs one statement with `arguments` bound to its `?` parameters, discarding rows.
    public func run(_ sql: String, _ arguments: [any SQLValueConvertible] = []) throws {
        try cachedStatement(sql).run(arguments)
    }

    /// Runs one statement and returns every row.
    public func query(_ sql: String, _ arguments: [any SQLValueConvertible] = []) throws -> [Row] {
        try cachedStatement(sql).query(arguments)
    }

    /// The first row, or nil when there is none.
    public func queryFirst(_ sql: String, _ arguments: [any SQLValueConvertible] = []) throws -> Row? {
        try cachedStatement(sql).query(arguments, limit: 1).first
    }

    /// The first column of the first row as `T`, or nil when there is no row.
    public func scalar<T: SQLValueConvertible>(
        _ sql: String, _ arguments: [any SQLValueConvertible] = [],
        as type: T.Type = T.self
    ) throws -> T? {
        try queryFirst(sql, arguments)?.get(0, as: type)
    }

    /// The rowid of the last successful insert on this connection (0 once it is closed).
    public var lastInsertRowID: Int64 { isClosed ? 0 : sqlite3_last_insert_rowid(handle) }

    /// Rows changed by the last INSERT, UPDATE or DELETE (0 once the connection is closed).
    public var changes: Int { isClosed ? 0 : Int(sqlite3_changes(handle)) }

    /// `PRAGMA user_version`, used by `Migrator`.
    public var userVersion: Int {
        get throws { try scalar("PRAGMA user_version") ?? 0 }
    }

    /// The linked library's version, for example "3.40.1" (SQLCipher 3.4.1 reports "3.15.2").
    public static var libraryVersion: String { String(cString: sqlite3_libversion()) }

    var lastErrorMessage: String { String(cString: sqlite3_errmsg(handle)) }

    func check(_ code: Int32, sql: String? = nil) throws {
        guard code == SQLITE_OK else {
            throw SQLiteError(
                code: ResultCode(rawValue: sqlite3_extended_errcode(handle)),
                message: lastErrorMessage, sql: sql)
        }
    }
}
