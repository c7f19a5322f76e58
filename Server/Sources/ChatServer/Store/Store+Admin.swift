import OfflineChatProtocol
import OfflineChatSQLite

/// What the operator reads and does beyond any one user's view (`/v1/admin`): every user with
/// their suspension and live tokens, every group (private ones too), and whom to act as in a
/// group or a conversation.
extension Store {
    /// Users in uid order after `after` whose uid or name contains `keyword`, as the operator
    /// sees them (`status` is the route's to fill).
    public func adminUsers(keyword: String?, after: String?, limit: Int) throws -> [AdminUserPayload] {
        var conditions = SQLConditions()
        conditions.add("uid > ?", [after ?? ""])
        conditions.keyword(keyword, in: ["uid", "name"])
        let sql = "\(Self.adminUserQuery) WHERE \(conditions.clause) ORDER BY uid LIMIT ?"
        let arguments = [clock.now() / 1000 as any SQLValueConvertible] + conditions.arguments + [limit]
        return try read { db in try db.query(sql, arguments).map(Self.adminUser(from:)) }
    }

    /// One user as the operator sees them; 404 for an unknown uid.
    public func adminUser(_ uid: String) throws -> AdminUserPayload {
        try read { db in
            guard let row = try db.queryFirst("\(Self.adminUserQuery) WHERE uid = ?", [clock.now() / 1000, uid]) else {
                throw StoreError.notFound("no user \(uid)")
            }
            return try Self.adminUser(from: row)
        }
    }

    /// `userColumns`, then when the user was created and suspended and how many of their
    /// tokens still open a session; bind the time now (epoch seconds, as tokens expire) first.
    private static let adminUserQuery = """
        SELECT \(userColumns), created_at, suspended_at,
               (SELECT count(*) FROM tokens t WHERE t.uid = users.uid AND t.revoked_at IS NULL AND t.expires_at > ?)
        FROM users
        """

    private static func adminUser(from row: Row) throws -> AdminUserPayload {
        AdminUserPayload(
            user: try user(from: row), createdAt: try row.get(7), suspendedAt: try row.get(8),
            activeTokens: try row.get(9))
    }

    /// Revokes every token of `uid`'s (404 for an unknown uid) and answers their hashes (the
    /// sockets opened with them close). New tokens may be issued after it, unlike `suspend`.
    public func revokeTokens(of uid: String) throws -> [String] {
        let now = clock.now()
        let hashes = try write { db, _ in
            guard try db.scalar("SELECT 1 FROM users WHERE uid = ?", [uid], as: Int.self) != nil else {
                throw StoreError.notFound("no user \(uid)")
            }
            return try Self.revokeTokens(db, of: uid, at: now)
        }
        for hash in hashes { sessions.forget(hash) }
        return hashes
    }

    /// Revokes `uid`'s live tokens (neither revoked nor expired: what `activeTokens` counts) in
    /// this transaction and answers their hashes. `now` is epoch milliseconds.
    static func revokeTokens(_ db: any SQLDatabase, of uid: String, at now: Int64) throws -> [String] {
        let live = "uid = ? AND revoked_at IS NULL AND expires_at > ?"
        let hashes = try db.query("SELECT token FROM tokens WHERE \(live)", [uid, now / 1000]).map {
            try $0.get(0, as: String.self)
        }
        try db.run("UPDATE tokens SET revoked_at = ? WHERE \(live)", [now, uid, now / 1000])
        return hashes
    }

    /// Live groups in guid order after `after` whose guid or name contains `keyword`, private
    /// ones too, with no caller's membership.
    public func adminGroups(keyword: String?, after: String?, limit: Int) throws -> [GroupPayload] {
        var conditions = SQLConditions()
        conditions.add("g.guid > ? AND g.deleted_at IS NULL", [after ?? ""])
        conditions.keyword(keyword, in: ["g.guid", "g.name"])
        let sql = "\(Self.groupQuery) WHERE \(conditions.clause) ORDER BY g.guid LIMIT ?"
        let arguments = ["" as any SQLValueConvertible] + conditions.arguments + [limit]
        return try read { db in try db.query(sql, arguments).map(Self.group(from:)) }
    }

    /// One live group (private ones too) with no caller's membership; 404 when there is none.
    public func adminGroup(_ guid: String) throws -> GroupPayload {
        try read { db in
            guard
                let row = try db.queryFirst("\(Self.groupQuery) WHERE g.guid = ? AND g.deleted_at IS NULL", ["", guid])
            else {
                throw StoreError.notFound("no group \(guid)")
            }
            return try Self.group(from: row)
        }
    }

    /// Whom the operator reads a conversation as: a group's owner (who sees all of it), or a
    /// member of a direct conversation. 404 when the conversation has no one.
    public func reader(of conversationId: String) throws -> String {
        let groupPrefix = ConversationPayload.groupID("")
        if Self.isGroup(conversationId) {
            guard conversationId.hasPrefix(groupPrefix) else {
                throw StoreError.notFound("no conversation \(conversationId)")
            }
            return try groupOwner(String(conversationId.dropFirst(groupPrefix.count)))
        }
        let members = try read { db in try Self.members(db, of: conversationId) }
        guard let reader = members.sorted().first else {
            throw StoreError.notFound("no conversation \(conversationId)")
        }
        return reader
    }

    /// Whom the operator deletes message `id` as, for everyone: in a group its owner (who
    /// may delete anyone's message, and stays a member when the sender has left), else its
    /// sender. 404 when there is no such message.
    public func deleter(ofMessage id: Int64) throws -> String {
        let row = try read { db in
            try db.queryFirst("SELECT conversation_id, sender FROM messages WHERE id = ?", [id])
        }
        guard let row else { throw StoreError.notFound("no message \(id)") }
        let conversationId: String = try row.get(0)
        return Self.isGroup(conversationId) ? try reader(of: conversationId) : try row.get(1)
    }
}
