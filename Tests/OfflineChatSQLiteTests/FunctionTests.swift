import OfflineChatSQLite
import Testing

@Suite struct FunctionTests {
    @Test func greatestAndLeastIgnoreNullsAsPostgreSQLDoes() throws {
        let db = try Connection(path: ":memory:")
        try db.addGreatestAndLeast()
        #expect(try db.scalar("SELECT greatest(3, 9, 4)") == 9 as Int64)
        #expect(try db.scalar("SELECT least(3, 9, 4)") == 3 as Int64)
        #expect(try db.scalar("SELECT greatest(NULL, 2)") == 2 as Int64)
        #expect(try db.scalar("SELECT least(5, NULL)") == 5 as Int64)
        #expect(try db.scalar("SELECT greatest(NULL, NULL)", as: Int64?.self) == .some(nil))
        #expect(try db.scalar("SELECT greatest(2, 2.5)") == 2.5)
        #expect(try db.scalar("SELECT greatest(9223372036854775806, 9223372036854775807)") == Int64.max)
        #expect(try db.scalar("SELECT greatest('apple', 'banana', 'ab')") == "banana")
        #expect(try db.scalar("SELECT least('apple', 'banana', 'ab')") == "ab")
        try db.execute("CREATE TABLE t(a INTEGER); INSERT INTO t VALUES (4)")
        try db.run("UPDATE t SET a = greatest(a, ?)", [7])
        #expect(try db.scalar("SELECT a FROM t") == 7 as Int64)
    }
}
