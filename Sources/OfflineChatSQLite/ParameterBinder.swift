/// A statement's parameters, bound by index straight from Swift values (no `SQLValue` boxes,
/// no argument array): the fast path for hot writes, as `RowCursor` is for hot reads. Valid
/// only inside the `run(binding:)` body.
public struct ParameterBinder: ~Copyable {
    let statement: Statement

    public func bind(_ index: Int32, _ value: Int64) throws {
        try check(sqlite3_bind_int64(statement.handle, index, value))
    }

    public func bind(_ index: Int32, _ value: Int64?) throws {
        if let value { try bind(index, value) } else { try bindNull(index) }
    }

    public func bind(_ index: Int32, _ value: String) throws {
        try check(
            value.withCString {
                sqlite3_bind_text(statement.handle, index, $0, Int32(value.utf8.count), sqliteTransient)
            })
    }

    public func bind(_ index: Int32, _ value: String?) throws {
        if let value { try bind(index, value) } else { try bindNull(index) }
    }

    public func bindNull(_ index: Int32) throws {
        try check(sqlite3_bind_null(statement.handle, index))
    }

    private func check(_ code: Int32) throws {
        try statement.connection.check(code, sql: statement.sql)
    }
}

extension Statement {
    /// Runs the statement to completion with the parameters `bind` sets (those it leaves
    /// unset are NULL), discarding rows.
    public func run(binding bind: (borrowing ParameterBinder) throws -> Void) throws {
        try connection.checkOpen(sql)
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        defer { sqlite3_reset(handle) }
        try bind(ParameterBinder(statement: self))
        while try step() {}
    }
}
