import Foundation
import OfflineChatCache

/// The replies to one message, oldest first, in two phases (the thread's own cached
/// stretches). A second fetch while one is in flight fails with `ERROR_REQUEST_IN_PROGRESS`.
public final class ThreadsRequest: Sendable {
    /// The settings of a `ThreadsRequest`; `build(client:)` makes it.
    public final class ThreadsRequestBuilder: ChainedBuilder {
        let parentMessageId: Int64
        var limit = PageLimit.standard
        /// The replies to message `parentMessageId`.
        public init(parentMessageId: Int64) { self.parentMessageId = parentMessageId }
        /// Items per page, kept within 1…100 (`PageLimit`).
        @discardableResult public func set(limit: Int) -> Self { with { $0.limit = PageLimit.clamped(limit) } }

        /// The request, for `client`'s logged-in user: each fetch reads the next page.
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

    /// The next page in two phases: the cached one first (also offline), then the server's, or `onError`.
    public func fetchNext(
        onCachedThreads: @escaping @Sendable ([BaseMessage]) -> Void,
        onServerThreads: @escaping @Sendable ([BaseMessage]) -> Void,
        onError: @escaping @Sendable (ChatException) -> Void
    ) {
        messages.fetchNext(onCachedMessages: onCachedThreads, onServerMessages: onServerThreads, onError: onError)
    }

    /// The next page from the server only (`onSuccess`), or `onError`.
    public func fetchNext(
        onSuccess: @escaping @Sendable ([BaseMessage]) -> Void, onError: @escaping @Sendable (ChatException) -> Void
    ) {
        messages.fetchNext(onSuccess: onSuccess, onError: onError)
    }

    /// The next page as its phases: `.cached` (from the device), then `.server`.
    public func next() -> AsyncThrowingStream<FetchPhase<BaseMessage>, any Error> { messages.next() }
}
