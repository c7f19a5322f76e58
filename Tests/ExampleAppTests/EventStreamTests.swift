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
        var config = ChatConfig(
            appID: "example", server: fake.url,
            storageDirectory: FileManager.default.temporaryDirectory.appendingPathComponent("streams-\(UUID())"),
            callbackQueue: DispatchQueue(label: "streams"), clock: ManualClock())
        fake.configure(&config)
        let chat = try ChatClient(config: config)
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
