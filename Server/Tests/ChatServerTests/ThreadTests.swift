import Foundation
import OfflineChatProtocol
import Testing

@Suite struct ThreadTests {
    func reply(
        _ server: some ChatdUnderTest, _ token: String, to parent: MessagePayload, receiver: String, _ text: String
    ) async throws -> Reply {
        try await server.request(
            "POST", Endpoints.messages, token: token,
            json: SendMessageRequest(
                muid: UUID().uuidString, receiver: receiver, text: text, parentMessageId: parent.id))
    }

    @Test func repliesCountOnTheParentAndListAsAThread() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        let parent = try await server.send("topic", from: alice, to: "bob")
        var replies: [MessagePayload] = []
        for index in 0..<5 {
            let sent = try await reply(
                server, index % 2 == 0 ? bob : alice, to: parent, receiver: index % 2 == 0 ? "alice" : "bob",
                "r\(index)")
            #expect(sent.status == 201)
            replies.append(try sent.decode())
        }
        #expect(replies.allSatisfy { $0.parentMessageId == parent.id })
        let fetched = try await server.request("GET", "\(Endpoints.messages)/\(parent.id)", token: bob).decode(
            MessagePayload.self)
        #expect(fetched.replyCount == 5)
        let thread = "\(Endpoints.messages)/\(parent.id)/thread"
        let newest = try await server.request("GET", thread + "?limit=2", token: bob).decode([MessagePayload].self)
        #expect(newest.map(\.text) == ["r3", "r4"])
        let older = try await server.request("GET", thread + "?limit=2&before=\(replies[3].id)", token: bob).decode(
            [MessagePayload].self)
        #expect(older.map(\.text) == ["r1", "r2"])
        let main = try await server.request(
            "GET", "\(Endpoints.conversations)/alice~bob/messages?hideReplies=true", token: bob
        ).decode([MessagePayload].self)
        #expect(main.map(\.id) == [parent.id])
        let all = try await server.request("GET", "\(Endpoints.conversations)/alice~bob/messages", token: bob).decode(
            [MessagePayload].self)
        #expect(all.count == 6)
        #expect(
            try await server.request(
                "GET", "\(Endpoints.conversations)/alice~bob/messages?hideReplies=maybe", token: bob
            ).status == 400)
    }

    @Test func invalidParentsAreRefused() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        _ = try await server.user("bob")
        let carol = try await server.user("carol")
        let parent = try await server.send("topic", from: alice, to: "bob")
        let child = try await reply(server, alice, to: parent, receiver: "bob", "child").decode(MessagePayload.self)
        #expect(try await reply(server, alice, to: child, receiver: "bob", "grandchild").status == 422)
        // A parent from another conversation.
        #expect(try await reply(server, carol, to: parent, receiver: "alice", "elsewhere").status == 422)
        _ = try await server.request("DELETE", "\(Endpoints.messages)/\(parent.id)", token: alice)
        #expect(try await reply(server, alice, to: parent, receiver: "bob", "late").status == 409)
        #expect(
            try await server.request("GET", "\(Endpoints.messages)/\(parent.id)/thread", token: carol).status == 403)
    }

    /// Replies and deletions racing each other leave the count equal to the live replies.
    @Test func threadCountsStayRightUnderConcurrentRepliesAndDeletions() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        let parent = try await server.send("busy topic", from: alice, to: "bob")
        let head = try await server.request("GET", Endpoints.changes, token: bob).decode(ChangelogPage.self).cursor
        let created = try await withThrowingTaskGroup(of: MessagePayload.self) { group in
            for index in 0..<30 {
                group.addTask {
                    let token = index % 2 == 0 ? alice : bob
                    let sent = try await self.reply(
                        server, token, to: parent, receiver: index % 2 == 0 ? "bob" : "alice", "r\(index)")
                    let message = try sent.decode(MessagePayload.self)
                    if index % 3 == 0 {
                        _ = try await server.request("DELETE", "\(Endpoints.messages)/\(message.id)", token: token)
                    }
                    return message
                }
            }
            return try await group.reduce(into: [MessagePayload]()) { $0.append($1) }
        }
        #expect(created.count == 30)
        let fetched = try await server.request("GET", "\(Endpoints.messages)/\(parent.id)", token: alice).decode(
            MessagePayload.self)
        #expect(fetched.replyCount == 20)
        // The changelog's last version of the parent carries the same count.
        let page = try await server.request("GET", Endpoints.changes + "?cursor=\(head)", token: bob).decode(
            ChangelogPage.self)
        let lastParent = page.changes.last { $0.message?.id == parent.id }?.message
        #expect(lastParent?.replyCount == 20)
    }
}
