import Foundation
import OfflineChatCache

extension ChatClient {
    /// Sends a text message. With offline support on, the message is first committed to the
    /// durable outbox (`onMessagePending`, with `localMessageId` and `muid`); then
    /// `onMessageSent` once the server has it. Offline, `onError` with
    /// `ERROR_INTERNET_UNAVAILABLE` means "queued, not failed": `onMessageSent` still follows
    /// after the reconnect. A message that cannot be queued gets `onError` only.
    public func sendTextMessage(
        message: TextMessage, onMessagePending: (@Sendable (BaseMessage) -> Void)? = nil,
        onMessageSent: @escaping @Sendable (BaseMessage) -> Void,
        onError: @escaping @Sendable (ChatException) -> Void
    ) {
        guard !message.text.isEmpty else {
            config.callbackQueue.async { onError(.invalid("a text message needs text")) }
            return
        }
        send(message, onMessagePending: onMessagePending, onMessageSent: onMessageSent, onError: onError)
    }

    /// Sends a custom message (app-defined `type` and `customData`); the same contract as
    /// `sendTextMessage`.
    public func sendCustomMessage(
        message: CustomMessage, onMessagePending: (@Sendable (BaseMessage) -> Void)? = nil,
        onMessageSent: @escaping @Sendable (BaseMessage) -> Void,
        onError: @escaping @Sendable (ChatException) -> Void
    ) {
        send(message, onMessagePending: onMessagePending, onMessageSent: onMessageSent, onError: onError)
    }

    /// The messages still in the outbox: pending, sending and failed (with `getFailureReason()`).
    public func getPendingMessages() -> [BaseMessage] {
        guard let items = try? session.current?.cache?.outboxItems() else { return [] }
        return items.map(BaseMessage.queued)
    }

    /// Sends what the outbox holds that is due now, if the connection is up, and returns when
    /// there is nothing more to do now; messages waiting on a backoff and failed ones stay
    /// queued (see `getPendingMessages()`). This is also how queued messages go out when
    /// `autoSendPendingOnReconnect` is off. Does nothing without offline support.
    public func sendPendingMessages() async {
        await session.current?.outbox?.flush()
    }

    /// Sends a queued message now, whatever its backoff, or a failed one again (any failure
    /// but a discard, which leaves nothing to retry), together with whatever else is due, in
    /// composed order. `onSuccess` fires when it is sent (the send's own callbacks still fire
    /// too). A message already on the wire is refused.
    public func retryMessage(
        localId: Int64, onSuccess: @escaping @Sendable (BaseMessage) -> Void,
        onError: @escaping @Sendable (ChatException) -> Void
    ) {
        guard let current = session.current, let outbox = current.outbox, let cache = current.cache else {
            config.callbackQueue.async {
                onError(ChatException(.offlineDisabled, "there is no outbox"))
            }
            return
        }
        guard let item = (try? cache.outboxItems())?.first(where: { $0.localId == localId }), item.state != .sending
        else {
            config.callbackQueue.async {
                onError(.invalid("no queued or failed message with local id \(localId) (or it is being sent)"))
            }
            return
        }
        outbox.register(localId, Outbox.Callbacks(onSent: onSuccess, onError: onError))
        _ = outbox.retry(item)
        outbox.flushSoon()
    }

    /// Sends every message that failed transiently again (permanent failures stay failed),
    /// and every queued one now, whatever its backoff.
    public func retryAllFailedMessages() {
        guard let outbox = session.current?.outbox else { return }
        outbox.retryAll()
        outbox.flushSoon()
    }

    /// Removes a queued or failed message from the outbox; a pending one fails with
    /// `.discarded`. One already on the wire is still reported sent if the server takes it.
    public func discardLocalMessage(localId: Int64) {
        _ = session.current?.outbox?.discard(.one(localId))
    }

