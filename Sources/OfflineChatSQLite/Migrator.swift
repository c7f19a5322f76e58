/// Append-only, numbered schema migrations tracked in `PRAGMA user_version`.
///
/// Never edit or reorder a shipped migration: add a new one. Each runs in its own
/// immediate transaction together with the version bump.
///
/// ```swift
/// var migrator = Migrator()
/// migrator.register(1, "users") { db in try db.execute("CREATE TABLE users(uid TEXT PRIMARY KEY)") }
/// try migrator.migrate(db)
/// ```
public struct Migrator: Sendable {
    public struct Migration: Sendable {
        public let version: Int
        public let name: String
        public let apply: @Sendable (Connection) throws -> Void
    }

    public private(set) var migrations: [Migration] = []

    public init() {}

    /// Adds migration `version`, which must be exactly one more than the previous one.
    public mutating func register(
        _ version: Int, _ name: String, _ apply: @escaping @Sendable (Connection) throws -> Void
    ) {
        precondition(version == (migrations.last?.version ?? 0) + 1, "migrations are numbered 1, 2, 3, … in order")
        migrations.append(Migration(version: version, name: name, apply: apply))
    }

    /// Adds a migration made of SQL statements.
    public mutating func register(_ version: Int, _ name: String, sql: String) {
        register(version, name) { try $0.execute(sql) }
    }

    /// The highest version known to this migrator.
    public var latestVersion: Int { migrations.last?.version ?? 0 }

    /// Applies every migration above the database's version. Throws `.misuse` if the file was
    /// written by a newer schema than this code knows.
    @discardableResult
    public func migrate(_ db: Connection) throws -> [Int] {
        let current = try db.userVersion
        guard current <= latestVersion else {
            throw SQLiteError(
                code: .misuse, message: "database schema \(current) is newer than this build's \(latestVersion)")
        }
        var applied: [Int] = []
        for migration in migrations where migration.version > current {
            try db.transaction { db in
                try migration.apply(db)
                try db.execute("PRAGMA user_version = \(migration.version)")
            }
            applied.append(migration.version)
        }
        return applied
    }
}
