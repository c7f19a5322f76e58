import Foundation
import OfflineChatLocking
import OfflineChatProtocol
import OfflineChatSQLite
import Synchronization

/// A committed change and the users it concerns, handed to the realtime hub.
public struct PublishedChange: Sendable {
    /// The change's row (its global id: orders nothing clients see), given when it is stored.
    public internal(set) var id: Int64
    /// The change; its `seq` is 0, each reader's is their position.
    public let change: ChangePayload
    /// `change` as stored, without `seq` (`StoredChange`).
    public let body: String
    /// Whose own log it goes into, sorted, each once: a group's change goes into its group's
    /// log (`groupLog`) and only into the log of the member whose span it opens or closes.
    public let audience: [String]
    /// Each reader's position for it, set at the end of the writing transaction.
    public var positions: [Position] = []
    /// The group conversation whose own log holds it (every member's change of a group), nil
    /// for a change of the users' own (a direct message, a receipt, a feed item).
    public let groupLog: String?
    /// Its position in that log, set with `positions`.
    public var groupPosition: Int64?
    /// What it does to a membership span of the group (`group_spans`), if anything.
    public var span: SpanChange?
    /// The message whose kept text (`message_bodies`) its stored row refers to instead of
    /// holding a copy (`StoredChange.byReference`), if any.
    var referencedMessage: Int64?
}

/// A change's place in its group's log, and what it does to memberships: a reader of group
/// logs (`c3`) follows the group's position with it.
public struct GroupPlace: Sendable, Equatable {
    /// The group's conversation.
    public let conversationId: String
    /// The change's position in the group's log.
    public let pts: Int64
    public let span: SpanChange?

    /// Whether this change ends `uid`'s membership (they read nothing of the group after it).
    func ends(for uid: String) -> Bool { span == .closes(uid) || span == .closesAll }
}

/// How a group change moves its members' spans of membership: a member sees the group's
/// changes after their span's start (the change before their join) up to its end (the change
/// that removed them, included).
public enum SpanChange: Sendable, Equatable {
    /// `uid` joined or was added with this change.
    case opens(String)
    /// `uid` left, was kicked or banned with this change.
    case closes(String)
    /// The group was deleted with this change: every open span ends.
    case closesAll

    /// The one member whose span it opens or closes.
    var member: String? {
        switch self {
        case .opens(let uid), .closes(let uid): uid
        case .closesAll: nil
        }
    }
}

/// chatd's storage: the domain's operations (in the `Store+…` files) as SQL that runs on
/// either engine (`StoreEngine`): embedded SQLite, or PostgreSQL for several nodes.
///
/// Every write runs in one transaction together with the changelog rows it produces and the
/// positions it gives them (`storeChanges`, last); the changes are published once it has
/// committed (on SQLite while its single writer's lock is still held).
public final class Store: Sendable {
    let engine: any StoreEngine
    let clock: any ServerClock
    /// Changes kept for replay (0: all). Older cursors get `cursor_expired`.
    let retention: Int64
    private let publisher = PublisherSlot()
    /// Sends waiting to commit together (`writeTogether`).
    let groupCommit = GroupCommit()
    /// Bearer tokens found valid lately (`session(token:)`).
    let sessions = SessionCache()
    /// The last time handed out by `stamp()`.
    private let lastStamp = Atomic<Int64>(0)
    /// The deployment's epoch (lower-case hex), the first part of every changelog cursor.
    let epoch: String

    static let decoder = JSONDecoder()

    /// Opens (creating and migrating) `directory/chatd.sqlite`.
    public convenience init(directory: URL, clock: any ServerClock, retention: Int64 = 0, readers: Int = 4) throws {
        try self.init(
            engine: try SQLiteEngine(directory: directory, readers: readers), clock: clock, retention: retention)
    }

    /// Connects to PostgreSQL at `url` (`postgres://…`), migrating its schema.
    public convenience init(
        postgres url: String, clock: any ServerClock, retention: Int64 = 0, connections: Int = 8
    ) throws {
        try self.init(
            engine: try PostgresEngine(url: url, connections: connections), clock: clock, retention: retention)
    }

    /// The store `configuration` names: PostgreSQL at `database`, else SQLite in `dataDirectory`.
    public static func open(
        _ configuration: ServerConfiguration, clock: any ServerClock, connections: Int? = nil
    ) throws -> Store {
        let retention = configuration.changelogRetention
        if let url = configuration.database {
            return try Store(
                postgres: url, clock: clock, retention: retention,
                connections: connections ?? configuration.databaseConnections)
        }
        // A reader for each request thread: a read never waits for another to finish.
        return try Store(
            directory: configuration.dataDirectory, clock: clock, retention: retention,
            readers: connections ?? Int(configuration.workerThreads))
    }

