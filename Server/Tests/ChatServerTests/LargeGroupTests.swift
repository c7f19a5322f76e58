import Foundation
import OfflineChatProtocol
import OfflineChatSQLite
import Testing

@testable import ChatServer

// Issue #42: what keeps a group's cost from growing with its size.

/// `POST /v1/groups/{guid}/members` with `members`: many users in one request, each with its
/// own outcome; one that cannot be added leaves the others added.
@Suite struct BulkMembershipTests {
    func add(
        _ members: [AddMemberRequest], to guid: String = "team", by token: String, on server: InProcessServer
    ) async throws -> Reply {
        try await server.request(
            "POST", "\(Endpoints.groups)/\(guid)/members", token: token, json: AddMembersRequest(members: members))
    }

    @Test func manyUsersAreAddedInOneRequestEachWithItsOutcome() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        for uid in ["bob", "carol", "dave", "erin"] { _ = try await server.user(uid) }
        try await server.group("team", by: alice)
        try await server.addMember("erin", to: "team", by: alice)
        #expect(try await server.request("PUT", "\(Endpoints.groups)/team/bans/erin", token: alice).status == 200)

        let reply = try await add(
            [
                AddMemberRequest(uid: "bob"), AddMemberRequest(uid: "carol", scope: .admin),
                AddMemberRequest(uid: "ghost"), AddMemberRequest(uid: "erin"), AddMemberRequest(uid: "bob"),
                AddMemberRequest(uid: "dave", scope: .owner), AddMemberRequest(uid: "dave")
            ], by: alice, on: server)
        #expect(reply.status == 200)
        let outcomes = try reply.decode(AddMembersResponse.self).members
        #expect(outcomes.map(\.uid) == ["bob", "carol", "ghost", "erin", "bob", "dave", "dave"])
        #expect(outcomes.map(\.status) == [.added, .added, .failed, .failed, .member, .failed, .added])
        #expect(outcomes.map { $0.error?.code } == [nil, nil, .notFound, .conflict, nil, .validationFailed, nil])

