import Foundation
import OfflineChatProtocol
import Testing

@testable import ChatServer

/// Reads answered by one statement with no transaction around it, and the reads that need more
/// and are read again in one transaction (`Store.readInOneStatementIfItCan`).
struct ReadInOneStatementTests {
    @Test(arguments: GroupCommitTests.engines) func aBodyThatAnswersAtOnceRunsOnceAndOneThatAsksRunsAgain(
        engine: String
    ) throws {
        let store = try GroupCommitTests.store(engine)
        var runs: [Bool] = []
        let once: Int = try store.readInOneStatementIfItCan { db, inOneStatement in
            runs.append(inOneStatement)
            return try db.scalar("SELECT 1")
        }
        #expect(once == 1 && runs == [true])
        runs = []
        let again: Int = try store.readInOneStatementIfItCan { db, inOneStatement in
            runs.append(inOneStatement)
            return inOneStatement ? nil : try db.scalar("SELECT 2")
        }
        #expect(again == 2 && runs == [true, false])
        #expect(throws: StoreError.self) {
            let _: Int = try store.readInOneStatementIfItCan { _, _ in nil }
        }
    }

    /// A conversation's page with messages is one statement; an empty page (which asks whether
    /// the caller may read it) and a thread (which checks its parent first) are not.
    @Test(arguments: GroupCommitTests.engines) func whichPagesOfMessagesAreOneStatement(engine: String) throws {
        let store = try GroupCommitTests.store(engine)
        for uid in ["ann", "ben", "cat"] { _ = try store.createUser(CreateUserRequest(uid: uid)) }
        let (sent, _) = try store.send(from: "ann", SendMessageRequest(muid: "m1", receiver: "ben", text: "hi"))
        let conversation = MessageQuery(scope: .conversation(sent.conversationId))
        func inOneStatement(_ query: MessageQuery, for uid: String = "ann") throws -> String? {
            try store.readStatement { db in
                try Store.messages(db, query, for: uid, inOneStatement: true).map {
                    String(decoding: $0.bytes, as: UTF8.self)
                }
            }
        }
        let page = try #require(try inOneStatement(conversation))
        #expect(page == String(decoding: try store.messages(conversation, for: "ben").bytes, as: UTF8.self))
        #expect(page.contains(#""text":"hi""#))
        #expect(try inOneStatement(conversation, for: "cat") == nil, "no rows: is it a 403?")
        #expect(throws: StoreError.self) { try store.messages(conversation, for: "cat") }
        var older = conversation
        older.beforeId = sent.id
        #expect(try inOneStatement(older) == nil)
        #expect(String(decoding: try store.messages(older, for: "ann").bytes, as: UTF8.self) == "[]")
        #expect(try inOneStatement(MessageQuery(scope: .thread(parentId: sent.id))) == nil)
    }
}