    init(engine: any StoreEngine, clock: any ServerClock, retention: Int64) throws {
        self.engine = engine
        self.clock = clock
        self.retention = retention
        self.epoch = try engine.read { try Self.loadEpoch($0) }
    }

    /// `sqlite` or `postgresql`.
    public var engineName: String { engine.name }
    /// The engine's connection pool at this moment (nil on SQLite).
    var connectionUsage: ConnectionUsage? { engine.usage }

    /// The bytes the database's tables and indexes take now: PostgreSQL's size of the
    /// database; SQLite's pages in its main file (what a checkpoint leaves there).
    public func databaseBytes() throws -> Int {
        try read { db in try engine.databaseBytes(db) }
    }

    /// Whether a query reaches the database now.
    public func isReachable() -> Bool {
        (try? read { try $0.scalar("SELECT 1", as: Int64.self) }) == 1
    }

    /// Sets who receives committed changes (the realtime hub).
    public func onCommit(_ publish: @escaping @Sendable ([PublishedChange]) -> Void) {
        publisher.set(publish)
    }

    /// Runs `body` in a write transaction, numbers the changes it recorded for their readers,
    /// and publishes them once committed.
    func write<T: Sendable>(_ body: (any SQLDatabase, inout [PublishedChange]) throws -> T) throws -> T {
        var changes: [PublishedChange] = []
        return try engine.write(
            { db in
                changes = []  // a retried run starts over
                let result = try body(db, &changes)
                try storeChanges(db, &changes)
                return result
            },
            committed: {
                if !changes.isEmpty { publisher.publish(changes) }
            })
    }

    /// The time for a write, epoch milliseconds: call it inside `write`, so stamps follow
    /// commit order, and each is strictly greater than the last, so `sentAfter` /
    /// `updatedAfter` paging never skips a row that shares a millisecond. Concurrent writers
    /// (PostgreSQL) never get the same one.
    func stamp() -> Int64 {
        while true {
            let last = lastStamp.load(ordering: .relaxed)
            let next = max(clock.now(), last + 1)
            if lastStamp.compareExchange(expected: last, desired: next, ordering: .relaxed).exchanged { return next }
        }
    }

    /// Closes every connection; on SQLite the last close checkpoints and removes the WAL file.
    public func close() throws { try engine.close() }

    /// Runs `body` on a consistent snapshot.
    func read<T: Sendable>(_ body: (any SQLDatabase) throws -> T) throws -> T {
        try engine.read(body)
    }

    /// Runs `body`, which runs exactly one statement (its own snapshot).
    func readStatement<T: Sendable>(_ body: (any SQLDatabase) throws -> T) throws -> T {
        try engine.readStatement(body)
    }

    /// Runs `body` with `inOneStatement` true as `readStatement` (no transaction: two
    /// statements fewer on SQLite, two round trips on PostgreSQL). A body that would need a
    /// second statement answers nil at once instead, and then runs again in one transaction
    /// (`read`), with `inOneStatement` false, where it must answer.
    func readInOneStatementIfItCan<T: Sendable>(
        _ body: (_ db: any SQLDatabase, _ inOneStatement: Bool) throws -> T?
    ) throws -> T {
        if let answer = try readStatement({ try body($0, true) }) { return answer }
        return try read { db in
            guard let answer = try body(db, false) else {
                throw StoreError.broken("a read in one transaction asked for another")
            }
            return answer
        }
    }

    static func json(_ value: (some Encodable)?) throws -> String? {
        guard let value else { return nil }
        return String(decoding: try CompactJSONEncoder().encode(value), as: UTF8.self)
    }

    static func decodeJSON<T: Decodable>(_ type: T.Type, _ text: String?) throws -> T? {
        guard let text else { return nil }
        return try decoder.decode(type, from: Data(text.utf8))
    }
}

/// Who receives committed changes; set once at start-up, read on every write.
final class PublisherSlot: Sendable {
    private let target = Locked<(@Sendable ([PublishedChange]) -> Void)?>(nil)

    func set(_ publish: @escaping @Sendable ([PublishedChange]) -> Void) { target.withLock { $0 = publish } }

    func publish(_ changes: [PublishedChange]) { target.current?(changes) }
}
