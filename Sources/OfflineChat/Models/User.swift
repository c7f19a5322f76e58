/// A user or a group: what a conversation is with, or whom a message is for.
public protocol AppEntity: Sendable {
    /// The uid or the guid.
    var entityID: String { get }
}

/// A user's presence.
public enum UserStatus: String, Sendable {
    /// Connected now (at least one realtime connection).
    case online
    /// Not connected.
    case offline
}

/// A user as the logged-in user sees them.
public struct User: AppEntity, Equatable {
    /// The user's id.
    public var uid: String
    /// Their display name.
    public var name: String
    /// An image url.
    public var avatar: String?
    /// An app-defined role (filter with `UsersRequest`).
    public var role: String?
    /// The app's own data, carried as it is.
    public var metadata: [String: JSONValue]?
    /// Labels for filtering.
    public var tags: [String]
    /// Presence at the time of the read (nil when the read did not say).
    public var status: UserStatus?
    /// Epoch seconds of the user's last activity.
    public var lastActiveAt: Int64?
    /// The logged-in user blocked this user.
    public var blockedByMe: Bool
    /// This user blocked the logged-in user.
    public var hasBlockedMe: Bool

    /// The uid.
    public var entityID: String { uid }

    /// A user value (tests and previews; the SDK makes the ones it hands out).
    public init(
        uid: String, name: String, avatar: String? = nil, role: String? = nil, metadata: [String: JSONValue]? = nil,
        tags: [String] = [], status: UserStatus? = nil, lastActiveAt: Int64? = nil, blockedByMe: Bool = false,
        hasBlockedMe: Bool = false
    ) {
        self.uid = uid
        self.name = name
        self.avatar = avatar
        self.role = role
        self.metadata = metadata
        self.tags = tags
        self.status = status
        self.lastActiveAt = lastActiveAt
        self.blockedByMe = blockedByMe
        self.hasBlockedMe = hasBlockedMe
    }

    init(_ payload: UserPayload) {
        self.init(
            uid: payload.uid, name: payload.name, avatar: payload.avatar, role: payload.role,
            metadata: payload.metadata,
            tags: payload.tags, status: payload.status.flatMap(UserStatus.init(rawValue:)),
            lastActiveAt: payload.lastActiveAt,
            blockedByMe: payload.blockedByMe ?? false, hasBlockedMe: payload.hasBlockedMe ?? false)
    }

    var payload: UserPayload {
        var payload = UserPayload(
            uid: uid, name: name, avatar: avatar, metadata: metadata, tags: tags, role: role,
            lastActiveAt: lastActiveAt)
        payload.status = status?.rawValue
        payload.blockedByMe = blockedByMe ? true : nil
        payload.hasBlockedMe = hasBlockedMe ? true : nil
        return payload
    }
}
