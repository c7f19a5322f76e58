import Foundation
import OfflineChatSQLite
import Testing

/// Every test body runs against an in-memory and a file database.
enum Storage: CaseIterable, CustomStringConvertible {
    case memory, file
    var description: String { self == .memory ? "in-memory" : "file" }
}

func open(_ storage: Storage, in dir: TemporaryDirectory) throws -> Connection {
    storage == .memory ? try .inMemory() : try Connection(path: dir.path("test.sqlite"))
}

@Suite struct ConnectionTests {
    let dir = TemporaryDirectory()

    @Test(arguments: Storage.allCases)
    func typedBindingsRoundTrip(storage: Storage) throws {
        let db = try open(storage, in: dir)
        try db.execute("CREATE TABLE t(i INTEGER, r REAL, s TEXT, b BLOB, n TEXT, flag INTEGER)")
        let blob = Data([0, 1, 2, 255])
        try db.run("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)", [Int64.max, 2.5, "héllo 👋", blob, String?.none, true])
        let row = try #require(try db.queryFirst("SELECT * FROM t"))
        #expect(try row.get("i") == Int64.max)
        #expect(try row.get("r") == 2.5)
        #expect(try row.get("s") == "héllo 👋")
        #expect(try row.get("b") == blob)
        #expect(try row.get("n", as: String?.self) == nil)
        #expect(try row.get("flag") == true)
    }

    @Test(arguments: Storage.allCases)
    func readingAValueAsTheWrongTypeThrowsMismatch(storage: Storage) throws {
        let db = try open(storage, in: dir)
        let row = try #require(try db.queryFirst("SELECT 'text' AS s"))
        let error = try #require(throws: SQLiteError.self) { try row.get("s", as: Int.self) }
        #expect(error.code == .mismatch)
        #expect(throws: SQLiteError.self) { try row.get("missing", as: String.self) }
    }

    @Test(arguments: Storage.allCases)
    func constraintViolationsExposeTheirResultCode(storage: Storage) throws {
        let db = try open(storage, in: dir)
        try db.execute("CREATE TABLE u(id INTEGER PRIMARY KEY, name TEXT UNIQUE)")
        try db.run("INSERT INTO u(name) VALUES (?)", ["a"])
        let error = try #require(throws: SQLiteError.self) { try db.run("INSERT INTO u(name) VALUES (?)", ["a"]) }
        #expect(error.code == .constraintUnique)
        #expect(error.code.primary == .constraint)
        #expect(error.sql == "INSERT INTO u(name) VALUES (?)")
    }

    @Test(arguments: Storage.allCases)
    func wrongArgumentCountIsRejected(storage: Storage) throws {
        let db = try open(storage, in: dir)
        let error = try #require(throws: SQLiteError.self) { try db.run("SELECT ?, ?", [1]) }
        #expect(error.code == .range)
    }

    @Test(arguments: Storage.allCases)
    func syntaxErrorsThrowWithTheStatement(storage: Storage) throws {
        let db = try open(storage, in: dir)
        let error = try #require(throws: SQLiteError.self) { try db.prepare("SELEC 1") }
        #expect(error.code == .error)
        #expect(error.sql == "SELEC 1")
    }

    @Test(arguments: Storage.allCases)
    func preparedStatementsRunRepeatedly(storage: Storage) throws {
        let db = try open(storage, in: dir)
        try db.execute("CREATE TABLE t(n INTEGER)")
        let insert = try db.prepare("INSERT INTO t VALUES (?)")
        for n in 1...100 { try insert.run([n]) }
        #expect(try db.scalar("SELECT sum(n) FROM t") == 5050)
        #expect(db.changes == 1)
        #expect(db.lastInsertRowID == 100)
    }

    @Test func fileDatabasesUseWriteAheadLogging() throws {
        let db = try Connection(path: dir.path("wal.sqlite"))
        #expect(try db.scalar("PRAGMA journal_mode") == "wal")
    }

    @Test func aMissingFileIsNotCreatedWhenCreateIsOff() throws {
        var options = Connection.Options()
        options.create = false
        let error = try #require(throws: SQLiteError.self) {
            try Connection(path: dir.path("absent.sqlite"), options: options)
        }
        #expect(error.code.primary == .cantOpen)
    }
}

@Suite struct CloseTests {
    let dir = TemporaryDirectory()

    @Test func closingTheLastConnectionRemovesTheWriteAheadLog() throws {
        let path = dir.path("close.sqlite")
        let db = try Connection(path: path)
        try db.execute("CREATE TABLE t(n INTEGER); INSERT INTO t VALUES (1)")
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
        try db.close()
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        try db.close()
        let error = try #require(throws: SQLiteError.self) { try db.execute("SELECT 1") }
        #expect(error.code == .misuse)
        #expect(try Connection(path: path).scalar("SELECT n FROM t") == 1)
    }

    @Test func aCloseWithAStatementStillHeldFailsYetNothingRunsOnTheConnectionAfterIt() throws {
        let db = try Connection(path: dir.path("held.sqlite"))
        try db.execute("CREATE TABLE t(n INTEGER)")
        let held = try db.prepare("INSERT INTO t VALUES (?)")
        #expect(throws: SQLiteError.self) { try db.close() }
        #expect(throws: SQLiteError.self) { try held.run([1]) }
        #expect(throws: SQLiteError.self) { try held.run { try $0.bind(1, Int64(2)) } }
        #expect(throws: SQLiteError.self) { try db.execute("INSERT INTO t VALUES (3)") }
        #expect(try Connection(path: dir.path("held.sqlite")).scalar("SELECT count(*) FROM t") == 0)
    }

    @Test func aClosedConnectionAnswersItsCountersWithoutItsHandle() throws {
        let db = try Connection.inMemory()
        try db.execute("CREATE TABLE t(n INTEGER)")
        try db.run("INSERT INTO t VALUES (1)")
        #expect(db.lastInsertRowID == 1 && db.changes == 1)
        try db.close()
        #expect(db.lastInsertRowID == 0 && db.changes == 0)
        let closing = try Connection.inMemory()
        let error = try #require(throws: SQLiteError.self) {
            try closing.transaction { db in
                try db.close()  // its handle is gone: the failed body must not roll back through it
                try db.run("INSERT INTO t VALUES (2)")
            }
        }
        #expect(error.code == .misuse)
    }
}
