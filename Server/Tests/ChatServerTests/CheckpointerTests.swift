import Foundation
import SQLiteKit
import Testing

@testable import ChatServer

/// chatd's checkpoints run off the writer: woken by commits, they move the WAL into the
/// database while the writer carries on.
@Suite(.timeLimit(.minutes(1))) struct CheckpointerTests {
    @Test func everyFewCommitsTheWALIsCheckpointedOnTheCheckpointersThread() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("checkpointer-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let pool = try DatabasePool(
            directory: directory, name: "c.sqlite", readers: 1,
            prepareWriter: { db in
                try db.execute("PRAGMA wal_autocheckpoint = 0; CREATE TABLE IF NOT EXISTS t(n INTEGER, pad TEXT)")
            })
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
}
