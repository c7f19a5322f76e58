/// Who may join a group: anyone (`public`), anyone with the password (`password`), or only
/// those an admin adds (`private`, invisible to non-members).
public enum GroupType: String, Codable, Sendable, CaseIterable {
    /// Anyone may join.
    case `public`
    /// Anyone with the group's password may join.
    case password
    /// Only members an admin adds; invisible to non-members.
    case `private`
}

/// A member's standing in a group, ordered: owner > admin > moderator > participant.
/// There is exactly one owner; ownership moves only by transfer.
public enum GroupScope: String, Codable, Sendable, CaseIterable, Comparable {
    /// An ordinary member.
    case participant
    /// May also kick, ban, unban, list bans and delete others' messages.
    case moderator
    /// May also add members, change scopes and edit the group.
    case admin
    /// May also delete the group and transfer ownership; one per group.
    case owner

    var rank: Int {
        switch self {
        case .participant: 0
        case .moderator: 1
        case .admin: 2
        case .owner: 3
        }
    }

    /// Orders scopes by rank: participant < moderator < admin < owner.
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
    /// Add a member, kick, ban, unban, list bans, change a scope, edit the group, delete it,
    /// delete others' messages, transfer ownership.
    case add, kick, ban, unban, listBans, changeScope, edit, delete, deleteOthersMessages, transferOwnership
}

/// A group as the caller sees it. `scope`, `hasJoined` and `joinedAt` describe the caller.
public struct GroupPayload: Codable, Sendable, Equatable {
    /// The group's id, chosen by its creator; never reused.
    public var guid: String
    /// The display name.
    public var name: String
    /// Who may join.
    public var type: GroupType
    /// The group's icon, a string chatd stores as given.
    public var icon: String?
    /// The group's description.
    public var description: String?
    /// Free-form JSON kept with the group.
    public var metadata: [String: JSONValue]?
    /// Labels; `GET /v1/groups?tags=` finds the groups with any of them.
    public var tags: [String]
    /// The owner's uid.
    public var owner: String
    /// How many members the group has now.
    public var membersCount: Int
    /// Epoch milliseconds of the group's creation.
    public var createdAt: Int64
    /// Epoch milliseconds of the last edit, ownership transfer or deletion.
    public var updatedAt: Int64
    /// The caller is a member.
    public var hasJoined: Bool
    /// The caller's scope, nil when not a member.
    public var scope: GroupScope?
    /// Epoch milliseconds of the caller's joining, nil when not a member.
    public var joinedAt: Int64?

    /// Creates a group with every field; the caller fields default to not a member.
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
    /// The new group's id: 1 to 100 letters, digits or `_ . @ -`, never used before.
    public var guid: String
    /// The display name (1 to 255 characters).
    public var name: String
    /// Who may join.
    public var type: GroupType
    /// Required for `password` groups, refused for the others.
    public var password: String?
    /// The group's icon, stored as given (up to 2048 characters).
    public var icon: String?
    /// The group's description (up to 4096 characters).
    public var description: String?
    /// Free-form JSON kept with the group.
    public var metadata: [String: JSONValue]?
    /// Labels to find the group by (at most 50, each up to 64 characters).
    public var tags: [String]?

    /// Creates a request with every field; the group is public unless `type` says otherwise.
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
    /// A new name; nil keeps the old one.
    public var name: String?
    /// A new type; nil keeps the old one.
    public var type: GroupType?
    /// A new password (password groups only); nil keeps the stored one.
    public var password: String?
    /// A new icon; nil keeps the old one.
    public var icon: String?
    /// A new description; nil keeps the old one.
    public var description: String?
    /// New metadata, replacing the old whole; nil keeps the old.
    public var metadata: [String: JSONValue]?
    /// New tags, replacing the old ones; nil keeps the old.
    public var tags: [String]?

    /// Creates a request; the fields left nil stay as they are.
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
    /// The group's password; for `password` groups only.
    public var password: String?
    /// Creates a request, with the password for a `password` group.
    public init(password: String? = nil) { self.password = password }
}

/// `POST /v1/groups/{guid}/members` body: add a user (default scope participant).
public struct AddMemberRequest: Codable, Sendable {
    /// The user to add.
    public var uid: String
    /// Their scope, at most the adder's own and never `owner`; nil for participant.
    public var scope: GroupScope?
    /// Creates a request with every field.
    public init(uid: String, scope: GroupScope? = nil) {
        self.uid = uid
        self.scope = scope
    }
}

