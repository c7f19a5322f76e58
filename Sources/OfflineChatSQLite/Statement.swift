/// A compiled statement with typed parameter bindings. Reset before every run.
/// It must not outlive its connection (the connection's statement cache holds it unowned-back).
public final class Statement {
    unowned let connection: Connection
    let handle: OpaquePointer
    /// The SQL text it was compiled from.
    public let sql: String
    /// Result column names.
    public let columns: [String]
    /// When the connection's statement cache last handed it out (least recently used goes first).
    var lastUse: UInt64 = 0

    init(connection: Connection, sql: String) throws {
        var statement: OpaquePointer?
        try connection.check(sqlite3_prepare_v2(connection.handle, sql, -1, &statement, nil), sql: sql)
        guard let statement else {
            throw SQLiteError(code: .misuse, message: "no statement in SQL text", sql: sql)
        }
        self.connection = connection
        self.handle = statement
        self.sql = sql
        self.columns = (0..<sqlite3_column_count(statement)).map { String(cString: sqlite3_column_name(statement, $0)) }
    }

    deinit { sqlite3_finalize(handle) }

    /// Binds `arguments` to the `?` parameters in order; the count must match. Every run of
    /// a statement begins here, so a statement of a closed connection is refused here.
    public func bind(_ arguments: [any SQLValueConvertible]) throws {
        try connection.checkOpen(sql)
        sqlite3_reset(handle)
        // Every parameter is bound below (the count must match), so none keeps an old value.
        let expected = Int(sqlite3_bind_parameter_count(handle))
        guard arguments.count == expected else {
            throw SQLiteError(code: .range, message: "expected \(expected) arguments, got \(arguments.count)", sql: sql)
        }
        for (offset, argument) in arguments.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch argument.sqlValue {
            case .null: code = sqlite3_bind_null(handle, index)
            case .integer(let value): code = sqlite3_bind_int64(handle, index, value)
            case .real(let value): code = sqlite3_bind_double(handle, index, value)
            case .text(let value):
                // The string's own UTF-8 and its length (no C-string copy, no strlen); SQLite copies it.
                code = value.withCString {
                    sqlite3_bind_text(handle, index, $0, Int32(value.utf8.count), sqliteTransient)
                }
            case .blob(let bytes):
                code = bytes.withUnsafeBytes {
                    sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), sqliteTransient)
                }
            }
            try connection.check(code, sql: sql)
        }
    }

    /// Runs the statement to completion, discarding rows.
    public func run(_ arguments: [any SQLValueConvertible] = []) throws {
        try bind(arguments)
        defer { sqlite3_reset(handle) }
        while try step() {}
    }

    /// Runs the statement and collects up to `limit` rows.
    public func query(_ arguments: [any SQLValueConvertible] = [], limit: Int = .max) throws -> [Row] {
        try bind(arguments)
        defer { sqlite3_reset(handle) }
        var rows: [Row] = []
        while rows.count < limit, try step() {
            rows.append(Row(columns: columns, values: (0..<Int32(columns.count)).map(value(at:))))
        }
        return rows
    }

    /// Advances one row; true while a row is available.
    func step() throws -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            throw SQLiteError(
                code: ResultCode(rawValue: sqlite3_extended_errcode(connection.handle)),
                message: connection.lastErrorMessage, sql: sql)
        }
    }

    func value(at column: Int32) -> SQLValue {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, column))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, column))
        case SQLITE_TEXT: return .text(columnText(handle, column))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(handle, column))
            guard count > 0, let base = sqlite3_column_blob(handle, column) else { return .blob([]) }
            return .blob([UInt8](UnsafeRawBufferPointer(start: base, count: count)))
        default: return .null
        }
    }
}
