import ChatProtocol
import Foundation
import SQLiteKit
import Synchronization

/// A committed change and the users it concerns, handed to the realtime hub.
public struct PublishedChange: Sendable {
    /// The change's row (its global id: orders nothing clients see).
    public let id: Int64
    /// The change; its `seq` is 0, each reader's is their position.
    public let change: ChangePayload
    /// `change` as stored, without `seq` (`StoredChange`).
    public let body: String
    /// Who sees it, sorted, each once.
    public let audience: [String]
    /// Each reader's position for it, set at the end of the writing transaction.
    public var positions: [Position] = []
}

/// chatd's storage on embedded SQLite: one writer connection behind a lock (SQLite has a
/// single writer anyway), and a few reader connections for concurrent reads in WAL mode.
///
/// Every write runs in one immediate transaction together with the changelog rows it
/// produces and the positions it gives them; the changes are published while the write lock
/// is still held, so the realtime stream sees each user's changes in position order.
public final class Store: Sendable {
    let writer: LockedConnection
    let readers: [LockedConnection]
    private let nextReader = Atomic<Int>(0)
    let clock: any ServerClock
    /// Changes kept for replay (0: all). Older cursors get `cursor_expired`.
    let retention: Int64
    private let publisher = PublisherSlot()
    /// The last time handed out by `stamp()`.
    private let lastStamp = Atomic<Int64>(0)
    /// The deployment's epoch (lower-case hex), the first part of every changelog cursor.
    let epoch: String

    static let encoder = JSONEncoder()
    static let decoder = JSONDecoder()

    /// Opens (creating and migrating) `directory/chatd.sqlite`.
    public init(directory: URL, clock: any ServerClock, retention: Int64 = 0, readers: Int = 4) throws {
        let path = directory.appendingPathComponent("chatd.sqlite").path
        try Self.makePrivate(directory: directory, database: path)
        let writer = try Connection(path: path)
        try writer.execute("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA cache_size = -32000; PRAGMA wal_autocheckpoint = 20000")
        try writer.addGreatestAndLeast()
        try Schema.migrator.migrate(writer)
        self.epoch = try Self.loadEpoch(writer)
        self.writer = LockedConnection(writer)
        self.readers = try (0..<max(1, readers)).map { _ in
            let reader = try Connection(path: path)
            try reader.execute("PRAGMA query_only = ON; PRAGMA cache_size = -16000")
            try reader.addGreatestAndLeast()
            return LockedConnection(reader)
        }
        self.clock = clock
        self.retention = retention
    }

    /// The data directory 0700 and the database with its `-wal` and `-shm` 0600, fixed on every
    /// start (an older chatd left them 0755 and 0644, readable by every local account). The
    /// database is created 0600 before SQLite opens it: SQLite gives `-wal` and `-shm` its mode.
    static func makePrivate(directory: URL, database path: String) throws {
        let files = FileManager.default
        try files.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try files.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory.path)
        if !files.fileExists(atPath: path) {
            guard files.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                throw SQLiteError(code: .cantOpen, message: "cannot create \(path)")
            }
        }
        for file in [path, path + "-wal", path + "-shm"] where files.fileExists(atPath: file) {
            try files.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
        }
    }

    /// Sets who receives committed changes (the realtime hub).
    public func onCommit(_ publish: @escaping @Sendable ([PublishedChange]) -> Void) {
        publisher.set(publish)
    }

    /// Runs `body` in an immediate transaction on the writer; publishes the changes it
    /// recorded after commit, before releasing the lock.
    func write<T: Sendable>(_ body: (Connection, inout [PublishedChange]) throws -> T) throws -> T {
        try writer.withConnection { db in
            var changes: [PublishedChange] = []
            let result = try db.transaction {
                let result = try body($0, &changes)
                try Self.assignPositions($0, &changes)
                return result
            }
            if !changes.isEmpty { publisher.publish(changes) }
            return result
        }
    }

    /// The time for a write, epoch milliseconds: call it inside `write`, so stamps follow
    /// commit order, and each is strictly greater than the last, so `sentAfter` /
    /// `updatedAfter` paging never skips a row that shares a millisecond.
    func stamp() -> Int64 {
        let next = max(clock.now(), lastStamp.load(ordering: .relaxed) + 1)
        lastStamp.store(next, ordering: .relaxed)
        return next
    }

    /// Runs `body` under the write lock without a transaction (for atomic hand-offs such as
    /// registering a realtime subscriber at a known head).
    func withWriteLock<T: Sendable>(_ body: (Connection) throws -> T) rethrows -> T {
        try writer.withConnection { try body($0) }
    }

    /// Closes every connection; the last close checkpoints and removes the WAL file.
    public func close() throws {
        for reader in readers { try reader.withConnection { try $0.close() } }
        try writer.withConnection { try $0.close() }
    }

    /// Runs `body` on one of the reader connections.
    func read<T: Sendable>(_ body: (Connection) throws -> T) throws -> T {
        let index = nextReader.add(1, ordering: .relaxed).newValue % readers.count
        return try readers[index].withConnection { db in
            try db.transaction(.deferred) { try body($0) }
        }
    }

    static func json(_ value: (some Encodable)?) throws -> String? {
        guard let value else { return nil }
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func decodeJSON<T: Decodable>(_ type: T.Type, _ text: String?) throws -> T? {
        guard let text else { return nil }
        return try decoder.decode(type, from: Data(text.utf8))
    }
}

/// Who receives committed changes; set once at start-up, read on every write.
final class PublisherSlot: @unchecked Sendable {  // `publish` is only touched under `lock`
    private let lock = NSLock()
    private var publish: (@Sendable ([PublishedChange]) -> Void)?

    func set(_ publish: @escaping @Sendable ([PublishedChange]) -> Void) {
        lock.lock()
        self.publish = publish
        lock.unlock()
    }

    func publish(_ changes: [PublishedChange]) {
        lock.lock()
        let target = publish
        lock.unlock()
        target?(changes)
    }
}
