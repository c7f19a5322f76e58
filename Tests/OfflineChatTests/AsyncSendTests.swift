import ChatTesting
import Foundation
import OfflineChatLocking
import Testing

@testable import OfflineChat

/// The `async` twins of the sends and of `logout(onSuccess:onError:)`: each ends with the first
/// outcome its callback form reports (against `FakeChatd`, on a manual clock).
@Suite(.timeLimit(.minutes(1))) struct AsyncSendTests {
    typealias Support = SessionTasksTests

    /// alice (and bob) on a `FakeChatd`, alice logged in and connected, on a clock that stands
    /// still (her connection never settles: nothing runs but what a test starts).
    func connected() async throws -> (FakeChatd, ChatClient) {
        let fake = FakeChatd()
        let token = fake.addUser("alice")
        fake.addUser("bob")
        let (client, _) = try await Support.connectedClient(
            Support.config(fake, clock: ManualClock()), uid: "alice", token: token)
        return (fake, client)
    }

    func text(_ text: String) -> TextMessage { TextMessage(receiverUid: "bob", text: text, receiverType: .user) }

    @Test func anAwaitedSendReturnsTheSentMessageAfterItsPendingCallback() async throws {
        let (fake, client) = try await connected()
        let pending = Locked<[Int64]>([])
        let sent = try await client.sendTextMessage(
            message: text("hello"),
            onMessagePending: { message in pending.withLock { $0.append(message.localMessageId ?? 0) } })
        #expect(sent.id > 0)
        #expect((sent as? TextMessage)?.text == "hello")
        #expect(fake.messages.map(\.text) == ["hello"])
        #expect(pending.current.count == 1 && pending.current[0] > 0, "pending came first, with a local id")
        #expect(client.getPendingMessages().isEmpty)
    }

    @Test func anInvalidSendThrowsItsErrorAndQueuesNothing() async throws {
        let (_, client) = try await connected()
        await #expect(throws: ChatException.self) { try await client.sendTextMessage(message: text("")) }
        #expect(client.getPendingMessages().isEmpty)
    }

    @Test func offlineAnAwaitedSendThrowsInternetUnavailableAndTheMessageStaysQueued() async throws {
        let (fake, client) = try await connected()
        let connection = Recorder(queue: client.config.callbackQueue)
        client.addConnectionListener("offline", connection)
        fake.isReachable = false
        _ = await connection.next(where: { $0 == "disconnected" })
        do {
            _ = try await client.sendTextMessage(message: text("later"))
            Issue.record("an offline send returned")
        } catch let error as ChatException {
            #expect(error.errorCode == ChatException.internetUnavailable)
        }
        #expect(client.getPendingMessages().map { ($0 as? TextMessage)?.text } == ["later"])
    }

    @Test func cancellingTheWaitLeavesTheMessageQueued() async throws {
        let (fake, client) = try await connected()
        // A transient failure: the outbox backs off and reports nothing yet, so the wait goes on.
        fake.fail("POST", Endpoints.messages, status: 503, code: .unavailable)
        let waiting = Task { try await client.sendTextMessage(message: text("kept")) }
        while client.getPendingMessages().isEmpty { await Task.yield() }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(client.getPendingMessages().map { ($0 as? TextMessage)?.text } == ["kept"])
    }

    @Test func anAwaitedRetrySendsAFailedMessage() async throws {
        let (fake, client) = try await connected()
        fake.fail("POST", Endpoints.messages, status: 422, code: .validationFailed)
        await #expect(throws: ChatException.self) { try await client.sendTextMessage(message: text("again")) }
        let failed = try #require(client.getPendingMessages().first)
        #expect(failed.messageStatus == .failed)
        fake.removeAnswer("POST", Endpoints.messages)
        let sent = try await client.retryMessage(localId: try #require(failed.localMessageId))
        #expect(sent.id > 0)
        #expect(fake.messages.map(\.text) == ["again"])
        await #expect(throws: ChatException.self) { try await client.retryMessage(localId: 999) }
    }

    @Test func anAwaitedLogoutReturnsOnceTheTokenIsRevokedAndThrowsWhenItCannotBe() async throws {
        let (fake, client) = try await connected()
        let token = fake.token(for: "alice")
        _ = try await client.login(uid: "alice", authToken: token)
        try await client.logoutAndRevokeToken()
        #expect(client.getLoggedInUser() == nil)
        await #expect(throws: ChatException.self, "the token was revoked") {
            try await client.login(uid: "alice", authToken: token)
        }

        // Offline, chatd cannot be asked: the wait throws, and the session is over anyway.
        _ = try await client.login(uid: "alice", authToken: fake.token(for: "alice"))
        fake.isReachable = false
        do {
            try await client.logoutAndRevokeToken()
            Issue.record("an offline logout said the token was revoked")
        } catch let error as ChatException {
            #expect(error.errorCode == ChatException.internetUnavailable)
        }
        #expect(client.getLoggedInUser() == nil)
    }
}
