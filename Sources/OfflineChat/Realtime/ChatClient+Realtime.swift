import Foundation

extension ChatClient {
    func makeRealtime(token: String, owner: SessionOwner) -> RealtimeConnection {
        var components = URLComponents(
            url: config.server.appendingPathComponent(Endpoints.realtime), resolvingAgainstBaseURL: false)!
        components.scheme = config.server.scheme == "https" ? "wss" : "ws"
        let handlers = RealtimeConnection.Handlers(
            status: { [weak self] status in self?.connectionChanged(status, owner: owner) },
            envelope: { [weak self] envelope in await self?.receive(envelope, owner: owner) },
            unreadable: { [weak self] in self?.lostTrackOfTheStream(owner: owner) },
            settled: { [weak self] in await self?.connectionSettled(owner: owner) },
            shouldRetry: { [weak self] in await self?.tokenStillAccepted(owner: owner) ?? false })
        return RealtimeConnection(
            url: components.url!, token: token, transport: transport, config: config, handlers: handlers)
    }

    /// The connection has stayed up for the settle delay: queued messages go first (unless
    /// `autoSendPendingOnReconnect` is off), then the catch-up sync.
    func connectionSettled(owner: SessionOwner) async {
        guard let current = session(of: owner) else { return }
        if let outbox = current.outbox, config.offline.autoSendPendingOnReconnect {
            outbox.reconnected()
            await outbox.flush()
        }
        guard session(of: owner) != nil else { return }
        current.sync?.request(.reconnect)
    }

    /// The session `owner` belongs to, if it is still the current one.
    func session(of owner: SessionOwner) -> Session? {
        guard let current = session.current, current.owner === owner else { return nil }
        return current
    }

    private func connectionChanged(_ status: ConnectionStatus, owner: SessionOwner) {
        // A connection of an ended session says nothing to a newer one.
        if let current = session.current, current.owner !== owner { return }
        // Offline, messages may be missed: no cached stretch reaches the live head any more.
        if status == .disconnected {
            try? session(of: owner)?.cache?.closeOpenRanges()
            session(of: owner)?.sync?.disconnected()
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
    func lostTrackOfTheStream(owner: SessionOwner) {
        guard let current = session(of: owner) else { return }
        current.sync?.lostTrack()
        try? current.cache?.closeOpenRanges()
    }

    /// After a dropped or refused connection: is the token still good? A 401 ends the
    /// session; no answer means "offline, keep retrying".
    private func tokenStillAccepted(owner: SessionOwner) async -> Bool {
        guard let current = session(of: owner) else { return false }
        do {
            let _: UserPayload = try await current.api.get(Endpoints.me)
            return true
        } catch let error as ChatException where error.isAuthFailure {
            sessionRejected(current)
            return false
        } catch {
            return true
        }
    }

    /// One realtime envelope, if its session is still the current one (`RealtimeDispatch`).
    func receive(_ envelope: RealtimeEnvelope, owner: SessionOwner) async {
        guard let current = session(of: owner) else { return }
        let dispatch = RealtimeDispatch(listeners: sessionListeners, logger: config.logger)
        dispatch.receive(envelope, in: current) { [weak self] in self?.lostTrackOfTheStream(owner: owner) }
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
