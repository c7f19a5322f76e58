import Foundation
import OfflineChatCache
import OfflineChatLocking

/// Pages through a conversation's messages (or a thread's), in both directions, in two
/// phases: the cache first, then the server (seed: Show Cached Data).
///
/// ```swift
/// let request = MessagesRequest.MessageRequestBuilder().set(uid: "bob").set(limit: 30).build(client: chat)
/// request.fetchPrevious(onCachedMessages: { paint($0) }, onServerMessages: { reconcile($0) }, onError: { show($0) })
/// ```
///
/// The cache answers only filters it can compute (categories, types, `hideReplies`,
/// `hideDeletedMessages`, a thread). A keyword, `hasLinks`, `updatesOnly`, a timestamp anchor
/// or one sender in a group (`uid` with `guid`) make the cached phase empty; the server
/// phase still answers in full. See docs/CACHE.md.
public final class MessagesRequest: Sendable {
    /// The builder's settings.
    struct Settings: Sendable {
        var uid: String?
        var guid: String?
        var parentMessageId: Int64?
        var limit = PageLimit.standard
        var messageId: Int64?
        var timestamp: Int64?
        var categories: [MessageCategory] = []
        var types: [String] = []
        var hideReplies = false
        var hideDeleted = false
        var searchKeyword: String?
        var hasLinks = false
        var updatedAfter: Int64?
        var updatesOnly = false
    }

    /// The settings of a `MessageRequest`; `build(client:)` makes it.
    public final class MessageRequestBuilder: ChainedBuilder {
        var settings = Settings()
        /// The defaults: pages of 30 (`PageLimit.standard`).
        public init() {}
        /// The one-to-one conversation with this user (or, with `guid`, this sender in the group).
        @discardableResult public func set(uid: String) -> Self { with { $0.settings.uid = uid } }
        /// The group's conversation.
        @discardableResult public func set(guid: String) -> Self { with { $0.settings.guid = guid } }
        /// The replies to this message (a thread).
        @discardableResult public func set(parentMessageId: Int64) -> Self {
            with { $0.settings.parentMessageId = parentMessageId }
        }
        /// Messages per page, 1…100.
        @discardableResult public func set(limit: Int) -> Self { with { $0.settings.limit = PageLimit.clamped(limit) } }
        /// Start paging from this message id (exclusive).
        @discardableResult public func set(messageId: Int64) -> Self { with { $0.settings.messageId = messageId } }
        /// Start paging from this send time, epoch milliseconds (server only for the first page).
        @discardableResult public func set(timestamp: Int64) -> Self { with { $0.settings.timestamp = timestamp } }
        /// Only messages of these categories.
        @discardableResult public func set(categories: [MessageCategory]) -> Self {
            with { $0.settings.categories = categories }
        }
        /// Only messages of these types.
        @discardableResult public func set(types: [String]) -> Self { with { $0.settings.types = types } }
        /// Leave thread replies out.
        @discardableResult public func hideReplies(_ hide: Bool) -> Self { with { $0.settings.hideReplies = hide } }
        /// Leave deleted messages out.
        @discardableResult public func hideDeletedMessages(_ hide: Bool) -> Self {
            with { $0.settings.hideDeleted = hide }
        }
        /// Server only: blanks the cached phase.
        @discardableResult public func set(searchKeyword: String) -> Self {
            with { $0.settings.searchKeyword = searchKeyword }
        }
        /// Server only: blanks the cached phase.
        @discardableResult public func has(links: Bool) -> Self { with { $0.settings.hasLinks = links } }
        /// Only messages changed after `updatedAfter` (epoch ms); with `updatesOnly`, only edits
        /// and deletions. Server only.
        @discardableResult public func set(updatedAfter: Int64) -> Self {
            with { $0.settings.updatedAfter = updatedAfter }
        }
        /// With `set(updatedAfter:)`: only messages edited or deleted since then, not new ones. Server only.
        @discardableResult public func updatesOnly(onlyUpdates: Bool) -> Self {
            with { $0.settings.updatesOnly = onlyUpdates }
        }

        /// The request, for `client`'s logged-in user. Throws when neither a user, a group nor
        /// a thread was set.
        public func build(client: ChatClient) throws -> MessagesRequest {
            guard settings.uid != nil || settings.guid != nil || settings.parentMessageId != nil else {
                throw ChatException.invalid("set a uid, a guid or a parentMessageId")
            }
            return MessagesRequest(client: client, settings: settings)
        }
    }

