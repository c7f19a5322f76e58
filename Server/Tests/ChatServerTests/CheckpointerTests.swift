import Foundation
import OfflineChatLocking
import OfflineChatSQLite
import Synchronization
import Testing

@testable import ChatServer

/// chatd's checkpoints run off the writer: woken by commits, they move the WAL into the
/// database while the writer carries on.
@Suite(.timeLimit(.minutes(1))) struct CheckpointerTests {
    /// Runs `body` with a pool of its own whose WAL only a checkpointer moves, with a table
    /// `t(n, pad)`, and closes it.
    static func withPool(_ body: (DatabasePool) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("checkpointer-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let pool = try DatabasePool(
            directory: directory, name: "c.sqlite", readers: 1,
            prepareWriter: { db in
                try db.execute("PRAGMA wal_autocheckpoint = 0; CREATE TABLE IF NOT EXISTS t(n INTEGER, pad TEXT)")
            })
        try await body(pool)
        try pool.close()
    }

    /// One commit of row `n` (about a kilobyte).
    static func insert(_ n: Int, into pool: DatabasePool) throws {
        try pool.withWriter { try $0.run("INSERT INTO t VALUES (?, ?)", [n, String(repeating: "x", count: 1_000)]) }
    }

    /// `count` commits of a row each, each told to `checkpointer` as the writer tells it.
    static func commit(_ count: Int, to pool: DatabasePool, telling checkpointer: Checkpointer) throws {
        for n in 0..<count {
            try insert(n, into: pool)
            checkpointer.committed()
        }
    }

    @Test func everyFewCommitsTheWALIsCheckpointedOnTheCheckpointersThread() async throws {
        try await Self.withPool { pool in
            let outcomes = AsyncStream<(Int, Int)>.makeStream()
            // No pause in these commits counts (`idle`): the last of them is what wakes it.
            let checkpointer = Checkpointer(pool: pool, idle: .seconds(600)) { outcomes.continuation.yield(($0, $1)) }
            try Self.commit(Checkpointer.commitsPerCheckpoint, to: pool, telling: checkpointer)
            var heard = outcomes.stream.makeAsyncIterator()
            let outcome = try #require(await heard.next(), "the commits woke the checkpointer")
            #expect(
                outcome.0 >= Checkpointer.commitsPerCheckpoint && outcome.1 == outcome.0,
                "every frame moved: \(outcome)")
            checkpointer.stop()  // returns once its thread has
            checkpointer.committed()  // after the stop: nothing runs, nothing hangs
        }
    }

    /// Once the WAL is large, commits that land while the passes before it copy are copied too
    /// (the last pass, with the writer held): the WAL is then all in the database, and the
    /// next commit starts it over from its beginning instead of growing it.
    @Test func commitsDuringACheckpointAreCopiedTooAndTheWALStartsOver() async throws {
        try await Self.withPool { pool in
            let outcomes = AsyncStream<(Int, Int)>.makeStream()
            let checkpointer = Checkpointer(
                pool: pool, restartFrames: 1, idle: .seconds(600),
                checkpointed: { outcomes.continuation.yield(($0, $1)) },
                betweenPasses: { for n in 0..<50 { try? Self.insert(-n, into: pool) } })
            try Self.commit(Checkpointer.commitsPerCheckpoint, to: pool, telling: checkpointer)
            var heard = outcomes.stream.makeAsyncIterator()
            let outcome = try #require(await heard.next())
            #expect(outcome.1 == outcome.0, "all of the WAL is in the database, the 50 commits too: \(outcome)")
            checkpointer.stop()
            try Self.insert(1_000, into: pool)
            let after = try pool.checkpoint()
            #expect(after.frames <= 4, "the WAL started over: only the last commit is in it (\(after))")
        }
    }

    /// Commits that wake it again while it holds the writer all land before the held pass, which
    /// copies them: the wake after finds the WAL as that pass left it, all in the database (the
    /// writer's next commit starts it over), and does not hold the writer for it again.
    @Test func aWALAlreadyAllInTheDatabaseIsNotHeldForAgain() async throws {
        try await Self.withPool { pool in
            let outcomes = AsyncStream<(Int, Int)>.makeStream()
            let held = Atomic(0)
            let woken = Locked<Checkpointer?>(nil)
            let checkpointer = Checkpointer(
                pool: pool, restartFrames: 1, idle: .seconds(600),
                checkpointed: { outcomes.continuation.yield(($0, $1)) },
                betweenPasses: {
                    guard held.add(1, ordering: .relaxed).newValue == 1, let checkpointer = woken.current else {
                        return
                    }
                    try? Self.commit(Checkpointer.commitsPerCheckpoint, to: pool, telling: checkpointer)
                })
            woken.withLock { $0 = checkpointer }
            try Self.commit(Checkpointer.commitsPerCheckpoint, to: pool, telling: checkpointer)
            var heard = outcomes.stream.makeAsyncIterator()
            let first = try #require(await heard.next())
            let second = try #require(await heard.next(), "the commits before the held pass woke it again")
            #expect(first.1 == first.0 && second == first, "nothing came in after the held pass: \(first), \(second)")
            #expect(held.load(ordering: .relaxed) == 1, "the writer was held once")
            checkpointer.stop()
            woken.withLock { $0 = nil }  // the hook held it
        }
    }

    /// When the writes pause, what they left is checkpointed whole without waiting for the
    /// `commitsPerCheckpoint`-th commit, and the next commit starts the WAL over.
    @Test func whenWritesPauseTheirFramesAreCheckpointedWhole() async throws {
        try await Self.withPool { pool in
            let outcomes = AsyncStream<(Int, Int)>.makeStream()
            let checkpointer = Checkpointer(pool: pool, idle: .milliseconds(20)) {
                outcomes.continuation.yield(($0, $1))
            }
            try Self.commit(3, to: pool, telling: checkpointer)
            var heard = outcomes.stream.makeAsyncIterator()
            let outcome = try #require(await heard.next(), "the pause woke the checkpointer")
            #expect(outcome.0 >= 3 && outcome.1 == outcome.0, "\(outcome)")
            checkpointer.stop()
            try pool.withWriter { try $0.run("INSERT INTO t VALUES (?, ?)", [3, "after the pause"]) }
            let after = try pool.checkpoint()
            #expect(after.frames <= 2, "the WAL started over (\(after))")
        }
    }
}
