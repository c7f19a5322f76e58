import Foundation
import OfflineChatProtocol
import OfflineChatSQLite

/// Where the catch-up sync resumes: the changelog cursor (nil before the first sync), a
/// number that grows each time the cursor moves, and the server's time of the last sync.
public struct SyncPoint: Sendable, Equatable {
    public var cursor: String?
    public var number: Int64
    /// Epoch seconds from the server; 0 if never synced.
    public var serverTime: Int64

    public init(cursor: String?, number: Int64, serverTime: Int64) {
        self.cursor = cursor
        self.number = number
        self.serverTime = serverTime
    }
}

/// What one sync page changed in the cache.
public struct SyncMerge: Sendable {
    /// Messages the cache did not hold, in change order.
    public var new: [MessagePayload] = []
    /// Cached messages that changed (edits, deletions, reactions), in change order.
    public var updated: [MessagePayload] = []
    /// Conversations dropped (a group deleted, or the user removed from it).
    public var removedConversations: [String] = []
}

/// The sync point moved under a sync page (a clear, another sweep): the page is not applied.
public struct SyncPointMoved: Error, Sendable {}

/// The catch-up sync's side of the cache. Every page is merged and its cursor recorded in one
/// transaction, so a crash leaves the cache at the previous point, from which the next sync
/// resumes (merging is idempotent: a message keeps the newer of two states).
extension ChatCache {
    enum SyncKey {
        static let cursor = "sync.cursor"
        static let number = "sync.number"
        static let serverTime = "sync.serverTime"
    }

    public func syncPoint() throws -> SyncPoint {
        try read { db in try Self.syncPoint(db) }
    }

    static func syncPoint(_ db: Connection) throws -> SyncPoint {
        SyncPoint(
            cursor: try db.scalar("SELECT value FROM meta WHERE key = ?", [SyncKey.cursor]),
            number: Int64(try db.scalar("SELECT value FROM meta WHERE key = ?", [SyncKey.number]) as String? ?? "")
                ?? 0,
            serverTime: Int64(
                try db.scalar("SELECT value FROM meta WHERE key = ?", [SyncKey.serverTime]) as String? ?? "") ?? 0)
    }

    /// A cold start (or a rebuild): resume from the server's head, replaying nothing.
    public func recordSyncHead(cursor: String, serverTime: Int64) throws {
        try write { db, _ in
            try Self.setSyncPoint(
                db, SyncPoint(cursor: cursor, number: try Self.syncPoint(db).number + 1, serverTime: serverTime))
        }
    }

    /// The live stream brought (and the cache stored) every change up to `cursor`: the sync
    /// point's cursor moves there, so the next sync replays only what comes after. Its number
    /// and time stay (no sweep ran; stretches proven at this point still are). Nothing moves
    /// while there is no sync point (before a cold start, or after a rebuild or a clear).
    @discardableResult
    public func followLiveCursor(_ cursor: String) throws -> Bool {
        try write { db, _ in
            // One statement: no row means no sync point, and nothing moves.
            try db.run("UPDATE meta SET value = ? WHERE key = ?", [cursor, SyncKey.cursor])
            return db.changes > 0
        }
    }

