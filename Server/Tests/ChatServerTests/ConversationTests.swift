import Foundation
import OfflineChatProtocol
import OfflineChatSQLite
import Testing

@testable import ChatServer

@Suite struct ConversationTests {
    @Test func theListIsOrderedByLastActivityAndPagesWithoutGapsOrRepeats() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        var peers: [String] = []
        for index in 0..<7 {
            let uid = "peer\(index)"
            _ = try await server.user(uid)
            peers.append(uid)
            try await server.send("hi \(index)", from: alice, to: uid)
        }
        try await server.send("bump", from: alice, to: "peer2")
        var seen: [ConversationPayload] = []
        var cursor: String?
        repeat {
            let query = "?limit=3" + (cursor.map { "&cursor=\($0)" } ?? "")
            let page = try await server.request("GET", Endpoints.conversations + query, token: alice).decode(
                Page<ConversationPayload>.self)
            #expect(page.items.count <= 3)
            seen += page.items
            cursor = page.next
        } while cursor != nil
        #expect(seen.map(\.conversationWith.id) == ["peer2", "peer6", "peer5", "peer4", "peer3", "peer1", "peer0"])
        #expect(seen.first?.lastMessage?.text == "bump")
    }

    /// Each member's list moves with every write that moves a conversation: a group's
    /// messages and member actions as well as direct messages, whoever wrote them.
    @Test func groupsAndMemberActionsMoveEachMembersList() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        let carol = try await server.user("carol")
        let group = ConversationPayload.groupID("g")
        func list(_ token: String) async throws -> [String] {
            try await server.request("GET", Endpoints.conversations, token: token)
                .decode(Page<ConversationPayload>.self).items.map(\.conversationId)
        }
        try await server.group("g", by: alice)
        #expect([200, 201].contains(try await server.addMember("bob", to: "g", by: alice)))
        try await server.send("hi", from: alice, to: "carol")
        #expect(try await list(alice) == ["alice~carol", group])
        #expect(try await server.sendToGroup("news", from: bob, to: "g").status == 201)
        #expect(try await list(alice) == [group, "alice~carol"])
        #expect(try await list(bob) == [group])
        try await server.send("back", from: carol, to: "alice")
        #expect(try await list(alice) == ["alice~carol", group])
        #expect([200, 201].contains(try await server.addMember("carol", to: "g", by: alice)))
        #expect(try await list(alice) == [group, "alice~carol"], "the member action is the group's newest message")
        #expect(try await list(carol) == [group, "alice~carol"])
    }

    /// A deployment from before each member kept its conversations' times (17), or their
    /// minutes (18): the migrations fill them in, the list keeps its order, and a page is read
    /// in the order of their index (it stops at the page's end instead of sorting every
    /// conversation of the user).
    @Test(.enabled(if: LiveServer.onSQLite), arguments: [17, 18])
    func listsFromBeforeTheRecencyIndexKeepTheirOrder(version: Int) async throws {
        let server = try LiveServer()
        let alice = try await server.user("alice")
        for peer in ["bob", "carol", "dave"] { _ = try await server.user(peer) }
        for peer in ["carol", "bob", "dave", "carol"] { try await server.send("to \(peer)", from: alice, to: peer) }
        let order = ["alice~carol", "alice~dave", "alice~bob"]
        #expect(try await server.conversationIds(alice, pageSize: 1) == order)
        server.stop()
        let path = server.dataDirectory.appendingPathComponent("chatd.sqlite").path
        let db = try Connection(path: path)
        try OldSchema.rewind(db, to: version)
        try db.close()
        let restarted = try LiveServer(dataDirectory: server.dataDirectory)
        let token = try await restarted.token("alice")
        #expect(try await restarted.conversationIds(token, pageSize: 1) == order, "a page a conversation")
        let reader = try Connection(path: path)
        for (time, id) in [(Int64.max, ""), (1_796_000_000_000, "alice~carol")] {  // a first and a later page
            let plan = try reader.query(
                "EXPLAIN QUERY PLAN SELECT * FROM \(Store.directPageMembers) d",
                ["alice", time, id, 3, Store.recency(of: time)]
            ).map { try $0.get("detail", as: String.self) }
            #expect(
                plan.contains {
                    $0.contains("members_by_recency (uid=? AND (recency,updated_at,conversation_id)<(?,?,?))")
                }, "\(plan)")
            #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(plan)")
        }
        let replaced: Int? = try reader.scalar("SELECT count(*) FROM sqlite_schema WHERE name = 'members_by_user'")
        #expect(replaced == 0, "members_by_recency begins with the uid: the old index went")
        try reader.close()
    }

    @Test func unreadCountsFollowReadReceipts() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        var ids: [Int64] = []
        for index in 0..<4 { ids.append(try await server.send("m\(index)", from: alice, to: "bob").id) }
        let path = "\(Endpoints.conversations)/alice~bob"
        #expect(
            try await server.request("GET", path, token: bob).decode(ConversationPayload.self).unreadMessageCount == 4)
        #expect(
            try await server.request("GET", path, token: alice).decode(ConversationPayload.self).unreadMessageCount == 0
        )
        let delivered = try await server.request(
            "POST", path + "/delivered", token: bob, json: ReceiptRequest(messageId: ids[3]))
        #expect(delivered.status == 200)
        let read = try await server.request("POST", path + "/read", token: bob, json: ReceiptRequest(messageId: ids[1]))
        #expect(try read.decode(ReceiptPayload.self).messageId == ids[1])
        let bobView = try await server.request("GET", path, token: bob).decode(ConversationPayload.self)
        #expect(bobView.unreadMessageCount == 2)
        #expect(bobView.lastReadMessageId == ids[1] && bobView.lastDeliveredMessageId == ids[3])
        let aliceView = try await server.request("GET", path, token: alice).decode(ConversationPayload.self)
        #expect(aliceView.peerReadMessageId == ids[1] && aliceView.peerDeliveredMessageId == ids[3])
        // Receipts never move backwards, and deleted messages do not count as unread.
        let backwards = try await server.request(
            "POST", path + "/read", token: bob, json: ReceiptRequest(messageId: ids[0]))
        #expect(try backwards.decode(ReceiptPayload.self).messageId == ids[1])
        _ = try await server.request("DELETE", "\(Endpoints.messages)/\(ids[3])", token: alice)
        #expect(
            try await server.request("GET", path, token: bob).decode(ConversationPayload.self).unreadMessageCount == 1)
    }

    /// Group members' kept counts: a newcomer starts at zero, everyone else counts the action
    /// messages and messages they did not write, and one who comes back starts afresh.
    @Test func unreadCountsInAGroupFollowJoinsMessagesAndReturns() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        try await server.group("g", by: alice)
        for index in 0..<3 { _ = try await server.sendToGroup("before \(index)", from: alice, to: "g") }
        func unread(_ token: String) async throws -> Int {
            try await server.request("GET", "\(Endpoints.conversations)/group_g", token: token).decode(
                ConversationPayload.self
            ).unreadMessageCount
        }
        #expect(try await server.addMember("bob", to: "g", by: alice) == 201)
        #expect(try await unread(bob) == 0, "the history before coming in is not unread")
        for index in 0..<2 { _ = try await server.sendToGroup("after \(index)", from: alice, to: "g") }
        _ = try await server.sendToGroup("bob's own", from: bob, to: "g")
        #expect(try await unread(bob) == 0, "sending reads everything before one's own message")
        _ = try await server.sendToGroup("one more", from: alice, to: "g")
        #expect(try await unread(bob) == 1)
        #expect(try await unread(alice) == 0, "her own last message read bob's before it")
        _ = try await server.request("DELETE", "\(Endpoints.groups)/g/members/bob", token: alice)
        _ = try await server.sendToGroup("while bob is out", from: alice, to: "g")
        #expect(try await server.addMember("bob", to: "g", by: alice) == 201)
        #expect(try await unread(bob) == 0, "back in: counted afresh")
    }

    @Test func aReceiptForAMessageOutsideTheConversationIs422() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        _ = try await server.user("bob")
        _ = try await server.user("carol")
        try await server.send("x", from: alice, to: "bob")
        let other = try await server.send("y", from: alice, to: "carol")
        let reply = try await server.request(
            "POST", "\(Endpoints.conversations)/alice~bob/read", token: alice,
            json: ReceiptRequest(messageId: other.id))
        #expect(reply.status == 422)
    }

    @Test func historyPagesBackwardAndForward() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        _ = try await server.user("bob")
        var ids: [Int64] = []
        for index in 0..<10 { ids.append(try await server.send("m\(index)", from: alice, to: "bob").id) }
        let path = "\(Endpoints.conversations)/alice~bob/messages"
        let newest = try await server.request("GET", path + "?limit=3", token: alice).decode([MessagePayload].self)
        #expect(newest.map(\.id) == Array(ids[7...]))
        let older = try await server.request("GET", path + "?limit=3&before=\(ids[7])", token: alice).decode(
            [MessagePayload].self)
        #expect(older.map(\.id) == Array(ids[4..<7]))
        let newer = try await server.request("GET", path + "?limit=4&after=\(ids[1])", token: alice).decode(
            [MessagePayload].self)
        #expect(newer.map(\.id) == Array(ids[2..<6]))
        #expect(try await server.request("GET", path + "?before=1&after=2", token: alice).status == 400)
    }

    /// The authorization matrix: carol is not part of alice–bob.
    @Test func aUserNeverReadsAConversationTheyAreNotPartOf() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        _ = try await server.user("bob")
        let carol = try await server.user("carol")
        let message = try await server.send("private", from: alice, to: "bob")
        let base = "\(Endpoints.conversations)/alice~bob"
        #expect(try await server.request("GET", base, token: carol).status == 403)
        #expect(try await server.request("GET", base + "/messages", token: carol).status == 403)
        #expect(
            try await server.request("POST", base + "/read", token: carol, json: ReceiptRequest(messageId: message.id))
                .status == 403)
        #expect(try await server.request("GET", "\(Endpoints.messages)/\(message.id)", token: carol).status == 403)
        #expect(
            try await server.request(
                "PATCH", "\(Endpoints.messages)/\(message.id)", token: carol, json: EditMessageRequest(text: "x")
            ).status == 403)
        #expect(try await server.request("DELETE", "\(Endpoints.messages)/\(message.id)", token: carol).status == 403)
        let list = try await server.request("GET", Endpoints.conversations, token: carol).decode(
            Page<ConversationPayload>.self)
        #expect(list.items.isEmpty)
        let changes = try await server.request(
            "GET", "\(Endpoints.changes)?cursor=\(try await server.beginning(carol))", token: carol
        ).decode(
            ChangelogPage.self)
        #expect(changes.changes.isEmpty)
        #expect(try await server.request("GET", "\(Endpoints.conversations)/nobody~none", token: carol).status == 404)
    }

    @Test func usersListPagesInUidOrder() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        for uid in ["dave", "bob", "carol", "erin"] { _ = try await server.user(uid) }
        let first = try await server.request("GET", Endpoints.users + "?limit=2", token: alice).decode(
            Page<UserPayload>.self)
        #expect(first.items.map(\.uid) == ["alice", "bob"])
        let second = try await server.request(
            "GET", Endpoints.users + "?limit=2&cursor=\(first.next ?? "")", token: alice
        ).decode(Page<UserPayload>.self)
        #expect(second.items.map(\.uid) == ["carol", "dave"])
        let one = try await server.request("GET", Endpoints.users + "/erin", token: alice)
        #expect(try one.decode(UserPayload.self).uid == "erin")
        #expect(try await server.request("GET", Endpoints.users + "/zed", token: alice).status == 404)
    }
}

@Suite struct ConversationIdentityTests {
    /// uids may contain `_`; pairs that would collide under a `_user_` separator stay apart.
    @Test func pairsWithLookalikeUidsGetSeparateConversations() async throws {
        let server = try InProcessServer()
        let a = try await server.user("a")
        _ = try await server.user("b_user_c")
        let ab = try await server.user("a_user_b")
        let c = try await server.user("c")
        try await server.send("for b_user_c", from: a, to: "b_user_c")
        let other = try await server.send("for c", from: ab, to: "c")
        #expect(other.conversationId != ConversationPayload.directID("a", "b_user_c"))
        #expect(try await server.request("GET", "\(Endpoints.messages)/\(other.id)", token: a).status == 403)
        let list = try await server.request("GET", Endpoints.conversations, token: c).decode(
            Page<ConversationPayload>.self)
        #expect(list.items.map(\.conversationWith.id) == ["a_user_b"])
    }
}
