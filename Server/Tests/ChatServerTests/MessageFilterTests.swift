import Foundation
import OfflineChatProtocol
import Testing

/// Every `MessagesRequest` filter on one seeded conversation.
@Suite struct MessageFilterTests {
    struct Seeded {
        let server: InProcessServer
        let alice: String
        let bob: String
        var ids: [String: Int64] = [:]
        let path = "\(Endpoints.conversations)/alice~bob/messages"

        func texts(_ query: String, as token: String? = nil) async throws -> [String] {
            let reply = try await server.request("GET", path + "?" + query, token: token ?? alice)
            guard reply.status == 200 else { throw LiveServer.Failure("\(query): \(reply.status)") }
            return try reply.decode([MessagePayload].self).map {
                $0.text ?? "<\($0.type)\($0.deletedAt == nil ? "" : " deleted")>"
            }
        }
    }

    func seed() async throws -> Seeded {
        let server = try InProcessServer()
        var seeded = Seeded(server: server, alice: try await server.user("alice"), bob: try await server.user("bob"))
        let (alice, bob) = (seeded.alice, seeded.bob)
        func text(_ text: String, from token: String, to receiver: String, parent: Int64? = nil) async throws {
            let reply = try await server.request(
                "POST", Endpoints.messages, token: token,
                json: SendMessageRequest(muid: text, receiver: receiver, text: text, parentMessageId: parent))
            seeded.ids[text] = try reply.decode(MessagePayload.self).id
        }
        try await text("hello Bob", from: alice, to: "bob")
        try await text("see https://example.com/x", from: bob, to: "alice")
        try await text("100% sure_thing", from: alice, to: "bob")
        try await text("a reply", from: bob, to: "alice", parent: seeded.ids["hello Bob"])
        let image = try await server.request(
            "POST", Endpoints.messages, token: bob,
            json: SendMessageRequest(
                muid: "img", receiver: "alice", type: "image",
                attachment: try await server.upload(Data("x".utf8), by: bob, name: "x.png")))
        seeded.ids["img"] = try image.decode(MessagePayload.self).id
        let custom = try await server.request(
            "POST", Endpoints.messages, token: alice,
            json: SendMessageRequest(
                muid: "loc", receiver: "bob", category: .custom, type: "location",
                customData: .object(["lat": .number(1)])))
        seeded.ids["loc"] = try custom.decode(MessagePayload.self).id
        try await text("to be deleted", from: alice, to: "bob")
        try await text("www.swift.org is nice", from: bob, to: "alice")
        _ = try await server.request("DELETE", "\(Endpoints.messages)/\(seeded.ids["to be deleted"]!)", token: alice)
        return seeded
    }

    @Test func eachFilterReturnsWhatItPromises() async throws {
        let s = try await seed()
        #expect(
            try await s.texts("") == [
                "hello Bob", "see https://example.com/x", "100% sure_thing", "a reply", "<image>",
                "<location>", "<text deleted>", "www.swift.org is nice"
            ])
        #expect(try await s.texts("categories=custom") == ["<location>"])
        #expect(try await s.texts("types=image,location") == ["<image>", "<location>"])
        #expect(
            try await s.texts("hideReplies=true&hideDeleted=true&types=text") == [
                "hello Bob", "see https://example.com/x",
                "100% sure_thing", "www.swift.org is nice"
            ])
        #expect(try await s.texts("searchKeyword=BOB") == ["hello Bob"])
        #expect(try await s.texts("searchKeyword=100%25") == ["100% sure_thing"])  // % is literal
        #expect(try await s.texts("searchKeyword=o_b") == [])  // _ is literal (as a wildcard it would match "o B")
        #expect(try await s.texts("searchKeyword=e_th") == ["100% sure_thing"])
        #expect(try await s.texts("hasLinks=true") == ["see https://example.com/x", "www.swift.org is nice"])
        #expect(
            try await s.texts("sender=bob") == [
                "see https://example.com/x", "a reply", "<image>", "www.swift.org is nice"
            ])
        #expect(try await s.texts("limit=2&before=\(s.ids["img"]!)") == ["100% sure_thing", "a reply"])
        #expect(try await s.texts("limit=2&after=\(s.ids["img"]!)") == ["<location>", "<text deleted>"])
    }

    @Test func timeAnchorsAndUpdatesOnly() async throws {
        let s = try await seed()
        let all = try await s.server.request("GET", s.path, token: s.alice).decode([MessagePayload].self)
        let pivot = all[4].sentAt
        let before = try await s.texts("sentBefore=\(pivot)")
        #expect(
            before
                == all.filter { $0.sentAt < pivot }.map {
                    $0.text ?? "<\($0.type)\($0.deletedAt == nil ? "" : " deleted")>"
                })
        let after = try await s.texts("sentAfter=\(pivot)&limit=100")
        #expect(after.count == all.filter { $0.sentAt > pivot }.count)
        // Edit one message; only updates after the mark come back with updatesOnly.
        let mark = all.map(\.updatedAt).max()!
        _ = try await s.server.request(
            "PATCH", "\(Endpoints.messages)/\(s.ids["hello Bob"]!)", token: s.alice,
            json: EditMessageRequest(text: "hello Bob!"))
        try await s.server.send("brand new", from: s.alice, to: "bob")
        #expect(try await s.texts("updatedAfter=\(mark)&updatesOnly=true") == ["hello Bob!"])
        #expect(try await s.texts("updatedAfter=\(mark)").contains("brand new"))
        #expect(try await s.server.request("GET", s.path + "?updatesOnly=true", token: s.alice).status == 400)
        #expect(try await s.server.request("GET", s.path + "?before=3&after=1", token: s.alice).status == 400)
    }
}