        let members = try await server.request("GET", "\(Endpoints.groups)/team/members?limit=100", token: alice)
            .decode(Page<GroupMemberPayload>.self).items
        #expect(Set(members.map(\.user.uid)) == ["alice", "bob", "carol", "dave"])
        #expect(members.first { $0.user.uid == "carol" }?.scope == .admin)
        let actions = try await server.groupMessages("team", token: alice).decode([MessagePayload].self)
            .filter { $0.text?.hasPrefix("alice added") == true }.map(\.text)
        #expect(actions == ["alice added erin", "alice added bob", "alice added carol", "alice added dave"])
    }

    /// 10,000 members in ten requests: each is added once, with one change in the group's log
    /// and the bound in their own log (no other member's inbox gets a row), the last one added
    /// reads the group from their add on, and a message then adds no inbox row at all.
    @Test func tenThousandMembersAreAddedInTenRequests() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        let store = server.server.store
        for index in 0..<10_000 { _ = try store.createUser(CreateUserRequest(uid: "u\(index)")) }
        try await server.group("big", by: alice)
        func count(_ sql: String) throws -> Int64 { try store.read { try $0.scalar(sql, as: Int64.self) ?? 0 } }
        let headBefore = try count("SELECT pts FROM group_heads WHERE conversation_id = 'group_big'")
        let inboxBefore = try count("SELECT count(*) FROM inbox")
        for start in stride(from: 0, to: 10_000, by: AddMembersRequest.maxCount) {
            let reply = try await add(
                (start..<(start + AddMembersRequest.maxCount)).map { AddMemberRequest(uid: "u\($0)") }, to: "big",
                by: alice, on: server)
            #expect(reply.status == 200)
            #expect(try reply.decode(AddMembersResponse.self).members.allSatisfy { $0.status == .added })
        }
        let group = try await server.request("GET", "\(Endpoints.groups)/big", token: alice).decode(GroupPayload.self)
        #expect(group.membersCount == 10_001)
        #expect(try count("SELECT pts FROM group_heads WHERE conversation_id = 'group_big'") == headBefore + 10_000)
        #expect(try count("SELECT count(*) FROM inbox") == inboxBefore + 10_000, "each member's bound, no copies")

        let last = try await server.token("u9999")
        let inboxAtSend = try count("SELECT count(*) FROM inbox")
        _ = try await server.sendToGroup("to all", from: alice, to: "big")
        #expect(try count("SELECT count(*) FROM inbox") == inboxAtSend, "a message to 10,001 members: no inbox row")
        let page = try await server.request(
            "POST", Endpoints.changes, token: last, json: ChangesRequest(cursor: try await server.beginning(last))
        ).decode(ChangelogPage.self)
        #expect(page.changes.compactMap { $0.message?.text } == ["alice added u9999", "to all"])
    }

    @Test func theAddersScopeBoundsEveryEntryAndBadRequestsChangeNothing() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        let mod = try await server.user("mod")
        for uid in ["bob", "carol"] { _ = try await server.user(uid) }
        try await server.group("team", by: alice)
        try await server.addMember("mod", to: "team", scope: .moderator, by: alice)
        let admin = try await server.user("admin")
        try await server.addMember("admin", to: "team", scope: .admin, by: alice)

        #expect(
            try await add([AddMemberRequest(uid: "bob")], by: mod, on: server).status == 403, "moderators add no one")
        let byAdmin = try await add(
            [AddMemberRequest(uid: "bob", scope: .admin), AddMemberRequest(uid: "carol")], by: admin, on: server)
        #expect(try byAdmin.decode(AddMembersResponse.self).members.map(\.status) == [.added, .added])

        let both = try await server.request(
            "POST", "\(Endpoints.groups)/team/members", token: alice,
            body: Data(#"{"uid":"bob","members":[{"uid":"carol"}]}"#.utf8),
            headers: ["Content-Type": "application/json"])
        #expect(both.status == 422, "one member or many, not both")
        let badUid = try await add([AddMemberRequest(uid: "no spaces")], by: alice, on: server)
        #expect(badUid.status == 422 && badUid.error?.message.contains("members[].uid") == true)
        let tooMany = try await add(
            (0...AddMembersRequest.maxCount).map { AddMemberRequest(uid: "u\($0)") }, by: alice, on: server)
        #expect(tooMany.status == 422)
        let empty = try await add([], by: alice, on: server)
        #expect(try empty.decode(AddMembersResponse.self).members.isEmpty)
    }
}

/// A receipt in a group goes to the reader and the senders of what it covers, never to every
/// member: its cost is what it covers, not the group's size.
@Suite struct GroupReceiptTests {
    @Test func aGroupReceiptReachesTheReaderAndTheSendersOnly() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        let carol = try await server.user("carol")
        let dave = try await server.user("dave")
        try await server.group("team", by: alice)
        for uid in ["bob", "carol", "dave"] { try await server.addMember(uid, to: "team", by: alice) }
        _ = try await server.sendToGroup("from alice", from: alice, to: "team")
        let last = try await server.sendToGroup("from carol", from: carol, to: "team").decode(MessagePayload.self)
        var heads: [String: String] = [:]
        for (uid, token) in [("alice", alice), ("bob", bob), ("carol", carol), ("dave", dave)] {
            heads[uid] = try await server.request("GET", Endpoints.changes, token: token).decode(ChangelogPage.self)
                .cursor
        }
        let read = try await server.request(
            "POST", "\(Endpoints.conversations)/\(ConversationPayload.groupID("team"))/read", token: bob,
            json: ["messageId": last.id])
        #expect(read.status == 200)
        for (uid, token) in [("alice", alice), ("bob", bob), ("carol", carol), ("dave", dave)] {
            let changes = try await server.request("GET", Endpoints.changes + "?cursor=\(heads[uid]!)", token: token)
                .decode(ChangelogPage.self).changes
            #expect(
                changes.map(\.kind) == (uid == "dave" ? [] : [.receiptRead]),
                "\(uid) heard \(changes.map(\.kind)): the reader and both senders hear it, dave does not")
        }

        // A sender who left hears nothing more of the group.
        let daveSaid = try await server.sendToGroup("from dave", from: dave, to: "team").decode(MessagePayload.self)
        #expect(try await server.request("POST", "\(Endpoints.groups)/team/leave", token: dave).status < 300)
        let daveHead = try await server.request("GET", Endpoints.changes, token: dave).decode(ChangelogPage.self).cursor
        _ = try await server.request(
            "POST", "\(Endpoints.conversations)/\(ConversationPayload.groupID("team"))/read", token: bob,
            json: ["messageId": daveSaid.id])
        let daveHeard = try await server.request("GET", Endpoints.changes + "?cursor=\(daveHead)", token: dave)
            .decode(ChangelogPage.self).changes
        #expect(daveHeard.isEmpty, "\(daveHeard.map(\.kind))")
    }
}