    private struct Paging: Sendable {
        /// The oldest and newest message ids seen so far (the next anchors).
        var oldest: Int64?
        var newest: Int64?
    }

    let client: ChatClient
    let settings: Settings
    private let gate = FetchGate()
    private let paging: Locked<Paging>

    init(client: ChatClient, settings: Settings) {
        self.client = client
        self.settings = settings
        paging = Locked(Paging(oldest: settings.messageId, newest: settings.messageId))
    }

    /// Messages per page.
    public var limit: Int { settings.limit }

    // MARK: - Fetches

    /// Older messages, oldest first within the page.
    public func fetchPrevious(
        onCachedMessages: @escaping @Sendable ([BaseMessage]) -> Void,
        onServerMessages: @escaping @Sendable ([BaseMessage]) -> Void,
        onError: @escaping @Sendable (ChatException) -> Void
    ) {
        fetch(forward: false, onCached: onCachedMessages, onServer: onServerMessages, onError: onError)
    }

    /// Newer messages, oldest first.
    public func fetchNext(
        onCachedMessages: @escaping @Sendable ([BaseMessage]) -> Void,
        onServerMessages: @escaping @Sendable ([BaseMessage]) -> Void,
        onError: @escaping @Sendable (ChatException) -> Void
    ) {
        fetch(forward: true, onCached: onCachedMessages, onServer: onServerMessages, onError: onError)
    }

    /// The classic form: the server's page only, never a cached one.
    public func fetchPrevious(
        onSuccess: @escaping @Sendable ([BaseMessage]) -> Void, onError: @escaping @Sendable (ChatException) -> Void
    ) {
        fetch(forward: false, onCached: nil, onServer: onSuccess, onError: onError)
    }

    /// Newer messages, from the server only (`onSuccess`), or `onError`.
    public func fetchNext(
        onSuccess: @escaping @Sendable ([BaseMessage]) -> Void, onError: @escaping @Sendable (ChatException) -> Void
    ) {
        fetch(forward: true, onCached: nil, onServer: onSuccess, onError: onError)
    }

    /// `for try await phase in request.previous()`: `.cached`, then `.server`.
    public func previous() -> AsyncThrowingStream<FetchPhase<BaseMessage>, any Error> {
        client.phases { fetch(forward: false, onCached: $0, onServer: $1, onError: $2) }
    }

    /// Newer messages as phases: `.cached` (from the device), then `.server`.
    public func next() -> AsyncThrowingStream<FetchPhase<BaseMessage>, any Error> {
        client.phases { fetch(forward: true, onCached: $0, onServer: $1, onError: $2) }
    }

    private func fetch(
        forward: Bool, onCached: (@Sendable ([BaseMessage]) -> Void)?,
        onServer: @escaping @Sendable ([BaseMessage]) -> Void, onError: @escaping @Sendable (ChatException) -> Void
    ) {
        guard gate.begin() else {
            client.config.callbackQueue.async {
                onError(
                    ChatException(.requestInProgress, "wait for the previous fetch on this request"))
            }
            return
        }
        guard let me = client.getLoggedInUser()?.uid else {
            gate.end()
            client.config.callbackQueue.async { onError(.notLoggedIn()) }
            return
        }
        let anchor = currentAnchor(forward: forward)
        let scope = scope(me: me)
        let settings = settings
        let cacheable = isCacheable(anchor: anchor)
        // The connection epoch at the start: the page may claim the live head only if the
        // connection was up then and did not drop before the page is stored.
        // (The epoch first: a loss after reading it changes it.)
        let epoch = client.session.current?.cache?.liveEpoch
        let liveSince = client.getConnectionStatus() == .connected ? epoch : nil
        client.twoPhase(
            cached: { [client] cache in
                guard cacheable, let scope else { return [] }
                let page = try cache.cachedPage(
                    scope, anchor, limit: settings.limit, filter: Self.cacheFilter(settings))
                cache.touch(page.map(\.conversationId))
                return client.withLocalPaths(page.map { BaseMessage.make($0, source: .cache) }, cache: cache)
            },
            server: { [self, client] session in
                let payloads: [MessagePayload] = try await session.api.get(
                    serverPath(me: me), query: serverQuery(anchor: anchor))
                if let cache = session.cache, let scope {
                    client.keep {
                        try cache.storePage(
                            payloads, scope: scope, anchor: anchor, limit: settings.limit,
                            complete: isComplete(anchor: anchor), liveSince: liveSince)
                    }
                }
                return client.withLocalPaths(
                    payloads.map { BaseMessage.make($0, source: .server) }, cache: session.cache)
            },
            onCached: onCached, onServer: onServer, onError: onError,
            finished: { [self] outcome in
                advance(with: outcome.server ?? outcome.cached ?? [], forward: forward)
                gate.end()
            })
    }

