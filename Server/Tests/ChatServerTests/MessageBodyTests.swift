import Foundation
import OfflineChatProtocol
import OfflineChatSQLite
import Testing

@testable import ChatServer

/// A page of messages splices each message's kept JSON (`Store.keepBody`): after every kind of
/// change to a message the page must read as the message built from its columns (the same
/// JSON), and rows kept from before bodies existed must read the same way.
struct MessageBodyTests {
    /// The page `uid` reads, and the same messages built from their columns and encoded.
    static func pageAndRebuilt(
        _ store: Store, _ query: MessageQuery, for uid: String
    ) throws -> (page: String, rebuilt: String) {
        let page = String(decoding: try store.messages(query, for: uid).bytes, as: UTF8.self)
        let ids = try JSONDecoder().decode([MessagePayload].self, from: Data(page.utf8)).map(\.id)
        let built = try store.read { db in try Store.loadMessages(db, ids: ids) }
        let rebuilt = try ids.map { id in
            String(decoding: try CompactJSONEncoder().encode(try #require(built[id])), as: UTF8.self)
        }
        return (page, "[" + rebuilt.joined(separator: ",") + "]")
    }

    /// The same JSON: every key and value alike, fields left out alike, a dictionary's keys in
    /// any order (the encoder writes them in the dictionary's own order).
    static func sameJSON(_ a: String, _ b: String) throws -> Bool {
        let (left, right) = (
            try JSONSerialization.jsonObject(with: Data(a.utf8)), try JSONSerialization.jsonObject(with: Data(b.utf8))
        )
        return (left as? NSObject)?.isEqual(right) == true
    }

    /// Messages without a kept text (no row in `message_bodies`, or a NULL body there).
    static let unkeptCount = """
        SELECT count(*) FROM messages m
        LEFT JOIN message_bodies b ON b.conversation_id = m.conversation_id AND b.id = m.id
        WHERE b.body IS NULL
        """

    static func expectCurrent(
        _ store: Store, _ query: MessageQuery, for uid: String, after change: String, allKept: Bool = true,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let (page, rebuilt) = try pageAndRebuilt(store, query, for: uid)
        #expect(
            try sameJSON(page, rebuilt), "after \(change): \(page) against \(rebuilt)", sourceLocation: sourceLocation)
        let unkept = try store.read { db in
            try db.scalar(Self.unkeptCount, as: Int.self)
        }
        #expect(!allKept || unkept == 0, "every message keeps its body", sourceLocation: sourceLocation)
    }

    @Test(arguments: GroupCommitTests.engines) func everyChangeOfAMessageKeepsItsPageCurrent(engine: String) throws {
        let store = try GroupCommitTests.store(engine)
        for uid in ["ann", "ben", "cat"] { _ = try store.createUser(CreateUserRequest(uid: uid)) }
        let direct = MessageQuery(scope: .conversation(ConversationPayload.directID("ann", "ben")))
        let first = try store.send(from: "ann", SendMessageRequest(muid: "m1", receiver: "ben", text: "hello")).message
        try Self.expectCurrent(store, direct, for: "ben", after: "a send")
        _ = try store.edit(
            first.id, by: "ann", EditMessageRequest(text: "hello, edited", metadata: ["k": .string("v")]))
        try Self.expectCurrent(store, direct, for: "ben", after: "an edit")
        _ = try store.react("👍", to: first.id, by: "ben")
        _ = try store.react("🎉", to: first.id, by: "ann")
        try Self.expectCurrent(store, direct, for: "ann", after: "reactions")
        _ = try store.unreact("🎉", from: first.id, by: "ann")
        try Self.expectCurrent(store, direct, for: "ann", after: "a reaction removed")
        let reply = try store.send(
            from: "ben", SendMessageRequest(muid: "r1", receiver: "ann", text: "a reply", parentMessageId: first.id)
        ).message
        try Self.expectCurrent(store, direct, for: "ann", after: "a reply (the parent's count)")
        try Self.expectCurrent(store, MessageQuery(scope: .thread(parentId: first.id)), for: "ann", after: "a reply")
        _ = try store.delete(reply.id, by: "ben")
        try Self.expectCurrent(store, direct, for: "ann", after: "a deleted reply (the parent's count again)")
        let call = try store.send(
            from: "ann", SendMessageRequest(muid: "c1", receiver: "ben", category: .call, type: "audio")
        ).message
        _ = try store.edit(call.id, by: "ben", EditMessageRequest(callStatus: .ongoing))
        try Self.expectCurrent(store, direct, for: "ben", after: "a call's move")
        _ = try store.delete(first.id, by: "ann")
        try Self.expectCurrent(store, direct, for: "ben", after: "a deletion")
        let (page, _) = try Self.pageAndRebuilt(store, direct, for: "ben")
        #expect(try JSONDecoder().decode([MessagePayload].self, from: Data(page.utf8)).count == 3)

        _ = try store.createGroup(CreateGroupRequest(guid: "g1", name: "G"), by: "ann", passwordHash: nil)
        _ = try store.addMember("g1", "cat", scope: .participant, by: "ann")
        _ = try store.send(
            from: "cat", SendMessageRequest(muid: "g1m", receiver: "g1", receiverType: .group, text: "hi all"))
        let group = MessageQuery(scope: .conversation(ConversationPayload.groupID("g1")))
        try Self.expectCurrent(store, group, for: "ann", after: "a member's action message and a group send")
    }

    /// The conversation list splices each last message's kept JSON: a page reads as the same
    /// values encoded, each last message as its columns give it, peers with the blocks between
    /// them, pages joined by their cursor; last messages stored before bodies read the same.
    /// A send answers the message built from what it inserted, not read back: it must be
    /// the message its stored columns give, JSON fields and all, and the body it keeps too.
    /// Its answer's JSON is the text it kept (encoded once), and a repeat answers the same.
    @Test(arguments: GroupCommitTests.engines) func aSendAnswersTheMessageItsRowHolds(engine: String) throws {
        let store = try GroupCommitTests.store(engine)
        for uid in ["ann", "ben"] { _ = try store.createUser(CreateUserRequest(uid: uid)) }
        let customData: JSONValue = .object([
            "n": .number(1.5), "whole": .number(2), "big": .number(1e21), "tiny": .number(-0.000123),
            "list": .array([.null, .bool(true), .string("a \"quoted\" \\ line\n")])
        ])
        let sends = [
            SendMessageRequest(
                muid: "j1", receiver: "ben", text: "with JSON", customData: customData,
                metadata: ["k": .string("v"), "nested": .object(["x": .number(0.1)])]),
            SendMessageRequest(muid: "j2", receiver: "ben", category: .call, type: "video"),
            SendMessageRequest(muid: "j3", receiver: "ben", type: "custom", customData: .array([]), metadata: [:])
        ]
        for request in sends {
            let sent = try store.sendEncoded(from: "ann", request)
            let answered = sent.message
            let stored = try #require(try store.read { try Store.loadMessage($0, id: answered.id) })
            #expect(answered == stored, "\(request.muid)")
            let kept: String? = try store.read { db in
                try db.scalar("SELECT body FROM message_bodies WHERE id = ?", [answered.id])
            }
            let json = String(decoding: try sent.json().bytes, as: UTF8.self)
            #expect(sent.created && json == kept, "\(request.muid)")
            #expect(
                try Self.sameJSON(json, String(decoding: try CompactJSONEncoder().encode(stored), as: UTF8.self)),
                "\(request.muid)")
            let repeated = try store.sendEncoded(from: "ann", request)
            #expect(
                try !repeated.created
                    && Self.sameJSON(String(decoding: try repeated.json().bytes, as: UTF8.self), json),
                "\(request.muid) repeated")
        }
        try Self.expectCurrent(
            store, MessageQuery(scope: .conversation(ConversationPayload.directID("ann", "ben"))), for: "ben",
            after: "sends with JSON fields")
    }

    @Test(arguments: GroupCommitTests.engines) func theListsLastMessagesAreTheirKeptBodies(engine: String) throws {
        let store = try GroupCommitTests.store(engine)
        for uid in ["ann", "ben", "cat"] { _ = try store.createUser(CreateUserRequest(uid: uid)) }
        let hi = try store.send(from: "ann", SendMessageRequest(muid: "m1", receiver: "ben", text: "hi")).message
        _ = try store.react("👍", to: hi.id, by: "ben")
        _ = try store.send(from: "cat", SendMessageRequest(muid: "m2", receiver: "ann", text: "yo"))
        _ = try store.setBlock("cat", by: "ann", blocking: true)
        func list(limit: Int = 30, cursor: String? = nil) throws -> (bytes: [UInt8], page: Page<ConversationPayload>) {
            let bytes = try store.conversations(for: "ann", cursor: cursor, limit: limit).bytes
            return (bytes, try JSONDecoder().decode(Page<ConversationPayload>.self, from: Data(bytes)))
        }
        let (bytes, page) = try list()
        #expect(bytes == (try CompactJSONEncoder().encode(page)), "the shape of a page encoded from its values")
        #expect(page.items.map(\.conversationId) == ["ann~cat", "ann~ben"])
        #expect(page.next == nil)
        #expect(page.items[0].conversationWith.user?.blockedByMe == true)
        #expect(page.items[1].conversationWith.user?.blockedByMe == nil)
        for item in page.items {
            let last = try #require(item.lastMessage)
            let built = try store.read { db in try Store.loadMessages(db, ids: [last.id]) }
            #expect(try CompactJSONEncoder().encode(last) == (try CompactJSONEncoder().encode(built[last.id])))
        }
        #expect(page.items[1].lastMessage?.reactions?.first?.count == 1)
        let first = try list(limit: 1)
        #expect(first.page.next != nil)
        let second = try list(limit: 1, cursor: first.page.next)
        #expect((first.page.items + second.page.items).map(\.conversationId) == ["ann~cat", "ann~ben"])
        try store.write { db, _ in try db.run("UPDATE message_bodies SET body = NULL") }
        #expect(try list().bytes == bytes, "last messages stored before bodies were kept")
        #expect(try store.conversation("ann~ben", for: "ann").bytes == (try CompactJSONEncoder().encode(page.items[1])))
    }

    /// A page asks for the reader's member row; whoever has none gets the reason, whether the
    /// conversation holds messages or not, and a member of an empty one gets an empty page.
    @Test(arguments: GroupCommitTests.engines) func aPageIsForMembersAndEveryOtherReaderLearnsWhy(
        engine: String
    ) throws {
        let store = try GroupCommitTests.store(engine)
        for uid in ["ann", "ben", "cat", "dan"] { _ = try store.createUser(CreateUserRequest(uid: uid)) }
        func code(_ conversation: String, for uid: String) -> ErrorCode? {
            do {
                _ = try store.messages(MessageQuery(scope: .conversation(conversation)), for: uid)
                return nil
            } catch let error as StoreError {
                return error.code
            } catch {
                return .internalError
            }
        }
        _ = try store.send(from: "ann", SendMessageRequest(muid: "d1", receiver: "ben", text: "private"))
        #expect(code("ann~ben", for: "cat") == .forbidden)
        #expect(code("ann~zed", for: "ann") == .notFound)
        _ = try store.createGroup(CreateGroupRequest(guid: "open", name: "Open"), by: "ann", passwordHash: nil)
        _ = try store.createGroup(
            CreateGroupRequest(guid: "closed", name: "Closed", type: .private), by: "ann", passwordHash: nil)
        #expect(
            String(
                decoding: try store.messages(MessageQuery(scope: .conversation("group_closed")), for: "ann").bytes,
                as: UTF8.self
            ).hasPrefix("["))
        for member in ["ben", "cat", "dan"] { _ = try store.addMember("open", member, scope: .participant, by: "ann") }
        _ = try store.send(
            from: "ann", SendMessageRequest(muid: "g1", receiver: "open", receiverType: .group, text: "to all"))
        try store.kick("open", "ben", by: "ann")
        _ = try store.ban("open", "cat", by: "ann")
        #expect(code("group_open", for: "dan") == nil)
        #expect(code("group_open", for: "ben") == .forbidden, "kicked")
        #expect(code("group_open", for: "cat") == .banned)
        #expect(code("group_closed", for: "ben") == .notFound, "a private group is hidden from outsiders")
        try store.deleteGroup("open", by: "ann")
        #expect(code("group_open", for: "dan") == .notFound, "deleted")
        #expect(code("group_open", for: "ann") == .notFound, "deleted for its owner too")
    }

    /// Kept bodies are `MessagePayload`'s JSON as it was when they were written. A change of its
    /// fields must come with a migration (SQLite and PostgreSQL) setting `message_bodies.body` back
    /// to NULL, or pages keep serving the old shape; this list is the reminder.
    @Test func aChangeOfTheMessageShapeComesWithAMigrationThatResetsKeptBodies() {
        let message = MessagePayload(
            id: 1, muid: nil, conversationId: "a~b", sender: "a", receiver: "b", receiverType: .user,
            category: .message, type: "text", text: nil, attachment: nil, customData: nil, metadata: nil, sentAt: 0,
            updatedAt: 0, editedAt: nil, deletedAt: nil)
        #expect(
            Mirror(reflecting: message).children.compactMap(\.label) == [
                "id", "muid", "conversationId", "sender", "receiver", "receiverType", "category", "type", "text",
                "attachment", "customData", "metadata", "sentAt", "updatedAt", "editedAt", "deletedAt", "reactions",
                "parentMessageId", "replyCount", "callStatus", "action"
            ], "MessagePayload changed: add migrations that set message_bodies.body = NULL, then update this list")
    }

    /// An export from before `message_bodies` kept each message's text in its `messages` row:
    /// it imports, and every message reads as before (texts built from their columns).
    @Test(arguments: GroupCommitTests.engines) func anExportFromBeforeTheBodiesTableImports(engine: String) throws {
        let source = try GroupCommitTests.store("sqlite")
        for uid in ["ann", "ben"] { _ = try source.createUser(CreateUserRequest(uid: uid)) }
        let first = try source.send(from: "ann", SendMessageRequest(muid: "o1", receiver: "ben", text: "one")).message
        _ = try source.send(from: "ben", SendMessageRequest(muid: "o2", receiver: "ann", text: "two"))
        _ = try source.react("👍", to: first.id, by: "ben")
        let direct = MessageQuery(scope: .conversation(ConversationPayload.directID("ann", "ben")))
        let (before, _) = try Self.pageAndRebuilt(source, direct, for: "ben")
        var lines: [String] = []
        try source.export { lines.append($0) }
        // The old shape: each body back in its message's row, no `message_bodies` lines.
        var bodies: [Int64: DeploymentExport.Value] = [:]
        for line in lines.dropFirst() {
            let row = try JSONDecoder().decode(DeploymentExport.Line.self, from: Data(line.utf8))
            if row.table == "message_bodies", case .integer(let id)? = row.row["id"] { bodies[id] = row.row["body"] }
        }
        #expect(bodies.count == 2)
        let old =
            try [lines[0]]
            + lines.dropFirst().compactMap { line -> String? in
                let parsed = try JSONDecoder().decode(DeploymentExport.Line.self, from: Data(line.utf8))
                guard parsed.table != "message_bodies" else { return nil }
                guard parsed.table == "messages", case .integer(let id)? = parsed.row["id"] else { return line }
                var row = parsed.row
                row["body"] = bodies[id]
                return String(
                    decoding: try JSONEncoder().encode(DeploymentExport.Line(table: parsed.table, row: row)),
                    as: UTF8.self)
            }
        let target = try GroupCommitTests.store(engine)
        try target.importDeployment(lines: old, keepEpoch: true)
        let (after, rebuilt) = try Self.pageAndRebuilt(target, direct, for: "ben")
        #expect(try Self.sameJSON(after, before) && Self.sameJSON(after, rebuilt), "\(after) against \(before)")
        #expect(try target.read { try $0.scalar(Self.unkeptCount, as: Int.self) } == 2, "built from their columns")
    }

    /// Rows from before the column (NULL) are built from their columns, among kept ones.
    @Test(arguments: GroupCommitTests.engines) func messagesStoredBeforeBodiesReadTheSame(engine: String) throws {
        let store = try GroupCommitTests.store(engine)
        for uid in ["ann", "ben"] { _ = try store.createUser(CreateUserRequest(uid: uid)) }
        var ids: [Int64] = []
        for index in 1...4 {
            let sent = try store.send(
                from: "ann", SendMessageRequest(muid: "m\(index)", receiver: "ben", text: "text \(index)"))
            ids.append(sent.message.id)
        }
        _ = try store.react("👍", to: ids[1], by: "ben")
        let query = MessageQuery(scope: .conversation(ConversationPayload.directID("ann", "ben")))
        let before = String(decoding: try store.messages(query, for: "ben").bytes, as: UTF8.self)
        try store.write { db, _ in
            try db.run("UPDATE message_bodies SET body = NULL WHERE id = ? OR id = ?", [ids[1], ids[2]])
        }
        #expect(
            try store.read { db in try db.scalar(Self.unkeptCount, as: Int.self) }
                == 2)
        let after = String(decoding: try store.messages(query, for: "ben").bytes, as: UTF8.self)
        #expect(after == before)
        try Self.expectCurrent(store, query, for: "ben", after: "two bodies dropped", allKept: false)
    }
}
