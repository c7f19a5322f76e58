import Foundation
import OfflineChatProtocol
import Testing

/// Call messages: records of calls (no media transport), moved along their status graph.
@Suite struct CallTests {
    func call(
        _ server: some ChatdUnderTest, _ token: String, to receiver: String, type: String = "audio",
        status: CallStatus? = nil
    ) async throws -> Reply {
        try await server.request(
            "POST", Endpoints.messages, token: token,
            json: SendMessageRequest(
                muid: UUID().uuidString, receiver: receiver, category: .call, type: type, callStatus: status))
    }

    func move(_ server: some ChatdUnderTest, _ token: String, _ id: Int64, _ status: CallStatus) async throws -> Reply {
        try await server.request(
            "PATCH", "\(Endpoints.messages)/\(id)", token: token, json: EditMessageRequest(callStatus: status))
    }

    @Test func aCallGoesInitiatedOngoingEndedAndEitherSideMovesIt() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        let started = try await call(server, alice, to: "bob", type: "video")
        #expect(started.status == 201)
        let message = try started.decode(MessagePayload.self)
        #expect(message.category == .call && message.callStatus == .initiated)
        #expect(try await move(server, bob, message.id, .ongoing).decode(MessagePayload.self).callStatus == .ongoing)
        #expect(try await move(server, alice, message.id, .ended).decode(MessagePayload.self).callStatus == .ended)
        let illegal = try await move(server, bob, message.id, .ongoing)
        #expect(illegal.status == 409)
        let changes = try await server.request(
            "GET", Endpoints.changes + "?cursor=\(try await server.beginning(bob))", token: bob
        ).decode(
            ChangelogPage.self)
        #expect(changes.changes.compactMap { $0.message?.callStatus } == [.initiated, .ongoing, .ended])
    }

    @Test func missedAndRejectedAreFinalAndBadCallsAreRefused() async throws {
        let server = try InProcessServer()
        let alice = try await server.user("alice")
        let bob = try await server.user("bob")
        let carol = try await server.user("carol")
        let missed = try await call(server, alice, to: "bob", status: .missed)
        #expect(try missed.decode(MessagePayload.self).callStatus == .missed)
        let ringing = try await call(server, alice, to: "bob").decode(MessagePayload.self)
        #expect(try await move(server, bob, ringing.id, .rejected).status == 200)
        #expect(try await move(server, alice, ringing.id, .ended).status == 409)
        #expect(try await move(server, carol, ringing.id, .ended).status == 403)
        #expect(try await call(server, alice, to: "bob", type: "text").status == 422)
        #expect(try await call(server, alice, to: "bob", status: .ongoing).status == 422)
        let text = try await server.send("hi", from: alice, to: "bob")
        #expect(try await move(server, alice, text.id, .ended).status == 422)
        let statusOnText = try await server.request(
            "POST", Endpoints.messages, token: alice,
            json: SendMessageRequest(
                muid: "x", receiver: "bob", text: "x", callStatus: .initiated))
        #expect(statusOnText.status == 422)
        let calls = try await server.request(
            "GET", "\(Endpoints.conversations)/alice~bob/messages?categories=call", token: bob)
        #expect(try calls.decode([MessagePayload].self).count == 2)
    }
}
