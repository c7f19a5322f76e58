import OfflineChatProtocol
import OfflineChatSQLite

/// The `GroupMembersRequest` builder's filters on `GET /v1/groups/{guid}/members`.
public struct MemberFilter: Sendable {
    /// Case-insensitive substring of the uid or the name.
    public var searchKeyword: String?
    /// Members with any of these scopes (empty: all).
    public var scopes: [GroupScope] = []
    /// true: only online members, false: only offline ones, nil: both.
    public var online: Bool?
    /// The uids online now, when `online` is set.
    public var onlineUids: Set<String>?
    public init() {}
}

/// Membership changes. Each one is a write transaction that updates the member rows and
/// adds the group's action message, recorded as one `group.member` change for the members
/// and the target.
extension Store {
    static let memberUserColumns = userColumns.split(separator: ",").map {
        "u." + $0.trimmingCharacters(in: .whitespaces)
    }
    .joined(separator: ", ")

    /// Joins a public group, or a password group with a verified password (`verifiedHash`
    /// is the stored hash the password was checked against). A repeat changes nothing.
    public func join(_ guid: String, uid: String, verifiedHash: String?) throws -> (group: GroupPayload, joined: Bool) {
        try write { db, changes in
            let now = try lockConversation(db, ConversationPayload.groupID(guid))
            let group = try Self.visibleGroup(db, guid, for: uid)
            if group.hasJoined { return (group, false) }
            try Self.requireNotBanned(db, guid, uid)
            switch group.type {
            case .private: throw StoreError.forbidden("group \(guid) is private; an admin must add you")
            case .password:
                let stored: String? = try db.scalar("SELECT password_hash FROM groups WHERE guid = ?", [guid])
                guard let stored, stored == verifiedHash else {
                    throw StoreError.forbidden("wrong password for group \(guid)")
                }
            case .public: break
            }
            try insertMember(db, guid, uid, scope: .participant, at: now)
            try memberAction(
                db, MemberActionPayload(guid: guid, action: .joined, actor: uid, target: uid, newScope: .participant),
                at: now, into: &changes)
            return (try Self.visibleGroup(db, guid, for: uid), true)
        }
    }

    /// Leaves a group. The owner must transfer ownership first.
    public func leave(_ guid: String, uid: String) throws {
        try write { db, changes in
            let now = try lockConversation(db, ConversationPayload.groupID(guid))
            let scope = try Self.memberScope(db, guid, uid)
            guard scope != .owner else {
                throw StoreError.conflict("the owner cannot leave group \(guid); transfer ownership first")
            }
            try removeMember(db, guid, uid)
            try memberAction(
                db, MemberActionPayload(guid: guid, action: .left, actor: uid, target: uid, oldScope: scope),
                at: now, into: &changes)
        }
    }

    /// Adds a user (admins and the owner), with a scope no higher than the actor's. Adding
    /// a member again answers the member unchanged (`added == false`).
    public func addMember(
        _ guid: String, _ target: String, scope: GroupScope, by actor: String
    ) throws -> (member: GroupMemberPayload, added: Bool) {
        try write { db, changes in
            let now = try lockConversation(db, ConversationPayload.groupID(guid))
            let actorScope = try Self.requireScope(db, guid, actor, for: .add)
            switch try Self.admission(db, guid, target, scope: scope, actorScope: actorScope) {
            case .refused(let error): throw error
            case .member(let existing): return (existing, false)
            case .admitted:
                try admit(db, guid, target, scope: scope, by: actor, at: now, into: &changes)
                return (try Self.member(db, guid, target)!, true)
            }
        }
    }

