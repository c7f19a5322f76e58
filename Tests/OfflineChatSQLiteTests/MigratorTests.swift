import OfflineChatSQLite
import Testing

@Suite struct MigratorTests {
    let dir = TemporaryDirectory()

    func migrator() -> Migrator {
        var migrator = Migrator()
        migrator.register(1, "users", sql: "CREATE TABLE users(uid TEXT PRIMARY KEY)")
        migrator.register(2, "names", sql: "ALTER TABLE users ADD COLUMN name TEXT")
        return migrator
    }

    @Test(arguments: Storage.allCases)
    func migrationsApplyInOrderOnceEach(storage: Storage) throws {
        let db = try open(storage, in: dir)
        #expect(try migrator().migrate(db) == [1, 2])
        #expect(try db.userVersion == 2)
        #expect(try migrator().migrate(db) == [])
        try db.run("INSERT INTO users(uid, name) VALUES ('a', 'A')")
    }

    @Test func anAppendedMigrationRunsAloneOnAnExistingFile() throws {
        let db = try Connection(path: dir.path("m.sqlite"))
        try migrator().migrate(db)
        var next = migrator()
        next.register(3, "index", sql: "CREATE INDEX users_name ON users(name)")
        #expect(try next.migrate(db) == [3])
    }

    @Test func aFailingMigrationLeavesTheVersionAndSchemaUnchanged() throws {
        let db = try Connection.inMemory()
        var broken = migrator()
        broken.register(3, "broken", sql: "CREATE TABLE ok(n INTEGER); CREATE TABLE users(uid TEXT)")
        #expect(throws: SQLiteError.self) { try broken.migrate(db) }
        #expect(try db.userVersion == 2)
        #expect(try db.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'ok'") == 0)
    }

    @Test func aDatabaseFromANewerSchemaIsRefused() throws {
        let db = try Connection.inMemory()
        try db.execute("PRAGMA user_version = 9")
        let error = try #require(throws: SQLiteError.self) { try migrator().migrate(db) }
        #expect(error.code == .misuse)
    }
}
