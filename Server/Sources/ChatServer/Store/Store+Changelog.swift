import ChatProtocol
import Foundation
import SQLiteKit

/// The changelog cursor (`ChangelogCursor`): the last delivered change sequence.
enum Cursor {
    static func encode(_ seq: Int64) -> String { ChangelogCursor.encode(seq) }

    static func decode(_ cursor: String) throws -> Int64 {
        guard let seq = ChangelogCursor.parse(cursor) else {
            throw StoreError(.invalidCursor, "`cursor` is not one chatd issued; start again with an empty cursor")
        }
        return seq
    }
}

extension Store {
    /// Appends a change, fans it out to `audience`, and queues it for realtime publication.
    @discardableResult
    func record(_ db: Connection, _ kind: ChangeKind, conversationId: String, message: MessagePayload? = nil,
                receipt: ReceiptPayload? = nil, block: BlockPayload? = nil, reaction: ReactionPayload? = nil,
                notification: FeedItemPayload? = nil, group: GroupPayload? = nil, audience: [String],
                into changes: inout [PublishedChange]) throws -> ChangePayload {
        let at = stamp()
        // Under the write lock the next sequence is known, so the stored JSON carries it and is
        // served verbatim by replays and realtime frames (encoded once, never re-encoded).
        let last: Int64 = try db.scalar("SELECT seq FROM sqlite_sequence WHERE name = 'changes'") ?? 0
        let change = ChangePayload(seq: last + 1, kind: kind, conversationId: conversationId, message: message,
                                   receipt: receipt, block: block, reaction: reaction, notification: notification,
                                   group: group, at: at)
        let json = try Self.json(change) ?? "{}"
        try db.run("INSERT INTO changes(seq, conversation_id, payload, at) VALUES (?, ?, ?, ?)",
                   [change.seq, conversationId, json, at])
        let insert = try db.cachedStatement("INSERT INTO inbox(uid, seq) VALUES (?, ?)")
        for uid in Set(audience) { try insert.run([uid, change.seq]) }
        changes.append(PublishedChange(change: change, json: json, audience: audience))
        if retention > 0 && change.seq % min(256, retention) == 0 { try prune(db, through: change.seq - retention) }
        return change
    }

    /// Forgets changes up to `seq`; cursors before it then get `cursor_expired`.
    func prune(_ db: Connection, through seq: Int64) throws {
        guard seq > 0 else { return }
        try db.run("DELETE FROM changes WHERE seq <= ?", [seq])
        try db.run("DELETE FROM inbox WHERE seq <= ?", [seq])
        try db.run("INSERT OR REPLACE INTO meta(key, value) VALUES ('pruned_through', max(?, coalesce((SELECT value FROM meta WHERE key = 'pruned_through'), 0)))", [seq])
    }

    /// The last change sequence (0 before any change).
    func head(_ db: Connection) throws -> Int64 {
        try db.scalar("SELECT coalesce(max(seq), 0) FROM changes") ?? 0
    }

    /// Changes `uid` may see after `cursor`, at most `limit`. An empty cursor answers the head.
    public func changes(for uid: String, cursor: String?, limit: Int) throws -> RawChangelogPage {
        let serverTime = clock.now() / 1000
        return try read { db in
            guard let cursor, !cursor.isEmpty else {
                return RawChangelogPage(payloads: [], hasMore: false, cursor: Cursor.encode(try head(db)), serverTime: serverTime)
            }
            let after = try Cursor.decode(cursor)
            let prunedThrough: Int64 = try db.scalar("SELECT value FROM meta WHERE key = 'pruned_through'") ?? 0
            if after < prunedThrough {
                throw StoreError(.cursorExpired,
                                "the cursor is older than the changelog's retention; rebuild from the conversation list and start from an empty cursor")
            }
            let headSeq = try head(db)
            guard after <= headSeq else {
                throw StoreError(.invalidCursor, "the cursor is ahead of the changelog")
            }
            let rows = try db.query("""
                SELECT c.seq, c.payload FROM inbox i JOIN changes c ON c.seq = i.seq
                WHERE i.uid = ? AND i.seq > ? ORDER BY i.seq LIMIT ?
                """, [uid, after, limit + 1])
            let page = rows.prefix(limit)
            let hasMore = rows.count > limit
            // Without more rows, resume from the head: changes invisible to this user are skipped for good.
            let lastSeq: Int64? = try page.last?.get("seq")
            let next = hasMore ? lastSeq! : max(lastSeq ?? after, headSeq)
            return RawChangelogPage(payloads: try page.map { try $0.get("payload") }, hasMore: hasMore,
                                    cursor: Cursor.encode(next), serverTime: serverTime)
        }
    }
}

/// A changelog page whose changes are the stored JSON texts, spliced into the response
/// without decoding (the wire shape is `ChangelogPage`).
public struct RawChangelogPage: Sendable {
    public var payloads: [String]
    public var hasMore: Bool
    public var cursor: String
    public var serverTime: Int64

    /// `{"changes":[…],"cursor":…,"hasMore":…,"serverTime":…}` (keys sorted, like every answer).
    public var json: [UInt8] {
        var text = #"{"changes":["#
        text += payloads.joined(separator: ",")
        text += #"],"cursor":"\#(cursor)","hasMore":\#(hasMore),"serverTime":\#(serverTime)}"#
        return Array(text.utf8)
    }
}
