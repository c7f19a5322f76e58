import Foundation
import OfflineChatSQLite
import Testing

/// The writer-plus-readers pool the cache and chatd share.
@Suite struct DatabasePoolTests {
    let dir = TemporaryDirectory()

    func makePool(readers: Int = 2) throws -> DatabasePool {
        try DatabasePool(
            directory: dir.url.appendingPathComponent("db"), name: "pool.sqlite", readers: readers,
            prepareWriter: { try $0.execute("CREATE TABLE IF NOT EXISTS t(n INTEGER)") })
    }

    func mode(_ path: String) throws -> Int {
        try (FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    /// Runs `body` while another thread holds one of `pool`'s readers in a read.
    func whileAReaderIsBusy(_ pool: DatabasePool, _ body: () throws -> Void) throws {
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            _ = try? pool.read { _ in
                entered.signal()
                release.wait()
            }
            finished.signal()
        }
        entered.wait()
        defer {
            release.signal()
            finished.wait()
        }
        try body()
    }

    @Test func everyReaderSeesWhatTheWriterCommittedAndNoReaderCanWrite() throws {
        let pool = try makePool()
        try pool.withWriter { db in try db.transaction { try $0.run("INSERT INTO t VALUES (1), (2)") } }
        func check() throws {
            #expect(try pool.read { try $0.scalar("SELECT count(*) FROM t") as Int? } == 2)
            #expect(throws: SQLiteError.self) { try pool.read { try $0.run("INSERT INTO t VALUES (3)") } }
        }
        try check()  // the idle reader used last
        try whileAReaderIsBusy(pool) { try check() }  // that one busy: the other
        try pool.close()
    }

    /// A read takes a reader that is idle: it never queues behind a busy one while another idles.
    @Test func aReadTakesAnIdleReaderWhileAnotherIsBusy() throws {
        let pool = try makePool(readers: 2)
        try whileAReaderIsBusy(pool) {
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                for _ in 0..<4 { _ = try? pool.read { try $0.scalar("SELECT count(*) FROM t") as Int? } }
                done.signal()
            }
            #expect(done.wait(timeout: .now() + 30) == .success, "four reads while one reader is held")
        }
        try pool.close()
    }

