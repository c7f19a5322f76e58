import ChatTesting
import Foundation
import OfflineChatCache
import Testing

@testable import OfflineChat

@Suite(.timeLimit(.minutes(1))) struct GroupEventTests {
    final class Events: GroupListener, ConversationListener, @unchecked Sendable {
        let lines = PhaseLog()
        func onGroupMemberJoined(_ action: ActionMessage) { lines.push(.error("joined \(action.actionOn ?? "")")) }
        func onGroupMemberKicked(_ action: ActionMessage) {
            lines.push(.error("kicked \(action.actionOn ?? "") by \(action.actionBy ?? "")"))
        }
        func onConversationUpdated(_ conversation: Conversation) {
            lines.push(.error("updated \(conversation.conversationId) unread \(conversation.unreadMessageCount)"))
        }
    }

    @Test func membershipChangesReachGroupListenersAndAKickEmptiesTheCache() async throws {
        let server = try LiveChatd()
        let aliceToken = try await server.user("alice")
        let bobToken = try await server.user("bob")
        _ = try await server.request(
            "POST", Endpoints.groups, token: bobToken, json: CreateGroupRequest(guid: "g", name: "G"))
        _ = try await server.request(
            "POST", "\(Endpoints.groups)/g/members", token: bobToken, json: AddMemberRequest(uid: "alice"))
        let alice = try makeClient(server, offline: offlineOn())
        let events = Events()
        alice.addGroupListener("g", events)
        alice.addConversationListener("c", events)
        let connected = Recorder(queue: alice.config.callbackQueue)
        alice.addConnectionListener("c", connected)
        try await alice.login(uid: "alice", authToken: aliceToken)
        _ = await connected.next(where: { $0 == "connected" })
        for try await _ in ConversationRequest.ConversationRequestBuilder().build(client: alice).next() {}
        try await MessagesRequest.MessageRequestBuilder().set(guid: "g").build(client: alice).previous().reduce(
            into: ()
        ) { _, _ in }

        try await server.send("hello group", from: bobToken, to: "g", receiverType: .group)
        #expect(await events.lines.next() == .error("updated group_g unread 1"))
        _ = try await server.request("DELETE", "\(Endpoints.groups)/g/members/alice", token: bobToken)
        #expect(await events.lines.next() == .error("kicked alice by bob"))
        let cache = try #require(alice.session.current?.cache)
        #expect(
            try cache.conversation(id: ConversationPayload.groupID("g")) == nil, "out of the group: its cache is gone")
        #expect(try cache.cachedPage(.conversation(ConversationPayload.groupID("g")), .latest, limit: 30).isEmpty)
    }
}