extension GroupReceiptTests {
    /// bob reads a group on two devices (a token each), one of them late and behind the other:
    /// both devices' lists count what is after his furthest read, a stale read never moves it
    /// back, and his own messages never count.
    @Test func unreadCountsFollowReadsFromTwoDevices() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        let phone = try await server.user("bob")
        let laptop = try await server.token("bob")
        try await server.group("team", by: alice)
        try await server.addMember("bob", to: "team", by: alice)
        var sent: [Int64] = []
        for index in 0..<5 {
            sent.append(
                try await server.sendToGroup("m\(index)", from: alice, to: "team").decode(MessagePayload.self).id)
        }
        let group = ConversationPayload.groupID("team")
        func read(_ id: Int64, on device: String) async throws {
            let reply = try await server.request(
                "POST", "\(Endpoints.conversations)/\(group)/read", token: device, json: ["messageId": id])
            #expect(reply.status == 200)
        }
        func unread() async throws -> [Int] {
            var counts: [Int] = []
            for device in [phone, laptop] {
                let list = try await server.request("GET", Endpoints.conversations, token: device)
                    .decode(Page<ConversationPayload>.self).items
                counts.append(list.first { $0.conversationId == group }?.unreadMessageCount ?? -1)
            }
            return counts
        }
        #expect(try await unread() == [5, 5])
        try await read(sent[2], on: phone)
        #expect(try await unread() == [2, 2], "the phone's read counts on the laptop too")
        try await read(sent[4], on: laptop)
        #expect(try await unread() == [0, 0])
        try await read(sent[1], on: phone)
        #expect(try await unread() == [0, 0], "a stale device's read never moves the position back")
        _ = try await server.sendToGroup("from bob", from: laptop, to: "team")
        _ = try await server.sendToGroup("m5", from: alice, to: "team")
        #expect(try await unread() == [1, 1], "his own message is not unread; alice's new one is")
    }
}

