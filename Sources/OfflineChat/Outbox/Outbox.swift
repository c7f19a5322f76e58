import Foundation
import OfflineChatCache
import OfflineChatLocking

/// The durable outbox of one session: queued sends live in the cache (they survive
/// restarts); one flush at a time sends them in composed order per conversation. Every change
/// of an item is an event run through `OutboxPolicy` and stored from what it answers
/// (`apply`). The server dedupes on the message's muid, so a send repeated after a lost
/// acknowledgement or a crash yields one message.
///
/// An actor for its flush: a flush asked for while one runs awaits that one (which goes round
/// once more for it). Queuing, retries and discards are `nonisolated`: they touch only the cache
/// and the callbacks' lock, and apps call them synchronously.
actor Outbox {
    struct Callbacks: Sendable {
        var onSent: (@Sendable (BaseMessage) -> Void)?
        var onError: (@Sendable (ChatException) -> Void)?
    }

    /// The flush under way, if any.
    private var running: Task<Void, Never>?
    /// Another flush was asked for while one ran: go round once more.
    private var again = false
    /// The next pass sends over HTTP whatever the realtime connection's state (a background
    /// task's `flushOutbox()`), until a send meets no network.
    private var overHTTP = false
    /// Items sent, and items failed for good, since the session began (a flush's outcome is
    /// what they grew by).
    private let counts = Locked((sent: 0, failed: 0))

    let cache: ChatCache
    let api: APIClient
    /// The session's tasks: the flush and its wake-ups run as them, and end with the session.
    let tasks: SessionTasks
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

    enum Outcome: Sendable {
        case sent(BaseMessage)
        case failed(BaseMessage)
    }

    init(
        cache: ChatCache, api: APIClient, config: ChatConfig, tasks: SessionTasks,
        policy: OutboxPolicy = OutboxPolicy(),
        isOnline: @escaping @Sendable () -> Bool, liveSince: @escaping @Sendable () -> Int?,
        report: @escaping @Sendable (Outcome) -> Void = { _ in }
    ) {
        self.report = report
        self.cache = cache
        self.api = api
        self.tasks = tasks
        self.config = config
        self.policy = policy
        self.isOnline = isOnline
        self.liveSince = liveSince
    }

    /// Adds callbacks for an item; ones already registered (the send's own) still fire.
    nonisolated func register(_ localId: Int64, _ added: Callbacks) {
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

    private nonisolated func take(_ localId: Int64) -> Callbacks? {
        callbacks.withLock { $0.removeValue(forKey: localId) }
    }

    /// Sends what is due, in order; returns when there is nothing left to do now (items
    /// waiting on a backoff are resumed by a timer task). Concurrent calls share one flush.
    func flush(overHTTP: Bool = false) async {
        if overHTTP { self.overHTTP = true }
        if let running {
            again = true
            await running.value
            return
        }
        guard let pass = tasks.start({ await self.drain() }) else { return }  // the session ended
        running = pass
        await pass.value
    }

    /// Passes until nobody asked for another meanwhile; then the wake-up for the earliest backoff.
    private func drain() async {
        var wake: Int64?
        repeat {
            again = false
            let http = overHTTP
            overHTTP = false
            wake = await flushOnce(overHTTP: http)
        } while again
        running = nil
        if let wake { scheduleWake(at: wake) }
    }

    /// One pass over the outbox; returns the earliest time a waiting item becomes due.
    /// `overHTTP`: sends go out without the realtime connection (until one meets no network).
    private func flushOnce(overHTTP: Bool) async -> Int64? {
        let online = { overHTTP || self.isOnline() }
        guard online(), let items = try? cache.outboxItems() else { return nil }
        var blocked = Set<String>()
        var wake: Int64?
        for item in items where item.state != .failed && !blocked.contains(item.conversationId) {
            let now = config.clock.now()
            guard item.nextAttemptAt <= now else {
                blocked.insert(item.conversationId)
                wake = min(wake ?? item.nextAttemptAt, item.nextAttemptAt)
                continue
            }
            guard online() else { return wake }
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

    private func send(_ queued: OutboxItem) async -> SendOutcome {
        let item: OutboxItem
        switch claim(queued) {
        case .claimed(let claimed): item = claimed
        case .gone: return .failedForGood
        case .notYet(let time): return .retryAt(time)
        }
        do {
            let request = try await uploadingMedia(of: item)
            let payload: MessagePayload = try await api.send("POST", Endpoints.messages, body: request)
            // `.succeeded` ends the item (`.sent`): its outbox row goes as the message is stored.
            assert(policy.next(OutboxPolicy.State(item), .succeeded) == .sent)
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
            counts.withLock { $0.sent += 1 }
            return .sent
        } catch let error as ChatException {
            if discardedInFlight.withLock({ $0.remove(item.localId) }) != nil {
                failed(item, reason: .discarded, error: Self.discardError(item.localId))
                return .failedForGood
            }
            let now = config.clock.now()
            if error.code == .internetUnavailable && !isOnline() {
                // The next settle flushes again.
                guard !apply(.connectionLost(now: now), to: [item]).isEmpty else { return notStored(item) }
                return .offline
            }
            let event: OutboxPolicy.Event =
                error.retryAfter.map { .throttled(now: now, milliseconds: Int64($0 * 1000)) }
                ?? (error.isTransient
                    ? .failedTransiently(now: now, unit: Double.random(in: 0..<1)) : .failedPermanently)
            switch apply(event, to: [item], error: error).first.map(OutboxPolicy.State.init) {
            case .pending(_, let notBefore):
                return error.retryAfter == nil ? .retryAt(notBefore) : .throttled(notBefore)
            case .failed(let reason):
                failed(item, reason: reason, error: error)
                return .failedForGood
            default:
                return notStored(item)
            }
        } catch {
            return .offline
        }
    }

    /// A send's outcome could not be stored: the item left the outbox meanwhile (a discard while
    /// the answer came: reported as discarded now), or it is still there (the conversation
    /// waits for it, in composed order).
    private func notStored(_ item: OutboxItem) -> SendOutcome {
        if discardedInFlight.withLock({ $0.remove(item.localId) }) != nil {
            failed(item, reason: .discarded, error: Self.discardError(item.localId))
            return .failedForGood
        }
        guard let still = try? cache.outboxItems([item.localId]).first else { return .failedForGood }
        return .retryAt(still.nextAttemptAt)
    }

    /// Runs `event` through the policy for each of `items` and stores the states it changes,
    /// each only if its item is still as read (`ChatCache.moveOutbox`); an item that changed
    /// meanwhile (a reconnect made it due while a flush claimed it, say) is read again and the
    /// event runs on what it is now. `error` is the one that failed them, if they fail. Returns
    /// the items stored, as they are now. `.succeeded` and `.discarded` end an item: `send` and
    /// `discard` remove its row instead.
    @discardableResult
    nonisolated func apply(
        _ event: @autoclosure () -> OutboxPolicy.Event, to items: [OutboxItem], error: ChatException? = nil
    ) -> [OutboxItem] {
        var stored: [OutboxItem] = []
        var current = items
        // Each round is a transition another writer made first: a handful at most. The event is
        // made again each round, so one that reads the clock reads it after the re-read.
        for _ in 0..<8 {
            guard !current.isEmpty else { break }
            let event = event()
            let moves = current.compactMap { item -> (item: OutboxItem, to: OutboxProgress)? in
                let state = OutboxPolicy.State(item)
                let next = policy.next(state, event)
                guard next != state, let progress = next.progress(of: item, error: error) else { return nil }
                return (item, progress)
            }
            guard let moved = try? cache.moveOutbox(moves) else { break }
            for (item, progress) in moves where moved.contains(item.localId) {
                var updated = item
                updated.progress = progress
                stored.append(updated)
            }
            let changed = moves.map(\.item.localId).filter { !moved.contains($0) }
            current = changed.isEmpty ? [] : (try? cache.outboxItems(changed)) ?? []
        }
        return stored
    }

    private enum Claim {
        case claimed(OutboxItem)
        /// Discarded, or claimed by another flush, since the pass read it: not sent.
        case gone
        /// Still queued, but a retry or reconnect moved it to this time meanwhile: the
        /// conversation waits for it, in composed order.
        case notYet(Int64)
    }

    /// Marks `queued` as on the wire, atomically (`startSend` from the state it is stored in,
    /// with a fresh clock reading each time `apply` finds the item moved).
    private func claim(_ queued: OutboxItem) -> Claim {
        if let claimed = apply(.startSend(now: config.clock.now()), to: [queued]).first, claimed.state == .sending {
            return .claimed(claimed)
        }
        guard let still = try? cache.outboxItems([queued.localId]).first, still.state == .pending else {
            return .gone
        }
        return .notYet(still.nextAttemptAt)
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
            throw ChatException(.offlineMediaCopyFailed, "the file to send cannot be read: \(file.lastPathComponent)")
        }
    }

    /// Resumes the flush when the earliest backoff ends (on the injected clock).
    private func scheduleWake(at time: Int64) {
        let delay = max(0, time - config.clock.now())
        tasks.start { [weak self, config] in
            do { try await config.clock.sleep(milliseconds: delay) } catch { return }
            await self?.flush()
        }
    }

    /// Items sent, and items failed for good, since the session began.
    nonisolated var progress: (sent: Int, failed: Int) { counts.current }

    /// A flush in the background, as one of the session's tasks.
    nonisolated func flushSoon() { tasks.start { await self.flush() } }

    /// Fails every queued item of `selection` with `.discarded` (their callbacks hear
    /// `ERROR_OFFLINE_MESSAGE_DISCARDED`); already-failed items are removed silently. The
    /// policy's `.discarded` ends an item, so its row goes (atomically with reading it).
    nonisolated func discard(_ selection: OutboxSelection) -> [OutboxItem] {
        // The policy decides, inside the removing transaction, which items the discard ends.
        let ends = { (item: OutboxItem) in self.policy.next(.init(item), .discarded) == .failed(.discarded) }
        let removed = (try? cache.removeFromOutbox(where: selection, if: ends)) ?? []
        // Every removed item is one the policy ended as `.failed(.discarded)` (`ends`).
        for item in removed {
            switch OutboxPolicy.State(item) {
            case .sending:
                // On the wire: reported sent if the server accepts it, discarded otherwise.
                discardedInFlight.withLock { _ = $0.insert(item.localId) }
            case .pending:
                failed(item, reason: .discarded, error: Self.discardError(item.localId))
            case .failed, .sent:
                _ = take(item.localId)
            }
        }
        return removed
    }

    /// `retryMessage`: `item` (failed, or waiting) goes again now; false when the policy does
    /// not retry it (a discard) or it changed meanwhile.
    nonisolated func retry(_ item: OutboxItem) -> Bool {
        !apply(.retryRequested(now: config.clock.now()), to: [item]).isEmpty
    }

    /// `retryAllFailedMessages`: transient failures go again, waiting items go now.
    nonisolated func retryAll() {
        guard let items = try? cache.outboxItems() else { return }
        apply(.retryAllRequested(now: config.clock.now()), to: items)
    }

    /// The connection settled again: every waiting item may go now.
    nonisolated func reconnected() {
        guard let items = try? cache.outboxItems() else { return }
        apply(.reconnected(now: config.clock.now()), to: items)
    }

    /// Items a process that died mid-send left on the wire go again (the server dedupes on muid,
    /// so a repeat is harmless). Called once when the session opens.
    nonisolated func recoverInterruptedSends() {
        guard let items = try? cache.outboxItems() else { return }
        apply(.interrupted, to: items.filter { $0.state == .sending })
    }

    /// Tells the send's `onError` and the listeners that `item` failed for good.
    private nonisolated func failed(_ item: OutboxItem, reason: MessageFailureReason, error: ChatException) {
        counts.withLock { $0.failed += 1 }
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
        ChatException(.messageDiscarded, "the queued message \(localId) was discarded before it was sent")
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
            message.failureReason = item.reason
            message.failureError = item.errorCode.map {
                ChatException(errorCode: $0, errorDescription: item.errorMessage ?? "")
            }
        }
        return message
    }
}
