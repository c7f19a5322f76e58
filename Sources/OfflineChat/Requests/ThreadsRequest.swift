import ChatCache
import Foundation

/// The replies to one message, oldest first, in two phases (the thread's own cached
/// stretches). A second fetch while one is in flight fails with `ERROR_REQUEST_IN_PROGRESS`.
public final class ThreadsRequest: Sendable {
    public final class ThreadsRequestBuilder: ChainedBuilder {
        let parentMessageId: Int64
        var limit = PageLimit.standard
        public init(parentMessageId: Int64) { self.parentMessageId = parentMessageId }
        @discardableResult public func set(limit: Int) -> Self { with { $0.limit = PageLimit.clamped(limit) } }

        public func build(client: ChatClient) throws -> ThreadsRequest {
            ThreadsRequest(
                messages: try MessagesRequest.MessageRequestBuilder().set(parentMessageId: parentMessageId).set(
                    limit: limit
                )
                .set(messageId: 0).build(client: client))
        }
    }

    let messages: MessagesRequest
    init(messages: MessagesRequest) { self.messages = messages }

    public func fetchNext(
        onCachedThreads: @escaping @Sendable ([BaseMessage]) -> Void,
        onServerThreads: @escaping @Sendable ([BaseMessage]) -> Void,
        onError: @escaping @Sendable (ChatException) -> Void
    ) {
        messages.fetchNext(onCachedMessages: onCachedThreads, onServerMessages: onServerThreads, onError: onError)
    }

    public func fetchNext(
        onSuccess: @escaping @Sendable ([BaseMessage]) -> Void, onError: @escaping @Sendable (ChatException) -> Void
    ) {
        messages.fetchNext(onSuccess: onSuccess, onError: onError)
    }

    public func next() -> AsyncThrowingStream<FetchPhase<BaseMessage>, any Error> { messages.next() }
}