/// Every member's change of a group goes into the group's own log too, numbered 1, 2, 3… per
/// group; what is a user's own (direct messages, receipts, the feed) does not.
@Suite struct GroupLogTests {
    @Test func aGroupsChangesAreNumberedInItsOwnLog() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("group-log-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Store(directory: directory, clock: SystemClock())
        for uid in ["alice", "bob", "carol"] { _ = try store.createUser(CreateUserRequest(uid: uid)) }
        for guid in ["one", "two"] {
            _ = try store.createGroup(CreateGroupRequest(guid: guid, name: guid), by: "alice", passwordHash: nil)
        }
        _ = try store.addMembers("one", [AddMemberRequest(uid: "bob"), AddMemberRequest(uid: "carol")], by: "alice")
        let sent = try store.send(
            from: "bob", SendMessageRequest(muid: "m1", receiver: "one", receiverType: .group, text: "hi")
        ).message
        _ = try store.send(
            from: "alice", SendMessageRequest(muid: "m2", receiver: "two", receiverType: .group, text: "x"))
        _ = try store.send(from: "alice", SendMessageRequest(muid: "d1", receiver: "bob", text: "direct"))
        _ = try store.receipt(.read, by: "carol", in: sent.conversationId, upTo: sent.id)
        _ = try store.edit(sent.id, by: "bob", EditMessageRequest(text: "hi!"))
        try store.leave("one", uid: "carol")

        let rows = try store.read { db in
            try db.query("SELECT conversation_id, pts, change FROM group_log ORDER BY conversation_id, pts").map {
                (try $0.get(0) as String, try $0.get(1) as Int64, try $0.get(2) as Int64)
            }
        }
        let one = rows.filter { $0.0 == "group_one" }
        let two = rows.filter { $0.0 == "group_two" }
        // one: created, bob added, carol added, the message, its edit, carol left; two: created, the message.
        #expect(one.map(\.1) == Array(1...6) && two.map(\.1) == [1, 2])
        #expect(one.map(\.2) == one.map(\.2).sorted(), "in the order they were written")
        let heads = try store.read { db in
            try db.query("SELECT conversation_id, pts FROM group_heads ORDER BY conversation_id").map {
                "\(try $0.get(0) as String)=\(try $0.get(1) as Int64)"
            }
        }
        #expect(heads == ["group_one=6", "group_two=2"])
        let kinds = try store.read { db in
            try db.query(
                "SELECT c.payload FROM group_log g JOIN changes c ON c.id = g.change ORDER BY g.change"
            ).map { try $0.get(0) as String }
        }
        #expect(!kinds.contains { $0.contains("receipt") || $0.contains("direct") }, "\(kinds)")
    }
}

extension GroupLogTests {
    /// A member action's change keeps its message once: the change's row refers to the kept
    /// text (`message_bodies`) instead of holding a copy, and a page gives the message whole.
    @Test func aMemberActionsMessageIsKeptOnce() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        try await server.group("team", by: alice)
        try await server.addMember("bob", to: "team", by: alice)
        _ = try await server.sendToGroup("hello", from: alice, to: "team")
        let rows = try server.server.store.read { db in
            try db.query("SELECT payload, message_id FROM changes ORDER BY id").map {
                (try $0.get(0) as String, try $0.get(1) as Int64?)
            }
        }
        let added = try #require(rows.first { $0.1 != nil }, "the add's change refers to its message")
        #expect(added.0.contains(#""message":null"#) && !added.0.contains("alice added bob"), "\(added.0)")
        #expect(rows.contains { $0.1 == nil && $0.0.contains("hello") }, "a text message's change keeps its copy")
        let page = try await server.request(
            "POST", Endpoints.changes, token: bob, json: ChangesRequest(cursor: try await server.beginning(bob))
        ).decode(ChangelogPage.self)
        let texts = page.changes.compactMap { $0.message?.text }
        #expect(texts == ["alice added bob", "hello"], "\(texts)")
        #expect(page.changes.first?.message?.action?.target == "bob")
    }
}

/// Each stretch of a membership as group positions: a member sees the changes after their
/// span's start up to its end (their removal included).
@Suite struct GroupSpanTests {
    @Test func spansFollowJoinsLeavesKicksBansRejoinsAndTheDeletion() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("group-spans-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try Store(directory: directory, clock: SystemClock())
        for uid in ["alice", "bob", "carol", "dave"] { _ = try store.createUser(CreateUserRequest(uid: uid)) }
        _ = try store.createGroup(CreateGroupRequest(guid: "g", name: "g"), by: "alice", passwordHash: nil)  // 1
        _ = try store.addMembers(
            "g", [AddMemberRequest(uid: "bob"), AddMemberRequest(uid: "carol"), AddMemberRequest(uid: "dave")],
            by: "alice")  // 2, 3, 4
        // 5: a message
        _ = try store.send(from: "bob", SendMessageRequest(muid: "m", receiver: "g", receiverType: .group, text: "hi"))
        try store.leave("g", uid: "carol")  // 6
        try store.kick("g", "bob", by: "alice")  // 7
        _ = try store.ban("g", "dave", by: "alice")  // 8
        _ = try store.addMember("g", "bob", scope: .participant, by: "alice")  // 9
        try store.deleteGroup("g", by: "alice")  // 10

        let spans = try store.read { db in
            try db.query("SELECT uid, from_pts, to_pts FROM group_spans ORDER BY uid, from_pts").map { row in
                let to: Int64? = try row.get(2)
                return "\(try row.get(0) as String) \(try row.get(1) as Int64)…\(to.map(String.init) ?? "open")"
            }
        }
        #expect(
            spans == ["alice 0…10", "bob 1…7", "bob 8…10", "carol 2…6", "dave 3…8"],
            "each add's span starts at its own add, even three in one transaction")
    }
}

