import Foundation

/// PostgreSQL: a pool of connections shared by every request thread. Writes run in READ
/// COMMITTED and are retried whole when they lose a race (serialization failure, deadlock);
/// reads run on a REPEATABLE READ snapshot. A lost connection is dropped from the pool and the
/// request answers 503 (`unavailable`), never a wrong answer; the next one reconnects.
final class PostgresEngine: StoreEngine {
    let name = "postgresql"
    let returningBuildsATable = false
    let url: String
    private let pool: ConnectionPool

    /// How many times a write that lost a race runs again before the error reaches the client.
    static let maxAttempts = 12

    /// Connects to `url` and brings its schema up to date.
    init(url: String, connections: Int) throws {
        self.url = url
        let first = try Self.connect(url)
        try PostgresSchema.migrate(first)
        pool = ConnectionPool(capacity: max(1, connections), first: first) { try Self.connect(url) }
    }

    /// A connection with the session settings that keep a vanished node from holding locks.
    static func connect(_ url: String) throws -> PostgresConnection {
        let separator = url.contains("?") ? "&" : "?"
        let db = try PostgresConnection(
            url: url + separator + "keepalives=1&keepalives_idle=10&keepalives_interval=5&keepalives_count=3")
        try db.execute(
            """
            SET statement_timeout = '30s'; SET lock_timeout = '10s';
            SET idle_in_transaction_session_timeout = '60s'; SET client_min_messages = warning
            """)
        return db
    }

    /// A write that lost a race runs again. So does one that hit a unique index a concurrent
    /// transaction filled first: run again, it sees that row (a repeated send finds its
    /// original by `muid` and answers it), so only a real duplicate becomes `conflict`.
    func write<T>(_ body: (any SQLDatabase) throws -> T, committed: () -> Void) throws -> T {
        var attempt = 1
        while true {
            do {
                let result = try transaction("BEGIN", body)
                committed()
                return result
            } catch let error as PostgresError
                where attempt < Self.maxAttempts
                && (error.isRetryable || (error.sqlState == Self.uniqueViolation && attempt < 3))
            {
                attempt += 1
            } catch {
                throw Self.translate(error)
            }
        }
    }

    func read<T>(_ body: (any SQLDatabase) throws -> T) throws -> T {
        do {
            return try transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", body)
        } catch {
            throw Self.translate(error)
        }
    }

    func readStatement<T>(_ body: (any SQLDatabase) throws -> T) throws -> T {
        do {
            return try transaction(nil, body)
        } catch {
            throw Self.translate(error)
        }
    }

    static let uniqueViolation = "23505"

    /// One transaction on a pooled connection, rolled back when `body` throws; with no `begin`,
    /// `body`'s single statement runs on its own (autocommit).
    private func transaction<T>(_ begin: String?, _ body: (any SQLDatabase) throws -> T) throws -> T {
        let db = try pool.take()
        defer { pool.give(db) }
        guard let begin else { return try body(db) }
        do {
            db.begin(begin)
            let result = try body(db)
            try db.commit()
            return result
        } catch {
            db.rollback()
            throw error
        }
    }

    /// PostgreSQL's refusals in the store's words: a lost connection is `unavailable`, a
    /// unique violation a `conflict`; anything else stays as it is (a 500: a bug).
    static func translate(_ error: any Error) -> any Error {
        guard let error = error as? PostgresError else { return error }
        if error.isConnectionLost { return StoreError.unavailable("the database is unreachable; try again shortly") }
        if error.sqlState == uniqueViolation { return StoreError.conflict("it already exists") }
        return error
    }

    func importFinished(_ db: any SQLDatabase) throws {
        for table in ["messages", "changes", "reactions", "notifications", "admin_audit"] {
            try db.run(
                "SELECT setval(pg_get_serial_sequence('\(table)', 'id'), greatest((SELECT max(id) FROM \(table)), 1))")
        }
    }

    /// The database's size.
    func databaseBytes(_ db: any SQLDatabase) throws -> Int {
        Int(try db.scalar("SELECT pg_database_size(current_database())", as: Int64.self) ?? 0)
    }

    var usage: ConnectionUsage? { pool.usage }

    func close() throws { pool.close() }
}

/// Up to `capacity` connections: a caller takes an idle one, opens a new one while under
/// capacity, or waits. A connection handed back broken is dropped.
final class ConnectionPool: @unchecked Sendable {  // every field is only touched under `condition`
    private let condition = NSCondition()
    private let capacity: Int
    private let open: () throws -> PostgresConnection
    private var idle: [PostgresConnection]
    private var count: Int
    private var closed = false
    /// Takes that found every connection busy and waited.
    private var waits = 0

    init(capacity: Int, first: PostgresConnection, open: @escaping () throws -> PostgresConnection) {
        self.capacity = capacity
        self.open = open
        idle = [first]
        count = 1
    }

    func take() throws -> PostgresConnection {
        condition.lock()
        if idle.isEmpty && count >= capacity && !closed { waits += 1 }
        while idle.isEmpty && count >= capacity && !closed { condition.wait() }
        if closed {
            condition.unlock()
            throw StoreError.unavailable("chatd is shutting down")
        }
        if let db = idle.popLast() {
            condition.unlock()
            return db
        }
        count += 1
        condition.unlock()
        do {
            return try open()
        } catch {
            condition.lock()
            count -= 1
            condition.signal()
            condition.unlock()
            throw PostgresEngine.translate(error)
        }
    }

    func give(_ db: PostgresConnection) {
        condition.lock()
        if db.isOpen && !closed { idle.append(db) } else { count -= 1 }
        condition.signal()
        condition.unlock()
    }

    var usage: ConnectionUsage {
        condition.lock()
        defer { condition.unlock() }
        return ConnectionUsage(open: count, busy: count - idle.count, capacity: capacity, waits: waits)
    }

    func close() {
        condition.lock()
        closed = true
        idle = []
        condition.broadcast()
        condition.unlock()
    }
}