    /// Merges one changelog page read from `from.cursor` and moves the sync point to `cursor`,
    /// in one transaction, recording what the replay proves about each scope's history:
    ///
    /// - A stretch that reached `from` (closed while live since, or proven by the sweep before)
    ///   grows over the page's messages of its scope.
    /// - Otherwise the messages created after `from` form a stretch of their own, from the
    ///   first one created up to the newest: the replay delivers every change after `from`, and
    ///   chatd's ids order messages against it (`docs/PROTOCOL.md`), so no message of the scope
    ///   with an id in between is missing. Nothing from before the first is claimed.
    /// - `liveSince`: the cache's live epoch when a sweep that started on a live connection
    ///   read its last page (`hasMore` false). If no loss happened since, each scope's newest
    ///   proven stretch reaches the live head (the stream brings everything after the page)
    ///   and joins the stretches the stream opened meanwhile.
    ///
    /// The live stream may have moved the cursor meanwhile (`followLiveCursor`); the page
    /// still applies, since every change up to either cursor is stored.
    public func applySyncPage(
        _ changes: [ChangePayload], from: SyncPoint, cursor: String, serverTime: Int64,
        liveSince: Int? = nil
    ) throws -> SyncMerge {
        try write { db, scratch in
            let current = try Self.syncPoint(db)
            guard current.cursor != nil, current.number == from.number, current.serverTime == from.serverTime else {
                throw SyncPointMoved()
            }
            var merge = SyncMerge()
            var proof = ReplayProof()
            var used = Set<String>()
            let ids = changes.compactMap { Self.carriesMessage($0.kind) ? $0.message?.id : nil }
            var stored = try Self.storedMessages(db, ids: ids)
            // Only a message the page carries again needs its new state remembered.
            var occurrences: [Int64: Int] = [:]
            for id in ids { occurrences[id, default: 0] += 1 }
            for change in changes {
                if change.kind == .conversationReset {
                    // chatd no longer has what came between the sync point and what it kept.
                    try resetConversation(db, change.conversationId)
                    stored = stored.filter { $0.value.conversationId != change.conversationId }
                    proof.forget(change.conversationId)
                    continue
                }
                if change.removesConversation(for: uid) {
                    try dropConversation(db, change.conversationId, into: &merge, scratch: &scratch)
                    stored = stored.filter { $0.value.conversationId != change.conversationId }
                    proof.forget(change.conversationId)
                    used.remove(change.conversationId)
                    continue
                }
                guard let message = change.message, Self.carriesMessage(change.kind) else { continue }
                let novelty = try store(db, message, over: stored[message.id])
                switch novelty {
                case .new: merge.new.append(message)
                case .newer: merge.updated.append(message)
                case .same: break
                }
                if occurrences[message.id, default: 0] > 1 && (novelty != .same || stored[message.id] == nil) {
                    stored[message.id] = MessageRow.asStored(message)
                }
                used.insert(message.conversationId)
                proof.note(message, created: change.kind == .messageCreated || change.kind == .groupMember)
            }
            for id in used { try noteUse(db, id, in: &scratch) }
            for (scope, seen) in proof.scopes {
                if try extendProven(db, scope: scope, to: seen.highest, since: from.number) { continue }
                guard let first = seen.firstCreated else { continue }
                try addRange(db, scope: scope, lo: first, hi: seen.highest, open: false, provenAt: from.number)
            }
            try db.run("UPDATE ranges SET proven_at = ? WHERE proven_at >= ?", [from.number + 1, from.number])
            if liveSince != nil && liveSince == liveEpochCounter.current {
                try openProvenRanges(db, provenAt: from.number + 1)
            }
            try Self.setSyncPoint(db, SyncPoint(cursor: cursor, number: from.number + 1, serverTime: serverTime))
            return merge
        }
    }

    /// Inside a write, after a cold start (no changelog replay, so nothing else brings messages
    /// in): each conversation's last message, as the list brought it, becomes readable offline:
    /// its row, and a one-message stretch (it proves nothing about the messages around it).
    func keepLastMessages(_ db: Connection, of conversations: [ConversationPayload]) throws {
        let messages = conversations.compactMap(\.lastMessage).filter { $0.id > 0 }
        guard !messages.isEmpty else { return }
        let stored = try Self.storedMessages(db, ids: messages.map(\.id))
        for message in messages {
            _ = try store(db, message, over: stored[message.id])
            try addRange(db, scope: .conversation(message.conversationId), lo: message.id, hi: message.id, open: false)
        }
    }

    /// What one page proves, per scope (a conversation, a thread): the newest message it
    /// carried and the first one created in it. A conversation dropped by the page forgets
    /// what came before the drop (the user may come back in with a history the page never had).
    struct ReplayProof {
        struct Seen {
            var highest: Int64
            var firstCreated: Int64?
        }
        private(set) var scopes: [String: Seen] = [:]
        private var threads: [String: Set<String>] = [:]

        mutating func note(_ message: MessagePayload, created: Bool) {
            var keys = [CacheScope.conversation(message.conversationId).key]
            if let parent = message.parentMessageId {
                let thread = CacheScope.thread(parentId: parent).key
                keys.append(thread)
                threads[message.conversationId, default: []].insert(thread)
            }
            for key in keys {
                var seen = scopes[key] ?? Seen(highest: message.id)
                seen.highest = max(seen.highest, message.id)
                if created { seen.firstCreated = min(seen.firstCreated ?? message.id, message.id) }
                scopes[key] = seen
            }
        }

