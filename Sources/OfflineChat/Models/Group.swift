/// A group as the logged-in user sees it.
public struct Group: AppEntity, Equatable {
    /// The group's id.
    public var guid: String
    /// Its display name.
    public var name: String
    /// Who may join: anyone (`public`), with the password (`password`), or only when added (`private`).
    public var groupType: GroupType
    /// An image url, as the owner set it.
    public var icon: String?
    /// What it is about.
    public var groupDescription: String?
    /// The app's own data, carried as it is.
    public var metadata: [String: JSONValue]?
    /// Labels for filtering (`GroupsRequest`).
    public var tags: [String]
    /// The owner's uid.
    public var owner: String
    /// Members now.
    public var membersCount: Int
    /// Epoch milliseconds.
    public var createdAt: Int64
    /// When its details last changed: epoch milliseconds.
    public var updatedAt: Int64
    /// The logged-in user is a member.
    public var hasJoined: Bool
    /// The logged-in user's scope, when a member.
    public var scope: GroupScope?
    /// When the logged-in user joined, when a member: epoch milliseconds.
    public var joinedAt: Int64?

    /// The guid.
    public var entityID: String { guid }

    init(_ payload: GroupPayload) {
        guid = payload.guid
        name = payload.name
        groupType = payload.type
        icon = payload.icon
        groupDescription = payload.description
        metadata = payload.metadata
        tags = payload.tags
        owner = payload.owner
        membersCount = payload.membersCount
        createdAt = payload.createdAt
        updatedAt = payload.updatedAt
        hasJoined = payload.hasJoined
        scope = payload.scope
        joinedAt = payload.joinedAt
    }

    var payload: GroupPayload {
        GroupPayload(
            guid: guid, name: name, type: groupType, icon: icon, description: groupDescription, metadata: metadata,
            tags: tags, owner: owner, membersCount: membersCount, createdAt: createdAt, updatedAt: updatedAt,
            hasJoined: hasJoined, scope: scope, joinedAt: joinedAt)
    }
}

/// A member of a group: the user and their standing in it.
public struct GroupMember: Sendable, Equatable {
    /// The group.
    public var guid: String
    /// The member.
    public var user: User
    /// Their standing: participant, moderator, admin or owner.
    public var scope: GroupScope
    /// Epoch milliseconds.
    public var joinedAt: Int64
    /// The member's uid.
    public var uid: String { user.uid }

    init(_ payload: GroupMemberPayload) {
        guid = payload.guid
        user = User(payload.user)
        scope = payload.scope
        joinedAt = payload.joinedAt
    }
}

/// A user banned from a group.
public struct BannedGroupMember: Sendable, Equatable {
    /// The group.
    public var guid: String
    /// The banned user.
    public var user: User
    /// The moderator who banned them.
    public var bannedBy: String
    /// Epoch milliseconds.
    public var bannedAt: Int64
    /// The banned user's uid.
    public var uid: String { user.uid }

    init(_ payload: GroupBanPayload) {
        guid = payload.guid
        user = User(payload.user)
        bannedBy = payload.bannedBy
        bannedAt = payload.bannedAt
    }
}