/// A group message writes no member row but its sender's: each member's unread count is
/// counted from their read position when asked, and the group's time is its conversation's.
@Suite struct GroupUnreadTests {
    func unread(
        _ store: Store, _ uid: String, _ conversationId: String = ConversationPayload.groupID("g")
    ) throws -> Int {
        let json = try store.conversation(conversationId, for: uid)
        return try JSONDecoder().decode(ConversationPayload.self, from: Data(json.bytes)).unreadMessageCount
    }

    func memberRows(_ store: Store) throws -> [String] {
        try store.read { db in
            try db.query(
                "SELECT uid, unread, updated_at, read_id FROM conversation_members WHERE conversation_id = 'group_g' ORDER BY uid"
            ).map {
                "\(try $0.get(0) as String) \(try $0.get(1) as Int64) \(try $0.get(2) as Int64) \(try $0.get(3) as Int64)"
            }
        }
    }

    @Test(arguments: GroupCommitTests.engines) func countsFollowSendsReadsDeletionsAndJoins(engine: String) throws {
        let store = try GroupCommitTests.store(engine)
        for uid in ["alice", "bob", "carol"] { _ = try store.createUser(CreateUserRequest(uid: uid)) }
        _ = try store.createGroup(CreateGroupRequest(guid: "g", name: "g"), by: "alice", passwordHash: nil)
        _ = try store.addMembers("g", [AddMemberRequest(uid: "bob")], by: "alice")
        func send(_ text: String, from sender: String) throws -> MessagePayload {
            try store.send(
                from: sender, SendMessageRequest(muid: text, receiver: "g", receiverType: .group, text: text)
            )
            .message
        }
        _ = try send("m1", from: "alice")
        _ = try store.addMembers("g", [AddMemberRequest(uid: "carol")], by: "alice")
        let before = try memberRows(store)
        let m2 = try send("m2", from: "alice")
        let after = try memberRows(store)
        #expect(
            before.filter { !$0.hasPrefix("alice") } == after.filter { !$0.hasPrefix("alice") },
            "a group message writes no other member's row")
        let m3 = try send("m3", from: "alice")
        func counts() throws -> [Int] { try [unread(store, "bob"), unread(store, "carol"), unread(store, "alice")] }
        // bob: m1, the action adding carol, m2, m3; carol: from after her add on.
        #expect(try counts() == [4, 2, 0])
        _ = try store.receipt(.read, by: "carol", in: m2.conversationId, upTo: m2.id)
        _ = try store.delete(m3.id, by: "alice")
        #expect(try counts() == [3, 0, 0])
        _ = try send("b1", from: "bob")
        #expect(try counts() == [0, 1, 1], "a sender has read up to their message")