    // MARK: - Paging and scope

    private func currentAnchor(forward: Bool) -> PageAnchor {
        let current = paging.current
        if forward { return (current.newest ?? settings.messageId).map(PageAnchor.after) ?? .after(0) }
        return current.oldest.map(PageAnchor.before) ?? .latest
    }

    private func advance(with page: [BaseMessage], forward: Bool) {
        let ids = page.map(\.id).filter { $0 > 0 }
        guard let low = ids.min(), let high = ids.max() else { return }
        paging.withLock { state in
            if forward {
                state.newest = max(state.newest ?? high, high)
            } else {
                state.oldest = min(state.oldest ?? low, low)
            }
            if state.oldest == nil { state.oldest = low }
            if state.newest == nil { state.newest = high }
        }
    }

    private func scope(me: String) -> CacheScope? {
        if let parent = settings.parentMessageId { return .thread(parentId: parent) }
        if let guid = settings.guid { return .conversation(ConversationPayload.groupID(guid)) }
        if let uid = settings.uid { return .conversation(ConversationPayload.directID(me, uid)) }
        return nil
    }

    private func serverPath(me: String) -> String {
        if let parent = settings.parentMessageId { return "\(Endpoints.messages)/\(parent)/thread" }
        let conversation =
            settings.guid.map(ConversationPayload.groupID) ?? ConversationPayload.directID(me, settings.uid ?? "")
        return "\(Endpoints.conversations)/\(conversation)/messages"
    }

    private func serverQuery(anchor: PageAnchor) -> [(String, String?)] {
        var query: [(String, String?)] = [("limit", "\(settings.limit)")]
        switch anchor {
        case .latest: if let timestamp = settings.timestamp { query.append(("sentBefore", "\(timestamp)")) }
        case .before(let id): query.append(("before", "\(id)"))
        case .after(let id):
            if id == 0, let timestamp = settings.timestamp {
                query.append(("sentAfter", "\(timestamp)"))
            } else {
                query.append(("after", "\(id)"))
            }
        }
        if !settings.categories.isEmpty {
            query.append(("categories", settings.categories.map(\.rawValue).joined(separator: ",")))
        }
        if !settings.types.isEmpty { query.append(("types", settings.types.joined(separator: ","))) }
        if settings.hideReplies { query.append(("hideReplies", "true")) }
        if settings.hideDeleted { query.append(("hideDeleted", "true")) }
        if let keyword = settings.searchKeyword { query.append(("searchKeyword", keyword)) }
        if settings.hasLinks { query.append(("hasLinks", "true")) }
        if let updatedAfter = settings.updatedAfter { query.append(("updatedAfter", "\(updatedAfter)")) }
        if settings.updatesOnly { query.append(("updatesOnly", "true")) }
        if settings.guid != nil, let uid = settings.uid { query.append(("uid", uid)) }
        return query
    }

    /// Whether the cache can answer at all (no server-only predicate).
    private func isCacheable(anchor: PageAnchor) -> Bool {
        settings.searchKeyword == nil && !settings.hasLinks && settings.updatedAfter == nil && !settings.updatesOnly
            && !(settings.guid != nil && settings.uid != nil)
            && !(settings.timestamp != nil && (anchor == .latest || anchor == .after(0)))
    }

    /// Whether the server page holds every message of its slice (so it proves a stretch).
    private func isComplete(anchor: PageAnchor) -> Bool {
        isCacheable(anchor: anchor) && settings.categories.isEmpty && settings.types.isEmpty && !settings.hideReplies
            && !settings.hideDeleted
    }

    static func cacheFilter(_ settings: Settings) -> CachedMessageFilter {
        var filter = CachedMessageFilter()
        filter.categories = settings.categories
        filter.types = settings.types
        filter.hideReplies = settings.hideReplies
        filter.hideDeleted = settings.hideDeleted
        return filter
    }
}
