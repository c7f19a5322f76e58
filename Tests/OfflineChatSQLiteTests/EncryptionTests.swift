import Foundation
import OfflineChatSQLite
import Testing

@Suite struct EncryptionTests {
    let dir = TemporaryDirectory()
    let key = EncryptionKey(bytes: (0..<32).map { UInt8($0 * 7 & 0xFF) })

    @Test(.enabled(if: Connection.cipherAvailable))
    func anEncryptedFileHoldsNoPlaintextAndReopensWithItsKey() throws {
        let path = dir.path("secret.sqlite")
        do {
            let db = try Connection(path: path, key: key)
            try db.execute("CREATE TABLE t(s TEXT)")
            try db.run("INSERT INTO t VALUES (?)", ["top secret marker"])
            try db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        for file in [path, path + "-wal"] {
            guard let bytes = FileManager.default.contents(atPath: file) else { continue }
            #expect(bytes.range(of: Data("top secret marker".utf8)) == nil)
            #expect(bytes.range(of: Data("SQLite format 3".utf8)) == nil)
        }
        let reopened = try Connection(path: path, key: key)
        #expect(try reopened.scalar("SELECT s FROM t") == "top secret marker")
        #expect(Connection.cipherVersion != nil)
    }

    @Test(.enabled(if: Connection.cipherAvailable))
    func aWrongKeyFailsAtOpenWithNotADatabase() throws {
        let path = dir.path("secret.sqlite")
        try Connection(path: path, key: key).execute("CREATE TABLE t(s TEXT)")
        let wrong = EncryptionKey(bytes: [UInt8](repeating: 1, count: 32))
        let error = try #require(throws: SQLiteError.self) { try Connection(path: path, key: wrong) }
        #expect(error.code == .notADatabase)
        #expect(!error.description.contains("0101"))
    }

    @Test(.enabled(if: Connection.cipherAvailable))
    func aPlaintextFileDoesNotOpenWithAKey() throws {
        let path = dir.path("plain.sqlite")
        try Connection(path: path).execute("CREATE TABLE t(s TEXT)")
        let error = try #require(throws: SQLiteError.self) { try Connection(path: path, key: key) }
        #expect(error.code == .notADatabase)
    }

    @Test(.enabled(if: !Connection.cipherAvailable))
    func aKeyedOpenWithoutSQLCipherIsRefused() throws {
        let error = try #require(throws: SQLiteError.self) { try Connection(path: dir.path("x.sqlite"), key: key) }
        #expect(error.code == .misuse)
        #expect(Connection.cipherVersion == nil)
    }

    @Test func theKeyNeverAppearsInItsDescription() {
        #expect(!String(describing: key).contains("0007"))
        #expect(String(describing: key).contains("redacted"))
    }
}
