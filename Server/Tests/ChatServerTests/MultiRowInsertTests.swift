import OfflineChatSQLite
import Testing

@testable import ChatServer

/// How rows become `INSERT … VALUES (…), (…)` statements: few texts, every row once, in order.
@Suite struct MultiRowInsertTests {
    static func numbers(_ arguments: [any SQLValueConvertible]) -> [Int] { arguments.compactMap { $0 as? Int } }

    @Test func rowsGoInPowerOfTwoBatchesInTheOrderGiven() {
        let rows: [[any SQLValueConvertible]] = (0..<100).map { [$0 * 2, $0 * 2 + 1] }
        let statements = MultiRowInsert.statements("INSERT INTO t(a, b)", rows, "ON CONFLICT DO NOTHING")
        #expect(statements.map { $0.arguments.count } == [128, 64, 8], "64, 32 and 4 rows of two")
        #expect(statements.flatMap { Self.numbers($0.arguments) } == Array(0..<200))
        #expect(
            statements[2].sql
                == "INSERT INTO t(a, b) VALUES (?, ?), (?, ?), (?, ?), (?, ?) ON CONFLICT DO NOTHING")
        for statement in statements {
            #expect(statement.sql.filter { $0 == "?" }.count == statement.arguments.count)
        }
    }

    @Test func oneRowAndNoRows() {
        let one = MultiRowInsert.statements("INSERT INTO t(a, b, c)", [[1, 2, 3]])
        #expect(one.map(\.sql) == ["INSERT INTO t(a, b, c) VALUES (?, ?, ?) "])
        #expect(one.flatMap { Self.numbers($0.arguments) } == [1, 2, 3])
        #expect(MultiRowInsert.statements("INSERT INTO t(a)", []).isEmpty)
        let single = MultiRowInsert.statements("INSERT INTO t(a)", [[7], [8], [9]])
        #expect(single.map(\.sql) == ["INSERT INTO t(a) VALUES (?), (?) ", "INSERT INTO t(a) VALUES (?) "])
    }
}
