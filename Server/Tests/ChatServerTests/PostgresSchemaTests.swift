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

    /// Migration 7: a member's rows by recency replace those by user alone, and a later list
    /// page is searched from its position in that index.
    @Test(.enabled(if: LiveServer.postgres != nil)) func aListPageSearchesTheRecencyIndex() throws {
        let store = try GroupCommitTests.store("postgresql")
        let indexes: [String] = try store.read { db in
            try db.query("SELECT indexname FROM pg_indexes WHERE tablename = 'conversation_members' ORDER BY 1")
                .map { try $0.get(0) }
        }
        #expect(indexes.contains("members_by_recency") && !indexes.contains("members_by_user"), "\(indexes)")
        let plan: [String] = try store.read { db in
            try db.execute("SET enable_seqscan = off")
            defer { _ = try? db.execute("RESET enable_seqscan") }
            return try db.query(
                "EXPLAIN \(Store.conversationPageQuery)", ["alice", Int64(1_796_000_000_000), "alice~carol", 3]
            ).map { try $0.get(0) }
        }
        #expect(plan.contains { $0.contains("Index Scan Backward using members_by_recency") })
        #expect(
            plan.contains { $0.contains("Index Cond:") && $0.contains("ROW(updated_at, conversation_id) < ROW(") },
            "the position bounds the index: \(plan.joined(separator: "\n"))")
    }
}
