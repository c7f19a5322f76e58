/// A group as the logged-in user sees it.
public struct Group: AppEntity, Equatable {
    public var guid: String
    public var name: String
    public var groupType: GroupType
    public var icon: String?
    public var groupDescription: String?
    public var metadata: [String: JSONValue]?
    public var tags: [String]
    public var owner: String
    public var membersCount: Int
    public var createdAt: Int64
    public var updatedAt: Int64
    /// The logged-in user is a member.
    public var hasJoined: Bool
    /// The logged-in user's scope, when a member.
    public var scope: GroupScope?
    public var joinedAt: Int64?

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
    public var guid: String
    public var user: User
    public var scope: GroupScope
    public var joinedAt: Int64
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
    public var guid: String
    public var user: User
    public var bannedBy: String
    public var bannedAt: Int64
    public var uid: String { user.uid }

    init(_ payload: GroupBanPayload) {
        guid = payload.guid
        user = User(payload.user)
        bannedBy = payload.bannedBy
        bannedAt = payload.bannedAt
    }
}
