import Foundation
import OfflineChatCache
import OfflineChatLocking

/// The engine behind the entity lists (users, groups, members, banned members, reactions,
/// the notification feed): the cached phase replays the snapshot the server returned online
/// for the same settings and page, so a list never fetched online has an empty cached page.
/// Settings with a server-only predicate (keyword search, presence) have no snapshot key:
/// their cached phase is always empty and nothing is recorded.
final class SnapshotList<Payload: Codable & Sendable, Model: Sendable>: Sendable {
    /// What a second fetch gets while one is in flight (the seed differs per list).
    enum WhenBusy: Sendable {
        case requestInProgressError
        case emptyServerResult
    }

    struct ServerPage: Sendable {
        var items: [Payload]
        /// The cursor of the following page; nil at the end.
        var next: String?
    }

    private struct Paging: Sendable {
        /// The server's next page and its cursor.
        var page = 0
        var cursor: String?
        var done = false
        /// Fetches started: the cached phase replays this page, so offline fetches page too.
        var fetches = 0
    }

    let client: ChatClient
    let key: String?
    let whenBusy: WhenBusy
    let fetchPage: @Sendable (UserSession, String?) async throws -> ServerPage
    let convert: @Sendable (Payload, MessageSource) -> Model
    /// Replaces the snapshot as the cached phase (page index → items).
    let cachedPage: (@Sendable (ChatCache, Int) throws -> [Payload])?
    private let gate = FetchGate()
    private let paging = Locked(Paging())

    init(
        client: ChatClient, key: String?, whenBusy: WhenBusy,
        fetchPage: @escaping @Sendable (UserSession, String?) async throws -> ServerPage,
        convert: @escaping @Sendable (Payload, MessageSource) -> Model,
        cachedPage: (@Sendable (ChatCache, Int) throws -> [Payload])? = nil
    ) {
        self.cachedPage = cachedPage
        self.client = client
        self.key = key
        self.whenBusy = whenBusy
        self.fetchPage = fetchPage
        self.convert = convert
    }

    /// A list chatd serves as `Page`s at `path`: `query` plus the previous page's `cursor`.
    convenience init(
        client: ChatClient, key: String?, path: String, query: [(String, String?)],
        convert: @escaping @Sendable (Payload) -> Model
    ) {
        self.init(
            client: client, key: key, whenBusy: .emptyServerResult,
            fetchPage: { session, cursor in
                let page: Page<Payload> = try await session.api.get(path, query: query + [("cursor", cursor)])
                return ServerPage(items: page.items, next: page.next)
            }, convert: { payload, _ in convert(payload) })
    }

    func fetch(
        onCached: (@Sendable ([Model]) -> Void)?, onServer: @escaping @Sendable ([Model]) -> Void,
        onError: @escaping @Sendable (ChatException) -> Void
    ) {
        guard gate.begin() else {
            let whenBusy = whenBusy
            client.config.callbackQueue.async {
                switch whenBusy {
                case .emptyServerResult: onServer([])
                case .requestInProgressError:
                    onError(
                        ChatException(.requestInProgress, "wait for the previous fetch on this request"))
                }
            }
            return
        }
        let state = paging.withLock { paging -> Paging in
            defer { paging.fetches += 1 }
            return paging
        }
        let key = key
        let convert = convert
        let fetchPage = fetchPage
        let cachedPage = cachedPage
        client.twoPhase(
            cached: { cache in
                if let cachedPage { return try cachedPage(cache, state.fetches).map { convert($0, .cache) } }
                guard let key, let json = try cache.snapshot(key, page: state.fetches) else { return [] }
                return try ChatCache.decodeSnapshot([Payload].self, json).map { convert($0, .cache) }
            },
            server: { [paging, client] session in
                if state.done { return [] }
                let page = try await fetchPage(session, state.cursor)
                // A read its session's end abandoned neither stores nor moves the paging.
                try Task.checkCancellation()
                if let key, let cache = session.cache {
                    client.keep {
                        try cache.storeSnapshot(
                            key, page: state.page, payload: try ChatCache.encodeSnapshot(page.items))
                    }
                }
                paging.withLock { current in
                    current.page = state.page + 1
                    current.cursor = page.next
                    current.done = page.next == nil
                }
                return page.items.map { convert($0, .server) }
            },
            onCached: onCached, onServer: onServer, onError: onError,
            finished: { [gate] _ in gate.end() })
    }

    func phases() -> AsyncThrowingStream<FetchPhase<Model>, any Error> {
        client.phases { fetch(onCached: $0, onServer: $1, onError: $2) }
    }
}

/// A stable snapshot key from a list's name and settings.
func snapshotKey(_ list: String, _ settings: [(String, String?)]) -> String {
    ([list] + settings.compactMap { name, value in value.map { "\(name)=\($0)" } }).joined(separator: "|")
}

/// How many items a page of a list request may hold: 1 to 100 (chatd's bound), 30 unless set.
/// A builder's `set(limit:)` keeps any number inside the bounds.
public enum PageLimit {
    /// The sizes chatd serves.
    public static let range = 1...100
    /// A builder's limit until `set(limit:)`.
    public static let standard = 30

    /// `limit` moved into `range`.
    public static func clamped(_ limit: Int) -> Int { min(max(limit, range.lowerBound), range.upperBound) }
}

/// A request builder: each setter changes one setting and returns the builder, so calls chain.
protocol ChainedBuilder: AnyObject {}

extension ChainedBuilder {
    /// Applies `change` to the builder and returns it.
    @discardableResult func with(_ change: (Self) -> Void) -> Self {
        change(self)
        return self
    }
}
