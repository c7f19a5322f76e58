/// The current row of a running statement, read column by column without building `Row`
/// values: the fast path for hot reads. Valid only inside the `forEachRow` body.
public struct RowCursor: ~Copyable {
    let handle: OpaquePointer

    public func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }
    public func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    public func int64OrNil(_ column: Int32) -> Int64? { isNull(column) ? nil : int64(column) }
    public func int(_ column: Int32) -> Int { Int(sqlite3_column_int64(handle, column)) }

    /// Text (empty for NULL).
    public func text(_ column: Int32) -> String { columnText(handle, column) }

    public func textOrNil(_ column: Int32) -> String? { isNull(column) ? nil : text(column) }

    /// Hands `body` the text's UTF-8 bytes as SQLite holds them (nil for NULL), valid only
    /// during the call: for text copied once, into an answer, with no String made of it.
    public func withText<T>(_ column: Int32, _ body: (UnsafeBufferPointer<UInt8>?) throws -> T) rethrows -> T {
        try body(unsafeText(column))
    }

    /// The text's UTF-8 bytes as SQLite holds them (nil for NULL), valid only until the
    /// statement moves on (the row's body returns) or this column is read again as another
    /// type: `withText` without a closure a row, for the hottest loops (chatd's
    /// `forEachText`, which copies the bytes at once). Keep nothing of it past the row.
    public func unsafeText(_ column: Int32) -> UnsafeBufferPointer<UInt8>? {
        guard let bytes = sqlite3_column_text(handle, column) else { return nil }
        return UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(handle, column)))
    }
}

extension Statement {
    /// Runs the statement and hands each row to `body`; stops early when `body` returns false.
    public func forEachRow(
        _ arguments: [any SQLValueConvertible] = [], _ body: (borrowing RowCursor) throws -> Bool
    ) throws {
        try bind(arguments)
        defer { sqlite3_reset(handle) }
        let cursor = RowCursor(handle: handle)
        while try step() {
            guard try body(cursor) else { break }
        }
    }
}

extension Connection {
    /// `Statement.forEachRow` on the cached statement for `sql`.
    public func forEachRow(
        _ sql: String, _ arguments: [any SQLValueConvertible] = [],
        _ body: (borrowing RowCursor) throws -> Bool
    ) throws {
        try cachedStatement(sql).forEachRow(arguments, body)
    }
}

/// A text column's bytes, all of them (a NUL inside is kept), as a String; empty for NULL.
func columnText(_ statement: OpaquePointer, _ column: Int32) -> String {
    guard let bytes = sqlite3_column_text(statement, column) else { return "" }
    return String(
        decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(statement, column))), as: UTF8.self)
}