        mutating func forget(_ conversationId: String) {
            scopes[CacheScope.conversation(conversationId).key] = nil
            for thread in threads.removeValue(forKey: conversationId) ?? [] { scopes[thread] = nil }
        }
    }

    private enum Novelty { case new, newer, same }

    /// The cached rows of these message ids, read a chunk at a time (one statement text, the
    /// last id repeated to fill a short chunk) rather than one query per change.
    static func storedMessages(_ db: Connection, ids: [Int64]) throws -> [Int64: MessagePayload] {
        var found: [Int64: MessagePayload] = [:]
        let unique = Array(Set(ids))
        for start in stride(from: 0, to: unique.count, by: lookupChunk) {
            var chunk: [any SQLValueConvertible] = Array(unique[start..<min(unique.count, start + lookupChunk)])
            chunk += Array(repeating: chunk.last!, count: lookupChunk - chunk.count)
            try db.forEachRow(lookupByIds, chunk) { row in
                let message = try MessageRow.message(row)
                found[message.id] = message
                return true
            }
        }
        return found
    }

    static let lookupChunk = 64
    static let lookupByIds =
        "SELECT \(MessageRow.columns) FROM messages WHERE id IN (\(Array(repeating: "?", count: lookupChunk).joined(separator: ", ")))"

    /// Stores one replayed message with as few statements as it takes (`stored`: its cached
    /// row, if any), and says whether it is new to the cache, a newer state of a cached one
    /// (or the same time with other content: a reaction, a reply count), or nothing new. A
    /// server copy of one's own queued message takes over its row and is not new (the outbox
    /// reports it).
    private func store(_ db: Connection, _ message: MessagePayload, over stored: MessagePayload?) throws -> Novelty {
        if let stored {
            guard
                stored.updatedAt < message.updatedAt
                    || (stored.updatedAt == message.updatedAt && stored != MessageRow.asStored(message))
            else {
                return .same
            }
            try upsert(db, message)
            return .newer
        }
        if message.sender == uid, let muid = message.muid,
            try db.scalar(
                "SELECT 1 FROM messages WHERE id IS NULL AND sender = ? AND muid = ?", [message.sender, muid],
                as: Int.self) != nil
        {
            try upsert(db, message)
            return .same
        }
        try db.cachedStatement(MessageRow.insert).run { try MessageRow.bind(message, to: $0) }
        return .new
    }

    /// Drops what the cache holds of a conversation's history (its messages from chatd, the
    /// stretches proven of it and of its threads), keeping the conversation and what is queued
    /// for it (`conversation.reset`): its history reads from chatd again when asked.
    private func resetConversation(_ db: Connection, _ id: String) throws {
        let parents: [Int64] = try db.query(
            "SELECT DISTINCT parent_id FROM messages WHERE conversation_id = ? AND parent_id IS NOT NULL", [id]
        ).map { try $0.get(0) }
        for scope in [CacheScope.conversation(id)] + parents.map({ CacheScope.thread(parentId: $0) }) {
            try db.run("DELETE FROM ranges WHERE scope = ?", [scope.key])
        }
        try db.run("DELETE FROM messages WHERE conversation_id = ? AND id > 0", [id])
    }

    private func dropConversation(
        _ db: Connection, _ id: String, into merge: inout SyncMerge, scratch: inout WriteScratch
    ) throws {
        try removeConversation(db, id, in: &scratch)
        if !merge.removedConversations.contains(id) { merge.removedConversations.append(id) }
    }

    /// Every stretch of `scope` proven at or after sync point `since` that starts at or below
    /// `id` now reaches `id`, and they become one. Each such stretch holds everything up to its
    /// end, and whatever the scope gained after its end came after `since`: the page from
    /// `since` carried it up to `id` (a conversation's ids follow commit order). Several such
    /// stretches exist when the connection dropped more than once before a sweep ran (a node
    /// died, then the next one); growing only the newest left what came between them outside
    /// every stretch. False when the scope has none.
    private func extendProven(_ db: Connection, scope: String, to id: Int64, since: Int64) throws -> Bool {
        let proven = try db.query(
            "SELECT rowid, lo, hi, proven_at FROM ranges WHERE scope = ? AND proven_at >= ? AND lo <= ?",
            [scope, since, id])
        guard !proven.isEmpty else { return false }
        var lo = Int64.max
        var hi = id
        var provenAt = since
        for row in proven {
            lo = min(lo, try row.get("lo"))
            hi = max(hi, try row.get("hi"))
            provenAt = max(provenAt, try row.get("proven_at"))
            try db.run("DELETE FROM ranges WHERE rowid = ?", [try row.get("rowid") as Int64])
        }
        try addRange(db, scope: scope, lo: lo, hi: hi, open: false, provenAt: provenAt)
        return true
    }

