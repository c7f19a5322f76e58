import Foundation
import OfflineChat
import OfflineChatLocking

/// Everything the SDK tells during a run, as named events a command can wait for, plus a
/// hook for commands that print them as they come (`listen`, `sync`).
final class CLIEvents: ConnectionListener, ConversationListener, SyncListener, MessageListener, @unchecked Sendable {
    typealias Printer = @Sendable (String, [String: Any], String) -> Void

    /// Someone waiting for the first of some events; resumed exactly once.
    private final class Waiter: @unchecked Sendable {  // `continuation` is only touched under `state`'s lock
        let names: [String]
        var continuation: CheckedContinuation<String?, Never>?
        init(_ names: [String], _ continuation: CheckedContinuation<String?, Never>) {
            self.names = names
            self.continuation = continuation
        }
    }

    private struct State {
        var seen: [String] = []
        var waiters: [Waiter] = []
        var printer: Printer?
        var lastOutcome: SyncOutcome?
    }
    private let state = Locked(State())

    /// The last message sweep's outcome.
    var outcome: SyncOutcome? { state.withLock { $0.lastOutcome } }

    func attach(to client: ChatClient) {
        client.addConnectionListener("chat", self)
        client.addConversationListener("chat", self)
        client.addSyncListener("chat", self)
        client.addMessageListener("chat", self)
    }

    /// Prints every event from now on: (name, fields, human line).
    func print(with printer: @escaping Printer) {
        state.withLock { $0.printer = printer }
    }

    private func record(_ name: String, _ fields: [String: Any] = [:], _ human: String? = nil) {
        let (ready, printer) = state.withLock { state -> ([CheckedContinuation<String?, Never>], Printer?) in
            state.seen.append(name)
            if state.seen.count > 1_000 { state.seen.removeFirst(500) }  // long `listen` and `open` runs
            var ready: [CheckedContinuation<String?, Never>] = []
            for waiter in state.waiters where waiter.names.contains(name) {
                if let continuation = waiter.continuation { ready.append(continuation) }
                waiter.continuation = nil
            }
            state.waiters.removeAll { $0.continuation == nil }
            return (ready, state.printer)
        }
        if let human { printer?(name, fields, human) }
        ready.forEach { $0.resume(returning: name) }
    }

    /// True when `name` happened (before or within `seconds`).
    func wait(for name: String, seconds: Double) async -> Bool {
        await first(of: [name], seconds: seconds) == name
    }

    /// The first of `names` to have happened (before or within `seconds`), nil on timeout.
    func first(of names: [String], seconds: Double) async -> String? {
        await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
            let waiter = state.withLock { state -> Waiter? in
                if state.seen.contains(where: names.contains) { return nil }
                let waiter = Waiter(names, continuation)
                state.waiters.append(waiter)
                return waiter
            }
            guard let waiter else {
                // The latest of them: after a connect and a drop, the drop is what holds.
                continuation.resume(returning: state.withLock { $0.seen.last(where: names.contains) })
                return
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in
                let late = state.withLock { _ -> CheckedContinuation<String?, Never>? in
                    defer { waiter.continuation = nil }
                    return waiter.continuation
                }
                late?.resume(returning: nil)
            }
        }
    }

    func forget(_ name: String) { state.withLock { state in state.seen.removeAll { $0 == name } } }

    func onConnected() { record("connected", [:], "connected") }
    func onDisconnected() { record("disconnected", [:], "disconnected (offline)") }
    func onSyncServerStart(reInstall: Bool) {
        record(
            "sync.start", ["reInstall": reInstall],
            reInstall ? "sync started (first sync: conversation list only)" : "sync started")
    }
    func onSyncServerProgress(_ progress: Int) {
        let bar = String(repeating: "#", count: progress / 5) + String(repeating: ".", count: 20 - progress / 5)
        record("sync.progress", ["progress": progress], "[\(bar)] \(progress)%")
    }
    func onSyncServerFinish(reInstall: Bool) { record("sync.finish", ["reInstall": reInstall], "sync finished") }
    func onSyncServerFailed(reInstall: Bool) {
        record("sync.failed", ["reInstall": reInstall], "sync failed (it resumes on the next connection)")
    }
    func onMessageSyncCompleted(_ messages: [BaseMessage], _ outcome: SyncOutcome) {
        state.withLock { $0.lastOutcome = outcome }
        record(
            "sync.messages", ["count": messages.count, "outcome": outcome.rawValue],
            "\(messages.count) messages synced: \(outcome == .caughtUp ? "caught up" : "partial, more remain")")
    }
    func onTextMessageReceived(_ message: TextMessage) { received(message) }
    func onMediaMessageReceived(_ message: MediaMessage) { received(message) }
    func onCustomMessageReceived(_ message: CustomMessage) { received(message) }
    func onActionMessageReceived(_ message: ActionMessage) { received(message) }
    func onMessageEdited(_ message: BaseMessage) {
        record("message.edited", Output.fields(message), "edited: " + Output.line(message))
    }
    func onMessageDeleted(_ message: BaseMessage) {
        record("message.deleted", Output.fields(message), "deleted: " + Output.line(message))
    }
    func onMessagesSynced(_ messages: [BaseMessage]) {
        record(
            "messages.synced", ["count": messages.count, "ids": messages.map(\.id)],
            "\(messages.count) cached message(s) changed meanwhile (edits, deletions, reactions): "
                + messages.map(Output.line).joined(separator: " | "))
    }
    func onTypingStarted(_ indicator: TypingIndicator) {
        record(
            "typing",
            ["uid": indicator.sender, "receiver": indicator.receiverId, "group": indicator.receiverType == .group],
            "\(indicator.sender) is typing…")
    }
    func onMessagesRead(_ receipt: MessageReceipt) {
        record(
            "read", ["uid": receipt.uid, "messageId": receipt.messageId],
            "\(receipt.uid) read up to \(receipt.messageId)")
    }

    private func received(_ message: BaseMessage) { record("message", Output.fields(message), Output.line(message)) }
}
