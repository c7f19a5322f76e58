import OfflineChatProtocol
import OfflineChatSQLite

extension Store {
    /// 30 days.
    static let defaultTokenLifetime: Int64 = 30 * 24 * 3600

    /// Issues a random 256-bit bearer token for `uid`; 404 when the user does not exist.
    public func issueToken(for uid: String, ttlSeconds: Int64?) throws -> TokenResponse {
        let now = clock.now()
        let expiresAt = now / 1000 + (ttlSeconds ?? Self.defaultTokenLifetime)
        let token = Self.randomHex(bytes: 32)
        return try write { db, _ in
            guard let suspended = try db.queryFirst("SELECT suspended_at FROM users WHERE uid = ?", [uid]) else {
                throw StoreError.notFound("no user \(uid)")
            }
            if try suspended.get(0, as: Int64?.self) != nil {
                throw StoreError(.forbidden, "\(uid) is suspended: lift the suspension before issuing a token")
            }
            // Only the hash is stored: the database alone opens no session.
            let hash = Self.tokenHash(token)
            try db.run(
                "INSERT INTO tokens(token, uid, created_at, expires_at) VALUES (?, ?, ?, ?)",
                [hash, uid, now, expiresAt])
            var response = TokenResponse(uid: uid, authToken: token, expiresAt: expiresAt)
            response.tokenHash = hash
            return response
        }
    }

    /// The uid a bearer token stands for, or a 401 saying why not.
    public func authenticate(token: String?) throws -> String {
        try session(token: token).uid
    }

    /// The uid and expiry (epoch seconds) of a valid bearer token, or a 401 saying why not.
    /// A token the database vouched for lately is taken from `sessions` (no round trip).
    /// Also records the user's activity, writing at most once a minute per user.
    func session(token: String?) throws -> (uid: String, expiresAt: Int64) {
        guard let token else { throw StoreError(.unauthorized, "send Authorization: Bearer <authToken>") }
        let now = clock.now()
        let nowSeconds = now / 1000
        var session: SessionCache.Entry
        // Read once, before anything else: whatever this request reads after it, a revocation
        // that came meanwhile keeps it out of the cache.
        let generation = sessions.currentGeneration
        if let known = sessions.entry(token, at: now) {
            session = known
        } else {
            let hash = Self.tokenHash(token)
            let row = try readStatement { db in
                try db.queryFirst(
                    """
                    SELECT t.uid, t.expires_at, t.revoked_at, u.last_active_at
                    FROM tokens t JOIN users u ON u.uid = t.uid WHERE t.token = ?
                    """, [hash])
            }
            guard let row else { throw StoreError(.unauthorized, "unknown auth token") }
            if try row.get("revoked_at", as: Int64?.self) != nil {
                throw StoreError(.tokenRevoked, "the auth token was revoked; log in again")
            }
            session = SessionCache.Entry(
                uid: try row.get("uid"), expiresAt: try row.get("expires_at"),
                lastActiveAt: try row.get("last_active_at", as: Int64?.self) ?? 0, checkedAt: now, hash: hash)
            sessions.remember(token, session, readAfter: generation)
        }
        if session.expiresAt <= nowSeconds {
            throw StoreError(.tokenExpired, "the auth token expired; log in again")
        }
        if session.lastActiveAt < nowSeconds - 60 {
            try write { db, _ in
                try db.run("UPDATE users SET last_active_at = ? WHERE uid = ?", [nowSeconds, session.uid])
            }
            session.lastActiveAt = nowSeconds
            sessions.remember(token, session, readAfter: generation)
        }
        return (session.uid, session.expiresAt)
    }

    /// Whether an `Authorization` header's token is one the database vouched for lately
    /// (`sessions`; no database read): for choosing whose connection to cut first.
    func isKnownSession(authorization: String?) -> Bool {
        guard let token = authorization.flatMap(HTTPRequest.bearerToken) else { return false }
        return sessions.entry(token, at: clock.now()) != nil
    }

    /// Revokes the token with this hash (`tokenHash`); false when there is no such token.
    public func revoke(tokenHash hash: String) throws -> Bool {
        let now = clock.now()
        defer { sessions.forget(hash) }  // also when the write failed: the next use asks the database
        return try write { db, _ in
            try db.run("UPDATE tokens SET revoked_at = ? WHERE token = ? AND revoked_at IS NULL", [now, hash])
            return try db.scalar("SELECT 1 FROM tokens WHERE token = ?", [hash], as: Int.self) != nil
        }
    }

    /// Suspends `uid`: every token of theirs is revoked and no new one is issued until the
    /// suspension is lifted. Answers the hashes it revoked (their sockets close) and when the
    /// suspension began (the first one's time, when suspended already).
    public func suspend(_ uid: String) throws -> (since: Int64, revoked: [String]) {
        let now = clock.now()
        let result = try write { db, _ -> (Int64, [String]) in
            guard let row = try db.queryFirst("SELECT suspended_at FROM users WHERE uid = ?", [uid]) else {
                throw StoreError.notFound("no user \(uid)")
            }
            let since = try row.get(0, as: Int64?.self) ?? now
            try db.run("UPDATE users SET suspended_at = ? WHERE uid = ?", [since, uid])
            return (since, try Self.revokeTokens(db, of: uid, at: now))
        }
        for hash in result.1 { sessions.forget(hash) }
        return result
    }

    /// Lifts `uid`'s suspension: tokens can be issued again (the revoked ones stay revoked).
    public func unsuspend(_ uid: String) throws {
        try write { db, _ in
            guard try db.scalar("SELECT 1 FROM users WHERE uid = ?", [uid], as: Int.self) != nil else {
                throw StoreError.notFound("no user \(uid)")
            }
            try db.run("UPDATE users SET suspended_at = NULL WHERE uid = ?", [uid])
        }
    }

    /// Which of these token hashes no longer open a session (revoked, expired or gone): the
    /// realtime sockets opened with them close. Read from the database, whatever any cache or
    /// bus frame says.
    func lapsedTokens(among hashes: Set<String>) throws -> Set<String> {
        guard !hashes.isEmpty else { return [] }
        let now = clock.now() / 1000
        let valid = try read { db in
            try db.query(
                """
                SELECT token FROM tokens WHERE token IN (SELECT value FROM json_each(?))
                AND revoked_at IS NULL AND expires_at > ?
                """, [try Self.json(Array(hashes)) ?? "[]", now]
            ).map { try $0.get(0, as: String.self) }
        }
        return hashes.subtracting(valid)
    }

    /// What the database keeps of a bearer token: its SHA-256, in hex.
    public static func tokenHash(_ token: String) -> String {
        MediaStore.sha256Hex(Array(token.utf8))
    }

    /// `bytes` random bytes from the system's generator, in lowercase hex.
    static func randomHex(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<bytes).map { _ in
            let byte = String(UInt8.random(in: 0...255, using: &generator), radix: 16)
            return byte.count == 1 ? "0" + byte : byte
        }.joined()
    }
}