    /// After a last page read on a live connection: each scope's newest stretch proven at
    /// `provenAt` reaches the live head, and joins the stretches the stream opened (each holds
    /// everything from its start to the head, so together they hold their whole span).
    private func openProvenRanges(_ db: Connection, provenAt: Int64) throws {
        let proven = try db.query(
            "SELECT rowid, scope, lo, hi FROM ranges WHERE proven_at = ? ORDER BY scope, hi DESC", [provenAt])
        var done = Set<String>()
        for row in proven {
            let scope: String = try row.get("scope")
            guard done.insert(scope).inserted else { continue }
            var lo: Int64 = try row.get("lo")
            var hi: Int64 = try row.get("hi")
            try db.run("DELETE FROM ranges WHERE rowid = ?", [try row.get("rowid") as Int64])
            for live in try db.query("SELECT rowid, lo, hi FROM ranges WHERE scope = ? AND open = 1", [scope]) {
                lo = min(lo, try live.get("lo"))
                hi = max(hi, try live.get("hi"))
                try db.run("DELETE FROM ranges WHERE rowid = ?", [try live.get("rowid") as Int64])
            }
            try addRange(db, scope: scope, lo: lo, hi: hi, open: true)
        }
    }

    static func carriesMessage(_ kind: ChangeKind) -> Bool {
        switch kind {
        case .messageCreated, .messageUpdated, .reactionAdded, .reactionRemoved, .groupMember: true
        default: false
        }
    }

    static func setSyncPoint(_ db: Connection, _ point: SyncPoint) throws {
        for (key, value) in [
            (SyncKey.cursor, point.cursor), (SyncKey.number, String(point.number)),
            (SyncKey.serverTime, String(point.serverTime))
        ] {
            if let value {
                try db.run("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", [key, value])
            } else {
                try db.run("DELETE FROM meta WHERE key = ?", [key])
            }
        }
    }

    /// Closes the stretches that reached the live head, noting the sync point they were proven
    /// against (a disconnect, or a new process whose last connection is gone).
    static func closeLiveRanges(_ db: Connection) throws {
        let number = try syncPoint(db).number
        try db.run("UPDATE ranges SET open = 0, proven_at = ? WHERE open = 1", [number])
    }

    /// The cursor is no longer accepted: cached messages and stretches go (queued messages
    /// and conversations stay), and the next sync starts from the head again.
    public func resetForRebuild() throws {
        try write { db, _ in
            liveEpochCounter.withLock { $0 += 1 }
            try db.run("DELETE FROM messages WHERE id > 0")
            try db.run("DELETE FROM ranges")
            for key in [SyncKey.cursor, SyncKey.serverTime] { try db.run("DELETE FROM meta WHERE key = ?", [key]) }
        }
        // Downloaded files went with their messages; queued sends keep their copies.
        for name in (try? FileManager.default.contentsOfDirectory(atPath: mediaDirectory.path)) ?? []
        where !name.hasPrefix("outbox-") {
            try? FileManager.default.removeItem(at: mediaDirectory.appendingPathComponent(name))
        }
        mediaTotal.withLock { $0 = nil }
    }
}

extension ChangePayload {
    /// Whether this change takes its conversation away from `uid`: the group was deleted, or
    /// the user left or was removed from it (its history is no longer theirs to keep).
    public func removesConversation(for uid: String) -> Bool {
        if kind == .groupDeleted { return true }
        guard ChatCache.carriesMessage(kind), let action = message?.action else { return false }
        return action.target == uid && action.action.removesTarget
    }

    /// Whether applying this change wipes what `uid`'s cache holds of its conversation: it drops
    /// the conversation (`removesConversation`) or resets it past its log's retention.
    public func wipesConversation(for uid: String) -> Bool {
        kind == .conversationReset || removesConversation(for: uid)
    }
}
