import OfflineChatProtocol
import OfflineChatSQLite

/// Where a `c3` reader stands: their position in their own log, and in each group's log they
/// read (by conversation id). docs/GROUPS.md, "A page".
struct LogPositions: Equatable, Sendable {
    var user: Int64
    var groups: [String: Int64]
}

/// One stretch of a user's membership of a group: they see its changes after `from` up to
/// `to` (nil while a member).
struct MembershipSpan: Sendable {
    let from: Int64
    let to: Int64?

    /// The part of (`after`, `upTo`] inside this span, nil when none is.
    func clamp(after: Int64, upTo: Int64?) -> (after: Int64, upTo: Int64?)? {
        let low = max(after, from)
        let high = [upTo, to].compactMap { $0 }.min()
        if let high, high <= low { return nil }
        return (low, high)
    }
}

/// One page of a user's changes read from their own log and their groups' logs
/// (docs/GROUPS.md, "A page"):
///
/// 1. The user's log in order. Its rows are the user's own changes (emitted), the copies of
///    group changes still written beside the group logs (skipped: the group log has them), and
///    among those the user's own membership changes, which open a group in the reader's map
///    (a join, at the span's start) or close it (a removal: the group's changes up to it are
///    emitted first, so the user position never passes a change the reader has not had).
/// 2. Once the user's log is read to its end, the groups of the map whose head is past the
///    reader's position give their changes, group by group in id order.
///
/// Every group read is clamped to the user's spans of membership, so a cursor names what it
/// likes: it never shows a change outside a membership (a forged cursor reads only what its
/// owner could read anyway).
struct LogPage {
    let db: any SQLDatabase
    let uid: String
    let limit: Int
    let spans: [String: [MembershipSpan]]
    /// The time a `conversation.reset` change carries (epoch milliseconds).
    let resetTime: Int64
    /// The reader knows `conversation.reset` (a client that declared `groupLogs`); another one
    /// gets `cursor_expired` (its SDK decodes change kinds strictly).
    let resets: Bool
    private(set) var positions: LogPositions
    private(set) var page: RawChangelogPage

    init(
        _ db: any SQLDatabase, uid: String, from positions: LogPositions, limit: Int, resets: Bool,
        into page: RawChangelogPage
    ) throws {
        (self.db, self.uid, self.positions, self.limit, self.page) = (db, uid, positions, limit, page)
        (resetTime, self.resets) = (page.serverTime * 1000, resets)
        var spans: [String: [MembershipSpan]] = [:]
        for row in try db.query(
            "SELECT conversation_id, from_pts, to_pts FROM group_spans WHERE uid = ? ORDER BY conversation_id, from_pts",
            [uid])
        {
            spans[try row.get(0), default: []].append(MembershipSpan(from: try row.get(1), to: try row.get(2)))
        }
        self.spans = spans
    }

    /// The user's log rows after a position, each with its group position when it is a group's.
    static let userLogQuery = """
        SELECT i.pts, \(StoredChange.payload), g.conversation_id, g.pts
        FROM inbox i JOIN changes c ON c.id = i.change \(StoredChange.messageJoin)
        LEFT JOIN group_log g ON g.change = i.change
        WHERE i.uid = ?1 AND i.pts > ?2 ORDER BY i.pts LIMIT ?3
        """

    /// A group's changes in (`?2`, `?3`], at most `?4`.
    static let groupLogQuery = """
        SELECT g.pts, \(StoredChange.payload) FROM group_log g JOIN changes c ON c.id = g.change
        \(StoredChange.messageJoin)
        WHERE g.conversation_id = ?1 AND g.pts > ?2 AND g.pts <= ?3 ORDER BY g.pts LIMIT ?4
        """

    var isFull: Bool { page.count >= limit }