    /// Adds many users in one transaction (admins and the owner), each with a scope no higher
    /// than the actor's; each user gets an outcome, and one that cannot be added (unknown,
    /// banned, a scope too high) leaves the others added. A user listed twice is added once.
    public func addMembers(
        _ guid: String, _ requests: [AddMemberRequest], by actor: String
    ) throws -> [AddMemberOutcome] {
        guard requests.count <= AddMembersRequest.maxCount else {
            throw StoreError.validation("at most \(AddMembersRequest.maxCount) members a request")
        }
        return try write { db, changes in
            let now = try lockConversation(db, ConversationPayload.groupID(guid))
            let actorScope = try Self.requireScope(db, guid, actor, for: .add)
            return try requests.map { request in
                let scope = request.scope ?? .participant
                switch try Self.admission(db, guid, request.uid, scope: scope, actorScope: actorScope) {
                case .refused(let error):
                    return AddMemberOutcome(
                        uid: request.uid, status: .failed, error: APIError(code: error.code, message: error.message))
                case .member: return AddMemberOutcome(uid: request.uid, status: .member)
                case .admitted:
                    try admit(db, guid, request.uid, scope: scope, by: actor, at: now, into: &changes)
                    return AddMemberOutcome(uid: request.uid, status: .added)
                }
            }
        }
    }

    /// Whether `target` may be added with `scope` by an actor of `actorScope`; reads only, so a
    /// refusal leaves the transaction as it was (a bulk add goes on with the next user).
    enum Admission {
        case admitted
        case member(GroupMemberPayload)
        case refused(StoreError)
    }

    static func admission(
        _ db: any SQLDatabase, _ guid: String, _ target: String, scope: GroupScope, actorScope: GroupScope
    ) throws -> Admission {
        if scope == .owner { return .refused(.validation("a group has one owner; transfer ownership instead")) }
        if scope > actorScope {
            return .refused(.forbidden("a \(actorScope.rawValue) cannot add a \(scope.rawValue)"))
        }
        if try db.scalar("SELECT 1 FROM users WHERE uid = ?", [target], as: Int.self) == nil {
            return .refused(.notFound("no user \(target)"))
        }
        if let existing = try member(db, guid, target) { return .member(existing) }
        if try isBanned(db, guid, target) {
            return .refused(.conflict("\(target) is banned from group \(guid); unban them first"))
        }
        return .admitted
    }

    /// Makes an admitted user a member, with the "added" action message.
    private func admit(
        _ db: any SQLDatabase, _ guid: String, _ target: String, scope: GroupScope, by actor: String, at now: Int64,
        into changes: inout [PublishedChange]
    ) throws {
        try insertMember(db, guid, target, scope: scope, at: now)
        try memberAction(
            db, MemberActionPayload(guid: guid, action: .added, actor: actor, target: target, newScope: scope),
            at: now, into: &changes)
    }

    /// Removes a member who ranks below the actor (moderators and up).
    public func kick(_ guid: String, _ target: String, by actor: String) throws {
        try write { db, changes in
            let now = try lockConversation(db, ConversationPayload.groupID(guid))
            let actorScope = try Self.requireScope(db, guid, actor, for: .kick)
            guard let member = try Self.member(db, guid, target) else {
                throw StoreError.notFound("\(target) is not a member of group \(guid)")
            }
            try Self.requireOutranks(actorScope, member.scope, actor: actor, target: target)
            try removeMember(db, guid, target)
            try memberAction(
                db,
                MemberActionPayload(guid: guid, action: .kicked, actor: actor, target: target, oldScope: member.scope),
                at: now, into: &changes)
        }
    }

