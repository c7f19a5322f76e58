extension Store {
    /// Presence across nodes: each node keeps a row per user with sockets on it and beats its
    /// heart in `nodes`; a node whose heart stopped (killed, cut off) no longer counts, so its
    /// users go offline after `timeout` milliseconds without anyone cleaning up.
    ///
    /// Writes this node's socket counts (0 removes the row), beats its heart, and answers who is
    /// online on the other live nodes.
    public func syncPresence(node: String, counts: [String: Int], timeout: Int64) throws -> Set<String> {
        let now = clock.now()
        return try write { db, _ in
            try db.run(
                "INSERT INTO nodes(node, seen_at) VALUES (?, ?) ON CONFLICT(node) DO UPDATE SET seen_at = excluded.seen_at",
                [node, now])
            for (uid, sockets) in counts.sorted(by: { $0.key < $1.key }) {
                if sockets > 0 {
                    try db.run(
                        """
                        INSERT INTO presence(node, uid, sockets) VALUES (?, ?, ?)
                        ON CONFLICT(node, uid) DO UPDATE SET sockets = excluded.sockets
                        """, [node, uid, sockets])
                } else {
                    try db.run("DELETE FROM presence WHERE node = ? AND uid = ?", [node, uid])
                }
            }
            return Set(
                try db.query(
                    """
                    SELECT DISTINCT p.uid FROM presence p JOIN nodes n ON n.node = p.node
                    WHERE p.node <> ? AND n.seen_at >= ?
                    """, [node, now - timeout]
                ).map { try $0.get(0, as: String.self) })
        }
    }

    /// A node starting forgets what it counted before it stopped.
    public func resetPresence(node: String) throws {
        try write { db, _ in try db.run("DELETE FROM presence WHERE node = ?", [node]) }
    }
}
