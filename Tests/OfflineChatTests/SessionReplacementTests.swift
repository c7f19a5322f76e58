import ChatTesting
import Foundation
import Testing

@testable import OfflineChat

/// A session another login replaces (or a rejected token ends) is cancelled, not awaited: the
/// login must not wait for a send the old session has on the wire. What the app can rely on
/// instead: the replaced session's connection tells it nothing more, and its cache closes
/// before its files go, so nothing it still runs can write them back.
@Suite(.timeLimit(.minutes(1))) struct SessionReplacementTests {
    @Test func aReplacedSessionsConnectionTellsTheAppNothingAndALogoutTellsItOnce() async throws {
        let fake = FakeChatd()
        let alice = fake.addUser("alice")
        let bob = fake.addUser("bob")
        let config = SessionTasksTests.config(fake, clock: ManualClock())
        let client = try ChatClient(config: config)
        let connection = Recorder(queue: config.callbackQueue)
        client.addConnectionListener("c", connection)
        _ = try await client.login(uid: "alice", authToken: alice)
        #expect(await connection.next() == "connecting")
        #expect(await connection.next() == "connected")
        let replaced = try #require(client.session.current)

        _ = try await client.login(uid: "bob", authToken: bob)
        #expect(await connection.next() == "connecting")
        #expect(await connection.next() == "connected")
        await replaced.tasks.end()
        config.callbackQueue.sync {}
        #expect(connection.pending == 0, "alice's connection ended without a word to bob's app")
        #expect(client.getConnectionStatus() == .connected)

        #expect(await SessionTasksTests.logOut(client))
        #expect(await connection.next() == "disconnected")
        config.callbackQueue.sync {}
        #expect(connection.pending == 0, "one disconnect for one logout")
        #expect(client.getConnectionStatus() == .disconnected)
    }

    @Test func anotherUsersLoginDoesNotWaitForASendInFlightAndTheOldCacheStaysGone() async throws {
        let fake = FakeChatd()
        let alice = fake.addUser("alice")
        let bob = fake.addUser("bob")
        var config = SessionTasksTests.config(fake, clock: ManualClock())
        let holding = SessionTasksTests.HoldingTransport(
            try #require(config.httpTransport), holding: Endpoints.messages)
        config.httpTransport = holding
        let (client, replaced) = try await SessionTasksTests.connectedClient(config, uid: "alice", token: alice)
        let sent = AsyncStream<String>.makeStream()
        client.sendTextMessage(
            message: TextMessage(receiverUid: "bob", text: "on the wire", receiverType: .user),
            onMessageSent: { sent.continuation.yield(($0 as? TextMessage)?.text ?? "?") },
            onError: { _ in sent.continuation.yield("failed") })
        var arrived = holding.arrived.stream.makeAsyncIterator()
        _ = await arrived.next()

        // The login returns while alice's send still waits for its answer.
        _ = try await client.login(uid: "bob", authToken: bob)
        let aliceFiles = client.cacheDirectory(for: "alice")
        #expect(!FileManager.default.fileExists(atPath: aliceFiles.path), "another user's cache is wiped at once")
        #expect(replaced.tasks.count >= 1, "alice's flush is still waiting")

        holding.release()
        await replaced.tasks.end()
        var outcome = sent.stream.makeAsyncIterator()
        #expect(await outcome.next() == "on the wire", "the server took it: reported sent")
        #expect(fake.messages.map(\.text) == ["on the wire"])
        #expect(!FileManager.default.fileExists(atPath: aliceFiles.path), "nothing the old session ran wrote it back")
        #expect(FileManager.default.fileExists(atPath: client.cacheDirectory(for: "bob").path))
        #expect(client.getLoggedInUser()?.uid == "bob")
    }

    @Test func aSendWithoutAnOutboxIsOneOfTheSessionsTasksAndALogoutAwaitsIt() async throws {
        let fake = FakeChatd()
        let alice = fake.addUser("alice")
        fake.addUser("bob")
        let clock = ManualClock()
        var config = SessionTasksTests.config(fake, clock: clock)
        config.offline = OfflineConfig(enabled: false)
        let holding = SessionTasksTests.HoldingTransport(
            try #require(config.httpTransport), holding: Endpoints.messages)
        config.httpTransport = holding
        let (client, session) = try await SessionTasksTests.connectedClient(config, uid: "alice", token: alice)
        #expect(session.outbox == nil)
        await clock.waitForSleepers(1)  // the connection's settle check has started
        let before = session.tasks.count
        let events = AsyncStream<String>.makeStream()
        client.sendTextMessage(
            message: TextMessage(receiverUid: "bob", text: "no outbox", receiverType: .user),
            onMessageSent: { _ in events.continuation.yield("sent") },
            onError: { events.continuation.yield("failed \($0.code)") })
        var arrived = holding.arrived.stream.makeAsyncIterator()
        _ = await arrived.next()
        #expect(session.tasks.count == before + 1, "the send is the session's")

        var answered = holding.answered.stream.makeAsyncIterator()
        client.logout(onSuccess: { events.continuation.yield("logged out") }, onError: { _ in })
        while let path = await answered.next(), path != Endpoints.meToken {}  // the revocation reached the server
        holding.release()
        var heard = events.stream.makeAsyncIterator()
        // The revocation reached the server first: the send's answer is a 401.
        let first = await heard.next()
        #expect(first == "failed \(ErrorCode.unauthorized)", "the send's outcome first: \(first ?? "none")")
        #expect(await heard.next() == "logged out", "the logout reported after the send it awaited")
        #expect(session.tasks.count == 0)
    }
}
