import Foundation
import OfflineChatProtocol
import OfflineChatSQLite

/// One queued send as the outbox stores it.
public struct OutboxItem: Sendable {
    public enum State: String, Sendable {
        case pending, sending, failed
    }

    /// The message row's local id (`localMessageId`).
    public var localId: Int64
    public var conversationId: String
    public var state: State
    /// Send attempts so far.
    public var attempts: Int
    /// Not before this time (epoch ms) for the next attempt.
    public var nextAttemptAt: Int64
    /// For failed items the raw value of the SDK's `MessageFailureReason` (`discarded`,
    /// `permanent` or `transient`).
    public var failureReason: String?
    public var errorCode: String?
    public var errorMessage: String?
    /// A queued media file's copy in the cache's media folder.
    public var mediaPath: String?
    /// What to POST.
    public var request: SendMessageRequest
    /// The message as shown while queued (server id 0).
    public var message: MessagePayload

    /// Where the item stands (what `moveOutbox` compares and stores).
    public var progress: OutboxProgress {
        get {
            OutboxProgress(
                state: state, attempts: attempts, nextAttemptAt: nextAttemptAt, failureReason: failureReason,
                errorCode: errorCode, errorMessage: errorMessage)
        }
        set {
            state = newValue.state
            attempts = newValue.attempts
            nextAttemptAt = newValue.nextAttemptAt
            failureReason = newValue.failureReason
            errorCode = newValue.errorCode
            errorMessage = newValue.errorMessage
        }
    }
}

/// Where a queued send stands: the outbox's state machine (the SDK's `OutboxPolicy`) decides
/// it, the cache stores it.
public struct OutboxProgress: Equatable, Sendable {
    public var state: OutboxItem.State
    /// Send attempts so far.
    public var attempts: Int
    /// Not before this time (epoch ms) for the next attempt; 0 unless pending.
    public var nextAttemptAt: Int64
    /// For a failed item: why (a `MessageFailureReason` raw value) and the error it got.
    public var failureReason: String?
    public var errorCode: String?
    public var errorMessage: String?

    public init(
        state: OutboxItem.State, attempts: Int, nextAttemptAt: Int64 = 0, failureReason: String? = nil,
        errorCode: String? = nil, errorMessage: String? = nil
    ) {
        self.state = state
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.failureReason = failureReason
        self.errorCode = errorCode
        self.errorMessage = errorMessage
    }
}

/// The outbox refuses a send when this many messages are already queued or failed.
public struct OutboxFull: Error, Sendable {
    public let limit: Int
}

extension ChatCache {
    /// Queues a send: the message row (no server id yet) and its outbox row in one
    /// transaction. Refuses (`OutboxFull`) when `maxPending` items are already queued or
    /// failed: an old one is never dropped to make room. Returns the local id.
    public func enqueue(
        _ request: SendMessageRequest, showing message: MessagePayload, mediaPath: String? = nil,
        maxPending: Int
    ) throws -> Int64 {
        try write { db, scratch in
            let queued: Int = try db.scalar("SELECT count(*) FROM outbox") ?? 0
            guard queued < maxPending else { throw OutboxFull(limit: maxPending) }
            try db.cachedStatement(MessageRow.insertQueued).run { row in
                try MessageRow.bind(message, to: row)
                try row.bindNull(1)  // no server id while queued
            }
            let localId = db.lastInsertRowID
            try db.run(
                """
                INSERT INTO outbox(local_id, conversation_id, state, media_path, request) VALUES (?, ?, 'pending', ?, ?)
                """,
                [
                    localId, message.conversationId, mediaPath.map { Self.storedMediaPath($0, in: mediaDirectory) },
                    try Self.requestJSON(request)
                ])
            try noteUse(db, message.conversationId, in: &scratch)
            return localId
        }
    }

    /// A queued send's request as stored: written by `CompactJSONEncoder` (JSONEncoder's tree was
    /// a tenth of a queued send's CPU); read back by `JSONDecoder` like any JSON.
    static func requestJSON(_ request: SendMessageRequest) throws -> String {
        String(decoding: try CompactJSONEncoder().encode(request), as: UTF8.self)
    }

    /// How many messages the outbox holds (failed ones included: they are the user's to retry).
    public func outboxCount() throws -> Int {
        try read { db in try db.scalar("SELECT count(*) FROM outbox") ?? 0 }
    }

    /// Every outbox item, in composed order.
    public func outboxItems() throws -> [OutboxItem] {
        try read { db in try Self.outboxItems(db, media: mediaDirectory, where: "1") }
    }

    /// The outbox items with these local ids (those still queued), in composed order.
    public func outboxItems(_ localIds: [Int64]) throws -> [OutboxItem] {
        try read { db in
            try Self.outboxItems(
                db, media: mediaDirectory,
                where: "o.local_id IN (\(localIds.map { _ in "?" }.joined(separator: ", ")))", localIds)
        }
    }

