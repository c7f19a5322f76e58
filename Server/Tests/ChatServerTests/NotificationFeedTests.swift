import Foundation
import OfflineChatProtocol
import Testing

@Suite struct NotificationFeedTests {
    @Test func mentionsRepliesAndReactionsReachTheirUsersFeedNewestFirst() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        let carol = try await server.user("carol")
        let topic = try await server.send("topic", from: alice, to: "bob")
        // bob mentions alice (and carol, who is not in this conversation: no item for her).
        try await server.send("hey <@uid:alice> and <@uid:carol>", from: bob, to: "alice")
        let reply = try await server.request(
            "POST", Endpoints.messages, token: bob,
            json: SendMessageRequest(
                muid: "r", receiver: "alice", text: "a reply", parentMessageId: topic.id))
        #expect(reply.status == 201)
        _ = try await server.request(
            "POST", "\(Endpoints.messages)/\(topic.id)/reactions", token: bob, json: AddReactionRequest(reaction: "🔥"))
        // Her own reaction and her own reply do not notify her.
        _ = try await server.request(
            "POST", "\(Endpoints.messages)/\(topic.id)/reactions", token: alice, json: AddReactionRequest(reaction: "👍")
        )

        let feed = try await server.request("GET", Endpoints.notifications, token: alice).decode([FeedItemPayload].self)
        #expect(feed.map(\.kind) == [.reaction, .reply, .mention])
        #expect(feed.allSatisfy { $0.actor == "bob" })
        #expect(feed[0].reaction == "🔥" && feed[0].messageId == topic.id)
        let older = try await server.request(
            "GET", Endpoints.notifications + "?limit=1&before=\(feed[1].id)", token: alice
        )
        .decode([FeedItemPayload].self)
        #expect(older.map(\.kind) == [.mention])
        #expect(
            try await server.request("GET", Endpoints.notifications, token: carol).decode([FeedItemPayload].self)
                .isEmpty)
        #expect(
            try await server.request("GET", Endpoints.notifications, token: bob).decode([FeedItemPayload].self).isEmpty)
        // Each item is also a change for its user, so a synced client rebuilds the feed.
        let changes = try await server.request(
            "GET", Endpoints.changes + "?cursor=\(try await server.beginning(alice))", token: alice
        ).decode(
            ChangelogPage.self)
        #expect(changes.changes.compactMap(\.notification).reversed() == feed)
    }
}
