import OfflineChatSQLite

/// Wrong passwords at a password group, per user and group, kept in the database so every node
/// counts the same guesses: after three in a row each further attempt waits twice as long as
/// the last (1 s, 2 s, 4 s, … up to 15 minutes), and a right one clears them. An attempt is
/// taken before its password is checked, under the row's lock: guesses sent at once, through
/// any nodes, each take one in turn (the second review had 22 of 30 concurrent guesses checked
/// over two nodes, with the count kept per node and read before the check).
extension Store {
    static let freeJoinAttempts = 3
    static let maxJoinDelay: Int64 = 15 * 60_000

    /// Takes one attempt at `guid`'s password for `uid`, counted as wrong until
    /// `clearJoinAttempts`; throws 429 (checking no password) while `uid` must wait.
    func takeJoinAttempt(_ uid: String, _ guid: String) throws {
        let key = "\(guid)/\(uid)"
        let now = clock.now()
        try write { db, _ in
            try db.run(
                "INSERT INTO join_attempts(attempt_key, failures, not_before) VALUES (?, 0, 0) ON CONFLICT DO NOTHING",
                [key])
            try db.lockRows("join_attempts", where: "attempt_key", is: key)
            guard
                let row = try db.queryFirst(
                    "SELECT failures, not_before FROM join_attempts WHERE attempt_key = ?", [key])
            else { return }
            let (failures, notBefore): (Int64, Int64) = (try row.get(0), try row.get(1))
            if notBefore > now {
                throw HTTPError.rateLimited(
                    retryAfterMilliseconds: notBefore - now, "too many wrong passwords for group \(guid)")
            }
            let doublings = failures + 1 - Int64(Self.freeJoinAttempts)
            let next = doublings >= 0 ? now + min(Self.maxJoinDelay, 1000 << min(doublings, 20)) : 0
            try db.run(
                "UPDATE join_attempts SET failures = ?, not_before = ? WHERE attempt_key = ?", [failures + 1, next, key]
            )
        }
    }

    /// The password was right: `uid`'s attempts at `guid` start over.
    func clearJoinAttempts(_ uid: String, _ guid: String) throws {
        try write { db, _ in try db.run("DELETE FROM join_attempts WHERE attempt_key = ?", ["\(guid)/\(uid)"]) }
    }
}
