import Foundation
import OfflineChatCache

/// What a session does with its realtime stream, out of `ChatClient`: each change is written
/// through to the cache first (`writeThrough`), then the listeners hear it (`dispatch`), once,
/// whichever path (the stream or the catch-up sync) brought it first. `hello` and typing frames
/// go to the sync engine and the message listeners.
struct RealtimeDispatch: Sendable {
    /// The client's listener registries.
    let listeners: SyncEngine.Listeners
    let logger: any ChatLogger

    /// One realtime envelope: changes become listener callbacks. `lostTrack`: the cache could
    /// not take a change (the replay must bring it).
    func receive(_ envelope: RealtimeEnvelope, in current: UserSession, lostTrack: () -> Void) {
        let me = current.user.uid
        switch envelope.type {
        case .hello: current.sync?.connected(hello: envelope.cursor)
        // Every change before it was stored (or lost track: then the sync point stays).
        case .cursor: current.sync?.liveChangeStored(cursor: envelope.cursor)
        case .typing:
            guard let typing = envelope.typing, let sender = typing.sender, sender != me else { return }
            let indicator = TypingIndicator(
                sender: sender, receiverId: typing.receiverType == .group ? typing.receiver : sender,
                receiverType: typing.receiverType)
            listeners.messages.notify { typing.isTyping ? $0.onTypingStarted(indicator) : $0.onTypingEnded(indicator) }
        case .change:
            guard let change = envelope.change else { return }
            let written = writeThrough(change, in: current)
            if written.stored {
                current.sync?.liveChangeStored(cursor: envelope.cursor)
            } else {
                lostTrack()
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
    func writeThrough(_ change: ChangePayload, in current: UserSession) -> LiveWrite {
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
                    listeners.conversations.notify { $0.onConversationUpdated(updated) }
                }
                return LiveWrite(stored: true, newToTheCache: new)
            default:
                try cache.storeUpdates([message])
                return LiveWrite(stored: true)
            }
        } catch {
            logger.log(.error, "cache write failed: \(error)")
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
            listeners.messages.notify { listener in Self.deliverNew(message, to: listener) }
            if let action = message as? ActionMessage {
                listeners.groups.notify { Self.deliverGroupEvent(action, to: $0) }
            }
        case .messageUpdated:
            guard let payload = change.message else { return }
            let message = BaseMessage.make(payload, source: source)
            listeners.messages.notify { listener in
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
            listeners.messages.notify { $0.onMessageReactionChanged(message, Reaction(reaction), added: added) }
        case .receiptDelivered, .receiptRead:
            guard let payload = change.receipt, payload.uid != me else { return }
            let receipt = MessageReceipt(
                kind: payload.kind == .read ? .read : .delivered, conversationId: payload.conversationId,
                uid: payload.uid, messageId: payload.messageId, at: payload.at)
            listeners.messages.notify {
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
