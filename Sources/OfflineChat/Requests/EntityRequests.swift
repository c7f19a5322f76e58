import Foundation
import OfflineChatCache

/// Users, in uid order, in two phases (per-request snapshots). A keyword or a presence filter
/// is server only: no cached phase content.
public final class UsersRequest: Sendable {
    /// The settings of a `UsersRequest`; `build(client:)` makes it.
    public final class UsersRequestBuilder: ChainedBuilder {
        var limit = PageLimit.standard
        var searchKeyword: String?
        var tags: [String] = []
        var roles: [String] = []
        var status: UserStatus?
        /// The defaults: pages of 30 (`PageLimit.standard`).
        public init() {}
        /// Items per page, kept within 1…100 (`PageLimit`).
        @discardableResult public func set(limit: Int) -> Self { with { $0.limit = PageLimit.clamped(limit) } }
        /// Only items matching `searchKeyword`; the server answers it alone (no cached phase).
        @discardableResult public func set(searchKeyword: String) -> Self { with { $0.searchKeyword = searchKeyword } }
        /// Only items with one of `tags`.
        @discardableResult public func set(tags: [String]) -> Self { with { $0.tags = tags } }
        /// Only users with one of `roles`.
        @discardableResult public func set(roles: [String]) -> Self { with { $0.roles = roles } }
        /// Only users with this presence; the server answers it alone (no cached phase).
        @discardableResult public func set(status: UserStatus) -> Self { with { $0.status = status } }