    /// Reads the page; false when it ended before everything after the cursor was read.
    mutating func read(userHead: Int64) throws {
        guard positions.user <= userHead else {
            throw StoreError(.invalidCursor, "the cursor is ahead of the changelog")
        }
        var first = true
        while positions.user < userHead {
            let rows = try db.query(Self.userLogQuery, [uid, positions.user, max(limit, 64)])
            // Positions have no gaps: a missing next one was pruned.
            if first, try rows.first?.get(0, as: Int64.self) != positions.user + 1 { throw Cursor.expired }
            first = false
            for row in rows {
                guard try take(row) else {
                    page.hasMore = true
                    return
                }
            }
            if rows.isEmpty { break }
        }
        try readGroups()
    }

    /// One row of the user's log; false when the page has no room for what it needs.
    private mutating func take(_ row: Row) throws -> Bool {
        let pts: Int64 = try row.get(0)
        guard let group = try row.get(2, as: String?.self) else {
            guard !isFull else { return false }
            guard let body = try row.get(1, as: String?.self) else {
                throw StoreError.broken("change at \(pts) has no payload")
            }
            page.append(body, position: pts)
            positions.user = pts
            return true
        }
        let groupPts: Int64 = try row.get(3)
        let spans = spans[group] ?? []
        if spans.contains(where: { $0.to == groupPts }) {
            let start = positions.groups[group] ?? spans.first { $0.to == groupPts }!.from
            guard try emit(group, after: start, upTo: groupPts) else { return false }
            positions.groups[group] = nil
        } else if spans.contains(where: { $0.from == groupPts - 1 }), positions.groups[group] == nil {
            positions.groups[group] = groupPts - 1
        }
        positions.user = pts
        return true
    }

    /// Every group of the map past its position, in id order, as far as the page goes. A group
    /// whose memberships have all ended, and which the reader has read to the last end, leaves
    /// the map (a group deleted under its members leaves no bound in their logs), and so does
    /// one the reader was never in (a cursor chatd did not issue).
    private mutating func readGroups() throws {
        defer {
            for (group, position) in positions.groups {
                let spans = spans[group] ?? []
                if spans.allSatisfy({ $0.to.map { position >= $0 } ?? false }) {
                    positions.groups[group] = nil
                }
            }
        }
        let names = positions.groups.keys.sorted()
        guard !names.isEmpty else { return }
        let heads = try Store.groupHeads(db, names)
        for group in names {
            guard let head = heads[group], let position = positions.groups[group], head > position else { continue }
            guard !isFull else {
                page.hasMore = true
                return
            }
            guard try emit(group, after: position, upTo: head) else {
                page.hasMore = true
                return
            }
        }
    }

    /// Emits `group`'s changes in (`after`, `upTo`] inside the user's spans; the group's
    /// position moves with them, to `upTo` once all are in. False when the page filled first.
    private mutating func emit(_ group: String, after: Int64, upTo: Int64) throws -> Bool {
        for span in spans[group] ?? [] {
            guard let range = span.clamp(after: positions.groups[group] ?? after, upTo: upTo) else { continue }
            let rows = try db.query(
                Self.groupLogQuery, [group, range.after, range.upTo ?? upTo, limit - page.count + 1])
            var expected = range.after + 1
            for row in rows {
                let pts: Int64 = try row.get(0)
                // Positions have no gaps: a missing one was pruned (retention keeps the bounds
                // of memberships). The conversation resets (not the whole cursor) and the page
                // goes on from what the group's log kept.
                let gap = pts != expected
                guard page.count + (gap ? 2 : 1) <= limit else { return false }
                if gap {
                    guard resets else { throw Cursor.expired }
                    page.append(
                        try StoredChange.body(
                            of: ChangePayload(seq: 0, kind: .conversationReset, conversationId: group, at: resetTime)),
                        position: pts - 1)
                }
                guard let body = try row.get(1, as: String?.self) else {
                    throw StoreError.broken("change \(pts) of \(group) has no payload")
                }
                page.append(body, position: pts)
                positions.groups[group] = pts
                expected = pts + 1
            }
        }
        positions.groups[group] = upTo
        return true
    }
}