/// `POST /v1/groups/{guid}/members` body adding many users at once (CometChat's
/// `addMembersToGroup`, OpenIM's `inviteUserToGroup`): at most `maxCount`, in one transaction;
/// each gets its own outcome.
public struct AddMembersRequest: Codable, Sendable {
    /// The most members one request adds.
    public static let maxCount = 1_000
    /// The users to add, each with a scope (participant when nil).
    public var members: [AddMemberRequest]
    /// Creates a request with every field.
    public init(members: [AddMemberRequest]) { self.members = members }
}

/// What adding one user of an `AddMembersRequest` came to.
public struct AddMemberOutcome: Codable, Sendable, Equatable {
    /// The user.
    public var uid: String
    /// What came of it.
    public var status: Status
    /// Why the user was not added (`not_found`, `conflict` for a banned user, `forbidden` for a
    /// scope above the adder's, `validation_failed`).
    public var error: APIError?

    /// The outcome's kind.
    public enum Status: String, Codable, Sendable {
        /// Now a member.
        case added
        /// A member already: unchanged.
        case member
        /// Not added: see `error`.
        case failed
    }

    /// Creates an outcome with every field.
    public init(uid: String, status: Status, error: APIError? = nil) {
        self.uid = uid
        self.status = status
        self.error = error
    }
}

/// The answer to an `AddMembersRequest`: one outcome per user, in the request's order.
public struct AddMembersResponse: Codable, Sendable {
    /// The outcomes.
    public var members: [AddMemberOutcome]
    /// Creates an answer with every field.
    public init(members: [AddMemberOutcome]) { self.members = members }
}

/// `PATCH /v1/groups/{guid}/members/{uid}` body.
public struct ChangeScopeRequest: Codable, Sendable {
    /// The member's new scope, at most the caller's own and never `owner`.
    public var scope: GroupScope
    /// Creates a request for `scope`.
    public init(scope: GroupScope) { self.scope = scope }
}

/// `POST /v1/groups/{guid}/owner` body: the member who becomes owner (the old owner becomes admin).
public struct TransferOwnershipRequest: Codable, Sendable {
    /// The uid of the member who becomes owner.
    public var uid: String
    /// Creates a request for `uid`.
    public init(uid: String) { self.uid = uid }
}

/// One member of a group.
public struct GroupMemberPayload: Codable, Sendable, Equatable {
    /// The group's guid.
    public var guid: String
    /// The member.
    public var user: UserPayload
    /// The member's scope.
    public var scope: GroupScope
    /// Epoch milliseconds of the member's joining.
    public var joinedAt: Int64
    /// Creates a member with every field.
    public init(guid: String, user: UserPayload, scope: GroupScope, joinedAt: Int64) {
        self.guid = guid
        self.user = user
        self.scope = scope
        self.joinedAt = joinedAt
    }
}

/// One banned user of a group.
public struct GroupBanPayload: Codable, Sendable, Equatable {
    /// The group's guid.
    public var guid: String
    /// The banned user.
    public var user: UserPayload
    /// The uid of the member who banned them.
    public var bannedBy: String
    /// Epoch milliseconds of the ban.
    public var bannedAt: Int64
    /// Creates a ban with every field.
    public init(guid: String, user: UserPayload, bannedBy: String, bannedAt: Int64) {
        self.guid = guid
        self.user = user
        self.bannedBy = bannedBy
        self.bannedAt = bannedAt
    }
}

/// A membership change, as carried by the group's action message (`MessagePayload.action`).
public struct MemberActionPayload: Codable, Sendable, Equatable {
    /// What happened to `target`.
    public enum Action: String, Codable, Sendable {
        /// The target joined, left, was added, kicked, banned or unbanned, or had their scope changed.
        case joined, left, added, kicked, banned, unbanned, scopeChanged
        /// `target` became owner; `actor`, the old owner, became admin.
        case ownershipTransferred

        /// After this action `target` is not a member of the group.
        public var removesTarget: Bool { self == .left || self == .kicked || self == .banned || self == .unbanned }
    }

    /// The group's guid.
    public var guid: String
    /// What happened.
    public var action: Action
    /// Who did it (the target itself for joined and left).
    public var actor: String
    /// Whom it concerns.
    public var target: String
    /// The target's scope before, nil when they were not a member.
    public var oldScope: GroupScope?
    /// The target's scope after, nil when they are no longer a member.
    public var newScope: GroupScope?

    /// Creates an action with every field.
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
