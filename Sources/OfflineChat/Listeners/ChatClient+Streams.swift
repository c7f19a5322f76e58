import Foundation

/// The listeners' events as `AsyncStream`s, for `for await` loops (a SwiftUI `.task`, a test).
/// Each stream is a listener of its own, registered when the stream is made and removed when
/// it ends (its loop ends, its task is cancelled, or it is dropped); events arrive in the
/// order the listeners hear them, buffered until read.
///
/// ```swift
/// .task {
///     for await message in chat.receivedMessages() { model.append(message) }
/// }
/// ```
extension ChatClient {
    /// The connection's changes from now on (`.connecting`, `.connected`, `.disconnected`).
    public func connectionStatuses() -> AsyncStream<ConnectionStatus> {
        relayed(ConnectionRelay.init, add: addConnectionListener) { [weak self] in self?.removeConnectionListener($0) }
    }

    /// New messages from now on, as `onTextMessageReceived` and its siblings report them
    /// (text, media, custom, action and call messages; `source` says whether realtime or the
    /// catch-up sync brought each).
    public func receivedMessages() -> AsyncStream<BaseMessage> {
        relayed(MessageRelay.init, add: addMessageListener) { [weak self] in self?.removeMessageListener($0) }
    }

    /// A stream fed by `makeRelay`'s listener, registered with `add` until the stream ends (the
    /// stream holds it: the registry holds listeners weakly), then removed with `remove`.
    private func relayed<Element, Relay: Sendable>(
        _ makeRelay: (AsyncStream<Element>.Continuation) -> Relay, add: (String, Relay) -> Void,
        remove: @escaping @Sendable (String) -> Void
    ) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self)
        let relay = makeRelay(continuation)
        let id = "stream-\(UUID().uuidString)"
        add(id, relay)
        continuation.onTermination = { _ in
            _ = relay
            remove(id)
        }
        return stream
    }
}

/// Hands a connection listener's events to a stream.
private final class ConnectionRelay: ConnectionListener, Sendable {
    let continuation: AsyncStream<ConnectionStatus>.Continuation
    init(_ continuation: AsyncStream<ConnectionStatus>.Continuation) { self.continuation = continuation }
    func onConnecting() { continuation.yield(.connecting) }
    func onConnected() { continuation.yield(.connected) }
    func onDisconnected() { continuation.yield(.disconnected) }
}

/// Hands a message listener's new messages to a stream.
private final class MessageRelay: MessageListener, Sendable {
    let continuation: AsyncStream<BaseMessage>.Continuation
    init(_ continuation: AsyncStream<BaseMessage>.Continuation) { self.continuation = continuation }
    func onTextMessageReceived(_ message: TextMessage) { continuation.yield(message) }
    func onMediaMessageReceived(_ message: MediaMessage) { continuation.yield(message) }
    func onCustomMessageReceived(_ message: CustomMessage) { continuation.yield(message) }
    func onActionMessageReceived(_ message: ActionMessage) { continuation.yield(message) }
    func onCallMessageReceived(_ message: Call) { continuation.yield(message) }
}
