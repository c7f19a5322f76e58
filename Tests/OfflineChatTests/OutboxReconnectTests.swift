import ChatTesting
import Foundation
import OfflineChatCache
import Testing

@testable import OfflineChat

/// What happens to queued messages around a reconnect when the app, not the SDK, decides.
@Suite(.timeLimit(.minutes(1))) struct OutboxReconnectTests {
    /// Alice (with `autoSendPendingOnReconnect` off) is in group g with bob, then offline
    /// with a message queued to bob and one to the group; chatd is back, alice is not yet.
    func queuedWhileAway() async throws -> (
        world: OutboxTests.World, toBob: OutboxTests.SendLog, toGroup: OutboxTests.SendLog
    ) {
        var offline = offlineOn()
        offline.autoSendPendingOnReconnect = false
        let world = try await OutboxTests().world(offline: offline)
        _ = try await world.server.request(
            "POST", Endpoints.groups, token: world.bobToken, json: CreateGroupRequest(guid: "g", name: "G"))
        _ = try await world.server.request(
            "POST", "\(Endpoints.groups)/g/members", token: world.bobToken, json: AddMemberRequest(uid: "alice"))
        _ = try await world.server.send("welcome", from: world.bobToken, to: "alice")
        for try await _ in ConversationRequest.ConversationRequestBuilder().build(client: world.alice).next() {}
        let cache = try #require(world.alice.session.current?.cache)
        #expect(
            Set(try cache.cachedConversations(after: nil, limit: 10).map(\.conversationId)) == ["alice~bob", "group_g"])

        world.server.stop()
        _ = await world.connection.next(where: { $0 == "disconnected" })
        let toBob = OutboxTests.SendLog()
        let toGroup = OutboxTests.SendLog()
        world.alice.sendTextMessage(
            message: TextMessage(receiverUid: "bob", text: "to bob", receiverType: .user),
            onMessagePending: toBob.pending, onMessageSent: toBob.sent, onError: toBob.error)
        world.alice.sendTextMessage(
            message: TextMessage(receiverUid: "g", text: "to the group", receiverType: .group),
            onMessagePending: toGroup.pending, onMessageSent: toGroup.sent, onError: toGroup.error)
        for log in [toBob.log, toGroup.log] {
            _ = await log.next()
            #expect(await log.next() == .error(ChatException.internetUnavailable))
        }
        try world.server.restart()
        return (world, toBob, toGroup)
    }

    /// With `autoSendPendingOnReconnect` off, queued messages wait after the reconnect; a
    /// conversation the refresh no longer finds (alice was removed from the group while
    /// offline) discards its queued message; `sendPendingMessages()` sends the rest.
    @Test func queuedMessagesWaitForTheAppAndARemovedConversationDiscardsItsOwn() async throws {
        let (world, toBob, toGroup) = try await queuedWhileAway()
        // while alice is away
        _ = try await world.server.request("DELETE", "\(Endpoints.groups)/g/members/alice", token: world.bobToken)
        await reconnectAndSettle(world.alice, clock: world.clock, connection: world.connection)
        #expect(world.alice.getPendingMessages().count == 2, "nothing is sent on its own")

        for try await _ in ConversationRequest.ConversationRequestBuilder().build(client: world.alice).next() {}
        #expect(await toGroup.log.next() == .error(ChatException.messageDiscarded))
        #expect(world.alice.getPendingMessages().compactMap { ($0 as? TextMessage)?.text } == ["to bob"])

        await world.alice.sendPendingMessages()
        guard case .server = await toBob.log.next() else {
            Issue.record("not sent")
            return
        }
        #expect(try await OutboxTests().serverTexts(world) == ["welcome", "to bob"])
    }

    /// Removed from the group while online (a live change), alice's message queued to it is
    /// discarded at once, as a removal found by a sync discards it.
    @Test func aConversationRemovedLiveDiscardsItsQueuedMessages() async throws {
        let (world, toBob, toGroup) = try await queuedWhileAway()
        await reconnectAndSettle(world.alice, clock: world.clock, connection: world.connection)
        #expect(world.alice.getPendingMessages().count == 2)
        _ = try await world.server.request("DELETE", "\(Endpoints.groups)/g/members/alice", token: world.bobToken)
        #expect(await toGroup.log.next() == .error(ChatException.messageDiscarded))
        #expect(world.alice.getPendingMessages().compactMap { ($0 as? TextMessage)?.text } == ["to bob"])
        await world.alice.sendPendingMessages()
        guard case .server = await toBob.log.next() else {
            Issue.record("not sent")
            return
        }
    }

    /// The seed's way to send a queued message by hand: `retryMessage` sends it now (its
    /// send's own callback fires too), with whatever else is due in the same flush.
    @Test func retryMessageSendsAQueuedMessage() async throws {
        let (world, toBob, toGroup) = try await queuedWhileAway()
        await reconnectAndSettle(world.alice, clock: world.clock, connection: world.connection)
        let queued = world.alice.getPendingMessages()
        #expect(queued.count == 2, "nothing is sent on its own")
        let retried = PhaseLog()
        let first = try #require(queued.first { $0.receiverUid == "bob" }?.localMessageId)
        world.alice.retryMessage(localId: first, onSuccess: { retried.push(.server([$0.id])) }, onError: retried.error)
        guard case .server(let ids) = await retried.next(), case .server(ids) = await toBob.log.next(),
            case .server = await toGroup.log.next()
        else {
            Issue.record("retryMessage did not send the queued messages")
            return
        }
        #expect(world.alice.getPendingMessages().isEmpty)
        #expect(
            try await OutboxTests().serverTexts(world) == ["welcome", "to bob"], "the group's message went to the group"
        )
        world.alice.retryMessage(localId: first, onSuccess: { retried.push(.server([$0.id])) }, onError: retried.error)
        #expect(await retried.next() == .error(ChatException.invalidArgument), "sent: nothing left to retry")
    }
}
