import SQLiteKit

extension ChatCache {
    /// The stored answer for page `page` of a list request with these settings (`key`).
    public func snapshot(_ key: String, page: Int) throws -> String? {
        try read { db in try db.scalar("SELECT payload FROM snapshots WHERE key = ? AND page = ?", [key, page]) }
    }

    /// Records what the server answered for page `page`. Page 0 starts the list over: the
    /// later pages of the previous answer are dropped.
    public func storeSnapshot(_ key: String, page: Int, payload: String) throws {
        try write { db in
            if page == 0 { try db.run("DELETE FROM snapshots WHERE key = ?", [key]) }
            try db.run("INSERT OR REPLACE INTO snapshots(key, page, payload) VALUES (?, ?, ?)", [key, page, payload])
        }
    }
}
