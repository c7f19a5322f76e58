import OfflineChatProtocol
import OfflineChatSQLite

/// The `GroupsRequest` builder's filters on `GET /v1/groups`.
public struct GroupFilter: Sendable {
    /// Case-insensitive substring of the guid or the name.
    public var searchKeyword: String?
    /// Groups with any of these tags (empty: no filter).
    public var tags: [String] = []
    /// Only groups the caller is a member of.
    public var joinedOnly = false
    public init() {}
}

extension Store {
    /// A group with the caller's membership (`me.*`, absent when not a member). Bind the
    /// caller's uid first.
    static let groupQuery = """
        SELECT g.guid, g.name, g.type, g.icon, g.description, g.metadata, g.tags, g.owner, g.created_at, g.updated_at,
               (SELECT count(*) FROM conversation_members c WHERE c.conversation_id = 'group_' || g.guid) AS members_count,
               me.scope AS my_scope, me.joined_at AS my_joined_at
        FROM groups g
        LEFT JOIN conversation_members me ON me.conversation_id = 'group_' || g.guid AND me.uid = ?
        """

    static func group(from row: Row) throws -> GroupPayload {
        let scope = (try row.get("my_scope", as: String?.self)).flatMap(GroupScope.init(rawValue:))
        return GroupPayload(
            guid: try row.get("guid"), name: try row.get("name"),
            type: GroupType(rawValue: try row.get("type")) ?? .private, icon: try row.get("icon"),
            description: try row.get("description"),
            metadata: try decodeJSON([String: JSONValue].self, try row.get("metadata")),
            tags: try decodeJSON([String].self, try row.get("tags")) ?? [], owner: try row.get("owner"),
            membersCount: try row.get("members_count"), createdAt: try row.get("created_at"),
            updatedAt: try row.get("updated_at"), hasJoined: scope != nil, scope: scope,
            joinedAt: try row.get("my_joined_at"))
    }

    /// A live group as `caller` sees it; 404 when it does not exist, was deleted, or is
    /// private and the caller is not a member (private groups are invisible to outsiders).
    static func visibleGroup(_ db: any SQLDatabase, _ guid: String, for caller: String) throws -> GroupPayload {
        guard let row = try db.queryFirst("\(groupQuery) WHERE g.guid = ? AND g.deleted_at IS NULL", [caller, guid])
        else {
            throw StoreError.notFound("no group \(guid)")
        }
        let group = try group(from: row)
        guard group.type != .private || group.hasJoined else { throw StoreError.notFound("no group \(guid)") }
        return group
    }

    /// The caller's scope in a live group; 404 for no group, 403 (`banned` when banned) for
    /// a non-member.
    static func memberScope(_ db: any SQLDatabase, _ guid: String, _ uid: String) throws -> GroupScope {
        // On every group read and send: one indexed lookup, not the whole group (whose
        // member count walks the member rows).
        guard
            let row = try db.queryFirst(
                """
                SELECT g.type, me.scope FROM groups g
                LEFT JOIN conversation_members me ON me.conversation_id = 'group_' || g.guid AND me.uid = ?
                WHERE g.guid = ? AND g.deleted_at IS NULL
                """, [uid, guid])
        else { throw StoreError.notFound("no group \(guid)") }
        if let scope = (try row.get(1, as: String?.self)).flatMap(GroupScope.init(rawValue:)) { return scope }
        guard try row.get(0, as: String.self) != GroupType.private.rawValue else {
            throw StoreError.notFound("no group \(guid)")
        }
        try requireNotBanned(db, guid, uid)
        throw StoreError.forbidden("you are not a member of group \(guid)")
    }

    /// The caller's scope when it allows `action`, else 403 naming the scope needed.
    static func requireScope(
        _ db: any SQLDatabase, _ guid: String, _ uid: String, for action: GroupPermission
    ) throws -> GroupScope {
        let scope = try memberScope(db, guid, uid)
        guard scope.may(action) else {
            throw StoreError.forbidden(
                "\(action.rawValue) in group \(guid) needs scope \(GroupScope.minimum(for: action).rawValue) or higher; you are \(scope.rawValue)"
            )
        }
        return scope
    }

