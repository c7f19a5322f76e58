import SQLiteKit

/// One database connection as the store sees it, whichever engine is behind it: SQLite
/// (`SQLiteKit.Connection`) or PostgreSQL (`PostgresConnection`).
///
/// The store's SQL is written once for both: `?` (or `?N`) parameters, `ON CONFLICT … DO
/// NOTHING` / `DO UPDATE`, `RETURNING`, `greatest`/`least` (SQLite gets them as functions),
/// `json_each(…)` over a JSON array (PostgreSQL's connection reads it as
/// `json_array_elements_text`) and `LIKE` meaning ASCII case-insensitive (`ILIKE` there).
/// Rows come back as `SQLiteKit.Row` values on both.
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
    /// Runs SQL text that may hold several statements and no parameters (schema changes).
    func execute(_ sql: String) throws
    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { get }
    /// Locks the rows of `table` whose `column` is `value` until the transaction ends (another
    /// writer of them waits). SQLite's single writer already excludes every other.
    func lockRows(_ table: String, where column: String, is value: String) throws
}

extension SQLDatabase {
    public func run(_ sql: String) throws { try run(sql, []) }

    public func query(_ sql: String) throws -> [Row] { try query(sql, []) }

    public func queryFirst(_ sql: String) throws -> Row? { try queryFirst(sql, []) }

    /// The first column of the first row as `T`, or nil when there is no row.
    public func scalar<T: SQLValueConvertible>(_ sql: String, _ arguments: [any SQLValueConvertible] = [],
                                               as type: T.Type = T.self) throws -> T? {
        try queryFirst(sql, arguments)?.get(0, as: type)
    }

    /// Runs `INSERT … VALUES (…), (…) <suffix>` for `rows` in as few round trips as a bounded
    /// set of statement texts allows: batches of 64, 32, … 1 rows (a power-of-two split, so
    /// each connection prepares at most seven texts per insert). Rows go in the order given
    /// (PostgreSQL locks them in that order); the rows `suffix`'s RETURNING yields come back.
    @discardableResult
    public func insertRows(_ insert: String, _ rows: [[any SQLValueConvertible]], _ suffix: String = "") throws -> [Row] {
        var returned: [Row] = []
        try insertBatches(insert, rows, suffix) { sql, arguments in returned += try query(sql, arguments) }
        return returned
    }

    /// `insertRows` through `runLater`: nothing comes back.
    public func insertRowsLater(_ insert: String, _ rows: [[any SQLValueConvertible]]) throws {
        try insertBatches(insert, rows, "") { sql, arguments in try runLater(sql, arguments) }
    }

    private func insertBatches(_ insert: String, _ rows: [[any SQLValueConvertible]], _ suffix: String,
                               _ run: (String, [any SQLValueConvertible]) throws -> Void) throws {
        guard let width = rows.first?.count else { return }
        let tuple = "(" + Array(repeating: "?", count: width).joined(separator: ", ") + ")"
        var start = 0
        while start < rows.count {
            var size = 64
            while size > rows.count - start { size /= 2 }
            let batch = rows[start..<start + size]
            try run(insert + " VALUES " + Array(repeating: tuple, count: size).joined(separator: ", ") + " " + suffix,
                    batch.flatMap { $0 })
            start += size
        }
    }
}

extension Connection: SQLDatabase {
    public func lockRows(_ table: String, where column: String, is value: String) throws {}

    public func runLater(_ sql: String, _ arguments: [any SQLValueConvertible]) throws { try run(sql, arguments) }
}