    /// Bans a user (moderators and up; a member must rank below the actor): they leave the
    /// group and cannot join or be added until unbanned. A repeat changes nothing.
    public func ban(_ guid: String, _ target: String, by actor: String) throws -> GroupBanPayload {
        try write { db, changes in
            let now = try lockConversation(db, ConversationPayload.groupID(guid))
            let actorScope = try Self.requireScope(db, guid, actor, for: .ban)
            guard let row = try db.queryFirst("SELECT \(Self.userColumns) FROM users WHERE uid = ?", [target]) else {
                throw StoreError.notFound("no user \(target)")
            }
            if let ban = try Self.bans(db, guid, uid: target, after: "", limit: 1).first { return ban }
            let member = try Self.member(db, guid, target)
            if let member {
                try Self.requireOutranks(actorScope, member.scope, actor: actor, target: target)
                try removeMember(db, guid, target)
            }
            try db.run(
                "INSERT INTO group_bans(guid, uid, banned_by, banned_at) VALUES (?, ?, ?, ?)",
                [guid, target, actor, now])
            try memberAction(
                db,
                MemberActionPayload(guid: guid, action: .banned, actor: actor, target: target, oldScope: member?.scope),
                at: now, into: &changes)
            return GroupBanPayload(guid: guid, user: try Self.user(from: row), bannedBy: actor, bannedAt: now)
        }
    }

    /// Lifts a ban (moderators and up). The user may then join or be added again.
    public func unban(_ guid: String, _ target: String, by actor: String) throws {
        try write { db, changes in
            let now = try lockConversation(db, ConversationPayload.groupID(guid))
            _ = try Self.requireScope(db, guid, actor, for: .unban)
            try db.run("DELETE FROM group_bans WHERE guid = ? AND uid = ?", [guid, target])
            guard db.changes > 0 else { throw StoreError.notFound("\(target) is not banned from group \(guid)") }
            try memberAction(
                db, MemberActionPayload(guid: guid, action: .unbanned, actor: actor, target: target),
                at: now, into: &changes)
        }
    }

    /// Changes a member's scope (admins and the owner): the target must rank below the actor
    /// and the new scope may not exceed the actor's. Ownership moves only by transfer.
    public func changeScope(
        _ guid: String, _ target: String, to scope: GroupScope, by actor: String
    ) throws -> GroupMemberPayload {
        try write { db, changes in
            let now = try lockConversation(db, ConversationPayload.groupID(guid))
            let actorScope = try Self.requireScope(db, guid, actor, for: .changeScope)
            guard scope != .owner else {
                throw StoreError.validation("a group has one owner; use POST /v1/groups/{guid}/owner")
            }
            guard let member = try Self.member(db, guid, target) else {
                throw StoreError.notFound("\(target) is not a member of group \(guid)")
            }
            try Self.requireOutranks(actorScope, member.scope, actor: actor, target: target)
            guard scope <= actorScope else {
                throw StoreError.forbidden("a \(actorScope.rawValue) cannot make someone \(scope.rawValue)")
            }
            guard scope != member.scope else { return member }
            try db.run(
                "UPDATE conversation_members SET scope = ? WHERE conversation_id = ? AND uid = ?",
                [scope.rawValue, ConversationPayload.groupID(guid), target])
            try memberAction(
                db,
                MemberActionPayload(
                    guid: guid, action: .scopeChanged, actor: actor, target: target,
                    oldScope: member.scope, newScope: scope), at: now, into: &changes)
            return try Self.member(db, guid, target)!
        }
    }

    /// Makes a member the owner (owner only); the old owner becomes an admin.
    public func transferOwnership(_ guid: String, to target: String, by actor: String) throws -> GroupPayload {
        try write { db, changes in
            let now = try lockConversation(db, ConversationPayload.groupID(guid))
            _ = try Self.requireScope(db, guid, actor, for: .transferOwnership)
            guard target != actor else { throw StoreError.validation("you already own group \(guid)") }
            guard let member = try Self.member(db, guid, target) else {
                throw StoreError.notFound("\(target) is not a member of group \(guid)")
            }
            let conversationId = ConversationPayload.groupID(guid)
            try db.run(
                "UPDATE conversation_members SET scope = 'owner' WHERE conversation_id = ? AND uid = ?",
                [conversationId, target])
            try db.run(
                "UPDATE conversation_members SET scope = 'admin' WHERE conversation_id = ? AND uid = ?",
                [conversationId, actor])
            try db.run("UPDATE groups SET owner = ?, updated_at = ? WHERE guid = ?", [target, now, guid])
            try memberAction(
                db,
                MemberActionPayload(
                    guid: guid, action: .ownershipTransferred, actor: actor, target: target,
                    oldScope: member.scope, newScope: .owner), at: now, into: &changes)
            try recordGroupUpdate(db, guid, into: &changes)
            return try Self.visibleGroup(db, guid, for: actor)
        }
    }

