import ChatTesting
import Foundation
import OfflineChat
import Testing

/// A view model on the main actor, as most iOS apps write one: its conformances are isolated to
/// the main actor (`@MainActor MessageListener`, the compiler's own suggestion for such a
/// class), and it hears every event on the main queue (the default callback queue).
@MainActor
final class ChatViewModel: @MainActor MessageListener, @MainActor ConnectionListener,
    @MainActor SyncListener, @MainActor ConversationListener, @MainActor GroupListener,
    @MainActor OfflineCacheResetListener
{
    var heard: [String] = []

    func onConnected() { heard.append("connected") }
    func onTextMessageReceived(_ message: TextMessage) { heard.append("received \(message.text)") }
    func onConversationSyncStarted() { heard.append("conversation sync started") }
    func onSyncServerStart(reInstall: Bool) { heard.append("sync started") }
    func onGroupMemberJoined(_ action: ActionMessage) { heard.append("joined") }
    func onOfflineCacheReset(_ reason: OfflineCacheResetReason, _ pendingMessagesLost: Int) { heard.append("reset") }
}

@Suite(.timeLimit(.minutes(1))) @MainActor struct MainActorListenerTests {
    /// Lets the main queue run until `condition` holds (the suite's time limit ends a wait that
    /// never does).
    func until(_ condition: () -> Bool) async {
        while !condition() { await Task.yield() }
    }

    @Test func aMainActorViewModelHearsEveryKindOfEvent() async throws {
        let fake = FakeChatd()
        let token = fake.addUser("alice")
        fake.addUser("bob")
        let config = appTestConfig(fake, offline: true, callbackQueue: .main)  // the default queue
        let chat = try ChatClient(config: config)
        let model = ChatViewModel()
        chat.addMessageListener("vm", model)
        chat.addConnectionListener("vm", model)
        chat.addSyncListener("vm", model)
        chat.addConversationListener("vm", model)
        chat.addGroupListener("vm", model)
        chat.addOfflineCacheResetListener("vm", model)

        try await chat.login(uid: "alice", authToken: token)
        await until { model.heard.contains("connected") }
        _ = fake.deliver(text: "hello", from: "bob", to: "alice")
        await until { model.heard.contains("received hello") }
        try await chat.forceSyncNow()
        await until { model.heard.contains("sync started") && model.heard.contains("conversation sync started") }
    }
}
