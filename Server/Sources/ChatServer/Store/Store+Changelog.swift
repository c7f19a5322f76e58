import Foundation
import OfflineChatProtocol
import OfflineChatSQLite

/// The changelog cursor (`ChangelogCursor`): the deployment's epoch and the user's position.
enum Cursor {
    static func decode(_ cursor: String) throws -> ChangelogCursor {
        guard let parsed = ChangelogCursor.parse(cursor) else {
            throw StoreError(.invalidCursor, "`cursor` is not one chatd issued; start again with an empty cursor")
        }
        return parsed
    }

    static let expired = StoreError(
        .cursorExpired,
        "the cursor is older than the changelog's retention, or from before a restore; rebuild from the conversation list and start from an empty cursor"
    )
}

/// A change as stored: its JSON without `seq`, which differs per reader (their position).
/// The stored text is the object up to its end, `{"kind":…,"at":…`, and a reader gets it
/// followed by `,"seq":<position>}`. (Changes stored before chatd wrote its JSON itself have
/// their keys sorted; the same ending completes them.)
enum StoredChange {
    /// How `CompactJSONEncoder` begins a change whose `seq` is 0 (its first key).
    static let opening = Array(#"{"seq":0,"#.utf8)

    /// The change encoded without `seq`, its closing brace cut off; its message as
    /// `messageJSON` when that is given (`ChangePayload.json(messageJSON:)`).
    static func body(of change: ChangePayload, messageJSON: [UInt8]? = nil) throws -> String {
        var zeroed = change
        zeroed.seq = 0
        let json = try messageJSON.map { try zeroed.json(messageJSON: $0) } ?? CompactJSONEncoder().encode(zeroed)
        guard json.starts(with: opening), json.last == UInt8(ascii: "}") else {
            throw StoreError.broken("a change did not encode with `seq` first")
        }
        return "{" + String(decoding: json[opening.count..<(json.count - 1)], as: UTF8.self)
    }

    /// Whether a change of `kind` is stored with its message by reference: a group member's
    /// action (joined, added, kicked…), whose message never changes (action messages can be
    /// neither edited nor deleted) and comes once a member, so a large group's members are not
    /// each kept three times over (the message's row, its kept text, the change).
    static func byReference(_ kind: ChangeKind) -> Bool { kind == .groupMember }

    /// A stored change's text as read: the row's payload, with the kept text of the message it
    /// refers to in place of its `"message":null` (a message no longer kept reads as null).
    /// Goes with `messageJoin`, on a query whose `changes` row is `c`.
    static let payload = """
        CASE WHEN c.message_id IS NULL THEN c.payload
        ELSE replace(c.payload, '"message":null', '"message":' || COALESCE(b.body, 'null')) END
        """
    static let messageJoin =
        "LEFT JOIN message_bodies b ON c.message_id IS NOT NULL AND b.conversation_id = c.conversation_id AND b.id = c.message_id"

    /// The change as `uid` sees it at `position`.
    static func json(body: String, position: Int64) -> String { body + ending(position) }

    /// What follows the body for a reader at `position`.
    static func ending(_ position: Int64) -> String { #","seq":"# + String(position) + "}" }
}

/// One user's place in a change: their position, the change's `seq` for them.
public struct Position: Sendable, Equatable {
    public let uid: String
    public let pts: Int64
}

extension Store {
    /// Appends a change for `audience` and queues it for realtime publication; the audience's
    /// rows and positions are given at the end of the transaction (`storeChanges`). `groupLog`:
    /// the change is a group's, stored once in the group's own log (docs/GROUPS.md), which its
    /// members read within their spans; no member gets a row of their own but the one whose
    /// membership it opens or closes (`span`): that row is the bound of their span in their
    /// log. A caller that answers with the message too passes it encoded (`messageJSON`,
    /// `message` as `CompactJSONEncoder` writes it), so it is encoded once.
    @discardableResult
    func record(
        _ db: any SQLDatabase, _ kind: ChangeKind, conversationId: String, message: MessagePayload? = nil,
        messageJSON encoded: [UInt8]? = nil, receipt: ReceiptPayload? = nil, block: BlockPayload? = nil,
        reaction: ReactionPayload? = nil, notification: FeedItemPayload? = nil, group: GroupPayload? = nil,
        audience: [String] = [], groupLog: Bool = false, span: SpanChange? = nil,
        into changes: inout [PublishedChange]
    ) throws -> ChangePayload {
        let audience = groupLog ? span?.member.map { [$0] } ?? [] : audience
        let change = ChangePayload(
            seq: 0, kind: kind, conversationId: conversationId, message: message,
            receipt: receipt, block: block, reaction: reaction, notification: notification,
            group: group, at: stamp())
        // The message is encoded once, for its kept text and inside the change.
        let messageJSON = try encoded ?? message.map { try CompactJSONEncoder().encode($0) }
        if let message, let messageJSON { try Self.keepBody(messageJSON, of: message, db) }
        // Encoded once: replays and realtime frames serve this text with each reader's `seq` in front.
        let body = try StoredChange.body(of: change, messageJSON: messageJSON)
        changes.append(
            PublishedChange(
                id: 0, change: change, body: body, audience: Array(Set(audience)).sorted(),
                groupLog: groupLog ? conversationId : nil, span: span,
                referencedMessage: StoredChange.byReference(kind) ? message?.id : nil))
        return change
    }

    /// Stores the transaction's changes (`record`) and numbers them for each user who sees
    /// them: the `user_heads` rows are taken last and in uid order (every writer takes them in
    /// the same order, after its scope rows), each bumped once by the number of changes the
    /// user sees. The changes' rows and the heads go in one round trip, the inbox rows with
    /// the commit.
    func storeChanges(_ db: any SQLDatabase, _ changes: inout [PublishedChange]) throws {
        guard !changes.isEmpty else { return }
        var counts: [String: Int64] = [:]
        for change in changes { for uid in change.audience { counts[uid, default: 0] += 1 } }
        let uids = counts.keys.sorted()
        var groupCounts: [String: Int64] = [:]
        for change in changes { if let group = change.groupLog { groupCounts[group, default: 0] += 1 } }
        let groups = groupCounts.keys.sorted()
        let inserts = MultiRowInsert.statements(
            "INSERT INTO changes(conversation_id, payload, message_id, at)",
            try changes.map { change -> [any SQLValueConvertible] in
                // A member action's message is kept once, in `message_bodies`: its row holds
                // `"message":null` and the message's id, and a read puts the message back.
                guard let id = change.referencedMessage else {
                    return [change.change.conversationId, change.body, nil as Int64?, change.change.at]
                }
                let stored = try StoredChange.body(of: change.change, messageJSON: Array("null".utf8))
                return [change.change.conversationId, stored, id, change.change.at]
            }, "RETURNING id, at")
        let groupHeads = MultiRowInsert.statements(
            "INSERT INTO group_heads(conversation_id, pts)", groups.map { [$0, groupCounts[$0]!] },
            "ON CONFLICT(conversation_id) DO UPDATE SET pts = group_heads.pts + excluded.pts RETURNING conversation_id, pts"
        )
        let answers = try db.queries(
            inserts + groupHeads
                + MultiRowInsert.statements(
                    "INSERT INTO user_heads(uid, pts)", uids.map { [$0, counts[$0]!] },
                    "ON CONFLICT(uid) DO UPDATE SET pts = user_heads.pts + excluded.pts RETURNING uid, pts"))
        // RETURNING promises no order: each row is matched by its time, unique per write (`stamp`).
        var ids: [Int64: Int64] = [:]
        for row in answers.prefix(inserts.count).joined() { ids[try row.get(1)] = try row.get(0) }
        for index in changes.indices {
            guard let id = ids[changes[index].change.at] else {
                throw StoreError.broken("a change came back without its id")
            }
            changes[index].id = id
        }
        var nextInGroup: [String: Int64] = [:]
        for row in answers.dropFirst(inserts.count).prefix(groupHeads.count).joined() {
            let group: String = try row.get(0)
            nextInGroup[group] = try row.get(1, as: Int64.self) - groupCounts[group]! + 1
        }
        guard nextInGroup.count == groups.count else { throw StoreError.broken("no head for some of \(groups)") }
        var groupLog: [[any SQLValueConvertible]] = []
        for index in changes.indices {
            guard let group = changes[index].groupLog else { continue }
            let pts = nextInGroup[group]!
            nextInGroup[group] = pts + 1
            changes[index].groupPosition = pts
            groupLog.append([group, pts, changes[index].id])
            try Self.moveSpan(db, changes[index].span, of: group, at: pts)
        }
        try db.insertRowsLater("INSERT INTO group_log(conversation_id, pts, change)", groupLog)
        try prune(db, "group_log", "conversation_id", heads: nextInGroup, counts: groupCounts)
        let heads = answers.dropFirst(inserts.count + groupHeads.count).joined()
        var next: [String: Int64] = [:]
        for row in heads {
            let uid: String = try row.get(0)
            next[uid] = try row.get(1, as: Int64.self) - counts[uid]! + 1
        }
        guard next.count == uids.count else { throw StoreError.broken("no head for some of \(uids)") }

        var inbox: [[any SQLValueConvertible]] = []
        for index in changes.indices {
            changes[index].positions = changes[index].audience.map { uid in
                let pts = next[uid]!
                next[uid] = pts + 1
                inbox.append([uid, pts, changes[index].id])
                return Position(uid: uid, pts: pts)
            }
        }
        try db.insertRowsLater("INSERT INTO inbox(uid, pts, change)", inbox)
        try prune(db, "inbox", "uid", heads: next, counts: counts)
    }

    /// Retention is per log (`--changelog-retention N` keeps each log's last N changes): one busy
    /// group no longer pushes its members' own logs past it. A log (`table`, keyed by `key`) is
    /// trimmed when this transaction's `counts` took its head across a multiple of
    /// min(256, N); `heads` are each log's next position (its head + 1).
    private func prune(
        _ db: any SQLDatabase, _ table: String, _ key: String, heads: [String: Int64], counts: [String: Int64]
    ) throws {
        guard retention > 0 else { return }
        let step = min(256, retention)
        for (log, next) in heads where (next - 1) / step != (next - 1 - counts[log, default: 0]) / step {
            try forget(
                db,
                try db.query(
                    "DELETE FROM \(table) WHERE \(key) = ? AND pts <= ? \(table == "group_log" ? Self.notABound : "") RETURNING change",
                    [log, next - 1 - retention]
                ).map { try $0.get(0) })
        }
    }

    /// A group's change that is also in a member's own log (the bound of their membership) is
    /// kept in the group's log as long as theirs keeps it: a reader finds the group by it.
    static let notABound = "AND NOT EXISTS (SELECT 1 FROM inbox WHERE change = group_log.change)"

    /// Deletes the changes among `ids` that no log holds any more.
    private func forget(_ db: any SQLDatabase, _ ids: [Int64]) throws {
        guard !ids.isEmpty else { return }
        try db.run(
            """
            DELETE FROM changes WHERE id IN (SELECT CAST(value AS BIGINT) FROM json_each(?))
              AND NOT EXISTS (SELECT 1 FROM inbox WHERE change = changes.id)
              AND NOT EXISTS (SELECT 1 FROM group_log WHERE change = changes.id)
            """, [try Self.json(Array(Set(ids))) ?? "[]"])
    }

    /// Opens or closes membership spans from a change's numbered position: a join at `pts` is
    /// seen from `pts` on (the span starts at `pts - 1`), a removal at `pts` is the last change
    /// the removed member sees. Never from a position read before the change was numbered: in
    /// a bulk add, each member's span starts at their own add.
    static func moveSpan(_ db: any SQLDatabase, _ span: SpanChange?, of group: String, at pts: Int64) throws {
        switch span {
        case .opens(let uid):
            try db.run(
                "INSERT INTO group_spans(conversation_id, uid, from_pts, to_pts) VALUES (?, ?, ?, NULL)",
                [group, uid, pts - 1])
        case .closes(let uid):
            try db.run(
                "UPDATE group_spans SET to_pts = ? WHERE conversation_id = ? AND uid = ? AND to_pts IS NULL",
                [pts, group, uid])
        case .closesAll:
            try db.run("UPDATE group_spans SET to_pts = ? WHERE conversation_id = ? AND to_pts IS NULL", [pts, group])
        case nil:
            break
        }
    }

    /// `uid`'s position now.
    public func position(of uid: String) throws -> Int64 {
        try read { try Self.head($0, of: uid) }
    }

    /// The positions of `uids` now (a uid with no change yet is left out).
    func positions(of uids: [String]) throws -> [String: Int64] {
        try read { db in
            let rows = try db.query(
                "SELECT uid, pts FROM user_heads WHERE uid IN (SELECT value FROM json_each(?))",
                [try Self.json(uids) ?? "[]"])
            return Dictionary(
                uniqueKeysWithValues: try rows.map { (try $0.get(0, as: String.self), try $0.get(1, as: Int64.self)) })
        }
    }

    /// `uid`'s changes after `position` as stored (without `seq`), at most `limit`, each a
    /// group's with its place in the group's log (`GroupPlace`, its span move read from the
    /// user's spans): what a realtime socket fills a gap with.
    func changes(for uid: String, after position: Int64, limit: Int) throws -> (changes: [Delivery], hasMore: Bool) {
        try read { db in
            let rows = try db.query(
                """
                SELECT i.pts, \(StoredChange.payload), g.conversation_id, g.pts,
                       (SELECT CASE WHEN s.to_pts = g.pts THEN 2 ELSE 1 END FROM group_spans s
                        WHERE s.conversation_id = g.conversation_id AND s.uid = i.uid
                          AND (s.from_pts = g.pts - 1 OR s.to_pts = g.pts) LIMIT 1)
                FROM inbox i JOIN changes c ON c.id = i.change \(StoredChange.messageJoin)
                LEFT JOIN group_log g ON g.change = i.change
                WHERE i.uid = ?1 AND i.pts > ?2 ORDER BY i.pts LIMIT ?3
                """, [uid, position, limit + 1])
            let changes = try rows.prefix(limit).map { row in
                var delivery = Delivery(pts: try row.get(0), body: try row.get(1))
                if let group = try row.get(2, as: String?.self) {
                    let move: Int? = try row.get(4)
                    delivery.group = GroupPlace(
                        conversationId: group, pts: try row.get(3),
                        span: move.map { $0 == 2 ? .closes(uid) : .opens(uid) })
                }
                return delivery
            }
            return (changes, rows.count > limit)
        }
    }

    /// `uid`'s changes of group `conversationId` after `position`, inside their spans of
    /// membership, at most `limit`: what a realtime socket that reads group logs fills a gap in
    /// a group with. The change that ends a span says so (`GroupPlace.ends(for:)`).
    func groupChanges(
        of conversationId: String, for uid: String, after position: Int64, limit: Int
    ) throws -> (changes: [Delivery], hasMore: Bool) {
        try read { db in
            let spans = try db.query(
                "SELECT from_pts, to_pts FROM group_spans WHERE conversation_id = ? AND uid = ? ORDER BY from_pts",
                [conversationId, uid]
            ).map { MembershipSpan(from: try $0.get(0), to: try $0.get(1)) }
            var changes: [Delivery] = []
            for span in spans {
                guard let range = span.clamp(after: changes.last?.pts ?? position, upTo: nil) else { continue }
                let rows = try db.query(
                    LogPage.groupLogQuery,
                    [conversationId, range.after, range.upTo ?? Int64.max, limit - changes.count + 1])
                for row in rows {
                    let pts: Int64 = try row.get(0)
                    changes.append(
                        Delivery(
                            pts: pts, body: try row.get(1),
                            group: GroupPlace(
                                conversationId: conversationId, pts: pts, span: pts == span.to ? .closes(uid) : nil)))
                }
                if changes.count > limit { return (Array(changes.prefix(limit)), true) }
            }
            return (changes, false)
        }
    }

    /// The heads of these groups' logs (a group without a change yet is left out).
    func groupHeads(_ conversationIds: [String]) throws -> [String: Int64] {
        try read { try Self.groupHeads($0, conversationIds) }
    }

    /// The same inside a read (one indexed read for all of them).
    static func groupHeads(_ db: any SQLDatabase, _ conversationIds: [String]) throws -> [String: Int64] {
        var heads: [String: Int64] = [:]
        for row in try db.query(
            "SELECT conversation_id, pts FROM group_heads WHERE conversation_id IN (SELECT value FROM json_each(?))",
            [try json(conversationIds) ?? "[]"])
        {
            heads[try row.get(0)] = try row.get(1)
        }
        return heads
    }

    /// `uid`'s `c3` positions now (`logHeads`).
    func logPositions(of uid: String) throws -> LogPositions { try read { try Self.logHeads($0, of: uid) } }

    /// `uid`'s position: how many changes they have seen (0 before any).
    static func head(_ db: any SQLDatabase, of uid: String) throws -> Int64 {
        try db.scalar("SELECT pts FROM user_heads WHERE uid = ?", [uid]) ?? 0
    }

    /// The deployment's epoch, drawn by the migration that brought positions.
    static func loadEpoch(_ db: any SQLDatabase) throws -> String {
        guard let epoch: Int64 = try db.scalar("SELECT value FROM meta WHERE key = 'epoch'") else {
            throw StoreError.broken("the database has no epoch")
        }
        return String(UInt64(epoch), radix: 16)
    }

    /// Draws a new epoch: every cursor issued before answers `cursor_expired`, and clients
    /// rebuild. For after a restore (run it while chatd is stopped: a running chatd keeps the
    /// epoch it read at start). Returns the new epoch.
    public func renewEpoch() throws -> String {
        let value = Int64.random(in: 1...(Int64.max >> 1))
        try engine.write({ db in try db.run("UPDATE meta SET value = ? WHERE key = 'epoch'", [value]) }, committed: {})
        return String(UInt64(value), radix: 16)
    }

    /// The `c3` cursor at these positions (groups by guid).
    func cursor(_ positions: LogPositions) -> String {
        let prefix = ConversationPayload.groupID("").count
        return ChangelogCursor.encode(
            epoch: epoch, position: positions.user,
            groups: Dictionary(
                uniqueKeysWithValues: positions.groups.map { (String($0.key.dropFirst(prefix)), $0.value) }))
    }

    /// `uid`'s positions now: their log's head, and the head of each group they are a member of.
    static func logHeads(_ db: any SQLDatabase, of uid: String) throws -> LogPositions {
        var positions = LogPositions(user: try head(db, of: uid), groups: [:])
        for row in try db.query(
            """
            SELECT s.conversation_id, coalesce(h.pts, 0) FROM group_spans s
            LEFT JOIN group_heads h ON h.conversation_id = s.conversation_id
            WHERE s.uid = ? AND s.to_pts IS NULL
            """, [uid])
        {
            positions.groups[try row.get(0)] = try row.get(1)
        }
        return positions
    }

    /// Changes `uid` may see after `cursor`, at most `limit`, read from the user's log and
    /// their groups' (`LogPage`). An empty cursor answers the head. The cursors chatd issued
    /// before the group logs (`c1`, `c2`) read the inboxes, which no longer hold a group's
    /// changes: they answer `cursor_expired` (the client rebuilds), as does a cursor of another
    /// epoch. `groupLogs`: the client knows `conversation.reset` (a group position older than
    /// the group's kept log answers one); another gets `cursor_expired` there.
    public func changes(
        for uid: String, cursor: String?, limit: Int, groupLogs: Bool = false
    ) throws -> RawChangelogPage {
        let serverTime = clock.now() / 1000
        let parsed = try cursor.flatMap { $0.isEmpty ? nil : try Cursor.decode($0) }
        return try read { db in
            guard let parsed else {
                return RawChangelogPage(serverTime: serverTime).closed(
                    cursor: self.cursor(try Self.logHeads(db, of: uid)))
            }
            guard case .logs(let epoch, let position, let groups) = parsed, epoch == self.epoch else {
                throw Cursor.expired
            }
            let positions = LogPositions(
                user: position,
                groups: Dictionary(uniqueKeysWithValues: groups.map { (ConversationPayload.groupID($0.key), $0.value) })
            )
            var reader = try LogPage(
                db, uid: uid, from: positions, limit: limit, resets: groupLogs,
                into: RawChangelogPage(serverTime: serverTime))
            try reader.read(userHead: try Self.head(db, of: uid))
            return reader.page.closed(cursor: self.cursor(reader.positions))
        }
    }
}

/// A changelog page, its changes' stored JSON texts with the reader's `seq` written straight
/// into the answer without decoding (the wire shape is `ChangelogPage`; a replay page is a
/// thousand changes).
public struct RawChangelogPage: Sendable {
    /// `{"changes":[…],"cursor":…,"hasMore":…,"serverTime":…}` once `closed`.
    public private(set) var json = EncodedJSON(bytes: Array(#"{"changes":["#.utf8))
    /// The changes in it.
    public private(set) var count = 0
    public internal(set) var hasMore = false
    /// Where the next page starts.
    public private(set) var cursor = ""
    let serverTime: Int64

    init(serverTime: Int64) {
        self.serverTime = serverTime
        json.bytes.reserveCapacity(65_536)
    }

    /// Appends a change as stored (`StoredChange.body`) with the reader's position.
    mutating func append(_ body: UnsafeBufferPointer<UInt8>, position: Int64) {
        if count > 0 { json.bytes.append(UInt8(ascii: ",")) }
        json.bytes.append(contentsOf: body)
        json.bytes.append(contentsOf: StoredChange.ending(position).utf8)
        count += 1
    }

    /// Appends a change as stored, read as text.
    mutating func append(_ body: String, position: Int64) {
        var body = body
        body.withUTF8 { append($0, position: position) }
    }

    /// The page ending at `cursor` (keys sorted, like every answer).
    func closed(cursor: String) -> RawChangelogPage {
        var page = self
        page.cursor = cursor
        page.json.bytes.append(
            contentsOf: #"],"cursor":"\#(cursor)","hasMore":\#(hasMore),"serverTime":\#(serverTime)}"#.utf8)
        return page
    }
}
