import Foundation
import OfflineChatProtocol

/// The admin audit trail: one row per admin action that changed something, written after the
/// action succeeded (by the admin routes and `chatd`'s admin commands), read newest first.
extension Store {
    /// Records that the admin did `action` to `target` now.
    func audit(_ action: String, target: String) throws {
        let now = clock.now()
        try write { db, _ in
            try db.run("INSERT INTO admin_audit(at, action, target) VALUES (?, ?, ?)", [now, action, target])
        }
    }

    /// At most `limit` entries before id `before` (the newest when nil), newest first.
    func auditTrail(before: Int64?, limit: Int) throws -> [AuditEntry] {
        try read { db in
            try db.query(
                "SELECT id, at, action, target FROM admin_audit WHERE id < ? ORDER BY id DESC LIMIT ?",
                [before ?? Int64.max, limit]
            ).map {
                AuditEntry(id: try $0.get(0), at: try $0.get(1), action: try $0.get(2), target: try $0.get(3))
            }
        }
    }
}
