import Foundation

extension ChatClient {
    func makeRealtime(token: String) -> RealtimeConnection {
        var components = URLComponents(
            url: config.server.appendingPathComponent(Endpoints.realtime), resolvingAgainstBaseURL: false)!
        components.scheme = config.server.scheme == "https" ? "wss" : "ws"
        return RealtimeConnection(url: components.url!, token: token, transport: transport, config: config)
    }

    /// Starts `session`'s connection with handlers bound to it. Once the session has ended
    /// (its connection stopped, its tasks cancelled) they hear nothing more: the stopped
    /// connection reports no status, and the other handlers stop at a cancellation check.
    func startRealtime(of session: UserSession) {
        session.realtime.start(
            RealtimeConnection.Handlers(
                status: { [weak self] status in self?.connectionChanged(status, of: session) },
                envelope: { [weak self] envelope in self?.receive(envelope, in: session) },
                unreadable: { Self.lostTrackOfTheStream(session) },
                settled: { [weak self] in await self?.connectionSettled(session) },
                shouldRetry: { [weak self] in await self?.tokenStillAccepted(session) ?? false }),
            in: session.tasks)
    }

    /// The connection has stayed up for the settle delay: queued messages go first (unless
    /// `autoSendPendingOnReconnect` is off), then the catch-up sync. The realtime handlers below
    /// run as the session's tasks (its connection's loop, a settle check): each stops at a
    /// cancellation check once the session has ended (or, for a settle check, its connection
    /// dropped), instead of asking whether its session is still the current one.
    func connectionSettled(_ session: UserSession) async {
        guard !Task.isCancelled else { return }
        if let outbox = session.outbox, config.offline.autoSendPendingOnReconnect {
            outbox.reconnected()
            await outbox.flush()
        }
        guard !Task.isCancelled else { return }
        session.sync?.request(.reconnect)
    }

    /// A status the session's connection reports (never after the session's end stopped it:
    /// `end(_:wipe:)` decides who hears of that).
    private func connectionChanged(_ status: ConnectionStatus, of session: UserSession) {
        // Offline, messages may be missed: no cached stretch reaches the live head any more.
        if status == .disconnected {
            try? session.cache?.closeOpenRanges()
            session.sync?.disconnected()
        }
        connectionListeners.notify { listener in
            switch status {
            case .connecting: listener.onConnecting()
            case .connected: listener.onConnected()
            case .disconnected: listener.onDisconnected()
            }
        }
    }

    /// A live change the cache could not take (or a frame it could not read): the replay must
    /// bring it, so the sync point stops following and no cached stretch may reach past it.
    static func lostTrackOfTheStream(_ session: UserSession) {
        guard !Task.isCancelled else { return }
        session.sync?.lostTrack()
        try? session.cache?.closeOpenRanges()
    }

    /// After a dropped or refused connection: is the token still good? A 401 ends the
    /// session (the API client reports it: `AuthRejection`); no answer means "offline, keep
    /// retrying".
    private func tokenStillAccepted(_ session: UserSession) async -> Bool {
        guard !Task.isCancelled else { return false }
        do {
            let _: UserPayload = try await session.api.get(Endpoints.me)
            return true
        } catch let error as ChatException where error.isAuthFailure {
            return false
        } catch {
            return true
        }
    }

    /// One realtime envelope of `session` (`RealtimeDispatch`), unless the session has ended.
    func receive(_ envelope: RealtimeEnvelope, in session: UserSession) {
        guard !Task.isCancelled else { return }
        dispatch.receive(envelope, in: session) { Self.lostTrackOfTheStream(session) }
    }
}

extension ChatClient {
    /// Tells `receiverId` (a user, or a group's members) that the logged-in user is typing.
    /// Best effort over the realtime connection: nothing happens offline.
    public func startTyping(receiverId: String, receiverType: ReceiverType = .user) {
        sendTyping(receiverId, receiverType, isTyping: true)
    }

    /// Ends `startTyping`.
    public func endTyping(receiverId: String, receiverType: ReceiverType = .user) {
        sendTyping(receiverId, receiverType, isTyping: false)
    }

    private func sendTyping(_ receiver: String, _ type: ReceiverType, isTyping: Bool) {
        guard let current = session.current else { return }
        let envelope = RealtimeEnvelope(
            type: .typing, typing: TypingPayload(receiver: receiver, receiverType: type, isTyping: isTyping))
        guard let data = try? APIClient.encoder.encode(envelope) else { return }
        current.realtime.send(String(decoding: data, as: UTF8.self))
    }
}
