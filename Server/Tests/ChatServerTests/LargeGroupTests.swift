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
