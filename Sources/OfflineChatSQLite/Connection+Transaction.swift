extension Connection {
    /// How a transaction takes its lock.
    public enum TransactionKind: String, Sendable {
        case deferred = "DEFERRED"
        /// Takes the write lock at BEGIN: the right choice for read-modify-write.
        case immediate = "IMMEDIATE"
        case exclusive = "EXCLUSIVE"
    }

    /// Runs `body` in a transaction: commits when it returns, rolls back when it throws.
    ///
    /// ```swift
    /// try db.transaction { db in
    ///     try db.run("INSERT INTO messages(id) VALUES (?)", [42])
    ///     try db.run("UPDATE cursor SET seq = ?", [7])
    /// }
    /// ```
    @discardableResult
    public func transaction<T>(_ kind: TransactionKind = .immediate, _ body: (Connection) throws -> T) throws -> T {
        // Cached statements: BEGIN and COMMIT are compiled once per connection, not per call.
        try run("BEGIN \(kind.rawValue)")
        do {
            let result = try body(self)
            try run("COMMIT")
            return result
        } catch {
            // (A body that closed the connection left nothing to roll back.)
            if !isClosed && sqlite3_get_autocommit(handle) == 0 { try? run("ROLLBACK") }
            throw error
        }
    }
}
