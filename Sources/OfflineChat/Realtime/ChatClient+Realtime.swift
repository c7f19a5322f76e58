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
    private func lostTrackOfTheStream(owner: SessionOwner) {
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

    /// One realtime envelope: changes become listener callbacks.
    func receive(_ envelope: RealtimeEnvelope, owner: SessionOwner) async {
        guard let current = session(of: owner) else { return }
        let me = current.user.uid
        switch envelope.type {
        case .hello: current.sync?.connected(hello: envelope.cursor)
        case .typing:
            guard let typing = envelope.typing, let sender = typing.sender, sender != me else { return }
            let indicator = TypingIndicator(
                sender: sender, receiverId: typing.receiverType == .group ? typing.receiver : sender,
                receiverType: typing.receiverType)
            messageListeners.notify { typing.isTyping ? $0.onTypingStarted(indicator) : $0.onTypingEnded(indicator) }
        case .change:
            guard let change = envelope.change else { return }
            let written = writeThrough(change, in: current)
            if written.stored {
                current.sync?.liveChangeStored(cursor: envelope.cursor)
            } else {
                lostTrackOfTheStream(owner: owner)
            }
            dispatch(
                change, me: me, source: .realtime, newToTheCache: current.cache == nil ? nil : written.newToTheCache)
        }
    }

    /// What the cache made of a live change: `stored` is false when it failed to take it (then
    /// the sync point must not move past it); `newToTheCache` when a created message had no
    /// row yet (for one's own message: sent from another device, not this one's echo).
    struct LiveWrite {
        var stored: Bool
        var newToTheCache = false
    }

    /// Stores a live change in the cache before any listener hears of it.
    @discardableResult
    func writeThrough(_ change: ChangePayload, in current: Session) -> LiveWrite {
        guard let cache = current.cache else { return LiveWrite(stored: false) }
        do {
            if change.removesConversation(for: current.user.uid) {
                // Deleted, or out of the group: its history (and what was queued for it) goes.
                // A sweep in flight may have read a page from before this removal and would
                // store some of that history again: following waits for a sweep that starts
                // after it (the replay then removes it for good).
                current.sync?.lostTrack()
                try cache.removeConversation(change.conversationId)
                _ = current.outbox?.discard(.conversation(change.conversationId))
                return LiveWrite(stored: true, newToTheCache: true)  // the news of it is heard
            }
            guard let message = change.message else { return LiveWrite(stored: true) }
            switch change.kind {
            case .messageCreated, .groupMember:
                let new = try cache.storeLive(message)
                if let conversation = try cache.conversation(id: message.conversationId) {
                    let updated = Conversation(conversation, source: .realtime)
                    conversationListeners.notify { $0.onConversationUpdated(updated) }
                }
                return LiveWrite(stored: true, newToTheCache: new)
            default:
                try cache.storeUpdates([message])
                return LiveWrite(stored: true)
            }
        } catch {
            config.logger.log(.error, "cache write failed: \(error)")
            return LiveWrite(stored: false)
        }
    }

    /// Tells the message listeners about one change. A new message is heard once, whichever
    /// path brings it first: one the cache already held (the catch-up sweep after a reconnect
    /// reads past the new connection's hello, so both may bring it) is not heard again.
    /// One's own new messages are heard only when sent from another device (with a cache to
    /// tell: without one, never), as the catch-up sync reports them. `newToTheCache`: nil
    /// without a cache.
    func dispatch(_ change: ChangePayload, me: String, source: MessageSource, newToTheCache: Bool?) {
        switch change.kind {
        case .messageCreated, .groupMember:
            guard let payload = change.message else { return }
            let heard =
                payload.sender != me ? newToTheCache ?? true : change.kind == .groupMember || newToTheCache == true
            guard heard else { return }
            let message = BaseMessage.make(payload, source: source)
            messageListeners.notify { listener in Self.deliverNew(message, to: listener) }
            if let action = message as? ActionMessage {
                groupListeners.notify { Self.deliverGroupEvent(action, to: $0) }
            }
        case .messageUpdated:
            guard let payload = change.message else { return }
            let message = BaseMessage.make(payload, source: source)
            messageListeners.notify { listener in
                if message.deletedAt != nil {
                    listener.onMessageDeleted(message)
                } else {
                    listener.onMessageEdited(message)
                }
            }
        case .reactionAdded, .reactionRemoved:
            guard let payload = change.message, let reaction = change.reaction else { return }
            let message = BaseMessage.make(payload, source: source)
            let added = change.kind == .reactionAdded
            messageListeners.notify { $0.onMessageReactionChanged(message, Reaction(reaction), added: added) }
        case .receiptDelivered, .receiptRead:
            guard let payload = change.receipt, payload.uid != me else { return }
            let receipt = MessageReceipt(
                kind: payload.kind == .read ? .read : .delivered, conversationId: payload.conversationId,
                uid: payload.uid, messageId: payload.messageId, at: payload.at)
            messageListeners.notify {
                receipt.kind == .read ? $0.onMessagesRead(receipt) : $0.onMessagesDelivered(receipt)
            }
        default:
            break
        }
    }

    static func deliverGroupEvent(_ action: ActionMessage, to listener: any GroupListener) {
        switch action.action?.action {
        case .joined: listener.onGroupMemberJoined(action)
        case .left: listener.onGroupMemberLeft(action)
        case .added: listener.onMemberAddedToGroup(action)
        case .kicked: listener.onGroupMemberKicked(action)
        case .banned: listener.onGroupMemberBanned(action)
        case .unbanned: listener.onGroupMemberUnbanned(action)
        case .scopeChanged: listener.onGroupMemberScopeChanged(action)
        case .ownershipTransferred: listener.onOwnershipChanged(action)
        case nil: break
        }
    }

    /// The received callback that matches the message's class.
    static func deliverNew(_ message: BaseMessage, to listener: any MessageListener) {
        switch message {
        case let text as TextMessage: listener.onTextMessageReceived(text)
        case let media as MediaMessage: listener.onMediaMessageReceived(media)
        case let custom as CustomMessage: listener.onCustomMessageReceived(custom)
        case let action as ActionMessage: listener.onActionMessageReceived(action)
        case let call as Call: listener.onCallMessageReceived(call)
        default: break
        }
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
