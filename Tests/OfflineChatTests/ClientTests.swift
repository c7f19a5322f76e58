import ChatTesting
import Foundation
import OfflineChatWebSocket
import Testing

@testable import OfflineChat

@Suite(.timeLimit(.minutes(1))) struct ClientTests {
    @Test func loginChecksTheTokenWithTheServer() async throws {
        let server = try LiveChatd()
        let token = try await server.user("alice", name: "Alice")
        _ = try await server.user("bob")
        let chat = try makeClient(server)
        let me = try await chat.login(uid: "alice", authToken: token)
        #expect(me.uid == "alice" && me.name == "Alice" && chat.getLoggedInUser()?.uid == "alice")

        let other = try makeClient(server)
        await #expect(throws: ChatException.self) { try await other.login(uid: "bob", authToken: token) }
        do {
            try await other.login(uid: "bob", authToken: "not-a-token")
            Issue.record("a bad token logged in")
        } catch let error as ChatException {
            #expect(error.errorCode == "unauthorized" && error.httpStatus == 401)
        }
        #expect(other.getLoggedInUser() == nil)
        chat.logout()
        #expect(chat.getLoggedInUser() == nil && chat.getConnectionStatus() == .disconnected)
        // The logout revoked the token on the server too.
        _ = await chat.session.revocation?.value
        let (status, _) = try await server.request("GET", Endpoints.me, token: token)
        #expect(status == 401)
    }

    @Test func anUnreachableServerIsInternetUnavailable() async throws {
        let server = try LiveChatd()
        let token = try await server.user("alice")
        server.stop()
        let chat = try makeClient(server)
        do {
            try await chat.login(uid: "alice", authToken: token)
            Issue.record("logged in without a server")
        } catch let error as ChatException {
            #expect(error.errorCode == ChatException.internetUnavailable)
        }
    }

    @Test func badConfigurationIsRefusedWithAReason() throws {
        let dir = FileManager.default.temporaryDirectory
        #expect(throws: ChatException.self) {
            try ChatClient(config: ChatConfig(appID: "", server: URL(string: "http://x")!, storageDirectory: dir))
        }
        #expect(throws: ChatException.self) {
            try ChatClient(config: ChatConfig(appID: "a/b", server: URL(string: "http://x")!, storageDirectory: dir))
        }
        #expect(throws: ChatException.self) {
            try ChatClient(config: ChatConfig(appID: "a", server: URL(string: "ftp://x")!, storageDirectory: dir))
        }
    }

    @Test func realtimeDeliversMessagesEditsTypingAndReceiptsOnTheCallbackQueue() async throws {
        let server = try LiveChatd()
        let aliceToken = try await server.user("alice")
        let bobToken = try await server.user("bob")
        let queue = DispatchQueue(label: "alice-callbacks")
        let alice = try makeClient(server, queue: queue)
        let recorder = Recorder(queue: queue)
        alice.addMessageListener("main", recorder)
        alice.addConnectionListener("main", recorder)
        try await alice.login(uid: "alice", authToken: aliceToken)
        #expect(await recorder.next() == "connecting")
        #expect(await recorder.next() == "connected")

        let bob = try makeClient(server)
        try await bob.login(uid: "bob", authToken: bobToken)
        let (status, data) = try await server.request(
            "POST", Endpoints.messages, token: bobToken,
            json: SendMessageRequest(muid: "m1", receiver: "alice", text: "hello"))
        #expect(status == 201)
        let sent = try JSONDecoder().decode(MessagePayload.self, from: data)
        #expect(await recorder.next() == "text:bob:hello:realtime")
        #expect(recorder.messages.last?.id == sent.id && recorder.messages.last?.conversationId == "alice~bob")

        _ = try await server.request(
            "PATCH", "\(Endpoints.messages)/\(sent.id)", token: bobToken, json: EditMessageRequest(text: "hi"))
        #expect(await recorder.next() == "edited:\(sent.id)")
        #expect((recorder.messages.last as? TextMessage)?.text == "hi")
        _ = try await server.request("DELETE", "\(Endpoints.messages)/\(sent.id)", token: bobToken)
        #expect(await recorder.next() == "deleted:\(sent.id)")
        _ = try await server.request(
            "POST", "\(Endpoints.conversations)/alice~bob/read", token: bobToken,
            json: ReceiptRequest(messageId: sent.id))
        // Bob's own send already marked it read for him: no change, so type instead.
        try await typing(from: bobToken, to: "alice", server: server)
        #expect(await recorder.next() == "typing:bob")
    }

    @Test func aDroppedConnectionReconnectsWithBackoffOnTheInjectedClock() async throws {
        let server = try LiveChatd()
        let token = try await server.user("alice")
        let clock = ManualClock()
        let queue = DispatchQueue(label: "callbacks")
        let chat = try makeClient(server, clock: clock, queue: queue)
        let recorder = Recorder(queue: queue)
        chat.addConnectionListener("c", recorder)
        try await chat.login(uid: "alice", authToken: token)
        #expect(await recorder.next(where: { $0 == "connected" }) == "connected")

        server.stop()
        #expect(await recorder.next() == "disconnected")
        // Offline: the client waits on the clock (the settle timer of the old connection is gone).
        await clock.waitForSleepers(1)
        let firstDelay = try #require(clock.nextDeadline)
        #expect((0...chat.config.reconnectBaseDelay).contains(firstDelay))
        clock.advance(by: firstDelay)
        #expect(await recorder.next() == "connecting")
        #expect(await recorder.next() == "disconnected")
        await clock.waitForSleepers(1)
        let secondDelay = try #require(clock.nextDeadline)
        #expect((0...2 * chat.config.reconnectBaseDelay).contains(secondDelay), "the ceiling doubles")

        try server.restart()
        clock.advance(by: secondDelay)
        #expect(await recorder.next() == "connecting")
        #expect(await recorder.next() == "connected")
        #expect(chat.getConnectionStatus() == .connected)
    }

    @Test func aRevokedTokenEndsTheSession() async throws {
        let server = try LiveChatd()
        let token = try await server.user("alice")
        let queue = DispatchQueue(label: "callbacks")
        let chat = try makeClient(server, queue: queue)
        let recorder = Recorder(queue: queue)
        chat.addConnectionListener("c", recorder)
        try await chat.login(uid: "alice", authToken: token)
        #expect(await recorder.next(where: { $0 == "connected" }) == "connected")
        try await server.revoke(token)
        #expect(await recorder.next(where: { $0 == "disconnected" }) == "disconnected")
        #expect(await waitUntil { chat.getLoggedInUser() == nil }, "the session ended without any clock moving")
    }

    func typing(from token: String, to receiver: String, server: LiveChatd) async throws {
        let socket = try WebSocketClient.connect(
            to: URL(string: "ws://127.0.0.1:\(server.port)\(Endpoints.realtime)")!,
            headers: ["Authorization": "Bearer \(token)"])
        _ = try socket.receive()  // hello
        let envelope = RealtimeEnvelope(type: .typing, typing: TypingPayload(receiver: receiver, isTyping: true))
        try socket.send(text: String(decoding: try JSONEncoder().encode(envelope), as: UTF8.self))
        socket.close()
    }

    /// Polls `condition` between task yields (no sleeping), bounded.
    func waitUntil(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<1_000_000 {
            if condition() { return true }
            await Task.yield()
        }
        return condition()
    }
}
