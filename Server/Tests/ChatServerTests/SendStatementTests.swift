import ChatProtocol
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
    /// (the send then makes it), the next one for one that is. On PostgreSQL the time comes
    /// back from the locking statement itself (`RETURNING`): a `SELECT` of its own runs in a
    /// snapshot of its own, and could find a conversation another transaction made after the
    /// `UPDATE` found none, and hand out a time with no lock held.
    @Test(arguments: GroupCommitTests.engines) func theLocksTimeComesFromTheRowItLocked(engine: String) throws {
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
        if engine == "postgresql" {
            let statements = store.lockConversationStatements(id)
            #expect(statements.count == 1 && statements[0].sql.hasSuffix("RETURNING last_stamp"), "\(statements)")
        }
    }
}