    /// Members of a group the caller is in, in uid order after `after`.
    public func members(
        of guid: String, for caller: String, filter: MemberFilter, after: String?, limit: Int
    ) throws -> [GroupMemberPayload] {
        var conditions = SQLConditions()
        conditions.add("m.conversation_id = ? AND m.uid > ?", [ConversationPayload.groupID(guid), after ?? ""])
        conditions.keyword(filter.searchKeyword, in: ["u.uid", "u.name"])
        try conditions.oneOf("m.scope", filter.scopes.map(\.rawValue))
        try conditions.presence(filter.online, filter.onlineUids, column: "m.uid")
        let sql = """
            SELECT \(Self.memberUserColumns), m.scope, m.joined_at FROM conversation_members m JOIN users u ON u.uid = m.uid
            WHERE \(conditions.clause) ORDER BY m.uid LIMIT ?
            """
        let finalArguments = conditions.arguments + [limit]
        return try read { db in
            _ = try Self.memberScope(db, guid, caller)
            return try db.query(sql, finalArguments).map { try Self.member(from: $0, guid: guid) }
        }
    }

    /// Banned users of a group (moderators and up), in uid order after `after`.
    public func bans(of guid: String, for caller: String, after: String?, limit: Int) throws -> [GroupBanPayload] {
        try read { db in
            _ = try Self.requireScope(db, guid, caller, for: .listBans)
            return try Self.bans(db, guid, uid: nil, after: after ?? "", limit: limit)
        }
    }

    // MARK: - Helpers

    static func member(from row: Row, guid: String) throws -> GroupMemberPayload {
        GroupMemberPayload(
            guid: guid, user: try user(from: row),
            scope: GroupScope(rawValue: try row.get("scope")) ?? .participant, joinedAt: try row.get("joined_at"))
    }

    static func member(_ db: any SQLDatabase, _ guid: String, _ uid: String) throws -> GroupMemberPayload? {
        try db.queryFirst(
            """
            SELECT \(memberUserColumns), m.scope, m.joined_at FROM conversation_members m JOIN users u ON u.uid = m.uid
            WHERE m.conversation_id = ? AND m.uid = ?
            """, [ConversationPayload.groupID(guid), uid]
        ).map { try member(from: $0, guid: guid) }
    }

    static func bans(
        _ db: any SQLDatabase, _ guid: String, uid: String?, after: String, limit: Int
    ) throws -> [GroupBanPayload] {
        try db.query(
            """
            SELECT \(memberUserColumns), b.banned_by, b.banned_at FROM group_bans b JOIN users u ON u.uid = b.uid
            WHERE b.guid = ?1 AND (CAST(?2 AS TEXT) IS NULL OR b.uid = ?2) AND b.uid > ?3 ORDER BY b.uid LIMIT ?4
            """, [guid, uid, after, limit]
        ).map {
            GroupBanPayload(
                guid: guid, user: try user(from: $0), bannedBy: try $0.get("banned_by"),
                bannedAt: try $0.get("banned_at"))
        }
    }

    static func isBanned(_ db: any SQLDatabase, _ guid: String, _ uid: String) throws -> Bool {
        try db.scalar("SELECT 1 FROM group_bans WHERE guid = ? AND uid = ?", [guid, uid], as: Int.self) != nil
    }

    static func requireNotBanned(_ db: any SQLDatabase, _ guid: String, _ uid: String) throws {
        if try isBanned(db, guid, uid) { throw StoreError(.banned, "you are banned from group \(guid)") }
    }