    /// Queues (or, without offline support, sends) `message`; `media` is a local file to
    /// upload first, whose attachment metadata `message` already carries.
    func send(
        _ message: BaseMessage, media: URL? = nil, onMessagePending: (@Sendable (BaseMessage) -> Void)?,
        onMessageSent: @escaping @Sendable (BaseMessage) -> Void, onError: @escaping @Sendable (ChatException) -> Void
    ) {
        let queue = config.callbackQueue
        guard let current = session.current else {
            queue.async { onError(.notLoggedIn()) }
            return
        }
        let me = current.user.uid
        message.senderUid = me
        message.conversationId =
            message.receiverType == .group
            ? ConversationPayload.groupID(message.receiverUid) : ConversationPayload.directID(me, message.receiverUid)
        message.sentAt = config.clock.now()
        message.updatedAt = message.sentAt
        var mediaCopy: URL?
        if let media, let cache = current.cache, current.outbox != nil {
            do {
                mediaCopy = try cache.copyForOutbox(media, muid: message.muid, name: media.lastPathComponent)
                (message as? MediaMessage)?.attachment?.url = mediaCopy!.absoluteString
            } catch {
                queue.async { onError(Self.mediaCopyError(error, file: media)) }
                return
            }
        }
        let payload = message.payload
        let request = SendMessageRequest(
            muid: message.muid, receiver: message.receiverUid, receiverType: message.receiverType,
            category: message.category, type: message.type, text: payload.text, attachment: payload.attachment,
            customData: payload.customData, metadata: payload.metadata,
            parentMessageId: message.parentMessageId, callStatus: payload.callStatus)
        guard let outbox = current.outbox, let cache = current.cache else {
            // No outbox: a plain request, sent or failed, as one of the session's tasks (a logout
            // awaits it). Its request runs to its answer even when the session ends: the server
            // may store the message, and its outcome is reported (`URLSession` would abort a
            // cancelled request, so the request is not the session task's child).
            current.settle(
                {
                    try await Task {
                        var body = request
                        if let media, let attachment = body.attachment {
                            body.attachment = try await current.api.upload(
                                try Outbox.read(media), name: attachment.name, mimeType: attachment.mimeType)
                        }
                        let sent: MessagePayload = try await current.api.send("POST", Endpoints.messages, body: body)
                        return BaseMessage.make(sent, source: .server)
                    }.value
                }, onSuccess: onMessageSent, onError: onError)
            return
        }
        let localId: Int64
        do {
            localId = try cache.enqueue(
                request, showing: payload, mediaPath: mediaCopy?.path, maxPending: config.offline.maxPendingMessages)
        } catch {
            if let mediaCopy { cache.discardQueuedMedia([mediaCopy.path]) }
            queue.async { onError(Self.enqueueError(error)) }
            return
        }
        let pending = BaseMessage.make(payload, source: .local)
        pending.id = 0
        pending.localMessageId = localId
        pending.messageStatus = .pending
        (pending as? MediaMessage)?.localPath = mediaCopy?.path
        outbox.register(localId, Outbox.Callbacks(onSent: onMessageSent, onError: onError))
        let online = current.realtime.status == .connected
        // One hop to the callback queue for both (each hop wakes its thread).
        queue.async {
            onMessagePending?(pending)
            if !online { onError(.offline("queued; it is sent when the connection returns")) }
        }
        if online { outbox.flushSoon() }
    }

    private static func enqueueError(_ error: any Error) -> ChatException {
        if let full = error as? OutboxFull {
            return ChatException(
                .outboxFull, "\(full.limit) messages are already waiting to be sent; retry or discard some first")
        }
        return ChatException(.cacheFailure, "the message could not be queued: \(error)")
    }

    private static func mediaCopyError(_ error: any Error, file: URL) -> ChatException {
        if let tooLarge = error as? MediaTooLarge {
            return ChatException(
                .offlineMediaTooLarge,
                "\(file.lastPathComponent) has \(tooLarge.size) bytes, more than the cache's whole budget of \(tooLarge.limit)"
            )
        }
        return ChatException(
            .offlineMediaCopyFailed,
            "\(file.lastPathComponent) could not be copied into the offline cache: \(error.localizedDescription)")
    }
}

extension ChatClient {
    /// Empties the logged-in user's cache: messages, conversations, media and the unsent
    /// outbox. Each still-queued message fails with `.discarded`; one already on the wire is
    /// still reported sent if the server takes it. The next sync is a cold start. A no-op
    /// without offline support.
    public func clearOfflineCache() {
        guard let current = session.current, let cache = current.cache else { return }
        _ = current.outbox?.discard(.all)
        do {
            try cache.clear(keepingMeta: [MetaKey.token, MetaKey.me])
            current.noteQueued()
        } catch {
            config.logger.log(.error, "the offline cache could not be cleared: \(error)")
        }
    }
}