    @Test func eachWriteHasItsOwnScratchAndARolledBackWriteLosesIt() throws {
        struct Boom: Error {}
        let pool = try makePool()
        let first = try pool.write(startingWith: [Int]()) { db, noted in
            try db.run("INSERT INTO t VALUES (1)")
            noted.append(1)
            return "one"
        }
        #expect(first.result == "one" && first.scratch == [1])
        #expect(throws: Boom.self) {
            try pool.write(startingWith: [Int]()) { db, noted in
                try db.run("INSERT INTO t VALUES (2)")
                noted.append(2)
                throw Boom()
            }
        }
        let third = try pool.write(startingWith: [Int]()) { db, noted in
            noted.append(3)
            return try db.scalar("SELECT group_concat(n) FROM t") as String?
        }
        #expect(third.scratch == [3], "nothing of an earlier write, committed or not, reaches the next")
        #expect(third.result == "1", "the failed write rolled back")
        try pool.close()
    }

    @Test func aCheckpointOffTheWriterMovesTheWALIntoTheDatabaseAndTheWALStartsOver() throws {
        let pool = try DatabasePool(
            directory: dir.url.appendingPathComponent("db"), name: "wal.sqlite", readers: 1,
            prepareWriter: { db in
                try db.execute("PRAGMA wal_autocheckpoint = 0; CREATE TABLE IF NOT EXISTS t(n INTEGER, pad TEXT)")
            })
        let wal = pool.path + "-wal"
        func walBytes() throws -> Int {
            try (FileManager.default.attributesOfItem(atPath: wal)[.size] as? NSNumber)?.intValue ?? 0
        }
        for n in 0..<200 {
            try pool.withWriter { try $0.run("INSERT INTO t VALUES (?, ?)", [n, String(repeating: "x", count: 2_000)]) }
        }
        let grown = try walBytes()
        try pool.syncFiles()  // before any checkpoint: nothing to flush from
        let (frames, checkpointed) = try pool.checkpoint()
        #expect(frames > 100 && checkpointed == frames, "every frame is in the database now")
        try pool.syncFiles()  // the database file and the WAL, from the checkpoint's connection
        for n in 200..<400 {
            try pool.withWriter { try $0.run("INSERT INTO t VALUES (?, ?)", [n, String(repeating: "x", count: 2_000)]) }
        }
        #expect(try walBytes() <= grown, "the writer started the WAL over instead of growing it")
        #expect(try pool.read { try $0.scalar("SELECT count(*) FROM t") as Int? } == 400)
        try pool.close()
    }

    @Test func aClosedPoolRefusesEveryUseAndLeavesDeletedFilesDeleted() throws {
        let directory = dir.url.appendingPathComponent("closed")
        let pool = try DatabasePool(
            directory: directory, name: "c.sqlite", readers: 1,
            prepareWriter: { try $0.execute("CREATE TABLE IF NOT EXISTS t(n INTEGER)") })
        try pool.close()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: pool.path + suffix) }
        #expect(throws: SQLiteError.self) { try pool.withWriter { try $0.run("INSERT INTO t VALUES (1)") } }
        #expect(throws: SQLiteError.self) { try pool.read { try $0.scalar("SELECT count(*) FROM t") as Int? } }
        #expect(throws: SQLiteError.self) { try pool.checkpoint() }
        #expect(throws: SQLiteError.self) { try pool.syncFiles() }
        #expect(!FileManager.default.fileExists(atPath: pool.path), "no use of a closed pool creates its file")
    }

    /// The rows a read (`read` or `readStatement`) counts before and after a write that
    /// commits between its two statements, starting from one row.
    func countsAroundAWrite(
        _ pool: DatabasePool, _ read: ((Connection) throws -> (Int?, Int?)) throws -> (Int?, Int?)
    ) throws -> (before: Int?, after: Int?) {
        try pool.withWriter { try $0.run("INSERT INTO t VALUES (1)") }
        return try read { db in
            let before: Int? = try db.scalar("SELECT count(*) FROM t")
            try pool.withWriter { try $0.run("INSERT INTO t VALUES (2)") }
            return (before, try db.scalar("SELECT count(*) FROM t"))
        }
    }

    @Test func aReadIsOneSnapshot() throws {
        let pool = try makePool(readers: 1)
        let (before, after) = try countsAroundAWrite(pool) { try pool.read($0) }
        #expect(before == 1 && after == 1, "a write committed during the read is not seen by it")
        #expect(try pool.read { try $0.scalar("SELECT count(*) FROM t") as Int? } == 2)
        try pool.close()
    }

    /// A read of single statements holds no snapshot: each statement sees what was committed
    /// before it, and none is kept once the read is over (a kept one would hide later writes
    /// from the reader's next use, and keep the WAL from starting over).
    @Test func aReadOfStatementsTakesASnapshotPerStatementAndKeepsNone() throws {
        let pool = try makePool(readers: 1)
        let (before, after) = try countsAroundAWrite(pool) { try pool.readStatement($0) }
        #expect(before == 1 && after == 2)
        var seen: [Int] = []
        try pool.readStatement { db in
            try db.forEachRow("SELECT n FROM t ORDER BY n") { row in
                seen.append(row.int(0))
                return false  // stops at the first row, the statement still stepping
            }
        }
        #expect(seen == [1])
        try pool.withWriter { try $0.run("INSERT INTO t VALUES (3)") }
        #expect(try pool.readStatement { try $0.scalar("SELECT count(*) FROM t") as Int? } == 3)
        #expect(try pool.read { try $0.scalar("SELECT count(*) FROM t") as Int? } == 3)
        let (frames, copied) = try pool.checkpoint()
        #expect(frames > 0 && frames == copied, "no reader holds a snapshot that keeps frames in the WAL")
        try pool.close()
    }

    @Test func theFilesArePrivateToThisAccountEvenWhenAnOlderVersionLeftThemOpen() throws {
        let pool = try makePool()
        try pool.withWriter { try $0.run("INSERT INTO t VALUES (1)") }
        let directory = dir.url.appendingPathComponent("db").path
        #expect(try mode(directory) == 0o700)
        for file in [pool.path, pool.path + "-wal", pool.path + "-shm"] { #expect(try mode(file) == 0o600, "\(file)") }
        try pool.close()
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: pool.path)
        let reopened = try makePool()
        #expect(try mode(directory) == 0o700 && mode(reopened.path) == 0o600)
        try reopened.close()
    }
}