    static func requireOutranks(
        _ actor: GroupScope, _ target: GroupScope, actor actorUid: String, target targetUid: String
    ) throws {
        guard actorUid != targetUid else {
            throw StoreError.forbidden("you cannot do that to yourself; leave the group instead")
        }
        guard actor > target else {
            throw StoreError.forbidden("a \(actor.rawValue) cannot act on a \(target.rawValue) (\(targetUid))")
        }
    }

    /// `uid` joins group `guid` at `now`. The row keeps no copy of the conversation's time (a
    /// group's is its conversation's: `Store.groupPageMembers`).
    func insertMember(_ db: any SQLDatabase, _ guid: String, _ uid: String, scope: GroupScope, at now: Int64) throws {
        try db.run(
            """
            INSERT INTO conversation_members(conversation_id, uid, scope, joined_at, updated_at)
            VALUES (?, ?, ?, ?, 0)
            """, [ConversationPayload.groupID(guid), uid, scope.rawValue, now])
    }

    func removeMember(_ db: any SQLDatabase, _ guid: String, _ uid: String) throws {
        try db.run(
            "DELETE FROM conversation_members WHERE conversation_id = ? AND uid = ?",
            [ConversationPayload.groupID(guid), uid])
    }

    /// Adds the action message for `action` to the group's conversation and records it for
    /// the members, and for a target who was a member until now (so their client learns why
    /// the group went away; an outsider banned or unbanned learns nothing of the group). The
    /// actor has read up to it (as after any send), and so has a target who just came in:
    /// their unread count starts after it. No other member's row changes.
    @discardableResult
    func memberAction(
        _ db: any SQLDatabase, _ action: MemberActionPayload, at now: Int64,
        into changes: inout [PublishedChange]
    ) throws -> MessagePayload {
        let conversationId = ConversationPayload.groupID(action.guid)
        let id: Int64 =
            try db.scalar(
                """
                INSERT INTO messages(conversation_id, sender, receiver, receiver_type, category, type, text, sent_at, updated_at, action)
                VALUES (?, ?, ?, 'group', 'action', 'groupMember', ?, ?, ?, ?) RETURNING id
                """, [conversationId, action.actor, action.guid, action.sentence, now, now, try Self.json(action)]) ?? 0
        try db.run(
            "UPDATE conversations SET last_message_id = ?, updated_at = ? WHERE id = ?", [id, now, conversationId])
        let readers =
            action.action == .joined || action.action == .added ? [action.actor, action.target] : [action.actor]
        try db.run(
            """
            UPDATE conversation_members SET read_id = greatest(read_id, ?1), delivered_id = greatest(delivered_id, ?1)
            WHERE conversation_id = ?2 AND uid IN (?3, ?4)
            """, [id, conversationId, readers[0], readers.last!])
        guard let message = try Self.loadMessage(db, id: id) else { throw StoreError.broken("message vanished") }
        try record(
            db, .groupMember, conversationId: conversationId, message: message,
            groupLog: true, span: action.span, into: &changes)
        return message
    }
}

extension MemberActionPayload {
    /// What the action does to the target's span of membership (`SpanChange`).
    var span: SpanChange? {
        switch action {
        case .joined, .added: .opens(target)
        case .left, .kicked, .banned: oldScope == nil ? nil : .closes(target)
        case .unbanned, .scopeChanged, .ownershipTransferred: nil
        }
    }

    /// The action message's text, e.g. "alice kicked bob".
    var sentence: String {
        switch action {
        case .joined: "\(actor) joined"
        case .left: "\(actor) left"
        case .added: "\(actor) added \(target)"
        case .kicked: "\(actor) kicked \(target)"
        case .banned: "\(actor) banned \(target)"
        case .unbanned: "\(actor) unbanned \(target)"
        case .scopeChanged: "\(actor) made \(target) \(newScope?.rawValue ?? "")"
        case .ownershipTransferred: "\(actor) made \(target) the owner"
        }
    }
}
