import Foundation
import OfflineChatCache
import OfflineChatLocking

/// Pages through the logged-in user's conversations, most recent first, in two phases.
/// The server phase replaces its slice of the cached list: conversations the server no
/// longer returns there are dropped from the cache, and their still-queued messages fail
/// with `.discarded` (`ERROR_OFFLINE_MESSAGE_DISCARDED`).
public final class ConversationRequest: Sendable {
    /// The settings of a `ConversationRequest`; `build(client:)` makes it.
    public final class ConversationRequestBuilder: ChainedBuilder {
        var limit: Int
        /// Conversations per page, 1…100.
        public init(limit: Int = PageLimit.standard) { self.limit = PageLimit.clamped(limit) }
        /// Items per page, kept within 1…100 (`PageLimit`).
        @discardableResult public func set(limit: Int) -> Self { with { $0.limit = PageLimit.clamped(limit) } }
        /// The request, for `client`'s logged-in user: each fetch reads the next page.
        public func build(client: ChatClient) -> ConversationRequest {
            ConversationRequest(client: client, limit: limit)
        }
    }

    private struct Paging: Sendable {
        var page = 0
        var serverCursor: String?
        var cachedAfter: (updatedAt: Int64, id: String)?
        var serverDone = false
    }

    let client: ChatClient
    /// Conversations per page.
    public let limit: Int
    private let gate = FetchGate()
    private let paging = Locked(Paging())

    init(client: ChatClient, limit: Int) {
        self.client = client
        self.limit = limit
    }

    /// The next page in two phases: the cached one first (also offline), then the server's, or `onError`.
    public func fetchNext(
        onCachedConversations: @escaping @Sendable ([Conversation]) -> Void,
        onServerConversations: @escaping @Sendable ([Conversation]) -> Void,
        onError: @escaping @Sendable (ChatException) -> Void
    ) {
        fetch(onCached: onCachedConversations, onServer: onServerConversations, onError: onError)
    }

    /// The classic form: the server's page only.
    public func fetchNext(
        onSuccess: @escaping @Sendable ([Conversation]) -> Void, onError: @escaping @Sendable (ChatException) -> Void
    ) {
        fetch(onCached: nil, onServer: onSuccess, onError: onError)
    }

    /// The next page as its phases: `.cached` (from the device), then `.server`.
    public func next() -> AsyncThrowingStream<FetchPhase<Conversation>, any Error> {
        client.phases { fetch(onCached: $0, onServer: $1, onError: $2) }
    }

    private func fetch(
        onCached: (@Sendable ([Conversation]) -> Void)?, onServer: @escaping @Sendable ([Conversation]) -> Void,
        onError: @escaping @Sendable (ChatException) -> Void
    ) {
        guard gate.begin() else {
            client.config.callbackQueue.async {
                onError(
                    ChatException(.requestInProgress, "wait for the previous fetch on this request"))
            }
            return
        }
        let state = paging.current
        let limit = limit
        client.twoPhase(
            cached: { [paging] cache in
                let page = try cache.cachedConversations(after: state.cachedAfter, limit: limit)
                if let last = page.last { paging.withLock { $0.cachedAfter = (last.updatedAt, last.conversationId) } }
                return page.map { Conversation($0, source: .cache) }
            },
            server: { session in
                if state.serverDone { return [] }
                let page: Page<ConversationPayload> = try await session.api.get(
                    Endpoints.conversations,
                    query: [("limit", "\(limit)"), ("cursor", state.serverCursor)])
                // A read its session's end abandoned neither stores nor moves the paging.
                try Task.checkCancellation()
                let removed = self.client.keep([]) {
                    try session.cache?.storeConversationPage(page.items, first: state.page == 0, last: page.next == nil)
                        ?? []
                }
                // A conversation the server no longer lists takes its queued sends with it (`.discarded`).
                for id in removed { _ = session.outbox?.discard(.conversation(id)) }
                self.paging.withLock { paging in
                    paging.page += 1
                    paging.serverCursor = page.next
                    paging.serverDone = page.next == nil
                    if let last = page.items.last { paging.cachedAfter = (last.updatedAt, last.conversationId) }
                }
                return page.items.map { Conversation($0, source: .server) }
            },
            onCached: onCached, onServer: onServer, onError: onError,
            finished: { [gate] _ in gate.end() })
    }
}
