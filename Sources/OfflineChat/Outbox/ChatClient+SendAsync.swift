import Foundation

/// The `async` twins of the sends: each returns the sent message once the server has it, or
/// throws the error the callback form's `onError` gets first.
///
/// ```swift
/// do {
///     let sent = try await chat.sendTextMessage(message: TextMessage(receiverUid: "bob", text: "hi"))
/// } catch let error as ChatException where error.errorCode == ChatException.internetUnavailable {
///     // Queued, not failed: it goes when the connection returns (`onOutboxMessageSent`).
/// }
/// ```
///
/// With offline support on, a send made without a connection throws
/// `ERROR_INTERNET_UNAVAILABLE` at once: the message stays queued and is sent when the
/// connection returns (the message listeners' `onOutboxMessageSent` reports it). A message
/// queued while connected is awaited until it is sent or fails for good (a transient failure
/// waits out its backoff). Cancelling the awaiting task stops the wait only: the queued
/// message stays queued (the wait throws `CancellationError`).
extension ChatClient {
    /// The `async` form of `sendTextMessage(message:onMessagePending:onMessageSent:onError:)`.
    @discardableResult
    public func sendTextMessage(
        message: TextMessage, onMessagePending: (@Sendable (BaseMessage) -> Void)? = nil
    ) async throws -> BaseMessage {
        try await firstOutcome { sent, failed in
            sendTextMessage(message: message, onMessagePending: onMessagePending, onMessageSent: sent, onError: failed)
        }
    }

    /// The `async` form of `sendCustomMessage(message:onMessagePending:onMessageSent:onError:)`.
    @discardableResult
    public func sendCustomMessage(
        message: CustomMessage, onMessagePending: (@Sendable (BaseMessage) -> Void)? = nil
    ) async throws -> BaseMessage {
        try await firstOutcome { sent, failed in
            sendCustomMessage(
                message: message, onMessagePending: onMessagePending, onMessageSent: sent, onError: failed)
        }
    }

    /// The `async` form of `sendMediaMessage(message:onMessagePending:onMessageSent:onError:)`.
    @discardableResult
    public func sendMediaMessage(
        message: MediaMessage, onMessagePending: (@Sendable (BaseMessage) -> Void)? = nil
    ) async throws -> BaseMessage {
        try await firstOutcome { sent, failed in
            sendMediaMessage(message: message, onMessagePending: onMessagePending, onMessageSent: sent, onError: failed)
        }
    }

    /// The `async` form of `retryMessage(localId:onSuccess:onError:)`: returns the message once
    /// it is sent.
    @discardableResult
    public func retryMessage(localId: Int64) async throws -> BaseMessage {
        try await firstOutcome { sent, failed in retryMessage(localId: localId, onSuccess: sent, onError: failed) }
    }

    /// The `async` form of `logout(onSuccess:onError:)`: ends the session at once, then returns
    /// once chatd revoked the token (or there was no session) and every task of the ended
    /// session has returned; throws when chatd could not be asked (offline: the token stays
    /// valid until it expires). The session is over either way.
    public func logoutAndRevokeToken() async throws {
        try await firstOutcome { done, failed in logout(onSuccess: { done(()) }, onError: failed) }
    }

    /// Starts a callback-form call and awaits its first outcome: the value `succeed` gets or
    /// the error `fail` gets, whichever comes first (later ones are dropped). A cancelled wait
    /// throws `CancellationError`; what the call started goes on.
    private func firstOutcome<T: Sendable>(
        _ start: (@escaping @Sendable (T) -> Void, @escaping @Sendable (ChatException) -> Void) -> Void
    ) async throws -> T {
        let (outcomes, continuation) = AsyncThrowingStream.makeStream(of: T.self, throwing: (any Error).self)
        start(
            { value in
                continuation.yield(value)
                continuation.finish()
            },
            { continuation.finish(throwing: $0) })
        for try await value in outcomes { return value }
        throw CancellationError()
    }
}
