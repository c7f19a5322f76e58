import Foundation
import OfflineChatProtocol
import Testing

@testable import OfflineChat

/// A member sees a group's messages from their join to their leave, never before or after,
/// through the SDK's public listeners, whether they arrive live or in a catch-up: bob is added,
/// kicked, added again, leaves, is added again and is banned while alice writes before, during
/// and between his stays.
extension SyncLiveTests {
    /// alice's moves on group g with bob in and out of it (bob is not a member at first); the
    /// ids of the texts she sent during his stays, which bob must see exactly.
    func moveBobInAndOut(_ world: World) async throws -> [Int64] {
        let (server, alice) = (world.server, world.aliceToken)
        var stays: [Int64] = []
        func send(_ text: String) async throws -> Int64 {
            try await server.send(text, from: alice, to: "g", receiverType: .group)
        }
        let members = "\(Endpoints.groups)/g/members"
        _ = try await send("before bob joined")
        #expect(
            try await server.request("POST", members, token: alice, json: AddMemberRequest(uid: "bob")).status == 201)
        stays.append(try await send("bob's first stay"))
        #expect(try await server.request("DELETE", "\(members)/bob", token: alice).status == 204)
        _ = try await send("while bob was kicked")
        #expect(
            try await server.request("POST", members, token: alice, json: AddMemberRequest(uid: "bob")).status == 201)
        stays.append(try await send("bob's second stay"))
        #expect(try await server.request("POST", "\(Endpoints.groups)/g/leave", token: world.bobToken).status < 300)
        _ = try await send("after bob left")
        #expect(
            try await server.request("POST", members, token: alice, json: AddMemberRequest(uid: "bob")).status == 201)
        stays.append(try await send("bob's third stay"))
        #expect(try await server.request("PUT", "\(Endpoints.groups)/g/bans/bob", token: alice).status == 200)
        _ = try await send("while bob was banned")
        return stays
    }

    /// The group's text messages among `messages`, by id.
    func groupTexts(_ messages: [BaseMessage]) -> [Int64] {
        messages.filter { $0.conversationId == "group_g" && $0 is TextMessage }.map(\.id)
    }

    @Test func aMemberCatchingUpSeesTheGroupOnlyWhileInIt() async throws {
        let world = try await world { server, alice in
            _ = try await server.request(
                "POST", Endpoints.groups, token: alice, json: CreateGroupRequest(guid: "g", name: "G"))
            _ = try await server.send("hello", from: alice, to: "bob")
        }
        await goOffline(world)
        let stays = try await moveBobInAndOut(world)
        _ = try await world.server.send("after it all", from: world.aliceToken, to: "bob")
        await comeBack(world)
        let outcomes = await world.log.sweep().filter { $0.hasPrefix("messages ") && !$0.hasSuffix("started") }
        #expect(outcomes.last?.hasSuffix("caughtUp") == true, "\(outcomes)")
        let swept = world.log.swept
        #expect(groupTexts(swept) == stays, "his stays' messages, in order, nothing from outside them")
        // His adds come as messages; a kick, a leave or a ban takes the conversation away from
        // him (its history is no longer his to keep: `ChangePayload.removesConversation`).
        let actions = swept.compactMap { $0 as? ActionMessage }.filter { $0.conversationId == "group_g" }
        #expect(actions.map { $0.action?.action } == [.added, .added, .added], "each add of him, once")
        #expect(swept.contains { $0.conversationId == "alice~bob" && ($0 as? TextMessage)?.text == "after it all" })
    }

    @Test func aConnectedMemberHearsTheGroupOnlyWhileInIt() async throws {
        let world = try await world { server, alice in
            _ = try await server.request(
                "POST", Endpoints.groups, token: alice, json: CreateGroupRequest(guid: "g", name: "G"))
        }
        let heard = HeardMessages()
        world.bob.addMessageListener("heard", heard)
        let stays = try await moveBobInAndOut(world)
        // A direct message after it all: once it is heard, everything before it was too.
        let last = try await world.server.send("after it all", from: world.aliceToken, to: "bob")
        try await heard.wait(for: last)
        #expect(groupTexts(heard.messages) == stays, "his stays' messages, live, nothing from outside them")
        #expect(heard.messages.allSatisfy { $0.source == .realtime || $0.conversationId != "group_g" })
    }
}

/// Every text and action message a client's listener heard, in order.
final class HeardMessages: MessageListener, @unchecked Sendable {
    private let lock = NSLock()
    private var heard: [BaseMessage] = []
    private let arrivals = EventQueue<Int64>(cancelled: -1)

    var messages: [BaseMessage] { lock.withLock { heard } }

    func onTextMessageReceived(_ message: TextMessage) { take(message) }
    func onActionMessageReceived(_ message: ActionMessage) { take(message) }

    private func take(_ message: BaseMessage) {
        lock.withLock { heard.append(message) }
        arrivals.push(message.id)
    }

    /// Returns once the message `id` was heard.
    func wait(for id: Int64) async throws {
        while await arrivals.next() != id {}
    }
}