    /// The group as shared in changes: without any one caller's membership.
    static func sharedGroup(_ db: any SQLDatabase, _ guid: String) throws -> GroupPayload {
        guard let row = try db.queryFirst("\(groupQuery) WHERE g.guid = ?", ["", guid]) else {
            throw StoreError.broken("group \(guid) vanished")
        }
        return try group(from: row)
    }

    /// Creates a group owned by `owner`, with its conversation. 409 when the guid was ever used.
    public func createGroup(
        _ request: CreateGroupRequest, by owner: String, passwordHash: String?
    ) throws -> GroupPayload {
        try write { db, changes in
            let now = stamp()
            if try db.scalar("SELECT 1 FROM groups WHERE guid = ?", [request.guid], as: Int.self) != nil {
                throw StoreError.conflict("group \(request.guid) already exists (or existed)")
            }
            let conversationId = ConversationPayload.groupID(request.guid)
            try db.run(
                """
                INSERT INTO groups(guid, name, type, password_hash, icon, description, metadata, tags, owner, created_at, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    request.guid, request.name, request.type.rawValue, passwordHash, request.icon, request.description,
                    try Self.json(request.metadata), try Self.json(request.tags ?? []), owner, now, now
                ])
            try db.run("INSERT INTO conversations(id, type, updated_at) VALUES (?, 'group', ?)", [conversationId, now])
            try insertMember(db, request.guid, owner, scope: .owner, at: now)
            try record(
                db, .groupCreated, conversationId: conversationId, group: try Self.sharedGroup(db, request.guid),
                groupLog: true, span: .opens(owner), into: &changes)
            return try Self.visibleGroup(db, request.guid, for: owner)
        }
    }

    /// Live groups `caller` may see (public and password groups, and private ones they are
    /// in), in guid order after `after`.
    public func groups(for caller: String, filter: GroupFilter, after: String?, limit: Int) throws -> [GroupPayload] {
        var conditions = SQLConditions()
        conditions.add("g.guid > ?", [after ?? ""])
        conditions.add("g.deleted_at IS NULL AND (g.type != 'private' OR me.uid IS NOT NULL)")
        if filter.joinedOnly { conditions.add("me.uid IS NOT NULL") }
        conditions.keyword(filter.searchKeyword, in: ["g.guid", "g.name"])
        try conditions.anyTag(filter.tags, in: "g.tags")
        let sql = "\(Self.groupQuery) WHERE \(conditions.clause) ORDER BY g.guid LIMIT ?"
        let finalArguments = [caller] + conditions.arguments + [limit]
        return try read { db in try db.query(sql, finalArguments).map(Self.group(from:)) }
    }

    /// The owner of a group (admin commands act as the owner); 404 for an unknown group.
    public func groupOwner(_ guid: String) throws -> String {
        try read { db in
            guard
                let owner: String = try db.scalar(
                    "SELECT owner FROM groups WHERE guid = ? AND deleted_at IS NULL", [guid])
            else {
                throw StoreError.notFound("no group \(guid)")
            }
            return owner
        }
    }

    /// One group as `caller` sees it.
    public func group(_ guid: String, for caller: String) throws -> GroupPayload {
        try read { try Self.visibleGroup($0, guid, for: caller) }
    }

    /// What a join needs to know before the write: the group as the caller sees it, and the
    /// stored hash when a password must be verified (outside the write lock). Banned users
    /// are refused here, before any password is tried.
    public func joinCheck(_ guid: String, uid: String) throws -> (group: GroupPayload, passwordHash: String?) {
        try read { db in
            let group = try Self.visibleGroup(db, guid, for: uid)
            if group.hasJoined { return (group, nil) }
            try Self.requireNotBanned(db, guid, uid)
            guard group.type == .password else { return (group, nil) }
            return (group, try db.scalar("SELECT password_hash FROM groups WHERE guid = ?", [guid]))
        }
    }

    /// Refuses callers whose scope does not allow `action` (a read, for checks that must come
    /// before expensive work such as hashing a password).
    public func requireScope(_ guid: String, _ uid: String, for action: GroupPermission) throws {
        try read { db in _ = try Self.requireScope(db, guid, uid, for: action) }
    }

    /// Replaces the given fields (admins and the owner). `passwordHash` is the new password's
    /// hash when one was given.
    public func editGroup(
        _ guid: String, by uid: String, _ request: EditGroupRequest, passwordHash: String?
    ) throws -> GroupPayload {
        try write { db, changes in
            let now = try lockConversation(db, ConversationPayload.groupID(guid))
            _ = try Self.requireScope(db, guid, uid, for: .edit)
            let current = try Self.sharedGroup(db, guid)
            let type = request.type ?? current.type
            let storedHash = try db.queryFirst("SELECT password_hash FROM groups WHERE guid = ?", [guid])?.get(
                0, as: String?.self)
            if type == .password && passwordHash == nil && (current.type != .password || storedHash == nil) {
                throw StoreError.validation("a password group needs a `password`")
            }
            if type != .password && passwordHash != nil {
                throw StoreError.validation("`password` is only for password groups")
            }
            let newHash: String? = type == .password ? passwordHash ?? storedHash : nil
            try db.run(
                """
                UPDATE groups SET name = coalesce(?, name), type = ?, password_hash = ?, icon = coalesce(?, icon),
                    description = coalesce(?, description), metadata = coalesce(?, metadata), tags = coalesce(?, tags),
                    updated_at = ? WHERE guid = ?
                """,
                [
                    request.name, type.rawValue, newHash, request.icon,
                    request.description, try Self.json(request.metadata), try Self.json(request.tags), now, guid
                ])
            try recordGroupUpdate(db, guid, into: &changes)
            return try Self.visibleGroup(db, guid, for: uid)
        }
    }

    func recordGroupUpdate(
        _ db: any SQLDatabase, _ guid: String, kind: ChangeKind = .groupUpdated,
        span: SpanChange? = nil, into changes: inout [PublishedChange]
    ) throws {
        try record(
            db, kind, conversationId: ConversationPayload.groupID(guid), group: try Self.sharedGroup(db, guid),
            groupLog: true, span: span, into: &changes)
    }

    /// Deletes a group (owner only): every member loses it at once. Its messages stay
    /// stored but unreadable; the guid is never reused.
    public func deleteGroup(_ guid: String, by uid: String) throws {
        try write { db, changes in
            let now = try lockConversation(db, ConversationPayload.groupID(guid))
            _ = try Self.requireScope(db, guid, uid, for: .delete)
            let conversationId = ConversationPayload.groupID(guid)
            try db.run("UPDATE groups SET deleted_at = ?, updated_at = ? WHERE guid = ?", [now, now, guid])
            try db.run("DELETE FROM conversation_members WHERE conversation_id = ?", [conversationId])
            try db.run("DELETE FROM group_bans WHERE guid = ?", [guid])
            try recordGroupUpdate(db, guid, kind: .groupDeleted, span: .closesAll, into: &changes)
        }
    }

    /// The groups `uid` is a member of (the realtime loop learns them when a socket of theirs
    /// opens on a node of a cluster, whose copy may have missed changes made elsewhere).
    func groups(of uid: String) throws -> [String] {
        try read { db in try db.query(Self.groupMembershipsQuery + " WHERE m.uid = ?", [uid]).map { try $0.get(0) } }
    }

    /// Every (guid, uid) membership of live groups (the realtime loop loads them once at start).
    func allGroupMembers() throws -> [(guid: String, uid: String)] {
        try read { db in try db.query(Self.groupMembershipsQuery).map { (try $0.get(0), try $0.get(1)) } }
    }

    /// (guid, uid) of every membership of a live group, for a caller to narrow.
    static let groupMembershipsQuery = """
        SELECT substr(m.conversation_id, 7), m.uid FROM conversation_members m
        JOIN conversations c ON c.id = m.conversation_id AND c.type = 'group'
        """
}
