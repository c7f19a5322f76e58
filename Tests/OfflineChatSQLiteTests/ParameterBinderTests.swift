import Foundation
import OfflineChatSQLite
import Testing

/// Parameters bound in place: the same values as the argument-array path, and a parameter
/// left unset is NULL (never the previous run's value).
@Suite struct ParameterBinderTests {
    @Test func boundValuesReadBackAndUnsetOnesAreNull() throws {
        let db = try Connection.inMemory()
        try db.execute("CREATE TABLE t(k INTEGER, i INTEGER, s TEXT, e TEXT, n TEXT)")
        let insert = try db.prepare("INSERT INTO t VALUES (?1, ?2, ?3, ?4, ?5)")
        try insert.run { row in
            try row.bind(1, Int64(1))
            try row.bind(2, Int64.min)
            try row.bind(3, "héllo 👋 \u{0}inside")
            try row.bind(4, "")
            try row.bind(5, String?.none)
        }
        try insert.run { row in
            try row.bind(1, Int64(2))
            try row.bind(2, Int64?.none)
        }
        let first = try #require(try db.queryFirst("SELECT * FROM t WHERE k = 1"))
        #expect(try first.get("i") == Int64.min)
        #expect(try first.get("s") == "héllo 👋 \u{0}inside")
        #expect(try first.get("e") == "" && first.get("n", as: String?.self) == nil)
        let second = try #require(try db.queryFirst("SELECT * FROM t WHERE k = 2"))
        #expect(try second.get("i", as: Int64?.self) == nil)
        #expect(try second.get("s", as: String?.self) == nil, "not the first run's text")
    }

    @Test func aParameterOutOfRangeIsAnError() throws {
        let db = try Connection.inMemory()
        try db.execute("CREATE TABLE t(a INTEGER)")
        let insert = try db.prepare("INSERT INTO t VALUES (?1)")
        #expect(throws: SQLiteError.self) { try insert.run { try $0.bind(2, Int64(1)) } }
    }
}

/// The statement cache is bounded: SQL texts that never repeat cannot grow it without end.
@Suite struct StatementCacheTests {
    @Test func theLeastRecentlyUsedStatementGoesFirst() throws {
        let db = try Connection.inMemory()
        db.statementCacheCapacity = 3
        let kept = try db.cachedStatement("SELECT 0")
        for index in 1...10 {
            _ = try db.cachedStatement("SELECT \(index)")
            #expect(try db.cachedStatement("SELECT 0") === kept, "in use all along: kept")
        }
        #expect(db.cachedStatementCount == 3)
        #expect(try db.scalar("SELECT 1") == 1, "an evicted text compiles again")
    }

    /// Texts are hashed by their length and ends only: ones alike there are still told apart.
    @Test func textsAlikeButInTheMiddleAreDifferentStatements() throws {
        let db = try Connection.inMemory()
        let pad = String(repeating: " ", count: 40)
        let texts = (1...9).map { "SELECT \(pad)\($0)\(pad) + 0" }
        #expect(Set(texts.map(\.utf8.count)).count == 1)
        for (index, text) in texts.enumerated() { #expect(try db.scalar(text) == index + 1) }
        #expect(db.cachedStatementCount == 9)
        #expect(try db.cachedStatement(texts[4]) === db.cachedStatement(texts[4]))
        // Canonically equivalent to String's `==`, but other bytes: other statements.
        let marks = ["a\u{301}\u{316}", "a\u{316}\u{301}"].map { "SELECT hex('\(pad)\($0)\(pad)')" }
        #expect(marks[0] == marks[1] && !marks[0].utf8.elementsEqual(marks[1].utf8))
        let hexes = try marks.map { try db.scalar($0, as: String.self) }
        #expect(hexes[0] != hexes[1])
    }
}
