/// Who may join a group: anyone (`public`), anyone with the password (`password`), or only
/// those an admin adds (`private`, invisible to non-members).
public enum GroupType: String, Codable, Sendable, CaseIterable {
    case `public`
    case password
    case `private`
}

/// A member's standing in a group, ordered: owner > admin > moderator > participant.
/// There is exactly one owner; ownership moves only by transfer.
public enum GroupScope: String, Codable, Sendable, CaseIterable, Comparable {
    case participant
    case moderator
    case admin
    case owner

    var rank: Int {
        switch self {
        case .participant: 0
        case .moderator: 1
        case .admin: 2
        case .owner: 3
        }
    }

    public static func < (a: GroupScope, b: GroupScope) -> Bool { a.rank < b.rank }

    /// The lowest scope that may do `action`. Acting on another member (kick, ban, change
    /// scope) also needs a scope strictly above that member's.
    public static func minimum(for action: GroupPermission) -> GroupScope {
        switch action {
        case .kick, .ban, .unban, .listBans, .deleteOthersMessages: .moderator
        case .add, .changeScope, .edit: .admin
        case .delete, .transferOwnership: .owner
        }
    }

    /// Whether a member with this scope may do `action` (before the rank rule on the target).
    public func may(_ action: GroupPermission) -> Bool { self >= Self.minimum(for: action) }
}

/// What a group member may be allowed to do; see `GroupScope.minimum(for:)`.
public enum GroupPermission: String, Sendable, CaseIterable {
    case add, kick, ban, unban, listBans, changeScope, edit, delete, deleteOthersMessages, transferOwnership
}

/// A group as the caller sees it. `scope`, `hasJoined` and `joinedAt` describe the caller.
public struct GroupPayload: Codable, Sendable, Equatable {
    public var guid: String
    public var name: String
    public var type: GroupType
    public var icon: String?
    public var description: String?
    public var metadata: [String: JSONValue]?
    public var tags: [String]
    public var owner: String
    public var membersCount: Int
    public var createdAt: Int64
    public var updatedAt: Int64
    public var hasJoined: Bool
    public var scope: GroupScope?
    public var joinedAt: Int64?

    public init(
        guid: String, name: String, type: GroupType, icon: String? = nil, description: String? = nil,
        metadata: [String: JSONValue]? = nil, tags: [String] = [], owner: String, membersCount: Int,
        createdAt: Int64, updatedAt: Int64, hasJoined: Bool = false, scope: GroupScope? = nil, joinedAt: Int64? = nil
    ) {
        self.guid = guid
        self.name = name
        self.type = type
        self.icon = icon
        self.description = description
        self.metadata = metadata
        self.tags = tags
        self.owner = owner
        self.membersCount = membersCount
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.hasJoined = hasJoined
        self.scope = scope
        self.joinedAt = joinedAt
    }
}

/// `POST /v1/groups` body. The caller becomes the owner.
public struct CreateGroupRequest: Codable, Sendable {
    public var guid: String
    public var name: String
    public var type: GroupType
    /// Required for `password` groups, refused for the others.
    public var password: String?
    public var icon: String?
    public var description: String?
    public var metadata: [String: JSONValue]?
    public var tags: [String]?

    public init(
        guid: String, name: String, type: GroupType = .public, password: String? = nil, icon: String? = nil,
        description: String? = nil, metadata: [String: JSONValue]? = nil, tags: [String]? = nil
    ) {
        self.guid = guid
        self.name = name
        self.type = type
        self.password = password
        self.icon = icon
        self.description = description
        self.metadata = metadata
        self.tags = tags
    }
}

/// `PATCH /v1/groups/{guid}` body: the fields to replace. Changing `type` to `password`
/// needs a `password`; a new `password` alone re-keys a password group.
public struct EditGroupRequest: Codable, Sendable {
    public var name: String?
    public var type: GroupType?
    public var password: String?
    public var icon: String?
    public var description: String?
    public var metadata: [String: JSONValue]?
    public var tags: [String]?

    public init(
        name: String? = nil, type: GroupType? = nil, password: String? = nil, icon: String? = nil,
        description: String? = nil, metadata: [String: JSONValue]? = nil, tags: [String]? = nil
    ) {
        self.name = name
        self.type = type
        self.password = password
        self.icon = icon
        self.description = description
        self.metadata = metadata
        self.tags = tags
    }
}

/// `POST /v1/groups/{guid}/join` body (may be empty for public groups).
public struct JoinGroupRequest: Codable, Sendable {
    public var password: String?
    public init(password: String? = nil) { self.password = password }
}

/// `POST /v1/groups/{guid}/members` body: add a user (default scope participant).
public struct AddMemberRequest: Codable, Sendable {
    public var uid: String
    public var scope: GroupScope?
    public init(uid: String, scope: GroupScope? = nil) {
        self.uid = uid
        self.scope = scope
    }
}

/// `PATCH /v1/groups/{guid}/members/{uid}` body.
public struct ChangeScopeRequest: Codable, Sendable {
    public var scope: GroupScope
    public init(scope: GroupScope) { self.scope = scope }
}

/// `POST /v1/groups/{guid}/owner` body: the member who becomes owner (the old owner becomes admin).
public struct TransferOwnershipRequest: Codable, Sendable {
    public var uid: String
    public init(uid: String) { self.uid = uid }
}

/// One member of a group.
public struct GroupMemberPayload: Codable, Sendable, Equatable {
    public var guid: String
    public var user: UserPayload
    public var scope: GroupScope
    public var joinedAt: Int64
    public init(guid: String, user: UserPayload, scope: GroupScope, joinedAt: Int64) {
        self.guid = guid
        self.user = user
        self.scope = scope
        self.joinedAt = joinedAt
    }
}

/// One banned user of a group.
public struct GroupBanPayload: Codable, Sendable, Equatable {
    public var guid: String
    public var user: UserPayload
    public var bannedBy: String
    public var bannedAt: Int64
    public init(guid: String, user: UserPayload, bannedBy: String, bannedAt: Int64) {
        self.guid = guid
        self.user = user
        self.bannedBy = bannedBy
        self.bannedAt = bannedAt
    }
}

/// A membership change, as carried by the group's action message (`MessagePayload.action`).
public struct MemberActionPayload: Codable, Sendable, Equatable {
    public enum Action: String, Codable, Sendable {
        case joined, left, added, kicked, banned, unbanned, scopeChanged
        /// `target` became owner; `actor`, the old owner, became admin.
        case ownershipTransferred

        /// After this action `target` is not a member of the group.
        public var removesTarget: Bool { self == .left || self == .kicked || self == .banned || self == .unbanned }
    }

    public var guid: String
    public var action: Action
    /// Who did it (the target itself for joined and left).
    public var actor: String
    /// Whom it concerns.
    public var target: String
    public var oldScope: GroupScope?
    public var newScope: GroupScope?

    public init(
        guid: String, action: Action, actor: String, target: String, oldScope: GroupScope? = nil,
        newScope: GroupScope? = nil
    ) {
        self.guid = guid
        self.action = action
        self.actor = actor
        self.target = target
        self.oldScope = oldScope
        self.newScope = newScope
    }
}
