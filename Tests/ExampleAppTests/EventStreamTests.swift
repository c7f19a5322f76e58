import ChatTesting
import Foundation
import OfflineChat
import Testing

/// The listeners' events as async sequences, read with `for await` (public API only).
@Suite(.timeLimit(.minutes(1))) struct EventStreamTests {
    @Test func connectionChangesAndNewMessagesArriveAsAsyncSequences() async throws {
        let fake = FakeChatd()
        let token = fake.addUser("alice")
        fake.addUser("bob")
        let chat = try ChatClient(config: appTestConfig(fake))
        var statuses = chat.connectionStatuses().makeAsyncIterator()
        var messages = chat.receivedMessages().makeAsyncIterator()

        _ = try await chat.login(uid: "alice", authToken: token)
        #expect(await statuses.next() == .connecting)
        #expect(await statuses.next() == .connected)
        _ = fake.deliver(text: "hello", from: "bob", to: "alice")
        let received = await messages.next()
        #expect((received as? TextMessage)?.text == "hello")
        #expect(received?.senderUid == "bob")

        fake.isReachable = false
        #expect(await statuses.next() == .disconnected)
    }
}
