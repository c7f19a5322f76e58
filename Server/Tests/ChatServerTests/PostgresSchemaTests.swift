import OfflineChatProtocol
import Testing

@testable import ChatServer

/// chatd's PostgreSQL schema as its migrations leave it.
struct PostgresSchemaTests {
    /// Every text column of a key or an index compares in byte order (`COLLATE "C"`), as SQLite
    /// does: a join of two keys in different collations cannot use the index (migration 6).
    @Test(.enabled(if: LiveServer.postgres != nil)) func everyIndexedTextColumnIsInByteOrder() throws {
        let store = try GroupCommitTests.store("postgresql")
        let others: [String] = try store.read { db in
            try db.query(
                """
                SELECT DISTINCT t.relname || '.' || a.attname
                FROM pg_index i
                JOIN pg_class t ON t.oid = i.indrelid
                JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = current_schema()
                JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = ANY(i.indkey)
                JOIN pg_type ty ON ty.oid = a.atttypid AND ty.typname = 'text'
                LEFT JOIN pg_collation co ON co.oid = a.attcollation
                WHERE co.collname IS DISTINCT FROM 'C' AND t.relname <> 'schema_migrations'
                ORDER BY 1
                """
            ).map { try $0.get(0) }
        }
        #expect(others == [])
        let indexed: Int = try store.read { db in
            try db.scalar(
                """
                SELECT count(*) FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid
                JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = current_schema()
                """) ?? 0
        }
        #expect(indexed > 10, "the query above looks at chatd's indexes")
    }

    /// Migrations 7 and 8: a member's rows by recency (their minute) replace those by user
    /// alone. A later list page is searched from its position in that index, its member rows
    /// are chosen before any join, and they can be sorted a minute at a time (an incremental
    /// sort, shown here by turning whole sorts off; with few rows the planner sorts them whole).
    @Test(.enabled(if: LiveServer.postgres != nil)) func aListPageSearchesTheRecencyIndex() throws {
        let store = try GroupCommitTests.store("postgresql")
        let indexes: [String] = try store.read { db in
            try db.query("SELECT indexdef FROM pg_indexes WHERE tablename = 'conversation_members' ORDER BY 1")
                .map { try $0.get(0) }
        }
        #expect(indexes.contains { $0.contains("members_by_recency") && $0.hasSuffix("(uid, recency)") }, "\(indexes)")
        #expect(!indexes.contains { $0.contains("INDEX members_by_user ") }, "\(indexes)")
        let time: Int64 = 1_796_000_000_000
        let plan: [String] = try store.read { db in
            try db.execute("SET enable_seqscan = off; SET enable_sort = off")
            defer { _ = try? db.execute("RESET enable_seqscan; RESET enable_sort") }
            return try db.query(
                "EXPLAIN \(Store.conversationPageQuery)", ["alice", time, "alice~carol", 3, Store.recency(of: time)]
            ).map { try $0.get(0) }
        }
        let shown = plan.joined(separator: "\n")
        #expect(plan.contains { $0.contains("Index Scan Backward using members_by_recency") }, "\(shown)")
        #expect(
            plan.contains { $0.contains("Index Cond:") && $0.contains("recency <= ") },
            "the position bounds the index: \(shown)")
        #expect(plan.contains { $0.contains("Presorted Key: m.recency") }, "\(shown)")
        let limit = plan.firstIndex { $0.contains("Limit") } ?? 0
        let join = plan.firstIndex { $0.contains("Nested Loop") || $0.contains("Join") } ?? plan.count
        #expect(join < limit, "the page's member rows are chosen, then joined: \(shown)")
    }

    /// Migration 8: the messages of one minute rewrite their members' rows in place (heap-only
    /// updates, no index entry), since the list's index holds each member's minute, the first
    /// message's too (its members come in at its time); a message in a later minute moves the
    /// rows in the index.
    @Test(.enabled(if: LiveServer.postgres != nil)) func aMinutesMessagesRewriteTheirMembersRowsInPlace() throws {
        let clock = FixedClock.atAMinutesStart()
        let store = try GroupCommitTests.store("postgresql", clock: clock)
        for uid in ["ann", "ben"] { _ = try store.createUser(CreateUserRequest(uid: uid)) }
        /// Updates of `conversation_members` in the transaction, and how many of them were heap-only.
        func updates(_ db: any SQLDatabase) throws -> [Int64] {
            try ["pg_stat_get_xact_tuples_updated", "pg_stat_get_xact_tuples_hot_updated"].map {
                try db.scalar("SELECT \($0)('conversation_members'::regclass)") ?? -1
            }
        }
        // A backend's counts gather until it reports them, so they are taken apart from those
        // at the transaction's start.
        let counts: [[Int64]] = try store.write { db, changes in
            let start = try updates(db)
            func send(_ muid: String) throws {
                clock.advance(by: 1_000)
                _ = try store.sendBody(
                    db, from: "ann", SendMessageRequest(muid: muid, receiver: "ben", text: muid), into: &changes)
            }
            for index in 0..<11 { try send("m\(index)") }  // the first makes the conversation and its members
            let sameMinute = try zip(updates(db), start).map { $0 - $1 }
            clock.advance(by: Store.recencySpan)
            try send("next minute")
            return [sameMinute, try zip(updates(db), start).map { $0 - $1 }]
        }
        #expect(counts[0] == [22, 22], "each send rewrote both members' rows, all in place")
        #expect(counts[1] == [24, 22], "a send in the next minute moved both rows in the index")
    }
}
