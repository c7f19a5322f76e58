import Foundation
import OfflineChatProtocol
import Testing

@Suite struct MessageTests {
    @Test func aTextMessageIsStoredAndReturned() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        _ = try await server.user("bob")
        let reply = try await server.request(
            "POST", Endpoints.messages, token: alice,
            json: SendMessageRequest(muid: "m-1", receiver: "bob", text: "hello"))
        #expect(reply.status == 201)
        let message = try reply.decode(MessagePayload.self)
        #expect(message.sender == "alice" && message.receiver == "bob" && message.text == "hello")
        #expect(message.conversationId == "alice~bob" && message.muid == "m-1")
        let fetched = try await server.request("GET", "\(Endpoints.messages)/\(message.id)", token: alice)
        #expect(try fetched.decode(MessagePayload.self) == message)
    }

    @Test func mediaAndCustomMessagesKeepTheirData() async throws {
        let server = try InProcessServer(arguments: ["--allow-https-media"])
        let alice = try await server.user("alice")
        _ = try await server.user("bob")
        let attachment = Attachment(
            url: "https://files.example/cat.png", name: "cat.png", size: 1234, mimeType: "image/png", extension: "png")
        let media = try await server.request(
            "POST", Endpoints.messages, token: alice,
            json: SendMessageRequest(muid: "m1", receiver: "bob", type: "image", attachment: attachment))
        #expect(media.status == 201)
        #expect(try media.decode(MessagePayload.self).attachment == attachment)
        let custom = try await server.request(
            "POST", Endpoints.messages, token: alice,
            json: SendMessageRequest(
                muid: "m2", receiver: "bob", category: .custom, type: "location",
                customData: .object(["lat": .number(1.5)])))
        #expect(try custom.decode(MessagePayload.self).customData == .object(["lat": .number(1.5)]))
    }

    @Test func invalidMessagesAre422WithAReason() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        _ = try await server.user("bob")
        let cases: [(SendMessageRequest, String)] = [
            (SendMessageRequest(muid: "a", receiver: "bob", type: "image"), "attachment"),
            (SendMessageRequest(muid: "b", receiver: "bob", category: .custom, type: "x"), "customData"),
            (SendMessageRequest(muid: "c", receiver: "bob", text: ""), "text"),
            (SendMessageRequest(muid: "", receiver: "bob", text: "x"), "muid"),
            (SendMessageRequest(muid: "d", receiver: "alice", text: "x"), "yourself"),
            (SendMessageRequest(muid: "e", receiver: "bob", type: "sticker", text: "x"), "type"),
            (SendMessageRequest(muid: "f", receiver: "bob", category: .action, type: "x"), "created by chatd")
        ]
        for (request, reason) in cases {
            let reply = try await server.request("POST", Endpoints.messages, token: alice, json: request)
            #expect(reply.status == 422, "\(request)")
            #expect(
                reply.error?.message.contains(reason) == true, "\(reply.error?.message ?? "") should mention \(reason)")
        }
        let noGroup = try await server.request(
            "POST", Endpoints.messages, token: alice,
            json: SendMessageRequest(muid: "g", receiver: "bob", receiverType: .group, text: "x"))
        #expect(noGroup.status == 404 && noGroup.error?.message.contains("no group bob") == true)
        let unknown = try await server.request(
            "POST", Endpoints.messages, token: alice,
            json: SendMessageRequest(muid: "h", receiver: "ghost", text: "x"))
        #expect(unknown.status == 404)
    }

    @Test func theSameMuidFromTheSameSenderReturnsTheOriginal() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        let request = SendMessageRequest(muid: "once", receiver: "bob", text: "first")
        let first = try await server.request("POST", Endpoints.messages, token: alice, json: request)
        var retry = request
        retry.text = "changed on retry"
        let second = try await server.request("POST", Endpoints.messages, token: alice, json: retry)
        #expect(first.status == 201 && second.status == 200)
        #expect(try first.decode(MessagePayload.self) == second.decode(MessagePayload.self))
        // Another sender may use the same muid.
        let fromBob = try await server.request(
            "POST", Endpoints.messages, token: bob,
            json: SendMessageRequest(muid: "once", receiver: "alice", text: "mine"))
        #expect(fromBob.status == 201)
    }

    @Test func concurrentRetriesOfOneMuidCreateExactlyOneMessage() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        _ = try await server.user("bob")
        let request = SendMessageRequest(muid: "storm", receiver: "bob", text: "only once")
        let replies = try await withThrowingTaskGroup(of: Reply.self) { group in
            for _ in 0..<24 {
                group.addTask { try await server.request("POST", Endpoints.messages, token: alice, json: request) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(replies.filter { $0.status == 201 }.count == 1)
        #expect(replies.filter { $0.status == 200 }.count == 23)
        #expect(Set(try replies.map { try $0.decode(MessagePayload.self).id }).count == 1)
        let history = try await server.request("GET", "\(Endpoints.conversations)/alice~bob/messages", token: alice)
        #expect(try history.decode([MessagePayload].self).count == 1)
        let changes = try await server.request(
            "GET", "\(Endpoints.changes)?cursor=\(try await server.beginning(alice))", token: alice)
        #expect(try changes.decode(ChangelogPage.self).changes.count == 1)
    }

    @Test func theSenderEditsAndOthersMayNot() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        let message = try await server.send("draft", from: alice, to: "bob")
        let edited = try await server.request(
            "PATCH", "\(Endpoints.messages)/\(message.id)", token: alice,
            json: EditMessageRequest(text: "final"))
        let after = try edited.decode(MessagePayload.self)
        #expect(after.text == "final" && after.editedAt != nil && after.updatedAt >= message.updatedAt)
        let byBob = try await server.request(
            "PATCH", "\(Endpoints.messages)/\(message.id)", token: bob, json: EditMessageRequest(text: "x"))
        #expect(byBob.status == 403)
        let empty = try await server.request(
            "PATCH", "\(Endpoints.messages)/\(message.id)", token: alice, json: EditMessageRequest())
        #expect(empty.status == 422)
    }

    @Test func deletionIsSoftClearsContentAndIsIdempotent() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        let message = try await server.send("secret", from: alice, to: "bob")
        #expect(try await server.request("DELETE", "\(Endpoints.messages)/\(message.id)", token: bob).status == 403)
        let deleted = try await server.request("DELETE", "\(Endpoints.messages)/\(message.id)", token: alice).decode(
            MessagePayload.self)
        #expect(deleted.deletedAt != nil && deleted.text == nil && deleted.id == message.id)
        let again = try await server.request("DELETE", "\(Endpoints.messages)/\(message.id)", token: alice).decode(
            MessagePayload.self)
        #expect(again == deleted)
        let edit = try await server.request(
            "PATCH", "\(Endpoints.messages)/\(message.id)", token: alice, json: EditMessageRequest(text: "x"))
        #expect(edit.status == 409)
        // Bob still sees the tombstone.
        let seen = try await server.request("GET", "\(Endpoints.messages)/\(message.id)", token: bob).decode(
            MessagePayload.self)
        #expect(seen.deletedAt == deleted.deletedAt)
    }

    @Test func unknownMessagesAre404() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        for path in ["/999", "/abc", "/-1"] {
            #expect(try await server.request("GET", Endpoints.messages + path, token: alice).status == 404)
        }
    }
}
