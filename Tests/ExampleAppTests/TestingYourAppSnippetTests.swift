import ChatTesting
import Foundation
import OfflineChat
import Testing

/// The DocC article "Testing your app" prints this test's body (between the markers) as its
/// example: it runs here, so the article's code works as written.
@Suite(.timeLimit(.minutes(1))) struct TestingYourAppSnippetTests {
    /// The connection's changes, awaited one at a time.
    final class Connection: ConnectionListener, Sendable {
        private let events = AsyncStream<String>.makeStream()
        func onConnected() { events.continuation.yield("connected") }
        func onDisconnected() { events.continuation.yield("disconnected") }
        /// Waits for `event` (earlier ones are skipped); false if the test's time ran out.
        func next(_ event: String) async -> Bool {
            for await seen in events.stream where seen == event { return true }
            return false
        }
    }

    @Test func theArticlesExampleRuns() async throws {
        var offline = OfflineConfig()
        offline.enabled = true
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("snippet-\(UUID())")
        let clock = ManualClock()
        // The article's example begins.
        let fake = FakeChatd()
        let token = fake.addUser("alice")
        fake.addUser("bob")
        var config = ChatConfig(
            appID: "test", server: fake.url, storageDirectory: directory,
            offline: offline, callbackQueue: DispatchQueue(label: "test"), clock: clock)
        fake.configure(&config)
        let client = try ChatClient(config: config)
        let connection = Connection()  // a ConnectionListener of the test's
        client.addConnectionListener("test", connection)
        _ = try await client.login(uid: "alice", authToken: token)
        #expect(await connection.next("connected"))

        fake.isReachable = false  // into a tunnel
        #expect(await connection.next("disconnected"))
        await #expect(throws: ChatException.self) {  // ERROR_INTERNET_UNAVAILABLE: queued, not failed
            try await client.sendTextMessage(message: TextMessage(receiverUid: "bob", text: "hi", receiverType: .user))
        }
        fake.isReachable = true  // out again
        await clock.waitForSleepers()
        clock.advance(by: clock.nextDeadline ?? 0)  // the reconnect's backoff
        #expect(await connection.next("connected"))
        await clock.waitForSleepers()
        clock.advance(by: config.connectionSettleDelay)  // settled: the outbox flushes
        while !client.getPendingMessages().isEmpty { await Task.yield() }
        #expect(fake.messages.map(\.text) == ["hi"])
        // The article's example ends.
    }
}
