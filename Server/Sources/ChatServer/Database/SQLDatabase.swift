import OfflineChatSQLite

/// One database connection as the store sees it, whichever engine is behind it: SQLite
/// (`OfflineChatSQLite.Connection`) or PostgreSQL (`PostgresConnection`).
///
/// The store's SQL is written once for both: `?` (or `?N`) parameters, `ON CONFLICT … DO
/// NOTHING` / `DO UPDATE`, `RETURNING`, `greatest`/`least` (SQLite gets them as functions),
/// `json_each(…)` over a JSON array (PostgreSQL's connection reads it as
/// `json_array_elements_text`), `last_insert_rowid()` for the id the connection's last insert
/// generated (`lastval()` there) and `LIKE` meaning ASCII case-insensitive (`ILIKE` there).
/// Rows come back as `OfflineChatSQLite.Row` values on both.
public protocol SQLDatabase: AnyObject {
    /// Runs one statement, discarding rows.
    func run(_ sql: String, _ arguments: [any SQLValueConvertible]) throws
    /// Runs one statement inside a transaction, discarding rows, at the latest before the
    /// transaction's next statement with an answer or its commit: PostgreSQL sends it with that
    /// one (a round trip saved); its failure surfaces there. Nothing may read `changes` after it.
    func runLater(_ sql: String, _ arguments: [any SQLValueConvertible]) throws
    /// Runs one statement and returns every row.
    func query(_ sql: String, _ arguments: [any SQLValueConvertible]) throws -> [Row]
    /// The first row, or nil when there is none (the rest are not read).
    func queryFirst(_ sql: String, _ arguments: [any SQLValueConvertible]) throws -> Row?
    /// Runs statements that do not depend on each other's answers, in order, and returns the
    /// rows of each: PostgreSQL runs them in one round trip.
    func queries(_ statements: [(sql: String, arguments: [any SQLValueConvertible])]) throws -> [[Row]]
    /// Runs a query whose rows are an integer and a text, and hands `body` each row's integer
    /// and the text's UTF-8 bytes (nil for NULL), valid only during the call: kept JSON
    /// (message bodies, changes) copied once, into an answer, with no row values built.
    func forEachText(
        _ sql: String, _ arguments: [any SQLValueConvertible],
        _ body: (Int64, UnsafeBufferPointer<UInt8>?) throws -> Void
    ) throws
    /// Runs SQL text that may hold several statements and no parameters (schema changes).
    func execute(_ sql: String) throws
    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { get }
    /// Locks the rows of `table` whose `column` is `value` until the transaction ends (another
    /// writer of them waits). SQLite's single writer already excludes every other.
    func lockRows(_ table: String, where column: String, is value: String) throws
}

extension SQLDatabase {
    /// `forEachText` over the rows `query` returns (PostgreSQL's connection reads whole results).
    public func forEachText(
        _ sql: String, _ arguments: [any SQLValueConvertible],
        _ body: (Int64, UnsafeBufferPointer<UInt8>?) throws -> Void
    ) throws {
        for row in try query(sql, arguments) {
            let number: Int64 = try row.get(0)
            guard var text = try row.get(1, as: String?.self) else {
                try body(number, nil)
                continue
            }
            try text.withUTF8 { try body(number, $0) }
        }
    }

    public func run(_ sql: String) throws { try run(sql, []) }

    public func query(_ sql: String) throws -> [Row] { try query(sql, []) }

    public func queryFirst(_ sql: String) throws -> Row? { try queryFirst(sql, []) }

    /// The first column of the first row as `T`, or nil when there is no row.
    public func scalar<T: SQLValueConvertible>(
        _ sql: String, _ arguments: [any SQLValueConvertible] = [],
        as type: T.Type = T.self
    ) throws -> T? {
        try queryFirst(sql, arguments)?.get(0, as: type)
    }

    /// Runs `INSERT … VALUES (…), (…) <suffix>` for `rows` (`MultiRowInsert.statements`) and returns the
    /// rows `suffix`'s RETURNING yields.
    @discardableResult
    public func insertRows(_ insert: String, _ rows: [[any SQLValueConvertible]], _ suffix: String = "") throws -> [Row]
    {
        try queries(MultiRowInsert.statements(insert, rows, suffix)).flatMap { $0 }
    }

    /// `insertRows` through `runLater`: nothing comes back.
    public func insertRowsLater(_ insert: String, _ rows: [[any SQLValueConvertible]]) throws {
        for statement in MultiRowInsert.statements(insert, rows) { try runLater(statement.sql, statement.arguments) }
    }
}

/// Multi-row inserts.
public enum MultiRowInsert {
    /// `INSERT … VALUES (…), (…) <suffix>` for `rows` in as few statements as a bounded set of
    /// statement texts allows: batches of 64, 32, … 1 rows (a power-of-two split, so each
    /// connection prepares at most seven texts per insert). Rows go in the order given
    /// (PostgreSQL locks them in that order).
    public static func statements(
        _ insert: String, _ rows: [[any SQLValueConvertible]],
        _ suffix: String = ""
    ) -> [(sql: String, arguments: [any SQLValueConvertible])] {
        guard let width = rows.first?.count, width > 0 else { return [] }
        // Texts by repetition, not by joining arrays of pieces: a send builds six.
        let tuple = "(" + String(repeating: "?, ", count: width - 1) + "?)"
        var statements: [(sql: String, arguments: [any SQLValueConvertible])] = []
        var start = 0
        while start < rows.count {
            var size = 64
            while size > rows.count - start { size /= 2 }
            var arguments: [any SQLValueConvertible] = []
            arguments.reserveCapacity(size * width)
            for row in rows[start..<start + size] { arguments += row }
            statements.append(
                (
                    insert + " VALUES " + String(repeating: tuple + ", ", count: size - 1) + tuple + " " + suffix,
                    arguments
                ))
            start += size
        }
        return statements
    }
}

extension Connection: SQLDatabase {
    public func lockRows(_ table: String, where column: String, is value: String) throws {}

    public func runLater(_ sql: String, _ arguments: [any SQLValueConvertible]) throws { try run(sql, arguments) }

    public func forEachText(
        _ sql: String, _ arguments: [any SQLValueConvertible],
        _ body: (Int64, UnsafeBufferPointer<UInt8>?) throws -> Void
    ) throws {
        try forEachRow(sql, arguments) { row in
            try body(row.int64(0), row.unsafeText(1))
            return true
        }
    }

    public func queries(_ statements: [(sql: String, arguments: [any SQLValueConvertible])]) throws -> [[Row]] {
        try statements.map { try query($0.sql, $0.arguments) }
    }
}
