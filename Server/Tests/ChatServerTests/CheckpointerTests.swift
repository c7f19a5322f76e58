import Foundation
import SQLiteKit
import Testing

@testable import ChatServer

/// chatd's checkpoints run off the writer: woken by commits, they move the WAL into the
/// database while the writer carries on.
@Suite(.timeLimit(.minutes(1))) struct CheckpointerTests {
    /// A pool whose WAL only the checkpointer moves, with a table `t(n, pad)`.
    static func pool(in directory: URL) throws -> DatabasePool {
        try DatabasePool(
            directory: directory, name: "c.sqlite", readers: 1,
            prepareWriter: { db in
                try db.execute("PRAGMA wal_autocheckpoint = 0; CREATE TABLE IF NOT EXISTS t(n INTEGER, pad TEXT)")
            })
    }

    @Test func everyFewCommitsTheWALIsCheckpointedOnTheCheckpointersThread() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("checkpointer-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let pool = try Self.pool(in: directory)
        let outcomes = AsyncStream<(Int, Int)>.makeStream()
        let checkpointer = Checkpointer(pool: pool) { outcomes.continuation.yield(($0, $1)) }
        for n in 0..<Checkpointer.commitsPerCheckpoint {
            try pool.withWriter { try $0.run("INSERT INTO t VALUES (?, ?)", [n, String(repeating: "x", count: 1_000)]) }
            checkpointer.committed()
        }
        var heard = outcomes.stream.makeAsyncIterator()
        let outcome = try #require(await heard.next(), "the commits woke the checkpointer")
        #expect(
            outcome.0 >= Checkpointer.commitsPerCheckpoint && outcome.1 == outcome.0, "every frame moved: \(outcome)")
        checkpointer.stop()  // returns once its thread has
        checkpointer.committed()  // after the stop: nothing runs, nothing hangs
        try pool.close()
    }

    /// Once the WAL is large, commits that land while the first pass copies are copied too
    /// (the second pass, with the writer held): the WAL is then all in the database, and the
    /// next commit starts it over from its beginning instead of growing it.
    @Test func commitsDuringACheckpointAreCopiedTooAndTheWALStartsOver() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("checkpointer-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let pool = try Self.pool(in: directory)
        let pad = String(repeating: "x", count: 1_000)
        @Sendable func commit(_ n: Int) throws {
            try pool.withWriter { try $0.run("INSERT INTO t VALUES (?, ?)", [n, pad]) }
        }
        let outcomes = AsyncStream<(Int, Int)>.makeStream()
        let checkpointer = Checkpointer(
            pool: pool, restartFrames: 1, checkpointed: { outcomes.continuation.yield(($0, $1)) },
            betweenPasses: { for n in 0..<50 { try? commit(-n) } })
        for n in 0..<Checkpointer.commitsPerCheckpoint {
            try commit(n)
            checkpointer.committed()
        }
        var heard = outcomes.stream.makeAsyncIterator()
        let outcome = try #require(await heard.next())
        #expect(outcome.1 == outcome.0, "all of the WAL is in the database, the 50 commits too: \(outcome)")
        checkpointer.stop()
        try commit(1_000)
        let after = try pool.checkpoint()
        #expect(after.frames <= 4, "the WAL started over: only the last commit is in it (\(after))")
        try pool.close()
    }
}
