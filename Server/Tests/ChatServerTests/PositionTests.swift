import Foundation
import OfflineChatProtocol
import OfflineChatSQLite
import OfflineChatServerProcess
import Synchronization
import Testing

@testable import ChatServer

/// Per-user positions under concurrent writers on PostgreSQL, driven in-process: a reader
/// never passes a change that commits late, and positions stay gapless however writers
/// interleave. (On SQLite one writer at a time makes both trivially true.)
@Suite(.enabled(if: LiveServer.postgres != nil)) struct PositionTests {
    let url: String
    let store: Store

    init() throws {
        url = try ServerProcess.createDatabase(on: LiveServer.postgres ?? "")
        store = try Store(postgres: url, clock: SystemClock())
        for uid in Self.uids { _ = try store.createUser(CreateUserRequest(uid: uid)) }
    }

    static let uids = ["ann", "ben", "cat", "dan", "eve", "fay"]

    /// One change for `audience` in `conversation`; `beforeCommit` runs inside the
    /// transaction after it was recorded.
    func change(
        for audience: [String], in conversation: String = "test",
        beforeCommit: (any SQLDatabase) throws -> Void = { _ in }
    ) throws {
        try store.write { db, changes in
            try store.record(db, .notificationCreated, conversationId: conversation, audience: audience, into: &changes)
            try beforeCommit(db)
        }
    }

    /// A transaction takes its change's id, then waits; a second change for the same user
    /// commits meanwhile. A reader paging by position sees both; paging by change id (the
    /// naive design: ids are taken in one order and committed in another) loses the late one.
    /// The late change's row waits in a trigger for an advisory lock the test holds: its id
    /// is taken by then (column defaults come before BEFORE triggers), its position is not.
    @Test func aReaderNeverPassesAChangeThatCommitsLate() throws {
        let naive = try PostgresConnection(url: url)
        try naive.execute(
            """
            CREATE FUNCTION hold_late() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF NEW.conversation_id = 'late' THEN PERFORM pg_advisory_xact_lock_shared(7); END IF;
                RETURN NEW;
            END $$;
            CREATE TRIGGER hold_late BEFORE INSERT ON changes FOR EACH ROW EXECUTE FUNCTION hold_late();
            SELECT pg_advisory_lock(7);
            """)
        let late = Self.thread { [self] in try change(for: ["ben"], in: "late") }
        let deadline = Date().addingTimeInterval(30)
        while try naive.scalar(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted", as: Int64.self) == 0
        {
            guard Date() < deadline else {
                Issue.record("the late change never reached its trigger")
                return
            }
        }
        try change(for: ["ben"])

        func naiveRead(after id: Int64) throws -> [Int64] {
            try naive.query("SELECT change FROM inbox WHERE uid = 'ben' AND change > ? ORDER BY change", [id]).map {
                try $0.get(0)
            }
        }
        let start = try store.changes(
            for: "ben", cursor: ChangelogCursor.encode(epoch: store.epoch, position: 0, groups: [:]), limit: 100)
        #expect(start.count == 1)
        let naiveSeen = try naiveRead(after: 0)
        #expect(naiveSeen.count == 1)

        try naive.execute("SELECT pg_advisory_unlock(7)")
        try late.join()
        let next = try store.changes(for: "ben", cursor: start.cursor, limit: 100)
        #expect(next.count == 1, "the late change has the next position")
        #expect(
            try naiveRead(after: naiveSeen.last!).isEmpty, "the naive reader moved past the late change and lost it")
        #expect(try naive.scalar("SELECT count(*) FROM inbox WHERE uid = 'ben'") == 2 as Int64)
    }

    /// The same for a group's own log (issue #42): a group change that takes its change id,
    /// then waits, gets the group's next position once it commits, after one that committed
    /// meanwhile; a reader paging the group by change id (the naive design) loses it.
    @Test func aGroupReaderNeverPassesAGroupChangeThatCommitsLate() throws {
        let naive = try PostgresConnection(url: url)
        try naive.execute(
            """
            CREATE FUNCTION hold_late_group() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF current_setting('chatd.late', true) = 'yes' THEN PERFORM pg_advisory_xact_lock_shared(8); END IF;
                RETURN NEW;
            END $$;
            CREATE TRIGGER hold_late_group BEFORE INSERT ON changes FOR EACH ROW EXECUTE FUNCTION hold_late_group();
            SELECT pg_advisory_lock(8);
            """)
        @Sendable func groupChange(late: Bool) throws {
            try store.write { db, changes in
                if late { try db.run("SELECT set_config('chatd.late', 'yes', true)", []) }
                try store.record(
                    db, .groupUpdated, conversationId: "group_g", audience: ["ben", "cat"], groupLog: true,
                    into: &changes)
            }
        }
        let late = Self.thread { try groupChange(late: true) }
        let deadline = Date().addingTimeInterval(30)
        while try naive.scalar(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted", as: Int64.self) == 0
        {
            guard Date() < deadline else {
                Issue.record("the late group change never reached its trigger")
                return
            }
        }
        try groupChange(late: false)
        func log() throws -> [(pts: Int64, change: Int64)] {
            try naive.query("SELECT pts, change FROM group_log WHERE conversation_id = 'group_g' ORDER BY pts").map {
                (try $0.get(0), try $0.get(1))
            }
        }
        let before = try log()
        #expect(before.map(\.pts) == [1], "the change that committed first has position 1")
        try naive.execute("SELECT pg_advisory_unlock(8)")
        try late.join()
        let after = try log()
        #expect(after.map(\.pts) == [1, 2], "the late change has the next position: no gap, none skipped")
        #expect(after[1].change < after[0].change, "its change id was taken first")
        let naiveNext: [Int64] = try naive.query(
            "SELECT change FROM group_log WHERE conversation_id = 'group_g' AND change > ? ORDER BY change",
            [before[0].change]
        ).map { try $0.get(0) }
        #expect(naiveNext.isEmpty, "a reader paging by change id moved past the late change and lost it")
        #expect(try naive.scalar("SELECT pts FROM group_heads WHERE conversation_id = 'group_g'") == 2 as Int64)
    }

    /// Eight writers, each change for a random audience in random order, a random pause
    /// before COMMIT, while a reader tails every user's changelog: every user's positions run
    /// 1…head with no gap or duplicate, the tail saw each exactly once in order, and no write
    /// failed (deadlocks and serialization failures are retried whole). Writers and the tail
    /// are threads of their own: they block on the database, which tasks must not.
    @Test func concurrentWritersKeepEveryUsersPositionsGapless() throws {
        let writers = 8
        let changesPerWriter = 40
        let done = Atomic(false)
        let seen = Shared<[String: [Int64]]>([:])
        let tail = Self.thread { [self] in
            var cursors = Dictionary(
                uniqueKeysWithValues: Self.uids.map {
                    ($0, ChangelogCursor.encode(epoch: store.epoch, position: 0, groups: [:]))
                })
            var finalPass = false
            while !finalPass {
                finalPass = done.load(ordering: .acquiring)
                for uid in Self.uids {
                    let page = try store.changes(for: uid, cursor: cursors[uid], limit: 50)
                    let positions = try JSONDecoder().decode(ChangelogPage.self, from: Data(page.json.bytes)).changes
                        .map(\.seq)
                    seen.withLock { $0[uid, default: []] += positions }
                    cursors[uid] = page.cursor
                }
            }
        }
        let threads = (0..<writers).map { writer in
            Self.thread { [self] in
                var random = SeededRandom(seed: UInt64(writer + 1))
                for _ in 0..<changesPerWriter {
                    let audience = Self.uids.filter { _ in random.next() % 2 == 0 }.shuffled(using: &random)
                    let pause = Double(random.next() % 3) / 1000
                    try change(for: audience.isEmpty ? ["ann"] : audience) { db in
                        try db.run("SELECT pg_sleep(?)", [pause])
                    }
                }
            }
        }
        let failures = threads.compactMap { thread in Result { try thread.join() }.failure }
        done.store(true, ordering: .releasing)
        try tail.join()
        #expect(failures.isEmpty, "\(failures)")
        let db = try PostgresConnection(url: url)
        var total: Int64 = 0
        for uid in Self.uids {
            let head: Int64 = try db.scalar("SELECT pts FROM user_heads WHERE uid = ?", [uid]) ?? 0
            let positions: [Int64] = try db.query("SELECT pts FROM inbox WHERE uid = ? ORDER BY pts", [uid]).map {
                try $0.get(0)
            }
            #expect(positions == Array(stride(from: 1, through: head, by: 1)), "\(uid)'s positions")
            #expect(seen.withLock { $0[uid] } == positions, "\(uid)'s tail saw each change once, in order")
            total += head
        }
        #expect(total >= Int64(writers * changesPerWriter))
    }

    /// `body` on a thread of its own; `join()` waits for it and rethrows what it threw.
    static func thread(_ body: @escaping @Sendable () throws -> Void) -> Joinable {
        let joinable = Joinable()
        Thread { joinable.finish(Result { try body() }) }.start()
        return joinable
    }
}

/// A thread's end: its result once it has finished.
final class Joinable: @unchecked Sendable {  // `result` is written before `ended` is signalled, read after
    private let ended = DispatchSemaphore(value: 0)
    private var result: Result<Void, any Error> = .success(())

    func finish(_ result: Result<Void, any Error>) {
        self.result = result
        ended.signal()
    }

    func join() throws {
        ended.wait()
        try result.get()
    }
}

extension Result {
    var failure: Failure? { if case .failure(let error) = self { error } else { nil } }
}

/// A value threads share under a lock.
final class Shared<Value>: @unchecked Sendable {  // `value` is only touched under `lock`
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<T>(_ body: (inout Value) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
