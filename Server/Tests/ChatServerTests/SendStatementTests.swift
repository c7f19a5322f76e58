import OfflineChatProtocol
import OfflineChatServerProcess
import Testing

@testable import ChatServer

/// The statements every send runs for itself, not once for its batch: its checks and its
/// conversation's lock.
struct SendStatementTests {
    /// On SQLite none of them builds a temporary table (`OpenEphemeral` in its program): an OR
    /// of the blocks' two keys and a time read back through `RETURNING` each did, for every
    /// send (opened, begun and dropped: about 34,000 of a send's 550,000 instructions,
    /// `scripts/bench-instructions.sh`).
    @Test func aSendsOwnStatementsBuildNoTemporaryTableOnSQLite() throws {
        let store = try GroupCommitTests.store("sqlite")
        let statements =
            [
                (Store.sendChecksQuery, ["ann", "m1", "ben"]),
                ("SELECT \(Store.blocksBetween("?1", "?2"))", ["ann", "ben"])
            ]
            + store.lockConversationStatements("ann~ben")
        for (sql, arguments) in statements {
            let program: [String] = try store.write { db, _ in
                try db.query("EXPLAIN \(sql)", arguments).map { try $0.get(1) }
            }
            #expect(program.contains("Halt"), "an EXPLAIN lists the program: \(program)")
            #expect(!program.contains("OpenEphemeral"), "\(sql)")
        }
    }

    /// The lock gives a time only for a conversation it locked: none for one that is not there
    /// (the send then makes it), a later one each time for one that is.
    @Test(arguments: GroupCommitTests.engines) func theLockGivesATimeOnlyForARowItLocked(engine: String) throws {
        let store = try GroupCommitTests.store(engine)
        for uid in ["ann", "ben"] { _ = try store.createUser(CreateUserRequest(uid: uid)) }
        let id = ConversationPayload.directID("ann", "ben")
        let lock = { () throws -> Int64? in
            try store.write { db, _ in try Store.lockedStamp(try db.queries(store.lockConversationStatements(id))) }
        }
        #expect(try lock() == nil, "no conversation, no time")
        _ = try store.send(from: "ann", SendMessageRequest(muid: "m1", receiver: "ben", text: "hi"))
        let first = try #require(try lock())
        #expect(try #require(try lock()) > first, "each lock moves the time on")
    }

    /// On PostgreSQL, a conversation another transaction makes (and commits) while the lock's
    /// statements run gives the lock no time: it found no row to lock. Its time comes back
    /// from the locking statement itself (`RETURNING`); a `SELECT` of its own, in a snapshot
    /// of its own, would read that row and hand out a time with no lock held. The other
    /// transaction commits here between the lock's first statement and the rest.
    @Test(.enabled(if: LiveServer.postgres != nil))
    func aConversationMadeMeanwhileGivesThePostgresLockNoTime() throws {
        let url = try ServerProcess.createDatabase(on: LiveServer.postgres!)
        let store = try Store(postgres: url, clock: SystemClock())
        defer { try? store.close() }
        let id = ConversationPayload.directID("ann", "ben")
        let statements = store.lockConversationStatements(id)
        let locking = try PostgresConnection(url: url)
        try locking.execute("BEGIN")
        var answers = [try locking.query(statements[0].sql, statements[0].arguments)]
        try PostgresConnection(url: url).run(
            "INSERT INTO conversations(id, type, updated_at) VALUES (?, 'user', 1)", [id])
        for statement in statements.dropFirst() {
            answers.append(try locking.query(statement.sql, statement.arguments))
        }
        try locking.execute("ROLLBACK")
        #expect(try Store.lockedStamp(answers) == nil, "\(statements.map(\.sql))")
    }
}
