import OfflineChatProtocol
import OfflineChatSQLite

extension Store {
    static let userColumns = "uid, name, avatar, metadata, tags, role, last_active_at"

    /// A row with `userColumns` from position `at` on, read by position (each list reads one
    /// per peer).
    static func user(from row: Row, at start: Int = 0) throws -> UserPayload {
        let tags: String? = try row.get(start + 4)
        return UserPayload(
            uid: try row.get(start), name: try row.get(start + 1), avatar: try row.get(start + 2),
            metadata: try decodeJSON([String: JSONValue].self, try row.get(start + 3)),
            tags: tags == "[]" ? [] : try decodeJSON([String].self, tags) ?? [],
            role: try row.get(start + 5), lastActiveAt: try row.get(start + 6))
    }

    /// Creates a user; 409 when the uid is taken.
    public func createUser(_ request: CreateUserRequest) throws -> UserPayload {
        let now = clock.now()
        return try write { db, _ in
            if try db.scalar("SELECT 1 FROM users WHERE uid = ?", [request.uid], as: Int.self) != nil {
                throw StoreError.conflict("user \(request.uid) already exists")
            }
            try db.run(
                "INSERT INTO users(uid, name, avatar, metadata, tags, role, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    request.uid, request.name ?? request.uid, request.avatar, try Self.json(request.metadata),
                    try Self.json(request.tags ?? []), request.role, now
                ])
            return UserPayload(
                uid: request.uid, name: request.name ?? request.uid, avatar: request.avatar,
                metadata: request.metadata, tags: request.tags ?? [], role: request.role)
        }
    }

    /// A user as `caller` sees them (block flags relative to the caller).
    public func user(_ uid: String, for caller: String) throws -> UserPayload? {
        try read { db in
            try db.queryFirst("SELECT \(Self.userColumns) FROM users WHERE uid = ?", [uid])
                .map { try Self.flagged(try Self.user(from: $0), for: caller, db) }
        }
    }

    /// Users in uid order after `after` that pass `filter`, as `caller` sees them.
    public func users(
        after: String?, limit: Int, for caller: String, filter: UserFilter = UserFilter()
    ) throws -> [UserPayload] {
        var conditions = SQLConditions()
        conditions.add("uid > ?", [after ?? ""])
        conditions.keyword(filter.searchKeyword, in: ["uid", "name"])
        try conditions.anyTag(filter.tags, in: "users.tags")
        try conditions.oneOf("role", filter.roles)
        try conditions.presence(filter.online, filter.onlineUids, column: "uid")
        let sql = "SELECT \(Self.userColumns) FROM users WHERE \(conditions.clause) ORDER BY uid LIMIT ?"
        let finalArguments = conditions.arguments + [limit]
        return try read { db in
            try Self.flagged(try db.query(sql, finalArguments).map { try Self.user(from: $0) }, for: caller, db)
        }
    }

}

/// The `UsersRequest` builder's filters on `GET /v1/users`.
public struct UserFilter: Sendable {
    /// Case-insensitive substring of the uid or the name.
    public var searchKeyword: String?
    /// Users with any of these tags / roles (empty: no filter).
    public var tags: [String] = []
    public var roles: [String] = []
    /// true: only online users, false: only offline ones, nil: both.
    public var online: Bool?
    /// The uids online now, when `online` is set.
    public var onlineUids: Set<String>?
    public init() {}
}
