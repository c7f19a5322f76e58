import ChatCache
import Foundation
import Locking

/// The durable outbox of one session: queued sends live in the cache (they survive
/// restarts); one flush task sends them in composed order per conversation, following
/// `OutboxPolicy`. The server dedupes on the message's muid, so a send repeated after a lost
/// acknowledgement or a crash yields one message.
final class Outbox: Sendable {
    struct Callbacks: Sendable {
        var onSent: (@Sendable (BaseMessage) -> Void)?
        var onError: (@Sendable (ChatException) -> Void)?
    }

    private struct FlushState: Sendable {
        var running = false
        /// Another flush was asked for while one ran: go round once more.
        var again = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    let cache: ChatCache
    let api: APIClient
    let config: ChatConfig
    let policy: OutboxPolicy
    /// True while the realtime connection is up (sends are attempted only then).
    let isOnline: @Sendable () -> Bool
    /// The connection epoch to pass with completed sends (nil when not live).
    let liveSince: @Sendable () -> Int?
    /// Every outcome, for the message listeners (`onOutboxMessageSent` / `…Failed`).
    let report: @Sendable (Outcome) -> Void
    private let callbacks = Locked<[Int64: Callbacks]>([:])
    /// Items discarded while on the wire: sent if the server accepts them, else discarded.
    private let discardedInFlight = Locked<Set<Int64>>([])
    private let flushState = Locked(FlushState())

    enum Outcome: Sendable {
        case sent(BaseMessage)
        case failed(BaseMessage)
    }

    init(
        cache: ChatCache, api: APIClient, config: ChatConfig, policy: OutboxPolicy = OutboxPolicy(),
        isOnline: @escaping @Sendable () -> Bool, liveSince: @escaping @Sendable () -> Int?,
        report: @escaping @Sendable (Outcome) -> Void = { _ in }
    ) {
        self.report = report
        self.cache = cache
        self.api = api
        self.config = config
        self.policy = policy
        self.isOnline = isOnline
        self.liveSince = liveSince
    }

    /// Adds callbacks for an item; ones already registered (the send's own) still fire.
    func register(_ localId: Int64, _ added: Callbacks) {
        callbacks.withLock { all in
            guard let earlier = all[localId] else {
                all[localId] = added
                return
            }
            all[localId] = Callbacks(
                onSent: { message in
                    earlier.onSent?(message)
                    added.onSent?(message)
                },
                onError: { error in
                    earlier.onError?(error)
                    added.onError?(error)
                })
        }
    }

    private func take(_ localId: Int64) -> Callbacks? {
        callbacks.withLock { $0.removeValue(forKey: localId) }
    }

