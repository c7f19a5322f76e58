import OfflineChatProtocol
import OfflineChatSQLite

extension ChatCache {
    /// The stored answer for page `page` of a list request with these settings (`key`).
    public func snapshot(_ key: String, page: Int) throws -> String? {
        try read { db in try db.scalar("SELECT payload FROM snapshots WHERE key = ? AND page = ?", [key, page]) }
    }

    /// Records what the server answered for page `page` (replacing that page only).
    public func storeSnapshot(_ key: String, page: Int, payload: String) throws {
        try write { db, _ in
            try db.run("INSERT OR REPLACE INTO snapshots(key, page, payload) VALUES (?, ?, ?)", [key, page, payload])
        }
    }
}

extension ChatCache {
    public static func encodeSnapshot(_ value: some Encodable) throws -> String { try json(value) }
    public static func decodeSnapshot<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        try decode(type, text)
    }
}

extension ChatCache {
    static let blockedListKey = "blocked:self"

    /// The SDK's own list of users the logged-in user blocked (nil before the first refresh).
    public func blockedList() throws -> [UserPayload]? {
        try snapshot(Self.blockedListKey, page: 0).map { try Self.decode([UserPayload].self, $0) }
    }

    public func storeBlockedList(_ users: [UserPayload]) throws {
        try storeSnapshot(Self.blockedListKey, page: 0, payload: try Self.json(users.sorted { $0.uid < $1.uid }))
    }

    /// Adds or removes one user after a block or unblock.
    public func updateBlockedList(_ user: UserPayload, blocked: Bool) throws {
        var users = try blockedList() ?? []
        users.removeAll { $0.uid == user.uid }
        if blocked { users.append(user) }
        try storeBlockedList(users)
    }
}
