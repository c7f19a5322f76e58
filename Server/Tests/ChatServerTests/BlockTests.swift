import Foundation
import OfflineChatProtocol
import OfflineChatWebSocket
import Testing

@Suite struct BlockTests {
    @Test func messagesBetweenBlockedUsersAreRefusedBothWays() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        try await server.send("before", from: alice, to: "bob")
        let blocked = try await server.request("PUT", "\(Endpoints.blocks)/bob", token: alice)
        #expect(blocked.status == 200)
        #expect(try blocked.decode(UserPayload.self).blockedByMe == true)
        for (token, receiver) in [(alice, "bob"), (bob, "alice")] {
            let reply = try await server.request(
                "POST", Endpoints.messages, token: token,
                json: SendMessageRequest(muid: UUID().uuidString, receiver: receiver, text: "x"))
            #expect(reply.status == 403 && reply.error?.code == .blocked)
        }
        #expect(try await server.request("DELETE", "\(Endpoints.blocks)/bob", token: alice).status == 200)
        try await server.send("after", from: bob, to: "alice")
    }

    /// Blocks do not erase history: the conversation stays listed, flagged on the peer.
    @Test func historyStaysAndThePeerIsFlagged() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        try await server.send("kept", from: alice, to: "bob")
        _ = try await server.request("PUT", "\(Endpoints.blocks)/bob", token: alice)
        let aliceList = try await server.request("GET", Endpoints.conversations, token: alice).decode(
            Page<ConversationPayload>.self)
        #expect(aliceList.items.first?.conversationWith.user?.blockedByMe == true)
        #expect(aliceList.items.first?.lastMessage?.text == "kept")
        let bobView = try await server.request("GET", "\(Endpoints.users)/alice", token: bob).decode(UserPayload.self)
        #expect(bobView.hasBlockedMe == true && bobView.blockedByMe == nil)
        let history = try await server.request("GET", "\(Endpoints.conversations)/alice~bob/messages", token: bob)
        #expect(try history.decode([MessagePayload].self).count == 1)
    }

    @Test func theBlockedListPagesInEachDirection() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        for uid in ["bob", "carol", "dave"] { _ = try await server.user(uid) }
        let erin = try await server.user("erin")
        for uid in ["dave", "bob", "carol"] {
            _ = try await server.request("PUT", "\(Endpoints.blocks)/\(uid)", token: alice)
        }
        _ = try await server.request("PUT", "\(Endpoints.blocks)/alice", token: erin)
        let first = try await server.request("GET", Endpoints.blocks + "?limit=2", token: alice).decode(
            Page<UserPayload>.self)
        #expect(first.items.map(\.uid) == ["bob", "carol"])
        let second = try await server.request("GET", Endpoints.blocks + "?limit=2&cursor=\(first.next!)", token: alice)
            .decode(Page<UserPayload>.self)
        #expect(second.items.map(\.uid) == ["dave"] && second.next == nil)
        let byOthers = try await server.request("GET", Endpoints.blocks + "?direction=hasBlockedMe", token: alice)
            .decode(Page<UserPayload>.self)
        #expect(byOthers.items.map(\.uid) == ["erin"])
        let both = try await server.request("GET", Endpoints.blocks + "?direction=both", token: alice).decode(
            Page<UserPayload>.self)
        #expect(both.items.map(\.uid) == ["bob", "carol", "dave", "erin"])
        #expect(try await server.request("GET", Endpoints.blocks + "?direction=sideways", token: alice).status == 400)
    }

    /// Both sides' reads change (`blockedByMe` / `hasBlockedMe`), so both changelogs record it.
    @Test func blockingIsIdempotentAndRecordedForBothUsers() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        let aliceHead = try await server.request("GET", Endpoints.changes, token: alice).decode(ChangelogPage.self)
            .cursor
        let bobHead = try await server.request("GET", Endpoints.changes, token: bob).decode(ChangelogPage.self).cursor
        for _ in 0..<2 { _ = try await server.request("PUT", "\(Endpoints.blocks)/bob", token: alice) }
        _ = try await server.request("DELETE", "\(Endpoints.blocks)/bob", token: alice)
        let aliceChanges = try await server.request("GET", Endpoints.changes + "?cursor=\(aliceHead)", token: alice)
            .decode(ChangelogPage.self)
        #expect(aliceChanges.changes.map(\.kind) == [.userBlocked, .userUnblocked])
        #expect(aliceChanges.changes.first?.block == BlockPayload(blocker: "alice", blocked: "bob"))
        let bobChanges = try await server.request("GET", Endpoints.changes + "?cursor=\(bobHead)", token: bob).decode(
            ChangelogPage.self)
        #expect(bobChanges.changes.map(\.kind) == [.userBlocked, .userUnblocked])
    }

    @Test func aBlockAlsoStopsReactionsAndCallMoves() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        let message = try await server.send("x", from: alice, to: "bob")
        let call = try await server.request(
            "POST", Endpoints.messages, token: alice,
            json: SendMessageRequest(
                muid: "call", receiver: "bob", category: .call, type: "audio")
        ).decode(MessagePayload.self)
        _ = try await server.request("PUT", "\(Endpoints.blocks)/alice", token: bob)
        let reaction = try await server.request(
            "POST", "\(Endpoints.messages)/\(message.id)/reactions", token: bob,
            json: AddReactionRequest(reaction: "👍"))
        #expect(reaction.status == 403 && reaction.error?.code == .blocked)
        let move = try await server.request(
            "PATCH", "\(Endpoints.messages)/\(call.id)", token: alice, json: EditMessageRequest(callStatus: .ongoing))
        #expect(move.status == 403 && move.error?.code == .blocked)
        #expect(
            try await server.request("GET", Endpoints.notifications, token: alice).decode([FeedItemPayload].self)
                .isEmpty)
        // Nor may either edit an old message of theirs.
        let edit = try await server.request(
            "PATCH", "\(Endpoints.messages)/\(message.id)", token: alice, json: EditMessageRequest(text: "y"))
        #expect(edit.status == 403 && edit.error?.code == .blocked)
    }

    /// The blocked user learns neither whether the blocker is online nor when last active.
    @Test func aBlockedUserDoesNotSeeTheBlockersPresence() async throws {
        let server = try LiveServer()
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        let (socket, _) = try server.realtime(alice)  // alice is online
        let before = try await server.request("GET", "\(Endpoints.users)/alice", token: bob).decode(UserPayload.self)
        #expect(before.status == "online" && before.lastActiveAt != nil)
        _ = try await server.request("PUT", "\(Endpoints.blocks)/bob", token: alice)
        let after = try await server.request("GET", "\(Endpoints.users)/alice", token: bob).decode(UserPayload.self)
        #expect(after.status == nil && after.lastActiveAt == nil && after.hasBlockedMe == true)
        let listed = try await server.request("GET", Endpoints.users, token: bob).decode(Page<UserPayload>.self)
        #expect(listed.items.first { $0.uid == "alice" }?.status == nil)
        func uids(_ status: String) async throws -> [String] {
            try await server.request("GET", Endpoints.users + "?status=" + status, token: bob).decode(
                Page<UserPayload>.self
            ).items.map(\.uid)
        }
        #expect(try await !uids("online").contains("alice"), "the status filter does not tell either")
        #expect(try await uids("offline").contains("alice"))
        let bobSeen = try await server.request("GET", "\(Endpoints.users)/bob", token: alice).decode(UserPayload.self)
        #expect(bobSeen.status != nil, "the blocker still sees the one they blocked")
        withExtendedLifetime(socket) {}
    }

    @Test func blockingYourselfOrNobodyIsRefused() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        #expect(try await server.request("PUT", "\(Endpoints.blocks)/alice", token: alice).status == 422)
        #expect(try await server.request("PUT", "\(Endpoints.blocks)/ghost", token: alice).status == 404)
    }

    @Test func typingBetweenBlockedUsersIsDropped() async throws {
        let server = try LiveServer()
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        let carol = try await server.user("carol")
        _ = try await server.request("PUT", "\(Endpoints.blocks)/alice", token: bob)
        let (bobSocket, _) = try server.realtime(bob)
        let (aliceSocket, _) = try server.realtime(alice)
        let (carolSocket, _) = try server.realtime(carol)
        func typing(_ receiver: String) throws -> String {
            String(
                decoding: try JSONEncoder().encode(
                    RealtimeEnvelope(type: .typing, typing: TypingPayload(receiver: receiver, isTyping: true))),
                as: UTF8.self)
        }
        try aliceSocket.send(text: try typing("bob"))
        try carolSocket.send(text: try typing("bob"))
        // Per-sender order is kept, so if alice's indicator had been forwarded... carol's is the first bob sees.
        let first = try bobSocket.nextEnvelope()
        #expect(first.typing?.sender == "carol")
    }
}