    /// Sends what is due, in order; returns when there is nothing left to do now (items
    /// waiting on a backoff are resumed by a timer task). Concurrent calls share one flush.
    func flush() async {
        let mustRun = flushState.withLock { state -> Bool in
            if state.running {
                state.again = true
                return false
            }
            state.running = true
            return true
        }
        if !mustRun {
            await withCheckedContinuation { continuation in
                let done = flushState.withLock { state -> Bool in
                    guard state.running else { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if done { continuation.resume() }
            }
            return
        }
        var wake: Int64?
        var waiters: [CheckedContinuation<Void, Never>] = []
        while true {
            wake = await flushOnce()
            // Stop only if nobody asked for another pass meanwhile, in the same lock that
            // lets the next caller run a flush of its own.
            let done = flushState.withLock { state -> Bool in
                if state.again {
                    state.again = false
                    return false
                }
                state.running = false
                waiters = state.waiters
                state.waiters = []
                return true
            }
            if done { break }
        }
        waiters.forEach { $0.resume() }
        if let wake { scheduleWake(at: wake) }
    }

    /// One pass over the outbox; returns the earliest time a waiting item becomes due.
    private func flushOnce() async -> Int64? {
        guard isOnline(), let items = try? cache.outboxItems() else { return nil }
        var blocked = Set<String>()
        var wake: Int64?
        for item in items where item.state != .failed && !blocked.contains(item.conversationId) {
            let now = config.clock.now()
            guard item.nextAttemptAt <= now else {
                blocked.insert(item.conversationId)
                wake = min(wake ?? item.nextAttemptAt, item.nextAttemptAt)
                continue
            }
            guard isOnline() else { return wake }
            switch await send(item) {
            case .sent, .failedForGood: continue
            case .retryAt(let time):
                blocked.insert(item.conversationId)
                wake = min(wake ?? time, time)
            case .throttled(let time):
                return min(wake ?? time, time)  // the limit is the user's: nothing else goes before then
            case .offline:
                return nil
            }
        }
        return wake
    }

    private enum SendOutcome {
        case sent, failedForGood
        case retryAt(Int64)
        case offline
        /// The server asked this user to wait until then.
        case throttled(Int64)
    }

    private func send(_ item: OutboxItem) async -> SendOutcome {
        var state = policy.next(
            .pending(attempts: item.attempts, notBefore: item.nextAttemptAt), .startSend(now: config.clock.now()))
        guard case .sending(let attempts) = state else { return .failedForGood }
        // Claimed atomically: an item discarded since the pass read the outbox is not sent.
        guard (try? cache.claimForSend(item.localId, attempts: attempts)) == true else { return .failedForGood }
        do {
            let request = try await uploadingMedia(of: item)
            let payload: MessagePayload = try await api.send("POST", Endpoints.messages, body: request)
            let stored = (try? cache.completeSend(item.localId, with: payload, liveSince: liveSince())) ?? payload
            let message = BaseMessage.make(stored, source: .server)
            message.localMessageId = item.localId
            if let path = item.mediaPath, let name = stored.attachment?.name {
                (message as? MediaMessage)?.localPath =
                    cache.adoptQueuedMedia(path, messageId: stored.id, name: name)?.path
            }
            // Reported sent even when the item was discarded meanwhile: the server has it.
            if let onSent = take(item.localId)?.onSent { config.callbackQueue.async { onSent(message) } }
            report(.sent(message))
            return .sent
        } catch let error as ChatException {
            if discardedInFlight.withLock({ $0.remove(item.localId) }) != nil {
                failed(item, reason: .discarded, error: Self.discardError(item.localId))
                return .failedForGood
            }
            if error.errorCode == ChatException.internetUnavailable && !isOnline() {
                // The connection went away: not the message's fault, no attempt used up; the
                // next settle flushes again.
                try? cache.updateOutbox(
                    item.localId, state: .pending, attempts: item.attempts, nextAttemptAt: item.nextAttemptAt)
                return .offline
            }
            let now = config.clock.now()
            let event: OutboxPolicy.Event =
                error.retryAfter.map { .throttled(now: now, milliseconds: Int64($0 * 1000)) }
                ?? (error.isTransient
                    ? .failedTransiently(now: now, unit: Double.random(in: 0..<1)) : .failedPermanently)
            state = policy.next(.sending(attempts: attempts), event)
            switch state {
            case .pending(let attempts, let notBefore):
                try? cache.updateOutbox(item.localId, state: .pending, attempts: attempts, nextAttemptAt: notBefore)
                return error.retryAfter == nil ? .retryAt(notBefore) : .throttled(notBefore)
            case .failed(let reason):
                try? cache.updateOutbox(
                    item.localId, state: .failed, attempts: attempts, nextAttemptAt: 0, failureReason: reason.rawValue,
                    errorCode: error.errorCode, errorMessage: error.errorDescription)
                failed(item, reason: reason, error: error)
                return .failedForGood
            default:
                return .failedForGood
            }
        } catch {
            return .offline
        }
    }

    /// The item's request, its queued file uploaded first if that has not happened yet (the
    /// answer is kept, so a restart does not upload again; an upload repeated after a crash
    /// stores no second file on chatd, and its unsent upload expires).
    private func uploadingMedia(of item: OutboxItem) async throws -> SendMessageRequest {
        guard let path = item.mediaPath, let attachment = item.request.attachment, attachment.url.hasPrefix("file:")
        else {
            return item.request
        }
        var request = item.request
        request.attachment = try await api.upload(
            try Self.read(URL(fileURLWithPath: path)), name: attachment.name,
            mimeType: attachment.mimeType)
        try? cache.updateOutboxRequest(item.localId, request)
        return request
    }

    /// A file to upload; a failure is permanent (`ERROR_OFFLINE_MEDIA_COPY_FAILED`).
    static func read(_ file: URL) throws -> Data {
        do { return try Data(contentsOf: file) } catch {
            throw ChatException(
                errorCode: ChatException.offlineMediaCopyFailed,
                errorDescription: "the file to send cannot be read: \(file.lastPathComponent)")
        }
    }

    /// Resumes the flush when the earliest backoff ends (on the injected clock).
    private func scheduleWake(at time: Int64) {
        let delay = max(0, time - config.clock.now())
        Task { [weak self, config] in
            do { try await config.clock.sleep(milliseconds: delay) } catch { return }
            await self?.flush()
        }
    }

    /// Fails every queued item of `selection` with `.discarded` (their callbacks hear
    /// `ERROR_OFFLINE_MESSAGE_DISCARDED`); already-failed items are removed silently.
    func discard(_ selection: OutboxSelection) -> [OutboxItem] {
        let removed = (try? cache.removeFromOutbox(where: selection)) ?? []
        for item in removed {
            switch item.state {
            case .sending:
                // On the wire: reported sent if the server accepts it, discarded otherwise.
                discardedInFlight.withLock { _ = $0.insert(item.localId) }
            case .pending:
                failed(item, reason: .discarded, error: Self.discardError(item.localId))
            case .failed:
                _ = take(item.localId)
            }
        }
        return removed
    }

    /// Tells the send's `onError` and the listeners that `item` failed for good.
    private func failed(_ item: OutboxItem, reason: MessageFailureReason, error: ChatException) {
        if let onError = take(item.localId)?.onError { config.callbackQueue.async { onError(error) } }
        report(.failed(Self.failedMessage(item, reason: reason, error: error)))
    }

    /// `item` as the app sees it once it failed for good.
    static func failedMessage(_ item: OutboxItem, reason: MessageFailureReason, error: ChatException) -> BaseMessage {
        var failed = item
        failed.state = .failed
        failed.failureReason = reason.rawValue
        failed.errorCode = error.errorCode
        failed.errorMessage = error.errorDescription
        return BaseMessage.queued(failed)
    }

    static func discardError(_ localId: Int64) -> ChatException {
        ChatException(
            errorCode: ChatException.messageDiscarded,
            errorDescription: "the queued message \(localId) was discarded before it was sent")
    }
}

extension BaseMessage {
    /// An outbox item as the app sees it: no server id yet, its `localMessageId`, its status,
    /// and for a failed one the reason and error.
    static func queued(_ item: OutboxItem) -> BaseMessage {
        let message = BaseMessage.make(item.message, source: .local)
        message.id = 0
        message.localMessageId = item.localId
        (message as? MediaMessage)?.localPath = item.mediaPath
        switch item.state {
        case .pending: message.messageStatus = .pending
        case .sending: message.messageStatus = .sending
        case .failed:
            message.messageStatus = .failed
            message.failureReason = item.failureReason.flatMap(MessageFailureReason.init(rawValue:))
            message.failureError = item.errorCode.map {
                ChatException(errorCode: $0, errorDescription: item.errorMessage ?? "")
            }
        }
        return message
    }
}
