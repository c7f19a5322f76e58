import Foundation
import OfflineChatProtocol
import OfflineChatServerProcess
import Testing

@testable import ChatServer

/// A member row's minute (`conversation_members.recency`), which the database computes from its
/// time, and a list page's position, which `Store.recency(of:)` computes: a page's bound is
/// right only while the two agree.
struct RecencyTests {
    @Test(arguments: GroupCommitTests.engines) func theDatabasesMinuteIsTheStoresMinute(engine: String) throws {
        let store = try GroupCommitTests.store(engine)
        for uid in ["ann", "ben"] { _ = try store.createUser(CreateUserRequest(uid: uid)) }
        _ = try store.send(from: "ann", SendMessageRequest(muid: "m", receiver: "ben", text: "m"))
        let conversationId = ConversationPayload.directID("ann", "ben")
        for time: Int64 in [0, 59_999, 60_000, 1_796_000_039_999, 1_796_000_040_000, -1, -60_000, -60_001] {
            let minute: Int64? = try store.write { db, _ in
                try db.run(
                    "UPDATE conversation_members SET updated_at = ? WHERE conversation_id = ?", [time, conversationId])
                return try db.scalar(
                    "SELECT recency FROM conversation_members WHERE conversation_id = ? AND uid = 'ann'",
                    [conversationId])
            }
            #expect(minute == Store.recency(of: time), "at \(time)")
        }
    }

    /// A list over several minutes, most with several conversations, read a page of 1, 2 and 3
    /// at a time: every page starts where the one before ended, also inside a minute (where
    /// PostgreSQL's index leaves the order to its sort).
    @Test(arguments: GroupCommitTests.engines) func pagesCrossMinutesInOrder(engine: String) throws {
        let clock = FixedClock.atAMinutesStart()
        let store = try GroupCommitTests.store(engine, clock: clock)
        let newestFirst = try Self.sendOverMinutes(store, clock: clock)
        for size in 1...3 { #expect(try Self.listed(store, pageSize: size) == newestFirst, "pages of \(size)") }
    }

    /// A PostgreSQL deployment from before each member kept its conversation's time (6) or
    /// its minute (7), with conversations over several minutes: migrations 7 and 8 fill both
    /// in as the sends had written them, put the list's index back as it was, and the list
    /// pages in the same order.
    @Test(.enabled(if: LiveServer.postgres != nil), arguments: [6, 7])
    func postgresMigrationsFillInAnOldListsTimesAndMinutes(version: Int) throws {
        let clock = FixedClock.atAMinutesStart()
        let url = try ServerProcess.createDatabase(on: LiveServer.postgres!)
        /// Each member row's time and minute, and the table's indexes.
        func layout(_ db: any SQLDatabase) throws -> [String] {
            let rows: [String] = try db.query(
                """
                SELECT conversation_id || ' ' || uid || ' ' || updated_at || ' ' || recency
                FROM conversation_members ORDER BY conversation_id, uid
                """
            ).map { try $0.get(0) }
            let indexes: [String] = try db.query(
                """
                SELECT indexdef FROM pg_indexes
                WHERE schemaname = current_schema() AND tablename = 'conversation_members' ORDER BY indexname
                """
            ).map { try $0.get(0) }
            return rows + indexes
        }
        let (newestFirst, written): ([String], [String]) = try {
            let store = try Store(postgres: url, clock: clock)
            defer { try? store.close() }
            return (try Self.sendOverMinutes(store, clock: clock), try store.read(layout))
        }()
        #expect(written.count == 18 + 3 && !written.contains { $0.hasSuffix(" 0 0") }, "\(written)")
        do {
            let old = try PostgresConnection(url: url)
            try old.execute("BEGIN")
            try OldSchema.rewindPostgres(old, to: version)
            try old.execute("COMMIT")
        }
        let migrated = try Store(postgres: url, clock: clock)
        defer { try? migrated.close() }
        #expect(try migrated.read(layout) == written, "the times, minutes and indexes as the sends left them")
        for size in 1...3 { #expect(try Self.listed(migrated, pageSize: size) == newestFirst, "pages of \(size)") }
    }

    /// Sends 10 s apart but two a minute apart, from ann to nine peers and p0 again (it moves
    /// to the newest): four minutes, three of them with several conversations. Returns ann's
    /// list as it must read, newest first.
    static func sendOverMinutes(_ store: Store, clock: AdjustableClock) throws -> [String] {
        let peers = (0..<9).map { "p\($0)" }
        for uid in ["ann"] + peers { _ = try store.createUser(CreateUserRequest(uid: uid)) }
        for (index, peer) in (peers + ["p0"]).enumerated() {
            clock.advance(by: [3, 4].contains(index) ? Store.recencySpan : 10_000)
            _ = try store.send(from: "ann", SendMessageRequest(muid: "m\(index)", receiver: peer, text: "\(index)"))
        }
        return (["p0"] + peers.dropFirst().reversed()).map { ConversationPayload.directID("ann", $0) }
    }

    /// ann's conversation ids, paged through `pageSize` at a time (at most 20).
    static func listed(_ store: Store, pageSize: Int) throws -> [String] {
        var listed: [String] = []
        var cursor: String?
        repeat {
            let page = try JSONDecoder().decode(
                Page<ConversationPayload>.self,
                from: Data(try store.conversations(for: "ann", cursor: cursor, limit: pageSize).bytes))
            listed += page.items.map(\.conversationId)
            cursor = page.next
        } while cursor != nil && listed.count < 20
        return listed
    }
}

/// A clock that stays at `time` (moved by `AdjustableClock`).
struct FixedClock: ServerClock {
    let time: Int64
    func now() -> Int64 { time }

    /// A clock to move by hand, at a minute's first millisecond (`Store.recencySpan`).
    static func atAMinutesStart() -> AdjustableClock { AdjustableClock(base: FixedClock(time: 1_796_000_040_000)) }
}
