import ChatTesting
import Foundation

@testable import OfflineChat

/// Records what listeners hear, in order, and lets a test await the next event.
// `messages` is only used under `lock`
final class Recorder: MessageListener, ConnectionListener, @unchecked Sendable {
    private let lock = NSLock()
    private let events = EventQueue<String>(cancelled: "cancelled")
    private(set) var messages: [BaseMessage] = []
    let queue: DispatchQueue

    init(queue: DispatchQueue) { self.queue = queue }

    private func record(_ event: String, _ message: BaseMessage? = nil) {
        dispatchPrecondition(condition: .onQueue(queue))
        if let message {
            lock.lock()
            messages.append(message)
            lock.unlock()
        }
        events.push(event)
    }

    /// The next event, e.g. "text:bob:hello" or "connected"; "cancelled" when the test's
    /// time limit cancels the wait (so a missing event fails the test instead of hanging it).
    func next() async -> String { await events.next() }

    /// Events heard and not yet taken by `next`.
    var pending: Int { events.pending }

    /// Skips events until one satisfies `match` (or the wait is cancelled).
    func next(where match: (String) -> Bool) async -> String {
        while true {
            let event = await next()
            if match(event) || event == "cancelled" { return event }
        }
    }

    func onTextMessageReceived(_ message: TextMessage) {
        record("text:\(message.senderUid):\(message.text):\(message.source.rawValue)", message)
    }
    func onActionMessageReceived(_ message: ActionMessage) { record("action:\(message.message)", message) }
    func onMessageEdited(_ message: BaseMessage) { record("edited:\(message.id)", message) }
    func onMessageDeleted(_ message: BaseMessage) { record("deleted:\(message.id)", message) }
    func onTypingStarted(_ indicator: TypingIndicator) { record("typing:\(indicator.sender)") }
    func onMessagesRead(_ receipt: MessageReceipt) { record("read:\(receipt.uid):\(receipt.messageId)") }
    func onConnecting() { record("connecting") }
    func onConnected() { record("connected") }
    func onDisconnected() { record("disconnected") }
}

/// A client for `server` with a private callback queue and a manual clock.
func makeClient(
    _ server: LiveChatd, clock: ManualClock = ManualClock(), queue: DispatchQueue = DispatchQueue(label: "callbacks"),
    offline: OfflineConfig = OfflineConfig(), storage: URL? = nil, requestTimeout: TimeInterval = 15
) throws -> ChatClient {
    let storage =
        storage ?? FileManager.default.temporaryDirectory.appendingPathComponent("sdk-test-\(UUID().uuidString)")
    var config = ChatConfig(
        appID: "test", server: server.url, storageDirectory: storage, offline: offline,
        callbackQueue: queue, clock: clock, logger: StandardErrorLogger(minimumLevel: .error))
    config.requestTimeout = requestTimeout
    return try ChatClient(config: config)
}

/// Lets a client whose server came back reconnect: ends the backoff sleep, waits for the
/// connection, then lets it settle (which flushes the outbox).
func reconnectAndSettle(_ client: ChatClient, clock: ManualClock, connection: Recorder) async {
    await clock.waitForSleepers(1)
    clock.advance(by: clock.nextDeadline ?? 0)
    _ = await connection.next(where: { $0 == "connected" })
    await clock.waitForSleepers(1)
    clock.advance(by: client.config.connectionSettleDelay)
}

/// The phases of one or more fetches, in the order they fired, awaitable one by one.
final class PhaseLog: Sendable {
    enum Event: Equatable {
        case cached([Int64])
        case server([Int64])
        case error(String)
    }

    private let events = EventQueue<Event>(cancelled: .error("cancelled"))

    func push(_ event: Event) { events.push(event) }

    /// The next event; `.error("cancelled")` when the test's time limit cancels the wait.
    func next() async -> Event { await events.next() }

    var cached: @Sendable ([BaseMessage]) -> Void { { [self] in push(.cached($0.map(\.id))) } }
    var server: @Sendable ([BaseMessage]) -> Void { { [self] in push(.server($0.map(\.id))) } }
    var error: @Sendable (ChatException) -> Void { { [self] in push(.error($0.errorCode)) } }
}

func offlineOn() -> OfflineConfig {
    var offline = OfflineConfig()
    offline.enabled = true
    return offline
}

/// Events in arrival order, awaited one at a time. A wait ends with `cancelled` when the
/// waiting task is cancelled (a test's time limit), so a missing event fails instead of hangs.
final class EventQueue<Event: Sendable>: @unchecked Sendable {  // state under `lock`
    private let lock = NSLock()
    private var buffered: [Event] = []
    private var waiting: CheckedContinuation<Event, Never>?
    private let cancelled: Event

    init(cancelled: Event) { self.cancelled = cancelled }

    func push(_ event: Event) {
        lock.lock()
        if let waiting {
            self.waiting = nil
            lock.unlock()
            waiting.resume(returning: event)
            return
        }
        buffered.append(event)
        lock.unlock()
    }

    /// Events pushed and not yet taken.
    var pending: Int {
        lock.lock()
        defer { lock.unlock() }
        return buffered.count
    }

    func next() async -> Event {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                lock.lock()
                if !buffered.isEmpty {
                    let event = buffered.removeFirst()
                    lock.unlock()
                    continuation.resume(returning: event)
                } else if Task.isCancelled {
                    lock.unlock()
                    continuation.resume(returning: cancelled)
                } else {
                    waiting = continuation
                    lock.unlock()
                }
            }
        } onCancel: {
            lock.lock()
            let pending = waiting
            waiting = nil
            lock.unlock()
            if let pending { pending.resume(returning: cancelled) }
        }
    }
}
