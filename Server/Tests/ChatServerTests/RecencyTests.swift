import ChatProtocol
import Testing

@testable import ChatServer

/// A member row's minute (`conversation_members.recency`), which the database computes from its
/// time, and a list page's position, which `Store.recency(of:)` computes: a page's bound is
/// right only while the two agree.
struct RecencyTests {
    @Test(arguments: GroupCommitTests.engines) func theDatabasesMinuteIsTheStoresMinute(engine: String) throws {
        let store = try GroupCommitTests.store(engine)
        for uid in ["ann", "ben"] { _ = try store.createUser(CreateUserRequest(uid: uid)) }
        _ = try store.send(from: "ann", SendMessageRequest(muid: "m", receiver: "ben", text: "m"))
        let conversationId = ConversationPayload.directID("ann", "ben")
        for time: Int64 in [0, 59_999, 60_000, 1_796_000_039_999, 1_796_000_040_000, -1, -60_000, -60_001] {
            let minute: Int64? = try store.write { db, _ in
                try db.run(
                    "UPDATE conversation_members SET updated_at = ? WHERE conversation_id = ?", [time, conversationId])
                return try db.scalar(
                    "SELECT recency FROM conversation_members WHERE conversation_id = ? AND uid = 'ann'",
                    [conversationId])
            }
            #expect(minute == Store.recency(of: time), "at \(time)")
        }
    }
}
