import Testing

@testable import ChatServer

/// The statements every send runs for itself, not once for its batch: its checks and its
/// conversation's lock. On SQLite none of them builds a temporary table (`OpenEphemeral` in
/// its program): an OR of the blocks' two keys and a value read back through `RETURNING` each
/// did, for every send (opened, begun and dropped: about 34,000 of a send's 550,000
/// instructions, `scripts/bench-instructions.sh`).
struct SendStatementTests {
    @Test func aSendsOwnStatementsBuildNoTemporaryTable() throws {
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
}
