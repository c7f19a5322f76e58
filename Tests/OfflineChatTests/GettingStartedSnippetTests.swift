import ChatTesting
import Foundation
import OfflineChat
import OfflineChatSQLite
import Testing

/// The DocC article "Getting started" prints each example of this test (between the markers)
/// as one of its code blocks: they run here, in order, against a real chatd, as an app would
/// run them (the default callback queue, the default clock), so the article works as written.
@Suite(.timeLimit(.minutes(1))) @MainActor struct GettingStartedSnippetTests {
    /// The article turns encryption on: without SQLCipher (the `SystemSQLite` trait) a session
    /// then runs online only (`encryptionFailureBehavior`'s default) and has no outbox to flush.
    @Test(.enabled(if: Connection.cipherAvailable)) func theArticlesExamplesRun() async throws {
        let server = try LiveChatd()
        let token = try await server.user("alice")
        try await server.send("hello alice", from: try await server.user("bob"), to: "alice")
        let serverURL = server.url
        let applicationSupport = FileManager.default.temporaryDirectory.appendingPathComponent("start-\(UUID())")
        var shown: [String] = []
        func show(_ messages: [BaseMessage]) { shown += messages.compactMap { ($0 as? TextMessage)?.text } }
        var listed: [String] = []
        func showList(_ conversations: [Conversation]) { listed = conversations.map(\.conversationId) }
        var rescheduled = false
        func scheduleAnotherBackgroundTask() { rescheduled = true }

        // The article's example "log in" begins.
        var offline = OfflineConfig()
        offline.enabled = true  // keep a cache, queue sends while offline
        offline.encryption = true  // SQLCipher at rest, the key in the Keychain

        let config = ChatConfig(
            appID: "demo",
            server: serverURL,  // your chatd, https://chat.example.com
            storageDirectory: applicationSupport.appendingPathComponent("chat"),
            offline: offline)
        let chat = try ChatClient(config: config)
        let me = try await chat.login(uid: "alice", authToken: token)
        // The article's example "log in" ends.
        #expect(me.uid == "alice")

        // The article's example "read" begins.
        let request = try MessagesRequest.MessageRequestBuilder()
            .set(uid: "bob")
            .set(limit: 30)
            .build(client: chat)
        for try await phase in request.previous() {
            switch phase {
            case .cached(let messages): show(messages)  // at once, from the device
            case .server(let messages): show(messages)  // when the server answers
            }
        }
        // The article's example "read" ends.
        #expect(shown == ["hello alice"], "nothing cached yet, then the server's page")

        // The article's example "list" begins.
        let conversations = ConversationRequest.ConversationRequestBuilder()
            .set(limit: 30)
            .build(client: chat)
        for try await phase in conversations.next() {
            switch phase {
            case .cached(let page): showList(page)  // the list as the device last saw it
            case .server(let page): showList(page)  // with unread counts and last messages
            }
        }
        // The article's example "list" ends.
        #expect(listed == ["alice~bob"])

        // The article's example "view model" begins.
        @MainActor final class ChatViewModel: @MainActor MessageListener, @MainActor ConnectionListener {
            var messages: [BaseMessage] = []
            var online = false
            func onTextMessageReceived(_ message: TextMessage) { messages.append(message) }
            func onConnected() { online = true }
            func onDisconnected() { online = false }
        }

        let model = ChatViewModel()
        chat.addMessageListener("chat-screen", model)  // held weakly
        chat.addConnectionListener("chat-screen", model)
        // The article's example "view model" ends.
        try await server.send("are you there?", from: try await server.token("bob"), to: "alice")
        while model.messages.isEmpty { await Task.yield() }
        #expect((model.messages.first as? TextMessage)?.text == "are you there?")

        // The article's example "send" begins.
        let message = TextMessage(receiverUid: "bob", text: "hi", receiverType: .user)
        chat.sendTextMessage(
            message: message,
            onMessagePending: { queued in
                // durably queued: show it at once
            },
            onMessageSent: { sent in
                // the server's id and time
            },
            onError: { error in
                // offline: queued, not failed
            })
        // The article's example "send" ends.

        // The article's example "send async" begins.
        do {
            let sent = try await chat.sendTextMessage(
                message: TextMessage(receiverUid: "bob", text: "hi again", receiverType: .user))
            show([sent])
        } catch let error as ChatException where error.code == .internetUnavailable {
            // Queued, not failed: `onOutboxMessageSent` reports it after the reconnect.
        }
        // The article's example "send async" ends.
        #expect(shown.last == "hi again")

        // The article's example "background" begins.
        let flushed = try await chat.flushOutbox()  // sent, failed, remaining
        let synced = try await chat.sync()  // sweeps, reInstall, caughtUp
        if flushed.remaining > 0 || !synced.caughtUp { scheduleAnotherBackgroundTask() }
        // The article's example "background" ends.
        #expect(!rescheduled, "everything sent and caught up")
        chat.logout()
    }
}
