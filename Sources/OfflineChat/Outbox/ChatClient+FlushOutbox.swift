/// What `flushOutbox()` did.
public struct OutboxFlushOutcome: Sendable, Equatable {
    /// Messages the server took during the flush (each also reported as usual: the send's
    /// `onMessageSent`, the listeners' `onOutboxMessageSent`).
    public let sent: Int
    /// Messages that failed for good during it (`getPendingMessages()` keeps them, with their
    /// failure reason).
    public let failed: Int
    /// Messages still queued after it: waiting out a backoff, or for the network.
    public let remaining: Int

    /// An outcome with these counts (for tests and stand-ins).
    public init(sent: Int, failed: Int, remaining: Int) {
        self.sent = sent
        self.failed = failed
        self.remaining = remaining
    }
}

extension ChatClient {
    /// Sends what the outbox holds that is due, over HTTP, whether or not the realtime
    /// connection is up, and returns once there is nothing more to do now, with what happened.
    /// For the moments an app runs without its socket: a background task, a silent push, an
    /// app extension. Exactly once as always (the server dedupes on each message's `muid`);
    /// without a network the messages stay queued (`remaining`). A flush already under way is
    /// joined (it goes round once more for this one). Throws `ERROR_USER_NOT_LOGGED_IN`, or
    /// `ERROR_OFFLINE_DISABLED` without an outbox.
    @discardableResult
    public func flushOutbox() async throws -> OutboxFlushOutcome {
        let current = try requireSession()
        guard let outbox = current.outbox, let cache = current.cache else {
            throw ChatException(.offlineDisabled, "offline support is not active for this user: there is no outbox")
        }
        let before = outbox.progress
        await outbox.flush(overHTTP: true)
        let after = outbox.progress
        let remaining = (try? cache.outboxItems())?.filter { $0.state != .failed }.count ?? 0
        current.noteQueued()
        return OutboxFlushOutcome(
            sent: after.sent - before.sent, failed: after.failed - before.failed, remaining: remaining)
    }
}
