import ChatTesting
import Foundation
import OfflineChat
import Testing

/// What an app's own tests can look like: the SDK against `FakeChatd` (chatd's stand-in in the
/// test process), time on a `ManualClock`, listeners awaited instead of slept on. Only public
/// API: this target imports `OfflineChat` and `ChatTesting` as an app would, without
/// `@testable`.
@Suite(.timeLimit(.minutes(1))) struct ChatScreenTests {
    /// Everything the chat screen hears, in order, as short strings.
    final class Screen: MessageListener, ConnectionListener, ConversationListener, Sendable {
        private let stream: AsyncStream<String>
        private let continuation: AsyncStream<String>.Continuation

        init() { (stream, continuation) = AsyncStream<String>.makeStream() }

        func onTextMessageReceived(_ message: TextMessage) { continuation.yield("received \(message.text)") }
        func onConnected() { continuation.yield("connected") }
        func onDisconnected() { continuation.yield("disconnected") }
        func onSyncServerFinish(reInstall: Bool) { continuation.yield("synced") }

        /// Waits for `event` (earlier events are skipped); false if the test's time ran out.
        func next(_ event: String) async -> Bool {
            for await seen in stream where seen == event { return true }
            return false
        }
    }

    let fake = FakeChatd()
    let clock = ManualClock()

    /// Alice's app, logged in and connected, with its screen listening.
    func aliceLoggedIn() async throws -> (ChatClient, Screen) {
        let token = fake.addUser("alice")
        fake.addUser("bob")
        let config = appTestConfig(fake, offline: true, callbackQueue: DispatchQueue(label: "screen"), clock: clock)
        let client = try ChatClient(config: config)
        let screen = Screen()
        client.addMessageListener("screen", screen)
        client.addConnectionListener("screen", screen)
        client.addConversationListener("screen", screen)
        _ = try await client.login(uid: "alice", authToken: token)
        #expect(await screen.next("connected"))
        return (client, screen)
    }

    /// The network comes back: the reconnect's backoff and the settle delay pass on the clock.
    func reconnect(_ client: ChatClient, _ screen: Screen) async {
        fake.isReachable = true
        await clock.waitForSleepers()
        clock.advance(by: clock.nextDeadline ?? 0)
        #expect(await screen.next("connected"))
        await clock.waitForSleepers()
        clock.advance(by: client.config.connectionSettleDelay)
    }

    @Test func bobsMessageArrivesLive() async throws {
        let (client, screen) = try await aliceLoggedIn()
        fake.deliver(text: "hello alice", from: "bob", to: "alice")
        #expect(await screen.next("received hello alice"))
        withExtendedLifetime(client) {}  // the SDK holds its listeners weakly, and the client too
    }

    @Test func aMessageWrittenOfflineIsQueuedThenSentOnceAfterTheReconnect() async throws {
        let (client, screen) = try await aliceLoggedIn()
        fake.isReachable = false
        #expect(await screen.next("disconnected"))

        let (outcome, told) = AsyncStream<String>.makeStream()
        client.sendTextMessage(
            message: TextMessage(receiverUid: "bob", text: "written in a tunnel", receiverType: .user),
            onMessagePending: { _ in told.yield("pending") }, onMessageSent: { _ in told.yield("sent") },
            onError: { told.yield($0.errorCode) })
        var outcomes = outcome.makeAsyncIterator()
        #expect(await outcomes.next() == "pending", "on screen at once")
        #expect(await outcomes.next() == ChatException.internetUnavailable, "queued, not failed")
        #expect(client.getPendingMessages().count == 1)
        #expect(fake.messages.isEmpty)

        await reconnect(client, screen)
        #expect(await outcomes.next() == "sent")
        #expect(fake.messages.map(\.text) == ["written in a tunnel"])
        #expect(client.getPendingMessages().isEmpty)
    }

    @Test func whatArrivedWhileOfflineIsCaughtUpAndReadableWithoutANetwork() async throws {
        let (client, screen) = try await aliceLoggedIn()
        clock.advance(by: client.config.connectionSettleDelay)
        #expect(await screen.next("synced"), "the first sync after the login")
        fake.isReachable = false
        #expect(await screen.next("disconnected"))
        fake.deliver(text: "while you were away", from: "bob", to: "alice")
        fake.deliver(text: "are you there?", from: "bob", to: "alice")

        await reconnect(client, screen)
        #expect(await screen.next("synced"))
        fake.isReachable = false  // the screen opens in a tunnel: the cache answers
        #expect(await cachedTexts(client, with: "bob") == ["while you were away", "are you there?"])
    }

    @Test func theFirstSyncLeavesEachConversationsLastMessageReadableOffline() async throws {
        fake.addUser("bob")
        fake.deliver(text: "sent before alice ever logged in", from: "bob", to: "alice")
        let (client, screen) = try await aliceLoggedIn()
        clock.advance(by: client.config.connectionSettleDelay)
        #expect(await screen.next("synced"))
        fake.isReachable = false
        #expect(await cachedTexts(client, with: "bob") == ["sent before alice ever logged in"])
    }

    /// The texts of the cached phase of a conversation's newest page.
    func cachedTexts(_ client: ChatClient, with uid: String) async -> [String]? {
        guard let request = try? MessagesRequest.MessageRequestBuilder().set(uid: uid).build(client: client) else {
            return nil
        }
        var phases = request.previous().makeAsyncIterator()
        guard case .cached(let cached)? = try? await phases.next() else { return nil }
        return cached.compactMap { ($0 as? TextMessage)?.text }
    }
}
