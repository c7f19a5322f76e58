import OfflineChatSQLite
import Testing

struct Boom: Error {}

@Suite struct TransactionTests {
    let dir = TemporaryDirectory()

    @Test(arguments: Storage.allCases)
    func aTransactionCommitsWhenTheBodyReturns(storage: Storage) throws {
        let db = try open(storage, in: dir)
        try db.execute("CREATE TABLE t(n INTEGER)")
        let inserted = try db.transaction { db in
            try db.run("INSERT INTO t VALUES (1)")
            try db.run("INSERT INTO t VALUES (2)")
            return db.changes
        }
        #expect(inserted == 1)
        #expect(try db.scalar("SELECT count(*) FROM t") == 2)
    }

    @Test(arguments: Storage.allCases)
    func aTransactionRollsBackEverythingWhenTheBodyThrows(storage: Storage) throws {
        let db = try open(storage, in: dir)
        try db.execute("CREATE TABLE t(n INTEGER)")
        #expect(throws: Boom.self) {
            try db.transaction { db in
                try db.run("INSERT INTO t VALUES (1)")
                throw Boom()
            }
        }
        #expect(try db.scalar("SELECT count(*) FROM t") == 0)
        // The connection is usable again afterwards.
        try db.transaction { try $0.run("INSERT INTO t VALUES (3)") }
        #expect(try db.scalar("SELECT count(*) FROM t") == 1)
    }

    @Test func anImmediateTransactionHoldsTheWriteLockAgainstOtherConnections() throws {
        let path = dir.path("lock.sqlite")
        let writer = try Connection(path: path)
        try writer.execute("CREATE TABLE t(n INTEGER)")
        var options = Connection.Options()
        options.busyTimeoutMilliseconds = 0
        let other = try Connection(path: path, options: options)
        try writer.transaction(.immediate) { _ in
            let error = try #require(throws: SQLiteError.self) { try other.execute("BEGIN IMMEDIATE") }
            #expect(error.code.primary == .busy)
            // Readers still read in WAL mode.
            #expect(try other.scalar("SELECT count(*) FROM t") == 0)
        }
    }
}
