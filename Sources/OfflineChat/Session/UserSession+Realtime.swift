import Foundation

/// The session's realtime stream. Its handlers are the session's own: once the session has
/// ended (its connection stopped, its tasks cancelled) they hear nothing more. The stopped
/// connection reports no status, and the other handlers stop at a cancellation check
/// (they run as the session's tasks: its connection's loop, a settle check) instead of asking
/// whether their session is still the current one.
extension UserSession {
    /// The realtime URL of `config`'s server.
    static func realtimeURL(_ config: ChatConfig) -> URL {
        var components = URLComponents(
            url: config.server.appendingPathComponent(Endpoints.realtime), resolvingAgainstBaseURL: false)!
        components.scheme = config.server.scheme == "https" ? "wss" : "ws"
        // Its cursors are the changelog's: the user's and their groups' logs (`c3`), in
        // coalesced `cursor` frames (a group's change is then the same bytes for every member).
        components.queryItems = [
            URLQueryItem(name: "groupLogs", value: "true"), URLQueryItem(name: "cursorFrames", value: "true")
        ]
        return components.url!
    }

    func startRealtime() {
        realtime.start(
            RealtimeConnection.Handlers(
                status: { [weak self] status in
                    guard let self else { return }
                    self.host?.session(self, reports: status)
                },
                dropped: { [weak self] in self?.connectionDropped() },
                envelope: { [weak self] envelope in self?.receive(envelope) },
                unreadable: { [weak self] in self?.lostTrackOfTheStream() },
                settled: { [weak self] in await self?.connectionSettled() },
                shouldRetry: { [weak self] in await self?.tokenStillAccepted() ?? false }),
            in: tasks)
    }

    /// The app went to the background: the connection goes down cleanly (the host hears the
    /// status) and what a drop does to the cache and the sync follows. The outbox's size is
    /// noted outside the cache, in case the system purges its folder meanwhile.
    func suspend() {
        if realtime.suspend() { forgetTheLiveHead() }
        noteQueued()
    }

    /// The network moved under a connected socket: down (as a suspend: what a drop does to the
    /// cache follows) and up again at once.
    func reconnectAfterMove() {
        if realtime.suspend() { forgetTheLiveHead() }
        realtime.resume()
    }

    /// Notes what the outbox holds now in the ledger (a write only when it changed).
    func noteQueued() {
        guard let cache, let ledger, let count = try? cache.outboxCount() else { return }
        ledger.note(count)
    }

    /// The connection has stayed up for the settle delay: queued messages go first (unless
    /// `autoSendPendingOnReconnect` is off), then the catch-up sync.
    func connectionSettled() async {
        guard !Task.isCancelled else { return }
        if let outbox, config.offline.autoSendPendingOnReconnect {
            outbox.reconnected()
            await outbox.flush()
        }
        guard !Task.isCancelled else { return }
        sync?.request(.reconnect)
    }

    /// The connection dropped (reported `.disconnected`; no reconnect has begun). Offline,
    /// messages may be missed: no cached stretch reaches the live head any more. Runs outside
    /// the connection's reporting lock: a cache write there would hold up a `stop()`.
    func connectionDropped() {
        guard !Task.isCancelled else { return }
        forgetTheLiveHead()
    }

    /// What a drop (or a suspend, from whatever task) does to the cache and the sync.
    private func forgetTheLiveHead() {
        try? cache?.closeOpenRanges()
        sync?.disconnected()
    }

    /// A live change the cache could not take (or a frame it could not read): the replay must
    /// bring it, so the sync point stops following and no cached stretch may reach past it.
    func lostTrackOfTheStream() {
        guard !Task.isCancelled else { return }
        sync?.lostTrack()
        try? cache?.closeOpenRanges()
    }

    /// After a dropped or refused connection: is the token still good? A 401 ends the
    /// session (the API client reports it: `AuthRejection`); no answer means "offline, keep
    /// retrying".
    func tokenStillAccepted() async -> Bool {
        guard !Task.isCancelled else { return false }
        do {
            let _: UserPayload = try await api.get(Endpoints.me)
            return true
        } catch let error as ChatException where error.isAuthFailure {
            return false
        } catch let error as ChatException where error.code == .insecureConnectionRefused {
            // The platform will never let this URL through: stop trying (the app's setup).
            config.logger.log(.error, "realtime stopped: \(error.errorDescription)")
            return false
        } catch let error as ChatException where error.code == .secureConnectionFailed {
            config.logger.log(.error, "\(error.errorDescription); the connection keeps retrying")
            return true
        } catch {
            return true
        }
    }

    /// One realtime envelope (`RealtimeDispatch`), unless the session has ended.
    func receive(_ envelope: RealtimeEnvelope) {
        guard !Task.isCancelled else { return }
        dispatch.receive(envelope, in: self) { self.lostTrackOfTheStream() }
    }
}
