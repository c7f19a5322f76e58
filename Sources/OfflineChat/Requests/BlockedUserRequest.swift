import Foundation
import OfflineChatCache

/// The users the logged-in user blocked. Its cached page is the SDK's own blocked list (the
/// whole list on the first page, later pages empty), refreshed at login and updated by
/// `blockUsers` / `unblockUsers`; the server phase pages through chatd's list.
public final class BlockedUserRequest: Sendable {
    /// The settings of a `BlockedUserRequest`; `build(client:)` makes it.
    public final class BlockedUserRequestBuilder: ChainedBuilder {
        var limit = PageLimit.standard
        /// Pages of `limit` items (kept within 1…100, `PageLimit`).
        public init(limit: Int = PageLimit.standard) { self.limit = PageLimit.clamped(limit) }
        /// Items per page, kept within 1…100 (`PageLimit`).
        @discardableResult public func set(limit: Int) -> Self { with { $0.limit = PageLimit.clamped(limit) } }

        /// The request, for `client`'s logged-in user: each fetch reads the next page.
        public func build(client: ChatClient) -> BlockedUserRequest {
            let limit = limit
            return BlockedUserRequest(
                list: SnapshotList(
                    client: client, key: nil, whenBusy: .emptyServerResult,
                    fetchPage: { session, cursor in
                        let page: Page<UserPayload> = try await session.api.get(
                            Endpoints.blocks,
                            query: [("limit", "\(limit)"), ("cursor", cursor)])
                        // A first page that is the whole list refreshes the SDK's own list.
                        if cursor == nil && page.next == nil {
                            client.keep { try session.cache?.storeBlockedList(page.items) }
                        }
                        return .init(items: page.items, next: page.next)
                    }, convert: { payload, _ in User(payload) },
                    cachedPage: { cache, page in page == 0 ? (try cache.blockedList() ?? []) : [] }))
        }
    }

    let list: SnapshotList<UserPayload, User>
    init(list: SnapshotList<UserPayload, User>) { self.list = list }

    /// The next page in two phases: the cached one first (also offline), then the server's, or `onError`.
    public func fetchNext(
        onCachedUsers: @escaping @Sendable ([User]) -> Void, onServerUsers: @escaping @Sendable ([User]) -> Void,
        onError: @escaping @Sendable (ChatException) -> Void
    ) {
        list.fetch(onCached: onCachedUsers, onServer: onServerUsers, onError: onError)
    }

    /// The next page from the server only (`onSuccess`), or `onError`.
    public func fetchNext(
        onSuccess: @escaping @Sendable ([User]) -> Void, onError: @escaping @Sendable (ChatException) -> Void
    ) {
        list.fetch(onCached: nil, onServer: onSuccess, onError: onError)
    }

    /// The next page as its phases: `.cached` (from the device), then `.server`.
    public func next() -> AsyncThrowingStream<FetchPhase<User>, any Error> { list.phases() }
}

extension ChatClient {
    /// Blocks users. Answers each uid's outcome ("success" or the error code); the SDK's
    /// blocked list is updated for the ones that succeeded. Needs a connection.
    public func blockUsers(_ uids: [String]) async throws -> [String: String] {
        try await setBlocked(uids, blocking: true)
    }

    /// Unblocks users: each uid's outcome as for `blockUsers`. Needs a connection.
    public func unblockUsers(_ uids: [String]) async throws -> [String: String] {
        try await setBlocked(uids, blocking: false)
    }

    private func setBlocked(_ uids: [String], blocking: Bool) async throws -> [String: String] {
        let current = try requireSession()
        var outcome: [String: String] = [:]
        for uid in uids {
            do {
                let user: UserPayload = try await current.api.send(
                    blocking ? "PUT" : "DELETE", "\(Endpoints.blocks)/\(uid)", body: nil as String?)
                outcome[uid] = "success"
                try current.cache?.updateBlockedList(user, blocked: blocking)
            } catch let error as ChatException {
                if error.code == .internetUnavailable { throw error }
                outcome[uid] = error.errorCode
            }
        }
        return outcome
    }

    /// Reloads the SDK's blocked list from the server into `cache` (at login; each catch-up
    /// sweep too). A failure is logged: the cached list stays.
    static func refreshBlockedList(api: APIClient, cache: ChatCache, logger: any ChatLogger) async {
        var users: [UserPayload] = []
        var cursor: String?
        do {
            repeat {
                let page: Page<UserPayload> = try await api.get(
                    Endpoints.blocks, query: [("limit", "100"), ("cursor", cursor)])
                users += page.items
                cursor = page.next
            } while cursor != nil && users.count < 10_000
            try cache.storeBlockedList(users)
        } catch {
            logger.log(.info, "the blocked list was not refreshed: \(error)")
        }
    }
}
