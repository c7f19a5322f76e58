import Foundation
import OfflineChatProtocol
import Testing

@Suite struct ReactionTests {
    func path(_ id: Int64, _ suffix: String = "") -> String { "\(Endpoints.messages)/\(id)/reactions\(suffix)" }
    func encoded(_ reaction: String) -> String {
        reaction.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed)!
    }

    @Test func reactionsAreCountedPerKindAndIdempotent() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        let message = try await server.send("react to me", from: alice, to: "bob")
        let first = try await server.request(
            "POST", path(message.id), token: bob, json: AddReactionRequest(reaction: "👍"))
        #expect(first.status == 201)
        #expect(
            try await server.request("POST", path(message.id), token: bob, json: AddReactionRequest(reaction: "👍"))
                .status == 200)
        _ = try await server.request("POST", path(message.id), token: alice, json: AddReactionRequest(reaction: "👍"))
        let last = try await server.request(
            "POST", path(message.id), token: alice, json: AddReactionRequest(reaction: "❤️"))
        // Ordered by the reaction's bytes: U+2764 before U+1F44D.
        #expect(
            try last.decode(MessagePayload.self).reactions == [
                ReactionCount(reaction: "❤️", count: 1), ReactionCount(reaction: "👍", count: 2)
            ])
        let removed = try await server.request("DELETE", path(message.id, "/\(encoded("👍"))"), token: bob).decode(
            MessagePayload.self)
        #expect(removed.reactions?.first { $0.reaction == "👍" }?.count == 1)
        #expect(try await server.request("DELETE", path(message.id, "/\(encoded("👍"))"), token: bob).status == 404)
        let fetched = try await server.request("GET", "\(Endpoints.messages)/\(message.id)", token: bob).decode(
            MessagePayload.self)
        #expect(fetched.reactions == removed.reactions)
    }

    @Test func onlyReadersReactAndNotOnDeletedMessages() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        _ = try await server.user("bob")
        let carol = try await server.user("carol")
        let message = try await server.send("x", from: alice, to: "bob")
        #expect(
            try await server.request("POST", path(message.id), token: carol, json: AddReactionRequest(reaction: "👀"))
                .status == 403)
        #expect(try await server.request("GET", path(message.id), token: carol).status == 403)
        #expect(
            try await server.request("POST", path(message.id), token: alice, json: AddReactionRequest(reaction: ""))
                .status == 422)
        _ = try await server.request("DELETE", "\(Endpoints.messages)/\(message.id)", token: alice)
        #expect(
            try await server.request("POST", path(message.id), token: alice, json: AddReactionRequest(reaction: "👍"))
                .status == 409)
        #expect(
            try await server.request("POST", path(999), token: alice, json: AddReactionRequest(reaction: "👍")).status
                == 404)
    }

    @Test func theReactionsListPagesInBothDirectionsAndFilters() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        _ = try await server.user("bob")
        let message = try await server.send("popular", from: alice, to: "bob")
        var added: [ReactionPayload] = []
        for reaction in ["a", "b", "c", "d", "e"] {
            _ = try await server.request(
                "POST", path(message.id), token: alice, json: AddReactionRequest(reaction: reaction))
            let page = try await server.request("GET", path(message.id) + "?reaction=\(reaction)", token: alice).decode(
                [ReactionPayload].self)
            added += page
        }
        #expect(added.map(\.reaction) == ["a", "b", "c", "d", "e"])
        let next = try await server.request("GET", path(message.id) + "?limit=2&after=\(added[1].id)", token: alice)
            .decode([ReactionPayload].self)
        #expect(next.map(\.reaction) == ["c", "d"])
        let previous = try await server.request(
            "GET", path(message.id) + "?limit=2&before=\(added[3].id)", token: alice
        ).decode([ReactionPayload].self)
        #expect(previous.map(\.reaction) == ["b", "c"])
        #expect(try await server.request("GET", path(message.id) + "?before=5&after=1", token: alice).status == 400)
    }

    @Test func aReactionIsAnUpdateOfTheMessageAndReactionsAreBounded() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        let message = try await server.send("x", from: alice, to: "bob")
        let reacted = try await server.request(
            "POST", path(message.id), token: bob, json: AddReactionRequest(reaction: "👍")
        ).decode(MessagePayload.self)
        #expect(reacted.updatedAt > message.updatedAt)
        let updates = try await server.request(
            "GET", "\(Endpoints.conversations)/alice~bob/messages?updatedAfter=\(message.updatedAt)", token: alice)
        #expect(try updates.decode([MessagePayload].self).map(\.id) == [message.id])
        #expect(
            try await server.request("POST", path(message.id), token: bob, json: AddReactionRequest(reaction: "a/b"))
                .status == 422)
        for index in 1..<20 {
            #expect(
                try await server.request(
                    "POST", path(message.id), token: bob, json: AddReactionRequest(reaction: "r\(index)")
                ).status == 201)
        }
        let over = try await server.request(
            "POST", path(message.id), token: bob, json: AddReactionRequest(reaction: "one too many"))
        #expect(over.status == 422)
        let counts = try await server.request("GET", "\(Endpoints.messages)/\(message.id)", token: bob).decode(
            MessagePayload.self
        ).reactions
        #expect(counts?.count == 20)
    }

    /// A page of history and the conversation list read every message's counts at once: each
    /// message still shows its own (and one without any shows none).
    @Test func pagesAndListsShowEachMessagesOwnCounts() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        _ = try await server.user("carol")
        let first = try await server.send("one", from: alice, to: "bob")
        let second = try await server.send("two", from: alice, to: "bob")
        let third = try await server.send("three", from: bob, to: "alice")
        let toCarol = try await server.send("hi carol", from: alice, to: "carol")
        for (id, reaction, token) in [
            (first.id, "👍", bob), (first.id, "👍", alice), (first.id, "🎉", bob),
            (third.id, "❤️", alice), (toCarol.id, "👀", alice)
        ] {
            #expect(
                try await server.request("POST", path(id), token: token, json: AddReactionRequest(reaction: reaction))
                    .status == 201)
        }
        let page = try await server.request("GET", "\(Endpoints.conversations)/alice~bob/messages", token: alice)
            .decode([MessagePayload].self)
        #expect(page.map(\.id) == [first.id, second.id, third.id])
        #expect(
            page.map(\.reactions) == [
                [ReactionCount(reaction: "🎉", count: 1), ReactionCount(reaction: "👍", count: 2)],
                nil, [ReactionCount(reaction: "❤️", count: 1)]
            ])
        let list = try await server.request("GET", Endpoints.conversations, token: alice).decode(
            Page<ConversationPayload>.self)
        let last = Dictionary(uniqueKeysWithValues: list.items.map { ($0.conversationId, $0.lastMessage) })
        #expect(last["alice~bob"]??.reactions == [ReactionCount(reaction: "❤️", count: 1)])
        #expect(last["alice~carol"]??.reactions == [ReactionCount(reaction: "👀", count: 1)])
    }

    @Test func reactionsReachTheChangelogWithTheNewCounts() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        let message = try await server.send("x", from: alice, to: "bob")
        let head = try await server.request("GET", Endpoints.changes, token: alice).decode(ChangelogPage.self).cursor
        _ = try await server.request("POST", path(message.id), token: bob, json: AddReactionRequest(reaction: "🎉"))
        _ = try await server.request("DELETE", path(message.id, "/\(encoded("🎉"))"), token: bob)
        let page = try await server.request("GET", Endpoints.changes + "?cursor=\(head)", token: alice).decode(
            ChangelogPage.self)
        #expect(page.changes.map(\.kind) == [.reactionAdded, .notificationCreated, .reactionRemoved])
        #expect(page.changes[0].message?.reactions == [ReactionCount(reaction: "🎉", count: 1)])
        #expect(page.changes[0].reaction?.uid == "bob")
        #expect(page.changes[1].notification?.kind == .reaction)
        #expect(page.changes[2].message?.reactions == nil)
    }
}