    /// The outbox rows matching `condition`, with their messages. `media`: the cache's media
    /// folder, against which stored file names become paths (nil: as stored).
    static func outboxItems(
        _ db: Connection, media: URL?, where condition: String, _ arguments: [any SQLValueConvertible] = []
    ) throws -> [OutboxItem] {
        try db.query(
            """
            SELECT o.local_id, o.conversation_id, o.state, o.attempts, o.next_attempt_at, o.failure_reason, o.error_code,
                   o.error_message, o.media_path, o.request, \(MessageRow.columns.split(separator: ",").map { "m." + $0.trimmingCharacters(in: .whitespacesAndNewlines) }.joined(separator: ", "))
            FROM outbox o JOIN messages m ON m.local_id = o.local_id WHERE \(condition) ORDER BY o.local_id
            """, arguments
        ).map { row in
            let message = try MessageRow.message(row, offset: 10)
            return OutboxItem(
                localId: try row.get(0), conversationId: try row.get(1),
                state: OutboxItem.State(rawValue: try row.get(2)) ?? .pending, attempts: try row.get(3),
                nextAttemptAt: try row.get(4), failureReason: try row.get(5), errorCode: try row.get(6),
                errorMessage: try row.get(7),
                mediaPath: (try row.get(8) as String?).map { Self.mediaPath(stored: $0, in: media) },
                request: try Self.decode(SendMessageRequest.self, try row.get(9)), message: message)
        }
    }

    /// Stores each item's new progress, in one transaction, if its row still holds the progress
    /// the item was read with (state, attempts and next attempt): a transition computed from a
    /// stale read (the item was claimed, discarded or moved on meanwhile) is not stored. Returns
    /// the local ids stored.
    public func moveOutbox(_ moves: [(item: OutboxItem, to: OutboxProgress)]) throws -> Set<Int64> {
        guard !moves.isEmpty else { return [] }
        return try write { db, _ in
            var moved = Set<Int64>()
            for (item, to) in moves {
                try db.cachedStatement(
                    """
                    UPDATE outbox SET state = ?, attempts = ?, next_attempt_at = ?, failure_reason = ?, error_code = ?,
                           error_message = ?
                    WHERE local_id = ? AND state = ? AND attempts = ? AND next_attempt_at = ?
                    """
                ).run([
                    to.state.rawValue, to.attempts, to.nextAttemptAt, to.failureReason, to.errorCode, to.errorMessage,
                    item.localId, item.state.rawValue, item.attempts, item.nextAttemptAt
                ])
                if db.changes > 0 { moved.insert(item.localId) }
            }
            return moved
        }
    }

    /// The server accepted the send: the queued row becomes the sent message (same local id,
    /// now with the server id and time), the outbox row goes, in one transaction. Returns
    /// the stored message.
    @discardableResult
    public func completeSend(_ localId: Int64, with message: MessagePayload, liveSince: Int?) throws -> MessagePayload {
        try write { db, _ in
            // The realtime echo may have taken the row over already: then this just refreshes it.
            try db.cachedStatement(MessageRow.completeQueued).run { row in
                try MessageRow.bind(message, to: row)
                try row.bind(18, localId)
            }
            if db.changes == 0 { try upsert(db, message) }
            try db.run("DELETE FROM outbox WHERE local_id = ?", [localId])
            if liveSince != nil && liveSince == liveEpochCounter.current {
                try extendLive(db, scope: .conversation(message.conversationId), to: message.id)
            }
            try bumpConversation(db, with: message, incoming: false)
            return message
        }
    }

    /// Removes queued items (their message rows too) and returns them as they were: a
    /// discard, a cleared cache, a removed conversation. Items already sent are not touched;
    /// nor are those `removable` (the outbox's policy, asked in the same transaction) keeps.
    public func removeFromOutbox(
        where condition: OutboxSelection, if removable: (OutboxItem) -> Bool = { _ in true }
    ) throws -> [OutboxItem] {
        let removed = try write { db, _ in
            let (sql, arguments) = condition.sql
            let items = try Self.outboxItems(db, media: mediaDirectory, where: sql, arguments).filter(removable)
            for item in items {
                try db.run("DELETE FROM outbox WHERE local_id = ?", [item.localId])
                try db.run("DELETE FROM messages WHERE local_id = ? AND id IS NULL", [item.localId])
            }
            return items
        }
        discardQueuedMedia(removed.compactMap(\.mediaPath))
        return removed
    }

    /// Replaces an item's request, e.g. with the attachment its upload answered, so a
    /// restart does not upload again.
    public func updateOutboxRequest(_ localId: Int64, _ request: SendMessageRequest) throws {
        try write { db, _ in
            try db.run("UPDATE outbox SET request = ? WHERE local_id = ?", [try Self.requestJSON(request), localId])
        }
    }
}

/// Which outbox items to remove.
public enum OutboxSelection: Sendable {
    case one(Int64)
    case all
    case conversation(String)

    var sql: (String, [any SQLValueConvertible]) {
        switch self {
        case .one(let id): ("o.local_id = ?", [id])
        case .all: ("1", [])
        case .conversation(let id): ("o.conversation_id = ?", [id])
        }
    }
}
