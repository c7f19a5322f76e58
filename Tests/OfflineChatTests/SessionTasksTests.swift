import ChatTesting
import Foundation
import Testing

@testable import OfflineChat

/// A session owns every task working for it: its end cancels them, and none is left waiting on
/// the clock for a session that is gone (against `FakeChatd`, on a manual clock).
@Suite(.timeLimit(.minutes(1))) struct SessionTasksTests {
    @Test func logoutEndsTheOutboxsBackoffWaitWithTheSession() async throws {
        let fake = FakeChatd()
        let clock = ManualClock()
        let token = fake.addUser("alice")
        fake.addUser("bob")
        var config = ChatConfig(
            appID: "tasks", server: fake.url,
            storageDirectory: FileManager.default.temporaryDirectory.appendingPathComponent("tasks-\(UUID())"),
            offline: offlineOn(), callbackQueue: DispatchQueue(label: "tasks"), clock: clock,
            logger: StandardErrorLogger(minimumLevel: .error))
        config.keyStore = InMemoryKeyStore()
        fake.configure(&config)
        let client = try ChatClient(config: config)
        let connection = Recorder(queue: config.callbackQueue)
        client.addConnectionListener("c", connection)
        _ = try await client.login(uid: "alice", authToken: token)
        _ = await connection.next(where: { $0 == "connected" })
        let session = try #require(client.session.current)

        fake.fail("POST", Endpoints.messages, status: 503, code: .unavailable)
        let failed = AsyncStream<Void>.makeStream()
        client.sendTextMessage(
            message: TextMessage(receiverUid: "bob", text: "retried later", receiverType: .user),
            onMessageSent: { _ in }, onError: { _ in failed.continuation.yield() })
        // The connection's settle wait and the outbox's backoff after the 503.
        await clock.waitForSleepers(2)
        #expect(session.tasks.count >= 1, "the backoff's wake-up is one of the session's tasks")

        // The callback form reports once the token is revoked and the session's tasks returned.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            client.logout(onSuccess: { done.resume() }, onError: { _ in done.resume() })
        }
        #expect(session.tasks.count == 0)
        #expect(clock.sleeperCount == 0, "nothing of the session still waits on the clock")
        #expect(session.tasks.start {} == nil, "an ended session starts nothing")
    }
}
