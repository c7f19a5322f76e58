import Foundation
import OfflineChatSQLite
import Testing

/// Rows read in place (`forEachRow`): columns by index, and a text's bytes as SQLite holds
/// them, every byte of it, nil only for NULL.
@Suite struct RowCursorTests {
    @Test func textBytesAreWholeAndNullIsNil() throws {
        let db = try Connection.inMemory()
        try db.execute("CREATE TABLE t(k INTEGER, s TEXT)")
        try db.run("INSERT INTO t VALUES (1, ?), (2, ''), (3, NULL)", ["héllo 👋 \u{0}inside"])
        var seen: [(Int64, [UInt8]?)] = []
        try db.forEachRow("SELECT k, s FROM t ORDER BY k") { row in
            seen.append((row.int64(0), row.withText(1) { $0.map(Array.init) }))
            return true
        }
        #expect(seen.map(\.0) == [1, 2, 3])
        #expect(seen[0].1 == Array("héllo 👋 \u{0}inside".utf8))
        #expect(seen[1].1 == [], "empty text is not NULL")
        #expect(seen[2].1 == nil)
    }
}