        /// The request, for `client`'s logged-in user: each fetch reads the next page.
        public func build(client: ChatClient) -> UsersRequest {
            let query: [(String, String?)] = [
                ("limit", "\(limit)"), ("searchKeyword", searchKeyword), ("status", status?.rawValue),
                ("tags", tags.isEmpty ? nil : tags.joined(separator: ",")),
                ("roles", roles.isEmpty ? nil : roles.joined(separator: ","))
            ]
            let key = searchKeyword == nil && status == nil ? snapshotKey("users", query) : nil
            return UsersRequest(
                list: SnapshotList(client: client, key: key, path: Endpoints.users, query: query, convert: User.init))
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

/// Groups the user may see, in guid order, in two phases. A keyword is server only.
public final class GroupsRequest: Sendable {
    /// The settings of a `GroupsRequest`; `build(client:)` makes it.
    public final class GroupsRequestBuilder: ChainedBuilder {
        var limit = PageLimit.standard
        var searchKeyword: String?
        var tags: [String] = []
        var joinedOnly = false
        /// Pages of `limit` items (kept within 1…100, `PageLimit`).
        public init(limit: Int = PageLimit.standard) { self.limit = PageLimit.clamped(limit) }
        /// Items per page, kept within 1…100 (`PageLimit`).
        @discardableResult public func set(limit: Int) -> Self { with { $0.limit = PageLimit.clamped(limit) } }
        /// Only items matching `searchKeyword`; the server answers it alone (no cached phase).
        @discardableResult public func set(searchKeyword: String) -> Self { with { $0.searchKeyword = searchKeyword } }
        /// Only items with one of `tags`.
        @discardableResult public func set(tags: [String]) -> Self { with { $0.tags = tags } }
        /// Only groups the user is a member of.
        @discardableResult public func joinedOnly(_ joined: Bool) -> Self { with { $0.joinedOnly = joined } }

        /// The request, for `client`'s logged-in user: each fetch reads the next page.
        public func build(client: ChatClient) -> GroupsRequest {
            let query: [(String, String?)] = [
                ("limit", "\(limit)"), ("searchKeyword", searchKeyword),
                ("tags", tags.isEmpty ? nil : tags.joined(separator: ",")),
                ("joinedOnly", joinedOnly ? "true" : nil)
            ]
            let key = searchKeyword == nil ? snapshotKey("groups", query) : nil
            return GroupsRequest(
                list: SnapshotList(client: client, key: key, path: Endpoints.groups, query: query, convert: Group.init))
        }
    }

    let list: SnapshotList<GroupPayload, Group>
    init(list: SnapshotList<GroupPayload, Group>) { self.list = list }

    /// The next page in two phases: the cached one first (also offline), then the server's, or `onError`.
    public func fetchNext(
        onCachedGroups: @escaping @Sendable ([Group]) -> Void, onServerGroups: @escaping @Sendable ([Group]) -> Void,
        onError: @escaping @Sendable (ChatException) -> Void
    ) {
        list.fetch(onCached: onCachedGroups, onServer: onServerGroups, onError: onError)
    }

    /// The next page from the server only (`onSuccess`), or `onError`.
    public func fetchNext(
        onSuccess: @escaping @Sendable ([Group]) -> Void, onError: @escaping @Sendable (ChatException) -> Void
    ) {
        list.fetch(onCached: nil, onServer: onSuccess, onError: onError)
    }

    /// The next page as its phases: `.cached` (from the device), then `.server`.
    public func next() -> AsyncThrowingStream<FetchPhase<Group>, any Error> { list.phases() }
}

/// A group's members, in uid order, in two phases. A keyword or a presence filter is server only.
public final class GroupMembersRequest: Sendable {
    /// The settings of a `GroupMembersRequest`; `build(client:)` makes it.
    public final class GroupMembersRequestBuilder: ChainedBuilder {
        let guid: String
        var limit = PageLimit.standard
        var searchKeyword: String?
        var scopes: [GroupScope] = []
        var status: UserStatus?
        /// For group `guid`.
        public init(guid: String) { self.guid = guid }
        /// Items per page, kept within 1…100 (`PageLimit`).
        @discardableResult public func set(limit: Int) -> Self { with { $0.limit = PageLimit.clamped(limit) } }
        /// Only items matching `searchKeyword`; the server answers it alone (no cached phase).
        @discardableResult public func set(searchKeyword: String) -> Self { with { $0.searchKeyword = searchKeyword } }
        /// Only members with one of `scopes`.
        @discardableResult public func set(scopes: [GroupScope]) -> Self { with { $0.scopes = scopes } }
        /// Only users with this presence; the server answers it alone (no cached phase).
        @discardableResult public func set(status: UserStatus) -> Self { with { $0.status = status } }

        /// The request, for `client`'s logged-in user: each fetch reads the next page.
        public func build(client: ChatClient) -> GroupMembersRequest {
            let query: [(String, String?)] = [
                ("limit", "\(limit)"), ("searchKeyword", searchKeyword), ("status", status?.rawValue),
                ("scopes", scopes.isEmpty ? nil : scopes.map(\.rawValue).joined(separator: ","))
            ]
            let key = searchKeyword == nil && status == nil ? snapshotKey("members:\(guid)", query) : nil
            let path = "\(Endpoints.groups)/\(guid)/members"
            return GroupMembersRequest(
                list: SnapshotList(client: client, key: key, path: path, query: query, convert: GroupMember.init))
        }
    }

    let list: SnapshotList<GroupMemberPayload, GroupMember>
    init(list: SnapshotList<GroupMemberPayload, GroupMember>) { self.list = list }

    /// The next page in two phases: the cached one first (also offline), then the server's, or `onError`.
    public func fetchNext(
        onCachedGroupMembers: @escaping @Sendable ([GroupMember]) -> Void,
        onServerGroupMembers: @escaping @Sendable ([GroupMember]) -> Void,
        onError: @escaping @Sendable (ChatException) -> Void
    ) {
        list.fetch(onCached: onCachedGroupMembers, onServer: onServerGroupMembers, onError: onError)
    }

    /// The next page from the server only (`onSuccess`), or `onError`.
    public func fetchNext(
        onSuccess: @escaping @Sendable ([GroupMember]) -> Void, onError: @escaping @Sendable (ChatException) -> Void
    ) {
        list.fetch(onCached: nil, onServer: onSuccess, onError: onError)
    }

    /// The next page as its phases: `.cached` (from the device), then `.server`.
    public func next() -> AsyncThrowingStream<FetchPhase<GroupMember>, any Error> { list.phases() }
}

/// A group's banned users (moderators and up), in uid order, in two phases.
public final class BannedGroupMembersRequest: Sendable {
    /// The settings of a `BannedGroupMembersRequest`; `build(client:)` makes it.
    public final class BannedGroupMembersRequestBuilder: ChainedBuilder {
        let guid: String
        var limit = PageLimit.standard
        /// For group `guid`.
        public init(guid: String) { self.guid = guid }
        /// Items per page, kept within 1…100 (`PageLimit`).
        @discardableResult public func set(limit: Int) -> Self { with { $0.limit = PageLimit.clamped(limit) } }

        /// The request, for `client`'s logged-in user: each fetch reads the next page.
        public func build(client: ChatClient) -> BannedGroupMembersRequest {
            let query: [(String, String?)] = [("limit", "\(limit)")]
            let path = "\(Endpoints.groups)/\(guid)/bans"
            return BannedGroupMembersRequest(
                list: SnapshotList(
                    client: client, key: snapshotKey("bans:\(guid)", query), path: path, query: query,
                    convert: BannedGroupMember.init))
        }
    }

    let list: SnapshotList<GroupBanPayload, BannedGroupMember>
    init(list: SnapshotList<GroupBanPayload, BannedGroupMember>) { self.list = list }

    /// The next page in two phases: the cached one first (also offline), then the server's, or `onError`.
    public func fetchNext(
        onCachedBannedGroupMembers: @escaping @Sendable ([BannedGroupMember]) -> Void,
        onServerBannedGroupMembers: @escaping @Sendable ([BannedGroupMember]) -> Void,
        onError: @escaping @Sendable (ChatException) -> Void
    ) {
        list.fetch(onCached: onCachedBannedGroupMembers, onServer: onServerBannedGroupMembers, onError: onError)
    }

    /// The next page from the server only (`onSuccess`), or `onError`.
    public func fetchNext(
        onSuccess: @escaping @Sendable ([BannedGroupMember]) -> Void,
        onError: @escaping @Sendable (ChatException) -> Void
    ) {
        list.fetch(onCached: nil, onServer: onSuccess, onError: onError)
    }

    /// The next page as its phases: `.cached` (from the device), then `.server`.
    public func next() -> AsyncThrowingStream<FetchPhase<BannedGroupMember>, any Error> { list.phases() }
}

/// The logged-in user's notification feed, newest first, in two phases.
public final class NotificationFeedRequest: Sendable {
    /// The settings of a `NotificationFeedRequest`; `build(client:)` makes it.
    public final class NotificationFeedRequestBuilder: ChainedBuilder {
        var limit = PageLimit.standard
        /// The defaults: pages of 30 (`PageLimit.standard`).
        public init() {}
        /// Items per page, kept within 1…100 (`PageLimit`).
        @discardableResult public func set(limit: Int) -> Self { with { $0.limit = PageLimit.clamped(limit) } }

        /// The request, for `client`'s logged-in user: each fetch reads the next page.
        public func build(client: ChatClient) -> NotificationFeedRequest {
            let limit = limit
            return NotificationFeedRequest(
                list: SnapshotList(
                    client: client, key: snapshotKey("feed", [("limit", "\(limit)")]),
                    whenBusy: .emptyServerResult,
                    fetchPage: { session, cursor in
                        let items: [FeedItemPayload] = try await session.api.get(
                            Endpoints.notifications,
                            query: [("limit", "\(limit)"), ("before", cursor)])
                        return .init(items: items, next: items.count < limit ? nil : items.last.map { "\($0.id)" })
                    }, convert: { payload, _ in NotificationFeedItem(payload) }))
        }
    }

    let list: SnapshotList<FeedItemPayload, NotificationFeedItem>
    init(list: SnapshotList<FeedItemPayload, NotificationFeedItem>) { self.list = list }

    /// The next page in two phases: the cached one first (also offline), then the server's, or `onError`.
    public func fetchNext(
        onCachedNotificationFeedItems: @escaping @Sendable ([NotificationFeedItem]) -> Void,
        onServerNotificationFeedItems: @escaping @Sendable ([NotificationFeedItem]) -> Void,
        onError: @escaping @Sendable (ChatException) -> Void
    ) {
        list.fetch(onCached: onCachedNotificationFeedItems, onServer: onServerNotificationFeedItems, onError: onError)
    }

    /// The next page from the server only (`onSuccess`), or `onError`.
    public func fetchNext(
        onSuccess: @escaping @Sendable ([NotificationFeedItem]) -> Void,
        onError: @escaping @Sendable (ChatException) -> Void
    ) {
        list.fetch(onCached: nil, onServer: onSuccess, onError: onError)
    }

    /// The next page as its phases: `.cached` (from the device), then `.server`.
    public func next() -> AsyncThrowingStream<FetchPhase<NotificationFeedItem>, any Error> { list.phases() }
}

/// Reactions on one message, in both directions; each direction keeps its own cached pages.
/// A second fetch while one is in flight fails with `ERROR_REQUEST_IN_PROGRESS`.
public final class ReactionsRequest: Sendable {
    /// The settings of a `ReactionsRequest`; `build(client:)` makes it.
    public final class ReactionsRequestBuilder: ChainedBuilder {
        var messageId: Int64?
        var reaction: String?
        var limit = PageLimit.standard
        /// The defaults: pages of 30 (`PageLimit.standard`).
        public init() {}
        /// The message whose reactions to list (required).
        @discardableResult public func set(messageId: Int64) -> Self { with { $0.messageId = messageId } }
        /// Only this reaction.
        @discardableResult public func set(reaction: String) -> Self { with { $0.reaction = reaction } }
        /// Items per page, kept within 1…100 (`PageLimit`).
        @discardableResult public func set(limit: Int) -> Self { with { $0.limit = PageLimit.clamped(limit) } }

        /// The request, for `client`'s logged-in user; `ERROR_INVALID_ARGUMENT` without a `messageId`.
        public func build(client: ChatClient) throws -> ReactionsRequest {
            guard let messageId else { throw ChatException.invalid("set a messageId") }
            let settings: [(String, String?)] = [("limit", "\(limit)"), ("reaction", reaction)]
            let path = "\(Endpoints.messages)/\(messageId)/reactions"
            let limit = limit
            func direction(_ name: String, _ anchor: String) -> SnapshotList<ReactionPayload, Reaction> {
                SnapshotList(
                    client: client, key: snapshotKey("reactions:\(messageId):\(name)", settings),
                    whenBusy: .requestInProgressError,
                    fetchPage: { session, cursor in
                        // The first page back in time starts after the newest reaction.
                        let start = cursor ?? (anchor == "before" ? "\(Int64.max)" : nil)
                        let items: [ReactionPayload] = try await session.api.get(
                            path, query: settings + [(anchor, start)])
                        let edge = anchor == "before" ? items.first : items.last
                        return .init(items: items, next: items.count < limit ? nil : edge.map { "\($0.id)" })
                    }, convert: { payload, _ in Reaction(payload) })
            }
            return ReactionsRequest(previous: direction("previous", "before"), next: direction("next", "after"))
        }
    }

    let previousList: SnapshotList<ReactionPayload, Reaction>
    let nextList: SnapshotList<ReactionPayload, Reaction>
    private let gate = FetchGate()

    init(previous: SnapshotList<ReactionPayload, Reaction>, next: SnapshotList<ReactionPayload, Reaction>) {
        previousList = previous
        nextList = next
    }

    /// Older reactions (newest page first).
    public func fetchPrevious(
        onCachedReactions: @escaping @Sendable ([Reaction]) -> Void,
        onServerReactions: @escaping @Sendable ([Reaction]) -> Void,
        onError: @escaping @Sendable (ChatException) -> Void
    ) {
        guarded(previousList, onCachedReactions, onServerReactions, onError)
    }

    /// Newer reactions (oldest page first).
    public func fetchNext(
        onCachedReactions: @escaping @Sendable ([Reaction]) -> Void,
        onServerReactions: @escaping @Sendable ([Reaction]) -> Void,
        onError: @escaping @Sendable (ChatException) -> Void
    ) {
        guarded(nextList, onCachedReactions, onServerReactions, onError)
    }

    /// Older reactions as phases: `.cached`, then `.server`.
    public func previous() -> AsyncThrowingStream<FetchPhase<Reaction>, any Error> {
        previousList.client.phases { guarded(previousList, $0, $1, $2) }
    }

    /// Newer reactions as phases: `.cached`, then `.server`.
    public func next() -> AsyncThrowingStream<FetchPhase<Reaction>, any Error> {
        nextList.client.phases { guarded(nextList, $0, $1, $2) }
    }

    /// One fetch at a time across both directions.
    private func guarded(
        _ list: SnapshotList<ReactionPayload, Reaction>, _ onCached: @escaping @Sendable ([Reaction]) -> Void,
        _ onServer: @escaping @Sendable ([Reaction]) -> Void, _ onError: @escaping @Sendable (ChatException) -> Void
    ) {
        guard gate.begin() else {
            list.client.config.callbackQueue.async {
                onError(
                    ChatException(.requestInProgress, "wait for the previous fetch on this request"))
            }
            return
        }
        let gate = gate
        list.fetch(
            onCached: onCached,
            onServer: {
                gate.end()
                onServer($0)
            },
            onError: {
                gate.end()
                onError($0)
            })
    }
}