        let limit = Store.groupUnreadLimit
        try store.write { db, _ in
            try db.run(
                """
                INSERT INTO messages(conversation_id, sender, receiver, receiver_type, category, type, text, sent_at, updated_at)
                SELECT 'group_g', 'alice', 'g', 'group', 'message', 'text', 'bulk', 1, 1 FROM (\(Self.numbers(limit + 5))) n
                """)
        }
        #expect(try unread(store, "bob") == limit, "a group's count stops at \(limit)")
    }

    /// A list pages through direct conversations (by their members' copies of the time) and
    /// groups (by the conversation's) merged in one order, without gaps or repeats.
    @Test(arguments: GroupCommitTests.engines) func aListMergesGroupsAndDirectConversationsInPages(
        engine: String
    )
        throws
    {
        let clock = FixedClock.atAMinutesStart()
        let store = try GroupCommitTests.store(engine, clock: clock)
        for uid in ["alice", "p0", "p1", "p2"] { _ = try store.createUser(CreateUserRequest(uid: uid)) }
        var expected: [String] = []
        for index in 0..<3 {
            clock.advance(by: 30_000)
            _ = try store.send(from: "alice", SendMessageRequest(muid: "d\(index)", receiver: "p\(index)", text: "d"))
            expected.append(ConversationPayload.directID("alice", "p\(index)"))
            clock.advance(by: 30_000)
            _ = try store.createGroup(CreateGroupRequest(guid: "g\(index)", name: "g"), by: "alice", passwordHash: nil)
            expected.append(ConversationPayload.groupID("g\(index)"))
        }
        clock.advance(by: 1)
        _ = try store.send(
            from: "alice", SendMessageRequest(muid: "again", receiver: "g0", receiverType: .group, text: "x"))
        expected.removeAll { $0 == "group_g0" }
        expected.append("group_g0")
        for size in [1, 2, 4] {
            var seen: [String] = []
            var cursor: String?
            repeat {
                let json = try store.conversations(for: "alice", cursor: cursor, limit: size)
                let page = try JSONDecoder().decode(Page<ConversationPayload>.self, from: Data(json.bytes))
                seen += page.items.map(\.conversationId)
                cursor = page.next
            } while cursor != nil
            #expect(seen == expected.reversed(), "pages of \(size)")
        }
        guard engine == "sqlite" else { return }
        let plan = try store.read { db in
            try db.query(
                "EXPLAIN QUERY PLAN SELECT * FROM \(Store.groupPageMembers) g", ["alice", Int64.max, "", 2, Int64.max]
            ).map { try $0.get("detail", as: String.self) }
        }
        #expect(plan.contains { $0.contains("group_members_by_user") }, "only the user's groups are read: \(plan)")
    }

    /// A deployment from before (SQLite 22): its group members' copies of the time and counts
    /// go, and every list and count reads as before.
    @Test func theMigrationKeepsEveryListAndCount() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("group-time-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let uids = ["alice", "bob", "carol"]
        func state(_ store: Store) throws -> [String] {
            try uids.map {
                String(decoding: try store.conversations(for: $0, cursor: nil, limit: 10).bytes, as: UTF8.self)
            }
        }
        let before: [String] = try {
            let store = try Store(directory: directory, clock: SystemClock())
            defer { try? store.close() }
            for uid in uids { _ = try store.createUser(CreateUserRequest(uid: uid)) }
            _ = try store.createGroup(CreateGroupRequest(guid: "g", name: "g"), by: "alice", passwordHash: nil)
            _ = try store.addMembers("g", [AddMemberRequest(uid: "bob"), AddMemberRequest(uid: "carol")], by: "alice")
            for (index, sender) in ["alice", "bob", "alice"].enumerated() {
                _ = try store.send(
                    from: sender, SendMessageRequest(muid: "g\(index)", receiver: "g", receiverType: .group, text: "x"))
            }
            _ = try store.send(from: "carol", SendMessageRequest(muid: "d", receiver: "alice", text: "direct"))
            return try state(store)
        }()
        let db = try Connection(path: directory.appendingPathComponent("chatd.sqlite").path)
        try OldSchema.rewind(db, to: 22)
        let copies: Int? = try db.scalar(
            "SELECT count(*) FROM conversation_members WHERE peer IS NULL AND updated_at > 0 AND unread > 0")
        #expect(copies == 2, "bob's and carol's rows kept copies before")
        try db.close()
        let migrated = try Store(directory: directory, clock: SystemClock())
        defer { try? migrated.close() }
        #expect(try state(migrated) == before)
        let left: Int? = try migrated.read {
            try $0.scalar("SELECT count(*) FROM conversation_members WHERE updated_at = 0")
        }
        #expect(left == 3, "no group member keeps a time")
    }

    /// `SELECT n` for n in 1...count, on both engines.
    static func numbers(_ count: Int) -> String {
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(count)) SELECT i FROM n"
    }
}
