import OfflineChatProtocol
import OfflineChatSQLite

/// Which side of a block the caller is on, for `GET /v1/blocks?direction=`.
public enum BlockDirection: String, Sendable, CaseIterable {
    case blockedByMe
    case hasBlockedMe
    case both
}

extension Store {
    /// True when either user has blocked the other.
    static func blocked(_ db: any SQLDatabase, _ a: String, _ b: String) throws -> Bool {
        (try db.scalar("SELECT \(blocksBetween("?1", "?2"))", [a, b], as: Int.self) ?? 0) > 0
    }

    /// An SQL expression: the blocks either way between the users that the parameters `a` and
    /// `b` (such as `?1`) stand for, 0 when there is none. Two lookups by the key added, not
    /// one with an OR: SQLite reads an OR of the two keys through a temporary table it builds
    /// and drops for each run, a send's check among them.
    static func blocksBetween(_ a: String, _ b: String) -> String {
        """
        ((SELECT count(*) FROM blocks WHERE blocker = \(a) AND blocked = \(b))
         + (SELECT count(*) FROM blocks WHERE blocker = \(b) AND blocked = \(a)))
        """
    }

    /// The users who have blocked `uid` (to whom they count as offline).
    public func blockers(of uid: String) throws -> Set<String> {
        try read { db in
            Set(
                try db.query("SELECT blocker FROM blocks WHERE blocked = ?", [uid]).map {
                    try $0.get("blocker") as String
                })
        }
    }

    /// `user` with the caller-relative block flags filled in.
    static func flagged(_ user: UserPayload, for caller: String, _ db: any SQLDatabase) throws -> UserPayload {
        try flagged([user], for: caller, db)[0]
    }

    /// `flagged` for many users in one query.
    static func flagged(_ users: [UserPayload], for caller: String, _ db: any SQLDatabase) throws -> [UserPayload] {
        guard !users.isEmpty else { return [] }
        let rows = try db.query(
            """
            SELECT blocker, blocked FROM blocks
            WHERE (blocker = ?1 AND blocked IN (SELECT value FROM json_each(?2)))
               OR (blocked = ?1 AND blocker IN (SELECT value FROM json_each(?2)))
            """, [caller, try json(users.map(\.uid)) ?? "[]"])
        var (blockedByMe, blockedMe) = (Set<String>(), Set<String>())
        for row in rows {
            let (blocker, blocked): (String, String) = (try row.get(0), try row.get(1))
            if blocker == caller { blockedByMe.insert(blocked) } else { blockedMe.insert(blocker) }
        }
        return users.map { user in
            var user = user
            if blockedByMe.contains(user.uid) { user.blockedByMe = true }
            if blockedMe.contains(user.uid) { user.hasBlockedMe = true }
            return user
        }
    }

    /// Every block as "blocker\nblocked" (the realtime loop loads them once at start).
    func allBlocks() throws -> [String] {
        try read { db in
            try db.query("SELECT blocker, blocked FROM blocks").map {
                "\(try $0.get(0) as String)\n\(try $0.get(1) as String)"
            }
        }
    }

    /// `blocker` blocks `uid` (or unblocks with `blocking == false`). Idempotent: a repeat
    /// records no change. Answers the user with its flags.
    public func setBlock(_ uid: String, by blocker: String, blocking: Bool) throws -> UserPayload {
        try write { db, changes in
            let now = stamp()
            guard let row = try db.queryFirst("SELECT \(Self.userColumns) FROM users WHERE uid = ?", [uid]) else {
                throw StoreError.notFound("no user \(uid)")
            }
            guard uid != blocker else { throw StoreError.validation("you cannot block yourself") }
            if blocking {
                try db.run(
                    "INSERT INTO blocks(blocker, blocked, at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                    [blocker, uid, now])
            } else {
                try db.run("DELETE FROM blocks WHERE blocker = ? AND blocked = ?", [blocker, uid])
            }
            if db.changes > 0 {
                try record(
                    db, blocking ? .userBlocked : .userUnblocked,
                    conversationId: ConversationPayload.directID(blocker, uid),
                    block: BlockPayload(blocker: blocker, blocked: uid), audience: [blocker, uid], into: &changes)
            }
            return try Self.flagged(try Self.user(from: row), for: blocker, db)
        }
    }

    /// The caller's blocks in one direction, in uid order after `after`.
    public func blocks(of caller: String, direction: BlockDirection, after: String?, limit: Int) throws -> [UserPayload]
    {
        let filter =
            switch direction {
            case .blockedByMe: "uid IN (SELECT blocked FROM blocks WHERE blocker = ?1)"
            case .hasBlockedMe: "uid IN (SELECT blocker FROM blocks WHERE blocked = ?1)"
            case .both:
                "(uid IN (SELECT blocked FROM blocks WHERE blocker = ?1) OR uid IN (SELECT blocker FROM blocks WHERE blocked = ?1))"
            }
        return try read { db in
            let rows = try db.query(
                "SELECT \(Self.userColumns) FROM users WHERE \(filter) AND uid > ?2 ORDER BY uid LIMIT ?3",
                [caller, after ?? "", limit])
            return try Self.flagged(try rows.map { try Self.user(from: $0) }, for: caller, db)
        }
    }
}
